"""Secret redaction for everything the plugin quotes (evidence, audit JSON, reports)."""

from __future__ import annotations

import re
from typing import Any

from .needles import may_match

_SECRET = re.compile(
    # an sk- key starts a token ("risk-adjusted-..." holds no "sk-" key; "test_uses_sk-..." does), possibly right
    # after an escaped newline
    r"(?:(?<![A-Za-z0-9\-])|(?<=\\[nrt]))"
    r"(?:sk-or-v1-[A-Za-z0-9]{16,}"
    r"|sk-ant-[A-Za-z0-9_\-]{16,}"
    r"|sk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{20,})"
    # the other shapes have a distinctive prefix: anywhere a letter or digit does not precede it ("task-AKIA…")
    r"|(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"
    r"(?:AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"  # a JWT: header.payload.signature
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))"
)
_BEARER = re.compile(r"(?i)((?:\b|(?<=\\[nrt]))bearer\s+)[A-Za-z0-9._~+/=\-]{12,}")
# credentials in a URL: scheme://user:password@host (matching starts at "://", so it stays linear)
_URL_CREDENTIALS = re.compile(r"(://[^\s:/@]+:)[^\s@/]+@")
# The match starts at the keyword itself (``api_key``, ``GITHUB_TOKEN``'s ``TOKEN``): the name before it is kept
# verbatim anyway, and a leading ``[\w-]*`` made every word start rescan the rest of the word (quadratic: a 20 KB
# ``a-a-a-…`` message took 20 s).
_KEYVAL = re.compile(
    r"""(?ix)
    ( (?:api[_\-]?key|secret|token|password|passwd|access[_\-]?key|auth)\b["']?\s*[:=]\s*["']? )
    ( [^\s"',}{]{6,} )
    """
)


def _may_hold_secret(text: str) -> bool:
    """False when no pattern above can match: their required literals (``needles.py``) are all absent, so the
    common case costs a few C substring scans instead of four regex passes."""
    return any(may_match(rx, text) for rx in _PATTERNS)


# The same short strings come back for every job (data keys such as "status", statuses, stock evidence): their
# redaction is remembered (bounded: emptied when full).
_CACHE: dict[str, str] = {}
_CACHE_MAX_ENTRIES = 8192
_CACHE_MAX_CHARS = 512


_PATTERNS = (_SECRET, _BEARER, _URL_CREDENTIALS, _KEYVAL)


def redact(text: str) -> str:
    if not text:
        return text
    short = len(text) <= _CACHE_MAX_CHARS
    if short:
        done = _CACHE.get(text)
        if done is not None:
            return done
    out = _redact_all(text) if _may_hold_secret(text) else text
    if short:
        if len(_CACHE) >= _CACHE_MAX_ENTRIES:
            _CACHE.clear()
        _CACHE[text] = out
    return out


def _redact_all(text: str) -> str:
    text = _SECRET.sub("<REDACTED>", text)
    text = _BEARER.sub(r"\1<REDACTED>", text)
    text = _URL_CREDENTIALS.sub(r"\1<REDACTED>@", text)
    return _KEYVAL.sub(lambda m: m.group(1) + ("<REDACTED>" if m.group(2) != "<REDACTED>" else m.group(2)), text)


def clean(text: str) -> str:
    """``redact(text)``, and writable as UTF-8: a string holding a file name that is not UTF-8 (lone surrogates,
    which xdist's transport and every report writer refuse) is shown through :func:`printable`."""
    text = redact(text)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return printable(text)
    return text


def redact_tree(value: Any) -> Any:
    """``value`` (JSON-like) with every string :func:`clean`-ed, dictionary keys included (a key that redacts to
    one already present keeps the first value; two counts are added, e.g. P7's ``by_title``)."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [redact_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_tree(v) for v in value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            k2 = clean(k) if isinstance(k, str) else k
            v2 = redact_tree(v)
            if k2 in out:
                prev = out[k2]
                if isinstance(prev, int) and isinstance(v2, int) and not isinstance(prev, bool) \
                        and not isinstance(v2, bool):
                    out[k2] = prev + v2
                continue
            out[k2] = v2
        return out
    return value


def quote(text: str, limit: int = 200) -> str:
    """A short, single-line, redacted quote of at most ``limit`` characters."""
    text = redact(" ".join((text or "").split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Characters that must never reach a terminal line, a node id or a report raw: C0/C1 controls (newlines, ESC, which
# could move the cursor and overwrite a FAILED line), Unicode line separators, bidirectional overrides, and the
# lone surrogates Python uses for file-name bytes that are not UTF-8 (they cannot even be written as UTF-8).
_UNPRINTABLE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:  # a file-name byte that is not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def printable(text: str) -> str:
    """``text`` safe for one terminal line, a node id and a UTF-8 report: every control character, line
    separator, bidirectional override and undecodable file-name byte becomes a visible escape (``\\n``,
    ``\\x1b``, ``\\u202e``, ``\\xff``); a backslash is doubled, so two different names never print the same."""
    if not text or not _UNPRINTABLE.search(text):
        return text
    return _UNPRINTABLE.sub(_escape, text)
