"""report.md: the reviewer's report, in the sections of the seed's report template (reference/report-template.txt),
as GitHub-flavoured Markdown a reviewer can paste into a PR or append to ``$GITHUB_STEP_SUMMARY``. Pure: built from
summary.json and the per-job records; every quote is already redacted and clipped. Text that comes from the
audited tree (job ids, task metadata, evidence, test names) is Markdown-escaped (:func:`md`) or put in a code span
or block it cannot close, so it never renders as a link, an image, HTML or a table cell of its own."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..records import RollupJob, Summary
from ..scan.redact import quote, redact
from . import template

MAX_ROWS = 200


# what lets text become markup that matters in GitHub-flavoured Markdown: links and images ([ and ], without
# which ! is text), HTML (<, >), code spans, table cells (|), and the backslash that would escape the escapes.
# Emphasis characters are left as they are: at worst they style the quoted text
_MD_SPECIAL = re.compile(r"([\\`\[\]<>|])")
_TICKS = re.compile(r"`+")


def md(text: Any) -> str:
    """``text`` with every Markdown-special character backslash-escaped: it renders as the same characters."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def _q(text: Any, limit: int) -> str:
    return md(quote(text, limit))


def _code(text: Any) -> str:
    """``text`` as a code span whose fence is longer than any run of backticks in it."""
    t = str(text).replace("\n", " ")
    fence = "`" * (max((len(m) for m in _TICKS.findall(t)), default=0) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def _cell(v: Any) -> str:
    return md("" if v is None else redact(str(v))).replace("\n", " ")


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 100:.0f}%"


def _secs(v: Any) -> str:
    if not isinstance(v, int | float):
        return "n/a"
    m, s = divmod(int(v), 60)
    return f"{m}m {s:02d}s" if m else f"{s}s"


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows[:MAX_ROWS]:
        out.append("| " + " | ".join(_cell(c) for c in r) + " |")
    if len(rows) > MAX_ROWS:
        out.append(f"| … {len(rows) - MAX_ROWS} more rows in summary.json |" + " |" * (len(head) - 1))
    return out


def render(summary: Summary, jobs: Mapping[str, RollupJob], date: str) -> str:
    """``jobs``: job id → {"meta", "records"} (the roll-up's per-job data)."""
    pv = summary["pr_verdict"]
    metas = {j: d.get("meta") or {} for j, d in jobs.items()}
    tasks = sorted({m.get("task") or "" for m in metas.values()} - {""})
    title = ", ".join(md(t) for t in tasks[:3]) + (f" (+{len(tasks) - 3} more)" if len(tasks) > 3 else "") or "agent runs"
    out: list[str] = [f"# Benchmark audit report: {title}", "",
                      f"Date: {date} · pytest-trajaudit · mode: {summary['mode']} · {summary['n_jobs']} job(s)", "",
                      f"**Verdict: {pv['verdict']}**", ""]
    out += [f"- {_q(r, 300)}" for r in pv["reasons"]] + [""]
    if pv.get("incomplete"):  # a partial run: say so above everything else, also when a FAIL made it REJECT
        out += [f"> **Incomplete run:** {_q(pv['incomplete']['line'], 300)}. The integrity principles that did "
                "not run judged nothing: this report does not approve those jobs.", ""]

    from .review import markdown_lines

    out += markdown_lines(summary)  # waivers applied/expired/stale and the baseline diff, when given
    out += ["## Task description", ""]
    described = {}
    for m in metas.values():
        tm = m.get("task_meta")
        if tm and tm.get("name") not in described:
            described[tm.get("name")] = tm
    if described:
        for name, tm in sorted(described.items()):
            out.append(f"**{md(name)}** — category: {md(tm.get('category') or 'n/a')}, difficulty: "
                       f"{md(tm.get('difficulty') or 'n/a')}, tags: "
                       f"{md(', '.join(map(str, tm.get('tags') or [])) or 'n/a')}")
            if tm.get("description"):
                out += ["", "> " + _q(tm["description"], 800)]
            out.append("")
    else:
        out += ["No task directory was given (`--trajaudit-tasks`): task metadata unavailable.", ""]

    out += ["## Oracle results", ""]
    oracles = [(j, m) for j, m in sorted(metas.items()) if m.get("oracle")]
    if oracles:
        rows = []
        for j, m in oracles:
            r = m.get("reward")
            t = m.get("verifier_tests") or {}
            rows.append([j, "PASSED" if r is not None and r >= 1.0 else "FAILED", "n/a" if r is None else f"{r:g}",
                         f"{t.get('passed', '?')}/{t.get('tests', '?')}" if t else "n/a", _secs(m.get("agent_time_sec"))])
        out += _table(["Oracle job", "Status", "Reward", "Tests", "Time"], rows) + [""]
        for j, m in oracles:  # the template's "Tests Passed" list (names only: CTRF records no description)
            listed = [f"  [PASS] {quote(t, 200)}" for t in m.get("passed_tests") or []] + \
                     [f"  [FAIL] {quote(t, 200)}" for t in m.get("failed_tests") or []]
            if listed:
                fence = "`" * max([3, *(len(r) + 1 for x in listed for r in _TICKS.findall(x))])
                out += [f"Tests Passed ({md(j)}):", "", fence, *listed, fence, ""]
    else:
        out += ["No oracle run among the audited jobs.", ""]

    out += ["## Benchmark results", ""]
    rows = []
    for name, c in sorted(summary.get("configs", {}).items()):
        skills = {"with-skills": "Yes", "no-skills": "No"}.get(c.get("condition") or "", "n/a")
        given = [metas[j["job"]].get("agent_time_sec") for j in summary["jobs"] if (j["config"] or "agent") == name]
        times = [t for t in given if isinstance(t, int | float)]
        verdicts = ", ".join(f"{n} {v}" for v, n in c["verdicts"].items())
        rows.append([name, c.get("agent") or "-", c.get("model") or "-", skills, c["jobs"], _pct(c.get("mean_reward")),
                     _secs(sum(times) / len(times)) if times else "n/a", verdicts])
    out += _table(["Config", "Agent", "Model", "Skills", "Trials", "Accuracy", "Agent time", "Verdicts"], rows) + [""]

    tokens = [(j, m) for j, m in sorted(metas.items()) if m.get("n_output_tokens") is not None and not m.get("oracle")]
    if tokens:
        out += ["Token diagnostic (low output tokens on passing runs = possible shortcut):", ""]
        out += [f"- {md(j)}: in={md(m.get('n_input_tokens', 'n/a'))}, out={m.get('n_output_tokens')}, reward "
                f"{m.get('reward')}" for j, m in tokens[:30]] + [""]
    gap = template.token_gap(metas)
    if gap:  # the template's token signal needs counts the harness may not record (the ACP shims report null)
        out += [f"Token diagnostic unavailable for {len(gap)} agent job(s): their results record no token counts, so "
                "the low-output-token shortcut signal is skipped for them (" + ", ".join(md(g) for g in gap[:10]) +
                (f", … {len(gap) - 10} more" if len(gap) > 10 else "") + ").", ""]

    out += ["## Skills impact", ""]
    impact = summary.get("skill_impact")
    if impact:
        rows = []
        for key, v in sorted(impact.items()):
            if isinstance(v, dict):
                rows.append([key, _pct(v.get("with_skills_reward")), _pct(v.get("no_skills_reward")),
                             "n/a" if v.get("delta_pp") is None else f"{v['delta_pp']:+.1f} pp", v.get("outcome") or ""])
        out += _table(["Agent", "With skills", "Without skills", "Δ", "Outcome"], rows) + [""]
        caveats = [f"- {md(k)}: {md(v['caveat'])}" for k, v in sorted(impact.items()) if isinstance(v, dict) and v.get("caveat")]
        out += caveats + ([""] if caveats else [])
        quoted = template.impact_evidence(impact)
        if quoted:  # the template: "quote specific log lines for any non-zero Δ"
            out += ["Trajectory evidence (for each non-zero Δ):", ""]
            for key, outcome, q in quoted:
                out += [f"- {_cell(key)} ({outcome}): " + (f"> {_q(q, 400)}" if q else "no quote recorded")]
            out.append("")
    else:
        out += ["No with-skills / without-skills pair of the same task and agent among the jobs.", ""]

    out += ["## Failure analysis", ""]
    failed = [(j, m) for j, m in sorted(metas.items())
              if not m.get("oracle") and (reward := m.get("reward")) is not None and reward < 1.0]
    if not failed:
        out += ["No failed agent run.", ""]
    for j, m in failed[:50]:
        recs = jobs[j].get("records") or {}
        keyed = template.by_key(recs)
        data = {k: {x: y for r in v for x, y in (r.get("data") or {}).items()} for k, v in keyed.items()}
        bucket = data.get("failure_bucket", {}).get("failure_bucket") or "needs a judge"
        fvr = data.get("format_vs_reasoning", {}).get("format_vs_reasoning") or "n/a"
        final = data.get("verbatim_final", {}).get("verbatim_final") or ""
        vmsg = data.get("failure_bucket", {}).get("verifier_message") or ""
        cause, basis = template.root_cause(m, recs)
        out += [f"### {md(j)} (reward {m['reward']:g})", "",
                f"- Failed tests: {_q(', '.join(m.get('failed_tests') or []), 300) or 'n/a'}",
                f"- Root cause: {md(cause)} ({_q(basis, 200)}; bucket {_code(bucket)}, format vs reasoning "
                f"{_code(fvr)})",
                f"- Verifier: {_q(vmsg, 300) or 'n/a'}",
                f"- Agent's final: {_q(final, 300) or 'n/a'}"]
        quotes = template.evidence_quotes(recs)
        out += ["- Trajectory evidence:"] + [f"  - {md(c)}: {_q(e, 300)}" for c, e in quotes] if quotes else \
            ["- Trajectory evidence: no FAIL or WARN finding quotes the trajectory"]
        out.append("")

    out += ["## Critical findings", ""]
    n = 0
    for entry in summary["jobs"]:
        if entry["verdict"] in ("INVALID", "ERROR", "WARN"):
            for reason in entry["reasons"][:3]:
                n += 1
                if n <= 60:
                    out.append(f"{n}. **{entry['verdict']}** {_code(entry['job'])} — {_q(reason, 300)}")
    if n > 60:
        out.append(f"… {n - 60} more in summary.json")
    if not n:
        out.append("None.")
    out.append("")

    out += ["## Recommendation", "", f"Verdict: **{pv['verdict']}**", ""]
    if pv["verdict"] == "INCOMPLETE":
        out += ["Before a verdict, audit every integrity principle of every job (run without the selection, "
                "`-x` or `--maxfail` named below).", ""]
    if pv["verdict"] != "APPROVE":
        out += ["Required changes:", ""] + [f"1. {_q(r, 300)}" for r in pv["reasons"]] + [""]
    suggested = template.suggested_improvements(summary, metas)
    out += ["Suggested improvements:", ""] + ([f"1. {_q(x, 300)}" for x in suggested[:30]] or ["None."]) + [""]

    skipped = summary.get("not_audited") or []
    if skipped:  # trajectory-looking files inside jobs that were not read (docs/discovery.md)
        out += ["## Not audited", ""] + [f"- {_code(quote(e['job'] + '/' + e['path'], 200))}: {_q(e['reason'], 200)}"
                                         for e in skipped[:60]]
        out += [f"- … {len(skipped) - 60} more in summary.json"] if len(skipped) > 60 else []
        out.append("")

    out += ["## Artifacts", "", "- `summary.json` (this roll-up; schema `schemas/summary.schema.json`)",
            "- `jobs/<job>/audit-<config>.json` (per-job audit; schema `schemas/audit.schema.json`)",
            "- `report.md` (this file)", ""]
    return "\n".join(out)
