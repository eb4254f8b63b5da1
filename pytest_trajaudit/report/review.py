"""The review sections of a roll-up: waivers applied, expired and stale (``waivers.py``) and the diff against a
baseline run (``baseline.py``), for summary.json, the terminal, report.md and report.html. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from ..records import ReviewFields, SummaryJob
from . import baseline as _baseline
from . import waivers as _waivers


def waived(rec: Mapping[str, Any] | None) -> bool:
    """The record is a FAIL or WARN an unexpired waiver accepted."""
    w = (rec or {}).get("waiver")
    return isinstance(w, dict) and w.get("applied") is True and rec is not None \
        and rec.get("status") in _waivers.WAIVABLE


def discounted(job_id: str, records: Mapping[str, Mapping[str, Any]], baseline: Any = None) -> set[str]:
    """The codes of a job whose finding does not count in its verdict: the waived ones and, given a baseline
    (``--trajaudit-new-only``), the ones the baseline already had."""
    out = {c for c, r in records.items() if waived(r)}
    if baseline is not None:
        out |= {c for c, fp in _baseline.findings(job_id, records).items() if fp in baseline.prints}
    return out


def job_fields(job_id: str, records: Mapping[str, Mapping[str, Any]]) -> ReviewFields:
    """A job entry's ``fingerprints`` (code → print of each FAIL/WARN: what a later run's baseline reads) and
    ``waived`` (the codes whose finding a waiver accepted)."""
    return {"fingerprints": _baseline.findings(job_id, records),
            "waived": [c for c, r in records.items() if waived(r)]}


def sections(rollup: Any, jobs: list[SummaryJob]) -> dict[str, Any]:
    """summary.json's ``waivers`` and ``baseline`` sections (each only when its option was given), and under
    ``_pr_verdicts`` the job verdicts the PR verdict counts with ``--trajaudit-new-only``."""
    out: dict[str, Any] = {}
    if rollup.waivers is not None:
        decisions = [(job_id, c, r["waiver"]) for job_id in sorted(rollup.jobs)
                     for c, r in rollup.jobs[job_id]["records"].items()
                     if isinstance(r.get("waiver"), dict) and r.get("status") in _waivers.WAIVABLE]
        out["waivers"] = _waivers.report(rollup.waivers, decisions)
    b = rollup.baseline
    if b is not None:
        current = {j["job"]: j["fingerprints"] for j in jobs}
        statuses = {(j["job"], c): j["statuses"].get(c, "") for j in jobs for c in j["fingerprints"]}
        scope = list(rollup.jobs) if rollup.shard else None  # a shard: other shards' findings are not gone
        out["baseline"] = b.diff(current, statuses, scope)
        if b.new_only:
            out["_pr_verdicts"] = {k: v for k, (v, _) in rollup.verdicts(new_only=True).items()}
    return out


def properties(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """JUnit suite properties: how many waivers applied, expired and went stale; new, gone and unchanged
    findings against the baseline (a CI script reads them without parsing summary.json)."""
    out = [(f"trajaudit.waivers.{k}", str(len((summary.get("waivers") or {}).get(k) or [])))
           for k in ("applied", "expired", "stale") if summary.get("waivers") is not None]
    b = summary.get("baseline")
    if b is not None:
        out += [("trajaudit.baseline.new", str(len(b.get("new") or []))),
                ("trajaudit.baseline.gone", str(len(b.get("gone") or []))),
                ("trajaudit.baseline.unchanged", str(b.get("unchanged", 0)))]
    return out


def terminal_lines(summary: Mapping[str, Any]) -> list[str]:
    from ..scan.redact import printable

    return [printable(line) for line in
            _waivers.lines(summary.get("waivers")) + _baseline.lines(summary.get("baseline"))]


def markdown_lines(summary: Mapping[str, Any]) -> list[str]:
    """report.md's "Review" section (empty without waivers or a baseline)."""
    from ..scan.redact import quote

    lines = _waivers.lines(summary.get("waivers")) + _baseline.lines(summary.get("baseline"))
    if not lines:
        return []
    from .markdown import md

    return ["## Review: waivers and baseline", "", *(f"- {md(quote(line, 2000))}" for line in lines), ""]


def html_section(summary: Mapping[str, Any]) -> str:
    """report.html's review section: every waiver line and the baseline diff, escaped."""
    from ..scan.redact import redact

    w, b = _waivers.lines(summary.get("waivers")), _baseline.lines(summary.get("baseline"))
    if not w and not b:
        return ""
    items = "".join(f"<li>{escape(redact(line))}</li>" for line in w + b)
    return f'<h2>Review: waivers and baseline</h2><ul id="review">{items}</ul>'
