"""Linear-time search for privileged lines inside trajectory text (P1 content reads; the advisor audit reuses it).

A *privileged line* is a line of a privileged file (a task's tests/ or solution/) with whitespace runs collapsed to
one space and trimmed, at least ``min_len`` characters long. Diff-shaped content keeps only its added lines (the
context and removed lines of a patch are the repository's own code, which the agent may legitimately read).
Lines that also occur in text the agent is entitled to see (the instruction, the task's environment) are dropped.

Matching uses one Aho–Corasick automaton (pyahocorasick) over the whitespace-collapsed haystack, so the cost is
linear in the haystack plus the matches, whatever the number of privileged lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import ahocorasick

_DIFF_META = re.compile(r"^(?:diff --git |index [0-9a-f]+\.\.|@@ |--- |\+\+\+ |new file mode|deleted file mode)")


COLLAPSE_CHUNK = 1 << 20  # characters split at a time: the word list of one chunk is all that is held


def collapse(text: str, chunk: int = COLLAPSE_CHUNK) -> str:
    """Whitespace runs to one space, trimmed: ``" ".join(text.split())`` computed a chunk at a time, so that a text
    of millions of short words never builds a list of all of them (one string object per word: a 180 MB text of
    two-letter words would take gigabytes). ``str.split()`` splits on exactly the characters ``\\s`` matches
    (``str.isspace``; checked over every code point in tests/advisor/test_scan.py) and is ~7× faster than
    ``re.sub`` (which also builds a list of every piece). A word cut by a chunk boundary is joined back: a space
    is written between two chunks only when whitespace lies at the boundary."""
    if len(text) <= chunk:
        return " ".join(text.split())
    out: list[str] = []
    space = False  # whitespace seen since the last word written
    for i in range(0, len(text), chunk):
        piece = text[i:i + chunk]
        words = " ".join(piece.split())
        if not words:
            space = True
            continue
        if out and (space or piece[0].isspace()):
            out.append(" ")
        out.append(words)
        space = piece[-1].isspace()
    return "".join(out)


@dataclass(slots=True)
class PrivilegedLine:
    text: str  # collapsed
    source: str  # e.g. "solution/solve.sh"
    lineno: int


def privileged_lines(files: Iterable[tuple[str, str]], min_len: int = 40) -> list[PrivilegedLine]:
    """(rel path, text) pairs → distinct collapsed lines ≥ ``min_len``, first source kept. Patches keep '+' lines."""
    seen: set[str] = set()
    out: list[PrivilegedLine] = []
    for rel, text in files:
        lines = text.splitlines()
        is_patch = sum(1 for ln in lines[:4000] if _DIFF_META.match(ln)) >= 2
        for i, ln in enumerate(lines, 1):
            if is_patch:
                if _DIFF_META.match(ln):
                    continue
                if ln.startswith("+"):
                    ln = ln[1:]
                elif ln.startswith((" ", "-")):
                    continue  # context/removed lines of a patch: the repository's own code
            c = collapse(ln)
            if len(c) < min_len or c in seen:
                continue
            seen.add(c)
            out.append(PrivilegedLine(c, rel, i))
    return out


@dataclass
class Matcher:
    """An automaton over privileged lines, minus lines found in public text."""

    lines: list[PrivilegedLine]
    _auto: object = field(default=None, repr=False)

    @classmethod
    def build(cls, lines: list[PrivilegedLine], public: Iterable[str] = ()) -> Matcher:
        m = cls(lines)
        if lines:
            pub = m._scan_many(public, lines)
            if pub:
                m.lines = [ln for i, ln in enumerate(lines) if i not in pub]
        m._auto = m._make(m.lines) if m.lines else None
        return m

    @staticmethod
    def _make(lines: list[PrivilegedLine]) -> Any:  # an ahocorasick.Automaton (no type information)
        a = ahocorasick.Automaton()
        for i, ln in enumerate(lines):
            a.add_word(ln.text, i)
        a.make_automaton()
        return a

    def _scan_many(self, texts: Iterable[str], lines: list[PrivilegedLine]) -> set[int]:
        auto = self._make(lines)
        hits: set[int] = set()
        for t in texts:
            if t:
                hits.update(i for _, i in auto.iter(collapse(t)))
        return hits

    def __bool__(self) -> bool:
        return self._auto is not None

    def find(self, text: str) -> set[int]:
        """Indices (into ``self.lines``) of privileged lines contained in ``text`` (whitespace-insensitive)."""
        if self._auto is None or not text:
            return set()
        return {i for _, i in self._auto.iter(collapse(text))}  # type: ignore[attr-defined]
