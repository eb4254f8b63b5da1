"""What a shell command touches, read from its syntax tree: the files it reads, writes,
deletes or imports, with each path decoded the way the shell or Python would build it.

Shell commands are parsed by tree-sitter-bash (a real grammar: pipelines, subshells, ``$(…)``, heredocs,
redirections, ``$'…'`` and concatenated words), so a path split by quoting (``an''swers.txt``), held in a variable
(``a=ans; cat "$a"wers.txt``), spelled with escapes (``$'\\x61nswers.txt'``) or produced by ``$(echo … | base64 -d)``
is seen as the path it names. ``bash -c``/``sh -c``/``eval`` strings, a base64 blob piped into a shell, and a
wrapper's quoted command argument (``./audit_run "ls; cat answers.txt"``) are parsed again, one level deeper.
Python code (``python -c``, ``python - <<EOF``) goes to :mod:`._pyast`, which reads it through :mod:`ast`. A relative
path is read against the working directory the script's ``cd`` commands reach (:func:`shell_walk`).

Everything is bounded (text length, nesting depth) and nothing is ever run. Without tree-sitter (an install
without the wheel) commands fall back to the shlex split the loaders use: the words, without the decoding.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import posixpath
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
_WRAPPED = frozenset(_READERS | _DELETERS | _WRITERS | {"cp", "mv"})  # what a wrapper's first argument may run
# a wrapper's argument that is a whole command line (a word, then another word or a separator)
_COMMAND_LINE = re.compile(r"^\s*[\w./-]+(?:\s+\S|\s*[;|&])")
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
    return shell_walk(script, "", depth, nested)[0]


def shell_walk(script: str, cwd: str = "", depth: int = 0, nested: str = "") -> tuple[list[Touch], str]:
    """(the files ``script`` touches, the working directory it leaves its shell in). ``cwd`` is the directory the
    script starts in ("" when unknown): a relative path is read against the directory the script's own ``cd``
    commands (or ``cwd``) put it in, so ``cd /oracle && cat *`` reads ``/oracle/*``. A ``cd`` inside a subshell
    or ``$(…)`` ends with it; ``cd -``/``popd`` make the directory unknown again."""
    if not script or depth > MAX_DEPTH:
        return [], cwd
    if _PARSER is None or len(script) > MAX_TEXT:  # padding a command never hides it: its words are still read
        return _fallback(script, nested, cwd)
    try:
        data = script.encode("utf-8", "surrogatepass")
        tree = _PARSER.parse(data)
    except Exception:  # a text the binding refuses: the words without decoding
        return _fallback(script, nested, cwd)
    walker = _Shell(depth, nested, cwd)
    try:
        walker.visit(tree.root_node)
        walker.settle()
    except RecursionError:  # `$($($(…)))` nested past Python's stack: the words without decoding
        return _fallback(script, nested, cwd)
    return walker.out, walker.cwd


def _fallback(script: str, nested: str, cwd: str = "") -> tuple[list[Touch], str]:
    out: list[Touch] = []
    for words in _segments(script):
        i = 0
        while i < len(words) and (words[i] in _WRAPPERS or ("=" in words[i] and words[i][0].isalpha())):
            i += 1
        if i < len(words):
            start = len(out)
            name = words[i].rsplit("/", 1)[-1]
            _classify(name, [(w, "") for w in words[i + 1:]], out, "", nested)
            resolve(out, start, cwd)
            cwd = change_dir(cwd, name, [w for w in words[i + 1:] if not w.startswith("-")])
    return out, cwd


def change_dir(cwd: str, name: str, args: list[str]) -> str:
    """The working directory after the command ``name args`` run in ``cwd`` ("" when it becomes unknown)."""
    if name not in ("cd", "pushd", "popd"):
        return cwd
    if name == "popd" or (args and args[0] == "-"):
        return ""
    target = args[0] if args else "~"
    if not target or "$" in target or "`" in target or _GLOB_CHARS.search(target):
        return ""  # a variable the command does not show, or a glob: where it leads is not known
    if target.startswith(("/", "~")):
        return posixpath.normpath(target)
    return posixpath.normpath(posixpath.join(cwd, target)) if cwd else posixpath.normpath(target)


_GLOB_CHARS = re.compile(r"[*?\[]")


def resolve(out: list[Touch], start: int, cwd: str) -> None:
    """Read the relative paths of ``out[start:]`` against ``cwd`` (in place; nothing when ``cwd`` is unknown)."""
    if not cwd or cwd == ".":
        return
    for k in range(start, len(out)):
        t = out[k]
        p = t.path
        if p and not p.startswith(("/", "~", "$", "-")) and "://" not in p:
            full = posixpath.normpath(posixpath.join(cwd, p))
            if (p.endswith("/") or p.rsplit("/", 1)[-1] in (".", "..")) and not full.endswith("/"):
                full += "/"  # (a folder written as one, `cp x .`, stays one: the copy keeps its own name)
            out[k] = Touch(t.op, full, t.obfuscated, t.how, t.nested)


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
        from ._pyast import python_touches  # (a Python snippet's reading calls back into this module)

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
    if name in ("tar", "bsdtar", "unzip") and _extracts(name, [w for w, _ in args]):
        # an archive unpacked: its files land in the -C / -d folder (the working directory without one)
        words = [w for w, _ in args]
        dest = "."
        for i, w in enumerate(words):
            if w in ("-C", "--directory", "-d") and i + 1 < len(words):
                dest = words[i + 1]
            elif w.startswith("--directory="):
                dest = w.split("=", 1)[1]
        out.append(Touch(WRITE, dest.rstrip("/") + "/", "", f"{name} extract", nested))
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
            if _COMMAND_LINE.match(w):
                out.extend(shell_touches(w, depth + 1, "wrapper argument"))
        if plain and plain[0][0].rsplit("/", 1)[-1] in _WRAPPED:
            # `./wrapper cat answers.txt`: the wrapper runs the rest as a command
            _classify(plain[0][0].rsplit("/", 1)[-1], plain[1:], out, heredoc, "wrapper argument", depth + 1)
            return
    out.extend(Touch(MENTION, w, ob, name, nested) for w, ob in plain if _PATHY.match(w) and ("." in w or "/" in w))


def _extracts(name: str, words: list[str]) -> bool:
    """``tar``/``bsdtar`` told to extract (``x`` in its first flag word, ``--extract``, ``--get``), or ``unzip``
    without ``-l``/``-p``/``-t``/``-v``/``-Z`` (which only list, print or test)."""
    if name == "unzip":
        return not any(w.startswith("-") and set(w[1:]) & set("lptvZ") for w in words if not w.startswith("--"))
    first = next((w for w in words if w), "")
    if "--extract" in words or "--get" in words:
        return True
    return bool(first) and not first.startswith("--") and "x" in first.lstrip("-")


class _Shell:
    """One walk over a tree-sitter-bash tree, collecting touches; variables assigned earlier are remembered."""

    def __init__(self, depth: int, nested: str, cwd: str = "") -> None:
        self.depth = depth
        self.nested = nested
        self.cwd = cwd  # the working directory the walk has reached ("" unknown; may be relative to the start)
        self.vars: dict[str, str] = {}
        self.out: list[Touch] = []
        self.done = 0  # how many of ``out`` are read against the working directory already

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
            # tree-sitter-bash hangs `a && cd /x && cat y > out` 's redirect on the whole list; bash opens it for
            # the list's last command, in the directory the list has reached: walk the list first
            late = body is not None and body.type in ("list", "pipeline")
            if body is not None and late:
                self.visit(body)
            for c in node.children:
                if c.type == "file_redirect":
                    self.redirect(c)
                elif c.type == "heredoc_redirect":
                    heredoc = "".join(_text(b) for b in c.children if b.type == "heredoc_body")
                    for r in c.children:  # `cat <<EOF > f`: the grammar puts the file redirect inside
                        if r.type == "file_redirect":
                            self.redirect(r)
                elif c.type == "herestring_redirect":
                    heredoc = self.word(c.children[-1])[0] if c.children else ""
            if body is not None and not late:
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
        if t == "subshell":  # `(cd /x; …)`: the directory change ends with the subshell
            cwd = self.cwd
            for c in node.children:
                self.visit(c)
            self.settle()
            self.cwd = cwd
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

    def settle(self) -> None:
        """Read the relative paths found since the last call against the directory the walk is in."""
        resolve(self.out, self.done, self.cwd)
        self.done = len(self.out)

    def command(self, node: _ts.Node, heredoc: str) -> None:
        self.settle()
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
                inner = _Shell(self.depth + 1, "$(…)")  # (its relative paths are settled with this command's)
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
        self.settle()  # (the command's own paths, against the directory it started in)
        if name in ("cd", "pushd", "popd"):
            self.cwd = change_dir(self.cwd, name, [w for w, _ in words[i + 1:] if not w.startswith("-")])

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
            from ._pyast import python_touches

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
