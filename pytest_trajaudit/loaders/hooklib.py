"""Claude Code hook audit logs: ``hooklib.audit()``'s ``.claude/audit/<date>.jsonl`` and code-logger's
``events.jsonl`` — one run per session, each a job of its own.

Lines are ``{ts, event, session_id, tool_name, file_path, command≤200}`` (hooklib; empty fields omitted) or
``{ts, event, path, tool, ...}`` (code-logger). As in the original, lines without ``tool_name``/``tool`` are
skipped (SessionStart, Stop, UserPromptSubmit, ...), a session id defaults to ``"audit-session"``, and args
come from ``file_path, path, command, url``.

One deliberate difference: hooklib writes a ``PreToolUse`` *and* a ``PostToolUse`` line for one tool call (the
original counts 2 steps). Here a PostToolUse line is merged into the oldest unmatched PreToolUse line of the
same session with the same tool and arguments: one call, outcome ``ok``. A PreToolUse line with no
PostToolUse stays a call of unknown outcome (blocked by a hook, or failed: Claude Code runs PostToolUse hooks
only after a tool succeeded); a ``PostToolUseFailure`` line, or ``"ok": false``, marks the call failed.
The log holds no task verdict: the run counts as delivered when no call failed (the original's
``all(step.ok)``), and retry storms are invisible unless the log records failures.

The trajectory's meta keeps the original's view as well: ``hook_lines`` holds one ``[event index, ok]`` pair per
tool line in file order (``ok`` is the line's own ``ok``, default true, as the original reads it), so that
``--trajaudit-literal`` grades one step per line, as the original does (principles/rules.py ``steps_of``).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..model import Event, Trajectory, UnusableInput
from ..safeio import Parsed, derived, loads_bounded
from .common import tool_event
from .spans import Span, Spec, keep, resolve
from .traces import only_member, unique_ids

NAME = "hooklib-audit"
MULTI = True
# A log is indexed by its lines' spans (loaders/spans.py); the index keeps what groups a line into its session.
SPANS = Spec(paths=None, jsonl=True, fields=keep("session_id", "tool_name", "tool"))

_ARG_KEYS = ("file_path", "path", "command", "url")
_FOREIGN = ("type", "message", "payload", "role", "messages")
_SNIFF = 50
DEFAULT_SESSION = "audit-session"


def _values(parsed: Parsed) -> list[tuple[Any, int]]:
    if parsed.kind == "jsonl":
        lines = parsed.lines or list(range(1, len(parsed.value) + 1))
        return [(v, n) for v, n in zip(parsed.value, lines, strict=False) if v is not None]
    if parsed.kind == "json" and isinstance(parsed.value, dict):
        return [(parsed.value, 1)]
    return []


def _is_line(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("event"), str) and "ts" in v and \
        not any(k in v for k in _FOREIGN)


def _tool(v: dict[str, Any] | Span) -> str:
    t = v.get("tool_name") or v.get("tool")
    return t if isinstance(t, str) else ""


def sniff(parsed: Parsed) -> bool:
    head = _values(parsed)[:_SNIFF]
    return bool(head) and all(_is_line(v) for v, _ in head) and any(_tool(v) for v, _ in head)


def claims(name: str, head: bytes) -> str | None:
    """At collection, from the first bytes: a JSON Lines file whose first line is an audit record."""
    first = head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].strip()
    if not first.startswith(b"{"):
        return None
    try:
        v = loads_bounded(first)
    except orjson.JSONDecodeError:
        return None
    return "multi" if _is_line(v) else None


def _sessions(parsed: Parsed) -> dict[str, list[tuple[dict[str, Any] | Span, int]]]:
    """member id → the session's tool lines (or their spans) in file order (sessions in order of their first tool
    line). The member id is the session id made node-safe (see traces.unique_ids). Built once per parsed file."""
    return derived(parsed, "hooklib.sessions", lambda: _group(parsed))


def _group(parsed: Parsed) -> dict[str, list[tuple[dict[str, Any] | Span, int]]]:
    by_sid: dict[str, list[tuple[dict[str, Any] | Span, int]]] = {}
    for v, lineno in _values(parsed):
        if not isinstance(v, dict | Span) or not _tool(v):
            continue
        sid = v.get("session_id")
        sid = sid if isinstance(sid, str) and sid else (str(sid) if sid not in (None, "") else DEFAULT_SESSION)
        by_sid.setdefault(sid, []).append((v, lineno))
    return dict(zip(unique_ids(list(by_sid)), by_sid.values(), strict=True))


def members(parsed: Parsed, path: str) -> list[str]:
    return list(_sessions(parsed))


def _args(v: dict[str, Any]) -> dict[str, Any]:
    return {k: v[k] for k in _ARG_KEYS if v.get(k)}


def _explicit(v: dict[str, Any]) -> str | None:
    ok = v.get("ok")
    if isinstance(ok, bool):
        return "ok" if ok else "failed"
    return None


def _calls(lines: list[tuple[dict[str, Any], int]]) -> tuple[list[Event], bool, list[list[Any]]]:
    """(one event per tool call, whether the log records failures at all, the original's steps: one
    ``[event index, ok]`` per tool line)."""
    events: list[Event] = []
    hook_lines: list[list[Any]] = []
    pending: dict[tuple[str, str], list[Event]] = {}
    failures_recorded = False
    for v, lineno in lines:
        name, args, kind = _tool(v), _args(v), v.get("event")
        key = (name, repr(sorted(args.items())))
        explicit = _explicit(v)
        failures_recorded = failures_recorded or explicit is not None or kind == "PostToolUseFailure"
        literal_ok = v.get("ok", True) is not False
        if kind in ("PostToolUse", "PostToolUseFailure") and pending.get(key):
            ev = pending[key].pop(0)
            hook_lines.append([ev.index, literal_ok])
            ev.status = explicit or ("failed" if kind == "PostToolUseFailure" else "ok")
            ev.raw += f" + line {lineno} ({kind})"
            continue
        if kind == "PreToolUse":
            status = explicit or "unknown"
        elif kind in ("PostToolUse", "PostToolUseFailure"):
            status = explicit or ("failed" if kind == "PostToolUseFailure" else "ok")
        else:
            status = explicit or "unknown"
        ev = tool_event(len(events), name, args, status=status, raw=f"line {lineno} ({kind})")
        hook_lines.append([ev.index, literal_ok])
        events.append(ev)
        if kind == "PreToolUse":
            pending.setdefault(key, []).append(ev)
    return events, failures_recorded, hook_lines


def load_member(parsed: Parsed, path: str, member: str) -> tuple[Trajectory, dict[str, Any]]:
    sessions = _sessions(parsed)
    if member not in sessions:
        raise UnusableInput(path, f"no session {member!r} with tool calls in this audit log")
    lines = [(resolve(v), n) for v, n in sessions[member]]  # a session's lines are parsed for its load only
    events, failures_recorded, hook_lines = _calls(lines)
    delivered = all(e.status != "failed" for e in events)
    meta = {"agent": "claude-code", "session_id": member, "member": member, "delivered": delivered,
            "delivered_source": "hooklib audit log: no task verdict, delivered = no call failed",
            "failures_recorded": failures_recorded, "hook_lines": hook_lines}
    text = "\n".join(orjson.dumps(v, option=orjson.OPT_NON_STR_KEYS).decode() for v, _ in lines)
    traj = Trajectory(format=NAME, source=str(path), events=events, meta=meta, raw_text=text + "\n")
    job_meta = {"task": member, "trial": member, "agent": "claude-code", "model": "", "reward": None,
                "reward_source": None, "exception": None}
    return traj, job_meta


def load(parsed: Parsed, path: str) -> Trajectory:
    """An audit log of exactly one session (a log of several is read through :func:`load_member`)."""
    traj, _ = load_member(parsed, path, only_member(members(parsed, path), path, "audit log", "session"))
    return traj


__all__ = ["NAME", "MULTI", "sniff", "claims", "members", "load_member", "load"]
