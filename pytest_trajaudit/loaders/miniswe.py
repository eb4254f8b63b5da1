"""mini-swe-agent trajectories (``*.traj.json``).

Shapes:
- current: ``{"info": {"exit_status","submission","model_stats","config","mini_version"}, "messages": [...],
  "trajectory_format": "mini-swe-agent-1"}`` (v1) or ``"mini-swe-agent-1.1"`` (v2, whose messages carry
  ``extra`` — ``extra.actions`` on the assistant message, ``extra.returncode``/``raw_output`` on observations —
  and may use OpenAI tool calls answered by ``role: tool`` messages, or Responses-API items; the run ends
  with a ``role: exit`` message holding ``extra.exit_status``/``submission``);
- legacy: a bare list of ``{role, content}`` messages (the repository's own test data), recognised by
  its markers (``<returncode>`` observations, a ``mswea_bash_command``/``bash`` fence, the submit sentinel).

Each assistant message is THOUGHT prose plus exactly one fenced block (```bash, ```mswea_bash_command, ...):
the prose becomes an ``agent_thought`` and the block one ``execute`` call whose output is the next observation
(``<returncode>N</returncode><output>...</output>``, ``{"returncode": N, "output": ...}`` or
``Observation: ...``); returncode 0 → ok, non-zero → failed. An assistant message without exactly one
block (a format error, a final answer) is an ``agent_message``. The observation after a command that
printed the submit sentinel is the submission (v1 stores it instead of a returncode observation).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..model import AGENT, EXECUTE, OTHER, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed, loads_bounded
from ..scan import linre
from .common import clip, flatten_text, tool_event

NAME = "mini-swe-agent"
_SENTINELS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
_MARKERS = ("<returncode>", "```mswea_bash_command", *_SENTINELS)
_FENCE = linre.compile(r"```(?:bash|sh|shell|mswea_bash_command)?[ \t]*\n(.*?)\n?```", re.S)
_RETURNCODE = linre.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT_TAG = linre.compile(r"<output>\n?(.*?)\n?</output>", re.S)
_DICT_RC = linre.compile(r"['\"]returncode['\"]:\s*(-?\d+)")  # very old: Observation: {'output': .., 'returncode': 0}
_TIMEOUT = linre.compile(r"^The last command <command>.*?</command> timed out", re.S)
_INFO_KEYS = ("exit_status", "submission", "model_stats", "mini_version")


# --------------------------------------------------------------------------- sniff


def _has_markers(messages: list[Any]) -> bool:
    for m in messages[:50]:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            return False
        content = m.get("content")
        if isinstance(content, str) and any(k in content for k in _MARKERS):
            return True
    return False


def sniff(parsed: Parsed) -> bool:
    if parsed.kind != "json":
        return False
    v = parsed.value
    if isinstance(v, dict):
        fmt = v.get("trajectory_format")
        if isinstance(fmt, str) and fmt.startswith("mini-swe-agent"):
            return True
        info = v.get("info")
        return (
            isinstance(v.get("messages"), list)
            and isinstance(info, dict)
            and any(k in info for k in _INFO_KEYS)
            and "trajectory" not in v  # SWE-agent .traj has info + trajectory
        )
    if isinstance(v, list) and v:
        return _has_markers(v)
    return False


_HEAD_FORMAT = re.compile(rb'"trajectory_format"\s*:\s*"mini-swe-agent')
_HEAD_INFO = re.compile(rb'^\{\s*"info"\s*:\s*\{')
_HEAD_LIST = re.compile(rb'^\[\s*\{\s*"role"\s*:')


def claims(name: str, head: bytes) -> str | None:
    """At collection, from the first 4 KiB: a mini-swe-agent trajectory is a run of its own ("single"), wherever
    it lies (its batch layout ``<instance>/<instance>.traj.json`` has no Harbor parent). Recognised by content: a
    ``trajectory_format`` naming mini-swe-agent, an object that opens with ``info`` holding mini-swe-agent's run
    keys (``mini_version``, or ``exit_status`` and ``model_stats``), or a list of role messages carrying the
    markers of its prompt (the bash fence, ``<returncode>``, the submit sentinel). The name alone decides
    nothing."""
    if not name.endswith(".json"):
        return None
    body = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if _HEAD_FORMAT.search(body):
        return "single"
    if _HEAD_INFO.match(body) and (b'"mini_version"' in body or (b'"exit_status"' in body and b'"model_stats"' in body)):
        return "single"
    if _HEAD_LIST.match(body) and any(m.encode() in body for m in _MARKERS):
        return "single"
    return None


# --------------------------------------------------------------------------- helpers


def _text(content: Any) -> str:
    return flatten_text(content)


def _split_action(text: str) -> tuple[str, str | None]:
    """(prose, command) when the message holds exactly one fenced block, else (text, None)."""
    blocks = _FENCE.findall(text)
    if len(blocks) != 1:
        return text, None
    prose = _FENCE.sub("", text, count=1).strip()
    if prose.startswith("THOUGHT:"):
        prose = prose[len("THOUGHT:"):].strip()
    return prose, blocks[0].strip()


def _observation(content: str, extra: dict[str, Any]) -> tuple[str, str, int | None]:
    """Output text, status and return code of an observation message."""
    code: Any = extra.get("returncode")
    output = extra.get("raw_output") if isinstance(extra.get("raw_output"), str) else None
    if not isinstance(code, int) or isinstance(code, bool):
        code = None
        m = _RETURNCODE.search(content[:200])
        old = _DICT_RC.search(content) if content.startswith("Observation: {") else None
        if m:
            code = int(m.group(1))
        elif old:
            code = int(old.group(1))
        elif content.lstrip().startswith("{"):
            try:
                doc = loads_bounded(content)
            except orjson.JSONDecodeError:
                doc = None
            if isinstance(doc, dict) and isinstance(doc.get("returncode"), int):
                code = doc["returncode"]
                if output is None and isinstance(doc.get("output"), str):
                    output = doc["output"]
    if output is None:
        m = _OUTPUT_TAG.search(content)
        if m and _RETURNCODE.search(content[:200]) and content.count("<output>") == 1:
            output = m.group(1)
        elif content.startswith("Observation: "):
            output = content[len("Observation: "):]
        else:
            output = content
    if code is not None:
        status = "ok" if code == 0 else "failed"
    elif _TIMEOUT.match(content) or extra.get("exception_info"):
        status = "failed"
    else:
        status = "unknown"
    return output, status, code


def _actions_of(msg: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(command, tool_call_id) of every action the assistant message requested."""
    extra = got if isinstance(got := msg.get("extra"), dict) else {}
    acts = extra.get("actions")
    if isinstance(acts, list) and acts:
        out: list[tuple[Any, Any]] = []  # JSON values: the command checked to be a str, the id as recorded
        for a in acts:
            if isinstance(a, dict) and isinstance(a.get("command", a.get("action")), str):
                out.append((a.get("command", a.get("action")), a.get("tool_call_id")))
            elif isinstance(a, str):
                out.append((a, None))
        return out
    calls = msg.get("tool_calls")
    if isinstance(calls, list) and calls:
        out = []
        for c in calls:
            if not isinstance(c, dict):
                continue
            fn = got if isinstance(got := c.get("function"), dict) else c
            args = fn.get("arguments")
            if isinstance(args, str):
                try:
                    args = loads_bounded(args)
                except orjson.JSONDecodeError:
                    args = {"command": args}
            cmd = args.get("command") if isinstance(args, dict) else None
            out.append((cmd if isinstance(cmd, str) else "", c.get("id") or c.get("call_id")))
        return out
    return []


def _model_name(info: dict[str, Any], doc: dict[str, Any]) -> str:
    config = got if isinstance(got := info.get("config"), dict) else {}
    model = got if isinstance(got := config.get("model"), dict) else {}
    for val in (model.get("model_name"), info.get("model_name"), doc.get("model")):
        if isinstance(val, str) and val:
            return val
    return ""


# --------------------------------------------------------------------------- load


def load(parsed: Parsed, path: str) -> Trajectory:
    doc = parsed.value if isinstance(parsed.value, dict) else {}
    messages = parsed.value if isinstance(parsed.value, list) else doc.get("messages", [])
    if not isinstance(messages, list):
        messages = []
    info = got if isinstance(got := doc.get("info"), dict) else {}
    prefix = "messages" if doc else ""
    meta: dict[str, Any] = {"agent": "mini-swe-agent", "legacy": not doc}
    for key in ("exit_status", "submission", "mini_version"):
        if key in info:
            meta[key] = info[key]
    if isinstance(info.get("model_stats"), dict):
        meta["model_stats"] = info["model_stats"]
    model = _model_name(info, doc)
    if model:
        meta["model"] = model
    if isinstance(doc.get("trajectory_format"), str):
        meta["trajectory_format"] = doc["trajectory_format"]

    events: list[Event] = []
    pending: list[Event] = []  # execute calls awaiting their observation, in order
    by_call_id: dict[str, Event] = {}
    submit_pending: Event | None = None

    def add(ev: Event) -> Event:
        ev.index = len(events)
        events.append(ev)
        return ev

    def merge(ev: Event, content: str, extra: dict[str, Any]) -> None:
        nonlocal submit_pending
        output, status, code = _observation(content, extra)
        ev.output = clip(output)
        ev.status = status
        if code is None and ev is submit_pending:  # v1: the observation *is* the submission
            if not meta.get("submission"):
                meta["submission"] = output
            if not meta.get("exit_status"):
                meta["exit_status"] = "Submitted"
        submit_pending = None if ev is submit_pending else submit_pending

    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        raw = f"{prefix}[{i}]"
        role = msg.get("role") if isinstance(msg.get("role"), str) else ""
        mtype = msg.get("type") if isinstance(msg.get("type"), str) else ""
        extra = got if isinstance(got := msg.get("extra"), dict) else {}
        content = _text(msg.get("content"))
        call_ref = msg.get("call_id") if mtype else msg.get("tool_call_id")
        call_ref = call_ref if isinstance(call_ref, str) else ""
        if mtype == "function_call_output" or (role == "tool" and call_ref in by_call_id):
            ev = by_call_id.pop(call_ref, None)
            if ev is None and pending:
                ev = pending[0]
            if ev is not None:
                if ev in pending:
                    pending.remove(ev)
                merge(ev, flatten_text(msg.get("output")) if mtype else content, extra)
            continue
        if mtype == "function_call":  # Responses-API item: the call itself
            args = msg.get("arguments")
            ev = add(tool_event(0, str(msg.get("name") or "bash"), args, kind=EXECUTE, raw=raw))
            pending.append(ev)
            cid = msg.get("call_id") or msg.get("id")
            if isinstance(cid, str):
                by_call_id[cid] = ev
            continue
        if mtype == "reasoning":
            text = flatten_text(msg.get("summary")) or content
            if text:
                add(Event(index=0, type=THOUGHT, text=clip(text), raw=raw))
            continue
        if role == "assistant":
            actions = _actions_of(msg)
            prose, fenced = _split_action(content)
            if not actions and fenced is not None:
                actions = [(fenced, None)]
            reasoning = msg.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning.strip() and reasoning != "null":
                add(Event(index=0, type=THOUGHT, text=clip(reasoning), raw=raw))
            if not actions:
                if content:
                    add(Event(index=0, type=AGENT, text=clip(content), raw=raw))
                continue
            if prose:
                add(Event(index=0, type=THOUGHT, text=clip(prose), raw=raw))
            for n, (cmd, call_id) in enumerate(actions):
                ev = add(tool_event(0, "bash", {"command": cmd}, kind=EXECUTE,
                                    raw=raw if len(actions) == 1 else f"{raw}.actions[{n}]"))
                pending.append(ev)
                if isinstance(call_id, str):
                    by_call_id[call_id] = ev
                if any(s in cmd for s in _SENTINELS):
                    submit_pending = ev
            continue
        if role == "exit":
            for key in ("exit_status", "submission"):
                if extra.get(key) not in (None, "") and not meta.get(key):
                    meta[key] = extra[key]
            add(Event(index=0, type=OTHER, text=clip(f"exit: {content}"), raw=raw))
            continue
        if role in ("user", "tool") and pending and i >= 2:
            ev = pending.pop(0)
            by_call_id = {k: v for k, v in by_call_id.items() if v is not ev}
            merge(ev, content, extra)
            continue
        etype = USER if role in ("user", "human") else OTHER  # system prompt: harness instructions
        if content:
            add(Event(index=0, type=etype, text=clip(content), raw=raw))
    return Trajectory(format=NAME, source=path, events=events, meta=meta)


__all__ = ["NAME", "sniff", "load"]
