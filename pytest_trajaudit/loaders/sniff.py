"""Pick the format of a parsed trajectory file from its shape (never from its file name alone)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Protocol, cast

import orjson

from ..model import Trajectory, UnusableInput
from ..safeio import Parsed

# Order matters: specific shapes first, the generic chat list and plain text last.
FORMAT_MODULES = (
    "acp",
    "claude",
    "codex",
    "atif",
    "miniswe",
    "sweagent",
    "openhands",
    "inspect_ai",
    "traces",
    "hooklib",
    "chat",
    "ccexport",
    "transcript",
    "text",
)



class FormatModule(Protocol):
    """What every module of :data:`FORMAT_MODULES` defines (others, e.g. ``MULTI``, are read with ``getattr``)."""

    __name__: str
    NAME: str  # the format's name in reports (``trajectory_format``)

    def sniff(self, parsed: Parsed) -> bool: ...

    def load(self, parsed: Parsed, path: str) -> Trajectory: ...


_loaded: list[FormatModule] | None = None


def loaders() -> list[FormatModule]:
    global _loaded
    if _loaded is None:
        mods: list[FormatModule] = []
        for name in FORMAT_MODULES:
            try:
                mods.append(cast(FormatModule, import_module(f"{__package__}.{name}")))
            except ModuleNotFoundError as exc:  # a format module not written yet
                if exc.name != f"{__package__}.{name}":
                    raise
        _loaded = mods
    return _loaded


def detect(parsed: Parsed) -> FormatModule | None:
    for mod in loaders():
        try:
            if mod.sniff(parsed):
                return mod
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            continue  # hostile shapes (a list where a string belongs): not this format
    return None


def load_trajectory(parsed: Parsed, path: str | Path) -> Trajectory:
    mod = detect(parsed)
    if mod is None:
        shape = parsed.kind if parsed.kind != "json" else type(parsed.value).__name__
        raise UnusableInput(path, f"no known trajectory format matches this {shape} file")
    try:
        traj = mod.load(parsed, str(path))
    except UnusableInput:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        # one line, bounded: the message may quote agent-written text
        msg = " ".join(str(exc).split())[:160]
        raise UnusableInput(path, f"malformed {mod.NAME} trajectory: {type(exc).__name__}: {msg}") from None
    if parsed.kind != "text":
        traj.raw_text = parsed.text
    return traj


# Single-run JSON Lines formats recognised from a loose file's first bytes (collection reads only those): an agent's
# own session log lying in a runs tree (a Claude Code session or stream-json capture, a Codex rollout, a BenchFlow
# ACP stream) is a run, whatever its name.
HEAD_FORMATS = ("acp", "claude", "codex")


def sniff_head(name: str, head: bytes, whole: bool) -> FormatModule | None:
    """The format module of a ``*.jsonl`` file from its first bytes ``head`` (``whole``: the head is the whole
    file), or None: the complete lines of the head must each be a JSON value and one of :data:`HEAD_FORMATS` must
    recognise them. Never raises."""
    if not name.endswith(".jsonl"):
        return None
    body = head.removeprefix(b"\xef\xbb\xbf")
    lines = body.split(b"\n")
    if not whole:
        lines = lines[:-1]  # the last line may be cut
    values, numbers = [], []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            values.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            return None
        numbers.append(i)
    if len(values) < 2:  # one line says too little to tell a run from a data file
        return None
    parsed = Parsed("jsonl", values, "", numbers)
    for mod in loaders():
        if mod.__name__.rsplit(".", 1)[-1] not in HEAD_FORMATS:
            continue
        try:
            if mod.sniff(parsed):
                return mod
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            continue
    return None
