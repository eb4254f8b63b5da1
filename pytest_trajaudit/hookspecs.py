"""Hooks pytest-trajaudit adds to pytest (registered through ``pytest_addhooks``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .principles import Principle

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_trajaudit_principles() -> Iterable[Principle]:  # type: ignore[empty-body]  # a spec: pluggy reads its signature, never calls it
    """Return an iterable of :class:`pytest_trajaudit.principles.Principle` to add to the registry.

    A principle's ``role`` decides what it does to its job's verdict: ``"integrity"`` (a FAIL makes the job
    INVALID; a run in which it did not run on a job is INCOMPLETE), ``"quality"`` (the default: a C0 WARN or
    FAIL makes the job WARN) or ``"info"`` (never changes the verdict). See docs/verdicts.md.

    Implement it in an installed plugin (an entry point in the ``pytest11`` group): while auditing, the
    plugin forces ``--noconftest``, so a ``conftest.py`` cannot add principles during an audit run.
    """
