"""Plain-text transcript (anything that does not start with ``{`` or ``[``).

Each paragraph becomes one event; lines that look like shell prompts (``$ cmd``) become execute calls with
unknown status, so P1/P2 can still judge commands in a terminal log.
"""

from __future__ import annotations

import re

from ..model import AGENT, EXECUTE, Event, Trajectory
from ..safeio import Parsed
from .common import clip

NAME = "plain-text"
_PROMPT = re.compile(r"^(?:[\w@.\-~/:]*[$#]|>>>|\$)\s+(\S.*)$")


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

    for i, line in enumerate(parsed.text.split("\n"), 1):
        m = _PROMPT.match(line)
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
