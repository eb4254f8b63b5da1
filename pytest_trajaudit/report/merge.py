"""``trajaudit merge OUT_DIR SHARD_DIR...``: combine the reports of ``--trajaudit-shard I/N`` runs into the report
an unsharded run writes. Pure: no pytest.

Every shard's ``summary.json`` carries each job's roll-up state (``jobs[].detail``: meta, error, records as they
arrived) and the group items' records (``groups``). The merge rebuilds one :class:`Rollup` from them and writes
``summary.json``, ``report.md`` and ``jobs/`` with the same code an unsharded run uses, so PR verdict, job
verdicts, configs, pass^k, skill impact and trace verdicts are recomputed from per-job records (never averaged)
and the files are byte-identical to an unsharded run's (the merged summary has no ``shard`` field).

Refused, with one line naming the problem: a directory without summary.json, a summary that is not a shard
(no ``shard`` field) or lacks per-job detail, shards of different counts or settings (``shard.settings``, a
digest of the settings, principle codes and group options) or modes, a shard given twice or missing, and a job
or group reported by two shards.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, cast

import orjson

from ..aggregate.completeness import EXIT_INCOMPLETE
from ..gcpause import paused_gc
from ..model import UnusableInput
from ..records import RollupJob, Summary
from ..safeio import Budget, read_bytes
from ..scan.redact import clean
from .summary import Rollup


class MergeError(Exception):
    """Shards that cannot be merged (one line for the user)."""


def load_shard(d: Path) -> dict[str, Any]:
    path = d / "summary.json" if d.is_dir() else d
    try:
        # safeio's reader: summary.json itself is never followed as a symlink, a FIFO or device never opened for
        # reading (the shard directory is the caller's argument: resolved); no size limit of its own (a 25,000-job
        # shard's summary is about 500 MB)
        data = read_bytes(Path(os.path.realpath(path.parent)), path.name,
                          Budget(max_file=sys.maxsize, max_job=sys.maxsize))
        try:
            doc = orjson.loads(data)  # a 10,000-job summary is ~170 MB: several times faster than json
        except orjson.JSONDecodeError:  # what orjson refuses and json takes (e.g. an integer past 64 bits)
            doc = json.loads(data.decode("utf-8"))
    except UnusableInput as exc:
        if exc.reason == "file not found":
            raise MergeError(f"{path}: not found (give the --trajaudit-report directory of each shard)") from None
        raise MergeError(f"{path}: unreadable summary.json: {exc.reason}") from None
    except RecursionError:
        raise MergeError(f"{path}: unreadable summary.json: nested too deeply") from None
    except MemoryError:
        raise MergeError(f"{path}: unreadable summary.json: not enough memory to parse it") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MergeError(f"{path}: unreadable summary.json: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema_version") != "trajaudit-summary-1":
        raise MergeError(f"{path}: not a trajaudit summary.json (schema_version trajaudit-summary-1)")
    shard = doc.get("shard")
    if not isinstance(shard, dict) or not isinstance(shard.get("index"), int) or not isinstance(shard.get("count"), int):
        raise MergeError(f"{path}: not a shard's summary (no shard field): audit with --trajaudit-shard I/N")
    _check_shape(path, doc)
    doc["_path"] = str(path)
    return doc


def _check_shape(path: Path, doc: dict[str, Any]) -> None:
    """Refuse, naming the file, a shard whose parts the merge reads are not of the types a shard writes (a file
    edited by hand or by an agent): the merge then never fails on it half-way with a traceback."""
    def bad(what: str) -> MergeError:
        return MergeError(f"{path}: {what}: not a trajaudit shard's summary.json")

    jobs, groups = doc.get("jobs") or [], doc.get("groups") or []
    if not isinstance(jobs, list) or not isinstance(groups, list):
        raise bad("jobs or groups is not a list")
    for j in jobs:
        if not isinstance(j, dict) or not isinstance(j.get("job"), str):
            raise bad("a jobs entry without a job id")
        detail = j.get("detail")
        if not isinstance(detail, dict):
            raise MergeError(f"{path}: job {j['job']} has no per-job detail (written by an older pytest-trajaudit)")
        if not isinstance(detail.get("records") or {}, dict) or not isinstance(detail.get("meta") or {}, dict) \
                or not isinstance(j.get("loads") or 0, int):
            raise bad(f"job {j['job']}: its records, meta or loads are of the wrong type")
    for g in groups:
        if not isinstance(g, dict) or not isinstance(g.get("group"), str) or not isinstance(g.get("code"), str):
            raise bad("a groups entry without a group and a code")
    for name in ("waivers", "baseline", "judges"):
        if not isinstance(doc.get(name) or {}, dict):
            raise bad(f"{name} is not an object")
    if not isinstance((doc.get("waivers") or {}).get("entries") or [], list) \
            or not isinstance((doc.get("judges") or {}).get("models") or [], list):
        raise bad("waivers.entries or judges.models is not a list")
    findings = (doc.get("baseline") or {}).get("findings") or []
    if not isinstance(findings, list) or not all(
            isinstance(f, dict) and all(isinstance(f.get(k), str) for k in ("fingerprint", "job", "code"))
            for f in findings):
        raise bad("baseline.findings is not a list of findings")


def header(doc: dict[str, Any]) -> dict[str, Any]:
    """What :func:`check` needs of a shard's summary, kept once its records are taken: its path, shard field, mode,
    waivers, a key of its baseline, and the ids of its jobs and groups."""
    return {"_path": doc["_path"], "shard": doc["shard"], "mode": doc.get("mode"),
            "waivers": {"entries": (doc.get("waivers") or {}).get("entries")}, "baseline_key": _baseline_key(doc),
            "ids": [j["job"] for j in doc.get("jobs") or []]
            + [f"{g['group']}::{g['code']}" for g in doc.get("groups") or []]}


def check(headers: list[dict[str, Any]]) -> None:
    """Refuse shards that do not add up to one run (each given by its :func:`header`)."""
    if not headers:
        raise MergeError("no shard directories given")
    first = headers[0]
    count = first["shard"]["count"]
    for d in headers[1:]:
        for what, a, b in (("shard count", d["shard"]["count"], count),
                           ("settings", d["shard"].get("settings"), first["shard"].get("settings")),
                           ("mode", d["mode"], first["mode"]),
                           ("waivers", d["waivers"]["entries"], first["waivers"]["entries"]),
                           ("baseline", d["baseline_key"], first["baseline_key"])):
            if a != b:
                raise MergeError(f"{d['_path']}: {what} {a} differs from {first['_path']}'s {b}: shards of "
                                 "different runs or settings cannot be merged")
    seen: dict[int, str] = {}
    for d in headers:
        i = d["shard"]["index"]
        if not 1 <= i <= count:
            raise MergeError(f"{d['_path']}: shard index {i} outside 1..{count}")
        if i in seen:
            raise MergeError(f"shard {i}/{count} given twice: {seen[i]} and {d['_path']}")
        seen[i] = d["_path"]
    absent = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if absent:
        raise MergeError(f"missing shard(s) {', '.join(absent)}: the merged verdict would not cover every job")
    owner: dict[str, str] = {}
    for d in headers:
        for job in d["ids"]:
            if job in owner:
                raise MergeError(f"{job} is in two shards ({owner[job]} and {d['_path']}): shards overlap")
            owner[job] = d["_path"]


def _baseline_key(doc: dict[str, Any]) -> Any:
    """What must agree between shards about their baseline: its findings and --trajaudit-new-only."""
    b = doc.get("baseline")
    if not isinstance(b, dict):
        return None
    import hashlib

    prints = "\n".join(sorted(str(f.get("fingerprint", "")) for f in b.get("findings") or []))
    return f"new_only={bool(b.get('new_only'))} findings={hashlib.sha256(prints.encode()).hexdigest()[:12]}"


class Builder:
    """One roll-up built from shard summaries taken one at a time: :meth:`take` moves a shard's per-job records
    out of its summary (the rest of the summary can then be let go), :meth:`finish` makes the roll-up. The
    waivers' entries and the baseline come from the first shard (``check`` makes sure they all agree): the stale
    waivers and the baseline diff are recomputed over every job."""

    def __init__(self) -> None:
        self.rollup: Rollup | None = None
        self.keys: dict[str, str] = {}  # principle code → audit-JSON key
        self.models: list[str] = []
        self.jobs: list[tuple[str, RollupJob]] = []
        self.groups: list[dict[str, Any]] = []

    def take(self, doc: dict[str, Any]) -> None:
        if self.rollup is None:
            from .baseline import Baseline

            self.rollup = Rollup(doc.get("mode") or "precise")
            if isinstance(doc.get("waivers"), dict):
                self.rollup.waivers = list(doc["waivers"].get("entries") or [])
            if isinstance(doc.get("baseline"), dict):
                self.rollup.baseline = Baseline.from_json(doc["baseline"])
        for m in ((doc.get("judges") or {}).get("models") or []):
            if m not in self.models:
                self.models.append(m)
        for entry in doc.get("jobs") or []:
            # the shard's entry gives up its detail: its record dicts become the roll-up's records in place (the
            # keys added last, as a job's records carry them), so a merge holds one copy of every record
            job_id, detail = entry["job"], entry.pop("detail")
            state = {k: v for k, v in detail.items() if k != "records"}
            state.setdefault("meta", {})
            state.setdefault("error", None)
            records = {}
            for code, r in (detail.get("records") or {}).items():
                if not isinstance(r, dict):
                    raise MergeError(f"job {job_id}: its {code} record is not a JSON object: not a trajaudit shard")
                r.update(job=job_id, code=code, meta=state["meta"], loads=entry.get("loads", 0))
                records[code] = r
                if r.get("key"):
                    self.keys.setdefault(code, r["key"])
            # the job's state as a shard's Rollup.add kept it (RollupJob's optional keys come back with it)
            self.jobs.append((job_id, cast(RollupJob, {
                "meta": state["meta"], "records": records, "error": state["error"], "loads": entry.get("loads", 0),
                **{k: v for k, v in state.items() if k not in ("meta", "error")}})))
        self.groups.extend(dict(g) for g in doc.get("groups") or [])

    def finish(self) -> tuple[Rollup, dict[str, str]]:
        rollup = self.rollup if self.rollup is not None else Rollup("precise")
        rollup.judges.models = self.models
        self.jobs.sort(key=lambda kv: kv[0])
        for job_id, job in self.jobs:  # in job order, as an unsharded run's reports arrive per job
            rollup.jobs[job_id] = job
            for code, r in job["records"].items():
                if r.get("judge") or (r.get("data") or {}).get("judge_labels"):
                    rollup.judges.add(f"{job_id}::{code}", r)
        self.jobs = []
        for g in self.groups:
            rollup.add(g)
        self.groups = []
        return rollup, self.keys


def rollup_from(docs: list[dict[str, Any]]) -> tuple[Rollup, dict[str, str]]:
    """One roll-up holding every shard's jobs and groups, and the principle code → audit-JSON key map (the
    shards' record dicts become the roll-up's: see :class:`Builder`)."""
    b = Builder()
    for d in docs:
        b.take(d)
    return b.finish()


def rollup_lines(summary: Summary) -> list[str]:
    counts = ", ".join(f"{n} {v}" for v, n in summary["verdicts"].items() if n)
    pv = summary["pr_verdict"]
    lines = [f"{summary['n_jobs']} job(s): {counts or 'none'}",
             f"PR verdict: {pv['verdict']}" + (f" — {pv['reasons'][0]}" if pv["reasons"] else "")]
    if pv.get("incomplete") and pv["verdict"] != "INCOMPLETE":
        lines.append(f"incomplete run: {pv['incomplete']['line']}")
    from .review import terminal_lines

    return lines + terminal_lines(summary)


def merge(out_dir: Path, shard_dirs: list[Path]) -> Summary:
    """Merge the shards' reports into ``out_dir`` (summary.json, report.md, report.html, jobs/); returns the summary."""
    out = Path(out_dir).resolve()
    for d in shard_dirs:
        if Path(d).resolve() in (out, out / "summary.json"):
            raise MergeError(f"{d}: the output directory is one of the shards (write the merge elsewhere)")
    with paused_gc():  # every shard's records: millions of objects, acyclic, alive until written (gcpause.py)
        headers, builder = [], Builder()
        for d in shard_dirs:  # one shard's whole summary at a time: its records are taken, the rest let go
            doc = load_shard(Path(d))
            headers.append(header(doc))
            builder.take(doc)
            del doc
        check(headers)  # before anything is written
        rollup, keys = builder.finish()
        return rollup.write(Path(out_dir), keys)


def main(argv: list[str]) -> int:
    """``trajaudit merge OUT_DIR SHARD_DIR...``: exit 0 when the merged PR verdict is APPROVE (WITH CAVEATS),
    1 for MAJOR CHANGES NEEDED or REJECT, 10 for INCOMPLETE (the shards audited a subset: completeness.py), 4 when
    the shards cannot be merged."""
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        asked = argv[:1] in (["-h"], ["--help"])
        print("usage: trajaudit merge OUT_DIR SHARD_DIR [SHARD_DIR ...]\n"
              "Combines the --trajaudit-report directories of --trajaudit-shard I/N runs into one report.",
              file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 4
    out, shards = Path(argv[0]), [Path(a) for a in argv[1:]]
    try:
        summary = merge(out, shards)
    except MergeError as exc:  # its text names job ids and paths read from the shards: made one clean line
        print(f"trajaudit merge: {clean(str(exc))}", file=sys.stderr)
        return 4
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        # a value deeper in a shard's records than load_shard checks is not what a shard writes: refused in one
        # line (OUT_DIR may then hold part of a merge, which is no report: the exit status says so)
        print(f"trajaudit merge: the shards' records are malformed ({type(exc).__name__}: "
              f"{clean(str(exc))[:200]}): not trajaudit shards, merge incomplete", file=sys.stderr)
        return 4
    pv = summary["pr_verdict"]
    print(f"merged {len(shards)} shard(s) into {out}/ (summary.json, report.md, report.html, jobs/)")
    for line in rollup_lines(summary):
        print(line)
    if pv["verdict"] == "INCOMPLETE":
        return EXIT_INCOMPLETE
    return 0 if pv["verdict"] in ("APPROVE", "APPROVE WITH CAVEATS") else 1
