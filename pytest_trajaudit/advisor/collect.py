"""Which jobs get ADV items (the seed's DESIGN.md: those whose privileged material is known), decided at collection
with ``lstat`` only (nothing is read):

- ``--trajaudit-privileged-root`` is given (every job);
- its task directory is found under ``--trajaudit-tasks`` by the task part of the job folder's name
  (``<task>__<trial>``) or the folder name itself. A task named only inside ``result.json`` is not seen here
  (collection reads no file): give ``--trajaudit-privileged-root`` (e.g. the default layout's roots) to audit
  such jobs.
Nothing inside the job decides it (an ``advisor/`` folder the run wrote is never read: the seed's DESIGN.md,
``discover/jobs.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..discover.jobs import JobRef
from ..loaders.task import _is_task_dir

DIR_LAYOUTS_EXCLUDED = ("bare-file", "record")


def _names(ref: JobRef) -> list[str]:
    name = ref.dir.name
    out = [name.rsplit("__", 1)[0]] if "__" in name else []
    out.append(name)
    return [n for n in dict.fromkeys(out) if n and not n.startswith(".") and "/" not in n and "\x00" not in n]


def advisor_known(ref: JobRef, privileged_roots: Iterable[str], tasks_dirs: Iterable[Path]) -> bool:
    if any(True for _ in privileged_roots):
        return True
    if ref.layout in DIR_LAYOUTS_EXCLUDED:
        return False
    names = _names(ref)
    return any(_is_task_dir(d / n) or (d.name == n and _is_task_dir(d)) for d in tasks_dirs for n in names)
