"""Node ids that can be pasted back: every id pytest prints for an audit item selects exactly that item again.

pytest resolves a command-line argument ``path::name::name`` by walking from its collection base (the rootdir, or
the ini file's directory: pytest's ``confcutdir``) down the directories to ``path`` and matching each level's
node by path, then each ``::`` part by name. Three consequences for an audit:

- a path outside the rootdir gets pytest's fallback node id, relative to the audit root itself, which cannot be
  resolved from anywhere. Audit nodes outside the rootdir get a node id relative to the rootdir instead
  (``../runs/job/result.json::P1``), and the collection base is widened to reach them (:func:`widen_base`);
- ``--trajaudit <id>`` (the space form) hands the id to the option, not to pytest's positional arguments:
  :func:`split_ids` moves it back among the collection arguments;
- an id inside an audit root that is also given (``--trajaudit=runs runs/job/result.json::P1``) only selects: it
  is no audit root of its own, so job ids and task groups stay those of the whole run (:func:`subsumed`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def path_id(path: Path, rootpath: Path) -> str | None:
    """The path part of a node id for ``path`` when it lies outside ``rootpath``: relative to the rootdir with
    ``..`` steps (``../runs/job/result.json``), or the absolute path where no relative one exists (another drive).
    None inside the rootdir, where pytest's own rule applies."""
    try:
        Path(path).relative_to(rootpath)
        return None
    except ValueError:
        pass
    try:
        return Path(os.path.relpath(path, rootpath)).as_posix()
    except ValueError:
        return Path(path).as_posix()


def split_ids(values: list[str]) -> tuple[list[str], list[str]]:
    """``--trajaudit`` values → (paths, node ids): a value with ``::`` selection parts is a node id; its path part
    is what is audited."""
    paths, ids = [], []
    for v in values:
        if "::" in v:
            ids.append(v)
            paths.append(v.split("::", 1)[0])
        else:
            paths.append(v)
    return paths, ids


def subsumed(p: Path, dirs: list[Path]) -> bool:
    """``p`` lies strictly inside one of the directories ``dirs``."""
    return any(d in p.parents for d in dirs)


def group_root(arg: str, path: Path, classify: Any) -> Path | None:
    """The audit root that a task group's node id alone implies: a group item is anchored on its first trial's
    file (``<trial>/result.json::<task>::PASSK``, two name parts where a job item has one), and a task's trials are
    siblings, so their parent directory is the root that finds them all. None for any other id."""
    if arg.count("::") != 2:
        return None
    ref = classify(path.parent) if path.name == "result.json" else None
    if ref is None:  # a trajectory anchor: trajectory/acp_trajectory.jsonl or a file in agent/ of the trial
        for d in (path.parent, path.parent.parent):
            r = classify(d)
            if r is not None and r.anchor == path:
                ref = r
                break
    if ref is None or ref.anchor != path:
        return None
    return ref.dir.parent


def widen_base(config: Any, paths: list[Path]) -> None:
    """Let pytest's collection of a command-line argument start above audit paths that lie outside its base
    (``confcutdir``, the rootdir or ini directory by default): pytest only walks the directories inside it down
    to an argument, so an argument outside it is collected from its own path alone, and a node id inside it could
    not be matched. While auditing, conftest files are never loaded (``--noconftest`` is forced), so the base has
    no other role."""
    from . import _compat

    pm = config.pluginmanager
    base = _compat.confcutdir(pm)
    if base is None:
        return
    outside = [p for p in paths if p != base and base not in p.parents]
    if outside:
        _compat.set_confcutdir(pm, Path(os.path.commonpath([str(base), *(str(p) for p in outside)])))
