"""SWE-agent ``.traj`` files (0.x and 1.x).

Shape: one JSON object ``{environment, trajectory: [step], history: [message], info, replay_config?}``. A step is
``{action, observation, response, thought, state, execution_time?, messages?, extra_info?}``; ``state`` is a JSON
*string* in 0.x (``"{\\"open_file\\": …, \\"working_dir\\": …}"``) and a dict in 1.x. ``info`` holds
``exit_status`` (``submitted``, ``submitted (exit_cost)``, ``exit_context``, …), ``submission`` (the diff; may be
null even when submitted), ``model_stats``, 1.x ``swe_agent_version``. ``replay_config`` (1.x) is the run config,
a dict or a JSON string: the model is ``replay_config.agent.model.name``, the instance
``replay_config.problem_statement.id``.

Events: the system prompt (``other``), the task (the first ``user`` message of ``history`` that is not the
in-context demonstration, ``is_demo``: the demonstration's commands are never the agent's), then per step the
``thought`` (``agent_thought``) and one tool call for ``action`` with ``observation`` as output, then the exit
status (``other``).

Actions are SWE-agent tool-bundle commands or plain shell:
- ``open <path> [line]``, ``goto``, ``scroll_up/down``, ``filemap`` → read (the path, or the open file);
  ``str_replace_editor view <path>`` → read; ``create <path>``, ``edit …``/``insert …`` (on the open file, from
  ``state.open_file``), ``str_replace_editor create|str_replace|insert|undo_edit <path>`` → edit;
  ``find_file``, ``search_dir``, ``search_file`` → search; ``submit`` → other;
- anything else is a shell command (``execute``), whose ``paths`` are the files it prints (``cat``, ``head``,
  ``grep`` …, via :func:`common.shell_read_paths`).

Status: SWE-agent records no exit codes. A tool-bundle command's own message decides (``[File: …]``, ``Here's the
result of running `cat -n```, ``File created successfully``, ``has been edited``, ``Found N matches`` → ok;
``No file open``, ``Your proposed edit has introduced new syntax error(s)``, ``does not exist``, ``Usage:`` …
→ failed). A shell command is ok on "Your command ran successfully and did not produce any output.", or when it
only prints files (``cat``, ``head``, ``ls``, ``git log`` …) and printed something without an error line;
failed on ``command not found``/``No such file or directory``/``fatal:`` as the first line, a Python traceback
ending in an error, or a timeout notice; unknown otherwise.

Reward: none in a ``.traj`` (SWE-bench resolution is a separate report). Only a numeric ``info.reward`` or a
boolean ``info.resolved``, when a file records one, becomes ``meta["reward"]`` with ``meta["reward_source"]``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ..model import EDIT, EXECUTE, OTHER, OTHER_KIND, READ, SEARCH, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed, loads_bounded
from ..scan import linre
from .common import clip, flatten_text, shell_read_paths, split_words, tool_event

NAME = "swe-agent"

_READ_TOOLS = {"open", "goto", "scroll_up", "scroll_down", "filemap", "view_image"}
_EDIT_TOOLS = {"create", "edit", "insert", "append", "edit_replace", "replace"}
_SEARCH_TOOLS = {"find_file", "search_dir", "search_file"}
_OTHER_TOOLS = {"submit", "exit_forfeit", "exit_cost", "exit_context", "exit_error", "exit_format", "skip"}
_SRE = {"str_replace_editor", "str_replace_based_edit_tool"}

_OK = linre.compile(
    r"^\[File: |Here's the result of running `cat -n`|Here's the files and directories|File created successfully"
    r"|has been edited|File updated\.|Replaced \d+ occurrences|Text replaced|Found \d+ match|No matches found"
    r"|Your command ran successfully and did not produce any output|^Opened |^Edit successful"
    r"|^<NOTE>This file is too large to display entirely"
)
_FAILED = linre.compile(
    r"No file open|Your proposed edit has introduced new syntax error|does not exist|not found\b|^Usage: |^usage: "
    r"|No replacement was performed|Invalid `view_range`|^ERROR:|^Error:|Parameter `\w+` is required"
    r"|is not a valid|did not appear verbatim|Your search and replace strings are the same|already exists"
)
_SHELL_FAILED_FIRST = linre.compile(
    r"^(?:(?:/bin/)?(?:ba)?sh: (?:line \d+: )?)?\S+: (?:.*: )?(?:No such file or directory|command not found"
    r"|Permission denied|Is a directory|cannot (?:open|access)\b.*)|^fatal: |^error: "
)
_TIMEOUT = linre.compile(r"EXECUTION TIMED OUT|The command took too long to execute|timed out after \d+ seconds", re.I)
_PY_ERROR_LAST = linre.compile(r"^[\w.]*(?:Error|Exception|Interrupt|Exit)\b")
_READ_ONLY = {"cat", "head", "tail", "less", "more", "nl", "ls", "tree", "wc", "file", "stat", "find", "grep", "rg",
              "git", "pwd", "echo", "which", "du", "sed", "awk"}
_GIT_READ = {"log", "show", "diff", "status", "blame", "reflog", "ls-files", "branch", "rev-parse", "grep",
             "cat-file", "describe", "tag", "shortlog"}


def sniff(parsed: Parsed) -> bool:
    if parsed.kind != "json" or not isinstance(parsed.value, dict):
        return False
    v = parsed.value
    steps, info = v.get("trajectory"), v.get("info")
    if not isinstance(steps, list) or not isinstance(info, dict):
        return False
    if not ("history" in v or "environment" in v):
        return False
    return all(isinstance(s, dict) and "action" in s for s in steps[:20])


def claims(name: str, head: bytes) -> str | None:
    return "single" if name.endswith(".traj") else None


# --------------------------------------------------------------------------- helpers


def _as_dict(value: Any) -> dict[str, Any]:
    """A dict, or a JSON string holding one (0.x ``state``, ``replay_config``), else {}."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            doc = loads_bounded(value)
        except orjson.JSONDecodeError:
            return {}
        return doc if isinstance(doc, dict) else {}
    return {}


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _split(line: str) -> list[str]:
    try:
        return split_words(line)  # shlex, linear on long lines (loaders/common.py)
    except ValueError:
        return line.split()


def _open_file(state: dict[str, Any], prev: str) -> str:
    f = state.get("open_file")
    if isinstance(f, str) and f and f.lower() not in ("n/a", "none"):
        return f
    return prev


def _first_line(text: str) -> str:
    return text.lstrip().split("\n", 1)[0].strip("\r ")


def _last_line(text: str) -> str:
    lines = [ln.strip("\r ") for ln in text.rstrip().split("\n") if ln.strip("\r ")]
    return lines[-1] if lines else ""


def _tool_status(output: str) -> str:
    """A tool-bundle command's outcome from its own message: its first line first (file content that follows
    may say anything), then the first 500 characters."""
    first = _first_line(output)
    if _OK.search(first):
        return "ok"
    head = output.strip()[:500]
    if _FAILED.search(head):
        return "failed"
    return "ok" if _OK.search(head) else "unknown"


def _read_only(command: str) -> bool:
    """A single command (``cd X &&`` allowed) that only prints things: no redirection, chaining or substitution."""
    if re.search(r"[>;`]|&&.*&&|\|\||\$\(", command):
        return False
    words = _split(command.strip())
    if len(words) > 2 and words[0] == "cd" and words[2] == "&&":
        words = words[3:]
    if not words or words[0] not in _READ_ONLY or "&&" in words:
        return False
    if words[0] == "git":
        return len(words) > 1 and words[1] in _GIT_READ
    if words[0] == "sed":
        return not any(w.startswith("-i") for w in words)
    return True


def _shell_status(command: str, output: str) -> str:
    text = output.strip()
    if text.startswith("Your command ran successfully and did not produce any output"):
        return "ok"
    if _TIMEOUT.search(text[:500]) or _TIMEOUT.search(text[-500:]):
        return "failed"
    if _SHELL_FAILED_FIRST.match(_first_line(text)):
        return "failed"
    if re.search(r"^Traceback \(most recent call last\):", text, re.M) and _PY_ERROR_LAST.match(_last_line(text)):
        return "failed"
    if text and "\n" not in command.strip() and _read_only(command):
        return "ok"
    return "unknown"


def _action_event(index: int, action: str, observation: str, open_file: str, raw: str, submitted: bool) -> Event:
    """One tool event for a step's ``action`` string."""
    action = action.rstrip("\n")
    first, _, rest = action.partition("\n")
    words = _split(first)
    name = words[0] if words else ""
    out = observation
    if name in _SRE and len(words) >= 2:
        sub = words[1]
        args: dict[str, Any] = {"command": sub}
        if len(words) >= 3:
            args["path"] = words[2]
        for opt in ("--view_range", "--insert_line"):
            if opt in words:
                args[opt.lstrip("-")] = " ".join(words[words.index(opt) + 1:words.index(opt) + 3])
        ev = tool_event(index, name, args, output=out, status=_tool_status(out), raw=raw)
        ev.args = orjson.dumps({**args, "action": action}).decode()  # the whole command, for pattern scans
        return ev
    if name in _READ_TOOLS:
        path = words[1] if name in ("open", "filemap", "view_image") and len(words) >= 2 else open_file
        args = {"command": action}
        ev = tool_event(index, name, args, kind=READ, output=out, status=_tool_status(out), raw=raw)
        ev.command, ev.paths = "", (path,) if path else ()
        return ev
    if name in _EDIT_TOOLS:
        path = words[1] if name == "create" and len(words) >= 2 else open_file
        args = {"command": name, "path": path, "action": action} if path else {"command": name, "action": action}
        ev = tool_event(index, name, args, kind=EDIT, output=out, status=_tool_status(out), raw=raw)
        ev.command, ev.paths = "", (path,) if path else ()
        return ev
    if name in _SEARCH_TOOLS:
        where = words[2] if len(words) >= 3 else (open_file if name == "search_file" else "")
        args = {"command": action}
        ev = tool_event(index, name, args, kind=SEARCH, output=out, status=_tool_status(out), raw=raw)
        ev.command, ev.paths = "", (where,) if where else ()
        return ev
    if name in _OTHER_TOOLS:
        status = "ok" if name == "submit" and submitted else "unknown"
        ev = tool_event(index, name, {"command": action}, kind=OTHER_KIND, output=out, status=status, raw=raw)
        ev.command = ""
        return ev
    ev = tool_event(index, "bash", {"command": action}, kind=EXECUTE, output=out,
                    status=_shell_status(action, out), raw=raw)
    ev.paths = shell_read_paths(action)
    return ev


def _reward(info: dict[str, Any]) -> tuple[float | None, str | None]:
    r = info.get("reward")
    if isinstance(r, int | float) and not isinstance(r, bool):
        return float(r), "info.reward"
    res = info.get("resolved")
    if isinstance(res, bool):
        return (1.0 if res else 0.0), "info.resolved"
    return None, None


def _meta(doc: dict[str, Any], path: str) -> dict[str, Any]:
    info = got if isinstance(got := doc.get("info"), dict) else {}
    rc = _as_dict(doc.get("replay_config"))
    steps = doc.get("trajectory") if isinstance(doc.get("trajectory"), list) else []
    first_state = steps[0].get("state") if steps and isinstance(steps[0], dict) else None
    meta: dict[str, Any] = {"agent": "swe-agent",
                            "sweagent_format": "0.x" if isinstance(first_state, str) else "1.x"}
    model = _get(rc, "agent", "model", "name") or _get(rc, "agent", "model", "model_name")
    if isinstance(model, str) and model:
        meta["model"] = model
    version = info.get("swe_agent_version")
    if isinstance(version, str):
        meta["agent_version"] = version
    for key in ("exit_status", "model_stats"):
        if key in info and isinstance(info[key], str | dict | type(None)):
            meta[key] = info[key]
    sub = info.get("submission")
    meta["submission"] = clip(sub) if isinstance(sub, str) else None
    env = doc.get("environment")
    task = _get(rc, "problem_statement", "id")
    if not (isinstance(task, str) and task):
        task = env if isinstance(env, str) and env not in ("swe_main", "main", "") else Path(path).stem
    meta["task"] = task
    reward, source = _reward(info)
    if reward is not None:
        meta["reward"], meta["reward_source"] = reward, source
    return meta


# --------------------------------------------------------------------------- load


def load(parsed: Parsed, path: str) -> Trajectory:
    doc = parsed.value
    meta = _meta(doc, path)
    events: list[Event] = []
    history = doc.get("history") if isinstance(doc.get("history"), list) else []
    for i, m in enumerate(history):
        if not isinstance(m, dict) or m.get("is_demo"):
            continue
        role = m.get("role")
        text = flatten_text(m.get("content"))
        if role == "system" and not events:
            events.append(Event(index=len(events), type=OTHER, text=clip(text), raw=f"history[{i}]"))
            continue
        if role == "user" and text:
            events.append(Event(index=len(events), type=USER, text=clip(text), raw=f"history[{i}]"))
            break
    submitted = str(meta.get("exit_status") or "").startswith("submitted")
    open_file = ""
    steps = doc.get("trajectory") or []
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        raw = f"trajectory[{i}]"
        thought = step.get("thought")
        if not isinstance(thought, str) or not thought.strip():
            thought = got if isinstance(got := step.get("response"), str) else ""
        if thought.strip():
            events.append(Event(index=len(events), type=THOUGHT, text=clip(thought), raw=f"{raw}.thought"))
        state = _as_dict(step.get("state"))
        open_file = _open_file(state, open_file)
        action = step.get("action")
        if not isinstance(action, str) or not action.strip():
            continue
        observation = step.get("observation")
        observation = observation if isinstance(observation, str) else flatten_text(observation)
        events.append(_action_event(len(events), action, observation, open_file, raw, submitted))
    exit_status = meta.get("exit_status")
    if isinstance(exit_status, str) and exit_status:
        events.append(Event(index=len(events), type=OTHER, text=f"exit_status: {exit_status}", raw="info.exit_status"))
    return Trajectory(format=NAME, source=path, events=events, meta=meta)


__all__ = ["NAME", "sniff", "claims", "load"]
