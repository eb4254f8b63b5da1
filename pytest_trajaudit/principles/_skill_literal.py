"""The skills family's literal mode: each tool call as the seed sees it (the JSON of its source line), and the
seed's ``references/.*\\.md`` test on that text, in linear time."""

from __future__ import annotations

import json
import re

from ..model import Event, Job
from ..scan import linre

_LITERAL_SUB_PATH = linre.compile(r"references/[^\s\"'\\]*?\.md")
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./~-")


def raw_lines(job: Job) -> list[str] | None:
    traj = job.trajectory
    assert traj is not None
    if not traj.raw_text or traj.format == "text":
        return None
    return traj.raw_text.split("\n")


def flat_json(e: Event, lines: list[str] | None) -> str:
    """json.dumps(evt) of the event's source line(s) (JSON Lines formats), else of a dict in ACP shape."""
    if lines is not None:
        nums = [int(n) for n in re.findall(r"\bline (\d+)", e.raw)]
        parts = []
        for n in nums:
            if 0 < n <= len(lines):
                try:
                    parts.append(json.dumps(json.loads(lines[n - 1])))
                except ValueError:
                    parts.append(lines[n - 1])
        if parts:
            return " ".join(parts)
    return json.dumps({"type": "tool_call", "kind": e.kind, "title": e.title, "rawInput": e.args,
                       "locations": list(e.paths), "content": e.output})


def literal_sub_hit(flat: str) -> bool:
    """``re.search(r"references/.*\\.md", flat)`` on a one-line JSON string, in linear time: some
    "references/" lies before the last ".md"."""
    i = flat.find("references/")
    return i >= 0 and flat.rfind(".md") >= i + len("references/")


def literal_sub_path(flat: str) -> str:
    i = flat.find("references/")
    a = i
    while a > 0 and flat[a - 1] in _PATH_CHARS:
        a -= 1
    m = _LITERAL_SUB_PATH.match(flat, i, i + 4096)
    return flat[a:i] + (m.group(0) if m else "references/?.md")
