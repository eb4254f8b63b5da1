"""Multi-record files indexed by the byte span of each record, parsed one record at a time.

A multi-record file's bytes are held once (one ``bytes`` object; never an ``mmap``, which a file truncated while
mapped would turn into a SIGBUS); one streaming pass over them finds where each record lies and parses each record
once to validate it and keep the few fields its format module lists records by (a run id, an instance id); the
record itself is dropped. A record's trajectory is built from its own slice when its first item needs it. So what
stays in memory is the file's bytes and a small index, never the Python objects of the whole document.

Two shapes:

- a **JSON document** (:func:`document`): the containers along the record paths a format names (e.g. ``tasks[*]
  .runs`` of a trace-grader file, ``samples`` of an Inspect log) are walked token by token; every object in an array
  at a record path is a :class:`Span`; every other value is parsed with orjson from its own slice;
- **JSON Lines** (:func:`lines`): every non-blank line that holds an object is a :class:`Span`.

Both raise :class:`Declined` whenever the file is not certainly of that shape in UTF-8 (another encoding, a NUL
byte, a file that is not valid JSON, more containers than the events limit, nesting deeper than orjson's 1,024
levels, any token out of place): the caller then parses the file whole (``safeio.parse_bytes``), which gives the
same values or the exact one-line error it always gives. Bad input never gets an error of this module's own.

The tokenizer is linear: every quantifier is possessive and every alternative starts with a different character,
so each byte has one way to match and nothing is tried twice; a JSON string is matched whole (an escape is a
backslash and the character after it); a container is skipped by one pattern matching up to :data:`NEST` levels
of nesting in C (a deeper one by a loop over its brackets, which counts the depth). A container on the way to the
records is scanned once, while it is walked. Brackets, quotes and escapes inside strings never count.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass
from json import detect_encoding
from typing import Any

import orjson

from ..safeio import max_events

ORJSON_DEPTH = 1024  # orjson refuses deeper nesting: a document deeper than this must fail as the whole parse does
HEAD = 50  # records parsed whole for format detection in each record list (the sniffers look at the first 50)

_WS = re.compile(rb"[ \t\n\r]*+")
_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*+")  # bytes.isspace()
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_SCALAR = re.compile(rb'[^ \t\n\r,:\[\]{}"]++')
_PLAIN = rb'[^"\[\]{}]++'
_STR = rb'"(?:[^"\\]++|\\.)*+"'
NEST = 8


def _nested(levels: int) -> re.Pattern[bytes]:
    """A container holding at most ``levels`` levels of containers (itself included), strings skipped whole."""
    c = rb"[\[{](?>" + _PLAIN + rb"|" + _STR + rb")*+[\]}]"
    for _ in range(levels - 1):
        c = rb"[\[{](?>" + _PLAIN + rb"|" + _STR + rb"|" + c + rb")*+[\]}]"
    return re.compile(c, re.S)


_CONTAINER = _nested(NEST)
_SKIP = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.S)  # up to the next bracket outside strings
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")


Fields = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Spec:
    """How a format module's multi-record files are indexed: ``paths``, the record paths of a JSON document
    (:func:`document`; None: not read as one), ``jsonl``, whether a JSON Lines file's lines are its records
    (:func:`lines`), and ``fields``, what of a parsed record its index keeps (read back with :meth:`Span.get`)."""

    paths: tuple[tuple[str, ...], ...] | None
    jsonl: bool
    fields: Fields


def keep(*keys: str) -> Fields:
    """A :attr:`Spec.fields` keeping the record's own members ``keys`` (those it has)."""
    return lambda rec: {k: rec[k] for k in keys if k in rec}


class Declined(Exception):
    """The bytes are not a file this module indexes (the caller parses it whole)."""


class Span:
    """One record: the slice ``buf[start:end]`` holding a JSON object, and the few of its top-level members its
    format module asked for (``get`` reads them, like ``dict.get``)."""

    __slots__ = ("buf", "start", "end", "fields")

    def __init__(self, buf: memoryview, start: int, end: int, fields: dict[str, Any]) -> None:
        self.buf, self.start, self.end, self.fields = buf, start, end, fields

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def load(self) -> Any:
        """The record parsed from its own slice."""
        return orjson.loads(self.buf[self.start:self.end])

    def text(self) -> str:
        """The record's own text."""
        return str(self.buf[self.start:self.end], "utf-8")

    def __repr__(self) -> str:
        return f"Span({self.start}, {self.end})"


def resolve(value: Any) -> Any:
    """A record parsed (a :class:`Span`'s slice), or the value itself."""
    return value.load() if isinstance(value, Span) else value


# --------------------------------------------------------------------------- tokens


def skip_ws(buf: bytes | memoryview, pos: int) -> int:
    return _WS.match(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string


def container_end(buf: bytes | memoryview, pos: int, depth: int = 0) -> int:
    """The end of the object or array opening at ``buf[pos]`` (``depth``: the containers around it). Counts
    brackets only (orjson checks that they pair when the slice is parsed); raises :class:`Declined` when the
    container is cut off, holds an unterminated string, or nests deeper than orjson parses."""
    m = _CONTAINER.match(buf, pos)
    if m is not None:
        if depth + NEST > ORJSON_DEPTH:
            raise Declined("nested too deep")
        return m.end()
    n = len(buf)
    level = 0
    skip = _SKIP.match
    while True:
        pos = skip(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string
        if pos >= n:
            raise Declined("cut off inside a container")
        c = buf[pos]
        if c in _OPEN:
            level += 1
            if depth + level > ORJSON_DEPTH:
                raise Declined("nested too deep")
        elif c in _CLOSE:
            level -= 1
            if level == 0:
                return pos + 1
        else:
            raise Declined("unterminated string")
        pos += 1


def value_end(buf: bytes | memoryview, pos: int, depth: int = 0) -> int:
    """The end of the JSON value starting at ``buf[pos]`` (no whitespace before it)."""
    if pos >= len(buf):
        raise Declined("value expected")
    c = buf[pos]
    if c in _OPEN:
        return container_end(buf, pos, depth)
    m = (_STRING if c == 0x22 else _SCALAR).match(buf, pos)
    if m is None:
        raise Declined("value expected")
    return m.end()


Item = Callable[[int, int], tuple[Any, int]]  # (value start, depth) -> (what to keep of it, its end)


def _span(buf: bytes | memoryview) -> Item:
    """An :data:`Item` keeping ``(start, end)`` of each value."""

    def item(pos: int, depth: int) -> tuple[Any, int]:
        end = value_end(buf, pos, depth)
        return (pos, end), end

    return item


def _array(buf: bytes | memoryview, pos: int, depth: int, item: Item) -> tuple[list[Any], int]:
    """``item`` of each element of the array opening at ``buf[pos]`` (each element scanned once, by ``item``),
    and the array's end."""
    out: list[Any] = []
    pos = skip_ws(buf, pos + 1)
    if buf[pos:pos + 1] == b"]":
        return out, pos + 1
    while True:
        kept, end = item(pos, depth + 1)
        out.append(kept)
        pos = skip_ws(buf, end)
        c = buf[pos:pos + 1]
        if c == b"]":
            return out, pos + 1
        if c != b",":
            raise Declined("',' or ']' expected")
        pos = skip_ws(buf, pos + 1)


def _object(buf: bytes | memoryview, pos: int, depth: int,
            member: Callable[[str, int, int], tuple[Any, int]]) -> tuple[list[tuple[str, Any]], int]:
    """``(key, member(key, value start, depth))`` of each member of the object opening at ``buf[pos]`` (each value
    scanned once, by ``member``), and the object's end."""
    out: list[tuple[str, Any]] = []
    pos = skip_ws(buf, pos + 1)
    if buf[pos:pos + 1] == b"}":
        return out, pos + 1
    while True:
        m = _STRING.match(buf, pos)
        if m is None:
            raise Declined("key expected")
        key = _loads(buf[pos:m.end()])
        pos = skip_ws(buf, m.end())
        if buf[pos:pos + 1] != b":":
            raise Declined("':' expected")
        pos = skip_ws(buf, pos + 1)
        kept, end = member(key, pos, depth + 1)
        out.append((key, kept))
        pos = skip_ws(buf, end)
        c = buf[pos:pos + 1]
        if c == b"}":
            return out, pos + 1
        if c != b",":
            raise Declined("',' or '}' expected")
        pos = skip_ws(buf, pos + 1)


def array_items(buf: bytes | memoryview, pos: int, depth: int = 0) -> tuple[list[tuple[int, int]], int]:
    """The spans of the elements of the array opening at ``buf[pos]``, and the array's end."""
    return _array(buf, pos, depth, _span(buf))


def object_members(buf: bytes | memoryview, pos: int, depth: int = 0) -> tuple[list[tuple[str, int, int]], int]:
    """``(key, value start, value end)`` of each member of the object opening at ``buf[pos]``, and its end."""
    item = _span(buf)
    members, end = _object(buf, pos, depth, lambda key, p, d: item(p, d))
    return [(key, s, e) for key, (s, e) in members], end


def _loads(raw: bytes | memoryview) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise Declined(str(exc)) from None


# --------------------------------------------------------------------------- documents


def _plain_utf8(data: bytes) -> int | None:
    """Where the JSON text starts (after a UTF-8 BOM), when ``data`` is UTF-8 text that starts like JSON, has no
    NUL byte and holds no more containers than the events limit (counting brackets in strings too: more than
    the limit is left to the whole parse, which counts exactly); else None."""
    if not data or detect_encoding(data) not in ("utf-8", "utf-8-sig"):
        return None
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    first = skip_ws(data, start)
    if data[first:first + 1] not in (b"{", b"["):
        return None
    if b"\x00" in data or data.count(b"{") + data.count(b"[") > max_events():
        return None
    return start


Path_ = tuple[str, ...]


def _prefixes(paths: tuple[Path_, ...]) -> frozenset[Path_]:
    return frozenset(p[:i] for p in paths for i in range(len(p)))


class _Walk:
    def __init__(self, buf: memoryview, paths: tuple[Path_, ...], fields: Fields) -> None:
        self.buf, self.paths, self.prefixes, self.fields = buf, frozenset(paths), _prefixes(paths), fields

    def value(self, pos: int, at: Path_, depth: int) -> tuple[Any, int]:
        buf = self.buf
        c = buf[pos] if pos < len(buf) else -1
        if c == 0x5B and at in self.paths:  # '[' at a record path: its objects become spans
            return _array(buf, pos, depth, self.record)
        if c == 0x5B and at + ("*",) in self.prefixes:
            return _array(buf, pos, depth, lambda p, d: self.value(p, at + ("*",), d))
        if c == 0x7B and at in self.prefixes:
            members, end = _object(buf, pos, depth, lambda key, p, d: self.value(p, at + (key,), d))
            return dict(members), end  # a repeated key: the last wins at the first one's place, as in orjson
        end = value_end(buf, pos, depth)
        return _loads(buf[pos:end]), end

    def record(self, pos: int, depth: int) -> tuple[Any, int]:
        """An object: its span, the record parsed once (which validates it) for the fields kept; anything else
        parsed."""
        end = value_end(self.buf, pos, depth)
        rec = _loads(self.buf[pos:end])
        if self.buf[pos] != 0x7B:
            return rec, end
        return Span(self.buf, pos, end, self.fields(rec)), end


def document(data: bytes, paths: tuple[Path_, ...], fields: Fields) -> Any:
    """The JSON document in ``data`` with every object of an array at one of ``paths`` a :class:`Span` (a path
    is a tuple of keys, ``"*"`` standing for any element of an array; ``()`` is the document itself), keeping
    ``fields(record)`` of each; everything off those paths parsed. Raises :class:`Declined`."""
    start = _plain_utf8(data)
    if start is None:
        raise Declined("not UTF-8 JSON")
    buf = memoryview(data)
    pos = skip_ws(buf, start)
    value, end = _Walk(buf, paths, fields).value(pos, (), 0)
    if skip_ws(buf, end) != len(buf):
        raise Declined("text after the document")
    return value


def lines(data: bytes, fields: Fields) -> tuple[list[Any], list[int]]:
    """JSON Lines: one value per non-blank line (an object a :class:`Span` of its line without the ``\\n``,
    keeping ``fields(record)``; anything else parsed) and its 1-based line number. Declines a file that could be one
    JSON document (fewer than two non-blank lines, or a first line that is not a value on its own)."""
    start = _plain_utf8(data)
    if start is None:
        raise Declined("not UTF-8 JSON")
    buf = memoryview(data)
    values: list[Any] = []
    numbers: list[int] = []
    n = len(data)
    pos, lineno = start, 0
    while pos < n:
        nl = data.find(b"\n", pos)
        end = n if nl < 0 else nl
        lineno += 1
        if _BLANK.match(data, pos, end).end() < end:  # type: ignore[union-attr]  # not blank
            value = _loads(buf[pos:end])
            if isinstance(value, dict):
                value = Span(buf, pos, end, fields(value))
            values.append(value)
            numbers.append(lineno)
        pos = end + 1
    if len(values) < 2:
        raise Declined("fewer than two lines: one JSON document")
    return values, numbers


def view(value: Any, paths: tuple[Path_, ...], head: int = HEAD) -> Any:
    """A copy of ``value`` (from :func:`document`) for format detection: the first ``head`` records of each
    record list among the first ``head`` elements of every list around it parsed whole, the others left as spans
    (detection reads the first 50 of a list): at most ``head`` × ``head`` records for ``tasks[*].runs``."""
    return _view(value, (), frozenset(paths), _prefixes(paths), head)


def _view(value: Any, at: Path_, paths: frozenset[Path_], prefixes: frozenset[Path_], head: int) -> Any:
    if isinstance(value, list) and at in paths:
        return [resolve(v) for v in value[:head]] + value[head:]
    if isinstance(value, list) and at + ("*",) in prefixes:  # e.g. the first tasks, holding records
        return [_view(v, at + ("*",), paths, prefixes, head) for v in value[:head]] + value[head:]
    if isinstance(value, dict) and at in prefixes:
        return {k: _view(v, at + (k,), paths, prefixes, head) for k, v in value.items()}
    return value


__all__ = ["Span", "Spec", "keep", "Declined", "resolve", "document", "lines", "view", "container_end", "value_end",
           "array_items", "object_members"]
