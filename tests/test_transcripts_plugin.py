"""Markdown/text transcripts in a runs tree, through the plugin: a transcript is a job, a README next to it is not.

Fixtures: ``tests/loaders/test_transcript.py`` (an Inspect chat-harness write-up, a Claude Code session exported
to Markdown, a README, a task's instruction.md, a plain-text run log)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loaders.test_transcript import _tree

BASE = ("-p", "no:cacheprovider", "--trajaudit-principles=P1,P2")


def _ids(result: pytest.RunResult) -> list[str]:
    return [ln for ln in result.stdout.lines if "::" in ln and not ln.startswith(("FAILED", "ERROR"))]


def test_transcripts_are_collected_and_prose_is_not(pytester: pytest.Pytester) -> None:
    _tree(pytester.path)
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "--co", "-q")
    assert sorted(_ids(result)) == sorted(f"runs/transcripts/{f}::{c}" for f in ("03_flash.md", "session.txt")
                                          for c in ("P1", "P2"))


def test_transcript_commands_are_audited(pytester: pytest.Pytester) -> None:
    _tree(pytester.path)
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "-rf")
    result.stdout.fnmatch_lines(["FAILED runs/transcripts/session.txt::P1*"])
    result.assert_outcomes(passed=3, failed=1)


def test_a_transcript_given_directly(pytester: pytest.Pytester) -> None:
    runs = _tree(pytester.path)
    target = Path("runs") / "transcripts" / "03_flash.md"
    assert (runs / "transcripts" / "03_flash.md").is_file()
    result = pytester.runpytest(*BASE, f"--trajaudit={target}", "--co", "-q")
    assert sorted(_ids(result)) == [f"{target}::P1", f"{target}::P2"]
