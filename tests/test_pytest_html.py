"""The report the real pytest-html writes: WARN and FAIL rows carry their evidence, and an Audit column gives
each item's own status (pytest-html's own Result column files a WARN under XFailed)."""

from __future__ import annotations

import html
import json
import re

import pytest

from tests.jobfactory import make_job

pytest.importorskip("pytest_html")

HOSTILE = "<img src=x onerror=alert(1)>"


def _report(pytester: pytest.Pytester, *args: str) -> dict[str, list[dict]]:
    """The tests of the report's embedded JSON (pytest-html's ``data-jsonblob``), by node id."""
    r = pytester.runpytest("--trajaudit=runs", "-p", "no:cacheprovider", "-p", "no:randomly", "--html=out.html",
                           "--self-contained-html", *args)
    assert r.ret == 1
    text = (pytester.path / "out.html").read_text(encoding="utf-8")
    assert HOSTILE not in text  # escaped by us, then again as an attribute value
    assert '<th class="sortable" data-column-type="audit">Audit</th>' in text
    blob = re.search(r'data-jsonblob="([^"]*)"', text)
    assert blob is not None
    return json.loads(html.unescape(blob.group(1)))["tests"]


def _cell(row: dict, column: str) -> str:
    for cell in row["resultsTableRow"]:
        m = re.fullmatch(rf'<td class="col-{column}">(.*)</td>', cell, re.S)
        if m:
            return m.group(1)
    raise AssertionError(f"no {column} cell in {row['resultsTableRow']}")


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["inprocess", "xdist"])
def test_warn_and_fail_rows_show_status_and_evidence(pytester: pytest.Pytester, workers: tuple[str, ...]) -> None:
    if workers:
        pytest.importorskip("xdist")
    runs = pytester.path / "runs"
    make_job(runs, "fails")  # one tool call and reward 1: P4 FAIL
    lines = [{"type": "user_message", "text": "do x"},
             {"type": "agent_message", "text": f"Actually, wait, I am not sure. Submitting: {HOSTILE}"}]
    make_job(runs, "doubts", lines=lines, result={"task_name": "t2", "rollout_name": "doubts__1",
                                                  "rewards": {"reward": 0.0}, "n_tool_calls": 0})
    tests = _report(pytester, *workers)
    rows = {nodeid: runs_[-1] for nodeid, runs_ in tests.items()}
    statuses = {nodeid: _cell(row, "audit") for nodeid, row in rows.items()}
    assert set(statuses.values()) <= {"PASS", "FAIL", "WARN", "N/A", "ERROR"}
    assert set(statuses.values()) >= {"PASS", "FAIL", "WARN", "N/A"}

    fail = rows["runs/fails/result.json::P4"]
    assert statuses["runs/fails/result.json::P4"] == "FAIL" and _cell(fail, "result") == "Failed"
    assert "1 tool call(s) and reward 1.0" in fail["log"] and "No log output captured" not in fail["log"]

    warn = rows["runs/doubts/result.json::P15"]
    assert statuses["runs/doubts/result.json::P15"] == "WARN" and _cell(warn, "result") == "XFailed"
    assert warn["log"].startswith("WARN P15: self-doubt present:")
    assert html.escape(HOSTILE) in warn["log"]  # pytest-html renders the log as HTML: the markup stays text
    assert "No log output captured" not in warn["log"]

    na = next(nodeid for nodeid, s in statuses.items() if s == "N/A")
    assert rows[na]["log"].startswith("N/A ") and _cell(rows[na], "result") == "Skipped"
    passed = next(nodeid for nodeid, s in statuses.items() if s == "PASS")
    assert _cell(rows[passed], "result") == "Passed"


def test_without_trajaudit_the_report_has_no_audit_column(pytester: pytest.Pytester) -> None:
    """The column belongs to audits: a plain run's report is pytest-html's own."""
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    r = pytester.runpytest("test_plain.py", "-p", "no:cacheprovider", "--html=plain.html", "--self-contained-html")
    assert r.ret == 0
    text = (pytester.path / "plain.html").read_text(encoding="utf-8")
    assert "col-audit" not in html.unescape(text) and "data-column-type=\"audit\"" not in text
