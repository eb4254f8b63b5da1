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

import errno
import os
import stat
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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
    if job.layout not in ("bare-file", "record") and "__" in job.dir.name:
        names.append(job.dir.name.rsplit("__", 1)[0])  # the job folder <task>__<trial> (what collection sees)
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


SKIPPED_DIR_NAMES = ("__pycache__", ".git", "node_modules")


def _walk_files(base: Path, top: str, notes: list[str], excluded: Iterable[str] = SKIPPED_DIR_NAMES,
                unreadable: list[str] | None = None) -> list[str]:
    """Regular files under ``base/top`` (relative paths, sorted), symlinks and special files skipped, directories
    named in ``excluded`` not entered. ``unreadable``: when given, directories that exist but cannot be listed are
    collected there (the advisor audit refuses to judge against material it never saw) as well as noted."""
    out: list[str] = []
    skip = frozenset(excluded)
    root = base / top
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return out
    except OSError as exc:
        if unreadable is not None and not isinstance(exc, NotADirectoryError):
            unreadable.append(top)
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
            if unreadable is not None:
                unreadable.append(rel)
            continue
        for e in entries:
            r = f"{rel}/{e.name}"
            if e.is_symlink():
                notes.append(f"{r}: symlink not followed")
            elif e.is_dir(follow_symlinks=False):
                if e.name not in skip:
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


def _instruction(key: Path, skip: Callable[[str], bool] = lambda rel: False) -> str:
    for m in ("instruction.md", "task.md"):
        if file_kind(key, m) == "file" and not skip(m):
            return _text(key, m, MAX_PRIV_FILE) or ""
    return ""


def _environment(key: Path, notes: list[str], skip: Callable[[str], bool] = lambda rel: False) -> list[TaskFile]:
    """Text files under ``environment/`` (what the agent may see), within the same limits as privileged files."""
    out: list[TaskFile] = []
    env_total = 0
    for rel in _walk_files(key, "environment", notes):
        if skip(rel):
            continue
        try:
            size = os.lstat(key / rel).st_size
        except OSError:
            continue
        if size > MAX_PRIV_FILE or env_total + size > MAX_PRIV_TOTAL:
            continue
        text = _text(key, rel, MAX_PRIV_FILE)
        if text:
            env_total += size
            out.append(TaskFile(rel, text, size))
    return out


def load_public(path: Path, privileged_roots: Iterable[str] = ()) -> tuple[str, list[TaskFile]]:
    """(instruction, environment text files) of the task at ``path``: what its solver may see. Files under one of
    ``privileged_roots`` are left out (a layout may make them privileged). Never raises."""
    roots = [r.rstrip("/") for r in privileged_roots]

    def skip(rel: str) -> bool:
        return any(r in (".", "") or rel == r or rel.startswith(r + "/") for r in roots)

    key = Path(os.path.abspath(path))
    return _instruction(key, skip), _environment(key, [], skip)


def load_task(path: Path) -> Task:
    """Load (once per process) the task directory at ``path``."""
    key = Path(os.path.abspath(path))
    if key in _cache:
        return _cache[key]
    notes: list[str] = []
    task = Task(dir=key, name=key.name)
    task.instruction = _instruction(key)
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
    task.public = _environment(key, notes)
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


# --- privileged material by layout (the seed's advisor-audit.md "Which privileged material is checked") ----------

DEFAULT_PRIVILEGED_ROOTS = ("README.md", "solution", "tests")  # the default Harbor layout


class PrivilegedUnreadable(UnusableInput):
    """Privileged files or directories exist but cannot be read: the advisor audit refuses to judge."""

    def __init__(self, task_dir: Path, paths: list[str]):
        self.task_dir = task_dir
        self.paths = paths
        super().__init__(task_dir, f"cannot read privileged material: {', '.join(paths)}")


@dataclass(slots=True)
class PrivilegedMaterial:
    task_dir: Path | None
    roots: tuple[str, ...]
    excluded: tuple[str, ...]
    files: list[TaskFile] = field(default_factory=list)  # every regular file seen under the roots (text "" if not loaded)
    notes: list[str] = field(default_factory=list)  # what was skipped and why (symlinks, special files, limits, binary)
    total_bytes: int = 0  # bytes of the files loaded

    @property
    def loaded(self) -> list[TaskFile]:
        """The files whose text was loaded (decodable, within the limits)."""
        return [f for f in self.files if f.text]


def _root_kind(base: Path, rel: str) -> str:
    """'file', 'dir', 'missing', 'symlink', 'special' or 'unreadable' for ``base/rel``, no component followed."""
    p = base
    parts = [x for x in Path(rel).parts if x not in ("", ".")]
    st = None
    for i, part in enumerate(parts):
        p = p / part
        try:
            st = os.lstat(p)
        except (FileNotFoundError, NotADirectoryError):
            return "missing"
        except OSError:
            return "unreadable"
        if stat.S_ISLNK(st.st_mode):
            return "symlink"
        if i < len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
            return "missing"
    if st is None:
        return "dir"
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "special"


def _read_privileged(base: Path, rel: str) -> tuple[str | None, str | None, bool]:
    """(text, note, unreadable) for one privileged file, read without following symlinks, within 1,000,000 bytes."""
    try:
        data = read_bytes(base, rel, Budget(MAX_PRIV_FILE, MAX_PRIV_FILE))
    except UnusableInput as exc:
        cause = exc.__cause__
        if isinstance(cause, PermissionError) or (isinstance(cause, OSError) and "symlink" not in exc.reason
                                                  and cause.errno not in (errno.ELOOP, errno.ENOENT)):
            return None, None, True
        return None, f"{rel}: {exc.reason}: not loaded", False
    if b"\x00" in data[:8192]:
        return None, f"{rel}: binary: not loaded", False
    try:
        return decode_text(data, base / rel), None, False
    except UnusableInput as exc:
        return None, f"{rel}: {exc.reason}: not loaded", False


def load_privileged(task_dir: Path | None, roots: Iterable[str],
                    excluded: Iterable[str] = SKIPPED_DIR_NAMES) -> PrivilegedMaterial:
    """The privileged material under ``roots`` (relative to ``task_dir``; a root is a file or a directory), the way
    the advisor loads it: no symlink is followed (a symlinked root, file or directory is skipped and noted), special
    files are never opened, directories named in ``excluded`` are not entered, at most 1,000,000 bytes per file
    (larger files are skipped) and 4,000,000 in total (files beyond it are skipped), binary or undecodable files are
    skipped. A root that does not exist loads nothing. Raises :class:`PrivilegedUnreadable` naming every file or
    directory that exists but cannot be read."""
    roots = tuple(roots)
    excluded = tuple(excluded)
    mat = PrivilegedMaterial(task_dir, roots, excluded)
    if task_dir is None:
        return mat
    base = Path(os.path.abspath(task_dir))
    unreadable: list[str] = []
    rels: list[str] = []
    for root in roots:
        kind = _root_kind(base, root)
        if kind == "missing":
            mat.notes.append(f"{root}: not found")
        elif kind == "symlink":
            mat.notes.append(f"{root}: symlink not followed")
        elif kind == "special":
            mat.notes.append(f"{root}: special file not opened")
        elif kind == "unreadable":
            unreadable.append(root)
        elif kind == "file":
            rels.append(root)
        else:
            rels.extend(_walk_files(base, root, mat.notes, excluded, unreadable))
    seen: set[str] = set()
    for rel in rels:
        if rel in seen:
            continue
        seen.add(rel)
        try:
            size = os.lstat(base / rel).st_size
        except OSError:
            unreadable.append(rel)
            continue
        if size > MAX_PRIV_FILE:
            mat.notes.append(f"{rel}: {size} bytes, over the {MAX_PRIV_FILE}-byte per-file limit: not loaded")
            mat.files.append(TaskFile(rel, "", size))
            continue
        if mat.total_bytes + size > MAX_PRIV_TOTAL:
            mat.notes.append(f"{rel}: over the {MAX_PRIV_TOTAL}-byte total limit: not loaded")
            mat.files.append(TaskFile(rel, "", size))
            continue
        text, note, bad = _read_privileged(base, rel)
        if bad:
            unreadable.append(rel)
            continue
        if note:
            mat.notes.append(note)
        if text:
            mat.total_bytes += size
        mat.files.append(TaskFile(rel, text or "", size))
    if unreadable:
        raise PrivilegedUnreadable(base, sorted(dict.fromkeys(unreadable)))
    return mat
