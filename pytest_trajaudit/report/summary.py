"""Collect item records (from any process) into per-job verdicts, summary.json and terminal lines. Pure."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..aggregate import (
    TRACE_VERDICTS,
    VERDICTS,
    Outcome,
    config_rollup,
    job_verdict,
    pass_k_entries,
    pr_verdict,
    skill_impact,
    skills_flags,
    verdict_counts,
)
from .audit import build_audit, safe_component, trace_grader_block, write_json_atomic, write_text_atomic
from .markdown import render as render_markdown

MAX_TERMINAL_JOBS = 30


def _today() -> str:
    """UTC date of the report; ``SOURCE_DATE_EPOCH`` pins it (reproducible reports)."""
    import os
    import time

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = float(epoch) if epoch and epoch.isdigit() else time.time()
    return time.strftime("%Y-%m-%d", time.gmtime(t))


def trace_lines(summary: dict[str, Any]) -> list[str]:
    """Trace-grader run verdicts and pass^k for the terminal (only when a TG item judged some job)."""
    tv = summary.get("trace_verdicts") or {}
    if not sum(tv.values()):
        return []
    line = "trace-grader runs: " + ", ".join(f"{n} {v}" for v, n in tv.items() if n)
    judged = [e for e in summary.get("pass_k") or [] if e["status"] != "N/A"]
    if judged:
        fails = [e for e in judged if e["status"] == "FAIL"]
        line += f" | pass^k: {len(judged) - len(fails)}/{len(judged)} task group(s) PASS"
        if fails:
            line += " (FAIL: " + ", ".join(f"{e['task']} {e['n_success']}/{e['n_trials']}" for e in fails[:5]) + \
                (", ..." if len(fails) > 5 else "") + ")"
    return [line]


class Rollup:
    def __init__(self, mode: str = "precise") -> None:
        self.mode = mode
        self.jobs: dict[str, dict[str, Any]] = {}  # job id → {"meta", "records", "error", "loads"}

    def add(self, rec: dict[str, Any]) -> None:
        """rec: {"job", "code", "status", "evidence", "data", "events", "tier", "family", "affects", "meta",
        "error", "loads"} — JSON builtins only (it crossed from an xdist worker)."""
        j = self.jobs.setdefault(rec["job"], {"meta": {}, "records": {}, "error": None, "loads": 0})
        if rec.get("meta"):
            j["meta"] = rec["meta"]
        if rec.get("error"):
            j["error"] = rec["error"]
            return
        j["loads"] = max(j["loads"], rec.get("loads") or 0)
        if rec.get("status") in ("PASS", "WARN", "FAIL", "N/A"):
            j["records"][rec["code"]] = rec

    def verdicts(self) -> dict[str, tuple[str, list[str]]]:
        out = {}
        for job_id in sorted(self.jobs):
            j = self.jobs[job_id]
            outcomes = {c: Outcome(r["status"], r.get("tier", ""), r.get("affects", True), r.get("evidence", ""),
                                   bool((r.get("data") or {}).get("flipped_signal")))
                        for c, r in j["records"].items()}
            out[job_id] = job_verdict(outcomes, error=j["error"], oracle=bool(j["meta"].get("oracle")))
        return out

    def summary(self) -> dict[str, Any]:
        verdicts = self.verdicts()
        per_principle: dict[str, Counter[str]] = {}
        jobs = []
        for job_id, (verdict, reasons) in verdicts.items():
            j = self.jobs[job_id]
            for c, r in j["records"].items():
                per_principle.setdefault(c, Counter())[r["status"]] += 1
            meta = j["meta"]
            jobs.append({
                "job": job_id, "config": meta.get("config") or "", "task": meta.get("task") or "",
                "trial": meta.get("trial") or "", "verdict": verdict, "reward": meta.get("reward"),
                "reasons": reasons[:10], "statuses": {c: r["status"] for c, r in sorted(j["records"].items())},
                "loads": j["loads"], "agent": meta.get("agent") or "", "model": meta.get("model") or "",
                "condition": meta.get("condition"), "oracle": bool(meta.get("oracle")),
            })
        return {
            "schema_version": "trajaudit-summary-1",
            "mode": self.mode,
            "n_jobs": len(jobs),
            "verdicts": verdict_counts({j["job"]: j["verdict"] for j in jobs}),
            "principles": {c: dict(sorted(cnt.items())) for c, cnt in sorted(per_principle.items())},
            "pr_verdict": self.pr_verdict(jobs),
            "configs": config_rollup(jobs),
            **self.trace_sections(jobs),
            **self.skills_sections(jobs),
            "jobs": jobs,
        }

    def trace_sections(self, jobs: list[dict[str, Any]]) -> dict[str, Any]:
        """Adds each job's trace-grader run verdict (``trace_grader``) to ``jobs``; returns the run-verdict
        counts and one pass^k entry per task group (trials of one task, agent, model and condition)."""
        counts = dict.fromkeys(TRACE_VERDICTS, 0)
        for job in jobs:
            block = trace_grader_block(self.jobs[job["job"]]["meta"], self.jobs[job["job"]]["records"])
            job["trace_grader"] = None if block is None else {
                k: block[k] for k in ("verdict", "delivered", "step_count", "n_flags", "corrupt_success")}
            if block is not None:
                counts[block["verdict"]] += 1
        records = [{**j, "delivered": (j["trace_grader"] or {}).get("delivered")} for j in jobs]
        return {"trace_verdicts": counts, "pass_k": pass_k_entries(records)}

    def skills_sections(self, jobs: list[dict[str, Any]]) -> dict[str, Any]:
        """``skill_impact`` (SB-2: with vs without skills per task, agent and model, keyed by the agent/shim name,
        qualified with @model / task/ only when needed to stay unique) and the non-blocking ``skills_flags``."""
        trials = []
        for j in jobs:
            recs = self.jobs[j["job"]]["records"]
            sb1 = (recs.get("SB-1") or {}).get("data") or {}
            trials.append({**j, "sb1": sb1.get("status") if sb1.get("status") in ("VERIFIED", "PARTIAL", "NOT_INVOKED")
                           else None, "leak": bool(sb1.get("leak")),
                           "top_level_only": ((recs.get("SB-3c") or {}).get("data") or {}).get("top_level_only"),
                           "partial_follow_through": ((recs.get("SB-3a") or {}).get("data") or {}).get(
                               "partial_follow_through")})
        impact = skill_impact(trials)
        return {"skill_impact": impact, "skills_flags": skills_flags(trials, impact)}

    def pr_verdict(self, jobs: list[dict[str, Any]]) -> dict[str, Any]:
        oracle = {j["job"]: j["reward"] for j in jobs if j["oracle"]}
        tight = [j["job"] for j in jobs
                 if ((self.jobs[j["job"]]["records"].get("P12") or {}).get("data") or {}).get("perturbations_passing")]
        verdict, reasons = pr_verdict({j["job"]: j["verdict"] for j in jobs}, oracle_rewards=oracle,
                                      tests_too_tight=tight)
        return {"verdict": verdict, "reasons": reasons, "oracle_rewards": oracle, "tests_too_tight": tight}

    def write(self, out_dir: Path, keys: dict[str, str]) -> dict[str, Any]:
        summary = self.summary()
        verdicts = self.verdicts()
        for job_id, (verdict, reasons) in verdicts.items():
            j = self.jobs[job_id]
            audit = build_audit(job_id, j["meta"], j["records"], verdict, reasons, keys, j["error"])
            rel = Path(*[safe_component(p) for p in Path(job_id).parts if p not in ("..", "/")])
            write_json_atomic(out_dir / "jobs" / rel / f"audit-{safe_component(audit['config'])}.json", audit)
        write_json_atomic(out_dir / "summary.json", summary)
        write_text_atomic(out_dir / "report.md", render_markdown(summary, self.jobs, _today()))
        return summary

    def terminal_lines(self) -> list[str]:
        verdicts = self.verdicts()
        counts = verdict_counts({k: v for k, (v, _) in verdicts.items()})
        head = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v))
        lines = [f"{len(verdicts)} job(s): {head or 'none'}"]
        full = self.summary()
        pv = full["pr_verdict"]
        lines.append(f"PR verdict: {pv['verdict']}" + (f" — {pv['reasons'][0]}" if pv["reasons"] else "")
                     + (f" (+{len(pv['reasons']) - 1})" if len(pv["reasons"]) > 1 else ""))
        lines += trace_lines(full)
        bad = [(k, v, r) for k, (v, r) in verdicts.items() if v not in ("CLEAN", "ORACLE")]
        order = {"INVALID": 0, "ERROR": 1, "WARN": 2}
        bad.sort(key=lambda x: (order.get(x[1], 9), x[0]))
        for job_id, verdict, reasons in bad[:MAX_TERMINAL_JOBS]:
            first = reasons[0] if reasons else ""
            first = first if len(first) <= 160 else first[:159] + "…"
            more = f" (+{len(reasons) - 1})" if len(reasons) > 1 else ""
            lines.append(f"{verdict:<7} {job_id}: {first}{more}")
        if len(bad) > MAX_TERMINAL_JOBS:
            lines.append(f"... and {len(bad) - MAX_TERMINAL_JOBS} more non-CLEAN job(s): see summary.json (--trajaudit-report)")
        return lines
