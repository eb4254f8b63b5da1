"""A measurement aid, never for real use: where each pytest process of an audit spends its run loop.

Load with ``-p procprobe`` and this directory on ``PYTHONPATH`` (xdist workers inherit the environment); each
process (the controller, every worker, or the one process of an ``-n 0`` run) appends one line to the file named
by ``TRAJAUDIT_PROBE_OUT`` (default ``procprobe.log`` in the working directory) when its session finishes::

    gw0: loop wall 5.80 s | main thread on CPU 4.47 s, waiting for a core 1.35 s, blocked 0.19 s | process CPU
    4.54 s | audit work 2.89 s (264 jobs)

"loop" is ``pytest_runtestloop`` (after collection); "on CPU" and "waiting for a core" come from Linux's
``/proc/self/task/<tid>/schedstat`` for the main thread (absent elsewhere: then ``time.thread_time()`` and no
wait); "blocked" is the rest of the loop's wall time (waiting for work or I/O); "process CPU" counts every
thread, the execnet receiver threads of a controller included; "audit work" is the main thread's CPU inside
``engine.audit_job`` (loading a job and running its principles)."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

_acc = {"cpu": 0.0, "jobs": 0}
_start: dict[str, Any] = {}


def _sched() -> tuple[float, float] | None:
    """(seconds on CPU, seconds waiting on a run queue) of the calling thread, or None."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
            run, wait, _ = f.read().split()
    except (OSError, ValueError):
        return None
    return int(run) / 1e9, int(wait) / 1e9


def _wrap_audit_job() -> None:
    import pytest_trajaudit.adapter.nodes as nodes

    inner = nodes.audit_job

    def audit_job(*args: Any, **kwargs: Any) -> Any:
        t = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            _acc["cpu"] += time.thread_time() - t
            _acc["jobs"] += 1

    nodes.audit_job = audit_job


def pytest_configure(config: pytest.Config) -> None:
    _wrap_audit_job()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    _start.update(wall=time.perf_counter(), thread=time.thread_time(), process=time.process_time(), sched=_sched())


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _start:
        return
    wall = time.perf_counter() - _start["wall"]
    now, then = _sched(), _start["sched"]
    if now and then:
        on, wait = now[0] - then[0], now[1] - then[1]
    else:
        on, wait = time.thread_time() - _start["thread"], 0.0
    who = getattr(session.config, "workerinput", {}).get("workerid") or (
        "controller" if session.config.pluginmanager.hasplugin("dsession") else "main")
    line = (f"{who}: loop wall {wall:.2f} s | main thread on CPU {on:.2f} s, waiting for a core {wait:.2f} s, "
            f"blocked {max(wall - on - wait, 0.0):.2f} s | process CPU {time.process_time() - _start['process']:.2f} s"
            f" | audit work {_acc['cpu']:.2f} s ({_acc['jobs']} jobs)\n")
    with open(os.environ.get("TRAJAUDIT_PROBE_OUT", "procprobe.log"), "a") as f:
        f.write(line)
