"""P11 steps 1–5 (the seed's audit-general.md): reconstruct the agent's solver from its trajectory, re-run it on the
task's inputs, and diff its output against the delivered output and the oracle's.

task.toml::

    [trajaudit.p11]
    output = "/root/out.json"            # where the solver writes (default: [trajaudit.p12] output)
    expected = "tests/expected.json"     # the oracle's output, relative to the task dir (optional)
    inputs = {"/root/aborts.tsv" = "environment/data/aborts.tsv"}   # container path = task file or directory
    timeout = 60                         # optional, seconds (default: Settings.verifier_timeout)

This executes agent-written code, so it runs only with ``--trajaudit-rerun`` (``Settings.rerun``), and then in a
fresh temporary directory outside the job and task directories: the script's text comes from the trajectory (the
last version the agent wrote before the run, reconstructed by :mod:`._delivered`), the inputs are copied from the
task directory (regular files only, never through a symlink), absolute container paths the task declares are
mapped into that directory, the environment is scrubbed, and the process runs in its own session under resource
limits (CPU, address space, file size, process count, open files, no core) and a wall-clock timeout, after which
its whole process group is killed. docs/trust.md says where this belongs: a disposable container.
"""

from __future__ import annotations

import dataclasses
import math
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from ..model import EXECUTE, TOOL, Finding, Job, Task, UnusableInput
from ..safeio import Budget, file_kind, read_bytes
from ..scan.redact import quote
from ..settings import Settings
from ._delivered import reconstruct
from ._rerun import find_artifact, kill_group
from ._substance import describe, diff_summary

MEMORY_BYTES = 2 * 2**30  # address space of the solver
FILE_BYTES = 256 * 2**20  # the largest file it may write
OPEN_FILES = 256
EXTRA_PROCESSES = 32  # processes it may start beyond those the user already runs (RLIMIT_NPROC is per user)
INPUT_BYTES = 512 * 2**20  # inputs copied from the task directory, in all
MAX_CANDIDATES = 8  # runs of a written script looked at, last first
OUTPUT_TAIL = 2000
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/dev", "/proc", "/sys", "/opt", "/var", "/boot")
_PYTHON = re.compile(r"python[\d.]*")


def _na(reason: str, configured: bool = True, **extra: Any) -> Finding:
    """N/A; ``configured`` is False when the task declares no reconstruction (then the reason stays in data)."""
    return Finding.na(reason, {"reconstructed": False, "configured": configured, **extra})


@dataclasses.dataclass
class Run:
    event: int
    script: str  # container path of the script
    args: list[str]
    cwd: str
    stdout_to: str | None  # container path its stdout was redirected to


def _abs(path: str, cwd: str) -> str:
    """The absolute, normalized container path: ``..`` resolved lexically, so that the copy under the temp dir
    (``fs / path.lstrip("/")``) never leaves it."""
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd, path))


def _runs(command: str, cwd: str, event: int) -> list[Run]:
    """``python [opts] script.py [args] [> file]`` invocations in a shell command, with the ``cd`` before them."""
    out: list[Run] = []
    for line in command.split("\n"):
        for seg in re.split(r"&&|\|\||;", line):
            try:
                toks = shlex.split(seg, posix=True)
            except ValueError:
                continue
            if not toks:
                continue
            if toks[0] == "cd" and len(toks) == 2:
                cwd = _abs(toks[1], cwd)
                continue
            if not _PYTHON.fullmatch(PurePosixPath(toks[0]).name):
                continue
            rest = toks[1:]
            while rest and rest[0].startswith("-") and rest[0] not in ("-c", "-m", "-"):
                rest = rest[1:]
            if not rest or not rest[0].endswith(".py"):
                continue
            script, args, stdout_to = rest[0], [], None
            i = 1
            while i < len(rest):
                t = rest[i]
                if t == "|" or t.startswith(("<", "2>", "&>")):
                    break
                if t in (">", "1>") and i + 1 < len(rest):
                    stdout_to = rest[i + 1]
                    break
                if t.startswith(">") and len(t) > 1:
                    stdout_to = t[1:]
                    break
                args.append(t)
                i += 1
            out.append(Run(event, _abs(script, cwd), args, _abs(cwd, "/"), _abs(stdout_to, cwd) if stdout_to else None))
    return out


def find_solver(job: Job, output: str) -> tuple[Run, str] | str:
    """Step 1: the last run of a Python script the agent wrote whole, as it was when it ran, that produced the
    output (the script or its arguments name the output's file, or its stdout goes there). A reason otherwise."""
    traj = job.trajectory
    assert traj is not None
    cwd0 = _abs(str(traj.meta.get("cwd") or PurePosixPath(output).parent), "/")
    runs: list[Run] = []
    for e in traj.events:
        if e.type == TOOL and e.kind == EXECUTE and e.status != "failed" and e.command and "python" in e.command:
            runs.extend(_runs(e.command, cwd0, e.index))
    if not runs:
        return "no `python <script>.py` run in the trajectory: the solver is not literal (aligned_by_prose is the fallback)"
    name = PurePosixPath(output).name
    seen = 0
    for run in reversed(runs):
        if seen >= MAX_CANDIDATES:
            break
        seen += 1
        upto = next(i for i, e in enumerate(traj.events) if e.index == run.event)
        d = reconstruct(dataclasses.replace(traj, events=traj.events[:upto + 1]))
        st = d.files.get(d.key(run.script)) or next(  # a write spelled another way (``/root/./x.py``, ``..``)
            (f for k, f in d.files.items() if _abs(k, run.cwd) == run.script), None)
        if st is None or st.text is None or st.deleted or st.unknown_change is not None:
            continue
        if run.stdout_to == output or name in st.text or any(name in a for a in run.args):
            return run, st.text
    return (f"none of the last {seen} script run(s) is a script the agent wrote whole that writes {output} "
            "(the solver is not literal: aligned_by_prose is the fallback)")


def _nproc_in_use() -> int:
    uid = os.getuid()
    n = 0
    try:
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.stat(f"/proc/{name}").st_uid == uid:
                        n += 1
                except OSError:
                    pass
    except OSError:
        return 256
    return n


# The limits are set by a tiny launcher process that then execs the solver, rather than by a ``preexec_fn``:
# Python documents ``preexec_fn`` as unsafe in a program with threads, and the engine may run judge threads.
_LAUNCHER = (
    "import os, resource, sys\n"
    "limits = [int(v) for v in sys.argv[1].split(',')]\n"
    "for lim, val in zip((resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC,\n"
    "                     resource.RLIMIT_NOFILE, resource.RLIMIT_CORE), limits):\n"
    "    resource.setrlimit(lim, (val, val))\n"
    "os.umask(0o077)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


def _limited(cmd: list[str], cpu_seconds: int, nproc: int) -> list[str]:
    """``cmd`` run under CPU, memory, file-size, process, open-file and core-dump limits (set, then exec'd)."""
    limits = ",".join(str(v) for v in (cpu_seconds, MEMORY_BYTES, FILE_BYTES, nproc, OPEN_FILES, 0))
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, limits, *cmd]


def _copy_input(task: Task, rel: str, dest: Path, budget: Budget) -> str | None:
    """Copy a task file, or the regular files of a task directory, to ``dest`` (never through a symlink)."""
    if Path(rel).is_absolute() or ".." in Path(rel).parts:
        return f"input {rel!r} must be relative to the task dir"
    kind = file_kind(task.dir, rel)
    if kind == "file":
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(read_bytes(task.dir, rel, budget))
        return None
    if kind != "dir":
        return f"input {rel} is {kind}"
    for dirpath, dirnames, filenames in os.walk(task.dir / rel, followlinks=False):
        sub = Path(dirpath).relative_to(task.dir)
        for f in filenames:
            if file_kind(task.dir, str(sub / f)) == "file":
                target = dest / Path(dirpath).relative_to(task.dir / rel) / f
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(read_bytes(task.dir, str(sub / f), budget))
        dirnames[:] = [d for d in dirnames if file_kind(task.dir, str(sub / d)) == "dir"]
    return None


def _mapper(paths: list[str], fs: Path) -> Any:
    """Rewrite absolute container paths (the declared ones and their directories, system directories excepted)
    to their copies under ``fs``."""
    prefixes: set[str] = set()
    for p in paths:
        pp = PurePosixPath(p)
        for q in (pp, *pp.parents):
            s = str(q)
            if s != "/" and not any(s == d or s.startswith(d + "/") for d in SYSTEM_DIRS):
                prefixes.add(s)
    if not prefixes:
        return lambda text: text
    rx = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
                    + r")(?=[/\"'\s)\],;:]|$)")
    return lambda text: rx.sub(lambda m: str(fs) + m.group(1), text)


def _inside(p: Path, top: Path) -> bool:
    p, top = Path(os.path.realpath(p)), Path(os.path.realpath(top))
    return p == top or top in p.parents


def reconstruct_solver(job: Job, cfg: Settings) -> Finding:
    """Steps 1–5. PASS/WARN/FAIL only when the solver really ran here and produced its output; N/A with the
    reason otherwise (nothing executed unless ``cfg.rerun``)."""
    task = job.task_info
    if task is None:
        return _na(f"reconstruction needs the task's inputs: {job.task_lookup or 'no --trajaudit-tasks given'}",
                   configured=False)
    conf = task.trajaudit_config()
    p11 = conf.get("p11") if isinstance(conf.get("p11"), dict) else {}
    p12 = conf.get("p12") if isinstance(conf.get("p12"), dict) else {}
    # both are dicts (tested above); mypy does not narrow a second conf.get call, so it still sees None
    output = p11.get("output") or p12.get("output")  # type: ignore[union-attr]
    if not p11 or not isinstance(output, str) or not output.startswith("/") or ".." in output.split("/"):
        return _na("the task declares no reconstruction ([trajaudit.p11] with an absolute output path in task.toml)",
                   configured=False)
    if job.reward is None:
        return _na(f"{job.no_reward()}: nothing to check a re-run against")
    if not cfg.rerun:
        return _na("re-runs are off: pass --trajaudit-rerun (it runs the agent's reconstructed solver; see "
                   "docs/trust.md)")
    found = find_solver(job, output)
    if isinstance(found, str):
        return _na(found)
    run, text = found
    inputs = p11.get("inputs") or {}
    if not isinstance(inputs, dict) or not all(isinstance(k, str) and k.startswith("/") and ".." not in k.split("/")
                                               and isinstance(v, str) for k, v in inputs.items()):
        return _na("[trajaudit.p11] inputs must map absolute container paths to task-relative paths")
    expected = p11.get("expected")
    exp_text: str | None = None
    if expected is not None:
        try:
            exp_text = read_bytes(task.dir, str(expected), Budget(cfg.max_file_bytes, cfg.max_file_bytes)).decode(
                "utf-8", "replace")
        except (UnusableInput, TypeError) as exc:
            return _na(f"[trajaudit.p11] expected: {exc}")
    rel = find_artifact(job, output)
    try:
        delivered = read_bytes(job.dir, rel, Budget(cfg.max_file_bytes, cfg.max_file_bytes)).decode(
            "utf-8", "replace") if rel else None
    except UnusableInput as exc:
        return _na(f"the delivered output cannot be read: {exc}")
    if delivered is None and exp_text is None:
        return _na(f"no delivered output (artifacts/{PurePosixPath(output).name}) and no expected output to "
                   "compare a re-run with")
    timeout = float(p11.get("timeout") or cfg.verifier_timeout)
    solver = {"script": run.script, "run_event": run.event, "args": run.args, "cwd": run.cwd}
    tmp = Path(tempfile.mkdtemp(prefix="trajaudit-p11-"))
    try:
        if _inside(tmp, job.dir) or _inside(tmp, task.dir):
            return _na(f"the temporary directory {tmp} lies in the audited tree: set TMPDIR elsewhere")
        fs = tmp / "fs"
        budget = Budget(cfg.max_file_bytes, INPUT_BYTES)
        for container, task_rel in inputs.items():
            try:
                why = _copy_input(task, task_rel, fs / container.lstrip("/"), budget)
            except UnusableInput as exc:
                why = f"input {task_rel}: {exc}"
            if why:
                return _na(f"[trajaudit.p11] {why}")
        paths = [*inputs, output, run.script, run.cwd] + ([run.stdout_to] if run.stdout_to else [])
        remap = _mapper(paths, fs)
        script = fs / run.script.lstrip("/")
        for d in (script.parent, fs / run.cwd.lstrip("/"), (fs / output.lstrip("/")).parent):
            d.mkdir(parents=True, exist_ok=True)
        script.write_text(remap(text), encoding="utf-8")
        (fs / output.lstrip("/")).unlink(missing_ok=True)  # only the re-run's own output counts
        home = tmp / "home"
        home.mkdir()
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home), "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        log = tmp / "log"
        stdout_path = fs / run.stdout_to.lstrip("/") if run.stdout_to else log
        stdout_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-E", "-s", str(script), *(remap(a) for a in run.args)]
        with open(stdout_path, "wb") as out, open(log, "ab") as err:
            try:
                p = subprocess.Popen(_limited(cmd, math.ceil(timeout) + 1, _nproc_in_use() + EXTRA_PROCESSES),
                                     cwd=fs / run.cwd.lstrip("/"), env=env, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, start_new_session=True)
            except OSError as exc:
                return _na(f"the reconstructed solver could not be started: {exc}", solver=solver)
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                kill_group(p)
                return _na(f"the reconstructed solver {run.script} timed out after {timeout:g}s", solver=solver)
        solver["exit_code"] = rc
        if rc != 0:
            # the temp dir's name is random: keep it out of the evidence (deterministic reports)
            tail = log.read_bytes()[-OUTPUT_TAIL:].decode("utf-8", "replace").replace(str(fs), "")
            return _na(f"the reconstructed solver {run.script} (run at #{run.event}) exited {rc} here: "
                       f"{quote(tail.strip().splitlines()[-1] if tail.strip() else '', 200)}", solver=solver)
        out_rel = output.lstrip("/")
        if file_kind(fs, out_rel) != "file":
            return _na(f"the reconstructed solver {run.script} exited 0 but wrote no {output} here (a path the "
                       "mapping does not cover?)", solver=solver)
        try:
            recomputed = read_bytes(fs, out_rel, Budget(cfg.max_file_bytes, cfg.max_file_bytes)).decode(
                "utf-8", "replace")
        except UnusableInput as exc:
            return _na(f"the reconstructed solver's output cannot be read: {exc}", solver=solver)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    f = _compare(job, run, recomputed, delivered, rel, exp_text, solver)
    return dataclasses.replace(f, events=[run.event])  # the run the verdict is about, for the report's timeline


def _diff(pred: str, exp: str) -> dict[str, Any]:
    """diff_summary with its example values quoted (clipped, secrets redacted): they are agent output."""
    d = diff_summary(pred, exp)
    d["examples_fp"] = [quote(x, 80) for x in d["examples_fp"]]
    d["examples_fn"] = [quote(x, 80) for x in d["examples_fn"]]
    return d


def _compare(job: Job, run: Run, recomputed: str, delivered: str | None, rel: str | None, exp_text: str | None,
             solver: dict[str, Any]) -> Finding:
    """Steps 3–5: the re-run against the delivered output, then against the oracle's, then against the reward."""
    data: dict[str, Any] = {"reconstructed": True, "solver": solver}
    who = f"the reconstructed solver {run.script} (run at #{run.event})"
    if delivered is not None:
        d = _diff(recomputed, delivered)
        data["vs_delivered"] = d
        if not d["equal"]:
            data.update(aligned=False, diff_summary=f"re-run vs delivered {rel}: {describe(d)}")
            return Finding.warn(f"{who} does not reproduce the delivered output {rel} ({describe(d)}): the output "
                                "the verifier scored did not come from the solver in the trajectory", data)
    if exp_text is None:
        data["diff_summary"] = f"re-run reproduces the delivered {rel}; no expected output declared"
        return Finding.na(f"{who} reproduces the delivered output {rel}; no [trajaudit.p11] expected output to diff "
                          "against", data)
    e = _diff(recomputed, exp_text)
    data["vs_expected"] = e
    r = job.reward
    rep = "reproduces the delivered output; " if delivered is not None else ""
    summary = f"re-run vs expected: {describe(e)}"
    data["diff_summary"] = summary
    if r is None:
        return Finding.na(f"{who} {rep}{summary}; no reward to check it against", data)
    if e["equal"] and r >= 1.0 or not e["equal"] and r < 1.0:
        data["aligned"] = True
        return Finding.ok(f"aligned: {who} {rep}{summary}; reward {r:g} agrees", data)
    data["aligned"] = False
    if not e["equal"]:
        data["flipped_signal"] = True
        return Finding.fail(f"flipped_signal: {who} {rep}{summary}, yet the verifier gave reward {r:g}", data)
    return Finding.warn(f"{who} {rep}its output equals the expected in substance, yet the verifier gave reward "
                        f"{r:g}: it rejects the shape (see P5, P12)", data)
