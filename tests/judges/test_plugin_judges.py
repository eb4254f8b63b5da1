"""The judges through pytest: P3 / P11 / P13 items against the real HTTP judge server, serial and with -n 2,
item ordering (judge items last), summary.json's ``judges`` block (schema-valid, kappa), the cache making a
rerun free, and the options' usage errors. Each bad answer ends N/A or FAIL, never PASS."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.report import schema as schema_mod
from tests.jobfactory import make_job
from tests.judgeserver import JudgeServer, Reply, http, ok, text
from tests.principles.builders import msg, sh, user
from tests.taskfactory import make_task, result_doc

SCHEMA_DIR = Path(schema_mod.__file__).resolve().parent.parent / "schemas"
KEY = "sk-judge-test-0123456789abcdef"
CODES = "--trajaudit-principles=P1,P3,P10,P11,P13"
VERIFIER = "import openai\n\ndef test_graded():\n    client = openai.OpenAI()\n    assert client\n"

# job → (final statement markers, expected outcome per judge item)
JOBS = {
    # judge-a buckets / prose; P13: judge-a and judge-b pass or fail on markers
    "demo__A": ("BUCKET=hard PROSE=fair", {"P3": "passed", "P11": "passed", "P13": "passed"}),  # both fail → agree
    "demo__B": ("BUCKET=unfair_test PROSE=unfair P13B=pass", {"P3": "xfailed", "P11": "xfailed", "P13": "failed"}),
    "demo__C": ("BUCKET=garbage PROSE=http500 P13B=garbage", {"P3": "skipped", "P11": "skipped", "P13": "skipped"}),
    "demo__D": ("BUCKET=schema PROSE=unclear P13A=pass P13B=pass", {"P3": "skipped", "P11": "skipped",
                                                                     "P13": "xfailed"}),  # agree pass, reward 0
}


def responder(req: dict) -> Reply:
    prompt, model, purpose = req["prompt"], req["model"], req["purpose"]
    if purpose == "p3_bucket":
        b = re.search(r"BUCKET=(\w+)", prompt).group(1)
        if b == "garbage":
            return text("I would say it is hard.")
        if b == "schema":
            return ok({"bucket": "very_hard", "reason": "x"})
        return ok({"bucket": b, "reason": f"judged {b}"})
    if purpose == "p11_prose":
        p = re.search(r"PROSE=(\w+)", prompt).group(1)
        return http(500) if p == "http500" else ok({"verdict": p, "reason": f"prose {p}"})
    if purpose == "p13_grade":
        m = re.search(r"P13B=(\w+)" if model == "judge-b" else r"P13A=(\w+)", prompt)
        verdict = m.group(1) if m else "fail"
        return text("{not json") if verdict == "garbage" else ok({"passes": verdict == "pass", "reason": verdict})
    return http(400, f"unexpected purpose {purpose}")


@pytest.fixture
def layout(pytester: pytest.Pytester) -> Path:
    root = pytester.path
    make_task(root / "tasks", "demo", tests={"test_outputs.py": VERIFIER})
    for name, (markers, _) in JOBS.items():
        lines = [user("Write the ids to /root/out.json."), sh("python3 solve.py > /root/out.json", "3 ids"),
                 msg(f"Wrote the ids. {markers}")]
        make_job(root / "runs", name, lines, result_doc(reward=0.0, trial=name, agent="claude-agent-acp"))
    return root


def _args(server: JudgeServer, root: Path, *more: str) -> list[str]:
    return ["-p", "no:cacheprovider", "-p", "no:anyio", "--trajaudit=runs", f"--trajaudit-tasks={root / 'tasks'}",
            CODES, "--trajaudit-judge=judge-a", "--trajaudit-judge=judge-b", f"--trajaudit-judge-base-url={server.url}",
            "--trajaudit-judge-retries=0", f"--trajaudit-judge-cache={root / 'cache'}", "-rA", *more]


def _outcomes(result: pytest.RunResult) -> dict[str, str]:
    """node id → outcome word from the -rA short summary."""
    out = {}
    for line in result.outlines:
        m = re.match(r"^(PASSED|FAILED|SKIPPED|XFAIL|WARN|ERROR)\s+(?:\[\d+\]\s+)?(\S+)", line)
        if m:
            word = {"PASSED": "passed", "FAILED": "failed", "SKIPPED": "skipped", "XFAIL": "xfailed", "WARN": "xfailed",
                    "ERROR": "error"}[m.group(1)]
            nodeid = m.group(2)
            if "::" not in nodeid:  # SKIPPED [1] path:line: reason
                continue
            out[nodeid.split(" ")[0]] = word
    return out


def _check(result: pytest.RunResult, root: Path, report: str) -> dict:
    outcomes = _outcomes(result)
    for name, (_, expected) in JOBS.items():
        for code, word in expected.items():
            nodeid = f"runs/{name}/result.json::{code}"
            got = outcomes.get(nodeid)
            if got is None and word == "skipped":  # -rA prints skips by location: check the summary instead
                continue
            assert got == word, (nodeid, got, word)
    summary = json.loads((root / report / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))
    statuses = {j["job"]: j["statuses"] for j in summary["jobs"]}
    expect_status = {"passed": "PASS", "failed": "FAIL", "xfailed": "WARN", "skipped": "N/A"}
    for name, (_, expected) in JOBS.items():
        for code, word in expected.items():
            assert statuses[f"runs/{name}"][code] == expect_status[word], (name, code)
    return summary


@pytest.mark.usefixtures("litellm")
def test_judged_items_serial_then_cached(pytester: pytest.Pytester, layout: Path, judge_server: JudgeServer,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    judge_server.responder = responder
    result = pytester.runpytest(*_args(judge_server, layout, "--trajaudit-report=out"))
    summary = _check(result, layout, "out")
    # 4 jobs: P3 ×4, P11 ×4 (judge-a), P13 ×4 × 2 models; every request carried the key, none printed it
    assert judge_server.calls == 16
    assert sorted(set(judge_server.purposes())) == ["p11_prose", "p13_grade", "p3_bucket"]
    assert {r["authorization"] for r in judge_server.requests} == {f"Bearer {KEY}"}
    assert KEY not in result.stdout.str() and KEY not in (layout / "out" / "summary.json").read_text()
    j = summary["judges"]
    assert j["models"] == ["judge-a", "judge-b"]
    assert (j["calls"], j["cached"], j["failures"], j["attempts"]) == (16, 0, 4, 16)
    assert j["tokens_in"] == 1500 and j["tokens_out"] == 300 and j["cost"] == 0  # the HTTP 500 carries no usage
    # P13 pairs (judge-a, judge-b): A fail/fail, B fail/pass, D pass/pass (C: judge-b failed) → kappa 0.4
    assert (j["kappa_items"], j["kappa"], j["agreement"]) == (3, pytest.approx(0.4), pytest.approx(2 / 3))
    assert any("judge-b" in e and "invalid JSON" in e for e in j["errors"])
    result.stdout.fnmatch_lines(["judges: judge-a, judge-b: 16 answer(s), 0 cached, 4 failed; 1,500 tokens in "
                                 "/ 300 out; $0.0000; P13 kappa 0.400 over 3 item(s) (agreement 67%)"])
    # the evidence quotes the judge's reason and the failures say why
    text_out = result.stdout.str()
    assert "unfair_test (judge judge-a: judged unfair_test)" in text_out
    assert "judge judge-a failed: p3_bucket: invalid JSON" in text_out
    assert "judge judge-a failed: p11_prose: HTTP 500" in text_out
    assert "judges disagree on the agent's output (judge-a: fail, judge-b: pass)" in text_out
    result.assert_outcomes(passed=11, failed=1, skipped=5, xfailed=3, warnings=3)
    assert {j["loads"] for j in summary["jobs"]} == {1}  # judge items ran late without reloading their job
    audit_schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    for f in (layout / "out" / "jobs").rglob("audit-*.json"):
        jsonschema.validate(json.loads(f.read_text()), audit_schema)
    audit = json.loads(next((layout / "out" / "jobs").rglob("demo__A/audit-*.json")).read_text())
    assert audit["failure_bucket"] == "hard"
    assert audit["llm_judge_concurrence"]["checked"] is True and audit["llm_judge_concurrence"]["agreement"] is True

    # a rerun is free: every valid answer comes from the cache, only the failed ones are asked again
    calls = judge_server.calls
    again = pytester.runpytest(*_args(judge_server, layout, "--trajaudit-report=out2"))
    _check(again, layout, "out2")
    assert judge_server.calls - calls == 4
    j2 = json.loads((layout / "out2" / "summary.json").read_text())["judges"]
    assert (j2["calls"], j2["cached"], j2["failures"]) == (16, 12, 4)
    assert j2["tokens_in"] == 300  # the 3 bad answers' tokens (re-asked), nothing for cached ones


@pytest.mark.usefixtures("litellm")
def test_judged_items_under_xdist(pytester: pytest.Pytester, layout: Path, judge_server: JudgeServer,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    judge_server.responder = responder
    result = pytester.runpytest_subprocess(*_args(judge_server, layout, "--trajaudit-report=out", "-n", "2"))
    summary = _check(result, layout, "out")
    assert judge_server.calls == 16
    j = summary["judges"]
    assert (j["calls"], j["failures"], j["kappa_items"], j["kappa"]) == (16, 4, 3, pytest.approx(0.4))
    # every WARN reaches the warnings summary: no judge thread touches the warnings machinery mid-item
    result.assert_outcomes(passed=8 + 3, failed=1, skipped=5, xfailed=3, warnings=3)
    assert {j["loads"] for j in summary["jobs"]} == {1}


def test_judge_items_run_after_every_other_item(pytester: pytest.Pytester, layout: Path,
                                                judge_server: JudgeServer) -> None:
    result = pytester.runpytest("--collect-only", "-q", *_args(judge_server, layout))
    ids = [ln for ln in result.outlines if "::" in ln]
    judged = [i for i, n in enumerate(ids) if n.endswith(("::P3", "::P11", "::P13"))]
    assert len(ids) == 20 and len(judged) == 12 and judged == list(range(8, 20))
    # each job's other items stay together, in job order; its judge items follow in the same job order
    assert [n.rsplit("::", 1)[0] for n in ids[:8:2]] == [f"runs/{n}/result.json" for n in JOBS]
    # without a judge the order is the plain per-job grouping
    plain = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "--trajaudit=runs", CODES)
    first = [ln for ln in plain.outlines if "::" in ln][:5]
    assert [n.rsplit("::", 1)[1] for n in first] == ["P1", "P3", "P10", "P11", "P13"]


@pytest.mark.usefixtures("litellm")
def test_judge_only_selection_overlaps_its_calls(pytester: pytest.Pytester, layout: Path, judge_server: JudgeServer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Only judge items (P3, and P13 answering mechanically without a task): the first one loads the next jobs
    before it waits, so all four requests are in flight at once (the server holds each request until four have
    arrived), and no job is loaded twice."""
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    judge_server.responder = responder
    judge_server.hold, judge_server.hold_timeout = 4, 5.0
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=P3,P13",
                                "--trajaudit-judge=judge-a", f"--trajaudit-judge-base-url={judge_server.url}",
                                "--trajaudit-judge-cache=off", "--trajaudit-report=out")
    result.assert_outcomes(passed=1, xfailed=1, skipped=2 + 4)
    assert judge_server.max_in_flight == 4 and judge_server.calls == 4
    summary = json.loads((layout / "out" / "summary.json").read_text())
    assert {j["loads"] for j in summary["jobs"]} == {1}


@pytest.mark.usefixtures("litellm")
def test_rerun_with_the_cache_sends_nothing(pytester: pytest.Pytester, layout: Path, judge_server: JudgeServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    judge_server.responder = lambda r: ok({"bucket": "hard", "reason": "same"})
    args = ["-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=P3", "--trajaudit-judge=judge-a",
            f"--trajaudit-judge-base-url={judge_server.url}", f"--trajaudit-judge-cache={layout / 'cache'}"]
    pytester.runpytest(*args, "--trajaudit-report=one").assert_outcomes(passed=4)
    assert judge_server.calls == 4
    pytester.runpytest(*args, "--trajaudit-report=two").assert_outcomes(passed=4)
    assert judge_server.calls == 4  # the second run sent nothing
    one, two = (json.loads((layout / d / "summary.json").read_text()) for d in ("one", "two"))
    assert (two["judges"]["calls"], two["judges"]["cached"], two["judges"]["tokens_in"]) == (4, 4, 0)
    assert [j["statuses"] for j in one["jobs"]] == [j["statuses"] for j in two["jobs"]]
    entries = sorted((layout / "cache").rglob("*.json"))
    assert len(entries) == 4 and {oct(p.stat().st_mode & 0o777) for p in entries} == {"0o600"}


def test_without_judges_nothing_is_sent(pytester: pytest.Pytester, layout: Path, judge_server: JudgeServer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_MODEL", "judge-a")  # the environment alone never switches judges on
    monkeypatch.setenv("JUDGE_BASE_URL", judge_server.url)
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", f"--trajaudit-tasks={layout / 'tasks'}",
                                CODES, "-rs")
    result.assert_outcomes(passed=8, skipped=12)
    assert judge_server.calls == 0
    result.stdout.fnmatch_lines(["*P3: reward 0: hard / unfair_instruction * needs a judge*",
                                 "*P13: applies (tests/test_outputs.py imports openai) but cross-judge concurrence "
                                 "needs at least two --trajaudit-judge models (none configured)*"])


@pytest.mark.usefixtures("litellm")
def test_one_model_p13_is_na(pytester: pytest.Pytester, layout: Path, judge_server: JudgeServer,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    judge_server.responder = responder
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", f"--trajaudit-tasks={layout / 'tasks'}",
                                "--trajaudit-principles=P13", "--trajaudit-judge=judge-a",
                                f"--trajaudit-judge-base-url={judge_server.url}", "--trajaudit-judge-cache=off", "-rs")
    result.assert_outcomes(skipped=4)
    result.stdout.fnmatch_lines(["*needs at least two --trajaudit-judge models (only judge-a configured)*"])
    assert judge_server.calls == 0


@pytest.mark.usefixtures("litellm")
def test_dead_endpoint_never_passes(pytester: pytest.Pytester, layout: Path, dead_url: str,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", f"--trajaudit-tasks={layout / 'tasks'}",
                                CODES, "--trajaudit-judge=judge-a", "--trajaudit-judge=judge-b",
                                f"--trajaudit-judge-base-url={dead_url}", "--trajaudit-judge-retries=0",
                                "--trajaudit-judge-cache=off", "-rs")
    result.assert_outcomes(passed=8, skipped=12)  # P1/P10 pass; every judge item is N/A
    result.stdout.fnmatch_lines(["*P3: judge judge-a failed: p3_bucket: connection error*"])


@pytest.mark.parametrize("args, message", [
    (["--trajaudit-judge=m", "--trajaudit-judge-timeout=0"], "*--trajaudit-judge-timeout must be positive*"),
    (["--trajaudit-judge=m", "--trajaudit-judge-concurrency=0"], "*--trajaudit-judge-concurrency must be at least 1*"),
    (["--trajaudit-judge=m", "--trajaudit-judge-retries=x"], "*--trajaudit-judge-retries needs a number*"),
    (["--trajaudit-judge=m", "--trajaudit-judge-cache=runs/cache"], "*judge cache * lies inside an audited tree*"),
])
def test_usage_errors(pytester: pytest.Pytester, layout: Path, args: list[str], message: str) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@pytest.mark.usefixtures("litellm")
def test_rules_file_judge_section_enables_its_model(pytester: pytest.Pytester, layout: Path,
                                                    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    monkeypatch.setenv("JUDGE_BASE_URL", judge_server.url)  # the base URL may come from the environment
    judge_server.responder = responder
    (layout / "rules.yaml").write_text("judge: {enabled: true, model: judge-a, rubric: [task_completion]}\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=P3",
                                "--trajaudit-rules=rules.yaml", "--trajaudit-judge-cache=off", "-rA")
    result.assert_outcomes(passed=1, xfailed=1, skipped=2)
    assert judge_server.calls == 4 and {r["model"] for r in judge_server.requests} == {"judge-a"}
    (layout / "rules.yaml").write_text("judge: {enabled: true}\n")
    bad = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-rules=rules.yaml")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*judge.enabled: true but no judge.model*"])
