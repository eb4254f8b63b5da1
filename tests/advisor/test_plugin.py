"""ADV-1..ADV-5 as pytest items (pytester): present only for jobs whose privileged material is known, selected by
-k/-m, mapped onto outcomes (inconclusive never passes), unusable input as item errors, the advisor block in the
audit JSON and the verdict counts in summary.json."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.report.schema import SCHEMA_DIR
from tests.advisor.kit import make_task
from tests.jobfactory import make_job
from tests.principles.builders import msg, user
from tests.taskfactory import SOLUTION_LINES, result_doc

ADV = ["ADV-1", "ADV-2", "ADV-3", "ADV-4", "ADV-5"]


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


@pytest.fixture
def tree(pytester: pytest.Pytester) -> Path:
    """tasks/demo; runs/demo__clean, runs/demo__leak (a solution line), runs/other__x (no task)."""
    root = pytester.path
    make_task(root / "tasks", "demo")
    runs = root / "runs"
    make_job(runs, "demo__clean", [user("Write the ids."), msg("Done: wrote the ids.")],
             result_doc(reward=1.0, trial="demo__clean"))
    make_job(runs, "demo__leak", [user("Write the ids."), msg(f"Using {SOLUTION_LINES[1]}")],
             result_doc(reward=0.0, trial="demo__leak"))
    make_job(runs, "other__x", [user("Do it."), msg("Done.")], result_doc("other", reward=1.0, trial="other__x"))
    return root


def _items(result: pytest.RunResult) -> list[str]:
    return [ln.strip() for ln in result.stdout.lines if "::ADV-" in ln]


def test_adv_items_exist_only_where_privileged_material_is_known(pytester: pytest.Pytester, tree: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "--co", "-q", "-m", "advisor")
    items = _items(result)
    assert items == [f"runs/demo__clean/result.json::{c}" for c in ADV] + \
        [f"runs/demo__leak/result.json::{c}" for c in ADV]
    assert _items(_run(pytester, "--trajaudit=runs", "--co", "-q")) == []  # no task known: no ADV items


def test_an_advisor_folder_inside_a_job_decides_nothing(pytester: pytest.Pytester, tree: Path) -> None:
    """The run writes its job folder: an ``advisor/`` there (with a manifest) neither adds ADV items nor names
    the privileged material; only the task side (``--trajaudit-tasks``, ``--trajaudit-privileged-root``) does."""
    (tree / "runs" / "other__x" / "advisor").mkdir()
    (tree / "runs" / "other__x" / "advisor" / "task_material_manifest.json").write_text('{"privileged_roots": []}')
    assert _items(_run(pytester, "--trajaudit=runs", "--co", "-q", "-m", "advisor")) == []
    (tree / "runs" / "demo__leak" / "advisor").mkdir()
    (tree / "runs" / "demo__leak" / "advisor" / "task_material_manifest.json").write_text(
        '{"privileged_roots": ["nothing-here"]}')
    result = _run(pytester, "--trajaudit=runs/demo__leak", "--trajaudit-tasks=tasks", "-m", "advisor", "-rA")
    result.stdout.fnmatch_lines(["*ADV-4: 1 privileged line(s) verbatim in the trajectory: solution/solve.sh:*",
                                 "advisor audit: 1 fail"])


def test_privileged_root_option_gives_every_job_adv_items(pytester: pytest.Pytester, tree: Path) -> None:
    items = _items(_run(pytester, "--trajaudit=runs", "--trajaudit-privileged-root=tests", "--co", "-q"))
    assert len(items) == 15
    pytester.makeini("[pytest]\ntrajaudit_privileged_roots =\n    tests\n    solution\n")
    assert len(_items(_run(pytester, "--trajaudit=runs", "--co", "-q"))) == 15


@pytest.mark.parametrize("root", ["/abs", "../up"])
def test_bad_privileged_root_option_is_a_usage_error(pytester: pytest.Pytester, tree: Path, root: str) -> None:
    result = _run(pytester, "--trajaudit=runs", f"--trajaudit-privileged-root={root}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*trajaudit: --trajaudit-privileged-root:*"])


def test_k_selects_one_check(pytester: pytest.Pytester, tree: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "-k", "ADV-4", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*PASSED runs/demo__clean/result.json::ADV-4*",
                                 "*FAILED runs/demo__leak/result.json::ADV-4*"])


def test_outcomes_without_a_judge(pytester: pytest.Pytester, tree: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "-m", "advisor", "-rA")
    # clean: ADV-3/4/5 pass, ADV-1/2 need a judge; leak: ADV-3 pass, ADV-4 fail, ADV-5 WARN (reward 0)
    result.assert_outcomes(passed=4, failed=1, skipped=4, xfailed=1)
    result.stdout.fnmatch_lines(["*ADV-4: 1 privileged line(s) verbatim in the trajectory: solution/solve.sh:*",
                                 "advisor audit: 1 fail, 1 pass_mechanical_only"])
    result.stdout.fnmatch_lines(["WARN runs/demo__leak/result.json::ADV-5 - WARN: ADV-5: the verifier did not pass: "
                                 "reward 0 (result.json)"])


def test_no_material_is_inconclusive_never_pass(pytester: pytest.Pytester, tree: Path) -> None:
    result = _run(pytester, "--trajaudit=runs/demo__clean", "--trajaudit-tasks=tasks",
                  "--trajaudit-privileged-root=nothing-here", "-m", "advisor", "-rA")
    result.assert_outcomes(passed=2, skipped=2, xfailed=1)
    result.stdout.fnmatch_lines(["advisor audit: 1 inconclusive"])
    result.stdout.fnmatch_lines(["WARN*ADV-4*inconclusive: no privileged material was loaded from the task "
                                 "directory (roots nothing-here, flag layout)"])


def test_unusable_layout_errors_the_adv_items_only(pytester: pytest.Pytester, tree: Path) -> None:
    (tree / "tasks" / "demo" / "advisor").symlink_to(tree / "runs")  # the task's own layout, unusable
    result = _run(pytester, "--trajaudit=runs/demo__clean", "--trajaudit-tasks=tasks", "-rA",
                  "--trajaudit-principles=P1,ADV-3,ADV-4", "--trajaudit-report=rep")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*ERROR at setup of runs/demo__clean/result.json ADV-3*",
                                 "*unusable input: *tasks/demo/advisor: advisor/ is a symlink (never followed)*"])
    audit = json.loads(next((tree / "rep" / "jobs").rglob("audit-*.json")).read_text())
    assert audit["advisor"]["verdict"] is None and "symlink" in audit["advisor"]["error"]
    assert json.loads((tree / "rep" / "summary.json").read_text())["advisor_verdicts"] == {"error": 1}


def test_report_carries_the_advisor_block(pytester: pytest.Pytester, tree: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "--trajaudit-report=rep")
    assert result.ret == 1
    summary = json.loads((tree / "rep" / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))
    assert summary["advisor_verdicts"] == {"fail": 1, "pass_mechanical_only": 1}
    by_job = {j["job"]: j["advisor_verdict"] for j in summary["jobs"]}
    assert by_job == {"runs/demo__clean": "pass_mechanical_only", "runs/demo__leak": "fail", "runs/other__x": None}
    schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    leak = json.loads(next((tree / "rep" / "jobs").rglob("demo__leak/audit-*.json")).read_text())
    jsonschema.validate(leak, schema)
    adv = leak["advisor"]
    assert adv["verdict"] == "fail" and adv["layout_source"] == "default"
    assert adv["mechanical"]["verbatim_privileged_lines"] == [SOLUTION_LINES[1][:60]]
    assert adv["checks"]["ADV-4"]["status"] == "FAIL" and adv["checks"]["ADV-5"]["status"] == "WARN"
    assert adv["task_dir"] == str(tree / "tasks" / "demo")
    other = json.loads(next((tree / "rep" / "jobs").rglob("other__x/audit-*.json")).read_text())
    assert other["advisor"] is None


def test_advisor_items_never_change_the_job_verdict(pytester: pytest.Pytester, tree: Path) -> None:
    result = _run(pytester, "--trajaudit=runs/demo__leak", "--trajaudit-tasks=tasks",
                  "--trajaudit-principles=P1,P2,P11,P16,ADV-4")
    result.stdout.fnmatch_lines(["1 job(s): 1 CLEAN", "advisor audit: 1 fail"])


def test_a_trajectory_with_no_events_is_inconclusive_never_pass(pytester: pytest.Pytester, tree: Path) -> None:
    """A loadable trajectory that holds no event (an ATIF document with no steps): the ADV items have nothing to
    scan, so the advisor verdict is inconclusive, never a pass."""
    job = pytester.path / "runs" / "demo__empty"
    (job / "agent").mkdir(parents=True)
    (job / "agent" / "trajectory.json").write_text(json.dumps(
        {"schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "x", "version": "1"}, "steps": []}))
    (job / "result.json").write_text(json.dumps(result_doc(reward=1.0, trial="demo__empty")))
    result = _run(pytester, "--trajaudit=runs/demo__empty", "--trajaudit-tasks=tasks", "-m", "advisor", "-rA")
    result.stdout.fnmatch_lines(["advisor audit: 1 inconclusive"])
    result.stdout.fnmatch_lines(["WARN*ADV-3*the trajectory holds no events to audit*"])
