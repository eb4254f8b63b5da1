"""Collect item records (from any process) into per-job verdicts, summary.json and terminal lines. Pure."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any, cast

from ..aggregate.completeness import Coverage
from ..aggregate.verdicts import (
    TRACE_VERDICTS,
    VERDICTS,
    Outcome,
    config_rollup,
    incomplete_line,
    job_verdict,
    pass_k_entries,
    pr_verdict,
    skill_impact,
    skill_quote_fields,
    skills_flags,
    verdict_counts,
)
from ..judges.stats import Totals
from ..records import PrVerdict, RollupJob, Summary, SummaryJob
from . import tracegrader
from .audit import Deferred, build_audit, trace_grader_block, write_json_atomic, write_text_atomic
from .html import render as render_html
from .markdown import render as render_markdown
from .paths import job_paths, safe_component

MAX_TERMINAL_JOBS = 30
DETAIL_OMITS = ("job", "code", "meta", "loads")  # a record's fields that its job entry already holds


def _today() -> str:
    """UTC date of the report; ``SOURCE_DATE_EPOCH`` pins it (reproducible reports)."""
    import os
    import time

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = float(epoch) if epoch and epoch.isdigit() else time.time()
    return time.strftime("%Y-%m-%d", time.gmtime(t))


def trace_lines(summary: Summary) -> list[str]:
    """Trace-grader run verdicts and pass^k for the terminal (only when a TG item judged some job)."""
    tv = summary.get("trace_verdicts") or {}
    if not sum(tv.values()):
        return []
    line = "trace-grader runs: " + ", ".join(f"{n} {v}" for v, n in tv.items() if n)
    judged = [e for e in summary.get("pass_k") or [] if e["status"] != "N/A"]
    if judged:
        fails = [e for e in judged if e["status"] == "FAIL"]
        line += f" | pass^k: {len(judged) - len(fails)}/{len(judged)} task group(s) PASS"
        if fails:
            line += " (FAIL: " + ", ".join(f"{e['task']} {e['n_success']}/{e['n_trials']}" for e in fails[:5]) + \
                (", ..." if len(fails) > 5 else "") + ")"
    return [line]


def _rank(code: str) -> tuple[int, str]:
    """A principle code's place in the registry (the order items are collected in); unknown codes last."""
    order = _RANKS.get("order")
    if order is None or code not in order:  # first call, or a principle registered since (a plugin's): rebuild
        from ..principles import registry

        order = _RANKS["order"] = {c: i for i, c in enumerate(registry())}  # registry() sorts: not per report
    return order.get(code, len(order)), code


_RANKS: dict[str, dict[str, int]] = {}


def _advisor_codes() -> tuple[str, ...]:
    """The advisor audit's codes: their errors leave the job without an advisor verdict."""
    from ..principles import family_codes

    return family_codes("advisor")


@functools.cache
def _declared() -> dict[str, tuple[str, bool]]:
    """code → (role, na_warns) of the built-in principles: the verdict metadata of a record whose roll-up was
    given none (a merge of shards, a roll-up built in a script). Made once: a roll-up asks once per record."""
    from ..principles import registry

    return {c: (p.role, p.na_warns) for c, p in registry().items()}


def suite_properties(summary: Summary) -> list[tuple[str, str]]:
    """The JUnit XML suite properties of a run: each job's verdict, the count per verdict, the PR verdict, its
    first ten reasons and, for a partial run, what did not run (docs/verdicts.md)."""
    props = [(f"trajaudit.verdict:{j['job']}", j["verdict"]) for j in summary["jobs"]]
    counts = Counter(j["verdict"] for j in summary["jobs"])
    props += [(f"trajaudit.jobs.{v}", str(n)) for v, n in sorted(counts.items())]
    pv = summary["pr_verdict"]
    props.append(("trajaudit.pr_verdict", pv["verdict"]))
    props += [(f"trajaudit.pr_reason.{i}", r) for i, r in enumerate(pv["reasons"][:10], 1)]
    if pv.get("incomplete"):
        props.append(("trajaudit.incomplete", pv["incomplete"]["line"]))
    from .review import properties

    return props + properties(summary)


Verdicts = dict[str, tuple[str, list[str]]]  # job id → (verdict, reasons): Rollup.verdicts()


class Rollup:
    def __init__(self, mode: str = "precise", roles: dict[str, tuple[str, bool]] | None = None) -> None:
        """``roles``: code → (role, na_warns) of every principle of the session (built-in and plugin-contributed);
        by default the built-in registry's, and for a code it does not know, the record's ``affects``."""
        self.mode = mode
        self.roles = roles
        self.coverage: Coverage | None = None  # set by the plugin: which integrity items were meant to run
        self.jobs: dict[str, RollupJob] = {}  # job id → {"meta", "records", "error", "loads"}
        self.groups: dict[tuple[str, str], dict[str, Any]] = {}  # (group id, code) → group item record
        self.judges = Totals()  # LLM judge usage and concurrence (models set by the plugin)
        self.shard: dict[str, Any] | None = None  # --trajaudit-shard: {"index", "count", "settings"} (shard.py)
        self.waivers: list[dict[str, Any]] | None = None  # --trajaudit-waivers: the file's entries (waivers.py)
        self.baseline: Any = None  # --trajaudit-baseline: a baseline.Baseline

    def add(self, rec: dict[str, Any]) -> None:
        """rec: {"job", "code", "status", "evidence", "data", "events", "tier", "family", "affects", "meta",
        "error", "loads"} — JSON builtins only (it crossed from an xdist worker). A group item's record has
        ``group`` instead of ``job``."""
        if "group" in rec:
            self.groups[(rec["group"], rec["code"])] = rec
            return
        j = self.jobs.setdefault(rec["job"], {"meta": {}, "records": {}, "error": None, "loads": 0})
        if rec.get("judge") or (rec.get("data") or {}).get("judge_labels"):
            self.judges.add(f"{rec['job']}::{rec['code']}", rec)
        if rec.get("meta"):
            j["meta"] = rec["meta"]
        if rec.get("error"):
            j["error"] = rec["error"]
            return
        j["loads"] = max(j["loads"], rec.get("loads") or 0)
        if rec.get("status") in ("PASS", "WARN", "FAIL", "N/A"):
            recs = j["records"]
            last = next(reversed(recs)) if recs else None
            recs[rec["code"]] = rec
            if last is not None and _rank(rec["code"]) < _rank(last):
                # reports arrive in worker order (xdist, --dist load, judge items last): keep the registry's order,
                # which decides the order of verdict reasons and of every per-job section (byte-identical reports)
                j["records"] = dict(sorted(recs.items(), key=lambda kv: _rank(kv[0])))
        elif rec.get("status") == "ERROR" and rec.get("code") in _advisor_codes():
            j["advisor_error"] = f"{rec['code']}: {rec.get('evidence') or 'unusable input'}"  # no advisor verdict
        elif rec.get("status") == "ERROR":
            j.setdefault("errored", {})[rec["code"]] = str(rec.get("evidence") or "")

    def apply_coverage(self) -> None:
        """Name, per job, each integrity code that produced no finding and why (``missing``; completeness.py).
        A job collected but none of whose items ran (all deselected, or not reached after ``-x``) joins the
        roll-up with no records. Called once, when every report is in; without a coverage nothing changes."""
        cov = self.coverage
        if cov is None:
            return
        for job_id in cov.jobs:
            self.jobs.setdefault(job_id, {"meta": {}, "records": {}, "error": None, "loads": 0})
        for j in self.jobs.values():
            j.pop("missing", None)
        for job_id, j in self.jobs.items():
            if j["error"] or j["meta"].get("oracle"):
                continue
            missing = cov.missing(job_id, j["records"], j.get("errored"))
            if missing:
                j["missing"] = missing

    def _role(self, code: str, rec: dict[str, Any]) -> tuple[str, bool]:
        roles = self.roles if self.roles is not None else _declared()
        if code in roles:
            return roles[code]
        return ("quality" if rec.get("affects", True) else "info"), False

    def verdicts(self, new_only: bool = False) -> Verdicts:
        """Each job's (verdict, reasons). A waived finding does not count; with ``new_only`` neither does a
        finding the baseline already had (review.py). Neither touches a job's error or missing principles."""
        from .review import discounted

        out = {}
        for job_id in sorted(self.jobs):
            j = self.jobs[job_id]
            outcomes = {}
            skip = discounted(job_id, j["records"], self.baseline if new_only else None)
            for c, r in j["records"].items():
                if c in skip:
                    continue
                role, na_warns = self._role(c, r)
                outcomes[c] = Outcome(r["status"], r.get("tier", ""), role, r.get("evidence", ""),
                                      bool((r.get("data") or {}).get("flipped_signal")), na_warns)
            out[job_id] = job_verdict(outcomes, error=j["error"], oracle=bool(j["meta"].get("oracle")),
                                      missing=j.get("missing"))
        return out

    def summary(self, deferred_detail: bool = False, verdicts: Verdicts | None = None) -> Summary:
        """summary.json as a dict. Each job's ``detail`` is a plain dict, or with ``deferred_detail`` a
        :class:`~.audit.Deferred` made only as the document is serialized (:func:`~.audit.write_json_atomic`,
        the HTML report): a large audit then never holds a second copy of every record. ``verdicts``: what
        :meth:`verdicts` returns for the roll-up as it is now, when the caller has it (the session's end computes
        it once for the reports and the terminal lines)."""
        from .review import job_fields, sections

        verdicts = self.verdicts() if verdicts is None else verdicts
        per_principle: dict[str, Counter[str]] = {}
        jobs: list[SummaryJob] = []
        for job_id, (verdict, reasons) in verdicts.items():
            j = self.jobs[job_id]
            for c, r in j["records"].items():
                per_principle.setdefault(c, Counter())[r["status"]] += 1
            meta = j["meta"]
            review_fields = job_fields(job_id, j["records"])
            jobs.append({
                "job": job_id, "config": meta.get("config") or "", "task": meta.get("task") or "",
                "trial": meta.get("trial") or "", "verdict": verdict, "reward": meta.get("reward"),
                "reasons": reasons[:10], "statuses": {c: r["status"] for c, r in sorted(j["records"].items())},
                "loads": j["loads"], "agent": meta.get("agent") or "", "model": meta.get("model") or "",
                "condition": meta.get("condition"), "oracle": bool(meta.get("oracle")),
                "advisor_verdict": self.advisor_verdict(job_id),
                "fingerprints": review_fields["fingerprints"], "waived": review_fields["waived"],
                "detail": (Deferred(functools.partial(self.detail, job_id)) if deferred_detail
                           else self.detail(job_id)),
            })
        review = sections(self, jobs)
        # summary.json in the order it is written: the literal spreads sections built elsewhere (the shard, the
        # trace-grader and skills sections, review.py's), whose keys Summary declares
        return cast(Summary, {
            "schema_version": "trajaudit-summary-1",
            "mode": self.mode,
            **({"shard": self.shard} if self.shard else {}),
            "n_jobs": len(jobs),
            "verdicts": verdict_counts({j["job"]: j["verdict"] for j in jobs}),
            "principles": {c: dict(sorted(cnt.items())) for c, cnt in sorted(per_principle.items())},
            "pr_verdict": self.pr_verdict(jobs, review.pop("_pr_verdicts", None)),
            "configs": config_rollup(jobs),
            **self.trace_sections(jobs),
            **self.skills_sections(jobs),
            "groups": [{k: r.get(k) for k in ("group", "task", "code", "status", "evidence", "members", "data")}
                       for _, r in sorted(self.groups.items())],
            "judges": self.judges.summary(),
            "advisor_verdicts": dict(Counter(j["advisor_verdict"] for j in jobs if j["advisor_verdict"])),
            "not_audited": self.not_audited(),
            **review,
            "jobs": jobs,
        })

    def not_audited(self) -> list[dict[str, str]]:
        """Every trajectory-looking file inside a job that was not audited (a candidate that could not be read, a
        harness log, the other files of a job whose trajectory is unusable), with the reason: ``loaders/job.py``
        lists them in the job's meta. Nothing under a root is dropped silently."""
        out = []
        for job_id in sorted(self.jobs):
            for entry in self.jobs[job_id]["meta"].get("not_audited") or ():
                if isinstance(entry, dict):
                    out.append({"job": job_id, "path": str(entry.get("path", "")), "reason": str(entry.get("reason", ""))})
        return out

    def advisor_verdict(self, job_id: str) -> str | None:
        """The job's advisor verdict (advisor/core.py, from its ADV records), "error" when an ADV item met
        unusable input, None without ADV items."""
        from ..advisor.core import from_records

        j = self.jobs[job_id]
        if j.get("advisor_error"):
            return "error"
        block = from_records(j["records"])
        return block["verdict"] if block else None

    def detail(self, job_id: str) -> dict[str, Any]:
        """What the roll-up holds of a job, so that ``trajaudit merge`` (report/merge.py) can rebuild it and
        recompute every section from per-job records: the job's meta, its error, and each record as it arrived
        (in arrival order, which decides the order of verdict reasons) without the fields the job entry carries,
        and any other per-job state ``add`` keeps (e.g. ``advisor_error``)."""
        j = self.jobs[job_id]
        return {**{k: v for k, v in j.items() if k not in ("records", "loads")},
                "records": {c: {k: v for k, v in r.items() if k not in DETAIL_OMITS} for c, r in j["records"].items()}}

    def trace_sections(self, jobs: list[SummaryJob]) -> dict[str, Any]:
        """Adds each job's trace-grader run verdict (``trace_grader``) to ``jobs``; returns the run-verdict
        counts, one pass^k entry per task group (trials of one task, agent, model and condition) and the original
        trace-grader's summary block (``trace_grader``; None when no trace-grader item judged a job)."""
        counts = dict.fromkeys(TRACE_VERDICTS, 0)
        blocks, axis = [], tracegrader.JUDGE_DISABLED
        for job in jobs:
            recs = self.jobs[job["job"]]["records"]
            block = trace_grader_block(self.jobs[job["job"]]["meta"], recs)
            job["trace_grader"] = None if block is None else {
                k: block[k] for k in ("verdict", "delivered", "step_count", "n_flags", "corrupt_success")}
            if block is not None:
                counts[block["verdict"]] += 1
                blocks.append(block)
                axis = next((d["judge_axis"] for r in recs.values()
                             if isinstance(d := r.get("data"), dict) and isinstance(d.get("judge_axis"), str)), axis)
        records = [{**j, "delivered": (j["trace_grader"] or {}).get("delivered")} for j in jobs]
        # the original trace-grader's own summary shape and exit code (report/tracegrader.py)
        return {"trace_verdicts": counts, "pass_k": pass_k_entries(records),
                "trace_grader": tracegrader.summary_block(blocks, axis)}

    def skills_sections(self, jobs: list[SummaryJob]) -> dict[str, Any]:
        """``skill_impact`` (with vs without skills per task, agent and model, keyed by the agent/shim name,
        qualified with @model / task/ only when needed to stay unique) and the non-blocking ``skills_flags``."""
        from ..principles import code_for, codes_for

        invocation, misuse_codes = code_for("skill_invocation"), codes_for("skill_misuse")
        trials = []
        for j in jobs:
            recs = self.jobs[j["job"]]["records"]
            sb1 = (recs.get(invocation) or {}).get("data") or {}
            # the skill-misuse principles fill one object, each its own flag (report/audit.py)
            misuse = {k: v for c in misuse_codes for k, v in ((recs.get(c) or {}).get("data") or {}).items()}
            trials.append({**j, "sb1": sb1.get("status") if sb1.get("status") in ("VERIFIED", "PARTIAL", "NOT_INVOKED")
                           else None, "leak": bool(sb1.get("leak")),
                           **skill_quote_fields(sb1),
                           "top_level_only": misuse.get("top_level_only"),
                           "partial_follow_through": misuse.get("partial_follow_through")})
        impact = skill_impact(trials)
        return {"skill_impact": impact, "skills_flags": skills_flags(trials, impact)}

    def pr_verdict(self, jobs: list[SummaryJob], override: dict[str, str] | None = None) -> PrVerdict:
        """``override``: job → the verdict to count instead of the job's own (--trajaudit-new-only)."""
        from ..principles import code_for
        from .review import waived

        oracle = {j["job"]: j["reward"] for j in jobs if j["oracle"]}
        ablation = code_for("tests_too_tight")
        tight = [j["job"] for j in jobs if (rec := self.jobs[j["job"]]["records"].get(ablation))
                 and (rec.get("data") or {}).get("perturbations_passing") and not waived(rec)]
        missing = {j["job"]: m for j in jobs if (m := self.jobs[j["job"]].get("missing"))}
        verdicts = {j["job"]: (override or {}).get(j["job"], j["verdict"]) for j in jobs}
        order = sorted({c for m in missing.values() for c in m}, key=_rank)
        verdict, reasons = pr_verdict(verdicts, oracle_rewards=oracle, tests_too_tight=tight, missing=missing,
                                      order=order)
        out: PrVerdict = {"verdict": verdict, "reasons": reasons, "oracle_rewards": oracle, "tests_too_tight": tight}
        counted = {j: m for j, m in missing.items() if verdicts[j] in ("INVALID", "INCOMPLETE")}
        if counted:  # the run did not audit every integrity principle on every job (completeness.py)
            codes = [c for c in order if any(c in m for m in counted.values())]
            out["incomplete"] = {"line": incomplete_line(counted, order), "jobs": sorted(counted), "codes": codes,
                                 "causes": list(dict.fromkeys(w for m in counted.values() for w in m.values()))}
        return out

    def write(self, out_dir: Path, keys: dict[str, str], verdicts: Verdicts | None = None) -> Summary:
        """The reports (each job's audit JSON, summary.json, report.md, report.html) under ``out_dir``;
        ``verdicts`` as for :meth:`summary`."""
        verdicts = self.verdicts() if verdicts is None else verdicts
        summary = self.summary(deferred_detail=True, verdicts=verdicts)
        rels = job_paths(list(verdicts))  # distinct ids never share a file (paths.py)
        for job_id, (verdict, reasons) in verdicts.items():
            j = self.jobs[job_id]
            audit = build_audit(job_id, j["meta"], j["records"], verdict, reasons, keys, j["error"],
                                j.get("advisor_error"))
            write_json_atomic(out_dir / "jobs" / rels[job_id] / f"audit-{safe_component(audit['config'])}.json",
                              audit, base=out_dir)
        write_json_atomic(out_dir / "summary.json", summary, base=out_dir)
        write_text_atomic(out_dir / "report.md", render_markdown(summary, self.jobs, _today()), base=out_dir)
        write_text_atomic(out_dir / "report.html", render_html(summary), base=out_dir)
        return summary

    def terminal_lines(self, summary: Summary | None = None, names: dict[str, str] | None = None,
                       verdicts: Verdicts | None = None) -> list[str]:
        """The verdict lines of the terminal summary; ``summary``: what :meth:`summary` (or :meth:`write`) returned
        for the roll-up as it is now, so that a large audit builds it once; ``names``: how a job is named on the
        terminal (the node id of its items, without the principle), by job id; ``verdicts`` as for
        :meth:`summary`."""
        verdicts = self.verdicts() if verdicts is None else verdicts
        counts = verdict_counts({k: v for k, (v, _) in verdicts.items()})
        head = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v))
        lines = [f"{len(verdicts)} job(s): {head or 'none'}"]
        full = self.summary(verdicts=verdicts) if summary is None else summary
        pv = full["pr_verdict"]
        # a shard's verdict covers its jobs only: it is never printed as the PR's (trajaudit merge makes that one)
        label = "PR verdict" if self.shard is None else f"Shard {self.shard['index']}/{self.shard['count']} verdict"
        lines.append(f"{label}: {pv['verdict']}" + (f" — {pv['reasons'][0]}" if pv["reasons"] else "")
                     + (f" (+{len(pv['reasons']) - 1})" if len(pv["reasons"]) > 1 else ""))
        if self.shard is not None:
            lines.append("one shard of the run, not the whole PR: `trajaudit merge` every shard's report for its verdict")
        if pv.get("incomplete") and pv["verdict"] != "INCOMPLETE":  # a found cheat outranks it: still say so
            lines.append(f"incomplete run: {pv['incomplete']['line']}")
        from .review import terminal_lines

        lines += terminal_lines(full)
        lines += trace_lines(full)
        if full.get("advisor_verdicts"):
            order = ("fail", "error", "inconclusive", "pass_mechanical_only", "pass")
            av = full["advisor_verdicts"]
            lines.append("advisor audit: " + ", ".join(f"{av[v]} {v}" for v in order if av.get(v)))
        judge_line = self.judges.terminal_line()
        if judge_line:
            lines.append(judge_line)
        if self.groups:
            per: dict[str, Counter[str]] = {}
            for (_, code), r in sorted(self.groups.items()):
                per.setdefault(code, Counter())[r["status"]] += 1
            lines.append("task groups: " + "; ".join(
                f"{code} " + ", ".join(f"{n} {st}" for st, n in sorted(c.items())) for code, c in per.items()))
        bad = [(k, v, r) for k, (v, r) in verdicts.items() if v not in ("CLEAN", "ORACLE")]
        severity = {"INVALID": 0, "ERROR": 1, "INCOMPLETE": 2, "WARN": 3}
        bad.sort(key=lambda x: (severity.get(x[1], 9), x[0]))
        for job_id, verdict, reasons in bad[:MAX_TERMINAL_JOBS]:
            first = reasons[0] if reasons else ""
            first = first if len(first) <= 160 else first[:159] + "…"
            more = f" (+{len(reasons) - 1})" if len(reasons) > 1 else ""
            lines.append(f"{verdict:<7} {(names or {}).get(job_id, job_id)}: {first}{more}")
        if len(bad) > MAX_TERMINAL_JOBS:
            lines.append(f"... and {len(bad) - MAX_TERMINAL_JOBS} more non-CLEAN job(s): see summary.json (--trajaudit-report)")
        skipped = full.get("not_audited") or []
        for e in skipped[:MAX_TERMINAL_JOBS]:
            lines.append(f"not audited: {e['job']}/{e['path']}: {e['reason']}")
        if len(skipped) > MAX_TERMINAL_JOBS:
            lines.append(f"... and {len(skipped) - MAX_TERMINAL_JOBS} more not audited: see summary.json (--trajaudit-report)")
        return lines
