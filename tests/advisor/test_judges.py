"""The advisor audit's judges against a real OpenAI-compatible server on 127.0.0.1 (tests/judgeserver.py): valid
answers, garbage JSON, schema violations, HTTP 500s, a timeout, a dead port (never a pass), what each judge is
shown (the coherence judge never sees privileged material), clipping, and the same through the command and the
pytest items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_trajaudit.advisor.core import run_audit
from pytest_trajaudit.advisor.judging import PRIVILEGED_LIMIT, TRAJECTORY_LIMIT
from pytest_trajaudit.judges import JudgeConfig
from tests.advisor.kit import (
    INSTRUCTION,
    README_LINE,
    TEST_LINE,
    atif,
    audit_json,
    cli,
    make_attempt,
    make_task,
)
from tests.judgeserver import JudgeServer, http, ok, slow, text
from tests.taskfactory import SOLUTION_LINES

pytestmark = pytest.mark.usefixtures("litellm")

COHERENT = {"coherent": True, "unsupported_direction_changes": [], "notes": "reads like one solver"}
CLEAN = {"mentions_advisor": False, "suspicious_privileged_overlap": False, "leaked_items": []}


def answers(coherence, leakage):
    """A responder by purpose: each argument is a Reply or a JSON object (answered as valid JSON)."""
    def pick(req):
        r = coherence if req["purpose"] == "coherence" else leakage
        return r if not isinstance(r, dict) else ok(r)
    return pick


def cfg(url: str, **kw) -> JudgeConfig:
    return JudgeConfig(models=("judge-m",), base_url=url, api_key="test-key", retries=kw.pop("retries", 0),
                       timeout=kw.pop("timeout", 30.0), cache_dir=None, **kw)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    return make_attempt(tmp_path), make_task(tmp_path / "tasks")


def run(setup, server: JudgeServer | None = None, url: str | None = None, **kw) -> dict:
    att, task = setup
    return run_audit(att, task, judge=cfg(url or server.url, **kw))


def test_both_judges_complete_clean_is_pass(setup, judge_server: JudgeServer) -> None:
    judge_server.responder = answers(COHERENT, CLEAN)
    a = run(setup, judge_server)
    assert a["verdict"] == "pass"
    assert {k: o["status"] for k, o in a["judges"].items()} == {"coherence": "completed", "leakage": "completed"}
    assert sorted(judge_server.purposes()) == ["coherence", "leakage"]
    assert {r["model"] for r in judge_server.requests} == {"judge-m"}
    assert all(c["status"] == "PASS" for code, c in a["checks"].items())


def test_what_each_judge_is_shown(setup, judge_server: JudgeServer) -> None:
    judge_server.responder = answers(COHERENT, CLEAN)
    run(setup, judge_server)
    req = {r["purpose"]: r for r in judge_server.requests}
    coh, leak = req["coherence"]["prompt"], req["leakage"]["prompt"]
    assert INSTRUCTION.strip() in coh and "I computed the ids" in coh  # the public task and the trajectory
    for secret in (*SOLUTION_LINES, TEST_LINE, README_LINE):  # never the privileged material
        assert secret not in coh and secret not in req["coherence"]["system"]
        assert secret in leak
    assert "I computed the ids" in leak
    assert '"coherent"' in req["coherence"]["system"] and '"leaked_items"' in req["leakage"]["system"]


@pytest.mark.parametrize("bad", [text("not json at all"), text('{"coherent": true'), text("Sure! {}"),
                                 ok({"coherent": "yes", "unsupported_direction_changes": []}),
                                 ok({"coherent": True}),
                                 ok({"coherent": True, "unsupported_direction_changes": [], "extra": 1}),
                                 http(500), http(400, "bad request")])
def test_a_failed_coherence_judge_is_inconclusive(setup, judge_server: JudgeServer, bad) -> None:
    judge_server.responder = answers(bad, CLEAN)
    a = run(setup, judge_server)
    assert a["judges"]["coherence"]["status"] == "failed" and a["judges"]["leakage"]["status"] == "completed"
    assert a["verdict"] == "inconclusive"
    assert a["checks"]["ADV-1"]["status"] == "WARN" and a["checks"]["ADV-2"]["status"] == "WARN"
    assert a["checks"]["ADV-3"]["status"] == "PASS"


@pytest.mark.parametrize("bad", [text("[]"), ok({"mentions_advisor": False, "leaked_items": []}),
                                 ok({**CLEAN, "leaked_items": "none"}), http(503)])
def test_a_failed_leakage_judge_is_inconclusive(setup, judge_server: JudgeServer, bad) -> None:
    judge_server.responder = answers(COHERENT, bad)
    a = run(setup, judge_server)
    assert (a["judges"]["leakage"]["status"], a["verdict"]) == ("failed", "inconclusive")
    assert a["checks"]["ADV-3"]["status"] == "WARN" and a["checks"]["ADV-4"]["status"] == "WARN"


def test_a_reported_problem_fails_even_if_the_other_judge_failed(setup, judge_server: JudgeServer) -> None:
    judge_server.responder = answers({"coherent": False, "unsupported_direction_changes": ["jumps to x"]}, http(500))
    a = run(setup, judge_server)
    assert a["verdict"] == "fail" and a["checks"]["ADV-1"]["status"] == "FAIL"
    assert a["verdict_reasons"] == ["the coherence judge found the trajectory incoherent",
                                    "unsupported direction change: jumps to x"]


def test_leaked_items_without_flags_fail(setup, judge_server: JudgeServer) -> None:
    judge_server.responder = answers(COHERENT, {**CLEAN, "leaked_items": ["the sorted-set trick from solve.sh"]})
    a = run(setup, judge_server)
    assert a["verdict"] == "fail" and a["checks"]["ADV-4"]["status"] == "FAIL"


def test_retry_after_a_500_then_pass(setup, judge_server: JudgeServer) -> None:
    judge_server.script = [http(500), http(500)]
    judge_server.responder = answers(COHERENT, CLEAN)
    a = run(setup, judge_server, retries=1)
    assert a["verdict"] == "pass" and judge_server.calls == 4


def test_timeout_is_inconclusive(setup, judge_server: JudgeServer) -> None:
    judge_server.responder = answers(slow(30, ok(COHERENT)), CLEAN)
    a = run(setup, judge_server, timeout=1.0)
    assert a["judges"]["coherence"]["status"] == "failed" and "timeout" in a["judges"]["coherence"]["error"]
    assert a["verdict"] == "inconclusive"


def test_dead_port_is_inconclusive_and_a_hit_still_fails(tmp_path: Path, dead_url: str) -> None:
    task = make_task(tmp_path / "tasks")
    a = run_audit(make_attempt(tmp_path), task, judge=cfg(dead_url))
    assert {o["status"] for o in a["judges"].values()} == {"failed"} and a["verdict"] == "inconclusive"
    leak = make_attempt(tmp_path, "leak", trajectory=atif(SOLUTION_LINES[0]))
    assert run_audit(leak, task, judge=cfg(dead_url))["verdict"] == "fail"


def test_judge_inputs_are_clipped(tmp_path: Path, judge_server: JudgeServer) -> None:
    judge_server.responder = answers(COHERENT, CLEAN)
    big_solution = "\n".join(f"solution line {i:06d} of the reference code, long enough" for i in range(3000))
    task = make_task(tmp_path / "tasks", solution={"solve.sh": big_solution})
    att = make_attempt(tmp_path, trajectory=atif("start " + "y" * 300_000 + " end-marker"))
    a = run_audit(att, task, judge=cfg(judge_server.url))
    assert a["judge_input_truncated"] is True and a["privileged_input_truncated"] is True
    req = {r["purpose"]: r for r in judge_server.requests}
    coh, leak = req["coherence"]["prompt"], req["leakage"]["prompt"]
    assert "characters omitted" in coh and "end-marker" in coh and '"steps"' in coh  # both ends kept
    assert len(coh) < TRAJECTORY_LIMIT + 25_000
    assert "[note: the privileged material was capped at 120,000 characters" in leak
    assert len(leak) < TRAJECTORY_LIMIT + PRIVILEGED_LIMIT + 1_000
    assert a["privileged_lines"] == 3000 + 2  # the mechanical check uses all of it (+ README and test lines)


def test_no_judge_makes_no_call(setup, judge_server: JudgeServer) -> None:
    att, task = setup
    a = run_audit(att, task, judge=cfg(judge_server.url), no_judge=True)
    assert a["verdict"] == "pass_mechanical_only" and judge_server.calls == 0


# --- through the command and the pytest items -------------------------------------------------------------------

def test_command_with_a_judge(setup, judge_server: JudgeServer, tmp_path: Path) -> None:
    judge_server.responder = answers(COHERENT, CLEAN)
    att, task = setup
    env = {"JUDGE_BASE_URL": judge_server.url, "ADVISOR_MODEL": "advisor-m", "MY_KEY": "sekrit-123"}
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--judge-api-key-env", "MY_KEY",
            "--judge-cache", "off", env=env)
    assert p.returncode == 0, p.stderr
    assert audit_json(p)["verdict"] == "pass"
    assert {r["model"] for r in judge_server.requests} == {"advisor-m"}  # $ADVISOR_MODEL as the fallback
    assert {r["authorization"] for r in judge_server.requests} == {"Bearer sekrit-123"}
    judge_server.responder = answers(COHERENT, text("garbage"))
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--judge-model", "flag-m", "--judge-base-url",
            judge_server.url, "--judge-cache", "off", env={"JUDGE_API_KEY": "k", "JUDGE_MODEL": "env-m"})
    assert p.returncode == 1 and audit_json(p)["verdict"] == "inconclusive"
    assert judge_server.requests[-1]["model"] == "flag-m"


def test_pytest_items_with_a_judge(pytester: pytest.Pytester, judge_server: JudgeServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.jobfactory import make_job
    from tests.principles.builders import msg, user
    from tests.taskfactory import result_doc

    monkeypatch.setenv("JUDGE_API_KEY", "k")
    judge_server.responder = answers({"coherent": True, "unsupported_direction_changes": ["guessed the digest"]},
                                     text("nonsense"))
    make_task(pytester.path / "tasks", "demo")
    make_job(pytester.path / "runs", "demo__1", [user("Write the ids."), msg("Done.")],
             result_doc(reward=1.0, trial="demo__1"))
    cache = pytester.path / "cache"
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-tasks=tasks",
                                "-m", "advisor", "--trajaudit-judge=judge-m", f"--trajaudit-judge-base-url="
                                f"{judge_server.url}", f"--trajaudit-judge-cache={cache}", "-rA",
                                "--trajaudit-report=rep")
    result.assert_outcomes(passed=2, failed=1, xfailed=2)
    result.stdout.fnmatch_lines(["*ADV-2: 1 unsupported direction change(s) (judge-m): guessed the digest*"])
    result.stdout.fnmatch_lines(["*WARN*ADV-3*inconclusive: the leakage judge failed*"])
    assert sorted(judge_server.purposes()).count("coherence") == 1  # ADV-1 and ADV-2 share one answer
    audit = json.loads(next((pytester.path / "rep" / "jobs").rglob("audit-*.json")).read_text())
    assert audit["advisor"]["verdict"] == "fail"
    assert audit["advisor"]["judges"]["leakage"]["status"] == "failed"
