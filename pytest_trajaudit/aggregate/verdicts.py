"""Pure roll-up functions: per-job verdict (the seed's audit-general.md aggregation rule, first match wins).

Which principle does what to a verdict comes from its declaration (``role`` in ``principles/__init__.py``),
never from a list of codes here. Choices where the seed is silent (documented in docs/verdicts.md):
- N/A never blocks CLEAN, except for a principle declared ``na_warns`` (anti-cheat not judged → WARN);
- a C0 FAIL of a quality principle (e.g. the agentic floor "below") makes the job WARN (needs review), not INVALID;
- an info principle (e.g. self-doubt) never changes the verdict;
- a job whose integrity principles did not all run is INCOMPLETE (never CLEAN), unless a FAIL already makes it
  INVALID;
- unusable input gives the verdict ERROR (outside the seed's enum), and an oracle run is ORACLE (never audited).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import SkillQuoteFields

VERDICTS = ("CLEAN", "WARN", "INVALID", "INCOMPLETE", "ERROR", "ORACLE")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the roll-up needs of one principle's result (travels from xdist workers as builtins)."""

    status: str  # PASS | WARN | FAIL | N/A
    tier: str
    role: str = "quality"  # integrity | quality | info (the principle's declaration)
    evidence: str = ""
    flipped_signal: bool = False
    na_warns: bool = False  # the principle's declaration: its N/A keeps the job from CLEAN


def missing_line(missing: Mapping[str, str]) -> str:
    """``P1, P2 not run (selection: -k P10)``: integrity codes that produced no finding, and why."""
    causes = list(dict.fromkeys(missing.values()))
    return f"{', '.join(missing)} not run ({'; '.join(causes)})"


def job_verdict(outcomes: Mapping[str, Outcome], *, error: str | None = None,
                oracle: bool = False, missing: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """Return (verdict, reasons). ``missing``: integrity code → why it produced no finding on this job (a
    selection, -x, an interrupt); see completeness.py."""
    if error:
        return "ERROR", [error]
    if oracle:
        return "ORACLE", ["oracle run: not audited"]
    incomplete = [f"incomplete: {missing_line(missing)}"] if missing else []
    # an integrity FAIL; a flipped signal (the verifier-alignment data) is named as such below, after the plain FAILs
    invalid = [f"{c} FAIL: {o.evidence}" for c, o in outcomes.items()
               if o.role == "integrity" and o.status == "FAIL" and not o.flipped_signal]
    if invalid:
        return "INVALID", invalid + incomplete
    flipped = [f"{c}: {o.evidence}" if o.evidence.startswith("flipped_signal") else f"{c}: flipped_signal: {o.evidence}"
               for c, o in outcomes.items() if o.flipped_signal]
    if flipped:
        return "INVALID", flipped + incomplete
    if incomplete:
        return "INCOMPLETE", incomplete
    warn = [f"{c} {o.status}: {o.evidence}" for c, o in outcomes.items()
            if o.tier == "C0" and o.role != "info" and o.status in ("WARN", "FAIL")]
    warn += [f"{c} N/A: anti-cheat not judged ({o.evidence})" for c, o in outcomes.items()
             if o.na_warns and o.status == "N/A"]
    if warn:
        return "WARN", warn
    return "CLEAN", []


def verdict_counts(verdicts: Mapping[str, str]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICTS, 0)
    for v in verdicts.values():
        counts[v] = counts.get(v, 0) + 1
    return counts


# --- PR level (the seed's audit-general.md "PR-level verdict", first match wins) ------------------------------------

PR_VERDICTS = ("APPROVE", "APPROVE WITH CAVEATS", "MAJOR CHANGES NEEDED", "INCOMPLETE", "REJECT")


def incomplete_line(missing: Mapping[str, Mapping[str, str]], order: Sequence[str] = ()) -> str:
    """``P1, P2 not run on 3 jobs (selection: -k P10)``: the integrity codes missing on any job (in ``order``,
    then first seen), how many jobs miss one, and every cause. ``missing``: job → {code → cause}, jobs that miss
    none left out."""
    codes = _ordered((c for m in missing.values() for c in m), order)
    causes = list(dict.fromkeys(why for m in missing.values() for why in m.values()))
    n = len(missing)
    return f"{', '.join(codes)} not run on {n} job{'' if n == 1 else 's'} ({'; '.join(causes)})"


def _ordered(codes: Iterable[str], order: Sequence[str]) -> list[str]:
    seen = list(dict.fromkeys(codes))
    rank = {c: i for i, c in enumerate(order)}
    return sorted(seen, key=lambda c: (rank.get(c, len(rank)), seen.index(c)))


def pr_verdict(job_verdicts: Mapping[str, str], *, oracle_rewards: Mapping[str, float | None],
               tests_too_tight: Sequence[str] = (),
               missing: Mapping[str, Mapping[str, str]] | None = None,
               order: Sequence[str] = ()) -> tuple[str, list[str]]:
    """The PR verdict over every audited job, first match wins:

    1. any INVALID job → REJECT (a partial run does not hide a found cheat; its incompleteness is the last reason);
    2. any INCOMPLETE job (an integrity principle did not run on it) → INCOMPLETE, never an approval: the first
       reason names what did not run and why, the reasons of rule 3 follow;
    3. ≥ 2 WARN jobs, an oracle reward < 1.0 (or none recorded), any tests_too_tight ablation, any job that could
       not be audited (ERROR), or no agent job at all → MAJOR CHANGES NEEDED;
    4. exactly 1 WARN job, or no oracle run among the jobs → APPROVE WITH CAVEATS;
    5. otherwise (all CLEAN, oracle 1.0) → APPROVE.
    Stage-1 policy checks are not run by the plugin and never contribute. ``oracle_rewards``: oracle job → reward.
    ``missing``: job → {integrity code → why it did not run} (job_verdict's ``missing``); only INVALID and
    INCOMPLETE jobs count in the incompleteness reason (an ERROR or ORACLE job has its own); ``order``: the
    registry's code order, in which that reason names the codes.
    """
    agent = {j: v for j, v in job_verdicts.items() if v != "ORACLE"}
    unrun = {j: m for j, m in sorted((missing or {}).items()) if m and agent.get(j) in ("INVALID", "INCOMPLETE")}
    invalid = sorted(j for j, v in agent.items() if v == "INVALID")
    if invalid:
        return "REJECT", [f"INVALID job: {j}" for j in invalid] + (
            [f"incomplete run: {incomplete_line(unrun, order)}"] if unrun else [])
    reasons: list[str] = []
    warns = sorted(j for j, v in agent.items() if v == "WARN")
    errors = sorted(j for j, v in agent.items() if v == "ERROR")
    if len(warns) >= 2:
        reasons.append(f"{len(warns)} WARN jobs ({', '.join(warns[:5])}{', ...' if len(warns) > 5 else ''})")
    for j, r in sorted(oracle_rewards.items()):
        if r is None or r < 1.0:
            reasons.append(f"oracle reward {'missing' if r is None else f'{r:g}'} < 1.0: {j}")
    reasons += [f"{_code('tests_too_tight')} tests_too_tight: {j}" for j in sorted(tests_too_tight)]
    if errors:
        reasons.append(f"{len(errors)} job(s) could not be audited (unusable input): {', '.join(errors[:5])}"
                       f"{', ...' if len(errors) > 5 else ''}")
    if not agent:
        reasons.append("no agent job was audited")
    incomplete = sorted(j for j, v in agent.items() if v == "INCOMPLETE")
    if incomplete:
        line = incomplete_line(unrun, order) if unrun else (f"{len(incomplete)} INCOMPLETE job(s): "
                                                     f"{', '.join(incomplete[:5])}{', ...' if len(incomplete) > 5 else ''}")
        return "INCOMPLETE", [line, *reasons]
    if reasons:
        return "MAJOR CHANGES NEEDED", reasons
    if len(warns) == 1:
        reasons.append(f"1 WARN job: {warns[0]}")
    if not oracle_rewards:
        reasons.append("no oracle run among the audited jobs (oracle reward unknown)")
    if reasons:
        return "APPROVE WITH CAVEATS", reasons
    return "APPROVE", ["all jobs CLEAN, oracle reward 1.0"]


def config_rollup(jobs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-config results: jobs, verdict counts, rewards and their mean. ``jobs``: {config, verdict, reward, agent,
    model, condition, oracle}. A configuration is the agent and model of each job: a config name that jobs of
    several models share is split into ``<config>@<model>`` (and one that several agents share into
    ``<agent>:<config>``), so that no job is listed under another job's model; a job that records no model (or
    agent) stays under the plain name."""
    models: dict[str, set[str]] = {}
    agents: dict[str, set[str]] = {}
    for j in jobs:
        name = j.get("config") or "agent"
        if j.get("model"):
            models.setdefault(name, set()).add(j["model"])
        if j.get("agent"):
            agents.setdefault(name, set()).add(j["agent"])

    def key(j: Mapping[str, Any]) -> str:
        name = j.get("config") or "agent"
        if len(agents.get(name, ())) > 1 and j.get("agent"):
            name = f"{j['agent']}:{name}"
        if len(models.get(j.get("config") or "agent", ())) > 1 and j.get("model"):
            name = f"{name}@{j['model']}"
        return name

    out: dict[str, dict[str, Any]] = {}
    for j in sorted(jobs, key=lambda x: (x.get("config") or "", x.get("job") or "")):
        c = out.setdefault(key(j), {
            "agent": j.get("agent") or "", "model": j.get("model") or "", "condition": j.get("condition"),
            "oracle": bool(j.get("oracle")), "jobs": 0, "verdicts": {}, "rewards": [], "mean_reward": None})
        c["agent"] = c["agent"] or j.get("agent") or ""
        c["model"] = c["model"] or j.get("model") or ""
        c["jobs"] += 1
        c["verdicts"][j["verdict"]] = c["verdicts"].get(j["verdict"], 0) + 1
        if j.get("reward") is not None:
            c["rewards"].append(j["reward"])
    out = dict(sorted(out.items()))
    for c in out.values():
        c["verdicts"] = dict(sorted(c["verdicts"].items()))
        if c["rewards"]:
            c["mean_reward"] = round(sum(c["rewards"]) / len(c["rewards"]), 6)
    return out


# --- trace-grader run verdict and pass^k (the seed's trace-grader.md, RULES.md D) -----------------------------------

TRACE_VERDICTS = ("clean-pass", "pass-with-warnings", "corrupt-success", "fail")


def trace_run_verdict(delivered: bool | None, flags: Sequence[Mapping[str, Any]]) -> str:
    """The original's run verdict: not delivered → ``fail`` (flags ignored); no flags → ``clean-pass``; any
    high-severity flag → ``corrupt-success`` (right answer via a bad path); else ``pass-with-warnings``.
    ``delivered`` None (no reward, no loader signal) is graded on the flags alone, as the original does for
    Claude transcripts (whose ``run.ok`` it forces to true)."""
    if delivered is False:
        return "fail"
    if not flags:
        return "clean-pass"
    if any(f.get("severity") == "high" for f in flags):
        return "corrupt-success"
    return "pass-with-warnings"


def corrupt_success(delivered: bool | None, flags: Sequence[Mapping[str, Any]]) -> bool:
    return delivered is not False and any(f.get("severity") == "high" for f in flags)


def pass_hat_k(successes: int, n: int, k: int) -> float:
    """τ-bench's unbiased pass^k estimator C(c, k) / C(n, k): the chance that k trials drawn without replacement
    from the n recorded ones all succeeded. With k = n it is 1.0 when every trial succeeded, else 0.0 (the
    original's all-k-deliver rule)."""
    from math import comb

    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"pass^k needs 0 ≤ successes ≤ n and n ≥ 1 (successes={successes}, n={n})")
    if not 1 <= k <= n:
        raise ValueError(f"pass^k needs 1 ≤ k ≤ n (k={k}, n={n})")
    return comb(successes, k) / comb(n, k)


GROUP_KEYS = ("task", "agent", "model", "condition")


def _task_of(rec: Mapping[str, Any]) -> str:
    task = rec.get("task") or ""
    trial = rec.get("trial") or ""
    if not task and "__" in trial:  # an unusable job's meta has only its trial directory name
        task = trial.rsplit("__", 1)[0]
    return task


def trial_delivered(rec: Mapping[str, Any], threshold: float = 1.0) -> bool | None:
    """Integrity-adjusted delivery of one trial: INVALID (an anti-cheat FAIL) or ERROR (could not be audited)
    → False; else reward ≥ threshold; else the loader's own signal (``delivered``: traces.json ok, a hooklib
    session); else None (unknown: not counted)."""
    if rec.get("verdict") in ("INVALID", "ERROR"):
        return False
    reward = rec.get("reward")
    if isinstance(reward, int | float) and not isinstance(reward, bool):
        return reward >= threshold
    d = rec.get("delivered")
    return d if isinstance(d, bool) else None


def _raw_delivered(rec: Mapping[str, Any], threshold: float) -> bool | None:
    reward = rec.get("reward")
    if isinstance(reward, int | float) and not isinstance(reward, bool):
        return reward >= threshold
    d = rec.get("delivered")
    return d if isinstance(d, bool) else None


def task_groups(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str, str | None], list[Mapping[str, Any]]]:
    """Trials of one task under one configuration (task, agent, model, condition). Oracle runs and jobs with no
    task are left out."""
    groups: dict[tuple[str, str, str, str | None], list[Mapping[str, Any]]] = {}
    for rec in records:
        task = _task_of(rec)
        if not task or rec.get("oracle") or rec.get("verdict") == "ORACLE":
            continue
        key = (task, rec.get("agent") or "", rec.get("model") or "", rec.get("condition"))
        groups.setdefault(key, []).append(rec)
    return dict(sorted(groups.items(), key=lambda kv: tuple("" if x is None else x for x in kv[0])))


def pass_k_entries(records: Sequence[Mapping[str, Any]], k: int | None = None,
                   threshold: float = 1.0) -> list[dict[str, Any]]:
    """One pass^k entry per task group. ``records``: per-job {job, task, trial, agent, model, condition, reward,
    verdict[, delivered, oracle]}. ``k`` defaults to the group's trial count (the original's rule: all k
    trials must deliver). A trial counts as delivered when :func:`trial_delivered` says so (an INVALID job never
    does); trials with unknown delivery are listed (``n_unknown``) but not counted. ``flaky`` is the seed's
    definition — pass^k not reached — which includes a single failed trial; ``inconsistent`` is the everyday
    one (some trials delivered, some not)."""
    out = []
    for (task, agent, model, condition), recs in task_groups(records).items():
        known = [(r, trial_delivered(r, threshold)) for r in recs]
        counted = [(r, d) for r, d in known if d is not None]
        n = len(counted)
        c = sum(1 for _, d in counted if d)
        raw = [_raw_delivered(r, threshold) for r, _ in counted]
        c_raw = sum(1 for d in raw if d)
        kk = n if k is None else k
        entry: dict[str, Any] = {
            "task": task, "agent": agent, "model": model, "condition": condition,
            "k": kk, "n_trials": n, "n_success": c, "n_fail": n - c,
            "n_invalid": sum(1 for r, _ in counted if r.get("verdict") == "INVALID"),
            "n_error": sum(1 for r, _ in counted if r.get("verdict") == "ERROR"),
            "n_unknown": len(recs) - n, "n_success_raw": c_raw,
            "pass_hat_k": None, "pass_hat_k_raw": None, "status": "N/A", "reason": "",
            "flaky": False, "inconsistent": 0 < c < n,
            "trials": [str(r.get("trial") or r.get("job") or "") for r in recs],
            "jobs": [str(r.get("job") or "") for r in recs],
        }
        if n == 0:
            entry["reason"] = "no trial records whether it delivered (no reward)"
        elif not 1 <= kk <= n:
            entry["reason"] = f"k={kk} but only {n} trial(s) with a known outcome"
        else:
            entry["pass_hat_k"] = round(pass_hat_k(c, n, kk), 6)
            entry["pass_hat_k_raw"] = round(pass_hat_k(c_raw, n, kk), 6)
            entry["status"] = "PASS" if c == n else "FAIL"
            entry["flaky"] = c < n
            entry["reason"] = f"{c}/{n} trials delivered" + (
                f" ({entry['n_invalid']} INVALID counted as not delivered)" if entry["n_invalid"] else "")
        out.append(entry)
    return out


def trial_coverage(records: Sequence[Mapping[str, Any]], expected: int) -> list[dict[str, Any]]:
    """``--trajaudit-trials K``: every task group should hold K distinct trials. Returns error entries:
    ``missing`` (fewer distinct trials than K) and ``duplicated`` (one trial name recorded by several jobs).
    More than K trials is not an error (pass^k then uses the estimator)."""
    if expected < 1:
        raise ValueError(f"expected trials must be ≥ 1, got {expected}")
    errors: list[dict[str, Any]] = []
    for (task, agent, model, condition), recs in task_groups(records).items():
        base = {"task": task, "agent": agent, "model": model, "condition": condition, "expected": expected}
        by_trial: dict[str, list[str]] = {}
        for r in recs:
            by_trial.setdefault(str(r.get("trial") or r.get("job") or ""), []).append(str(r.get("job") or ""))
        for trial, jobs in sorted(by_trial.items()):
            if len(jobs) > 1:
                errors.append({**base, "error": "duplicated", "trial": trial, "jobs": jobs, "found": len(by_trial),
                               "message": f"{task}: trial {trial} recorded {len(jobs)} times ({', '.join(jobs)})"})
        if len(by_trial) < expected:
            errors.append({**base, "error": "missing", "trial": None, "jobs": [j for js in by_trial.values() for j in js],
                           "found": len(by_trial),
                           "message": f"{task}: {len(by_trial)} of {expected} trial(s) found"})
    return errors


# --- SkillsBench: skill impact and the PR-level skills flags (the seed's audit-skillsbench.md) ---------------

SKILL_HELPED, SKILL_HURT, SKILL_NOOP = "helped", "hurt", "no-op"
SKILL_IMPACT_PP = 10.0  # helped at Δ ≥ +10 pp, hurt at Δ ≤ −10 pp (both inclusive)
SKILL_HURT_ALL_PP = -20.0  # the PR flag "skills hurt every agent" uses −20 pp, not −10
SKILL_NOISE_PP = 30.0  # single-trial |Δ| below this is likely noise
SKILL_MIN_TRIALS = 3  # trials per arm before a Δ is called without a caveat
_ARMS = ("with-skills", "no-skills")


def skill_outcome(delta_pp: float) -> str:
    """helped / hurt / no-op at ±10 pp, boundaries inclusive (compared at 1e-6 pp, so 0.6 − 0.5 is +10)."""
    d = round(delta_pp, 6)
    if d >= SKILL_IMPACT_PP:
        return SKILL_HELPED
    if d <= -SKILL_IMPACT_PP:
        return SKILL_HURT
    return SKILL_NOOP


def _shim(agent: str) -> str:
    return (agent or "agent").rsplit("/", 1)[-1].lstrip("@") or "agent"


def _trial_task(t: Mapping[str, Any]) -> str:
    task = str(t.get("task") or "")
    trial = str(t.get("trial") or "")
    return task or (trial.rsplit("__", 1)[0] if "__" in trial else "")


def _reward(t: Mapping[str, Any]) -> float | None:
    r = t.get("reward")
    return float(r) if isinstance(r, int | float) and not isinstance(r, bool) else None


def skill_groups(trials: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], dict[str, list[Mapping[str, Any]]]]:
    """Trials of one task under one agent (shim) and model, split by arm. Oracle runs and trials whose condition
    is unknown are left out. ``trials``: {task, agent, model, condition, reward, job, oracle, ...}."""
    groups: dict[tuple[str, str, str], dict[str, list[Mapping[str, Any]]]] = {}
    for t in trials:
        cond = t.get("condition")
        if t.get("oracle") or cond not in _ARMS:
            continue
        key = (_trial_task(t), _shim(str(t.get("agent") or "")), str(t.get("model") or ""))
        groups.setdefault(key, {a: [] for a in _ARMS})[cond].append(t)
    return groups


def _impact_keys(keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
    """The seed keys skill_impact by shim name; qualify only as much as this audit needs to keep keys unique:
    ``<agent>``, else ``<agent>@<model>``, else ``<task>/<agent>@<model>`` (the same level for every entry)."""
    fmt: Callable[[tuple[str, str, str]], str]
    for fmt in (lambda k: k[1], lambda k: f"{k[1]}@{k[2]}" if k[2] else k[1],
                lambda k: f"{k[0]}/{k[1]}@{k[2]}" if k[2] else f"{k[0]}/{k[1]}"):
        names = {k: fmt(k) for k in keys}
        if len(set(names.values())) == len(keys):
            return names
    return {k: f"{k[0]}/{k[1]}@{k[2]}#{i}" for i, k in enumerate(keys)}


def skill_quote_fields(sb1_data: Mapping[str, Any]) -> SkillQuoteFields:
    """A trial's skill-impact quote as its skill-invocation finding recorded it: ``skill_quote`` ({text, event,
    source}) or None, and ``skill_quote_missing`` (why there is none)."""
    q: Any = sb1_data.get("quote")  # JSON: read only where ``ok`` says it is a mapping with a text
    ok = isinstance(q, Mapping) and isinstance(q.get("text"), str) and q["text"].strip()
    missing = sb1_data.get("quote_missing")
    return {"skill_quote": {"text": q["text"], "event": q.get("event"), "source": str(q.get("source") or "")}
            if ok else None,
            "skill_quote_missing": None if ok else (str(missing) if missing else None)}


def _impact_quote(arm: Sequence[Mapping[str, Any]], outcome: str, given: str | None) -> dict[str, Any]:
    """The quote of a helped / hurt entry: ``given`` when the caller supplied one, else the ``skill_quote`` of a
    with-skills trial — the best-rewarded one for helped (where the skill unlocked the step), the worst-rewarded for
    hurt (where it misled) — with the job it came from; ``quote_missing`` says why there is none."""
    out: dict[str, Any] = {"quote": None, "quote_job": None, "quote_source": None, "quote_missing": None}
    if outcome not in (SKILL_HELPED, SKILL_HURT):
        return out
    if given:
        return {**out, "quote": given, "quote_source": "given"}
    rewarded = sorted((t for t in arm if _reward(t) is not None),
                      key=lambda t: ((-1 if outcome == SKILL_HELPED else 1) * float(_reward(t) or 0.0),
                                     str(t.get("job") or "")))
    pick = next((t for t in rewarded if isinstance(t.get("skill_quote"), Mapping)), None)
    if pick is not None:
        q = pick["skill_quote"]
        return {**out, "quote": q["text"], "quote_job": str(pick.get("job") or ""), "quote_source": q.get("source")}
    no_record = f"no {_code('skill_invocation')} record of the trial"
    why = list(dict.fromkeys(f"{t.get('job') or '?'}: {t.get('skill_quote_missing') or no_record}" for t in rewarded))
    out["quote_missing"] = "no with-skills trial has a quotable moment (" + "; ".join(why[:3]) + (
        f"; +{len(why) - 3} more" if len(why) > 3 else "") + ")"
    return out


def skill_impact(trials: Sequence[Mapping[str, Any]], *, unlock_quotes: Mapping[str, str] | None = None,
                 misled_quotes: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Skill impact: per task × agent × model with rewarded trials in both arms, the mean reward with and without
    skills, Δ = (with − without) × 100 in pp, the outcome at ±10 pp, trial counts and the noise caveat (one trial per
    arm and |Δ| < 30 pp → likely noise; fewer than 3 trials per arm → say so). Trials without a reward are not counted.
    ``unlock_quote`` on a helped entry and ``misled_quote`` on a hurt one (the other stays null) come from
    ``unlock_quotes`` / ``misled_quotes`` (keyed by the entry key or the agent name) when given, else from the
    with-skills trials' ``skill_quote`` (:func:`_impact_quote`), with ``quote_job`` and ``quote_source``; a helped or
    hurt entry with nothing to quote says why in ``quote_missing``. Never blocking."""
    groups = {k: v for k, v in skill_groups(trials).items()
              if any(_reward(t) is not None for t in v["with-skills"])
              and any(_reward(t) is not None for t in v["no-skills"])}
    names = _impact_keys(sorted(groups))
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(groups, key=lambda k: names[k]):
        task, agent, model = key
        arms = groups[key]
        w = [r for t in arms["with-skills"] if (r := _reward(t)) is not None]
        n = [r for t in arms["no-skills"] if (r := _reward(t)) is not None]
        mw, mn = sum(w) / len(w), sum(n) / len(n)
        delta = (mw - mn) * 100
        outcome = skill_outcome(delta)
        name = names[key]
        unlock = (unlock_quotes or {}).get(name) or (unlock_quotes or {}).get(agent)
        misled = (misled_quotes or {}).get(name) or (misled_quotes or {}).get(agent)
        n_min = min(len(w), len(n))
        noise = n_min == 1 and abs(round(delta, 6)) < SKILL_NOISE_PP
        counts = f"n={len(w)} with / {len(n)} without skills"
        if noise:
            caveat = f"{counts}: a single-trial |Δ| below {SKILL_NOISE_PP:g} pp is likely noise; re-run with ≥ " \
                     f"{SKILL_MIN_TRIALS} trials per arm"
        elif n_min < SKILL_MIN_TRIALS:
            caveat = f"{counts}: needs ≥ {SKILL_MIN_TRIALS} trials per arm to call"
        else:
            caveat = None
        sb1: dict[str, int] = {}
        for t in arms["with-skills"]:
            if t.get("sb1"):
                sb1[str(t["sb1"])] = sb1.get(str(t["sb1"]), 0) + 1
        evidence = f"mean reward {mw:.2f} with skills ({len(w)} trial(s)) vs {mn:.2f} without ({len(n)})"
        if outcome == SKILL_NOOP and sb1 and set(sb1) == {"NOT_INVOKED"}:
            evidence += (f"; skills never read ({_code('skill_invocation')} NOT_INVOKED on all {sb1['NOT_INVOKED']} "
                         "judged with-skills trials)")
        q = _impact_quote(arms["with-skills"], outcome, unlock if outcome == SKILL_HELPED else misled)
        out[name] = {
            "with_skills_reward": round(mw, 6), "no_skills_reward": round(mn, 6), "delta_pp": round(delta, 1),
            "outcome": outcome, "unlock_quote": q["quote"] if outcome == SKILL_HELPED else None,
            "misled_quote": q["quote"] if outcome == SKILL_HURT else None, "quote_job": q["quote_job"],
            "quote_source": q["quote_source"], "quote_missing": q["quote_missing"],
            "task": task, "agent": agent, "model": model, "n_with_skills": len(w), "n_no_skills": len(n),
            "with_skills_rewards": w, "no_skills_rewards": n, "likely_noise": noise, "caveat": caveat,
            "sb1": dict(sorted(sb1.items())), "evidence": evidence,
            "jobs": {arm: sorted(str(t.get("job") or "") for t in arms[arm] if _reward(t) is not None)
                     for arm in _ARMS},
        }
    return out


def _code(key: str) -> str:
    """The code of the built-in principle that fills the audit-JSON key ``key``, for the messages that name it."""
    from ..principles import code_for

    return code_for(key)


def _misuse(flag: str) -> str:
    """``<code> <what>`` of the skill-misuse principle that sets ``flag`` of the audit's ``skill_misuse`` object:
    its title reads ``skill misuse: <what>``, ``<what>`` being the flag's words (``top-level only``)."""
    from ..principles import codes_for, registry

    reg = registry()
    for code in codes_for("skill_misuse"):
        what = reg[code].title.split(": ", 1)[-1]
        if what.replace("-", "_").replace(" ", "_") == flag:
            return f"{code} {what}"
    raise KeyError(flag)


def skills_flags(trials: Sequence[Mapping[str, Any]], impact: Mapping[str, Mapping[str, Any]], *,
                 strongest: Mapping[str, tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """The SkillsBench PR-level flags, per task; none blocks (they feed "Suggested improvements"):

    - ``skills_hurt_all_agents``: every agent's Δ ≤ −20 pp;
    - ``skills_noop_all_agents``: every agent no-op ("skill may be redundant for current SOTA");
    - ``skill_never_discovered``: skill invocation NOT_INVOKED on every judged with-skills trial (description or
      placement);
    - ``skill_workflow_not_directive``: partial follow-through or top-level only on a with-skills trial of the task's
      strongest agent/model (``strongest``: task → (agent, model); default: the highest mean reward over both arms);
    - ``no_skills_leak``: a no-skills trial used a skill (the Δ compares contaminated arms).
    ``trials`` carry ``sb1`` (the skill-invocation status), ``top_level_only``, ``partial_follow_through`` and
    ``leak``."""
    flags: list[dict[str, Any]] = []
    groups = skill_groups(trials)
    tasks = sorted({k[0] for k in groups})
    for task in tasks:
        entries = {name: e for name, e in impact.items() if e.get("task") == task}
        if entries:
            deltas = {name: e["delta_pp"] for name, e in entries.items()}
            if all(d <= SKILL_HURT_ALL_PP for d in deltas.values()):
                flags.append(_flag("skills_hurt_all_agents", task, f"skills hurt every agent by ≥ 20 pp "
                                   f"({', '.join(f'{k} {v:+g} pp' for k, v in deltas.items())}); acceptable when a "
                                   "strong model passes without skills", list(entries)))
            if all(e["outcome"] == SKILL_NOOP for e in entries.values()):
                flags.append(_flag("skills_noop_all_agents", task, "skills are a no-op for every agent: the skill "
                                   "may be redundant for current SOTA", list(entries)))
        task_groups = {k: v for k, v in groups.items() if k[0] == task}
        judged = [t for v in task_groups.values() for t in v["with-skills"]
                  if t.get("sb1") in ("VERIFIED", "PARTIAL", "NOT_INVOKED")]
        if judged and all(t.get("sb1") == "NOT_INVOKED" for t in judged):
            flags.append(_flag("skill_never_discovered", task,
                               f"{_code('skill_invocation')} NOT_INVOKED on all {len(judged)} judged with-skills "
                               "trial(s): the skill was never discovered (description or placement)",
                               sorted(str(t.get("job") or "") for t in judged)))
        best = (strongest or {}).get(task) or _strongest(task_groups)
        if best is not None:
            g = task_groups.get((task, _shim(best[0]), best[1]))
            bad = [t for t in (g or {}).get("with-skills", []) if t.get("top_level_only") or t.get("partial_follow_through")]
            if bad:
                what = sorted({_misuse("top_level_only" if t.get("top_level_only") else "partial_follow_through")
                               for t in bad})
                flags.append(_flag("skill_workflow_not_directive", task, f"{' and '.join(what)} on the strongest "
                                   f"model ({_shim(best[0])} {best[1]}): make the skill's workflow more directive",
                                   sorted(str(t.get("job") or "") for t in bad)))
        leaks = [t for v in task_groups.values() for t in v["no-skills"] if t.get("leak")]
        if leaks:
            flags.append(_flag("no_skills_leak", task, f"{len(leaks)} no-skills trial(s) used a skill: the skill "
                               "impact compares contaminated arms", sorted(str(t.get("job") or "") for t in leaks)))
    return flags


def _strongest(groups: Mapping[tuple[str, str, str], Mapping[str, list[Mapping[str, Any]]]]) -> tuple[str, str] | None:
    means = {}
    for (_, agent, model), arms in groups.items():
        rs = [r for arm in _ARMS for t in arms[arm] if (r := _reward(t)) is not None]
        if rs:
            means[(agent, model)] = sum(rs) / len(rs)
    if not means:
        return None
    return max(sorted(means), key=lambda k: means[k])


def _flag(code: str, task: str, message: str, refs: list[str]) -> dict[str, Any]:
    return {"flag": code, "task": task, "message": message, "blocking": False, "refs": refs}


# --- advisor audit (the seed's advisor-audit.md "What it checks and how the verdict is decided") --------------------

ADVISOR_VERDICTS = ("pass", "pass_mechanical_only", "inconclusive", "fail")


def advisor_verdict(*, mechanical_hits: Sequence[str], judge_problems: Sequence[str], material_loaded: bool,
                    no_judge: bool, judges_completed: bool) -> tuple[str, list[str]]:
    """The advisor audit's verdict, in the spec's order (first match wins):

    1. ``fail`` if any mechanical check hit or any judge that completed reported a problem, even if the other judge
       failed or no judge endpoint is configured;
    2. otherwise ``inconclusive`` if no privileged material was loaded;
    3. otherwise ``pass_mechanical_only`` with no judge (``--no-judge``; in pytest: no ``--trajaudit-judge``);
    4. otherwise ``pass`` if both judges completed;
    5. otherwise ``inconclusive``.
    """
    problems = [*mechanical_hits, *judge_problems]
    if problems:
        return "fail", problems
    if not material_loaded:
        return "inconclusive", ["no privileged material was loaded from the task directory"]
    if no_judge:
        return "pass_mechanical_only", ["no mechanical hit; judges not run (no judge)"]
    if judges_completed:
        return "pass", ["no mechanical hit; both judges completed without a problem"]
    return "inconclusive", ["no mechanical hit, but not both judges completed"]
