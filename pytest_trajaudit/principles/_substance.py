"""An answer's substance apart from its shape: the scalar values it holds, in order, with numbers, whitespace,
case and JSON structure normalized. Shared by the format-vs-reasoning split (is the agent's answer the expected
one in another shape?) and the solver reconstruction (does the recomputed output match the delivered one?).

Pure: parses text (``json``, then ``ast.literal_eval`` for Python reprs as pytest prints them), never evaluates it.
"""

from __future__ import annotations

import ast
import json
import math
from typing import Any

from ..scan import linre

MAX_PARSE = 1 << 20  # longer texts are tokenized, never parsed (literal_eval's cost grows with nesting)
MAX_LEAVES = 200_000

_NUMBER = linre.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# tokens of unstructured text: runs of anything but whitespace, separators, brackets and quotes
_TOKEN = linre.compile(r"[^\s,;\[\]{}()\"'`]+")
_TRAILING = ".:!?"


def _num(x: float | int) -> str:
    """One spelling per number: integral values as ints (1.0 → 1, 5e2 → 500), others as Python's shortest repr."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x) or math.isinf(x):
        return repr(x)
    if x.is_integer() and abs(x) < 2**63:
        return str(int(x))
    return repr(x)


def _scalar(x: Any) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool | int | float):
        return _num(x)
    s = " ".join(str(x).split()).casefold()
    if _NUMBER.fullmatch(s):
        try:
            return _num(float(s)) if any(c in s for c in ".eE") else str(int(s))
        except (ValueError, OverflowError):
            return s
    return s


def parse(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is one JSON document or Python literal; ``(False, None)`` otherwise."""
    t = text.strip()
    if not t or len(t) > MAX_PARSE:
        return False, None
    try:
        return True, json.loads(t)
    except (ValueError, RecursionError):
        pass
    if t[0] in "[{(\"'" or _NUMBER.fullmatch(t) or t in ("True", "False", "None"):
        try:
            return True, ast.literal_eval(t)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    return False, None


def _flatten(v: Any, out: list[str], keys: bool, depth: int = 0) -> None:
    if len(out) > MAX_LEAVES or depth > 100:
        return
    if isinstance(v, dict):
        for k in sorted(v, key=lambda k: _scalar(k)):
            if keys:
                out.append(_scalar(k))
            _flatten(v[k], out, keys, depth + 1)
    elif isinstance(v, list | tuple | set | frozenset):
        items = sorted(v, key=repr) if isinstance(v, set | frozenset) else v
        for x in items:
            _flatten(x, out, keys, depth + 1)
    else:
        out.append(_scalar(v))


def tokens(text: str) -> tuple[str, ...]:
    """The normalized tokens of unstructured text (newline- or comma-separated values, prose)."""
    out = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if len(tok) > 1 and tok[-1] in _TRAILING:  # "3216." at the end of a sentence
            tok = tok.rstrip(_TRAILING)
        out.append(_scalar(tok))
        if len(out) > MAX_LEAVES:
            break
    return tuple(out)


def leaves(text: str, *, keys: bool = False) -> tuple[str, ...]:
    """The substance of ``text``: its scalar values in order (object keys sorted, with the keys when ``keys``),
    each normalized; unstructured text gives its tokens. A JSON string holding a document is unwrapped once."""
    ok, v = parse(text)
    if not ok:
        return tokens(text)
    if isinstance(v, str):  # a quoted text: the document it holds, else its tokens
        inner_ok, inner = parse(v) if v.strip() != text.strip() else (False, None)
        if not inner_ok or isinstance(inner, str):
            return tokens(v)
        v = inner
    out: list[str] = []
    _flatten(v, out, keys)
    return tuple(out)


def same_substance(a: str, b: str) -> bool:
    """``a`` and ``b`` hold the same values, whatever their shape: ``[1, 2, 3]`` = ``1\\n2\\n3`` = ``"1,2,3"``,
    ``{"n": 5.0}`` = ``{"n": 5}``, ``0.5`` = ``5e-1``, ``OK`` = ``ok``."""
    la, lb = leaves(a), leaves(b)
    ka, kb = leaves(a, keys=True), leaves(b, keys=True)
    if ka != la and kb != lb:  # both hold objects: their keys are part of the substance
        return ka == kb
    return bool(la) and la == lb


def shows(haystack: str, expected: str) -> bool:
    """The text ``haystack`` (an agent's message or stdout) shows the value ``expected``: the expected values
    appear in it, in order, as consecutive tokens (``computed 3216 unnecessary aborts`` shows ``3216``)."""
    need = leaves(expected)
    if not need:
        return False
    have = tokens(haystack)
    n = len(need)
    if n > len(have):
        return False
    first = need[0]
    return any(have[i] == first and have[i:i + n] == need for i in range(len(have) - n + 1))


def diff_summary(pred: str, exp: str) -> dict[str, Any]:
    """Compare a predicted output with the expected one as collections of values (``|pred ∩ exp|``,
    ``pred ⊂ exp``, false positives and negatives), the way the spec's reconstruction diffs id sets."""
    p, e = leaves(pred), leaves(exp)
    sp, se = set(p), set(e)
    both = sp & se
    equal = same_substance(pred, exp) or (bool(p) and sorted(p) == sorted(e))  # a set output in another order
    return {"equal": equal, "pred": len(sp), "expected": len(se), "common": len(both),
            "pred_subset_of_expected": sp <= se, "expected_subset_of_pred": se <= sp,
            "false_positives": len(sp - se), "false_negatives": len(se - sp),
            "examples_fp": sorted(sp - se)[:5], "examples_fn": sorted(se - sp)[:5]}


def describe(d: dict[str, Any]) -> str:
    if d["equal"]:
        return f"equal in substance ({d['pred']:,} distinct values)"
    rel = "pred ⊂ exp" if d["pred_subset_of_expected"] else "exp ⊂ pred" if d["expected_subset_of_pred"] else \
        "neither contains the other"
    return (f"|pred|={d['pred']:,}, |exp|={d['expected']:,}, |pred ∩ exp|={d['common']:,}, {rel}, "
            f"{d['false_positives']:,} false positive(s), {d['false_negatives']:,} false negative(s)")
