"""``report.html``: the summary as one self-contained page a reviewer opens from disk or a CI artifact.

Built from ``summary.json`` alone (so ``trajaudit merge`` writes the same page for shards): the PR verdict, charts
(inline SVG: verdicts per config, pass^k per task group, skill impact per task), a job table that filters by
verdict, principle and status, and per job its findings with evidence and a timeline of the events they cite
(``report/timeline.py``), rendered on demand when the job is opened.

Everything from a trajectory is hostile. The page therefore: carries the data as JSON in a
``<script type="application/json">`` element with ``<``, ``>`` and ``&`` escaped (a ``</script>`` in a string cannot
end it); inserts it only as text nodes (``assets/report.js``); renders the server-side parts with
``html.escape``; and declares a Content-Security-Policy that allows only its own inline style and script (by
SHA-256), no network and no other script, so an injected ``onerror`` handler or ``javascript:`` URL would not run
even if it reached the markup. Evidence and timeline text were redacted when the job was audited.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape
from importlib import resources
from typing import Any

from ..records import Summary, SummaryJob
from .audit import Deferred
from .review import html_section as review_section

MAX_CHART_ROWS = 40
_VERDICT_ORDER = ("INVALID", "ERROR", "INCOMPLETE", "WARN", "CLEAN", "ORACLE")
_COLORS = {"INVALID": "#c62828", "ERROR": "#6a1b9a", "INCOMPLETE": "#1565c0", "WARN": "#ef6c00", "CLEAN": "#2e7d32",
           "ORACLE": "#757575"}
_FINDING_STATUSES = ("FAIL", "WARN", "ERROR")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _json_for_script(data: Any) -> str:
    """JSON that cannot end or confuse the ``<script>`` element holding it."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _job_data(job: SummaryJob) -> dict[str, Any]:
    detail = job.get("detail") or {}
    if isinstance(detail, Deferred):
        detail = detail.value()
    records = detail.get("records") or {}
    findings = [{"code": code, "status": r.get("status"), "evidence": r.get("evidence") or "",
                 "events": [i for i in r.get("events") or [] if isinstance(i, int)]}
                for code, r in records.items() if r.get("status") in _FINDING_STATUSES]
    for code, msg in (detail.get("errored") or {}).items():
        findings.append({"code": code, "status": "ERROR", "evidence": msg, "events": []})
    statuses = dict(job.get("statuses") or {})
    for f in findings:  # a waived finding is shown as WAIVED, with its reason (review.py)
        w = (records.get(f["code"]) or {}).get("waiver") or {}
        if f["code"] in (job.get("waived") or ()) and w.get("applied"):
            statuses[f["code"]] = f["status"] = "WAIVED"
            f["evidence"] = f"waived ({w.get('reason', '')}, until {w.get('expires', '')}): {f['evidence']}"
    meta = detail.get("meta") or {}
    return {"job": job.get("job", ""), "verdict": job.get("verdict", ""), "config": job.get("config", ""),
            "trial": job.get("trial", ""), "reward": job.get("reward"), "reasons": job.get("reasons") or [],
            "statuses": statuses, "error": detail.get("error"), "findings": findings,
            "timeline": meta.get("timeline")}


def _bars(rows: list[tuple[str, list[tuple[str, float, str]]]], title: str, total: float | None = None,
          unit: str = "") -> str:
    """Horizontal stacked bars: ``rows`` of (label, [(segment name, value, colour)]); the bar's full width is
    ``total`` (else the largest row's sum)."""
    shown = rows[:MAX_CHART_ROWS]
    width, label_w, h = 360, 220, 18
    top = max((sum(v for _, v, _ in segs) for _, segs in shown), default=0) if total is None else total
    top = top or 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + width + 60}" height="{h * len(shown) + 8}" '
           f'role="img" aria-label="{escape(title)}">']
    for n, (label, segs) in enumerate(shown):
        y = 4 + n * h
        out.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end" font-size="12">{escape(label[:40])}</text>')
        x = float(label_w)
        for name, value, color in segs:
            w = width * value / top
            if w > 0:
                tip = escape(f"{label}: {name} {value:g}{unit}")
                out.append(f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{h - 4}" fill="{color}">'
                           f'<title>{tip}</title></rect>')
            x += w
        values = escape(" ".join(f"{v:g}{unit}" for _, v, _ in segs if v))
        out.append(f'<text x="{x + 4:.1f}" y="{y + 13}" font-size="11" fill="#555">{values}</text>')
    out.append("</svg>")
    more = f'<p class="muted">first {MAX_CHART_ROWS} of {len(rows)}</p>' if len(rows) > MAX_CHART_ROWS else ""
    return f'<div class="chart"><h3>{escape(title)}</h3>{"".join(out)}{more}</div>'


def _delta_chart(entries: list[dict[str, Any]]) -> str:
    """Skill impact per task: Δ (with − without skills, in percentage points) from a centre line, with the
    ±10 pp band inside which a difference is likely noise."""
    shown = entries[:MAX_CHART_ROWS]
    label_w, half, h = 220, 180, 18
    cx = label_w + half
    scale = half / 100.0
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + 2 * half + 60}" height="{h * len(shown) + 8}" '
           f'role="img" aria-label="skill impact">',
           f'<rect x="{cx - 10 * scale:.1f}" y="0" width="{20 * scale:.1f}" height="{h * len(shown) + 8}" '
           f'fill="#eeeeee"><title>±10 pp: likely noise</title></rect>',
           f'<line x1="{cx}" y1="0" x2="{cx}" y2="{h * len(shown) + 8}" stroke="#999"/>']
    for n, e in enumerate(shown):
        y = 4 + n * h
        d = float(e.get("delta_pp") or 0.0)
        label = f"{e.get('task', '')} ({e.get('agent', '')})"
        color = "#2e7d32" if d > 0 else "#c62828" if d < 0 else "#757575"
        x, w = (cx, d * scale) if d >= 0 else (cx + d * scale, -d * scale)
        out.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end" font-size="12">{escape(label[:40])}</text>')
        tip = escape(f"{label}: {d:+.1f} pp, {e.get('outcome', '')}")
        out.append(f'<rect x="{x:.1f}" y="{y + 2}" width="{max(w, 1):.1f}" height="{h - 4}" fill="{color}">'
                   f'<title>{tip}</title></rect>')
        out.append(f'<text x="{cx + half + 4}" y="{y + 13}" font-size="11" fill="#555">{d:+.1f} pp</text>')
    out.append("</svg>")
    more = f'<p class="muted">first {MAX_CHART_ROWS} of {len(entries)}</p>' if len(entries) > MAX_CHART_ROWS else ""
    return f'<div class="chart"><h3>Skill impact per task (Δ pp; grey band ±10 pp)</h3>{"".join(out)}{more}</div>'


def _charts(summary: Summary) -> str:
    parts = []
    configs = summary.get("configs") or {}
    if configs:
        rows = [(name, [(v, float((c.get("verdicts") or {}).get(v, 0)), _COLORS[v]) for v in _VERDICT_ORDER])
                for name, c in sorted(configs.items())]
        parts.append(_bars(rows, "Verdicts per config"))
    passk = summary.get("pass_k") or []
    if passk:
        rows = [(f"{e.get('task', '')} ({e.get('condition') or e.get('agent', '')})",
                 [("pass^k", float(e.get("pass_hat_k") or 0.0), "#2e7d32" if e.get("status") == "PASS" else "#c62828")])
                for e in passk]
        parts.append(_bars(rows, "pass^k per task group", total=1.0))
    impact = list((summary.get("skill_impact") or {}).values())
    if impact:
        parts.append(_delta_chart(impact))
    return f'<section class="charts">{"".join(parts)}</section>' if parts else ""


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape('' if c is None else str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _sections(summary: Summary) -> str:
    out = []
    passk = summary.get("pass_k") or []
    if passk:
        out.append("<h2>pass^k</h2>" + _table(
            ["task", "agent", "model", "condition", "k", "pass^k", "status", "reason"],
            [[e.get("task"), e.get("agent"), e.get("model"), e.get("condition"), e.get("k"), e.get("pass_hat_k"),
              e.get("status"), e.get("reason")] for e in passk]))
    impact = summary.get("skill_impact") or {}
    if impact:
        out.append("<h2>Skill impact</h2>" + _table(
            ["task", "agent", "with skills", "without", "Δ pp", "outcome", "evidence"],
            [[e.get("task"), e.get("agent"), e.get("with_skills_reward"), e.get("no_skills_reward"),
              e.get("delta_pp"), e.get("outcome"), e.get("evidence")] for e in impact.values()]))
    skipped = summary.get("not_audited") or []
    if skipped:
        out.append("<h2>Not audited</h2>" + _table(["job", "path", "reason"],
                                                   [[e.get("job"), e.get("path"), e.get("reason")] for e in skipped]))
    return "".join(out)


def _options(values: list[str], everything: str) -> str:
    return f'<option value="">{escape(everything)}</option>' + "".join(
        f'<option value="{escape(v, quote=True)}">{escape(v)}</option>' for v in values)


def render(summary: Summary) -> str:
    """The page for ``summary`` (what ``Rollup.summary`` returns, or a ``summary.json`` read back)."""
    css, js = _asset("report.css"), _asset("report.js")
    pv = summary.get("pr_verdict") or {}
    verdict = str(pv.get("verdict") or "")
    counts = summary.get("verdicts") or {}
    reasons = "".join(f"<li>{escape(str(r))}</li>" for r in pv.get("reasons") or [])
    incomplete = (pv.get("incomplete") or {}).get("line")
    jobs = [_job_data(j) for j in summary.get("jobs") or []]
    present = [v for v in _VERDICT_ORDER if counts.get(v)]
    codes = sorted(summary.get("principles") or {}, key=lambda c: (c[0] != "P", len(c), c))
    csp = (f"default-src 'none'; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    head_counts = ", ".join(f"{counts[v]} {v}" for v in _VERDICT_ORDER if counts.get(v))
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',  # ours: no data, no double quote
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>trajaudit report</title>",
        f"<style>{css}</style></head><body>",
        f'<h1>PR verdict: <span class="v v-{escape(verdict.replace(" ", "-"), quote=True)}" id="pr-verdict">'
        f"{escape(verdict)}</span></h1>",
        f'<ul class="reasons">{reasons}</ul>' if reasons else "",
        f'<p id="incomplete"><strong>incomplete run:</strong> {escape(str(incomplete))}</p>' if incomplete else "",
        f'<p class="muted">{int(summary.get("n_jobs") or 0)} job(s): {escape(head_counts or "none")} · mode '
        f'{escape(str(summary.get("mode") or ""))}</p>',
        review_section(summary),
        _charts(summary),
        "<h2>Jobs</h2>",
        '<div class="filters">',
        f'<label>verdict <select id="f-verdict">{_options(present, "any")}</select></label>',
        f'<label>principle <select id="f-code">{_options(codes, "any")}</select></label>',
        f'<label>status <select id="f-status">{_options(["FAIL", "WARN", "WAIVED", "PASS", "N/A"], "any")}</select></label>',
        '<label>search <input id="f-text" type="search" placeholder="job id or config"></label>',
        '<span id="job-count" class="muted"></span></div>',
        "<table><thead><tr><th>verdict</th><th>job</th><th>config</th><th>trial</th><th>reward</th>"
        '<th>FAIL / WARN</th></tr></thead><tbody id="job-rows"></tbody></table>',
        '<button id="more" class="more" type="button" hidden>show more</button>',
        _sections(summary),
        f'<script type="application/json" id="trajaudit-data">{_json_for_script({"jobs": jobs})}</script>',
        f"<script>{js}</script></body></html>\n",
    ])
