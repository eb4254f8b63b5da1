"""Literal prefilters for regular expressions (issue 7: scanning speed).

Python's ``re`` finds a pattern's literal prefix quickly, but not a literal inside an alternation (``a|b|c``) or
after a ``\\b``: it then tries every branch at every position, some 30–50 times slower than a substring search.
:func:`needles` reads a pattern's syntax tree once and returns strings of which every match must contain at
least one (a required literal of each branch), or None when it cannot tell. :func:`may_match` is then a few C
substring searches: False means the pattern certainly has no match in the text, True means run it. The patterns
come from the settings, the rules file and the redaction list, so nothing here is hand-written per pattern; a
pattern it cannot read (no required literal, a case-insensitive literal that is not ASCII, a parser change)
simply gets no prefilter.
"""

from __future__ import annotations

import re
from typing import Any

try:
    from re import _parser as _sre  # type: ignore[attr-defined]
    from re._constants import BRANCH, LITERAL, MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT, SUBPATTERN  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python without the module: no prefilter
    _sre = None

MIN_NEEDLE = 1  # even one character is a C search (memchr) that spares most texts the regex


def needles(rx: re.Pattern[str]) -> tuple[str, ...] | None:
    """Literals such that every match of ``rx`` contains one of them (lower-cased when ``rx`` ignores case: then
    they hold for the lower-cased text, and only ASCII text is filtered); None: unknown (always run ``rx``)."""
    found = _plan(rx)
    return found[0] if found else None


def may_match(rx: re.Pattern[str], text: str) -> bool:
    """False only when ``rx`` certainly finds nothing in ``text``. (Called for every scanned text: kept to a
    dictionary lookup and a plain loop.)"""
    try:
        plan = _PLANS[rx]
    except KeyError:
        plan = _plan(rx)
    if plan is None:
        return True
    ns, fold = plan
    if fold:
        if not text.isascii():  # under IGNORECASE a non-ASCII letter may match an ASCII one ("ſ" and "s")
            return True
        text = text.lower()
    for n in ns:  # noqa: SIM110 (a plain loop: any() over a generator costs more per call)
        if n in text:
            return True
    return False


_PLANS: dict[re.Pattern[str], tuple[tuple[str, ...], bool] | None] = {}


def _plan(rx: re.Pattern[str]) -> tuple[tuple[str, ...], bool] | None:
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
