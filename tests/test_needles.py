"""The literal prefilter in front of the scanning regexes (needles.py): it may let a text through that has no
match, never stop one that has."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_trajaudit import settings as cfg
from pytest_trajaudit.principles import _shell
from pytest_trajaudit.scan import needles as needles_mod
from pytest_trajaudit.scan import redact
from pytest_trajaudit.scan.needles import may_match, needles

PROJECT = [cfg.Settings().read_re, cfg.Settings().dragnet_re, *map(re.compile, cfg.LETHAL),
           *map(re.compile, cfg.SUSPICIOUS), *map(re.compile, cfg.DRAGNET), re.compile(cfg.REWARD_SYMLINK),
           re.compile(cfg.PIP_SHADOW), re.compile(cfg.PIP_PYTEST), *_shell._WRITERS, _shell._SOLVER,
           cfg.Settings().reversal_re]
TRICKY = [r"(?:abc)?def", r"(?:a|)bc", r"(a|b)*c", r"x{0}yz", r"(?<=ab)cd", r"(?<!ab)cd", r"ab(?=cd)", r"ab|c+d",
          r"(?:foo|bar)+baz", r"\bq\b", r"[ab]c", r"(ab|cd)(ef|gh)", r"a.*b", r"(?s)a.b", r"x(?:y(?:z|w))", r"(?m)^ab$",
          r"(?i:ab)cd", r"x(?i:ab)", r"a(?#comment)b", r"a{2}", r"(?P<n>ab)(?P=n)", r"(?i)AbC", r"(?i)sec|key",
          r"(?ix) a b  # spaced", r"(?i)k", r"(?i)(?:bearer\s+)X"]
REDACT = [*redact._PATTERNS]
ALL = PROJECT + REDACT + [re.compile(p) for p in TRICKY]
ALPHABET = sorted({c for rx in ALL for c in rx.pattern if c.isprintable()} | set("abcdxyz /._-\n\t>'\"0ABſK"))


def test_project_patterns_get_needles() -> None:
    """The patterns the scans run most have a prefilter (else this module buys nothing)."""
    assert set(needles(cfg.Settings().read_re) or ()) >= {"/oracle/", "solve.sh", "answer", "ground"}
    assert needles(re.compile(r"\bconftest\.py")) == ("conftest.py",)
    assert needles(_shell._REDIRECT) == (">",)
    assert set(needles(_shell._CPMV) or ()) == {"cp", "mv", "install", "rsync"}
    # case-insensitive: lower-cased needles, checked against the lower-cased text (ASCII text only)
    assert needles(re.compile(r"(?i)Bearer\s+\S+")) == ("bearer",)
    assert may_match(re.compile(r"(?i)Bearer"), "BEARER x") and not may_match(re.compile(r"(?i)Bearer"), "beer")
    assert may_match(re.compile(r"(?i)secret"), "ſecret")  # non-ASCII text: always run (it matches)


@pytest.mark.parametrize("pattern", [r"a|\w+", r".*", r"(?:ab)?", r"(?i)ſecret"])
def test_patterns_it_cannot_read_get_no_prefilter(pattern: str) -> None:
    assert needles(re.compile(pattern)) is None
    assert may_match(re.compile(pattern), "")


@pytest.mark.parametrize("rx", ALL, ids=lambda rx: rx.pattern[:40])
def test_never_a_false_negative(rx: re.Pattern[str]) -> None:
    pieces = [n for n in needles(rx) or ()] + [rx.pattern[i:i + 4] for i in range(0, len(rx.pattern), 3)]

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(st.lists(st.one_of(st.sampled_from(ALPHABET), st.sampled_from(pieces or ["a"])), max_size=20))
    def check(parts: list[str]) -> None:
        text = "".join(parts)
        if rx.search(text):
            assert may_match(rx, text), text

    check()


def test_matching_examples_pass_the_filter() -> None:
    """Texts that do match (one per project pattern) always pass."""
    for text in ["cat /oracle/answer.json", "find / -name x", "echo hi > out.txt", "tee -a log", "cp a b",
                 "ln -s a b", "sed -i 's/a/b/' f", "mkdir -p d", "open('f', 'w')", "Path('f').write_text(x)",
                 "pip install json ", "ln -sf /dev/stdout reward.txt x", "import conftest.py", "python x.py "]:
        for rx in PROJECT:
            if rx.search(text):
                assert may_match(rx, text), (rx.pattern, text)


# --- the fused set match (one RE2 pass for every pattern's needles, remembered per text until forget()) ---------


def _loop(rx: re.Pattern[str], text: str) -> bool:
    """The substring test the set match stands in for."""
    plan = needles_mod._plan(rx)
    if plan is None:
        return True
    ns, fold = plan
    if fold:
        if not text.isascii():
            return True
        text = text.lower()
    return any(n in text for n in ns)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(ALPHABET + ["é", "→", "\U0001f600", "\ud800"]),
                          st.sampled_from([n for rx in ALL for n in needles(rx) or ()])), max_size=40),
       st.sampled_from(["x", " ", "é", "/"]))
def test_set_match_answers_exactly_as_the_substring_test(parts: list[str], filler: str) -> None:
    """For every pattern, on texts long enough for the set match (non-ASCII, and a lone surrogate RE2 cannot
    take as UTF-8, included): the same answer as the plain substring test, so also never a false negative."""
    assert needles_mod.RE2 is not None  # a declared dependency: the test must not pass by falling back
    text = "".join(parts) + filler * needles_mod.FUSE_MIN
    for rx in ALL:
        needles(rx)
    scanned = needles_mod.scan(text)
    assert (scanned is None) == ("\ud800" in text)
    for rx in ALL:
        assert may_match(rx, text, scanned) == _loop(rx, text), (rx.pattern, text[:80])
        if rx.search(text):
            assert may_match(rx, text, scanned)


def test_a_scan_from_before_a_pattern_added_needles_is_not_used() -> None:
    text = "cat /oracle/answer.json\n" + "x" * needles_mod.FUSE_MIN
    s = cfg.Settings()
    needles(s.read_re)
    scanned = needles_mod.scan(text)
    assert scanned is not None and needles_mod.current(scanned)
    assert may_match(s.read_re, text, scanned) and not may_match(s.reward_symlink_re, text, scanned)
    late = re.compile(r"zq_late_needle_\d")  # planned after the scan: its needle was not in the set
    assert may_match(late, "zq_late_needle_" + text, needles_mod.scan("zq_late_needle_" + text))
    planned_late = re.compile(r"qz_later_needle_\d")
    old = needles_mod.scan("qz_later_needle_" + text)
    needles(planned_late)
    assert not needles_mod.current(old)
    assert may_match(planned_late, "qz_later_needle_" + text, old)  # stale: scanned again, found
    assert not may_match(planned_late, text, needles_mod.scan(text))


def test_short_texts_and_texts_re2_cannot_read_take_the_loop() -> None:
    assert needles_mod.scan("x" * (needles_mod.FUSE_MIN - 1)) is None
    assert needles_mod.scan("\ud800" + "x" * needles_mod.FUSE_MIN) is None
    assert may_match(cfg.Settings().read_re, "\ud800/oracle/" + "x" * needles_mod.FUSE_MIN, None)


def test_a_pattern_past_the_sets_cap_takes_the_loop_and_the_others_keep_the_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A DFA that outgrew RE2's memory would answer "no match": needles past the cap never go into the set."""
    monkeypatch.setattr(needles_mod, "_FUSED", needles_mod._Fused())
    monkeypatch.setattr(needles_mod, "_PLANS", {})
    monkeypatch.setattr(needles_mod, "_UNFUSED", set())
    big = re.compile("|".join(f"needle{i:05d}_" + "q" * 40 for i in range(200)))  # 10,000 needle characters
    small = re.compile(r"/oracle/")
    text = "y" * needles_mod.FUSE_MIN + " needle00199_" + "q" * 40 + " /oracle/"
    needles(small)
    scanned = needles_mod.scan(text)
    assert scanned is not None and may_match(small, text, scanned)
    assert may_match(big, text, scanned) and big.search(text)  # planned now: past the cap, so the loop answers
    assert big in needles_mod._UNFUSED and small not in needles_mod._UNFUSED
    assert not may_match(big, "y" * needles_mod.FUSE_MIN, needles_mod.scan("y" * needles_mod.FUSE_MIN))
    assert needles_mod._FUSED.size < needles_mod.FUSE_MAX_CHARS and not needles_mod._FUSED.broken
    assert needles_mod.current(scanned)  # the set did not change: the small pattern's answers still stand
    plain = "y" * needles_mod.FUSE_MIN
    assert may_match(small, text, scanned) and not may_match(small, plain, needles_mod.scan(plain))


# --- AnyOf: several patterns asked about one text in one call ----------------------------------------------------

GROUPS = [tuple(ALL), tuple(PROJECT), tuple(map(re.compile, cfg.LETHAL)), tuple(map(re.compile, cfg.SUSPICIOUS)),
          (re.compile(r"(?i)secret"), re.compile(r"a|\w+"), re.compile(r"/oracle/"), re.compile(r"(?i)k"))]

def cands(rxs: tuple[re.Pattern[str], ...], text: str, scanned: needles_mod.Found | None = None) -> list:
    return list(needles_mod.AnyOf(rxs).candidates(text, scanned))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(ALPHABET + ["é", "→", "ſ", "K", "\ud800"]),
                          st.sampled_from([n for rx in ALL for n in needles(rx) or ()])), max_size=40),
       st.booleans())
def test_candidates_are_exactly_the_patterns_may_match_lets_through(parts: list[str], long: bool) -> None:
    """Same answers, same order as asking may_match pattern by pattern: on short texts (the loop), on long ones
    (the set's answer, also when it saw no needle at all), on non-ASCII text (case-folded patterns always run)
    and on a text RE2 cannot read."""
    text = "".join(parts) + ("x" * needles_mod.FUSE_MIN if long else "")
    for rxs in GROUPS:
        for rx in rxs:
            needles(rx)
        for scanned in (None, needles_mod.scan(text)):
            want = [rx for rx in rxs if may_match(rx, text, scanned)]
            assert cands(rxs, text, scanned) == want, (text[:80], scanned)
            assert all(rx in want for rx in rxs if rx.search(text))


def test_candidates_when_the_set_saw_nothing() -> None:
    """The shortcut (no needle of any fused pattern in the text) still runs the patterns the set cannot answer
    for: one without needles, and a case-folded one on non-ASCII text."""
    loose, folded, fused = re.compile(r"a|\w+"), re.compile(r"(?i)secret"), re.compile(r"/oracle/")
    rxs = (fused, loose, folded)
    for rx in rxs:
        needles(rx)
    ascii_text = "y" * needles_mod.FUSE_MIN
    scanned = needles_mod.scan(ascii_text)
    assert scanned is not None and not scanned.present
    assert cands(rxs, ascii_text, scanned) == [loose]
    wide = "é" + ascii_text  # no needle, but not ASCII: may_match does not trust the set for a folded pattern
    scanned = needles_mod.scan(wide)
    assert scanned is not None and not scanned.present and not scanned.ascii
    assert cands(rxs, wide, scanned) == [loose, folded] == [
        rx for rx in rxs if may_match(rx, wide, scanned)]
    short = "nothing to see"
    assert cands(rxs, short) == [loose]
    assert cands(rxs, "cat /oracle/x") == [fused, loose]


def test_candidates_with_a_stale_scan_scan_again() -> None:
    text = "zq_cand_late_7 " + "x" * needles_mod.FUSE_MIN
    old = needles_mod.scan(text)
    late = re.compile(r"zq_cand_late_\d")
    assert cands((late,), text, old) == [late]  # planned after the scan: not trusted
    assert cands((late,), "x" * needles_mod.FUSE_MIN, old) == []


def test_p2_asks_through_any_of() -> None:
    """P2's lethal-path and suspicious questions go through AnyOf (so the tests above cover them)."""
    from pytest_trajaudit.principles import anticheat

    s = cfg.Settings()
    paths = anticheat._lethal_paths(s)
    assert paths.rxs and all("pip" not in p.pattern for p in paths.rxs) and len(paths.rxs) < len(s.lethal_patterns)
    assert anticheat._lethal_path_hits("rm x; vim conftest.py", paths) == ["conftest.py"]
    long = "/usr/lib/python3/site-packages/evil.pth " + "x" * 600
    assert anticheat._lethal_path_hits(long, paths, needles_mod.scan(long))
    assert anticheat._lethal_path_hits("x" * 600, paths, needles_mod.scan("x" * 600)) == []


def test_candidates_run_a_pattern_the_set_could_not_take(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pattern past the set's cap is not in the set, so the set's "no needle here" says nothing about it."""
    monkeypatch.setattr(needles_mod, "_FUSED", needles_mod._Fused())
    monkeypatch.setattr(needles_mod, "_PLANS", {})
    monkeypatch.setattr(needles_mod, "_UNFUSED", set())
    small = re.compile(r"/oracle/")
    big = re.compile("|".join(f"needle{i:05d}_" + "q" * 40 for i in range(200)))  # past the cap
    rxs = (small, big)
    cands(rxs, "")
    assert big in needles_mod._UNFUSED
    text = "y" * needles_mod.FUSE_MIN + " needle00007_" + "q" * 40
    scanned = needles_mod.scan(text)
    assert scanned is not None and not scanned.present and needles_mod.current(scanned)
    assert cands(rxs, text, scanned) == [big] and big.search(text)
    plain = "y" * needles_mod.FUSE_MIN
    assert cands(rxs, plain, needles_mod.scan(plain)) == []


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(ALPHABET + ["é", "→", "ſ", "K", "\ud800"]),
                          st.sampled_from([n for rx in ALL for n in needles(rx) or ()])), max_size=40),
       st.booleans())
def test_a_patterns_own_set_answers_exactly_as_the_substring_test(parts: list[str], long: bool) -> None:
    """may_match_alone (one RE2 set of one pattern's needles, for a text only it is asked about): the loop's
    answer for every pattern, on short and long texts, non-ASCII and lone surrogates included."""
    text = "".join(parts) + ("x" * needles_mod.FUSE_MIN if long else "")
    for rx in ALL:
        assert needles_mod.may_match_alone(rx, text) == may_match(rx, text), (rx.pattern, text[:80])
        if rx.search(text):
            assert needles_mod.may_match_alone(rx, text)


def test_the_guard_refusal_head_takes_its_own_set() -> None:
    guard = cfg.Settings().guard_refusal_re
    head = "x" * needles_mod.FUSE_MIN
    assert not needles_mod.may_match_alone(guard, head)
    assert needles_mod.may_match_alone(guard, head + "ACCESS DENIED")
    assert guard in needles_mod._ALONE
