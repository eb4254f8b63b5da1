"""Plugin behaviour through pytester: items, outcomes, selection, reports, xdist, CLI."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.cli.main import build_args
from pytest_trajaudit.principles import registry
from pytest_trajaudit.report import schema as schema_mod

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "runs"
TASKS = EXAMPLES.parent / "tasks"
# ADV items exist only for jobs whose privileged material is known (none of the examples without --trajaudit-tasks)
N_PRINCIPLES = sum(1 for p in registry().values() if p.family != "advisor")
# the general layer's codes: outcome counts below are pinned to these, so adding a family does not move them
GENERAL = "--trajaudit-principles=" + ",".join(f"P{i}" for i in range(1, 17))
SCHEMA_DIR = Path(schema_mod.__file__).resolve().parent.parent / "schemas"


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    dst = pytester.path / "runs"
    shutil.copytree(EXAMPLES, dst)
    shutil.copytree(TASKS, pytester.path / "tasks")
    return dst


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_examples_outcomes_and_verdicts(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", GENERAL)
    # 4 jobs (one oracle: 16 skips) × P1..P16; the cheating job fails P1 and P2
    result.assert_outcomes(failed=2, passed=28, skipped=29, xfailed=5)
    assert result.stdout.str().count("TrajauditWarning:") == 5
    result.stdout.fnmatch_lines([
        "*trajaudit verdicts*",
        "4 job(s): 1 CLEAN, 1 WARN, 1 INVALID, 1 ORACLE",
        "PR verdict: REJECT — INVALID job: runs/benchflow/citation-check__Cheat01",
        "INVALID runs/benchflow/citation-check__Cheat01/result.json: P1 FAIL: *successful read of "
        "'/oracle/expected_answer.json'*then passed*",
        "WARN    runs/benchflow/tictoc__Struggle01/result.json: P8 WARN: struggle*",
    ])
    assert result.ret == 1


def test_examples_with_tasks(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "--trajaudit-rerun", GENERAL, "-rxs")
    # the task dir makes P9 (rows per entity), P5 (its saved output holds the expected ids in another shape) and,
    # with re-runs on, P12 (tests too tight) judge the struggling run
    result.assert_outcomes(failed=2, passed=27, skipped=27, xfailed=8)
    out = result.stdout.str()
    assert "P9: 5 rows, 3 unique txn in environment/data/aborts.tsv: several rows per entity" in out
    assert "P12: tests_too_tight: the verifier accepts the output after whitespace: JSON with spaces" in out
    assert "P13: the task's verifier does not call an LLM" in out


def test_item_node_ids_and_markers(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--trajaudit=runs", "--co", "-q")
    ids = [ln for ln in result.stdout.lines if "::" in ln]
    assert len(ids) == 4 * N_PRINCIPLES + 2  # + the tictoc task group's PASSK and SB-2 (oracle + one trial)
    assert ids[-2:] == ["runs/benchflow/tictoc__Struggle01/result.json::tictoc::PASSK",
                        "runs/benchflow/tictoc__Struggle01/result.json::tictoc::SB-2"]
    assert "runs/harbor-job/csv-stats__Clean01/result.json::P1" in ids
    assert "runs/benchflow/tictoc__Struggle01/result.json::P15" in ids


@pytest.mark.parametrize(("args", "expected"), [
    (("-m", "P1"), {"P1"}),
    (("-m", "anticheat"), {"P1", "P2", "P16"}),
    (("-m", "c0 and general"), {"P4", "P6", "P7", "P8", "P9", "P10", "P11", "P14", "P15"}),
    (("-m", "c1"), {"P5", "P12"}),
    (("--trajaudit-principles", "P1,P10"), {"P1", "P10"}),
    (("-k", "P1"), {"P1", "P10", "P11", "P12", "P13", "P14", "P15", "P16"}),  # -k is a substring match (documented)
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
    job = "--trajaudit=runs/benchflow/tictoc__Struggle01"
    result = _run(pytester, job, GENERAL, "-rx")
    result.assert_outcomes(passed=9, xfailed=2, skipped=5)
    result.stdout.fnmatch_lines(["*TrajauditWarning*P8: struggle*"])
    strict = _run(pytester, job, GENERAL, "-W", "error::pytest_trajaudit.TrajauditWarning")
    strict.assert_outcomes(passed=9, failed=2, skipped=5)


def test_report_dir_schema_valid(pytester: pytest.Pytester, runs: Path) -> None:
    out = pytester.path / "out"
    _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "--trajaudit-rerun", f"--trajaudit-report={out}")
    summary = json.loads((out / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))
    assert summary["verdicts"]["CLEAN"] == 1 and summary["verdicts"]["INVALID"] == 1
    audit_schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    audits = sorted(out.glob("jobs/**/audit-*.json"))
    assert len(audits) == 4
    for p in audits:
        doc = json.loads(p.read_text())
        jsonschema.validate(doc, audit_schema)
    clean = json.loads(next(out.glob("jobs/runs/harbor-job/csv-stats__Clean01/audit-*.json")).read_text())
    assert clean["verdict"] == "CLEAN" and clean["reward"] == 1.0 and clean["failure_bucket"] == "passed"
    assert clean["tool_breakdown"]["total"] == 5
    assert clean["verbatim_final"].startswith("Wrote /app/out.json with mean 4.0")
    assert clean["config"] == "claude-code-skills"
    struggle = json.loads(next(out.glob("jobs/runs/benchflow/tictoc__Struggle01/audit-*.json")).read_text())
    assert struggle["tests_too_tight"]["perturbations_passing"] == ["whitespace: JSON with spaces"]
    assert struggle["row_vs_entity_gotcha"]["applies"] is True
    assert struggle["format_vs_reasoning"] == "format_loss"  # [1,2,3] saved where the verifier wants "[1, 2, 3]"
    assert summary["pr_verdict"]["verdict"] == "REJECT"
    assert summary["configs"]["oracle"]["rewards"] == [1.0]
    md = (out / "report.md").read_text()
    assert "**Verdict: REJECT**" in md and "## Failure analysis" in md and "tictoc__Struggle01 (reward 0.1)" in md


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
    result = pytester.run(sys.executable, "-m", "pytest_trajaudit.cli.main", str(runs), "--", "-q")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["4 job(s): 1 CLEAN, 1 WARN, 1 INVALID, 1 ORACLE"])


def test_readme_quick_start(pytester: pytest.Pytester) -> None:
    """The README's quick start output, from the bundled examples as shipped (keep the README in sync)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("Add `--trajaudit-report", 1)[0]
    expected = [ln.strip() for ln in block.splitlines() if ln.startswith("    ") and "pip install" not in ln]
    examples = Path(__file__).resolve().parent.parent / "examples"
    result = pytester.runpytest(f"--trajaudit={examples / 'runs'}", f"--trajaudit-tasks={examples / 'tasks'}",
                                "-p", "no:cacheprovider", "-p", "no:randomly")
    assert result.ret == 1
    # a verdict line names the job by its node id, relative to the rootdir: here pytester's, in the README the
    # repository's
    out = [re.sub(r"^([A-Z]+ +)\S*?examples/runs/", r"\1examples/runs/", ln.strip()) for ln in result.outlines]
    for line in expected:
        if line.startswith("=") and " in " in line:  # the counts line: compare without the duration
            counts = line.strip("= ").rsplit(" in ", 1)[0]
            assert any(o.strip("= ").rsplit(" in ", 1)[0] == counts for o in out), (counts, out[-3:])
        elif line.startswith("FAILED "):
            node = line.split()[1].removeprefix("examples/runs/")
            assert any(o.startswith("FAILED ") and o.split()[1].endswith(node) for o in out), line
        elif "…" in line:
            assert any(o.startswith(line.split("…", 1)[0].rstrip()) for o in out), line
        elif not line.startswith("="):
            assert line in out, line


def test_junit_and_ctrf_carry_each_items_status_and_evidence(pytester: pytest.Pytester, runs: Path) -> None:
    """CI reports, parsed: every audit testcase has its status and evidence, whatever its outcome."""
    import xml.etree.ElementTree as ET

    pytest.importorskip("ctrf")
    _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "--trajaudit-rerun", GENERAL, "--junitxml=audit.xml",
         "--ctrf=ctrf.json")
    root = ET.parse(pytester.path / "audit.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 4 * 16
    by_name = {}
    for c in cases:
        assert c.find("properties") is None  # JUnit allows properties on the testsuite only
        out = c.find("system-out").text
        status = out.removeprefix("trajaudit: ").split(" ", 1)[0]
        assert status in ("PASS", "WARN", "FAIL", "N/A"), out
        by_name[(c.get("classname"), c.get("name"))] = (status, out, c)
    status, out, case = next(v for k, v in by_name.items() if "Cheat01" in k[0] and k[1] == "P1")
    assert status == "FAIL" and "/oracle/expected_answer.json" in out and case.find("failure") is not None
    status, out, case = next(v for k, v in by_name.items() if "Clean01" in k[0] and k[1] == "P7")
    assert status == "PASS" and out.startswith("trajaudit: PASS P7: 5 tool calls")
    status, out, case = next(v for k, v in by_name.items() if "Struggle01" in k[0] and k[1] == "P12")
    assert status == "WARN" and "tests_too_tight" in out
    assert case.find("skipped").get("message").startswith("WARN: P12: ")
    status, out, case = next(v for k, v in by_name.items() if "Clean01" in k[0] and k[1] == "P5")
    assert status == "N/A" and case.find("skipped").get("message").startswith("N/A: P5: ")

    doc = json.loads((pytester.path / "ctrf.json").read_text())
    tests = doc["results"]["tests"]
    assert len(tests) == 4 * 16
    assert all(t["extra"]["trajaudit"]["status"] in ("PASS", "WARN", "FAIL", "N/A") for t in tests)
    p1 = next(t for t in tests if t["name"].endswith("Cheat01/result.json::P1"))
    assert p1["status"] == "failed" and p1["extra"]["trajaudit"]["status"] == "FAIL"
    warn = [t for t in tests if t["extra"]["trajaudit"]["status"] == "WARN"]
    assert warn and all(t["status"] == "other" for t in warn)  # CTRF: WARN is "other", N/A stays "skipped"
    assert all(t["status"] == "skipped" for t in tests if t["extra"]["trajaudit"]["status"] == "N/A")
    assert doc["results"]["summary"]["other"] == len(warn)
    assert "/oracle/expected_answer.json" in p1["extra"]["trajaudit"]["evidence"]
    assert doc["results"]["extra"]["trajaudit"]["pr_verdict"] == "REJECT"
    assert doc["results"]["extra"]["trajaudit"]["verdicts"]["runs/benchflow/tictoc__oracle"] == "ORACLE"


def test_an_empty_audit_root_is_collected_and_says_no_job_found(pytester: pytest.Pytester) -> None:
    """Empty directories are skipped while walking, but a root the user named is always visited (exit 5 with a
    clear line, not pytest's "not found")."""
    (pytester.path / "runs").mkdir()
    result = pytester.runpytest("--trajaudit=runs", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["0 job(s) audited: no job found under *runs*"])
    assert "not found" not in result.stdout.str().replace("no job found", "")


def test_rollup_lives_on_the_controller_for_one_run(pytester: pytest.Pytester, runs: Path) -> None:
    """The roll-up is one plugin object under ROLLUP_KEY, registered at configure and gone after unconfigure."""
    from pytest_trajaudit.adapter.rollup import ROLLUP_KEY, RollupPlugin

    seen: dict[str, object] = {}

    class Probe:
        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session: pytest.Session) -> None:
            seen["during"] = session.config.pluginmanager.get_plugin("trajaudit-rollup")
            seen["stashed"] = session.config.stash.get(ROLLUP_KEY, None)
            seen["config"] = session.config

    pytester.inline_run("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=P1", plugins=[Probe()])
    assert isinstance(seen["during"], RollupPlugin) and seen["stashed"] is seen["during"]
    config = seen["config"]
    assert config.pluginmanager.get_plugin("trajaudit-rollup") is None  # type: ignore[attr-defined]
    assert ROLLUP_KEY not in config.stash  # type: ignore[attr-defined]
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    pytester.inline_run("-p", "no:cacheprovider", "test_plain.py", plugins=[Probe()])
    assert seen["config"] is not config and seen["during"] is None and seen["stashed"] is None
