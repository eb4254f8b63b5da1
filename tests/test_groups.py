"""Group items: ``<first trial's file>::<task>::PASSK`` (pass^k across trials) and ``…::<task>::SB-2`` (skill
impact), collected from folder names, run after every job item, serial and under xdist; ``<root>::<task>`` in
verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.aggregate.completeness import EXIT_INCOMPLETE
from pytest_trajaudit.aggregate.groups import (
    DirStore,
    compact,
    complete,
    evaluate_passk,
    evaluate_sb2,
    group_key,
    plan,
)
from pytest_trajaudit.discover.jobs import JobRef, find_jobs
from pytest_trajaudit.principles import registry
from pytest_trajaudit.report.schema import SCHEMA_DIR

from .jobfactory import make_job

CHEAT_LINES = [
    {"type": "user_message", "text": "do x"},
    {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": "Read /tests/test_outputs.py",
     "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "assert x == 42"}}]},
    {"type": "agent_message", "text": "done"},
]


# a with-skills run that loads a skill and says what it takes from it (SB-2's quote)
SKILL_LINES = [
    {"type": "user_message", "text": "do x"},
    {"type": "tool_call", "tool_call_id": "t1", "kind": "other", "title": "Skill", "status": "completed",
     "content": [{"type": "content", "content": {"type": "text", "text": "Launching skill: ledger"}}]},
    {"type": "agent_message", "text": "The skill says to build the ledger first; doing that."},
    {"type": "tool_call", "tool_call_id": "t2", "kind": "execute", "title": "Terminal", "status": "completed",
     "rawInput": {"command": "python ledger.py"}},
]


def trial(root: Path, task: str, n: int, reward: float | None, *, mode: str | None = None, lines=None,
          rollout: str | None = None) -> Path:
    result = {"task_name": task, "rollout_name": rollout or f"{task}__{n}", "n_tool_calls": 1}
    if reward is not None:
        result["rewards"] = {"reward": reward}
    if mode is not None:
        result["skill_mode"] = mode
    return make_job(root, f"{task}__{n}", lines=lines, result=result)


def run(pytester: pytest.Pytester, root: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(f"--trajaudit={root}", "-p", "no:cacheprovider", "-p", "no:randomly", "-rA", *args)


def outcome_of(result: pytest.RunResult, nodeid_suffix: str) -> str:
    for line in result.outlines:
        parts = line.split(" ", 2)
        if len(parts) >= 2 and parts[1].endswith(nodeid_suffix) and parts[0] in (
                "PASSED", "FAILED", "SKIPPED", "XFAIL", "WARN", "ERROR"):
            return parts[0]
    raise AssertionError(f"no outcome line for {nodeid_suffix}:\n" + "\n".join(result.outlines))


# --- planning (pure) -----------------------------------------------------------------------------------------

def test_plan_groups_sibling_and_cousin_trials_by_folder_prefix(tmp_path: Path) -> None:
    for cond in ("with", "without"):
        for i in (1, 2):
            trial(tmp_path / cond, "alpha", i, 1.0)
    trial(tmp_path / "with", "beta", 1, 1.0)  # a single trial: no group
    make_job(tmp_path, "loose")  # no <task>__ prefix: no group
    groups = plan(find_jobs(tmp_path))
    assert list(groups) == ["alpha"]
    assert [r.dir.relative_to(tmp_path).as_posix() for r in groups["alpha"]] == [
        "with/alpha__1", "with/alpha__2", "without/alpha__1", "without/alpha__2"]


def test_group_key_ignores_bare_files_and_names_without_a_trial_suffix(tmp_path: Path) -> None:
    assert group_key(JobRef(tmp_path / "t__1", tmp_path / "t__1" / "result.json", "benchflow")) == "t"
    assert group_key(JobRef(tmp_path / "plain", tmp_path / "plain" / "result.json", "benchflow")) is None
    assert group_key(JobRef(tmp_path / "__x", tmp_path / "__x" / "result.json", "benchflow")) is None
    f = tmp_path / "a__b.jsonl"
    assert group_key(JobRef(tmp_path, f, "bare-file")) is None


def rec(job: str, reward: float | None, verdict: str = "CLEAN", **kw) -> dict:
    return {"job": job, "task": "T", "trial": job, "agent": "a", "model": "m", "condition": None,
            "reward": reward, "verdict": verdict, "oracle": False, "error": None,
            "computed": ["P1", "P11", "P16", "P2", "SB-1"], **kw}


def test_passk_statuses_pass_warn_strict_fail_and_na() -> None:
    assert evaluate_passk([rec("1", 1.0), rec("2", 1.0)]).status == "PASS"
    flaky = evaluate_passk([rec("1", 1.0), rec("2", 0.0)])
    assert flaky.status == "WARN" and "flaky: some trials delivered" in flaky.evidence
    never = evaluate_passk([rec("1", 0.0), rec("2", 0.0)])
    assert never.status == "WARN" and "never delivered" in never.evidence
    assert evaluate_passk([rec("1", 1.0), rec("2", 0.0)], strict=True).status == "FAIL"
    na = evaluate_passk([rec("1", None), rec("2", None)])
    assert na.status == "N/A" and "no reward" in na.evidence


def test_passk_counts_an_invalid_trial_as_not_delivered() -> None:
    res = evaluate_passk([rec("1", 1.0), rec("2", 1.0, verdict="INVALID")])
    assert res.status == "WARN"
    entry = res.data["pass_k"][0]
    assert (entry["n_success"], entry["n_success_raw"], entry["n_invalid"]) == (1, 2, 1)


def test_passk_trials_coverage_is_an_error_for_missing_and_duplicated_trials() -> None:
    assert evaluate_passk([rec("1", 1.0), rec("2", 1.0)], trials=3).status == "ERROR"
    dup = evaluate_passk([rec("1", 1.0, trial="x"), rec("2", 1.0, trial="x")], trials=2)
    assert dup.status == "ERROR" and "recorded 2 times" in dup.evidence
    assert evaluate_passk([rec("1", 1.0), rec("2", 1.0)], trials=2).status == "PASS"


def test_sb2_hurt_warns_helped_passes_and_no_pair_is_na() -> None:
    def arm(cond: str, *rewards: float) -> list[dict]:
        return [rec(f"{cond}{i}", r, condition=cond) for i, r in enumerate(rewards)]

    quote = {"skill_quote": {"text": "build the ledger first", "event": 3, "source": "agent message #3"}}
    with_arm = [rec("w0", 1.0, condition="with-skills", **quote), rec("w1", 0.5, condition="with-skills")]
    helped = evaluate_sb2(with_arm + arm("no-skills", 0.0, 0.0))
    assert helped.status == "PASS" and "helped" in helped.evidence
    [entry] = helped.data["skill_impact"].values()
    assert (entry["unlock_quote"], entry["misled_quote"], entry["quote_job"]) == ("build the ledger first", None, "w0")
    hurt = evaluate_sb2(arm("with-skills", 0.0, 0.0) + arm("no-skills", 1.0, 1.0))
    assert hurt.status == "WARN" and "hurt" in hurt.evidence
    none = evaluate_sb2(arm("with-skills", 1.0, 0.0))
    assert none.status == "N/A" and "with-skills" in none.evidence


def test_sb2_helped_or_hurt_without_a_quote_says_why() -> None:
    """The spec requires a quote for every helped / hurt outcome: none to be had is a WARN with the reason."""
    missing = {"skill_quote_missing": "no skill was read or run in this run"}
    helped = evaluate_sb2([rec("w0", 1.0, condition="with-skills", **missing), rec("n0", 0.0, condition="no-skills")])
    assert helped.status == "WARN"
    assert helped.evidence == ("a: helped but no quote: no with-skills trial has a quotable moment (w0: no skill was "
                               "read or run in this run)")
    [entry] = helped.data["skill_impact"].values()
    assert entry["unlock_quote"] is None and entry["quote_missing"].startswith("no with-skills trial")
    hurt = evaluate_sb2([rec("w0", 0.0, condition="with-skills",
                             skill_quote={"text": "skip the ledger", "event": 2, "source": "s"}),
                         rec("w1", 0.5, condition="with-skills", skill_quote={"text": "x", "event": 2, "source": "s"}),
                         rec("n0", 1.0, condition="no-skills")])
    [entry] = hurt.data["skill_impact"].values()
    # the worst-rewarded with-skills trial is where the skill misled
    assert (entry["misled_quote"], entry["unlock_quote"], entry["quote_job"]) == ("skip the ledger", None, "w0")


def test_a_record_lacking_the_integrity_principles_is_incomplete() -> None:
    assert not complete(None)
    assert not complete({**rec("1", 1.0), "computed": ["P1"]})
    assert complete({**rec("1", 1.0), "computed": ["P1"], "error": "x: unreadable"})
    assert complete(rec("1", 1.0))


def test_compact_verdict_reads_integrity_principles_only() -> None:
    from pytest_trajaudit.principles.engine import JobAudit, Result

    def res(status: str) -> Result:
        return Result(status=status, evidence="e", data={}, events=[])

    audit = JobAudit({"task": "T", "reward": 1.0}, {"P1": res("PASS"), "P2": res("PASS"), "P11": res("PASS"),
                                                    "P16": res("PASS"), "P4": res("FAIL"), "SB-1": res("N/A")})
    reg = registry()
    r = compact("j", audit, reg)
    assert r["verdict"] == "CLEAN" and r["computed"] == ["P1", "P11", "P16", "P2", "SB-1"] and complete(r)
    audit.results["P1"] = res("FAIL")
    assert compact("j", audit, reg)["verdict"] == "INVALID"


def test_dir_store_shares_records_between_processes_through_their_logs(tmp_path: Path) -> None:
    """Under xdist each worker appends its records to a log of its own; another worker reads them from where it
    last stopped, a complete record outranks an incomplete one, and each record is one line."""
    a, b = DirStore(tmp_path, "a"), DirStore(tmp_path, "b")
    assert b.get("j1") is None
    partial = {**rec("j1", 1.0), "computed": ["P1"]}
    a.put(partial)
    assert b.get("j1") == partial  # the best there is; a group item recomputes an incomplete record
    a.put(rec("j1", 0.0))
    a.put(partial)  # less complete than what a published: not written again
    assert b.get("j1") == rec("j1", 0.0)
    b.put(rec("j2", 1.0))
    assert a.get("j2") == rec("j2", 1.0) and a.get("j1") == rec("j1", 0.0)
    log = tmp_path / "a.jsonl"
    assert len(log.read_bytes().splitlines()) == 2 and (log.stat().st_mode & 0o777) == 0o600


def test_dir_store_takes_a_line_only_once_it_is_whole_and_skips_what_is_not_a_record(tmp_path: Path) -> None:
    b = DirStore(tmp_path, "b")
    line = json.dumps(rec("j1", 1.0)).encode()
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"not json\n[1, 2]\n" + json.dumps({"job": 7}).encode() + b"\n" + line[:20])
    assert b.get("j1") is None  # a record whose write is under way is not taken in part
    with log.open("ab") as f:
        f.write(line[20:] + b"\n")
    assert b.get("j1") == rec("j1", 1.0)


def test_dir_store_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    """A log name that is a symlink (planted in the shared directory) is neither read nor written through."""
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps(rec("j1", 1.0)) + "\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "b.jsonl").symlink_to(outside)
    (shared / "a.jsonl").symlink_to(outside)
    a = DirStore(shared, "a")
    a.put(rec("j2", 1.0))  # its own log is a link: the record stays in memory, the target is not appended to
    assert outside.read_text().count("\n") == 1 and a.get("j2") == rec("j2", 1.0)
    assert DirStore(shared, "c").get("j1") is None


# --- the plugin ----------------------------------------------------------------------------------------------

def test_group_items_are_collected_per_task_with_documented_node_ids(pytester: pytest.Pytester) -> None:
    root = pytester.path / "runs"
    for i in (1, 2):
        trial(root / "h", "alpha", i, 1.0)
    trial(root, "solo", 1, 1.0)
    result = run(pytester, root, "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    first = "runs/h/alpha__1/result.json"  # the group is anchored on its first trial's file
    assert f"{first}::alpha::PASSK" in ids and f"{first}::alpha::SB-2" in ids
    assert not [i for i in ids if "solo" in i and ("PASSK" in i or "SB-2" in i)]
    assert ids[-2:] == [f"{first}::alpha::PASSK", f"{first}::alpha::SB-2"]  # after every job item


def test_pass_hat_k_items_pass_flaky_strict_and_invalid(pytester: pytest.Pytester) -> None:
    # (-k matches the rootdir's name too, case-insensitively: this test's name must not contain "passk")
    root = pytester.path / "runs"
    trial(root, "good", 1, 1.0)
    trial(root, "good", 2, 1.0)
    trial(root, "flaky", 1, 1.0)
    trial(root, "flaky", 2, 0.0)
    trial(root, "cheat", 1, 1.0)
    trial(root, "cheat", 2, 1.0, lines=CHEAT_LINES)  # P1 FAIL → INVALID → not delivered
    result = run(pytester, root, "-k", "PASSK")
    assert outcome_of(result, "::good::PASSK") == "PASSED"
    assert outcome_of(result, "::flaky::PASSK") == "WARN"
    assert outcome_of(result, "::cheat::PASSK") == "WARN"
    assert "1 INVALID counted as not delivered" in result.stdout.str()
    strict = run(pytester, root, "-k", "PASSK", "--trajaudit-strict-pass-k")
    assert outcome_of(strict, "::flaky::PASSK") == "FAILED"
    assert outcome_of(strict, "::good::PASSK") == "PASSED"
    strict.assert_outcomes(passed=1, failed=2)


def test_trials_option_makes_missing_and_duplicated_trials_an_error(pytester: pytest.Pytester) -> None:
    root = pytester.path / "runs"
    trial(root, "short", 1, 1.0)
    trial(root, "short", 2, 1.0)
    trial(root, "dup", 1, 1.0, rollout="dup__x")
    trial(root, "dup", 2, 1.0, rollout="dup__x")
    trial(root, "dup", 3, 1.0)
    result = run(pytester, root, "-k", "PASSK", "--trajaudit-trials=3")
    assert outcome_of(result, "::short::PASSK") == "ERROR"
    assert outcome_of(result, "::dup::PASSK") == "ERROR"
    out = result.stdout.str()
    assert "short: 2 of 3 trial(s) found" in out and "trial dup__x recorded 2 times" in out
    assert run(pytester, root, "-k", "PASSK", "--trajaudit-trials=0").ret == pytest.ExitCode.USAGE_ERROR


def test_sb2_pairs_conditions_across_folders(pytester: pytest.Pytester) -> None:
    root = pytester.path / "runs"
    for i in (1, 2):
        trial(root / "with", "lift", i, 1.0, mode="with-skills", lines=SKILL_LINES)
        trial(root / "without", "lift", i, 0.0, mode="no-skills")
        trial(root / "with", "sink", i, 0.0, mode="with-skills")
        trial(root / "without", "sink", i, 1.0, mode="no-skills")
        trial(root / "with", "none", i, 1.0)
    result = run(pytester, root, "-k", "SB-2", "--trajaudit-report=out")
    assert outcome_of(result, "::lift::SB-2") == "PASSED"
    assert outcome_of(result, "::sink::SB-2") == "WARN"
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)  # "none" has no with/without pair: N/A
    assert "SB-2: no with-skills / without-skills pair with rewards (conditions seen: None)" in result.stdout.str()
    assert "Δ -100.0 pp hurt" in result.stdout.str()
    groups = {g["task"]: g for g in json.loads((pytester.path / "out" / "summary.json").read_text())["groups"]}
    assert "Δ +100.0 pp helped" in groups["lift"]["evidence"]
    assert [v["outcome"] for v in groups["lift"]["data"]["skill_impact"].values()] == ["helped"]
    [lift] = groups["lift"]["data"]["skill_impact"].values()
    assert lift["unlock_quote"] == "The skill says to build the ledger first; doing that."
    assert lift["quote_job"].endswith("lift__1") and "after loading ledger" in lift["quote_source"]
    run(pytester, root, "-m", "skills", "--trajaudit-report=full")  # summary.json's skill_impact: from SB-1 items
    summary = json.loads((pytester.path / "full" / "summary.json").read_text())
    impact = {v["task"]: v for v in summary["skill_impact"].values()}
    assert impact["lift"]["unlock_quote"] == "The skill says to build the ledger first; doing that."
    assert impact["sink"]["misled_quote"] is None and "no skill was read or run" in impact["sink"]["quote_missing"]


def test_principles_option_selects_group_codes_and_markers_select_families(pytester: pytest.Pytester) -> None:
    root = pytester.path / "runs"
    trial(root, "a", 1, 1.0)
    trial(root, "a", 2, 1.0)
    only = run(pytester, root, "--trajaudit-principles=PASSK")
    only.assert_outcomes(passed=1)
    none = run(pytester, root, "--trajaudit-principles=P4")
    assert "PASSK" not in none.stdout.str()
    fam = run(pytester, root, "-m", "skills", "--collect-only", "-q")
    assert "::a::SB-2" in fam.stdout.str() and "::a::PASSK" not in fam.stdout.str()
    bad = run(pytester, root, "--trajaudit-principles=PASSX")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR and "PASSK" in bad.stderr.str()


def summary_groups(pytester: pytest.Pytester, root: Path, out: str, *args: str,
                   ok: tuple[int, ...] = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)) -> tuple[list, dict]:
    result = run(pytester, root, f"--trajaudit-report={out}", *args)
    assert result.ret in ok, result.stdout.str()
    summary = json.loads((pytester.path / out / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))
    return summary["groups"], summary


def test_summary_groups_are_the_same_serial_under_xdist_and_when_jobs_are_deselected(
        pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    root = pytester.path / "runs"
    for i in (1, 2, 3):
        trial(root / "with", "t", i, 1.0 if i < 3 else 0.0, mode="with-skills", lines=SKILL_LINES)
        trial(root / "without", "t", i, 0.0, mode="no-skills")
        trial(root / "with", "u", i, 1.0, lines=CHEAT_LINES if i == 2 else None)
    serial, full = summary_groups(pytester, root, "r0")
    assert [(g["group"], g["code"], g["status"]) for g in serial] == [
        ("runs::t", "PASSK", "WARN"), ("runs::t", "SB-2", "PASS"), ("runs::u", "PASSK", "WARN"),
        ("runs::u", "SB-2", "N/A")]
    assert serial[0]["members"] == sorted(serial[0]["members"]) and len(serial[0]["members"]) == 6
    parallel, _ = summary_groups(pytester, root, "r2", "-n", "2")
    assert parallel == serial
    # every job recomputed by its group; the job items deselected: the run is INCOMPLETE (exit 10)
    alone, partial = summary_groups(pytester, root, "rk", "-k", "PASSK or SB-2", ok=(EXIT_INCOMPLETE,))
    assert alone == serial
    assert partial["pr_verdict"]["verdict"] == "INCOMPLETE"
    # the summary's own pass^k (from the job items) agrees with the group items' pass^k
    by_task = {(e["task"], e["condition"]): e["pass_hat_k"] for e in full["pass_k"]}
    for e in serial[0]["data"]["pass_k"] + serial[2]["data"]["pass_k"]:
        assert by_task[(e["task"], e["condition"])] == e["pass_hat_k"]


def test_group_items_carry_status_into_junit(pytester: pytest.Pytester) -> None:
    root = pytester.path / "runs"
    trial(root, "f", 1, 1.0)
    trial(root, "f", 2, 0.0)
    run(pytester, root, "-k", "PASSK", "--junitxml=out.xml")
    xml = (pytester.path / "out.xml").read_text()
    assert "<system-out>trajaudit: WARN PASSK: " in xml and "pass^k not reached" in xml
    assert 'message="WARN: PASSK: ' in xml


@pytest.mark.corpus
def test_corpus_skillsbench_archive_group_items(pytester: pytest.Pytester, corpus: Path) -> None:
    """The archive's 3d-scan-calc trials (5 with skills, 5 without, in sibling folders): one task group; SB-2 gives
    the Δ the rewards say (+20 pp); PASSK counts the trials that could not be audited (no trajectory: ERROR) as
    not delivered. The root lies outside the rootdir, so the group is named after the root."""
    root = corpus / "skillsbench-archive"
    result = run(pytester, root, "-m", "PASSK or SB-2", "--trajaudit-report=out")
    groups = json.loads((pytester.path / "out" / "summary.json").read_text())["groups"]
    by_code = {g["code"]: g for g in groups}
    assert [g["group"] for g in groups] == ["skillsbench-archive::3d-scan-calc"] * 2
    assert len(by_code["SB-2"]["members"]) == 10
    assert by_code["SB-2"]["status"] == "PASS"
    assert by_code["SB-2"]["evidence"].startswith("claude-code: Δ +20.0 pp helped (mean reward 1.00 with skills (5 "
                                                  "trial(s)) vs 0.80 without (5))")
    assert by_code["PASSK"]["status"] == "WARN"
    entries = {e["condition"]: e for e in by_code["PASSK"]["data"]["pass_k"]}
    assert (entries["with-skills"]["n_success_raw"], entries["with-skills"]["n_error"]) == (5, 4)
    assert outcome_of(result, "::3d-scan-calc::SB-2") == "PASSED"
