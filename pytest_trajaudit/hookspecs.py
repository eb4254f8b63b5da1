"""Hooks pytest-trajaudit adds to pytest (registered through ``pytest_addhooks``)."""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_trajaudit_principles():
    """Return an iterable of :class:`pytest_trajaudit.principles.Principle` to add to the registry.

    Implement it in an installed plugin (an entry point in the ``pytest11`` group): while auditing, the
    plugin forces ``--noconftest``, so a ``conftest.py`` cannot add principles during an audit run.
    """
