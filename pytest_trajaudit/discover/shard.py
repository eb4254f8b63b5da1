"""Deterministic sharding of an audit across CI machines (``--trajaudit-shard I/N``). Pure: no pytest.

A job belongs to shard ``1 + sha256("trajaudit-shard-1\\0" + key) mod N`` where ``key`` is its task group
(:func:`groups.group_key`: every trial of one task lands on the same shard, so pass^k and skill impact of a group
are computed in one place) or, for a job outside any task group, its path below its audit root (POSIX separators,
never an absolute path). The assignment depends only on those names and on N: the same on every machine,
working directory and Python version. Indices are 1-based, like a CI matrix (``1/3``, ``2/3``, ``3/3``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..aggregate.groups import group_key
from ..scan import linre
from .jobs import JobRef

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
SALT = "trajaudit-shard-1\0"


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(spec: str) -> Shard:
    """``"I/N"`` with integers 1 <= I <= N; anything else raises ValueError with a message for the user."""
    m = _SPEC.match(spec or "")
    if not m:
        raise ValueError(f"--trajaudit-shard needs I/N (1-based, e.g. 1/4), got {spec!r}")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise ValueError(f"--trajaudit-shard {spec.strip()}: needs 1 <= I <= N (shards are numbered from 1)")
    return Shard(i, n)


def shard_of(key: str, count: int) -> int:
    """The 1-based shard of ``key`` among ``count`` shards."""
    digest = hashlib.sha256((SALT + key).encode("utf-8", "surrogatepass")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def relative_id(ref: JobRef, roots: Iterable[Path]) -> str:
    """The job's path below the audit root that holds it (POSIX), or its own name for a root that is itself the
    job or a file given directly. Never absolute."""
    target = ref.anchor if ref.layout in ("bare-file", "record") else ref.dir
    for r in roots:
        if r in target.parents:
            return target.relative_to(r).as_posix()
    return target.name


def shard_key(ref: JobRef, roots: Iterable[Path]) -> str:
    key = None if ref.layout in ("bare-file", "record") else group_key(ref)  # a file's records stay together
    return f"group:{key}" if key is not None else f"job:{relative_id(ref, roots)}"


def in_shard(ref: JobRef, roots: Iterable[Path], shard: Shard | None) -> bool:
    return shard is None or shard.count == 1 or shard_of(shard_key(ref, roots), shard.count) == shard.index


def _plain(v: Any) -> Any:
    """JSON-able, machine-independent form of a settings value (paths by name: an audit machine's checkout
    directory must not change the fingerprint)."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, re.Pattern | linre.Pattern):
        return [v.pattern, v.flags]
    if isinstance(v, Path):
        return v.name
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, set | frozenset):
        return sorted(str(_plain(x)) for x in v)
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)


def fingerprint(*parts: Any) -> str:
    """A short, stable digest of what changes results (settings, principle codes, options): shards audited with
    different settings must not be merged."""
    blob = json.dumps([_plain(p) for p in parts], sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()[:16]
