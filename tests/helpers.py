"""Small helpers for tests: parse a file or text into a Trajectory the way a job load does."""

from __future__ import annotations

from pathlib import Path

from pytest_trajaudit.loaders.sniff import load_trajectory
from pytest_trajaudit.model import Trajectory
from pytest_trajaudit.safeio import decode_text, parse_text


def load_file(path: Path) -> Trajectory:
    text = decode_text(path.read_bytes(), path)
    return load_trajectory(parse_text(text, path), path)


def load_text(text: str, name: str = "t.jsonl") -> Trajectory:
    return load_trajectory(parse_text(text, name), name)
