"""Fixture builders for principle tests: small BenchFlow ACP JSONL (or plain-text) trajectories as strings,
parsed the way a job load parses them, wrapped in a :class:`Job`.

Lines are built as dicts in the shape BenchFlow's capture writes (``{"type":"tool_call","tool_call_id","kind",
"title","status","content"}``, ``{"type":"user_message|agent_message|agent_thought","text"}``); ``rawInput`` and
``locations`` are the ACP fields a richer export carries.
"""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any

from pytest_trajaudit.model import Finding, Job, Trajectory, Verifier
from pytest_trajaudit.principles import registry
from pytest_trajaudit.settings import Settings
from tests.helpers import load_text

PRECISE = Settings()
LITERAL = Settings(literal=True)
MODES = {"precise": PRECISE, "literal": LITERAL}

_ids = count(1)


# --- ACP lines ------------------------------------------------------------------------------------------------


def user(text: str) -> dict:
    return {"type": "user_message", "text": text}


def msg(text: str) -> dict:
    return {"type": "agent_message", "text": text}


def thought(text: str) -> dict:
    return {"type": "agent_thought", "text": text}


def tool(kind: str, title: str, *, status: str = "completed", output: str | None = None,
         raw_input: dict | None = None, locations: list[str] | None = None, diff: dict | None = None) -> dict:
    """One ACP tool_call line. ``output`` becomes a text content block, ``diff`` a diff block."""
    content: list[dict[str, Any]] = []
    if diff is not None:
        content.append({"type": "diff", "oldText": None, **diff})
    if output is not None:
        content.append({"type": "content", "content": {"type": "text", "text": output}})
    d: dict[str, Any] = {"type": "tool_call", "tool_call_id": f"toolu_{next(_ids):04d}", "kind": kind,
                         "title": title, "status": status, "content": content}
    if raw_input is not None:
        d["rawInput"] = raw_input
    if locations:
        d["locations"] = [{"path": p} for p in locations]
    return d


def sh(command: str, output: str = "", *, status: str = "completed") -> dict:
    """A Terminal call whose command is in rawInput (as the ACP adapters record it)."""
    return tool("execute", "Terminal", status=status, output=output, raw_input={"command": command})


def read(path: str, output: str = "ok", *, status: str = "completed") -> dict:
    return tool("read", "Read File", status=status, output=output, raw_input={"file_path": path})


def write(path: str, text: str = "print(1)\n", *, status: str = "completed") -> dict:
    return tool("edit", "Write", status=status, diff={"path": path, "newText": text})


def jsonl(*lines: dict) -> str:
    # a lone line would parse as one JSON document: every fixture opens with the task prompt
    if not lines or lines[0].get("type") != "user_message":
        lines = (user("Solve the task."), *lines)
    if len(lines) == 1:  # one line would parse as a JSON document; an orphan update line adds no event
        lines = (*lines, {"type": "tool_call_update", "tool_call_id": "none"})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


# --- jobs -----------------------------------------------------------------------------------------------------


def traj(*lines: dict) -> Trajectory:
    return load_text(jsonl(*lines), "acp_trajectory.jsonl")


def text_traj(text: str) -> Trajectory:
    """A plain-text transcript (``$ cmd`` lines become execute calls); raw_text is the text itself."""
    return load_text(text, "transcript.txt")


def job(trajectory: Trajectory | str, *, reward: float | None = None, instruction: str = "",
        n_tool_calls: int | None = None) -> Job:
    if isinstance(trajectory, str):
        trajectory = text_traj(trajectory)
    return Job(dir=Path("/jobs/t"), anchor=Path("/jobs/t/result.json"), layout="harbor-trial",
               verifier=Verifier(reward=reward, reward_source="reward.txt" if reward is not None else None),
               instruction=instruction, trajectory=trajectory, n_tool_calls_reported=n_tool_calls)


def acp_job(*lines: dict, **kw: Any) -> Job:
    return job(traj(*lines), **kw)


def run(code: str, j: Job, cfg: Settings = PRECISE) -> Finding:
    """Run one registered principle on a job."""
    return registry()[code].func(j, cfg)
