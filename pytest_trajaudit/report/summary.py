"""Collect item records (from any process) into per-job verdicts, summary.json and terminal lines. Pure."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..aggregate import VERDICTS, Outcome, job_verdict, verdict_counts
from .audit import build_audit, safe_component, write_json_atomic

MAX_TERMINAL_JOBS = 30


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
                "loads": j["loads"],
            })
        return {
            "schema_version": "trajaudit-summary-1",
            "mode": self.mode,
            "n_jobs": len(jobs),
            "verdicts": verdict_counts({j["job"]: j["verdict"] for j in jobs}),
            "principles": {c: dict(sorted(cnt.items())) for c, cnt in sorted(per_principle.items())},
            "jobs": jobs,
        }

    def write(self, out_dir: Path, keys: dict[str, str]) -> dict[str, Any]:
        summary = self.summary()
        verdicts = self.verdicts()
        for job_id, (verdict, reasons) in verdicts.items():
            j = self.jobs[job_id]
            audit = build_audit(job_id, j["meta"], j["records"], verdict, reasons, keys, j["error"])
            rel = Path(*[safe_component(p) for p in Path(job_id).parts if p not in ("..", "/")])
            write_json_atomic(out_dir / "jobs" / rel / f"audit-{safe_component(audit['config'])}.json", audit)
        write_json_atomic(out_dir / "summary.json", summary)
        return summary

    def terminal_lines(self) -> list[str]:
        verdicts = self.verdicts()
        counts = verdict_counts({k: v for k, (v, _) in verdicts.items()})
        head = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v))
        lines = [f"{len(verdicts)} job(s): {head or 'none'}"]
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
