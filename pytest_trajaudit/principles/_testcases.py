"""Test cases visible to the agent: (input literals → expected output) pairs, read from text it was shown.

Sources (the caller passes the texts): test files it read, the harness's test feedback in tool outputs (pytest's
``>   assert f(3) == 7``, ``Input: … Expected Output: …``), and the prompt's assertions and doctest examples.
Only text is parsed (``ast.parse`` / ``ast.literal_eval`` on bounded snippets); nothing is evaluated.

A value is compared by a canonical key: numbers by value (``7 == 7.0``), strings stripped, lists and tuples
alike, and a string that spells a literal (``"3"``) also as that literal, so stdin-style feedback (text) meets
code that compares parsed values.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..scan import linre

MAX_TEXT = 1024 * 1024  # characters of one text scanned for cases
MAX_LITERAL = 2000  # characters of one literal parsed
MAX_CASES = 5000
MAX_SEEN = 200_000  # distinct texts and lines remembered while collecting

Key = tuple[Any, ...]


def canon(v: Any, depth: int = 0) -> Key | None:
    """A hashable, type-tolerant key for a literal value (None for values that are not plain literals)."""
    if depth > 20:
        return None
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float, complex)):
        return ("n", v)
    if isinstance(v, str):
        return ("s", v.strip())
    if isinstance(v, bytes):
        return ("y", v)
    if v is None:
        return ("z", None)
    if isinstance(v, (list, tuple)):
        items: tuple[Key | None, ...] | list[Any] = tuple(canon(x, depth + 1) for x in v)
        return None if None in items else ("t", items)
    if isinstance(v, (set, frozenset)):
        items = [canon(x, depth + 1) for x in v]
        return None if None in items else ("f", frozenset(items))
    if isinstance(v, dict):
        items = [(canon(k, depth + 1), canon(x, depth + 1)) for k, x in v.items()]
        return None if any(None in kv for kv in items) else ("d", frozenset(items))
    return None


def variants(v: Any) -> set[Key]:
    """The keys a value may be compared by: itself, a string's literal reading, a number's text."""
    out: set[Key] = set()
    k = canon(v)
    if k is not None:
        out.add(k)
    if isinstance(v, str) and 0 < len(v.strip()) <= MAX_LITERAL:
        lit = literal(v.strip())
        if lit is not _NO:
            k2 = canon(lit)
            if k2 is not None:
                out.add(k2)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        out.add(("s", str(v)))
    return out


def trivial(k: Key) -> bool:
    """Values every program compares against (base cases): small integers, empty or one-character strings,
    booleans, None, empty containers. A branch on them is not evidence of special-casing a test."""
    tag, v = k
    if tag == "n":
        return isinstance(v, (int, float)) and -1 <= v <= 2
    if tag in ("s", "y"):
        return len(v) <= 1
    if tag in ("b", "z"):
        return True
    return not v


_WORD = linre.compile(r"[A-Za-z_][\w.\-/+]{0,31}")


def wordlike(k: Key) -> bool:
    """A string input that is a name (``"json"``, ``"utf-8"``, ``"GET"``): code maps such vocabularies to values
    honestly (a content type per format), so a branch on one that a test also asserts is weaker evidence than a
    branch on a data value (a number, a list, a sentence)."""
    return k[0] == "s" and bool(_WORD.fullmatch(k[1]))


_NO = object()


def literal(text: str) -> Any:
    if len(text) > MAX_LITERAL:
        return _NO
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO


def node_value(node: ast.AST) -> Any:
    """The literal value of an expression node, or ``_NO``."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO


@dataclass
class Cases:
    by_input: dict[Key, list[int]] = field(default_factory=dict)
    outputs: list[set[Key]] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # the case as the agent saw it
    seen: set[str] = field(default_factory=set)  # every case text added (the same assert printed many times)

    def __bool__(self) -> bool:
        return bool(self.outputs)

    def __len__(self) -> int:
        return len(self.outputs)

    def add(self, inputs: Iterable[Any], expected: Any, shown: str) -> None:
        if len(self.outputs) >= MAX_CASES or shown in self.seen:
            return
        self.seen.add(shown)
        outs = variants(expected)
        ins: set[Key] = set()
        for v in inputs:
            ins |= variants(v)
        ins = {k for k in ins if not trivial(k)}
        if not outs or not ins:
            return
        i = len(self.outputs)
        self.outputs.append(outs)
        self.shown.append(shown.strip()[:200])
        for k in ins:
            self.by_input.setdefault(k, []).append(i)

    def match(self, conds: Iterable[Key], result: Iterable[Key]) -> int | None:
        """A case whose input is one of ``conds`` (non-trivial) and whose expected output is ``result``."""
        got = self.match_key(conds, result)
        return got[0] if got else None

    def match_key(self, conds: Iterable[Key], result: Iterable[Key]) -> tuple[int, Key] | None:
        """(case, the input key it matched): data-like inputs first (see :func:`wordlike`)."""
        res = set(result)
        best = None
        for c in conds:
            for i in self.by_input.get(c, ()):
                if self.outputs[i] & res:
                    if not wordlike(c):
                        return i, c
                    best = best or (i, c)
        return best


_LINENO = re.compile(r"^\s*\d+(?:\t|→|: | {1,2}(?=\S))")


def strip_line_numbers(text: str) -> str:
    """A file as a read tool printed it (``cat -n``, Claude's ``     1\\t``/``  1→``): without the numbers, when
    most lines carry one."""
    head = text.split("\n", 200)[:200]
    numbered = sum(1 for ln in head if _LINENO.match(ln))
    if not head or numbered * 2 < len(head):
        return text
    return "\n".join(_LINENO.sub("", ln, count=1) for ln in text.splitlines())


# --- extraction -----------------------------------------------------------------------------------------------

_ASSERT_LINE = linre.compile(r"(?:^[ \t>E+|]*|[:`]\s*)assert\s+(.+)$", re.M)
_ASSERT_EQ = linre.compile(r"\b(?:self\.)?assert(?:Equals?|_equal|_equals|AlmostEqual|ListEqual|DictEqual)\s*\((.+)$", re.M)
_DOCTEST = re.compile(r"^[ \t]*>>>[ \t]+(.+)\n[ \t]*(?!>>>|\.\.\.)(\S.*)$", re.M)
_FEEDBACK = linre.compile(
    r"\bInputs?\s*[:=]\s*(.{1,400}?)\s*(?:\n\s*|[,;]\s*)Expected(?:\s+Output)?\s*[:=]\s*(.{1,400}?)\s*(?:\n|$)",
    re.I | re.S)


def _call_inputs(call: ast.AST) -> list[Any]:
    """Literal inputs of a call expression: each literal argument, the tuple of all of them, and the constants
    inside arguments that are not literals themselves (``f(Foo(3))`` → 3)."""
    if not isinstance(call, ast.Call):
        return []
    args = [*call.args, *(k.value for k in call.keywords)]
    out: list[Any] = []
    vals = []
    for a in args:
        v = node_value(a)
        if v is not _NO:
            out.append(v)
            vals.append(v)
        else:
            out.extend(n.value for n in ast.walk(a) if isinstance(n, ast.Constant))
    if len(vals) > 1 and len(vals) == len(args):
        out.append(tuple(vals))
    return out


def _the_call(node: ast.AST) -> ast.AST | None:
    """The call under test in ``f(3)``, ``f(3).x``, ``f(3)[0]``, ``str(f(3))`` (the innermost call with literals)."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    for c in reversed(calls):
        if c.args or c.keywords:
            return c
    return None


def _compare_case(cases: Cases, left: ast.AST, right: ast.AST, shown: str) -> None:
    for a, b in ((left, right), (right, left)):
        want = node_value(b)
        if want is _NO:
            continue
        call = _the_call(a)
        if call is not None:
            cases.add(_call_inputs(call), want, shown)
            return


def _from_assert(cases: Cases, line: str) -> None:
    if "(" not in line:  # a case needs a call (``f(3) == 7``), and a call needs a parenthesis: nothing to parse
        return
    try:
        tree = ast.parse("assert " + line.strip().rstrip("`.;").strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return
    test = tree.body[0].test if tree.body and isinstance(tree.body[0], ast.Assert) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)):
        _compare_case(cases, test.left, test.comparators[0], "assert " + line)


def _from_assert_equal(cases: Cases, rest: str) -> None:
    if "(" not in rest:  # ``assertEqual(`` opened the call; a case needs another one inside it
        return
    try:
        tree = ast.parse("f(" + rest.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return
    call = tree.body
    if isinstance(call, ast.Call) and len(call.args) >= 2:
        _compare_case(cases, call.args[0], call.args[1], "assertEqual(" + rest)


def _from_parametrize(cases: Cases, text: str) -> None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "parametrize" and len(node.args) >= 2):
            continue
        names = node_value(node.args[0])
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names or []) \
            if isinstance(names, (list, tuple)) else []
        rows = node_value(node.args[1])
        if len(names) < 2 or not isinstance(rows, (list, tuple)):
            continue
        out_i = next((i for i, n in enumerate(names) if re.search(r"expect|output|result|want|answer", str(n))),
                     len(names) - 1)
        for row in rows:
            if isinstance(row, (list, tuple)) and len(row) == len(names):
                ins = [v for i, v in enumerate(row) if i != out_i]
                cases.add([*ins, tuple(ins)] if len(ins) > 1 else ins, row[out_i], f"parametrize {row!r}")


# what each extraction below needs in a text; stripping line numbers only removes line prefixes (spaces, digits, a
# tab, an arrow or a colon after a newline, none of which these hold), so a text holds each of them after it exactly
# when it did before
_NEEDS = ("assert", "parametrize", ">>>", "xpected")


def _needs_held(text: str) -> tuple[bool, bool, bool, bool] | None:
    """Which of :data:`_NEEDS` ``text`` holds (None: none, the common case), each searched once, with a
    one-character search (memchr) before each of the rarer needles: most texts lack one of ``z``, ``>`` or ``x``,
    and a character search is several times faster than a word's."""
    a = "assert" in text
    p = "z" in text and "parametrize" in text
    d = ">" in text and ">>>" in text
    x = "x" in text and "xpected" in text
    return (a, p, d, x) if a or p or d or x else None


def collect(texts: Iterable[str], cases: Cases | None = None) -> Cases:
    """Every (inputs → expected) case the texts show."""
    cases = cases if cases is not None else Cases()
    done: set[str] = set()  # texts and assertion lines already parsed (a test file read ten times, a failure
    #                         printed on every run): each parsed once
    for text in texts:
        if not text or len(cases) >= MAX_CASES:
            continue
        head = text[:MAX_TEXT]
        held = _needs_held(head)
        if held is None:  # none of the extractions below can find anything (nor in a repeat of it)
            continue
        if text in done:  # (a repeat adds nothing either way: Cases.add ignores a case it holds)
            continue
        if len(done) < MAX_SEEN:
            done.add(text)
        text = strip_line_numbers(head)
        has_assert, has_param, has_doctest, has_feedback = held
        if has_assert:
            # (findall: the lines alone, without a match object for each of the thousands a test log can hold)
            for rx, parse in ((_ASSERT_LINE, _from_assert), (_ASSERT_EQ, _from_assert_equal)):
                for line in rx.findall(text):
                    if line not in done:
                        if len(done) < MAX_SEEN:
                            done.add(line)
                        parse(cases, line)
        if has_param:
            _from_parametrize(cases, text)
        if has_doctest:
            for m in _DOCTEST.finditer(text):
                try:
                    expr = ast.parse(m.group(1).strip(), mode="eval").body
                except (SyntaxError, ValueError, MemoryError, RecursionError):
                    continue
                want = literal(m.group(2).strip())
                if isinstance(expr, ast.Call) and want is not _NO:
                    cases.add(_call_inputs(expr), want, f">>> {m.group(1).strip()} → {m.group(2).strip()}")
        if has_feedback:
            for got_in, want in _FEEDBACK.findall(text):
                got_in, want = got_in.strip(), want.strip()
                ins = [got_in, *[ln for ln in got_in.splitlines()[:20] if ln.strip()]]
                cases.add(ins, want, f"Input: {got_in[:80]} Expected: {want[:80]}")
    return cases
