"""Regular expressions in linear time: Python ``re`` syntax and matches, run by RE2 (google-re2).

Python's ``re`` is a backtracking engine: a pattern such as ``pip\\s+install\\s+[^=]+(?:json|pytest)\\s`` takes time
quadratic in the text on a trajectory the agent wrote with many ``pip install`` and no ``=``; RE2 takes time
linear in the text for every pattern. :func:`compile` takes a pattern written for ``re`` (the seeds', the precise
mode's, the principles', the loaders') and returns an object with ``re.Pattern``'s methods (search, match, fullmatch, finditer,
findall, sub, subn, split; ``pattern``, ``flags``, ``groups``, ``groupindex``) whose matches are Python's:

- the pattern is read by Python's own parser (``re._parser``: every escape, flag and class exactly as ``re``
  reads it) and written out again in RE2 syntax, construct by construct;
- Python's Unicode ``\\d``, ``\\s``, ``\\w`` (and ``\\D``, ``\\S``, ``\\W``) become explicit classes of the code points
  Python's own ``re`` puts in them (``_uniclasses.py``, made from ``re`` for this Unicode version), so e.g. a
  no-break space is ``\\s`` in both; with ``re.ASCII``, the ASCII classes; ``.`` is ``[^\\n]`` (or any character
  under ``re.DOTALL``); ``^``/``\\A``/``\\Z`` keep Python's meaning, and so does ``$``: without ``re.MULTILINE`` it
  also matches before a final newline, which RE2 cannot say without a lookahead, so that newline is matched into
  a marker group and taken back out of the match (:class:`_DollarPattern`).
- ``\\b``/``\\B`` are RE2's: a boundary between ASCII word characters and the rest. Python's Unicode ``\\b`` also
  counts a non-ASCII letter as a word character; RE2 has no such assertion. Next to an ASCII letter (the
  project's patterns: ``\\bconftest``, ``\\bactually\\b``) RE2 sees a boundary wherever Python does and also where a
  non-ASCII letter touches it (``éconftest.py``): it matches at least as often. The corpus test
  (``tests/test_linre.py``) finds no text where the two engines disagree on any compiled pattern.

A pattern RE2 cannot express (a lookaround, a backreference, an atomic group, a possessive or a counted repeat
past RE2's 1,000) is compiled by ``re`` as it is, and listed by :func:`backtracking`: the project keeps such
patterns off trajectory text or makes them safe by construction (tested). Every search also advances the job's
time budget (``timebudget.tick``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..timebudget import tick

try:
    import re2 as _re2
except ImportError:  # pragma: no cover - a declared dependency; without it every pattern is Python's
    _re2 = None

try:
    from re import _constants as _c
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python without them: every pattern is Python's
    _sre = None

MAX_MEM = 64 << 20  # RE2's memory budget per pattern (Unicode classes make larger programs than ASCII ones)

_COMPILED: list[Pattern] = []  # every RE2-backed pattern, for the equivalence test
_BACKTRACKING: list[re.Pattern[str]] = []  # patterns RE2 cannot express: compiled by re


class Unsupported(Exception):
    """The pattern uses something RE2 has not (a lookaround, a backreference, ...)."""


def compile(pattern: str, flags: int = 0) -> Pattern | re.Pattern[str]:  # noqa: A001 - re.compile's name
    """``re.compile(pattern, flags)``, run by RE2 when it can express the pattern (see the module's docstring)."""
    key = (type(pattern), pattern, flags)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    out = _compile(pattern, flags)
    _CACHE[key] = out
    return out


_CACHE: dict[tuple[type, Any, int], Pattern | re.Pattern[str]] = {}  # one object per pattern: cheap Settings(), needles' plans reused


def _compile(pattern: str, flags: int) -> Pattern | re.Pattern[str]:
    py = re.compile(pattern, flags)  # also: Python's errors for a bad pattern, whatever RE2 says
    if _re2 is None or _sre is None or not isinstance(pattern, str):
        _BACKTRACKING.append(py)
        return py
    try:
        translated, gmap, markers = translate(pattern, flags)
        opts = _re2.Options()
        opts.max_mem = MAX_MEM
        opts.log_errors = False
        rx = _re2.compile(translated, opts)
    except (Unsupported, _re2.error, RecursionError, ValueError):
        _BACKTRACKING.append(py)
        return py
    out = (Pattern if not markers else _DollarPattern)(py, rx, translated)
    out.gmap, out.markers = gmap, markers
    _COMPILED.append(out)
    return out


def compiled() -> list[Pattern]:
    """Every RE2-backed pattern compiled so far in this process."""
    return list(_COMPILED)


def backtracking() -> list[re.Pattern[str]]:
    """Every pattern :func:`compile` left to Python's ``re`` (RE2 cannot express it)."""
    return list(_BACKTRACKING)


def superset(pattern: str, flags: int = 0) -> Callable[[str], bool] | None:
    """A test that answers False only when ``re.compile(pattern, flags)`` certainly finds nothing in a text,
    in RE2's linear time: a prefilter for a pattern that must stay Python's (a lookbehind, say) and is mostly asked
    about texts it does not match (the redaction patterns). It searches the text with
    ``translate(pattern, flags, relaxed=True)``, which matches wherever the pattern does, in any text: Python's
    Unicode classes are written out exactly, ``\\b`` is left out, and under IGNORECASE a class takes the characters
    Python folds onto ASCII ones. A text RE2 cannot read (a lone surrogate) answers True. None: no such test (RE2
    missing or unable to take the relaxed pattern)."""
    if _re2 is None or _sre is None:
        return None
    try:
        translated = translate(pattern, flags, relaxed=True)[0]
        opts = _re2.Options()
        opts.max_mem = MAX_MEM
        opts.log_errors = False
        regexp = _re2.compile(translated, opts)._regexp
    except (Unsupported, _re2.error, RecursionError, ValueError):
        return None

    def may_match(text: str) -> bool:
        tick()
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: RE2 cannot read the text, so the test does not judge it
            return True
        return bool(regexp.Match(_UNANCHORED, data, 0, len(data))[0] != _NULL_SPAN)

    return may_match


class Pattern:
    """A compiled pattern with ``re.Pattern``'s interface, matched by RE2."""

    __slots__ = ("py", "rx", "translated", "gmap", "markers", "__weakref__")
    gmap: list[int]  # set by _compile: the RE2 group of each of Python's groups (translate)
    markers: list[int]  # set by _compile: the RE2 groups marking a ``$`` before a final newline

    def __init__(self, py: re.Pattern[str], rx: Any, translated: str) -> None:
        self.py = py  # the same pattern compiled by re (its syntax, flags and groups are the reference)
        self.rx = rx
        self.translated = translated

    @property
    def pattern(self) -> str:
        return self.py.pattern

    @property
    def flags(self) -> int:
        return self.py.flags

    @property
    def groups(self) -> int:
        return self.py.groups

    @property
    def groupindex(self) -> Any:
        return self.py.groupindex

    def __repr__(self) -> str:
        return f"linre.compile({self.py.pattern!r}, {self.py.flags!r})"

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str, int]]:
        return compile, (self.py.pattern, self.py.flags & ~re.UNICODE)

    def _text(self, string: str) -> str:
        tick()
        if not string.isascii() and _SURROGATE.search(string) is not None:
            # a lone surrogate is not UTF-8 (RE2's input): U+FFFD in its place keeps every offset
            return _SURROGATE.sub("\ufffd", string)
        return string

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        if pos == 0 and endpos is None and string.isascii():
            # the common call, on ASCII text (no surrogate to replace): _first's steps in line, the same match
            tick()
            spans = self.rx._regexp.Match(_UNANCHORED, string.encode(), 0, len(string))
            return None if spans[0] == _NULL_SPAN else _re2._Match(self.rx, string, 0, len(string), spans)
        return _first(self.rx, _UNANCHORED, self._text(string), pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        return _first(self.rx, _ANCHOR_START, self._text(string), pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        return _first(self.rx, _ANCHOR_BOTH, self._text(string), pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int | None = None) -> Iterator[Any]:
        """Python's sequence of matches. (google-re2's own iterator can report an empty match at the end of the
        text twice: the repeat is dropped.)"""
        last = None
        for m in _matches(self.rx, self._text(string), pos, endpos):
            span = m.span()
            if span == last and span[0] == span[1]:
                continue
            last = span
            tick()
            yield m

    def findall(self, string: str, pos: int = 0, endpos: int | None = None) -> list[Any]:
        n = self.py.groups
        if type(self) is Pattern and string.isascii():
            return _findall_ascii(self, self._text(string), pos, endpos, n)
        return [m.group() if n == 0 else m.group(1) if n == 1 else m.groups("")
                for m in self.finditer(string, pos, endpos)]

    def sub(self, repl: Any, string: str, count: int = 0) -> str:
        return self.subn(repl, string, count)[0]

    def subn(self, repl: Any, string: str, count: int = 0) -> tuple[str, int]:
        pieces, end, n = [], 0, 0
        for m in self.finditer(string):
            if count and n >= count:
                break
            pieces.append(string[end:m.start()])
            pieces.append(repl(m) if callable(repl) else m.expand(repl))
            end = m.end()
            n += 1
        pieces.append(string[end:])
        return "".join(pieces), n

    def split(self, string: str, maxsplit: int = 0) -> list[Any]:
        pieces, end = [], 0
        for n, m in enumerate(self.finditer(string)):
            if maxsplit and n >= maxsplit:
                break
            pieces.append(string[end:m.start()])
            pieces.extend(m.groups())
            end = m.end()
        pieces.append(string[end:])
        return pieces


# google-re2's wrapper (``_Regexp._match``) encodes a str to UTF-8 and converts every offset between characters
# and bytes, with a few Python objects per match. In ASCII text a character is a byte: the functions below make
# the same call into RE2 and build the same match object, without the conversions (a str's isascii() is a flag
# lookup). Any other text goes through the wrapper.
_UNANCHORED = _ANCHOR_START = _ANCHOR_BOTH = None
if _re2 is not None:
    _UNANCHORED, _ANCHOR_START, _ANCHOR_BOTH = (_re2._Anchor.UNANCHORED, _re2._Anchor.ANCHOR_START,
                                                 _re2._Anchor.ANCHOR_BOTH)
_NULL_SPAN = (-1, -1)


def _bounds(text: str, pos: int | None, endpos: int | None) -> tuple[int, int]:
    n = len(text)
    return (0 if pos is None else max(0, min(pos, n))), (n if endpos is None else max(0, min(endpos, n)))


def _first(rx: Any, anchor: Any, text: str, pos: int | None, endpos: int | None) -> Any:
    """``rx.search``/``match``/``fullmatch`` (by ``anchor``) of google-re2, for ASCII text without the wrapper."""
    if not text.isascii():
        return next(rx._match(anchor, text, pos, endpos), None)
    pos, endpos = _bounds(text, pos, endpos)
    if pos > endpos:
        return None
    spans = rx._regexp.Match(anchor, text.encode(), pos, endpos)
    return None if spans[0] == _NULL_SPAN else _re2._Match(rx, text, pos, endpos, spans)


def _matches(rx: Any, text: str, pos: int | None, endpos: int | None) -> Iterator[Any]:
    """``rx.finditer`` of google-re2 (its loop: after an empty match the search moves on one character), for ASCII
    text without the wrapper."""
    if not text.isascii():
        yield from rx.finditer(text, pos, endpos)
        return
    pos, endpos = _bounds(text, pos, endpos)
    if pos > endpos:
        return
    data, regexp, at = text.encode(), rx._regexp, pos
    while True:
        spans = regexp.Match(_UNANCHORED, data, at, endpos)
        if spans[0] == _NULL_SPAN:
            return
        yield _re2._Match(rx, text, pos, endpos, spans)
        if at == endpos:
            return
        at = at + 1 if at == spans[0][1] else spans[0][1]


def _findall_ascii(pat: Pattern, text: str, pos: int | None, endpos: int | None, n: int) -> list[Any]:
    """:meth:`Pattern.findall` of ASCII text: the matches :func:`_matches` and ``finditer`` find (a repeated empty
    match dropped), each group cut from the text by its span, without a match object per match (a test file's
    assertion lines: thousands per text)."""
    pos, endpos = _bounds(text, pos, endpos)
    if pos > endpos:
        return []
    data, regexp, at, k = text.encode(), pat.rx._regexp, pos, pat.rx.groups
    out: list[Any] = []
    last = None
    while True:
        spans = regexp.Match(_UNANCHORED, data, at, endpos)
        whole = spans[0]
        if whole == _NULL_SPAN:
            return out
        if not (whole == last and whole[0] == whole[1]):
            last = whole
            tick()
            if n == 0:
                out.append(text[whole[0]:whole[1]])
            elif n == 1:  # (as the match object's group(1): None for a group that took no part)
                s, e = spans[1]
                out.append(None if s == -1 else text[s:e])
            else:  # (as its groups(""): RE2's groups, which are Python's for a pattern without a `$` marker)
                out.append(tuple("" if s == -1 else text[s:e] for s, e in spans[1:k + 1]))
        if at == endpos:
            return out
        at = at + 1 if at == whole[1] else whole[1]


class _DollarPattern(Pattern):
    """A pattern with a ``$`` outside multi-line mode: RE2's matches turned back into Python's (see :class:`_Match`).
    After a match that ended before the final newline, the rest of the text (that newline) is searched by
    Python's ``re`` from there: one character, no backtracking to fear."""

    __slots__ = ()

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        return self._wrap(_first(self.rx, _UNANCHORED, self._text(string), pos, endpos), string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        return self._wrap(_first(self.rx, _ANCHOR_START, self._text(string), pos, endpos), string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        m = self._wrap(_first(self.rx, _ANCHOR_BOTH, self._text(string), pos, endpos), string, pos, endpos)
        return None if m is not None and m.cut is not None else m  # Python's `$` cannot end a full match early

    def finditer(self, string: str, pos: int = 0, endpos: int | None = None) -> Iterator[Any]:
        for m in Pattern.finditer(self, string, pos, endpos):
            w = _Match(self, m, string, pos, endpos)
            yield w
            if w.cut is not None:  # Python goes on from before the final newline: the last character or two
                skip_empty = w.span() == (w.cut, w.cut)
                for rest in self.py.finditer(string, w.cut, len(string) if endpos is None else endpos):
                    if skip_empty and rest.span() == (w.cut, w.cut):
                        continue
                    yield rest
                return

    def _wrap(self, m: Any, string: str, pos: int, endpos: int | None) -> Any:
        return None if m is None else _Match(self, m, string, pos, endpos)


class _Match:
    """``re.Match`` for a :class:`_DollarPattern`: Python's groups (the markers left out) and, when a ``$`` matched
    before the final newline, every offset past that newline brought back before it (nothing else of the match can
    lie past it: the marker is followed by the end of the text)."""

    __slots__ = ("string", "re", "pos", "endpos", "cut", "_spans")

    def __init__(self, pat: _DollarPattern, m: Any, string: str, pos: int, endpos: int | None) -> None:
        self.string, self.re, self.pos = string, pat, pos
        self.endpos = len(string) if endpos is None else endpos
        self.cut = None
        for k in pat.markers:
            s, e = m.span(k)
            if s != -1 and e == s + 1:
                self.cut = s
        spans = [m.span(g) for g in pat.gmap]
        if self.cut is not None:
            c = self.cut
            spans = [(c if s == c + 1 else s, c if e == c + 1 else e) for s, e in spans]
        self._spans: list[tuple[int, int]] = spans

    def _index(self, g: int | str) -> int:
        return self.re.py.groupindex[g] if isinstance(g, str) else g

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self._spans[self._index(group)]

    def start(self, group: int | str = 0) -> int:
        return self.span(group)[0]

    def end(self, group: int | str = 0) -> int:
        return self.span(group)[1]

    def group(self, *groups: int | str) -> Any:
        if not groups:
            return self[0]
        return self[groups[0]] if len(groups) == 1 else tuple(self[g] for g in groups)

    def __getitem__(self, group: int | str) -> Any:
        s, e = self.span(group)
        return None if s == -1 else self.string[s:e]

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        return tuple(default if self._spans[i][0] == -1 else self[i] for i in range(1, len(self._spans)))

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        return {name: (default if self._spans[i][0] == -1 else self[i]) for name, i in self.re.py.groupindex.items()}

    @property
    def lastindex(self) -> int | None:
        best, best_end = None, -1
        for i in range(1, len(self._spans)):  # the group whose closing parenthesis came last
            s, e = self._spans[i]
            if s != -1 and (e > best_end or (e == best_end and best is not None and s <= self._spans[best][0])):
                best, best_end = i, e
        return best

    @property
    def lastgroup(self) -> str | None:
        i = self.lastindex
        return next((n for n, g in self.re.py.groupindex.items() if g == i), None)

    def expand(self, template: str) -> str:
        expand = getattr(re, "_expand", None)  # Python 3.11: re's own template expansion, given any match object
        if expand is not None:
            expanded: str = expand(self.re.py, self, template)
            return expanded
        parts = _sre.parse_template(template, self.re.py)  # later Pythons: literals and group numbers, alternating
        return "".join(p if i % 2 == 0 else (self[p] or "") for i, p in enumerate(parts))


_SURROGATE = re.compile("[\ud800-\udfff]")


# --- Python's parse tree, written out in RE2 syntax ---------------------------------------------------------------

_CLASSES: dict[str, str] = {}  # "w", "d", "s" and their negations "W", "D", "S": class contents (no brackets)


def _unicode_class(key: str) -> str:
    """The contents of an RE2 class holding exactly the code points Python's Unicode ``\\<key>`` matches."""
    hit = _CLASSES.get(key)
    if hit is not None:
        return hit
    ranges = _known_ranges(key.lower())
    if key.isupper():
        ranges = _complement(ranges)
    out = "".join(_hex(lo) if lo == hi else f"{_hex(lo)}-{_hex(hi)}" for lo, hi in ranges)
    _CLASSES[key] = out
    return out


def _known_ranges(key: str) -> list[tuple[int, int]]:
    """:func:`_ranges`, from the shipped table when it was made for this Python's Unicode version (computing
    ``\\w`` takes a good part of a second)."""
    import unicodedata

    from . import _uniclasses

    if unicodedata.unidata_version == _uniclasses.UNIDATA_VERSION:
        flat = _uniclasses.RANGES[key]
        return list(zip(flat[::2], flat[1::2], strict=True))
    return _ranges(key)


def _ranges(key: str) -> list[tuple[int, int]]:
    """Runs of code points (surrogates left out: never in UTF-8 text) that Python's ``\\<key>`` matches, found by
    Python's own engine over every code point."""
    global _ALLCHARS
    if _ALLCHARS is None:
        _ALLCHARS = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, sys.maxunicode + 1)))
    allchars = _ALLCHARS
    out = []
    for m in re.finditer(f"\\{key}+", allchars):
        lo, hi = ord(allchars[m.start()]), ord(allchars[m.end() - 1])
        if lo < 0xD800 <= hi:  # a run that crosses the surrogates (absent from allchars) is two runs
            out += [(lo, 0xD7FF), (0xE000, hi)]
        else:
            out.append((lo, hi))
    return out


_ALLCHARS: str | None = None  # every code point but the surrogates, in order (built once, at the first class)


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= sys.maxunicode:
        out.append((nxt, sys.maxunicode))
    return [(lo, hi) for lo, hi in _without_surrogates(out)]


def _without_surrogates(ranges: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    for lo, hi in ranges:
        if hi < 0xD800 or lo > 0xDFFF:
            yield lo, hi
            continue
        if lo < 0xD800:
            yield lo, 0xD7FF
        if hi > 0xDFFF:
            yield 0xE000, hi


_ASCII_CLASSES = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\x0b\\f\\r ",
                  "D": "\\x00-/:-\\x{10ffff}", "W": "\\x00-/:-@\\[-\\^`\\{-\\x{10ffff}",
                  "S": "\\x00-\\x08\\x0e-\\x1f!-\\x{10ffff}"}


def _hex(cp: int) -> str:
    return f"\\x{{{cp:x}}}"


def _lit(cp: int) -> str:
    c = chr(cp)
    return c if c.isascii() and c.isalnum() else _hex(cp)


def translate(pattern: str, flags: int = 0, relaxed: bool = False) -> tuple[str, list[int], list[int]]:
    """``pattern`` (``re`` syntax, ``flags``) in RE2 syntax with the same matches (see the module's docstring), the
    RE2 group number of each of Python's groups (index 0: the whole match), and the RE2 groups that mark a ``$``
    matched before a final newline. Raises :class:`Unsupported` for what RE2 has not.

    ``relaxed``: a pattern that matches wherever ``pattern`` does, and perhaps elsewhere too (:func:`superset`):
    every lookaround and ``\\b``/``\\B`` is left out (an assertion removed is a condition removed), an atomic group
    or a possessive repeat is an ordinary one, a backreference is any text, a count past 1,000 is 1,000 or more,
    ``$`` is multi-line's, and no group captures."""
    tree = _sre.parse(pattern, flags)
    gflags = tree.state.flags
    if gflags & re.LOCALE:
        raise Unsupported("re.LOCALE")
    names = {gid: name for name, gid in tree.state.groupdict.items()}
    w = _Writer(names, relaxed)
    body = w.seq(list(tree), gflags)
    gmap = [0] + [w.gmap[g] for g in range(1, tree.state.groups)]
    return ("(?i)" if gflags & re.IGNORECASE else "") + body, gmap, w.markers


class _Writer:
    def __init__(self, names: dict[int, str], relaxed: bool = False) -> None:
        self.names = names
        self.relaxed = relaxed  # translate(relaxed=True): a superset of the matches
        self.groups = 0  # capturing groups written so far (Python's and the markers)
        self.gmap: dict[int, int] = {}  # Python's group number -> RE2's
        self.markers: list[int] = []  # RE2 groups that hold the final newline a `$` matched before

    def seq(self, items: list[tuple[Any, Any]], fl: int) -> str:
        return "".join(self.item(op, av, fl) for op, av in items)

    def item(self, op: Any, av: Any, fl: int) -> str:
        if self.relaxed:
            loose = self.loose(op, av, fl)
            if loose is not None:
                return loose
        if op is _c.LITERAL:
            return _lit(av)
        if op is _c.NOT_LITERAL:
            return f"[^{_hex(av)}]"
        if op is _c.ANY:
            return "(?s:.)" if fl & re.DOTALL else "[^\\n]"
        if op is _c.IN:
            return self.klass(av, fl)
        if op is _c.BRANCH:
            return "(?:" + "|".join(self.seq(list(alt), fl) for alt in av[1]) + ")"
        if op is _c.SUBPATTERN:
            gid, add, delete, sub = av
            inner_fl = (fl | add) & ~delete
            if gid is not None:  # numbered as its opening parenthesis comes: before the groups inside it
                self.groups += 1
                self.gmap[gid] = self.groups
            inner = self.seq(list(sub), inner_fl)
            if (add | delete) & re.IGNORECASE:
                inner = ("(?i:" if add & re.IGNORECASE else "(?-i:") + inner + ")"
            if gid is None or self.relaxed:
                return "(?:" + inner + ")"
            name = self.names.get(gid)
            return (f"(?P<{name}>" if name else "(") + inner + ")"
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            lo, hi, sub = av
            if lo > 1000 or (hi != _c.MAXREPEAT and hi > 1000):
                raise Unsupported("counted repeat past 1000")
            inner = "(?:" + self.seq(list(sub), fl) + ")"
            if hi == _c.MAXREPEAT:
                q = "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
            elif lo == hi:
                q = f"{{{lo}}}"
            elif (lo, hi) == (0, 1):
                q = "?"
            else:
                q = f"{{{lo},{hi}}}"
            return inner + q + ("?" if op is _c.MIN_REPEAT else "")
        if op is _c.AT:
            return self.at(av, fl)
        raise Unsupported(str(op))  # GROUPREF, ASSERT(_NOT), GROUPREF_EXISTS, ATOMIC_GROUP, POSSESSIVE_REPEAT

    def loose(self, op: Any, av: Any, fl: int) -> str | None:
        """What :meth:`item` writes in relaxed mode in place of a construct RE2 has not, or that would narrow the
        matches (None: the construct as :meth:`item` writes it)."""
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            return ""
        if op is _c.AT and av in (_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY):
            return ""
        if op is _c.AT and av is _c.AT_END and not fl & re.MULTILINE:
            return "(?m:$)"  # before any newline or at the end: also before a final one, as Python's `$`
        if op is _c.ATOMIC_GROUP:
            return "(?:" + self.seq(list(av), fl) + ")"
        if op is _c.GROUPREF:
            return "(?s:.)*"
        if fl & re.IGNORECASE and op in (_c.LITERAL, _c.NOT_LITERAL, _c.IN):
            return self.loose_case(op, av, fl)
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            if op is _c.POSSESSIVE_REPEAT or lo > 1000 or (hi != _c.MAXREPEAT and hi > 1000):
                lo = min(lo, 1000)
                hi = hi if hi != _c.MAXREPEAT and hi <= 1000 else _c.MAXREPEAT
                return self.item(_c.MAX_REPEAT, (lo, hi, sub), fl)
        return None

    def loose_case(self, op: Any, av: Any, fl: int) -> str:
        """A literal or class under IGNORECASE, relaxed. Python and RE2 fold case differently outside ASCII (Python
        also takes U+0130 and U+0131 for ``i``): a character Python would take must not be refused. An ASCII
        literal or class keeps RE2's folding and adds :data:`_FOLDS_TO_ASCII`; a negated one is written without
        folding, refusing only its own members (Python refuses those and their other cases); anything else is any
        character."""
        items = [(_c.LITERAL, av)] if op is _c.LITERAL else [(_c.NEGATE, None), (_c.LITERAL, av)] \
            if op is _c.NOT_LITERAL else list(av)
        negated = any(o is _c.NEGATE for o, _ in items)
        if negated:
            return "(?-i:" + self.klass(items, fl & ~re.IGNORECASE) + ")"
        # Python's IGNORECASE \d, \s and \w are the classes themselves (tests/test_linre.py checks every code
        # point); RE2's folding can only add to them
        ascii_only = all(o is _c.LITERAL and a < 0x80 or o is _c.RANGE and a[1] < 0x80
                         or o is _c.CATEGORY and a in _CASELESS for o, a in items)
        if not ascii_only:
            return "(?s:.)"
        return self.klass(items + [(_c.LITERAL, cp) for cp in _FOLDS_TO_ASCII], fl)

    def at(self, code: Any, fl: int) -> str:
        if code is _c.AT_BEGINNING:
            return "(?m:^)" if fl & re.MULTILINE else "\\A"
        if code is _c.AT_BEGINNING_STRING:
            return "\\A"
        if code is _c.AT_END:
            if fl & re.MULTILINE:
                return "(?m:$)"
            # Python's `$`: the end, or before a final newline. RE2 has no lookahead: the newline is matched into
            # a marker group, and Pattern takes it back out of the match (see _Match)
            self.groups += 1
            self.markers.append(self.groups)
            return "(?:(\\n)?\\z)"
        if code is _c.AT_END_STRING:
            return "\\z"
        if code is _c.AT_BOUNDARY:
            return "\\b"
        if code is _c.AT_NON_BOUNDARY:
            return "\\B"
        raise Unsupported(str(code))

    def klass(self, items: list[tuple[Any, Any]], fl: int) -> str:
        parts = []
        negate = False
        for op, av in items:
            if op is _c.NEGATE:
                negate = True
            elif op is _c.LITERAL:
                parts.append(_hex(av))
            elif op is _c.RANGE:
                parts.append(f"{_hex(av[0])}-{_hex(av[1])}")
            elif op is _c.CATEGORY:
                parts.append(self.category(av, fl))
            else:
                raise Unsupported(str(op))
        return "[" + ("^" if negate else "") + "".join(parts) + "]"

    def category(self, code: Any, fl: int) -> str:
        key = {_c.CATEGORY_DIGIT: "d", _c.CATEGORY_NOT_DIGIT: "D", _c.CATEGORY_SPACE: "s",
               _c.CATEGORY_NOT_SPACE: "S", _c.CATEGORY_WORD: "w", _c.CATEGORY_NOT_WORD: "W"}.get(code)
        if key is None:
            raise Unsupported(str(code))
        return _ASCII_CLASSES[key] if fl & re.ASCII else _unicode_class(key)


# the characters outside ASCII that Python's IGNORECASE takes for an ASCII one (by their simple lower or upper case,
# or its own extra folds): İ and ı for i, ſ for s, the Kelvin sign for k (tests/test_linre.py checks every code
# point)
_FOLDS_TO_ASCII = (0x130, 0x131, 0x17F, 0x212A)
_CASELESS = (_c.CATEGORY_DIGIT, _c.CATEGORY_SPACE, _c.CATEGORY_WORD) if _sre is not None else ()

Regex = Pattern | re.Pattern[str]  # what compile() returns
