"""Strict parsing and schema validation of a judge's answer text (no litellm here)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)\r?\n?```\Z", re.S)


class AnswerError(ValueError):
    """The answer text is not one valid JSON object (message says why)."""


def _no_dupes(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise AnswerError(f"invalid JSON: duplicate key {k!r}")
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise AnswerError(f"invalid JSON: {name} is not allowed")


def parse_answer(text: str | None) -> dict[str, Any]:
    """One JSON object, optionally inside a single Markdown code fence that wraps the whole answer. Anything
    else — empty text, prose around the object, two objects, duplicate keys, NaN/Infinity, an array — fails."""
    if text is None or not text.strip():
        raise AnswerError("empty answer")
    s = text.strip()
    m = _FENCE.match(s)
    if m:
        s = m.group(1).strip()
    try:
        value = json.loads(s, object_pairs_hook=_no_dupes, parse_constant=_no_constant)
    except AnswerError:
        raise
    except ValueError as exc:
        raise AnswerError(f"invalid JSON: {exc}; answer starts {text.strip()[:80]!r}") from None
    if not isinstance(value, dict):
        raise AnswerError(f"invalid JSON: expected an object, got {type(value).__name__}")
    return value


@functools.lru_cache(maxsize=64)
def _validator(schema_json: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(value: Any, schema: dict[str, Any]) -> str | None:
    """None when ``value`` satisfies ``schema``; otherwise 'schema violation at $.path: message' (the most
    relevant error). A schema that is itself invalid is reported as such."""
    from jsonschema import exceptions

    try:
        v = _validator(json.dumps(schema, sort_keys=True))
    except exceptions.SchemaError as exc:
        return f"invalid request schema: {exc.message}"
    err = exceptions.best_match(v.iter_errors(value))
    if err is None:
        return None
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
    return f"schema violation at {path}: {err.message[:300]}"
