"""Find job directories without reading trajectories (``lstat`` only) and never following symlinks.

A directory is a *job* when it is:
- a BenchFlow rollout: ``trajectory/acp_trajectory.jsonl`` is there;
- a Harbor trial: ``result.json`` is there and no subdirectory holds a ``result.json`` of its own (a Harbor job
  folder — ``result.json`` with ``n_total_trials`` — always has its trials below it, so it is a container);
- a Harbor attempt: a directory under ``attempts/`` (``attempts/NNN/``) with any trajectory file;
- an agent-only dir: ``agent/`` and ``verifier/`` without ``result.json``;
- a SWE-agent instance dir: exactly one ``*.traj`` file and no subdirectory (``<instance>/<instance>.traj``).
Anything else is a container we walk into. A job's own subfolders are never searched for more jobs.
A bare trajectory file given directly is a job of its own. In a container directory, :func:`loose_files` names
the files that may be jobs by themselves (``*.traj``) or multi-record files (``output.jsonl``, ``*.eval``,
``*.json``); which of them are is decided by ``loaders/multi.py`` from their first bytes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
ANCHOR_CANDIDATES = (
    "result.json",
    "trajectory/acp_trajectory.jsonl",
    "agent/trajectory.json",
    "agent/claude-code.txt",
    "agent/acp_trajectory.jsonl",
    "trajectory.json",
)


@dataclass(frozen=True, slots=True)
class JobRef:
    dir: Path
    anchor: Path  # the file the pytest node is anchored on
    layout: str  # harbor-trial | benchflow-rollout | attempt | agent-dir | swe-agent-dir | bare-file | record
    member: str | None = None  # one record of a multi-record file (anchor), e.g. an instance id; None otherwise


def _lstat(p: Path) -> os.stat_result | None:
    try:
        return os.lstat(p)
    except OSError:
        return None


def _is_file(p: Path) -> bool:
    st = _lstat(p)
    return st is not None and stat.S_ISREG(st.st_mode)


def _is_dir(p: Path) -> bool:
    st = _lstat(p)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _exists_nofollow(p: Path) -> bool:
    return _lstat(p) is not None


def _empty(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return next(it, None) is None
    except OSError:
        return False  # unreadable: kept (skipping it here would hide it)


def subdirs(path: Path) -> list[Path]:
    """Real (non-symlink) subdirectories, sorted by name, skipping VCS/tool caches and empty directories (they hold
    no job: a tree of 100,000 empty directories then costs one ``scandir`` each, not a collector node each)."""
    out = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                try:
                    if entry.is_dir(follow_symlinks=False) and entry.name not in SKIP_DIRS and not _empty(entry.path):
                        out.append(Path(entry.path))
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(out, key=lambda p: p.name)


def classify(path: Path) -> JobRef | None:
    """Return a JobRef when ``path`` (a real directory) is a job, else None (a container or nothing)."""
    if _exists_nofollow(path / "trajectory" / "acp_trajectory.jsonl") and not _has_child_results(path):
        anchor = path / "result.json" if _exists_nofollow(path / "result.json") else path / "trajectory" / "acp_trajectory.jsonl"
        return JobRef(path, anchor, "benchflow-rollout")
    if _exists_nofollow(path / "result.json"):
        if _has_child_results(path) or _is_dir(path / "attempts"):
            return None
        return JobRef(path, path / "result.json", "harbor-trial")
    if path.parent.name == "attempts":
        for rel in ANCHOR_CANDIDATES[1:]:
            if _exists_nofollow(path / rel):
                return JobRef(path, path / rel, "attempt")
    if _is_dir(path / "agent") and _is_dir(path / "verifier"):
        for rel in ANCHOR_CANDIDATES[1:]:
            if _exists_nofollow(path / rel):
                return JobRef(path, path / rel, "agent-dir")
    traj = _single_traj(path)
    if traj is not None:
        return JobRef(path, traj, "swe-agent-dir")
    return None


def _single_traj(path: Path) -> Path | None:
    """The one ``*.traj`` regular file of a directory without subdirectories (SWE-agent's instance dir)."""
    found: list[Path] = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS:
                            return None
                    elif entry.name.endswith(".traj") and entry.is_file(follow_symlinks=False):
                        found.append(Path(entry.path))
                except OSError:
                    continue
    except OSError:
        return None
    return found[0] if len(found) == 1 else None


# Files in a container directory that may be jobs or multi-record files, by name (never by content here).
# ``.md``/``.markdown``/``.txt``: a transcript export is a job when its first 8 KiB read as one (loaders/transcript.py);
# a README, notes or a task's instruction.md next to the runs is not (that bounded read is the only one here).
LOOSE_SUFFIXES = (".traj", ".eval", ".json", ".jsonl", ".md", ".markdown", ".txt")
LOOSE_NAMES = ("output.jsonl",)
NOT_RUNS = {"result.json", "config.json", "lock.json", "package.json", "package-lock.json", "tsconfig.json",
            "summary.json", "prompts.json"}


def loose_files(path: Path) -> list[Path]:
    """Regular files (never symlinks) directly in ``path`` that may be runs: ``*.traj`` (a SWE-agent trajectory,
    a job by itself), ``*.jsonl``, ``*.eval`` and ``*.json`` (candidates whose first bytes decide: an OpenHands
    output, a hooklib audit log, an Inspect log, a traces file), ``*.md``/``*.markdown``/``*.txt`` (a transcript
    export, by its first 8 KiB), sorted."""
    out = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                name = entry.name
                if name in NOT_RUNS or not (name.endswith(LOOSE_SUFFIXES) or name in LOOSE_NAMES):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):
                        out.append(Path(entry.path))
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(out, key=lambda p: p.name)


def _has_child_results(path: Path) -> bool:
    for d in subdirs(path):
        if d.name in ("agent", "verifier", "trajectory", "trainer", "artifacts", "logs"):
            continue
        if _exists_nofollow(d / "result.json") or _exists_nofollow(d / "trajectory" / "acp_trajectory.jsonl"):
            return True
    return False


def bare_file(path: Path) -> JobRef:
    return JobRef(path.parent, path, "bare-file")


def find_jobs(root: Path) -> list[JobRef]:
    """Every job under ``root`` (for scripts and the CLI; the plugin walks lazily through its nodes)."""
    return Walk().find_jobs(root)


class Walk:
    """One view of a tree: each directory classified and listed once, however often it is asked for. The plugin
    keeps one per session: a root with task-group items plans its groups from a walk of the whole root before
    pytest collects the directories below it, which then reuse that walk (before, every directory was listed
    and classified twice: 4 % of an audit of 2,000 small jobs). The cached view is also one consistent view of
    a tree an agent may still be writing."""

    def __init__(self) -> None:
        self._refs: dict[Path, JobRef | None] = {}
        self._dirs: dict[Path, list[Path]] = {}

    def classify(self, path: Path) -> JobRef | None:
        try:
            return self._refs[path]
        except KeyError:
            ref = self._refs[path] = classify(path)
            return ref

    def subdirs(self, path: Path) -> list[Path]:
        try:
            return list(self._dirs[path])
        except KeyError:
            found = self._dirs[path] = subdirs(path)
            return list(found)

    def find_jobs(self, root: Path) -> list[JobRef]:
        st = _lstat(root)
        if st is None or stat.S_ISLNK(st.st_mode):
            return []
        if stat.S_ISREG(st.st_mode):
            return [bare_file(root)]
        out: list[JobRef] = []
        stack = [root]
        while stack:
            d = stack.pop()
            ref = self.classify(d)
            if ref is not None:
                out.append(ref)
                continue
            stack.extend(reversed(self.subdirs(d)))
        return out
