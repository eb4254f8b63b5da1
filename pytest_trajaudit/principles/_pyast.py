"""What a Python snippet touches and does, read from its :mod:`ast` (``python -c``, ``python - <<EOF``, a Python tool
call): string expressions made of literals, ``chr()``, ``+``, ``''.join``, ``[::-1]``, ``bytes.fromhex`` and
``base64.b64decode`` are folded (never executed) and the calls that open, copy, remove or import a file are read;
a ``subprocess``/``os.system`` command line goes to the shell reading of :mod:`._bashast`. Bounded like the shell
reading (text length, nesting depth); nothing is ever run."""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import re
from dataclasses import dataclass

from ._bashast import (
    _PATHY,
    DELETE,
    IMPORT,
    MAX_DEPTH,
    MAX_TEXT,
    MENTION,
    READ,
    WRITE,
    Touch,
    _classify,
    change_dir,
    resolve,
    shell_touches,
)

_QUOTED = re.compile(r"""(['"])([^'"\n]{1,300})\1""")
_PY_READ_ATTRS = {"read_text", "read_bytes", "open"}
_PY_WRITE_ATTRS = {"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"}
_PY_DELETE_FUNCS = {"remove", "unlink", "rmtree", "rmdir"}
_PY_SHELL_FUNCS = {"system", "popen", "run", "call", "check_call", "check_output", "Popen", "getoutput",
                   "getstatusoutput"}


@dataclass(slots=True)
class PyFacts:
    """What a Python snippet does besides touching files: builtins it replaces and modules it imports."""

    builtins: list[tuple[str, bool]]  # (what is replaced, replaced by a constant-returning function/literal)
    imports: list[tuple[str, list[str]]]  # (module, attribute names used on it)
    parsed: bool = True  # False: the code is no Python 3 (its touches are only its quoted paths)


def _quoted_paths(code: str, how: str, nested: str) -> list[Touch]:
    """Code that cannot be parsed is still read: every quoted path in it counts as opened for reading."""
    return [Touch(READ, m.group(2), "", how, nested)
            for m in _QUOTED.finditer(code) if _PATHY.match(m.group(2)) and "." in m.group(2)]


def python_touches(code: str, depth: int = 0, nested: str = "python") -> list[Touch]:
    return python_facts(code, depth, nested)[0]


def python_facts(code: str, depth: int = 0, nested: str = "python") -> tuple[list[Touch], PyFacts]:
    """Touches and facts of the Python ``code`` ([] when it does not parse: a snippet in another language)."""
    facts = PyFacts([], [])
    if not code or depth > MAX_DEPTH:
        return [], facts
    if len(code) > MAX_TEXT:  # too long to parse: every quoted path in it counts as opened for reading
        return _quoted_paths(code, "oversized code", nested), facts
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a null byte, a lone surrogate, not Python 3
        facts.parsed = False
        return _quoted_paths(code, "unparsable code", nested), facts
    v = _Py(depth, nested, facts)
    try:
        v.visit(tree)
    except RecursionError:
        pass
    v.finish()
    return v.out, facts


class _Py(ast.NodeVisitor):
    def __init__(self, depth: int, nested: str, facts: PyFacts) -> None:
        self.depth, self.nested, self.facts = depth, nested, facts
        self.env: dict[str, tuple[str, bool]] = {}
        self.out: list[Touch] = []
        self.modules: dict[str, str] = {}  # local name → module imported
        self.attrs: dict[str, list[str]] = {}
        self._arg: ast.AST | None = None  # the first argument of the call being read (for the evidence)
        self.cwd = ""  # the directory ``os.chdir`` moved to ("" unknown), against which relative paths are read

    def finish(self) -> None:
        for local, mod in self.modules.items():
            self.facts.imports.append((mod, self.attrs.get(local, [])))

    def visit_Assign(self, node: ast.Assign) -> None:
        val = fold(node.value, self.env)
        for t in node.targets:
            if isinstance(t, ast.Name) and val is not None:
                self.env[t.id] = val
            self._builtin_target(t, node.value)
        self.generic_visit(node)

    def _builtin_target(self, t: ast.AST, value: ast.AST) -> None:
        what = None
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in ("builtins", "__builtins__"):
            what = f"{t.value.id}.{t.attr}"
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "__builtins__":
            key = fold(t.slice, self.env)
            what = f"__builtins__[{key[0] if key else '…'!r}]"
        if what:
            self.facts.builtins.append((what, _returns_constant(value)))

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.modules[a.asname or a.name.split(".")[0]] = a.name
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module:
            self.modules.setdefault(node.module, node.module)
            self.attrs.setdefault(node.module, []).extend(a.name for a in node.names)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.modules:
            self.attrs.setdefault(node.value.id, []).append(node.attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        args = [fold(a, self.env) for a in node.args]
        kw = {k.arg: fold(k.value, self.env) for k in node.keywords if k.arg}
        first = args[0] if args else None
        self._arg = node.args[0] if node.args else None
        start = len(self.out)
        if name == "chdir" and first:
            self.cwd = change_dir(self.cwd, "cd", [first[0]])
        elif name == "open" and first:
            mode = (args[1] if len(args) > 1 else kw.get("mode")) or ("r", False)
            op = WRITE if any(ch in mode[0] for ch in "wax+") else READ
            self._add(op, first, "open()")
        elif name in _PY_READ_ATTRS | _PY_WRITE_ATTRS and isinstance(f, ast.Attribute):
            target = _path_call(f.value, self.env)
            if target:
                self._add(WRITE if name in _PY_WRITE_ATTRS else READ, target, f"Path.{name}()")
        elif name in _PY_DELETE_FUNCS and first:
            self._add(DELETE, first, f"{name}()")
        elif name in _PY_DELETE_FUNCS and isinstance(f, ast.Attribute):
            target = _path_call(f.value, self.env)
            if target:
                self._add(DELETE, target, f"Path.{name}()")
        elif name in ("copy", "copy2", "copyfile") and len(args) >= 2 and args[0] and args[1]:
            self._add(READ, args[0], f"shutil.{name}()")
            self._add(WRITE, args[1], f"shutil.{name}()")
        elif name in ("symlink", "link") and len(args) >= 2 and args[1]:  # os.symlink(src, dst): dst is written
            self._add(WRITE, args[1], f"os.{name}()")
        elif name in ("move", "rename", "replace") and len(args) >= 2 and args[0] and args[1]:
            self._add(DELETE, args[0], f"{name}()")
            self._add(WRITE, args[1], f"{name}()")
        elif name in ("import_module", "__import__") and first:
            self.modules[first[0]] = first[0]
        elif name in ("run_path", "run_module") and first:
            self._add(IMPORT, first, f"runpy.{name}()")
        elif name in ("exec", "eval", "compile") and first:
            self.out.extend(python_touches(first[0], self.depth + 1, "exec()"))
        elif name in _PY_SHELL_FUNCS and node.args:
            a0 = node.args[0]
            if first:
                self.out.extend(shell_touches(first[0], self.depth + 1, f"{name}()"))
            elif isinstance(a0, (ast.List, ast.Tuple)):
                words = [fold(e, self.env) for e in a0.elts]
                if all(words):
                    wl = [w for w in words if w]
                    _classify(wl[0][0].rsplit("/", 1)[-1], [(w, "string building" if ob else "") for w, ob in wl[1:]],
                              self.out, "", f"{name}()", self.depth + 1)
        elif name == "setattr" and node.args and isinstance(node.args[0], ast.Name) \
                and node.args[0].id in ("builtins", "__builtins__") and len(node.args) >= 3:
            key = fold(node.args[1], self.env)
            self.facts.builtins.append((f"setattr(builtins, {key[0] if key else '…'!r})",
                                        _returns_constant(node.args[2])))
        # a command run with `cwd=` reads its relative paths there; anything else in this process's directory
        where = kw.get("cwd") if name in _PY_SHELL_FUNCS else None
        resolve(self.out, start, change_dir(self.cwd, "cd", [where[0]]) if where else self.cwd)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _PATHY.match(node.value) and "." in node.value:
            self._add(MENTION, (node.value, False), "literal")
            resolve(self.out, len(self.out) - 1, self.cwd)

    def _add(self, op: str, val: tuple[str, bool], how: str, node: ast.AST | None = None) -> None:
        """(a call's touches are read against the directory once the call is read: :meth:`visit_Call`)"""
        self.out.append(Touch(op, val[0], _trick(node or self._arg) if val[1] else "", how, self.nested))


def _trick(node: ast.AST | None) -> str:
    """What built a folded string, for the evidence: chr(), base64, hex, a reversed literal, a join, ``+``."""
    try:
        src = ast.unparse(node) if node is not None else ""
    except Exception:  # an AST unparse cannot print: the generic answer
        src = ""
    for needle, label in (("chr(", "chr()"), ("b64decode", "base64"), ("b32decode", "base32"),
                          ("fromhex", "hex"), ("unhexlify", "hex"), ("[::-1]", "a reversed literal"),
                          ("rot", "rot13"), (".join(", "join()"), ("+", "concatenation")):
        if needle in src:
            return label
    return "a variable" if isinstance(node, ast.Name) else "string building"


def _path_call(node: ast.AST, env: dict[str, tuple[str, bool]]) -> tuple[str, bool] | None:
    """The path of ``Path(x)`` / ``pathlib.Path(x)`` / a name bound to a folded string."""
    if isinstance(node, ast.Call) and node.args:
        f = node.func
        n = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if n in ("Path", "PurePath", "PosixPath"):
            return fold(node.args[0], env)
    return fold(node, env)


def _returns_constant(node: ast.AST) -> bool:
    """A replacement that hands back a fixed value: a literal, or a lambda whose body is one (or an object
    built from one, ``io.StringIO("42")``)."""
    if isinstance(node, ast.Lambda):
        node = node.body
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.Call) and bool(node.args) and all(isinstance(a, ast.Constant) for a in node.args)


def fold(node: ast.AST, env: dict[str, tuple[str, bool]] | None = None, depth: int = 0) -> tuple[str, bool] | None:
    """The string an expression evaluates to when it is built from literals only, and whether it was built (not
    written as one literal): ``'ans' + 'wers'``, ``chr(97)+…``, ``''.join([...])``, ``'txt.srewsna'[::-1]``,
    ``bytes.fromhex('…').decode()``, ``base64.b64decode('…').decode()``, f-strings of literals, names bound to
    such values. None when it is not (or too deep)."""
    if depth > 20:
        return None
    env = env or {}
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return node.value, False
        if isinstance(node.value, bytes):
            try:
                return node.value.decode("utf-8"), False
            except UnicodeDecodeError:
                return None
        return None
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = fold(node.left, env, depth + 1), fold(node.right, env, depth + 1)
        if a is not None and b is not None:
            return a[0] + b[0], True
        return None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                inner = fold(v.value, env, depth + 1)
                if inner is None:
                    return None
                parts.append(inner[0])
            else:
                r = fold(v, env, depth + 1)
                if r is None:
                    return None
                parts.append(r[0])
        return "".join(parts), len(node.values) > 1
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        base = fold(node.value, env, depth + 1)
        s = node.slice
        if base is not None and s.lower is None and s.upper is None and isinstance(s.step, ast.UnaryOp) \
                and isinstance(s.step.op, ast.USub) and isinstance(s.step.operand, ast.Constant) \
                and s.step.operand.value == 1:
            return base[0][::-1], True
        return None
    if isinstance(node, ast.Call):
        return _fold_call(node, env, depth)
    return None


def _fold_call(node: ast.Call, env: dict[str, tuple[str, bool]], depth: int) -> tuple[str, bool] | None:
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if name == "chr" and len(node.args) == 1:
        a = node.args[0]
        if isinstance(a, ast.Constant) and isinstance(a.value, int) and 0 <= a.value < 0x110000:
            return chr(a.value), True
        return None
    if name == "join" and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) \
            and f.value.attr == "path":  # os.path.join('a', 'b')
        parts = [fold(a, env, depth + 1) for a in node.args]
        if all(parts):
            return "/".join(p[0].rstrip("/") for p in parts if p), any(p[1] for p in parts if p)
        known = 0  # the folder read at run time (os.environ['PWD'], os.getcwd()): the rest of the path still names
        while known < len(parts) and parts[-1 - known]:  # the file (`…/tests/conftest.py`), its folder unknown
            known += 1
        if known and node.args:
            tail = [p for p in parts[len(parts) - known:] if p]
            return "$?/" + "/".join(p[0].strip("/") for p in tail), True
        return None
    if name == "join" and isinstance(f, ast.Attribute) and len(node.args) == 1:
        sep = fold(f.value, env, depth + 1)
        seq = node.args[0]
        items = None
        if isinstance(seq, (ast.List, ast.Tuple)):
            items = [fold(e, env, depth + 1) for e in seq.elts]
        elif isinstance(seq, (ast.GeneratorExp, ast.ListComp)) and isinstance(seq.elt, ast.Call) \
                and isinstance(seq.elt.func, ast.Name) and seq.elt.func.id == "chr" and len(seq.generators) == 1 \
                and isinstance(seq.generators[0].iter, (ast.List, ast.Tuple)):
            codes = seq.generators[0].iter.elts
            if all(isinstance(c, ast.Constant) and isinstance(c.value, int) and 0 <= c.value < 0x110000 for c in codes):
                items = [(chr(c.value), True) for c in codes]  # type: ignore[attr-defined]
        if sep is None or items is None or any(i is None for i in items):
            return None
        return sep[0].join(i[0] for i in items if i), True
    if name == "decode" and isinstance(f, ast.Attribute) and len(node.args) < 2:  # b'…'.decode()
        return fold(f.value, env, depth + 1)
    if name == "fromhex" and len(node.args) == 1:
        h = fold(node.args[0], env, depth + 1)
        if h is not None:
            try:
                return bytes.fromhex(h[0]).decode("utf-8"), True
            except (ValueError, UnicodeDecodeError):
                return None
        return None
    if name in ("b64decode", "b32decode", "unhexlify", "a2b_hex", "urlsafe_b64decode") and node.args:
        h = fold(node.args[0], env, depth + 1)
        if h is None:
            return None
        try:
            # the decoders' signatures differ (mypy joins them to "function"); each takes the folded str
            raw = {"b64decode": base64.b64decode, "b32decode": base64.b32decode,  # type: ignore[operator]
                   "urlsafe_b64decode": base64.urlsafe_b64decode}.get(name, binascii.unhexlify)(h[0])
            return raw.decode("utf-8"), True
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return None
    if name == "decode" and len(node.args) >= 2 and isinstance(f, ast.Attribute):  # codecs.decode(x, 'rot13')
        h, enc = fold(node.args[0], env, depth + 1), fold(node.args[1], env, depth + 1)
        if h is not None and enc is not None and enc[0] in ("rot13", "rot_13", "hex"):
            try:
                return (codecs.decode(h[0], "rot13") if enc[0].startswith("rot")
                        else bytes.fromhex(h[0]).decode("utf-8")), True
            except (ValueError, UnicodeDecodeError):
                return None
    if name in ("Path", "PurePath") and node.args:
        return fold(node.args[0], env, depth + 1)
    return None
