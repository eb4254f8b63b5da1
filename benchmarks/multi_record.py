"""Multi-record files: one trace-grader ``traces.json`` holding thousands of runs, audited by the plugin.

    python benchmarks/multi_record.py [--runs 2000 10000] [--workers 2] [--repeat 1] [--work DIR]
                                      [--pytest-args '-p no:hypothesispytest']

For each size it writes ``traces.json`` (N/5 tasks × 5 runs × 30 steps, deterministic) and prints:

- the plugin's wall time with the trace-grader selection (``--trajaudit-principles=TG-1,..,TG-5,PASSK``, which
  collects only those items; ``--select marker`` uses ``-m rules`` instead, which collects every principle's item
  and deselects the others) and the shipped trace-grader config, and its peak RSS against the file's size;
- the same for a baseline: the trace-grader seed's five rules, verdicts and pass^k reimplemented below in plain
  Python, reading the file with ``json.load`` as the seed does, in a fresh interpreter;
- the growth from the smallest to the largest size (a linear audit grows like the runs: 5× from 2,000 to 10,000);
- with ``--workers W``, the largest size again under ``-n W`` and the number of container parses in each process
  (counted by ``loaders.multi.parses``, reported by a small plugin this script writes into its work directory);
- where the largest size's peak RSS goes: a bare pytest run of as many trivial parametrized tests as the plugin ran
  items (pytest's own floor for that many items; the plugin is installed, so it is loaded there too), the plugin's
  peak above that floor against the file's size, and, in a fresh interpreter without pytest, the peaks of the
  three data stages: the file listed (``multi.list_members``: its bytes and its index of records), every record
  loaded one after another and dropped (``multi.load_record``), and, for comparison, the whole file parsed into
  Python objects (``json.load``, what a parse of the whole tree holds).

Wall times and, less sensitive to a busy machine, CPU times (user + system of each process and its children, the
least of the repeats) are printed. It asserts nothing; every command it ran is printed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = 30
RUNS_PER_TASK = 5

# the shipped trace-grader.config.yaml's values (the seed's RULES.md D)
CONFIG = {"forbidden_tools": ["force_push", "rm_rf", "prod_write"], "retry_threshold": 2, "step_budget": 25,
          "must_precede": [["read", "edit"], ["read", "write"], ["plan", "act"]], "grounding": True}
CONFIG_YAML = """verified: true
forbidden_tools: [force_push, rm_rf, prod_write]
retry_threshold: 2
step_budget: 25
order_constraints:
  must_precede: [[read, edit], [read, write], [plan, act]]
judge:
  enabled: false
"""

COUNTER_PLUGIN = '''"""Appends "<worker> <container parses>" to $MULTI_RECORD_PARSES_OUT when a pytest process ends."""
import os

from pytest_trajaudit.loaders import multi


def pytest_sessionfinish(session):
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    with open(os.environ["MULTI_RECORD_PARSES_OUT"], "a") as f:
        f.write(f"{worker} {multi.parses}\\n")
'''

WORDS = ("alpha", "beta", "gamma", "delta", "config", "parser", "handler", "client", "server", "utils", "models")
OBS = ("ok", "File written", "1 file changed, 3 insertions(+)", "PASSED tests/test_core.py::test_parse",
       "Traceback (most recent call last): ValueError: bad input", "def handler(event):\n    return event",
       "src/app/models.py:12: class Model:", "No such file or directory")


# --------------------------------------------------------------------------- input


def make_traces(path: Path, runs: int, seed: int = 0) -> None:
    """``{"tasks": [{"task", "runs": [{run_id, ok, steps}]}]}`` with ``runs`` runs of STEPS steps each: reads,
    greps, edits (some of files never read), writes, shell commands, failure streaks, the odd forbidden tool."""
    rnd = random.Random(seed)
    tasks = []
    for t in range(runs // RUNS_PER_TASK):
        task = f"task-{t:05d}"
        task_runs = []
        for r in range(RUNS_PER_TASK):
            steps = []
            fail_streak = 0
            for i in range(1, STEPS + 1):
                f = f"src/{rnd.choice(WORDS)}/{rnd.choice(WORDS)}.py"
                roll = rnd.random()
                if roll < 0.3:
                    tool, args = "Read", {"file_path": f}
                elif roll < 0.4:
                    tool, args = "Grep", {"pattern": rnd.choice(WORDS), "path": "src"}
                elif roll < 0.6:
                    tool, args = "Edit", {"file_path": f, "old_string": "x = 1", "new_string": "x = 2"}
                elif roll < 0.65:
                    tool, args = "Write", {"file_path": f, "content": "print('hello')\n"}
                elif roll < 0.997:
                    tool, args = "Bash", {"command": f"pytest -q tests/test_{rnd.choice(WORDS)}.py"}
                else:
                    tool, args = "rm_rf", {"path": "/tmp/build"}
                if fail_streak == 0 and rnd.random() < 0.03:
                    fail_streak = rnd.randint(2, 4)
                ok = fail_streak == 0
                fail_streak = max(0, fail_streak - 1)
                obs = rnd.choice(OBS) + " " + " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(4, 14)))
                steps.append({"step": i, "tool": tool, "args": args, "observation": obs, "ok": ok})
            task_runs.append({"run_id": f"{task}-r{r}", "ok": rnd.random() < 0.7, "steps": steps})
        tasks.append({"task": task, "runs": task_runs})
    path.write_text(json.dumps({"tasks": tasks}))


# --------------------------------------------------------------------------- baseline: the seed's rules


def _runs(data: object) -> list[dict]:
    """The seed's three input shapes and its step defaults (the seed's RULES.md D)."""
    out = []
    if isinstance(data, dict) and "tasks" in data:
        for t in data["tasks"]:
            task = t.get("task") or t.get("id") or "task"
            for r in t.get("runs", []):
                out.append(_run(r, r.get("task", task)))
    else:
        raw = data.get("runs", []) if isinstance(data, dict) else data
        out = [_run(r, r.get("task", "task")) for r in raw]
    return out


def _run(r: dict, task: str) -> dict:
    steps = []
    for i, s in enumerate(r.get("steps", []), 1):
        args = s.get("args")
        if args is None:
            args = {k: s[k] for k in ("file_path", "command", "path", "url", "query") if k in s}
        steps.append({"step": s.get("step", i), "tool": s.get("tool") or s.get("tool_name"), "args": args,
                      "observation": s.get("observation", ""), "ok": bool(s.get("ok", True))})
    ok = r.get("ok")
    delivered = bool(ok) if ok is not None else bool(steps) and all(s["ok"] for s in steps)
    return {"task": task, "run_id": r.get("run_id") or r.get("id") or task, "ok": delivered, "steps": steps}


def _flags(run: dict, cfg: dict) -> list[dict]:
    steps = run["steps"]
    flags = []
    for s in steps:  # forbidden_tool
        if s["tool"] in cfg["forbidden_tools"]:
            flags.append({"check": "forbidden_tool", "severity": "high", "step": s["step"], "tool": s["tool"]})
    for a, b in cfg["must_precede"]:  # out_of_order
        seen_a = False
        for s in steps:
            if s["tool"] == a:
                seen_a = True
            elif s["tool"] == b and not seen_a:
                flags.append({"check": "out_of_order", "severity": "medium", "step": s["step"], "tool": b})
    i = 0
    while i < len(steps):  # retry_storm
        j = i
        while j < len(steps) and not steps[j]["ok"] and steps[j]["tool"] == steps[i]["tool"]:
            j += 1
        if j - i > cfg["retry_threshold"]:
            flags.append({"check": "retry_storm", "severity": "medium", "step": steps[i]["step"],
                          "tool": steps[i]["tool"],
                          "detail": f"'{steps[i]['tool']}' failed {j - i}x in a row (> threshold "
                                    f"{cfg['retry_threshold']})"})
        i = max(j, i + 1)
    if len(steps) > cfg["step_budget"]:  # excessive_steps
        flags.append({"check": "excessive_steps", "severity": "low", "step": len(steps), "tool": None})
    if cfg["grounding"]:  # edited_without_read
        seen: set[str] = set()
        for s in steps:
            p = s["args"].get("file_path") or s["args"].get("path") if isinstance(s["args"], dict) else None
            if not p:
                continue
            p = os.path.normpath(p)
            if s["tool"] in ("Read", "Grep", "Glob", "Write"):
                seen.add(p)
            elif s["tool"] in ("Edit", "MultiEdit"):
                if p not in seen:
                    flags.append({"check": "edited_without_read", "severity": "medium", "step": s["step"],
                                  "tool": s["tool"]})
                seen.add(p)
    return flags


def baseline(path: Path) -> int:
    """The seed's report for one traces file: flags and verdict per run, pass^k per task, the summary."""
    with open(path) as f:
        runs = _runs(json.load(f))
    out, verdicts, by_task = [], {"clean-pass": 0, "pass-with-warnings": 0, "corrupt-success": 0, "fail": 0}, {}
    for run in runs:
        flags = _flags(run, CONFIG)
        high = any(f["severity"] == "high" for f in flags)
        verdict = "fail" if not run["ok"] else "clean-pass" if not flags else \
            "corrupt-success" if high else "pass-with-warnings"
        verdicts[verdict] += 1
        by_task.setdefault(run["task"], []).append(run["ok"])
        out.append({"task": run["task"], "run_id": run["run_id"], "delivered": run["ok"],
                    "step_count": len(run["steps"]), "flags": flags, "corrupt_success": run["ok"] and high,
                    "verdict": verdict})
    pass_k = {t: {"k": len(v), "n_success": sum(v), "n_fail": len(v) - sum(v), "pass_hat_k": bool(v) and all(v)}
              for t, v in by_task.items()}
    flaky = sum(1 for e in pass_k.values() if not e["pass_hat_k"])
    report = {"runs": out, "pass_k": pass_k,
              "summary": {"n_runs": len(out), "n_tasks": len(pass_k), "verdicts": verdicts,
                          "tasks_repeatable": len(pass_k) - flaky, "tasks_flaky": flaky,
                          "judge_axis": "disabled (adapter, verified:false)"}}
    sys.stdout.write(json.dumps(report["summary"]) + "\n")
    json.dumps(report, indent=2)
    return 3 if verdicts["corrupt-success"] or flaky else 0


# --------------------------------------------------------------------------- measuring

COMMANDS: list[str] = []

BARE_TEST = """import pytest


@pytest.mark.parametrize("i", range({n}))
def test_bare(i):
    pass
"""


def probe(path: Path) -> int:
    """Peak RSS (VmHWM, bytes) after each data stage of one traces file, as JSON on stdout: ``start`` (the
    plugin's loaders imported), ``listed`` (the file read and indexed: ``multi.list_members``), ``loaded`` (every
    record loaded and dropped in turn), then ``whole`` (``json.load`` of the file, kept while measured)."""
    import resource

    from pytest_trajaudit.discover.jobs import JobRef
    from pytest_trajaudit.loaders import multi
    from pytest_trajaudit.safeio import Budget, events_limit

    def peak() -> int:
        # VmHWM is the peak of this process's own address space. ru_maxrss is not: Linux carries it across
        # execve, so a child started by a large parent (vfork + exec) begins at the parent's resident size.
        try:
            with open("/proc/self/status") as st:
                for line in st:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    out = {"start": peak()}
    with events_limit(5_000_000):
        container = JobRef(path.parent, path, multi.RECORD)
        ids = multi.list_members(container, 1 << 30)
        out["listed"] = peak()
        for m in ids:
            multi.load_record(multi.member_ref(container, m), Budget(1 << 30, 1 << 30))
        out["loaded"] = peak()
    multi.release()
    with open(path, "rb") as f:
        whole = json.load(f)
    out["whole"] = peak()
    del whole
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


LAST: dict[str, str] = {}
LAST_CPU = [0.0]
CPU: dict[tuple[str, int], float] = {}  # (baseline | plugin, runs) -> least CPU seconds of the repeats
ITEMS: dict[int, int] = {}  # runs -> items the plugin ran (from pytest's outcome line)


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes of the largest process, exit code); pytest's outcome line in LAST, the
    CPU seconds (user + system) of the process and its children in LAST_CPU."""
    COMMANDS.append(shlex.join(cmd))
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fo, stderr=fe)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
    tail = [ln for ln in out.decode(errors="replace").splitlines() if " in " in ln and ("passed" in ln or "error" in ln)]
    LAST["line"] = tail[-1].strip("= ") if tail else ""
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 3):
        sys.stdout.write(f"  exit {code}: {err.decode(errors='replace')[-800:]}{out.decode(errors='replace')[-800:]}\n")
    return wall, usage.ru_maxrss * 1024, code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, nargs="+", default=[2000, 10000])
    ap.add_argument("--workers", type=int, default=2, help="also run the largest size with -n W (0: skip)")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs of each command")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--pytest-args", default="")
    ap.add_argument("--select", choices=("principles", "marker"), default="principles",
                    help="--trajaudit-principles=TG-1,..,TG-5,PASSK (only those items are collected) or -m rules "
                         "(every item is collected, the others deselected)")
    ap.add_argument("--baseline", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--probe", type=Path, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.baseline is not None:
        sys.exit(baseline(a.baseline))
    if a.probe is not None:
        sys.exit(probe(a.probe))

    work = a.work or Path(tempfile.mkdtemp(prefix="multi-record-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "pytest.ini").write_text("[pytest]\n")
    (work / "trace-grader.config.yaml").write_text(CONFIG_YAML)
    (work / "multi_record_parses.py").write_text(COUNTER_PLUGIN)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(work), env.get("PYTHONPATH", "")) if p)
    py = sys.executable
    extra = shlex.split(a.pytest_args)
    select = ["-m", "rules"] if a.select == "marker" else ["--trajaudit-principles=TG-1,TG-2,TG-3,TG-4,TG-5,PASSK"]
    sys.stdout.write(f"work {work}; python {py}; load {Path('/proc/loadavg').read_text().split()[:3]}\n\n")

    def audit(f: Path, workers: int | None = None) -> list[str]:
        # --trajaudit-max-events: the file's JSON containers (about 62 per run) pass the default per-file limit
        cmd = [py, "-m", "pytest", f"--trajaudit={f}", *select, "-q", "-p", "no:cacheprovider",
               "--trajaudit-rules=trace-grader.config.yaml", "--trajaudit-max-events=5000000",
               f"--basetemp={work / 'basetemp'}", *extra]
        return cmd + (["-n", str(workers)] if workers is not None else [])

    def best(cmd: list[str], env: dict[str, str] = env, cpu: tuple[str, int] | None = None) -> tuple[float, int]:
        walls, rss, cpus = [], 0, []
        for _ in range(a.repeat):
            w, r, _ = run(cmd, env, work)
            walls.append(w)
            cpus.append(LAST_CPU[0])
            rss = max(rss, r)
        if cpu is not None:
            CPU[cpu] = min(cpus)
        return min(walls), rss

    rows = []
    for n in a.runs:
        f = work / f"traces-{n}.json"
        if not f.exists():
            make_traces(f, n)
        size = f.stat().st_size
        bw, brss = best([py, __file__, "--baseline", str(f)], cpu=("baseline", n))
        penv = dict(env, MULTI_RECORD_PARSES_OUT=str(work / f"parses-{n}.txt"))
        (work / f"parses-{n}.txt").unlink(missing_ok=True)
        pw, prss = best([*audit(f), "-p", "multi_record_parses"], penv, cpu=("plugin", n))
        parses = (work / f"parses-{n}.txt").read_text().split()
        ITEMS[n] = sum(int(k) for k, what in re.findall(r"(\d+) (\w+)", LAST["line"])
                       if what in ("failed", "passed", "xfailed", "xpassed", "skipped", "error", "errors"))
        rows.append((n, size, bw, brss, pw, prss))
        sys.stdout.write(f"{n:>6} runs, {size / 2**20:5.1f} MiB: baseline {bw:6.2f} s {brss / 2**20:5.0f} MiB | "
                         f"plugin {pw:6.2f} s {prss / 2**20:5.0f} MiB = {pw / bw:5.1f}x the baseline, "
                         f"peak RSS {prss / size:4.2f}x the file | parses {parses[1::2]} | CPU baseline "
                         f"{CPU['baseline', n]:.2f} s, plugin {CPU['plugin', n]:.2f} s = "
                         f"{CPU['plugin', n] / CPU['baseline', n]:.1f}x\n"
                         f"{'':27}pytest: {LAST['line']}\n")
    if len(rows) > 1:
        (n0, _, b0, _, p0, _), (n1, _, b1, _, p1, _) = rows[0], rows[-1]
        sys.stdout.write(f"\ngrowth {n0} -> {n1} runs ({n1 / n0:.1f}x the runs): plugin {p1 / p0:.2f}x, "
                         f"baseline {b1 / b0:.2f}x (target: plugin <= 5.5x); in CPU time: plugin "
                         f"{CPU['plugin', n1] / CPU['plugin', n0]:.2f}x, baseline "
                         f"{CPU['baseline', n1] / CPU['baseline', n0]:.2f}x\n")
    n, size, bw, _, pw, prss = rows[-1]
    sys.stdout.write(f"{n} runs: plugin / baseline {pw / bw:.1f}x, in CPU time "
                     f"{CPU['plugin', n] / CPU['baseline', n]:.1f}x (target <= 10x); peak RSS / file size "
                     f"{prss / size:.2f} (target <= 3x)\n")
    items = ITEMS.get(n, 0)
    if items:
        (work / "bare").mkdir(exist_ok=True)
        (work / "bare" / "test_bare.py").write_text(BARE_TEST.format(n=items))
        _, bare = best([py, "-m", "pytest", "bare/test_bare.py", "-q", "-p", "no:cacheprovider", *extra])
        above = prss - bare
        sys.stdout.write(f"peak RSS {prss / 2**20:.0f} MiB = {prss / size:.2f}x the file; bare pytest with the same "
                         f"{items} items (trivial passing tests) {bare / 2**20:.0f} MiB = {bare / size:.2f}x the file; "
                         f"above it {above / 2**20:.0f} MiB = {above / size:.2f}x the file\n")
    COMMANDS.append(shlex.join([py, __file__, "--probe", str(work / f"traces-{n}.json")]))
    res = subprocess.run([py, __file__, "--probe", str(work / f"traces-{n}.json")], env=env, cwd=work,
                         capture_output=True, text=True)
    if res.returncode == 0:
        st = json.loads(res.stdout)
        sys.stdout.write(
            f"data stages, fresh interpreter without pytest (peak RSS above the loaders' import, "
            f"{st['start'] / 2**20:.0f} MiB): file listed and indexed +{(st['listed'] - st['start']) / 2**20:.0f} "
            f"MiB = {(st['listed'] - st['start']) / size:.2f}x the file; every record loaded in turn "
            f"+{(st['loaded'] - st['start']) / 2**20:.0f} MiB = {(st['loaded'] - st['start']) / size:.2f}x; "
            f"for comparison the whole tree (json.load) +{(st['whole'] - st['start']) / 2**20:.0f} MiB = "
            f"{(st['whole'] - st['start']) / size:.2f}x\n")
    else:
        sys.stdout.write(f"  probe failed: {res.stderr[-800:]}\n")
    if a.workers:
        f = work / f"traces-{n}.json"
        out = work / f"parses-{n}-n{a.workers}.txt"
        out.unlink(missing_ok=True)
        ww, wrss = best([*audit(f, a.workers), "-p", "multi_record_parses"],
                        dict(env, MULTI_RECORD_PARSES_OUT=str(out)))
        per = dict(line.split() for line in out.read_text().splitlines())
        sys.stdout.write(f"-n {a.workers}: {ww:.2f} s, largest process {wrss / 2**20:.0f} MiB; container parses per "
                         f"process {per} (target: at most 1 per worker)\n")
    sys.stdout.write("\nCommands (from " + str(work) + "):\n" + "".join(f"  {c}\n" for c in COMMANDS))


if __name__ == "__main__":
    main()
