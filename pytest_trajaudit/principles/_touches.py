"""What each tool call of a job touches (files read, written, deleted, imported or mentioned) and, for Python, what
it does: a read or edit tool's paths, a shell command through :mod:`._bashast`, Python code through :mod:`._pyast`.
Computed once per job, in the order of the calls, and shared by P1, P2, P4 and P6."""

from __future__ import annotations

import posixpath
import re

import orjson

from ..model import EDIT, EXECUTE, READ, SEARCH, TOOL, Event, Job
from ..scan import linre
from ._bashast import READ as R
from ._bashast import WRITE, Touch, shell_walk
from ._pyast import PyFacts, python_facts


def touches_of(job: Job, e: Event) -> tuple[list[Touch], PyFacts | None]:
    """:func:`event_touches` of one of ``job``'s events, parsed once per job (P1, P2, P4 and P6 ask).

    The job's tool calls are read in order, once, the first time any is asked about: an agent's shell keeps its
    working directory from one call to the next (Claude Code's Bash tool, a Terminal-Bench tmux session,
    OpenHands), so ``cd /oracle`` in one call and ``cat expected.json`` in the next read ``/oracle/expected.json``.
    A call that names its own working directory (Codex's ``workdir``) starts there instead and passes nothing on."""
    memo = job.cache.get("touches")
    if not isinstance(memo, dict):
        memo = job.cache["touches"] = {}
        shells: dict[tuple[str, str], tuple[tuple[Touch, ...], str]] = {}
        cwd = ""
        assert job.trajectory is not None
        for ev in job.trajectory.events:
            if ev.type == TOOL:
                own = _workdir(ev.args) if '"workdir"' in ev.args else None
                touches, facts, end = event_touches_at(ev, cwd if own is None else own, shells)
                memo[ev.index] = (ev, (touches, facts))
                if own is None:
                    cwd = end
    known = memo.get(e.index)
    if known is None or known[0] is not e:  # an event outside the job's list: read alone
        known = memo[e.index] = (e, event_touches(e))
    return known[1]


def _workdir(args: str) -> str | None:
    """The working directory a call names for itself (Codex's ``{"command": …, "workdir": …}``), else None."""
    try:
        value = orjson.loads(args)
    except orjson.JSONDecodeError:
        return None
    got = value.get("workdir") if isinstance(value, dict) else None
    return posixpath.normpath(got) if isinstance(got, str) and got else None


def event_touches(e: Event, shells: dict[tuple[str, str], tuple[tuple[Touch, ...], str]] | None = None
                  ) -> tuple[list[Touch], PyFacts | None]:
    """What one tool call touches, read alone (no working directory carried from earlier calls)."""
    touches, facts, _end = event_touches_at(e, "", shells)
    return touches, facts


def event_touches_at(e: Event, cwd: str, shells: dict[tuple[str, str], tuple[tuple[Touch, ...], str]] | None = None
                     ) -> tuple[list[Touch], PyFacts | None, str]:
    """What one tool call touches: its paths by kind (read/edit tools), its shell command or Python code, with a
    shell command's relative paths read against ``cwd`` (its start directory; "" unknown); and the directory the
    call leaves its shell in. ``shells``: the job's commands already parsed, by start directory and text (a long
    run repeats its test command hundreds of times; a :class:`Touch` is immutable, so the same ones serve every
    repeat)."""
    out: list[Touch] = []
    facts = None
    end = cwd
    if e.kind == READ or (e.kind == SEARCH and "grep" in (e.tool or e.title).lower()):
        # a read tool, or a Grep call on a file (it prints the file's matching lines)
        out.extend(Touch(R, p, how=e.tool or "read") for p in e.paths)
    elif e.kind == EDIT:
        out.extend(Touch(WRITE, p, how=e.tool or "edit") for p in e.paths)
    elif e.kind == EXECUTE and e.command:
        # a Python tool's code, parsed once; a shell command, or a Python tool's text that is no Python 3
        # (``python3 -c "…"`` under a tool named after its first word; Python 2 code, whose quoted paths count too)
        py = python_facts(e.command, 0, "python tool") if "python" in (e.tool or "").lower() else None
        if py is None or not py[1].parsed:
            key = (cwd, e.command)
            got = shells.get(key) if shells is not None else None
            if got is None:
                touched, after = shell_walk(e.command, cwd)
                got = (tuple(touched), after)
                if shells is not None:
                    shells[key] = got
            out.extend(got[0])
            end = got[1]
            if _PY_INLINE.search(e.command) and _FACT_HINT.search(e.command):
                # python -c / heredoc code that may replace builtins or import a grader: its facts too
                _t, facts = python_facts(_inline_code(e.command), 0, "python")
        if py is not None:
            out.extend(py[0])
            facts = py[1] if facts is None else facts
    elif e.paths and '"view"' in e.args:  # an editor tool under a name no loader maps (text_editor view)
        out.extend(Touch(R, p, how=e.tool or "view") for p in e.paths)
    elif e.paths and any(k in e.args for k in ('"create"', '"str_replace"', '"insert"', '"write"')):
        out.extend(Touch(WRITE, p, how=e.tool or "edit") for p in e.paths)
    return out, facts, end


_FACT_HINT = linre.compile(r"builtins|grad|scor|quiz|evaluat|check|verif|judge|audit|import_module|__import__|runpy")
_PY_INLINE = linre.compile(r"\bpython[\d.]*\s+(?:-\w+\s+)*(?:-c\s|-\s*<<|<<)")


def _inline_code(command: str) -> str:
    """The Python code of ``python -c '…'`` or ``python - <<EOF … EOF`` (for the facts: imports, builtins)."""
    m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?\n(.*?)\n\1\b", command, re.S)
    if m:
        return m.group(2)
    m = re.search(r"""-c\s+(?:'([^']*)'|"((?:[^"\\]|\\.)*)")""", command, re.S)
    if m:
        return m.group(1) if m.group(1) is not None else re.sub(r'\\(["\\$`])', r"\1", m.group(2))
    return ""
