"""P3 / P11 / P13 through the engine (audit_job → Pending → resolve) against the real judge server: what the
prompts hold (and never hold: secrets), the mechanical cases that need no judge, the interim finding a task group
reads, and that a pending judge principle pins no parsed trajectory."""

from __future__ import annotations

import gc
import types
from pathlib import Path

import pytest

from pytest_trajaudit.discover.jobs import classify
from pytest_trajaudit.judges import JudgeConfig
from pytest_trajaudit.model import Job, Trajectory
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.settings import Settings
from tests.jobfactory import make_job
from tests.judgeserver import JudgeServer, ok, slow
from tests.principles.builders import msg, sh, user
from tests.taskfactory import ctrf, make_task, result_doc

pytestmark = pytest.mark.usefixtures("litellm")

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"


def settings(server: JudgeServer, tasks: Path | None = None, models: tuple[str, ...] = ("judge-a",)) -> Settings:
    return Settings(tasks_dirs=(tasks,) if tasks else (),
                    judge=JudgeConfig(models=models, base_url=server.url, api_key="sk-test-key-000000000000",
                                      timeout=10, retries=0, cache_dir=None))


def job(tmp_path: Path, name: str, reward: float | None = 0.0, files: dict | None = None, final: str = "Done.") -> Path:
    lines = [user("Count the unnecessary aborts in /root/aborts.tsv."),
             sh(f"export OPENAI_API_KEY={SECRET}; python3 solve.py", "4469 ids"), msg(final)]
    return make_job(tmp_path / "runs", name, lines, result_doc(reward=reward, trial=name), files)


def audit(path: Path, cfg: Settings, codes: tuple[str, ...], **kw: object):
    ref = classify(path)
    assert ref is not None
    reg = registry()
    return audit_job(ref, cfg, [reg[c] for c in codes], **kw)


def test_p3_prompt_and_bucket(tmp_path: Path, judge_server: JudgeServer) -> None:
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", instruction="Write every unnecessary abort id to /root/out.json.\n",
              tests={"test_outputs.py": "def test_exact():\n    assert out == expected\n"})
    p = job(tmp_path, "demo__1", files={"verifier/ctrf.json": ctrf(0, 1, [("test_exact", "AssertionError: 4469 != 3216")])},
            final="All soft aborts are unnecessary: 4469 ids written.")
    judge_server.script = [ok({"bucket": "hard", "reason": "coherent policy, wrong on soft aborts"})]
    a = audit(p, settings(judge_server, tasks), ("P3",))
    assert a.results["P3"].status == "N/A" and "awaiting the judge" in a.results["P3"].evidence  # interim
    res = a.resolve("P3")
    assert res.status == "PASS" and res.data["failure_bucket"] == "hard"
    assert res.evidence.startswith("hard (judge judge-a: coherent policy, wrong on soft aborts); agent's final: All soft")
    assert "verifier: test_exact: AssertionError: 4469 != 3216" in res.evidence
    assert res.judge["calls"] == 1 and res.judge["failures"] == 0 and res.judge["models"] == ["judge-a"]
    r = judge_server.requests[0]
    assert r["purpose"] == "p3_bucket" and r["model"] == "judge-a" and r["system"].startswith("You are a careful")
    for part in ("reward 0", "Write every unnecessary abort id", "AssertionError: 4469 != 3216", "def test_exact",
                 "All soft aborts are unnecessary", "python3 solve.py", "4469 ids"):
        assert part in r["prompt"], part
    assert SECRET not in r["prompt"] and "<REDACTED>" in r["prompt"]


def test_p3_mechanical_buckets_need_no_judge(tmp_path: Path, judge_server: JudgeServer) -> None:
    cfg = settings(judge_server)
    passed = audit(job(tmp_path, "t__pass", reward=1.0), cfg, ("P3",))
    assert not passed.pending and passed.results["P3"].status == "PASS"
    no_reward = audit(job(tmp_path, "t__none", reward=None), cfg, ("P3",))
    assert not no_reward.pending and no_reward.results["P3"].data["failure_bucket"] == "unfair_env"
    assert judge_server.calls == 0


def test_p11_prose_only_with_a_single_source(tmp_path: Path, judge_server: JudgeServer) -> None:
    judge_server.script = [ok({"verdict": "fair", "reason": "the prose admits the policy is partial"})]
    cfg = settings(judge_server)
    single = audit(job(tmp_path, "t__single", final="I could only handle hard aborts."), cfg, ("P11",))
    assert single.results["P11"].status == "N/A"  # the mechanical finding stands until the answer
    res = single.resolve("P11")
    assert res.status == "PASS" and res.data["aligned_by_prose"] is True and res.data["reconstructed"] is False
    assert "I could only handle hard aborts." in judge_server.requests[0]["prompt"]
    # two agreeing sources: decided mechanically, nothing sent
    two = audit(job(tmp_path, "t__two", files={"verifier/reward.txt": "0\n"}), cfg, ("P11",))
    assert not two.pending and two.results["P11"].status == "PASS" and judge_server.calls == 1


def test_p13_same_prompt_to_every_model(tmp_path: Path, judge_server: JudgeServer) -> None:
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", tests={"score_outputs.py": "from anthropic import Anthropic\nRUBRIC = 'be kind'\n",
                                    "test_other.py": "def test_x():\n    pass\n"})
    judge_server.responder = lambda r: ok({"passes": r["model"] == "judge-a", "reason": "rubric"})
    cfg = settings(judge_server, tasks, models=("judge-a", "judge-b", "judge-c"))
    a = audit(job(tmp_path, "demo__1"), cfg, ("P13",))
    res = a.resolve("P13")
    assert res.status == "FAIL" and res.data["judge_labels"] == {"judge-a": "pass", "judge-b": "fail", "judge-c": "fail"}
    prompts = {r["prompt"] for r in judge_server.requests}
    assert len(prompts) == 1 and sorted(r["model"] for r in judge_server.requests) == ["judge-a", "judge-b", "judge-c"]
    prompt = prompts.pop()
    assert "RUBRIC = 'be kind'" in prompt and "def test_x" not in prompt  # only the LLM-calling verifier file
    assert res.judge["calls"] == 3


def test_group_recompute_submits_nothing(tmp_path: Path, judge_server: JudgeServer) -> None:
    a = audit(job(tmp_path, "t__1"), settings(judge_server), ("P3", "P11"), judges=False)
    assert not a.pending and a.results["P3"].status == "N/A" and a.results["P11"].status == "N/A"
    assert judge_server.calls == 0


def _reaches(root: object, kinds: tuple[type, ...]) -> bool:
    """Whether an object of ``kinds`` is reachable from ``root`` (functions: through their closures and defaults
    only, never their module globals; modules and classes are not entered)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, kinds):
            return True
        if isinstance(o, types.ModuleType | type):
            continue
        if isinstance(o, types.FunctionType):
            stack += [c.cell_contents for c in o.__closure__ or ()] + list(o.__defaults__ or ())
        else:
            stack += gc.get_referents(o)
    return False


def test_pending_state_pins_no_trajectory(tmp_path: Path, judge_server: JudgeServer) -> None:
    # answered by purpose: the two requests are in flight together, so their arrival order is not fixed
    judge_server.responder = lambda r: slow(0.3, ok({"bucket": "hard", "reason": "x"} if r["purpose"] == "p3_bucket"
                                                    else {"verdict": "fair", "reason": "x"}))
    a = audit(job(tmp_path, "t__mem", final="x" * 100_000), settings(judge_server), ("P1", "P3", "P10", "P11"))
    assert set(a.pending) == {"P3", "P11"}
    kept = a.trim({"P3", "P11", "P13"})
    assert kept is not None and kept.partial and kept.results == {} and set(kept.pending) == {"P3", "P11"}
    assert not _reaches(kept, (Job, Trajectory))
    # the walk does find a trajectory a closure holds (the check can fail)
    t = Trajectory("acp", "x")
    assert _reaches((lambda: t), (Job, Trajectory))
    assert kept.resolve("P3").status == "PASS" and kept.resolve("P11").status == "PASS"
    assert not kept.pending and kept.trim({"P3", "P11"}) is None


def test_trim_keeps_late_mechanical_results_once(tmp_path: Path, judge_server: JudgeServer) -> None:
    """A judge principle that answered mechanically (P13 without an LLM-calling verifier) still runs late: its
    result survives the release and is handed out once."""
    a = audit(job(tmp_path, "t__late", reward=1.0), settings(judge_server), ("P1", "P3", "P13"))
    assert not a.pending
    kept = a.trim({"P3", "P13"})
    assert kept is not None and set(kept.results) == {"P3", "P13"}
    assert kept.resolve("P3").status == "PASS" and kept.resolve("P13").status == "N/A"
    assert kept.trim({"P3", "P13"}) is None and judge_server.calls == 0
