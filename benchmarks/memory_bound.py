"""Peak memory of one job's audit against the size of its trajectory (docs/limits.md, "Events").

    python benchmarks/memory_bound.py [--work DIR] [--max-events N] [--size-mb S]

Each case is one BenchFlow job audited by every principle the plugin gives it (``engine.audit_job``; no ADV
items: the job has no task) in a fresh interpreter; its peak
RSS comes from ``os.wait4``. A minimal job (three lines) is measured the same way, and the table gives the peak above it
per byte of trajectory ("x file"). The cases:

- ``realistic``: a trajectory written by ``gen_runs.py`` (reads, commands, edits, outputs) of about ``--size-mb``,
  read line by line (the default) and read whole (``--trajaudit-literal``: the seeds' regexes scan the full text);
- ``tiny objects at the limit``: ``[{},{},…]`` with exactly ``--max-events`` objects (the largest accepted input
  of that shape: the worst bytes-to-objects ratio JSON allows);
- ``tiny objects past the limit``: the same shape, 43 MiB (refused as "too many events");
- ``tiny lines past the limit``: JSON Lines of ``{}`` lines, past the limit (refused while streamed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20

CHILD = r"""
import sys
from pathlib import Path
from pytest_trajaudit.discover.jobs import JobRef
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.principles import registry
from pytest_trajaudit.settings import Settings
job = Path(sys.argv[1])
cfg = Settings(max_events=int(sys.argv[2]), literal=sys.argv[3] == "literal")
# the plugin makes ADV items only for a job whose privileged material is known: these jobs have no task
principles = [p for code, p in registry().items() if not code.startswith("ADV-")]
audit = audit_job(JobRef(job, job / "result.json", "benchflow-rollout"), cfg, principles)
print(audit.error or f"audited: {audit.meta.get('n_events')} events")
"""


def run(job: Path | str, max_events: int, mode: str = "precise") -> tuple[float, str]:
    """(peak RSS in MiB, the child's one-line outcome) of auditing ``job`` in a fresh interpreter."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(job), str(max_events), mode], cwd=ROOT,
                                stdout=out, stderr=subprocess.STDOUT, text=True)
        _, _, usage = os.wait4(proc.pid, 0)  # this child's own peak (not the maximum over every child)
        proc.returncode = 0
        out.seek(0)
        lines = out.read().strip().splitlines()
    return usage.ru_maxrss / 1024, (lines[-1] if lines else "")[:100]


def write_job(root: Path, name: str, head: bytes = b"", unit: bytes = b"", n: int = 0, tail: bytes = b"") -> Path:
    """A BenchFlow job whose trajectory is ``head + unit * n + tail``, written in pieces (the factory's three-line
    default when all are empty). The parent never holds a large file: on Linux a child's peak RSS counts the
    parent's memory at the fork."""
    sys.path.insert(0, str(ROOT))
    from tests.jobfactory import TRAJECTORY, make_job

    job = make_job(root, name)
    if head or unit or tail:
        with open(job / TRAJECTORY, "wb") as fh:
            fh.write(head)
            block = unit * 65536
            for _ in range(n // 65536):
                fh.write(block)
            fh.write(unit * (n % 65536))
            fh.write(tail)
    return job


def realistic(root: Path, size_mb: float) -> Path:
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gen_runs.py"), str(root / "gen"), "--jobs", "1",
                    "--size-kb", str(int(size_mb * 1024)), "--format", "acp", "--force"], check=True,
                   stdout=subprocess.DEVNULL)
    return next((root / "gen").rglob("acp_trajectory.jsonl")).parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temporary one)")
    ap.add_argument("--max-events", type=int, default=None, help="the events limit (default: the plugin's)")
    ap.add_argument("--size-mb", type=float, default=50.0, help="size of the realistic trajectory")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from pytest_trajaudit.safeio import DEFAULT_MAX_EVENTS

    limit = args.max_events or DEFAULT_MAX_EVENTS
    work = args.work or Path(tempfile.mkdtemp(prefix="trajaudit-mem-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        base_rss, _ = run(write_job(work, "minimal"), limit)
        tiny_n = (43 * MB) // 3
        cases = [
            ("tiny objects at the limit", (b"[", b"{},", limit - 2, b"{}]"), None),  # the array counts too
            ("tiny objects past the limit (43 MiB)", (b"[", b"{},", tiny_n - 1, b"{}]"), None),
            ("tiny lines past the limit", (b"", b"{}\n", limit + 10, b""), None),
            ("realistic (gen_runs.py)", None, args.size_mb),
            ("realistic, --trajaudit-literal", None, args.size_mb),
        ]
        print(f"events limit {limit}; baseline peak RSS {base_rss:.0f} MiB\n")
        print(f"{'case':<40} {'file MiB':>9} {'peak MiB':>9} {'above base':>11} {'x file':>7}  outcome")
        real = None
        for i, (name, parts, size_mb) in enumerate(cases):
            if size_mb:
                real = real or realistic(work, size_mb)
            job = real if size_mb else write_job(work, f"case{i}", *parts)
            traj = job / "trajectory" / "acp_trajectory.jsonl"
            size = traj.stat().st_size
            rss, outcome = run(job, limit, "literal" if "literal" in name else "precise")
            above = max(rss - base_rss, 0.0)
            print(f"{name:<40} {size / MB:>9.1f} {rss:>9.0f} {above:>11.0f} {above * MB / size:>7.2f}  {outcome}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
