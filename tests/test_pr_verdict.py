"""PR-level roll-up (the seed's audit-general.md "PR-level verdict", first match wins), per-config roll-up, and
report.md in the sections of the seed's report template (reference/report-template.txt)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_trajaudit.aggregate.verdicts import PR_VERDICTS, config_rollup, pr_verdict
from pytest_trajaudit.report.markdown import MAX_ROWS
from pytest_trajaudit.report.markdown import render as render_md
from pytest_trajaudit.report.summary import Rollup

ORACLE_OK = {"oracle__1": 1.0}

# ========================================================================================= pr_verdict, row 1


@pytest.mark.parametrize("others", [
    {},
    {"b": "WARN", "c": "WARN"},
    {"b": "ERROR"},
    {"b": "CLEAN"},
])
@pytest.mark.parametrize("oracle", [ORACLE_OK, {"oracle__1": 0.0}, {"oracle__1": None}, {}])
def test_any_invalid_job_rejects_whatever_else(others, oracle):
    verdict, reasons = pr_verdict({"a": "INVALID", **others}, oracle_rewards=oracle, tests_too_tight=["b"])
    assert verdict == "REJECT"
    assert reasons == ["INVALID job: a"]


def test_reject_lists_every_invalid_job_sorted():
    verdict, reasons = pr_verdict({"z": "INVALID", "a": "INVALID", "m": "CLEAN"}, oracle_rewards=ORACLE_OK)
    assert verdict == "REJECT"
    assert reasons == ["INVALID job: a", "INVALID job: z"]


# ========================================================================================= row 2


def test_two_warn_jobs_need_major_changes():
    verdict, reasons = pr_verdict({"a": "WARN", "b": "WARN", "c": "CLEAN"}, oracle_rewards=ORACLE_OK)
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["2 WARN jobs (a, b)"]


def test_many_warn_jobs_are_listed_up_to_five():
    jobs = {f"j{i}": "WARN" for i in range(7)}
    verdict, reasons = pr_verdict(jobs, oracle_rewards=ORACLE_OK)
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["7 WARN jobs (j0, j1, j2, j3, j4, ...)"]


@pytest.mark.parametrize(("reward", "reason"), [
    (0.0, "oracle reward 0 < 1.0: oracle__1"),
    (0.75, "oracle reward 0.75 < 1.0: oracle__1"),
    (None, "oracle reward missing < 1.0: oracle__1"),
])
def test_oracle_below_one_or_missing_needs_major_changes(reward, reason):
    verdict, reasons = pr_verdict({"a": "CLEAN", "oracle__1": "ORACLE"}, oracle_rewards={"oracle__1": reward})
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == [reason]


def test_tests_too_tight_needs_major_changes():
    verdict, reasons = pr_verdict({"a": "CLEAN", "b": "CLEAN"}, oracle_rewards=ORACLE_OK, tests_too_tight=["b", "a"])
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["P12 tests_too_tight: a", "P12 tests_too_tight: b"]


def test_an_error_job_needs_major_changes():
    verdict, reasons = pr_verdict({"a": "CLEAN", "b": "ERROR"}, oracle_rewards=ORACLE_OK)
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["1 job(s) could not be audited (unusable input): b"]


@pytest.mark.parametrize("jobs", [{}, {"oracle__1": "ORACLE"}])
def test_no_agent_job_needs_major_changes(jobs):
    verdict, reasons = pr_verdict(jobs, oracle_rewards={j: 1.0 for j in jobs})
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["no agent job was audited"]


def test_row_two_collects_every_reason_in_order():
    verdict, reasons = pr_verdict({"a": "WARN", "b": "WARN", "c": "ERROR", "o": "ORACLE"},
                                  oracle_rewards={"o": 0.5}, tests_too_tight=["a"])
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["2 WARN jobs (a, b)", "oracle reward 0.5 < 1.0: o", "P12 tests_too_tight: a",
                       "1 job(s) could not be audited (unusable input): c"]


def test_first_match_wins_one_warn_with_a_bad_oracle_is_major_not_caveats():
    verdict, reasons = pr_verdict({"a": "WARN", "b": "CLEAN"}, oracle_rewards={"o": 0.9})
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["oracle reward 0.9 < 1.0: o"]


# ========================================================================================= row 3


def test_exactly_one_warn_job_is_approve_with_caveats():
    verdict, reasons = pr_verdict({"a": "WARN", "b": "CLEAN", "o": "ORACLE"}, oracle_rewards={"o": 1.0})
    assert verdict == "APPROVE WITH CAVEATS"
    assert reasons == ["1 WARN job: a"]


def test_no_oracle_run_is_approve_with_caveats():
    verdict, reasons = pr_verdict({"a": "CLEAN", "b": "CLEAN"}, oracle_rewards={})
    assert verdict == "APPROVE WITH CAVEATS"
    assert reasons == ["no oracle run among the audited jobs (oracle reward unknown)"]


def test_one_warn_and_no_oracle_give_both_caveats():
    verdict, reasons = pr_verdict({"a": "WARN"}, oracle_rewards={})
    assert verdict == "APPROVE WITH CAVEATS"
    assert reasons == ["1 WARN job: a", "no oracle run among the audited jobs (oracle reward unknown)"]


# ========================================================================================= row 4


@pytest.mark.parametrize("oracle", [ORACLE_OK, {"o1": 1.0, "o2": 1.0}])
def test_all_clean_with_oracle_one_is_approve(oracle):
    jobs = {"a": "CLEAN", "b": "CLEAN", **{o: "ORACLE" for o in oracle}}
    verdict, reasons = pr_verdict(jobs, oracle_rewards=oracle)
    assert verdict == "APPROVE"
    assert reasons == ["all jobs CLEAN, oracle reward 1.0"]


def test_one_of_two_oracles_failing_blocks_approve():
    verdict, reasons = pr_verdict({"a": "CLEAN"}, oracle_rewards={"o1": 1.0, "o2": 0.0})
    assert verdict == "MAJOR CHANGES NEEDED"
    assert reasons == ["oracle reward 0 < 1.0: o2"]


def test_every_verdict_is_one_of_the_documented_five():
    seen = set()
    for jobs, oracle in [({"a": "INVALID"}, {}), ({"a": "WARN", "b": "WARN"}, {}), ({"a": "WARN"}, ORACLE_OK),
                         ({"a": "CLEAN"}, ORACLE_OK), ({"a": "CLEAN", "b": "INCOMPLETE"}, ORACLE_OK)]:
        seen.add(pr_verdict(jobs, oracle_rewards=oracle)[0])
    assert seen == set(PR_VERDICTS)


# ========================================================================================= config_rollup


def test_config_rollup_counts_verdicts_and_means_rewards():
    jobs = [
        {"job": "b", "config": "claude-skills", "verdict": "CLEAN", "reward": 1.0, "agent": "claude-agent-acp",
         "model": "opus", "condition": "with-skills", "oracle": False},
        {"job": "a", "config": "claude-skills", "verdict": "WARN", "reward": 0.0, "agent": "claude-agent-acp",
         "model": "opus", "condition": "with-skills", "oracle": False},
        {"job": "c", "config": "claude-skills", "verdict": "ERROR", "reward": None},
        {"job": "d", "config": "oracle", "verdict": "ORACLE", "reward": 1.0, "agent": "oracle", "oracle": True},
        {"job": "e", "config": "", "verdict": "CLEAN", "reward": 1 / 3},
        {"job": "f", "config": "codex-noskills", "verdict": "ERROR", "reward": None, "agent": "codex-acp"},
    ]
    out = config_rollup(jobs)
    assert list(out) == ["agent", "claude-skills", "codex-noskills", "oracle"]
    cs = out["claude-skills"]
    assert cs == {"agent": "claude-agent-acp", "model": "opus", "condition": "with-skills", "oracle": False,
                  "jobs": 3, "verdicts": {"CLEAN": 1, "ERROR": 1, "WARN": 1}, "rewards": [0.0, 1.0],
                  "mean_reward": 0.5}
    assert out["oracle"]["oracle"] is True and out["oracle"]["mean_reward"] == 1.0
    assert out["agent"]["mean_reward"] == 0.333333
    assert out["codex-noskills"]["rewards"] == [] and out["codex-noskills"]["mean_reward"] is None
    assert config_rollup([]) == {}


# ========================================================================================= report.md

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
TEMPLATE_SECTIONS = ["## Task description", "## Oracle results", "## Benchmark results", "## Skills impact",
                     "## Failure analysis", "## Critical findings", "## Recommendation", "## Artifacts"]


def _meta(config: str, *, reward: float | None, trial: str, task: str = "tictoc", agent: str = "claude-agent-acp",
          model: str = "claude-opus-4-7", condition: str | None = "with-skills", oracle: bool = False,
          **more: Any) -> dict[str, Any]:
    return {"config": config, "reward": reward, "task": task, "trial": trial, "agent": agent, "model": model,
            "condition": condition, "oracle": oracle, **more}


def _rec(job: str, code: str, status: str, evidence: str = "", data: dict | None = None, tier: str = "C0",
         meta: dict | None = None) -> dict[str, Any]:
    return {"job": job, "code": code, "status": status, "evidence": evidence, "data": data or {}, "events": [],
            "tier": tier, "family": "general", "affects": True, "meta": meta or {}}


TASK_META = {"name": "tictoc", "category": "databases", "difficulty": "hard", "tags": ["concurrency-control"],
             "description": f"Write the ids of unnecessary aborts to /root/out.json (token {SECRET})."}


def _rollup() -> Rollup:
    r = Rollup()
    ok = _meta("claude-skills", reward=1.0, trial="tictoc__A", task_meta=TASK_META, agent_time_sec=125.0,
               n_input_tokens=1000, n_output_tokens=50)
    bad = _meta("claude-noskills", reward=0.1, trial="tictoc__B", condition="no-skills", task_meta=TASK_META,
                model="opus|evil\nmodel", failed_tests=["test_ids", f"test_key[{SECRET}]"], agent_time_sec=42)
    orc = _meta("oracle", reward=1.0, trial="tictoc__oracle", agent="oracle", oracle=True, condition=None,
                verifier_tests={"tests": 3, "passed": 3, "failed": 0}, agent_time_sec=7)
    for code in ("P1", "P2", "P4"):
        r.add(_rec("jobs/tictoc__A", code, "PASS", meta=ok))
    r.add(_rec("jobs/tictoc__A", "P10", "PASS", data={"verbatim_final": "Wrote /root/out.json."}, tier="C0", meta=ok))
    r.add(_rec("jobs/tictoc__B", "P1", "PASS", meta=bad))
    r.add(_rec("jobs/tictoc__B", "P8", "WARN", f"struggle: rewrote solve.py 3 times with key {SECRET}", meta=bad))
    r.add(_rec("jobs/tictoc__B", "P10", "PASS", data={"verbatim_final": f"Done. I used OPENAI_KEY {SECRET} | ok"},
               meta=bad))
    r.add(_rec("jobs/tictoc__B", "P3", "N/A", "needs a judge", tier="C2", meta=bad,
               data={"failure_bucket": None, "verifier_message": f"test_ids: AssertionError: assert 4469 == 3216 {SECRET}"}))
    r.add(_rec("jobs/tictoc__B", "P5", "PASS", "reasoning_loss", tier="C1", meta=bad,
               data={"format_vs_reasoning": "reasoning_loss"}))
    r.add(_rec("jobs/tictoc__oracle", "P1", "N/A", "oracle run: not audited", meta=orc))
    return r


def _render(r: Rollup) -> tuple[dict[str, Any], str]:
    summary = r.summary()
    return summary, render_md(summary, r.jobs, "2026-08-20")


def test_report_has_every_section_of_the_template_in_order():
    summary, md = _render(_rollup())
    pos = [md.index(s) for s in TEMPLATE_SECTIONS]
    assert pos == sorted(pos)
    assert md.startswith("# Benchmark audit report: tictoc\n")
    assert "Date: 2026-08-20 · pytest-trajaudit · mode: precise · 3 job(s)" in md
    assert summary["pr_verdict"]["verdict"] == "APPROVE WITH CAVEATS"
    assert "**Verdict: APPROVE WITH CAVEATS**" in md
    assert "- 1 WARN job: jobs/tictoc__B" in md


def test_report_task_description_oracle_and_benchmark_table():
    _, md = _render(_rollup())
    assert "**tictoc** — category: databases, difficulty: hard, tags: concurrency-control" in md
    assert "> Write the ids of unnecessary aborts to /root/out.json" in md
    assert "| Oracle job | Status | Reward | Tests | Time |" in md
    assert "| jobs/tictoc__oracle | PASSED | 1 | 3/3 | 7s |" in md
    assert "| Config | Agent | Model | Skills | Trials | Accuracy | Agent time | Verdicts |" in md
    assert "| claude-skills | claude-agent-acp | claude-opus-4-7 | Yes | 1 | 100% | 2m 05s | 1 CLEAN |" in md
    assert "| oracle | oracle | claude-opus-4-7 | n/a | 1 | 100% | 7s | 1 ORACLE |" in md
    assert "- jobs/tictoc__A: in=1000, out=50, reward 1.0" in md


def test_report_escapes_pipes_and_newlines_in_table_cells():
    _, md = _render(_rollup())
    row = next(ln for ln in md.splitlines() if ln.startswith("| claude-noskills |"))
    assert "opus\\|evil model" in row
    assert row.count(" | ") == 7  # 8 cells: the model's '|' did not open a ninth
    assert row.endswith("| 1 WARN |")


def test_report_failure_analysis_critical_findings_recommendation_artifacts():
    _, md = _render(_rollup())
    fa = md[md.index("## Failure analysis"):md.index("## Critical findings")]
    assert "### jobs/tictoc__B (reward 0.1)" in fa
    assert ("- Root cause: capability gap (reasoning_loss; bucket `needs a judge`, format vs reasoning "
            "`reasoning_loss`)") in fa
    # report.md escapes what would be markup: the marker renders as <REDACTED>, not as an HTML tag
    assert "- Trajectory evidence:\n  - P8: struggle: rewrote solve.py 3 times with key \\<REDACTED\\>" in fa
    assert "- Verifier: test_ids: AssertionError: assert 4469 == 3216" in fa
    assert "- Agent's final: Done. I used OPENAI_KEY" in fa
    assert "tictoc__A" not in fa  # passed runs are not failures
    cf = md[md.index("## Critical findings"):md.index("## Recommendation")]
    assert "1. **WARN** `jobs/tictoc__B` — P8 WARN: struggle: rewrote solve.py 3 times" in cf
    rec = md[md.index("## Recommendation"):md.index("## Artifacts")]
    assert "Verdict: **APPROVE WITH CAVEATS**" in rec
    assert "Required changes:" in rec and "1. 1 WARN job: jobs/tictoc__B" in rec
    art = md[md.index("## Artifacts"):]
    for name in ("summary.json", "audit-<config>.json", "report.md"):
        assert name in art


def test_report_never_shows_a_planted_secret():
    summary, md = _render(_rollup())
    assert SECRET not in md
    assert "\\<REDACTED\\>" in md
    fa = md[md.index("## Failure analysis"):md.index("## Critical findings")]
    assert "- Agent's final: Done. I used OPENAI_KEY \\<REDACTED\\> \\| ok" in fa


def test_report_for_an_approved_pr_without_tasks_or_failures():
    r = Rollup()
    ok = _meta("codex-skills", reward=1.0, trial="t__1", agent="codex-acp", model="gpt-5.5")
    orc = _meta("oracle", reward=1.0, trial="t__oracle", agent="oracle", oracle=True)
    r.add(_rec("t__1", "P1", "PASS", meta=ok))
    r.add(_rec("t__oracle", "P1", "N/A", meta=orc))
    summary, md = _render(r)
    assert summary["pr_verdict"] == {"verdict": "APPROVE", "reasons": ["all jobs CLEAN, oracle reward 1.0"],
                                     "oracle_rewards": {"t__oracle": 1.0}, "tests_too_tight": []}
    for s in TEMPLATE_SECTIONS:
        assert s in md
    assert "No task directory was given (`--trajaudit-tasks`): task metadata unavailable." in md
    assert "No failed agent run." in md
    assert "## Critical findings\n\nNone." in md
    assert "Required changes:" not in md
    assert "No with-skills / without-skills pair of the same task and agent among the jobs." in md


def test_report_without_an_oracle_says_so():
    r = Rollup()
    r.add(_rec("t__1", "P1", "PASS", meta=_meta("c", reward=1.0, trial="t__1")))
    _, md = _render(r)
    assert "No oracle run among the audited jobs." in md


def test_report_skills_impact_table_when_both_arms_exist():
    r = Rollup()
    for i, (cond, reward) in enumerate([("with-skills", 1.0), ("no-skills", 0.0)]):
        cfg = "claude-skills" if cond == "with-skills" else "claude-noskills"
        r.add(_rec(f"t__{i}", "P1", "PASS", meta=_meta(cfg, reward=reward, trial=f"t__{i}", condition=cond)))
    summary, md = _render(r)
    si = md[md.index("## Skills impact"):md.index("## Failure analysis")]
    assert "| Agent | With skills | Without skills | Δ | Outcome |" in si
    assert "| 100% | 0% | +100.0 pp | helped |" in si


def test_report_tables_are_capped():
    r = Rollup()
    for i in range(MAX_ROWS + 5):
        r.add(_rec(f"t__{i}", "P1", "PASS", meta=_meta(f"cfg{i:04d}", reward=1.0, trial=f"t__{i}", condition=None)))
    _, md = _render(r)
    assert "| … 5 more rows in summary.json |" in md


def test_rollup_pr_verdict_uses_p12_and_oracle_records():
    r = Rollup()
    a = _meta("c", reward=0.0, trial="t__1")
    r.add(_rec("t__1", "P1", "PASS", meta=a))
    r.add(_rec("t__1", "P12", "WARN", "tests_too_tight", tier="C1", meta=a,
               data={"checked": True, "perturbations_passing": ["whitespace: JSON with spaces"]}))
    r.add(_rec("t__oracle", "P1", "N/A", meta=_meta("oracle", reward=1.0, trial="t__oracle", oracle=True)))
    pv = r.summary()["pr_verdict"]
    assert pv["verdict"] == "MAJOR CHANGES NEEDED"
    assert pv["reasons"] == ["P12 tests_too_tight: t__1"]
    assert pv["tests_too_tight"] == ["t__1"]
    # a C1 WARN does not make the job WARN (tier C0 only): the job itself stays CLEAN
    assert r.verdicts()["t__1"][0] == "CLEAN"


def test_report_table_cells_are_redacted():
    r = Rollup()
    r.add(_rec("t__1", "P1", "PASS", meta=_meta("c", reward=1.0, trial="t__1", model=f"proxy {SECRET}")))
    _, md = _render(r)
    assert SECRET not in md
    assert "| c | claude-agent-acp | proxy \\<REDACTED\\> |" in md


def test_report_md_escapes_markup_from_the_audited_tree() -> None:
    """Agent text quoted in report.md never renders as an image, a link, HTML, a code span it closes or a table
    cell of its own; a code span or block holding it is fenced longer than any backtick run in it."""
    import re

    from pytest_trajaudit.report.markdown import _code, _q, md

    evil = "cat x # ![ok](https://evil.example/a.png) <img src=x> [d](https://e) `y` gpt\\| 100% | 9"
    out = _q(evil, 300)
    assert not re.search(r"(?<!\\)[\[\]<>`|]", out.replace("\\\\", "")), out
    assert re.sub(r"\\([\\`\[\]<>|])", r"\1", out) == evil  # renders as the same characters
    assert md("a_b*c#d") == "a_b*c#d"  # emphasis characters stay: at worst they style the quote
    assert _code("job`s``x") == "```job`s``x```" and _code("`a") == "`` `a ``"
