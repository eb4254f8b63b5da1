"""Plugin behaviour through pytester: items, outcomes, selection, reports, xdist, CLI."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.cli import build_args
from pytest_trajaudit.principles import registry
from pytest_trajaudit.report import schema as schema_mod

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "runs"
N_PRINCIPLES = len(registry())
SCHEMA_DIR = Path(schema_mod.__file__).resolve().parent.parent / "schemas"


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    dst = pytester.path / "runs"
    shutil.copytree(EXAMPLES, dst)
    return dst


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_examples_outcomes_and_verdicts(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs")
    # 3 jobs × every principle; the cheating job fails P1 and P2
    result.assert_outcomes(failed=2, passed=20, skipped=1, xfailed=4)
    assert result.stdout.str().count("TrajauditWarning:") == 4
    result.stdout.fnmatch_lines([
        "*trajaudit verdicts*",
        "3 job(s): 1 CLEAN, 1 WARN, 1 INVALID",
        "INVALID runs/benchflow/citation-check__Cheat01: P1 FAIL: *successful read of '/oracle/expected_answer.json'*then passed*",
        "WARN    runs/benchflow/tictoc__Struggle01: P8 WARN: struggle*",
    ])
    assert result.ret == 1


def test_item_node_ids_and_markers(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--co", "-q")
    ids = [ln for ln in result.stdout.lines if "::" in ln]
    assert len(ids) == 3 * N_PRINCIPLES
    assert "runs/harbor-job/csv-stats__Clean01/result.json::P1" in ids
    assert "runs/benchflow/tictoc__Struggle01/result.json::P15" in ids


@pytest.mark.parametrize(("args", "expected"), [
    (("-m", "P1"), {"P1"}),
    (("-m", "anticheat"), {"P1", "P2"}),
    (("-m", "c0 and not anticheat"), {"P4", "P6", "P7", "P8", "P10", "P14", "P15"}),
    (("--trajaudit-principles", "P1,P10"), {"P1", "P10"}),
    (("-k", "P1"), {"P1", "P10", "P14", "P15"}),  # -k is a substring match (documented)
])
def test_selection(pytester: pytest.Pytester, runs: Path, args: tuple[str, ...], expected: set[str]) -> None:
    result = _run(pytester, "--trajaudit=runs", "--co", "-q", *args)
    codes = {ln.rsplit("::", 1)[1] for ln in result.stdout.lines if "::" in ln}
    assert codes == expected


def test_positional_node_id_selects_one_item(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "runs/benchflow/citation-check__Cheat01/result.json::P2")
    result.assert_outcomes(failed=1)


def test_unknown_principle_is_usage_error(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-principles", "P99")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown principle code(s) P99*"])


def test_inactive_without_flag(pytester: pytest.Pytester, runs: Path) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = _run(pytester, "test_plain.py")
    result.assert_outcomes(passed=1)
    assert "trajaudit verdicts" not in result.stdout.str()


def test_warn_is_xfail_with_warning_and_can_be_made_strict(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs/benchflow/tictoc__Struggle01", "-rx")
    result.assert_outcomes(passed=6, xfailed=2, skipped=1)
    result.stdout.fnmatch_lines(["*TrajauditWarning*P8: struggle*"])
    strict = _run(pytester, "--trajaudit=runs/benchflow/tictoc__Struggle01",
                  "-W", "error::pytest_trajaudit.nodes.TrajauditWarning")
    strict.assert_outcomes(passed=6, failed=2, skipped=1)


def test_report_dir_schema_valid(pytester: pytest.Pytester, runs: Path) -> None:
    out = pytester.path / "out"
    _run(pytester, "--trajaudit=runs", f"--trajaudit-report={out}")
    summary = json.loads((out / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))
    assert summary["verdicts"]["CLEAN"] == 1 and summary["verdicts"]["INVALID"] == 1
    audit_schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    audits = sorted(out.glob("jobs/**/audit-*.json"))
    assert len(audits) == 3
    for p in audits:
        doc = json.loads(p.read_text())
        jsonschema.validate(doc, audit_schema)
    clean = json.loads(next(out.glob("jobs/runs/harbor-job/csv-stats__Clean01/audit-*.json")).read_text())
    assert clean["verdict"] == "CLEAN" and clean["reward"] == 1.0 and clean["failure_bucket"] == "passed"
    assert clean["tool_breakdown"]["total"] == 5
    assert clean["verbatim_final"].startswith("Wrote /app/out.json with mean 4.0")
    assert clean["config"] == "claude-code-skills"


def test_shipped_schemas_are_current() -> None:
    for name in schema_mod.SCHEMAS:
        assert (SCHEMA_DIR / name).read_text() == schema_mod.render(name), f"regenerate {name}"


def test_junit_has_verdict_properties(pytester: pytest.Pytester, runs: Path) -> None:
    _run(pytester, "--trajaudit=runs", "--junitxml=audit.xml")
    xml = (pytester.path / "audit.xml").read_text()
    assert 'name="trajaudit.verdict:runs/benchflow/citation-check__Cheat01" value="INVALID"' in xml
    assert 'type="pytest.xfail"' in xml  # WARN items


def test_xdist_same_outcomes_and_one_parse_per_job(pytester: pytest.Pytester, runs: Path) -> None:
    pytest.importorskip("xdist")
    serial = _run(pytester, "--trajaudit=runs", "--trajaudit-report=o0")
    par = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=o2", "-n", "2")
    def drop_warnings(d: dict[str, int]) -> dict[str, int]:
        return {k: v for k, v in d.items() if k != "warnings"}

    assert drop_warnings(serial.parseoutcomes()) == drop_warnings(par.parseoutcomes())
    s0 = json.loads((pytester.path / "o0/summary.json").read_text())
    s2 = json.loads((pytester.path / "o2/summary.json").read_text())
    assert s0 == s2
    assert all(j["loads"] == 1 for j in s2["jobs"]), s2["jobs"]


def test_cli_args_are_safe(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    args = build_args([str(tmp_path / "runs")], ["-q"], cwd=tmp_path)
    assert args[0] == "-c" and args[1].endswith("safe.ini")
    assert f"--rootdir={tmp_path}" in args and "no:cacheprovider" in args
    assert f"--trajaudit={tmp_path / 'runs'}" in args
    inside = build_args([str(tmp_path)], [], cwd=tmp_path / "runs")  # cwd inside the audited tree
    assert f"--rootdir={tmp_path.parent}" in inside


def test_cli_runs_examples(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.run(sys.executable, "-m", "pytest_trajaudit.cli", str(runs), "--", "-q")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["3 job(s): 1 CLEAN, 1 WARN, 1 INVALID"])
