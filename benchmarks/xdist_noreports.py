"""A measurement aid for ``measure.py`` section (c), never for real use: on xdist workers, send none of an item's
``logstart``, ``logfinish``, ``testreport`` or ``warning_recorded`` events; only ``runtest_protocol_complete``
(the scheduler hands out work by it) and the session's own events go to the controller.

With it an ``-n`` run audits every job as usual, but the controller receives, rebuilds and renders no report
("no tests ran"): its wall time is what an ``-n`` run would take if reports crossed for free, i.e. the most any
report transport, xdist's or another, could give on these cores. Load with ``-p xdist_noreports`` and this
directory on ``PYTHONPATH`` (workers inherit the environment)."""

from __future__ import annotations

from typing import Any

import pytest

DROPPED = frozenset({"logstart", "logfinish", "testreport", "warning_recorded"})


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        return
    for plugin in session.config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor":
            send = plugin.sendevent

            def sendevent(name: str, _send: Any = send, **kwargs: Any) -> None:
                if name not in DROPPED:
                    _send(name, **kwargs)

            plugin.sendevent = sendevent
