"""The advisor audit's mechanical checks over a trajectory (the seed's advisor-audit.md "What it checks").

The haystack, in order: the trajectory as read (the rendered JSON, or the plain text), then every string key and
value in it, decoded, duplicate keys included; a string that itself holds a JSON object or array (a tool call's
arguments) is decoded too, up to three layers deep. A JSON Lines trajectory is decoded line by line after its raw
text; a plain-text transcript (not starting with ``{`` or ``[``) is scanned as it is, then the decoded strings of
each of its lines that is a JSON value. The strings are joined in chunks with NUL separators (a NUL never occurs in
decoded text, so nothing matches across two strings), and every check makes one linear pass per chunk.

- ADV-4: every privileged line of 40 characters or more (whitespace runs collapsed) is matched verbatim with one
  Aho–Corasick automaton (:mod:`pytest_trajaudit.scan.overlap`); each match is quoted by at most its first 60 characters.
- ADV-3: the mention patterns of :mod:`.patterns`, one compiled alternation.

By design neither catches a paraphrase, a privileged line shorter than 40 characters, homoglyphs or zero-width
characters, or text encoded deeper (base64, JSON nested more than three layers inside strings). JSON nested too
deep for the decoder inside a string is recorded (:class:`Gaps`): the audit cannot pass over it. A mention's quote
is redacted before it is clipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import ahocorasick

from ..model import UnusableInput
from ..scan.linre import Regex
from ..scan.overlap import Matcher, PrivilegedLine, collapse
from ..scan.redact import redact
from .patterns import KEYWORDS, MENTION_PATTERNS, label_of

MAX_LAYERS = 3  # JSON decoded inside strings, at most this many layers deep
QUOTE_CHARS = 60  # a matched privileged line is quoted by at most its first 60 characters
CHUNK_CHARS = 1 << 22  # decoded strings are scanned in chunks of about 4 Mi characters
SEP = "\x00"
MAX_MENTIONS = 50


class _Obj(list[tuple[str, Any]]):
    """A JSON object as its list of (key, value) pairs: duplicate keys are all kept."""


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_Obj)


def _container(s: str) -> bool:
    t = s.strip()
    return len(t) >= 2 and ((t[0] == "{" and t[-1] == "}") or (t[0] == "[" and t[-1] == "]"))


class Gaps(list[str]):
    """What the haystack could not decode (JSON nested too deep for the decoder inside a string or on a line of a
    plain-text transcript): the strings inside it were not scanned, so the audit cannot pass."""

    def too_deep(self, what: str) -> None:
        self.append(f"{what} holds JSON nested too deep to decode: the strings inside it were not scanned")


def _strings(value: object, where: str, gaps: Gaps | None = None) -> Iterator[str]:
    """Every string key and value of a parsed JSON value, in document order; strings holding a JSON object or
    array are decoded and walked too, up to :data:`MAX_LAYERS` layers. A string holding JSON nested too deep to
    decode is recorded in ``gaps`` (never skipped silently)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        v, layer = stack.pop()
        if isinstance(v, str):
            yield v
            if layer < MAX_LAYERS and _container(v):
                try:
                    inner = _loads(v)
                except RecursionError:
                    if gaps is not None:
                        gaps.too_deep(f"a string of {where} (layer {layer + 1})")
                    continue
                except ValueError:
                    continue
                if isinstance(inner, list):  # an object (_Obj) or an array
                    stack.append((inner, layer + 1))
        elif isinstance(v, _Obj):
            for k, x in reversed(v):
                stack.append((x, layer))
                stack.append((k, layer))
        elif isinstance(v, list):
            stack.extend((x, layer) for x in reversed(v))


def _lines(text: str) -> Iterator[str]:
    for line in text.split("\n"):
        if line.strip():
            yield line


def decoded_strings(text: str, where: str = "trajectory", gaps: Gaps | None = None) -> Iterator[str]:
    """The decoded strings of ``text`` (see the module docstring), without the text itself; what could not be
    decoded is recorded in ``gaps``."""
    s = text.lstrip()
    if s[:1] in ("{", "["):
        try:
            doc = _loads(text)
        except RecursionError:
            raise UnusableInput(where, "JSON nesting too deep to decode") from None
        except ValueError:
            doc = None
        if doc is not None:
            yield from _strings(doc, where, gaps)
            return
        for line in _lines(text):  # JSON Lines (strictness was decided when the file was read)
            try:
                value = _loads(line)
            except RecursionError:
                raise UnusableInput(where, "JSON nesting too deep to decode") from None
            except ValueError:
                continue  # a CLI capture's plain-text log line: scanned in the raw text
            yield from _strings(value, where, gaps)
        return
    for i, line in enumerate(_lines(text), 1):  # plain text: lines that are JSON values
        if line.lstrip()[:1] not in ("{", "[", '"'):
            continue
        try:
            value = _loads(line)
        except RecursionError:
            if gaps is not None:
                gaps.too_deep(f"a line of {where} (non-blank line {i})")
            continue
        except ValueError:
            continue
        yield from _strings(value, where, gaps)


def haystack(text: str, where: str = "trajectory", gaps: Gaps | None = None) -> Iterator[str]:
    """The text as read, then the decoded strings joined into NUL-separated chunks (what could not be decoded is
    recorded in ``gaps``)."""
    yield text
    buf: list[str] = []
    size = 0
    for s in decoded_strings(text, where, gaps):
        if not s:
            continue
        buf.append(s)
        size += len(s) + 1
        if size >= CHUNK_CHARS:
            yield SEP.join(buf)
            buf, size = [], 0
    if buf:
        yield SEP.join(buf)


# --- ADV-3: mentions --------------------------------------------------------------------------------------------

_CTX_STOP = re.compile(r'[\n\x00"\\]')


REDACT_CHARS = 4096  # a quote is redacted over this many characters each side before it is clipped


def _bounds(chunk: str, start: int, end: int, n: int) -> tuple[int, int]:
    """Where the context of the match ``chunk[start:end]`` begins and ends: up to ``n`` characters each side,
    never across a line, a string or a JSON escape."""
    lo = max(start - n, 0)
    last = None
    m: re.Match[str] | None
    for m in _CTX_STOP.finditer(chunk, lo, start):
        last = m
    if last is not None:
        lo = last.end()
        if last.group(0) == "\\":  # skip the escape's letter (\n, \t, or \u and its four hex digits)
            lo = min(lo + (5 if chunk[lo:lo + 1] == "u" else 1), start)
    hi = min(end + n, len(chunk))
    m = _CTX_STOP.search(chunk, end, hi)
    if m:
        hi = m.start()
    return lo, hi


def _context(chunk: str, start: int, end: int, n: int = 40) -> str:
    """The match with up to ``n`` characters each side, never across a line, a string or a JSON escape (raw: for
    comparing and de-duplicating, never shown)."""
    lo, hi = _bounds(chunk, start, end, n)
    return chunk[lo:hi]


def _shown_context(chunk: str, start: int, end: int, n: int = 40) -> str:
    """:func:`_context` as shown: redacted over :data:`REDACT_CHARS` characters each side (within the same line,
    string and escape) BEFORE it is clipped to ``n`` characters each side, so a key the clip would cut is redacted
    whole, never shown in part. When a secret overlaps the match itself, the redacted window is clipped around its
    middle."""
    lo, hi = _bounds(chunk, start, end, REDACT_CHARS)
    left, mid, right = chunk[lo:start], chunk[start:end], chunk[end:hi]
    whole = redact(left + mid + right)
    red_left = redact(left)
    if whole.startswith(red_left) and whole.startswith(mid, len(red_left)):
        a = len(red_left)
        b = a + len(mid)
    else:
        a = b = round(len(whole) * len(left) / max(len(left) + len(mid) + len(right), 1))
    return whole[max(a - n, 0):b + n]


_KEYWORDS: ahocorasick.Automaton | None = None
WINDOW_BEFORE, WINDOW_AFTER = 200, 400  # a mention spans at most this far around its keyword


def _keywords() -> ahocorasick.Automaton:
    global _KEYWORDS
    if _KEYWORDS is None:
        auto = ahocorasick.Automaton()
        for k in KEYWORDS:
            auto.add_word(k, len(k))
        auto.make_automaton()
        _KEYWORDS = auto
    return _KEYWORDS


def _windows(chunk: str) -> list[tuple[int, int]]:
    """Merged ranges around the keywords of :data:`~.patterns.KEYWORDS` (one linear Aho–Corasick pass over the
    lower-cased chunk); the whole chunk when lower-casing changes its length (rare non-ASCII case mappings)."""
    low = chunk.lower()
    if len(low) != len(chunk):
        return [(0, len(chunk))]
    out: list[tuple[int, int]] = []
    for end, n in _keywords().iter(low):
        a, b = max(end - n + 1 - WINDOW_BEFORE, 0), min(end + 1 + WINDOW_AFTER, len(chunk))
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@dataclass(slots=True)
class Mention:
    label: str
    match: str
    quote: str


@dataclass
class Mentions:
    """Distinct mentions (by pattern label and context, case-insensitive) over any number of chunks."""

    rx: Regex
    public: str = ""  # the task's public instruction: a match whose context quotes it is not counted
    patterns: tuple[tuple[str, str], ...] = MENTION_PATTERNS
    found: list[Mention] = field(default_factory=list)  # the first MAX_MENTIONS
    count: int = 0  # distinct mentions in all
    quoted: int = 0  # matches that quote the public instruction (not counted)
    _seen: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._pub = collapse(self.public).lower() if self.public else ""

    def feed(self, chunk: str) -> None:
        for a, b in _windows(chunk):
            self._feed(chunk, a, b)

    def _feed(self, chunk: str, a: int, b: int) -> None:
        for m in self.rx.finditer(chunk, a, b):
            ctx = collapse(_context(chunk, m.start(), m.end()))
            low = ctx.lower()
            if self._pub and low in self._pub:
                self.quoted += 1
                continue
            label = label_of(m, self.patterns)
            if (label, low) in self._seen:
                continue
            self._seen.add((label, low))
            self.count += 1
            if len(self.found) < MAX_MENTIONS:  # the quote is redacted before it is clipped
                shown = collapse(_shown_context(chunk, m.start(), m.end()))
                self.found.append(Mention(label, collapse(m.group(0)), shown[:160]))


def find_mentions(text: str, rx: Regex, public: str = "") -> Mentions:
    ms = Mentions(rx, public)
    for chunk in haystack(text):
        ms.feed(chunk)
    return ms


# --- ADV-4: privileged overlap ----------------------------------------------------------------------------------

@dataclass(slots=True)
class Overlap:
    lines: list[PrivilegedLine] = field(default_factory=list)  # matched privileged lines, in privileged order

    def quotes(self) -> list[str]:
        return [ln.text[:QUOTE_CHARS] for ln in self.lines]


MAX_GAPS = 20  # gaps named in the audit's issues (the rest counted)


def scan(text: str, matcher: Matcher, mention_rx: Regex, public: str = "",
         where: str = "trajectory") -> tuple[Overlap, Mentions, list[str]]:
    """One pass over the haystack feeding both checks (each chunk is built once); also what could not be decoded
    (:class:`Gaps`, at most :data:`MAX_GAPS` named)."""
    hits: set[int] = set()
    ms = Mentions(mention_rx, public)
    gaps = Gaps()
    for chunk in haystack(text, where, gaps):
        if matcher:
            hits |= matcher.find(chunk)
        ms.feed(chunk)
    named = list(dict.fromkeys(gaps))
    if len(named) > MAX_GAPS:
        named = [*named[:MAX_GAPS], f"{len(named) - MAX_GAPS} more place(s) with JSON nested too deep to decode"]
    return Overlap([matcher.lines[i] for i in sorted(hits)]), ms, named
