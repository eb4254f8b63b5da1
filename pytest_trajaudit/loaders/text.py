"""Plain-text transcript (anything that does not start with ``{`` or ``[``).

Each paragraph becomes one event; lines that look like shell prompts (``$ cmd``) become execute calls with
unknown status, so P1/P2 can still judge commands in a terminal log. A Python prompt (``>>> f(1)``) inside a fenced
code block is a doctest or a quoted example, not a command: it stays text (an indented one, in a docstring, never
looks like a prompt). Markdown
transcripts with role headings are read by ``loaders/transcript.py`` instead.
"""

from __future__ import annotations

from ..model import AGENT, EXECUTE, Event, Trajectory
from ..safeio import Parsed
from ..scan import linre
from .common import clip

NAME = "plain-text"
_PROMPT = linre.compile(r"^(?:[\w@.\-~/:]*[$#]|>>>|\$)\s+(\S.*)$")
_FENCE = linre.compile(r"^ {0,3}(`{3,}|~{3,})")


def sniff(parsed: Parsed) -> bool:
    return parsed.kind == "text"


def load(parsed: Parsed, path: str) -> Trajectory:
    events: list[Event] = []
    para: list[str] = []
    start = 1

    def flush(lineno: int) -> None:
        if para:
            events.append(Event(index=len(events), type=AGENT, text=clip("\n".join(para)), raw=f"line {start}"))
            para.clear()

    fence = ""
    for i, line in enumerate(parsed.text.split("\n"), 1):
        f = _FENCE.match(line)
        if f and (not fence or (f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence))):
            fence = "" if fence else f.group(1)
        m = _PROMPT.match(line)
        if m and fence and line.startswith(">>>"):
            m = None  # a doctest or a quoted REPL example (an indented one never matches the prompt)
        if m:
            flush(i)
            events.append(Event(index=len(events), type="tool_call", kind=EXECUTE, tool="shell", title="shell",
                                command=m.group(1), raw=f"line {i}"))
            continue
        if not line.strip():
            flush(i)
            start = i + 1
            continue
        if not para:
            start = i
        para.append(line)
    flush(0)
    return Trajectory(format=NAME, source=path, events=events, raw_text=parsed.text)
