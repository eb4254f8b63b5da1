"""The verifier/task family (the seed's audit-general.md P3, P5, P9, P11, P12, P13): every status, every N/A reason,
and the seed's own examples where they apply. Task dirs are built in tmp_path; jobs are BenchFlow job dirs loaded with
``load_job`` and ``Settings(tasks_dirs=...)`` (or the principle builders, for trajectory-only cases)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pytest_trajaudit.aggregate.verdicts import Outcome, job_verdict
from pytest_trajaudit.discover.jobs import classify
from pytest_trajaudit.loaders.task import load_task
from pytest_trajaudit.model import Job, Verifier
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles._rerun import perturbations
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.report.summary import Rollup
from pytest_trajaudit.settings import Settings
from tests.jobfactory import make_job
from tests.principles.builders import acp_job, msg, run, sh, user, write
from tests.taskfactory import FAIR_CHECK, P12_PYTHON, TIGHT_CHECK, ctrf, load, make_task, result_doc


def test_family_registered_with_the_documented_tiers_and_keys():
    reg = registry()
    expected = {"P3": ("C2", "failure_bucket"), "P5": ("C1", "format_vs_reasoning"),
                "P9": ("C0", "row_vs_entity_gotcha"), "P11": ("C0", "verifier_alignment"),
                "P12": ("C1", "tests_too_tight"), "P13": ("C2", "llm_judge_concurrence")}
    for code, (tier, key) in expected.items():
        p = reg[code]
        assert (p.tier, p.key, p.family, p.affects_verdict) == (tier, key, "general", True), code


def _job(tmp_path: Path, *, reward: float | None = 0.0, lines: list | None = None, files: dict | None = None,
         tasks: tuple[Path, ...] = (), name: str = "demo__1", cfg: Settings | None = None, **result) -> Job:
    lines = lines if lines is not None else [user("Write the ids to /root/out.json."), msg("Wrote /root/out.json.")]
    return load(tmp_path / "jobs", name, lines=lines, result=result_doc(reward=reward, trial=name, **result),
                files=files, tasks=tasks, cfg=cfg)


# ==================================================================================================== P3


def test_p3_passed_run():
    f = run("P3", acp_job(msg("All done."), reward=1.0))
    assert f.status == "PASS"
    assert f.data["failure_bucket"] == "passed"
    assert f.evidence == "passed (reward 1)"


def test_p3_harness_exception_is_unfair_env(tmp_path):
    j = _job(tmp_path, reward=0.0, exception_info={"exception_type": "DockerError",
                                                   "exception_message": "image pull failed: apt mirror unreachable"})
    f = run("P3", j)
    assert f.status == "WARN"
    assert f.data["failure_bucket"] == "unfair_env"
    assert "DockerError: image pull failed: apt mirror unreachable" in f.evidence
    assert "agent's final: Wrote /root/out.json." in f.evidence


def test_p3_no_reward_is_unfair_env(tmp_path):
    f = run("P3", _job(tmp_path, reward=None))
    assert f.status == "WARN"
    assert f.data["failure_bucket"] == "unfair_env"
    assert "the verifier produced no reward" in f.evidence


@pytest.mark.parametrize(("layout", "what"), [("bare-file", "a bare trajectory"), ("record", "this log record"),
                                               ("swe-agent-dir", "a SWE-agent run folder")])
def test_p3_a_log_without_a_harness_is_na_not_unfair_env(layout, what):
    j = acp_job(msg("done"), reward=None)
    j.layout = layout
    f = run("P3", j)
    assert f.status == "N/A"
    assert f.evidence == f"{what} records no verifier result"
    assert "failure_bucket" not in f.data


def test_p3_seed_hard_example_needs_a_judge_and_quotes_both_sides(tmp_path):
    """Seed: PR #755 claude-noskills, reward 0.10, a coherent policy missing the ats discriminator."""
    final = ("A TicToc abort is unnecessary iff (1) `commit_ts < current_wts` AND (2) no write exists on K with "
             "`new_wts ∈ (local_wts, commit_ts]`.")
    j = _job(tmp_path, reward=0.1, lines=[user("Find unnecessary aborts."), msg(final)],
             files={"verifier/ctrf.json": ctrf(3, 1, [("test_score", "AssertionError: score 0.10: treats abort "
                                                                     "records broadly as unnecessary")])})
    f = run("P3", j)
    assert f.status == "N/A"
    assert f.evidence.startswith("reward 0.1: hard / unfair_instruction / unfair_test / capability_gap / "
                                 "ignored_instruction needs a judge")
    assert "agent's final: A TicToc abort is unnecessary iff (1) `commit_ts < current_wts`" in f.evidence
    assert "verifier: test_score: AssertionError: score 0.10: treats abort records broadly as unnecessary" in f.evidence
    assert f.data["failure_bucket"] == "unjudged"
    assert f.data["agent_final"].startswith("A TicToc abort is unnecessary")


def test_p3_quotes_say_none_when_nothing_to_quote(tmp_path):
    f = run("P3", _job(tmp_path, reward=0.0, lines=[user("x"), sh("ls", "")]))
    assert "verifier: (no failure message)" in f.evidence


def test_p3_verifier_message_from_stdout_keeps_the_telling_lines(tmp_path):
    stdout = "collected 3 items\n\ntests/test_outputs.py ..F\nE   AssertionError: assert 4469 == 3216\n1 failed, 2 passed\n"
    f = run("P3", _job(tmp_path, reward=0.0, files={"verifier/test-stdout.txt": stdout}))
    assert "verifier: E AssertionError: assert 4469 == 3216 | 1 failed, 2 passed" in f.evidence
    assert "collected 3 items" not in f.evidence


# ==================================================================================================== P5


def test_p5_seed_reasoning_loss_example(tmp_path):
    """Seed (PR #755 codex-skills): awk produced 4469 ids, stdout said "4469", the verifier said "all soft aborts
    treated as unnecessary" — wrong policy, not wrong format."""
    lines = [user("Find unnecessary aborts."), sh("awk -f pick.awk aborts.tsv | wc -l", "4469"), msg("4469")]
    failure = ("test_score", "AssertionError: all soft aborts treated as unnecessary\nassert 4469 == 3216")
    f = run("P5", _job(tmp_path, reward=0.0, lines=lines, files={"verifier/ctrf.json": ctrf(2, 1, [failure])}))
    assert f.status == "PASS"
    assert f.data["format_vs_reasoning"] == "reasoning_loss"
    assert f.evidence.startswith("reasoning_loss: the verifier got 4469 where it expected 3216")
    assert "agent's final: 4469" in f.evidence
    assert "all soft aborts treated as unnecessary" in f.evidence


def test_p5_message_telling_neither_needs_a_judge(tmp_path):
    """The seed's verifier rationale alone ("all soft aborts treated as unnecessary") names no mismatch shape."""
    f = run("P5", _job(tmp_path, reward=0.0,
                       files={"verifier/ctrf.json": ctrf(0, 1, [("test_score", "all soft aborts treated as unnecessary")])}))
    assert f.status == "N/A"
    assert f.evidence.startswith("the failure message tells neither format nor value loss: needs a judge")
    assert "all soft aborts treated as unnecessary" in f.evidence


@pytest.mark.parametrize(("reward", "reason"), [(None, "no reward recorded"),
                                                (1.0, "reward is 1: C1 runs on failures only")])
def test_p5_na_without_a_failure(tmp_path, reward, reason):
    f = run("P5", _job(tmp_path, reward=reward, files={"verifier/test-stdout.txt": "JSONDecodeError"}))
    assert f.status == "N/A"
    assert f.evidence == reason


def test_p5_na_without_any_verifier_message(tmp_path):
    f = run("P5", _job(tmp_path, reward=0.0))
    assert f.status == "N/A"
    assert f.evidence == "the verifier recorded no failure message (no ctrf failures, no test-stdout)"


# ==================================================================================================== P9

ABORTS_TSV = "txn\tkey\tcommit_ts\tcurrent_wts\n1\ta\t5\t7\n1\tb\t5\t3\n2\ta\t6\t9\n3\tc\t2\t4\n3\ta\t2\t1\n"
P9_TOML = {"trajaudit": {"p9": {"source": "environment/data/aborts.tsv", "entity_key": "txn"}}}


@pytest.fixture
def p9_tasks(tmp_path: Path) -> Path:
    make_task(tmp_path / "tasks", "demo", toml=P9_TOML, environment={"data/aborts.tsv": ABORTS_TSV})
    return tmp_path / "tasks"


def test_p9_several_rows_per_entity_on_a_failed_run_is_warn(tmp_path, p9_tasks):
    j = _job(tmp_path, reward=0.1, tasks=(p9_tasks,),
             lines=[user("x"), write("/root/solve.py", "for row in rows:\n    if row['commit_ts'] < row['current_wts']:\n"
                                                        "        out.append(row['txn'])\n")])
    f = run("P9", j)
    assert f.status == "WARN"
    assert f.evidence.startswith("5 rows, 3 unique txn in environment/data/aborts.tsv: several rows per entity on a "
                                 "failed run")
    assert "no aggregation by txn seen in its code" in f.evidence
    assert f.data == {"applies": True, "rows": 5, "entities": 3, "entity_key": "txn",
                      "source": "environment/data/aborts.tsv", "agent_aggregates": False, "evidence": f.evidence}


def test_p9_notes_when_the_agent_aggregates_by_the_entity(tmp_path, p9_tasks):
    j = _job(tmp_path, reward=0.1, tasks=(p9_tasks,),
             lines=[user("x"), sh("python -c \"import pandas as pd; df = pd.read_csv('a.tsv', sep='\\t'); "
                                  "print(df.groupby('txn').commit_ts.min())\"", "")])
    f = run("P9", j)
    assert f.status == "WARN"
    assert f.data["agent_aggregates"] is True
    assert "its code aggregates by txn" in f.evidence


def test_p9_passing_run_is_pass_with_the_counts(tmp_path, p9_tasks):
    f = run("P9", _job(tmp_path, reward=1.0, tasks=(p9_tasks,)))
    assert f.status == "PASS"
    assert f.evidence == "5 rows, 3 unique txn in environment/data/aborts.tsv: several rows per entity, and the run passed"
    assert f.data["applies"] is True


def test_p9_one_row_per_entity_does_not_apply(tmp_path):
    tsv = "txn\tkey\n1\ta\n2\tb\n3\tc\n"
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", toml=P9_TOML, environment={"data/aborts.tsv": tsv})
    f = run("P9", _job(tmp_path, reward=0.0, tasks=(tasks,)))
    assert f.status == "PASS"
    assert f.evidence == "3 rows, 3 unique txn in environment/data/aborts.tsv: one row per entity"
    assert f.data["applies"] is False


@pytest.mark.parametrize(("name", "content"), [
    ("rows.jsonl", '{"txn": 1}\n{"txn": 1}\n\n{"txn": 2}\n'),
    ("rows.json", json.dumps([{"txn": 1}, {"txn": 1}, {"txn": 2}])),
    ("rows.csv", "txn,key\n1,a\n1,b\n2,a\n"),
])
def test_p9_counts_jsonl_json_and_csv(tmp_path, name, content):
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", toml={"trajaudit": {"p9": {"source": f"environment/{name}", "entity_key": "txn"}}},
              environment={name: content})
    f = run("P9", _job(tmp_path, reward=0.0, tasks=(tasks,)))
    assert f.status == "WARN"
    assert (f.data["rows"], f.data["entities"]) == (3, 2)


def test_p9_na_without_a_task():
    j = acp_job(msg("done"), reward=0.0)
    f = run("P9", j)
    assert f.status == "N/A"
    assert f.evidence == "needs the task's entity key: no --trajaudit-tasks given"
    assert f.data == {"applies": False}


def test_p9_na_without_the_config(tmp_path):
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", toml={"trajaudit": {"p9": {"source": "environment/a.tsv"}}})
    f = run("P9", _job(tmp_path, tasks=(tasks,)))
    assert f.status == "N/A"
    assert f.evidence == "the task declares no entity key ([trajaudit.p9] source + entity_key in task.toml)"


@pytest.mark.parametrize(("source", "files", "reason"), [
    ("/etc/passwd", {}, "must be relative to the task dir"),
    ("../outside.tsv", {}, "must be relative to the task dir"),
    ("environment/missing.tsv", {}, "source is missing"),
    ("environment/data", {"environment/data/x.tsv": "txn\n1\n"}, "source is dir"),
    ("environment/a.tsv", {"environment/a.tsv": "id\tkey\n1\ta\n"}, "no column 'txn' in the header"),
    ("environment/a.json", {"environment/a.json": "{not json"}, "cannot count entities: environment/a.json"),
    ("environment/a.json", {"environment/a.json": '{"txn": 1}'}, "a JSON source must be a list of row objects"),
    ("environment/a.tsv", {"environment/a.tsv": "txn\tkey\n"}, "environment/a.tsv has no rows"),
    ("environment/a.jsonl", {"environment/a.jsonl": '{"id": 1}\n{"id": 1}\n'}, "has 2 rows but none carries 'txn'"),
])
def test_p9_na_when_the_source_cannot_be_counted(tmp_path, source, files, reason):
    tasks = tmp_path / "tasks"
    (tmp_path / "outside.tsv").write_text("txn\n1\n1\n")
    make_task(tasks, "demo", toml={"trajaudit": {"p9": {"source": source, "entity_key": "txn"}}}, extra=files)
    f = run("P9", _job(tmp_path, tasks=(tasks,)))
    assert f.status == "N/A"
    assert f.evidence.startswith("cannot count entities")
    assert reason in f.evidence
    assert f.data["applies"] is False


def test_p9_symlinked_source_is_not_followed(tmp_path):
    outside = tmp_path / "outside.tsv"
    outside.write_text("txn\n1\n1\n")
    tasks = tmp_path / "tasks"
    d = make_task(tasks, "demo", toml={"trajaudit": {"p9": {"source": "environment/a.tsv", "entity_key": "txn"}}})
    (d / "environment").mkdir()
    os.symlink(outside, d / "environment" / "a.tsv")
    f = run("P9", _job(tmp_path, tasks=(tasks,)))
    assert f.status == "N/A"
    assert "source is symlink" in f.evidence


# =================================================================================================== P11


def test_p11_all_tests_failed_but_reward_one_is_flipped_signal_and_the_job_invalid(tmp_path):
    """Seed: P11 flipped_signal → the verifier signal is wrong, the result not credible: per-job INVALID."""
    j = _job(tmp_path, reward=1.0, files={"verifier/ctrf.json": ctrf(0, 3)})
    f = run("P11", j)
    assert f.status == "FAIL"
    assert f.evidence == "flipped_signal: reward 1 but 3/3 verifier tests failed (ctrf.json)"
    assert f.data["flipped_signal"] is True and f.data["aligned"] is False
    assert f.data["tests"]["failed"] == 3
    tier = registry()["P11"].tier
    verdict, reasons = job_verdict({"P11": Outcome(f.status, tier, "integrity", f.evidence, f.data["flipped_signal"])})
    assert verdict == "INVALID"
    assert reasons == [f"P11: {f.evidence}"]  # "flipped_signal" once, not twice


def test_p11_flipped_signal_makes_the_job_invalid_end_to_end(tmp_path):
    path = make_job(tmp_path, "demo__1", [user("x"), msg("done")], result_doc(reward=1.0, trial="demo__1"),
                    {"verifier/ctrf.json": ctrf(0, 2)})
    ref = classify(path)
    reg = registry()
    audit = audit_job(ref, Settings(), [reg["P10"], reg["P11"]])
    rollup = Rollup()
    for code, res in audit.results.items():
        p = reg[code]
        rollup.add({"job": "demo__1", "code": code, "status": res.status, "evidence": res.evidence, "data": res.data,
                    "events": res.events, "tier": p.tier, "family": p.family, "affects": True, "meta": audit.meta})
    verdict, reasons = rollup.verdicts()["demo__1"]
    assert verdict == "INVALID"
    assert reasons[0].startswith("P11: flipped_signal: reward 1 but 2/2 verifier tests failed")


def test_p11_reward_sources_on_both_sides_of_a_pass_are_flipped(tmp_path):
    f = run("P11", _job(tmp_path, reward=1.0, files={"verifier/reward.txt": "0\n"}))
    assert f.status == "FAIL"
    assert f.evidence == "flipped_signal: reward sources disagree (result.json=1, reward.txt=0)"
    assert f.data["sources"] == {"result.json": 1.0, "reward.txt": 0.0}


def test_p11_partial_rewards_that_disagree_are_warn(tmp_path):
    f = run("P11", _job(tmp_path, reward=0.5, files={"verifier/reward.txt": "0.25"}))
    assert f.status == "WARN"
    assert f.evidence == "reward sources disagree (result.json=0.5, reward.txt=0.25)"
    assert f.data["flipped_signal"] is False


def test_p11_reward_zero_with_every_test_passing_is_warn(tmp_path):
    f = run("P11", _job(tmp_path, reward=0.0, files={"verifier/ctrf.json": ctrf(4, 0)}))
    assert f.status == "WARN"
    assert f.evidence == "reward 0 although all 4 verifier tests passed (ctrf.json; a separate scorer?)"


def test_p11_unreadable_reward_txt_is_warn(tmp_path):
    f = run("P11", _job(tmp_path, reward=1.0, files={"verifier/reward.txt": "PASSED\n"}))
    assert f.status == "WARN"
    assert "reward.txt holds no number" in f.evidence


def test_p11_pass_the_agent_itself_calls_a_failure_is_warn(tmp_path):
    lines = [user("x"), msg("I could not solve the task; the parser still crashes.")]
    f = run("P11", _job(tmp_path, reward=1.0, lines=lines, files={"verifier/reward.txt": "1"}))
    assert f.status == "WARN"
    assert f.evidence.startswith("passed although the agent's final says it failed: I could not solve the task")
    assert f.data["final_claim"] == "failure"


@pytest.mark.parametrize(("files", "summary"), [
    ({"verifier/reward.txt": "1.0\n"}, "2 verifier signals agree (result.json=1, reward.txt=1)"),
    ({"verifier/ctrf.json": ctrf(3, 0)}, "2 verifier signals agree (result.json=1, 3/3 tests passed)"),
    ({"verifier/reward.txt": "1", "verifier/ctrf.json": ctrf(3, 0)},
     "3 verifier signals agree (result.json=1, reward.txt=1, 3/3 tests passed)"),
    ({"verifier/output.json": json.dumps({"tests": [{"name": "a", "status": "PASSED"}]})},
     "2 verifier signals agree (result.json=1, 1/1 tests passed)"),
])
def test_p11_agreeing_signals_are_aligned(tmp_path, files, summary):
    lines = [user("x"), msg("All tests pass; the task is complete.")]
    f = run("P11", _job(tmp_path, reward=1.0, lines=lines, files=files))
    assert f.status == "PASS"
    assert f.evidence == summary
    assert f.data["aligned"] is True and f.data["flipped_signal"] is False
    assert f.data["final_claim"] == "success"


def test_p11_partial_reward_with_some_tests_failing_is_aligned(tmp_path):
    f = run("P11", _job(tmp_path, reward=0.5, files={"verifier/reward.txt": "0.5", "verifier/ctrf.json": ctrf(1, 1)}))
    assert f.status == "PASS"


def test_p11_one_reward_source_is_na(tmp_path):
    f = run("P11", _job(tmp_path, reward=1.0))
    assert f.status == "N/A"
    assert f.evidence == "only one reward source and no test summary to cross-check; aligned_by_prose needs a judge"
    assert f.data["aligned"] is None


def test_p11_no_reward_source_is_na():
    j = acp_job(msg("done"))
    j.verifier = Verifier()
    f = run("P11", j)
    assert f.status == "N/A"
    assert f.evidence.startswith("no reward source and no test summary")


# =================================================================================================== P12

P12_TOML = {"trajaudit": {"p12": P12_PYTHON}}


def _p12_tasks(tmp_path: Path, check: str = TIGHT_CHECK, p12: dict | None = None, **more) -> Path:
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", toml={"trajaudit": {"p12": p12 if p12 is not None else P12_PYTHON}},
              tests={"check.py": check, **more})
    return tasks


def _p12(tmp_path: Path, tasks: Path | None, artifact: str | bytes | None = "[1,2,3]", *, reward: float | None = 0.0,
         where: str = "artifacts/out.json", cfg: Settings | None = None):
    files = {where: artifact} if artifact is not None else {}
    j = _job(tmp_path, reward=reward, files=files, tasks=(tasks,) if tasks else (), cfg=cfg)
    return run("P12", j, cfg or Settings(tasks_dirs=(tasks,) if tasks else (), rerun=True))


def test_p12_seed_unfair_test_example_is_tests_too_tight(tmp_path):
    """Seed: task asks "JSON list of integers", agent emits [1,2,3], test demands [1, 2, 3] → tests_too_tight."""
    f = _p12(tmp_path, _p12_tasks(tmp_path))
    assert f.status == "WARN"
    assert f.evidence == ("tests_too_tight: the verifier accepts the output after whitespace: JSON with spaces (it "
                          "rejects the original): flag the task for outcome_verified")
    assert f.data["checked"] is True
    assert f.data["perturbations_passing"] == ["whitespace: JSON with spaces"]
    assert f.data["artifact"] == "artifacts/out.json"
    runs = {r["perturbation"]: r["outcome"] for r in f.data["runs"]}
    assert runs["original"] == "fail"
    assert runs["whitespace: JSON with spaces"] == "pass"
    assert runs["whitespace: indented JSON"] == "fail"


def test_p12_fair_verifier_passes_after_every_perturbation_fails(tmp_path):
    f = _p12(tmp_path, _p12_tasks(tmp_path, FAIR_CHECK), "[1, 2, 4]")
    assert f.status == "PASS"
    assert f.data["checked"] is True and f.data["perturbations_passing"] == []
    n = len(perturbations(b"[1, 2, 4]"))
    assert f.evidence == f"{n} syntactic perturbation(s) re-verified; none passes"
    assert [r["outcome"] for r in f.data["runs"]] == ["fail"] * (n + 1)


def test_p12_integral_floats_as_ints(tmp_path):
    f = _p12(tmp_path, _p12_tasks(tmp_path), "[1.0, 2.0, 3.0]")
    assert f.status == "WARN"
    assert f.data["perturbations_passing"] == ["integral floats as ints"]


def test_p12_text_output_whitespace_normalized(tmp_path):
    check = "import sys\nsys.exit(0 if open(sys.argv[1]).read().strip() == '1 2 3' else 1)\n"
    f = _p12(tmp_path, _p12_tasks(tmp_path, check), "1  2   3\n")
    assert f.status == "WARN"
    assert [r["perturbation"] for r in f.data["runs"]] == ["original", "whitespace normalized", "trailing newline removed"]
    assert f.data["perturbations_passing"] == ["whitespace normalized"]


def test_p12_trailing_newline(tmp_path):
    check = "import sys\nsys.exit(0 if open(sys.argv[1]).read() == '[1, 2, 3]\\n' else 1)\n"
    f = _p12(tmp_path, _p12_tasks(tmp_path, check), "[1, 2, 3]")
    assert f.status == "WARN"
    assert f.data["perturbations_passing"] == ["trailing newline added"]


def test_p12_artifact_found_under_its_full_container_path(tmp_path):
    f = _p12(tmp_path, _p12_tasks(tmp_path), where="artifacts/root/out.json")
    assert f.status == "WARN"
    assert f.data["artifact"] == "artifacts/root/out.json"


def test_p12_verifier_sees_a_private_copy_of_tests_and_the_placeholders(tmp_path):
    check = ("import os, sys\n"
             "here = os.path.dirname(os.path.abspath(__file__))\n"
             "ok = (os.environ['TRAJAUDIT_TESTS_DIR'] == here and os.path.exists(os.path.join(here, 'data', 'want.txt'))\n"
             "      and os.environ['TRAJAUDIT_OUTPUT'] == sys.argv[1] and os.environ['TRAJAUDIT_TASK_DIR'] == sys.argv[2]\n"
             "      and not here.startswith(sys.argv[2]) and os.getcwd() != here)\n"
             "want = open(os.path.join(here, 'data', 'want.txt')).read()\n"
             "sys.exit(0 if ok and open(sys.argv[1]).read() == want else 1)\n")
    p12 = {**P12_PYTHON, "command": ["{python}", "{tests_dir}/check.py", "{output}", "{task_dir}"]}
    tasks = _p12_tasks(tmp_path, check, p12, **{"data/want.txt": '[1, 2, 3]'})
    f = _p12(tmp_path, tasks)
    assert f.status == "WARN", f.data
    assert f.data["perturbations_passing"] == ["whitespace: JSON with spaces"]


def test_p12_verifier_that_hangs_on_the_original_times_out_never_passes(tmp_path):
    hang = "import time\ntime.sleep(60)\n"
    tasks = _p12_tasks(tmp_path, hang, {**P12_PYTHON, "timeout": 2})
    t0 = time.monotonic()
    f = _p12(tmp_path, tasks)
    assert time.monotonic() - t0 < 20
    assert f.status == "N/A"
    assert f.evidence == "the verifier re-run timed out after 2s on the original output"
    assert f.data["checked"] is False and f.data["perturbations_passing"] == []
    assert f.data["runs"] == [{"perturbation": "original", "outcome": "timeout", "returncode": None}]


def test_p12_verifier_that_hangs_on_one_perturbation_counts_it_as_not_passing(tmp_path):
    """A timeout is never a pass: the hanging perturbation is recorded as a timeout and not counted."""
    check = ("import sys, time\n"
             "got = open(sys.argv[1]).read()\n"
             "if got.startswith('[\\n'):\n"
             "    time.sleep(60)\n"
             "sys.exit(0 if got == '[1, 2, 3]' else 1)\n")
    tasks = _p12_tasks(tmp_path, check, {**P12_PYTHON, "timeout": 2})
    f = _p12(tmp_path, tasks)
    assert f.status == "WARN"
    assert f.data["perturbations_passing"] == ["whitespace: JSON with spaces"]
    runs = {r["perturbation"]: r["outcome"] for r in f.data["runs"]}
    assert runs["whitespace: indented JSON"] == "timeout"
    assert f.data["perturbations_unsettled"] == ["whitespace: indented JSON (timeout)"]
    assert f.evidence.endswith("; 1 re-run(s) gave no verdict: whitespace: indented JSON (timeout)")


def test_p12_no_perturbation_settled_is_na_never_pass(tmp_path):
    """Every perturbed re-run times out: nothing was re-verified, so no PASS."""
    check = ("import sys, time\n"
             "got = open(sys.argv[1]).read()\n"
             "if got != '[1,2,3]':\n"
             "    time.sleep(60)\n"
             "sys.exit(1)\n")
    tasks = _p12_tasks(tmp_path, check, {**P12_PYTHON, "timeout": 2})
    f = _p12(tmp_path, tasks)
    assert f.status == "N/A"
    assert f.evidence.startswith("no perturbation got a verdict (whitespace: JSON with spaces (timeout)")
    assert f.evidence.endswith("timeout 2s)")


def test_p12_a_hung_verifier_is_killed_with_its_children(tmp_path):
    """A shell verifier whose child hangs: on timeout the whole process group goes, not only the shell."""
    pidfile = tmp_path / "child.pid"
    child = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    p12 = {**P12_PYTHON, "timeout": 2, "command": ["/bin/sh", "-c", "{python} {tests_dir}/child.py; echo done"]}
    tasks = _p12_tasks(tmp_path, "", p12, **{"child.py": child})
    f = _p12(tmp_path, tasks)
    assert f.status == "N/A" and "timed out after 2s" in f.evidence
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid), f"verifier child {pid} survived the timeout"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return state not in ("Z", "X")


def test_p12_timeout_defaults_to_the_settings(tmp_path):
    p12 = {k: v for k, v in P12_PYTHON.items() if k != "timeout"}
    tasks = _p12_tasks(tmp_path, "import time\ntime.sleep(60)\n", p12)
    cfg = Settings(tasks_dirs=(tasks,), verifier_timeout=1.5, rerun=True)
    f = _p12(tmp_path, tasks, cfg=cfg)
    assert f.evidence == "the verifier re-run timed out after 1.5s on the original output"


def test_p12_verifier_that_cannot_start_is_na(tmp_path):
    p12 = {**P12_PYTHON, "command": [str(tmp_path / "no-such-verifier"), "{output}"]}
    f = _p12(tmp_path, _p12_tasks(tmp_path, p12=p12))
    assert f.status == "N/A"
    assert f.evidence.startswith("the verifier could not be started: FileNotFoundError")


def test_p12_rerun_that_passes_the_original_is_na(tmp_path):
    f = _p12(tmp_path, _p12_tasks(tmp_path), "[1, 2, 3]", reward=0.0)
    assert f.status == "N/A"
    assert f.evidence.startswith("the re-run passes the original output although the recorded reward is 0")
    assert f.data["checked"] is False


def test_p12_non_utf8_output_has_no_perturbation(tmp_path):
    f = _p12(tmp_path, _p12_tasks(tmp_path), b"\xff\xfe[1,2,3]")
    assert f.status == "N/A"
    assert f.evidence == "the output is not UTF-8 text: no syntactic perturbation applies"


@pytest.mark.parametrize(("reward", "reason"), [(None, "no reward recorded"),
                                                (1.0, "reward is 1: C1 runs on failures only")])
def test_p12_na_without_a_failure(tmp_path, reward, reason):
    f = _p12(tmp_path, _p12_tasks(tmp_path), reward=reward)
    assert (f.status, f.evidence) == ("N/A", reason)
    assert f.data == {"checked": False, "perturbations_passing": []}


def test_p12_na_without_a_task(tmp_path):
    f = _p12(tmp_path, None)
    assert f.status == "N/A"
    assert f.evidence == "needs the task's verifier: no --trajaudit-tasks given"


def test_p12_na_when_the_task_is_not_found(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    f = _p12(tmp_path, tasks)
    assert f.status == "N/A"
    assert f.evidence.startswith("needs the task's verifier: no task directory named demo")


@pytest.mark.parametrize(("p12", "reason"), [
    ({}, "the task declares no verifier re-run ([trajaudit.p12] command + output in task.toml)"),
    ({"output": "/root/out.json"}, "the task declares no verifier re-run"),
    ({"command": ["{python}", "x"]}, "the task declares no verifier re-run"),
    ({"output": "/root/out.json", "command": [1, 2]}, "[trajaudit.p12] command must be a list of strings"),
    ({"output": "/root/out.json", "command": ["{python}", "{nope}"]},
     "[trajaudit.p12] command has an unknown placeholder: 'nope'"),
])
def test_p12_na_for_a_missing_or_bad_config(tmp_path, p12, reason):
    f = _p12(tmp_path, _p12_tasks(tmp_path, p12=p12))
    assert f.status == "N/A"
    assert f.evidence.startswith(reason)


def test_p12_na_without_any_trajaudit_table(tmp_path):
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", tests={"check.py": TIGHT_CHECK})
    f = _p12(tmp_path, tasks)
    assert f.evidence.startswith("the task declares no verifier re-run")


def test_p12_command_as_a_string_is_split(tmp_path):
    p12 = {**P12_PYTHON, "command": "{python} {tests_dir}/check.py {output}"}
    f = _p12(tmp_path, _p12_tasks(tmp_path, p12=p12))
    assert f.status == "WARN"


@pytest.mark.parametrize("output", ["/root/solve.py", "/root/run.sh", "/root/Main.java", "/root/plugin.PTH"])
def test_p12_code_artifact_is_refused(tmp_path, output):
    """Re-running a verifier on agent-written code would execute it: refused, whatever the verifier."""
    marker = tmp_path / "ran"
    check = f"open({str(marker)!r}, 'w').write('x')\n"
    p12 = {**P12_PYTHON, "output": output}
    f = _p12(tmp_path, _p12_tasks(tmp_path, check, p12), "print(1)\n", where=f"artifacts/{Path(output).name}")
    assert f.status == "N/A"
    assert f.evidence == f"the output {output} is code: re-running the verifier on it would execute agent-written code"
    assert not marker.exists()


def test_p12_missing_artifact_is_na(tmp_path):
    f = _p12(tmp_path, _p12_tasks(tmp_path), None)
    assert f.status == "N/A"
    assert f.evidence == ("the agent's output artifact is not in the job (looked for artifacts/root/out.json and "
                          "artifacts/out.json)")


def test_p12_symlinked_artifact_is_not_followed(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("[1,2,3]")
    tasks = _p12_tasks(tmp_path)
    j = _job(tmp_path, tasks=(tasks,), files={"artifacts/.keep": ""})
    os.symlink(outside, j.dir / "artifacts" / "out.json")
    f = run("P12", j, Settings(tasks_dirs=(tasks,), rerun=True))
    assert f.status == "N/A"
    assert "artifact is not in the job" in f.evidence


def test_p12_traversal_in_the_output_path_is_never_followed(tmp_path):
    """``output = "/../../secret.json"``: the artifact lookup never leaves the job's artifacts/."""
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "secret.json").write_text("[1,2,3]")
    tasks = _p12_tasks(tmp_path, p12={**P12_PYTHON, "output": "/../../secret.json"})
    f = _p12(tmp_path, tasks, None)
    assert f.status == "N/A"
    assert "artifact is not in the job" in f.evidence


def test_perturbations_are_distinct_and_syntactic():
    ps = dict(perturbations(b'{"b": 1.0, "a": [1, 2]}\n'))
    # "trailing newline removed" gives the same bytes as "JSON with spaces": listed once
    assert list(ps) == ["whitespace: compact JSON", "whitespace: JSON with spaces", "whitespace: indented JSON",
                        "key order reversed", "integral floats as ints", "ints as floats",
                        "decimals in exponent notation"]
    assert json.loads(ps["key order reversed"]) == {"a": [1, 2], "b": 1.0}
    assert list(json.loads(ps["key order reversed"])) == ["a", "b"]
    assert ps["integral floats as ints"] == b'{"b": 1, "a": [1, 2]}\n'
    assert ps["ints as floats"] == b'{"b": 1.0, "a": [1.0, 2.0]}\n'
    assert ps["decimals in exponent notation"] == b'{"b": 1e0, "a": [1, 2]}\n'
    # result-list order is semantic: never reordered
    assert all(json.loads(v).get("a") in ([1, 2], [1.0, 2.0]) for v in ps.values())
    assert perturbations(b"\xff") == []
    assert dict(perturbations(b"a  b\n")) == {"whitespace normalized": b"a b\n", "trailing newline removed": b"a  b"}
    assert dict(perturbations(b"[true, false]")) == {"whitespace: compact JSON": b"[true,false]",
                                                     "whitespace: indented JSON": b"[\n  true,\n  false\n]",
                                                     "trailing newline added": b"[true, false]\n"}


# =================================================================================================== P13


@pytest.mark.parametrize(("rel", "source", "hit"), [
    ("tests/test_outputs.py", "import json\nfrom openai import OpenAI\n", "tests/test_outputs.py imports openai"),
    ("tests/judge/score_outputs.py", "  import anthropic\n", "tests/judge/score_outputs.py imports anthropic"),
    ("verifier/score_outputs.py", "import litellm as llm\n", "verifier/score_outputs.py imports litellm"),
    ("tests/test_outputs.py", "import os, openai\n", "tests/test_outputs.py imports openai"),
    ("tests/test_outputs.py", "import os as o, sys, anthropic as a\n", "tests/test_outputs.py imports anthropic"),
    ("tests/test_outputs.py", "from litellm.utils import token_counter\n", "tests/test_outputs.py imports litellm"),
])
def test_p13_applies_when_the_verifier_imports_an_llm_client(tmp_path, rel, source, hit):
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", extra={rel: source})
    f = run("P13", _job(tmp_path, tasks=(tasks,)))
    assert f.status == "N/A"
    assert f.evidence == (f"applies ({hit}) but cross-judge concurrence needs at least two --trajaudit-judge models "
                          "(none configured)")
    assert f.data == {"checked": False, "agreement": None, "applicable": True, "llm_imports": [hit]}


@pytest.mark.parametrize("extra", [
    {"tests/test_outputs.py": "import json\n# we could import openai here\nx = 'import anthropic'\n"},
    {"tests/test_outputs.py": "import openai_compat_shim\n"},
    {"tests/test_outputs.py": "from myopenai import client\nimport os, openai_like\n"},
    {"solution/solve.py": "import openai\n"},  # the oracle may call an LLM: that is not the verifier
    {"tests/notes.md": "import openai\n"},
    {},
])
def test_p13_does_not_apply_without_an_llm_import_in_the_verifier(tmp_path, extra):
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", extra=extra)
    f = run("P13", _job(tmp_path, tasks=(tasks,)))
    assert f.status == "N/A"
    assert f.evidence == "the task's verifier does not call an LLM (no anthropic/openai/litellm import)"
    assert f.data["applicable"] is False


def test_p13_na_without_a_task():
    f = run("P13", acp_job(msg("done"), reward=0.0))
    assert f.status == "N/A"
    assert f.evidence == "cannot tell whether the verifier calls an LLM: no --trajaudit-tasks given"
    assert f.data == {"checked": False, "agreement": None, "applicable": None}


# ===================================================================================== the example task


def test_example_task_judges_the_struggling_run():
    """examples/tasks/tictoc with examples/runs/benchflow/tictoc__Struggle01: P9 applies, P12 finds the spacing."""
    root = Path(__file__).resolve().parents[2] / "examples"
    ref = classify(root / "runs" / "benchflow" / "tictoc__Struggle01")
    tasks = (root / "tasks",)
    reg = registry()
    audit = audit_job(ref, Settings(tasks_dirs=tasks, rerun=True), [reg[c] for c in ("P9", "P12", "P13")])
    assert audit.error is None
    assert audit.results["P9"].status == "WARN"
    assert audit.results["P9"].evidence.startswith("5 rows, 3 unique txn in environment/data/aborts.tsv")
    assert audit.results["P12"].status == "WARN"
    assert audit.results["P12"].data["perturbations_passing"] == ["whitespace: JSON with spaces"]
    assert audit.results["P13"].data["applicable"] is False
    assert load_task(root / "tasks" / "tictoc").name == "tictoc"
