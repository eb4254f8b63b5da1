#!/usr/bin/env python3
"""Audits of 10,000 to 100,000 jobs: wall time and peak RSS of collection, a bare pytest run with as many items,
the audit with its reports (``-n 0``, and ``-n W`` when asked), four shards and their ``trajaudit merge``, and
the RSS slope per item of the audit against the bare run.

    python benchmarks/scale.py [--jobs 10000 50000 100000] [--size-kb 4] [--format acp] [--work DIR]
                               [--only collect,bare,audit,shards] [--workers 2] [--shard-workers 2]
                               [--gen-procs 2] [--pytest-args ARGS] [--with-saved]

Trees are generated with ``gen_runs.py`` into ``WORK/tree-N`` and reused when their parameters match
(``WORK/tree-N.json``). Every pytest run starts from ``WORK`` (which holds an empty ``pytest.ini``) with
``--basetemp=WORK/basetemp``; its stdout goes to ``WORK/out-N/<run>.out``. Peak RSS of a run is the largest
process's, from ``os.wait4`` (the child's rusage: its own peak and its reaped children's); under xdist the sum
over the controller and its workers is sampled from ``/proc`` every 0.1 s as well.

The bare run is one module with ``@pytest.mark.parametrize("i", range(ITEMS))`` and a test that returns: pytest's
floor per item (one Function item, its callspec, the reports pytest keeps), without a code object or module
per item that per-job test files would add. It gets the same ``--junitxml`` as the audit (JUnit keeps a node
per test case until the session ends). The slope is the least-squares fit of peak RSS against the item count
over the sizes in the table (two sizes at least). Each invocation saves its runs in ``WORK/out-N/runs.json``;
``--with-saved`` adds the saved runs of sizes and steps this invocation does not run to the table and the slopes
(marked "saved"), so a long series can be measured in parts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MiB = 1024 * 1024
STEPS = ("collect", "bare", "audit", "shards")
SHARDS = 4


@dataclass
class Run:
    label: str
    wall: float
    rss: int  # bytes, largest process
    rss_sum: int  # bytes, the most the process tree held at once (sampled); 0 when not sampled
    code: int
    out: Path
    load: str = "?"  # the load average when it ended


def _load_saved(work: Path, n: int) -> dict:
    """The runs of N jobs saved in WORK/out-N/runs.json by earlier invocations, by label ({} when none)."""
    try:
        return json.loads((work / f"out-{n}" / "runs.json").read_text())
    except (OSError, ValueError):
        return {}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            status = Path(f"/proc/{d}/status").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(d))
        m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        rss[int(d)] = int(m.group(1)) * 1024 if m else 0
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total


def run(label: str, cmd: list[str], cwd: Path, out: Path, timeout: float, sample: bool = False,
        ok: tuple[int, ...] = (0, 1)) -> Run:
    """Run ``cmd`` from ``cwd`` with stdout to ``out``; print the command and its figures."""
    print(f"$ (cd {shlex.quote(str(cwd))} && {shlex.join(cmd)} > {shlex.quote(str(out))})", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    peak_sum = [0]
    t0 = time.perf_counter()
    with open(out, "wb") as fh:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(0.1):
                peak_sum[0] = max(peak_sum[0], _tree_rss(p.pid))

        th = threading.Thread(target=poll, daemon=True)
        if sample:
            th.start()
        timer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
            stop.set()
    wall = time.perf_counter() - t0
    if sample:
        th.join()
    code = os.waitstatus_to_exitcode(status)
    r = Run(label, wall, usage.ru_maxrss * 1024, peak_sum[0], code, out, loadavg())
    extra = f", sum over processes {r.rss_sum / MiB:.0f} MiB" if sample else ""
    print(f"  {label}: exit {code}, wall {wall:.1f} s, peak RSS {r.rss / MiB:.0f} MiB{extra} (load {r.load})",
          flush=True)
    if code not in ok:
        tail = out.read_text(errors="replace").splitlines()[-15:]
        print("  FAILED; last lines:\n    " + "\n    ".join(tail), flush=True)
    return r


def make_tree(work: Path, n: int, args: argparse.Namespace) -> Path:
    tree = work / f"tree-{n}"
    stamp = work / f"tree-{n}.json"
    params = {"jobs": n, "size_kb": args.size_kb, "format": args.format, "seed": args.seed}
    if tree.is_dir() and stamp.is_file() and json.loads(stamp.read_text()) == params:
        return tree
    cmd = [sys.executable, str(HERE / "gen_runs.py"), str(tree), "--jobs", str(n), "--size-kb", str(args.size_kb),
           "--format", args.format, "--seed", str(args.seed), "--procs", str(args.gen_procs), "--force"]
    print(f"$ {shlex.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True)
    stamp.write_text(json.dumps(params))
    return tree


def pytest_cmd(work: Path, args: argparse.Namespace, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={work / 'basetemp'}",
            *shlex.split(args.pytest_args), *extra]


def collected(out: Path) -> int | None:
    """The item count of a ``--collect-only -q`` run (its last line: ``N tests collected in …``)."""
    with open(out, "rb") as fh:
        fh.seek(max(0, os.path.getsize(out) - 4096))
        m = re.findall(rb"(\d+) tests? collected", fh.read())
    return int(m[-1]) if m else None


def item_count(work: Path, n: int, tree: Path, args: argparse.Namespace, results: dict) -> int:
    stamp = work / f"tree-{n}.items"
    if "collect" in results.get(n, {}):
        items = collected(results[n]["collect"].out)
    elif stamp.is_file():
        return int(stamp.read_text())
    else:
        r = run("collect (for the item count)", pytest_cmd(work, args, f"--trajaudit={tree}", "--collect-only", "-q"),
                work, work / f"out-{n}" / "collect.out", args.timeout)
        items = collected(r.out)
    if items is None:
        raise SystemExit(f"scale.py: no item count in the collect-only output of {tree}")
    stamp.write_text(str(items))
    return items


def bare_module(work: Path, items: int) -> Path:
    d = work / f"bare-{items}"
    d.mkdir(exist_ok=True)
    (d / "test_bare.py").write_text("import pytest\n\n\n"
                                    f"@pytest.mark.parametrize(\"i\", range({items}))\n"
                                    "def test_bare(i):\n    pass\n")
    return d


def slope(points: list[tuple[int, int]]) -> float | None:
    """Least-squares bytes per item of (items, peak RSS) points."""
    if len({x for x, _ in points}) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[10000, 50000, 100000])
    ap.add_argument("--size-kb", type=float, default=4)
    ap.add_argument("--format", choices=("acp", "claude", "mixed"), default="acp")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gen-procs", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path("/tmp/trajaudit-scale"))
    ap.add_argument("--only", default=",".join(STEPS), help=f"comma-separated steps of {','.join(STEPS)}")
    ap.add_argument("--workers", type=int, default=0, help="also run the audit with -n W (W > 0)")
    ap.add_argument("--shard-workers", type=int, default=0, help="run each shard with -n W (W > 0)")
    ap.add_argument("--pytest-args", default="", help="appended to every pytest run (bare and audit alike)")
    ap.add_argument("--timeout", type=float, default=4 * 3600)
    ap.add_argument("--with-saved", action="store_true",
                    help="add to the table and the slopes the runs an earlier invocation saved in WORK/out-N/runs.json "
                         "for a size or step this invocation does not run (marked 'saved')")
    args = ap.parse_args(argv)
    steps = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = [s for s in steps if s not in STEPS]
    if bad:
        ap.error(f"--only: unknown step(s) {', '.join(bad)}; choose from {', '.join(STEPS)}")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    (work / "pytest.ini").write_text("[pytest]\n")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {loadavg()}, work {work}", flush=True)

    results: dict[int, dict[str, Run]] = {}
    items_of: dict[int, int] = {}
    for n in sorted(args.jobs):
        print(f"\n== {n} jobs × {args.size_kb:g} KiB ({args.format}) ==", flush=True)
        tree = make_tree(work, n, args)
        res = results.setdefault(n, {})
        out = work / f"out-{n}"
        if "collect" in steps:
            res["collect"] = run("collect-only", pytest_cmd(work, args, f"--trajaudit={tree}", "--collect-only", "-q"),
                                 work, out / "collect.out", args.timeout)
        if "bare" in steps or "audit" in steps:
            items_of[n] = item_count(work, n, tree, args, results)
            print(f"  {items_of[n]} items", flush=True)
        if "bare" in steps:
            mod = bare_module(work, items_of[n])
            res["bare"] = run("bare", pytest_cmd(work, args, str(mod), "-q", f"--junitxml={out / 'bare.xml'}"),
                              work, out / "bare.out", args.timeout)
        if "audit" in steps:
            res["audit"] = run("audit -n 0", pytest_cmd(
                work, args, f"--trajaudit={tree}", "-q", "-n", "0", f"--trajaudit-report={out / 'report'}",
                f"--junitxml={out / 'audit.xml'}"), work, out / "audit.out", args.timeout)
            if args.workers:
                res["xdist"] = run(f"audit -n {args.workers}", pytest_cmd(
                    work, args, f"--trajaudit={tree}", "-q", "-n", str(args.workers),
                    f"--trajaudit-report={out / 'report-n'}", f"--junitxml={out / 'audit-n.xml'}"),
                    work, out / "audit-n.out", args.timeout, sample=True)
        if "shards" in steps:
            dirs = []
            for i in range(1, SHARDS + 1):
                d = out / f"shard-{i}"
                dirs.append(str(d))
                workers = ("-n", str(args.shard_workers)) if args.shard_workers else ()
                res[f"shard {i}/{SHARDS}"] = run(f"shard {i}/{SHARDS}", pytest_cmd(
                    work, args, f"--trajaudit={tree}", "-q", *workers, f"--trajaudit-shard={i}/{SHARDS}",
                    f"--trajaudit-report={d}", f"--junitxml={d}.xml"), work, out / f"shard-{i}.out", args.timeout,
                    sample=bool(args.shard_workers))
            res["merge"] = run("trajaudit merge", [sys.executable, "-m", "pytest_trajaudit.cli.main", "merge",
                                                   str(out / "merged"), *dirs], work, out / "merge.out", args.timeout)

    for n, res in results.items():  # what this invocation measured, for a later --with-saved
        saved = _load_saved(work, n)
        saved.update({label: {"label": r.label, "wall": r.wall, "rss": r.rss, "rss_sum": r.rss_sum, "code": r.code,
                              "out": str(r.out), "items": items_of.get(n), "load": r.load} for label, r in res.items()})
        (work / f"out-{n}" / "runs.json").write_text(json.dumps(saved, indent=1))
    if args.with_saved:
        for n in sorted(args.jobs):
            for label, d in _load_saved(work, n).items():
                if label not in results.setdefault(n, {}):
                    results[n][label] = Run(f"{d['label']} (saved)", d["wall"], d["rss"], d["rss_sum"], d["code"],
                                            Path(d["out"]), d.get("load", "?"))
                    if d.get("items") and n not in items_of:
                        items_of[n] = d["items"]

    print(f"\n== summary (load {loadavg()}) ==")
    print("| jobs | items | run | wall s | peak RSS MiB | RSS sum MiB | bytes/item | / bare | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, res in sorted(results.items()):
        for label, r in res.items():
            per = f"{r.rss / items_of[n]:.0f}" if n in items_of and label in ("bare", "audit", "xdist") else ""
            rs = f"{r.rss_sum / MiB:.0f}" if r.rss_sum else ""
            vs = f"{r.rss / res['bare'].rss:.2f}×" if label in ("audit", "xdist") and "bare" in res else ""
            print(f"| {n} | {items_of.get(n, '')} | {r.label} | {r.wall:.1f} | {r.rss / MiB:.0f} | {rs} | {per} "
                  f"| {vs} | {r.load} |")
    fits = {}
    for kind in ("bare", "audit", "xdist"):
        pts = [(items_of[n], res[kind].rss) for n, res in results.items()  # runs that ended as pytest does
               if kind in res and n in items_of and res[kind].code in (0, 1)]
        fits[kind] = slope(pts)
        if fits[kind] is not None:
            print(f"RSS slope {kind}: {fits[kind]:.0f} bytes per item ({fits[kind] / 1024:.2f} KiB) over "
                  f"{', '.join(str(x) for x, _ in pts)} items")
    if fits.get("audit") and fits.get("bare"):
        print(f"audit / bare slope: {fits['audit'] / fits['bare']:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
