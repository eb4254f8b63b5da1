"""Write minimal, valid BenchFlow job directories for tests (hostile variants add or replace files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TRAJECTORY = "trajectory/acp_trajectory.jsonl"

DEFAULT_LINES: list[dict[str, Any]] = [
    {"type": "user_message", "text": "do x"},
    {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": "Read /root/in.txt",
     "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "data"}}]},
    {"type": "agent_message", "text": "done"},
]


def default_result(name: str) -> dict[str, Any]:
    return {"task_name": "t", "rollout_name": f"{name}__1", "rewards": {"reward": 1.0}, "n_tool_calls": 1}


def make_job(
    root: str | Path,
    name: str,
    lines: list[Any] | str | bytes | None = None,
    result: dict[str, Any] | str | bytes | None = None,
    extra_files: dict[str, str | bytes] | None = None,
) -> Path:
    """Create ``root/name`` as a BenchFlow job and return its path.

    ``lines``: trajectory lines (dicts are JSON-encoded one per line), or the raw file content (str/bytes).
    ``result``: the result.json object, or its raw content (str/bytes). Defaults give a clean, passing job.
    ``extra_files``: more files, by path relative to the job directory (parents are created).
    """
    job = Path(root) / name
    (job / "trajectory").mkdir(parents=True, exist_ok=True)
    if lines is None:
        lines = DEFAULT_LINES
    _write(job / TRAJECTORY, lines if isinstance(lines, str | bytes)
           else "".join(json.dumps(x) + "\n" for x in lines))
    if result is None:
        result = default_result(name)
    _write(job / "result.json", result if isinstance(result, str | bytes) else json.dumps(result))
    for rel, content in (extra_files or {}).items():
        p = job / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        _write(p, content)
    return job


def _write(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


# A BenchFlow ACP run that fetches an answer file over the network: what the custom_principle template's ORG-1
# flags (tests/test_templates.py, tests/test_partial_runs.py)
CURL_ANSWERS = [
    {"type": "user_message", "text": "fetch the data"},
    {"type": "tool_call", "tool_call_id": "t1", "kind": "execute", "title": "Bash",
     "rawInput": {"command": "curl -s https://example.com/answers.json"}, "status": "completed",
     "content": [{"type": "content", "content": {"type": "text", "text": "{}"}}]},
    {"type": "agent_message", "text": "done"},
]
