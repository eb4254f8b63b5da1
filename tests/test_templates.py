"""conftest_templates/: each template works as its header says (pytester, trusted -c config outside the tree)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .jobfactory import CURL_ANSWERS as CURL
from .jobfactory import make_job

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = REPO / "conftest_templates"
CLEAN = REPO / "examples" / "runs" / "harbor-job" / "csv-stats__Clean01"
STRUGGLE = REPO / "examples" / "runs" / "benchflow" / "tictoc__Struggle01"
CHEAT = REPO / "examples" / "runs" / "benchflow" / "citation-check__Cheat01"


def copy_trial(src: Path, dest_root: Path, name: str, reward: float | None = None, **result: object) -> Path:
    """A copy of an example job as another trial; ``reward`` rewrites every reward source consistently."""
    dest = dest_root / name
    shutil.copytree(src, dest)
    if reward is not None:
        result["verifier_result"] = {"rewards": {"reward": reward}}
        (dest / "verifier" / "reward.txt").write_text(f"{reward:g}\n")
        (dest / "verifier" / "test-stdout.txt").unlink(missing_ok=True)
    doc = json.loads((dest / "result.json").read_text())
    for key in ("trial_name", "rollout_name"):
        if key in doc:
            doc[key] = name
    doc.update(result)
    (dest / "result.json").write_text(json.dumps(doc))
    return dest


def run(pytester: pytest.Pytester, template: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-c", str(TEMPLATES / template), f"--rootdir={pytester.path}", *args)


# --- release gate for training data ----------------------------------------------------------------------------

def test_release_gate_passes_only_clean_repeatable_runs(pytester: pytest.Pytester) -> None:
    root = pytester.path / "data"
    for i in (1, 2):
        copy_trial(CLEAN, root, f"csv-stats__Clean0{i}", source="tasks-no-skills")
    ok = run(pytester, "release_gate.ini", "--trajaudit=data")
    assert ok.ret == 0, ok.stdout.str()
    summary = pytester.path / "trajaudit-gate" / "summary.json"
    manifest = subprocess.run([sys.executable, str(TEMPLATES / "release_gate_manifest.py"), str(summary)],
                              capture_output=True, text=True)
    assert manifest.returncode == 0
    assert manifest.stdout.split() == ["data/csv-stats__Clean01", "data/csv-stats__Clean02"]


def test_release_gate_turns_any_warn_into_a_failure(pytester: pytest.Pytester) -> None:
    root = pytester.path / "data"
    copy_trial(CLEAN, root, "csv-stats__Clean01", source="tasks-no-skills")
    copy_trial(STRUGGLE, root, "tictoc__Struggle01")  # P8 WARN (struggle) on a failed run
    result = run(pytester, "release_gate.ini", "--trajaudit=data")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["FAILED data/tictoc__Struggle01/result.json::P8 - *WARN as error*"])
    manifest = subprocess.run([sys.executable, str(TEMPLATES / "release_gate_manifest.py"),
                               str(pytester.path / "trajaudit-gate" / "summary.json")], capture_output=True, text=True)
    assert manifest.stdout.split() == ["data/csv-stats__Clean01"]  # the struggling run (WARN) is not shipped


def test_release_gate_fails_a_flaky_task_group(pytester: pytest.Pytester) -> None:
    root = pytester.path / "data"
    copy_trial(CLEAN, root, "csv-stats__Clean01", source="tasks-no-skills")
    copy_trial(CLEAN, root, "csv-stats__Clean02", source="tasks-no-skills", reward=0.0)
    result = run(pytester, "release_gate.ini", "--trajaudit=data", "-m", "PASSK")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["FAILED data/csv-stats__Clean01/result.json::csv-stats::PASSK - PASSK: *"])
    [group] = json.loads((pytester.path / "trajaudit-gate" / "summary.json").read_text())["groups"]
    assert group["status"] == "FAIL"
    assert "pass^2 = 0 (1/2 trials delivered) [flaky: some trials delivered]" in group["evidence"]
    manifest = subprocess.run([sys.executable, str(TEMPLATES / "release_gate_manifest.py"),
                               str(pytester.path / "trajaudit-gate" / "summary.json")], capture_output=True, text=True)
    assert manifest.returncode == 1 and manifest.stdout == ""  # only the group ran: no job record to ship


# --- SkillsBench-style PR review -------------------------------------------------------------------------------

def test_skillsbench_pr_review_writes_the_report_and_rejects_a_cheat(pytester: pytest.Pytester) -> None:
    jobs = pytester.path / "jobs"
    for i in (1, 2, 3):
        copy_trial(CLEAN, jobs / "with-skills", f"csv-stats__W{i}", source="tasks")
        copy_trial(CLEAN, jobs / "no-skills", f"csv-stats__N{i}", source="tasks-no-skills",
                   reward=0.0 if i < 3 else 1.0)
    clean = run(pytester, "skillsbench_pr_review.ini", "--trajaudit=jobs", "-m", "not SB-1")
    out = clean.stdout.str()
    assert clean.ret == 0, out
    assert "PR verdict: APPROVE WITH CAVEATS" in out  # no oracle run shipped with the trials
    summary = json.loads((pytester.path / "trajaudit-out" / "summary.json").read_text())
    sb2 = next(g for g in summary["groups"] if g["code"] == "SB-2")
    # the with-skills copies load no skill: helped, but nothing to quote — said, not passed silently
    [impact] = sb2["data"]["skill_impact"].values()
    assert (impact["delta_pp"], impact["outcome"], impact["unlock_quote"]) == (66.7, "helped", None)
    assert sb2["status"] == "WARN" and "helped but no quote" in sb2["evidence"]
    report = (pytester.path / "trajaudit-out" / "report.md").read_text()
    assert "APPROVE WITH CAVEATS" in report
    copy_trial(CHEAT, jobs / "with-skills", "citation-check__C1")
    bad = run(pytester, "skillsbench_pr_review.ini", "--trajaudit=jobs", "-m", "not SB-1")
    assert bad.ret == 1
    assert "PR verdict: REJECT" in bad.stdout.str()


def test_skillsbench_pr_review_requires_three_trials_per_group(pytester: pytest.Pytester) -> None:
    jobs = pytester.path / "jobs"
    for i in (1, 2):
        copy_trial(CLEAN, jobs, f"csv-stats__W{i}", source="tasks")
    result = run(pytester, "skillsbench_pr_review.ini", "--trajaudit=jobs", "-m", "PASSK")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["ERROR jobs/csv-stats__W1/result.json::csv-stats::PASSK - *"])
    assert "PASSK: csv-stats: 2 of 3 trial(s) found" in result.stdout.str()


# --- a principle written by a user ------------------------------------------------------------------------------

def test_custom_principle_plugin_adds_an_item_per_job(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(TEMPLATES / "custom_principle")
    make_job(pytester.path / "runs", "quiet")
    make_job(pytester.path / "runs", "netty", lines=CURL)
    result = run(pytester, "trajaudit.ini", "-p", "trajaudit_network", "--trajaudit=runs", "-m", "ORG-1", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["PASSED runs/quiet/result.json::ORG-1", "FAILED runs/netty/result.json::ORG-1 - *"])
    assert "FAILED runs/netty/result.json::ORG-1 - ORG-1: #1 Bash: curl" in result.stdout.str()
    listed = run(pytester, "trajaudit.ini", "-p", "trajaudit_network", "--trajaudit=runs", "--co", "-q",
                 "--trajaudit-principles=ORG-1")
    assert [ln for ln in listed.outlines if "::" in ln] == ["runs/netty/result.json::ORG-1",
                                                            "runs/quiet/result.json::ORG-1"]
    # a plugin's principles belong to the session that loaded it: a later run without -p has no ORG-1
    without = run(pytester, "trajaudit.ini", "--trajaudit=runs", "--co", "-q", "-m", "ORG-1")
    assert not [ln for ln in without.outlines if "::" in ln]
