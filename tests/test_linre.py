"""linre: Python's regular-expression syntax and matches, run by RE2 in linear time (pytest_trajaudit/linre.py).

Equal matches are checked three ways: crafted texts for each construct the translation handles, every pattern the
project compiles against every text of the corpus (raw files and the texts of their loaded events), and the
Unicode class tables against Python's own ``re``."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.discover.jobs import JobRef
from pytest_trajaudit.principles import _task, registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.scan import linre
from pytest_trajaudit.settings import LETHAL, Settings
from tests.jobfactory import make_job


def spans(rx: Any, text: str) -> list[tuple[Any, ...]]:
    return [(m.span(), m.groups()) for m in rx.finditer(text)]


def same(pattern: str, flags: int, *texts: str) -> None:
    rx = linre.compile(pattern, flags)
    assert isinstance(rx, linre.Pattern), pattern
    py = re.compile(pattern, flags)
    for t in texts:
        assert spans(rx, t) == spans(py, t), (pattern, t, rx.translated)
        assert bool(rx.search(t)) == bool(py.search(t))


UNICODE_TEXT = ("pip\u00a0install x json \u2003tail \u0663\u0664 caf\u00e9 na\u00efve \u00c9T\u00c9 \u212a k K "
                "\u017ft s \u0130 i\u0307 tab\there\nline2\r\nend\n")


@pytest.mark.parametrize(("pattern", "flags"), [
    (r"\s+", 0), (r"\S+", 0), (r"\d+", 0), (r"\D+", 0), (r"\w+", 0), (r"\W+", 0),
    (r"[\s\d]+", 0), (r"[^\s;]+", 0), (r"[\S]+", 0), (r"[^\W\d]+", 0), (r"\w+", re.A), (r"[\s]+", re.A),
    (r"(?:\s|$)", 0), (r"\w(?:\s|$)", 0), (r"^\w+", 0), (r"^\w+$", re.M), (r"\Aand|end\Z", 0), (r"e.d", 0), (r"e.+", re.S),
    (r"CAF\u00c9|k|s", re.I), (r"(?i:na\u00cfve) (?P<w>\w+)", 0), (r"(?i)t(?-i:AB)", 0), (r"a{2,5}?|\d{1,3}", 0),
    (r"(x)?(json)", 0), (r"\bjson\b", 0), (r"\b\w", re.A),
])
def test_constructs_match_as_python(pattern: str, flags: int) -> None:
    same(pattern, flags, UNICODE_TEXT, "", "\n", "a\n\n", "aa aaaaa 1234567 tAB TAB")


def test_dollar_before_a_final_newline() -> None:
    """``$`` without ``re.MULTILINE`` also matches before a final newline (RE2 has no lookahead: the newline is
    matched into a marker group and taken back out): same spans, groups and iteration as Python."""
    for p in (r"\w+$", r"$", r"(?P<x>\w+)$", r"\w*$", r"(?:\s|$)", r"^(?:step\s*)?(\d{1,2})\s*[:.)\-–]\s*(.+)$"):
        same(p, re.I, "ab cd\n", "ab\n", "ab", "1. foo\n", "\n", "", "a b\n\n")
    rx = linre.compile(r"(?P<x>\w+)$")
    assert rx.sub(r"<\g<x>>", "ab\n") == re.sub(r"(?P<x>\w+)$", r"<\g<x>>", "ab\n") == "<ab>\n"
    assert rx.search("ab\n").lastgroup == "x" and rx.search("ab\n").groupdict() == {"x": "ab"}
    assert rx.fullmatch("ab\n") is None and rx.fullmatch("ab").span() == (0, 2)


def test_word_boundary_next_to_a_non_ascii_letter() -> None:
    """RE2's ``\\b`` is ASCII: next to an ASCII letter it sees a boundary wherever Python does, and also where a
    non-ASCII letter touches it (``éconftest.py``): never fewer matches for the project's patterns."""
    rx = linre.compile(r"\bconftest\.py")
    assert rx.search("cat conftest.py") and re.search(r"\bconftest\.py", "cat conftest.py")
    assert rx.search("cat éconftest.py") and not re.search(r"\bconftest\.py", "cat éconftest.py")
    assert not rx.search("cat xconftest.py")


def test_what_re2_cannot_express_stays_python() -> None:
    for p in (r"(?<=a)b", r"(a)\1", r"a(?!b)", r"(?>a+)b", r"a{1001}"):
        rx = linre.compile(p)
        assert isinstance(rx, re.Pattern) and rx in linre.backtracking()


def test_interface() -> None:
    rx = linre.compile(r"(?P<k>\w+)=(\d+)")
    assert rx.pattern == r"(?P<k>\w+)=(\d+)" and rx.groups == 2 and rx.groupindex == {"k": 1}
    assert rx.findall("a=1 b=2") == [("a", "1"), ("b", "2")]
    assert rx.sub(r"\g<k>:\2", "a=1 b=2") == "a:1 b:2" and rx.subn(lambda m: "X", "a=1 b=2") == ("X X", 2)
    assert rx.split("a=1;b=2") == ["", "a", "1", ";", "b", "2", ""]
    assert rx.match("a=1").group("k") == "a" and rx.fullmatch("a=1 ") is None
    assert linre.compile(r"\w+") is linre.compile(r"\w+")  # one object per pattern (needles' plans reused)
    import pickle

    assert pickle.loads(pickle.dumps(rx)).search("x=9").group(0) == "x=9"


def test_lone_surrogates_do_not_break_a_search() -> None:
    """Text RE2 cannot take as UTF-8 (a lone surrogate, possible in JSON ``\\ud800`` escapes read by the standard
    library) is searched with U+FFFD in the surrogate's place: same length, same offsets."""
    rx = linre.compile(r"conftest\.py")
    assert rx.search("a\ud800 conftest.py").span() == (3, 14)


def test_unicode_tables_are_pythons() -> None:
    for key in "dsw":
        assert linre._known_ranges(key) == linre._ranges(key)


def test_every_settings_pattern_is_linear() -> None:
    cfg = Settings()
    rxs = [cfg.read_re, cfg.dragnet_re, cfg.reward_symlink_re, cfg.pip_shadow_re, cfg.pip_pytest_re, cfg.paper_re,
           cfg.reversal_re, cfg.doubt_re, cfg.skill_envelope_re, cfg.skill_tool_header_re, *cfg.read_patterns,
           *cfg.lethal_patterns, *cfg.suspicious_patterns]
    assert all(isinstance(rx, linre.Pattern) for rx in rxs)


def test_lethal_install_pattern_on_a_hostile_trajectory() -> None:
    """The seed's ``pip\\s+install\\s+[^=]+(?:json|pluggy|iniconfig|pytest)\\s`` on text with many installs and no
    ``=``: Python's engine scans to the end of the text from every ``pip install`` (quadratic: tens of seconds
    on a 1 MB Claude session in literal mode); RE2 reads it once. Same answer as Python's on a short slice."""
    rx = Settings().lethal_patterns[2]
    assert rx.pattern == LETHAL[2] and isinstance(rx, linre.Pattern)
    unit = "pip install numpy scipy\n"
    assert rx.search(unit * 50) is None and re.search(LETHAL[2], unit * 50) is None
    assert rx.search(unit * 40_000) is None
    hit = unit * 40_000 + "pip install pytest \n"
    assert rx.search(hit).start() == 0  # from the first install: [^=]+ runs across the lines to "pytest "


def test_literal_audit_of_a_hostile_trajectory_completes(tmp_path: Path) -> None:
    """End to end in literal mode (the seeds' regexes over the whole trajectory text): the job is audited."""
    lines = [{"type": "user_message", "text": "do x"}]
    lines += [{"type": "tool_call", "tool_call_id": f"t{i}", "kind": "execute", "title": "pip install numpy scipy",
               "status": "completed", "content": []} for i in range(4000)]
    lines += [{"type": "agent_message", "text": "done"}]
    job = make_job(tmp_path, "pips", lines=lines)
    principles = [p for code, p in registry().items() if code in ("P1", "P2")]
    a = audit_job(JobRef(job, job / "result.json", "benchflow-rollout"), Settings(literal=True), principles)
    assert a.error is None and a.results["P2"].status in ("PASS", "WARN")


# Patterns RE2 cannot express (lookarounds), each linear on Python's engine by construction:
BACKTRACKING_REVIEWED = {
    # one character of lookbehind; `>{1,2}`, then classes that exclude each other: one pass from each `>`
    r"(?<![0-9&<>])>{1,2}\|?\s*([^\s;&|<>()]+)",
    # a bounded repeat (at most 40 characters from each start)
    r"(?<![\w/.=-])([0-9a-f]{7,40})(?![\w-])",
    # literal starts, then `\S+`, which cannot fail once started: no start is rescanned
    r"(?<![\w/.-])(?:origin|upstream)/\S+|\bFETCH_HEAD\b|\brefs/(?:remotes|tags|pull)/\S+",
    # segments end at `/` (one split only); the lookbehind allows one start per path
    r"(?<![\w.])(/(?:[\w.\-]+/)*[\w.\-]+/?)",
    # word starts only (`\b`); the alternatives split at `_`, at capitals, at `.`: one way each
    r"\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|\w+\.\w+(?=\())",
    r"(?<![\w-])--[a-z][\w-]+",
    # anchored at the start (one start); `(.*)` backs off to a quote followed by spaces to the end: each space run
    # is scanned from the one quote before it
    r"\A\s*(?:\S*/)?(?:bash|sh|zsh)\s+-l?c\s+(['\"])(.*)\1\s*\Z",
}


def test_backtracking_patterns_are_reviewed() -> None:
    """Every pattern compiled by the project that RE2 cannot express is listed above with why it is linear, or
    is the advisor's mention set (run only on windows around Aho–Corasick keyword hits: advisor/scan.py), the
    file-name pattern (one start per token, segments split at ``/``), OpenHands' skill call (anchored at the
    start, one lazy scan to the closing quote) or a task's mount pattern (``_task.mount_re``: a token start, the
    task's mount paths as literals, then a class that cannot fail once started)."""
    registry()
    import pytest_trajaudit.advisor.core  # noqa: F401 - compiles the advisor's patterns
    from pytest_trajaudit.loaders import sniff

    sniff.loaders()

    for rx in linre.backtracking():
        p = rx.pattern
        if p in BACKTRACKING_REVIEWED or p.startswith(("(?P<g0>", r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.",
                                                      r"^\s*(open_file|goto_line|", _task._DELIM + "(?:")):
            continue
        if p in (r"(?<=a)b", r"(a)\1", r"a(?!b)", r"(?>a+)b", r"a{1001}"):  # this module's own examples
            continue
        raise AssertionError(f"unreviewed backtracking pattern: {p!r}")


# --- the corpus: every compiled pattern, every text ----------------------------------------------------------------

def _corpus_texts(corpus: Path) -> list[tuple[str, str]]:
    from pytest_trajaudit.loaders.sniff import load_trajectory
    from pytest_trajaudit.model import UnusableInput
    from pytest_trajaudit.safeio import decode_text, parse_text

    out = []
    for f in sorted(corpus.rglob("*")):
        if not f.is_file() or f.is_symlink() or f.stat().st_size > 8 << 20 or f.suffix in (".eval", ".zip", ".gz"):
            continue
        try:
            text = decode_text(f.read_bytes(), f)
        except UnusableInput:
            continue
        out.append((str(f.relative_to(corpus)), text))
        try:
            traj = load_trajectory(parse_text(text, f), f)
        except (UnusableInput, Exception):
            continue
        for e in traj.events:
            for field in ("command", "text", "output", "args"):
                v = getattr(e, field, "")
                if v and isinstance(v, str):
                    out.append((f"{f.relative_to(corpus)}#{e.index}.{field}", v))
    return out


def test_equal_matches_on_the_corpus(corpus: Path) -> None:
    """Every RE2-backed pattern the project compiles (settings, principles, advisor, loaders) finds the same matches as
    Python's ``re`` (spans and groups of the first matches) in every real text: each corpus file whole (the seeds'
    literal mode scans the whole trajectory) and every command, message, output and argument of its events."""
    registry()
    import pytest_trajaudit.advisor.core  # noqa: F401

    cfg = Settings()
    whole = {id(rx) for rx in (cfg.read_re, cfg.dragnet_re, *cfg.read_patterns, *cfg.lethal_patterns,
                               *cfg.suspicious_patterns)}
    rxs = linre.compiled()
    texts = _corpus_texts(corpus)
    assert len(texts) > 1000 and len(rxs) > 40
    bad = []
    for rx in rxs:
        for name, text in texts:
            if "#" not in name and id(rx) not in whole:
                continue  # a whole file: only the patterns that scan whole files
            if first(rx, text) != first(rx.py, text):
                bad.append((rx.pattern[:60], name))
                break
    assert bad == []


def first(rx: Any, text: str, n: int = 20) -> list[tuple[Any, ...]]:
    return [(m.span(), m.groups()) for m in itertools.islice(rx.finditer(text), n)]


def _described(m: Any) -> Any:
    if m is None:
        return None
    return (m.span(), m.groups(), [m.span(g) for g in range(m.re.groups + 1)], m.pos, m.endpos, m.string)


@pytest.mark.parametrize(("pattern", "flags"), [
    (r"a*", 0), (r"(a)|(b)", 0), (r"\bx\w*", 0), (r"^(\w+)=(.*)$", re.M), (r"(?P<n>\d+)?-", 0), (r"", 0),
    (r"assert\s+(.+)$", re.M), (r"[^\n]*", 0),
])
def test_ascii_text_takes_the_same_matches_as_the_re2_wrapper(pattern: str, flags: int) -> None:
    """On ASCII text linre calls RE2 without google-re2's offset conversions: the same matches, positions and
    match objects as the wrapper's own search/match/fullmatch/finditer, for every pos/endpos (and non-ASCII text
    still goes through the wrapper)."""
    rx = linre.compile(pattern, flags)
    assert isinstance(rx, linre.Pattern) and not isinstance(rx, linre._DollarPattern)
    for text in ("", "a", "xab a=1\nbb=\n  assert x == 1\nxa", "b-12-3-aaa-", "caf\u00e9 a=\u00e9\nb"):
        for pos, endpos in ((0, None), (1, None), (2, len(text) - 1), (3, 2), (-5, 99), (len(text), None)):
            for name in ("search", "match", "fullmatch"):
                ours = getattr(rx, name)(text, pos, endpos)
                theirs = getattr(rx.rx, name)(text, pos, endpos)
                assert _described(ours) == _described(theirs), (name, text, pos, endpos)
            ours_all = [_described(m) for m in rx.finditer(text, pos, endpos)]
            theirs_all, last = [], None  # the wrapper's sequence, its repeated empty match at the end dropped
            for m in rx.rx.finditer(text, pos, endpos):
                if m.span() == last and m.span()[0] == m.span()[1]:
                    continue
                last = m.span()
                theirs_all.append(_described(m))
            assert ours_all == theirs_all, (text, pos, endpos)



@pytest.mark.parametrize(("pattern", "flags"), [
    (r"a*", 0), (r"(a)|(b)", 0), (r"\bx\w*", 0), (r"^(\w+)=(.*)$", re.M), (r"(?P<n>\d+)?-", 0), (r"", 0),
    (r"(?:^[ \t>E+|]*|[:`]\s*)assert\s+(.+)$", re.M), (r"[^\n]*", 0), (r"(x)?(y)?z", 0),
])
def test_findall_of_ascii_text_is_the_match_objects_groups(pattern: str, flags: int) -> None:
    """findall on ASCII text cuts the groups from RE2's spans without a match object: the same list as the match
    objects of finditer give (group(), group(1) or groups("")), for every pos/endpos, and Python's own for a
    pattern whose groups all take part."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    rx = linre.compile(pattern, flags)
    assert type(rx) is linre.Pattern
    n = rx.groups

    def reference(text: str, pos: int, endpos: int | None) -> list[Any]:
        return [m.group() if n == 0 else m.group(1) if n == 1 else m.groups("")
                for m in rx.finditer(text, pos, endpos)]

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(["a", "b", "x", "y", "z", "=", "-", "1", " ", "\t", "\n", ":", "`", ">",
                                     "E ", "assert ", "assert", "\u00e9"]), max_size=40).map("".join),
           st.integers(-2, 45), st.one_of(st.none(), st.integers(-2, 45)))
    def check(text: str, pos: int, endpos: int | None) -> None:
        ours = rx.findall(text, pos, endpos)
        assert ours == reference(text, pos, endpos)
        if None not in ours:  # (a lone group that took no part: None here, "" in Python's findall)
            assert ours == re.compile(pattern, flags).findall(text, max(pos, 0), len(text) if endpos is None
                                                               else max(endpos, 0))

    check()


# --- superset(): a relaxed RE2 test that never says "no match" where Python's re finds one ---------------------

_RELAXED = [  # (pattern, flags, texts Python's re matches)
    (r"(?<![A-Za-z0-9])sk-[A-Za-z0-9]{8,}", 0, ["key sk-abcd1234", "é sk-abcdefgh"]),  # a lookbehind
    (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))AKIA[0-9A-Z]{4}", 0, ["\\nAKIAABCD", "(AKIA1234"]),
    (r"\bconftest\.py\b", 0, ["cat conftest.py", "é conftest.py"]),
    # IGNORECASE: Python also takes İ and ı for i, ſ for s, the Kelvin sign for k
    (r"(?i)\bapi[_-]?key\b\s*[:=]\s*[^\s\"']{4,}", 0,
     ["apı_KEY = abcd", "APİ-key:\u2003xyzw", "api\u212aey=1234", "API_KEY=ééééé"]),
    (r"secret", re.IGNORECASE, ["ſecret", "SECRET", "SeCrEt"]),
    (r"(?i:kelvin)=\w+", 0, ["\u212aELVIN=é", "kelvın=1"]),
    (r"(?>ab+)c", 0, ["abbbc"]),  # an atomic group
    (r"a++b", 0, ["aaab"]),  # a possessive repeat
    (r"(x)y\1", 0, ["xyx"]),  # a backreference
    (r"end$", 0, ["the end\n", "end"]),
    (r"foo(?=bar)", 0, ["foobar"]),
    (r"(?<!x)z{1200}", 0, ["z" * 1200 + "q"]),  # a count past RE2's 1,000
]


@pytest.mark.parametrize(("pattern", "flags", "texts"), _RELAXED)
def test_superset_finds_a_match_wherever_python_does(pattern: str, flags: int, texts: list[str]) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    py = re.compile(pattern, flags)
    test = linre.superset(pattern, flags)
    assert test is not None
    for text in texts:
        assert py.search(text) and test(text), text
    pieces = sorted({t[i:i + n] for t in texts for n in (1, 3, 6) for i in range(0, len(t), n)})

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from([*pieces, *texts, " ", "\n", "x", "é", "\ud800"]), max_size=10).map("".join))
    def check(text: str) -> None:
        if py.search(text):
            assert test(text), text

    check()
    assert not test("nothing to see here")  # (it is a filter: most texts are refused)


def test_superset_python_folds_onto_ascii_only_these() -> None:
    """Every code point that Python's IGNORECASE takes for an ASCII character is ASCII or in ``_FOLDS_TO_ASCII``,
    and IGNORECASE leaves ``\\d``, ``\\s``, ``\\w`` as they are: what the relaxed classes rely on."""
    ascii_ci = re.compile(r"(?i)[\x00-\x7f]")
    pairs = [(re.compile(rf"(?i)\{k}"), re.compile(rf"\{k}")) for k in "dsw"]
    extra = []
    for cp in range(0x80, 0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if ascii_ci.match(c):
            extra.append(cp)
        for ci, cs in pairs:
            assert (ci.match(c) is None) == (cs.match(c) is None), hex(cp)
    assert tuple(extra) == linre._FOLDS_TO_ASCII


def test_superset_on_what_re2_cannot_read_answers_true() -> None:
    test = linre.superset(r"(?<!x)secret")
    assert test is not None
    assert test("lone \ud800 surrogate") is True  # not UTF-8: not judged
    assert test("nothing") is False
