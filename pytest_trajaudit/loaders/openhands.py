"""OpenHands (formerly OpenDevin) event lists and evaluation ``output.jsonl`` records.

Two kinds of files:

- an **event list** (a session export or replay file, e.g. ``tests/runtime/trajs/*.json``): a JSON list of events,
  each an action or an observation — one job;
- an **evaluation output** (``output.jsonl``, one record per line): ``{instance_id | id | issue, instruction,
  metadata, history, metrics, error, test_result, ...}`` — a multi-record file, one job per record (member id:
  ``instance_id``, else ``id``, else the resolver's ``<owner>__<repo>-<number>``, else ``line<N>``).

An event is ``{id, timestamp, source: agent|user|environment, message, action | observation, args | content +
extras, cause (the action an observation answers), tool_call_metadata}``. ``history`` is that list (2025), a list
of ``[action, observation]`` pairs (OpenDevin 2024), or a flat list of action and observation dicts without ids
(resolver 2024: an observation answers the action just before it).

Mapping: ``message`` → user_message / agent_message by ``source`` (other for ``environment``); ``system`` and ``recall`` → other (harness
context); ``run`` → execute (``args.command``; ``paths`` = files it prints); ``run_ipython`` → execute
(``args.code``; a lone agentskills call ``open_file(p)`` / ``edit_file_by_replace(p, …)`` / ``create_file(p)`` /
``search_*`` / ``find_file`` is a read / edit / search of ``p``); ``read`` → read, ``edit``/``write`` → edit
(``args.path``; the tool name is ``tool_call_metadata.function_name`` when present, e.g. str_replace_editor);
``browse*`` → fetch; ``think`` → agent_thought; ``finish`` → agent_message (``final_thought``/``thought``);
``args.thought`` before a call → agent_thought; state changes and ``null`` observations are dropped; an
``error`` observation answering nothing (a malformed tool call) → other.

Status: ``extras.metadata.exit_code`` (or ``exit_code``): 0 ok, other failed, -1 (still running / no exit code)
unknown; an observation of type ``error``, or content starting with ``ERROR:`` → failed; an IPython traceback →
failed; ``success`` when given; read/edit results otherwise ok.

Reward (records): ``test_result.resolved``, ``test_result.report.resolved``, top-level ``report.resolved`` (the
SWE-bench evaluator's verdict) or ``test_result.result`` (OpenDevin-era benchmarks) when it is a boolean → 1.0 /
0.0, ``reward_source`` naming the field. Nothing else is a reward: the 2025 ``test_result`` holds only
``git_patch`` (resolution is computed later by the benchmark's evaluator), and the resolver's ``success`` is an LLM
judge's opinion (kept as ``meta["resolver_success"]``).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..model import (
    AGENT,
    EDIT,
    EXECUTE,
    FETCH,
    OTHER,
    OTHER_KIND,
    READ,
    SEARCH,
    THOUGHT,
    USER,
    Event,
    Trajectory,
    UnusableInput,
)
from ..safeio import Budget, Parsed, derived, iter_lines, loads_bounded, parse_bytes, read_bytes
from ..scan import linre
from .common import clip, flatten_text, shell_read_paths, tool_event
from .spans import Span, Spec, resolve

NAME = "openhands"
MULTI = True

_TOOL_ACTIONS = {"run", "run_ipython", "read", "edit", "write", "browse", "browse_interactive", "delegate", "mcp",
                 "call_tool_mcp"}
_SKIP_ACTIONS = {"change_agent_state", "null", "pause", "resume", "stop"}
_SKIP_OBS = {"null", "agent_state_changed", "think", "user_rejected"}
_EVENT_HEAD = re.compile(rb'^\s*\[\s*\{\s*"id"\s*:\s*\d+\s*,\s*"timestamp"\s*:')
_RECORD_KEYS = (b'"instance_id"', b'"instruction"', b'"issue_type"', b'"history"', b'"test_result"')
_FIRST_KEY = re.compile(rb'^\s*\{\s*"(instance_id|id)"\s*:\s*("(?:[^"\\]|\\.)*")\s*[,}]')
_RESOLVER_HEAD = re.compile(
    rb'^\s*\{\s*"issue"\s*:\s*\{\s*"owner"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"repo"\s*:\s*("(?:[^"\\]|\\.)*")\s*,'
    rb'\s*"number"\s*:\s*(\d+)\s*[,}]')
_SKILL_CALL = linre.compile(
    r"^\s*(open_file|goto_line|scroll_up|scroll_down|create_file|edit_file_by_replace|insert_content_at_line"
    r"|append_file|edit_file|search_dir|search_file|find_file|parse_\w+)\(\s*(?:[\w]+\s*=\s*)?"
    r"(?:r?(['\"])(.*?)\2)?", re.S)
_SKILL_KIND = {"open_file": READ, "goto_line": READ, "scroll_up": READ, "scroll_down": READ, "create_file": EDIT,
               "edit_file_by_replace": EDIT, "insert_content_at_line": EDIT, "append_file": EDIT, "edit_file": EDIT,
               "search_dir": SEARCH, "search_file": SEARCH, "find_file": SEARCH}
_IPY_ERROR = linre.compile(r"^-{20,}\n\w*(?:Error|Exception)|^Traceback \(most recent call last\)|^\w*Error: ", re.M)
_SKILL_FAILED = linre.compile(r"^\[?(?:Your proposed edit has introduced new syntax error|No exact match found"
                           r"|ERROR:|Error:|File .* not found|No file open)")


# --------------------------------------------------------------------------- shapes


def _is_event(d: Any) -> bool:
    return isinstance(d, dict) and (isinstance(d.get("action"), str) or isinstance(d.get("observation"), str))


def _is_event_list(v: Any) -> bool:
    if not isinstance(v, list) or not v:
        return False
    head = v[:30]
    return all(_is_event(d) for d in head) and any("source" in d or "args" in d or "extras" in d for d in head)


def _is_record(d: Any) -> bool:
    if isinstance(d, Span):
        return bool(d.get("record"))
    if not isinstance(d, dict) or not isinstance(d.get("history"), list):
        return False
    return any(k in d for k in ("instance_id", "instruction", "test_result", "issue", "git_patch"))


def _records(parsed: Parsed) -> list[tuple[dict[str, Any] | Span, int]] | None:
    """(record, 1-based line) of an output file; None when the file is not records."""
    if parsed.kind == "jsonl":
        vals = [(v, n) for v, n in zip(parsed.value, parsed.lines or [], strict=False) if v is not None]
        return vals if vals and all(_is_record(v) for v, _ in vals[:20]) else None
    if parsed.kind == "json" and _is_record(parsed.value):
        return [(parsed.value, 1)]
    return None


def _line_text(parsed: Parsed, line: int) -> str:
    """The record's own line of the file (the literal mode's "trajectory string"), without splitting the file."""
    if parsed.kind != "jsonl":
        return parsed.text
    k = derived(parsed, "openhands.lines", lambda: {n: i for i, n in reversed(list(enumerate(parsed.lines or [])))})[line]
    start = parsed.offsets[k] if parsed.offsets else 0
    end = parsed.text.find("\n", start)
    return parsed.text[start:] if end < 0 else parsed.text[start:end]


def sniff(parsed: Parsed) -> bool:
    if parsed.kind == "json" and isinstance(parsed.value, list):
        return _is_event_list(parsed.value)
    return _records(parsed) is not None


def claims(name: str, head: bytes) -> str | None:
    """An event list ("single") by its first event's keys; an evaluation output ("multi"): ``output.jsonl`` whose
    first 4 KiB name a record key (``instance_id``, ``instruction``, ``history``, ``test_result``,
    ``issue_type``), or any ``*.jsonl``/``*.json`` naming two of them."""
    body = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if _EVENT_HEAD.match(body):
        return "single"
    if not body.startswith(b"{") or not name.endswith((".jsonl", ".json")):
        return None
    keys = sum(k in head for k in _RECORD_KEYS)
    return "multi" if keys >= 2 or (keys and name == "output.jsonl") else None


# --------------------------------------------------------------------------- member ids


def _record_id(rec: dict[str, Any] | Span, line: int) -> str:
    if isinstance(rec, Span):
        rid = rec.get("id")
        return rid if rid is not None else f"line{line}"
    rid = _own_id(rec)
    return rid if rid is not None else f"line{line}"


def _own_id(rec: dict[str, Any]) -> str | None:
    """The record's own id: ``instance_id``, else ``id``, else the resolver's ``<owner>__<repo>-<number>``."""
    for key in ("instance_id", "id"):
        v = rec.get(key)
        if isinstance(v, str) and v:
            return v
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
    issue = rec.get("issue")
    if isinstance(issue, dict) and issue.get("owner") and issue.get("repo") and issue.get("number") is not None:
        return f"{issue['owner']}__{issue['repo']}-{issue['number']}"
    return None


# An output.jsonl is indexed by its lines' spans (loaders/spans.py): the index keeps whether a line is a record and
# its own id.
SPANS = Spec(paths=None, jsonl=True, fields=lambda rec: {"record": _is_record(rec), "id": _own_id(rec)})


def members(parsed: Parsed, path: str) -> list[str] | None:
    recs = _records(parsed)
    if recs is None:
        return None
    return [_record_id(r, n) for r, n in recs]


def scan_members(base: Any, rel: str, max_file: int) -> list[str] | None:
    """Record ids in one streaming pass: the first key of each line when it is the id (``{"instance_id": "…"`` /
    ``{"id": "…"`` / the resolver's ``{"issue": {"owner", "repo", "number"``), else that line alone parsed. Any
    line that does not parse (or a file that is not UTF-8 JSON Lines) falls back to parsing the whole file, which
    gives the exact error."""
    ids: list[str] = []
    try:
        for n, line in iter_lines(base, rel, max_file):
            if n == 1:
                line = line.removeprefix(b"\xef\xbb\xbf")
            if b"\x00" in line[:4]:
                raise ValueError("not UTF-8")
            m = _FIRST_KEY.match(line)
            if m:
                ids.append(orjson.loads(m.group(2)))
                continue
            m = _RESOLVER_HEAD.match(line)
            if m:
                ids.append(f"{orjson.loads(m.group(1))}__{orjson.loads(m.group(2))}-{int(m.group(3))}")
                continue
            rec = loads_bounded(line)
            if not _is_record(rec):
                raise ValueError("not a record")
            ids.append(_record_id(rec, n))
    except (ValueError, orjson.JSONDecodeError):
        data = read_bytes(base, rel, Budget(max_file, max_file))
        return members(parse_bytes(data, base / rel, max_file), str(base / rel))
    return ids


# --------------------------------------------------------------------------- events


def _exit_code(obs: dict[str, Any]) -> int | None:
    extras = got if isinstance(got := obs.get("extras"), dict) else {}
    md = got if isinstance(got := extras.get("metadata"), dict) else {}
    for v in (md.get("exit_code"), extras.get("exit_code"), obs.get("exit_code")):
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, str) and re.fullmatch(r"-?\d+", v):
            return int(v)
    return None


def _status(action: str, obs: dict[str, Any] | None, kind: str) -> str:
    if obs is None:
        return "unknown"
    otype = obs.get("observation")
    content = _content(obs)
    if otype == "error" or content.lstrip().startswith("ERROR:"):
        return "failed"
    code = _exit_code(obs)
    if code is not None and code >= 0:
        return "ok" if code == 0 else "failed"
    if code == -1:
        return "unknown"
    if action == "run_ipython":
        if _SKILL_FAILED.match(content.lstrip()) or _IPY_ERROR.search(content):
            return "failed"
        return "ok" if kind in (READ, EDIT, SEARCH) and content.strip() else "unknown"
    if isinstance(obs.get("success"), bool):
        return "ok" if obs["success"] else "failed"
    if action in ("read", "edit", "write", "browse", "browse_interactive") and otype in (action, "read", "edit",
                                                                                           "write", "browse"):
        return "ok"
    return "unknown"


def _content(obs: dict[str, Any]) -> str:
    c = obs.get("content")
    return c if isinstance(c, str) else flatten_text(c)


def _args(act: dict[str, Any]) -> dict[str, Any]:
    """The action's payload: ``args`` (events), or the flat dict itself minus bookkeeping (resolver)."""
    a = act.get("args")
    if isinstance(a, dict):
        return a
    return {k: v for k, v in act.items() if k not in ("action", "source", "id", "timestamp", "message",
                                                       "is_confirmed", "action_risk", "keep_prompt")}


def _tool_name(act: dict[str, Any], default: str) -> str:
    tcm = act.get("tool_call_metadata")
    fn = tcm.get("function_name") if isinstance(tcm, dict) else None
    return fn if isinstance(fn, str) and fn else default


def _tool(index: int, act: dict[str, Any], obs: dict[str, Any] | None, raw: str) -> Event:
    action = act["action"]
    args = {k: v for k, v in _args(act).items() if k not in ("thought", "kernel_init_code", "blocking", "hidden",
                                                             "confirmation_state", "is_input")}
    output = _content(obs) if obs is not None else ""
    if action == "run":
        cmd = got if isinstance(got := args.get("command"), str) else ""
        ev = tool_event(index, _tool_name(act, "execute_bash"), {"command": cmd}, kind=EXECUTE, output=output,
                        status=_status(action, obs, EXECUTE), raw=raw)
        ev.command, ev.paths = cmd, shell_read_paths(cmd)
        return ev
    if action == "run_ipython":
        code = got if isinstance(got := args.get("code"), str) else ""
        m = _SKILL_CALL.match(code)
        kind = _SKILL_KIND.get(m.group(1), EXECUTE) if m else EXECUTE
        ev = tool_event(index, _tool_name(act, "execute_ipython_cell"), {"code": code}, kind=kind, output=output,
                        status=_status(action, obs, kind), raw=raw)
        ev.command = code
        if m and m.group(3) and kind != EXECUTE:
            ev.paths = (m.group(3),)
        return ev
    if action in ("read", "edit", "write"):
        kind = READ if action == "read" else EDIT
        path = args.get("path") if isinstance(args.get("path"), str) else ""
        call = {"command": args.get("command") or ("view" if action == "read" else action), "path": path,
                **{k: v for k, v in args.items() if k not in ("command", "path") and v not in (None, "", "None")}}
        name = _tool_name(act, action)
        ev = tool_event(index, name, call, kind=kind, output=output, status=_status(action, obs, kind), raw=raw)
        if ev.kind == EDIT and str(call["command"]) == "view":
            ev.kind = READ
        ev.command = ""
        ev.paths = (path,) if path else ()
        return ev
    if action in ("browse", "browse_interactive"):
        ev = tool_event(index, _tool_name(act, action), args, kind=FETCH, output=output,
                        status=_status(action, obs, FETCH), raw=raw)
        ev.command = ""
        return ev
    ev = tool_event(index, _tool_name(act, action), args, kind=OTHER_KIND if action != "delegate" else "think",
                    output=output, status=_status(action, obs, OTHER_KIND), raw=raw)
    ev.command = ""
    return ev


def _pairs(history: list[Any], base: str) -> list[tuple[dict[str, Any] | None, dict[str, Any] | None, str]]:
    """(action, observation, raw pointer) in order: observations joined to their action by ``cause`` (events),
    by pair ([action, observation]), or by adjacency (flat resolver history)."""
    out: list[list[Any]] = []
    by_id: dict[Any, int] = {}
    last_open: int | None = None
    for i, item in enumerate(history):
        if isinstance(item, list):
            act = item[0] if item and _is_event(item[0]) else None
            obs = item[1] if len(item) > 1 and _is_event(item[1]) else None
            out.append([act if act and "action" in act else None, obs if obs and "observation" in obs else None,
                        f"{base}[{i}]"])
            continue
        if not _is_event(item):
            continue
        if isinstance(item.get("action"), str):
            out.append([item, None, f"{base}[{i}]"])
            if "id" in item:
                by_id[item["id"]] = len(out) - 1
            last_open = len(out) - 1 if item["action"] in _TOOL_ACTIONS else None
            continue
        cause = item.get("cause")
        if cause is not None and cause in by_id and out[by_id[cause]][1] is None:
            out[by_id[cause]][1] = item
        elif cause is None and "id" not in item and last_open is not None and out[last_open][1] is None:
            out[last_open][1] = item
            last_open = None
        else:
            out.append([None, item, f"{base}[{i}]"])
    return [(a, o, r) for a, o, r in out]


def _events(history: list[Any], base: str) -> list[Event]:
    events: list[Event] = []

    def add(ev: Event) -> None:
        ev.index = len(events)
        events.append(ev)

    for act, obs, raw in _pairs(history, base):
        if act is None:
            if obs is not None and obs.get("observation") == "error":
                add(Event(index=0, type=OTHER, text=clip(f"error: {_content(obs)}"), raw=raw))
            continue
        action = act.get("action")
        args = _args(act)
        source = act.get("source")
        thought = args.get("thought") if isinstance(args.get("thought"), str) else act.get("thought")
        if action in _SKIP_ACTIONS:
            continue
        if action == "message":
            text = args.get("content") if isinstance(args.get("content"), str) else flatten_text(act.get("message"))
            if text:
                etype = AGENT if source == "agent" else USER if source in ("user", None) else OTHER
                add(Event(index=0, type=etype, text=clip(text), raw=raw))
            continue
        if action in ("system", "recall"):
            text = args.get("content") or args.get("query") or act.get("message") or ""
            if isinstance(text, str) and text:
                add(Event(index=0, type=OTHER, text=clip(text), raw=raw))
            continue
        if action == "think":
            if isinstance(thought, str) and thought.strip():
                add(Event(index=0, type=THOUGHT, text=clip(thought), raw=raw))
            continue
        if action in ("finish", "reject"):
            final = args.get("final_thought") or thought or flatten_text(args.get("outputs")) or act.get("message")
            if isinstance(final, str) and final.strip() and final.strip() != "{}":
                add(Event(index=0, type=AGENT, text=clip(final), raw=raw))
            continue
        if isinstance(thought, str) and thought.strip():
            add(Event(index=0, type=THOUGHT, text=clip(thought), raw=raw))
        add(_tool(0, act, obs if obs is not None and obs.get("observation") not in _SKIP_OBS else None, raw))
    return events


# --------------------------------------------------------------------------- load


def load(parsed: Parsed, path: str) -> Trajectory:
    """An event list (one session); a file holding exactly one record is read as that record."""
    if parsed.kind == "json" and isinstance(parsed.value, list):
        return Trajectory(format=NAME, source=path, events=_events(parsed.value, ""), meta={"agent": "openhands"})
    ids = members(parsed, path) or []
    if len(ids) != 1:
        raise UnusableInput(path, f"holds {len(ids)} evaluation records: each is a job of its own "
                                       "(a multi-record file)")
    traj, _ = load_member(parsed, path, ids[0])
    return traj


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _resolution(rec: dict[str, Any]) -> tuple[float | None, str | None]:
    for keys in (("test_result", "resolved"), ("test_result", "report", "resolved"), ("report", "resolved"),
                 ("test_result", "result")):
        v = _get(rec, *keys)
        if isinstance(v, bool):
            return (1.0 if v else 0.0), ".".join(keys)
    return None, None


def _index(parsed: Parsed) -> dict[str, tuple[dict[str, Any] | Span, int]]:
    """member id → (record or its line's span, line), the first record of each id (built once per parsed file)."""
    index: dict[str, tuple[dict[str, Any] | Span, int]] = {}
    for r, n in _records(parsed) or []:
        index.setdefault(_record_id(r, n), (r, n))
    return index


def load_member(parsed: Parsed, path: str, member: str) -> tuple[Trajectory, dict[str, Any]]:
    found = derived(parsed, "openhands.index", lambda: _index(parsed)).get(member)
    if found is None:
        raise UnusableInput(path, f"no record {member!r}")
    span, line = found
    rec = resolve(span)  # a record's line is parsed for its load only
    md = got if isinstance(got := rec.get("metadata"), dict) else {}
    agent = got if isinstance(got := md.get("agent_class"), str) else "openhands"
    model = _get(md, "llm_config", "model") or md.get("model_name") or ""
    meta: dict[str, Any] = {"agent": agent, "record_line": line}
    if isinstance(model, str) and model:
        meta["model"] = model
    for key in ("max_iterations", "agent_class"):
        if isinstance(md.get(key), str | int):
            meta[key] = md[key]
    if isinstance(rec.get("success"), bool):
        meta["resolver_success"] = rec["success"]
    patch = _get(rec, "test_result", "git_patch") or rec.get("git_patch")
    if isinstance(patch, str):
        meta["git_patch"] = clip(patch)
    events = _events(rec["history"], "history")
    instruction = rec.get("instruction")
    if isinstance(instruction, str) and instruction and not any(e.type == USER for e in events):
        events.insert(0, Event(index=0, type=USER, text=clip(instruction), raw="instruction"))
        for i, e in enumerate(events):
            e.index = i
    final = rec.get("final_message")
    if isinstance(final, str) and final.strip() and not any(e.type == AGENT for e in events[-3:]):
        events.append(Event(index=len(events), type=AGENT, text=clip(final), raw="final_message"))
    traj = Trajectory(format=NAME, source=path, events=events, meta=meta)
    traj.raw_text = span.text() if isinstance(span, Span) else _line_text(parsed, line)
    reward, source = _resolution(rec)
    error = rec.get("error")
    task = _get(rec, "instance", "instance_id") or rec.get("instance_id") or rec.get("id") or member
    info = {"task": str(task), "trial": member, "agent": agent, "model": meta.get("model", ""),
            "reward": reward, "reward_source": source,
            "exception": error if isinstance(error, str) and error else None}
    return traj, info


__all__ = ["NAME", "MULTI", "sniff", "claims", "members", "scan_members", "load_member", "load"]
