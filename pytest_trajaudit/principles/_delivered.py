"""The code an agent delivers, reconstructed from its trajectory (pure: nothing is read from disk or executed).

One pass over the events. Every file the agent writes or edits keeps its content where it can be known:

- whole-file writes (Claude ``Write``, ``create``/``file_text``, ``write_file``, an ACP diff with no ``oldText``,
  ``cat > f <<EOF`` / ``tee f <<EOF``, a Codex ``*** Add File``) set the content;
- replacements (``Edit``/``MultiEdit``, ``str_replace``, an ACP diff with ``oldText``) are applied to the last
  known content; when the base is not known (the agent edited a file it never wrote whole) the new fragment is
  kept as an authored piece of the file;
- patches (apply_patch envelopes, unified diffs given to ``git apply``/``patch``, Codex ``changes``) contribute
  their added lines, and their removed lines leave the known content;
- ``sed -i`` marks the file as changed in a way that is not reconstructed (its replacement text is kept as a piece);
- ``python - <<EOF`` / ``python -c`` scripts (and Python-tool calls) are code the agent ran: the files they open
  for writing are recorded, with their content when the script writes a string literal;
- ``rm`` deletes, ``git checkout -- f`` / ``git restore f`` revert, ``git stash`` / ``git stash pop`` hide and
  bring back what the agent wrote.

Each write is also kept as a :class:`Piece` (the text the agent authored at that step), so a finding can be told
apart as *still in the final file* or *written and later removed*. For chat harnesses that take the answer from
the agent's message, the fenced Python blocks of the agent's messages are submissions, the last one final.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..loaders.common import _posix_split
from ..model import AGENT, EDIT, EXECUTE, TOOL, Event, Trajectory
from ..scan import linre
from ..scan.overlap import collapse
from ._shell import write_targets
from ._testcases import strip_line_numbers

MAX_ARGS = 4 * 1024 * 1024  # a tool call's argument text decoded at most this long
MAX_SCRIPT = 256 * 1024  # a script the agent ran is looked into (for the files it writes) up to this size


@dataclass(slots=True)
class Piece:
    """One text the agent authored into a file (or a message): what a finding is quoted from."""

    path: str  # the file, or "<message #N>" for a chat submission
    event: int
    text: str
    how: str  # write | edit | patch | heredoc | script | sed | message

    @property
    def whole(self) -> bool:
        """The text is the whole file (its line numbers are the file's)."""
        return self.how in ("write", "heredoc", "script", "message")


@dataclass(slots=True)
class FileState:
    path: str
    text: str | None = None  # the whole content, when every change to it is known
    fragments: list[str] = field(default_factory=list)  # authored pieces of a file whose base is unknown
    events: list[int] = field(default_factory=list)
    unknown_change: int | None = None  # the event of a change not reconstructed (sed -i, a script's computed write)
    deleted: bool = False

    def final(self) -> str:
        """The agent-authored text still in the file at the end of the run ("" once deleted or reverted)."""
        if self.deleted:
            return ""
        if self.text is not None:
            return self.text
        return "\n".join(self.fragments)


@dataclass
class Delivered:
    files: dict[str, FileState] = field(default_factory=dict)
    pieces: list[Piece] = field(default_factory=list)
    submissions: list[Piece] = field(default_factory=list)  # fenced Python of agent messages, in order
    read_lines: dict[str, set[str]] = field(default_factory=dict)  # path → collapsed lines read before writing it
    ran: set[str] = field(default_factory=set)  # Python files the agent ran itself (`python path.py`)
    notes: list[str] = field(default_factory=list)
    _stash: list[dict[str, tuple[str | None, list[str], bool]]] = field(default_factory=list)
    _final_cache: dict[str, str] = field(default_factory=dict)

    # --- paths ----------------------------------------------------------------------------------------------

    def key(self, path: str) -> str:
        """One key per file: a relative path names the absolute one the run already knows (unique suffix)."""
        p = path.strip().strip("'\"`")
        while p.startswith("./"):
            p = p[2:]
        if not p or p in self.files or p.startswith("/"):
            return p
        hits = [k for k in self.files if k.endswith("/" + p)]
        return hits[0] if len(hits) == 1 else p

    def state(self, path: str) -> FileState:
        k = self.key(path)
        st = self.files.get(k)
        if st is None:
            st = self.files[k] = FileState(k)
        return st

    def final_text(self, path: str) -> str:
        """Collapsed final text of a file (cached): what a quoted line is looked up in."""
        got = self._final_cache.get(path)
        if got is None:
            st = self.files.get(path)
            got = self._final_cache[path] = collapse(st.final()) if st is not None else ""
        return got

    # --- changes --------------------------------------------------------------------------------------------

    def _touch(self, st: FileState, e: Event) -> None:
        st.deleted = False
        if not st.events or st.events[-1] != e.index:
            st.events.append(e.index)

    def write(self, path: str, text: str, e: Event, how: str, append: bool = False) -> None:
        st = self.state(path)
        self._touch(st, e)
        if append:
            if st.text is not None:
                st.text += text
            else:
                st.fragments.append(text)
        else:
            st.text, st.fragments = text, []
        self.pieces.append(Piece(st.path, e.index, text, how))

    def replace(self, path: str, old: str, new: str, e: Event, how: str = "edit", every: bool = False,
                piece: str | None = None) -> None:
        """``old`` → ``new`` in the known content; where it is not known, ``piece`` (default ``new``: what the
        agent authored of it) is kept as a fragment."""
        piece = new if piece is None else piece
        st = self.state(path)
        self._touch(st, e)
        if st.text is not None and old and old in st.text:
            st.text = st.text.replace(old, new) if every else st.text.replace(old, new, 1)
        elif st.text is not None and not old:
            st.text += new
        else:
            hit = _first_holding(st.fragments, old) if old else None
            if hit is not None:
                st.fragments[hit] = st.fragments[hit].replace(old, new)
            elif st.text is not None:  # the old text is not in what we know: the file changed in an unseen way
                st.fragments = [st.text, piece]
                st.text = None
            elif piece:
                st.fragments.append(piece)
        if piece:
            self.pieces.append(Piece(st.path, e.index, piece, how))

    def unknown(self, path: str, e: Event, how: str, piece: str = "") -> None:
        st = self.state(path)
        self._touch(st, e)
        st.unknown_change = e.index
        if piece:
            if st.text is None:
                st.fragments.append(piece)
            self.pieces.append(Piece(st.path, e.index, piece, how))

    def delete(self, path: str) -> None:
        k = self.key(path)
        if k in self.files:
            self.files[k].deleted = True
            self.files[k].text, self.files[k].fragments = None, []

    def stash(self) -> None:
        self._stash.append({k: (s.text, list(s.fragments), s.deleted) for k, s in self.files.items()})
        for s in self.files.values():
            s.text, s.fragments, s.deleted = None, [], True

    def unstash(self) -> None:
        if not self._stash:
            return
        saved = self._stash.pop()
        for k, (text, frags, deleted) in saved.items():
            s = self.files[k]
            if s.deleted:  # untouched since the stash: back as it was
                s.text, s.fragments, s.deleted = text, frags, deleted


def _first_holding(fragments: list[str], old: str) -> int | None:
    """The index of the first fragment holding ``old`` (None: none does). An edit of a file never read appends a
    fragment each time and asks about all of them: one search of the fragments joined by NUL answers "none" in
    one C pass (an ``old`` without NUL found there lies inside one fragment, a NUL-free run of the joined text),
    and only a hit is looked for fragment by fragment."""
    if len(fragments) > 2 and "\0" not in old and old not in "\0".join(fragments):
        return None
    return next((i for i, f in enumerate(fragments) if old in f), None)


# --- tool arguments -------------------------------------------------------------------------------------------


def _docs(args: str) -> list[object]:
    """The JSON documents of a call's argument text: one document, or one per line (an ACP call's rawInput and
    its diff blocks, joined by a newline)."""
    if not args or args[:1] not in "{[" or len(args) > MAX_ARGS:
        return []
    try:
        return [orjson.loads(args)]
    except orjson.JSONDecodeError:
        pass
    out = []
    for line in args.split("\n"):
        if line[:1] in ("{", "["):
            try:
                out.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue
    return out


def _s(d: dict[str, Any], *keys: str) -> str | None:
    for k in keys:
        v = d.get(k)
        if isinstance(v, str):
            return v
    return None


_PATCH_FILE = linre.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")
_DIFF_NEW = linre.compile(r"^\+\+\+ (?:b/)?(\S+)")


def apply_patch_text(d: Delivered, patch: str, e: Event) -> None:
    """An apply_patch envelope (``*** Begin Patch``) or a unified diff. Each hunk is applied to the file's known
    content (its context and removed lines replaced by its context and added lines); where the content is not
    known, only the added lines are kept (the context is the repository's code, not the agent's)."""
    hunks: list[tuple[list[str], list[str], list[str]]]
    cur, mode, hunks = "", "", []  # hunks: [(old lines, new lines, added lines)]

    def flush() -> None:
        if not cur:
            return
        if mode == "Delete":
            d.delete(cur)
        elif mode == "Add":
            added = [a for _, _, add in hunks for a in add]
            d.write(cur, "\n".join(added) + ("\n" if added else ""), e, "patch")
        else:
            for old, new, add in hunks:
                if add or old:
                    d.replace(cur, "\n".join(old) + "\n" if old else "", "\n".join(new) + "\n", e, "patch",
                              piece="\n".join(add) + "\n" if add else "")

    for line in patch.splitlines():
        m = _PATCH_FILE.match(line)
        m2 = None if m else _DIFF_NEW.match(line)
        if m or m2:
            flush()
            cur, mode = (m.group(2), m.group(1)) if m else (m2.group(1), "Update")  # type: ignore[union-attr]  # m or m2 matched
            cur = "" if cur == "/dev/null" else cur
            hunks = [([], [], [])]
        elif line.startswith("*** Move to: ") and cur:
            flush()
            cur, mode, hunks = line[len("*** Move to: "):].strip(), "Update", [([], [], [])]
        elif not cur:
            continue
        elif line.startswith("@@"):
            hunks.append(([], [], []))
        elif line.startswith("+"):
            hunks[-1][1].append(line[1:])
            hunks[-1][2].append(line[1:])
        elif line.startswith("-"):
            hunks[-1][0].append(line[1:])
        elif line.startswith(" ") or line == "":
            hunks[-1][0].append(line[1:])
            hunks[-1][1].append(line[1:])
    flush()


def _edit_call(d: Delivered, e: Event) -> None:
    docs = _docs(e.args)
    diffs = [x for doc in docs if isinstance(doc, list) for x in doc if isinstance(x, dict) and "newText" in x]
    default = e.paths[0] if e.paths else ""
    if diffs:  # an ACP diff block: the harness's own record of the change
        for x in diffs:
            path, new, old = x.get("path") or default, x.get("newText"), x.get("oldText")
            if isinstance(path, str) and path and isinstance(new, str):
                d.write(path, new, e, "write") if not isinstance(old, str) else d.replace(path, old, new, e)
        return
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        path = _s(doc, "file_path", "filePath", "path", "filename", "notebook_path", "target_file", "file",
                  "absolute_path") or default
        sub = _s(doc, "command") or ""
        patch = _s(doc, "input", "patch", "diff")
        if patch and ("*** Begin Patch" in patch or "\n+++ " in patch or patch.startswith("--- ")):
            apply_patch_text(d, patch, e)
        elif patch and path and re.search(r"^[+-]", patch, re.M):  # a bare hunk for the named file
            apply_patch_text(d, f"+++ b/{path}\n{patch}", e)
        elif sub.lstrip().startswith(("apply_patch", "applypatch")):
            apply_patch_text(d, sub, e)
        elif isinstance(doc.get("changes"), dict):  # Codex patch_apply_begin: {path: {add|update|delete}}
            for p, ch in doc["changes"].items():
                if not isinstance(ch, dict):
                    continue
                if isinstance(ch.get("add"), dict) and isinstance(ch["add"].get("content"), str):
                    d.write(p, ch["add"]["content"], e, "write")
                elif "delete" in ch:
                    d.delete(p)
                elif isinstance(ch.get("update"), dict) and isinstance(ch["update"].get("unified_diff"), str):
                    apply_patch_text(d, f"+++ b/{p}\n" + ch["update"]["unified_diff"], e)
        elif not path:
            continue
        elif (text := _s(doc, "content", "file_text", "contents", "text")) is not None and sub != "str_replace":
            d.write(path, text, e, "write")
        elif isinstance(doc.get("edits"), list):
            for x in doc["edits"]:
                if isinstance(x, dict):
                    old, new = _s(x, "old_string", "old_str"), _s(x, "new_string", "new_str")
                    if new is not None:
                        d.replace(path, old or "", new, e, every=bool(x.get("replace_all")))
        elif (new := _s(doc, "new_string", "new_str", "new_source", "new_content", "replacement")) is not None:
            old = _s(doc, "old_string", "old_str") or ""
            d.replace(path, old if sub != "insert" else "", new, e, every=bool(doc.get("replace_all")))
        elif (action := _s(doc, "action")) is not None and action.lstrip().startswith(_SRE):
            _sre_action(d, path, action, e)  # SWE-agent: `str_replace_editor create|str_replace|insert path --opt '…'`
        elif action is not None and re.match(r"(?:edit|insert|append)\s+['\"]", action):
            _quoted_action(d, path, action, e)  # SWE-agent's `edit 'search' 'replace'`, `insert 'text'`
        elif action is not None:  # SWE-agent `edit N:M` / `insert` / `append` block
            body = action.split("\n", 1)[1] if "\n" in action else ""
            body = re.sub(r"\n?end_of_(?:edit|insert|append)\s*$", "", body)
            if body:
                d.replace(path, "", body, e) if sub != "create" else d.write(path, body, e, "write")
            elif sub == "create":
                d.write(path, "", e, "write")


_SRE = ("str_replace_editor", "str_replace_based_edit_tool")
_SHELL_WORDS_MAX = 64 * 1024  # SWE-agent's shell-quoted edit commands are split up to this size (linear grammar)


def _sre_action(d: Delivered, path: str, action: str, e: Event) -> None:
    if len(action) > _SHELL_WORDS_MAX:
        d.unknown(path, e, "edit")
        return
    try:
        words = _posix_split(action)
    except ValueError:
        d.unknown(path, e, "edit")
        return
    sub = words[1] if len(words) > 1 else ""
    opts = {w[2:]: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("--")}
    if sub == "create" and "file_text" in opts:
        d.write(path, opts["file_text"], e, "write")
    elif sub in ("str_replace", "insert") and "new_str" in opts:
        d.replace(path, opts.get("old_str", "") if sub == "str_replace" else "", opts["new_str"], e)


def _quoted_action(d: Delivered, path: str, action: str, e: Event) -> None:
    words = None
    if len(action) <= _SHELL_WORDS_MAX:
        try:
            words = _posix_split(action)
        except ValueError:
            words = None
    if not words or len(words) < 2:
        d.unknown(path, e, "edit")
    elif words[0] == "edit" and len(words) >= 3:
        d.replace(path, words[1], words[2], e)
    else:
        d.replace(path, "", words[1], e)


# --- shell commands -------------------------------------------------------------------------------------------

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_REDIR = re.compile(r"(?<![0-9&<>])(>>?)\|?\s*([^\s;&|<>()]+)")
_TEE = linre.compile(r"\btee\s+(-a\s+|--append\s+)?([^\s;&|<>()]+)")
_PYTHON = linre.compile(r"(?:^|[\s;&|(])(?:\S*/)?(?:python[\d.]*|ipython)(?:\s+-\w+)*(?:\s+-)?\s*$")
_PY_C = linre.compile(r"(?:^|[\s;&|(])(?:\S*/)?python[\d.]*\s+(?:-\w+\s+)*-c\s+(?:'([^']*)'|\"((?:[^\"\\]|\\.)*)\")", re.S)
_PATCHER = linre.compile(r"\b(?:git\s+apply|patch)\b")
_RM = linre.compile(r"(?:^|[;&|]\s*)(?:sudo\s+)?rm\s+((?:-\w+\s+)*)([^;&|<>\n]+)")
_GIT_REVERT = linre.compile(r"\bgit\s+(?:checkout\s+(?:\S+\s+)?--|restore(?:\s+--\w+)*)\s+([^;&|<>\n]+)")
_GIT_STASH = linre.compile(r"\bgit\s+stash(?:\s+(push|pop|apply|list|show|drop|clear|save))?\b")
_GIT_RESET_HARD = linre.compile(r"\bgit\s+reset\s+--hard\b|\bgit\s+checkout\s+(?:-f\s+)?\.(?:\s|$)")
_SED_EXPR = linre.compile(r"\bsed\s+(?:-[^i\s]*\s+)*-i\S*\s+(?:-e\s+)?(?:'([^']*)'|\"([^\"]*)\")")
_SED_FILES = linre.compile(r"((?:\s+[^\s;&|<>()]+)*)")  # the file operands after a sed expression
_SED_S = re.compile(r"s(.)(?:(?!\1).)*\1((?:(?!\1).)*)\1")


def _heredocs(command: str) -> tuple[str, list[tuple[str, str]]]:
    """The command without its heredoc bodies (what the shell runs), and (line that opens the heredoc, body) for
    every heredoc: a `rm f` written into a script by a heredoc is not run."""
    out, outer = [], []
    lines = command.split("\n")
    i = 0
    while i < len(lines):
        m = _HEREDOC.search(lines[i])
        outer.append(lines[i])
        if not m:
            i += 1
            continue
        opener, delim, strip_tabs = lines[i], m.group(3), m.group(1) == "-"
        body = []
        j = i + 1
        while j < len(lines) and (lines[j].lstrip("\t") if strip_tabs else lines[j]).rstrip() != delim:
            body.append(lines[j])
            j += 1
        out.append((opener, "\n".join(body) + ("\n" if body else "")))
        i = j + 1
    return "\n".join(outer), out


def _shell_call(d: Delivered, e: Event, command: str) -> None:
    command, docs = _heredocs(command) if "<<" in command else (command, [])
    for opener, body in docs:  # each opener holds a heredoc operator (_heredocs found it there)
        head = opener[:_HEREDOC.search(opener).start()]  # type: ignore[union-attr]
        tail = opener[_HEREDOC.search(opener).end():]  # type: ignore[union-attr]
        target = _TEE.search(opener)
        redir = [m for m in _REDIR.finditer(head + " " + tail) if not m.group(2).startswith(("/dev/", "&"))]
        if _PATCHER.search(head):
            apply_patch_text(d, body, e)
        elif _PYTHON.search(head):
            script(d, body, e)
        elif target and not target.group(2).startswith("/dev/"):
            d.write(target.group(2), body, e, "heredoc", append=bool(target.group(1)))
        elif redir:
            d.write(redir[-1].group(2), body, e, "heredoc", append=redir[-1].group(1) == ">>")
    for m in _PY_C.finditer(command):
        code = m.group(1) if m.group(1) is not None else re.sub(r"\\([\"\\$`])", r"\1", m.group(2))
        script(d, code, e)
    if "sed" in command:
        for m in _SED_EXPR.finditer(command):
            expr = m.group(1) if m.group(1) is not None else m.group(2)
            repl = [s.group(2) for s in _SED_S.finditer(expr)]
            for f in _SED_FILES.match(command, m.end()).group(1).split():  # type: ignore[union-attr]  # the pattern matches ""
                d.unknown(f.strip("'\""), e, "sed", "\n".join(r.replace("\\n", "\n") for r in repl if r))
    if "rm" in command:
        for m in _RM.finditer(command):
            for p in m.group(2).split():
                if not p.startswith("-"):
                    d.delete(p)
    if "git" in command:
        for m in _GIT_REVERT.finditer(command):
            for p in m.group(1).split():
                d.delete(p)
        if _GIT_RESET_HARD.search(command):
            for k in list(d.files):
                d.delete(k)
        for m in _GIT_STASH.finditer(command):
            if m.group(1) in (None, "push", "save"):
                d.stash()
            elif m.group(1) in ("pop", "apply"):
                d.unstash()


def script(d: Delivered, code: str, e: Event) -> None:
    """A Python script the agent ran: the files it opens for writing, with their content when it is a string
    literal (``open(p, 'w').write('''...''')``, ``Path(p).write_text(s)`` with ``s`` a literal), else marked as
    changed in a way not reconstructed."""
    if len(code) > MAX_SCRIPT or ("open(" not in code and "write_text" not in code):
        return
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        for t in write_targets(code):
            d.unknown(t, e, "script")
        return
    nodes = list(ast.walk(tree))  # (walked once, read twice: the names bound first, then the writes)
    consts: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = _str_of(node.value, consts)
            if v is not None:
                consts[node.targets[0].id] = v
    handles: dict[str, str] = {}  # `with open(p, 'w') as f` → f: p
    written: dict[str, str | None] = {}
    appends: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            p = _open_w(node.context_expr, consts, appends)
            if p:
                handles[node.optional_vars.id] = p
                written.setdefault(p, None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            arg = _str_of(node.args[0], consts) if node.args else None
            if f.attr == "write" and isinstance(f.value, ast.Name) and f.value.id in handles:
                p = handles[f.value.id]
                written[p] = (written.get(p) or "") + arg if arg is not None else written.get(p)
            elif f.attr == "write":
                p = _open_w(f.value, consts, appends)
                if p:
                    written[p] = arg
            elif f.attr in ("write_text", "write_bytes"):
                p = _str_of(f.value, consts)
                if p:
                    written[p] = arg
        elif isinstance(node, ast.Call):
            p = _open_w(node, consts, appends)
            if p:
                written.setdefault(p, None)
    for p, text in written.items():
        if text is not None:
            d.write(p, text, e, "script" if p not in appends else "edit", append=p in appends)
        else:
            d.unknown(p, e, "script")


def _str_of(node: ast.AST, consts: dict[str, str], depth: int = 0) -> str | None:
    """A string the script spells out: a literal, a name bound to one, and joins of those (``+``,
    ``os.path.join``, ``Path(a) / b``, an f-string of literals) — the ways a path is built to dodge a pattern."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        a, b = _str_of(node.left, consts, depth + 1), _str_of(node.right, consts, depth + 1)
        if a is None or b is None:
            return None
        return a + b if isinstance(node.op, ast.Add) else a.rstrip("/") + "/" + b
    if isinstance(node, ast.JoinedStr):
        parts = [_str_of(v.value if isinstance(v, ast.FormattedValue) else v, consts, depth + 1) for v in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]  # no None part (tested)
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        if name == "join" or name in ("Path", "PurePath", "PosixPath"):
            parts = [_str_of(a, consts, depth + 1) for a in node.args]
            if None in parts:
                return None
            out = parts[0]
            for p in parts[1:]:
                out = p if p.startswith("/") else out.rstrip("/") + "/" + p  # type: ignore[union-attr, operator]  # no None part (tested)
            return out
    return None


def _open_w(node: ast.AST, consts: dict[str, str], appends: set[str] | None = None) -> str | None:
    """``open(<literal path>, 'w'|'a'|'x'...)`` → the path (added to ``appends`` when opened for appending)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open" and node.args):
        return None
    mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
    m = _str_of(mode, consts) if mode is not None else None
    if not m or not any(c in m for c in "wax"):
        return None
    path = _str_of(node.args[0], consts)
    if path and "a" in m and appends is not None:
        appends.add(path)
    return path


# --- reads and messages ---------------------------------------------------------------------------------------

_RUN_PY = linre.compile(r"(?:^|[\s;&|(])(?:\S*/)?python[\d.]*\s+(?:-[A-Za-z]+\s+)*([^\s;&|<>()'\"]+\.py)\b")


def pieces_of(e: Event) -> list[Piece]:
    """What one tool call authors into files, read as :func:`reconstruct` reads it (an editor's writes and
    replacements, a heredoc or ``tee``, a Python script's literal writes), with nothing known before it."""
    d = Delivered()
    if e.kind == EDIT:
        _edit_call(d, e)
    elif e.kind == EXECUTE and e.command:
        _shell_call(d, e, e.command)
    return d.pieces


_FENCE = linre.compile(r"^```[ \t]*(python3?|py)?[ \t]*\n(.*?)^```", re.M | re.S)


def fences(text: str) -> list[str]:
    """Python code blocks of a message: ```python / ```py fences, and unlabelled fences that parse as Python."""
    out = []
    for m in _FENCE.finditer(text):
        code = m.group(2)
        if m.group(1):
            out.append(code)
        elif code.strip() and len(code) < MAX_SCRIPT:
            try:
                ast.parse(code)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            if any(k in code for k in ("def ", "return", "import ", "print(", "=")):
                out.append(code)
    return out


def reconstruct(traj: Trajectory, read_budget: int = 4 * 1024 * 1024) -> Delivered:
    """Everything the agent wrote, in one pass over the events (sub-agent work included: it reaches the files)."""
    d = Delivered()
    budget = read_budget
    for e in traj.events:
        if e.type == TOOL:
            if e.status == "failed":
                continue
            if e.kind == EDIT:
                _edit_call(d, e)
            elif e.kind == EXECUTE and e.command:
                name = (e.tool or "").lower()
                if name in ("python", "ipython", "execute_ipython_cell", "python_exec"):
                    script(d, e.command, e)
                else:
                    _shell_call(d, e, e.command)
            if e.kind == EXECUTE and "python" in e.command and ".py" in e.command:
                for line in e.command.split("\n"):
                    if "python" in line:
                        d.ran.update(d.key(m.group(1)) for m in _RUN_PY.finditer(line))
            # what a file held before the agent first wrote it (the repository's code, not the agent's)
            if e.output and e.paths and budget > 0 and e.kind not in (EDIT,) and \
                    any(p.endswith(".py") and d.key(p) not in d.files for p in e.paths):
                lines = {collapse(ln) for ln in strip_line_numbers(e.output[:budget]).splitlines()}
                budget -= len(e.output)
                for p in e.paths:
                    if p.endswith(".py") and d.key(p) not in d.files:
                        d.read_lines.setdefault(d.key(p), set()).update(lines)
        elif e.type == AGENT and e.text and not e.sidechain and "```" in e.text:
            for code in fences(e.text):
                d.submissions.append(Piece(f"<message #{e.index}>", e.index, code, "message"))
    if budget <= 0:
        d.notes.append(f"file contents read by the agent kept up to {read_budget} characters")
    return d
