"""A job's trajectory as a short timeline for the HTML report: the events the findings cite, with a little context.

A report of 10,000 jobs cannot carry every event of every trajectory, and a reviewer reads what a finding points
at. So the timeline is a window: the first events (the task as given), every event a finding cites with
:data:`CONTEXT` events on each side, and the last events (how the run ended), at most :data:`MAX_ROWS` rows, cited
events kept first. Each row is short and already escaped and redacted (``redact.clean``): kind, tool, first path,
one line of text. Built in the process that audited the job (the trajectory is parsed there), only when a report
directory is given, and carried in the job's meta (it crosses xdist once per job, like the rest of the meta).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model import Event
from ..scan.redact import clean

HEAD = 3  # the first events: the task prompt and the agent's first moves
TAIL = 2  # the last events: the final answer
CONTEXT = 2  # events shown on each side of a cited one
MAX_ROWS = 80
TEXT_CHARS = 140


def _line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS - 1] + "…"


def row(e: Event, cited: bool) -> dict[str, Any]:
    """One event as a timeline row (JSON builtins, escaped and redacted)."""
    out: dict[str, Any] = {"i": e.index, "type": e.type}
    if e.kind:
        out["kind"] = clean(_line(e.kind))
    if e.tool:
        out["tool"] = clean(_line(e.tool))
    if e.paths:
        out["path"] = clean(_line(e.paths[0]))
    text = e.command or e.title or e.text or e.args
    if text:
        out["text"] = clean(_line(text))
    if e.status != "unknown":
        out["status"] = e.status
    if cited:
        out["cited"] = True
    return out


def timeline(events: list[Event], cited: Iterable[int]) -> dict[str, Any]:
    """``{"n_events", "rows"}``: the window of ``events`` around the ``cited`` event indexes (see the module)."""
    n = len(events)
    pos = {e.index: p for p, e in enumerate(events)}
    marked = {pos[i] for i in cited if i in pos}
    keep: list[int] = sorted(marked)  # cited events first: never dropped for context
    extra: list[int] = []
    for p in sorted(marked):
        extra.extend(range(max(0, p - CONTEXT), min(n, p + CONTEXT + 1)))
    extra.extend(range(min(HEAD, n)))
    extra.extend(range(max(0, n - TAIL), n))
    chosen = set(keep[:MAX_ROWS])
    for p in extra:
        if len(chosen) >= MAX_ROWS:
            break
        chosen.add(p)
    return {"n_events": n, "rows": [row(events[p], p in marked) for p in sorted(chosen)]}
