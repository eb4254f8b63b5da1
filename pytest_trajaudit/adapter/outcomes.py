"""Outcome mapping: an audit item's finding (PASS/FAIL/WARN/N/A, waived or not) as pytest's report of it."""

from __future__ import annotations

import os

import pytest

from ..scan.redact import printable
from . import xdist
from .nodes import STATE_KEY, GroupItem, PrincipleItem


def adjust(item: pytest.Item, call: pytest.CallInfo[None], rep: pytest.TestReport) -> None:
    """Map an audit item's finding onto pytest's report of one phase: N/A → skipped at the item, WARN →
    skipped with ``wasxfail`` (shown xfailed/WARN), a waived FAIL/WARN → skipped ``WAIVED: …``; the record rides
    on the report (``rep.trajaudit``) to the roll-up, also across xdist."""
    if isinstance(item, PrincipleItem | GroupItem):
        share_keywords(item, rep)
    na = None
    if call.when == "call" and isinstance(item, PrincipleItem | GroupItem):
        na, item.na_msg = item.na_msg, None  # read once: the report keeps its text
    if na is not None and rep.passed:
        # N/A: a skip without raising (no traceback to build): the same report pytest.skip(...,
        # _use_item_location=True) gives, i.e. (path, line, "Skipped: <reason>")
        path, line = item.reportinfo()[:2]
        rep.outcome = "skipped"
        rep.longrepr = (os.fspath(path), (line or 0) + 1, f"Skipped: {na}")
    if not xdist.BATCHED and isinstance(item, PrincipleItem | GroupItem) and hasattr(item.config, "workerinput"):
        xdist.audit_reports().add(rep)  # an xdist worker sending reports one by one: pack this one as JSON
    if isinstance(item, PrincipleItem | GroupItem) and item.record is not None:
        if call.when == "call" or (call.when == "setup" and not rep.passed):  # setup: unusable input
            rep.trajaudit = item.record  # type: ignore[attr-defined]  # the plugin's record on pytest's report (xdist ships it)
        if call.when == "call" and item.warn_msg is not None and rep.passed:
            rep.outcome = "skipped"
            rep.wasxfail = item.warn_msg
    if isinstance(item, PrincipleItem) and item.record is not None:
        if call.when == "setup" and rep.passed:
            _decide_waiver(item)
        elif call.when == "call" and rep.passed and (item.record.get("waiver") or {}).get("applied"):
            from ..report.waivers import skip_reason

            path, line = item.reportinfo()[:2]
            rep.outcome = "skipped"
            rep.longrepr = (os.fspath(path), (line or 0) + 1, f"Skipped: {printable(skip_reason(item.record['waiver']))}")


def share_keywords(item: PrincipleItem | GroupItem, rep: pytest.TestReport) -> None:
    """The three reports of an item (setup, call, teardown) share one ``keywords`` dict: pytest copies the item's
    keywords into each (``dict.fromkeys(item.keywords, 1)``) and keeps every report until the session ends, so two
    of those copies per item are memory and nothing else. A phase whose keywords differ from the setup report's
    (a plugin added a marker meanwhile) keeps its own; the item forgets the shared dict at teardown."""
    kw = item.report_keywords
    item.report_keywords = None
    if kw is not None and (rep.keywords is kw or list(rep.keywords.items()) == list(kw.items())):
        rep.keywords = kw
    else:
        kw = rep.keywords
    if rep.when != "teardown":
        item.report_keywords = kw


def _decide_waiver(item: PrincipleItem) -> None:
    """Once the item's finding is known (at setup, before it runs: a waived WARN then raises no warning, which
    ``-W error::…TrajauditWarning`` would make a failure): a FAIL or WARN that an unexpired waiver matches is
    marked applied in its record (the item is skipped with ``WAIVED: <reason> (until <date>)`` at makereport), one
    only an expired waiver matches is marked expired; the decision travels in the record to the roll-up
    (waivers.py)."""
    state = item.config.stash.get(STATE_KEY, None)
    rec = item.record
    if state is None or not state.waivers or rec is None or rec.get("status") not in ("FAIL", "WARN"):
        return
    from ..report.waivers import decide
    from ..scan.redact import redact

    evidence = str(rec.get("evidence") or "")
    d = decide(state.waivers, item.job.job_id, rec.get("code", ""), rec.get("status"), evidence, state.today)
    if d is None and evidence:  # the substring as the reports show the evidence (secret-redacted)
        d = decide(state.waivers, item.job.job_id, rec.get("code", ""), rec.get("status"), redact(evidence),
                   state.today)
    if d is not None:
        rec["waiver"] = d


def teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """The terminal's word for a WARN (xfailed, ``w``, WARN) and a waived finding (skipped, ``s``, WAIVED)."""
    rec = getattr(report, "trajaudit", None)
    if rec and report.when == "call" and getattr(report, "wasxfail", None) is not None and rec.get("status") == "WARN":
        return "xfailed", "w", "WARN"
    if rec and report.when == "call" and report.skipped and (rec.get("waiver") or {}).get("applied"):
        return "skipped", "s", "WAIVED"
    return None
