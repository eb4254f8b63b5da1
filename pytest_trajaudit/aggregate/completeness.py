"""Which integrity principles did not run on which job, and why: a partial run is never an approval.

A principle declared ``role="integrity"`` (the built-in ones docs/verdicts.md lists, and any third-party principle
that declares the same role) is one whose FAIL makes a job INVALID. A job on which one of them produced no finding
cannot be called CLEAN: its verdict is INCOMPLETE, and the PR verdict of such a run is INCOMPLETE (or REJECT when a
FAIL was found anyway). An integrity item produces no finding when it was

- not collected: ``--trajaudit-principles`` left it out;
- deselected: ``-k``, ``-m``, ``--deselect``, node ids on the command line, ``--lf``, ``--sw`` or a plugin;
- not reached: ``-x`` / ``--maxfail`` stopped the run, it was interrupted (Ctrl-C), or its xdist worker crashed;
- errored: the principle raised (an internal error), so it judged nothing.

The process that collects (pytest's own process, or each xdist worker) builds a :func:`manifest` at the end
of collection: job id → the job's integrity codes and which of them were not collected or deselected. The
roll-up (``report/summary.py``) merges the manifests it receives, compares them with the records that arrived
and names, per job, each integrity code without a finding and its cause. Pure: no pytest (the adapter passes
plain values and duck-typed nodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# job id → [integrity codes a full run audits it with, those not collected, those deselected]
Manifest = dict[str, list[list[str]]]

RESULT_STATUSES = ("PASS", "WARN", "FAIL", "N/A")
ERRORED = "internal error"  # the cause of an integrity code whose principle raised on the job


def manifest(jobs: Iterable[Any], items: Iterable[Any], collected: Iterable[str]) -> Manifest:
    """The manifest of one collection. ``jobs``: every job node collected (``job_id`` and ``integrity``, the
    integrity codes it is audited with in a full run, in registry order); ``items``: the items left to run after
    every deselection (a job's item has ``parent`` = its job and ``principle.code``; other items are ignored);
    ``collected``: the codes items were made for (``--trajaudit-principles``)."""
    made = set(collected)
    selected: dict[int, set[str]] = {}
    for it in items:
        p = getattr(it, "principle", None)
        if p is not None:
            selected.setdefault(id(it.parent), set()).add(p.code)
    out: Manifest = {}
    for job in jobs:
        expected = list(job.integrity)
        chosen = selected.get(id(job), set())
        out[job.job_id] = [expected, [c for c in expected if c not in made],
                           [c for c in expected if c in made and c not in chosen]]
    return out


def describe_selection(*, keyword: str = "", markexpr: str = "", deselect: Sequence[str] = (),
                       node_ids: Sequence[str] = (), last_failed: bool = False, stepwise: bool = False,
                       paths: Sequence[str] = ()) -> str:
    """What deselected items, as the user typed it: ``selection: -k P10``. ``--deselect`` and node ids are
    shortened to their item part (``--deselect …::P1``); ``paths``: positional paths inside an audit root, which
    leave its other jobs out; a deselection by none of these is a plugin's."""
    parts = []
    if paths:
        parts.append("paths " + ", ".join(paths[:3]) + (", …" if len(paths) > 3 else ""))
    if keyword:
        parts.append(f"-k {keyword}")
    if markexpr:
        parts.append(f"-m {markexpr}")
    parts += [f"--deselect {_short(d)}" for d in deselect]
    if node_ids:
        parts.append("node ids " + ", ".join(_short(n) for n in node_ids[:3]) + (", …" if len(node_ids) > 3 else ""))
    if last_failed:
        parts.append("--lf")
    if stepwise:
        parts.append("--sw")
    return "selection: " + (" ".join(parts) if parts else "deselected by a plugin")


def describe_stop(*, maxfail: int = 0, exitfirst: bool = False, interrupted: bool = False) -> str:
    """Why a selected item did not run: ``stopped by -x``, ``stopped by --maxfail=2``, ``interrupted``."""
    if maxfail:
        return "stopped by -x" if exitfirst and maxfail == 1 else f"stopped by --maxfail={maxfail}"
    return "interrupted" if interrupted else "not run"


def _short(nodeid: str) -> str:
    return f"…::{nodeid.rsplit('::', 1)[1]}" if "::" in nodeid else nodeid


@dataclass
class Coverage:
    """What the roll-up knows about which integrity items were meant to run. ``integrity``: the integrity
    codes of the session's registry, expected of a job that sent records but no manifest entry (a worker that
    died before sending its manifest): the check then errs towards INCOMPLETE."""

    integrity: tuple[str, ...] = ()
    jobs: Manifest = field(default_factory=dict)
    principles_cause: str = "selection: --trajaudit-principles"
    deselect_cause: str = "selection: deselected by a plugin"
    stop_cause: str = "not run"

    def add(self, m: Mapping[str, Sequence[Sequence[str]]] | None) -> None:
        """Merge one collection's manifest (every xdist worker collects the same jobs)."""
        for job, entry in (m or {}).items():
            if isinstance(job, str) and isinstance(entry, list | tuple) and len(entry) == 3:
                self.jobs.setdefault(job, [list(x) for x in entry])

    def missing(self, job_id: str, records: Mapping[str, Mapping[str, Any]],
                errored: Mapping[str, str] | None = None) -> dict[str, str]:
        """Integrity code → why it produced no finding on ``job_id`` (empty when every one did). ``records``:
        code → record of the job's findings; ``errored``: code → evidence of an item that raised."""
        expected, not_collected, deselected = self.jobs.get(job_id) or [list(self.integrity), [], []]
        out: dict[str, str] = {}
        for code in expected:
            if (records.get(code) or {}).get("status") in RESULT_STATUSES:
                continue
            if code in not_collected:
                out[code] = self.principles_cause
            elif code in deselected:
                out[code] = self.deselect_cause
            elif code in (errored or {}):
                out[code] = ERRORED
            else:
                out[code] = self.stop_cause
        return out


# --- wiring helpers for the pytest adapter (duck-typed: a pytest Config is passed in, pytest is not imported) --

# exit status of a run whose PR verdict is INCOMPLETE and no item failed (docs/verdicts.md): clear of pytest's own
# codes, which are numbered from 0 upwards (0-6 in pytest 9.2; tests/test_partial_runs.py fails if one reaches it)
EXIT_INCOMPLETE = 10
_INTERRUPTED = 2  # pytest.ExitCode.INTERRUPTED


def session_integrity(declared: Mapping[str, Any]) -> tuple[str, ...]:
    """The integrity codes a job is held to when nothing more is known of it (a job a worker collected but sent
    no manifest of, a job a narrowing path left out): the session's, but the advisor family's (those apply only
    to a job whose privileged material is known)."""
    return tuple(c for c, p in declared.items() if p.role == "integrity" and p.family != "advisor")


def coverage_for(config: Any, declared: Mapping[str, Any], collected: Iterable[str],
                 narrowed: Sequence[str] = ()) -> Coverage:
    """The session's :class:`Coverage` before any manifest arrives: the integrity codes of ``declared`` (the
    session's registry), and the causes of a not-collected or deselected integrity item read from the options.
    ``collected``: the codes ``--trajaudit-principles`` kept; ``narrowed``: the positional paths and node ids that
    select part of an audit root."""
    opt = config.option
    chosen = set(collected)
    principles = ",".join(c for c in declared if c in chosen)
    args = list(dict.fromkeys([*(str(a) for a in getattr(opt, "file_or_dir", None) or []), *narrowed]))
    return Coverage(
        integrity=session_integrity(declared),
        principles_cause=f"selection: --trajaudit-principles={principles}",
        deselect_cause=describe_selection(
            keyword=getattr(opt, "keyword", "") or "", markexpr=getattr(opt, "markexpr", "") or "",
            deselect=[str(d) for d in getattr(opt, "deselect", None) or []],
            node_ids=[a for a in args if "::" in a], last_failed=bool(getattr(opt, "lf", False)),
            stepwise=bool(getattr(opt, "stepwise", False)), paths=[a for a in narrowed if "::" not in a]))


def stop_cause(config: Any, exitstatus: int) -> str:
    """Why a selected integrity item did not run, from ``-x`` / ``--maxfail`` and the session's exit status."""
    opt = config.option
    args = [str(a) for a in getattr(getattr(config, "invocation_params", None), "args", ()) or ()]
    exitfirst = any(a in ("-x", "--exitfirst") or (a.startswith("-") and not a.startswith("--") and "x" in a[1:])
                    for a in args)
    return describe_stop(maxfail=int(getattr(opt, "maxfail", 0) or 0), exitfirst=exitfirst,
                         interrupted=int(exitstatus) == _INTERRUPTED)


def exit_status(exitstatus: int, pr_verdict: str, *, allow: bool) -> int:
    """The session's exit status once the PR verdict is known: an INCOMPLETE run that pytest would end with 0
    (nothing failed) exits :data:`EXIT_INCOMPLETE`, or 0 with ``--trajaudit-allow-incomplete``; one in which
    every item was deselected (pytest's 5) exits :data:`EXIT_INCOMPLETE` too, and keeps 5 when allowed. Any other
    status (a FAIL's 1, an interrupt's 2, a usage error's 4) stands."""
    if pr_verdict != "INCOMPLETE" or int(exitstatus) not in (0, 5):
        return int(exitstatus)
    if allow:
        return int(exitstatus)
    return EXIT_INCOMPLETE
