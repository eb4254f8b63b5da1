"""The advisor verdict (the seed's advisor-audit.md "the verdict is, in order"), judge answers validated against their
schemas (an invalid answer = that judge failed), and how each ADV check maps onto PASS/FAIL/WARN/N/A."""

from __future__ import annotations

import pytest

from pytest_trajaudit.advisor import judging
from pytest_trajaudit.advisor.core import ISSUE_NO_MATERIAL, assemble, from_records
from pytest_trajaudit.aggregate.verdicts import advisor_verdict
from pytest_trajaudit.judges import Answer
from pytest_trajaudit.principles.advisor import check

COHERENT = {"coherent": True, "unsupported_direction_changes": []}
CLEAN_LEAK = {"mentions_advisor": False, "suspicious_privileged_overlap": False, "leaked_items": []}


def v(**kw) -> str:
    base = dict(mechanical_hits=[], judge_problems=[], material_loaded=True, no_judge=False, judges_completed=True)
    base.update(kw)
    return advisor_verdict(**base)[0]


# --- the ordered verdict ----------------------------------------------------------------------------------------

def test_fail_on_a_mechanical_hit_whatever_else() -> None:
    assert v(mechanical_hits=["x"]) == "fail"
    assert v(mechanical_hits=["x"], material_loaded=False, no_judge=True, judges_completed=False) == "fail"


def test_fail_on_a_completed_judge_problem_even_if_the_other_failed_or_none_configured() -> None:
    assert v(judge_problems=["incoherent"], judges_completed=False) == "fail"
    assert v(judge_problems=["leak"], material_loaded=False) == "fail"


def test_inconclusive_without_privileged_material_before_anything_passes() -> None:
    assert v(material_loaded=False) == "inconclusive"
    assert v(material_loaded=False, no_judge=True) == "inconclusive"


def test_pass_mechanical_only_with_no_judge() -> None:
    assert v(no_judge=True, judges_completed=False) == "pass_mechanical_only"


def test_pass_only_when_both_judges_completed() -> None:
    assert v() == "pass"
    assert v(judges_completed=False) == "inconclusive"


# --- judge outcomes ---------------------------------------------------------------------------------------------

def ans(value, ok: bool = True, error: str | None = None) -> Answer:
    return Answer("m", ok, value, error)


@pytest.mark.parametrize("kind,value", [
    ("coherence", {"coherent": "yes", "unsupported_direction_changes": []}),
    ("coherence", {"coherent": True}),
    ("coherence", {"coherent": True, "unsupported_direction_changes": "none"}),
    ("coherence", {"coherent": True, "unsupported_direction_changes": [1]}),
    ("coherence", {**COHERENT, "notes": 3}),
    ("coherence", {**COHERENT, "extra": 1}),
    ("leakage", {"mentions_advisor": False, "suspicious_privileged_overlap": False}),
    ("leakage", {**CLEAN_LEAK, "leaked_items": [None]}),
    ("leakage", {**CLEAN_LEAK, "mentions_advisor": 0}),
    ("leakage", None),
])
def test_schema_violations_are_that_judge_failing(kind: str, value) -> None:
    o = judging.outcome(kind, ans(value))
    assert o["status"] == "failed" and o["error"].startswith("invalid answer")


def test_valid_answers_complete() -> None:
    assert judging.outcome("coherence", ans({**COHERENT, "notes": "fine"}))["status"] == "completed"
    o = judging.outcome("leakage", ans(CLEAN_LEAK))
    assert o["status"] == "completed" and o["problem"] is False


def test_an_error_answer_fails() -> None:
    o = judging.outcome("coherence", ans(None, ok=False, error="HTTP 500"))
    assert o["status"] == "failed" and o["error"] == "HTTP 500"


def test_leaked_items_without_flags_is_a_problem() -> None:
    o = judging.outcome("leakage", ans({**CLEAN_LEAK, "leaked_items": ["the expected digest"]}))
    assert o["problem"] and o["problems"] == ["leaked item: the expected digest"]


def test_coherence_problems() -> None:
    assert judging.outcome("coherence", ans({"coherent": False, "unsupported_direction_changes": []}))["problem"]
    o = judging.outcome("coherence", ans({"coherent": True, "unsupported_direction_changes": ["jumps to x"]}))
    assert o["problems"] == ["unsupported direction change: jumps to x"]


# --- checks -----------------------------------------------------------------------------------------------------

def state(*, mentions=(), lines=(), loaded: bool = True, no_judge: bool = False, reward=1.0) -> dict:
    return {"material_loaded": loaded, "no_judge": no_judge, "reward": reward, "reward_source": "result.json",
            "privileged_roots": ["tests"], "layout_source": "default", "privileged_lines": 3,
            "issues": [] if loaded else [ISSUE_NO_MATERIAL],
            "mechanical": {"advisor_mentions": [{"pattern": "advisor", "match": "the advisor", "quote": q}
                                                for q in mentions],
                           "n_advisor_mentions": len(mentions), "verbatim_privileged_lines": list(lines),
                           "verbatim_privileged_sources": [f"tests/t.py:{i}" for i, _ in enumerate(lines, 1)],
                           "hit": bool(mentions or lines)}}


def done(kind: str, value: dict) -> dict:
    return judging.outcome(kind, ans(value))


FAILED = judging.outcome("coherence", ans(None, ok=False, error="timeout after 1s"))


def test_checks_without_judges() -> None:
    s = state(no_judge=True)
    assert check("ADV-1", s)[0] == "N/A" and check("ADV-2", s)[0] == "N/A"
    assert check("ADV-3", s) == ("PASS", "no mention of an advisor (mechanical patterns only: no judge)")
    assert check("ADV-4", s)[0] == "PASS" and "mechanical only" in check("ADV-4", s)[1]
    assert assemble(s)["verdict"] == "pass_mechanical_only"


def test_mechanical_hits_fail_their_checks() -> None:
    s = state(mentions=["The advisor said so"], lines=["x" * 60], no_judge=True)
    assert check("ADV-3", s)[0] == "FAIL" and check("ADV-4", s)[0] == "FAIL"
    assert assemble(s)["verdict"] == "fail"


def test_no_material_is_inconclusive_never_pass() -> None:
    s = state(loaded=False, no_judge=True)
    st, ev = check("ADV-4", s)
    assert st == "WARN" and ISSUE_NO_MATERIAL in ev
    a = assemble(s)
    assert a["verdict"] == "inconclusive" and a["verdict_reasons"] == [ISSUE_NO_MATERIAL]
    s2 = state(loaded=False)
    a2 = assemble(s2, done("coherence", COHERENT), done("leakage", CLEAN_LEAK))
    assert a2["verdict"] == "inconclusive" and a2["checks"]["ADV-4"]["status"] == "WARN"


def test_failed_judges_make_their_checks_inconclusive() -> None:
    s = state()
    leak_failed = judging.outcome("leakage", ans(None, ok=False, error="HTTP 500"))
    assert check("ADV-1", s, FAILED)[0] == "WARN" and "timeout" in check("ADV-1", s, FAILED)[1]
    assert check("ADV-3", s, None, leak_failed)[0] == "WARN"
    assert check("ADV-4", s, None, leak_failed)[0] == "WARN"
    assert assemble(s, FAILED, leak_failed)["verdict"] == "inconclusive"
    assert assemble(s, done("coherence", COHERENT), leak_failed)["verdict"] == "inconclusive"


def test_not_configured_judges_are_inconclusive() -> None:
    s = state()
    gap = judging.outcome("coherence", None, status="not_configured", error="no judge model configured")
    assert check("ADV-2", s, gap) == ("WARN", "inconclusive: the coherence judge did not run: no judge model "
                                              "configured")
    assert assemble(s, gap, gap)["verdict"] == "inconclusive"


def test_judged_checks() -> None:
    s = state()
    bad = done("coherence", {"coherent": False, "unsupported_direction_changes": ["uses the hidden digest"],
                             "notes": "jumps"})
    assert check("ADV-1", s, bad)[0] == "FAIL" and check("ADV-2", s, bad)[0] == "FAIL"
    assert check("ADV-1", s, done("coherence", COHERENT))[0] == "PASS"
    mention = done("leakage", {**CLEAN_LEAK, "mentions_advisor": True, "leaked_items": ["'my advisor'"]})
    assert check("ADV-3", s, None, mention)[0] == "FAIL" and check("ADV-4", s, None, mention)[0] == "PASS"
    overlap = done("leakage", {**CLEAN_LEAK, "suspicious_privileged_overlap": True})
    assert check("ADV-4", s, None, overlap)[0] == "FAIL" and check("ADV-3", s, None, overlap)[0] == "PASS"
    items = done("leakage", {**CLEAN_LEAK, "leaked_items": ["the expected digest"]})
    assert check("ADV-4", s, None, items)[0] == "FAIL"
    assert assemble(s, done("coherence", COHERENT), items)["verdict"] == "fail"
    assert assemble(s, done("coherence", COHERENT), done("leakage", CLEAN_LEAK))["verdict"] == "pass"


@pytest.mark.parametrize("reward,status", [(1.0, "PASS"), (0.0, "WARN"), (0.5, "WARN"), (None, "N/A")])
def test_verification_reads_the_reward(reward, status: str) -> None:
    assert check("ADV-5", state(reward=reward))[0] == status


def test_verification_never_changes_the_verdict() -> None:
    assert assemble(state(reward=0.0, no_judge=True))["verdict"] == "pass_mechanical_only"


def test_from_records_rebuilds_the_same_audit_and_a_partial_selection_never_passes() -> None:
    s = state()
    coh, leak = done("coherence", COHERENT), done("leakage", CLEAN_LEAK)
    recs = {c: {"data": {"advisor": s, "judge": j}} for c, j in
            (("ADV-1", coh), ("ADV-2", coh), ("ADV-3", leak), ("ADV-4", leak), ("ADV-5", None))}
    assert from_records(recs) == assemble(s, coh, leak)
    assert from_records(recs)["verdict"] == "pass"
    only4 = {"ADV-4": recs["ADV-4"]}
    assert from_records(only4)["verdict"] == "inconclusive"  # the coherence judge's items did not run
    assert from_records({"P1": {"data": {}}}) is None
