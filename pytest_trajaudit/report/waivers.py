"""Waivers: accept a known finding once, with a reason and an expiry (``--trajaudit-waivers FILE``). Pure: no pytest.

The file is YAML, read with ``yaml.safe_load`` only and bounded in size::

    waivers:
      - job: "benchflow/citation-check__*"   # fnmatch glob on the job id (``*`` also crosses ``/``)
        code: P1                             # a principle code of the session's registry
        reason: "the answer file is part of the public statement"   # required
        expires: 2027-03-01                  # required; the waiver holds through that day (UTC)
        evidence: "/oracle/expected_answer.json"   # optional: a substring the finding's evidence must contain

A FAIL or WARN finding that an unexpired entry matches is *waived*: its item is skipped with
``WAIVED: <reason> (until <date>)`` and it does not count in the job's verdict (nor, through it, in the PR
verdict). A waiver only discounts a principle's FAIL or WARN: a job that could not be audited (ERROR), an
integrity principle that did not run (INCOMPLETE) or an N/A is never waived. The first matching entry wins;
an expired entry does not apply (the finding counts and the run names the expired waiver); an entry that
matched no finding is stale. Anything wrong with the file is a :class:`WaiverError` naming the entry.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ..userfiles import read_bounded

MAX_BYTES = 1024 * 1024  # a waivers file is a short hand-written list; past this it is refused unread
MAX_ENTRIES = 10_000
KEYS = ("job", "code", "reason", "expires", "evidence")
WAIVABLE = ("FAIL", "WARN")


class WaiverError(Exception):
    """A waivers file that cannot be used (one line naming the file and the entry)."""


@dataclass(frozen=True, slots=True)
class Waiver:
    entry: int  # 1-based position in the file, how messages name it
    job: str
    code: str
    reason: str
    expires: dt.date
    evidence: str | None = None

    def label(self) -> str:
        return f"entry {self.entry} ({self.job}::{self.code})"

    def matches(self, job_id: str, code: str, evidence: str) -> bool:
        if code != self.code or not fnmatchcase(job_id, self.job):
            return False
        return self.evidence is None or self.evidence in evidence

    def expired(self, today: dt.date) -> bool:
        return today > self.expires

    def as_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "job": self.job, "code": self.code, "reason": self.reason,
                "expires": self.expires.isoformat(), "evidence": self.evidence}


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def _date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).date() if value.tzinfo else value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def parse(doc: Any, known_codes: Iterable[str], where: str = "waivers file") -> list[Waiver]:
    """The entries of a loaded waivers document; a bad entry raises :class:`WaiverError` naming it."""
    if doc is None:
        raise WaiverError(f"{where}: empty (expected a mapping with a 'waivers' list)")
    if not isinstance(doc, dict) or set(doc) - {"waivers"}:
        extra = sorted(map(str, set(doc) - {"waivers"})) if isinstance(doc, dict) else []
        raise WaiverError(f"{where}: expected a mapping with only a 'waivers' list"
                          + (f" (unknown key(s): {', '.join(extra)})" if extra else ""))
    entries = doc.get("waivers")
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise WaiverError(f"{where}: 'waivers' must be a list of entries")
    if len(entries) > MAX_ENTRIES:
        raise WaiverError(f"{where}: {len(entries)} entries, more than {MAX_ENTRIES}")
    known = set(known_codes)
    out = []
    for n, e in enumerate(entries, 1):
        name = f"entry {n}"
        if not isinstance(e, dict):
            raise WaiverError(f"{where}: {name}: expected a mapping with job, code, reason, expires")
        if isinstance(e.get("job"), str) and isinstance(e.get("code"), str):
            name = f"entry {n} ({e['job']}::{e['code']})"
        unknown = sorted(str(k) for k in e if k not in KEYS)
        if unknown:
            raise WaiverError(f"{where}: {name}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(KEYS)})")
        for key in ("job", "code", "reason"):
            v = e.get(key)
            if not isinstance(v, str) or not v.strip():
                raise WaiverError(f"{where}: {name}: '{key}' is required (a non-empty string)")
        if e["code"] not in known:
            raise WaiverError(f"{where}: {name}: unknown principle code {e['code']}")
        if e.get("expires") is None:
            raise WaiverError(f"{where}: {name}: 'expires' is required (a date, YYYY-MM-DD)")
        expires = _date(e["expires"])
        if expires is None:
            raise WaiverError(f"{where}: {name}: 'expires' {e['expires']!s:.40} is not a date (YYYY-MM-DD)")
        evidence = e.get("evidence")
        if evidence is not None and (not isinstance(evidence, str) or not evidence):
            raise WaiverError(f"{where}: {name}: 'evidence' must be a non-empty string when given")
        out.append(Waiver(n, e["job"].strip(), e["code"], e["reason"].strip(), expires, evidence))
    return out


def load(path: Path, known_codes: Iterable[str]) -> list[Waiver]:
    """Read and parse a waivers file: a regular file of at most :data:`MAX_BYTES`, UTF-8 YAML."""
    import yaml

    data = read_bounded(path, MAX_BYTES, "a waivers file", WaiverError)
    try:
        text = data.decode("utf-8")
        doc = yaml.safe_load(text)
    except UnicodeDecodeError:
        raise WaiverError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise WaiverError(f"{path}: malformed YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    return parse(doc, known_codes, str(path))


def decide(waivers: Iterable[Waiver], job_id: str, code: str, status: str | None, evidence: str,
           today: dt.date) -> dict[str, Any] | None:
    """What the waivers say about one finding: ``{"entry", "reason", "expires", "applied"}`` of the first
    unexpired matching entry (``applied`` True), else of the first expired one (``applied`` False), else None.
    Only a FAIL or WARN is ever waived."""
    if status not in WAIVABLE:
        return None
    expired = None
    for w in waivers:
        if w.matches(job_id, code, evidence):
            if not w.expired(today):
                return {"entry": w.entry, "reason": w.reason, "expires": w.expires.isoformat(), "applied": True}
            if expired is None:
                expired = {"entry": w.entry, "reason": w.reason, "expires": w.expires.isoformat(), "applied": False}
    return expired


def skip_reason(decision: Mapping[str, Any]) -> str:
    """The waived item's skip reason: ``WAIVED: <reason> (until <date>)``."""
    return f"WAIVED: {decision['reason']} (until {decision['expires']})"


def report(entries: list[Mapping[str, Any]], records: Iterable[tuple[str, str, Mapping[str, Any]]]
           ) -> dict[str, Any]:
    """The ``waivers`` section of summary.json: ``entries`` (the file's entries, as :meth:`Waiver.as_json`),
    ``applied`` and ``expired`` (one per finding: job, code, entry, reason, expires) and ``stale`` (the entries
    that matched no finding). ``records``: (job id, code, the record's ``waiver`` decision)."""
    applied: list[dict[str, Any]] = []
    expired: list[dict[str, Any]] = []
    used = set()
    for job, code, d in records:
        used.add(d.get("entry"))
        row = {"job": job, "code": code, "entry": d.get("entry"), "reason": d.get("reason", ""),
               "expires": d.get("expires", "")}
        (applied if d.get("applied") else expired).append(row)
    stale = [dict(e) for e in entries if e.get("entry") not in used]
    from .baseline import finding_key

    return {"entries": [dict(e) for e in entries], "applied": sorted(applied, key=finding_key),
            "expired": sorted(expired, key=finding_key), "stale": stale}


def lines(section: Mapping[str, Any] | None) -> list[str]:
    """The terminal's and reports' waiver lines: every waiver applied, every expired one, every stale entry (not
    capped: a reviewer must see each finding a waiver hides)."""
    if not section:
        return []
    out = [f"waived: {r['job']}::{r['code']} — {r['reason']}" for r in section.get("applied") or []]
    out += [f"expired waiver: {r['job']}::{r['code']} ({r['expires']})" for r in section.get("expired") or []]
    out += [f"stale waiver: entry {e['entry']} ({e['job']}::{e['code']}, until {e['expires']}) matched no finding"
            for e in section.get("stale") or []]
    return out
