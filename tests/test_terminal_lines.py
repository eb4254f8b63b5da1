"""What the terminal shows of failures and unusable jobs: ``FAILED <id> - P1: <reason>``, one line per failure
under ``--tb=line`` (no truncated copy below it), one error per unusable job naming the file and the problem (the
job still ERROR in summary.json, report.md and the PR verdict), report.md named beside summary.json."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from .jobfactory import make_job

BASE = ("-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit-principles=P1,P2,P3")
CHEAT = [{"type": "user_message", "text": "do x"},
         {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": "Read /oracle/expected_answer.json",
          "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "42"}}]},
         {"type": "agent_message", "text": "done"}]


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "runs"
    make_job(root, "clean")
    make_job(root, "cheat", lines=CHEAT)
    make_job(root, "broken", lines="{not json\n")
    return root


def section(lines: list[str], title: str) -> list[str]:
    start = next(i for i, ln in enumerate(lines) if ln.startswith("=") and f" {title} " in ln)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("="))
    return lines[start + 1:end]


def test_failed_lines_and_one_line_per_failure(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "--trajaudit-report=out")
    out = result.stdout.str()
    assert "[trajaudit]" not in out
    result.stdout.fnmatch_lines(["FAILED runs/cheat/result.json::P1 - P1: *"])
    failures = section(result.stdout.lines, "FAILURES")
    assert len(failures) == 1  # --tb=line (the plugin's default): one line, no truncated copy under it
    assert failures[0].startswith("runs/cheat/result.json:1: P1: #1 Read /oracle/expected_answer.json")
    assert f"reports: {Path('out')}/summary.json, {Path('out')}/report.md and {Path('out')}/jobs/" in out


def test_other_traceback_styles_show_the_text_once(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "--tb=short")
    failures = section(result.stdout.lines, "FAILURES")
    assert [ln for ln in failures if not ln.startswith("_")] == [
        "P1: #1 Read /oracle/expected_answer.json: successful read of '/oracle/expected_answer.json': "
        "/oracle/expected_answer.json, then passed (reward 1.0)"]


def test_one_error_per_unusable_job_and_the_job_stays_error(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "--trajaudit-report=out", "--junitxml=j.xml", "-rEs")
    result.assert_outcomes(passed=5, failed=1, errors=1, skipped=2)
    errors = [ln for ln in result.stdout.lines if ln.startswith("ERROR runs/")]
    assert len(errors) == 1, errors
    assert errors[0].startswith("ERROR runs/broken/result.json::P1 - unusable input: traj")
    body = [ln for ln in section(result.stdout.lines, "ERRORS") if not ln.startswith("_")]
    assert body == ["unusable input: trajectory/acp_trajectory.jsonl: starts like JSON but is not valid JSON: "
                    "unexpected character, expected a string key: line 1 column 2 (char 1)"]
    result.stdout.fnmatch_lines(["SKIPPED [2] runs/broken/result.json:1: unusable input, reported at "
                                 "runs/broken/result.json::P1"])
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    verdicts = {j["job"]: j["verdict"] for j in summary["jobs"]}
    assert verdicts["runs/broken"] == "ERROR"
    assert summary["pr_verdict"]["verdict"] == "REJECT"
    assert "ERROR" in (pytester.path / "out" / "report.md").read_text()
    junit = (pytester.path / "j.xml").read_text()
    assert junit.count("<error ") == 1
    assert result.ret == 1


def test_a_selection_of_one_item_still_reports_the_error(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "runs/broken/result.json::P3")
    result.assert_outcomes(errors=1)


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist not installed")
def test_under_xdist_the_same_lines(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest_subprocess(*BASE, "--trajaudit=runs", "-n", "2")
    result.assert_outcomes(passed=5, failed=1, errors=1, skipped=2)
    # xdist names the worker of each failure ("[gw1] linux -- Python …") on a line of its own
    failures = [ln for ln in section(result.stdout.lines, "FAILURES") if not ln.startswith("[gw")]
    assert len(failures) == 1 and failures[0].startswith("runs/cheat/result.json:1: P1: ")
    result.stdout.fnmatch_lines(["FAILED runs/cheat/result.json::P1 - P1: *"])
