"""A partial run is never an approval: integrity principles that did not run make their jobs INCOMPLETE.

The runs are copies of the bundled ``examples/runs``: ``citation-check__Cheat01`` reads
``/oracle/expected_answer.json`` and fails P1 and P2 in a full run (REJECT); ``tictoc__Struggle01`` is WARN,
``csv-stats__Clean01`` CLEAN and ``tictoc__oracle`` the oracle. A subset of the principles (a selection, -x,
an interrupt) must never turn that into APPROVE.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.aggregate.completeness import (
    EXIT_INCOMPLETE,
    Coverage,
    describe_selection,
    describe_stop,
    exit_status,
    manifest,
)
from pytest_trajaudit.aggregate.verdicts import Outcome, job_verdict, pr_verdict
from pytest_trajaudit.principles import ROLES, integrity_codes, registry
from pytest_trajaudit.report import merge as merge_mod
from pytest_trajaudit.report.schema import SCHEMA_DIR

from .jobfactory import CURL_ANSWERS as CURL
from .jobfactory import make_job

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "runs"
TEMPLATES = REPO / "conftest_templates"
CHEAT = "runs/benchflow/citation-check__Cheat01"
SUMMARY_SCHEMA = json.loads((SCHEMA_DIR / "summary.schema.json").read_text())
AGENT_JOBS = 3  # the examples' non-oracle jobs


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    dst = pytester.path / "runs"
    shutil.copytree(EXAMPLES, dst)
    return dst


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=out", *args)


def _reports(pytester: pytest.Pytester) -> tuple[dict, str]:
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    jsonschema.validate(summary, SUMMARY_SCHEMA)
    return summary, (pytester.path / "out" / "report.md").read_text()


# --- the declarations ---------------------------------------------------------------------------------------

def test_every_principle_declares_a_role_and_integrity_is_p1_p2_p11_p16() -> None:
    reg = registry()
    assert all(p.role in ROLES for p in reg.values())
    assert integrity_codes(reg) == ("P1", "P2", "P11", "P16")
    info = sorted(c for c, p in reg.items() if p.role == "info")
    assert info == sorted(["P15", "SB-1", "SB-3a", "SB-3c", "TG-1", "TG-2", "TG-3", "TG-4", "TG-5",
                           "ADV-1", "ADV-2", "ADV-3", "ADV-4", "ADV-5"])
    assert [c for c, p in reg.items() if p.na_warns] == ["P1", "P2"]


def test_an_unknown_role_is_refused() -> None:
    from pytest_trajaudit.principles import Principle

    with pytest.raises(ValueError, match="unknown role 'blocking'"):
        Principle("X-1", "x", "C0", "general", lambda job, cfg: None, "x", role="blocking")  # type: ignore[arg-type]


# --- the pure roll-up ---------------------------------------------------------------------------------------

def test_job_verdict_incomplete_unless_a_fail_already_makes_it_invalid() -> None:
    ok = {"P10": Outcome("PASS", "C0", "quality")}
    assert job_verdict(ok, missing={"P1": "selection: -k P10", "P2": "selection: -k P10"}) == (
        "INCOMPLETE", ["incomplete: P1, P2 not run (selection: -k P10)"])
    assert job_verdict(ok) == ("CLEAN", [])
    cheat = {"P1": Outcome("FAIL", "C0", "integrity", "read /oracle/")}
    assert job_verdict(cheat, missing={"P2": "stopped by -x"}) == (
        "INVALID", ["P1 FAIL: read /oracle/", "incomplete: P2 not run (stopped by -x)"])
    # a quality FAIL is WARN, not INVALID; an incomplete job with one is still INCOMPLETE
    p4 = {"P4": Outcome("FAIL", "C0", "quality", "floor")}
    assert job_verdict(p4)[0] == "WARN"
    assert job_verdict(p4, missing={"P1": "interrupted"})[0] == "INCOMPLETE"
    # an ERROR or ORACLE job keeps its verdict
    assert job_verdict({}, error="x: unreadable", missing={"P1": "interrupted"})[0] == "ERROR"
    assert job_verdict({}, oracle=True, missing={"P1": "interrupted"})[0] == "ORACLE"


def test_integrity_role_not_the_code_decides_invalid() -> None:
    assert job_verdict({"ORG-1": Outcome("FAIL", "C0", "integrity", "curl")}) == ("INVALID", ["ORG-1 FAIL: curl"])
    assert job_verdict({"P1": Outcome("FAIL", "C0", "quality", "x")})[0] == "WARN"
    assert job_verdict({"P1": Outcome("N/A", "C0", "integrity", "no trajectory", na_warns=True)})[0] == "WARN"
    assert job_verdict({"P11": Outcome("N/A", "C0", "integrity", "one source")})[0] == "CLEAN"


def test_pr_verdict_incomplete_is_never_an_approval_and_reject_still_says_it() -> None:
    oracle = {"o": 1.0}
    miss = {"a": {"P1": "selection: -k P10", "P2": "selection: -k P10"},
            "b": {"P1": "selection: -k P10", "P2": "selection: -k P10"}}
    assert pr_verdict({"a": "INCOMPLETE", "b": "INCOMPLETE", "c": "CLEAN", "o": "ORACLE"}, oracle_rewards=oracle,
                      missing=miss) == ("INCOMPLETE", ["P1, P2 not run on 2 jobs (selection: -k P10)"])
    verdict, reasons = pr_verdict({"a": "INVALID", "b": "INCOMPLETE"}, oracle_rewards=oracle,
                                  missing={"a": {"P11": "stopped by -x"}, "b": {"P1": "stopped by -x"}},
                                  order=["P1", "P11"])
    assert verdict == "REJECT"
    assert reasons == ["INVALID job: a", "incomplete run: P1, P11 not run on 2 jobs (stopped by -x)"]
    # the reasons that would block an approval anyway follow the incompleteness
    verdict, reasons = pr_verdict({"a": "INCOMPLETE", "b": "ERROR"}, oracle_rewards={},
                                  missing={"a": {"P1": "interrupted"}})
    assert verdict == "INCOMPLETE" and reasons[0] == "P1 not run on 1 job (interrupted)"
    assert "1 job(s) could not be audited (unusable input): b" in reasons


def test_coverage_names_each_cause() -> None:
    cov = Coverage(integrity=("P1", "P2", "P11"), principles_cause="selection: --trajaudit-principles=P10",
                   deselect_cause="selection: -k P10", stop_cause="stopped by -x")
    cov.add({"j": [["P1", "P2", "P11"], ["P11"], ["P2"]]})
    assert cov.missing("j", {}, {}) == {"P1": "stopped by -x", "P2": "selection: -k P10",
                                        "P11": "selection: --trajaudit-principles=P10"}
    assert cov.missing("j", {"P1": {"status": "PASS"}}, {}) == {"P2": "selection: -k P10",
                                                                 "P11": "selection: --trajaudit-principles=P10"}
    cov.add({"k": [["P1", "P2"], [], []]})
    assert cov.missing("k", {"P1": {"status": "N/A"}}, {"P2": "boom"}) == {"P2": "internal error"}
    # a job that sent records but no manifest entry is held to every integrity principle
    assert cov.missing("z", {"P1": {"status": "PASS"}}) == {"P2": "stopped by -x", "P11": "stopped by -x"}


def test_manifest_from_nodes() -> None:
    class Job:
        def __init__(self, job_id: str) -> None:
            self.job_id, self.integrity = job_id, ("P1", "P2", "P11")

    class P:
        def __init__(self, code: str) -> None:
            self.code = code

    class Item:
        def __init__(self, job: Job, code: str) -> None:
            self.parent, self.principle = job, P(code)

    a, b = Job("a"), Job("b")
    m = manifest([a, b], [Item(a, "P1"), Item(a, "P10")], collected=["P1", "P2", "P10"])
    assert m == {"a": [["P1", "P2", "P11"], ["P11"], ["P2"]], "b": [["P1", "P2", "P11"], ["P11"], ["P1", "P2"]]}


def test_selection_and_stop_labels() -> None:
    assert describe_selection(keyword="P10") == "selection: -k P10"
    assert describe_selection(markexpr="general", deselect=["runs/j/result.json::P1", "runs/j/result.json::P2"]) \
        == "selection: -m general --deselect …::P1 --deselect …::P2"
    assert describe_selection() == "selection: deselected by a plugin"
    assert describe_stop(maxfail=1, exitfirst=True) == "stopped by -x"
    assert describe_stop(maxfail=1) == "stopped by --maxfail=1"
    assert describe_stop(interrupted=True) == "interrupted"


def test_the_incomplete_exit_code_is_none_of_pytests() -> None:
    assert EXIT_INCOMPLETE not in {int(c) for c in pytest.ExitCode}


def test_exit_status_of_an_incomplete_run() -> None:
    assert exit_status(0, "INCOMPLETE", allow=False) == EXIT_INCOMPLETE == 10
    assert exit_status(5, "INCOMPLETE", allow=False) == 10  # every item deselected
    assert exit_status(0, "INCOMPLETE", allow=True) == 0
    assert exit_status(5, "INCOMPLETE", allow=True) == 5
    assert exit_status(1, "REJECT", allow=False) == 1  # a FAIL's exit stands
    assert exit_status(1, "INCOMPLETE", allow=False) == 1
    assert exit_status(2, "INCOMPLETE", allow=False) == 2  # an interrupt's too
    assert exit_status(0, "APPROVE", allow=False) == 0


# --- the plugin, on a copy of examples/runs --------------------------------------------------------------------

def test_full_run_keeps_its_verdicts(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester)
    summary, md = _reports(pytester)
    assert summary["pr_verdict"]["verdict"] == "REJECT" and "incomplete" not in summary["pr_verdict"]
    assert summary["verdicts"] == {"CLEAN": 1, "WARN": 1, "INVALID": 1, "INCOMPLETE": 0, "ERROR": 0, "ORACLE": 1}
    assert "Incomplete run" not in md and "incomplete" not in result.stdout.str()
    assert result.ret == 1


SELECTIONS = [
    (["--trajaudit-principles=P10"], "P1, P2, P11, P16", AGENT_JOBS, "selection: --trajaudit-principles=P10"),
    (["-k", "P10"], "P1, P2, P11, P16", AGENT_JOBS, "selection: -k P10"),
    (["-m", "general"], "P1, P2, P16", AGENT_JOBS, "selection: -m general"),
    (["-m", "not anticheat"], "P1, P2, P16", AGENT_JOBS, "selection: -m not anticheat"),
    # pytest's --deselect matches node id prefixes: ::P1 also deselects P10..P16, P11 and P16 among them
    ([f"--deselect={CHEAT}/result.json::P1", f"--deselect={CHEAT}/result.json::P2"], "P1, P2, P11, P16", 1,
     "selection: --deselect …::P1 --deselect …::P2"),
    # a node id selects inside the root: the jobs it leaves out are named too (the oracle's kind is not known
    # without loading it)
    ([f"{CHEAT}/result.json::P10"], "P1, P2, P11, P16", 4, "selection: node ids …::P10"),
]


@pytest.mark.parametrize(("args", "codes", "n", "cause"), SELECTIONS,
                         ids=["principles", "k", "m-family", "m-not", "deselect", "node-id"])
def test_a_selection_that_skips_integrity_principles_is_incomplete(
        pytester: pytest.Pytester, runs: Path, args: list[str], codes: str, n: int, cause: str) -> None:
    """Each selection hides the cheating job's P1/P2 FAIL: the run says INCOMPLETE and names what did not run,
    never APPROVE, and exits 10 (nothing failed, yet no approval)."""
    result = _run(pytester, *args)
    line = f"{codes} not run on {n} job{'' if n == 1 else 's'} ({cause})"
    result.stdout.fnmatch_lines([f"PR verdict: INCOMPLETE — {line}*"])
    assert "APPROVE" not in result.stdout.str()
    summary, md = _reports(pytester)
    pv = summary["pr_verdict"]
    assert pv["verdict"] == "INCOMPLETE" and pv["reasons"][0] == line and pv["incomplete"]["line"] == line
    assert CHEAT in pv["incomplete"]["jobs"]
    cheat = next(j for j in summary["jobs"] if j["job"] == CHEAT)
    assert cheat["verdict"] == "INCOMPLETE"
    assert "**Verdict: INCOMPLETE**" in md and f"> **Incomplete run:** {line}." in md
    assert "APPROVE" not in md
    assert result.ret == EXIT_INCOMPLETE


def test_a_selection_that_keeps_every_integrity_principle_is_complete(pytester: pytest.Pytester,
                                                                      runs: Path) -> None:
    """The integrity principles all ran; another principle did not: the verdicts stay as a full run's."""
    result = _run(pytester, "--trajaudit-principles=P1,P2,P11,P16")
    summary, _ = _reports(pytester)
    assert summary["pr_verdict"]["verdict"] == "REJECT" and "incomplete" not in summary["pr_verdict"]
    assert result.ret == 1
    result = _run(pytester, "--deselect", "runs/harbor-job/csv-stats__Clean01/result.json::P10")
    assert _reports(pytester)[0]["pr_verdict"]["verdict"] == "REJECT"
    assert "incomplete" not in result.stdout.str()


@pytest.mark.parametrize(("args", "cause"), [(["-x"], "stopped by -x"), (["--maxfail=1"], "stopped by --maxfail=1")])
def test_a_run_stopped_early_rejects_what_it_found_and_says_it_is_incomplete(
        pytester: pytest.Pytester, runs: Path, args: list[str], cause: str) -> None:
    """-x stops at the cheating job's P1 FAIL: REJECT (a found cheat is never hidden), and the jobs not reached
    (the oracle among them: unknown until read) are INCOMPLETE, named in every output."""
    result = _run(pytester, *args)
    line = f"P1, P2, P11, P16 not run on 4 jobs ({cause})"
    result.stdout.fnmatch_lines(["PR verdict: REJECT — INVALID job: runs/benchflow/citation-check__Cheat01 (+1)",
                                 f"incomplete run: {line}"])
    summary, md = _reports(pytester)
    pv = summary["pr_verdict"]
    assert pv["verdict"] == "REJECT" and pv["reasons"][-1] == f"incomplete run: {line}"
    assert pv["incomplete"]["causes"] == [cause]
    assert {j["job"]: j["verdict"] for j in summary["jobs"]} == {
        CHEAT: "INVALID", "runs/benchflow/tictoc__Struggle01": "INCOMPLETE",
        "runs/benchflow/tictoc__oracle": "INCOMPLETE", "runs/harbor-job/csv-stats__Clean01": "INCOMPLETE"}
    assert f"> **Incomplete run:** {line}." in md
    audit_schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    audits = sorted((pytester.path / "out" / "jobs").rglob("audit-*.json"))
    assert len(audits) == 4  # a job none of whose items ran gets its audit JSON too, INCOMPLETE
    for path in audits:
        jsonschema.validate(json.loads(path.read_text()), audit_schema)
    assert result.ret == 1


def test_exit_codes_under_x_follow_the_failure_that_stopped_the_run(pytester: pytest.Pytester, runs: Path) -> None:
    """-x stops only on a FAIL or an error, so a stopped run exits 1 (never 10), also with
    --trajaudit-allow-incomplete; a run -x never stops is complete and exits as without it (the docs' table)."""
    result = _run(pytester, "-x", "--trajaudit-allow-incomplete")
    assert result.ret == 1
    assert _reports(pytester)[0]["pr_verdict"]["incomplete"]["causes"] == ["stopped by -x"]
    # the FAIL that stopped it is an old one and --trajaudit-new-only does not count it: incomplete, 10
    assert _run(pytester).ret == 1
    shutil.copyfile(pytester.path / "out" / "summary.json", pytester.path / "baseline.json")
    result = _run(pytester, "-x", "--trajaudit-baseline=baseline.json", "--trajaudit-new-only")
    assert result.ret == 10 and _reports(pytester)[0]["pr_verdict"]["verdict"] == "INCOMPLETE"
    shutil.rmtree(runs / "benchflow" / "citation-check__Cheat01")
    result = _run(pytester, "-x")
    pv = _reports(pytester)[0]["pr_verdict"]
    assert result.ret == 0 and "incomplete" not in pv and pv["verdict"] != "INCOMPLETE"


def test_maxfail_that_never_stops_the_run_leaves_it_complete(pytester: pytest.Pytester, runs: Path) -> None:
    """The cheating job's two FAILs stay below --maxfail=3: every item ran, the run is a full one."""
    result = _run(pytester, "--maxfail=3")
    pv = _reports(pytester)[0]["pr_verdict"]
    assert pv["verdict"] == "REJECT" and "incomplete" not in pv
    assert result.ret == 1


INTERRUPT = """
def pytest_runtest_logstart(nodeid, location):
    if nodeid.endswith("citation-check__Cheat01/result.json::P1"):
        raise KeyboardInterrupt
"""


def test_an_interrupted_run_is_incomplete(pytester: pytest.Pytester, runs: Path) -> None:
    """Ctrl-C before the first item ran: nothing was judged, and the report says so (pytest's exit 2 stands)."""
    pytester.makepyfile(stop_at_p1=INTERRUPT)
    pytester.syspathinsert()
    # no_reraise_ctrlc: the interrupt ends the inner run only, not this test session
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=out",
                                "-p", "stop_at_p1", no_reraise_ctrlc=True)
    result.stdout.fnmatch_lines(["PR verdict: INCOMPLETE — P1, P2, P11, P16 not run on 4 jobs (interrupted)"])
    summary, _ = _reports(pytester)
    assert summary["pr_verdict"]["verdict"] == "INCOMPLETE"
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_allow_incomplete_exits_0_and_keeps_the_verdict(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "-k", "P10", "--trajaudit-allow-incomplete")
    result.stdout.fnmatch_lines(["PR verdict: INCOMPLETE — *"])
    assert _reports(pytester)[0]["pr_verdict"]["verdict"] == "INCOMPLETE"
    assert result.ret == 0
    # a selection that matches nothing still exits 5 (no tests ran), allowed or not it is no approval
    result = _run(pytester, "-k", "no_such_item", "--trajaudit-allow-incomplete")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result = _run(pytester, "-k", "no_such_item")
    result.stdout.fnmatch_lines(["PR verdict: INCOMPLETE — P1, P2, P11, P16 not run on 4 jobs (selection: -k no_such_item)"])
    assert result.ret == EXIT_INCOMPLETE


def test_collect_only_says_collected_not_audited(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester, "--co", "-q")
    result.stdout.fnmatch_lines(["*trajaudit verdicts*", "4 job(s) collected, not audited (--collect-only)"])
    assert "job(s) audited" not in result.stdout.str() and "PR verdict" not in result.stdout.str()
    assert not (pytester.path / "out" / "summary.json").exists()
    assert result.ret == 0


def test_junit_and_ctrf_carry_the_verdict_and_what_did_not_run(pytester: pytest.Pytester, runs: Path) -> None:
    args = ["-k", "P10", "--junitxml=audit.xml"]
    has_ctrf = pytester.parseconfig().pluginmanager.hasplugin("ctrf")
    if has_ctrf:
        args.append("--ctrf=ctrf.json")
    result = _run(pytester, *args)
    assert result.ret == EXIT_INCOMPLETE
    xml = (pytester.path / "audit.xml").read_text()
    line = "P1, P2, P11, P16 not run on 3 jobs (selection: -k P10)"
    assert '<property name="trajaudit.pr_verdict" value="INCOMPLETE"' in xml
    assert f'<property name="trajaudit.incomplete" value="{line}"' in xml
    assert f'<property name="trajaudit.pr_reason.1" value="{line}"' in xml
    assert f'<property name="trajaudit.verdict:{CHEAT}" value="INCOMPLETE"' in xml
    if has_ctrf:
        extra = json.loads((pytester.path / "ctrf.json").read_text())["results"]["extra"]["trajaudit"]
        assert extra["pr_verdict"] == "INCOMPLETE" and extra["incomplete"] == line


def test_xdist_workers_send_what_they_collected(pytester: pytest.Pytester, runs: Path) -> None:
    """Under -n the controller collects nothing: each worker's manifest reaches it, so jobs none of whose items
    ran on any worker are still named."""
    pytest.importorskip("xdist")
    result = _run(pytester, "-n", "2", "-k", "P10 and not Clean01")
    result.stdout.fnmatch_lines(["PR verdict: INCOMPLETE — P1, P2, P11, P16 not run on 3 jobs (selection: -k P10 and not "
                                 "Clean01)"])
    summary, _ = _reports(pytester)
    verdicts = {j["job"]: j["verdict"] for j in summary["jobs"]}
    assert verdicts["runs/harbor-job/csv-stats__Clean01"] == "INCOMPLETE"  # no item of it ran anywhere
    assert result.ret == EXIT_INCOMPLETE


def test_merged_shards_of_a_partial_run_stay_incomplete(pytester: pytest.Pytester, runs: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    dirs = []
    for i in (1, 2):
        pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "-k", "P10", f"--trajaudit-shard={i}/2",
                           f"--trajaudit-report=s{i}")
        dirs.append(str(pytester.path / f"s{i}"))
    assert merge_mod.main([str(pytester.path / "merged"), *dirs]) == EXIT_INCOMPLETE
    merged = json.loads((pytester.path / "merged" / "summary.json").read_text())
    assert merged["pr_verdict"]["reasons"][0] == "P1, P2, P11, P16 not run on 3 jobs (selection: -k P10)"
    assert "PR verdict: INCOMPLETE" in capsys.readouterr().out



CLEAN = "runs/harbor-job/csv-stats__Clean01"


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
@pytest.mark.parametrize(("selectors", "cause"), [
    ([CLEAN], f"selection: paths {CLEAN}"),
    ([f"{CLEAN}/result.json"], f"selection: paths {CLEAN}/result.json"),
    ([CLEAN, "runs/benchflow/tictoc__oracle"], f"selection: paths {CLEAN}, runs/benchflow/tictoc__oracle"),
    ([f"{CLEAN}/result.json::P1"], "selection: node ids …::P1"),
])
def test_paths_inside_an_audit_root_leave_its_other_jobs_incomplete(
        pytester: pytest.Pytester, runs: Path, selectors: list[str], cause: str, workers: tuple[str, ...]) -> None:
    """``pytest --trajaudit=runs runs/<clean job>``: the verdict covers the root, so the jobs the positional
    paths or node ids leave out (the cheating one among them) are INCOMPLETE, never silently dropped."""
    if workers:
        pytest.importorskip("xdist")
    result = _run(pytester, *workers, *selectors)
    summary, _ = _reports(pytester)
    verdicts = {j["job"]: j["verdict"] for j in summary["jobs"]}
    assert verdicts[CHEAT] == "INCOMPLETE" and summary["pr_verdict"]["verdict"] == "INCOMPLETE"
    assert summary["pr_verdict"]["incomplete"]["causes"] == [cause]
    assert "APPROVE" not in result.stdout.str() and result.ret == EXIT_INCOMPLETE
    assert len(verdicts) == 4  # every job of the root is named


def test_paths_that_cover_the_whole_root_leave_the_run_complete(pytester: pytest.Pytester, runs: Path) -> None:
    """Positional paths that together are the root, or that are the audit paths themselves, select nothing out."""
    result = _run(pytester, "runs")
    assert _reports(pytester)[0]["pr_verdict"]["verdict"] == "REJECT" and result.ret == 1
    assert "incomplete" not in result.stdout.str()
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs/benchflow", "--trajaudit-report=out",
                                "--trajaudit=runs/harbor-job")
    assert "incomplete" not in result.stdout.str() and result.ret == 1


def test_an_oracle_labelled_trial_with_a_stray_run_record_is_not_an_oracle(pytester: pytest.Pytester,
                                                                            runs: Path) -> None:
    """A trial whose result.json names the oracle agent has no trajectory; one holding a run record outside the
    places a trajectory is read from (an agent run filed under the oracle's name) is unusable input, not ORACLE."""
    cheat = runs / "benchflow" / "citation-check__Cheat01"
    doc = json.loads((cheat / "result.json").read_text())
    doc["agent"] = "oracle"
    (cheat / "result.json").write_text(json.dumps(doc))
    traj = next(cheat.rglob("acp_trajectory.jsonl"))
    traj.rename(cheat / "acp_trajectory.jsonl")
    result = _run(pytester)
    summary, _ = _reports(pytester)
    verdicts = {j["job"]: j["verdict"] for j in summary["jobs"]}
    assert verdicts[CHEAT] == "ERROR" and "APPROVE" not in summary["pr_verdict"]["verdict"]
    result.stdout.fnmatch_lines([f"ERROR *{CHEAT}*acp_trajectory.jsonl: a run record in a trial whose records name "
                                 "the oracle agent*"])
    assert result.ret == 1

# --- a third-party integrity principle ----------------------------------------------------------------------

def test_custom_integrity_principle_invalidates_and_is_required(pytester: pytest.Pytester) -> None:
    """conftest_templates/custom_principle declares ORG-1 with role="integrity" and nothing else: its FAIL makes
    the job INVALID (REJECT), and a run that deselects it is INCOMPLETE. Modelled on an agent that fetched an
    answer file over the network (a BenchFlow ACP execute call)."""
    pytester.syspathinsert(TEMPLATES / "custom_principle")
    make_job(pytester.path / "runs", "quiet")
    make_job(pytester.path / "runs", "netty", lines=CURL)
    # the integrity principles and ORG-1 (the minimal jobs' one tool call would fail P4's floor: exit 1 anyway)
    base = ["-p", "no:cacheprovider", "-p", "trajaudit_network", "--trajaudit=runs", "--trajaudit-report=out",
            "--trajaudit-principles=P1,P2,P11,P16,ORG-1"]
    result = pytester.runpytest(*base)
    result.stdout.fnmatch_lines(["2 job(s): 1 CLEAN, 1 INVALID", "PR verdict: REJECT — INVALID job: runs/netty",
                                 "INVALID runs/netty/result.json: ORG-1 FAIL: #1 Bash: curl -s https://example.com/answers.json*"])
    assert result.ret == 1
    result = pytester.runpytest(*base, "--deselect=runs/netty/result.json::ORG-1")
    result.stdout.fnmatch_lines(["PR verdict: INCOMPLETE — ORG-1 not run on 1 job (selection: --deselect …::ORG-1)"])
    assert result.ret == EXIT_INCOMPLETE


RAISES = '''
from pytest_trajaudit.model import Finding
from pytest_trajaudit.principles import Principle


def check(job, cfg):
    """ORG-2: raises on the job named boom (a bug in a third-party principle)."""
    if job.dir.name == "boom":
        raise RuntimeError("bug")
    return Finding.ok("fine")


def pytest_trajaudit_principles():
    return [Principle("ORG-2", "raises", "C0", "general", check, "org_raises", role="integrity")]
'''


def test_an_integrity_principle_that_raises_leaves_its_job_incomplete(pytester: pytest.Pytester) -> None:
    """An internal error judged nothing: the job cannot be CLEAN (the item's error already exits 1)."""
    pytester.makepyfile(org_raises=RAISES)
    pytester.syspathinsert()
    make_job(pytester.path / "runs", "boom")
    make_job(pytester.path / "runs", "fine")
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "org_raises", "--trajaudit=runs",
                                "--trajaudit-report=out")
    result.stdout.fnmatch_lines(["PR verdict: INCOMPLETE — ORG-2 not run on 1 job (internal error)*"])
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    assert {j["job"]: j["verdict"] for j in summary["jobs"]}["runs/boom"] == "INCOMPLETE"
    assert result.ret == 1
