"""Multi-record files: one file holding several runs, each audited as a job of its own.

Examples: an OpenHands evaluation ``output.jsonl`` (one instance per line), an Inspect AI log (``.json`` or
``.eval``: one sample × epoch each), trace-grader's ``traces.json`` (several runs).

The format-module interface (plain Python, no pytest):

- ``MULTI = True`` — the module can read files holding several runs;
- ``members(parsed, path) -> list[str]`` — the stable member ids of a parsed file, in file order (an instance id,
  ``<sample id>_epoch_<n>``, a run id). Ids are any non-empty strings without control characters; they must be
  unique (a duplicate makes the whole file unusable input);
- ``load_member(parsed, path, member) -> (Trajectory, dict)`` — one member's trajectory (the module sets
  ``Trajectory.raw_text`` to the member's own text) and its job metadata, keys ``task, trial, agent, model,
  reward, reward_source, reward_note, exception`` (all optional; ``reward`` a number, ``reward_source`` names the
  field, ``reward_note`` says why a scored record has no reward);
- ``claims(name, head) -> "multi" | "single" | None`` (optional) — at collection, from the file name and its first
  4 KiB only (8 KiB for a ``.md``/``.markdown``/``.txt`` file, whose first turns are longer): this file is one of
  the module's multi-record files ("multi"), a single run of the format
  ("single"), or neither. A loose file in a walked directory becomes a job only when a module claims it; a file
  given directly is always a job (a container when claimed "multi");
- ``scan_members(base, rel, max_file) -> list[str] | None`` (optional) — the same ids as ``members`` without
  parsing the whole file (one streaming pass over JSON Lines reading only ids; the zip central directory); None
  when it has no cheap way for this file. Then listing parses the file.

- ``SPANS`` (optional) — a :class:`spans.Spec`: the file is then indexed by its records' byte spans (its bytes
  held once, each record parsed from its own slice when it loads) instead of parsed whole, and ``members`` /
  ``load_member`` meet records as :class:`spans.Span` objects (``Span.get`` reads the fields the index kept,
  ``spans.resolve`` parses one). A file the index declines is parsed whole.

A module may also define ``load(parsed, path)`` for a file of its format holding one run.

Collection lists the members (:func:`list_members`) and makes one node per member, named by
:func:`node_name`; loading a member (:func:`load_record`) reads and indexes (or parses) the container and lists
its members once per process (a bounded cache keyed by the file's identity, see ``MAX_CONTAINERS``), and the module indexes its records
once per parse (``safeio.derived``), so loading every record of a file is linear in its records.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from ..discover.jobs import JobRef
from ..model import Trajectory, UnusableInput
from ..safeio import HEAD_BYTES, Budget, Parsed, derived, is_zip, parse_bytes, read_bytes, read_head
from . import spans
from .sniff import detect
from .transcript import HEAD_BYTES as TEXT_HEAD
from .transcript import TEXT_SUFFIXES

_UNSAFE = re.compile(r"[^A-Za-z0-9._@+=,#-]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
NODE_NAME_MAX = 200
RECORD = "record"  # JobRef.layout of a member and of the container itself


# --------------------------------------------------------------------------- ids


def node_name(member: str) -> str:
    """The pytest node name of a member: the id itself when it is safe in a node id (letters, digits and
    ``._@+=,#-``), else the id with every other character replaced by ``_`` (``::``, ``[``, ``/``, spaces
    would break node-id parsing or shell use)."""
    name = _UNSAFE.sub("_", member)[:NODE_NAME_MAX]
    return name or "_"


def checked_members(ids: Any, path: str | Path) -> list[str]:
    """Validate what a module's ``members``/``scan_members`` returned: a list of unique, non-empty strings
    without control characters whose node names are unique too. Anything else is unusable input."""
    if not isinstance(ids, list):
        raise UnusableInput(path, "holds a single run, not several records")
    seen: dict[str, str] = {}
    names: dict[str, str] = {}
    for m in ids:
        if not isinstance(m, str) or not m:
            raise UnusableInput(path, f"record with an empty or non-string id ({m!r:.60})")
        if _CONTROL.search(m):
            raise UnusableInput(path, f"record id {m[:80]!r} contains control characters")
        if m in seen:
            raise UnusableInput(path, f"duplicate record id {m[:120]!r}")
        seen[m] = m
        n = node_name(m)
        if n in names:
            raise UnusableInput(path, f"record ids {names[n][:80]!r} and {m[:80]!r} share the node name {n!r}")
        names[n] = m
    return ids


def member_ref(container: JobRef, member: str) -> JobRef:
    return JobRef(container.dir, container.anchor, RECORD, member)


# --------------------------------------------------------------------------- collection


def _multi_modules() -> list[Any]:
    from .sniff import loaders

    return [m for m in loaders() if hasattr(m, "claims")]


def claim(path: Path, max_file: int | None = None) -> tuple[str, Any] | None:
    """("multi" | "single", module) when a format module claims the file from its name and first 4 KiB (read
    whatever the file's size: the limits are enforced when it is listed or loaded), or when the complete lines of
    that head are a single-run JSON Lines format (``sniff.sniff_head``: a Claude Code session, a Codex rollout, an
    ACP stream), or ("single", None) when none does but the head holds a run record's keys
    (``discover.jobs.looks_like_run_record``); None otherwise, or when the head cannot be read (a file given
    directly is then left to the normal load, which reports why)."""
    n = TEXT_HEAD if path.name.lower().endswith(TEXT_SUFFIXES) else HEAD_BYTES  # a transcript's turns need more
    try:
        head = read_head(path.parent, path.name, n)
    except UnusableInput:
        return None
    for mod in _multi_modules():
        try:
            verdict = mod.claims(path.name, head)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            continue
        if verdict in ("multi", "single"):
            return verdict, mod
    from .sniff import sniff_head

    single = sniff_head(path.name, head, len(head) < n)
    if single is not None:
        return "single", single
    from ..discover.jobs import looks_like_run_record

    # a run record no sniffer recognises (re-encoded, re-ordered, a long first line): a job whose load says why
    return ("single", None) if looks_like_run_record(path, head) else None


def list_members(ref: JobRef, max_file: int, mod: Any = None) -> list[str]:
    """The member ids of a container, cheaply: the module's ``scan_members`` when it has one, else a parse of
    the file (bounded by the per-file limit). Raises :class:`UnusableInput` with one line."""
    path = ref.anchor
    try:
        if mod is not None and hasattr(mod, "scan_members"):
            ids = mod.scan_members(ref.dir, path.name, max_file)
            if ids is not None:
                return checked_members(ids, path)
        parsed = _container(ref, max_file)
        mod = _multi_module(parsed, path)
        return checked_members(mod.members(parsed, str(path)), path)
    except UnusableInput:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise UnusableInput(path, f"malformed multi-record file: {type(exc).__name__}: {str(exc)[:160]}") from None


# --------------------------------------------------------------------------- loading

# One parse and one index per container file per process, shared by the loads of its records: an entry holds the
# parsed file, its format module and its validated member ids (the module keeps its own index of the records with
# the Parsed: safeio.derived). An entry is dropped when every one of its records has been loaded in this process
# (a record is loaded once per job audit, at its first item); at most MAX_CONTAINERS entries are kept, the least
# recently used going first, and older entries also go while the files held would pass CACHE_BYTES (a worker that
# gets only some of a file's records, or a -k that deselects some, keeps the file until another container needs
# the room).
MAX_CONTAINERS = 2
CACHE_BYTES = 256 * 1024 * 1024


class _Container:
    __slots__ = ("parsed", "mod", "ids", "left", "size")

    def __init__(self, parsed: Parsed, size: int) -> None:
        self.parsed = parsed
        self.size = size
        self.mod: Any = None
        self.ids: frozenset[str] | None = None
        self.left: set[str] | None = None  # the members not loaded yet in this process


_cache: dict[tuple[Any, ...], _Container] = {}  # insertion order = least recently used first
parses = 0  # container files parsed by this process (tests and benchmarks/multi_record.py read it)


def release() -> None:
    """Drop every cached container."""
    _cache.clear()


def _identity(path: Path) -> tuple[Any, ...] | None:
    """The file's identity: its path and what ``lstat`` says of the regular file there (device, inode, size,
    modification time), so a replaced or rewritten file is parsed again. None for anything but a regular file."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _entry(ref: JobRef, max_file: int, budget: Budget | None = None) -> _Container:
    """The cached container of ``ref``'s file, parsed when it is not cached or has changed. A job's budget is
    charged the file's size on a cache hit too, so the limits never depend on the cache."""
    global parses
    path = ref.anchor
    key = _identity(path)
    entry = _cache.pop(key, None) if key is not None else None
    if key is not None and entry is not None:
        _cache[key] = entry  # most recently used
        if budget is not None:
            budget.charge(path, entry.size)
        return entry
    data = read_bytes(ref.dir, path.name, budget or Budget(max_file, max_file))
    parses += 1
    entry = _Container(_parse(data, path, max_file), len(data))
    del data  # a record index keeps the bytes (its spans view them); a whole parse does not
    if key is not None and _identity(path) == key:
        while _cache and (len(_cache) >= MAX_CONTAINERS or sum(e.size for e in _cache.values()) + entry.size > CACHE_BYTES):
            del _cache[next(iter(_cache))]
        _cache[key] = entry
    return entry


def _indexed(data: bytes, path: Path) -> Parsed | None:
    """The file as an index of its records' spans (loaders/spans.py) when the format module that claims it from
    its first bytes (as collection does) has a :class:`spans.Spec`, the bytes index under it, and format detection
    on the first records (``spans.view``) picks that same module; else None."""
    if is_zip(data):
        return None
    name = path.name
    head = data[:TEXT_HEAD if name.lower().endswith(TEXT_SUFFIXES) else HEAD_BYTES]
    mod = None
    for m in _multi_modules():
        try:
            verdict = m.claims(name, head)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            continue
        if verdict in ("multi", "single"):
            mod = m if verdict == "multi" else None
            break
    spec: spans.Spec | None = getattr(mod, "SPANS", None)
    if spec is None:
        return None
    parsed = None
    try:
        if spec.paths is not None:
            try:
                value = spans.document(data, spec.paths, spec.fields)
                parsed = Parsed("json", value, "")
                shown = Parsed("json", spans.view(value, spec.paths), "")
            except spans.Declined:
                if not spec.jsonl:
                    raise
        if parsed is None:
            values, numbers = spans.lines(data, spec.fields)
            parsed = Parsed("jsonl", values, "", numbers)
            shown = Parsed("jsonl", [spans.resolve(v) for v in values[:spans.HEAD]] + values[spans.HEAD:], "",
                           numbers)
    except spans.Declined:
        return None
    if detect(shown) is not mod:
        return None
    derived(parsed, _MODULE, lambda: mod)  # the format, detected on the first records (spans.view)
    return parsed


def _parse(data: bytes, path: Path, max_file: int) -> Parsed:
    """A multi-record file indexed by its records' spans (:func:`_indexed`), else parsed whole."""
    return _indexed(data, path) or parse_bytes(data, path, max_file)


def _container(ref: JobRef, max_file: int, budget: Budget | None = None) -> Parsed:
    return _entry(ref, max_file, budget).parsed


def _done(ref: JobRef, entry: _Container, member: str) -> None:
    """``member`` is loaded: drop the container once all of its records are."""
    if entry.left is None:
        return
    entry.left.discard(member)
    if not entry.left:
        key = _identity(ref.anchor)
        if key is not None and _cache.get(key) is entry:
            del _cache[key]


_MODULE = "multi.module"


def _multi_module(parsed: Parsed, path: Path) -> Any:
    mod: Any = parsed.memo.get(_MODULE) if parsed.memo else None
    mod = mod or detect(parsed)
    if mod is None:
        shape = parsed.kind if parsed.kind != "json" else type(parsed.value).__name__
        raise UnusableInput(path, f"no known multi-record format matches this {shape} file")
    if not getattr(mod, "MULTI", False):
        raise UnusableInput(path, f"a {mod.NAME} file holds a single run, not several records")
    return mod


def load_record(ref: JobRef, budget: Budget) -> tuple[Trajectory, dict[str, Any]]:
    """One member of a multi-record file: its trajectory and its job metadata."""
    path = ref.anchor
    member = ref.member or ""
    entry = _entry(ref, budget.max_file, budget)
    parsed = entry.parsed
    if parsed.kind == "zip":
        parsed.value.budget = budget  # members read from the archive count against this job's limit
    try:
        if entry.ids is None:  # the format and the member list, once per entry
            entry.mod = _multi_module(parsed, path)
            ids = checked_members(entry.mod.members(parsed, str(path)), path)
            entry.ids = frozenset(ids)
            entry.left = set(ids)
        if member not in entry.ids:
            raise UnusableInput(path, f"no record {member[:120]!r} in this file")
        traj, info = entry.mod.load_member(parsed, str(path), member)
        _done(ref, entry, member)
    except UnusableInput:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise UnusableInput(path, f"malformed record {member[:80]!r}: {type(exc).__name__}: {str(exc)[:160]}") from None
    traj.meta.setdefault("member", member)
    return traj, info if isinstance(info, dict) else {}


# --------------------------------------------------------------------------- scripts


def file_jobs(path: Path, max_file: int, *, given: bool) -> list[JobRef]:
    """The jobs of one file: one per member when a module claims it "multi", the file itself when claimed
    "single" (or given directly, or named like a trajectory), nothing otherwise. A container whose members cannot be listed is returned
    as itself (``member=None``): loading it reports why."""
    from ..discover.jobs import bare_file, looks_like_trajectory

    if path.name.endswith(".traj"):
        return [bare_file(path)]
    c = claim(path, max_file)
    if c is None:
        return [bare_file(path)] if given or looks_like_trajectory(path.name) else []
    verdict, mod = c
    if verdict == "single":
        return [bare_file(path)]
    container = JobRef(path.parent, path, RECORD)
    try:
        return [member_ref(container, m) for m in list_members(container, max_file, mod)]
    except UnusableInput:
        return [container]


def find_all_jobs(root: Path, max_file: int = 512 * 1024 * 1024) -> list[JobRef]:
    """Every job under ``root`` as the plugin collects them: directory jobs, loose files a format claims, one ref
    per member of a multi-record file (for scripts and tests; the plugin walks lazily through its nodes)."""
    from ..discover.jobs import classify, loose_files, subdirs

    root = Path(os.path.abspath(root))
    try:
        st = os.lstat(root)
    except OSError:
        return []
    if stat.S_ISREG(st.st_mode):
        return file_jobs(root, max_file, given=True)
    if not stat.S_ISDIR(st.st_mode):
        return []
    out: list[JobRef] = []
    stack = [root]
    while stack:
        d = stack.pop()
        ref = classify(d)
        if ref is not None:
            out.append(ref)
            continue
        for f in loose_files(d):
            out.extend(file_jobs(f, max_file, given=False))
        stack.extend(reversed(subdirs(d)))
    return out


__all__ = ["RECORD", "claim", "list_members", "load_record", "node_name", "checked_members", "member_ref",
           "release", "file_jobs", "find_all_jobs"]
