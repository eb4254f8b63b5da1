"""Strict, hostile-input-safe file reading and decoding, shared by every loader.

Rules (the seed's advisor-audit.md, DESIGN.md):
- only regular files are opened; no path component below the job directory may be a symlink
  (each component is opened with ``O_NOFOLLOW`` relative to its parent's descriptor);
- FIFOs and devices are never read (``O_NONBLOCK`` open, then ``fstat`` must say regular file);
- a per-file byte limit is enforced on what is actually read (a file that grows while read is caught);
- text is decoded the way JSON detects encodings (UTF-8 with or without BOM, UTF-16, UTF-32), strictly;
- a file starting with ``{`` or ``[`` must be one JSON document or JSON Lines with every non-blank line valid.

Every failure raises :class:`UnusableInput` naming the file and the reason in one line.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from json import detect_encoding
from pathlib import Path
from typing import Any, TypeVar, cast

import orjson

from .model import UnusableInput
from .timebudget import tick

MB = 1024 * 1024
DEFAULT_MAX_FILE_BYTES = 512 * MB
DEFAULT_MAX_JOB_BYTES = 1024 * MB
# Events per job: the JSON objects and arrays one parse may build, the lines of a streamed JSON Lines file, the
# events of a loaded trajectory. Memory follows the number of values, not the bytes: ``[{},{},…]`` costs some
# 70 bytes of Python objects per 3 bytes of file, so the byte limits alone would let one file take many GB.
# Real trajectories hold a few thousand objects per MB (at most ~5,000/MB in the corpus) and about a thousand lines
# per MB of JSON Lines: a real trajectory of 100 MB or more stays under the limit, and a file of tiny objects at
# the limit costs some 45 MB. (docs/limits.md)
DEFAULT_MAX_EVENTS = 500_000

_MAX_EVENTS: contextvars.ContextVar[int] = contextvars.ContextVar("trajaudit_max_events", default=DEFAULT_MAX_EVENTS)
# the option that sets the limit, named in a refusal (the pytest plugin's, or the trajaudit audit command's)
_LIMIT_OPTION: contextvars.ContextVar[str] = contextvars.ContextVar("trajaudit_limit_option",
                                                                   default="--trajaudit-max-events")


@contextlib.contextmanager
def events_limit(limit: int, option: str | None = None) -> Iterator[None]:
    """Within the block, every parse (:func:`parse_text`, :func:`loads_bounded`, a streamed file) and every loaded
    trajectory is held to ``limit`` events (``--trajaudit-max-events``); ``option``: the option a refusal names
    instead (``trajaudit audit --max-events``)."""
    token = _MAX_EVENTS.set(limit)
    named = _LIMIT_OPTION.set(option) if option else None
    try:
        yield
    finally:
        _MAX_EVENTS.reset(token)
        if named is not None:
            _LIMIT_OPTION.reset(named)


def max_events() -> int:
    """The events limit in force (:func:`events_limit`, else :data:`DEFAULT_MAX_EVENTS`)."""
    return _MAX_EVENTS.get()


def too_many_events(path: str | Path, n: int, what: str = "") -> UnusableInput:
    limit = max_events()
    return UnusableInput(path, f"too many events ({n}{what} > limit {limit}; {_LIMIT_OPTION.get()})")


# A JSON string: what lies between its quotes is never an object or an array. Unrolled (a run of plain
# characters, then escapes each followed by a run): every character has one way to match, so the scan is linear.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_JSON_STRING_B = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def count_containers(text: str | bytes, limit: int) -> int:
    """The JSON objects and arrays in ``text`` when more than ``limit`` (exact for valid JSON), else a number no
    larger than ``limit``. Two C passes (counting brackets) settle almost every text; only a text with more
    brackets than ``limit`` has its strings blanked out (a linear scan, one copy) and its brackets counted again,
    so braces inside strings (code, JSON inside JSON) never count."""
    if isinstance(text, bytes):
        n = text.count(b"{") + text.count(b"[")
        if n <= limit:
            return n
        bare = _JSON_STRING_B.sub(b'""', text)
        return bare.count(b"{") + bare.count(b"[")
    n = text.count("{") + text.count("[")
    if n <= limit:
        return n
    plain = _JSON_STRING.sub('""', text)
    return plain.count("{") + plain.count("[")


def check_containers(text: str | bytes, path: str | Path) -> None:
    """Refuse, before it is parsed, a JSON text that would build more than :func:`max_events` objects and arrays."""
    limit = max_events()
    n = count_containers(text, limit)
    if n > limit:
        raise too_many_events(path, n, " JSON objects and arrays")


def loads_bounded(text: str | bytes, path: str | Path = "") -> Any:
    """``orjson.loads(text)`` held to the events limit (JSON found inside a trajectory: tool arguments, outputs)."""
    if len(text) > max_events():  # shorter text cannot hold more containers than the limit
        check_containers(text, path)
    return orjson.loads(text)

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = _OPEN_FLAGS | getattr(os, "O_DIRECTORY", 0)


@dataclass(slots=True)
class Budget:
    """Per-job byte budget shared by every file a job reads."""

    max_file: int = DEFAULT_MAX_FILE_BYTES
    max_job: int = DEFAULT_MAX_JOB_BYTES
    used: int = 0

    def charge(self, path: Path, n: int) -> None:
        self.used += n
        if self.used > self.max_job:
            raise UnusableInput(path, f"job exceeds the per-job size limit of {self.max_job} bytes")


def _open_nofollow(base: Path, rel: str) -> int:
    """Open ``base/rel`` walking each component with O_NOFOLLOW. Returns an fd or raises OSError."""
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise OSError(errno.EPERM, "path escapes the job directory")
    fd = os.open(base, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nfd
        if not parts:
            raise OSError(errno.EISDIR, "is a directory")
        ffd = os.open(parts[-1], _OPEN_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)
    return ffd


def file_kind(base: Path, rel: str) -> str:
    """'file', 'missing', 'symlink', 'dir' or 'special' for ``base/rel`` without following anything."""
    p = base
    parts = [x for x in Path(rel).parts if x not in ("", ".")]
    for i, part in enumerate(parts):
        p = p / part
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return "missing"
        except NotADirectoryError:
            return "missing"
        except OSError:
            return "special"
        if stat.S_ISLNK(st.st_mode):
            return "symlink"
        if i < len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
            return "missing"
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "special"


def _open_regular(base: Path, rel: str, max_file: int | None) -> int:
    """An fd on the regular file ``base/rel`` (no symlink anywhere below ``base``, not over ``max_file`` bytes
    unless ``max_file`` is None)."""
    path = base / rel
    try:
        fd = _open_nofollow(base, rel)
    except FileNotFoundError as exc:
        raise UnusableInput(path, "file not found") from exc
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or (exc.errno == errno.ENOTDIR and file_kind(base, rel) == "symlink"):
            raise UnusableInput(path, "is a symlink (symlinks are never followed)") from exc
        if file_kind(base, rel) == "symlink":
            raise UnusableInput(path, "is a symlink (symlinks are never followed)") from exc
        raise UnusableInput(path, f"cannot open: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnusableInput(path, "not a regular file (FIFOs, devices and directories are never read)")
        if max_file is not None and st.st_size > max_file:
            raise UnusableInput(path, f"{st.st_size} bytes exceeds the per-file size limit of {max_file} bytes")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(base: Path, rel: str, budget: Budget | None = None) -> bytes:
    """Read a regular file below ``base`` without following symlinks, within the size limits."""
    budget = budget or Budget()
    path = base / rel
    fd = _open_regular(base, rel, budget.max_file)
    try:
        # one read of the size fstat gave (plus one byte, to see growth): a large file is one buffer, never a list
        # of chunks and then their join (twice the file in memory); a file that grows while read is read on in
        # chunks up to the limit
        first = os.read(fd, os.fstat(fd).st_size + 1)
        chunks = [first]
        total = len(first)
        while first:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > budget.max_file:
                raise UnusableInput(path, f"grew past the per-file size limit of {budget.max_file} bytes while read")
            chunks.append(chunk)
        if total > budget.max_file:
            raise UnusableInput(path, f"grew past the per-file size limit of {budget.max_file} bytes while read")
        budget.charge(path, total)
        return first if len(chunks) == 1 else b"".join(chunks)
    except OSError as exc:
        raise UnusableInput(path, f"cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(data: bytes, path: str | Path) -> str:
    """Decode bytes the JSON way (RFC 8259 / json.detect_encoding), strictly. Empty, NUL-bearing, or non-UTF-8
    text that is not JSON → unusable."""
    # isspace() rather than strip(): the same test without a copy of a large file
    if not data or data.isspace():
        raise UnusableInput(path, "empty file")
    enc = detect_encoding(data)
    try:
        text = data.decode(enc)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UnusableInput(path, f"does not decode as {enc}: {exc.reason if hasattr(exc, 'reason') else exc}") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text or text.isspace():
        raise UnusableInput(path, "empty file")
    if "\x00" in text:
        raise UnusableInput(path, "contains NUL characters (binary data, not text)")
    if enc not in ("utf-8", "utf-8-sig") and not looks_like_json(text):
        # JSON's encoding detection (UTF-16/32 by BOM or NUL pattern) is only meaningful for JSON text:
        # a BOM followed by garbage must not pass as a plain-text transcript
        raise UnusableInput(path, f"decodes as {enc} but is not JSON (plain text must be UTF-8)")
    return text


@dataclass(slots=True)
class Parsed:
    kind: str  # "json" | "jsonl" | "text" | "zip"
    value: Any  # the document, the list of line values (None for blank lines skipped), the text, or a SafeZip
    text: str
    lines: list[int] | None = None  # 1-based source line number of each JSONL value
    offsets: list[int] | None = None  # character offset in ``text`` where each JSONL value's line starts
    stream: Any = None  # a JsonlStream when the lines are read lazily: ``value``/``lines`` then hold the head only
    memo: dict[str, Any] | None = None  # what format modules derive from the document once (see :func:`derived`)

    def records(self) -> Any:
        """``(value, line number)`` of every JSON Lines value, streamed from the file when ``stream`` is set: the
        head values are handed over (``value`` and ``lines`` become empty, so nothing else keeps them) and the rest
        is read line by line; a streamed Parsed is read once."""
        if self.stream is not None:
            head = list(zip(self.value, self.lines or [], strict=False))
            self.value, self.lines = [], []
            return self.stream.records(head)
        return zip(self.value, self.lines or [], strict=False)


_T = TypeVar("_T")


def derived(parsed: Parsed, key: str, build: Callable[[], _T]) -> _T:
    """``build()`` computed once per parsed document and kept with it under ``key``: a multi-record file's index
    of its records (``loaders/multi.py`` keeps one Parsed per file for all of its records), so loading each record
    looks it up instead of walking the whole document again. What ``build`` raises is not kept."""
    memo = parsed.memo
    if memo is None:
        memo = parsed.memo = {}
    try:
        return cast(_T, memo[key])  # what build() returned for this key
    except KeyError:
        value = memo[key] = build()
        return value


def looks_like_json(text: str) -> bool:
    s = text.lstrip()
    return bool(s) and s[0] in "{["


def parse_text(text: str, path: str | Path, *, log_lines: bool = False) -> Parsed:
    """One JSON document, or JSON Lines with every non-blank line valid, or plain text.

    ``log_lines`` (only for CLI stdout captures such as Harbor's ``agent/claude-code.txt``, where the CLI
    interleaves plain-text warnings with its JSON stream): a line that does not start with ``{`` or ``[`` is
    kept as a string value instead of failing; a line that starts like JSON must still parse. Also when the text
    itself starts with such a line: a capture whose first line is a warning is still the CLI's JSON stream."""
    if not looks_like_json(text) and not (log_lines and _JSON_LINE.search(text)):
        return Parsed("text", text, text)
    check_containers(text, path)  # before anything is built (also bounds the JSON Lines read below)
    try:
        return Parsed("json", orjson.loads(text), text)
    except orjson.JSONDecodeError as whole_err:
        values: list[Any] = []
        linenos: list[int] = []
        offsets: list[int] = []
        if not _two_nonblank_lines(text):
            raise UnusableInput(path, f"starts like JSON but is not valid JSON: {_short(whole_err)}") from None
        pos = 0
        for i, line in enumerate(_lines(text), 1):  # one line at a time: never a second copy of the whole text
            tick()
            start, pos = pos, pos + len(line) + 1
            if not line.strip():
                continue
            offsets.append(start)
            if log_lines and line.lstrip()[:1] not in ("{", "["):
                values.append(line)
                linenos.append(i)
                continue
            try:
                values.append(orjson.loads(line))
            except orjson.JSONDecodeError as err:
                raise UnusableInput(
                    path, f"neither one JSON document nor JSON Lines: line {i}: {_short(err)}"
                ) from None
            linenos.append(i)
        return Parsed("jsonl", values, text, linenos, offsets)


_JSON_LINE = re.compile(r"\n[ \t]*[{\[]")  # a line, not the first, that starts like JSON
_NONSPACE = re.compile(r"\S")  # str.isspace()'s complement: a line that is not blank for str.strip()


def _two_nonblank_lines(text: str) -> bool:
    """``text.split("\\n")`` has two or more lines that are not blank, found without splitting."""
    first = _NONSPACE.search(text)
    if first is None:
        return False
    nl = text.find("\n", first.end())
    return nl != -1 and _NONSPACE.search(text, nl) is not None


def _lines(text: str) -> Iterator[str]:
    """``text.split("\\n")``, one line at a time."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end == -1:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _short(err: Exception) -> str:
    msg = str(err)
    return msg if len(msg) <= 160 else msg[:157] + "..."


def load_parsed(base: Path, rel: str, budget: Budget | None = None) -> Parsed:
    data = read_bytes(base, rel, budget)
    path = base / rel
    return parse_text(decode_text(data, path), path)


def load_json_object(base: Path, rel: str, budget: Budget | None = None) -> dict[str, Any]:
    """A file that must hold one JSON object (result.json, ctrf.json, ...)."""
    path = base / rel
    parsed = load_parsed(base, rel, budget)
    if parsed.kind != "json" or not isinstance(parsed.value, dict):
        raise UnusableInput(path, "expected one JSON object")
    return parsed.value


# --- collection-time peeks, streaming lines, zip archives ------------------------------------------------------

HEAD_BYTES = 4096  # what collection reads of a loose candidate file to recognise its format


def read_head(base: Path, rel: str, n: int = HEAD_BYTES) -> bytes:
    """The first ``n`` bytes of a regular file below ``base`` (same no-symlink/regular-file rules as
    :func:`read_bytes`; no size limit: only ``n`` bytes are read, and an oversized file must still be recognised
    so that its listing can report the limit). Used at collection to recognise a multi-record file."""
    fd = _open_regular(base, rel, None)
    try:
        return os.read(fd, n)
    except OSError as exc:
        raise UnusableInput(base / rel, f"cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def iter_lines(base: Path, rel: str, max_file: int = DEFAULT_MAX_FILE_BYTES, chunk: int = 1 << 20,
               keep_newline: bool = False) -> Iterator[tuple[int, bytes]]:
    """Stream ``(line number, raw line bytes)`` of a regular file below ``base`` in one pass, holding at most one
    line (plus one buffer of ``chunk`` bytes) in memory; blank lines are skipped. The per-file limit is enforced
    on the bytes actually read: no line is read past it. (C's buffered ``readline`` does the splitting: a Python
    loop over read blocks cost as much as parsing the JSON.) A line comes without its ``\n``, or with it when
    ``keep_newline`` (for a JSON parser, to which it is whitespace: no copy of each line)."""
    path = base / rel
    fd = _open_regular(base, rel, max_file)
    with os.fdopen(fd, "rb", buffering=max(chunk, 16)) as fh:  # closes fd (buffering=1 would mean "by line")
        total = 0
        lineno = 0
        while True:
            try:
                line = fh.readline(max_file - total + 1)
            except OSError as exc:
                raise UnusableInput(path, f"cannot read: {exc.strerror or exc}") from exc
            if not line:
                break
            total += len(line)
            if total > max_file:
                raise UnusableInput(path, f"grew past the per-file size limit of {max_file} bytes while read")
            lineno += 1
            if not line.isspace():
                yield lineno, (line if keep_newline or line[-1:] != b"\n" else line[:-1])


STREAM_HEAD_VALUES = 50  # values parsed eagerly from a streamed JSON Lines file (format detection reads the first 50)
STREAM_CHUNK = 1 << 18  # bytes per read of a streamed file (a line longer than this spans several reads)


class JsonlStream:
    """A UTF-8 JSON Lines file read line by line (:func:`iter_lines`): one line in memory at a time, every
    non-blank line strictly valid JSON (``log_lines``: a line that does not start like JSON is kept as a string,
    as :func:`parse_text` does). Each call of :meth:`records` reads the file again from the start."""

    def __init__(self, base: Path, rel: str, max_file: int, log_lines: bool = False) -> None:
        self.base, self.rel, self.max_file, self.log_lines = base, rel, max_file, log_lines
        self.path = base / rel
        self.size = 0

    def records(self, head: list[tuple[Any, int]] | None = None) -> Iterator[tuple[Any, int]]:
        """Every ``(value, line number)``: first the already parsed ``head`` (released one by one), then the lines
        after it, read from the file."""
        head = head or []
        last = head[-1][1] if head else 0
        head.reverse()
        while head:
            yield head.pop()
        limit = max_events()
        lines = iter_lines(self.base, self.rel, self.max_file, STREAM_CHUNK, keep_newline=True)
        for n, (lineno, raw) in enumerate(lines, 1):  # n: non-blank lines, head included (each one a record)
            tick()
            if n > limit:
                raise too_many_events(self.path, n, " lines, or more")
            if lineno > last:
                yield self.decode(lineno, raw), lineno

    def decode(self, lineno: int, raw: bytes) -> Any:
        """One line (its ``\n`` may still end it). A NUL byte is refused as binary data: looked for only where
        the line is not JSON, since strict JSON (orjson) has no raw NUL, inside a string or out."""
        if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        if self.log_lines and raw.lstrip()[:1] not in (b"{", b"["):
            if b"\x00" in raw:
                raise UnusableInput(self.path, "contains NUL characters (binary data, not text)")
            try:
                return raw.removesuffix(b"\n").decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UnusableInput(self.path, f"does not decode as utf-8: line {lineno}: {exc.reason}") from None
        if len(raw) > max_events():  # one line of tiny objects must not build more than a whole file may
            check_containers(raw, self.path)
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as err:
            if b"\x00" in raw:
                raise UnusableInput(self.path, "contains NUL characters (binary data, not text)") from None
            raise UnusableInput(self.path, f"neither one JSON document nor JSON Lines: line {lineno}: {_short(err)}") \
                from None


def open_jsonl_stream(base: Path, rel: str, max_file: int, *, log_lines: bool = False) -> Parsed | None:
    """A streamed ``Parsed(kind="jsonl")`` of ``base/rel`` when the file is certainly JSON Lines in UTF-8 (its first
    non-blank line is a JSON object or array on its own and another non-blank line follows: then the file cannot be
    one JSON document, so :func:`parse_text` would read it as JSON Lines too), else None (read it whole). The head
    values are parsed now; the rest is read by :meth:`Parsed.records`. The caller charges ``stream.size`` to the
    job's budget once it keeps the stream."""
    fd = _open_regular(base, rel, max_file)
    try:
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    head = read_head(base, rel, HEAD_BYTES)
    if detect_encoding(head) not in ("utf-8", "utf-8-sig") or \
            head.removeprefix(codecs.BOM_UTF8).lstrip()[:1] not in (b"{", b"["):
        return None
    stream = JsonlStream(base, rel, max_file, log_lines)
    stream.size = size
    values: list[Any] = []
    linenos: list[int] = []
    first = True
    for lineno, raw in iter_lines(base, rel, max_file, STREAM_CHUNK):
        if first:
            first = False
            try:
                loads_bounded(raw.removeprefix(codecs.BOM_UTF8), stream.path)
            except orjson.JSONDecodeError:
                return None  # e.g. a pretty-printed document: parse_text decides
        values.append(stream.decode(lineno, raw))
        linenos.append(lineno)
        if len(values) >= STREAM_HEAD_VALUES:
            break
    if len(values) < 2:
        return None  # one line: one JSON document
    return Parsed("jsonl", values, "", linenos, None, stream)


ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header, or the end record of an empty archive
MAX_ZIP_ENTRIES = 100_000
_DRIVE = re.compile(r"^[A-Za-z]:")


def is_zip(data: bytes) -> bool:
    return data[:4] in ZIP_MAGIC


class SafeZip:
    """A zip archive read from memory (or, for listing, from an open file: only its central directory), with
    every member checked before anything is decompressed: no absolute or ``..`` names, no duplicate names, no
    nested archives, no encryption, only stored/deflate members, each member's declared size within the per-file
    limit. Reading a member counts the bytes actually decompressed against the same limit (and its declared
    size): a lying header cannot inflate past it. Nothing is ever extracted to disk."""

    def __init__(self, source: bytes | Any, path: str | Path, max_file: int = DEFAULT_MAX_FILE_BYTES) -> None:
        import io
        import zipfile

        self.path = path
        self.max_file = max_file
        self.budget: Budget | None = None  # the loading job's budget: decompressed bytes are charged to it
        fh = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
        try:
            self._zf = zipfile.ZipFile(fh)
            infos = self._zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, RuntimeError) as exc:
            raise UnusableInput(path, f"not a valid zip archive: {_short(exc)}") from None
        if len(infos) > MAX_ZIP_ENTRIES:
            raise UnusableInput(path, f"zip archive has {len(infos)} entries (more than {MAX_ZIP_ENTRIES})")
        seen: set[str] = set()
        self._infos: dict[str, Any] = {}
        for info in infos:
            name = info.filename
            bad = _bad_member_name(name)
            if bad:
                raise UnusableInput(path, f"zip member {name[:120]!r}: {bad}")
            if name in seen:
                raise UnusableInput(path, f"zip member {name[:120]!r} appears more than once")
            seen.add(name)
            if info.is_dir():
                continue
            if info.flag_bits & 0x1:
                raise UnusableInput(path, f"zip member {name[:120]!r} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise UnusableInput(path, f"zip member {name[:120]!r} uses unsupported compression "
                                          f"(method {info.compress_type}; only stored and deflate are read)")
            if name.lower().endswith((".zip", ".eval", ".jar", ".whl")):
                raise UnusableInput(path, f"zip member {name[:120]!r} is a nested archive (never opened)")
            if info.file_size > max_file:
                raise UnusableInput(path, f"zip member {name[:120]!r} declares {info.file_size} bytes, over the "
                                          f"per-file size limit of {max_file} bytes")
            self._infos[name] = info

    def names(self) -> list[str]:
        """Member file names in archive order (directories left out)."""
        return list(self._infos)

    def read(self, name: str, budget: Budget | None = None) -> bytes:
        import zipfile
        import zlib

        budget = budget or self.budget
        info = self._infos.get(name)
        if info is None:
            raise UnusableInput(self.path, f"zip member {name[:120]!r} not found")
        limit = min(info.file_size, self.max_file)
        chunks: list[bytes] = []
        total = 0
        try:
            with self._zf.open(info) as fh:
                while True:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > limit:
                        raise UnusableInput(self.path, f"zip member {name[:120]!r} inflates past "
                                                       f"{'its declared size' if limit == info.file_size else 'the per-file size limit'} "
                                                       f"({limit} bytes)")
                    chunks.append(chunk)
        except UnusableInput:
            raise
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, RuntimeError, zlib.error) as exc:
            raise UnusableInput(self.path, f"zip member {name[:120]!r} is corrupt: {_short(exc)}") from None
        data = b"".join(chunks)
        if is_zip(data):
            raise UnusableInput(self.path, f"zip member {name[:120]!r} is a nested zip archive (never opened)")
        if budget is not None:
            budget.charge(Path(str(self.path)), len(data))
        return data

    def read_json(self, name: str, budget: Budget | None = None) -> Any:
        """A member that must hold one JSON document, decoded and parsed strictly."""
        label = f"{self.path}!{name}"
        parsed = parse_text(decode_text(self.read(name, budget), label), label)
        if parsed.kind != "json":
            raise UnusableInput(self.path, f"zip member {name[:120]!r} is not one JSON document")
        return parsed.value

    def close(self) -> None:
        self._zf.close()


def _bad_member_name(name: str) -> str | None:
    if not name or "\x00" in name:
        return "empty name or NUL in name"
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "absolute member name"
    if ".." in re.split(r"[\\/]", name):
        return "member name escapes the archive ('..')"
    return None


class open_zip:  # noqa: N801 - used as a context manager like open()
    """``with open_zip(base, rel, max_file) as z:`` — the central directory of a zip file below ``base`` (no symlinks,
    regular file, within the per-file limit), read through the file without loading it; for cheap listings."""

    def __init__(self, base: Path, rel: str, max_file: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self.base, self.rel, self.max_file = base, rel, max_file
        self._fh: Any = None
        self._zip: SafeZip | None = None

    def __enter__(self) -> SafeZip:
        fd = _open_regular(self.base, self.rel, self.max_file)
        self._fh = os.fdopen(fd, "rb")
        try:
            self._zip = SafeZip(self._fh, self.base / self.rel, self.max_file)
        except BaseException:
            self._fh.close()
            raise
        return self._zip

    def __exit__(self, *exc: Any) -> None:
        if self._zip is not None:
            self._zip.close()
        if self._fh is not None:
            self._fh.close()


def parse_bytes(data: bytes, path: str | Path, max_file: int = DEFAULT_MAX_FILE_BYTES) -> Parsed:
    """A zip archive (``Parsed(kind="zip", value=SafeZip)``, e.g. an Inspect ``.eval``) or strict text/JSON."""
    if is_zip(data):
        return Parsed("zip", SafeZip(data, path, max_file), "")
    return parse_text(decode_text(data, path), path)
