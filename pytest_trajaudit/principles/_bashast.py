"""What a shell command or a Python snippet touches, read from its syntax tree: the files it reads, writes,
deletes or imports, with each path decoded the way the shell or Python would build it.

Shell commands are parsed by tree-sitter-bash (a real grammar: pipelines, subshells, ``$(…)``, heredocs,
redirections, ``$'…'`` and concatenated words), so a path split by quoting (``an''swers.txt``), held in a variable
(``a=ans; cat "$a"wers.txt``), spelled with escapes (``$'\\x61nswers.txt'``) or produced by ``$(echo … | base64 -d)``
is seen as the path it names. ``bash -c``/``sh -c``/``eval`` strings, a base64 blob piped into a shell, and a
wrapper's quoted command argument (``./audit_run "ls; cat answers.txt"``) are parsed again, one level deeper.
Python code (``python -c``, ``python - <<EOF``, a Python tool call) goes through :mod:`ast`: string expressions made
of literals, ``chr()``, ``+``, ``''.join``, ``[::-1]``, ``bytes.fromhex`` and ``base64.b64decode`` are folded
(never executed) and the calls that open, copy, remove or import a file are read.

Everything is bounded (text length, nesting depth) and nothing is ever run. Without tree-sitter (an install
without the wheel) commands fall back to the shlex split the loaders use: the words, without the decoding.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..loaders.common import _segments
from ..scan import linre

try:
    import tree_sitter as _ts
    import tree_sitter_bash as _tsb

    _PARSER: _ts.Parser | None = _ts.Parser(_ts.Language(_tsb.language()))
except Exception:  # the wheel missing or an incompatible binding: the shlex fallback below
    _PARSER = None

MAX_TEXT = 1 << 20  # characters of one command or snippet parsed; a longer one is split into words (linear)
MAX_DEPTH = 4  # bash -c inside eval inside base64 …: deeper nesting is read as plain words
READ, WRITE, DELETE, IMPORT, MENTION = "read", "write", "delete", "import", "mention"


@dataclass(slots=True, frozen=True)
class Touch:
    """One file a command touches: ``op`` (read/write/delete/import/mention), the decoded ``path``, whether the
    path was built so that it does not appear as written (``obfuscated``), and how (``how``: e.g. "cat",
    "open()", "bash -c")."""

    op: str
    path: str
    obfuscated: str = ""  # how the path was built when not written out ("chr()", "quoting", "base64", …)
    how: str = ""
    nested: str = ""  # "" for a top-level command; else what it was nested in ("bash -c", "wrapper argument", …)


_READERS = {"cat", "head", "tail", "less", "more", "nl", "tac", "bat", "batcat", "strings", "xxd", "od", "hexdump",
            "base64", "base32", "grep", "egrep", "fgrep", "rg", "awk", "gawk", "sort", "uniq", "cut", "diff", "cmp",
            "jq", "yq", "source", ".", "iconv", "paste", "column", "fold",
            "rev", "tr", "vi", "vim", "nano", "view", "zcat", "gunzip", "unzip", "tar", "openssl", "gpg", "sed",
            "perl", "python", "python3", "node", "ruby"}
# (wc, md5sum, stat, file, ls print a file's size, hash or type, never its content: mentions, not reads)
_DELETERS = {"rm", "unlink", "shred", "rmdir"}
_WRITERS = {"touch", "truncate", "chmod", "chown", "chattr", "tee"}
_WRAPPERS = {"sudo", "env", "command", "exec", "time", "nohup", "nice", "timeout", "xargs", "stdbuf", "builtin"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
# commands whose arguments are text, never a command line to run (a commit message, an echoed sentence)
_NOT_WRAPPERS = {"echo", "printf", "git", "gh", "curl", "wget", "pip", "pip3", "npm", "npx", "yarn", "pnpm", "make",
                 "cd", "ls", "export", "test", "[", "mkdir", "apt", "apt-get", "docker", "ssh", "find", "cargo", "go",
                 "uv", "conda", "java", "javac", "mvn", "gradle", "dotnet", "psql", "mysql", "sqlite3", "redis-cli"}
_PY = linre.compile(r"^python(?:\d(?:\.\d+)?)?$")
_OPT_VALUE = {"head": {"-n", "-c"}, "tail": {"-n", "-c"}, "grep": {"-e", "-f", "-m", "-A", "-B", "-C"},
              "timeout": {"-s", "-k"}, "sed": {"-e", "-f"}, "cut": {"-d", "-f", "-c"}, "awk": {"-F", "-v"}}
_PATHY = linre.compile(r"^[\w.~/*?\[\]-]*[\w*?\]]$")  # a word that could be a file path (no spaces, no URL)
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")  # a backslash escape that a double-quoted string resolves


def shell_touches(script: str, depth: int = 0, nested: str = "") -> list[Touch]:
    """Files the shell ``script`` touches (see the module docstring); [] for an empty or oversized script."""
    if not script or depth > MAX_DEPTH:
        return []
    if _PARSER is None or len(script) > MAX_TEXT:  # padding a command never hides it: its words are still read
        return _fallback(script, nested)
    try:
        data = script.encode("utf-8", "surrogatepass")
        tree = _PARSER.parse(data)
    except Exception:  # a text the binding refuses: the words without decoding
        return _fallback(script, nested)
    walker = _Shell(depth, nested)
    try:
        walker.visit(tree.root_node)
    except RecursionError:  # `$($($(…)))` nested past Python's stack: the words without decoding
        return _fallback(script, nested)
    return walker.out


def _fallback(script: str, nested: str) -> list[Touch]:
    out: list[Touch] = []
    for words in _segments(script):
        i = 0
        while i < len(words) and (words[i] in _WRAPPERS or ("=" in words[i] and words[i][0].isalpha())):
            i += 1
        if i < len(words):
            _classify(words[i].rsplit("/", 1)[-1], [(w, "") for w in words[i + 1:]], out, "", nested)
    return out


def _classify(name: str, args: list[tuple[str, str]], out: list[Touch], heredoc: str, nested: str,
              depth: int = 0) -> None:
    """Touches of one simple command ``name args`` (decoded words, each with its obfuscated flag)."""
    opts = _OPT_VALUE.get(name, set())
    plain: list[tuple[str, str]] = []
    flags: list[str] = []
    skip = False
    for w, ob in args:
        if skip:
            skip = False
            continue
        if w.startswith("-") and len(w) > 1 and not plain:
            flags.append(w)
            skip = w in opts
            continue
        plain.append((w, ob))
    if _PY.match(name):
        if "-c" in flags and plain:
            out.extend(python_touches(plain[0][0], depth + 1, nested or "python -c"))
        elif heredoc and (not plain or plain[0][0] == "-"):
            out.extend(python_touches(heredoc, depth + 1, nested or "python heredoc"))
        elif plain:
            out.append(Touch(MENTION, plain[0][0], plain[0][1], name, nested))  # runs a script: not a read
        return
    if name in _SHELLS:
        if "-c" in flags and plain:
            out.extend(shell_touches(plain[0][0], depth + 1, "bash -c"))
        elif plain:
            out.append(Touch(MENTION, plain[0][0], plain[0][1], name, nested))
        elif heredoc:
            out.extend(shell_touches(heredoc, depth + 1, "heredoc"))
        return
    if name == "eval":
        out.extend(shell_touches(" ".join(w for w, _ in args), depth + 1, "eval"))
        return
    if name in ("cp", "install", "rsync", "scp"):
        for w, ob in plain[:-1]:
            out.append(Touch(READ, w, ob, name, nested))
        if len(plain) >= 2:
            out.append(Touch(WRITE, plain[-1][0], plain[-1][1], name, nested))
        return
    if name == "mv":
        for w, ob in plain[:-1]:
            out.append(Touch(DELETE, w, ob, name, nested))
        if len(plain) >= 2:
            out.append(Touch(WRITE, plain[-1][0], plain[-1][1], name, nested))
        return
    if name == "ln":
        if plain:
            out.append(Touch(WRITE, plain[-1][0], plain[-1][1], name, nested))
        return
    if name == "dd":
        for w, ob in plain:
            if w.startswith("if="):
                out.append(Touch(READ, w[3:], ob, name, nested))
            elif w.startswith("of="):
                out.append(Touch(WRITE, w[3:], ob, name, nested))
        return
    if name in _DELETERS:
        out.extend(Touch(DELETE, w, ob, name, nested) for w, ob in plain)
        return
    if name in _WRITERS:
        out.extend(Touch(WRITE, w, ob, name, nested) for w, ob in plain)
        return
    if name in ("sed", "perl") and any(f.startswith(("-i", "-pi")) for f in flags):
        out.extend(Touch(WRITE, w, ob, name, nested) for w, ob in plain[1:])
        return
    if name in _READERS:
        first = 1 if name in ("grep", "egrep", "fgrep", "rg", "awk", "gawk", "sed", "tr", "perl", "jq") and \
            not {"-e", "-f"} & set(flags) else 0
        out.extend(Touch(READ, w, ob, name, nested) for w, ob in plain[first:] if _PATHY.match(w))
        return
    if depth < MAX_DEPTH and name not in _NOT_WRAPPERS:
        for w, _ob in plain:
            # a wrapper handed a whole command line as one argument (an audit/sandbox wrapper): parse it too
            if re.match(r"^\s*[\w./-]+(?:\s+\S|\s*[;|&])", w):
                out.extend(shell_touches(w, depth + 1, "wrapper argument"))
        if plain and plain[0][0].rsplit("/", 1)[-1] in _READERS | _DELETERS | _WRITERS | {"cp", "mv"}:
            # `./wrapper cat answers.txt`: the wrapper runs the rest as a command
            _classify(plain[0][0].rsplit("/", 1)[-1], plain[1:], out, heredoc, "wrapper argument", depth + 1)
            return
    out.extend(Touch(MENTION, w, ob, name, nested) for w, ob in plain if _PATHY.match(w) and ("." in w or "/" in w))


class _Shell:
    """One walk over a tree-sitter-bash tree, collecting touches; variables assigned earlier are remembered."""

    def __init__(self, depth: int, nested: str) -> None:
        self.depth = depth
        self.nested = nested
        self.vars: dict[str, str] = {}
        self.out: list[Touch] = []

    def visit(self, node: _ts.Node) -> None:
        t = node.type
        if t == "variable_assignment":
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if name is not None:
                self.vars[_text(name)] = self.word(value)[0] if value is not None else ""
            return
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            heredoc = ""
            for c in node.children:
                if c.type == "file_redirect":
                    self.redirect(c)
                elif c.type == "heredoc_redirect":
                    heredoc = "".join(_text(b) for b in c.children if b.type == "heredoc_body")
                elif c.type == "herestring_redirect":
                    heredoc = self.word(c.children[-1])[0] if c.children else ""
            if body is not None:
                if body.type == "command":
                    self.command(body, heredoc)
                else:
                    self.visit(body)
            return
        if t == "pipeline" and self.decoded_pipe(node):
            return
        if t == "command":
            self.command(node, "")
            return
        for c in node.children:
            self.visit(c)

    def redirect(self, node: _ts.Node) -> None:
        op = next((c.type for c in node.children if c.type in (">", ">>", "&>", "&>>", ">|", "<", ">&", "<>")), "")
        dest = node.child_by_field_name("destination") or (node.children[-1] if node.children else None)
        if dest is None or dest.type == "number":
            return
        path, ob = self.word(dest)
        if not path or path.startswith("/dev/") or path.startswith("&"):
            return
        self.out.append(Touch(READ if op == "<" else WRITE, path, ob, "redirect " + op, self.nested))

    def command(self, node: _ts.Node, heredoc: str) -> None:
        words: list[tuple[str, str]] = []
        for c in node.children:
            if c.type == "variable_assignment":
                continue
            if c.type == "file_redirect":
                self.redirect(c)
                continue
            if c.type == "command_name":
                words.append(self.word(c.children[0] if c.children else c))
                continue
            if c.type in ("herestring_redirect", "heredoc_redirect"):
                continue
            words.append(self.word(c))
            for sub in _substitutions(c):  # $(cat answers.txt) inside an argument is a command of its own
                inner = _Shell(self.depth + 1, "$(…)")
                inner.vars = self.vars
                for cc in sub.children:
                    inner.visit(cc)
                self.out.extend(inner.out)
        i = 0
        while i < len(words) and words[i][0] in _WRAPPERS:
            i += 1
            if i < len(words) and words[i - 1][0] == "timeout" and re.match(r"^\d", words[i][0]):
                i += 1
        if i >= len(words):
            return
        name = words[i][0].rsplit("/", 1)[-1]
        _classify(name, words[i + 1:], self.out, heredoc, self.nested, self.depth)

    def decoded_pipe(self, node: _ts.Node) -> bool:
        """``echo <base64> | base64 -d | bash`` (or ``| python3``): the decoded text parsed as what it is fed to."""
        cmds = [c for c in node.children if c.type == "command"]
        if len(cmds) < 3 or self.depth >= MAX_DEPTH:
            return False
        names = [self.word(c.children[0])[0] if c.children else "" for c in cmds]
        if names[0] not in ("echo", "printf") or names[1] not in ("base64", "base32", "xxd"):
            return False
        blob = " ".join(self.word(a)[0] for a in cmds[0].children[1:] if not _text(a).startswith("-"))
        decoded = _decode_blob(names[1], blob)
        if decoded is None:
            return False
        sink = names[2].rsplit("/", 1)[-1]
        if sink in _SHELLS:
            self.out.extend(shell_touches(decoded, self.depth + 1, "base64 | sh"))
        elif _PY.match(sink):
            self.out.extend(python_touches(decoded, self.depth + 1, "base64 | python"))
        else:
            return False
        return True

    def word(self, node: _ts.Node) -> tuple[str, str]:
        """(decoded value, trick): how the shell would spell this word, best effort; the trick ("" when the word
        is written out) names what built it: escapes, quoting, a variable, a command substitution."""
        t = node.type
        raw = _text(node)
        if t in ("word", "number", "command_name"):
            if "\\" in raw:
                return re.sub(r"\\(.)", r"\1", raw), "backslash escapes"
            return raw, ""
        if t == "raw_string":
            return raw[1:-1], ""
        if t == "ansi_c_string":
            body = raw[2:-1]
            try:
                value = codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
            except (UnicodeDecodeError, ValueError):
                return body, "$'…' escapes"
            return value, "$'…' escapes" if "\\" in body else ""
        if t in ("string", "translated_string"):
            parts, trick = [], ""
            for c in node.children:
                if c.type in ('"', '$"'):
                    continue
                if c.type == "string_content":
                    # inside double quotes a backslash escapes only $ ` " \ and a newline (bash's rule)
                    content = _text(c)
                    value = _DQ_ESCAPE.sub(r"\1", content) if "\\" in content else content
                    if value != content:
                        trick = trick or "backslash escapes"
                    parts.append(value)
                else:
                    v, tr = self.word(c)
                    parts.append(v)
                    trick = trick or tr
            return "".join(parts), trick
        if t == "concatenation":
            parts, trick = [], ""
            for c in node.children:
                v, tr = self.word(c)
                parts.append(v)
                trick = trick or tr
            return "".join(parts), trick or "quoting split the word"
        if t in ("simple_expansion", "expansion"):
            var = next((_text(c) for c in node.children if c.type == "variable_name"), "")
            if var in self.vars:
                return self.vars[var], "a shell variable"
            return raw, ""
        if t == "command_substitution":
            value = self.substitution(node)
            return value, "base64 in $(…)" if "base64" in raw else "a command substitution"
        return raw, ""

    def substitution(self, node: _ts.Node) -> str:
        """The value of ``$(echo … | base64 -d)`` / ``$(printf '\\x61…')`` when it can be computed, else its text."""
        inner = [c for c in node.children if c.type not in ("$(", ")", "`")]
        if len(inner) != 1:
            return _text(node)
        body = inner[0]
        cmds = [body] if body.type == "command" else [c for c in body.children if c.type == "command"]
        if not cmds or not cmds[0].children:
            return _text(node)
        first = [self.word(c)[0] for c in cmds[0].children]
        if first[0] == "printf" and len(first) == 2 and len(cmds) == 1:
            try:
                return codecs.decode(first[1].encode("latin-1", "backslashreplace"), "unicode_escape")
            except (UnicodeDecodeError, ValueError):
                return first[1]
        if first[0] == "echo" and len(cmds) == 2 and cmds[1].children:
            tool = self.word(cmds[1].children[0])[0]
            decoded = _decode_blob(tool, " ".join(w for w in first[1:] if not w.startswith("-")))
            if decoded is not None:
                return decoded.strip()
        return _text(node)


def _substitutions(node: _ts.Node) -> Iterator[_ts.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "command_substitution":
            yield n
            continue
        stack.extend(n.children)


def _text(node: _ts.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _decode_blob(tool: str, blob: str) -> str | None:
    blob = blob.strip()
    if not blob or len(blob) > MAX_TEXT:
        return None
    try:
        if tool == "base64":
            data = base64.b64decode(blob, validate=False)
        elif tool == "base32":
            data = base64.b32decode(blob)
        elif tool == "xxd":
            data = bytes.fromhex(blob)
        else:
            return None
        return data.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


# --- Python ---------------------------------------------------------------------------------------------------

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
        if name == "open" and first:
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
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _PATHY.match(node.value) and "." in node.value:
            self._add(MENTION, (node.value, False), "literal")

    def _add(self, op: str, val: tuple[str, bool], how: str, node: ast.AST | None = None) -> None:
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
