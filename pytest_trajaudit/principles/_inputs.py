"""Reads of the task's inputs: the calls that look at the content of a file the agent did not write (the seed's
audit-general.md P4 "at least one Read of inputs", P6 "data-sampling calls"). A command that prints nothing of the
task's files (``echo``, ``pwd``, ``which``, a bare ``ls``) is not one, nor is reading back the agent's own file or a
system file.

What counts, per call:
- a read tool (Read, view): each path it names, or the call itself when the export recorded no path;
- a content search tool (Grep and the like) on a path, or on the working folder when it names none;
- a shell command whose syntax (:mod:`._bashast`) reads a file (``cat``, ``head``, ``tail``, ``less``, ``grep``,
  ``awk``, ``sed -n``, ``jq``, …) or measures one (``wc``, ``md5sum``, ``diff``, …), and Python code (``python -c``,
  a heredoc, a Python tool) that names a file it does not write (``open('data.csv')``, ``pd.read_csv(…)``).
- ``git show``/``diff``/``blame``/``grep``/``cat-file``: the repository's content.
Listings (``ls``, ``find``, Glob) name files without reading them: not reads of inputs. A file the agent created
(a whole-file write, a redirect, a copy) is its own from then on; a file it edited in place stays an input.
"""

from __future__ import annotations

from ..model import EDIT, EXECUTE, READ, SEARCH, TOOL, Event, Job
from ..scan import linre
from ._bashast import MENTION, WRITE, Touch
from ._bashast import READ as READ_OP
from ._shell import is_full_write, write_targets
from ._touches import touches_of

# commands whose file operand is read for its content (the syntax reports some of them as a mention)
_CONTENT_MENTIONS = frozenset({"wc", "md5sum", "sha1sum", "sha256sum", "cksum", "xxd", "od", "hexdump", "strings",
                               "nl", "sort", "uniq", "cut", "diff", "cmp", "column", "file", "tac", "paste", "comm",
                               "csvlook", "literal", "open()"})
# folders of the system and of installed packages: a read there looks at the machine, not at the task's inputs
_SYSTEM_PREFIXES = ("/proc/", "/sys/", "/dev/", "/etc/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/var/lib/",
                    "/var/cache/", "/logs/agent/")  # (the last: the harness's own record of the session)
_GIT_CONTENT = linre.compile(r"\bgit\s+(?:-C\s+\S+\s+)?(?:show|diff|blame|grep|cat-file)\b")
_PACKAGE_DIRS = ("site-packages/", "dist-packages/", "node_modules/", "/.cache/", "/.npm/")


def _norm(p: str) -> str:
    p = p.strip().strip("'\"`").rstrip("/")
    while p.startswith("./"):
        p = p[2:]
    return p


def _is_own(p: str, own: set[str]) -> bool:
    if p in own:
        return True
    if p.startswith("/"):
        return any(not o.startswith("/") and p.endswith("/" + o) for o in own)
    return any(o.endswith("/" + p) for o in own)


def _input_path(p: str, own: set[str]) -> bool:
    p = _norm(p)
    if not p or p.startswith(("-", "http:", "https:", "$")) or p in (".", "~", "/"):
        return False
    if (p + "/").startswith(_SYSTEM_PREFIXES) or any(d in p + "/" for d in _PACKAGE_DIRS):
        return False
    return not _is_own(p, own)


def _content_search(e: Event) -> bool:
    name = (e.tool or e.title or "").lower()
    return e.kind == SEARCH and ("grep" in name or name in ("search", "search_file", "search_dir", "rg"))


class InputReads:
    """Follows one job's tool calls in order (``see``), remembering the files the agent wrote, and says whether
    each call read the task's inputs."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.own: set[str] = set()

    def see(self, e: Event) -> bool:
        """Whether tool call ``e`` reads an input file; then remembers what it writes."""
        if e.type != TOOL:
            return False
        touches, _facts = touches_of(self.job, e) if e.kind in (READ, EXECUTE) or _content_search(e) else ([], None)
        writes = {_norm(t.path) for t in touches if t.op == WRITE and t.how != "sed"}
        found = False
        if e.kind == READ or _content_search(e):
            found = not e.paths or any(_input_path(p, self.own) for p in e.paths)
        elif e.kind == EXECUTE and e.command:
            writes |= {_norm(p) for p in write_targets(e.command) if p not in _in_place(touches)}
            found = any((t.op == READ_OP or (t.op == MENTION and t.how in _CONTENT_MENTIONS))
                        and _norm(t.path) not in writes and _input_path(t.path, self.own) for t in touches) \
                or bool(_GIT_CONTENT.search(e.command))
        elif e.kind == EDIT and is_full_write(e):
            writes |= {_norm(p) for p in e.paths}
        self.own |= writes
        return found


def _in_place(touches: list[Touch]) -> set[str]:
    """Files a command edits in place (``sed -i``): they existed, so they stay inputs."""
    return {t.path for t in touches if t.op == WRITE and t.how == "sed"}
