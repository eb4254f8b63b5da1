"""Find and load a job's task directory (``--trajaudit-tasks DIR``): instruction, task.toml, privileged files.

The task directory is trusted input (the benchmark author's, chosen by the user), but it is still read through
:mod:`safeio`: no symlink is followed, special files are never opened, and the privileged material is bounded
(1,000,000 bytes per file, 4,000,000 in total, the advisor spec's limits). Nothing in it is imported or run here.

Lookup, first hit wins, for each directory given (in order):
1. ``DIR/<name>`` for each candidate name of the job: result.json ``task_name`` (and its part after the last
   ``/``, e.g. ``org/task`` → ``task``), ``task_id.path``'s last component, then the task part of the trial
   directory name (``<task>__<trial>``);
2. ``DIR`` itself when it is a task directory (has ``task.toml``, ``instruction.md`` or ``task.md``) whose
   ``[task] name`` or folder name matches a candidate.
A task directory is recognised by ``task.toml``, ``instruction.md`` or ``task.md``.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterable
from pathlib import Path

from ..model import Job, Task, TaskFile, UnusableInput
from ..safeio import Budget, decode_text, file_kind, read_bytes

PRIVILEGED_DIRS = ("tests", "solution", "oracle", "verifier")  # Harbor (tests, solution); SkillsBench v1 (oracle, verifier)
SKILL_DIRS = ("environment/skills", "skills")
MAX_PRIV_FILE = 1_000_000
MAX_PRIV_TOTAL = 4_000_000
MAX_PRIV_FILES = 2_000
MARKERS = ("task.toml", "instruction.md", "task.md")

_cache: dict[Path, Task] = {}


def candidate_names(job: Job) -> list[str]:
    names: list[str] = []
    raw = [str(job.result.get("task_name") or ""), str(job.result.get("task_path") or ""), job.task]
    for n in raw:
        n = n.strip().rstrip("/")
        if not n:
            continue
        names.append(n)
        if "/" in n:
            names.append(n.rsplit("/", 1)[-1])
    if "__" in job.trial:
        names.append(job.trial.rsplit("__", 1)[0])
    out = []
    for n in names:
        if n and n not in out and n not in (".", "..") and "\x00" not in n:
            out.append(n)
    return out


def _is_task_dir(p: Path) -> bool:
    try:
        st = os.lstat(p)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    return any(file_kind(p, m) == "file" for m in MARKERS)


def _declared_name(d: Path) -> str | None:
    """The ``[task] name`` of the task directory ``d`` (None when it has none or its task.toml is unusable)."""
    try:
        return load_task(d).name
    except UnusableInput:
        return None


def find_task_dir(job: Job, tasks_dirs: Iterable[Path]) -> tuple[Path | None, str]:
    """(task dir or None, a one-line account of the lookup)."""
    names = candidate_names(job)
    dirs = list(tasks_dirs)
    if not names:
        return None, "the job names no task"
    for d in dirs:
        for n in names:
            if "/" in n or n.startswith("."):
                continue  # a name is one path component: never walk elsewhere through it
            p = d / n
            if _is_task_dir(p):
                return p, f"task dir {p}"
        if _is_task_dir(d) and (d.name in names or _declared_name(d) in names):
            return d, f"task dir {d}"
    tried = ", ".join(names[:4])
    return None, f"no task directory named {tried} under {', '.join(str(d) for d in dirs)}"


def _walk_files(base: Path, top: str, notes: list[str]) -> list[str]:
    """Regular files under ``base/top`` (relative paths, sorted), symlinks and special files skipped."""
    out: list[str] = []
    root = base / top
    try:
        st = os.lstat(root)
    except OSError:
        return out
    if stat.S_ISLNK(st.st_mode):
        notes.append(f"{top}/ is a symlink: not followed")
        return out
    if not stat.S_ISDIR(st.st_mode):
        return out
    stack = [top]
    while stack:
        rel = stack.pop()
        try:
            entries = sorted(os.scandir(base / rel), key=lambda e: e.name)
        except OSError as exc:
            notes.append(f"{rel}/: unreadable ({exc.strerror})")
            continue
        for e in entries:
            r = f"{rel}/{e.name}"
            if e.is_symlink():
                notes.append(f"{r}: symlink not followed")
            elif e.is_dir(follow_symlinks=False):
                if e.name not in ("__pycache__", ".git", "node_modules"):
                    stack.append(r)
            elif e.is_file(follow_symlinks=False):
                out.append(r)
            else:
                notes.append(f"{r}: special file not opened")
            if len(out) > MAX_PRIV_FILES:
                notes.append(f"{top}/: more than {MAX_PRIV_FILES} files; the rest ignored")
                return sorted(out)
    return sorted(out)


def _text(base: Path, rel: str, limit: int) -> str | None:
    try:
        data = read_bytes(base, rel, Budget(limit, limit))
    except UnusableInput:
        return None
    if b"\x00" in data[:8192]:
        return None
    try:
        return decode_text(data, base / rel)
    except UnusableInput:
        return None


def load_task(path: Path) -> Task:
    """Load (once per process) the task directory at ``path``."""
    key = Path(os.path.abspath(path))
    if key in _cache:
        return _cache[key]
    notes: list[str] = []
    task = Task(dir=key, name=key.name)
    for m in ("instruction.md", "task.md"):
        if file_kind(key, m) == "file":
            task.instruction = _text(key, m, MAX_PRIV_FILE) or ""
            break
    if file_kind(key, "task.toml") == "file":
        raw = _text(key, "task.toml", MAX_PRIV_FILE)
        try:
            task.toml = tomllib.loads(raw or "")
        except tomllib.TOMLDecodeError as exc:
            raise UnusableInput(key / "task.toml", f"invalid TOML: {exc}") from None
        name = task.toml.get("task", {}).get("name") if isinstance(task.toml.get("task"), dict) else None
        if isinstance(name, str) and name:
            task.name = name
    total = 0
    for top in PRIVILEGED_DIRS:
        for rel in _walk_files(key, top, notes):
            try:
                size = os.lstat(key / rel).st_size
            except OSError:
                continue
            if size > MAX_PRIV_FILE:
                notes.append(f"{rel}: {size} bytes, over the {MAX_PRIV_FILE}-byte limit: name only")
                task.privileged.append(TaskFile(rel, "", size))
                continue
            if total + size > MAX_PRIV_TOTAL:
                notes.append(f"{rel}: over the {MAX_PRIV_TOTAL}-byte total: name only")
                task.privileged.append(TaskFile(rel, "", size))
                continue
            text = _text(key, rel, MAX_PRIV_FILE)
            total += size
            task.privileged.append(TaskFile(rel, text or "", size))
            if text is None:
                notes.append(f"{rel}: binary or undecodable: name only")
    env_total = 0
    for rel in _walk_files(key, "environment", notes):
        try:
            size = os.lstat(key / rel).st_size
        except OSError:
            continue
        if size > MAX_PRIV_FILE or env_total + size > MAX_PRIV_TOTAL:
            continue
        text = _text(key, rel, MAX_PRIV_FILE)
        if text:
            env_total += size
            task.public.append(TaskFile(rel, text, size))
    for s in SKILL_DIRS:
        if file_kind(key, s) == "dir":
            task.skills_dir = key / s
            break
    task.notes = notes
    _cache[key] = task
    return task


def attach_task(job: Job, tasks_dirs: Iterable[Path]) -> None:
    dirs = list(tasks_dirs)
    if not dirs:
        job.task_lookup = "no --trajaudit-tasks given"
        return
    path, why = find_task_dir(job, dirs)
    job.task_lookup = why
    if path is not None:
        job.task_info = load_task(path)
