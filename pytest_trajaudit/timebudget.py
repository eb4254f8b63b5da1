"""The time budget of one job's audit (``--trajaudit-audit-budget``), enforced cooperatively.

A job's audit (loading its files, then every principle) may use ``seconds`` of CPU time of the thread that runs it;
past that the job is unusable input, "audit exceeded N s" (an ERROR, never a pass, never a hang). CPU time of the
auditing thread, not wall time: a loaded machine or other xdist workers do not eat a job's budget, and judge
threads (their own deadline: judges/call.py) do not count.

No signal and no watchdog thread (either would break under xdist or in a host that owns its signals): the work
checks the clock itself. :func:`check` is called where the engine moves on (after loading, between principles);
:func:`tick` is called by the loops that can run long on hostile input (every line of a streamed file, every
regular-expression search: ``linre.py``) and reads the clock once per :data:`TICKS` calls, so a long loop notices
the deadline within a few thousand iterations while a short one costs a counter increment.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from pathlib import Path

from .model import UnusableInput

DEFAULT_AUDIT_BUDGET = 60.0  # seconds of CPU per job; real jobs take well under a second (docs/limits.md)
TICKS = 1024  # calls of tick() between two reads of the clock


class AuditTimeout(UnusableInput):
    """The job's audit went past its budget: the whole job is unusable input (never one principle's error)."""


_clock = time.thread_time
_DEADLINE: contextvars.ContextVar[tuple[float, float, str] | None] = contextvars.ContextVar(
    "trajaudit_audit_deadline", default=None)
_count = 0


@contextlib.contextmanager
def budget(seconds: float, path: str | Path) -> Iterator[None]:
    """Within the block, :func:`check` and :func:`tick` raise :class:`AuditTimeout` (naming ``path``, the job)
    once ``seconds`` of this thread's CPU time have passed."""
    token = _DEADLINE.set((_clock() + seconds, seconds, str(path)))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check() -> None:
    """Raise :class:`AuditTimeout` when the budget in force (if any) is spent."""
    d = _DEADLINE.get()
    if d is not None and _clock() > d[0]:
        raise AuditTimeout(d[2], f"audit exceeded {d[1]:g} s (--trajaudit-audit-budget)")


def tick() -> None:
    """:func:`check`, once every :data:`TICKS` calls."""
    global _count
    _count += 1
    if _count >= TICKS:
        _count = 0
        check()
