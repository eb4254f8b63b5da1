"""Cross-trial checks: task groups, the compact per-job records they read, and their evaluation (pass^k, skill
impact).

A *task group* is the set of jobs under one audit root whose folder names share a task prefix
(``<task>__<trial>``); it is planned at collection from names alone (stat-only). Its items (one per declared
``GroupCheck``) run after every job item and read one compact record per member job: reward, verdict inputs (the
integrity principles), task/agent/model/condition and the skill-invocation status. Jobs publish that record when
their audit is computed — into memory, or under xdist into a private directory shared by the workers — so a group
item normally parses nothing. A record that is missing (the job ran later on another worker, or its items were
deselected) or lacks the integrity principles is computed by the group item itself (one more parse of that job):
correctness never depends on scheduling. Pure: no pytest.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..discover.jobs import JobRef
from ..principles import Principle, code_for, family_codes, integrity_codes
from ..principles.engine import JobAudit
from ..records import GroupRecord
from .verdicts import Outcome, job_verdict, pass_k_entries, skill_impact, skill_quote_fields, trial_coverage


def group_key(ref: JobRef) -> str | None:
    """The task prefix of a job folder named ``<task>__<trial>``; None for anything else."""
    if ref.layout == "bare-file" or getattr(ref, "member", None):
        return None
    name = ref.dir.name
    if "__" not in name:
        return None
    key = name.rsplit("__", 1)[0]
    return key or None


def plan(refs: Iterable[JobRef]) -> dict[str, list[JobRef]]:
    """Task groups with at least two jobs (a single trial has no repeatability to measure), sorted by key."""
    groups: dict[str, list[JobRef]] = {}
    for r in refs:
        k = group_key(r)
        if k is not None:
            groups.setdefault(k, []).append(r)
    return {k: sorted(v, key=lambda r: str(r.dir)) for k, v in sorted(groups.items()) if len(v) >= 2}


def needed(principles: dict[str, Principle]) -> tuple[str, ...]:
    """What a complete record was computed from: the integrity principles (delivery) and the skill-invocation
    principle (the skill-impact group's input)."""
    return (*integrity_codes(principles), code_for("skill_invocation"))


def compact(job_id: str, audit: JobAudit, principles: dict[str, Principle]) -> GroupRecord:
    """The record a group reads. ``principles``: the session's registry (code → declaration).

    ``verdict`` is the *integrity* verdict: :func:`job_verdict` over the integrity principles only (INVALID /
    ERROR / ORACLE decide delivery; an agentic-floor WARN does not), so a record is the same whether it came from
    the job's full audit or from a group item's recomputation."""
    m = audit.meta
    results = audit.results
    integrity = integrity_codes(principles)
    need = set(needed(principles))
    outcomes = {c: Outcome(r.status, principles[c].tier, principles[c].role, r.evidence,
                           bool((r.data or {}).get("flipped_signal")), principles[c].na_warns)
                for c, r in results.items() if c in integrity and r.status in ("PASS", "WARN", "FAIL", "N/A")}
    verdict, _ = job_verdict(outcomes, error=audit.error, oracle=bool(m.get("oracle")))
    sb1 = results.get(code_for("skill_invocation"))
    sb1_status = (sb1.data or {}).get("status") if sb1 is not None else None
    trace = family_codes("rules")
    delivered = next((r.data.get("delivered") for c, r in sorted(results.items())
                      if c in trace and isinstance(r.data, dict) and isinstance(r.data.get("delivered"), bool)),
                     None)
    return {
        "job": job_id, "task": m.get("task") or "", "trial": m.get("trial") or "", "agent": m.get("agent") or "",
        "model": m.get("model") or "", "condition": m.get("condition"), "reward": m.get("reward"),
        "oracle": bool(m.get("oracle")), "error": audit.error, "verdict": verdict, "delivered": delivered,
        "integrity": {c: results[c].status for c in integrity if c in results},
        "computed": sorted(c for c in results if c in need),
        "sb1": sb1_status if sb1_status in ("VERIFIED", "PARTIAL", "NOT_INVOKED") else None,
        **skill_quote_fields((sb1.data or {}) if sb1 is not None else {}),
    }


def complete(rec: GroupRecord | None, codes: Iterable[str] | None = None) -> bool:
    """Whether a record holds everything a group reads (an unusable job's record is complete: it is ERROR).
    ``codes``: what it must have been computed from; by default the built-in registry's :func:`needed`."""
    if rec is None:
        return False
    if codes is None:
        codes = _builtin_needed()
    return bool(rec.get("error")) or bool(rec.get("oracle")) or all(c in rec.get("computed", ()) for c in codes)


@functools.cache
def _builtin_needed() -> tuple[str, ...]:
    from ..principles import registry

    return needed(registry())


class MemoryStore:
    def __init__(self) -> None:
        self._d: dict[str, GroupRecord] = {}
        self.codes: tuple[str, ...] | None = None  # what a complete record holds: the session's needed()

    def complete(self, rec: GroupRecord | None) -> bool:
        return complete(rec, self.codes)

    def put(self, rec: GroupRecord) -> None:
        old = self._d.get(rec["job"])
        if old is None or self.complete(rec) or not self.complete(old):
            self._d[rec["job"]] = rec

    def get(self, job_id: str) -> GroupRecord | None:
        return self._d.get(job_id)


class DirStore(MemoryStore):
    """Records shared by xdist workers, in a private directory the controller creates (mode 0700): each process
    appends the records it publishes, one JSON line each, to a log of its own (``<pid>.jsonl``: one ``write`` per
    record, where a file per record would cost a create and a rename), and reads the other processes' logs from where it
    last stopped. A line counts once its newline is there, so a reader never takes a record whose write is under
    way; a line that is not one of this store's records is skipped (the group item then recomputes the job)."""

    SUFFIX = ".jsonl"
    MAX_READ = 8 << 20  # bytes read from one log per call: a refresh goes through a long log in steps

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.own = f"{name or os.getpid()}{self.SUFFIX}"
        self._fd: int | None = None  # this process's log, opened on the first record
        self._read: dict[str, int] = {}  # another process's log → the bytes of it already taken

    def put(self, rec: GroupRecord) -> None:
        super().put(rec)
        if self._d.get(rec["job"]) is not rec:
            return  # a less complete record than the one published: nothing new to say
        data = (json.dumps(rec) + "\n").encode("utf-8", "surrogatepass")
        try:
            if self._fd is None:
                self._fd = os.open(self.path / self.own,
                                   os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError:
            pass  # the group item recomputes what it cannot read

    def get(self, job_id: str) -> GroupRecord | None:
        rec = super().get(job_id)
        if self.complete(rec):
            return rec
        self._refresh()
        return super().get(job_id)

    def _refresh(self) -> None:
        """Take the lines the other processes' logs gained since the last call."""
        try:
            names = [n for n in os.listdir(self.path) if n.endswith(self.SUFFIX) and n != self.own]
        except OSError:
            return
        for name in names:
            try:
                fd = os.open(self.path / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                at = self._read.get(name, 0)
                while True:
                    chunk = os.pread(fd, self.MAX_READ, at)
                    end = chunk.rfind(b"\n") + 1
                    if not end:  # nothing new, or a line still being written (or longer than a read)
                        break
                    for line in chunk[:end].splitlines():
                        self._take(line)
                    at += end
                    if len(chunk) < self.MAX_READ:
                        break
                self._read[name] = at
            except OSError:
                pass
            finally:
                os.close(fd)

    def _take(self, line: bytes) -> None:
        try:
            rec = json.loads(line)
        except ValueError:
            return
        if isinstance(rec, dict) and isinstance(rec.get("job"), str):
            super().put(cast(GroupRecord, rec))


@dataclass(slots=True)
class GroupResult:
    status: str  # PASS | WARN | FAIL | N/A | ERROR
    evidence: str
    data: dict[str, Any]


def gather(members: list[tuple[str, JobRef]], store: MemoryStore,
           compute: Callable[[str, JobRef], GroupRecord]) -> tuple[list[GroupRecord], int]:
    """Member records from the store, computing (and publishing) what is missing. Returns (records, recomputed)."""
    out, recomputed = [], 0
    for job_id, ref in members:
        rec = store.get(job_id)
        if rec is None or not store.complete(rec):
            rec = compute(job_id, ref)
            store.put(rec)
            recomputed += 1
        out.append(rec)
    return out, recomputed


def evaluate_passk(records: list[GroupRecord], *, strict: bool = False, trials: int | None = None) -> GroupResult:
    """pass^k per (task, agent, model, condition) of the group; integrity-adjusted (INVALID/ERROR = not
    delivered). All delivered → PASS; a flaky group → WARN (FAIL with ``strict``); ``trials`` (K) makes missing
    or duplicated trials an error. N/A when no trial records a reward."""
    data: dict[str, Any] = {"pass_k": pass_k_entries(records)}
    if trials:
        errors = trial_coverage(records, trials)
        data["coverage_errors"] = errors
        if errors:
            return GroupResult("ERROR", "; ".join(e["message"] for e in errors[:5]), data)
    entries = [e for e in data["pass_k"] if e["status"] != "N/A"]
    if not entries:
        why = "; ".join(e["reason"] for e in data["pass_k"]) or "no agent trials in the group"
        return GroupResult("N/A", f"pass^k needs trials with a reward: {why}", data)

    def line(e: dict[str, Any]) -> str:
        who = "/".join(x for x in (e["agent"], e["model"], e["condition"] or "") if x)
        return f"{e['task']} [{who}]: pass^{e['k']} = {e['pass_hat_k']:g} ({e['reason']})"

    failed = [e for e in entries if e["status"] == "FAIL"]
    if failed:
        # the seed calls any pass^k below 1 "flaky"; the evidence says which kind it is
        ev = "pass^k not reached: " + "; ".join(
            line(e) + (" [flaky: some trials delivered]" if e["inconsistent"] else " [never delivered]")
            for e in failed[:5])
        return GroupResult("FAIL" if strict else "WARN", ev, data)
    return GroupResult("PASS", "; ".join(line(e) for e in entries[:5]), data)


def evaluate_sb2(records: list[GroupRecord]) -> GroupResult:
    """Skill impact of the group (never blocking): Δ per task × agent × model across conditions. hurt → WARN;
    helped without a quote (no with-skills trial holds one) → WARN with the reason; helped / no-op → PASS; N/A
    without a with-skills and a without-skills arm that both have rewards."""
    impact = skill_impact(records)
    data: dict[str, Any] = {"skill_impact": impact}
    if not impact:
        conds = sorted({str(r.get("condition")) for r in records})
        return GroupResult("N/A", f"no with-skills / without-skills pair with rewards (conditions seen: "
                           f"{', '.join(conds)})", data)

    def line(k: str, v: dict[str, Any]) -> str:
        return f"{k}: Δ {v['delta_pp']:+.1f} pp {v['outcome']} ({v['evidence']})" + (
            f"; {v['caveat']}" if v.get("caveat") else "") + (
            f"; no quote: {v['quote_missing']}" if v.get("quote_missing") else "")

    hurt = {k: v for k, v in impact.items() if v["outcome"] == "hurt"}
    if hurt:
        return GroupResult("WARN", "skills hurt: " + "; ".join(line(k, v) for k, v in list(hurt.items())[:3]), data)
    # the spec requires a quote for every helped / hurt outcome: one without any is reported, with the reason
    unquoted = {k: v for k, v in impact.items() if v.get("quote_missing")}
    if unquoted:
        return GroupResult("WARN", "; ".join(f"{k}: {v['outcome']} but no quote: {v['quote_missing']}"
                                             for k, v in list(unquoted.items())[:3]), data)
    return GroupResult("PASS", "; ".join(line(k, v) for k, v in list(impact.items())[:3]), data)


def evaluate(key: str, records: list[GroupRecord], *, strict: bool = False,
             trials: int | None = None) -> GroupResult:
    """The result of the task-group check that fills the ``summary.json`` section ``key`` (its ``GroupCheck``)."""
    if key == "pass_k":
        return evaluate_passk(records, strict=strict, trials=trials)
    if key == "skill_impact":
        return evaluate_sb2(records)
    raise ValueError(f"no evaluation for the task-group check of {key!r}")
