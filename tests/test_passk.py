"""pass^k as pure functions (aggregate/verdicts.py): the τ-bench estimator, per-task groups with integrity adjustment,
the seed's flaky flag, and the ``--trajaudit-trials K`` coverage check."""

from __future__ import annotations

from math import comb

import pytest

from pytest_trajaudit.aggregate.verdicts import pass_hat_k, pass_k_entries, trial_coverage


def rec(trial: str, reward: float | None, verdict: str = "CLEAN", task: str = "T", **kw) -> dict:
    return {"job": f"runs/{trial}", "task": task, "trial": trial, "agent": "claude-code", "model": "m",
            "condition": None, "reward": reward, "verdict": verdict, **kw}


@pytest.mark.parametrize(("c", "n", "k", "expected"), [
    (3, 3, 3, 1.0), (2, 3, 3, 0.0), (0, 3, 1, 0.0), (2, 3, 1, 2 / 3), (2, 3, 2, 1 / 3),
    (4, 5, 2, comb(4, 2) / comb(5, 2)), (8, 10, 4, comb(8, 4) / comb(10, 4)), (1, 1, 1, 1.0),
])
def test_estimator(c, n, k, expected):
    assert pass_hat_k(c, n, k) == pytest.approx(expected)


@pytest.mark.parametrize(("c", "n", "k"), [(1, 2, 3), (1, 2, 0), (3, 2, 1), (0, 0, 1), (-1, 2, 1)])
def test_estimator_rejects_impossible_inputs(c, n, k):
    with pytest.raises(ValueError):
        pass_hat_k(c, n, k)


def test_groups_by_task_agent_model_condition_and_k_defaults_to_the_trial_count():
    recs = [rec("a1", 1.0), rec("a2", 1.0), rec("b1", 0.0, task="U"),
            rec("c1", 1.0, condition="with-skills"), rec("d1", 1.0, model="other")]
    entries = pass_k_entries(recs)
    assert [(e["task"], e["model"], e["condition"], e["k"], e["status"]) for e in entries] == [
        ("T", "m", None, 2, "PASS"), ("T", "m", "with-skills", 1, "PASS"), ("T", "other", None, 1, "PASS"),
        ("U", "m", None, 1, "FAIL")]
    assert entries[0]["trials"] == ["a1", "a2"] and entries[0]["jobs"] == ["runs/a1", "runs/a2"]


def test_integrity_adjusted_invalid_trial_is_not_delivered():
    [e] = pass_k_entries([rec("a", 1.0), rec("b", 1.0, "INVALID"), rec("c", 1.0, "WARN")])
    assert (e["n_success"], e["n_success_raw"], e["n_invalid"], e["pass_hat_k"], e["pass_hat_k_raw"]) == (2, 3, 1, 0.0, 1.0)
    assert e["status"] == "FAIL" and e["reason"] == "2/3 trials delivered (1 INVALID counted as not delivered)"


def test_error_oracle_unknown_and_loader_signals():
    recs = [rec("a", 1.0), rec("b", None, "ERROR"), rec("oracle", 1.0, "ORACLE", oracle=True),
            rec("c", None), rec("d", None, delivered=True)]
    [e] = pass_k_entries(recs)
    assert (e["n_trials"], e["n_success"], e["n_error"], e["n_unknown"]) == (3, 2, 1, 1)
    assert "oracle" not in e["trials"]
    [none] = pass_k_entries([rec("x", None)])
    assert (none["status"], none["pass_hat_k"], none["flaky"]) == ("N/A", None, False)
    assert pass_k_entries([rec("u", 1.0, task="")]) == []  # no task: not a task trial


def test_flaky_as_the_seed_defines_it_and_inconsistent():
    [single] = pass_k_entries([rec("a", 0.0)])
    assert (single["flaky"], single["inconsistent"]) == (True, False)  # seed quirk: k=1 failure is flaky
    [mixed] = pass_k_entries([rec("a", 0.0), rec("b", 1.0)])
    assert (mixed["flaky"], mixed["inconsistent"]) == (True, True)
    [solid] = pass_k_entries([rec("a", 1.0), rec("b", 1.0)])
    assert (solid["flaky"], solid["inconsistent"]) == (False, False)


def test_explicit_k():
    recs = [rec(f"t{i}", 1.0 if i < 4 else 0.0) for i in range(5)]
    [e] = pass_k_entries(recs, k=2)
    assert e["k"] == 2 and e["pass_hat_k"] == pytest.approx(comb(4, 2) / comb(5, 2)) and e["status"] == "FAIL"
    [too_big] = pass_k_entries(recs, k=6)
    assert too_big["status"] == "N/A" and too_big["reason"] == "k=6 but only 5 trial(s) with a known outcome"


def test_partial_rewards_are_not_delivered():
    [e] = pass_k_entries([rec("a", 0.85), rec("b", 1.0)])
    assert e["n_success"] == 1


def test_trial_coverage():
    recs = [rec("T__1", 1.0), rec("T__2", 1.0), rec("U__1", 1.0, task="U"),
            {**rec("U__1", 0.0, task="U"), "job": "copy/U__1"}]
    errors = trial_coverage(recs, 3)
    assert [(e["task"], e["error"], e["found"], e["trial"]) for e in errors] == [
        ("T", "missing", 2, None), ("U", "duplicated", 1, "U__1"), ("U", "missing", 1, None)]
    assert errors[1]["jobs"] == ["runs/U__1", "copy/U__1"]
    assert errors[1]["message"] == "U: trial U__1 recorded 2 times (runs/U__1, copy/U__1)"
    assert trial_coverage(recs[:2], 2) == []
    assert trial_coverage(recs[:2], 1) == []  # more trials than K is not an error
    with pytest.raises(ValueError):
        trial_coverage(recs, 0)
