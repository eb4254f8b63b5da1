"""Per-principle WARN/FAIL rates on the shared corpus of real third-party runs (no pytest, no judges).

    python benchmarks/corpus_rates.py [CORPUS] [--markdown] [--evidence] [--literal] [--principles P8,P14]
                                      [--data P8]

CORPUS defaults to ``../shared/corpus`` relative to the repository. Every job under it is discovered the way the
plugin collects them (``loaders.multi.find_all_jobs``: directory jobs, loose trajectory files a loader claims,
one job per member of a multi-record file) and audited by the plugin's core (``engine.audit_job``) with every
registered principle the plugin would collect for it (the advisor family's ADV items only where the job's
privileged material is known, as in the plugin), default settings and no LLM judge. Three populations are
reported:

- **all jobs**: everything discovered, fixtures included;
- **real runs**: all jobs minus the fixtures listed in :data:`FIXTURES` (hand-written or scripted files that the
  corpus READMEs say are not real agent runs);
- **clean real runs**: real runs that loaded (no unusable input), are not oracle runs, have a reward > 0 and no
  P1/P2 FAIL. A WARN here is a false alarm until a reader of its evidence says otherwise.

For each population and principle: ``items`` (audited jobs that have this principle's item), ``applied`` (items
that returned PASS, WARN or FAIL, i.e. not N/A), WARN and FAIL counts with their rate over ``applied``, the N/A count and internal errors. ``verdict`` says
whether the principle's WARN/FAIL changes the job verdict (tier C0 and not information-only). Then the per-job
verdict counts (``aggregate.job_verdict``, the plugin's rule). ``--evidence`` adds, per principle, the distinct
WARN evidence strings of the real runs (truncated), each with how many jobs gave it, so a reader can judge noise.
``--data P8`` prints, per audited real run, the numeric data of a principle's finding (P8's counters, the run
length): the figures its thresholds were calibrated on.

The output is deterministic (jobs sorted by path, no timings): the same tree and code give the same bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_trajaudit.advisor.collect import advisor_known
from pytest_trajaudit.aggregate.verdicts import VERDICTS, Outcome, job_verdict
from pytest_trajaudit.discover.jobs import JobRef
from pytest_trajaudit.loaders.multi import find_all_jobs
from pytest_trajaudit.principles import Principle, registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.settings import Settings

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"

# Paths (relative to the corpus, POSIX, prefix match) that hold fixtures rather than real agent runs, with the
# corpus README's reason. Everything else under the corpus is a real run written by a real harness and model.
FIXTURES: tuple[tuple[str, str], ...] = (
    ("harbor/benchflow-ai__benchflow/", "hand-written BenchFlow experiment-review eval fixtures (harbor/README.md)"),
    ("claude-code/agentcmd-fixtures/individual/", "per-tool Claude Code fixtures of one or two events"),
    ("codex/agentcmd-fixtures/individual/", "per-event Codex fixtures"),
    ("codex/agentcmd-exec-json-stream/", "`codex exec --json` parser fixtures of a few events, no task"),
    ("mini-swe-agent/", "mini-swe-agent test fixtures driven by a scripted model (corpus README)"),
    ("trace-grader/", "trace-grader self-test fixtures, hand-written"),
    ("swe-agent/SWE-agent__SWE-agent/trajectories/demonstrations/",
     "replay of a human-written demonstration: scripted actions, no model (swe-agent/README.md)"),
)
EVIDENCE_WIDTH = 160


@dataclass
class Row:
    """One audited job: its id (path relative to the corpus, plus the record id of a multi-record file)."""

    job: str
    fixture: bool
    reward: float | None
    oracle: bool
    error: str | None
    verdict: str
    results: dict[str, tuple[str, str]] = field(default_factory=dict)  # code → (status, evidence)
    data: dict[str, dict] = field(default_factory=dict)  # code → the finding's numeric data (for --data)

    @property
    def real(self) -> bool:
        return not self.fixture

    @property
    def clean_real(self) -> bool:
        """Real, loaded, not an oracle, reward > 0, no P1/P2 FAIL (the definition in the module docstring)."""
        return (self.real and self.error is None and not self.oracle and self.reward is not None
                and self.reward > 0 and all(self.results.get(c, ("", ""))[0] != "FAIL" for c in ("P1", "P2")))


def job_id(ref: JobRef, corpus: Path) -> str:
    base = ref.anchor if ref.layout in ("bare-file", "record") else ref.dir
    try:
        rel = base.relative_to(corpus).as_posix()
    except ValueError:
        rel = base.as_posix()
    return f"{rel}::{ref.member}" if ref.member is not None else rel


def is_fixture(job: str) -> bool:
    return any(job.startswith(prefix) for prefix, _ in FIXTURES)


def audit_corpus(corpus: Path, principles: Sequence[Principle], cfg: Settings) -> list[Row]:
    tiers = {p.code: p for p in principles}
    rows = []
    refs = sorted(find_all_jobs(corpus), key=lambda r: job_id(r, corpus))
    for ref in refs:
        jid = job_id(ref, corpus)
        # as the plugin collects them (nodes.JobNode.collect): ADV items only where privileged material is known
        adv = advisor_known(ref, cfg.privileged_roots, cfg.tasks_dirs)
        audit = audit_job(ref, cfg, [p for p in principles if adv or p.family != "advisor"], judges=False)
        results = {c: (r.status, r.internal_error or r.evidence) for c, r in audit.results.items()}
        outcomes = {c: Outcome(r.status, tiers[c].tier, tiers[c].role, r.evidence,
                               bool((r.data or {}).get("flipped_signal")), tiers[c].na_warns)
                    for c, r in audit.results.items() if r.status in ("PASS", "WARN", "FAIL", "N/A")}
        oracle = bool(audit.meta.get("oracle"))
        verdict, _ = job_verdict(outcomes, error=audit.error, oracle=oracle)
        reward = audit.meta.get("reward")
        data = {c: {k: v for k, v in (r.data or {}).items() if isinstance(v, int | float) and not isinstance(v, bool)}
                for c, r in audit.results.items()}
        rows.append(Row(jid, is_fixture(jid), reward if isinstance(reward, int | float) else None, oracle,
                        audit.error, verdict, results, data))
    return rows


# --------------------------------------------------------------------------------------------------- tables

HEAD = ("principle", "verdict", "items", "applied", "WARN", "WARN rate", "FAIL", "FAIL rate", "N/A", "errors")


def _rate(n: int, d: int) -> str:
    return f"{100 * n / d:.0f}%" if d else "-"


def principle_table(rows: Sequence[Row], principles: Sequence[Principle]) -> list[tuple[str, ...]]:
    out = []
    for p in principles:
        c = Counter(r.results[p.code][0] for r in rows if p.code in r.results)
        applied = c["PASS"] + c["WARN"] + c["FAIL"]
        counts_verdict = "yes" if p.tier == "C0" and p.affects_verdict else "no"
        out.append((p.code, counts_verdict, str(sum(c.values())), str(applied), str(c["WARN"]), _rate(c["WARN"], applied), str(c["FAIL"]),
                    _rate(c["FAIL"], applied), str(c["N/A"]), str(c["ERROR"])))
    return out


def verdict_table(rows: Sequence[Row]) -> list[tuple[str, ...]]:
    c = Counter(r.verdict for r in rows)
    return [tuple(str(c[v]) for v in VERDICTS) + (str(len(rows)),)]


def render(head: Sequence[str], body: Iterable[Sequence[str]], markdown: bool) -> str:
    body = [tuple(r) for r in body]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*r) for r in (tuple(head), *body))


def heading(text: str, markdown: bool) -> str:
    return f"### {text}" if markdown else f"== {text} =="


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_WIDTH else text[: EVIDENCE_WIDTH - 1] + "…"


def evidence_lines(rows: Sequence[Row], principles: Sequence[Principle], markdown: bool) -> list[str]:
    """Per principle, the distinct (truncated) WARN evidence strings of the real runs: count, and whether any
    of those jobs is a clean real run."""
    lines: list[str] = []
    for p in principles:
        seen: dict[str, list[Row]] = {}
        for r in rows:
            status, ev = r.results.get(p.code, ("", ""))
            if r.real and status == "WARN":
                seen.setdefault(_short(ev), []).append(r)
        if not seen:
            continue
        lines.append(f"{heading(f'{p.code} WARN evidence ({sum(map(len, seen.values()))} real runs)', markdown)}")
        if markdown:
            lines.append("")
        for ev, rs in sorted(seen.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            clean = sum(1 for r in rs if r.clean_real)
            tag = f"×{len(rs)}, {clean} clean"
            first = rs[0].job
            lines.append(f"- {tag}: `{ev}` ({first})" if markdown else f"  [{tag}] {ev}\n      e.g. {first}")
        lines.append("")
    return lines


def _shown(corpus: Path) -> str:
    """The corpus path relative to the repository when it can be (the same text on every machine)."""
    try:
        return os.path.relpath(corpus, REPO) + "/"
    except ValueError:
        return corpus.as_posix()


def data_table(rows: Sequence[Row], code: str, markdown: bool) -> list[str]:
    """One line per audited real run: its status, reward and the numeric data of ``code``'s finding (the counters
    a threshold is calibrated on)."""
    keys = sorted({k for r in rows if r.real for k in r.data.get(code, {})})
    body = [(r.job, r.results[code][0], "-" if r.reward is None else f"{r.reward:g}", "yes" if r.clean_real else "no",
             *(str(r.data[code].get(k, "")) for k in keys))
            for r in rows if r.real and code in r.results]
    return [heading(f"{code} data per real run", markdown), "",
            render(("job", "status", "reward", "clean", *keys), body, markdown), ""]


def report(rows: Sequence[Row], principles: Sequence[Principle], corpus: Path, *, markdown: bool,
           evidence: bool, literal: bool, data: Sequence[str] = ()) -> str:
    real = [r for r in rows if r.real]
    clean = [r for r in rows if r.clean_real]
    audited = [r for r in rows if r.error is None]
    out = [
        f"corpus: {_shown(corpus)} ({len(rows)} jobs discovered: {len(audited)} audited, "
        f"{len(rows) - len(audited)} unusable input; {len(real)} real runs, {len(rows) - len(real)} fixtures; "
        f"{len(clean)} clean real runs); mode: {'literal' if literal else 'precise'}; judges: off",
        "",
    ]
    for title, pop in (("all jobs", rows), ("real runs", real), ("clean real runs", clean)):
        loaded = sum(1 for r in pop if r.error is None)
        out += [heading(f"Per principle: {title} ({len(pop)} jobs, {loaded} audited)", markdown), ""]
        out += [render(HEAD, principle_table(pop, principles), markdown), ""]
    out += [heading("Per-job verdicts", markdown), ""]
    body = [(title, *verdict_table(pop)[0]) for title, pop in (("all jobs", rows), ("real runs", real),
                                                               ("clean real runs", clean))]
    out += [render(("jobs", *VERDICTS, "total"), body, markdown), ""]
    if evidence:
        out += evidence_lines(rows, principles, markdown)
    for code in data:
        out += data_table(rows, code, markdown)
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS), help="corpus root (default ../shared/corpus)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("--evidence", action="store_true", help="list the distinct WARN evidence strings of real runs")
    ap.add_argument("--literal", action="store_true", help="audit as --trajaudit-literal does")
    ap.add_argument("--principles", default="", help="comma-separated codes (default: every registered principle)")
    ap.add_argument("--data", default="", metavar="CODES",
                    help="comma-separated codes: per real run, the numeric data of their findings (e.g. P8)")
    args = ap.parse_args(argv)
    corpus = Path(os.path.abspath(args.corpus))  # not resolved: shown as given, e.g. ../shared/corpus/
    if not corpus.is_dir():
        print(f"corpus_rates: {corpus} is not a directory", file=sys.stderr)
        return 2
    reg = registry()
    codes = [c.strip() for c in args.principles.split(",") if c.strip()]
    data_codes = [c.strip() for c in args.data.split(",") if c.strip()]
    unknown = [c for c in (*codes, *data_codes) if c not in reg]
    if unknown:
        print(f"corpus_rates: unknown principle code(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    principles = [reg[c] for c in codes] if codes else list(reg.values())
    rows = audit_corpus(corpus, principles, Settings(literal=args.literal))
    sys.stdout.write(report(rows, principles, corpus, markdown=args.markdown, evidence=args.evidence,
                            literal=args.literal, data=data_codes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
