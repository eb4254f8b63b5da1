"""What report.md takes from the seed's report template (reference/report-template.txt) beyond its section order:
the failure-analysis root-cause categories and the rule that maps a failed job's findings onto them, the
oracle's tests list, the skills-impact trajectory evidence and the token-diagnostic gap. Pure functions of the
per-job records (keyed by audit-JSON key, so no principle code is named here) and summary.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..principles import registry
from ..records import JobMeta, Summary

# the template's "Root cause: capability gap | task issue | skill issue | cheating"
CAPABILITY_GAP, TASK_ISSUE, SKILL_ISSUE, CHEATING = "capability gap", "task issue", "skill issue", "cheating"
ROOT_CAUSES = (CAPABILITY_GAP, TASK_ISSUE, SKILL_ISSUE, CHEATING)
UNDETERMINED = "undetermined"

# P3's buckets (the seed's audit-general.md): the unfair ones blame the task, the others the agent
_TASK_BUCKETS = {"unfair_instruction", "unfair_test", "unfair_env"}
_AGENT_BUCKETS = {"hard", "capability_gap", "ignored_instruction"}
_CHEAT_KEYS = ("anti_cheat_read", "anti_cheat_write", "verifier_gaming")


def by_key(records: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """A job's records grouped by their audit-JSON key (``failure_bucket``, ``skill_misuse``, ...)."""
    keys = {code: p.key for code, p in registry().items()}
    out: dict[str, list[dict[str, Any]]] = {}
    for code, rec in records.items():
        if keys.get(code):
            out.setdefault(keys[code], []).append(rec)
    return out


def _data(recs: dict[str, list[dict[str, Any]]], key: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for rec in recs.get(key, []):
        merged.update(rec.get("data") or {})
    return merged


def _status(recs: dict[str, list[dict[str, Any]]], key: str) -> set[str]:
    return {str(r.get("status")) for r in recs.get(key, [])}


def root_cause(meta: Mapping[str, Any], records: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """(category, basis) of a failed job. Cheating first (an anti-cheat FAIL: the reward is not credible), then a
    task issue (an unfair bucket, a format loss, a flipped verifier signal, a passing perturbation), then a skill
    issue (a with-skills run that did not load or follow its skill), then a capability gap (the agent-side buckets
    or a reasoning loss); else undetermined, with why."""
    recs = by_key(records)
    cheats = [k for k in _CHEAT_KEYS if "FAIL" in _status(recs, k)]
    if cheats:
        return CHEATING, ", ".join(f"{k} FAIL" for k in cheats)
    bucket = _data(recs, "failure_bucket").get("failure_bucket")
    fvr = _data(recs, "format_vs_reasoning").get("format_vs_reasoning")
    va = _data(recs, "verifier_alignment")
    ttt = _data(recs, "tests_too_tight")
    task = ([f"bucket {bucket}"] if bucket in _TASK_BUCKETS else []) + (["format_loss"] if fvr == "format_loss" else [])
    task += ["flipped verifier signal"] if va.get("flipped_signal") else []
    task += ["passing perturbation: " + ", ".join(ttt["perturbations_passing"][:3])] \
        if ttt.get("checked") and ttt.get("perturbations_passing") else []
    if task:
        return TASK_ISSUE, "; ".join(task)
    if meta.get("condition") == "with-skills":
        si, sm = _data(recs, "skill_invocation"), _data(recs, "skill_misuse")
        skill = ([f"skill_invocation {si['status']}"] if si.get("status") in ("NOT_INVOKED", "PARTIAL") else [])
        skill += [k for k in ("partial_follow_through", "top_level_only") if sm.get(k)]
        if skill:
            return SKILL_ISSUE, ", ".join(skill)
    agent = ([f"bucket {bucket}"] if bucket in _AGENT_BUCKETS else []) + (["reasoning_loss"] if fvr == "reasoning_loss" else [])
    if agent:
        return CAPABILITY_GAP, ", ".join(agent)
    return UNDETERMINED, "no finding decides it"


def evidence_quotes(records: dict[str, dict[str, Any]], limit: int = 3) -> list[tuple[str, str]]:
    """(code, evidence) of a job's FAIL then WARN findings, at most ``limit``: the trajectory evidence the
    template asks to quote for a failed test (the evidence names the event and quotes it)."""
    picked = [(c, r) for s in ("FAIL", "WARN") for c, r in records.items() if r.get("status") == s and r.get("evidence")]
    return [(c, str(r["evidence"])) for c, r in picked[:limit]]


def impact_evidence(impact: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """(key, outcome, quote) of each skill-impact entry with a non-zero Δ: the unlock quote of a helped pair,
    the misleading quote of a hurt one, else the one that exists; None when neither was recorded."""
    out = []
    for key, v in sorted(impact.items()):
        if not isinstance(v, dict) or not v.get("delta_pp"):
            continue
        outcome = str(v.get("outcome") or "")
        first, second = ("misled_quote", "unlock_quote") if outcome == "hurt" else ("unlock_quote", "misled_quote")
        out.append((key, outcome, v.get(first) or v.get(second)))
    return out


def token_gap(metas: Mapping[str, JobMeta]) -> list[str]:
    """The agent jobs (not the oracle) whose results record no output-token count: the template's shortcut
    signal (low output tokens on a passing run) cannot be computed for them."""
    return sorted(j for j, m in metas.items() if not m.get("oracle") and m.get("n_output_tokens") is None)


def suggested_improvements(summary: Summary, metas: Mapping[str, JobMeta]) -> list[str]:
    """Never-blocking advice for the Recommendation's "Suggested improvements": the SkillsBench flags, single-
    trial skill deltas that need more trials, a missing oracle run, and jobs the token diagnostic cannot judge."""
    out = [f"{f.get('task')}: {f.get('message')}" for f in summary.get("skills_flags") or [] if isinstance(f, dict)]
    for key, v in sorted((summary.get("skill_impact") or {}).items()):
        if isinstance(v, dict) and v.get("caveat"):
            out.append(f"skill impact {key}: {v['caveat']}")
    if metas and not any(m.get("oracle") for m in metas.values()):
        out.append("include an oracle run: the PR verdict needs the oracle's reward")
    gap = token_gap(metas)
    if gap:
        out.append(f"record token counts for {len(gap)} agent job(s) (the harness reported none): the "
                   "low-output-token shortcut signal is unavailable for them")
    return out
