"""Pure roll-up functions: per-job verdict (audit-general.md aggregation rule, first match wins).

Choices where the seed is silent (documented in the README):
- N/A never blocks CLEAN, except that a job whose P1 or P2 could not be judged is not CLEAN (WARN);
- a C0 FAIL other than P1/P2 (e.g. P4 "floor below") makes the job WARN (needs review), not INVALID;
- P15 is information only and never changes the verdict;
- unusable input gives the verdict ERROR (outside the seed's enum), and an oracle run is ORACLE (never audited).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

VERDICTS = ("CLEAN", "WARN", "INVALID", "ERROR", "ORACLE")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the roll-up needs of one principle's result (travels from xdist workers as builtins)."""

    status: str  # PASS | WARN | FAIL | N/A
    tier: str
    affects_verdict: bool = True
    evidence: str = ""
    flipped_signal: bool = False


def job_verdict(outcomes: Mapping[str, Outcome], *, error: str | None = None,
                oracle: bool = False) -> tuple[str, list[str]]:
    """Return (verdict, reasons)."""
    if error:
        return "ERROR", [error]
    if oracle:
        return "ORACLE", ["oracle run: not audited"]
    invalid = [f"{c} FAIL: {o.evidence}" for c, o in outcomes.items() if c in ("P1", "P2") and o.status == "FAIL"]
    if invalid:
        return "INVALID", invalid
    flipped = [f"{c}: flipped_signal: {o.evidence}" for c, o in outcomes.items() if o.flipped_signal]
    if flipped:
        return "INVALID", flipped
    warn = [f"{c} {o.status}: {o.evidence}" for c, o in outcomes.items()
            if o.tier == "C0" and o.affects_verdict and o.status in ("WARN", "FAIL")]
    warn += [f"{c} N/A: anti-cheat not judged ({o.evidence})" for c, o in outcomes.items()
             if c in ("P1", "P2") and o.status == "N/A"]
    if warn:
        return "WARN", warn
    return "CLEAN", []


def verdict_counts(verdicts: Mapping[str, str]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICTS, 0)
    for v in verdicts.values():
        counts[v] = counts.get(v, 0) + 1
    return counts
