"""Fuzz targets: each runs one public entry point on one input and raises only :class:`UnusableInput` (the
documented unusable-input error) or nothing. Anything else escaping a target is a finding; so is a broken
invariant (:class:`Violation`): an unusable-input reason spanning several lines, a principle that crashed on
loadable input (the engine turns that into an ERROR item, fail-closed, but it is still a bug), a report that is
not strict JSON.

Targets:
- ``safeio``: ``decode_text`` + ``parse_text`` (both modes) and ``parse_bytes`` (zip members read and decoded);
- ``trajectory``: the format dispatcher ``loaders.sniff.load_trajectory`` on the parsed bytes, as a job load
  does (``log_lines`` for a ``claude-code.txt`` capture too);
- ``multi``: the bytes as a loose file (``output.jsonl``, ``*.eval``, ``*.json``, ``*.traj``, a hooklib
  ``*.jsonl``): ``loaders.multi.file_jobs`` (claims, cheap member scans, listings), then every record audited;
- ``job``: a BenchFlow / Harbor job directory with the bytes in one of its files (trajectory, ``result.json``,
  ``verifier/ctrf.json``, ``reward.txt``, ``prompts.json``, ``agent/claude-code.txt``, ...), audited with every
  principle by ``engine.audit_job`` (precise or ``--trajaudit-literal`` mode, by the input's length), then its
  audit JSON and ``summary.json`` built and serialised strictly.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_trajaudit.discover.jobs import classify
from pytest_trajaudit.loaders import multi
from pytest_trajaudit.loaders.sniff import load_trajectory
from pytest_trajaudit.model import UnusableInput
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import JobAudit, audit_job
from pytest_trajaudit.safeio import decode_text, parse_bytes, parse_text
from pytest_trajaudit.settings import Settings

MAX_FILE = 64 * 1024 * 1024
MAX_RECORDS = 4  # records of one multi-record file audited per input


class Violation(Exception):
    """A broken invariant (not an exception a loader raised)."""


def _check_reason(exc: UnusableInput) -> None:
    if "\n" in exc.reason or "\r" in exc.reason:
        raise Violation(f"unusable-input reason spans several lines: {exc.reason[:200]!r}")


class _Unusable:
    """Marks a path that ended in the documented unusable-input error."""


UNUSABLE = _Unusable()


def _guard(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; an UnusableInput is the documented outcome (its reason must be one line): UNUSABLE."""
    try:
        return fn()
    except UnusableInput as exc:
        _check_reason(exc)
        return UNUSABLE


def _outcome(*results: Any) -> str:
    return "unusable" if any(r is UNUSABLE for r in results) else "ok"


def t_safeio(data: bytes, name: str, work: Path) -> str:
    def text_paths() -> Any:
        text = decode_text(data, name)
        return [_guard(lambda ll=log_lines: parse_text(text, name, log_lines=ll)) for log_lines in (False, True)][0]

    first = _guard(text_paths)

    def zip_path() -> None:
        parsed = parse_bytes(data, name, MAX_FILE)
        if parsed.kind == "zip":
            z = parsed.value
            for m in z.names()[:8]:
                _guard(lambda m=m: z.read_json(m))

    _guard(zip_path)
    return _outcome(first)


def t_trajectory(data: bytes, name: str, work: Path) -> str:
    def run(log_lines: bool) -> None:
        if log_lines:
            parsed = parse_text(decode_text(data, name), name, log_lines=True)
        else:
            parsed = parse_bytes(data, name, MAX_FILE)
        traj = load_trajectory(parsed, name)
        for e in traj.events:  # the model's fields are what principles read: they must be strings
            if not all(isinstance(x, str) for x in (e.type, e.kind, e.tool, e.title, e.command, e.args, e.output,
                                                        e.status, e.text, e.raw)):
                raise Violation(f"event {e.index} has a non-string field")
            if not all(isinstance(p, str) for p in e.paths):
                raise Violation(f"event {e.index} has a non-string path")

    first = _guard(lambda: run(False))
    _guard(lambda: run(True))
    return _outcome(first)


LOOSE_NAMES = ("output.jsonl", "log.eval", "log.json", "traces.json", "run.traj", "audit.jsonl", "events.json",
               "run.md", "session.txt")


def t_multi(data: bytes, name: str, work: Path) -> str:
    d = _fresh(work / "multi")
    fname = name if name in LOOSE_NAMES else LOOSE_NAMES[len(data) % len(LOOSE_NAMES)]
    path = d / fname
    path.write_bytes(data)
    cfg = Settings(max_file_bytes=MAX_FILE, max_job_bytes=MAX_FILE * 2)
    refs = multi.file_jobs(path, MAX_FILE, given=True)
    audits = [(multi_id(r), audit_job(r, cfg, list(registry().values()))) for r in refs[:MAX_RECORDS]]
    return _check_audits(audits)


def multi_id(ref: Any) -> str:
    return f"m/{ref.anchor.name}" + (f"::{multi.node_name(ref.member)}" if ref.member is not None else "")


# slot -> the job layout it lives in
JOB_SLOTS = (
    "trajectory/acp_trajectory.jsonl", "result.json", "verifier/ctrf.json", "verifier/reward.txt", "prompts.json",
    "verifier/output.json", "agent/claude-code.txt", "agent/trajectory.json", "verifier/test-stdout.txt",
)
_ACP = b'{"type":"user_message","text":"do x"}\n{"type":"agent_message","text":"done"}\n'
_RESULT = b'{"task_name":"t","rollout_name":"t__1","rewards":{"reward":0.0},"n_tool_calls":0}'


def t_job(data: bytes, name: str, work: Path) -> str:
    slot = JOB_SLOTS[sum(data[:64]) % len(JOB_SLOTS)] if data else JOB_SLOTS[0]
    if name in JOB_SLOTS:
        slot = name
    job = _fresh(work / "job" / "t__1")
    files = {"result.json": _RESULT, "verifier/reward.txt": b"0\n"}
    if slot.startswith("agent/"):
        (job / "verifier").mkdir(parents=True, exist_ok=True)
    else:
        files["trajectory/acp_trajectory.jsonl"] = _ACP
    files[slot] = data
    for rel, content in files.items():
        p = job / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
    ref = classify(job)
    if ref is None:
        raise Violation("the fuzzed job directory is not recognised as a job")
    # precise mode streams JSON Lines trajectories; literal mode reads them whole and runs the seeds' regexes
    cfg = Settings(max_file_bytes=MAX_FILE, max_job_bytes=MAX_FILE * 2, literal=bool(len(data) & 1))
    return _check_audits([("job/t__1", audit_job(ref, cfg, list(registry().values())))])


def _check_audits(audits: list[tuple[str, JobAudit]]) -> str:
    """Invariants of audited jobs and their reports; "unusable" when some job's input was unusable."""
    from pytest_trajaudit.report.audit import build_audit
    from pytest_trajaudit.report.summary import Rollup

    reg = registry()
    keys = {c: p.key for c, p in reg.items()}
    rollup = Rollup()
    for job_id, audit in audits:
        if audit.error is not None and ("\n" in audit.error or "\r" in audit.error):
            raise Violation(f"unusable-input error spans several lines: {audit.error[:200]!r}")
        for res in audit.results.values():
            # a principle's own unusable input (e.g. ADV-* privileged material) is that item's documented error;
            # an exception inside a principle is a crash
            if res.internal_error and (res.internal_error.startswith("internal error")
                                       or "\n" in res.internal_error or "\r" in res.internal_error):
                raise Violation(res.internal_error[:300])
        if audit.error:
            rollup.add({"job": job_id, "code": "P1", "status": "ERROR", "error": audit.error, "meta": audit.meta})
            continue
        for code, res in audit.results.items():
            p = reg[code]
            rollup.add({"job": job_id, "code": code, "tier": p.tier, "family": p.family, "affects": p.affects_verdict,
                        "key": p.key, "loads": 1, "status": res.status, "evidence": res.evidence, "data": res.data,
                        "events": res.events[:50], "meta": audit.meta})
    summary = rollup.summary()
    _strict_json(summary, "summary.json")
    for job_id, (verdict, reasons) in rollup.verdicts().items():
        j = rollup.jobs[job_id]
        _strict_json(build_audit(job_id, j["meta"], j["records"], verdict, reasons, keys, j["error"]), "audit JSON")
    return "unusable" if not audits or any(a.error for _, a in audits) else "ok"


def _strict_json(value: Any, what: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise Violation(f"{what} is not strict JSON: {exc}") from None


def _fresh(d: Path) -> Path:
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


TARGETS: dict[str, Callable[[bytes, str, Path], str]] = {
    "safeio": t_safeio,
    "trajectory": t_trajectory,
    "multi": t_multi,
    "job": t_job,
}
