"""Audit one job with a set of principles: the core shared by the pytest items and the ``trajaudit`` CLI.

The parsed :class:`Job` lives only inside :func:`audit_job`; what comes out is plain JSON-able data, so a
failed item's traceback can never pin a parsed trajectory in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .discovery import JobRef
from .loaders.job import load_job
from .model import Finding, Job, UnusableInput
from .principles import Principle
from .settings import Settings


@dataclass(slots=True)
class Result:
    status: str
    evidence: str
    data: dict[str, Any] = field(default_factory=dict)
    events: list[int] = field(default_factory=list)
    internal_error: str | None = None


@dataclass(slots=True)
class JobAudit:
    meta: dict[str, Any]
    results: dict[str, Result]
    error: str | None = None  # unusable input: one line naming the file and the reason


def job_meta(job: Job) -> dict[str, Any]:
    t = job.trajectory
    return {
        "config": job.config, "model": job.model or None, "reward": job.reward, "task": job.task,
        "trial": job.trial, "agent": job.agent, "layout": job.layout, "condition": job.condition,
        "oracle": job.is_oracle, "trajectory_file": str(t.source) if t else None,
        "trajectory_format": t.format if t else None, "n_events": len(t.events) if t else 0,
        "trajectory_candidates": job.trajectory_candidates, "exception": job.exception,
        "reward_sources": {k: v for k, v in job.verifier.rewards.items()},
        "verifier_tests": job.verifier.ctrf_summary,
        "failed_tests": [f["name"] for f in job.verifier.ctrf_failures[:10]],
        **{k: job.result[k] for k in ("agent_time_sec", "n_input_tokens", "n_output_tokens", "cost_usd")
           if k in job.result},
        **_task_meta(job),
    }


def _task_meta(job: Job) -> dict[str, Any]:
    t = job.task_info
    if t is None:
        return {"task_dir": None, "task_lookup": job.task_lookup or None}
    md = t.toml.get("metadata") if isinstance(t.toml.get("metadata"), dict) else {}
    first_para = next((p.strip() for p in t.instruction.split("\n\n") if p.strip() and not p.startswith("#")), "")
    return {"task_dir": str(t.dir), "task_lookup": job.task_lookup,
            "task_meta": {"name": t.name, "category": str(md.get("category") or ""),
                          "difficulty": str(md.get("difficulty") or ""),
                          "tags": [str(x) for x in md.get("tags", []) if isinstance(x, str | int)][:20]
                          if isinstance(md.get("tags"), list) else [],
                          "description": first_para[:800]}}


def _short_error(ref: JobRef, exc: UnusableInput) -> str:
    """'<file relative to the job dir>: <reason>' (the job id is added by whoever prints it)."""
    try:
        rel = Path(exc.path).relative_to(ref.dir).as_posix()
    except ValueError:
        rel = exc.path
    return f"{rel or '.'}: {exc.reason}"



def _error_meta(ref: JobRef, cfg: Settings) -> dict[str, Any]:
    """Meta of a job whose trajectory is unusable: what result.json says (task, agent, condition, reward), so
    summary.json's skill impact still counts a trial that kept only its result.json."""
    try:
        return job_meta(load_job(ref, cfg, with_trajectory=False))
    except UnusableInput:
        return {"layout": ref.layout, "trial": ref.dir.name}

def audit_job(ref: JobRef, cfg: Settings, principles: list[Principle]) -> JobAudit:
    try:
        job = load_job(ref, cfg)
    except UnusableInput as exc:
        return JobAudit(_error_meta(ref, cfg), {}, error=_short_error(ref, exc))
    meta = job_meta(job)
    results: dict[str, Result] = {}
    for p in principles:
        if job.is_oracle:
            results[p.code] = Result("N/A", "oracle run: not audited (it counts only through its reward)")
            continue
        try:
            f: Finding = p.func(job, cfg)
        except Exception as exc:  # a bug in a principle must error that item, never pass it
            results[p.code] = Result("ERROR", "", internal_error=f"internal error in {p.code}: {type(exc).__name__}: {exc}")
            continue
        results[p.code] = Result(f.status, f.evidence, f.data, f.events)
    return JobAudit(meta, results)
