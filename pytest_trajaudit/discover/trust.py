"""Where the agent-writable part of an audit path begins, for the invocation guards (pytest-free).

An audit path names a tree of jobs, one job, a directory *inside* a job (``job/agent``) or a trajectory file inside
a job (``job/trajectory/acp_trajectory.jsonl``). An agent can write anything in its job directory, so for the last
two the whole enclosing job is agent-writable, not only the path given: a ``pytest.ini`` planted next to the
trajectory, or in the job above ``job/agent``, is as hostile as one inside the path itself.

:func:`audited_tree` gives that agent-writable top for one audit path; the plugin refuses a pytest config file or
rootdir inside any of them (adapter/), and the ``trajaudit`` command starts pytest from a directory above all of
them (cli/main.py).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import jobs as discovery


def _is_dir(p: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(p).st_mode)
    except OSError:
        return False


def enclosing_job(path: Path, classify: Callable[[Path], Any] | None = None) -> Path | None:
    """The highest directory at or above ``path`` (a file's directory, for a file) that is a job by the discovery
    rules, or None. The highest, not the nearest: a job-like directory planted inside a real job is part of that
    job, and the real job's own files are just as agent-written. ``classify``: the session's cached
    ``Walk.classify`` (so collection does not classify these directories again), else ``discovery.classify``."""
    classify = classify or discovery.classify
    start = path if _is_dir(path) else path.parent
    found: Path | None = None
    for d in (start, *start.parents):
        if _is_dir(d) and classify(d) is not None:
            found = d
    return found


def audited_tree(path: Path, classify: Callable[[Path], Any] | None = None) -> Path:
    """The top of what the agent could have written for the audit path ``path`` (absolute): its enclosing job when
    it lies in one, else the path itself (a tree of jobs, or a trajectory file on its own)."""
    return enclosing_job(path, classify) or path


def inside(child: Path | None, tops: list[Path]) -> bool:
    """``child`` is one of ``tops`` or below one, compared both as given (absolute) and by real path (a symlink
    elsewhere that resolves into a tree counts as inside it)."""
    if child is None:
        return False
    absolute = Path(os.path.abspath(child))
    real = Path(os.path.realpath(child))
    for top in tops:
        top_abs = Path(os.path.abspath(top))
        top_real = Path(os.path.realpath(top))
        for c, t in ((absolute, top_abs), (real, top_real)):
            if c == t or t in c.parents:
                return True
    return False
