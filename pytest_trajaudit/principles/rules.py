"""Rules family: the trace-grader path checks TG-1..TG-5 (the seed's trace-grader.md, RULES.md D).

A run's *steps* are its main-thread tool calls in order (sub-agent calls are skipped, as the original skips
sidechain lines), numbered from 1 (a ``traces.json`` step keeps its own ``step`` number). Each check returns
the original's flags ``{check, severity, step, tool, detail}``; the item's status follows the check's
configured severity: high → FAIL, medium/low → WARN, no flag → PASS, N/A when the check has nothing to
judge (no tool calls, no rule configured, no per-step outcome recorded). The run verdict
(clean-pass / pass-with-warnings / corrupt-success / fail) is built from the flags by
``aggregate.trace_run_verdict``.

Matching a rule's tool name against a step:

- precise mode (default): a name matches a tool of the same name in any case (``Read``, ``read``), the
  step's title (ACP ``Read File``), ``str_replace_editor <command>``, or — for the rule words ``read``,
  ``search``, ``write``, ``edit``, ``execute``, ``fetch``, ``plan`` — every tool of that class in every
  format (see :func:`actions`);
- ``--trajaudit-literal``: the original's exact, case-sensitive tool-name comparison, and TG-5 only knows
  ``Read``/``Grep``/``Glob``/``Write`` and ``Edit``/``MultiEdit``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from typing import Any

import orjson

from ..loaders.common import split_words
from ..model import EDIT, EXECUTE, FETCH, READ, SEARCH, TOOL, Event, Finding, Job
from ..report.tracegrader import JUDGE_DISABLED
from ..scan import linre
from ..settings import Settings
from . import GroupCheck, principle, register_group
from ._shell import first_word, is_full_write, write_targets

MAX_FLAGS = 200  # flags kept per check in the audit JSON (n_flags counts them all)
SEVERITY_STATUS = {"high": "FAIL", "medium": "WARN", "low": "WARN"}

# rule words → the normalized classes they stand for (precise mode)
RULE_WORDS = ("read", "search", "write", "edit", "execute", "fetch", "plan")
PLAN_TOOLS = {"todowrite", "todo_write", "update_plan", "exitplanmode", "enterplanmode", "plan", "create_plan"}
SHELL_READ = {"cat", "head", "tail", "less", "more", "nl", "bat", "view", "xxd", "od", "hexdump", "strings", "jq"}
SHELL_SEARCH = {"grep", "egrep", "rg", "ag", "ack", "find", "fd", "ls", "tree", "locate"}
# the original's grounding tool names (literal mode)
LITERAL_SEEN = ("Read", "Grep", "Glob", "Write")
LITERAL_EDITS = ("Edit", "MultiEdit")
_ADD_FILE = linre.compile(r"\*\*\* Add File: ([^\s\\\"]+)")
_SED_PRINT = linre.compile(r"^\s*sed\s+-n\b")


@dataclass(slots=True)
class Step:
    n: int  # step number shown in flags
    event: Event

    @property
    def tool(self) -> str:
        e = self.event
        return e.tool or e.title or e.kind or "?"


def steps_of(job: Job, literal: bool = False) -> list[Step]:
    """Main-thread tool calls, numbered like the original (a traces.json step keeps its own number). A hooklib
    audit log in literal mode: one step per log line, as the original counts them (a PreToolUse and a
    PostToolUse line of one call are 2 steps), each ok unless its line says ``"ok": false``. Made once per job
    and mode, shared by the five checks (read-only)."""
    key = "rules.steps.literal" if literal else "rules.steps"
    got = job.cache.get(key)
    if not isinstance(got, list):
        got = job.cache[key] = _steps_of(job, literal)
    return got


def _steps_of(job: Job, literal: bool) -> list[Step]:
    traj = job.trajectory
    assert traj is not None
    if literal and (lines := _hook_lines(traj.meta, len(traj.events))) is not None:
        return [Step(n, replace(traj.events[i], status="ok" if ok else "failed"))
                for n, (i, ok) in enumerate(lines, 1)]
    calls = [e for e in traj.events if e.type == TOOL and not e.sidechain]
    numbers = traj.meta.get("step_numbers")
    if isinstance(numbers, list) and len(numbers) == len(calls) and all(isinstance(n, int) for n in numbers):
        return [Step(n, e) for n, e in zip(numbers, calls, strict=True)]
    return [Step(i, e) for i, e in enumerate(calls, 1)]


def _hook_lines(meta: dict[str, Any], n_events: int) -> list[tuple[int, bool]] | None:
    """The hooklib loader's per-line steps (loaders/hooklib.py), when well formed; else None."""
    lines = meta.get("hook_lines")
    if not isinstance(lines, list):
        return None
    out = []
    for x in lines:
        if not (isinstance(x, list) and len(x) == 2 and isinstance(x[0], int) and 0 <= x[0] < n_events
                and isinstance(x[1], bool)):
            return None
        out.append((x[0], x[1]))
    return out


def delivery(job: Job, literal: bool = False) -> tuple[bool | None, str]:
    """Did the run deliver? The verifier's reward (1.0 = delivered) when there is one, else the loader's own
    signal (traces.json ``ok``; a hooklib session: every step ok — in literal mode every log line's own ``ok``,
    as the original reads it), else unknown (None)."""
    if job.reward is not None:
        src = job.verifier.reward_source or "reward"
        return job.reward >= 1.0, f"reward {job.reward:g} ({src})"
    meta = job.trajectory.meta if job.trajectory is not None else {}
    # literal mode: the rules' principles call this after steps_of, on a loaded trajectory
    if literal and (lines := _hook_lines(meta, len(job.trajectory.events))) is not None:  # type: ignore[union-attr]
        return all(ok for _, ok in lines), "hooklib audit log (literal): delivered = every line's ok"
    d = meta.get("delivered")
    if isinstance(d, bool):
        return d, str(meta.get("delivered_source") or "trajectory")
    return None, f"{job.no_reward()}: graded on its flags as if delivered (the original's rule for transcripts)"


# --- matching -----------------------------------------------------------------------------------------------


def _shell_head(e: Event) -> str:
    return first_word(e.command) if e.kind == EXECUTE and e.command else ""


def actions(e: Event) -> frozenset[str]:
    """The rule words a tool call stands for (precise mode): ``read`` (Read, read, Read File, view,
    ``str_replace_editor view``, or a shell ``cat``/``head``/``tail``/``sed -n``/...), ``search`` (Grep, Glob,
    find_file, a shell ``grep``/``rg``/``find``/``ls``), ``write`` (whole-file writes: Write, write_file,
    create, ``str_replace_editor create``), ``edit`` (in-place edits: Edit, MultiEdit, str_replace,
    ``str_replace_editor str_replace|insert``, apply_patch), ``execute`` (any shell), ``fetch`` (web),
    ``plan`` (TodoWrite, update_plan, ExitPlanMode)."""
    out: set[str] = set()
    if e.kind == READ:
        out.add("read")
    elif e.kind == SEARCH:
        out.add("search")
    elif e.kind == EDIT:
        out.add("write" if is_full_write(e) else "edit")
    elif e.kind == EXECUTE:
        out.add("execute")
        head = _shell_head(e)
        if not write_targets(e.command):
            if head in SHELL_READ or (head == "sed" and _SED_PRINT.match(e.command)):
                out.add("read")
            elif head in SHELL_SEARCH:
                out.add("search")
    elif e.kind == FETCH:
        out.add("fetch")
    if (e.tool or "").casefold() in PLAN_TOOLS:
        out.add("plan")
    return frozenset(out)


def _names(e: Event) -> set[str]:
    names = {n.casefold() for n in (e.tool, e.title) if n}
    if e.tool.lower() in ("str_replace_editor", "str_replace_based_edit_tool") and e.args:
        m = re.search(r'"command"\s*:\s*"(\w+)"', e.args)
        if m:
            names.add(f"{e.tool} {m.group(1)}".casefold())
    return names


class Matcher:
    """Does rule name X match a step? Precise: names in any case plus the rule words; literal: exact. One per
    job (:func:`matcher`): each event's names and :func:`actions` are worked out once for all the checks."""

    def __init__(self, literal: bool) -> None:
        self.literal = literal
        self._cache: dict[int, tuple[set[str], frozenset[str]]] = {}  # event index → (names, actions)
        self._folded: dict[str, str] = {}  # a rule name → its case-folded form

    def _of(self, e: Event) -> tuple[set[str], frozenset[str]]:
        got = self._cache.get(e.index)
        if got is None:
            got = self._cache[e.index] = (_names(e), actions(e))
        return got

    def acts(self, e: Event) -> frozenset[str]:
        """:func:`actions` of ``e``, remembered."""
        return self._of(e)[1]

    def __call__(self, name: str, step: Step) -> bool:
        if self.literal:
            return step.tool == name
        names, acts = self._of(step.event)
        key = self._folded.get(name)
        if key is None:
            key = self._folded[name] = name.casefold()
        return key in names or (key in RULE_WORDS and key in acts)


def matcher(job: Job, literal: bool) -> Matcher:
    """The job's :class:`Matcher` for ``literal`` (event indexes are the job's own)."""
    key = "rules.matcher.literal" if literal else "rules.matcher"
    got = job.cache.get(key)
    if not isinstance(got, Matcher):
        got = job.cache[key] = Matcher(literal)
    return got


# --- the checks (pure: steps + rules → flags) ---------------------------------------------------------------


def _flag(check: str, cfg: Settings, step: int | None, tool: str | None, detail: str, event: int | None) -> dict[str, Any]:
    return {"check": check, "severity": cfg.rules.severities.get(check, "medium"), "step": step, "tool": tool,
            "detail": detail, "event": event}


def forbidden_flags(job: Job, steps: list[Step], cfg: Settings) -> list[dict[str, Any]]:
    match = matcher(job, cfg.literal)
    flags = []
    for s in steps:
        for name in cfg.rules.forbidden_tools:
            if match(name, s):
                flags.append(_flag("forbidden_tool", cfg, s.n, s.tool,
                                   f"forbidden tool '{s.tool}' used at step {s.n}", s.event.index))
                break
    if not cfg.literal:  # a forbidden tool is forbidden in a sub-agent too (the original never sees those)
        assert job.trajectory is not None
        side = [e for e in job.trajectory.events if e.type == TOOL and e.sidechain]
        for e in side:
            s = Step(0, e)
            if any(match(name, s) for name in cfg.rules.forbidden_tools):
                flags.append(_flag("forbidden_tool", cfg, None, s.tool,
                                   f"forbidden tool '{s.tool}' used by a sub-agent (event #{e.index})", e.index))
    return flags


def order_flags(steps: list[Step], cfg: Settings, match: Matcher) -> list[dict[str, Any]]:
    pairs = cfg.rules.must_precede
    befores = list(dict.fromkeys(a for a, _ in pairs))
    seen: set[str] = set()
    flags = []
    for s in steps:
        for before, after in pairs:
            if before not in seen and match(after, s):
                flags.append(_flag("out_of_order", cfg, s.n, s.tool,
                                   f"'{after}' at step {s.n} not preceded by '{before}'", s.event.index))
        for b in befores:
            if b not in seen and match(b, s):
                seen.add(b)
    return flags


def _same_tool(a: Step, b: Step, literal: bool) -> bool:
    return a.tool == b.tool if literal else a.tool.casefold() == b.tool.casefold()


def retry_flags(steps: list[Step], cfg: Settings) -> list[dict[str, Any]]:
    """Maximal runs of consecutive failed steps of one tool longer than the threshold (one flag per run, at
    its first step). A step whose outcome is unknown counts as ok, as the original's default ``ok: true``."""
    thr = cfg.rules.retry_threshold
    flags = []
    i, n = 0, len(steps)
    while i < n:
        if steps[i].event.status != "failed":
            i += 1
            continue
        j = i
        while j < n and steps[j].event.status == "failed" and _same_tool(steps[j], steps[i], cfg.literal):
            j += 1
        if j - i > thr:
            s = steps[i]
            flags.append(_flag("retry_storm", cfg, s.n, s.tool,
                               f"'{s.tool}' failed {j - i}x in a row (> threshold {thr})", s.event.index))
        i = j
    return flags


def excessive_flags(steps: list[Step], cfg: Settings) -> list[dict[str, Any]]:
    budget = cfg.rules.step_budget
    n = len(steps)
    if n > budget:
        return [_flag("excessive_steps", cfg, n, None, f"{n} steps > budget {budget}", steps[-1].event.index)]
    return []


def _norm(path: str, cwd: str | None) -> str:
    p = path.strip().strip("'\"")
    if not p:
        return ""
    if cwd and not p.startswith(("/", "~")):
        p = posixpath.join(cwd, p)
    return posixpath.normpath(p)


def _shell_read_paths(command: str) -> list[str]:
    try:
        words = split_words(command)  # shlex, linear on long commands (loaders/common.py)
    except ValueError:
        words = command.split()
    out = []
    for w in words[1:]:
        if w in ("|", "&&", ";", "||"):
            break
        if w.startswith("-") or not re.search(r"[/.]", w) or re.match(r"^\d+(?:,\d+)?p?$", w):
            continue
        out.append(w)
    return out


def created_paths(e: Event) -> set[str]:
    """Files an apply_patch call creates (``*** Add File: p``; Codex ``changes`` of kind ``add``): authored,
    like a Write, so never an ungrounded edit."""
    if not e.args:
        return set()
    out = set(_ADD_FILE.findall(e.args)) if "*** Add File: " in e.args else set()  # (str search: 2× re's)
    if e.args.startswith("{") and '"changes"' in e.args:
        try:
            doc = orjson.loads(e.args)
        except orjson.JSONDecodeError:
            return out
        changes = doc.get("changes") if isinstance(doc, dict) else None
        if isinstance(changes, list):
            out |= {c["path"] for c in changes if isinstance(c, dict) and isinstance(c.get("path"), str)
                    and "add" in (c.get("kind"), c.get("type"))}
        elif isinstance(changes, dict):
            out |= {str(p) for p, c in changes.items() if isinstance(c, dict)
                    and ("add" in c or "add" in (c.get("kind"), c.get("type")))}
    return out


def grounding_targets(e: Event, literal: bool, acts: frozenset[str] | None = None) -> tuple[list[str], list[str]]:
    """(paths this call looks at or authors, paths it edits in place); ``acts``: :func:`actions` of ``e`` when
    the caller has it already."""
    if literal:
        path = e.paths[0] if e.paths else ""
        if e.tool in LITERAL_SEEN:
            return ([path] if path else []), []
        if e.tool in LITERAL_EDITS:
            return [], ([path] if path else [])
        return [], []
    if acts is None:
        acts = actions(e)
    if "edit" in acts:
        if e.status == "failed":
            return [], []  # a failed edit changed nothing (precise mode)
        added = created_paths(e)
        return sorted(added), [p for p in e.paths if p not in added]
    if "write" in acts:
        return ([] if e.status == "failed" else list(e.paths)), []
    if acts & {"read", "search"}:
        if e.kind == EXECUTE:
            return _shell_read_paths(e.command), []
        return list(e.paths), []
    return [], []


def grounding_flags(job: Job, steps: list[Step], cfg: Settings) -> tuple[list[dict[str, Any]], int, int]:
    """(flags, edited paths, edits that record no path)."""
    literal = cfg.literal
    match = matcher(job, literal)
    assert job.trajectory is not None
    cwd = None if literal else job.trajectory.meta.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd.startswith("/") else None

    def norm(path: str) -> str:
        return posixpath.normpath(path) if literal else _norm(path, cwd)

    seen: set[str] = set()
    flags = []
    with_path = without_path = 0
    for s in steps:
        e = s.event
        acts = None if literal else match.acts(e)
        looked, edited = grounding_targets(e, literal, acts)
        seen.update(q for q in map(norm, looked) if q)
        # acts is None in literal mode only
        is_edit = e.tool in LITERAL_EDITS if literal else ("edit" in acts and e.status != "failed")  # type: ignore[operator]
        if is_edit and not edited and not looked:  # (a patch that only adds files authored them)
            without_path += 1
        for q in filter(None, map(norm, edited)):
            with_path += 1
            if q not in seen and (literal or not _seen_suffix(q, seen)):
                flags.append(_flag("edited_without_read", cfg, s.n, s.tool,
                                   f"'{s.tool}' edited '{q}' at step {s.n} without reading it first (ungrounded)",
                                   e.index))
            seen.add(q)
    return flags, with_path, without_path


def _seen_suffix(path: str, seen: set[str]) -> bool:
    """A relative path and an absolute one naming the same file (precise mode, no cwd known)."""
    if path.startswith("/"):
        return any(not s.startswith("/") and path.endswith("/" + s) for s in seen)
    return any(s.endswith("/" + path) for s in seen)


# --- findings -----------------------------------------------------------------------------------------------


def _base(job: Job, steps: list[Step], cfg: Settings) -> dict[str, Any]:
    delivered, source = delivery(job, cfg.literal)
    return {"step_count": len(steps), "delivered": delivered, "delivered_source": source,
            "mode": "literal" if cfg.literal else "precise", "judge_axis": judge_axis(cfg)}


def judge_axis(cfg: Settings) -> str:
    """The original's agent-as-judge line: "active" only when the rules file says ``verified: true`` and
    ``judge.enabled: true``; otherwise its fixed string, whatever ``verified`` says (the seed's RULES.md D)."""
    return "active" if cfg.rules.verified and cfg.rules.judge_enabled else JUDGE_DISABLED


def _finding(check: str, flags: list[dict[str, Any]], data: dict[str, Any], cfg: Settings, ok: str) -> Finding:
    data = {**data, "severity": cfg.rules.severities.get(check, "medium"), "n_flags": len(flags),
            "flags": flags[:MAX_FLAGS]}
    events = [f["event"] for f in flags if f.get("event") is not None]
    if not flags:
        data.update(status="PASS", evidence=ok)
        return Finding.ok(ok, data)
    ev = flags[0]["detail"] + (f" (+{len(flags) - 1} more)" if len(flags) > 1 else "")
    status = SEVERITY_STATUS.get(data["severity"], "WARN")
    ev = f"{data['severity']} {check}: {ev}"
    data.update(status=status, evidence=ev)
    return Finding.fail(ev, data, events) if status == "FAIL" else Finding.warn(ev, data, events)


def _no_steps(job: Job, steps: list[Step], cfg: Settings) -> Finding | None:
    if steps:
        return None
    return Finding.na("no tool calls: no path to grade", _base(job, steps, cfg))


@principle("TG-1", "trace-grader: forbidden tool", tier="C0", family="rules", key="forbidden_tool",
           role="info")
def forbidden_tool(job: Job, cfg: Settings) -> Finding:
    """A step uses a tool listed in ``forbidden_tools`` (default severity high → FAIL; a delivered run with a
    high flag is a corrupt success). Precise mode also checks sub-agent calls. N/A when no forbidden tools are
    configured (the engine default) or the run has no tool calls."""
    steps = steps_of(job, cfg.literal)
    if (na := _no_steps(job, steps, cfg)) is not None:
        return na
    data = {**_base(job, steps, cfg), "forbidden_tools": list(cfg.rules.forbidden_tools)}
    if not cfg.rules.forbidden_tools:
        return Finding.na("no forbidden_tools configured (set them in --trajaudit-rules)", data)
    flags = forbidden_flags(job, steps, cfg)
    return _finding("forbidden_tool", flags, data, cfg,
                    f"none of {len(cfg.rules.forbidden_tools)} forbidden tool(s) used in {len(steps)} steps")


@principle("TG-2", "trace-grader: out of order", tier="C0", family="rules", key="out_of_order",
           role="info")
def out_of_order(job: Job, cfg: Settings) -> Finding:
    """For each ``must_precede`` pair [A, B], every step matching B without an earlier step matching A is
    flagged, once per offending step (default severity medium → WARN). N/A when no pairs are configured (the
    engine default) or the run has no tool calls."""
    steps = steps_of(job, cfg.literal)
    if (na := _no_steps(job, steps, cfg)) is not None:
        return na
    data = {**_base(job, steps, cfg), "must_precede": [list(p) for p in cfg.rules.must_precede]}
    if not cfg.rules.must_precede:
        return Finding.na("no order_constraints.must_precede configured (set them in --trajaudit-rules)", data)
    flags = order_flags(steps, cfg, matcher(job, cfg.literal))
    return _finding("out_of_order", flags, data, cfg,
                    f"all {len(cfg.rules.must_precede)} ordering constraint(s) respected in {len(steps)} steps")


@principle("TG-3", "trace-grader: retry storm", tier="C0", family="rules", key="retry_storm",
           role="info")
def retry_storm(job: Job, cfg: Settings) -> Finding:
    """More than ``retry_threshold`` consecutive failed steps of the same tool (default severity medium →
    WARN; one flag per storm, at its first step). N/A when no step records its outcome (a hooklib audit log
    carries none, so a storm cannot be seen there) or the run has no tool calls."""
    steps = steps_of(job, cfg.literal)
    if (na := _no_steps(job, steps, cfg)) is not None:
        return na
    data = {**_base(job, steps, cfg), "retry_threshold": cfg.rules.retry_threshold,
            "n_failed": sum(1 for s in steps if s.event.status == "failed")}
    if all(s.event.status == "unknown" for s in steps):
        return Finding.na("no step records whether it succeeded: retry storms cannot be seen", data)
    assert job.trajectory is not None
    if job.trajectory.meta.get("failures_recorded") is False:
        return Finding.na("this log records no failed calls (a hooklib audit log): retry storms cannot be seen",
                          data)
    flags = retry_flags(steps, cfg)
    return _finding("retry_storm", flags, data, cfg,
                    f"no tool failed more than {cfg.rules.retry_threshold}x in a row ({data['n_failed']} failed steps)")


@principle("TG-4", "trace-grader: excessive steps", tier="C0", family="rules", key="excessive_steps",
           role="info")
def excessive_steps(job: Job, cfg: Settings) -> Finding:
    """More steps than ``step_budget`` (default severity low → WARN): likely wandering, no plan. N/A when the
    run has no tool calls."""
    steps = steps_of(job, cfg.literal)
    if (na := _no_steps(job, steps, cfg)) is not None:
        return na
    data = {**_base(job, steps, cfg), "step_budget": cfg.rules.step_budget}
    flags = excessive_flags(steps, cfg)
    return _finding("excessive_steps", flags, data, cfg, f"{len(steps)} steps ≤ budget {cfg.rules.step_budget}")


@principle("TG-5", "trace-grader: edited without read", tier="C0", family="rules", key="edited_without_read",
           role="info")
def edited_without_read(job: Job, cfg: Settings) -> Finding:
    """Grounding: an in-place edit of a file the run never read, searched or wrote before (default severity
    medium → WARN; once per file, later edits of it are grounded). Whole-file writes are never flagged; edits
    that record no path are ignored. Precise mode: any read/search tool or shell read (``cat``, ``sed -n``,
    ...) grounds its paths, relative paths are resolved against the agent's cwd, and a failed edit is not an
    edit. N/A when ``grounding.enabled`` is false, the run has no tool calls, or no edit records its path."""
    steps = steps_of(job, cfg.literal)
    if (na := _no_steps(job, steps, cfg)) is not None:
        return na
    data = _base(job, steps, cfg)
    if not cfg.rules.grounding:
        return Finding.na("grounding.enabled is false in the rules file", data)
    flags, with_path, without_path = grounding_flags(job, steps, cfg)
    data.update(edits_with_path=with_path, edits_without_path=without_path)
    if not with_path and without_path:
        return Finding.na(f"{without_path} edit(s), none records the file it edits", data)
    ok = f"every one of {with_path} edit(s) follows a read of its file" if with_path else "no in-place edits"
    return _finding("edited_without_read", flags, data, cfg, ok)


# pass^k of a task group: integrity-adjusted success across its trials (aggregate/groups.py, summary "pass_k")
register_group(GroupCheck(code="PASSK", title="pass^k across a task's trials", family="rules", key="pass_k"))
