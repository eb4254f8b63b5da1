"""Literal prefilters for regular expressions (scanning speed).

Python's ``re`` finds a pattern's literal prefix quickly, but not a literal inside an alternation (``a|b|c``) or
after a ``\\b``: it then tries every branch at every position, some 30–50 times slower than a substring search.
:func:`needles` reads a pattern's syntax tree once and returns strings of which every match must contain at
least one (a required literal of each branch), or None when it cannot tell. :func:`may_match` is then a few C
substring searches: False means the pattern certainly has no match in the text, True means run it. The patterns
come from the settings, the rules file and the redaction list, so nothing here is hand-written per pattern; a
pattern it cannot read (no required literal, a case-insensitive literal that is not ASCII, a parser change)
simply gets no prefilter.

A text that several patterns are asked about (a tool call's action text: P1's read patterns, P2's lethal and
suspicious ones, a few thousand characters when the call writes a file) can be searched once for the needles
of every pattern planned so far, by one RE2 set (google-re2: a DFA pass over the text whatever the number of
needles, measured 2.3× faster than sixteen substring searches): :func:`scan`, whose answer the caller passes
to each :func:`may_match` about that text. Only literal needles go to RE2, never a pattern, so the answer is
exactly the substring test's (property-tested); without the module, or for a text RE2 cannot take, the plain
loop runs. :class:`AnyOf` asks a group of patterns about one text in one call, with the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .linre import Regex

try:  # the google-re2 module (also for a scan elsewhere that wants RE2's first look: git probes), or None
    import re2
except ImportError:  # pragma: no cover - the dependency is declared; without it every text takes the loop
    re2 = None
RE2 = re2  # a name of this module's own: principles/_task.py imports it (mypy: an explicit export)

try:
    from re import _parser as _sre  # type: ignore[attr-defined]

    # a private module typeshed does not describe (linre.py reaches it as ``re._constants``)
    from re._constants import BRANCH, LITERAL, MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT, SUBPATTERN  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - a Python without the module: no prefilter
    _sre = None

MIN_NEEDLE = 1  # even one character is a C search (memchr) that spares most texts the regex


def needles(rx: Regex) -> tuple[str, ...] | None:
    """Literals such that every match of ``rx`` contains one of them (lower-cased when ``rx`` ignores case: then
    they hold for the lower-cased text, and only ASCII text is filtered); None: unknown (always run ``rx``)."""
    found = _plan(rx)
    return found[0] if found else None


def may_match(rx: Regex, text: str, found: Found | None = None) -> bool:
    """False only when ``rx`` certainly finds nothing in ``text``. ``found``: what :func:`scan` said of this same
    text, when several patterns are asked about it (a stale answer, from before a pattern added needles, is
    not used). (Called for every scanned text: kept to a dictionary lookup and a plain loop.)"""
    try:
        plan = _PLANS[rx]
    except KeyError:
        plan = _plan(rx)
    if plan is None:
        return True
    ns, fold = plan
    if found is not None and rx not in _UNFUSED:
        if not current(found):
            found = scan(text)
        if found is not None:
            if fold and not found.ascii:
                return True
            present = found.present
            for n in ns:  # noqa: SIM110
                if (n, fold) in present:
                    return True
            return False
    if fold:
        if not text.isascii():  # under IGNORECASE a non-ASCII letter may match an ASCII one ("ſ" and "s")
            return True
        text = text.lower()
    for n in ns:  # noqa: SIM110 (a plain loop: any() over a generator costs more per call)
        if n in text:
            return True
    return False


class AnyOf:
    """Several patterns asked about the same texts (P2: seven lethal and five suspicious patterns about every
    action text, written path and agent message; almost no text holds a needle of any of them).
    :meth:`candidates` answers, in one call, which of them may match: exactly the patterns for which
    :func:`may_match` says True, in order. Each pattern is planned (its needles fused) when the group is made."""

    __slots__ = ("rxs", "plain", "folded", "always", "wide", "loose")

    def __init__(self, rxs: Iterable[Regex]) -> None:
        self.rxs = tuple(rxs)
        plans = [_plan(rx) for rx in self.rxs]
        self.plain = tuple(dict.fromkeys(n for pl in plans if pl is not None and not pl[1] for n in pl[0]))
        self.folded = tuple(dict.fromkeys(n for pl in plans if pl is not None and pl[1] for n in pl[0]))
        # what may match a text holding none of the needles: the patterns without a plan (always run); on
        # non-ASCII text also the case-folded ones (their needles filter ASCII text only)
        self.always = tuple(rx for rx, pl in zip(self.rxs, plans, strict=True) if pl is None)
        self.wide = tuple(rx for rx, pl in zip(self.rxs, plans, strict=True) if pl is None or pl[1])
        self.loose = any(rx in _UNFUSED for rx in self.rxs)  # the set's answers say nothing about such a pattern

    def candidates(self, text: str, found: Found | None = None) -> Sequence[Regex]:
        if found is not None:
            if not found.present and not self.loose and current(found):
                return self.always if found.ascii else self.wide  # the set saw no needle of any of them
        else:
            for n in self.plain:  # noqa: SIM110 (a plain loop: any() over a generator costs more per call)
                if n in text:
                    break
            else:
                if not self.folded:
                    return self.always
                if not text.isascii():
                    return self.wide
                low = text.lower()
                for n in self.folded:  # noqa: SIM110
                    if n in low:
                        break
                else:
                    return self.always
        return [rx for rx in self.rxs if may_match(rx, text, found)]


class Found(NamedTuple):
    """What one set match found in a text: the (needle, case-folded) pairs present, of the set ``version``."""

    version: int
    present: frozenset[tuple[str, bool]]
    ascii: bool


def scan(text: str) -> Found | None:
    """The needles of every pattern planned so far that ``text`` holds, by one RE2 set match, to pass to each
    :func:`may_match` about this text; None where the loop is the better answer: a text under
    :data:`FUSE_MIN` characters, no RE2 (or an RE2 that could not build the set), or a text RE2 cannot read
    (not UTF-8). A pattern whose needles would pass the set's cap is left out of it and always takes the loop."""
    if len(text) < FUSE_MIN or RE2 is None or _FUSED.broken:
        return None
    present = _FUSED.match(text)
    if present is None:
        return None
    return Found(_FUSED.version, present, text.isascii())


def may_match_alone(rx: Regex, text: str) -> bool:
    """:func:`may_match` for a text that only ``rx`` is asked about (a tool output's head, searched for a guard's
    refusal): a text of :data:`FUSE_MIN` characters or more is searched by one RE2 set of ``rx``'s needles alone, a
    smaller automaton than the set of every pattern's, which nothing else would read. The same answer as the loop
    (only literals go to the set); a short text, a text RE2 cannot read or a pattern without needles takes
    :func:`may_match`."""
    plan = _plan(rx)
    if plan is None or len(text) < FUSE_MIN or RE2 is None:
        return may_match(rx, text)
    ns, fold = plan
    if fold and not text.isascii():  # (as may_match: a case-folded needle filters ASCII text only)
        return True
    own = _ALONE.get(rx)
    if own is None:
        own = _ALONE[rx] = _Fused()
        if not own.add(ns, fold):
            own.broken = True
    hits = own.match(text)
    return may_match(rx, text) if hits is None else bool(hits)


_ALONE: dict[Regex, _Fused] = {}  # a pattern's own set (may_match_alone)


def current(found: Found | None) -> bool:
    """``found`` still answers for every planned pattern (no pattern added needles since)."""
    return found is not None and found.version == _FUSED.version and _FUSED.set is not None and not _FUSED.broken


_PLANS: dict[Regex, tuple[tuple[str, ...], bool] | None] = {}

FUSE_MIN = 512  # a shorter text takes the loop: a set match has a fixed cost of about a microsecond
FUSE_MAX_CHARS = 8_000  # needle characters in the set (the project's patterns have about 700)
FUSE_MEM = 64 << 20  # RE2's budget (two thirds for the DFA): 8,000 states of at most 257 pointers fit twice over


class _Fused:
    """One RE2 set over the needles of every pattern planned so far, rebuilt when a pattern adds needles."""

    def __init__(self) -> None:
        self.keys: list[tuple[str, bool]] = []  # (needle, case-folded), in the set's order
        self.index: dict[tuple[str, bool], int] = {}
        self.set: Any = None
        self.version = 0  # bumped by each rebuild: an answer from an older set is stale
        self.broken = False
        self.size = 0  # characters of all needles

    def add(self, ns: tuple[str, ...], fold: bool) -> bool:
        """Take a pattern's needles into the set; False (and the set unchanged) when they would pass the cap."""
        new = [(n, fold) for n in ns if (n, fold) not in self.index]
        if not new:
            return True
        if self.size + sum(len(n) for n, _ in new) > FUSE_MAX_CHARS:
            # RE2's set match runs a DFA only, and one that outgrows its memory answers "no match": the DFA of a
            # set of literals has at most one state per needle character, so a bounded total keeps it small
            return False
        self.size += sum(len(n) for n, _ in new)
        for key in new:
            self.index[key] = len(self.keys)
            self.keys.append(key)
        self.set = None
        return True

    def match(self, text: str) -> frozenset[tuple[str, bool]] | None:
        if self.broken:
            return None
        if self.set is None:
            try:
                opts = RE2.Options()
                opts.max_mem = FUSE_MEM
                opts.log_errors = False
                s = RE2.Set.SearchSet(opts)
                for n, fold in self.keys:
                    s.Add(("(?i)" if fold else "") + _re2_literal(n))
                s.Compile()
            except Exception:  # an RE2 build without Set, a literal it refuses: the loop, always
                self.broken = True
                return None
            self.set = s
            self.version += 1
        try:
            hits = self.set.Match(text)
        except (UnicodeEncodeError, ValueError, TypeError):  # e.g. a lone surrogate: not UTF-8
            return None
        return frozenset(self.keys[i] for i in hits or ())  # (None: no needle)


def _re2_literal(needle: str) -> str:
    """``needle`` as an RE2 pattern matching exactly that text: ASCII letters and digits as they are, every other
    character as ``\\x{hex}``."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in needle)


_FUSED = _Fused()
_UNFUSED: set[Regex] = set()  # patterns whose needles the set could not take (its cap)


def _plan(rx: Regex) -> tuple[tuple[str, ...], bool] | None:
    """(needles, case-folded) for ``rx``, computed once per pattern."""
    if rx in _PLANS:
        return _PLANS[rx]
    plan = None
    if _sre is not None and isinstance(rx.pattern, str):
        try:
            tree = _sre.parse(rx.pattern, rx.flags)
            fold = bool(tree.state.flags & re.IGNORECASE)
            best = _sequence(list(tree))
            if best and fold:
                best = [n.lower() for n in best] if all(n.isascii() for n in best) else None
            if best:  # a needle holding another needle adds nothing: the shorter one is found first
                uniq = set(best)
                plan = (tuple(sorted(n for n in uniq if not any(m != n and m in n for m in uniq))), fold)
        except Exception:  # any surprise in the private parser: no prefilter, never a wrong answer
            plan = None
    _PLANS[rx] = plan
    if plan is not None and not _FUSED.add(*plan):
        _UNFUSED.add(rx)  # past the set's cap: this pattern's questions take the loop, the others keep the set
    return plan


def _sequence(items: list[tuple[Any, Any]]) -> list[str] | None:
    """Needles for a sequence: every item of it is required, so the best of: its longest run of literal
    characters, or the needles of one of its (flag-free) groups or alternations."""
    candidates: list[list[str]] = []
    run: list[str] = []
    for op, av in items:
        if op is LITERAL:
            run.append(chr(av))
            continue
        if run:
            candidates.append(["".join(run)])
            run = []
        if op is SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if not add_flags and not del_flags:
                inner = _sequence(list(sub))
                if inner:
                    candidates.append(inner)
        elif op is BRANCH:
            alts = [_sequence(list(alt)) for alt in av[1]]
            if alts and all(alts):
                candidates.append([n for alt in alts for n in alt])  # type: ignore[union-attr]
        elif op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT) and av[0] >= 1:  # x{1,2}, x+: x is required
            inner = _sequence(list(av[2]))
            if inner:
                candidates.append(inner)
    if run:
        candidates.append(["".join(run)])
    good = [c for c in candidates if min(map(len, c)) >= MIN_NEEDLE]
    if not good:
        return None
    return max(good, key=lambda c: (min(map(len, c)), -len(c)))
