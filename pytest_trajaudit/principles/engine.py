"""Audit one job with a set of principles: the core shared by the pytest items and the ``trajaudit`` CLI.

The parsed :class:`Job` lives only inside :func:`audit_job`; what comes out is plain JSON-able data, so a
failed item's traceback can never pin a parsed trajectory in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .. import timebudget
from ..discover.jobs import JobRef
from ..gcpause import paused_gc
from ..judges import Answer
from ..loaders.job import load_job
from ..model import Finding, Job, UnusableInput
from ..records import JobMeta
from ..report.timeline import timeline
from ..scan.redact import clean, redact_tree
from ..settings import Settings
from ..timebudget import AuditTimeout, budget
from . import Pending, Principle
from ._shell import forget


@dataclass(slots=True)
class Result:
    status: str
    evidence: str
    data: dict[str, Any] = field(default_factory=dict)
    events: list[int] = field(default_factory=list)
    internal_error: str | None = None
    judge: dict[str, Any] | None = None  # judge usage of this result (judges.stats.item_stats), JSON builtins


@dataclass(slots=True)
class Deferred:
    """A judge principle's submitted requests: their futures, the pure ``finish`` and the models asked. Holds no
    prompt and no trajectory (the pool drops a request once it is answered)."""

    futures: list[Future[Answer]]
    finish: Callable[[list[Answer]], Finding]
    models: list[str]


@dataclass(slots=True)
class JobAudit:
    meta: JobMeta
    results: dict[str, Result]
    error: str | None = None  # unusable input: one line naming the file and the reason
    pending: dict[str, Deferred] = field(default_factory=dict)  # judge principles awaiting answers
    partial: bool = False  # released: only the pending judge principles are left (see trim)

    def resolve(self, code: str) -> Result | None:
        """The result of ``code``. A judge principle's answers are awaited here (blocking), then ``finish`` turns
        them into the result. A ``finish`` that raises errors the item (never a pass). A trimmed audit hands each
        kept result out once (then drops it)."""
        d = self.pending.pop(code, None)
        if d is None:
            return self.results.pop(code, None) if self.partial else self.results.get(code)
        from ..judges.stats import item_stats

        answers = [_answer(f, m) for f, m in zip(d.futures, d.models, strict=True)]
        stats = item_stats(answers)
        try:
            f = d.finish(answers)
            if not isinstance(f, Finding):
                raise TypeError(f"finish returned {type(f).__name__}, not a Finding")
            res = Result(f.status, clean(f.evidence), redact_tree(f.data), f.events, judge=stats)
        except Exception as exc:
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
            res = Result("ERROR", "", internal_error=clean(f"internal error in {code} (judge answers): {msg}"),
                         judge=stats)
        if not self.partial:
            self.results[code] = res
        return res

    def trim(self, keep: set[str]) -> JobAudit | None:
        """What must outlive the job's release until its late (judge) items ``keep`` have run: the meta, the
        pending judge principles and the results of ``keep`` (small; never the trajectory), or the unusable-input
        error; None when nothing is left to hand out."""
        if self.error is not None:
            return JobAudit(self.meta, {}, self.error, partial=True) if keep else None
        kept = {c: r for c, r in self.results.items() if c in keep and c not in self.pending}
        if not self.pending and not kept:
            return None
        return JobAudit(self.meta, kept, None, self.pending, partial=True)


def job_meta(job: Job) -> JobMeta:
    t = job.trajectory
    return {
        "config": job.config, "model": job.model or None, "reward": job.reward, "task": job.task,
        "trial": job.trial, "agent": job.agent, "layout": job.layout, "condition": job.condition,
        "oracle": job.is_oracle, "trajectory_file": str(t.source) if t else None,
        "trajectory_format": t.format if t else None, "n_events": len(t.events) if t else 0,
        "trajectory_candidates": job.trajectory_candidates, "exception": job.exception,
        "compared": job.compared, "disagreements": job.disagreements, "not_audited": job.not_audited,
        "nested_runs": job.nested_runs, "oracle_tool_calls": job.oracle_tool_calls,
        "reward_sources": {k: v for k, v in job.verifier.rewards.items()},
        "verifier_tests": job.verifier.ctrf_summary,
        "failed_tests": [f["name"] for f in job.verifier.ctrf_failures[:10]],
        "passed_tests": job.verifier.passed_tests[:30],
        # result.json's optional figures: loaders/job.py keeps each only when it is a number
        **cast(JobMeta, {k: job.result[k] for k in ("agent_time_sec", "n_input_tokens", "n_output_tokens", "cost_usd")
                         if k in job.result}),
        **_task_meta(job),
    }


def _task_meta(job: Job) -> JobMeta:
    t = job.task_info
    if t is None:
        return {"task_dir": None, "task_lookup": job.task_lookup or None}
    md = m if isinstance(m := t.toml.get("metadata"), dict) else {}
    first_para = next((p.strip() for p in t.instruction.split("\n\n") if p.strip() and not p.startswith("#")), "")
    return {"task_dir": str(t.dir), "task_lookup": job.task_lookup,
            "task_meta": {"name": t.name, "category": str(md.get("category") or ""),
                          "difficulty": str(md.get("difficulty") or ""),
                          "tags": [str(x) for x in md.get("tags", []) if isinstance(x, str | int)][:20]
                          if isinstance(md.get("tags"), list) else [],
                          "description": first_para[:800]}}


def _short_error(ref: JobRef, exc: UnusableInput) -> str:
    """'<file relative to the job dir>: <reason>' (the job id is added by whoever prints it); a spent time budget
    concerns the whole job: its reason alone."""
    if isinstance(exc, AuditTimeout):
        return exc.reason
    try:
        rel = Path(exc.path).relative_to(ref.dir).as_posix()
    except ValueError:
        rel = exc.path
    return f"{rel or '.'}: {exc.reason}"



def _error_meta(ref: JobRef, cfg: Settings, exc: UnusableInput) -> JobMeta:
    """Meta of a job whose trajectory is unusable: what result.json says (task, agent, condition, reward), so
    summary.json's skill impact still counts a trial that kept only its result.json; its other trajectory files
    are listed as not audited (the unusable file itself is named by the job's error)."""
    try:
        meta = job_meta(load_job(ref, cfg, with_trajectory=False))
    except UnusableInput:
        return {"layout": ref.layout, "trial": ref.dir.name}
    try:
        failed = Path(exc.path).relative_to(ref.dir).as_posix()
    except ValueError:
        failed = ""
    meta["not_audited"] = [e for e in meta.get("not_audited") or () if e.get("path") != failed]
    return meta

def audit_job(ref: JobRef, cfg: Settings, principles: list[Principle], *, judges: bool = True) -> JobAudit:
    """Run ``principles`` on the job. A judge principle that returns a :class:`Pending` has its requests submitted
    at once (non-blocking); its interim finding (the mechanical one, default N/A "awaiting judge answers") stands
    in ``results`` until :meth:`JobAudit.resolve`. ``judges=False`` (e.g. a group item recomputing a record)
    submits nothing and keeps the interim finding."""
    # a job's parsed records and events: young, acyclic, alive until it is done (gcpause.py); the whole audit,
    # loading included, within its time budget (timebudget.py)
    with paused_gc():
        try:
            with budget(cfg.audit_budget, ref.dir):
                job = load_job(ref, cfg)
                timebudget.check()
                try:
                    return _audit_loaded(job, ref, cfg, principles, judges)
                finally:
                    forget()
        except UnusableInput as exc:  # unreadable input, or the budget spent: the job errors, never passes
            return JobAudit(redact_tree(_error_meta(ref, cfg, exc)), {}, error=clean(_short_error(ref, exc)))


def _audit_loaded(job: Job, ref: JobRef, cfg: Settings, principles: list[Principle], judges: bool) -> JobAudit:
    meta = redact_tree(job_meta(job))
    results: dict[str, Result] = {}
    pending: dict[str, Deferred] = {}
    for p in principles:
        timebudget.check()  # between principles: a spent budget ends the job's audit here (AuditTimeout)
        if job.is_oracle:
            results[p.code] = Result("N/A", "oracle run: not audited (it counts only through its reward)")
            continue
        try:
            f = p.func(job, cfg)
            if isinstance(f, Pending):
                if not (p.judge and cfg.judge is not None):
                    raise TypeError("returned a Pending but is not a judge principle or no judge is configured")
                interim = f.interim or Finding.na("awaiting judge answers")
                if judges:
                    pending[p.code] = _submit(f, cfg)
                f = interim
            if not isinstance(f, Finding):
                raise TypeError(f"returned {type(f).__name__}, not a Finding")
        except AuditTimeout:
            raise  # the whole job, not this principle
        except UnusableInput as exc:  # input only this principle reads (e.g. ADV's privileged material)
            results[p.code] = Result("ERROR", "", internal_error=clean(_short_error(ref, exc)))
            continue
        except Exception as exc:  # a bug in a principle must error that item, never pass it
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
            results[p.code] = Result("ERROR", "", internal_error=clean(f"internal error in {p.code}: {msg}"))
            continue
        # the one place every finding passes: what it quotes (evidence, data) is redacted before any report,
        # terminal line, JUnit/CTRF file or xdist transfer sees it
        results[p.code] = Result(f.status, clean(f.evidence), redact_tree(f.data), f.events)
    if cfg.timeline and job.trajectory is not None:  # the HTML report's window on the events the findings cite
        meta["timeline"] = timeline(job.trajectory.events, {i for r in results.values() for i in r.events})
    return JobAudit(meta, results, pending=pending)


def _answer(f: Future[Answer], model: str) -> Answer:
    try:
        return f.result()
    except Exception as exc:  # cancelled at shutdown: a failed answer, never a pass
        return Answer(model, False, None, f"no answer: {type(exc).__name__}")


def _submit(p: Pending, cfg: Settings) -> Deferred:
    from ..judges import submit

    assert cfg.judge is not None
    return Deferred([submit(m, r, cfg.judge) for m, r in p.requests], p.finish, [m for m, _ in p.requests])
