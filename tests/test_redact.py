"""Secret redaction (everything the plugin quotes) and the short single-line quote."""

from __future__ import annotations

import pytest

from pytest_trajaudit.scan.redact import quote, redact

R = "<REDACTED>"

# Synthetic keys in each provider's shape (none is a real credential).
SECRETS = {
    "openai": "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4",
    "openai-project": "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
    "openrouter": "sk-or-v1-" + "0123456789abcdef0123456789abcdef",
    "anthropic": "sk-ant-api03-" + "Qw3Er4Ty5Ui6Op7As8Df9Gh0Jk-_Lz",
    "aws-access-key-id": "AKIA" + "IOSFODNN7EXAMPLE",
    "github-classic": "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5",
    "github-fine-grained": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL",
    "slack-bot": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOp",
    "google-api": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
}


@pytest.mark.parametrize("name", SECRETS)
@pytest.mark.parametrize("template", [
    "{}",
    "export KEY={}",
    'client = Client("{}")',
    "key: {} (from env)",
])
def test_every_key_shape_is_redacted(name, template):
    secret = SECRETS[name]
    text = template.format(secret)
    out = redact(text)
    assert secret not in out
    assert R in out
    assert out == text.replace(secret, R)  # nothing around the key is touched


@pytest.mark.parametrize("text", [
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc123def",
    "curl -H 'authorization: bearer abcdef0123456789abcdef' https://api.example.com",
])
def test_bearer_tokens_keep_the_scheme(text):
    out = redact(text)
    assert "eyJhbGci" not in out and "abcdef0123456789abcdef" not in out
    assert ("Bearer " + R in out) or ("bearer " + R in out)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"api_key": "my-very-secret-value"}', '{"api_key": "<REDACTED>"}'),
    ("API_KEY=abc123xyz789", "API_KEY=<REDACTED>"),
    ("password: hunter2hunter2", "password: <REDACTED>"),
    ("'client_secret': 'Zm9vYmFyYmF6'", "'client_secret': '<REDACTED>'"),
    ("GITHUB_TOKEN=abcdef123456 make release", "GITHUB_TOKEN=<REDACTED> make release"),
])
def test_key_value_secrets(text, expected):
    assert redact(text) == expected


def test_key_value_holding_a_known_key_shape_is_redacted_once():
    assert redact('"api_key": "' + SECRETS["openai"] + '"') == '"api_key": "<REDACTED>"'


def test_private_key_block():
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key:\n{pem}\ndone") == f"key:\n{R}\ndone"


@pytest.mark.parametrize("text", [
    "author: John",
    "max_tokens: 4096",
    "n_tokens=4096000 tokenizer=sentencepiece",
    "risk-adjusted-return-calculation-method",  # 'sk-' inside a word is not a key
    "task-abcdefghijklmnopqrstuvwxyz012",
    "disk-usage-report-for-all-volumes-2026",
    "the secret garden; an auth flow; a token bucket",
    "Output written to /root/unnecessary_aborts.json with 3216 ids.",
    "sk-short",
    "AKIA1234",
    "",
    "https://example.com:8080/a@b",  # a port, not a password
    "ssh://git@github.com/org/repo.git",
    "postgres://user@localhost/db",
    "eyJhbGciOiJIUzI1NiJ9 alone is no token",
])
def test_normal_text_is_untouched(text):
    assert redact(text) == text


def test_key_after_an_escaped_newline_in_raw_json_is_redacted():
    raw = '"text": "line one\\n' + SECRETS["openai"] + '"'
    assert redact(raw) == '"text": "line one\\n' + R + '"'


def test_quote_is_single_line_and_clipped_to_the_limit():
    text = "first line\n\n  second   line\t" + "x" * 300
    q = quote(text, 50)
    assert len(q) == 50
    assert q.endswith("…")
    assert q.startswith("first line second line x")
    assert "\n" not in q


def test_quote_short_text_unchanged_but_whitespace_collapsed():
    assert quote("a  b\nc") == "a b c"
    assert quote("") == ""
    assert quote(None) == ""  # type: ignore[arg-type]
    assert len(quote("y" * 200)) == 200  # exactly at the default limit: no clipping
    assert quote("y" * 201) == "y" * 199 + "…"


def test_quote_redacts_before_clipping():
    """A key straddling the clip point must not leak its prefix."""
    text = "x" * 180 + " " + SECRETS["anthropic"]
    q = quote(text, 200)
    assert "sk-ant" not in q
    assert q == "x" * 180 + " " + R


@pytest.mark.parametrize(("text", "expected"), [
    ("git clone https://deploy:s3cr3tPassw0rd@git.example.com/r.git",
     "git clone https://deploy:<REDACTED>@git.example.com/r.git"),
    ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcDEF123_-xyz end", "token <REDACTED> end"),
    ("task-AKIA" + "Z7Y6X5W4V3U2T1S0", "task-<REDACTED>"),
    ("test_uses_sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2", "test_uses_<REDACTED>"),
    ("line one\\nBearer abcdef0123456789abcdef", "line one\\nBearer <REDACTED>"),
])
def test_issue8_shapes(text, expected):
    assert redact(text) == expected


def test_redact_tree_redacts_keys_and_adds_colliding_counts():
    from pytest_trajaudit.scan.redact import redact_tree

    k1, k2 = "Read /x/" + SECRETS["openai"], "Read /x/" + SECRETS["openai-project"]
    out = redact_tree({"by_title": {k1: 2, k2: 3, "Bash": 1}, "l": [k1, ("t", k2)], "n": 1.5})
    assert out == {"by_title": {"Read /x/<REDACTED>": 5, "Bash": 1}, "l": ["Read /x/<REDACTED>", ("t", "Read /x/<REDACTED>")],
                   "n": 1.5}


def test_printable_escapes_what_would_break_a_line_and_stays_injective():
    import os

    from pytest_trajaudit.scan.redact import printable

    assert printable("runs/plain-name_1.json") == "runs/plain-name_1.json"
    assert printable("a\nb\rc\td\x1b[2Ke\u202ef") == "a\\nb\\rc\\td\\x1b[2Ke\\u202ef"
    assert printable(os.fsdecode(b"bad\xffbyte")) == "bad\\xffbyte"
    names = ["a\nb", "a\\nb", "a\\\nb", os.fsdecode(b"a\xffb"), "a\\xffb"]
    assert len({printable(n) for n in names}) == len(names)
    for n in names:
        printable(n).encode("utf-8")
        assert "\n" not in printable(n)


# --- the literal prefilter in front of the regexes ----------------------------------------------------

_FILLER = ["", " ", "x", "é", "K", "ſ", "İ", "ı", "\u2003", "\\n", "\n", '"', "'", "=", ": ", ".", "-", "_", "@", "/", "abc", "0123456789"]
_CORES = [*SECRETS.values(), "Auth=abcdef123", "api_key: xyz12345", "API-KEY=Abcdef99", "token = abcdefg1",
          "passwd=hunter22", "Password: 'hunter22'", "access_key=abcdef12", "secret: abcdefgh", "ſecret=abcdefgh",
          "https://user:p4ssw0rd@host", "Bearer abcdefghijklmnop", "BEARER\tabcdefghijklmnop",
          "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.sig", "-----BEGIN RSA PRIVATE KEY-----abc-----END RSA PRIVATE KEY-----",
          "ASIA" + "ABCDEFGHIJKLMNOP", "hf_" + "a" * 34, "glpat-" + "b" * 20, "gho_" + "c" * 36, "xoxp-1234567890a",
          "sk", "AKI", "bear", ":/", "tok", "plain words"]


def _every_regex(text: str) -> str:
    """The six redaction patterns applied in turn with no prefilter (the reference for redact's prefilters)."""
    from pytest_trajaudit.scan import redact as r

    text = r._SECRET.sub("<REDACTED>", text)
    text = r._SHAPES.sub("<REDACTED>", text)
    text = r._AUTH_HEADER.sub(r"\1<REDACTED>", text)
    text = r._BEARER.sub(r"\1<REDACTED>", text)
    text = r._URL_CREDENTIALS.sub(r"\1<REDACTED>@", text)
    return r._KEYVAL.sub(lambda m: m.group(1) + ("<REDACTED>" if m.group(2) != "<REDACTED>" else m.group(2)), text)


def test_prefilter_never_changes_the_result() -> None:
    """``redact`` skips a regex when no needed literal occurs or RE2 finds no match of its relaxed form: for every
    pattern's shape (in upper, lower or swapped case, inside random neighbours, including the non-ASCII letters
    Python's IGNORECASE takes for ASCII ones, and a non-ASCII space) it gives exactly what the regexes give."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_trajaudit.scan.redact import _WRAPPED

    def regexes(text: str) -> str:  # every pattern, then the wrapped-key continuation pass redact() adds
        return _WRAPPED.sub(lambda m: f"<REDACTED>{m.group(1) or m.group(2)}<REDACTED>", _every_regex(text))

    @settings(max_examples=4000, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(_FILLER), max_size=4), st.sampled_from(_CORES),
           st.sampled_from([str, str.lower, str.upper, str.swapcase]), st.lists(st.sampled_from(_FILLER), max_size=4))
    def check(before: list[str], core: str, case, after: list[str]) -> None:
        text = "".join(before) + case(core) + "".join(after)
        assert redact(text) == regexes(text)

    check()
    for core in _CORES:  # and each shape alone, as written
        assert redact(core) == _WRAPPED.sub(lambda m: f"<REDACTED>{m.group(1) or m.group(2)}<REDACTED>",
                                            _every_regex(core))


@pytest.mark.parametrize("text", ["ſecret=abcdefgh12", "token = abcdefgh12", "apı_key=abcdefgh12",
                                  "plain words only"])
def test_prefilter_keeps_non_ascii_and_keyword_cases(text: str) -> None:
    assert redact(text) == _every_regex(text)
    assert ("<REDACTED>" in redact(text)) == (text != "plain words only")


_ANT = "sk-ant-api03-" + "kLmNoPqRsTuVwXyZ0123456789a" * 3


@pytest.mark.parametrize("hidden", [
    _ANT[:20] + "\u200b" + _ANT[20:],  # zero-width space
    "ghp_abcdEFGH\u2060ijklMNOPqrstUVWXyz0123456789",  # word joiner
    "AKIA\u00adIOSFODNN7EXAMPLQ",  # soft hyphen
    _ANT[:30] + "\ufeff" + _ANT[30:],  # zero-width no-break space
])
def test_a_key_split_by_invisible_characters_is_redacted(hidden):
    out = redact("the key is " + hidden + " ok")
    assert out == "the key is <REDACTED> ok"


@pytest.mark.parametrize("sep", ["\n", "\r\n", "\n    ", " "])
def test_a_key_wrapped_onto_the_next_line_is_redacted_whole(sep):
    """A key the agent printed wrapped (or a quote made one line): its continuation is redacted with it."""
    out = redact("token " + _ANT[:40] + sep + _ANT[40:] + "\nnext line")
    assert _ANT[40:] not in out and out.endswith("\nnext line") and out.count("<REDACTED>") == 2


def test_invisible_characters_without_a_secret_stay_and_are_shown_escaped():
    from pytest_trajaudit.scan.redact import clean

    assert redact("a\u200bb") == "a\u200bb"
    assert clean("a\u200bb\u2060c\ufeff") == "a\\u200bb\\u2060c\\ufeff"


def test_a_long_word_after_a_key_is_not_taken_for_its_continuation():
    out = redact("key " + _ANT + " " + "x" * 40 + " done")
    assert out == "key <REDACTED> " + "x" * 40 + " done"
