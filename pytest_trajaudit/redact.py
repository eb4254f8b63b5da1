"""Secret redaction for everything the plugin quotes (evidence, audit JSON, reports)."""

from __future__ import annotations

import re

_SECRET = re.compile(
    # a key starts a token ("risk-adjusted-..." holds no "sk-" key), possibly right after an escaped newline
    r"(?:(?<![A-Za-z0-9_\-])|(?<=\\[nrt]))"
    r"(?:sk-or-v1-[A-Za-z0-9]{16,}"
    r"|sk-ant-[A-Za-z0-9_\-]{16,}"
    r"|sk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{20,}"
    r"|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))"
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{12,}")
_KEYVAL = re.compile(
    r"""(?ix)
    ( ["']?\b[\w\-]*(?:api[_\-]?key|secret|token|password|passwd|access[_\-]?key|auth)\b["']?\s*[:=]\s*["']? )
    ( [^\s"',}{]{6,} )
    """
)


def redact(text: str) -> str:
    if not text:
        return text
    text = _SECRET.sub("<REDACTED>", text)
    text = _BEARER.sub(r"\1<REDACTED>", text)
    return _KEYVAL.sub(lambda m: m.group(1) + ("<REDACTED>" if m.group(2) != "<REDACTED>" else m.group(2)), text)


def quote(text: str, limit: int = 200) -> str:
    """A short, single-line, redacted quote of at most ``limit`` characters."""
    text = redact(" ".join((text or "").split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
