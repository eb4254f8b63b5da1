"""Generic chat transcripts, the last JSON fallback before plain text.

Accepted (``format``):
- ``chat-messages``: a JSON list of ``{role, content}`` messages, or ``{"messages": [...]}``. Tool calls in
  every common dialect: OpenAI ``tool_calls [{id, function:{name, arguments}}]`` answered by ``role: tool``
  messages (``tool_call_id``), the legacy ``function_call``/``role: function`` pair, Anthropic content blocks
  (``tool_use`` in the assistant turn, ``tool_result`` in the next user turn), Gemini ``parts``
  (``functionCall``/``functionResponse``) and Responses-API items (``function_call``/``function_call_output``).
  ``user`` → user_message, ``assistant``/``model`` → agent_message, ``system``/``developer`` → other
  (harness instructions, not the user's words), thinking blocks and ``reasoning_content`` → agent_thought.
- ``terminus-episodes``: Harbor's Terminus dump, a JSON list of ``{episode, prompt, response}``. The prompt
  (instructions or the terminal screen) is a user_message, the response an agent_message; the response is
  Terminus JSON (possibly after some prose) whose ``commands[].keystrokes`` each become one execute call
  with unknown status (the screen that follows is in the next prompt), or the XML variant
  (``<keystrokes>``); ``{"load_skill": name}`` becomes a skill call.

The sniff is conservative: every one of the first 50 items must be a message dict (or every one an episode
dict); lists of anything else belong to another loader or none.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

import orjson

from ..model import AGENT, EXECUTE, OTHER, SKILL, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed, loads_bounded
from ..scan import linre
from .common import clip, flatten_text, tool_event

NAME = "chat"
CHAT = "chat-messages"
TERMINUS = "terminus-episodes"

_ROLES = {"system", "developer", "user", "assistant", "tool", "function", "model", "human", "ai", "ipython"}
_ASSISTANT = {"assistant", "model", "ai", "bot"}
_USER = {"user", "human"}
_TOOL_ROLES = {"tool", "function", "ipython"}
_ITEM_TYPES = {"function_call", "function_call_output", "reasoning", "message"}
_EXIT = linre.compile(r"^(?:Exit code|exit code|Exit status|exit status)[: ]+(-?\d+)\b|<returncode>\s*(-?\d+)\s*</returncode>", re.M)
_KEYSTROKES_XML = linre.compile(r"<keystrokes\b[^>]*>(.*?)</keystrokes>", re.S)
_DECODER = json.JSONDecoder()


# --------------------------------------------------------------------------- sniff


def _is_message(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    if isinstance(m.get("role"), str):
        return True
    return isinstance(m.get("type"), str) and m["type"] in _ITEM_TYPES and ("call_id" in m or "summary" in m)


def _is_chat_list(items: Any) -> bool:
    if not isinstance(items, list) or not items:
        return False
    head = items[:50]
    if not all(_is_message(m) for m in head):
        return False
    return any(isinstance(m.get("role"), str) and m["role"].lower() in _ROLES for m in head)


def _is_episode(m: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(m, dict) and isinstance(m.get("prompt"), str) and isinstance(m.get("response"), str)


def _is_episode_list(items: Any) -> bool:
    return isinstance(items, list) and bool(items) and all(_is_episode(m) for m in items[:50])


def sniff(parsed: Parsed) -> bool:
    if parsed.kind != "json":
        return False
    v = parsed.value
    if isinstance(v, list):
        return _is_episode_list(v) or _is_chat_list(v)
    if isinstance(v, dict):
        fmt = v.get("trajectory_format")
        if isinstance(fmt, str) and fmt.startswith("mini-swe-agent"):
            return False
        return _is_chat_list(v.get("messages"))
    return False


# --------------------------------------------------------------------------- chat messages


def _status_of_output(text: str, is_error: Any = None) -> str:
    """A tool result's status: the error flag when set, else the exit code the output reports, else "ok" when
    the result carries content (the tool answered the call; an error text in it is judged by the principles,
    e.g. "No such file or directory"), else "unknown" (an empty answer says nothing about the outcome)."""
    if is_error is True:
        return "failed"
    m = _EXIT.search(text[:300])
    if m:
        return "ok" if int(m.group(1) or m.group(2)) == 0 else "failed"
    if is_error is False or text.strip():
        return "ok"
    return "unknown"


class _Chat:
    def __init__(self, prefix: str):
        self.prefix = prefix
        self.events: list[Event] = []
        self.by_id: dict[str, Event] = {}
        self.by_name: dict[str, list[Event]] = {}
        self.unanswered: list[Event] = []

    def add(self, ev: Event) -> Event:
        ev.index = len(self.events)
        self.events.append(ev)
        return ev

    def text(self, etype: str, text: str, raw: str) -> None:
        if text and text.strip():
            self.add(Event(index=0, type=etype, text=clip(text), raw=raw))

    def call(self, name: str, args: Any, call_id: Any, raw: str) -> None:
        ev = self.add(tool_event(0, name, args, raw=raw))
        if isinstance(call_id, str) and call_id:
            self.by_id[call_id] = ev
        self.by_name.setdefault(name, []).append(ev)
        self.unanswered.append(ev)

    def result(self, call_id: Any, name: Any, output: Any, is_error: Any = None) -> bool:
        ev = self.by_id.pop(call_id, None) if isinstance(call_id, str) else None
        if ev is None and isinstance(name, str) and self.by_name.get(name):
            cands = [e for e in self.by_name[name] if e in self.unanswered]
            ev = cands[0] if cands else None
        if ev is None and call_id is None and len(self.unanswered) == 1:
            ev = self.unanswered[0]
        if ev is None:
            return False
        if ev in self.unanswered:
            self.unanswered.remove(ev)
        text = output if isinstance(output, str) else flatten_text(output)
        if not text and isinstance(output, dict | list):
            text = json.dumps(output, ensure_ascii=False, default=str)
        ev.output = clip(text)
        ev.status = _status_of_output(text, is_error)
        return True


def _assistant(c: _Chat, msg: dict[str, Any], raw: str) -> None:
    for key in ("reasoning_content", "reasoning", "thinking"):
        val = msg.get(key)
        if isinstance(val, str) and val.strip() and val != "null":
            c.text(THOUGHT, val, raw)
            break
    content = msg.get("content", msg.get("parts"))
    if isinstance(content, list):
        buf: list[str] = []
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                if isinstance(block, str):
                    buf.append(block)
                continue
            bt = block.get("type")
            if bt in ("thinking", "reasoning", "redacted_thinking"):
                c.text(THOUGHT, flatten_text(block.get("thinking", block.get("text", ""))), f"{raw}.content[{j}]")
            elif bt == "tool_use" or "functionCall" in block:
                c.text(AGENT, "\n".join(buf), raw)
                buf = []
                if bt == "tool_use":
                    c.call(str(block.get("name") or ""), block.get("input"), block.get("id"), f"{raw}.content[{j}]")
                else:
                    fc = block["functionCall"] if isinstance(block["functionCall"], dict) else {}
                    c.call(str(fc.get("name") or ""), fc.get("args"), fc.get("id"), f"{raw}.parts[{j}]")
            else:
                t = flatten_text(block)
                if t:
                    buf.append(t)
        c.text(AGENT, "\n".join(buf), raw)
    else:
        c.text(AGENT, flatten_text(content), raw)
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        for j, tc in enumerate(calls):
            if not isinstance(tc, dict):
                continue
            fn = got if isinstance(got := tc.get("function"), dict) else tc
            c.call(str(fn.get("name") or ""), fn.get("arguments", fn.get("input")), tc.get("id"),
                   f"{raw}.tool_calls[{j}]")
    legacy = msg.get("function_call")
    if isinstance(legacy, dict):
        c.call(str(legacy.get("name") or ""), legacy.get("arguments"), None, f"{raw}.function_call")


def _user(c: _Chat, msg: dict[str, Any], raw: str) -> None:
    content = msg.get("content", msg.get("parts"))
    if not isinstance(content, list):
        c.text(USER, flatten_text(content), raw)
        return
    buf: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            c.result(block.get("tool_use_id"), None, block.get("content"), block.get("is_error"))
        elif isinstance(block, dict) and isinstance(block.get("functionResponse"), dict):
            fr = block["functionResponse"]
            c.result(fr.get("id"), fr.get("name"), fr.get("response"))
        else:
            t = flatten_text(block)
            if t:
                buf.append(t)
    c.text(USER, "\n".join(buf), raw)


def _load_chat(messages: list[Any], prefix: str) -> list[Event]:
    c = _Chat(prefix)
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        raw = f"{prefix}[{i}]"
        mtype = msg.get("type")
        role = got.lower() if isinstance(got := msg.get("role"), str) else ""
        if not role and mtype == "function_call":
            c.call(str(msg.get("name") or ""), msg.get("arguments"), msg.get("call_id") or msg.get("id"), raw)
        elif not role and mtype == "function_call_output":
            c.result(msg.get("call_id"), None, msg.get("output"))
        elif not role and mtype == "reasoning":
            c.text(THOUGHT, flatten_text(msg.get("summary")) or flatten_text(msg.get("content")), raw)
        elif role in _ASSISTANT:
            _assistant(c, msg, raw)
        elif role in _TOOL_ROLES:
            answered = c.result(msg.get("tool_call_id"), msg.get("name"), msg.get("content"), msg.get("is_error"))
            if not answered:
                c.text(OTHER, flatten_text(msg.get("content")), raw)
        elif role in _USER:
            _user(c, msg, raw)
        else:  # system / developer / anything else: harness text, kept for scans
            c.text(OTHER, flatten_text(msg.get("content")), raw)
    return c.events


# --------------------------------------------------------------------------- terminus episodes


def _terminus_json(text: str) -> dict[str, Any] | None:
    """The Terminus JSON object in a response, also when prose or a code fence surrounds it."""
    s = text.strip()
    if s.startswith("{"):
        try:
            val = loads_bounded(s)
            if isinstance(val, dict):
                return val
        except orjson.JSONDecodeError:
            pass
    start = 0
    for _ in range(20):
        pos = text.find("{", start)
        if pos < 0:
            return None
        try:
            val, _end = _DECODER.raw_decode(text, pos)
        except ValueError:
            start = pos + 1
            continue
        if isinstance(val, dict) and ("commands" in val or "load_skill" in val or "analysis" in val):
            return val
        start = pos + 1
    return None


def _load_terminus(items: list[Any]) -> tuple[list[Event], dict[str, Any]]:
    events: list[Event] = []
    meta: dict[str, Any] = {"agent": "terminus"}

    def add(ev: Event) -> Event:
        ev.index = len(events)
        events.append(ev)
        return ev

    for i, ep in enumerate(items):
        if not _is_episode(ep):
            continue
        raw = f"[{i}]"
        if ep["prompt"].strip():
            add(Event(index=0, type=USER, text=clip(ep["prompt"]), raw=f"{raw}.prompt"))
        response = ep["response"]
        if response.strip():
            add(Event(index=0, type=AGENT, text=clip(response), raw=f"{raw}.response"))
        obj = _terminus_json(response)
        commands: list[tuple[str, Any, str]] = []
        if obj is not None:
            for n, cmd in enumerate(obj.get("commands") or []):
                if isinstance(cmd, dict) and isinstance(cmd.get("keystrokes"), str):
                    commands.append((cmd["keystrokes"], cmd, f"{raw}.response.commands[{n}]"))
            skill = obj.get("load_skill")
            if isinstance(skill, str) and skill:
                nxt = items[i + 1] if i + 1 < len(items) else None
                loaded = _is_episode(nxt) and nxt["prompt"].lstrip().startswith("Loaded skill")
                add(tool_event(0, "load_skill", {"name": skill}, kind=SKILL, title=f"load_skill {skill}",
                               status="ok" if loaded else "unknown", raw=f"{raw}.response.load_skill"))
            for key in ("task_complete", "is_task_complete"):
                if isinstance(obj.get(key), bool):
                    meta["task_complete"] = obj[key]
        else:
            for n, ks in enumerate(_KEYSTROKES_XML.findall(response)):
                commands.append((ks, {"keystrokes": ks}, f"{raw}.response.keystrokes[{n}]"))
        for ks, args, craw in commands:
            ev = add(tool_event(0, "terminal", args, kind=EXECUTE, title="keystrokes", raw=craw))
            ev.command = ks[:-1] if ks.endswith("\n") else ks
    return events, meta


# --------------------------------------------------------------------------- entry point


def load(parsed: Parsed, path: str) -> Trajectory:
    v = parsed.value
    if _is_episode_list(v):
        events, meta = _load_terminus(v)
        return Trajectory(format=TERMINUS, source=path, events=events, meta=meta)
    if isinstance(v, dict):
        events = _load_chat(v.get("messages") or [], "messages")
        meta = {k: v[k] for k in ("model", "agent", "session_id", "cwd") if isinstance(v.get(k), str)}
    else:
        events = _load_chat(v if isinstance(v, list) else [], "")
        meta = {}
    return Trajectory(format=CHAT, source=path, events=events, meta=meta)


__all__ = ["NAME", "sniff", "load"]
