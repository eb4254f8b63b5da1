"""Judges under load: N failed jobs audited with P3 / P11 judges against a local OpenAI-compatible server that
answers every request after LATENCY seconds. Prints wall times, HTTP calls and the most requests seen in flight
for: no judge, judges in one process, judge items only, ``-n 2``, and a cache fill then rerun. Asserts nothing.

    python benchmarks/judges.py [--jobs 60] [--latency 0.25] [--keep DIR]

Needs the ``judge`` extra (litellm) and, for ``-n 2``, pytest-xdist. Run from the repository (it reuses the test
server ``tests/judgeserver.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.jobfactory import make_job  # noqa: E402
from tests.judgeserver import JudgeServer, ok, slow  # noqa: E402
from tests.principles.builders import msg, sh, user  # noqa: E402
from tests.taskfactory import result_doc  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--jobs", type=int, default=60)
    ap.add_argument("--latency", type=float, default=0.25)
    ap.add_argument("--keep", default=None, help="work directory (kept); default a temporary one")
    a = ap.parse_args()
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="trajaudit-judges-"))
    shutil.rmtree(work / "runs", ignore_errors=True)
    shutil.rmtree(work / "cache", ignore_errors=True)
    for i in range(a.jobs):
        lines = [user("do it"), *[sh(f"echo step {k}", "ok") for k in range(20)], msg(f"done {i}")]
        make_job(work / "runs", f"t{i:04d}__1", lines, result_doc(task="t", reward=0.0, trial=f"t{i:04d}__1"))
    server = JudgeServer().start()
    server.responder = lambda r: slow(a.latency, ok({"bucket": "hard", "reason": "x"}) if r["purpose"] == "p3_bucket"
                                      else ok({"verdict": "fair", "reason": "x"}))
    env = {**os.environ, "JUDGE_API_KEY": os.environ.get("JUDGE_API_KEY", "sk-bench-0000000000000000")}
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:anyio", "-c", os.devnull,
            f"--rootdir={work}", f"--basetemp={work / 'basetemp'}", "--trajaudit=runs"]
    # (an explicit --basetemp: otherwise xdist's controller has pytest delete old /tmp/pytest-of-<user>/pytest-N
    # directories first, which after a large test suite takes longer than the runs measured here)
    judge = ["--trajaudit-judge=bench-model", f"--trajaudit-judge-base-url={server.url}"]

    def run(label: str, *extra: str) -> None:
        server.calls = server.max_in_flight = 0
        t = time.perf_counter()
        r = subprocess.run([*base, *extra], cwd=work, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        last = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"{label:38s} {wall:7.2f} s  calls={server.calls:<5d} in flight≤{server.max_in_flight:<3d} {last}")

    try:
        run("no judge")
        run("judges, one process", *judge, "--trajaudit-judge-cache=off")
        run("judge items only (P3,P11)", *judge, "--trajaudit-judge-cache=off", "--trajaudit-principles=P3,P11")
        run("judges, -n 2", *judge, "--trajaudit-judge-cache=off", "-n", "2")
        run("judges, cache fill", *judge, f"--trajaudit-judge-cache={work / 'cache'}")
        run("judges, cache rerun", *judge, f"--trajaudit-judge-cache={work / 'cache'}")
    finally:
        server.stop()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{a.jobs} jobs, {2 * a.jobs} judge requests at {a.latency:g} s each "
          f"({2 * a.jobs * a.latency:.1f} s of latency one after another)")


if __name__ == "__main__":
    main()
