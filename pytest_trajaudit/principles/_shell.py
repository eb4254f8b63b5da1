"""Shell-command heuristics shared by the principles: what a command writes, whether it only reads; and what the
principles remember about one job's events while it is audited (write targets, failed reads, needle scans),
forgotten by :func:`forget` after the job."""

from __future__ import annotations

import json

from ..model import EDIT, EXECUTE, READ, SEARCH, Event
from ..scan import linre, needles
from ..scan.needles import may_match

# redirect targets: `> f`, `>> f`, `tee [-a] f`, `cp/mv/install SRC DST`, `ln -s SRC DST`, `sed -i ... f`,
# `touch f`, heredoc `cat > f <<EOF`. Heuristic by design: documented in the README.
_REDIRECT = linre.compile(r"(?<![0-9&<>])>{1,2}\|?\s*([^\s;&|<>()]+)")
_TEE = linre.compile(r"\btee\s+(?:-a\s+|--append\s+)?([^\s;&|<>()]+)")
_CPMV = linre.compile(r"\b(?:cp|mv|install|rsync)\s+(?:-[\w-]+\s+)*(?:[^\s;&|]+\s+)+([^\s;&|<>()]+)")
_LN = linre.compile(r"\bln\s+(?:-[\w-]+\s+)*[^\s;&|]+\s+([^\s;&|<>()]+)")
_SED_I = linre.compile(r"\bsed\s+(?:-[^i\s]*\s+)*-i\S*\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+([^\s;&|<>()]+)")
_TOUCH = linre.compile(r"\b(?:touch|mkdir(?:\s+-p)?)\s+([^\s;&|<>()]+)")
_PY_OPEN_W = linre.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wax]")
_WRITE_TEXT = linre.compile(r"Path\(\s*['\"]([^'\"]+)['\"]\s*\)\.write_(?:text|bytes)")
_WRITERS = (_REDIRECT, _TEE, _CPMV, _LN, _SED_I, _TOUCH, _PY_OPEN_W, _WRITE_TEXT)

# commands that look at files (their content, names or metadata): P8's exploration reads. Not echo, pwd, which or
# type, which print nothing of the task's files (P4/P6 count narrower reads of inputs: _inputs.py)
_READ_CMDS = {"cat", "head", "tail", "less", "more", "wc", "ls", "grep", "rg", "find", "file", "stat", "xxd",
              "od", "hexdump", "jq", "tree", "du", "strings", "nl", "sort", "uniq", "cut", "diff", "awk", "sed",
              "git", "readlink", "realpath", "md5sum", "sha256sum", "column"}
_SOLVER = linre.compile(
    r"(?:^|[;&|]\s*|\s)(?:python[\d.]*|node|bash|sh|ruby|perl|Rscript|julia|java|go\s+run|cargo\s+(?:run|build|test)"
    r"|make|gcc|g\+\+|clang|pytest|npm\s+(?:run|test)|\./\S+)(?:\s|$)"
)


def write_targets(command: str) -> list[str]:
    """Paths a shell command (probably) writes. ``/dev/null`` and fd redirects are ignored."""
    if not command:
        return []
    known = _WRITES.get(command)
    if known is None:
        out: list[str] = []
        for rx in _WRITERS:
            if not may_match(rx, command):
                continue
            for m in rx.finditer(command):
                t = m.group(1).strip("'\"")
                if t and not t.startswith(("/dev/", "&")) and t not in ("-", "EOF"):
                    out.append(t)
        known = tuple(dict.fromkeys(out))
        if len(_WRITES) >= _MEMO_MAX:
            _WRITES.clear()
        _WRITES[command] = known
    return list(known)


# Principles ask for one command's write targets about seven times per job (P1, P2, P8, SB-1, TG-2/3/5, the
# general rules), each time scanning the command with the writer patterns: remember them for the job being
# audited. The engine calls forget() after each job, so no command outlives its job here; the bound only
# matters to a caller that never does.
_WRITES: dict[str, tuple[str, ...]] = {}
_FAILED: dict[int, tuple[str, bool]] = {}  # id(output) → (output, failed_by_output)
# command → _writes.command_write_targets (P2 and P14 ask about every command; a long run repeats its commands)
CMD_WRITES: dict[str, tuple[str, ...]] = {}
_FOUND: dict[tuple[int, int], tuple[Event, needles.Found | None]] = {}  # (id(event), ACT/TEXT) → (event, scan)
_MEMO_MAX = 65_536


def forget() -> None:
    """Drop what was remembered about the last job's commands, outputs and texts."""
    _WRITES.clear()
    _FAILED.clear()
    CMD_WRITES.clear()
    _FOUND.clear()


ACT, TEXT = 0, 1  # which text of an event found() is about: its action text, its text


def found(e: Event, which: int, text: str) -> needles.Found | None:
    """:func:`~pytest_trajaudit.scan.needles.scan` of ``text`` (the event's action text or its text), once per job:
    P1 and P2 ask about the same texts with sixteen patterns. Only the answer is kept, not the text."""
    if len(text) < needles.FUSE_MIN:  # most texts: scan() says None for them without looking (nothing to keep)
        return None
    key = (id(e), which)
    known = _FOUND.get(key)
    if known is not None and known[0] is e and (known[1] is None or needles.current(known[1])):
        return known[1]
    answer = needles.scan(text)
    if len(_FOUND) >= _MEMO_MAX:
        _FOUND.clear()
    _FOUND[key] = (e, answer)
    return answer


def first_word(command: str) -> str:
    s = command.strip()
    for prefix in ("sudo ", "cd "):
        if s.startswith(prefix) and prefix == "sudo ":
            s = s[len(prefix):]
    if s.startswith("cd ") and "&&" in s:
        s = s.split("&&", 1)[1].strip()
    return s.split(None, 1)[0].rsplit("/", 1)[-1] if s else ""


def is_read_like(e: Event) -> bool:
    """A look at the environment: a read/search tool, or a shell command that only looks at files."""
    if e.kind in (READ, SEARCH):
        return True
    if e.kind == EXECUTE and e.command:
        return first_word(e.command) in _READ_CMDS and not write_targets(e.command) and not runs_solver(e)
    return False


def runs_solver(e: Event) -> bool:
    return e.kind == EXECUTE and bool(_SOLVER.search(e.command or ""))


def is_code_write(e: Event) -> bool:
    """An edit tool call, or a shell command that writes a file."""
    if e.kind == EDIT:
        return True
    return e.kind == EXECUTE and bool(write_targets(e.command))


def is_full_write(e: Event) -> bool:
    """A whole-file write ("Write" tool, create), as counted by P8's analyzer rewrites."""
    if e.kind != EDIT:
        return False
    name = (e.tool or e.title).lower()
    if name.startswith(("write", "create", "filewrite")):
        return True
    return name == "str_replace_editor" and '"create"' in e.args


def written_paths(e: Event) -> list[str]:
    if e.kind == EDIT:
        return list(e.paths)
    if e.kind == EXECUTE:
        return write_targets(e.command)
    return []


def failed_by_output(e: Event) -> bool:
    """Status ok by the harness but the output says the read failed."""
    output = e.output
    if not output:
        return False
    known = _FAILED.get(id(output))  # P1 and SB-1 both ask, for most tool calls
    if known is not None and known[0] is output:  # the same string object: the same answer
        return known[1]
    out = output[:2000]
    failed = ("No such file or directory" in out or "Permission denied" in out or "cannot access" in out
              or "<tool_use_error>" in out or "does not exist" in out or "Is a directory" in out
              or "cannot open" in out)
    if len(_FAILED) >= _MEMO_MAX:
        _FAILED.clear()
    _FAILED[id(output)] = (output, failed)  # holds the string: its id cannot be reused while remembered
    return failed


def authored_text(e: Event) -> str:
    """The call's action text plus the decoded string values of its JSON arguments: a Write's file content sits
    JSON-escaped in ``args``, where a line with a quote or a backslash would never match its own later output."""
    text = e.action_text()
    if e.args[:1] not in ("{", "["):
        return text
    try:
        stack = [json.loads(e.args)]
    except (ValueError, RecursionError):
        return text
    found: list[str] = []
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            found.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return text + "\n" + "\n".join(reversed(found))
