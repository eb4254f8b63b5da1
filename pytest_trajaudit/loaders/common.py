"""Helpers every loader shares: tool-name → kind, argument → command/paths, text flattening."""

from __future__ import annotations

import re
import shlex
from typing import Any

import orjson

from ..model import AGENT, EDIT, EXECUTE, FETCH, OTHER_KIND, READ, SEARCH, SKILL, THINK, TOOL, Event
from ..safeio import loads_bounded

OUTPUT_CLIP = 20_000  # characters of a tool result kept per event (both ends); enough for every check
MAX_NESTING = 64  # message content nested deeper than this is hostile, not a trajectory: malformed input

_KIND_BY_TOOL = {
    # execute
    "bash": EXECUTE, "shell": EXECUTE, "exec_command": EXECUTE, "execute_bash": EXECUTE, "run": EXECUTE,
    "terminal": EXECUTE, "execute": EXECUTE, "run_command": EXECUTE, "local_shell": EXECUTE,
    "bashoutput": EXECUTE, "killshell": EXECUTE, "container.exec": EXECUTE, "python": EXECUTE,
    "ipython": EXECUTE, "execute_ipython_cell": EXECUTE, "cmdrunaction": EXECUTE, "shell_command": EXECUTE,
    "write_stdin": EXECUTE, "list_dir": SEARCH, "grep_files": SEARCH, "view_image": READ,
    # read
    "read": READ, "read_file": READ, "view": READ, "cat": READ, "open": READ, "view_file": READ,
    "fileread": READ, "notebookread": READ, "read_many_files": READ,
    # edit
    "write": EDIT, "edit": EDIT, "multiedit": EDIT, "notebookedit": EDIT, "str_replace_editor": EDIT,
    "str_replace_based_edit_tool": EDIT, "apply_patch": EDIT, "create": EDIT, "write_file": EDIT,
    "edit_file": EDIT, "replace": EDIT, "insert": EDIT, "str_replace": EDIT, "fileedit": EDIT,
    "filewrite": EDIT, "patch": EDIT,
    # search
    "grep": SEARCH, "glob": SEARCH, "ls": SEARCH, "search": SEARCH, "find_file": SEARCH,
    "search_file": SEARCH, "search_dir": SEARCH, "list_directory": SEARCH, "list_files": SEARCH,
    "codebase_search": SEARCH, "toolsearch": SEARCH, "find": SEARCH,
    # fetch
    "webfetch": FETCH, "websearch": FETCH, "web_search": FETCH, "fetch": FETCH, "web_fetch": FETCH,
    "browser": FETCH, "google_web_search": FETCH,
    # think / plan / delegate
    "task": THINK, "agent": THINK, "todowrite": THINK, "think": THINK, "update_plan": THINK,
    "exitplanmode": THINK, "enterplanmode": THINK, "todoread": THINK, "taskoutput": THINK,
    # skill
    "skill": SKILL, "invoke_skill": SKILL, "activate_skill": SKILL,
}

_CMD_KEYS = ("command", "cmd", "script", "code", "commands", "input")
_PATH_KEYS = ("file_path", "filePath", "path", "filename", "notebook_path", "target_file", "file", "absolute_path", "dir_path")
_CMD_SET, _PATH_SET = frozenset(_CMD_KEYS), frozenset(_PATH_KEYS)


def kind_for_tool(name: str) -> str:
    try:  # a trajectory names a handful of tools thousands of times
        return _KIND_MEMO[name]
    except (KeyError, TypeError):
        pass
    kind = _kind_for_tool(name)
    if type(name) is str and len(name) <= 200:
        if len(_KIND_MEMO) >= 4096:
            _KIND_MEMO.clear()
        _KIND_MEMO[name] = kind
    return kind


_KIND_MEMO: dict[str, str] = {}


def _kind_for_tool(name: str) -> str:
    n = (name or "").strip().lower().replace("-", "_")
    if n in _KIND_BY_TOOL:
        return _KIND_BY_TOOL[n]
    if n.startswith("mcp__"):
        return OTHER_KIND
    for prefix, kind in (("read", READ), ("write", EDIT), ("edit", EDIT), ("search", SEARCH),
                         ("bash", EXECUTE), ("exec", EXECUTE), ("web", FETCH)):
        if n.startswith(prefix):
            return kind
    return OTHER_KIND


# Argument-based kinds for tools whose names say nothing (Inspect's ``run_bash``, ``python_exec``, custom agent
# tools): what the call's arguments hold decides. Editor sub-commands are the str_replace_editor/text_editor ones.
_EXEC_KEYS = ("cmd", "command", "code", "script", "commands")
_CONTENT_KEYS = frozenset(("content", "contents", "file_text", "new_str", "new_string", "text", "patch", "diff",
                           "old_str", "old_string", "insert_line", "edits", "new_content", "data"))
_EDITOR_VIEW = frozenset(("view", "read", "cat"))
_EDITOR_WRITE = frozenset(("create", "str_replace", "insert", "undo_edit", "write", "append", "delete", "edit",
                           "replace", "overwrite"))
_MUTATING_VERBS = ("delete", "remove", "rm", "move", "rename", "mkdir", "copy", "touch", "chmod", "append")
_LISTING_VERBS = ("list", "ls", "dir", "tree", "glob", "find", "grep", "search")
_URL_KEYS = ("url", "urls", "href")


def kind_from_args(name: str, args: Any) -> str:
    """The kind of a call from its arguments, for a tool whose name maps to no kind: an editor sub-command
    (``command`` = view/create/str_replace… next to a ``path``) → read for a view, else edit; a non-empty
    ``cmd``/``command``/``code``/``script`` string → execute; a path with content to write (``content``,
    ``file_text``, ``new_str``, …) → edit; a path with a delete/move/rename-like tool name → edit; a path with a
    list/search-like tool name or a ``pattern`` → search; a path alone → read; a ``url`` → fetch; else other."""
    if not isinstance(args, dict) or not args:
        return OTHER_KIND
    n = (name or "").strip().lower().replace("-", "_")
    words = set(re.split(r"[_.\s/]+", n))
    has_path = not _PATH_SET.isdisjoint(args) and any(isinstance(args.get(k), str) and args.get(k) for k in _PATH_KEYS)
    sub = args.get("command")
    if has_path and isinstance(sub, str) and sub.strip().lower() in _EDITOR_VIEW | _EDITOR_WRITE:
        return READ if sub.strip().lower() in _EDITOR_VIEW else EDIT
    for key in _EXEC_KEYS:
        val = args.get(key)
        if (isinstance(val, str) and val.strip()) or (isinstance(val, list) and val and all(isinstance(v, str) for v in val)):
            return EXECUTE
    if has_path:
        if not _CONTENT_KEYS.isdisjoint(args):
            return EDIT
        if not words.isdisjoint(_MUTATING_VERBS):
            return EDIT
        if not words.isdisjoint(_LISTING_VERBS) or "pattern" in args or "glob" in args:
            return SEARCH
        return READ
    if any(isinstance(args.get(k), str | list) and args.get(k) for k in _URL_KEYS):
        return FETCH
    return OTHER_KIND


def infer_kind(name: str, args: Any) -> str:
    """The kind of a call: from its tool name (:func:`kind_for_tool`) when the name is a known one, else from its
    arguments (:func:`kind_from_args`). MCP tools (``mcp__server__tool``) keep ``other``: their arguments are the
    server's own vocabulary."""
    k = kind_for_tool(name)
    if k != OTHER_KIND or (name or "").lower().startswith("mcp__"):
        return k
    return kind_from_args(name, args)


# Non-numeric score values with one meaning. The letters are Inspect's own constants (CORRECT "C", INCORRECT "I",
# PARTIAL "P", NOANSWER "N"), mapped as its ``value_to_float`` documents (P = 0.5, N = 0), case-sensitive as there;
# the words are the categories scorers write for a pass or a fail, matched case-insensitively. Anything else (a
# letter grade "A", a category such as "refused", a dict of several metrics) has no agreed number.
SCORE_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
SCORE_WORDS = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0, "correct": 1.0, "incorrect": 0.0, "pass": 1.0,
               "passed": 1.0, "fail": 0.0, "failed": 0.0, "success": 1.0, "failure": 0.0, "resolved": 1.0,
               "unresolved": 0.0}


def score_value(v: Any) -> float | None:
    """A scorer's value as a reward: numbers and booleans as they are, :data:`SCORE_LETTERS`,
    :data:`SCORE_WORDS`, a numeric string; None for anything else (NaN and infinities included)."""
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, int | float):
        f = float(v)
    elif isinstance(v, str):
        s = v.strip()
        if s in SCORE_LETTERS:
            return SCORE_LETTERS[s]
        if s.lower() in SCORE_WORDS:
            return SCORE_WORDS[s.lower()]
        try:
            f = float(s)
        except ValueError:
            return None
    else:
        return None
    return f if f == f and f not in (float("inf"), float("-inf")) else None


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def code_blocks(text: str) -> tuple[str, ...]:
    """The content of every top-level fenced code block of a Markdown text, in order (CommonMark fences: closed by
    the same character, at least as long, with no info string; nested fences stay inside their block's content;
    an unclosed fence yields nothing)."""
    if "```" not in text and "~~~" not in text:
        return ()
    lines = text.split("\n")
    out: list[str] = []
    fence = ""
    start = 0
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if not fence:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence, start = m.group(1), i + 1
            continue
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
            out.append("\n".join(lines[start:i]))
            fence = ""
    return tuple(c for c in out if c.strip())


def mark_submissions(events: list[Event], meta: dict[str, Any], *, chat: bool | None) -> None:
    """Record how the harness takes the agent's answer: ``meta["harness"]`` = ``"chat"`` (from the agent's
    message: it runs the message's fenced code against the tests) or ``"tools"`` (from the files the agent's tool
    calls wrote); not set when the loader cannot tell (``chat`` None). In a chat harness every agent message's
    fenced code blocks are its submissions, in :attr:`Event.code`."""
    if chat is None:
        return
    meta["harness"] = "chat" if chat else "tools"
    if chat:
        for e in events:
            if e.type == AGENT and not e.sidechain:
                e.code = code_blocks(e.text)


def dumps(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError as exc:
        if "Recursion limit" in str(exc):  # deeper than orjson's 255 levels: never str() it (RecursionError)
            raise ValueError("arguments nested too deep") from None
        return str(value)


def clip(text: str, limit: int = OUTPUT_CLIP) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[... {len(text) - limit} characters clipped ...]\n" + text[-half:]


def clip_ends(head: str, n: int, tail: str, limit: int = OUTPUT_CLIP) -> str:
    """``clip(text)`` of a text longer than ``limit`` (>= 2) from its two ends only: ``head`` = at least its first
    ``limit // 2`` characters, ``tail`` = at least its last ``limit // 2``, ``n`` = its length."""
    half = limit // 2
    return head[:half] + f"\n[... {n - limit} characters clipped ...]\n" + tail[len(tail) - half:]


def flatten_text(content: Any, depth: int = 0) -> str:
    """Text of a message content: a string, or a list of blocks with text/content fields. Content nested more
    than :data:`MAX_NESTING` levels raises ValueError (the format dispatcher reports it as unusable input; a
    fixed limit, unlike a RecursionError, does not depend on how deep the caller's stack already is)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if depth >= MAX_NESTING:
        raise ValueError(f"message content nested more than {MAX_NESTING} levels deep")
    if isinstance(content, list):
        return "\n".join(t for t in (flatten_text(c, depth + 1) for c in content) if t)
    if isinstance(content, dict):
        for key in ("text", "content", "output", "thinking", "result"):
            if key in content and content[key] is not None:
                return flatten_text(content[key], depth + 1)
        return ""
    return str(content)


def command_from_args(args: Any) -> str:
    if not isinstance(args, dict) or _CMD_SET.isdisjoint(args):  # (a C pass over the call's few keys)
        return ""
    for key in _CMD_KEYS:
        val = args.get(key)
        if isinstance(val, str) and val:
            return val
        if isinstance(val, list) and val and all(isinstance(v, str) for v in val):
            # ["bash", "-lc", "cmd"] → the script itself; otherwise a shell-quoted join
            if len(val) >= 3 and val[0].endswith(("bash", "sh", "zsh")) and val[1] in ("-lc", "-c"):
                return str(val[2])
            return shlex.join(val)
    return ""


def paths_from_args(args: Any) -> tuple[str, ...]:
    if not isinstance(args, dict):
        return ()
    if _PATH_SET.isdisjoint(args) and "edits" not in args:
        return ()
    out = []
    for key in _PATH_KEYS:
        val = args.get(key)
        if isinstance(val, str) and val and len(val) < 4096:
            out.append(val)
    edits = args.get("edits")
    if isinstance(edits, list):
        for e in edits:
            if isinstance(e, dict):
                for key in _PATH_KEYS:
                    val = e.get(key)
                    if isinstance(val, str) and val:
                        out.append(val)
    return tuple(dict.fromkeys(out))


def tool_event(
    index: int,
    name: str,
    args: Any,
    *,
    output: Any = "",
    status: str = "unknown",
    kind: str | None = None,
    title: str | None = None,
    raw: str = "",
    sidechain: bool = False,
    clipped: bool = False,
) -> Event:
    """Build a tool-call event from a tool name and its arguments (dict, or a JSON string). ``clipped``: the
    output is a string the loader already cut with :func:`clip_ends` (to hold less while it reads): kept as is."""
    if isinstance(args, str):
        try:
            decoded = loads_bounded(args)
            args = decoded if isinstance(decoded, dict) else args
        except orjson.JSONDecodeError:
            pass
    command = command_from_args(args)
    k = kind or infer_kind(name, args)
    if isinstance(args, dict) and k == EDIT and name.lower() == "str_replace_editor":
        sub = str(args.get("command", ""))
        command = ""
        if sub == "view":
            k = READ
    elif k != EXECUTE and command and k not in (OTHER_KIND,):
        command = command if k == EXECUTE else ""
    return Event(
        index=index,
        type=TOOL,
        kind=k,
        tool=name or "",
        title=title if title is not None else (name or ""),
        command=command,
        paths=paths_from_args(args),
        args=dumps(args) if args not in (None, "", {}) else "",
        output=output if clipped else clip(flatten_text(output) if not isinstance(output, str) else output),
        status=status,
        raw=raw,
        sidechain=sidechain,
    )


# --- shell commands: which files a command prints ------------------------------------------------------------

_PRINTERS = {"cat", "head", "tail", "less", "more", "nl", "tac", "bat", "batcat", "strings", "xxd", "od", "hexdump"}
_SEARCHERS = {"grep", "egrep", "fgrep", "rg"}
_VALUE_OPTS = {  # options that take a value, per command (everything else is a flag)
    "head": {"-n", "-c", "--lines", "--bytes"}, "tail": {"-n", "-c", "--lines", "--bytes", "-s"},
    "grep": {"-e", "-f", "-m", "-A", "-B", "-C", "--max-count", "--include", "--exclude", "--exclude-dir"},
    "rg": {"-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "--glob", "--type"},
    "sed": {"-e", "-f"}, "nl": {"-b", "-w", "-s", "-v", "-i"}, "od": {"-t", "-N", "-j", "-A"},
    "xxd": {"-l", "-s", "-c", "-g"}, "strings": {"-n", "-t"},
}
_SEPARATORS = set(";&|()\n")
_REDIRECTS = {">", ">>", "<", "<<", "<<<", ">|", ">&", "&>", "&>>", "<&", "<>"}
_WRAPPERS = {"sudo", "env", "command", "exec", "time", "nohup", "nice", "timeout"}


# shlex builds each token by string concatenation: quadratic in a token's length (half a minute for a 550 KB
# single-word command). Longer commands are split without quote handling: linear, and the words the
# heuristics look for (a command name, a path) survive with at most a quote attached.
SHLEX_MAX = 16 * 1024
_FAST_TOKENS = re.compile(r"[;&|()<>]+|\n+|[^\s;&|()<>]+")


# shlex.split's POSIX grammar (no comments) as regexes: a word is a run of plain characters, \-escapes, '…'
# (literal) and "…" (where \ escapes only " and \); words are separated by shlex's whitespace, which is
# " \t\r\n" (str.split's is wider). shlex reads one character per Python call: about 16 µs per 27-character
# command and 120 µs per real one, the largest piece of TG-5. Same words, tested against shlex; a
# command the grammar does not cover (an unclosed quote, a trailing \) goes to shlex for its error.
_SH_WORDS = re.compile(r"[^ \t\r\n]+")
_SH_WORD = re.compile(r"""(?:[^ \t\r\n'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+""", re.S)
_SH_PIECE = re.compile(r"""\\(.)|'([^']*)'|"((?:[^"\\]|\\.)*)"|[^ \t\r\n'"\\]+""", re.S)
_SH_DQ_ESCAPE = re.compile(r'\\(["\\])')
_SH_SPACE = frozenset(" \t\r\n")
_SH_QUOTING = re.compile(r"""['"\\]""")


def _sh_piece(m: re.Match[str]) -> str:
    esc, single, double = m.groups()
    if esc is not None:
        return esc
    if single is not None:
        return single
    if double is not None:
        return _SH_DQ_ESCAPE.sub(r"\1", double) if "\\" in double else double
    return m.group(0)


def _posix_split(command: str) -> list[str]:
    """``shlex.split(command)``: the words, or shlex's own ValueError for an unclosed quote or a trailing \\."""
    if "'" not in command and '"' not in command and "\\" not in command:
        return _SH_WORDS.findall(command)
    words = []
    end = 0
    for m in _SH_WORD.finditer(command):
        if not _SH_SPACE.issuperset(command[end:m.start()]):
            return shlex.split(command)  # a quote or \ no word covers: shlex raises what is wrong
        word = m.group(0)
        words.append("".join(map(_sh_piece, _SH_PIECE.finditer(word))) if _SH_QUOTING.search(word) else word)
        end = m.end()
    if not _SH_SPACE.issuperset(command[end:]):
        return shlex.split(command)
    return words


def split_words(command: str) -> list[str]:
    """``shlex.split`` (POSIX) for a command of at most :data:`SHLEX_MAX` characters (ValueError on unbalanced
    quotes, as shlex); a longer one split on whitespace (linear)."""
    if len(command) <= SHLEX_MAX:
        return _posix_split(command)
    return command.split()


def _segments(command: str) -> list[list[str]]:
    """Simple commands of a shell line: words split the POSIX way, cut at ``; && || | &``, parentheses and
    newlines; redirections (``2>/dev/null``, ``> f``, ``<<EOF``) removed."""
    command = command.replace("\\\n", " ")
    if len(command) > SHLEX_MAX:
        toks = [t.strip("'\"") for t in _FAST_TOKENS.findall(command)]
    else:
        lex = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
        lex.whitespace = " \t\r"
        lex.whitespace_split = True
        try:
            toks = list(lex)
        except ValueError:  # unbalanced quotes: nothing reliable to say
            return []
    segments: list[list[str]] = [[]]
    i = 0
    while i < len(toks):
        tok = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if tok in _REDIRECTS:
            i += 2
        elif tok.isdigit() and nxt in _REDIRECTS:
            i += 3
        elif set(tok) <= _SEPARATORS:
            segments.append([])
            i += 1
        else:
            segments[-1].append(tok)
            i += 1
    return [s for s in segments if s]


def shell_read_paths(command: str) -> tuple[str, ...]:
    """Files a shell command prints or searches: ``cat a b``, ``head -n 5 f``, ``tail f``, ``nl f``, ``sed -n 1,5p
    f``, ``grep pat f d/``. Heuristic (quoting, pipes and redirections handled; variables and globs kept as
    written); redirection targets are never reads."""
    out: list[str] = []
    for words in _segments(command or ""):
        i = 0
        while i < len(words) and (words[i] in _WRAPPERS or ("=" in words[i] and words[i][0].isalpha())):
            i += 1
        if i >= len(words):
            continue
        cmd = words[i].rsplit("/", 1)[-1]
        opts = _VALUE_OPTS.get("grep" if cmd in ("egrep", "fgrep") else cmd, set())
        args: list[str] = []
        flags: set[str] = set()
        j = i + 1
        while j < len(words):
            w = words[j]
            if w == "--":
                args.extend(words[j + 1:])
                break
            if w.startswith("-") and w != "-":
                flags.add(w)
                j += 2 if w in opts else 1
                continue
            args.append(w)
            j += 1
        if cmd in _PRINTERS:
            out.extend(a for a in args if a != "-")
        elif cmd in _SEARCHERS:
            out.extend(args if flags & {"-e", "-f"} else args[1:])  # the first argument is the pattern
        elif cmd == "sed" and any(f.startswith("-n") or f == "--quiet" for f in flags):
            out.extend(args if flags & {"-e", "-f"} else args[1:])  # the first argument is the script
    return tuple(dict.fromkeys(p for p in out if p and len(p) < 4096))
