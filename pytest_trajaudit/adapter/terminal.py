"""How an audit item's failure reads on the terminal.

An audit item's failure text is one line, ``P1: <reason>`` (or ``unusable input: <file>: <problem>``): the short
summary shows ``FAILED <node id> - P1: <reason>``. Under ``--tb=line`` (the plugin's default, see plugin.py)
pytest prints, for each failure, the report's text and then a "crash line": for a plain-string text that is its
first 50 characters again, a truncated copy under every failure. :class:`LineRepr` gives the text a crash location
(``<job node id>:1: P1: <reason>``, the ``path:line: message`` form of pytest's own line mode) and stays silent on
the terminal reporter's own writer in line mode, so each failure is exactly one line there; everywhere else
(JUnit's failure body, CTRF's trace, an IDE's message, other ``--tb`` styles) it is the whole text.
"""

from __future__ import annotations

from typing import Any

import pytest

from ._compat import ReprFileLocation, terminal_writer


class LineRepr(str):
    """A failure text (a ``str``: JUnit, CTRF and the short summary read it as one) with a crash location."""

    reprcrash: ReprFileLocation
    quiet_on: Any  # the terminal writer it prints nothing to (the reporter's, in line mode), or None

    def toterminal(self, tw: Any) -> None:
        if tw is not self.quiet_on:
            tw.line(str(self))


def one_line(report: Any, config: Any) -> None:
    """Give an audit item's failed report (its text a plain string) a :class:`LineRepr`; on the controller, where
    the terminal reporter prints it (in-process, or after the report crossed from an xdist worker)."""
    text = report.longrepr
    if not report.failed or type(text) is not str:
        return
    rep = LineRepr(text)
    # the job's node id: its file, and for a record of a multi-record file also the record
    rep.reprcrash = ReprFileLocation(report.nodeid.rsplit("::", 1)[0], 1, text)
    rep.quiet_on = None
    if report.when == "call" and config.option.tbstyle == "line":
        tr = config.pluginmanager.get_plugin("terminalreporter")
        rep.quiet_on = terminal_writer(tr)
    report.longrepr = rep


class PhaseReportTrim:
    """Keep pytest's terminal statistics from holding the passing setup and teardown reports that carry nothing.

    The terminal reporter files every report it is given under its category and keeps it until the session ends;
    a passing setup or teardown report goes under ``""``, which pytest reads for one thing only: the teardown
    sections (captured output) ``-rP`` prints beside a passed test. A passing phase report without sections is
    never printed, yet two of them per item stay in memory: on an audit of 100,000 jobs, 4.9 million reports. This
    plugin (``trajaudit-phase-trim``, registered on the controller when auditing; ``-p no:trajaudit-phase-trim``
    keeps them) takes such a report back out right after the reporter filed it. Every hook still sees every report
    (JUnit, CTRF, xdist, ``--lf``); the terminal's output is unchanged."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.kept: list[Any] | None = None

    @pytest.hookimpl(trylast=True)  # after the terminal reporter's own implementation has filed the report
    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or report.outcome != "passed" or report.sections:
            return
        kept = self.kept
        if kept is None:
            tr = self.config.pluginmanager.get_plugin("terminalreporter")
            stats = getattr(tr, "stats", None)
            if not isinstance(stats, dict):
                return
            kept = stats.get("")
            if kept is None:
                return
            self.kept = kept  # the reporter's list for the category "" (made by its first such report)
        if kept and kept[-1] is report:
            kept.pop()
