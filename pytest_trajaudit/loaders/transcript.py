"""Markdown / plain-text transcript exports: a run written out as role sections.

Exports of Claude Code, Inspect and chat-harness sessions and benchmark write-ups share one shape: a heading per
turn, the turn's text below it (often wrapped whole in a fence of four backticks, so the code blocks inside it
survive). Recognised headings (any ATX level ``#``…``######``, any case), only outside fenced code blocks:

- ``USER``, ``HUMAN``, ``USER / HARNESS``, ``HARNESS`` → user_message; ``SYSTEM``, ``SYSTEM PROMPT`` → other;
- ``ASSISTANT``, ``AGENT``, ``MODEL``, ``AI`` (``(Turn 3)`` and similar suffixes allowed) → agent_message;
  ``THINKING``, ``REASONING`` → agent_thought;
- ``TOOL CALL: <Name>`` (also ``Tool call · <Name>``, ``Tool use: <Name>``, a ``(succeeded)``/``(failed)``
  suffix, and a bold line ``**Tool Call: `<Name>`**`` inside a turn) followed by the call's JSON input (a fenced
  block, a bare object, or ``Args: {...}``) → one tool call; its kind comes from the name and the arguments
  (``common.infer_kind``: ``Bash``/``Read``/``Write``/``Edit``…, a ``command``/``cmd`` → execute, a path with
  content → edit, a path alone → read);
- ``TOOL RESULT`` (``Tool output``, ``Tool response``, ``Observation``) → the output of the oldest call still
  without one (exports list several calls, then their results, in order): one tool call is one event with its
  result merged in; a result with no call before it is kept as an ``other`` event;
- ``SCORER`` (``SCORE``, ``SCORES``, ``GRADER``, ``VERIFIER``) → an ``other`` event; its ``value: <v>`` line is the
  run's reward where the value has one meaning (``common.score_value``: ``C``/``I``, pass/fail, a number), else
  the reward is unknown and ``meta["reward_note"]`` says why; the scored answer is kept in ``meta["scorer"]``;
- ``FINAL <file>`` → an ``other`` event naming the file; its content is kept in ``meta["final_files"][file]``.

Text before the first role heading is the export's preamble: the first fenced JSON object there lends ``model``,
``harness`` (→ agent) and ``task_id`` (→ task); nothing else in it is read (hand labels are not evidence).

Chat harnesses take the agent's answer from its message (the harness runs the fenced code against the tests): a
transcript without any tool call is one (``meta["harness"] = "chat"``, else ``"tools"``), and the fenced code
blocks of each of its agent messages are its submissions, in :attr:`Event.code` (the message text keeps them too).
Lines such as ``>>> f(1)`` or ``$ make`` are never tool calls here: in a transcript they are doctests, examples
and quoted output, and the agent's actions are its tool-call sections.

Sniff (content only, never the file name): outside fenced blocks, at least two role headings of different roles,
one of them the agent's (assistant, thinking, tool call or tool result), and role headings are at least half of
the headings at their levels. A README's ``## Usage`` / ``## Installation`` sections are prose, not a transcript.
At collection, a loose ``.md``/``.markdown``/``.txt`` file is a job when its first :data:`HEAD_BYTES` pass the
same test (:func:`claims`).
"""

from __future__ import annotations

import json
import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..model import AGENT, OTHER, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed
from ..scan import linre
from .common import clip, code_blocks, mark_submissions, score_value, tool_event

NAME = "markdown-transcript"
HEAD_BYTES = 8192  # what collection reads of a loose .md/.txt file to recognise a transcript
TEXT_SUFFIXES = (".md", ".markdown", ".txt")
SNIFF_CHARS = 256 * 1024  # a transcript shows its role headings early; the sniff never scans a whole large file

# role names
_USER, _SYSTEM, _AGENT, _THOUGHT, _CALL, _RESULT, _SCORER, _FINAL = (
    "user", "system", "assistant", "thinking", "tool_call", "tool_result", "scorer", "final")
_AGENT_SIDE = {_AGENT, _THOUGHT, _CALL, _RESULT}

_FENCE = linre.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = linre.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_BOLD_CALL = linre.compile(r"^\s*\*\*\s*(?:tool[ _-]?(?:call|use)|function[ _-]call)\s*[:·-]\s*`?([\w.\-/]+)`?\s*\*\*\s*$", re.I)
_ROLE_WORDS = {
    "user": _USER, "human": _USER, "user / harness": _USER, "user/harness": _USER, "harness": _USER,
    "user (harness)": _USER, "system": _SYSTEM, "system prompt": _SYSTEM,
    "assistant": _AGENT, "agent": _AGENT, "model": _AGENT, "ai": _AGENT,
    "thinking": _THOUGHT, "reasoning": _THOUGHT, "thought": _THOUGHT,
    "tool result": _RESULT, "tool output": _RESULT, "tool response": _RESULT, "observation": _RESULT,
    "tool call": _CALL, "tool use": _CALL, "function call": _CALL,
    "scorer": _SCORER, "score": _SCORER, "scores": _SCORER, "grader": _SCORER, "verifier": _SCORER,
}
_SUFFIX = linre.compile(r"\s*\((?:turn|step|iteration|message)?\s*#?\d+\)\s*$|\s*[-–—]\s*(?:turn|step|iteration)\s*#?\d+\s*$"
                     r"|\s+#?\d+\s*$", re.I)
_STATUS = linre.compile(r"\s*\((succeeded|success|ok|completed|failed|error|errored)\)\s*$", re.I)
# "Tool call: ls", "Tool call · bash", "TOOL CALL - Bash" (a separator is required: "Tool Call Handling" is prose);
# "Tool result", "Tool result 2: bash (ok)", "Tool result · bash" (not "Tool Result Tracking").
_CALL_HEAD = linre.compile(r"^(?:tool[ _-]?(?:call|use)|function[ _-]call)\s*(?::|·|\s-\s)\s*`?([\w.\-/]+)`?\s*$", re.I)
_RESULT_HEAD = linre.compile(r"^(?:tool[ _-]?(?:result|output|response)s?|observation)(?:\s*(?:[:·#(\-–]|\d|for\b).*)?$",
                          re.I)
_FINAL_HEAD = linre.compile(r"^final[ \t]*[:·-]?[ \t]*`?([\w.\-/]*[./][\w.\-/]+)`?$", re.I)
_VALUE_LINE = linre.compile(r"^[ \t]*(?:[-*][ \t]*)?(?:\*\*)?(?:value|score|reward|result|verdict)(?:\*\*)?[ \t]*:[ \t]*"
                         r"(?:\*\*)?[ \t]*[`'\"]?([^\s`'\"*]+)", re.I | re.M)
_ANSWER = linre.compile(r"^[ \t]*answer\b[^\n:]*:[ \t]*\n?", re.I | re.M)
MAX_HEADING = 300  # characters: a longer line is never a heading (and never costs a regex more than that)
_EXIT = linre.compile(r"exit(?:ed)?\s+(?:with\s+)?(?:code|status)\s*[:=]?\s*(-?\d+)|\[Command (succeeded|failed)", re.I)
_ERROR_HEAD = {"failed", "error", "errored"}
_DECODER = json.JSONDecoder()


# --------------------------------------------------------------------------- headings and fences


def _role(heading: str) -> tuple[str, str, str] | None:
    """(role, argument, status) of a heading's text, or None when it names no role. The argument is a tool's
    name or a FINAL file; the status a tool heading's ``(succeeded)``/``(failed)``."""
    text = heading.strip().strip("*_").strip()
    status = ""
    m = _STATUS.search(text)
    if m:
        status = m.group(1).lower()
        text = text[:m.start()]
    text = " ".join(text.split())
    m = _CALL_HEAD.match(text)
    if m:
        return _CALL, m.group(1), status
    m = _FINAL_HEAD.match(text)
    if m:
        return _FINAL, m.group(1), status
    if _RESULT_HEAD.match(text) and len(text) <= 60:
        return _RESULT, "", status
    base = _SUFFIX.sub("", text).rstrip(":").strip().lower()
    role = _ROLE_WORDS.get(base)
    return (role, "", status) if role else None


@dataclass(slots=True)
class _Line:
    no: int  # 1-based
    text: str
    depth: int  # 0 outside any fence (a fence's own opening/closing lines count as inside)


def _fenced(lines: list[str]) -> list[_Line]:
    """Each line with whether it is inside a fenced code block (CommonMark: a fence closes with the same
    character, at least as long, and no info string; an unclosed fence runs to the end)."""
    out: list[_Line] = []
    fence = ""
    for i, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        if not fence:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
                out.append(_Line(i, line, 1))
                continue
            out.append(_Line(i, line, 0))
            continue
        out.append(_Line(i, line, 1))
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
            fence = ""
    return out


def _headings(lines: list[_Line]) -> list[tuple[int, int, tuple[str, str, str] | None]]:
    """(index in ``lines``, heading level, role) of every heading outside fences; a bold tool-call line has
    level 0 (it sits inside a turn)."""
    out = []
    for i, ln in enumerate(lines):
        if ln.depth or len(ln.text) > MAX_HEADING:
            continue
        m = _ATX.match(ln.text)
        if m:
            out.append((i, len(m.group(1)), _role(m.group(2))))
            continue
        m = _BOLD_CALL.match(ln.text)
        if m:
            out.append((i, 0, (_CALL, m.group(1), "")))
    return out


def _is_transcript(text: str) -> bool:
    heads = _headings(_fenced(text[:SNIFF_CHARS].split("\n")))
    roles = {r[0] for _, _, r in heads if r}
    if len(roles) < 2 or not roles & _AGENT_SIDE:
        return False
    levels = Counter(level for _, level, r in heads if r and level)
    if not levels:
        return True  # bold tool-call lines only, with another role: a transcript
    total = Counter(level for _, level, _ in heads if level in levels)
    return sum(levels.values()) * 2 >= sum(total.values())


def sniff(parsed: Parsed) -> bool:
    return parsed.kind == "text" and _is_transcript(parsed.text)


def claims(name: str, head: bytes) -> str | None:
    """At collection: a loose ``.md``/``.markdown``/``.txt`` file whose first bytes show a transcript is one run
    ("single"). The head is cut anywhere: a partial last character is dropped, never an error."""
    if not name.lower().endswith(TEXT_SUFFIXES):
        return None
    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "ignore")
    if not text.strip() or text.lstrip()[:1] in ("{", "[") or "\x00" in text:
        return None
    return "single" if _is_transcript(text) else None


# --------------------------------------------------------------------------- sections


@dataclass(slots=True)
class _Section:
    role: str
    arg: str
    status: str
    line: int  # 1-based line of its heading
    body: list[_Line] = field(default_factory=list)


def _sections(lines: list[_Line]) -> tuple[list[_Line], list[_Section]]:
    """(preamble lines, role sections). Headings that name no role stay in the body of the section they are in."""
    starts = {i: r for i, _, r in _headings(lines) if r}
    preamble: list[_Line] = []
    sections: list[_Section] = []
    for i, ln in enumerate(lines):
        if i in starts:
            role, arg, status = starts[i]
            sections.append(_Section(role, arg, status, ln.no))
        elif sections:
            sections[-1].body.append(ln)
        else:
            preamble.append(ln)
    return preamble, sections


def _unwrap(body: list[_Line]) -> str:
    """A section's text; when the whole body is one fenced block (the exporter's wrapper, usually four
    backticks so that the code blocks inside survive), its content."""
    first = next((i for i, ln in enumerate(body) if ln.text.strip()), len(body))
    last = next((i for i in range(len(body) - 1, first - 1, -1) if body[i].text.strip()), first - 1)
    rows = [ln.text for ln in body[first:last + 1]]
    if len(rows) >= 2:
        m = _FENCE.match(rows[0])
        fence = rows[-1].strip()
        if m and not m.group(2).strip() and set(fence) == {m.group(1)[0]} and len(fence) >= len(m.group(1)) \
                and _closes_last(rows, m.group(1)):
            return "\n".join(rows[1:-1])
    return "\n".join(rows)


def _closes_last(rows: list[str], fence: str) -> bool:
    """The wrapper fence opened on ``rows[0]`` closes first on the last row (not earlier)."""
    inner_fence = ""
    for row in rows[1:-1]:
        m = _FENCE.match(row)
        if not m:
            continue
        mark = m.group(1)
        if inner_fence:
            if mark[0] == inner_fence[0] and len(mark) >= len(inner_fence) and not m.group(2).strip():
                inner_fence = ""
            continue
        if mark[0] == fence[0] and len(mark) >= len(fence) and not m.group(2).strip():
            return False  # the wrapper closes before the last row
        inner_fence = mark
    return True


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text``: a fenced block's content, the text itself, or what follows ``Args:``."""
    for candidate in (*code_blocks(text), text):
        s = candidate.strip()
        if s.lower().startswith("args:"):
            s = s[5:].strip()
        start = s.find("{")
        if start < 0 or start > 40:
            continue
        try:
            value, _ = _DECODER.raw_decode(s, start)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


# --------------------------------------------------------------------------- events


def _call(index: int, sec: _Section, text: str) -> Event:
    args: Any = _json_object(text)
    name = sec.arg
    if args is not None and not name and isinstance(args.get("name"), str):
        name = args["name"]  # {"name": ..., "arguments": {...}} under a bare "Tool call" heading
        inner = args.get("arguments", args.get("input", args.get("args")))
        if isinstance(inner, str):
            try:
                inner = orjson.loads(inner)
            except orjson.JSONDecodeError:
                pass
        args = inner if isinstance(inner, dict) else args
    if args is None:
        args = {"input": text} if text.strip() else {}
    status = ("failed" if sec.status in _ERROR_HEAD else "ok") if sec.status else "unknown"
    return tool_event(index, name or "tool", args, status=status, raw=f"line {sec.line}")


def _status(output: str, heading_status: str) -> str:
    if heading_status:
        return "failed" if heading_status in _ERROR_HEAD else "ok"
    found = _EXIT.findall(output[-2000:])  # the last exit marker of the output is the command's
    if not found:
        return "ok"  # the tool answered; nothing says it failed
    code, word = found[-1]
    if word:
        return "ok" if word.lower() == "succeeded" else "failed"
    return "ok" if code == "0" else "failed"


def _scorer(text: str) -> dict[str, Any]:
    m = _VALUE_LINE.search(text)
    out: dict[str, Any] = {"value": m.group(1) if m else None}
    a = _ANSWER.search(text)
    if a:
        out["answer"] = clip(text[a.end():].strip())
    return out


def _preamble(lines: list[_Line], meta: dict[str, Any]) -> None:
    text = "\n".join(ln.text for ln in lines)
    for block in code_blocks(text):
        try:
            v = orjson.loads(block)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(v, dict):
            continue
        for key, dest in (("model", "model"), ("harness", "agent"), ("agent", "agent"), ("task_id", "task"),
                          ("task", "task")):
            if isinstance(v.get(key), str) and v[key] and dest not in meta:
                meta[dest] = v[key][:200]
        return


def _reward(scores: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    values = [s.get("value") for s in scores]
    if not scores:
        return
    if any(v is None for v in values):
        meta["reward_note"] = "a SCORER section has no value line"
        return
    rewards = {score_value(v) for v in values}
    if len(rewards) > 1:
        meta["reward_note"] = "SCORER sections disagree: " + ", ".join(str(v)[:20] for v in values[:4])
        return
    [r] = rewards
    if r is None:
        meta["reward_note"] = f"SCORER value {str(values[0])[:40]!r} has no agreed reward"
        return
    meta["reward"], meta["reward_source"] = r, "transcript SCORER value"


def load(parsed: Parsed, path: str) -> Trajectory:
    lines = _fenced(parsed.text.split("\n"))
    preamble, sections = _sections(lines)
    meta: dict[str, Any] = {}
    _preamble(preamble, meta)
    events: list[Event] = []
    pending: deque[Event] = deque()
    scores: list[dict[str, Any]] = []
    finals: dict[str, str] = {}
    for sec in sections:
        text = _unwrap(sec.body)
        raw = f"line {sec.line}"
        if sec.role == _CALL:
            ev = _call(len(events), sec, text)
            events.append(ev)
            pending.append(ev)
        elif sec.role == _RESULT:
            if pending:
                ev = pending.popleft()
                ev.output = clip(text)
                if ev.status == "unknown":
                    ev.status = _status(text, sec.status)
            else:
                events.append(Event(index=len(events), type=OTHER, title="tool result", text=clip(text), raw=raw))
        elif sec.role == _SCORER:
            scores.append(_scorer(text))
            events.append(Event(index=len(events), type=OTHER, title="scorer", text=clip(text), raw=raw))
        elif sec.role == _FINAL:
            finals[sec.arg] = clip(text)
            events.append(Event(index=len(events), type=OTHER, title=f"FINAL {sec.arg}", paths=(sec.arg,),
                                text=clip(text), raw=raw))
        elif text.strip():
            etype = {_USER: USER, _SYSTEM: OTHER, _AGENT: AGENT, _THOUGHT: THOUGHT}[sec.role]
            events.append(Event(index=len(events), type=etype, text=clip(text), raw=raw))
    mark_submissions(events, meta, chat=not any(e.is_tool for e in events))
    if scores:
        meta["scorer"] = scores[-1]
    _reward(scores, meta)
    if finals:
        meta["final_files"] = finals
    return Trajectory(format=NAME, source=path, events=events, raw_text=parsed.text, meta=meta)


__all__ = ["NAME", "HEAD_BYTES", "TEXT_SUFFIXES", "sniff", "claims", "load", "code_blocks"]
