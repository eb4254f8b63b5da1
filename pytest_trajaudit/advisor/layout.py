"""Which privileged material the advisor audit checks: only what the task side says, never the attempt.

Precedence, first that applies:
1. ``--privileged-root PATH`` (repeatable; ``privileged_roots=`` in :func:`~pytest_trajaudit.advisor.core.run_audit`;
   ``--trajaudit-privileged-root`` in pytest): the roots, relative to the task directory. It overrides everything.
2. The task's own manifest ``<task-dir>/advisor/task_material_manifest.json`` that records ``privileged_roots`` (at
   its top level or in a ``layout`` object): its ``privileged_roots`` and ``excluded_directory_names``, the other
   layout fields at their defaults. Without a flag the audit refuses (unusable input) rather than guess when that
   layout is unknown: an ``advisor/`` that is a symlink or not a directory, a manifest that is a symlink or not a
   regular file, a manifest that cannot be read or cannot be read as a layout, an ``advisor/`` the auditor may not
   read.
3. Otherwise (no ``advisor/``, no manifest, or a manifest without a layout: material built with
   ``TaskMaterial.from_texts``) the default Harbor layout ``README.md``, ``solution``, ``tests``.

The attempt directory is never consulted: it is written by the run being audited, and a manifest planted there
(naming no privileged root, or a root that holds nothing) would otherwise turn a verbatim leak of the solution into
a pass. Stat and read only; symlinks are never followed and special files never opened.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..loaders.task import DEFAULT_PRIVILEGED_ROOTS, SKIPPED_DIR_NAMES
from ..model import UnusableInput
from ..safeio import Budget, decode_text, read_bytes

MANIFEST = "advisor/task_material_manifest.json"
MAX_MANIFEST_BYTES = 1_000_000
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


@dataclass(frozen=True, slots=True)
class Layout:
    privileged_roots: tuple[str, ...]
    excluded_directory_names: tuple[str, ...]
    source: str  # "flag" | "manifest" | "default"


DEFAULT_LAYOUT = Layout(DEFAULT_PRIVILEGED_ROOTS, SKIPPED_DIR_NAMES, "default")


def check_root(root: Any) -> str | None:
    """Why ``root`` is not a usable privileged root (relative to the task directory, inside it), or None."""
    if not isinstance(root, str):
        return f"{root!r} is not a string"
    if not root.strip():
        return "an empty path"
    if "\x00" in root:
        return f"{root!r} contains a NUL character"
    if root.startswith(("/", "\\")) or _DRIVE.match(root):
        return f"{root!r} is absolute (privileged roots are relative to the task directory)"
    if ".." in re.split(r"[\\/]", root):
        return f"{root!r} leaves the task directory ('..')"
    return None


def normalize_root(root: str) -> str:
    parts = [p for p in re.split(r"/+", root.strip()) if p not in ("", ".")]
    return "/".join(parts) or "."


def flag_layout(roots: list[str] | tuple[str, ...]) -> Layout:
    """The layout of ``--privileged-root`` values; a bad value is unusable input naming it."""
    out: list[str] = []
    for r in roots:
        why = check_root(r)
        if why:
            raise UnusableInput("--privileged-root", why)
        n = normalize_root(r)
        if n not in out:
            out.append(n)
    return Layout(tuple(out), SKIPPED_DIR_NAMES, "flag")


def _lstat(p: Path, what: str) -> os.stat_result | None:
    try:
        return os.lstat(p)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise UnusableInput(p, f"cannot read {what}: {exc.strerror or exc}") from None


def resolve_layout(task_dir: Path | None, flag_roots: list[str] | tuple[str, ...] | None = None) -> Layout:
    """The layout to load privileged material with, from the flag or the task directory's own manifest (see the
    module docstring; never from an attempt); raises :class:`UnusableInput` naming the file when the layout
    cannot be known."""
    if flag_roots:
        return flag_layout(flag_roots)
    if task_dir is None:
        return DEFAULT_LAYOUT
    adv = task_dir / "advisor"
    st = _lstat(adv, "the advisor/ directory")
    if st is None:
        return DEFAULT_LAYOUT
    if stat.S_ISLNK(st.st_mode):
        raise UnusableInput(adv, "advisor/ is a symlink (never followed); pass --privileged-root")
    if not stat.S_ISDIR(st.st_mode):
        raise UnusableInput(adv, "advisor/ is not a directory; pass --privileged-root")
    try:  # the directory must be readable (listable), not only searchable
        fd = os.open(adv, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        os.close(fd)
    except OSError as exc:
        raise UnusableInput(adv, f"cannot read the advisor/ directory: {exc.strerror or exc}") from None
    man = task_dir / MANIFEST
    st = _lstat(man, "the material manifest")
    if st is None:
        return DEFAULT_LAYOUT
    if stat.S_ISLNK(st.st_mode):
        raise UnusableInput(man, "the material manifest is a symlink (never followed); pass --privileged-root")
    if not stat.S_ISREG(st.st_mode):
        raise UnusableInput(man, "the material manifest is not a regular file; pass --privileged-root")
    try:
        data = read_bytes(task_dir, MANIFEST, Budget(MAX_MANIFEST_BYTES, MAX_MANIFEST_BYTES))
        text = decode_text(data, man)
        doc = orjson.loads(text)
    except UnusableInput as exc:
        raise UnusableInput(man, f"cannot read the material manifest: {exc.reason}") from None
    except orjson.JSONDecodeError as exc:
        raise UnusableInput(man, f"cannot read the material manifest as a layout: not JSON ({exc})") from None
    return manifest_layout(doc, man)


def manifest_layout(doc: Any, path: str | Path = MANIFEST) -> Layout:
    """The layout a parsed manifest records (the default layout when it records none)."""
    if not isinstance(doc, dict):
        raise UnusableInput(path, "cannot read the material manifest as a layout: not a JSON object")
    holder: dict[str, Any] = doc
    if doc.get("privileged_roots") is None:
        nested = doc.get("layout")
        if nested is None or (isinstance(nested, dict) and nested.get("privileged_roots") is None):
            return DEFAULT_LAYOUT  # no layout recorded (TaskMaterial.from_texts)
        if not isinstance(nested, dict):
            raise UnusableInput(path, "cannot read the material manifest as a layout: 'layout' is not an object")
        holder = nested
    roots = holder.get("privileged_roots")
    if not isinstance(roots, list):
        raise UnusableInput(path, "cannot read the material manifest as a layout: privileged_roots is not a list")
    for r in roots:
        why = check_root(r)
        if why:
            raise UnusableInput(path, f"cannot read the material manifest as a layout: privileged root {why}")
    excl = holder.get("excluded_directory_names")
    if excl is None:
        excluded = SKIPPED_DIR_NAMES
    else:
        if not isinstance(excl, list) or not all(isinstance(x, str) and x and "/" not in x for x in excl):
            raise UnusableInput(path, "cannot read the material manifest as a layout: excluded_directory_names is "
                                      "not a list of directory names")
        excluded = tuple(dict.fromkeys(excl))
    return Layout(tuple(dict.fromkeys(normalize_root(r) for r in roots)), excluded, "manifest")
