"""Secret redaction for everything the plugin quotes (evidence, audit JSON, reports)."""

from __future__ import annotations

import re
from typing import Any

from . import linre
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
# Shapes taken from maintained secret-scanning rule sets rather than invented here. Each entry names its source:
# a gitleaks rule id (gitleaks' config/gitleaks.toml), or, for the shapes gitleaks has no rule for, the
# detect-secrets plugin class or the issuer's documented prefix. The expressions are written for this module
# (Python ``re``, linear: each starts with a fixed literal and has only bounded or single-class repeats), not
# copied; a shape starts a token (no letter or digit right before it), possibly right after an escaped newline
# of raw JSON (``\\n``).
SHAPES: tuple[tuple[str, str], ...] = (
    ("gitleaks stripe-access-token", r"(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}"),
    ("gitleaks npm-access-token", r"npm_[A-Za-z0-9]{36}"),
    ("gitleaks sendgrid-api-token", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    ("gitleaks slack-webhook-url", r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}"),
    ("gitleaks slack-app-token", r"xapp-\d-[A-Za-z0-9\-]{10,}"),
    ("gitleaks slack-config-refresh-token / slack-config-access-token", r"xoxe[.\-][A-Za-z0-9.\-]{10,}"),
    ("gitleaks aws-access-token (other prefixes)", r"(?:A3T[A-Z0-9]|ABIA|ACCA)[A-Z2-7]{16}"),
    ("gitleaks gitlab-* tokens", r"gl(?:ptt|rt|dt|ft|soat|oas|imt|agent|ffct|cbt)-[A-Za-z0-9_\-]{20,}"),
    ("gitleaks gitlab-rrt", r"GR1348941[A-Za-z0-9_\-]{20}"),
    ("gitleaks digitalocean-pat / -access-token / -refresh-token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("gitleaks pypi-upload-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,1000}"),
    ("gitleaks shopify-* tokens", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("gitleaks vault-service-token / vault-batch-token", r"hv[sb]\.[A-Za-z0-9_\-]{90,300}"),
    ("gitleaks age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("gitleaks databricks-api-token", r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("gitleaks doppler-api-token", r"dp\.pt\.[A-Za-z0-9]{43}"),
    ("gitleaks dynatrace-api-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("gitleaks linear-api-key", r"lin_api_[A-Za-z0-9]{40}"),
    ("gitleaks postman-api-token", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("gitleaks pulumi-api-token", r"pul-[a-f0-9]{40}"),
    ("gitleaks grafana-cloud-api-token / grafana-service-account-token", r"gl(?:c|sa)_[A-Za-z0-9+/_]{32,400}={0,3}"),
    ("gitleaks sentry-user-token / sentry-org-token", r"sntry[us]_[A-Za-z0-9+/=_]{40,}"),
    ("gitleaks huggingface-organization-api-token", r"api_org_[A-Za-z]{34}"),
    ("gitleaks 1password-service-account-token", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("gitleaks heroku-api-key-v2", r"HRKU-AA[A-Za-z0-9_\-]{58}"),
    ("gitleaks anthropic-admin-api-key", r"sk-ant-admin01-[A-Za-z0-9_\-]{20,}"),
    ("gitleaks artifactory-api-key", r"AKCp[A-Za-z0-9]{69}"),
    ("gitleaks atlassian-api-token", r"ATATT3[A-Za-z0-9_\-=]{100,}"),
    ("gitleaks clojars-api-token", r"CLOJARS_[A-Za-z0-9]{60}"),
    ("gitleaks square-access-token", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,60}"),
    ("gitleaks alibaba-access-key-id", r"LTAI[A-Za-z0-9]{20}"),
    # not in gitleaks' rules: Google's OAuth 2.0 access tokens all start with "ya29." (Google's token format)
    ("Google OAuth 2.0 access token prefix ya29.", r"ya29\.[A-Za-z0-9_\-]{20,}"),
    # not in gitleaks' rules: detect-secrets AzureStorageKeyDetector (AccountKey=); the same for Service Bus and
    # Event Hubs connection strings (SharedAccessKey=)
    ("detect-secrets AzureStorageKeyDetector", r"(?i:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{20,}={0,2}"),
    # gitleaks private-key (PEM: "-----BEGIN … PRIVATE KEY( BLOCK)?-----", PGP's "PRIVATE KEY BLOCK" included):
    # redacted from BEGIN to its END line, or to the end of the text when the END line is missing or clipped
    ("gitleaks private-key", r"-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                             r"(?:-----END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----|$)"),
    # not in gitleaks' rules: detect-secrets PrivateKeyDetector (PuTTY-User-Key-File-2), whole file to its MAC
    ("detect-secrets PrivateKeyDetector (PuTTY)", r"PuTTY-User-Key-File-\d:[\s\S]*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|$)"),
)
_SHAPES = re.compile(r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?:" + "|".join(f"(?:{rx})" for _, rx in SHAPES) + ")")
# HTTP authentication headers other than Bearer (gitleaks curl-auth-header: "Authorization: Basic …"): the scheme
# is kept, the credentials are redacted
_AUTH_HEADER = re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:basic|digest|negotiate|ntlm|token)\s+)"
                          r"[A-Za-z0-9+/._~\-]{6,}={0,2}")
_BEARER = re.compile(r"(?i)((?:\b|(?<=\\[nrt]))bearer\s+)[A-Za-z0-9._~+/=\-]{12,}")
# credentials in a URL: scheme://user:password@host (matching starts at "://", so it stays linear)
_URL_CREDENTIALS = re.compile(r"(://[^\s:/@]+:)[^\s@/]+@")
# The match starts at the keyword itself (``api_key``, ``GITHUB_TOKEN``'s ``TOKEN``): the name before it is kept
# verbatim anyway, and a leading ``[\w-]*`` would make every word start rescan the rest of the word (quadratic:
# seconds for a 20 KB ``a-a-a-…`` message).
_KEYVAL = re.compile(
    r"""(?ix)
    ( (?:api[_\-]?key|secret|token|password|passwd|access[_\-]?key|auth)\b["']?\s*[:=]\s*["']? )
    ( [^\s"',}{]{6,} )
    """
)


def _runs(rx: re.Pattern[str], text: str) -> bool:
    """False when ``rx`` certainly finds nothing in ``text``: none of its required literals is there, or RE2 finds
    no match of its relaxed form (:func:`linre.superset`: the pattern without its lookbehinds and ``\\b``, which
    matches wherever the pattern does). Python's ``re`` tries these patterns' alternations at every position of a
    text (15–30 MB/s, and common literals such as ``=`` or ``gh`` let most texts past the literal test); RE2's pass
    is one DFA scan, and the pattern runs only on a text where a secret may be."""
    if not may_match(rx, text):
        return False
    test = _SUPERSET.get(rx, _UNSET)
    if test is _UNSET:
        test = _SUPERSET[rx] = linre.superset(rx.pattern, rx.flags)
    return test is None or test(text)


_UNSET: Any = object()
_SUPERSET: dict[re.Pattern[str], Any] = {}  # pattern → its linre.superset test (None: none), made at first use


class ShortMemo(dict[Any, str]):
    """Answers remembered for short texts: the same short strings come back for every job (data keys such as
    "status", statuses, a principle's stock evidence). Bounded: emptied when full. A hit is a plain ``dict.get``;
    :meth:`keep` stores an answer and returns it."""

    MAX_CHARS = 512  # longer texts are not remembered (rarely repeated, and they would hold memory)

    def __init__(self, max_entries: int = 8192) -> None:
        super().__init__()
        self.max_entries = max_entries

    def keep(self, key: Any, value: str) -> str:
        if len(self) >= self.max_entries:
            self.clear()
        self[key] = value
        return value


_CACHE = ShortMemo()  # redact()


_PATTERNS = (_SECRET, _SHAPES, _AUTH_HEADER, _BEARER, _URL_CREDENTIALS, _KEYVAL)
# invisible format characters: soft hyphen, Mongolian vowel separator, zero-width space/joiners, word joiner and
# invisible operators, zero-width no-break space
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]")
# a run of key characters at the start of the line after a redacted secret, or after one space (the same wrapped
# key once a quote made it one line; there it must mix letters and digits, as key material does, so that a long
# word after a key stays): the rest of the key
_WRAPPED = re.compile(r"<REDACTED>(\r?\n[ \t]*)[A-Za-z0-9_+/=-]{16,}(?=[\s\"'`]|$)"
                      r"|<REDACTED>( )(?=[A-Za-z_+/=-]*[0-9])(?=[0-9_+/=-]*[A-Za-z])[A-Za-z0-9_+/=-]{16,}"
                      r"(?=[\s\"'`]|$)")


def redact(text: str) -> str:
    if not text:
        return text
    short = len(text) <= ShortMemo.MAX_CHARS
    if short:
        done = _CACHE.get(text)
        if done is not None:
            return done
    out = _redact_all(text)
    if not text.isascii() and _INVISIBLE.search(text):
        # zero-width and soft-hyphen characters inside a key break its shape without changing what a reader sees:
        # when dropping them reveals a secret, the text is shown without them (and redacted)
        joined = _INVISIBLE.sub("", text)
        red = _redact_all(joined)
        if red != joined:
            out = red
    if "<REDACTED>" in out and _WRAPPED.search(out):  # a key wrapped onto the next line: its continuation too
        out = _WRAPPED.sub(lambda m: f"<REDACTED>{m.group(1) or m.group(2)}<REDACTED>", out)
    if _CLIP_MARK in out:
        out = _mask_clip_edges(out)
    return _CACHE.keep(text, out) if short else out


# A tool output longer than an event keeps is clipped at load (loaders/common.py ``clip``: its two ends around
# "[... N characters clipped ...]"), before any redaction: a key the clip cut keeps a part that no longer has its
# shape. In what is shown, the token run touching either side of that marker is replaced.
_CLIP_MARK = " characters clipped ...]"
_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-.~"
_CLIP_EDGE_MIN = 8  # a shorter run is left as it is (no key fragment worth hiding, and words stay readable)
_CLIP_EDGE_MAX = 4096  # how far one edge is searched: a longer run keeps what lies beyond


def _mask_clip_edges(text: str) -> str:
    """``text`` with the run of token characters right before each clip marker's ``[...`` and right after its
    ``...]`` (whitespace between allowed) replaced by ``<CLIPPED>``. Linear: the backward scans cover disjoint
    stretches (never before the previous edge), each edge at most ``_CLIP_EDGE_MAX`` characters, in C
    (``str.rstrip``/``str.lstrip``)."""
    out: list[str] = []
    pos = 0
    while True:
        end = text.find(_CLIP_MARK, pos)
        if end < 0:
            break
        after = end + len(_CLIP_MARK)
        start = text.rfind("[... ", max(pos, end - 40), end)
        if start < 0:
            out.append(text[pos:after])
            pos = after
            continue
        before = text[max(pos, start - _CLIP_EDGE_MAX):start]
        lead = before.rstrip()
        run = len(lead) - len(lead.rstrip(_TOKEN_CHARS))
        keep = start - len(before) + len(lead) - run  # where the run before the marker starts
        out.append(text[pos:keep] + ("<CLIPPED>" if run >= _CLIP_EDGE_MIN else text[keep:keep + run])
                   + text[keep + run:after])
        following = text[after:after + _CLIP_EDGE_MAX]
        tail = following.lstrip()
        gap = len(following) - len(tail)
        run = len(tail) - len(tail.lstrip(_TOKEN_CHARS))
        out.append(following[:gap] + ("<CLIPPED>" if run >= _CLIP_EDGE_MIN else tail[:run]))
        pos = after + gap + run
    out.append(text[pos:])
    return "".join(out)


def _redact_all(text: str) -> str:
    """Each pattern in turn, on the text the previous ones left, where :func:`_runs` says it may match."""
    if _runs(_SECRET, text):
        text = _SECRET.sub("<REDACTED>", text)
    if _runs(_SHAPES, text):
        text = _SHAPES.sub("<REDACTED>", text)
    if _runs(_AUTH_HEADER, text):
        text = _AUTH_HEADER.sub(r"\1<REDACTED>", text)
    if _runs(_BEARER, text):
        text = _BEARER.sub(r"\1<REDACTED>", text)
    if _runs(_URL_CREDENTIALS, text):
        text = _URL_CREDENTIALS.sub(r"\1<REDACTED>@", text)
    if not _runs(_KEYVAL, text):
        return text
    return _KEYVAL.sub(lambda m: m.group(1) + ("<REDACTED>" if m.group(2) != "<REDACTED>" else m.group(2)), text)


# Terminal controls in agent-written text (trajectories, verifier output, judge answers): ESC starts CSI/OSC
# sequences that move the cursor, erase a FAILED line or set a window title; BEL, backspace and CR rewrite what a
# reader sees; C1 controls (0x80-0x9f) are 8-bit CSI/OSC on some terminals; U+2028/U+2029 break lines in editors;
# bidirectional overrides reorder what is shown (Trojan Source). Quoted text keeps them as visible escapes
# (``\x1b``, ``\u202e``), never raw. Unlike :func:`printable` (names), a backslash is not doubled: a quote is
# evidence to read, not an identity that must stay injective.
_CONTROLS_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]")
# the same but for text that may span lines (finding data, job meta, the audit JSON): \n and \t stay
_CONTROLS_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]")


def _escape_control(m: re.Match[str]) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def no_controls(text: str, lines: bool = False) -> str:
    """``text`` with every terminal control escaped (see ``_CONTROLS_LINE``); ``lines``: keep ``\\n`` and ``\\t``."""
    rx = _CONTROLS_TEXT if lines else _CONTROLS_LINE
    if not text or not rx.search(text):
        return text
    return rx.sub(_escape_control, text)


def _not_utf8(text: str) -> bool:
    """``text`` holds a file name that is not UTF-8 (lone surrogates, which xdist's transport and every report
    writer refuse)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean(text: str) -> str:
    """Evidence and error text for every human-facing output (terminal FAILED/WARN/N/A lines, verdict lines, the
    warnings summary, JUnit, CTRF, the reports): :func:`redact`-ed, one line (every control character escaped,
    ``\\n`` included) and writable as UTF-8 (a text with a file name that is not UTF-8 goes through
    :func:`printable`). ``engine.py`` applies it where every finding passes."""
    text = redact(text)
    return printable(text) if _not_utf8(text) else no_controls(text)


_TEXT_CACHE = ShortMemo()  # clean_text()


def clean_text(text: str) -> str:
    """:func:`clean` for text that may span lines (finding data, job meta): ``\\n`` and ``\\t`` are kept."""
    done = _TEXT_CACHE.get(text)
    if done is not None:
        return done
    out = redact(text)
    out = printable(out) if _not_utf8(out) else no_controls(out, lines=True)
    return _TEXT_CACHE.keep(text, out) if len(text) <= ShortMemo.MAX_CHARS else out


def redact_tree(value: Any) -> Any:
    """``value`` (JSON-like) with every string :func:`clean_text`-ed, dictionary keys included (a key that redacts to
    one already present keeps the first value; two counts are added, e.g. P7's ``by_title``)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [redact_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_tree(v) for v in value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            k2 = clean_text(k) if isinstance(k, str) else k
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


# The end of a private-key block (PEM, PuTTY): in a window cut out of a longer text its BEGIN line may lie
# before the window, so the block's remainder no longer has the shape :data:`SHAPES` knows.
_KEY_BLOCK_END = re.compile(r"-----END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----|Private-MAC:[ \t]*[0-9a-fA-F]+")
# How much more than the kept window :func:`tail_of` redacts: any key of a bounded shape that reaches into the
# window starts within this margin before it.
TAIL_MARGIN = 64 * 1024


def head_of(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, redacted BEFORE the cut: a key the cut would split is redacted
    whole, never shown in part (a part no longer has its shape)."""
    return redact(text)[:limit]


def tail_of(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text``, redacted before the cut (only the last ``limit + TAIL_MARGIN``
    characters are read). A private-key block whose BEGIN line lies before the window is redacted up to its END
    line."""
    text = redact(text[-(limit + TAIL_MARGIN):])
    if len(text) <= limit:
        return text
    out = text[len(text) - limit:]
    m = _KEY_BLOCK_END.search(out)
    if m and "-----BEGIN" not in out[:m.start()] and "PuTTY-User-Key-File" not in out[:m.start()]:
        out = "<REDACTED>" + out[m.end():]
    return out


def quote(text: str, limit: int = 200) -> str:
    """A short, single-line, redacted quote of at most ``limit`` characters (redacted before it is clipped, control
    characters escaped)."""
    text = no_controls(redact(" ".join((text or "").split())))
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
