"""Strict, hostile-input-safe file reading and decoding, shared by every loader.

Rules (advisor-audit.md, DESIGN.md):
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
import errno
import os
import stat
from dataclasses import dataclass
from json import detect_encoding
from pathlib import Path
from typing import Any

import orjson

from .model import UnusableInput

MB = 1024 * 1024
DEFAULT_MAX_FILE_BYTES = 512 * MB
DEFAULT_MAX_JOB_BYTES = 1024 * MB

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


def read_bytes(base: Path, rel: str, budget: Budget | None = None) -> bytes:
    """Read a regular file below ``base`` without following symlinks, within the size limits."""
    budget = budget or Budget()
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
        if st.st_size > budget.max_file:
            raise UnusableInput(path, f"{st.st_size} bytes exceeds the per-file size limit of {budget.max_file} bytes")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > budget.max_file:
                raise UnusableInput(path, f"grew past the per-file size limit of {budget.max_file} bytes while read")
            chunks.append(chunk)
        budget.charge(path, total)
        return b"".join(chunks)
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
    if not data.strip():
        raise UnusableInput(path, "empty file")
    enc = detect_encoding(data)
    try:
        text = data.decode(enc)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UnusableInput(path, f"does not decode as {enc}: {exc.reason if hasattr(exc, 'reason') else exc}") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
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
    kind: str  # "json" | "jsonl" | "text"
    value: Any  # the document, the list of line values (None for blank lines skipped), or the text
    text: str
    lines: list[int] | None = None  # 1-based source line number of each JSONL value


def looks_like_json(text: str) -> bool:
    s = text.lstrip()
    return bool(s) and s[0] in "{["


def parse_text(text: str, path: str | Path, *, log_lines: bool = False) -> Parsed:
    """One JSON document, or JSON Lines with every non-blank line valid, or plain text.

    ``log_lines`` (only for CLI stdout captures such as Harbor's ``agent/claude-code.txt``, where the CLI
    interleaves plain-text warnings with its JSON stream): a line that does not start with ``{`` or ``[`` is
    kept as a string value instead of failing; a line that starts like JSON must still parse."""
    if not looks_like_json(text):
        return Parsed("text", text, text)
    try:
        return Parsed("json", orjson.loads(text), text)
    except orjson.JSONDecodeError as whole_err:
        values: list[Any] = []
        linenos: list[int] = []
        lines = text.split("\n")
        if len(lines) < 2 or sum(1 for ln in lines if ln.strip()) < 2:
            raise UnusableInput(path, f"starts like JSON but is not valid JSON: {_short(whole_err)}") from None
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
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
        return Parsed("jsonl", values, text, linenos)


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
