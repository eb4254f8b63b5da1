#!/usr/bin/env python3
"""Measure pytest-trajaudit and print the figures (never asserts a time).

    python benchmarks/measure.py            # ~5-10 minutes on 2 cores
    python benchmarks/measure.py --quick    # ~1 minute

Sections:
  (a) per-item overhead: ``pytest --trajaudit`` over K jobs of tiny trajectories vs a bare parametrized test
      function with the same number of items;
  (b) throughput (MiB/s) of a full audit over bigger trajectories vs reading the bytes, ``orjson.loads`` line by
      line, one regex pass (Python ``re``, and ripgrep when ``rg`` is on PATH);
  (c) wall time ``-n 0`` vs ``-n W`` (pytest-xdist);
  (d) peak RSS vs the largest trajectory (one job per tree);
  (e) import time (``python -X importtime``) and startup.

Every pytest run is a subprocess of this interpreter (``sys.executable -m pytest``) started from the work
directory, which holds an empty ``pytest.ini`` so that the rootdir and config are fixed. Wall time is measured
around the subprocess; "session" is pytest's own ``in X s``. Peak RSS comes from ``os.wait4`` on that
subprocess (the rusage of the child and the descendants it waited for, i.e. the largest process of an xdist
run). Times are best of N (``--repeat``); RSS is the largest over the N runs. Generated trees live under a
temporary directory (or ``--workdir``) and are deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN = HERE / "gen_runs.py"
MiB = 1024 * 1024
N_PRINCIPLES_HINT = 23  # items per job when a run fails to report its counts
OK_CODES = (0, 1)  # 1 = some item failed (a FAIL finding): a normal audit outcome
TRAJ_NAMES = ("acp_trajectory.jsonl", "claude-code.txt")


# --- running things -----------------------------------------------------------------------------------------

@dataclass
class Run:
    cmd: list[str]
    rc: int | None = None
    wall: float = float("nan")
    session: float | None = None
    rss_mb: float | None = None
    cpu: float | None = None  # user + system seconds of the process and the children it reaped
    counts: dict[str, int] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False


_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|warnings?|deselected)\b")
_SESSION = re.compile(r"\bin (\d+(?:\.\d+)?)s\b")


def parse_pytest(stdout: str) -> tuple[float | None, dict[str, int]]:
    for line in reversed(stdout.strip().splitlines()):
        m = _SESSION.search(line)
        if m and (_SUMMARY.search(line) or "no tests ran" in line):
            counts: dict[str, int] = {}
            for n, what in _SUMMARY.findall(line):
                what = {"error": "errors", "warning": "warnings"}.get(what, what)
                counts[what] = counts.get(what, 0) + int(n)
            return float(m.group(1)), counts
    return None, {}


def n_items(counts: dict[str, int]) -> int:
    return sum(counts.get(k, 0) for k in ("passed", "failed", "skipped", "xfailed", "xpassed", "errors"))


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for k in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_XDIST_AUTO_NUM_WORKERS", "PYTHONWARNINGS",
              "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        env.pop(k, None)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def run_once(cmd: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> Run:
    r = Run(cmd)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=clean_env(env),
                             start_new_session=True)

        def _kill() -> None:
            r.timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the process group this script started
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, _kill)
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        r.wall = time.perf_counter() - t0
        p.returncode = r.rc = os.waitstatus_to_exitcode(status)
        r.rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
        r.cpu = usage.ru_utime + usage.ru_stime
        out.seek(0)
        err.seek(0)
        r.stdout = out.read().decode("utf-8", "replace")
        r.stderr = err.read().decode("utf-8", "replace")
    r.session, r.counts = parse_pytest(r.stdout)
    return r


@dataclass
class Best:
    cmd: list[str]
    ok: bool
    wall: float | None = None
    session: float | None = None
    rss_mb: float | None = None
    cpu: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    last: Run | None = None


def best_of(cmd: list[str], cwd: Path, n: int, timeout: float, ok_codes: tuple[int, ...] = OK_CODES,
            label: str = "", env: dict[str, str] | None = None) -> Best:
    runs = []
    for _ in range(n):
        r = run_once(cmd, cwd, timeout, env)
        if r.rc not in ok_codes or r.timed_out:
            why = f"timed out after {timeout:.0f} s" if r.timed_out else f"exit code {r.rc}"
            print(f"  !! {label or shlex.join(cmd)}: {why}; stderr tail:", flush=True)
            for ln in (r.stderr.strip().splitlines() or ["(empty)"])[-15:]:
                print(f"     {ln}")
            tail = r.stdout.strip().splitlines()[-5:]
            if tail:
                print("     stdout tail:")
                for ln in tail:
                    print(f"     {ln}")
            return Best(cmd, False, last=r)
        runs.append(r)
    return _best(cmd, runs)


def _best(cmd: list[str], runs: list[Run]) -> Best:
    sessions = [r.session for r in runs if r.session is not None]
    return Best(cmd, True, wall=min(r.wall for r in runs), session=min(sessions) if sessions else None,
                rss_mb=max(r.rss_mb or 0 for r in runs), cpu=min(r.cpu or 0 for r in runs), counts=runs[-1].counts,
                last=runs[-1])


def interleaved(cmds: dict[str, tuple], cwd: Path, n: int, timeout: float) -> dict[str, Best]:
    """Best of ``n`` rounds, each round running every command once in turn: a load change on a shared machine then
    hits every variant alike instead of whichever ran during it. ``cmds``: name → (command, exit codes that count
    as success[, extra environment])."""
    runs: dict[str, list[Run]] = {k: [] for k in cmds}
    failed: dict[str, Best] = {}
    for _ in range(n):
        for name, (cmd, ok_codes, *env) in cmds.items():
            if name in failed:
                continue
            r = run_once(cmd, cwd, timeout, env[0] if env else None)
            if r.rc not in ok_codes or r.timed_out:
                why = f"timed out after {timeout:.0f} s" if r.timed_out else f"exit code {r.rc}"
                print(f"  !! {name}: {why}; stderr tail:", flush=True)
                for ln in (r.stderr.strip().splitlines() or ["(empty)"])[-15:]:
                    print(f"     {ln}")
                failed[name] = Best(cmd, False, last=r)
                continue
            runs[name].append(r)
    return {k: failed.get(k) or _best(cmds[k][0], runs[k]) for k in cmds}


# --- formatting ---------------------------------------------------------------------------------------------

def table(headers: list[str], rows: list[list[object]]) -> None:
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
    print(flush=True)


def _fmt(v: object) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != v:
            return "–"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        if abs(v) >= 1:
            return f"{v:.2f}"
        return f"{v:.3f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def div(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def shown(cmd: list[str], work: Path) -> str:
    """The command as a README can cite it: ``python`` for this interpreter, ``$WORK`` for the work dir."""
    parts = []
    for c in cmd:
        if c == sys.executable:
            c = "python"
        elif c == str(GEN):
            c = "benchmarks/gen_runs.py"
        c = c.replace(str(work), "$WORK")
        parts.append(c if re.fullmatch(r"[\w@%+=:,./$<>-]+", c) and "<" not in c else shlex.quote(c))
    return " ".join(parts)


COMMANDS: list[str] = []


def note_cmd(section: str, cmd: list[str], work: Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    prefix = "cd $WORK && " if cwd is not None else ""
    env_s = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items())
    line = f"({section}) {prefix}{env_s}{shown(cmd, work)}"
    if line not in COMMANDS:
        COMMANDS.append(line)


# --- trees --------------------------------------------------------------------------------------------------

@dataclass
class Tree:
    path: Path
    jobs: int
    size_kb: float
    fmt: str
    files: list[Path] = field(default_factory=list)
    gen_s: float = 0.0
    ok: bool = True
    traj_bytes: int = 0
    largest: int = 0


def make_tree(work: Path, name: str, jobs: int, size_kb: float, fmt: str, args: argparse.Namespace,
              section: str, spread: float | None = None) -> Tree:
    path = work / name
    cmd = [sys.executable, str(GEN), str(path), "--jobs", str(jobs), "--size-kb", f"{size_kb:g}", "--format", fmt,
           "--seed", str(args.seed), "--procs", str(args.gen_procs)]
    if spread is not None:
        cmd += ["--spread", f"{spread:g}"]
    note_cmd(section, cmd, work)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
    tree = Tree(path, jobs, size_kb, fmt, gen_s=time.perf_counter() - t0)
    if p.returncode != 0:
        print(f"  !! generating {name} failed (exit {p.returncode}):")
        for ln in p.stderr.strip().splitlines()[-15:]:
            print(f"     {ln}")
        tree.ok = False
        return tree
    tree.files = sorted(f for f in path.rglob("*") if f.name in TRAJ_NAMES and f.is_file())
    sizes = [f.stat().st_size for f in tree.files]
    tree.traj_bytes, tree.largest = sum(sizes), max(sizes, default=0)
    TREES.append(tree)
    return tree


TREES: list[Tree] = []


PYTEST_EXTRA: list[str] = []  # --pytest-args


BASETEMP: list[str] = []  # --basetemp=$WORK/basetemp, set in main()


def pytest_cmd(*extra: str) -> list[str]:
    # an explicit --basetemp: otherwise every xdist controller "cleans up" old /tmp/pytest-of-<user>/pytest-N
    # directories, which on a shared machine can be another test suite's 100,000-directory tree (measured: 70 s)
    return [sys.executable, "-m", "pytest", *BASETEMP, *extra, *PYTEST_EXTRA]


def audit_cmd(tree: Tree | str, *extra: str) -> list[str]:
    name = tree if isinstance(tree, str) else tree.path.name
    return pytest_cmd(f"--trajaudit={name}", "-q", "-p", "no:cacheprovider", *extra)


HYPOTHESIS_OFF = ["-p", "no:hypothesispytest"]


def hypothesis_plugin_active() -> bool:
    """The hypothesis pytest11 plugin is installed and not disabled by --pytest-args."""
    names = {ep.name for ep in md.entry_points(group="pytest11")}
    return "hypothesispytest" in names and "no:hypothesispytest" not in PYTEST_EXTRA


_EMPTY: dict[tuple[str, ...], Best] = {}


def empty_run(work: Path, args: argparse.Namespace, section: str, *extra: str) -> Best:
    """``pytest --trajaudit=<empty dir>`` (exit 5: no tests ran): the fixed cost of one audit session.
    Measured once per set of extra options and shared by the sections."""
    if extra not in _EMPTY:
        (work / "empty").mkdir(exist_ok=True)
        (work / "empty" / "README.txt").write_text("no job here\n")  # an empty directory is not collected at all
        cmd = audit_cmd("empty", *extra)
        note_cmd(section, cmd, work, work)
        _EMPTY[extra] = best_of(cmd, work, args.repeat, args.timeout, ok_codes=(0, 5), label="empty audit run")
    return _EMPTY[extra]


def marginal(b: Best, zero: Best | None) -> float | None:
    """Session time minus the session time of the matching zero-item run."""
    if not b.ok or b.session is None or zero is None or not zero.ok or zero.session is None:
        return None
    return max(b.session - zero.session, 0.0)


def marginal_cpu(b: Best, zero: Best | None) -> float | None:
    """CPU seconds (user + system) minus those of the matching zero-item run: the work the items cost, which,
    unlike wall or session time, another process on the same cores does not inflate."""
    if not b.ok or b.cpu is None or zero is None or not zero.ok or zero.cpu is None:
        return None
    return max(b.cpu - zero.cpu, 0.0)


# --- sections -----------------------------------------------------------------------------------------------

TARGETS: list[list[object]] = []  # [what, measured, target, met] for the closing table
RESULTS: dict[str, float] = {}  # figures one section hands to a later one


def target(what: str, measured: str, goal: str, met: bool | None) -> None:
    TARGETS.append([what, measured, goal, "–" if met is None else ("met" if met else "MISSED")])


def loadavg() -> str:
    """The load average, and where the kernel reports it (Linux pressure stall information) the share of the last
    minute in which some task waited for CPU or I/O, which the load average does not show (the same bare ``-n 2``
    run has taken 63 s at I/O stalls of 30–60 % and 19 s a few minutes later)."""
    try:
        out = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"
    stalls = []
    for res in ("cpu", "io"):
        try:
            some = Path(f"/proc/pressure/{res}").read_text().splitlines()[0].split()
            stalls.append(f"{res} {float(dict(kv.split('=') for kv in some[1:])['avg60']):.0f} %")
        except (OSError, IndexError, KeyError, ValueError):
            continue
    return out + (f"; stalled over the last minute: {', '.join(stalls)}" if stalls else "")


def engine_time(tree: Path, repeat: int) -> dict | None:
    """Best-of-``repeat`` seconds of the audit work alone (load + every principle, no pytest) over ``tree``, in a
    fresh interpreter (``measure.py --engine-time``)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--engine-time", str(tree), "--repeat", str(repeat)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
    if p.returncode != 0:
        print(f"  !! engine time of {tree.name}: exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
        return None
    import json

    return json.loads(p.stdout.strip().splitlines()[-1])


def engine_time_side_by_side(tree: Path, parts: int) -> dict | None:
    """The audit work of ``tree`` split over ``parts`` interpreters started together (``--engine-time TREE --part
    I/N``: job ``j`` goes to part ``j mod N``), each timed once after its warm-up job: what the work itself costs
    when ``parts`` processes share the cores (memory and caches), with no pytest and no xdist."""
    import json

    cmds = [[sys.executable, str(Path(__file__).resolve()), "--engine-time", str(tree), "--repeat", "1",
             "--part", f"{i}/{parts}"] for i in range(parts)]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
             for c in cmds]
    outs = [p.communicate() for p in procs]
    if any(p.returncode != 0 for p in procs):
        print(f"  !! side-by-side engine time of {tree.name}: exit {[p.returncode for p in procs]}")
        return None
    runs = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    return {"seconds": max(r["seconds"] for r in runs), "cpu": sum(r["cpu"] for r in runs),
            "jobs": sum(r["jobs"] for r in runs)}


def _engine_time_main(root: Path, repeat: int, part: tuple[int, int] = (0, 1)) -> int:
    """The audit as the plugin runs it for these jobs (every registered principle except the advisor family, whose
    items exist only for jobs with privileged material), timed in-process after one warm-up job. ``part`` (I, N)
    keeps every N-th job from the I-th on (the warm-up job is the part's first)."""
    import json

    from pytest_trajaudit.discover.jobs import find_jobs
    from pytest_trajaudit.principles import registry
    from pytest_trajaudit.principles.engine import audit_job
    from pytest_trajaudit.settings import Settings

    refs = find_jobs(root.resolve())[part[0]::part[1]]
    cfg = Settings()
    principles = [p for p in registry().values() if p.family != "advisor"]
    if refs:
        audit_job(refs[0], cfg, principles)  # imports, compiled patterns
    best = best_cpu = float("inf")
    for _ in range(max(1, repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        for r in refs:
            audit_job(r, cfg, principles)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    print(json.dumps({"seconds": best, "cpu": best_cpu, "jobs": len(refs), "principles": len(principles)}))
    return 0


def section_a(work: Path, args: argparse.Namespace) -> None:
    print(f"## (a) Per-item overhead: {args.overhead_jobs:,} jobs × ~{args.tiny_kb:g} KiB trajectories vs a bare "
          f"parametrized test (load average {loadavg()})\n", flush=True)
    tree = make_tree(work, "tiny", args.overhead_jobs, args.tiny_kb, "acp", args, "a")
    if not tree.ok:
        return
    (work / "bare0").mkdir(exist_ok=True)
    (work / "empty").mkdir(exist_ok=True)
    (work / "empty" / "README.txt").write_text("no job here\n")  # an empty directory is not collected at all
    lean, full = audit_cmd(tree), audit_cmd(tree, "--trajaudit-protocol=full")
    probe = run_once(lean, work, args.timeout)
    items = n_items(probe.counts) or args.overhead_jobs * N_PRINCIPLES_HINT
    bare_dir = work / "bare"
    if not bare_dir.exists():
        bare_dir.mkdir()
        (bare_dir / "test_bare.py").write_text(
            "import pytest\n\n\n"
            f"@pytest.mark.parametrize(\"i\", range({items}))\n"
            "def test_bare(i):\n"
            "    pass\n")
    cmds = {"lean": (lean, OK_CODES), "full": (full, OK_CODES),
            "bare": (pytest_cmd("bare/test_bare.py", "-q", "-p", "no:cacheprovider"), OK_CODES),
            "bare0": (pytest_cmd("bare0", "-q", "-p", "no:cacheprovider"), (0, 5)),
            "empty": (audit_cmd("empty"), (0, 5))}
    for cmd, _ in cmds.values():
        note_cmd("a", cmd, work, work)
    res = interleaved(cmds, work, max(args.repeat, 2), args.timeout)
    eng = engine_time(tree.path, args.repeat)
    note_cmd("a", [sys.executable, "benchmarks/measure.py", "--engine-time", str(tree.path)], work)
    eng_cpu = eng["cpu"] if eng else None
    rows = []
    per: dict[str, float | None] = {}
    for key, name, zero in (("lean", "pytest --trajaudit (lean protocol, default)", "empty"),
                            ("full", "pytest --trajaudit --trajaudit-protocol=full", "empty"),
                            ("bare", "bare parametrized test", "bare0")):
        b, z = res[key], res[zero]
        n = n_items(b.counts) if b.ok else None
        m, mc = marginal(b, z), marginal_cpu(b, z)
        over = None if mc is None or eng_cpu is None or key == "bare" else max(mc - eng_cpu, 0.0)
        per[key] = div(mc if key == "bare" else over, n)
        rows.append([name, n, b.wall, b.session, div(m, n) and 1000 * div(m, n), b.cpu, z.cpu if z.ok else None,
                     div(mc, n) and 1000 * div(mc, n), eng_cpu if key != "bare" else None, per[key] and 1000 * per[key],
                     b.rss_mb])
    table(["run", "items", "wall s", "session s", "marginal session ms/item", "CPU s", "0-item CPU s",
           "marginal CPU ms/item", "audit work CPU s (no pytest)", "overhead CPU ms/item", "peak RSS MiB"], rows)
    print("Each command ran once per round, best of the rounds. marginal = (figure − the same command with 0 items) "
          "/ items; CPU = user + system seconds (what the items cost, which other processes on the same cores do "
          "not inflate, unlike wall and session time); overhead = marginal CPU minus the audit work itself "
          "(`measure.py --engine-time`: loading and every principle, in-process, no pytest). The 0-item audit run "
          "is `--trajaudit=empty`, the bare one an empty directory.")
    if res["lean"].ok:
        print(f"audit outcomes: {', '.join(f'{k} {v:,}' for k, v in sorted(res['lean'].counts.items()))} "
              f"({tree.jobs:,} trajectories of {tree.traj_bytes / tree.jobs / 1024:.1f} KiB on average, each read once)")
    print(flush=True)
    if per.get("lean") is not None and per.get("bare"):
        RESULTS["overhead_s_per_item"] = per["lean"]
        target("plugin overhead per audit item vs a bare function item (CPU)",
               f"{per['lean'] * 1000:.3f} ms vs {per['bare'] * 1000:.3f} ms = {per['lean'] / per['bare']:.2f}×",
               "≤ 0.5×", per["lean"] <= 0.5 * per["bare"])
    if per.get("full") is not None and per.get("lean") is not None and per["full"]:
        print(f"lean protocol vs full: {per['lean'] * 1000:.3f} vs {per['full'] * 1000:.3f} ms overhead per item "
              f"({per['lean'] / per['full']:.2f}×)\n")


def _read_all(files: list[Path]) -> float:
    t0 = time.process_time()
    n = 0
    for f in files:
        with open(f, "rb") as fh:
            n += len(fh.read())
    return time.process_time() - t0


def _orjson_lines(files: list[Path]) -> float:
    import orjson

    t0 = time.process_time()
    for f in files:
        with open(f, "rb") as fh:
            for line in fh:
                if line.strip():
                    orjson.loads(line)
    return time.process_time() - t0


def anticheat_regex() -> tuple[str, int]:
    """The anticheat principles' pattern lists (P1 reads, P2 lethal + suspicious) as one alternation."""
    try:
        from pytest_trajaudit import settings as s

        pats = [*s.READ_PATTERNS, *s.LETHAL, *s.SUSPICIOUS]
    except ImportError:  # measure.py run by an interpreter without the package
        pats = [r"/oracle/", r"solve\.sh", r"/verifier/", r"test_outputs\.py", r"\bconftest\.py"]
    return "|".join(f"(?:{p})" for p in pats), len(pats)


def _regex_pass(files: list[Path], rx: re.Pattern[bytes]) -> tuple[float, int]:
    t0 = time.process_time()
    hits = 0
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        hits += sum(1 for _ in rx.finditer(data))
    return time.process_time() - t0, hits


def _single_search(files: list[Path], rx: re.Pattern[bytes]) -> float:
    t0 = time.process_time()
    for f in files:
        with open(f, "rb") as fh:
            rx.search(fh.read())
    return time.process_time() - t0


def baselines(tree: Path, repeat: int) -> dict | None:
    """The in-process baselines of (b), measured in a fresh interpreter (``measure.py --baselines``): parsing a GiB
    here would grow this process, and a child's peak RSS as the kernel reports it starts from its parent's size at
    fork, which would inflate every later measurement."""
    import json

    cmd = [sys.executable, str(Path(__file__).resolve()), "--baselines", str(tree), "--repeat", str(repeat)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
    if p.returncode != 0:
        print(f"  !! baselines of {tree.name}: exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def _baselines_main(root: Path, repeat: int) -> int:
    import json

    files = sorted(f for f in root.rglob("*") if f.name in TRAJ_NAMES and f.is_file())
    pat, _ = anticheat_regex()
    rx = re.compile(pat.encode())
    absent = re.compile(rb"/oracle/answer\.json-not-present")
    out: dict[str, float | int | None] = {"read": min(_read_all(files) for _ in range(repeat))}
    try:
        out["orjson"] = min(_orjson_lines(files) for _ in range(repeat))
    except ImportError:
        out["orjson"] = None  # orjson missing in this interpreter
    runs = [_regex_pass(files, rx) for _ in range(repeat)]
    out["regex"], out["hits"] = min(runs)[0], runs[0][1]
    out["literal"] = min(_single_search(files, absent) for _ in range(repeat))
    print(json.dumps(out))
    return 0


def section_b(work: Path, args: argparse.Namespace) -> None:
    print(f"## (b) Throughput: {args.mbps_jobs} jobs × ~{args.mbps_mb:g} MiB per format (load average {loadavg()})\n",
          flush=True)
    pat, n_pat = anticheat_regex()
    rg = shutil.which("rg")
    rows = []
    total_mib = total_orj = total_beyond = 0.0
    for fmt in args.formats:
        tree = make_tree(work, f"big-{fmt}", args.mbps_jobs, args.mbps_mb * 1024, fmt, args, "b")
        if not tree.ok or not tree.files:
            continue
        mib = tree.traj_bytes / MiB
        cmd = audit_cmd(tree)
        note_cmd("b", cmd, work, work)
        audit = best_of(cmd, work, args.repeat, args.timeout, label=f"audit (b, {fmt})")
        base = baselines(tree.path, args.repeat)
        note_cmd("b", [sys.executable, "benchmarks/measure.py", "--baselines", str(tree.path)], work)
        if base is None:
            continue
        t_read, t_orj, t_rx, hits, t_lit = base["read"], base["orjson"], base["regex"], base["hits"], base["literal"]
        eng = engine_time(tree.path, args.repeat)
        note_cmd("b", [sys.executable, "benchmarks/measure.py", "--engine-time", str(tree.path)], work)
        label = f"{fmt} ({mib:.0f} MiB)"
        rows.append([label, "read bytes (open + read)", t_read, div(mib, t_read)])
        rows.append([label, "orjson.loads line by line", t_orj, div(mib, t_orj)])
        rows.append([label, f"re.finditer, {n_pat} anticheat patterns ({hits} hits)", t_rx, div(mib, t_rx)])
        rows.append([label, "re.search, one literal, no match", t_lit, div(mib, t_lit)])
        if rg:
            rcmd = [rg, "--no-config", "-uuu", "--count-matches", "-e", pat, "--", *map(str, tree.files)]
            note_cmd("b", [*rcmd[:-len(tree.files)], f"<{len(tree.files)} trajectory files>"], work)
            r = best_of(rcmd, work, args.repeat, args.timeout, ok_codes=(0, 1), label="rg (b)")
            rows.append([label, f"rg --count-matches (same {n_pat} patterns), wall", r.wall, div(mib, r.wall)])
        if eng:
            rows.append([label, f"audit work alone (load + {eng['principles']} principles, in-process)",
                         eng["cpu"], div(mib, eng["cpu"])])
        m = marginal_cpu(audit, empty_run(work, args, "b"))
        rows.append([label, "pytest --trajaudit, CPU", audit.cpu, div(mib, audit.cpu)])
        rows.append([label, "pytest --trajaudit, CPU − empty-run CPU", m, div(mib, m)])
        per_item = RESULTS.get("overhead_s_per_item")
        if m is not None and per_item is not None and audit.ok:
            beyond = max(m - per_item * n_items(audit.counts), 0.0)
            rows.append([label, "  … minus the per-item overhead of (a)", beyond, div(mib, beyond)])
            if t_orj:
                total_mib += mib
                total_orj += t_orj
                total_beyond += beyond
    if not rg:
        print("(rg not on PATH: ripgrep row skipped)\n")
    table(["trajectories", "method", "CPU s", "MiB/s"], rows)
    print("Every figure is CPU time (user + system): the in-process ones by `time.process_time()`, the pytest runs by "
          "the rusage of the process; `rg` by its wall time. The per-item overhead comes from (a).\n")
    if total_orj:
        ratio = total_beyond / total_orj
        target(f"full audit beyond the per-item overhead vs orjson.loads ({total_mib:.0f} MiB)",
               f"{total_beyond:.2f} s vs {total_orj:.2f} s = {ratio:.1f}×", "≤ 2×", ratio <= 2)


def section_c(work: Path, args: argparse.Namespace) -> None:
    print(f"## (c) xdist: {args.xdist_jobs} jobs × ~{args.xdist_mb:g} MiB, -n 0 vs -n {args.workers} "
          f"(load average {loadavg()})\n", flush=True)
    try:
        md.version("pytest-xdist")
    except md.PackageNotFoundError:
        print("pytest-xdist not installed: skipped\n")
        return
    tree = make_tree(work, "xdist", args.xdist_jobs, args.xdist_mb * 1024, args.xdist_format, args, "c")
    if not tree.ok:
        return
    (work / "empty").mkdir(exist_ok=True)
    (work / "empty" / "README.txt").write_text("no job here\n")
    w = str(args.workers)
    out = ci_outputs
    print(f"Every run writes JUnit XML, {'CTRF, ' if ctrf_available() else ''}and the audit reports "
          f"(`--trajaudit-report`), each run to its own directory under `$WORK/out/`"
          f"{'' if ctrf_available() else ' (no CTRF: pytest-json-ctrf is not installed or is disabled)'}.\n")
    # interleaved, so that a load change hits every variant alike; the empty and collect-only runs split what an
    # -n W run adds into its fixed part (starting W more processes, each worker collecting every item) and the rest
    cmds = {"-n 0": (audit_cmd(tree, "-n", "0", *out("c-n0")), OK_CODES),
            f"-n {w}": (audit_cmd(tree, "-n", w, *out(f"c-n{w}")), OK_CODES),
            "empty, -n 0": (audit_cmd("empty", "-n", "0", *out("c-empty-n0")), (0, 5)),
            f"empty, -n {w}": (audit_cmd("empty", "-n", w, *out(f"c-empty-n{w}")), (0, 5)),
            "collect only, -n 0": (audit_cmd(tree, "-n", "0", "--collect-only", *out("c-collect")), (0,))}
    # the most any report transport could give: the same -n W run with no item event sent to the controller
    # (benchmarks/xdist_noreports.py; the controller then renders no item: "no tests ran", and every job, none of
    # whose findings arrived, is INCOMPLETE: exit 10)
    bench = str(Path(__file__).resolve().parent)
    noreports_env = {"PYTHONPATH": os.pathsep.join(p for p in (bench, os.environ.get("PYTHONPATH", "")) if p)}
    cmds[f"-n {w}, no reports sent"] = (audit_cmd(tree, "-n", w, "-p", "xdist_noreports", *out(f"c-free-n{w}")),
                                        (10,), noreports_env)
    for cmd, _, *env in cmds.values():
        note_cmd("c", cmd, work, work, {"PYTHONPATH": "benchmarks"} if env else None)
    res = interleaved(cmds, work, args.repeat, args.timeout)
    table(["run", "items", "wall s", "session s", "CPU s (all processes)", "peak RSS MiB (largest process)"],
          [[k, n_items(b.counts) if b.ok and k in ("-n 0", f"-n {w}") else None, b.wall, b.session,
            b.cpu, b.rss_mb] for k, b in res.items()])
    a, b = res["-n 0"], res[f"-n {w}"]
    if a.ok and b.ok:
        speed = a.wall / b.wall
        print(f"wall-time speed-up of -n {w} over -n 0: {speed:.2f}× ({tree.traj_bytes / MiB:.0f} MiB of "
              f"{args.xdist_format} trajectories; >1 means xdist is faster; load average now {loadavg()})\n", flush=True)
        target(f"-n {w} vs -n 0, {tree.jobs} jobs × {args.xdist_mb:g} MiB", f"{speed:.2f}×",
               "≥ 1.6× (500 × 1 MiB)", speed >= 1.6 if tree.jobs >= 500 else None)
        xdist_split(res, w, n_items(a.counts))
        free = res[f"-n {w}, no reports sent"]
        if free.ok:
            print(f"The same -n {w} run with no item event sent to the controller (`-p xdist_noreports`: every job "
                  f"audited, no report rebuilt or rendered): {free.wall:.2f} s wall, {free.cpu:.2f} s CPU, "
                  f"**{a.wall / free.wall:.2f}×** the serial run: the most any report transport could give here "
                  f"(1.6× would need {a.wall / 1.6:.2f} s).\n", flush=True)
        bound = xdist_bound(work, args, tree.path, res, w)
        if bound:
            share = speed / bound
            print(f"**(c) bound {bound:.2f}×, -n {w} {speed:.2f}×: {share:.0%} of the bound** (target ≥ 90 %; "
                  f"{tree.jobs} jobs, JUnit{', CTRF' if ctrf_available() else ''} and --trajaudit-report on; "
                  f"load average {loadavg()})\n", flush=True)
            target(f"-n {w} vs the {w}-core bound, {tree.jobs} jobs × {args.xdist_mb:g} MiB", f"{share:.0%}",
                   "≥ 90 %", share >= 0.9 if tree.jobs >= 500 else None)
        xdist_ceiling(work, args, n_items(a.counts), a.cpu)


def xdist_split(res: dict[str, Best], w: str, items: int) -> None:
    """What the -n W run spent beyond the serial run, in CPU seconds (each the best of its runs): the fixed part
    (W more interpreters started, then each worker collecting every item: measured on the empty tree and with
    --collect-only) and the rest, which grows with the items (their reports and events crossing from the workers
    to the controller and handled there, both sides' hook calls). With the rest at zero and the cores always busy,
    -n W could at best take (serial CPU + fixed part) / W."""
    a, b = res["-n 0"], res[f"-n {w}"]
    e0, ew, col = res["empty, -n 0"], res[f"empty, -n {w}"], res["collect only, -n 0"]
    if not all(x.ok and x.cpu is not None for x in (a, b, e0, ew, col)) or not items:
        return
    added = b.cpu - a.cpu
    starts = ew.cpu - e0.cpu
    collect = max(col.cpu - e0.cpu, 0.0)
    fixed = starts + (int(w) - 1) * collect
    rest = added - fixed
    best = (a.cpu + fixed) / int(w)
    print(f"CPU the -n {w} run added to the serial run's {a.cpu:.2f} s: **{added:.2f} s**, of which {starts:.2f} s "
          f"starting {w} more interpreters (empty tree: {ew.cpu:.2f} vs {e0.cpu:.2f} s), {(int(w) - 1) * collect:.2f} s "
          f"collecting every item in {int(w) - 1} more process(es) ({collect:.2f} s each), and **{rest:.2f} s** "
          f"({rest / items * 1e6:.0f} µs per item) the items' reports and events crossing to the controller and "
          f"handled on both sides. With that last part free and both cores always busy, -n {w} could take "
          f"(serial CPU + fixed part) / {w} = {best:.2f} s at best: {a.wall / best:.2f}× the serial wall time.\n",
          flush=True)


def ctrf_available() -> bool:
    """pytest-json-ctrf is installed and not disabled by --pytest-args."""
    try:
        md.version("pytest-json-ctrf")
    except md.PackageNotFoundError:
        return False
    return "no:ctrf" not in PYTEST_EXTRA


def ci_outputs(name: str) -> list[str]:
    """JUnit XML, CTRF (when pytest-json-ctrf is there) and the audit reports, into ``out/<name>/`` under the
    work directory (runs start there): what a CI run of the audit writes."""
    d = f"out/{name}"
    return [f"--junitxml={d}/junit.xml", *([f"--ctrf={d}/ctrf.json"] if ctrf_available() else []),
            f"--trajaudit-report={d}/report"]


def xdist_bound(work: Path, args: argparse.Namespace, tree: Path, res: dict[str, Best], w: str) -> float | None:
    """The fastest an -n W run of this tree could be, from walls measured without xdist's run-time costs: the -n W
    run's start-up (the empty tree under -n W: W + 1 interpreters) and one collection (the workers collect side by
    side), then the serial run phase (-n 0 minus its collect-only run) split W ways with nothing added, and once
    more with the audit work in it taking what it takes when W processes do it side by side (no pytest, no xdist:
    ``engine_time_side_by_side``) instead of its serial time / W."""
    a, e0, ew, col = res["-n 0"], res["empty, -n 0"], res[f"empty, -n {w}"], res["collect only, -n 0"]
    if not all(x.ok and x.wall is not None for x in (a, e0, ew, col)):
        return None
    n = int(w)
    serial_eng = side = None
    for _ in range(args.repeat):  # interleaved, best of each
        one = engine_time(tree, 1)
        two = engine_time_side_by_side(tree, n)
        if one:
            serial_eng = one["seconds"] if serial_eng is None else min(serial_eng, one["seconds"])
        if two:
            side = two["seconds"] if side is None else min(side, two["seconds"])
    note_cmd("c", [sys.executable, "benchmarks/measure.py", "--engine-time", str(tree)], work)
    for i in range(n):  # started together
        note_cmd("c", [sys.executable, "benchmarks/measure.py", "--engine-time", str(tree), "--part", f"{i}/{n}"], work)
    fixed = ew.wall + max(col.wall - e0.wall, 0.0)
    run = max(a.wall - col.wall, 0.0)
    perfect = fixed + run / n
    print(f"The fastest -n {w} could be here, from walls measured without xdist's run-time costs: start-up "
          f"{ew.wall:.2f} s (empty tree, -n {w}) + one collection {max(col.wall - e0.wall, 0.0):.2f} s (the workers "
          f"collect side by side) + the serial run phase {run:.2f} s (-n 0 minus its collect-only run) / {w} = "
          f"**{perfect:.2f} s, {a.wall / perfect:.2f}×** the serial run, with no report, event or scheduling cost "
          f"at all and the audit work splitting perfectly.", end="")
    if serial_eng and side:
        real = fixed + side + max(run - serial_eng, 0.0) / n
        print(f" The audit work alone (in-process, no pytest) takes {serial_eng:.2f} s in one process and "
              f"{side:.2f} s in {w} processes side by side on 1/{w} of the jobs each ({serial_eng / side:.2f}×); "
              f"with that instead of {serial_eng:.2f} / {w}: **{real:.2f} s, {a.wall / real:.2f}×**.", end="")
    print("\n", flush=True)
    return a.wall / perfect if perfect > 0 else None


_CEILING_TEST = """\
import pytest

K = {k}


@pytest.mark.parametrize("i", range({items}))
def test_work(i):
    sum(range(K))
"""


def _calibrate() -> float:
    """CPU seconds of ``sum(range(100_000))`` in a fresh interpreter like the test's (best of 20)."""
    code = ("import time\nb=9\nfor _ in range(20):\n c=time.process_time(); sum(range(100_000)); "
            "b=min(b, time.process_time()-c)\nprint(b)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(p.stdout.strip())


def xdist_ceiling(work: Path, args: argparse.Namespace, items: int, audit_cpu: float | None) -> None:
    """xdist's own ceiling for work cut this fine: a bare parametrized test with as many items whose -n 0 run
    costs the CPU the audit's -n 0 run did (each item burns an audit item's average CPU minus what pytest spends
    on a bare item), -n 0 vs -n W."""
    if not items or not audit_cpu:
        return
    per_item = audit_cpu / items
    d = work / "ceiling"
    d.mkdir(exist_ok=True)
    # first the same test doing nothing: its CPU is pytest's own; each item then burns the rest of an audit item
    (d / "test_ceiling.py").write_text(_CEILING_TEST.format(k=0, items=items))
    zero = best_of(pytest_cmd("ceiling/test_ceiling.py", "-q", "-p", "no:cacheprovider", "-n", "0"), work, 1,
                   args.timeout, label="bare ceiling calibration")
    work_per_item = max(per_item - (zero.cpu or 0) / items, 0.0)
    k = max(1, int(100_000 * work_per_item / max(_calibrate(), 1e-9)))
    (d / "test_ceiling.py").write_text(_CEILING_TEST.format(k=k, items=items))
    res = {}
    rows = []
    for n in ("0", str(args.workers)):
        cmd = pytest_cmd("ceiling/test_ceiling.py", "-q", "-p", "no:cacheprovider", "-n", n)
        note_cmd("c", cmd, work, work)
        b = best_of(cmd, work, args.repeat, args.timeout, label=f"bare ceiling (c, -n {n})")
        res[n] = b
        rows.append([f"bare, -n {n}", n_items(b.counts) if b.ok else None, b.wall, b.cpu])
    table(["run", "items", "wall s", "CPU s"], rows)
    a, b = res["0"], res[str(args.workers)]
    if a.ok and b.ok:
        print(f"xdist's own ceiling here: {items:,} bare items of ~{per_item * 1000:.2f} ms CPU each (what an audit "
              f"item of the -n 0 run cost on average, pytest included): -n {args.workers} is {a.wall / b.wall:.2f}× "
              f"-n 0. Every item's reports cross to one controller process that shares the cores with the "
              f"workers.\n", flush=True)


def section_d(work: Path, args: argparse.Namespace) -> None:
    empty = empty_run(work, args, "d")
    base = empty.rss_mb if empty is not None and empty.ok else None
    print(f"## (d) Peak RSS vs largest trajectory (one job per tree; sizes {', '.join(f'{s:g}' for s in args.rss_mb)} "
          f"MiB) and vs number of jobs (load average {loadavg()})\n", flush=True)
    rows = []
    if base is not None:
        rows.append(["(empty audit root)", "–", 0, empty.wall, base, None, None])
    worst = 0.0
    for fmt in args.formats:
        for size in args.rss_mb:
            tree = make_tree(work, f"rss-{fmt}-{size:g}", 1, size * 1024, fmt, args, "d", spread=0)
            if not tree.ok or not tree.files:
                continue
            cmd = audit_cmd(tree)
            note_cmd("d", cmd, work, work)
            b = best_of(cmd, work, args.repeat, args.timeout, label=f"audit (d, {fmt} {size:g} MiB)")
            mib = tree.largest / MiB
            excess = div((b.rss_mb or 0) - (base or 0), mib) if b.ok else None
            if excess is not None and size == max(args.rss_mb):
                worst = max(worst, excess)
            rows.append([f"{size:g} MiB", fmt, mib, b.wall, b.rss_mb, excess, div(b.rss_mb, mib) if b.ok else None])
            shutil.rmtree(tree.path, ignore_errors=True)
    table(["target", "format", "trajectory MiB", "wall s", "peak RSS MiB", "(RSS − empty run) / trajectory",
           "RSS / trajectory"], rows)
    if worst:
        target(f"peak RSS above the empty run vs the largest trajectory ({max(args.rss_mb):g} MiB)", f"{worst:.2f}×",
               "≤ 3×", worst <= 3)
    rows = []
    per_job = []
    for n in args.rss_jobs:
        tree = make_tree(work, f"rssn-{n}", n, 1024, "acp", args, "d", spread=0)
        if not tree.ok:
            continue
        cmd = audit_cmd(tree)
        note_cmd("d", cmd, work, work)
        b = best_of(cmd, work, 1, args.timeout, label=f"audit (d, {n} jobs)")
        items = n_items(b.counts) if b.ok else None
        rows.append([n, items, b.wall, b.rss_mb, div((b.rss_mb or 0) - (base or 0), items) and
                     1024 * div((b.rss_mb or 0) - (base or 0), items)])
        if b.ok and items:
            per_job.append((n, b.rss_mb))
        shutil.rmtree(tree.path, ignore_errors=True)
    table(["jobs × 1 MiB", "items", "wall s", "peak RSS MiB", "(RSS − empty run) KiB per item"], rows)
    if len(per_job) >= 2:
        (n0, r0), (n1, r1) = per_job[0], per_job[-1]
        slope = (r1 - r0) / (n1 - n0) * 1024
        print(f"RSS grows {slope:.0f} KiB per 1 MiB job between {n0} and {n1} jobs: the per-item reports pytest "
              "keeps (terminal summary, JUnit/CTRF) and each job's records for summary.json; no trajectory data "
              "outlives its job.\n")
        target("peak RSS vs number of jobs (trajectory data)", f"+{slope:.0f} KiB per job (reports and records)",
               "flat", None)
    if args.huge_gb:
        section_huge(work, args, base)


def section_huge(work: Path, args: argparse.Namespace, base: float | None) -> None:
    """A {huge_gb} GiB ACP trajectory: refused by the default size limit (without reading it), then audited with the
    limits raised, streamed line by line."""
    gib = args.huge_gb
    print(f"### (d) A {gib:g} GiB trajectory\n", flush=True)
    tree = make_tree(work, "huge", 1, gib * 1024 * 1024, "acp", args, "d", spread=0)
    if not tree.ok:
        return
    rows = []
    cmd = audit_cmd(tree, "-rE")
    note_cmd("d", cmd, work, work)
    r = best_of(cmd, work, 1, args.timeout, label="audit (d, huge, default limits)")
    reason = next((ln for ln in (r.last.stdout.splitlines() if r.last else []) if "size limit" in ln), "")
    rows.append(["default limits (512 MiB per file)", r.wall, r.rss_mb, reason[:150] or "(no size-limit line?)"])
    limit = int(gib * 1024 * 2)
    cmd = audit_cmd(tree, f"--trajaudit-max-file-mb={limit}", f"--trajaudit-max-job-mb={limit}")
    note_cmd("d", cmd, work, work)
    r = best_of(cmd, work, 1, args.timeout, label="audit (d, huge, raised limits)")
    rows.append([f"--trajaudit-max-file-mb={limit} --trajaudit-max-job-mb={limit}", r.wall, r.rss_mb,
                 ", ".join(f"{k} {v}" for k, v in sorted(r.counts.items()))])
    table(["run", "wall s", "peak RSS MiB", "outcome"], rows)
    mib = tree.largest / MiB
    if r.ok and base is not None:
        print(f"streamed: peak RSS {r.rss_mb:.0f} MiB for a {mib:,.0f} MiB trajectory "
              f"({((r.rss_mb or 0) - base) / mib:.3f}× above the empty run)\n")
        target(f"a {gib:g} GiB trajectory, streamed", f"peak RSS {r.rss_mb:.0f} MiB", "not loaded whole", True)
    shutil.rmtree(tree.path, ignore_errors=True)


_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)\s*$")


def importtime(stmt: str) -> tuple[dict[str, tuple[int, int]], int, int] | None:
    """({top-level module: (self µs, cumulative µs)}, sum of self µs, number of modules) for ``stmt``."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", stmt], capture_output=True, text=True,
                       env=clean_env())
    if p.returncode != 0:
        print(f"  !! -X importtime -c {stmt!r}: exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
        return None
    mods: dict[str, tuple[int, int]] = {}
    total = count = 0
    for line in p.stderr.splitlines():
        m = _IMPORTTIME.match(line)
        if not m:
            continue
        s, c, name = int(m.group(1)), int(m.group(2)), m.group(4)
        total += s
        count += 1
        mods.setdefault(name, (s, c))
    return mods, total, count


def section_e(work: Path, args: argparse.Namespace) -> None:
    print("## (e) Import time and startup\n", flush=True)
    rows = []
    runs = [importtime("import pytest_trajaudit") for _ in range(args.repeat)]
    runs = [r for r in runs if r]
    note_cmd("e", [sys.executable, "-X", "importtime", "-c", "import pytest_trajaudit"], work)
    if runs:
        cum = min(r[0].get("pytest_trajaudit", (0, 0))[1] for r in runs)
        rows.append(["`import pytest_trajaudit`: cumulative (-X importtime)", f"{cum / 1000:.1f} ms"])
        target("`import pytest_trajaudit` (-X importtime)", f"{cum / 1000:.1f} ms", "≤ 150 ms", cum / 1000 <= 150)
        rows.append(["  sum of self times of every import (incl. interpreter startup)",
                     f"{min(r[1] for r in runs) / 1000:.1f} ms ({runs[0][2]} modules)"])
    runs = [importtime("import pytest_trajaudit.plugin") for _ in range(args.repeat)]
    runs = [r for r in runs if r]
    note_cmd("e", [sys.executable, "-X", "importtime", "-c", "import pytest_trajaudit.plugin"], work)
    if runs:
        plug = min(r[0].get("pytest_trajaudit.plugin", (0, 0))[1] for r in runs)
        pyt = min(r[0].get("pytest", (0, 0))[1] for r in runs)
        mods = runs[0][0]
        rows.append(["`pytest_trajaudit.plugin`: cumulative (-X importtime)", f"{plug / 1000:.1f} ms"])
        rows.append(["  of which `import pytest`", f"{pyt / 1000:.1f} ms"])
        rows.append(["  of which the rest", f"{(plug - pyt) / 1000:.1f} ms"])
        target("`import pytest_trajaudit.plugin` beyond `import pytest` (-X importtime)", f"{(plug - pyt) / 1000:.0f} ms",
               "≤ 150 ms", (plug - pyt) / 1000 <= 150)
        rows.append(["  sum of self times of every import (incl. interpreter startup)",
                     f"{min(r[1] for r in runs) / 1000:.1f} ms ({runs[0][2]} modules)"])
        heavy = [m for m in ("litellm", "openai", "httpx", "pydantic", "jsonschema", "anyio") if m in mods]
        rows.append(["  heavy modules imported by the plugin", ", ".join(heavy) or "none"])
    walls: dict[str, float] = {}
    for label, stmt in (("`python -c pass` wall", "pass"), ("`python -c 'import pytest'` wall", "import pytest"),
                        ("`python -c 'import pytest_trajaudit'` wall", "import pytest_trajaudit"),
                        ("`python -c 'import pytest_trajaudit.plugin'` wall", "import pytest_trajaudit.plugin")):
        cmd = [sys.executable, "-c", stmt]
        note_cmd("e", cmd, work)
        b = best_of(cmd, work, max(args.repeat, 3), args.timeout, ok_codes=(0,), label=label)
        if b.ok and b.wall is not None:
            walls[stmt] = b.wall
        rows.append([label, f"{b.wall * 1000:.0f} ms" if b.ok else "failed"])
    if "pass" in walls and "import pytest_trajaudit.plugin" in walls and "import pytest" in walls:
        rows.append(["  plugin wall − `import pytest` wall",
                     f"{(walls['import pytest_trajaudit.plugin'] - walls['import pytest']) * 1000:.0f} ms"])
    def _empty_row(label: str, b: Best) -> None:
        rows.append([label, f"{b.wall * 1000:.0f} ms wall, {b.session or 0:.2f} s session, peak RSS {b.rss_mb:.0f} MiB"
                     if b.ok else "failed"])

    _empty_row("empty audit run (`pytest --trajaudit=empty -q -p no:cacheprovider`)", empty_run(work, args, "e"))
    if hypothesis_plugin_active():
        _empty_row("  … with `-p no:hypothesispytest`", empty_run(work, args, "e", *HYPOTHESIS_OFF))
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    cmd = audit_cmd("empty", "-p", "pytest_trajaudit.plugin")
    note_cmd("e", cmd, work, work, env)
    _empty_row("  … with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 -p pytest_trajaudit.plugin",
               best_of(cmd, work, args.repeat, args.timeout, ok_codes=(0, 5), label="empty run, no autoload", env=env))
    cmd = pytest_cmd("--version")
    note_cmd("e", cmd, work, work)
    b = best_of(cmd, work, args.repeat, args.timeout, ok_codes=(0,), label="pytest --version")
    rows.append(["`pytest --version` wall (loads every pytest11 plugin)", f"{b.wall * 1000:.0f} ms" if b.ok else "failed"])
    table(["what", "time"], rows)



# --- main ---------------------------------------------------------------------------------------------------

def _ver(dist: str) -> str:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "absent"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _nproc() -> str:
    exe = shutil.which("nproc")
    if exe:
        p = subprocess.run([exe], capture_output=True, text=True)
        if p.returncode == 0:
            return p.stdout.strip()
    return str(os.cpu_count())


def header(args: argparse.Namespace, work: Path) -> None:
    plugins = sorted({ep.name for ep in md.entry_points(group="pytest11")})
    mode = "--quick" if args.quick else "default"
    print(f"# pytest-trajaudit benchmarks ({mode}, best of {args.repeat})\n")
    print(f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; host: {platform.system()} {platform.release()}, "
          f"{_cpu()}, nproc {_nproc()}")
    print(f"- python {platform.python_version()} ({sys.executable})")
    print(f"- pytest {_ver('pytest')}, pytest-xdist {_ver('pytest-xdist')}, pluggy {_ver('pluggy')}, "
          f"orjson {_ver('orjson')}, pytest-trajaudit {_ver('pytest-trajaudit')}")
    print(f"- pytest11 entry points installed: {', '.join(plugins) or 'none'}")
    print(f"- ripgrep: {shutil.which('rg') or 'not on PATH'}; work dir: $WORK = {work}")
    if PYTEST_EXTRA:
        print(f"- extra options on every pytest run: {shlex.join(PYTEST_EXTRA)}")
    print()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--quick", action="store_true", help="small sizes: about one minute")
    ap.add_argument("--repeat", type=int, default=2, help="best of N (default 2)")
    ap.add_argument("--workdir", type=Path, help="where to generate trees (default: a new temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated trees")
    ap.add_argument("--sections", default="abcde", help="which sections to run (default abcde)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1800, help="per-run timeout in seconds (default 1800)")
    ap.add_argument("--gen-procs", type=int, default=min(4, os.cpu_count() or 1), help="gen_runs.py --procs")
    ap.add_argument("--pytest-args", default="", help="extra options appended to every pytest run, e.g. "
                    "'-p no:hypothesispytest' (one string, split like a shell)")
    g = ap.add_argument_group("sizes (defaults: full run / --quick)")
    g.add_argument("--overhead-jobs", type=int, help="(a) jobs of tiny trajectories (2000 / 200)")
    g.add_argument("--tiny-kb", type=float, default=4, help="(a) tiny trajectory size in KiB (4)")
    g.add_argument("--mbps-jobs", type=int, help="(b) jobs (20 / 6)")
    g.add_argument("--mbps-mb", type=float, help="(b) MiB per trajectory (50, i.e. ~1 GiB per format / 2)")
    g.add_argument("--formats", help="(b, d) trajectory formats: acp,claude (acp,claude / acp)")
    g.add_argument("--xdist-jobs", type=int, help="(c) jobs (500 / 12)")
    g.add_argument("--xdist-mb", type=float, default=1, help="(c) MiB per trajectory (1)")
    g.add_argument("--xdist-format", default="acp", choices=("acp", "claude", "mixed"), help="(c) format (acp)")
    g.add_argument("--workers", type=int, default=2, help="(c) xdist workers compared with -n 0 (2)")
    g.add_argument("--rss-mb", help="(d) comma-separated trajectory sizes in MiB (1,10,50 / 1,10)")
    g.add_argument("--rss-jobs", help="(d) comma-separated job counts of 1 MiB trajectories (10,100,1000 / 10,50)")
    g.add_argument("--huge-gb", type=float, help="(d) one trajectory of this many GiB, refused then streamed "
                   "(2 / 0 = skip)")
    args = ap.parse_args(argv)
    q = args.quick
    args.overhead_jobs = args.overhead_jobs or (200 if q else 2000)
    args.mbps_jobs = args.mbps_jobs or (6 if q else 20)
    args.mbps_mb = args.mbps_mb or (2 if q else 50)
    args.xdist_jobs = args.xdist_jobs or (12 if q else 500)
    args.formats = [f.strip() for f in (args.formats or ("acp" if q else "acp,claude")).split(",") if f.strip()]
    bad = [f for f in args.formats if f not in ("acp", "claude", "mixed")]
    if bad:
        ap.error(f"unknown format(s): {', '.join(bad)}")
    args.rss_mb = [float(s) for s in (args.rss_mb or ("1,10" if q else "1,10,50")).split(",") if s.strip()]
    args.rss_jobs = [int(s) for s in (args.rss_jobs or ("10,50" if q else "10,100,1000")).split(",") if s.strip()]
    args.huge_gb = args.huge_gb if args.huge_gb is not None else (0 if q else 2)
    args.repeat = max(1, args.repeat)
    PYTEST_EXTRA[:] = shlex.split(args.pytest_args)
    return args


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--engine-time"], ["--baselines"]) and len(argv) >= 2:  # internal helpers of (a), (b), (c)
        rep = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 1
        if argv[0] == "--baselines":
            return _baselines_main(Path(argv[1]), rep)
        i, n = (map(int, argv[argv.index("--part") + 1].split("/")) if "--part" in argv else (0, 1))
        return _engine_time_main(Path(argv[1]), rep, (i, n))
    args = parse_args(argv)
    t0 = time.perf_counter()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="trajaudit-bench-", dir=args.workdir)).resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="trajaudit-bench-")).resolve()
    (work / "pytest.ini").write_text("[pytest]\n")  # fixes rootdir and config for every run
    BASETEMP[:] = [f"--basetemp={work / 'basetemp'}"]
    header(args, work)
    try:
        for name, func in (("a", section_a), ("b", section_b), ("c", section_c), ("d", section_d), ("e", section_e)):
            if name in args.sections:
                func(work, args)
        if TARGETS:
            print("## Targets\n")
            table(["what", "measured", "target", ""], TARGETS)
        if TREES:
            print("## Generated trees\n")
            table(["tree", "format", "jobs", "target KiB/job", "trajectories MiB", "generation s", "MiB/s"],
                  [[t.path.name, t.fmt, t.jobs, t.size_kb, t.traj_bytes / MiB, t.gen_s, div(t.traj_bytes / MiB, t.gen_s)]
                   for t in TREES])
        print("## Commands\n")
        print(f"$WORK holds `pytest.ini` containing `[pytest]`; `python` is {sys.executable}.\n")
        print("```")
        for c in COMMANDS:
            print(c)
        print("```\n")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"total time of this measurement: {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
