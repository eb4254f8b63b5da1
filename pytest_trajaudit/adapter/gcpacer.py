"""Garbage collection pacing for large audits (registered by pytest_configure as ``trajaudit-gc``)."""

from __future__ import annotations

import pytest


class GcPacer:
    """Keep the cyclic garbage collector's work linear in an audit's size. Everything collection builds, and
    every report the run keeps (pytest's terminal statistics hold each one until exit), is live until the session
    ends, yet each full collection walked it all again: a third of the CPU of an audit of 2,000 small jobs and a
    sixth for 500 jobs of 1 MiB (``benchmarks/measure.py``). So after collection, and then every
    :attr:`EVERY` reports, one collection frees what is garbage (cycles, with their ``__del__``: pytest's
    unraisable-exception check sees them as usual) and ``gc.freeze()`` moves the survivors out of later
    collections' sight. Reference counting still frees frozen objects. At the end (:meth:`close`, after pytest's
    own cleanups) they return to the collector lazily, at the next full collection of this process: an in-process
    caller (pytester, an IDE) goes on as before, while the command line exits without one last walk over
    everything."""

    EVERY = 6000

    def __init__(self) -> None:
        self.reports = 0
        self.frozen = False

    def _step(self) -> None:
        import gc

        gc.collect()
        gc.freeze()
        self.frozen = True

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._step()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports += 1
        if self.reports % self.EVERY == 0:
            self._step()

    def close(self) -> None:
        if not self.frozen:
            return
        import gc
        import sys

        finalizing, callbacks, unfreeze = sys.is_finalizing, gc.callbacks, gc.unfreeze  # module globals go at exit

        def thaw(phase: str, info: dict[str, int]) -> None:
            # at a full collection (gc.collect(), or one due); not the interpreter's last one at exit
            if phase == "start" and info.get("generation") == 2 and not finalizing():
                callbacks.remove(thaw)
                unfreeze()

        self.frozen = False
        gc.callbacks.append(thaw)
