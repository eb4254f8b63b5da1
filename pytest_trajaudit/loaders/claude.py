"""Claude Code transcripts: ``--output-format stream-json`` and native session files.

Two line-oriented shapes, told apart by their keys:

- **stream-json** (Harbor's ``agent/claude-code.txt``): ``{"type":"system","subtype":"init",cwd,model,skills,...}``,
  ``{"type":"assistant"|"user","message":{...},"parent_tool_use_id","session_id"}`` and a final
  ``{"type":"result",result,is_error,usage,total_cost_usd}`` that is missing when the agent was killed. Subagent
  work is interleaved, marked by a non-null ``parent_tool_use_id``. Progress lines (``system`` ``task_*``,
  ``thinking_tokens``) carry no agent content and are skipped.
- **session transcript** (``~/.claude/projects/<dir>/<uuid>.jsonl``, Harbor ``agent/sessions/projects/-app/``):
  ``user``/``assistant`` lines with camelCase ``sessionId``, ``uuid``/``parentUuid``, ``isSidechain``,
  ``toolUseResult``; plus ``summary``, ``system``, ``file-history-snapshot``, ``queue-operation``, ``attachment``,
  ``last-prompt`` and ``progress`` lines. Older versions stream a subagent's messages into the main file as
  ``progress`` lines with ``data.type == "agent_progress"``; those become sidechain events.

In both, one API message is split over several lines that share ``message.id`` (one content block per line, with
tool results arriving between the lines of parallel calls). Lines are merged per ``message.id`` at the position of
the message's first line, keeping block order; adjacent text (or thinking) blocks of one message become one event.
Each ``tool_use`` becomes one tool event whose output and status come from the ``tool_result`` with the same id
(``is_error`` → failed, any other result → ok, none → unknown).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..model import AGENT, OTHER, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed
from .common import OUTPUT_CLIP, clip, clip_ends, flatten_text, tool_event

NAME = "claude-code"
STREAMS = True  # load() reads Parsed.records() one line at a time (loaders/job.py streams large files)
STREAM_JSON = "claude-stream-json"
SESSION = "claude-session"
FORMATS = (STREAM_JSON, SESSION)

_SNIFF_LINES = 50
# Line types only the native session transcript writes.
_SESSION_TYPES = {"summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "last-prompt",
                  "custom-title", "tag"}
_SESSION_KEYS = ("sessionId", "isSidechain", "parentUuid", "userType")
_STREAM_KEYS = ("session_id", "parent_tool_use_id")
_TOOL_USE_TYPES = ("tool_use", "server_tool_use")
_TOOL_RESULT_TYPES = ("tool_result", "web_search_tool_result", "web_fetch_tool_result", "server_tool_result")
# camelCase path keys some harnesses use; common.paths_from_args only knows snake_case ones.
_EXTRA_PATH_KEYS = ("filePath", "filepath", "notebookPath", "absolutePath", "dirPath")
_EXTRA_PATH_SET = frozenset(_EXTRA_PATH_KEYS)


def _values(parsed: Parsed) -> tuple[list[Any], list[int]]:
    """JSONL values with their line numbers; a one-line file parses as one JSON object."""
    if parsed.kind == "jsonl":
        return parsed.value, list(parsed.lines or range(1, len(parsed.value) + 1))
    if parsed.kind == "json" and isinstance(parsed.value, dict):
        return [parsed.value], [1]
    return [], []


def _is_message_line(v: dict[str, Any]) -> bool:
    msg = v.get("message")
    return v.get("type") in ("user", "assistant") and isinstance(msg, dict) and ("content" in msg or "role" in msg)


def _flavour(values: list[Any]) -> str | None:
    """'claude-stream-json', 'claude-session' or None, from the first lines' shape."""
    session = stream = content = 0
    for v in values[:_SNIFF_LINES]:
        if not isinstance(v, dict):
            continue
        t = v.get("type")
        if _is_message_line(v):
            content += 1
            if any(k in v for k in _SESSION_KEYS):
                session += 1
            elif any(k in v for k in _STREAM_KEYS):
                stream += 1
        elif t == "system" and v.get("subtype") == "init" and ("tools" in v or "model" in v) and "session_id" in v:
            content += 1
            stream += 1
        elif t == "result" and "session_id" in v and ("result" in v or "is_error" in v):
            stream += 1
        elif (t in _SESSION_TYPES or t == "system") and any(k in v for k in ("sessionId", "snapshot", "leafUuid")):
            session += 1
    if not content:
        return SESSION if session and not stream and _has_session_content(values) else None
    if session and session >= stream:
        return SESSION
    if stream:
        return STREAM_JSON
    return None


def _has_session_content(values: list[Any]) -> bool:
    # A session whose first 50 lines are all hook progress / snapshots: look a bit further for a message line.
    return any(isinstance(v, dict) and _is_message_line(v) for v in values[: _SNIFF_LINES * 20])


def sniff(parsed: Parsed) -> bool:
    values, _ = _values(parsed)
    return bool(values) and _flavour(values) is not None


@dataclass(slots=True)
class _Msg:
    """One merged assistant message (or one user text line) in first-appearance order."""

    role: str  # "assistant" | "user" | "other"
    sidechain: bool
    lineno: int
    blocks: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    text: str = ""


@dataclass(slots=True)
class _Result:
    content: str | _Long  # the result's text (flattened); a long one kept by its two ends only
    is_error: bool
    lineno: int


@dataclass(slots=True)
class _Long:
    """A tool result longer than an event keeps (OUTPUT_CLIP): what ``clip`` keeps of it, and its length. The
    reader holds every result until the end of the file, so a large trajectory must not keep them whole."""

    head: str
    tail: str
    n: int

    @classmethod
    def of(cls, text: str) -> str | _Long:
        half = OUTPUT_CLIP // 2
        return text if len(text) <= OUTPUT_CLIP else cls(text[:half], text[-half:], len(text))

    def clipped(self, prefix: str = "") -> str:
        """``clip(prefix + text)``, exactly (without a prefix, the head is already the half that clip keeps)."""
        if not prefix:
            return clip_ends(self.head, self.n, self.tail)
        return clip_ends((prefix + self.head)[:OUTPUT_CLIP // 2], len(prefix) + self.n, self.tail)


def _block_key(block: dict[str, Any]) -> tuple[str, str]:
    """What makes a block the same block again: a tool call's id, else its type and text (a tuple: the text is
    hashed once, never copied into a key)."""
    t = block.get("type")
    if t in _TOOL_USE_TYPES and block.get("id"):
        x = block["id"]
        return ("tool", x if type(x) is str else str(x))
    x = block.get("text") or block.get("thinking") or ""
    return (t if type(t) is str else str(t), x if type(x) is str else str(x))


class _Reader:
    def __init__(self) -> None:
        self.units: list[_Msg] = []
        self.by_id: dict[str, _Msg] = {}
        self.results: dict[str, _Result] = {}
        self.result_order: list[str] = []
        self.models: list[str] = []
        self.used: set[str] = set()
        self.uses: dict[str, int] = {}  # tool_use id → blocks still to turn into events (then its result is dropped)

    def assistant(self, message: dict[str, Any], lineno: int, sidechain: bool) -> None:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        model = message.get("model")
        if isinstance(model, str) and model and model != "<synthetic>" and not sidechain:
            self.models.append(model)
        mid = message.get("id")
        unit = self.by_id.get(mid) if isinstance(mid, str) and mid else None
        if unit is None:
            unit = _Msg("assistant", sidechain, lineno)
            self.units.append(unit)
            if isinstance(mid, str) and mid:
                self.by_id[mid] = unit
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") in _TOOL_RESULT_TYPES:  # server tool results live in the assistant message
                self._result(block, lineno)
                continue
            key = _block_key(block)
            if key in unit.seen:  # the same block repeated on a later line of this message
                continue
            unit.seen.add(key)
            unit.blocks.append((block, lineno))
            if block.get("type") in _TOOL_USE_TYPES and isinstance(block.get("id"), str):
                self.uses[block["id"]] = self.uses.get(block["id"], 0) + 1

    def user(self, message: dict[str, Any], lineno: int, sidechain: bool, meta_line: bool = False) -> None:
        content = message.get("content")
        texts: list[str] = []
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, str):
                    texts.append(block)
                elif isinstance(block, dict):
                    if block.get("type") in _TOOL_RESULT_TYPES:
                        self._result(block, lineno)
                    elif block.get("type") == "text":
                        texts.append(str(block.get("text") or ""))
                    elif block.get("type") == "image":
                        texts.append("[image]")
        text = "\n".join(t for t in texts if t and not t.isspace())  # (strip() would copy each text)
        if text:
            unit = _Msg("other" if meta_line else "user", sidechain, lineno, text=text)
            self.units.append(unit)

    def _result(self, block: dict[str, Any], lineno: int) -> None:
        tid = block.get("tool_use_id")
        if not isinstance(tid, str) or not tid:
            return
        is_error = block.get("is_error") is True
        content = block.get("content")
        if isinstance(content, dict) and block.get("type") != "tool_result":
            is_error = is_error or str(content.get("type", "")).endswith("_error")
        if tid in self.results:  # a repeated result: keep the first, but an error flag sticks
            self.results[tid].is_error = self.results[tid].is_error or is_error
            return
        text = content if isinstance(content, str) else flatten_text(content)
        self.results[tid] = _Result(_Long.of(text), is_error, lineno)
        self.result_order.append(tid)

    def events(self) -> list[Event]:
        events: list[Event] = []
        for unit in self.units:
            if unit.role in ("user", "other"):
                etype = USER if unit.role == "user" else OTHER
                events.append(Event(index=len(events), type=etype, text=clip(unit.text), raw=f"line {unit.lineno}",
                                    sidechain=unit.sidechain))
            else:
                self._assistant_events(unit, events)
        return events

    def _assistant_events(self, unit: _Msg, events: list[Event]) -> None:
        # adjacent text (or thinking) blocks of one message → one event: (type, texts, first line)
        pending: tuple[str, list[str], int] | None = None
        for block, lineno in [*unit.blocks, ({"type": "_end"}, 0)]:
            btype = block.get("type")
            if btype in ("text", "thinking"):
                text = str((block.get("text") if btype == "text" else block.get("thinking")) or "")
                if not text or text.isspace():
                    continue
                etype = AGENT if btype == "text" else THOUGHT
                if pending is not None and pending[0] == etype:
                    pending[1].append(text)
                    continue
            if pending is not None:  # any other block ends the run of text
                events.append(Event(index=len(events), type=pending[0], text=clip("\n".join(pending[1])),
                                    raw=f"line {pending[2]}", sidechain=unit.sidechain))
                pending = None
            if btype in ("text", "thinking"):
                pending = (etype, [text], lineno)
            elif btype in _TOOL_USE_TYPES:
                events.append(self._tool(block, lineno, unit.sidechain, len(events)))
            # redacted_thinking and unknown block types carry nothing auditable

    def _tool(self, block: dict[str, Any], lineno: int, sidechain: bool, index: int) -> Event:
        tid = t if isinstance(t := block.get("id"), str) else ""
        res = self.results.get(tid) if tid else None
        if res is not None:
            self.used.add(tid)
        args = block.get("input")
        ev = tool_event(
            index, str(block.get("name") or ""), args,
            output=(res.content if isinstance(res.content, str) else res.content.clipped()) if res is not None else "",
            clipped=res is not None and not isinstance(res.content, str),
            status=("failed" if res.is_error else "ok") if res is not None else "unknown",
            raw=f"line {lineno}" + (f" (result: line {res.lineno})" if res is not None else ""),
            sidechain=sidechain,
        )
        _add_camel_paths(ev, args)
        if res is not None:
            self.uses[tid] = left = self.uses.get(tid, 1) - 1
            if left <= 0:
                res.content = ""  # its last call has it now: do not hold the text twice while events are built
        return ev

    def orphan_results(self, events: list[Event]) -> int:
        """Results whose tool_use is not in the file (e.g. a transcript that starts mid-turn)."""
        n = 0
        for tid in self.result_order:
            if tid in self.used:
                continue
            res = self.results[tid]
            n += 1
            head = f"tool result for unknown call {tid}: "
            text = clip(head + res.content) if isinstance(res.content, str) else res.content.clipped(head)
            events.append(Event(index=len(events), type=OTHER, text=text,
                                raw=f"line {res.lineno}", status="failed" if res.is_error else "ok"))
        return n


def _add_camel_paths(ev: Event, args: Any) -> None:
    if not isinstance(args, dict) or _EXTRA_PATH_SET.isdisjoint(args):
        return
    extra = [v for k in _EXTRA_PATH_KEYS if isinstance(v := args.get(k), str) and v and len(v) < 4096]
    if extra:
        ev.paths = tuple(dict.fromkeys([*ev.paths, *extra]))


def _load_stream(pairs: Iterable[tuple[Any, int]]) -> tuple[_Reader, dict[str, Any]]:
    r = _Reader()
    meta: dict[str, Any] = {"agent": "claude-code"}
    result_line: tuple[dict[str, Any], int] | None = None
    for v, lineno in pairs:
        if not isinstance(v, dict):
            continue
        t = v.get("type")
        sidechain = v.get("parent_tool_use_id") not in (None, "")
        if t == "system":
            if v.get("subtype") == "init":
                for src, dst in (("model", "model"), ("cwd", "cwd"), ("session_id", "session_id"),
                                 ("claude_code_version", "agent_version"), ("permissionMode", "permission_mode")):
                    if v.get(src) not in (None, "") and dst not in meta:
                        meta[dst] = v[src]
                for key in ("skills", "tools", "agents"):
                    if isinstance(v.get(key), list):
                        meta[key] = [x if isinstance(x, str) else str(x) for x in v[key]]
            elif v.get("subtype") == "compact_boundary":
                meta["compacted"] = True
        elif t == "assistant" and isinstance(v.get("message"), dict):
            r.assistant(v["message"], lineno, sidechain)
        elif t == "user" and isinstance(v.get("message"), dict):
            r.user(v["message"], lineno, sidechain)
        elif t == "result":
            result_line = (v, lineno)
        if "session_id" not in meta and isinstance(v.get("session_id"), str):
            meta["session_id"] = v["session_id"]
    if "model" not in meta and r.models:
        meta["model"] = r.models[0]
    meta["complete"] = result_line is not None
    if result_line is not None:
        res, lineno = result_line
        meta["final_result_line"] = lineno
        if isinstance(res.get("result"), str):
            meta["final_result"] = res["result"]
        meta["is_error"] = bool(res.get("is_error"))
        for src, dst in (("subtype", "result_subtype"), ("num_turns", "num_turns"), ("total_cost_usd", "total_cost_usd"),
                         ("duration_ms", "duration_ms"), ("usage", "usage"), ("stop_reason", "stop_reason"),
                         ("terminal_reason", "terminal_reason")):
            if res.get(src) is not None:
                meta[dst] = res[src]
        if isinstance(res.get("permission_denials"), list):
            meta["permission_denials"] = len(res["permission_denials"])
    return r, meta


def _load_session(pairs: Iterable[tuple[Any, int]]) -> tuple[_Reader, dict[str, Any]]:
    r = _Reader()
    meta: dict[str, Any] = {"agent": "claude-code"}
    summaries: list[str] = []
    n_main = n_side = 0
    for v, lineno in pairs:
        if not isinstance(v, dict):
            continue
        t = v.get("type")
        for src, dst in (("sessionId", "session_id"), ("cwd", "cwd"), ("version", "agent_version"),
                         ("gitBranch", "git_branch"), ("agentId", "agent_id")):
            if dst not in meta and isinstance(v.get(src), str) and v[src]:
                meta[dst] = v[src]
        sidechain = v.get("isSidechain") is True
        if t in ("assistant", "user") and isinstance(v.get("message"), dict):
            if sidechain:
                n_side += 1
            else:
                n_main += 1
            if t == "assistant":
                r.assistant(v["message"], lineno, sidechain)
            else:
                meta_line = v.get("isMeta") is True or v.get("isCompactSummary") is True
                r.user(v["message"], lineno, sidechain, meta_line=meta_line)
        elif t == "progress" and isinstance(v.get("data"), dict) and v["data"].get("type") == "agent_progress":
            inner = v["data"].get("message")
            if isinstance(inner, dict) and isinstance(inner.get("message"), dict):
                if inner.get("type") == "assistant":
                    r.assistant(inner["message"], lineno, True)
                elif inner.get("type") == "user":
                    r.user(inner["message"], lineno, True)
        elif t == "summary" and isinstance(v.get("summary"), str):
            summaries.append(v["summary"])
        elif t == "system" and v.get("subtype") == "compact_boundary":
            meta["compacted"] = True
    if r.models:
        meta["model"] = r.models[0]
    if summaries:
        meta["summaries"] = summaries
    if n_side and not n_main:
        meta["sidechain_only"] = True  # a subagent transcript (agent-*.jsonl)
    return r, meta


def load(parsed: Parsed, path: str) -> Trajectory:
    flavour = _flavour(_values(parsed)[0]) or STREAM_JSON  # a streamed file: its head, enough for the flavour
    pairs = parsed.records() if parsed.stream is not None else zip(*_values(parsed), strict=False)
    reader, meta = (_load_session if flavour == SESSION else _load_stream)(pairs)
    events = reader.events()
    orphans = reader.orphan_results(events)
    if orphans:
        meta["orphan_tool_results"] = orphans
    final = meta.get("final_result")
    if flavour == STREAM_JSON and isinstance(final, str) and final.strip():
        needle = final.strip()
        if not any(e.type == AGENT and not e.sidechain and needle in e.text for e in events):
            events.append(Event(index=len(events), type=AGENT, text=clip(final),
                                raw=f"line {meta.get('final_result_line', 0)}"))
    meta.pop("final_result_line", None)
    return Trajectory(format=flavour, source=path, events=events, meta=meta)


__all__ = ["NAME", "FORMATS", "sniff", "load"]
