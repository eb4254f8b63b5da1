"""Advisor family: ADV-1..ADV-5, the advisor-leakage audit (the seed's advisor-audit.md), as pytest items.

Every check is computed by :mod:`pytest_trajaudit.advisor.core`, the same core as ``trajaudit audit``: the
mechanical checks (ADV-3 patterns, ADV-4 verbatim privileged lines) run once per job and are shared by its five
items; with judges configured (``--trajaudit-judge``), ADV-1/ADV-2 ask the coherence judge and ADV-3/ADV-4 the
leakage judge (one request each per job: identical requests in flight share one call). Each item's data carries
the job's advisor state and its judge's outcome, from which the report rebuilds the advisor verdict with the same
:func:`~pytest_trajaudit.advisor.core.assemble`.

These items exist only for jobs whose privileged material is known (see :mod:`pytest_trajaudit.advisor.collect`).
They never change the job's CLEAN/WARN/INVALID verdict: the advisor audit has its own verdict (pass,
pass_mechanical_only, inconclusive, fail).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import orjson

from ..advisor import judging
from ..advisor.core import (
    Prepared,
    coherence_check,
    direction_check,
    judge_requests,
    mention_check,
    overlap_check,
    prepare,
    task_side,
    verification_check,
)
from ..advisor.layout import resolve_layout
from ..judges import Answer
from ..model import Finding, Job, Trajectory
from ..safeio import Budget, decode_text, read_bytes
from ..settings import Settings
from . import Pending, principle

Decide = Callable[[dict[str, Any], "dict[str, Any] | None", "dict[str, Any] | None"], tuple[str, str]]

# each check of the advisor audit, by its code: the judge it asks (None: none) and the core function that decides
# it from the job's advisor state and that judge's outcome. advisor/core.py's assemble keys its checks by these codes
# (the standalone `trajaudit audit` report and the pytest items alike).
CHECKS: dict[str, tuple[str | None, Decide]] = {
    "ADV-1": ("coherence", coherence_check),
    "ADV-2": ("coherence", direction_check),
    "ADV-3": ("leakage", mention_check),
    "ADV-4": ("leakage", overlap_check),
    "ADV-5": (None, verification_check),
}


def check(code: str, state: dict[str, Any], coherence: dict[str, Any] | None = None,
          leakage: dict[str, Any] | None = None) -> tuple[str, str]:
    """One check's (status, evidence): PASS / FAIL / WARN (inconclusive, or a failed verification) / N/A."""
    return CHECKS[code][1](state, coherence, leakage)


def _render(traj: Trajectory) -> str:
    """A trajectory without its file text (a record of a multi-record file): its events as JSON Lines."""
    keys = ("type", "kind", "tool", "title", "command", "paths", "args", "output", "text")
    return "\n".join(orjson.dumps({k: getattr(e, k) for k in keys if getattr(e, k)}).decode()
                     for e in traj.events)


def _text(job: Job, traj: Trajectory, cfg: Settings) -> str:
    """The trajectory file's text: as loaded; re-read (strictly, no symlink, within the per-file limit) when the
    loader streamed it line by line and kept none; the events rendered as JSON Lines for a record of a
    multi-record file without its own text."""
    if traj.raw_text:
        return traj.raw_text
    if job.layout != "record" and traj.source:
        path = Path(traj.source)
        limit = cfg.max_file_bytes
        return decode_text(read_bytes(path.parent, path.name, Budget(limit, limit)), path)
    return _render(traj)


def prepared(job: Job, cfg: Settings) -> Prepared:
    """The job's advisor state (once per job; an unusable layout or unreadable material raises every time)."""
    hit = job.cache.get("advisor")
    if isinstance(hit, Exception):
        raise hit
    if hit is not None:
        return cast(Prepared, hit)
    try:
        # the layout comes from the flag or the task's own manifest, never from the job (the run wrote it)
        task_dir = job.task_info.dir if job.task_info is not None else None
        layout = resolve_layout(task_dir, list(cfg.privileged_roots) or None)
        side = task_side(job.task_info.dir if job.task_info is not None else None, layout)
        traj = job.trajectory
        assert traj is not None
        prep = prepare(_text(job, traj, cfg), side, judged=cfg.judge is not None, reward=job.reward,
                       reward_source=job.verifier.reward_source, where=traj.source, trajectory_kind=traj.format,
                       events=len(traj.events))
    except Exception as exc:
        job.cache["advisor"] = exc
        raise
    job.cache["advisor"] = prep
    return prep


def _finding(code: str, state: dict[str, Any], outcome: dict[str, Any] | None) -> Finding:
    judge = CHECKS[code][0]
    coh = outcome if judge == "coherence" else None
    leak = outcome if judge == "leakage" else None
    status, evidence = check(code, state, coh, leak)
    return Finding(status, evidence, {"advisor": state, "judge": outcome})  # type: ignore[arg-type]


def _judged(code: str, job: Job, cfg: Settings) -> Finding | Pending:
    prep = prepared(job, cfg)
    state = prep.state
    kind = CHECKS[code][0]
    assert kind is not None
    if cfg.judge is None or not cfg.judge.models:
        return _finding(code, state, None)
    model = cfg.judge.models[0]
    req = judge_requests(prep)[kind]
    interim = _finding(code, state, judging.outcome(kind, None, status="not_run"))

    def finish(answers: list[Answer]) -> Finding:
        if not answers:
            return _finding(code, state, judging.outcome(kind, None, status="failed", error="no answer"))
        return _finding(code, state, judging.outcome(kind, answers[0]))

    # the mechanical FAIL stands while the judge is out; anything else waits (N/A "awaiting judge answers")
    return Pending([(model, req)], finish, interim if interim.status == "FAIL" else None)


@principle("ADV-1", "advisor: coherence", tier="C2", family="advisor", key="advisor", role="info",
           judge=True)
def coherence(job: Job, cfg: Settings) -> Finding | Pending:
    """The coherence judge reads the public task and the trajectory (never privileged material): does it read like
    one solver working the problem? FAIL: not coherent; PASS: coherent; WARN: inconclusive (the judge failed or gave
    an answer outside its schema); N/A: no judge configured."""
    return _judged("ADV-1", job, cfg)


@principle("ADV-2", "advisor: unsupported direction changes", tier="C2", family="advisor", key="advisor",
           role="info", judge=True)
def direction_changes(job: Job, cfg: Settings) -> Finding | Pending:
    """The coherence judge lists every change of direction with no support in the public task or in terminal output
    the solver had already seen. FAIL: any; PASS: none; WARN: inconclusive (judge failed); N/A: no judge."""
    return _judged("ADV-2", job, cfg)


@principle("ADV-3", "advisor: mentions of an advisor", tier="C0", family="advisor", key="advisor",
           role="info", judge=True)
def mentions(job: Job, cfg: Settings) -> Finding | Pending:
    """References to an advisor, a reviewer, hidden tests, a reference or gold solution, or a privileged artifact:
    the mechanical patterns (README "Advisor audit") over the trajectory and every decoded string in it, plus the
    leakage judge's ``mentions_advisor`` when judges are configured. FAIL: a pattern hit or the judge's flag; PASS:
    none (mechanical only without a judge); WARN: inconclusive (judge failed)."""
    return _judged("ADV-3", job, cfg)


@principle("ADV-4", "advisor: privileged overlap", tier="C0", family="advisor", key="advisor",
           role="info", judge=True)
def privileged_overlap(job: Job, cfg: Settings) -> Finding | Pending:
    """Verbatim privileged lines (≥ 40 characters, whitespace collapsed) in the trajectory or any string decoded
    from it (JSON inside strings up to three layers), plus the leakage judge's near-verbatim view. FAIL: a line
    matched, the judge's suspicious_privileged_overlap, or leaked_items with neither flag; WARN: inconclusive (no
    privileged material was loaded from the task directory, or the judge failed); PASS: none."""
    return _judged("ADV-4", job, cfg)


@principle("ADV-5", "advisor: verification", tier="C0", family="advisor", key="advisor", role="info")
def verification(job: Job, cfg: Settings) -> Finding:
    """The verifier's own verdict (result.json or verifier/reward.txt), read, never judged. PASS: reward ≥ 1.0;
    WARN: the verifier did not pass (information: never changes the advisor verdict); N/A: no reward."""
    return _finding("ADV-5", prepared(job, cfg).state, None)
