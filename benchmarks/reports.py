"""What writing the reports costs at the end of a large audit, and what ``trajaudit merge`` costs.

    python benchmarks/reports.py SHARD_REPORT_DIR [--repeat 3]

SHARD_REPORT_DIR is the ``--trajaudit-report`` directory of a run made with ``--trajaudit-shard=1/1`` (a shard's
summary.json holds every job's roll-up state, from which the roll-up is rebuilt here exactly as ``trajaudit
merge`` rebuilds it), e.g.::

    python benchmarks/gen_runs.py /tmp/t --jobs 10000 --size-kb 20 --format mixed --procs 2
    python -m pytest --trajaudit=/tmp/t -q -p no:cacheprovider --trajaudit-shard=1/1 --trajaudit-report=/tmp/r
    python benchmarks/reports.py /tmp/r

Prints, in one process, CPU seconds (best of ``--repeat``) of: reading summary.json back (``merge.load_shard``),
rebuilding the roll-up (``merge.rollup_from``), the summary (``Rollup.summary``), the terminal lines, and
``Rollup.write`` (every ``jobs/**/audit-*.json``, summary.json, report.md, report.html) into a scratch directory, and the
whole ``trajaudit merge`` of that one shard (``merge.merge``, which pauses the cyclic collector); then the
peak RSS that the first ``write`` adds to the process's peak so far (Linux ``ru_maxrss``), and the sizes written (report.html's per job).
Only prints; asserts nothing."""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path


def best(fn, repeat: int):
    out, t = None, float("inf")
    for _ in range(repeat):
        c = time.process_time()
        out = fn()
        t = min(t, time.process_time() - c)
    return out, t


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def size_of(d: Path) -> tuple[int, int]:
    files = [p for p in d.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report_dir", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from pytest_trajaudit.report import merge

    rows = []
    doc, t = best(lambda: merge.load_shard(args.report_dir), args.repeat)
    rows.append(("read summary.json back (merge.load_shard)", t))
    (rollup, keys), t = best(lambda: merge.rollup_from([doc]), args.repeat)
    rows.append(("rebuild the roll-up (merge.rollup_from)", t))
    _, t = best(rollup.summary, args.repeat)
    rows.append(("Rollup.summary()", t))
    _, t = best(rollup.terminal_lines, args.repeat)
    rows.append(("Rollup.terminal_lines()", t))
    scratch = Path(tempfile.mkdtemp(prefix="trajaudit-reports-"))
    try:
        def write() -> None:
            shutil.rmtree(scratch / "out", ignore_errors=True)
            rollup.write(scratch / "out", keys)

        before = maxrss_mib()
        write()
        added = maxrss_mib() - before
        _, t = best(write, args.repeat)
        rows.append(("Rollup.write() (jobs/, summary.json, report.md, report.html)", t))
        n_files, n_bytes = size_of(scratch / "out")
        summary_mib = (scratch / "out" / "summary.json").stat().st_size / 2**20
        html_mib = (scratch / "out" / "report.html").stat().st_size / 2**20

        def merge_all() -> None:
            shutil.rmtree(scratch / "merged", ignore_errors=True)
            merge.merge(scratch / "merged", [args.report_dir])

        _, t = best(merge_all, args.repeat)
        rows.append(("`trajaudit merge` of this one shard, end to end (merge.merge)", t))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    jobs = len(rollup.jobs)
    print(f"{jobs:,} jobs, {sum(len(j['records']) for j in rollup.jobs.values()):,} records "
          f"(python {sys.version.split()[0]})\n")
    print("| step | CPU s | per job, ms |\n|---|---|---|")
    for what, t in rows:
        print(f"| {what} | {t:.3f} | {t / max(jobs, 1) * 1000:.3f} |")
    print(f"\nwritten: {n_files:,} files, {n_bytes / 2**20:.1f} MiB (summary.json {summary_mib:.1f} MiB, "
          f"report.html {html_mib:.1f} MiB, {html_mib * 1024 / max(jobs, 1):.1f} KiB per job); "
          f"peak RSS {maxrss_mib():.0f} MiB, of which the first write added {max(added, 0):.0f} MiB to the peak "
          f"reached before it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
