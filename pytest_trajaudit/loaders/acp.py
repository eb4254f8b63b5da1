"""BenchFlow ACP trajectory JSONL (``trajectory/acp_trajectory.jsonl``).

Line shapes written by BenchFlow's capture: ``{"type":"tool_call","tool_call_id","kind","title","status",
"content"}``, ``{"type":"user_message|agent_message|agent_thought","text"}`` and ``{"type":"agent_timeout",...}``.
``kind`` may be any string (``skill`` appears); tool names live only in ``title`` and ``content``: a title's first
word names the tool, except a title that is a command in backticks (claude-agent-acp's Bash call), a ``Bash``
call whose command is that title. Also accepted: the synthetic review-fixture shape
``{"phase","type":"tool_call","tool","args"}`` / ``{"type":"final","content"}`` used by BenchFlow's
experiment-review evals.

BenchFlow writes no trailing newline, so a run of one event is a file of one line: it parses as one JSON
document, not JSON Lines, and is read as a trajectory of that one event.
"""

from __future__ import annotations

from typing import Any

from ..model import AGENT, EXECUTE, OTHER, THOUGHT, TOOL, USER, Event, Trajectory
from ..safeio import Parsed
from ..scan import linre
from .common import clip, dumps, flatten_text, kind_for_tool, tool_event

NAME = "acp-jsonl"
STREAMS = True  # load() reads Parsed.records() one line at a time (loaders/job.py streams large files)
_TYPES = {"user_message", "agent_message", "agent_thought", "tool_call", "agent_timeout", "tool_call_update"}
_STATUS = {"completed": "ok", "failed": "failed", "cancelled": "failed", "error": "failed"}
_GENERIC_TITLES = {"terminal", "bash", "run", "execute", "shell", "read file", "write", "edit", "read"}
_TITLE_PATH = linre.compile(r"^(?:Read|Write|Edit|View|Create|Update)\s+(?:File\s+)?[`'\"]?(/[^\s`'\"]+|[\w.\-]+/[^\s`'\"]+)")


def _is_event(v: object) -> bool:
    return isinstance(v, dict) and isinstance(v.get("type"), str) and v["type"] in _TYPES and "message" not in v


def sniff(parsed: Parsed) -> bool:
    if parsed.kind == "json":  # one event on one line (BenchFlow writes no trailing newline): one JSON document
        return _is_event(parsed.value)
    if parsed.kind != "jsonl" or not parsed.value:
        return False
    seen = 0
    for v in parsed.value[:50]:
        if _is_event(v):
            seen += 1
    return seen > 0 and seen >= min(len(parsed.value), 50) // 2


def _kind_status(d: dict[str, Any]) -> tuple[str, str]:
    status = d.get("status")
    st = _STATUS.get(status, "unknown") if isinstance(status, str) else "unknown"
    if d.get("ok") is False or d.get("error"):
        st = "failed"
    elif d.get("ok") is True:
        st = "ok"
    return st, str(d.get("kind") or "")


def _acp_tool(index: int, d: dict[str, Any], raw: str) -> Event:
    status, kind = _kind_status(d)
    title = str(d.get("title") or "")
    content = c if isinstance(c := d.get("content"), list) else []
    raw_input = d.get("rawInput") if isinstance(d.get("rawInput"), dict) else {}
    outputs: list[str] = []
    written: list[Any] = []
    paths: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "diff":
            written.append({"path": block.get("path"), "newText": block.get("newText"), "oldText": block.get("oldText")})
            if isinstance(block.get("path"), str):
                paths.append(block["path"])
        else:
            outputs.append(flatten_text(block.get("content", block)))
    for loc in d.get("locations") or []:
        if isinstance(loc, dict) and isinstance(loc.get("path"), str):
            paths.append(loc["path"])
    m = _TITLE_PATH.match(title)
    if m:
        paths.append(m.group(1))
    shell = _title_command(title)
    # a command in backticks is claude-agent-acp's Bash call: its tool is the shell, whatever the command's first
    # word (``python3 -c …`` is a shell command line, not Python code)
    tool_name = "Bash" if shell is not None else title.split(" ", 1)[0] if title else kind
    ev = tool_event(index, tool_name, raw_input, output="\n".join(o for o in outputs if o), status=status,
                    kind=kind or kind_for_tool(tool_name), title=title, raw=raw)
    if not ev.command and ev.kind == EXECUTE:
        if shell is not None and shell.strip().lower() not in _GENERIC_TITLES:
            ev.command = shell.strip()
        elif shell is None and title and title.strip("`").lower() not in _GENERIC_TITLES:
            ev.command = title.strip().strip("`")
        elif outputs:
            ev.command = outputs[0].split("\n", 1)[0][:2000]
    ev.paths = tuple(dict.fromkeys([*ev.paths, *paths]))
    if written:
        ev.args = (ev.args + "\n" if ev.args else "") + dumps(written)
    return ev


def _title_command(title: str) -> str | None:
    """The command of a title that is a command in backticks (claude-agent-acp titles a Bash call
    ``"`" + command + "`"``, each backtick inside escaped as ``\\` ``), else None."""
    t = title.strip()
    if len(t) < 3 or t[0] != "`" or t[-1] != "`":
        return None
    return t[1:-1].replace("\\`", "`")


def _review_tool(index: int, d: dict[str, Any], raw: str) -> Event:
    """Synthetic review shape: {"phase","type":"tool_call","tool","args"}."""
    status, _ = _kind_status(d)
    name = str(d.get("tool") or "")
    return tool_event(index, name, d.get("args"), output=d.get("output", d.get("observation", "")),
                      status=status, raw=raw)


def load(parsed: Parsed, path: str) -> Trajectory:
    events: list[Event] = []
    meta: dict[str, Any] = {}
    by_id: dict[str, Event] = {}
    records = [(parsed.value, 1)] if parsed.kind == "json" else parsed.records()
    for value, lineno in records:
        if not isinstance(value, dict):
            continue
        raw = f"line {lineno}"
        t = value.get("type")
        if t == "tool_call_update" and value.get("tool_call_id") in by_id:
            ev = by_id[value["tool_call_id"]]
            st, _ = _kind_status(value)
            if st != "unknown":
                ev.status = st
            extra = flatten_text(value.get("content"))
            if extra:
                ev.output = clip((ev.output + "\n" + extra) if ev.output else extra)
            continue
        if t == "tool_call":
            ev = _acp_tool(len(events), value, raw) if "title" in value or "kind" in value else _review_tool(len(events), value, raw)
            if value.get("phase") not in (None, "agent"):
                continue
            tid = value.get("tool_call_id")
            if isinstance(tid, str):
                if tid in by_id:  # repeated id: the later line updates the call
                    old = by_id[tid]
                    ev.index = old.index
                    events[old.index] = ev
                    by_id[tid] = ev
                    continue
                by_id[tid] = ev
            events.append(ev)
        elif t in ("user_message", "agent_message", "agent_thought", "final"):
            etype = {"user_message": USER, "agent_message": AGENT, "agent_thought": THOUGHT, "final": AGENT}[t]
            text = value.get("text") if "text" in value else flatten_text(value.get("content"))
            events.append(Event(index=len(events), type=etype, text=clip(str(text or "")), raw=raw))
        elif t == "agent_timeout":
            meta["agent_timeout"] = {k: value.get(k) for k in ("reason", "timeout_sec") if k in value}
            events.append(Event(index=len(events), type=OTHER, text=f"agent_timeout: {value.get('reason', '')}", raw=raw))
        elif value.get("phase") == "verifier":
            meta.setdefault("verifier_events", []).append({k: v for k, v in value.items() if k != "phase"})
    return Trajectory(format=NAME, source=path, events=events, meta=meta)


__all__ = ["NAME", "sniff", "load", "TOOL"]
