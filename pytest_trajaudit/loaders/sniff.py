"""Pick the format of a parsed trajectory file from its shape (never from its file name alone)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

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

_loaded: list | None = None


def loaders() -> list:
    global _loaded
    if _loaded is None:
        mods = []
        for name in FORMAT_MODULES:
            try:
                mods.append(import_module(f"{__package__}.{name}"))
            except ModuleNotFoundError as exc:  # a format module not written yet
                if exc.name != f"{__package__}.{name}":
                    raise
        _loaded = mods
    return _loaded


def detect(parsed: Parsed) -> object | None:
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
