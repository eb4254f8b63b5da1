"""split_words: shlex.split's POSIX words from regexes (shlex reads one character per Python call).
The answer must be shlex's, word for word, and so must the error for an unclosed quote or a trailing backslash."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_trajaudit.loaders.codex import _unwrap_shell
from pytest_trajaudit.loaders.common import SHLEX_MAX, split_words
from pytest_trajaudit.principles.rules import _shell_read_paths


def shlex_answer(command: str) -> list[str] | tuple[str, str]:
    try:
        return shlex.split(command)
    except ValueError as e:
        return ("ValueError", str(e))


def answer(command: str) -> list[str] | tuple[str, str]:
    try:
        return split_words(command)
    except ValueError as e:
        return ("ValueError", str(e))


CASES = [
    "", " \t\r\n ", "cat /app/a.py", "  cat   /app/a.py  ", "cat '/app/my file.py'", 'cat "/app/my file.py"',
    r"cat /app/my\ file.py", "''", '""', "a''b", 'x "" y', "x '' y", r'"a\"b"', r'"a\b"', r'"a\\b"', r"'a\b'",
    "'it''s'", "a'b'\"c\"d\\e", "a\\\nb", "\\\n", "\\\\", r'"\$HOME"', "grep -rn 'def f(' src/",
    "python -c \"print('hi')\"", "ä\u2003b", "a\x0bb\x0cc\u00a0d", "a\x00b", "x;y|z&&w",
    # shlex's errors
    "'unclosed", '"unclosed', "trailing\\", 'a "b\\"', "ok 'x' '", "'a' \"b",
]


@pytest.mark.parametrize("command", CASES)
def test_the_words_and_errors_are_shlex_s(command: str) -> None:
    assert answer(command) == shlex_answer(command)


# the characters shlex treats specially, plus whitespace shlex does not split on but str.split does
SHELLISH = st.text(st.sampled_from(list("ab/.-;|&$ '\"\\\t\r\n\x0b\x0c\u00a0\u2003é") + ["\udcff"]), max_size=40)


@settings(max_examples=3000, deadline=None)
@given(SHELLISH)
@example("a\\")
@example("\"a\\\"")
def test_property_same_answer_as_shlex(command: str) -> None:
    assert answer(command) == shlex_answer(command)


def test_double_quotes_escape_only_a_quote_and_a_backslash() -> None:
    """As in shlex: inside "…" a backslash escapes only " and \\ (a POSIX shell also lets it escape $, ` and a
    newline), inside '…' nothing."""
    assert split_words(r'"a\b"') == ["a\\b"]
    assert split_words(r'"a\"b\\c"') == ['a"b\\c']
    assert split_words(r"'a\"b'") == ['a\\"b']


def test_users_of_split_words_keep_their_answers() -> None:
    assert _shell_read_paths("cat '/app/my file.py' | head") == ["/app/my file.py"]
    assert _shell_read_paths("sed -n 1,20p /app/a.py") == ["/app/a.py"]
    assert _unwrap_shell("bash -lc 'cat /oracle/solve.sh'") == "cat /oracle/solve.sh"
    assert _unwrap_shell("bash -lc \"echo 'x' > /app/y\"") == "echo 'x' > /app/y"
    assert _unwrap_shell("bash -lc 'unclosed") == "bash -lc 'unclosed"


def test_long_commands_still_split_on_whitespace() -> None:
    long = "cat '" + "x" * SHLEX_MAX
    assert split_words(long) == long.split()
