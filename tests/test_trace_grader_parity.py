"""Parity with the original trace-grader on its own fixtures and shipped config.

``../shared/spec/reference/trace-grader/`` holds the original program's outputs on
``trace-grader.fixtures.json`` with ``trace-grader.config.yaml`` (``fixtures-report.json``/``.txt``, exit 3):
5 runs of 3 tasks, clean 3 / warn 0 / corrupt 1 / fail 1, T2 with 6 flags (forbidden_tool ×1,
out_of_order ×4, retry_storm ×1), T3 pass^3 = FAIL (2/3), repeatable 2, flaky 1.

``--trajaudit-literal`` reproduces all of it exactly. Precise mode (the default) differs in one documented
place: it maps the fixtures' lower-case ``edit``/``read`` onto TG-5's vocabulary, which the original never
does (the seed's RULES.md D quirk), so T2 gets a 7th flag — ``edited_without_read`` at step 4, the first edit of
db.sql
that succeeded (the three failed edits before it changed nothing). Verdicts and pass^k are the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.aggregate.verdicts import TRACE_VERDICTS, pass_k_entries, trial_coverage
from pytest_trajaudit.cli import trace_grader as trace_cli
from pytest_trajaudit.discover.jobs import JobRef
from pytest_trajaudit.loaders import traces
from pytest_trajaudit.model import Job, Verifier
from pytest_trajaudit.principles import family_codes, registry
from pytest_trajaudit.report.audit import trace_grader_block
from pytest_trajaudit.report.tracegrader import text
from pytest_trajaudit.rulesfile import apply_rules_file
from pytest_trajaudit.safeio import decode_text, parse_text
from pytest_trajaudit.settings import Settings

# ../shared/spec/reference/trace-grader beside the checkout (a git worktree may sit one level deeper)
REFERENCE = next((p / "shared" / "spec" / "reference" / "trace-grader" for p in Path(__file__).resolve().parents[1:4]
                  if (p / "shared" / "spec" / "reference" / "trace-grader").is_dir()),
                 Path(__file__).resolve().parents[1].parent / "shared" / "spec" / "reference" / "trace-grader")
SCHEMAS = Path(__file__).resolve().parents[1] / "pytest_trajaudit" / "schemas"
FLAG_KEYS = ("check", "severity", "step", "tool", "detail")
MARK = {"clean-pass": "PASS", "pass-with-warnings": "WARN", "corrupt-success": "CORRUPT", "fail": "FAIL"}
PRECISE_EXTRA = {"check": "edited_without_read", "severity": "medium", "step": 4, "tool": "edit",
                 "detail": "'edit' edited 'db.sql' at step 4 without reading it first (ungrounded)"}


@pytest.fixture(scope="module")
def ref() -> Path:
    if not (REFERENCE / "fixtures-report.json").is_file():
        pytest.skip("../shared/spec/reference/trace-grader is not present")
    return REFERENCE


def grade(ref: Path, literal: bool) -> dict:
    """The plugin's pieces end to end, shaped like the original's --json report: the traces loader (one job
    per run), TG-1..TG-5 under the original config, the run verdict, pass^k."""
    settings = apply_rules_file(Settings(literal=literal), ref / "trace-grader.config.yaml")
    path = ref / "trace-grader.fixtures.json"
    parsed = parse_text(decode_text(path.read_bytes(), path), path)
    reg = registry()
    runs, records = [], []
    for member in traces.members(parsed, str(path)):
        traj, meta = traces.load_member(parsed, str(path), member)
        job = Job(dir=path.parent, anchor=path, layout="bare-file", task=meta["task"], trial=meta["trial"],
                  verifier=Verifier(reward=meta["reward"], reward_source=meta["reward_source"]), trajectory=traj)
        recs = {}
        for code in family_codes("rules"):
            f = reg[code].func(job, settings)
            recs[code] = {"status": f.status, "evidence": f.evidence, "data": f.data}
        block = trace_grader_block({"task": job.task, "trial": job.trial}, recs)
        runs.append({k: block[k] for k in ("task", "run_id", "delivered", "step_count", "flags",
                                           "corrupt_success", "verdict")})
        records.append({"job": member, "task": job.task, "trial": job.trial, "reward": job.reward,
                        "verdict": "CLEAN", "agent": "", "model": "", "condition": None})
    pass_k = {e["task"]: e for e in pass_k_entries(records)}
    verdicts = dict.fromkeys(TRACE_VERDICTS, 0)
    for r in runs:
        verdicts[r["verdict"]] += 1
    rules = settings.rules
    summary = {"n_runs": len(runs), "n_tasks": len(pass_k), "verdicts": verdicts,
               "tasks_repeatable": sum(1 for e in pass_k.values() if e["status"] == "PASS"),
               "tasks_flaky": sum(1 for e in pass_k.values() if e["flaky"]),
               "judge_axis": "active" if rules.verified and rules.judge_enabled else "disabled (adapter, verified:false)"}
    return {"runs": runs, "pass_k": pass_k, "summary": summary, "records": records}


def render(report: dict) -> list[str]:
    """The original's text report, from the plugin's results, by the product's own renderer (pass^k as a bool)."""
    return text({**report, "pass_k": {t: {**e, "pass_hat_k": e["pass_hat_k"] == 1.0}
                                      for t, e in report["pass_k"].items()}})


def test_literal_mode_reproduces_the_json_report_exactly(ref: Path) -> None:
    golden = json.loads((ref / "fixtures-report.json").read_text(encoding="utf-8"))
    got = grade(ref, literal=True)
    assert got["runs"] == golden["runs"]
    assert {t: {"k": e["k"], "n_success": e["n_success"], "n_fail": e["n_fail"], "pass_hat_k": e["pass_hat_k"] == 1.0}
            for t, e in got["pass_k"].items()} == golden["pass_k"]
    assert got["summary"] == golden["summary"]


def test_literal_mode_reproduces_the_text_report_line_for_line(ref: Path) -> None:
    golden = (ref / "fixtures-report.txt").read_text(encoding="utf-8").splitlines()
    assert render(grade(ref, literal=True)) == golden


def test_the_goldens_as_stated(ref: Path) -> None:
    got = grade(ref, literal=True)
    t2 = next(r for r in got["runs"] if r["run_id"] == "T2-corrupt-r1")
    assert [f["check"] for f in t2["flags"]] == ["forbidden_tool"] + ["out_of_order"] * 4 + ["retry_storm"]
    t3 = got["pass_k"]["T3-flaky"]
    assert (t3["k"], t3["n_success"], t3["status"], t3["pass_hat_k"], t3["flaky"]) == (3, 2, "FAIL", 0.0, True)
    assert got["summary"]["verdicts"] == {"clean-pass": 3, "pass-with-warnings": 0, "corrupt-success": 1, "fail": 1}
    assert (got["summary"]["tasks_repeatable"], got["summary"]["tasks_flaky"]) == (2, 1)


def test_precise_mode_differs_only_by_the_documented_grounding_flag(ref: Path) -> None:
    golden = json.loads((ref / "fixtures-report.json").read_text(encoding="utf-8"))
    got = grade(ref, literal=False)
    for mine, theirs in zip(got["runs"], golden["runs"], strict=True):
        if mine["run_id"] == "T2-corrupt-r1":
            # deliberate difference: lower-case 'edit' is an edit for TG-5 in precise mode (the original's
            # grounding only knows Edit/MultiEdit, the seed's RULES.md D quirk)
            assert mine["flags"] == theirs["flags"] + [PRECISE_EXTRA]
            assert {k: v for k, v in mine.items() if k != "flags"} == {k: v for k, v in theirs.items() if k != "flags"}
        else:
            assert mine == theirs
    assert got["summary"] == golden["summary"]
    assert {t: e["pass_hat_k"] for t, e in got["pass_k"].items()} == {"T1-clean": 1.0, "T2-corrupt": 1.0,
                                                                      "T3-flaky": 0.0}


def test_flaky_quirk_and_what_we_add(ref: Path) -> None:
    """The seed counts a task whose only run failed as flaky (k=1): kept in ``flaky``; ``inconsistent`` is the
    everyday meaning (some trials delivered, some not). The estimator below k = n is τ-bench's."""
    one_fail = pass_k_entries([{"job": "j", "task": "T", "trial": "a", "reward": 0.0, "verdict": "CLEAN"}])[0]
    assert (one_fail["flaky"], one_fail["inconsistent"], one_fail["status"]) == (True, False, "FAIL")
    got = grade(ref, literal=True)
    assert got["pass_k"]["T3-flaky"]["inconsistent"] is True
    assert pass_k_entries(got["records"], k=2)[2]["pass_hat_k"] == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert trial_coverage(got["records"], 3) == [
        {"task": t, "agent": "", "model": "", "condition": None, "expected": 3, "error": "missing", "trial": None,
         "jobs": [j], "found": 1, "message": f"{t}: 1 of 3 trial(s) found"}
        for t, j in (("T1-clean", "T1-clean-r1"), ("T2-corrupt", "T2-corrupt-r1"))]


def test_through_the_engine_and_the_rollup(ref: Path) -> None:
    """The fixtures file as the plugin loads it (multi-record file → one job per run → every principle →
    summary.json's sections), literal mode."""
    multi = pytest.importorskip("pytest_trajaudit.loaders.multi")
    if not hasattr(multi, "file_jobs"):
        pytest.skip("multi-record loading is not in place yet")
    from pytest_trajaudit.principles.engine import audit_job
    from pytest_trajaudit.report.summary import Rollup

    settings = apply_rules_file(Settings(literal=True), ref / "trace-grader.config.yaml")
    refs = multi.file_jobs(ref / "trace-grader.fixtures.json", settings.max_file_bytes, given=True)
    assert [r.member for r in refs] == ["T1-clean-r1", "T2-corrupt-r1", "T3-flaky-r1", "T3-flaky-r2", "T3-flaky-r3"]
    reg = registry()
    rollup = Rollup("literal")
    for r in refs:
        audit = audit_job(r, settings, list(reg.values()))
        assert audit.error is None
        for code, res in audit.results.items():
            rollup.add({"job": f"traces.json/{r.member}", "code": code, "status": res.status,
                        "evidence": res.evidence, "data": res.data, "tier": reg[code].tier,
                        "affects": reg[code].affects_verdict, "meta": audit.meta})
    summary = rollup.summary()
    assert summary["trace_verdicts"] == {"clean-pass": 3, "pass-with-warnings": 0, "corrupt-success": 1, "fail": 1}
    assert {j["trial"]: j["trace_grader"]["verdict"] for j in summary["jobs"]} == {
        "T1-clean-r1": "clean-pass", "T2-corrupt-r1": "corrupt-success", "T3-flaky-r1": "clean-pass",
        "T3-flaky-r2": "clean-pass", "T3-flaky-r3": "fail"}
    assert {e["task"]: (e["k"], e["n_success"], e["n_fail"], e["status"], e["flaky"]) for e in summary["pass_k"]} == {
        "T1-clean": (1, 1, 0, "PASS", False), "T2-corrupt": (1, 1, 0, "PASS", False),
        "T3-flaky": (3, 2, 1, "FAIL", True)}
    # the original's own summary shape: pass_hat_k a bool, its summary block verbatim, its exit code
    golden = json.loads((ref / "fixtures-report.json").read_text(encoding="utf-8"))
    assert summary["trace_grader"] == {"pass_k": golden["pass_k"], "summary": golden["summary"], "exit_code": 3}
    jsonschema.validate(summary, json.loads((SCHEMAS / "summary.schema.json").read_text()))


def test_end_to_end_through_pytest(ref: Path, pytester: pytest.Pytester) -> None:
    """The fixtures file as an audit root of its own: one job per run, TG items, summary.json."""
    shutil.copy(ref / "trace-grader.fixtures.json", pytester.path / "traces.json")
    shutil.copy(ref / "trace-grader.config.yaml", pytester.path / "rules.yaml")
    listed = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=traces.json", "--co", "-q", "-m", "rules")
    if "member" not in getattr(JobRef, "__dataclass_fields__", {}) or "T2-corrupt-r1" not in listed.stdout.str():
        pytest.skip("multi-record collection (one job per member of a traces file) is not in place yet")
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=traces.json", "--trajaudit-rules=rules.yaml",
                                "--trajaudit-literal", "--trajaudit-report=out", "-m", "rules")
    assert result.ret == 1  # TG-1 FAIL on T2 (the original exits 3)
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    assert summary["trace_verdicts"] == {"clean-pass": 3, "pass-with-warnings": 0, "corrupt-success": 1, "fail": 1}
    assert {e["task"]: (e["k"], e["n_success"], e["status"]) for e in summary["pass_k"]} == {
        "T1-clean": (1, 1, "PASS"), "T2-corrupt": (1, 1, "PASS"), "T3-flaky": (3, 2, "FAIL")}
    tg = summary["trace_grader"]
    assert (tg["summary"]["tasks_repeatable"], tg["summary"]["tasks_flaky"], tg["exit_code"]) == (2, 1, 3)
    assert tg["pass_k"]["T3-flaky"] == {"k": 3, "n_success": 2, "n_fail": 1, "pass_hat_k": False}


# ------------------------------------------------------------------------- the trace-grader command line


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = trace_cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_prints_the_golden_text_report_and_exits_3(ref: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "--traces", str(ref / "trace-grader.fixtures.json"),
                        "--config", str(ref / "trace-grader.config.yaml"), "--literal")
    assert code == 3
    assert out == (ref / "fixtures-report.txt").read_text(encoding="utf-8")


def test_cli_json_is_the_golden_json_report_byte_for_byte(ref: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "--traces", str(ref / "trace-grader.fixtures.json"),
                        "--config", str(ref / "trace-grader.config.yaml"), "--literal", "--json")
    assert code == 3
    assert out == (ref / "fixtures-report.json").read_text(encoding="utf-8")
    assert isinstance(json.loads(out)["pass_k"]["T1-clean"]["pass_hat_k"], bool)


def test_cli_through_the_trajaudit_command(ref: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_trajaudit.cli.main import main

    code = main(["trace-grader", "--traces", str(ref / "trace-grader.fixtures.json"), "--json",
                 "--config", str(ref / "trace-grader.config.yaml")])
    out = json.loads(capsys.readouterr().out)
    assert code == 3 and out["summary"]["tasks_flaky"] == 1  # precise mode: same summary (the 7th flag is medium)


def _traces(tmp_path: Path, runs: list[dict]) -> str:
    p = tmp_path / "traces.json"
    p.write_text(json.dumps({"runs": runs}), encoding="utf-8")
    return str(p)


def test_cli_exit_codes_follow_the_original(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    read = {"tool": "Read", "args": {"file_path": "/a"}}
    many = [read] * 41  # over the engine default budget of 40: a low flag, a warning only
    assert _cli(capsys, "--traces", _traces(tmp_path, [{"task": "T", "ok": True, "steps": many}]))[0] == 0
    # a task whose only run did not deliver is flaky (the seed's RULES.md D quirk, k=1) → 3
    assert _cli(capsys, "--traces", _traces(tmp_path, [{"task": "T", "ok": False, "steps": [read]}]))[0] == 3
    code, out, _ = _cli(capsys, "--traces", _traces(tmp_path, [{"task": "T", "ok": True, "steps": [read]}]), "--json")
    assert code == 0 and json.loads(out)["summary"]["verdicts"]["clean-pass"] == 1


def test_cli_judge_axis_is_active_only_when_verified_and_enabled(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    traces_file = _traces(tmp_path, [{"task": "T", "ok": True, "steps": [{"tool": "Read", "args": {}}]}])
    for body, axis in (("verified: true\n", "disabled (adapter, verified:false)"),
                       ("verified: true\njudge:\n  enabled: true\n", "active")):
        (tmp_path / "c.yaml").write_text(body, encoding="utf-8")
        _, out, _ = _cli(capsys, "--traces", traces_file, "--config", str(tmp_path / "c.yaml"), "--json")
        assert json.loads(out)["summary"]["judge_axis"] == axis


def test_cli_unusable_input_fails_closed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "traces.json"
    bad.write_text('{"runs": [', encoding="utf-8")
    code, out, err = _cli(capsys, "--traces", str(bad))
    assert (code, out) == (2, "") and err.startswith("error: ") and "traces.json" in err and len(err.splitlines()) == 1
    with pytest.raises(SystemExit) as exc:  # no input: argparse's usage error, as the original
        trace_cli.main([])
    assert exc.value.code == 2


def test_cli_hooklib_log_in_literal_mode_counts_pre_and_post(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text("".join(json.dumps({"ts": "t", "event": e, "session_id": "S", "tool_name": "Edit",
                                       "file_path": "/a.py"}) + "\n" for e in ("PreToolUse", "PostToolUse")))
    code, out, _ = _cli(capsys, "--audit", str(log), "--task", "my-task", "--literal", "--json")
    [run] = json.loads(out)["runs"]
    assert (code, run["task"], run["run_id"], run["step_count"]) == (0, "my-task", "S", 2)
    assert [f["check"] for f in run["flags"]] == ["edited_without_read"]


def test_cli_transcript_run_is_delivered_and_graded_on_its_flags(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A Claude Code session: no task verdict, so the run counts as delivered (the original forces run.ok);
    sidechain calls are not steps; an Edit of a file never read is an edited_without_read flag."""
    from tests.loaders.test_claude import jl, sline, use

    session = tmp_path / "session.jsonl"
    session.write_text(jl(
        sline("user", "Fix it"),
        sline("assistant", [use("t1", "Edit", file_path="/w/a.py", old_string="a", new_string="b")], mid="m1"),
        sline("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        sline("assistant", [use("t2", "Bash", command="git log")], side=True, mid="m2"),
        sline("user", [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}], side=True),
    ), encoding="utf-8")
    code, out, _ = _cli(capsys, "--transcript", str(session), "--task", "fix", "--json")
    [run] = json.loads(out)["runs"]
    assert (code, run["task"], run["delivered"], run["step_count"], run["verdict"]) == (
        0, "fix", True, 1, "pass-with-warnings")
    assert [f["check"] for f in run["flags"]] == ["edited_without_read"]
