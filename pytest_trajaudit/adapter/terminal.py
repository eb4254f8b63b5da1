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
