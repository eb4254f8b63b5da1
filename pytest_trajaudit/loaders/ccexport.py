"""Claude Code's own text export (``/export`` to a file, or a copy of the terminal): what the terminal shows.

Shape (checked on public exports)::

    ╭──────────────────────────────╮
    │ ✻ Welcome to Claude Code!    │      banner (skipped)
    ╰──────────────────────────────╯

    > fix the failing test              the user's prompt (continuation lines indented)

    ⏺ I'll look at the tests first.     the agent's text

    ⏺ Bash(python -m pytest -q)         a tool call: display name and its argument text, wrapped at the
      ⎿  Error: 1 failed                terminal's width (continuation lines indented six spaces); its result
         FAILED tests/test_app.py       after ``⎿`` (continuation lines indented five spaces)

    ✻ Thinking…                         a thought (indented text below)

A block starts at a line in the first column and takes every following blank or indented line. The display names
map to the tools' names (``Update``→Edit, ``Search``→Grep, ``List``→LS, ``Fetch``→WebFetch, ``Web Search``→WebSearch,
``Update Todos``→TodoWrite), their argument text to arguments (``Bash``'s is the command; ``Read``/``Update``/
``Write``'s the path; ``key: "value"`` pairs are read as such), and the kind follows (``common.infer_kind``). A
result that starts with ``Error`` marks the call failed, any other ok. The display is abridged (``… +67 lines``): the
output is what the export kept. A wrapped argument is joined without a space (the terminal cuts mid-word).

Sniff (content only): outside fenced blocks, a line in the first column starting ``⏺ `` and an indented ``⎿``
result line, plus a ``> `` prompt or a second ``⏺`` line. At collection a loose ``.txt``/``.md`` file is a job when
its first 8 KiB show that (:func:`claims`).
"""

from __future__ import annotations

import re
from typing import Any

from ..model import AGENT, OTHER, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed
from ..scan import linre
from .common import clip, tool_event
from .transcript import TEXT_SUFFIXES

NAME = "claude-code-export"
_MARK = "⏺"
_RESULT = "⎿"
_BANNER = set("╭│╰─╮╯")
_FENCE = linre.compile(r"^ {0,3}(`{3,}|~{3,})")
_NAME = linre.compile(r"^(?:[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)?|mcp__[\w-]+)$")
_MCP = linre.compile(r"^(?P<server>[\w.-]{1,60}) - (?P<tool>[\w.-]{1,60}) \(MCP\)\((?P<args>.*)\)\s*$", re.S)
_CALL = linre.compile(r"^(?P<name>[^()\n]{1,60}?)\((?P<args>.*)\)\s*$", re.S)
_PAIR = linre.compile(r"""(\w+):\s*("(?:[^"\\]|\\.)*"|[^,]*)(?:,\s*|$)""")
_TOOLS = {"Update": "Edit", "Search": "Grep", "List": "LS", "Fetch": "WebFetch", "Web Search": "WebSearch",
          "Update Todos": "TodoWrite", "Read": "Read", "Write": "Write", "Edit": "Edit", "Bash": "Bash",
          "Task": "Task", "Skill": "Skill", "MultiEdit": "MultiEdit", "Grep": "Grep", "Glob": "Glob"}
_ARG_KEY = {"Bash": "command", "Read": "file_path", "Edit": "file_path", "Write": "file_path",
            "MultiEdit": "file_path", "LS": "path", "WebFetch": "url", "WebSearch": "query", "Task": "description",
            "Skill": "skill"}
_NO_ARGS = {"Update Todos", "Read Todos"}


def _lines_outside_fences(text: str) -> list[str]:
    out, fence = [], ""
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)
            if not fence:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = ""
            continue
        if not fence:
            out.append(line)
    return out


def _looks_like_export(text: str) -> bool:
    marks = results = prompts = 0
    for line in _lines_outside_fences(text):
        if line.startswith(_MARK + " "):
            marks += 1
        elif line.startswith("> ") and len(line) > 2:
            prompts += 1
        elif line[:1] == " " and line.lstrip().startswith(_RESULT):
            results += 1
    return marks >= 1 and results >= 1 and (prompts >= 1 or marks >= 2)


def sniff(parsed: Parsed) -> bool:
    return parsed.kind == "text" and _MARK in parsed.text[:262_144] and _looks_like_export(parsed.text[:262_144])


def claims(name: str, head: bytes) -> str | None:
    """At collection: a loose ``.txt``/``.md``/``.markdown`` file whose first bytes show an export is one run."""
    if not name.lower().endswith(TEXT_SUFFIXES):
        return None
    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "ignore")
    return "single" if _MARK in text and _looks_like_export(text) else None


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """(line number, lines) of each block: a first-column line and the blank or indented lines after it."""
    blocks: list[tuple[int, list[str]]] = []
    for i, line in enumerate(text.split("\n"), 1):
        if line[:1] not in ("", " ", "\t") and line.strip():
            blocks.append((i, [line]))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def _dedent(lines: list[str], n: int) -> str:
    out = [ln[n:] if ln[:n].isspace() else ln.lstrip() for ln in lines]
    return "\n".join(out).strip("\n").rstrip()


def _args(tool: str, text: str) -> dict[str, Any]:
    text = text.strip()
    pairs = dict(_PAIR.findall(text)) if re.match(r"^\w+:\s", text) else {}
    if pairs and tool not in ("Bash",):
        return {k: v[1:-1].replace('\\"', '"') if v.startswith('"') else v.strip() for k, v in pairs.items()}
    key = _ARG_KEY.get(tool)
    if key:
        return {key: text.strip('"') if tool == "WebSearch" else text}
    return {"input": text} if text else {}


def _call(index: int, lineno: int, lines: list[str]) -> Event | None:
    """A ``⏺`` block that is a tool call, or None (the agent's text)."""
    res = next((i for i, ln in enumerate(lines) if i and ln.lstrip().startswith(_RESULT)), len(lines))
    head = lines[0][2:]
    call_text = head + "".join(ln.strip() for ln in lines[1:res] if ln.strip())
    mcp = _MCP.match(call_text)
    m = _CALL.match(call_text)
    if mcp:
        display, arg_text = f"mcp__{mcp.group('server')}__{mcp.group('tool')}", mcp.group("args")
    elif m and _NAME.match(m.group("name").strip()):
        display, arg_text = m.group("name").strip(), m.group("args")
    elif head.strip() in _NO_ARGS and res <= len(lines):
        display, arg_text = head.strip(), ""
    else:
        return None
    tool = _TOOLS.get(display, display)
    output = ""
    if res < len(lines):
        first = lines[res].lstrip()[len(_RESULT):].strip()
        output = "\n".join([first, *(ln[5:] if ln[:5].isspace() else ln.strip() for ln in lines[res + 1:])]).rstrip()
    status = "failed" if output.startswith("Error") else ("ok" if res < len(lines) else "unknown")
    ev = tool_event(index, tool, _args(tool, arg_text), output=output, status=status, raw=f"line {lineno}")
    ev.title = f"{display}({arg_text})" if arg_text else display
    return ev


def load(parsed: Parsed, path: str) -> Trajectory:
    events: list[Event] = []
    started = False
    for lineno, lines in _blocks(parsed.text):
        first = lines[0]
        if not started and first[:1] in _BANNER:
            continue  # the welcome banner
        started = True
        raw = f"line {lineno}"
        if first.startswith(_MARK):
            ev = _call(len(events), lineno, lines)
            if ev is None:
                body = _dedent([first[2:], *lines[1:]], 2)
                ev = Event(index=len(events), type=AGENT, text=clip(body), raw=raw)
            events.append(ev)
        elif first.startswith(">"):
            body = _dedent([first[1:].lstrip(), *lines[1:]], 2)
            events.append(Event(index=len(events), type=USER, text=clip(body), raw=raw))
        elif first.startswith("✻"):
            body = _dedent(lines[1:], 2)
            if body.strip() and "thinking" in first.lower():
                events.append(Event(index=len(events), type=THOUGHT, text=clip(body), raw=raw))
        elif first[:1] not in _BANNER and first.strip("─━-= "):
            events.append(Event(index=len(events), type=OTHER, text=clip(_dedent(lines, 0)), raw=raw))
    return Trajectory(format=NAME, source=path, events=events, raw_text=parsed.text, meta={"agent": "claude-code"})


__all__ = ["NAME", "sniff", "claims", "load"]
