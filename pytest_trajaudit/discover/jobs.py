"""Find job directories without reading trajectories (``lstat`` only) and never following symlinks.

A directory is a *job* when it is:
- a BenchFlow rollout: ``trajectory/acp_trajectory.jsonl`` is there;
- a Harbor trial: ``result.json`` is there, with the trial's own marks (``agent/``, ``verifier/`` or a trajectory
  file at one of its positions) or, without them, a ``result.json`` whose first 4 KiB do not make it a Harbor job
  folder (``n_total_trials``: its trials are below it, so it is a container);
- a Harbor attempt: a directory under ``attempts/`` (``attempts/NNN/``) with any trajectory file;
- an agent-only dir: ``agent/`` and ``verifier/`` with a trajectory file and no ``result.json``;
- a SWE-agent instance dir: exactly one ``*.traj`` file and no subdirectory (``<instance>/<instance>.traj``).
A directory whose own root holds no trajectory file and no ``agent/`` folder but whose ``attempts/NNN/`` do
(Harbor's multi-attempt trial) is a container of its attempts. Anything else is a container we walk into.

Once a directory is a job, nothing below it decides whether it is one: a nested ``result.json``, a nested
trajectory or an ``attempts/`` folder inside a job is never a reason to treat the job as a container. Such
things are read with the job (``loaders/job.py``: every trajectory-looking file inside it is compared with the
one audited, a nested run folder is a finding on the job) and listed in the summary when they are not audited.

A bare trajectory file given directly is a job of its own. In a container directory, :func:`loose_files` names
the files that may be jobs by themselves (``*.traj``, ``*.traj.json``) or multi-record files (``output.jsonl``,
``*.eval``, ``*.json``, ``*.jsonl``); which of them are is decided from their first bytes (``loaders/multi.py``).
Collection reads nothing else: the only reads are these 4 KiB heads and, for a ``result.json`` beside
subdirectories that is no trial by its marks, the first 4 KiB of that ``result.json``.
"""

from __future__ import annotations

import os
import re
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
    "agent/mini-swe-agent.trajectory.json",
    "trainer/atif.json",
)
TRIAL_DIRS = ("agent", "verifier", "trajectory")  # folders a harness writes in a trial (never in a job folder)
RESULT_HEAD = 4096  # bytes of a result.json read to tell a Harbor job folder from a trial
_JOB_FOLDER = re.compile(rb'"n_total_trials"\s*:')
_TRIAL_RESULT = re.compile(rb'"(?:trial_name|rollout_name|task_name|verifier_result|agent_result)"\s*:')
_TRAJ_NAME = re.compile(r"(?:\.traj|\.traj\.json|\.eval|trajectory[^/]*\.jsonl?|^claude-code\.txt)$", re.I)


@dataclass(frozen=True, slots=True)
class JobRef:
    dir: Path
    anchor: Path  # the file the pytest node is anchored on
    layout: str  # harbor-trial | benchflow-rollout | attempt | agent-dir | swe-agent-dir | bare-file | record
    member: str | None = None  # one record of a multi-record file (anchor), e.g. an instance id; None otherwise


def looks_like_trajectory(name: str) -> bool:
    """A file name that names a run record: ``*.traj``, ``*.traj.json``, ``*.eval``, ``*trajectory*.json[l]``,
    ``claude-code.txt``. Such a file under a root is audited or listed as not audited, never dropped."""
    return bool(_TRAJ_NAME.search(name))


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


def _own_trajectory(path: Path) -> Path | None:
    """The first trajectory file at one of a job's own positions (``ANCHOR_CANDIDATES`` after result.json)."""
    for rel in ANCHOR_CANDIDATES[1:]:
        if _exists_nofollow(path / rel):
            return path / rel
    return None


def _attempt_dirs(path: Path) -> list[Path]:
    """``attempts/NNN/`` subdirectories that hold a trajectory file (Harbor's multi-attempt trial)."""
    att = path / "attempts"
    if not _is_dir(att):
        return []
    return [d for d in subdirs(att) if _own_trajectory(d) is not None]


def _result_head(path: Path) -> bytes:
    """The first :data:`RESULT_HEAD` bytes of ``path/result.json`` (a regular file, never a symlink); b"" when it
    cannot be read."""
    try:
        fd = os.open(path / "result.json", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, RESULT_HEAD)
    except OSError:
        return b""
    finally:
        os.close(fd)


def classify(path: Path) -> JobRef | None:
    """Return a JobRef when ``path`` (a real directory) is a job, else None (a container or nothing). What lies
    below a job's own files (nested folders, ``attempts/``) never turns a job into a container."""
    if _exists_nofollow(path / "trajectory" / "acp_trajectory.jsonl"):
        anchor = path / "result.json" if _exists_nofollow(path / "result.json") else path / "trajectory" / "acp_trajectory.jsonl"
        return JobRef(path, anchor, "benchflow-rollout")
    own = _own_trajectory(path)
    if path.parent.name == "attempts" and own is not None:
        return JobRef(path, own, "attempt")
    if own is None and not _is_dir(path / "agent") and _attempt_dirs(path):
        return None  # a multi-attempt trial: each attempts/NNN/ is a job (a trial with its own agent/ never is)
    if _exists_nofollow(path / "result.json"):
        if own is not None or any(_is_dir(path / d) for d in TRIAL_DIRS):
            return JobRef(path, path / "result.json", "harbor-trial")
        head = _result_head(path)
        if _JOB_FOLDER.search(head) and not _TRIAL_RESULT.search(head):
            return None  # a Harbor job folder: its trials are below it
        if not _TRIAL_RESULT.search(head) and _has_child_results(path):
            return None  # a result.json of no known shape above trials: walked as a container
        return JobRef(path, path / "result.json", "harbor-trial")
    if _is_dir(path / "agent") and _is_dir(path / "verifier") and own is not None:
        return JobRef(path, own, "agent-dir")
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
    """Files directly in ``path`` that may be runs: ``*.traj`` (a SWE-agent trajectory, a job by itself),
    ``*.jsonl``, ``*.eval`` and ``*.json`` (candidates whose first bytes decide: a mini-swe-agent ``*.traj.json``,
    an OpenHands output, a hooklib audit log, an Inspect log, a traces file), ``*.md``/``*.markdown``/``*.txt`` (a
    transcript export, by its first 8 KiB), sorted. Regular files only, except a file whose name looks like a
    trajectory (:func:`looks_like_trajectory`): it is listed whatever it is (a symlink, a FIFO), so that loading
    it reports why it is not audited instead of dropping it silently."""
    out = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                name = entry.name
                named = looks_like_trajectory(name)
                if not named and (name in NOT_RUNS or not (name.endswith(LOOSE_SUFFIXES) or name in LOOSE_NAMES)):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        continue
                    if named or entry.is_file(follow_symlinks=False):
                        out.append(Path(entry.path))
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(out, key=lambda p: p.name)


# keys a run record's first 4 KiB holds in some format (a tool call, a message list, a sample list, a step list,
# a session header, an instance id): a loose JSON file holding one that no format claims is reported, not skipped
# (or, as a value, a record type: Codex's "session_meta", a tool call's "tool_use")
_RUN_KEYS = re.compile(r'"(?:tool_name|tool_calls?|tool_use|function_call|tool_input|history|messages|samples|steps|'
                       r'session_meta|instance_id|eval|tasks|runs|trajectory|trajectories|actions|observations|'
                       r'hook_event_name|event)"\s*:'
                       r'|"(?:session_meta|response_item|tool_use|tool_result|function_call|tool_call)"')
_JSON_SUFFIXES = (".json", ".jsonl")


def looks_like_run_record(path: Path, head: bytes) -> bool:
    """A loose ``*.json``/``*.jsonl`` file (``head``: its first bytes) that is JSON text, in any encoding JSON
    allows (a BOM, UTF-16, leading blank lines), holding a key of a run record. Such a file that no format claims
    is a job whose load says why it cannot be audited: a record re-encoded or re-ordered until no format's sniffer
    recognises it is never dropped silently."""
    if not path.name.lower().endswith(_JSON_SUFFIXES) or path.name in NOT_RUNS:
        return False
    from json import detect_encoding

    try:
        text = head.decode(detect_encoding(head), "ignore").lstrip("\ufeff \t\r\n")
    except LookupError:
        return False
    return text[:1] in ("{", "[") and _RUN_KEYS.search(text) is not None


def _has_child_results(path: Path) -> bool:
    for d in subdirs(path):
        if d.name in ("agent", "verifier", "trajectory", "trainer", "artifacts", "logs"):
            continue
        if _exists_nofollow(d / "result.json") or _exists_nofollow(d / "trajectory" / "acp_trajectory.jsonl"):
            return True
    return False


MAX_INNER_ENTRIES = 20_000  # directory entries looked at below one job (stat only) before giving up, said so
MAX_INNER_DEPTH = 12


@dataclass(slots=True)
class Contents:
    """What lies below a job directory: every file whose name looks like a trajectory (relative paths, sorted),
    every folder inside it that looks like another run (:func:`_looks_like_run`: ``lstat``, and the first 4 KiB of
    a nested ``result.json``), and whether the walk stopped at :data:`MAX_INNER_ENTRIES` or
    :data:`MAX_INNER_DEPTH`."""

    trajectories: list[str]
    nested_runs: list[str]
    truncated: bool = False


_RUN_RECORD = re.compile(rb'"(?:agent|rewards|reward|n_total_trials)"\s*:')


def _looks_like_run(d: Path) -> bool:
    """A folder inside a job that looks like another run: BenchFlow's ``trajectory/acp_trajectory.jsonl``, a
    non-empty ``attempts/``, or a ``result.json`` whose first 4 KiB read like a run record (trial keys, an agent,
    a reward; a task's own output file that happens to be called result.json does not)."""
    if _exists_nofollow(d / "trajectory" / "acp_trajectory.jsonl") or (d.name == "attempts" and subdirs(d)):
        return True
    if not _exists_nofollow(d / "result.json"):
        return False
    head = _result_head(d)
    return bool(_TRIAL_RESULT.search(head) or _RUN_RECORD.search(head)) or not _is_file(d / "result.json")


def contents(job_dir: Path) -> Contents:
    """Walk below ``job_dir`` (never through a symlink, skipping VCS/tool caches) and report what may be a
    run record (see :class:`Contents`)."""
    found: list[str] = []
    nested: list[str] = []
    seen = 0
    truncated = False
    stack: list[tuple[Path, int]] = [(job_dir, 0)]
    while stack:
        d, depth = stack.pop()
        if d != job_dir and _looks_like_run(d):
            nested.append(d.relative_to(job_dir).as_posix())
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > MAX_INNER_ENTRIES:
                truncated = True
                break
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if e.name in SKIP_DIRS:
                    continue
                if depth + 1 > MAX_INNER_DEPTH:
                    truncated = True
                    continue
                stack.append((Path(e.path), depth + 1))
            elif looks_like_trajectory(e.name):
                found.append(Path(e.path).relative_to(job_dir).as_posix())
        if truncated and seen > MAX_INNER_ENTRIES:
            break
    return Contents(sorted(found), sorted(nested), truncated)


def bare_file(path: Path) -> JobRef:
    return JobRef(path.parent, path, "bare-file")


def find_jobs(root: Path) -> list[JobRef]:
    """Every job under ``root`` (for scripts and the CLI; the plugin walks lazily through its nodes)."""
    return Walk().find_jobs(root)


class Walk:
    """One view of a tree: each directory classified and listed once, however often it is asked for. The plugin
    keeps one per session: a root with task-group items plans its groups from a walk of the whole root before
    pytest collects the directories below it, which then reuse that walk, so no directory is listed or
    classified twice. The cached view is also one consistent view of a tree an agent may still be writing."""

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
