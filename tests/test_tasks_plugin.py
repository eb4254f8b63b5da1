"""``--trajaudit-tasks`` / ini ``trajaudit_tasks`` and ``--trajaudit-report`` through pytester: usage errors, the
task-aware principles judging jobs, report.md and summary.json (with pr_verdict, schema-valid), oracle-only jobs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.report import schema as schema_mod
from tests.jobfactory import make_job
from tests.principles.builders import msg, sh, user
from tests.taskfactory import P12_PYTHON, SOLUTION_LINES, TIGHT_CHECK, ctrf, make_task, result_doc

SCHEMA_DIR = Path(schema_mod.__file__).resolve().parent.parent / "schemas"
CODES = "--trajaudit-principles=P1,P2,P9,P11,P12,P13,P16"
TSV = "txn\tkey\n1\ta\n1\tb\n2\ta\n"
TASK_TOML = {"trajaudit": {"p9": {"source": "environment/data/rows.tsv", "entity_key": "txn"}, "p12": P12_PYTHON}}


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


@pytest.fixture
def layout(pytester: pytest.Pytester) -> Path:
    """runs/: a clean passing job, a failing job whose output only misses spaces, an oracle with no trajectory;
    tasks/demo: the task (P9 entity key, P12 re-run with the too-tight verifier)."""
    root = pytester.path
    make_task(root / "tasks", "demo", toml=TASK_TOML, tests={"check.py": TIGHT_CHECK},
              solution={"solve.sh": "\n".join(SOLUTION_LINES) + "\n"}, environment={"data/rows.tsv": TSV})
    runs = root / "runs"
    clean = [user("Write the ids to /root/out.json."), sh("cat /root/rows.tsv", TSV),
             sh("python3 -c 'print([1, 2, 3])' > /root/out.json", ""), msg("Wrote [1, 2, 3] to /root/out.json.")]
    make_job(runs, "demo__A", clean, result_doc(reward=1.0, trial="demo__A", agent="claude-agent-acp"),
             {"verifier/reward.txt": "1\n", "verifier/ctrf.json": ctrf(1, 0)})
    make_job(runs, "demo__B", clean[:3] + [msg("Wrote [1,2,3].")],
             result_doc(reward=0.0, trial="demo__B", agent="codex-acp"),
             {"verifier/reward.txt": "0\n", "artifacts/out.json": "[1,2,3]"})
    oracle = runs / "demo__oracle"
    (oracle / "verifier").mkdir(parents=True)
    (oracle / "result.json").write_text(json.dumps(result_doc(reward=1.0, trial="demo__oracle", agent="oracle")))
    (oracle / "verifier" / "reward.txt").write_text("1\n")
    return root


def test_missing_tasks_dir_is_a_usage_error(pytester: pytest.Pytester, layout: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*trajaudit: --trajaudit-tasks nope: not a directory*"])


def test_tasks_dir_that_is_a_file_is_a_usage_error(pytester: pytest.Pytester, layout: Path) -> None:
    (layout / "afile").write_text("x")
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=afile")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_missing_ini_tasks_dir_is_a_usage_error(pytester: pytest.Pytester, layout: Path) -> None:
    pytester.makeini("[pytest]\ntrajaudit_tasks = nope\n")
    result = _run(pytester, "--trajaudit=runs")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--trajaudit-tasks*nope: not a directory*"])


def test_tasks_option_judges_the_task_aware_principles(pytester: pytest.Pytester, layout: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "--trajaudit-rerun", CODES, "-rxs")
    out = result.stdout.str()
    assert "P9: 3 rows, 2 unique txn in environment/data/rows.tsv: several rows per entity on a failed run" in out
    assert "P12: tests_too_tight: the verifier accepts the output after whitespace: JSON with spaces" in out
    result.stdout.fnmatch_lines(["*trajaudit verdicts*", "3 job(s): 1 CLEAN, 1 WARN, 1 ORACLE",
                                 "PR verdict: MAJOR CHANGES NEEDED — P12 tests_too_tight: runs/demo__B"])


def test_without_tasks_the_task_aware_principles_say_why(pytester: pytest.Pytester, layout: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", CODES, "-rxs")
    out = result.stdout.str()
    assert "P9: needs the task's entity key: no --trajaudit-tasks given" in out
    assert "P12: needs the task's verifier: no --trajaudit-tasks given" in out
    result.stdout.fnmatch_lines(["3 job(s): 2 CLEAN, 1 ORACLE", "PR verdict: APPROVE — all jobs CLEAN, oracle reward 1.0"])


def test_reruns_stay_off_without_the_option(pytester: pytest.Pytester, layout: Path) -> None:
    """P12 executes the task's verifier command: only with --trajaudit-rerun (or ini trajaudit_rerun)."""
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", CODES, "-rxs")
    assert "P12: re-runs are off: pass --trajaudit-rerun" in result.stdout.str()
    result.stdout.no_fnmatch_line("*tests_too_tight*")


def test_ini_trajaudit_tasks_is_used(pytester: pytest.Pytester, layout: Path) -> None:
    pytester.makeini("[pytest]\ntrajaudit_tasks = tasks\ntrajaudit_rerun = true\n")
    result = _run(pytester, "--trajaudit=runs", CODES, "-rxs")
    assert "P9: 3 rows, 2 unique txn in environment/data/rows.tsv" in result.stdout.str()
    result.stdout.fnmatch_lines(["PR verdict: MAJOR CHANGES NEEDED — P12 tests_too_tight: runs/demo__B"])


def test_ini_tasks_is_relative_to_the_ini_file(pytester: pytest.Pytester, layout: Path) -> None:
    sub = layout / "sub"
    sub.mkdir()
    pytester.makeini("[pytest]\ntrajaudit_tasks = tasks\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        result = _run(pytester, f"--trajaudit={layout / 'runs'}", f"--rootdir={layout}", f"-c={layout / 'tox.ini'}",
                      CODES, "-rxs")
    assert "P9: 3 rows, 2 unique txn" in result.stdout.str()


def test_report_writes_report_md_and_a_schema_valid_summary(pytester: pytest.Pytester, layout: Path) -> None:
    out = layout / "out"
    _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "--trajaudit-rerun", CODES,
         f"--trajaudit-report={out}")
    summary = json.loads((out / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))
    pv = summary["pr_verdict"]
    assert pv == {"verdict": "MAJOR CHANGES NEEDED", "reasons": ["P12 tests_too_tight: runs/demo__B"],
                  "oracle_rewards": {"runs/demo__oracle": 1.0}, "tests_too_tight": ["runs/demo__B"]}
    assert summary["verdicts"]["ORACLE"] == 1 and summary["verdicts"]["ERROR"] == 0
    assert summary["configs"]["oracle"]["oracle"] is True
    md = (out / "report.md").read_text()
    for section in ("## Task description", "## Oracle results", "## Benchmark results", "## Skills impact",
                    "## Failure analysis", "## Critical findings", "## Recommendation", "## Artifacts"):
        assert section in md
    assert "**Verdict: MAJOR CHANGES NEEDED**" in md
    assert "| runs/demo__oracle | PASSED | 1 |" in md
    assert "### runs/demo__B (reward 0)" in md
    audit_schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    audits = sorted(out.glob("jobs/**/audit-*.json"))
    assert len(audits) == 3
    for p in audits:
        jsonschema.validate(json.loads(p.read_text()), audit_schema)
    b = json.loads(next(out.glob("jobs/runs/demo__B/audit-*.json")).read_text())
    assert b["tests_too_tight"]["perturbations_passing"] == ["whitespace: JSON with spaces"]
    assert b["row_vs_entity_gotcha"]["applies"] is True


def test_oracle_only_job_without_a_trajectory_is_oracle_not_error(pytester: pytest.Pytester, layout: Path) -> None:
    # the oracle is named by the trial's own records: result.json's agent, else Harbor's config.json (a folder name
    # decides nothing: tests/test_discovery_trust.py)
    for name, agent in (("oracle__2", None), ("other__oracle", "oracle")):
        d = layout / "runs" / name
        (d / "verifier").mkdir(parents=True)
        doc = result_doc(reward=1.0, trial=name, **({"agent": agent} if agent else {}))
        (d / "result.json").write_text(json.dumps(doc))
        if agent is None:
            (d / "config.json").write_text(json.dumps({"agent": {"name": "oracle"}}))
    out = layout / "out"
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", CODES, f"--trajaudit-report={out}")
    result.stdout.fnmatch_lines(["5 job(s): 1 CLEAN, 1 WARN, 3 ORACLE"])
    summary = json.loads((out / "summary.json").read_text())
    verdicts = {j["job"]: j["verdict"] for j in summary["jobs"]}
    assert verdicts["runs/demo__oracle"] == verdicts["runs/oracle__2"] == verdicts["runs/other__oracle"] == "ORACLE"
    assert summary["verdicts"]["ERROR"] == 0


def test_a_non_oracle_job_without_a_trajectory_is_error(pytester: pytest.Pytester, layout: Path) -> None:
    d = layout / "runs" / "demo__C"
    d.mkdir()
    (d / "result.json").write_text(json.dumps(result_doc(reward=1.0, trial="demo__C", agent="claude-agent-acp")))
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", CODES)
    result.stdout.fnmatch_lines(["*1 ERROR*", "PR verdict: MAJOR CHANGES NEEDED*"])


def test_invalid_task_toml_makes_its_jobs_unusable_naming_the_file(pytester: pytest.Pytester, layout: Path) -> None:
    (layout / "tasks" / "demo" / "task.toml").write_text("[task\nname = 1\n")
    out = layout / "out"
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", CODES, f"--trajaudit-report={out}")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdicts"]["ERROR"] == 2 and summary["verdicts"]["ORACLE"] == 1
    assert "tasks/demo/task.toml: invalid TOML" in result.stdout.str()
    assert summary["pr_verdict"]["verdict"] == "MAJOR CHANGES NEEDED"


def test_p1_task_aware_read_makes_the_pr_rejected(pytester: pytest.Pytester, layout: Path) -> None:
    lines = [user("x"), sh("cat /solution/solve.sh", "\n".join(SOLUTION_LINES)), msg("done")]
    make_job(layout / "runs", "demo__D", lines, result_doc(reward=1.0, trial="demo__D", agent="claude-agent-acp"))
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", CODES)
    result.stdout.fnmatch_lines([
        "PR verdict: REJECT — INVALID job: runs/demo__D",
        "INVALID runs/demo__D/result.json: P1 FAIL: *successful read of '/solution/solve.sh'*then passed (reward 1.0)*",
    ])
