"""Baseline diff: which findings are new since an earlier run (``--trajaudit-baseline SUMMARY``). Pure: no pytest.

A *finding* is a principle's FAIL or WARN on a job. Its fingerprint is the first 16 hex digits of
``sha256(job id \\0 code \\0 normalized evidence)``, where the evidence is first secret-redacted (as every
report shows it) and then normalized so that re-running the same agent on the same task gives the same print:

- temporary directories (``/tmp/<dir>``, ``/var/tmp/<dir>``, macOS ``/var/folders/../../T/<dir>``, with an
  optional ``/private``) become ``<tmp>``; the rest of the path is kept;
- ISO-8601 timestamps become ``<time>``; UUIDs and runs of 12 or more hex digits with a letter among them
  become ``<hex>``;
- every other run of digits becomes ``N`` (event indexes ``#12``, line numbers, sizes, durations, rewards);
- runs of whitespace become one space.

So a finding keeps its print when only its event index, a count or a temp path changes, and gets a new one when
the job, the principle or the words of its evidence change. Two findings of one job and code are one finding
(a principle gives one result per job).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..scan.redact import redact
from ..userfiles import read_bounded

FINDING_STATUSES = ("FAIL", "WARN")
MAX_BYTES = 2 * 1024 * 1024 * 1024  # a 10,000-job summary.json is ~170 MB; past this it is refused unread

_TMP = re.compile(r"(?:/private)?(?:/var/folders/[^/\s]+/[^/\s]+/T|/var/tmp|/tmp)/[^/\s'\"]+")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b(?=[0-9]*[a-fA-F])[0-9a-fA-F]{12,}\b")  # a letter in it: a digits-only run is a number
_DIGITS = re.compile(r"\d+")


class BaselineError(Exception):
    """A baseline that cannot be used (one line naming the file)."""


def normalize(evidence: str) -> str:
    """The evidence as the fingerprint sees it (module docstring). Each pattern runs only when a substring it
    needs is present: a report of many findings normalizes each one."""
    text = redact(evidence or "")
    if "/tmp/" in text or "/var/" in text:
        text = _TMP.sub("<tmp>", text)
    if ":" in text and "-" in text:
        text = _TIME.sub("<time>", text)
    if text.count("-") >= 4:
        text = _UUID.sub("<hex>", text)
    text = _HEX.sub("<hex>", text)
    text = _DIGITS.sub("N", text)
    return " ".join(text.split())


def fingerprint(job_id: str, code: str, evidence: str) -> str:
    return hashlib.sha256(f"{job_id}\0{code}\0{normalize(evidence)}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def findings(job_id: str, records: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """code → fingerprint of each FAIL or WARN record of one job."""
    return {c: fingerprint(job_id, c, str(r.get("evidence") or "")) for c, r in records.items()
            if r.get("status") in FINDING_STATUSES}


@dataclass
class Baseline:
    """The findings of an earlier run: fingerprint → (job id, code)."""

    file: str  # the file's name as given (shown in reports)
    prints: dict[str, tuple[str, str]] = field(default_factory=dict)
    new_only: bool = False  # --trajaudit-new-only: only new findings count in the PR verdict

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "new_only": self.new_only,
                "findings": [{"job": j, "code": c, "fingerprint": fp}
                             for fp, (j, c) in sorted(self.prints.items(), key=lambda kv: (kv[1], kv[0]))]}

    @classmethod
    def from_json(cls, block: Mapping[str, Any]) -> Baseline:
        """A summary's ``baseline`` section back (``trajaudit merge``)."""
        return cls(str(block.get("file") or ""), {f["fingerprint"]: (f["job"], f["code"])
                                                   for f in block.get("findings") or []},
                   bool(block.get("new_only")))

    def diff(self, current: Mapping[str, Mapping[str, str]], statuses: Mapping[tuple[str, str], str],
             jobs_scope: Iterable[str] | None = None) -> dict[str, Any]:
        """The ``baseline`` section of summary.json. ``current``: job → {code → fingerprint}; ``statuses``:
        (job, code) → FAIL/WARN; ``jobs_scope``: when given (a shard), only baseline findings of these jobs can
        be gone (the other jobs are another shard's)."""
        now = {fp: (j, c) for j, m in current.items() for c, fp in m.items()}
        new = [{"job": j, "code": c, "status": statuses.get((j, c), ""), "fingerprint": fp}
               for fp, (j, c) in now.items() if fp not in self.prints]
        scope = set(jobs_scope) if jobs_scope is not None else None
        gone = [{"job": j, "code": c, "fingerprint": fp} for fp, (j, c) in self.prints.items()
                if fp not in now and (scope is None or j in scope)]
        new.sort(key=finding_key)
        gone.sort(key=finding_key)
        return {**self.as_json(), "new": new, "new_jobs": len({r["job"] for r in new}), "gone": gone,
                "unchanged": sum(1 for fp in now if fp in self.prints)}


def finding_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Sort findings by job, then code in natural order (P2 before P10)."""
    return (row["job"], *((int(p) if p.isdigit() else p) for p in re.split(r"(\d+)", row["code"])))


def lines(section: Mapping[str, Any] | None, limit: int = 30) -> list[str]:
    """The terminal's and reports' baseline lines: the counts, then the ids of new and gone findings."""
    if not section:
        return []
    new, gone = section.get("new") or [], section.get("gone") or []
    out = [f"new since baseline: {len(new)} finding(s) in {section.get('new_jobs', 0)} job(s)"
           + (": " + ", ".join(f"{r['job']}::{r['code']}" for r in new[:limit]) if new else "")
           + (f", ... (+{len(new) - limit})" if len(new) > limit else ""),
           f"gone since baseline: {len(gone)} finding(s)"
           + (": " + ", ".join(f"{r['job']}::{r['code']}" for r in gone[:limit]) if gone else "")
           + (f", ... (+{len(gone) - limit})" if len(gone) > limit else ""),
           f"unchanged since baseline: {section.get('unchanged', 0)} finding(s)"
           + (" (--trajaudit-new-only: only new findings count in the PR verdict)" if section.get("new_only") else "")]
    return out


def load(path: Path, max_bytes: int = MAX_BYTES) -> Baseline:
    """Read a summary.json as a baseline: each job's ``fingerprints``, or, for a summary that carries none, the
    prints computed from its per-job ``detail`` records."""
    data = read_bounded(path, max_bytes, "a summary.json", BaselineError)
    try:
        import orjson

        doc = orjson.loads(data)
    except ValueError:
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise BaselineError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema_version") != "trajaudit-summary-1":
        raise BaselineError(f"{path}: not a trajaudit summary.json (schema_version trajaudit-summary-1)")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise BaselineError(f"{path}: summary.json has no 'jobs' list")
    prints: dict[str, tuple[str, str]] = {}
    for n, j in enumerate(jobs):
        if not isinstance(j, dict) or not isinstance(j.get("job"), str):
            raise BaselineError(f"{path}: jobs[{n}] is not a job entry")
        fps = j.get("fingerprints")
        if fps is None:
            records = (j.get("detail") or {}).get("records") if isinstance(j.get("detail"), dict) else None
            if not isinstance(records, dict):
                raise BaselineError(f"{path}: job {j['job']} carries neither finding fingerprints nor records")
            fps = findings(j["job"], {c: r for c, r in records.items() if isinstance(r, dict)})
        if not isinstance(fps, dict) or not all(isinstance(c, str) and isinstance(v, str) for c, v in fps.items()):
            raise BaselineError(f"{path}: job {j['job']}: 'fingerprints' must map codes to strings")
        for c, fp in fps.items():
            prints[fp] = (j["job"], c)
    return Baseline(path.name, prints)
