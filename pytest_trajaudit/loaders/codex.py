"""OpenAI Codex CLI: session rollouts (``rollout-*.jsonl``) and ``codex exec --json`` streams.

Rollout lines are ``{"timestamp","type","payload"}`` with ``type`` one of ``session_meta``, ``turn_context``,
``response_item``, ``event_msg`` (and ``compacted``). ``response_item`` payloads are Responses-API items:
``message``, ``reasoning``, ``function_call`` (``arguments`` is a JSON *string*), ``function_call_output``
(``output`` is a JSON string ``{"output","metadata":{"exit_code"}}``, a plain string such as
``"Exit code: 1\\nWall time: ...\\nOutput:\\n..."``, or a list of content items), ``custom_tool_call`` /
``custom_tool_call_output`` (``apply_patch`` with the raw patch as ``input``), ``local_shell_call`` and
``web_search_call``. ``event_msg`` lines repeat the same content for the UI (``agent_message``,
``agent_reasoning``, ``user_message``, ``exec_command_end``...): they are used only when the file holds no
``response_item`` at all (then begin/end pairs become tool calls); otherwise only what response items lack
is taken from them (aborted turns, errors, exit codes of shell calls whose output carries none).
Rollouts written before ``session_meta`` existed hold bare response items after an ``{"id","timestamp",
"instructions"}`` header, with ``{"record_type":"state"}`` lines in between.

``codex exec --json`` streams: ``thread.started``, ``turn.started``, ``item.started|updated|completed`` with an
``item`` ``{id, type: agent_message|reasoning|command_execution|file_change|mcp_tool_call|web_search|todo_list|
plan|error|collab_tool_call}``, ``turn.completed`` (usage), ``turn.failed`` and ``error``; the states of one
item id merge into one event (the final state wins). Older builds wrote ``session.created`` and
``assistant_message``, and before that ``{"id","msg":{EventMsg}}`` lines, read like rollout event messages.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..model import AGENT, EDIT, EXECUTE, FETCH, OTHER, READ, SEARCH, THINK, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed, loads_bounded
from ..scan import linre
from .common import SHLEX_MAX, clip, dumps, flatten_text, kind_for_tool, split_words, tool_event

NAME = "codex"
ROLLOUT = "codex-rollout"
EXEC_JSON = "codex-exec-json"

_ROLLOUT_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
_EXEC_TYPES = {
    "thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated",
    "item.completed", "item.plan.delta", "session.created", "request_user_input",
}
_ITEM_TYPES = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call", "ghost_snapshot", "compaction",
    "compaction_summary",
}
_CALL_TYPES = {"function_call", "custom_tool_call", "local_shell_call"}
# Codex tool names the shared table does not know (or knows under another meaning).
_CODEX_KINDS = {
    "shell": EXECUTE, "shell_command": EXECUTE, "container.exec": EXECUTE, "local_shell": EXECUTE,
    "exec_command": EXECUTE, "write_stdin": EXECUTE, "apply_patch": EDIT, "list_dir": SEARCH,
    "grep_files": SEARCH, "view_image": READ, "update_plan": THINK,
}
_PATCH_PATH = linre.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_APPLY_PATCH_CMD = linre.compile(r"^\s*(?:cd\s+\S+\s*&&\s*)?(?:apply_patch|applypatch)\b")
_EXIT_CODE = linre.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)\s*$", re.M)
_FAILED_PREFIXES = ("apply_patch verification failed", "execution error", "error: ", "aborted")
_STATUS = {"completed": "ok", "failed": "failed", "declined": "failed", "error": "failed", "incomplete": "failed"}


# --------------------------------------------------------------------------- sniff


def _s(value: Any) -> str:
    """A string field, or "" for anything else (hostile files put lists and objects anywhere)."""
    return value if isinstance(value, str) else ""


def _values(parsed: Parsed) -> list[tuple[Any, int]]:
    if parsed.kind == "jsonl":
        return list(zip(parsed.value, parsed.lines or [], strict=False))
    if parsed.kind == "json" and isinstance(parsed.value, dict):
        return [(parsed.value, 1)]  # a one-line file parses as a single JSON document
    return []


def _is_bare_item(v: dict[str, Any]) -> bool:
    t = _s(v.get("type"))
    if t not in _ITEM_TYPES or "payload" in v or "message" in v:
        return False
    if t == "message":
        return isinstance(v.get("role"), str) and isinstance(v.get("content"), list)
    if t == "reasoning":
        return "summary" in v or "encrypted_content" in v
    return "call_id" in v or t in ("web_search_call", "ghost_snapshot", "compaction", "compaction_summary")


def _line_score(v: Any) -> int:
    """2: a line only Codex writes; 1: a line that fits a Codex file; 0: foreign."""
    if not isinstance(v, dict):
        return 0
    t = _s(v.get("type"))
    if t in _ROLLOUT_TYPES and isinstance(v.get("payload"), dict):
        return 2
    if t in _EXEC_TYPES:
        return 2
    if isinstance(v.get("msg"), dict) and isinstance(v["msg"].get("type"), str) and "id" in v:
        return 2
    if v.get("record_type") == "state":
        return 1
    if not t and "id" in v and "timestamp" in v and ("instructions" in v or "git" in v):
        return 1
    if _is_bare_item(v):
        return 1
    if t == "error" and isinstance(v.get("message"), str):
        return 1
    return 0


def sniff(parsed: Parsed) -> bool:
    values = _values(parsed)[:50]
    if not values:
        return False
    scores = [_line_score(v) for v, _ in values]
    if parsed.kind == "json":
        return scores[0] == 2
    fitting = sum(1 for s in scores if s)
    if fitting < max(1, len(values) // 2):
        return False
    # a strong line, or an old rollout: header + bare response items
    return 2 in scores or (any(_is_bare_item(v) for v, _ in values if isinstance(v, dict)) and fitting >= 2)


# --------------------------------------------------------------------------- helpers


def _loads_dict(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return None
    try:
        val = loads_bounded(text)
    except orjson.JSONDecodeError:
        return None
    return val if isinstance(val, dict) else None


def _status_from_exit(code: Any) -> str:
    if isinstance(code, bool) or not isinstance(code, int):
        return "unknown"
    return "ok" if code == 0 else "failed"


def _parse_output(out: Any) -> tuple[str, str, int | None]:
    """Text, status and exit code of a function_call_output/custom_tool_call_output ``output``."""
    exit_code: int | None = None
    success: bool | None = None
    if isinstance(out, dict):  # very old rollouts: {"content", "success"}
        text = flatten_text(out.get("content", out.get("output")))
        success = out.get("success") if isinstance(out.get("success"), bool) else None
    elif isinstance(out, list):  # content items (MCP results, images)
        text = flatten_text(out)
    else:
        text = "" if out is None else str(out)
        inner = _loads_dict(text)
        if inner is not None and "output" in inner:
            text = flatten_text(inner.get("output"))
            meta = inner.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
                exit_code = meta["exit_code"]
            if isinstance(inner.get("success"), bool):
                success = inner["success"]
    if exit_code is None:
        m = _EXIT_CODE.search(text[:300])
        if m:
            exit_code = int(m.group(1))
    if exit_code is not None and not isinstance(exit_code, bool):
        status = _status_from_exit(exit_code)
    elif success is not None:
        status = "ok" if success else "failed"
    elif text.startswith("Success."):
        status = "ok"
    elif text.lower().startswith(_FAILED_PREFIXES):
        status = "failed"
    else:
        status = "unknown"
    return text, status, exit_code


def patch_paths(patch: str) -> tuple[str, ...]:
    """File paths an apply_patch envelope names (``*** Update File: x``, ``*** Add File``, ``*** Move to``)."""
    out = [a or b for a, b in _PATCH_PATH.findall(patch or "")]
    return tuple(dict.fromkeys(p for p in out if p))


_LONG_WRAPPED = linre.compile(r"\A\s*(?:\S*/)?(?:bash|sh|zsh)\s+-l?c\s+(['\"])(.*)\1\s*\Z", re.S)


def _unwrap_shell(command: str) -> str:
    """``bash -lc 'cat x'`` → ``cat x`` (exec --json gives the command as one string)."""
    if not command or not command.lstrip().startswith(("bash ", "sh ", "zsh ", "/bin/", "/usr/bin/")):
        return command
    if len(command) > SHLEX_MAX:  # split_words would split on whitespace alone: unwrap the plain quoted form only
        m = _LONG_WRAPPED.match(command)
        return m.group(2) if m else command
    try:
        parts = split_words(command)
    except ValueError:
        return command
    if len(parts) == 3 and parts[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and parts[1] in ("-lc", "-c"):
        return parts[2]
    return command


def _codex_tool(index: int, name: str, args: Any, raw: str, *, output: Any = "", status: str = "unknown",
                kind: str | None = None, title: str | None = None) -> Event:
    """tool_event with Codex's own tool names and apply_patch (direct or through the shell) as an edit."""
    k = kind or _CODEX_KINDS.get(name) or kind_for_tool(name)
    decoded = _loads_dict(args) if isinstance(args, str) else args
    ev = tool_event(index, name, decoded if decoded is not None else args, output=output, status=status,
                    kind=k, title=title, raw=raw)
    if k == EXECUTE and not ev.command and isinstance(decoded, dict):
        for key in ("chars", "cmd", "command"):
            val = decoded.get(key)
            if isinstance(val, str) and val:
                ev.command = val
                break
    patch = ""
    if name == "apply_patch":
        patch = decoded.get("input", "") if isinstance(decoded, dict) else (args if isinstance(args, str) else "")
    elif k == EXECUTE and _APPLY_PATCH_CMD.match(ev.command):
        patch = ev.command
    elif k == EXECUTE and isinstance(decoded, dict) and isinstance(decoded.get("command"), list):
        argv = decoded["command"]
        if argv and argv[0] in ("apply_patch", "applypatch"):
            patch = "\n".join(str(a) for a in argv[1:])
    if patch:
        ev.kind = EDIT
        ev.command = ""
        ev.paths = tuple(dict.fromkeys([*ev.paths, *patch_paths(str(patch))]))
    return ev


def _merge_result(ev: Event, output: Any) -> None:
    text, status, _ = _parse_output(output)
    ev.output = clip(text)
    ev.status = status


class _Builder:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.calls: dict[str, Event] = {}
        self.meta: dict[str, Any] = {"agent": "codex"}

    def add(self, ev: Event) -> Event:
        ev.index = len(self.events)
        self.events.append(ev)
        return ev

    def message(self, etype: str, text: str, raw: str) -> None:
        if text:
            self.add(Event(index=0, type=etype, text=clip(text), raw=raw))

    def other(self, text: str, raw: str) -> None:
        self.add(Event(index=0, type=OTHER, text=clip(text), raw=raw))


# --------------------------------------------------------------------------- rollout


def _session_meta(b: _Builder, p: dict[str, Any]) -> None:
    meta = b.meta
    if isinstance(p.get("id"), str):
        meta.setdefault("session_id", p["id"])
    for key in ("cwd", "originator", "cli_version", "model_provider"):
        if isinstance(p.get(key), str) and p[key]:
            meta.setdefault(key, p[key])
    if isinstance(p.get("git"), dict):
        meta.setdefault("git", {k: v for k, v in p["git"].items() if isinstance(v, str)})


def _turn_context(b: _Builder, p: dict[str, Any]) -> None:
    model = p.get("model")
    if isinstance(model, str) and model:
        b.meta.setdefault("model", model)
        models = b.meta.setdefault("models", [])
        if model not in models:
            models.append(model)
    if isinstance(p.get("cwd"), str):
        b.meta.setdefault("cwd", p["cwd"])


def _response_item(b: _Builder, p: dict[str, Any], raw: str) -> None:
    ev: Event | None  # a new tool call, or the earlier call an output belongs to
    t = _s(p.get("type"))
    if t == "message":
        role = _s(p.get("role"))
        text = flatten_text(p.get("content"))
        etype = {"user": USER, "assistant": AGENT}.get(role, OTHER)  # developer/system: harness instructions
        b.message(etype, text, raw)
    elif t == "reasoning":
        text = flatten_text(p.get("summary")) or flatten_text(p.get("content"))
        b.message(THOUGHT, text, raw)
    elif t == "function_call":
        ev = b.add(_codex_tool(0, str(p.get("name") or ""), p.get("arguments"), raw))
        if isinstance(p.get("call_id"), str):
            b.calls[p["call_id"]] = ev
    elif t == "custom_tool_call":
        name = str(p.get("name") or "")
        ev = b.add(_codex_tool(0, name, p.get("input", ""), raw))
        if isinstance(p.get("call_id"), str):
            b.calls[p["call_id"]] = ev
    elif t == "local_shell_call":
        action = got if isinstance(got := p.get("action"), dict) else {}
        args = {"command": action.get("command"), "workdir": action.get("working_directory")}
        ev = b.add(_codex_tool(0, "local_shell", {k: v for k, v in args.items() if v is not None}, raw))
        call_id = p.get("call_id") or p.get("id")
        if isinstance(call_id, str):
            b.calls[call_id] = ev
    elif t in ("function_call_output", "custom_tool_call_output"):
        ev = b.calls.get(_s(p.get("call_id")))
        if ev is None:
            b.meta["orphan_outputs"] = b.meta.get("orphan_outputs", 0) + 1
            return
        _merge_result(ev, p.get("output"))
    elif t == "web_search_call":
        action = got if isinstance(got := p.get("action"), dict) else {}
        status = _STATUS.get(got, "unknown") if isinstance(got := p.get("status"), str) else "unknown"
        title = action.get("query") or action.get("url") or "web_search"
        b.add(_codex_tool(0, "web_search", action, raw, status=status, kind=FETCH, title=f"web_search {title}"))
    # ghost_snapshot / compaction / other: harness bookkeeping, no event


def _event_msg(b: _Builder, p: dict[str, Any], raw: str, *, full: bool, exec_ends: dict[str, dict[str, Any]]) -> None:
    """An event message. ``full``: the file has no response items, so every event counts."""
    ev: Event | None  # a new tool call, or the earlier call an end message belongs to
    t = _s(p.get("type"))
    if t == "token_count":
        info = p.get("info")
        if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
            b.meta["token_usage"] = info["total_token_usage"]
        return
    if t == "turn_aborted":
        b.other(f"turn_aborted: {p.get('reason', '')}", raw)
        return
    if t in ("error", "stream_error"):
        b.other(f"{t}: {p.get('message', '')}", raw)
        return
    if t == "exec_command_end" and isinstance(p.get("call_id"), str) and not full:
        exec_ends[p["call_id"]] = p
        return
    if not full:
        return
    call_id = got if isinstance(got := p.get("call_id"), str) else None
    if t == "user_message":
        b.message(USER, flatten_text(p.get("message")), raw)
    elif t == "agent_message":
        b.message(AGENT, flatten_text(p.get("message")), raw)
    elif t == "agent_reasoning":
        b.message(THOUGHT, flatten_text(p.get("text")), raw)
    elif t == "exec_command_begin":
        args = {"command": p.get("command"), "workdir": p.get("cwd")}
        ev = b.add(_codex_tool(0, "shell", {k: v for k, v in args.items() if v is not None}, raw))
        if call_id:
            b.calls[call_id] = ev
    elif t == "exec_command_end":
        ev = b.calls.get(call_id) if call_id else None
        if ev is None:
            ev = b.add(_codex_tool(0, "shell", {"command": p.get("command")} if p.get("command") else {}, raw))
        out = p.get("aggregated_output")
        if not isinstance(out, str):
            out = "\n".join(s for s in (p.get("stdout"), p.get("stderr")) if isinstance(s, str) and s)
        ev.output = clip(out or flatten_text(p.get("formatted_output")))
        ev.status = _status_from_exit(p.get("exit_code"))
    elif t == "patch_apply_begin":
        changes = got if isinstance(got := p.get("changes"), dict) else {}
        ev = b.add(_codex_tool(0, "apply_patch", {"changes": changes}, raw, kind=EDIT))
        ev.paths = tuple(dict.fromkeys([*ev.paths, *(str(k) for k in changes)]))
        if call_id:
            b.calls[call_id] = ev
    elif t == "patch_apply_end":
        ev = b.calls.get(call_id) if call_id else None
        if ev is not None:
            ev.output = clip("\n".join(s for s in (p.get("stdout"), p.get("stderr")) if isinstance(s, str) and s))
            if isinstance(p.get("success"), bool):
                ev.status = "ok" if p["success"] else "failed"
    elif t == "mcp_tool_call_begin":
        inv = got if isinstance(got := p.get("invocation"), dict) else {}
        name = f"mcp__{inv.get('server', '')}__{inv.get('tool', '')}"
        ev = b.add(_codex_tool(0, name, inv.get("arguments"), raw))
        if call_id:
            b.calls[call_id] = ev
    elif t == "mcp_tool_call_end":
        ev = b.calls.get(call_id) if call_id else None
        if ev is not None:
            result = p.get("result")
            if isinstance(result, dict) and "Ok" in result:
                ok = result["Ok"] if isinstance(result["Ok"], dict) else {}
                ev.output = clip(flatten_text(ok.get("content")))
                ev.status = "failed" if ok.get("isError") or ok.get("is_error") else "ok"
            elif isinstance(result, dict) and "Err" in result:
                ev.output = clip(flatten_text(result["Err"]))
                ev.status = "failed"
    elif t == "web_search_end":
        q = p.get("query")
        b.add(_codex_tool(0, "web_search", {"query": q}, raw, status="ok", kind=FETCH, title=f"web_search {q}"))
    elif t == "session_configured":
        if isinstance(p.get("session_id"), str):
            b.meta.setdefault("session_id", p["session_id"])
        if isinstance(p.get("model"), str):
            b.meta.setdefault("model", p["model"])


def _load_rollout(values: list[tuple[Any, int]], b: _Builder) -> None:
    has_items = any(
        isinstance(v, dict) and (_s(v.get("type")) == "response_item" or _is_bare_item(v)) for v, _ in values
    )
    exec_ends: dict[str, dict[str, Any]] = {}
    for v, lineno in values:
        if not isinstance(v, dict):
            continue
        raw = f"line {lineno}"
        t = _s(v.get("type"))
        p = v.get("payload")
        if t in _ROLLOUT_TYPES and isinstance(p, dict):
            if t == "session_meta":
                _session_meta(b, p)
            elif t == "turn_context":
                _turn_context(b, p)
            elif t == "response_item":
                _response_item(b, p, raw)
            elif t == "event_msg":
                _event_msg(b, p, raw, full=not has_items, exec_ends=exec_ends)
            elif t == "compacted":
                b.other("context compacted", raw)
        elif isinstance(v.get("msg"), dict):  # early `codex exec --json`: {"id","msg":{EventMsg}}
            _event_msg(b, v["msg"], raw, full=not has_items, exec_ends=exec_ends)
        elif _is_bare_item(v):
            _response_item(b, v, raw)
        elif not t and "id" in v and "timestamp" in v:  # old rollout header
            _session_meta(b, v)
        elif not t and isinstance(v.get("prompt"), str):  # early exec --json prompt line
            b.message(USER, v["prompt"], raw)
        elif not t and isinstance(v.get("model"), str):  # early exec --json config summary
            b.meta.setdefault("model", v["model"])
    # exit codes the response items lack (plain-text outputs) from the matching exec_command_end
    for call_id, end in exec_ends.items():
        ev = b.calls.get(call_id)
        if ev is not None and ev.status == "unknown":
            ev.status = _status_from_exit(end.get("exit_code"))


# --------------------------------------------------------------------------- exec --json


def _exec_item(item: dict[str, Any], index: int, raw: str) -> Event:
    t = _s(item.get("type"))
    status = _STATUS.get(got, "unknown") if isinstance(got := item.get("status"), str) else "unknown"
    if t in ("agent_message", "assistant_message", "plan"):
        return Event(index=index, type=AGENT, text=clip(flatten_text(item.get("text"))), raw=raw)
    if t == "reasoning":
        return Event(index=index, type=THOUGHT, text=clip(flatten_text(item.get("text"))), raw=raw)
    if t == "command_execution":
        command = str(item.get("command") or "")
        ev = _codex_tool(index, "shell", {"command": _unwrap_shell(command)}, raw,
                         output=str(item.get("aggregated_output") or ""), kind=EXECUTE)
        code = item.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            ev.status = _status_from_exit(code)
        elif status == "failed":
            ev.status = "failed"
        return ev
    if t == "file_change":
        changes = got if isinstance(got := item.get("changes"), list) else []
        ev = _codex_tool(index, "apply_patch", {"changes": changes}, raw, status=status, kind=EDIT)
        paths = [c["path"] for c in changes if isinstance(c, dict) and isinstance(c.get("path"), str)]
        ev.paths = tuple(dict.fromkeys([*ev.paths, *paths]))
        return ev
    if t == "mcp_tool_call":
        name = f"mcp__{item.get('server', '')}__{item.get('tool', '')}"
        result = got if isinstance(got := item.get("result"), dict) else {}
        err = got if isinstance(got := item.get("error"), dict) else None
        output = flatten_text(err.get("message")) if err else flatten_text(result.get("content"))
        return _codex_tool(index, name, item.get("arguments"), raw, output=output,
                           status="failed" if err else status)
    if t == "web_search":
        q = item.get("query") or ""
        args = {"query": q, "action": item.get("action")} if item.get("action") else {"query": q}
        return _codex_tool(index, "web_search", args, raw, status=status if status != "unknown" else "ok",
                           kind=FETCH, title=f"web_search {q}")
    if t == "todo_list":
        return _codex_tool(index, "todo_list", {"items": item.get("items")}, raw, status="ok", kind=THINK)
    if t == "collab_tool_call":
        return _codex_tool(index, str(item.get("tool") or "collab"), {"prompt": item.get("prompt")}, raw,
                           status=status, kind=THINK)
    if t == "error":
        return Event(index=index, type=OTHER, text=clip(f"error: {item.get('message', '')}"), raw=raw)
    return Event(index=index, type=OTHER, text=clip(f"{t}: {dumps(item)}"), raw=raw)


def _load_exec(values: list[tuple[Any, int]], b: _Builder) -> None:
    by_id: dict[str, Event] = {}
    usage: dict[str, int] = {}
    for v, lineno in values:
        if not isinstance(v, dict):
            continue
        raw = f"line {lineno}"
        t = _s(v.get("type"))
        if t in ("thread.started", "session.created"):
            sid = v.get("thread_id") or v.get("session_id")
            if isinstance(sid, str):
                b.meta.setdefault("session_id", sid)
        elif t in ("item.started", "item.updated", "item.completed") and isinstance(v.get("item"), dict):
            item = v["item"]
            item_id = item.get("id")
            old = by_id.get(item_id) if isinstance(item_id, str) else None
            ev = _exec_item(item, old.index if old else len(b.events), raw)
            if old is not None:
                if not ev.output and old.output and t != "item.completed":
                    ev.output = old.output
                b.events[old.index] = ev
            else:
                b.events.append(ev)
            if isinstance(item_id, str):
                by_id[item_id] = ev
        elif t == "turn.completed" and isinstance(v.get("usage"), dict):
            for key, val in v["usage"].items():
                if isinstance(val, int):
                    usage[key] = usage.get(key, 0) + val
        elif t == "turn.failed":
            err = got if isinstance(got := v.get("error"), dict) else {}
            b.other(f"turn.failed: {err.get('message', '')}", raw)
        elif t == "error":
            b.other(f"error: {v.get('message', '')}", raw)
        elif isinstance(v.get("msg"), dict) or (not t and ("prompt" in v or "model" in v)):
            _load_rollout([(v, lineno)], b)
    if usage:
        b.meta["usage"] = usage


# --------------------------------------------------------------------------- entry point


def load(parsed: Parsed, path: str) -> Trajectory:
    values = _values(parsed)
    b = _Builder()
    is_exec = any(
        isinstance(v, dict) and (_s(v.get("type")) in _EXEC_TYPES or isinstance(v.get("msg"), dict)) for v, _ in values
    )
    if is_exec:
        _load_exec(values, b)
    else:
        _load_rollout(values, b)
    for i, ev in enumerate(b.events):
        ev.index = i
    return Trajectory(format=EXEC_JSON if is_exec else ROLLOUT, source=path, events=b.events, meta=b.meta)


__all__ = ["NAME", "sniff", "load", "patch_paths"]
