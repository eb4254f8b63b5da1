"""The literal prefilter in front of the scanning regexes (needles.py): it may let a text through that has no
match, never stop one that has."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_trajaudit import redact
from pytest_trajaudit import settings as cfg
from pytest_trajaudit.needles import may_match, needles
from pytest_trajaudit.principles import _shell

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
