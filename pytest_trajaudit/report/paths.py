"""Where report files go: job ids as file paths that never collide, and directories opened without following a
symlink (a report directory is the user's, but what lies below it may have been planted since the last run).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def safe_component(s: str) -> str:
    """``s`` as one file-name component: letters, digits, ``-_.`` kept, anything else ``_``; never empty, ``.``
    or ``..``."""
    out = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in s)
    return out.strip(".") or "job"


def _component(part: str) -> str:
    """:func:`safe_component`, plus a digest of ``part`` when that changed it: ``r#2`` and ``r_2`` (or ``a b`` and
    ``a_b``) no longer map to one name. A name made only of safe characters stays as it is."""
    safe = safe_component(part)
    if safe == part:
        return safe
    return f"{safe}-{hashlib.sha256(part.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def job_paths(job_ids: list[str]) -> dict[str, Path]:
    """Each job id's directory below ``jobs/``, distinct for distinct ids, also on a case-insensitive file system
    (compared case-folded). Ids are taken in sorted order, so the same ids always get the same paths; one whose
    path is already taken (a crafted name equal to another's digest form, or a case twin) gets ``-2``, ``-3``…"""
    out: dict[str, Path] = {}
    taken: set[str] = set()
    for job_id in sorted(job_ids):
        parts = [_component(p) for p in Path(job_id).parts if p not in ("..", "/", "")] or ["job"]
        rel = Path(*parts)
        n = 1
        while rel.as_posix().casefold() in taken:
            n += 1
            rel = Path(*parts[:-1], f"{parts[-1]}-{n}")
        taken.add(rel.as_posix().casefold())
        # a job's directory must not be the parent of another's either (runs/a and runs/a/b): both are leaves
        # of their own files, audit-<config>.json, so nesting is harmless and is kept
        out[job_id] = rel
    return out


_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def open_dir_nofollow(base: Path, rel: Path) -> int:
    """A file descriptor of directory ``base/rel``. ``base`` is opened as given (the user's report directory,
    created 0700 if missing); every component of ``rel`` is created 0700 when missing and opened with
    ``O_NOFOLLOW``: a symlink there (a planted ``jobs`` link) is removed and replaced by a real directory, never
    followed. The caller closes the descriptor. (An existing directory costs one ``open`` per component: a file
    is written per job, and looking before opening would double the system calls.)"""
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # missing (created here), or not a directory (mkdir says so, as it always has)
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in rel.parts:
            nxt = _open_child(fd, part)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child(fd: int, part: str) -> int:
    """Open directory ``part`` below ``fd`` without following a symlink: made 0700 when missing; a symlink in its
    place is removed first (``O_NOFOLLOW`` refuses it: ``ELOOP``); anything else that is not a directory raises."""
    try:
        return os.open(part, _DIR_NOFOLLOW, dir_fd=fd)
    except FileNotFoundError:
        pass
    except OSError:
        try:
            st = os.lstat(part, dir_fd=fd)
        except FileNotFoundError:  # removed meanwhile: made below
            st = None
        if st is not None:
            if not stat.S_ISLNK(st.st_mode):
                raise
            os.unlink(part, dir_fd=fd)
    try:
        os.mkdir(part, 0o700, dir_fd=fd)
    except FileExistsError:  # created meanwhile: opened below with O_NOFOLLOW all the same
        pass
    return os.open(part, _DIR_NOFOLLOW, dir_fd=fd)
