"""Skills family (the seed's audit-skillsbench.md): SB-1 skill invocation, SB-3a partial follow-through, SB-3c
top-level only.

Only runs *with* skills are judged: a run whose condition is "no-skills" is N/A (the reason names any skill it
invoked anyway: a skill leak contaminates the control arm), a run whose condition is unknown is N/A with the reason.

**What counts as using a skill (precise mode, the default)** — agent actions only, never tool output or prose:

- a skill invocation by BenchFlow's production classifier (``trajectories/metrics.py is_skill_invocation_event``):
  kind ``invoke_skill`` / ``activate_skill`` / ``skill`` (lower-cased, ``-`` → ``_``; BenchFlow's ``kind: "skill"``;
  a tool of that name — Claude Code's ``Skill``, terminus' ``load_skill`` — gets that kind from its loader, except
  in ACP where the "tool name" is only the title's first word), title ``invoke_skill`` / ``activate_skill``, and only
  for an unclassified kind (``""``, ``other``, ``tool``) title ``skill`` or a result that *starts* with a skill
  envelope (``Launching skill: x``, ``<skill_content name="x"``, ``## Skill: x``, or OpenHands'
  ``Tool: invoke_skill`` header with a ``[skill:`` marker) — discovery method "Skill tool";
- a successful read of a ``SKILL.md`` (any directory; Codex's ``Read SKILL.md`` title; ``cat``/``sed -n``/... in a
  shell) — "Read SKILL.md";
- a read or run of another file under a ``skills/`` (or opencode ``skill/``) directory, e.g. ``references/*.md``
  or ``scripts/tool.py`` — a sub-file; when that is all the agent opened, the method is "Glob fallback".

The skill name is the directory holding ``SKILL.md`` (or the one right below ``skills/``); a tool invocation's
name comes from its arguments (``skill``, ``name``, ``command``) or its result (``Launching skill: x``,
``[skill: x]``, ``Loaded skill: x``). Built-in skills (Settings.builtin_skills, e.g. Claude Code's ``verify``) are
ignored unless the task ships a skill of that name. ``--trajaudit-literal`` runs the seed's operational code
instead: per tool call, ``"Launching skill:" in json.dumps(evt)`` → skill, else ``"Read SKILL.md" in title`` →
skill, else ``re.search(r"references/.*\\.md", flat)`` → the call's path goes to ``sub_files_read`` only (no generic
fallback, as in the seed: such a call is no skill use, so a run with only those is NOT_INVOKED); SB-3c is the seed's
``bool(skill_files) and not sub_files`` over the paths of the read calls.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, cast

from ..model import EXECUTE, OTHER, READ, TOOL, USER, Event, Finding, Job, UnusableInput
from ..safeio import Budget, decode_text, file_kind, read_bytes
from ..scan import linre
from ..scan.redact import quote
from ..settings import Settings
from . import GroupCheck, principle, register_group
from ._shell import failed_by_output, first_word, write_targets
from ._skill_literal import flat_json, literal_sub_hit, literal_sub_path, raw_lines
from ._skill_quote import skill_quote
from ._skill_workflow import FIRST_RULE, performed, workflow_steps

VERIFIED, PARTIAL, NOT_INVOKED = "VERIFIED", "PARTIAL", "NOT_INVOKED"
SKILL_TOOL, READ_SKILL_MD, GLOB_FALLBACK, NONE = "Skill tool", "Read SKILL.md", "Glob fallback", "none"
_METHOD_RANK = {SKILL_TOOL: 0, READ_SKILL_MD: 1, GLOB_FALLBACK: 2}

_SKILL_NAMES = frozenset({"invoke_skill", "activate_skill", "skill"})
_EXPLICIT = _SKILL_NAMES - {"skill"}
_SNIFFABLE = frozenset({"", "other", "tool"})
# shell words (paths are judged by plain string tests: no nested quantifiers over agent-written commands)
_SHELL_WORD = linre.compile(r"""[^\s'"`;|&<>()]+""")
_SKILL_DIRS = ("skills", "skill")
_NOT_READS = {"ls", "find", "tree", "du", "stat", "file", "mkdir", "rm", "touch", "chmod", "cp", "mv", "ln"}
_NAME_IN_TEXT = (
    linre.compile(r"Launching\s+skill:\s*([^\s\"'\\]+)", re.I),
    linre.compile(r"\[skill:\s*([^\]\s]+)\s*\]", re.I),
    linre.compile(r"<skill_content\s+name\s*=\s*\"([^\"]+)\"", re.I),
    linre.compile(r"#{1,6}\s*Skill:\s*(\S+)", re.I),
    linre.compile(r"Loaded\s+skill:\s*(\S+)", re.I),
)
_FRONTMATTER_NAME = linre.compile(r"^\s*name:\s*[\"']?([\w.:-]+)", re.M)
_BODY_HEADERS = linre.compile(r"\A\s*(?:Base directory for this skill:\s*(\S+)|Loaded skill:\s*(\S+))", re.I)
_LINE_NO = linre.compile(r"^[ \t]*\d+(?:→|\t)", re.M)
_RELATIVE_REF = linre.compile(r"(?:^|/)(references/[^/]+\.md)$", re.I)


@dataclass(slots=True)
class SkillUse:
    name: str
    first: int  # event index of the first use
    method: str
    loaded: bool = False  # SKILL.md read or the skill tool ran
    load_event: int | None = None
    text: str = ""  # SKILL.md as the agent saw it ("" when the trajectory does not hold it)
    text_source: str = ""
    sub_files: list[str] = field(default_factory=list)  # paths relative to the skill dir
    events: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # evidence lines


@dataclass(slots=True)
class Analysis:
    skills: dict[str, SkillUse] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)  # built-in skills invoked (not task skills)
    task_skills: list[str] = field(default_factory=list)
    literal: bool = False
    # literal mode: the seed's sub_files_read — parse_path(evt) of each tool call that matched only
    # references/.*\.md; such a call is not a skill use (it fills no skills_read)
    literal_subs: list[str] = field(default_factory=list)
    # literal mode: the seed's skills_read, one entry per matching call (parse_skill_name / parse_codex_path)
    literal_reads: list[str] = field(default_factory=list)
    literal_sub_events: list[int] = field(default_factory=list)
    literal_sub_notes: list[str] = field(default_factory=list)

    @property
    def used(self) -> bool:
        return bool(self.skills)

    def skills_read(self) -> list[str]:
        if self.literal:
            return list(self.literal_reads)
        return list(self.skills)

    def sub_files_read(self) -> list[str]:
        if self.literal:
            return list(self.literal_subs)
        return [f"{s.name}/{p}" for s in self.skills.values() for p in s.sub_files]

    def method(self) -> str:
        if not self.skills:
            return NONE
        return min((s.method for s in self.skills.values()), key=lambda m: _METHOD_RANK.get(m, 9))

    def events(self) -> list[int]:
        return sorted({i for s in self.skills.values() for i in s.events} | set(self.literal_sub_events))

    def evidence(self, limit: int = 6) -> str:
        lines = [n for s in sorted(self.skills.values(), key=lambda s: s.first) for n in s.notes]
        lines += self.literal_sub_notes
        more = f" (+{len(lines) - limit} more)" if len(lines) > limit else ""
        return "; ".join(lines[:limit]) + more


# ------------------------------------------------------------------------------------------------ detection


def _norm(value: str) -> str:
    return value.strip().lower().replace("-", "_")


def is_skill_invocation(e: Event, cfg: Settings) -> bool:
    """BenchFlow's production classifier on the normalized event (the stricter rule, precise mode)."""
    if e.type != TOOL:
        return False
    kind = _norm(e.kind)
    if kind in _SKILL_NAMES:  # a tool *named* skill too: every loader but ACP derives the kind from the name
        return True
    title = _norm(e.title)
    if title in _EXPLICIT:
        return True
    if kind not in _SNIFFABLE:
        return False
    if title in _SKILL_NAMES:
        return True
    out = e.output
    if cfg.skill_tool_header_re.match(out) and "[skill:" in out.lower():
        return True
    return bool(cfg.skill_envelope_re.match(out))


def _invoked_name(e: Event) -> str:
    try:
        args = json.loads(e.args) if e.args.startswith("{") else {}
    except ValueError:
        args = {}
    if isinstance(args, dict):
        for key in ("skill", "name", "skill_name", "command", "load_skill"):
            v = args.get(key)
            if isinstance(v, str) and v.strip() and len(v) < 200 and "\n" not in v:
                return v.strip().lstrip("/")
    for rx in _NAME_IN_TEXT:
        m = rx.search(e.output[:2000])
        if m:
            return m.group(1).strip().rstrip(".,")
    parts = e.title.split(None, 1)
    if len(parts) == 2 and _norm(parts[0]) in _SKILL_NAMES | {"load_skill"} and len(parts[1]) < 120:
        return parts[1].strip().strip("`'\"")
    return ""


def _skill_of(path: str) -> tuple[str, str] | None:
    """(skill name, path below the skill dir) for a skill file path (``…/<name>/SKILL.md`` or
    ``…/skills/<name>/<rest>``), else None."""
    p = path.strip().strip("'\"`").rstrip("/")
    if not p:
        return None
    parts = p.split("/")
    if parts[-1].lower() == "skill.md":
        name = parts[-2] if len(parts) >= 2 and parts[-2] not in ("", ".", "..") else ""
        return (name or "SKILL.md", "SKILL.md")
    for i, part in enumerate(parts[:-2]):
        if part.lower() in _SKILL_DIRS and parts[i + 1]:
            name, rest = parts[i + 1], "/".join(parts[i + 2:])
            if name.startswith(".") and "/" in rest:  # ~/.codex/skills/.system/<name>/...: a namespace directory
                name, rest = rest.split("/", 1)
            return (name, rest) if rest else None
    return None


def _path_words(command: str) -> list[str]:
    """Shell words that name a SKILL.md, something below a skills/ directory, or a references/*.md."""
    low = command.lower()  # each word kept below contains "skill" or ".md", and so does the lower-cased command
    if "skill" not in low and ".md" not in low:
        return []
    out = []
    for m in _SHELL_WORD.finditer(command):
        w = m.group(0)
        low = w.lower()
        parts = low.split("/")
        if parts[-1] == "skill.md" or any(x in _SKILL_DIRS for x in parts[:-1]) or \
                (low.endswith(".md") and "references" in parts[:-1]):
            out.append(w)
    return out


def _relative_reference(a: Analysis, path: str) -> tuple[str, str] | None:
    """A bare ``references/x.md`` read after a skill was loaded (the seed's own example reads
    "references/representative-protocols.md"): it belongs to the loaded skill whose SKILL.md names it, else to
    the last one loaded."""
    m = _RELATIVE_REF.search(path.strip().strip("'\"`"))
    loaded = [s for s in a.skills.values() if s.loaded]
    if not m or not loaded:
        return None
    rest = m.group(1)
    base = rest.rsplit("/", 1)[-1]
    owner = next((s for s in reversed(loaded) if base in s.text), loaded[-1])
    return owner.name, rest


def _read_targets(e: Event) -> list[str]:
    """Files a tool call reads or runs (never what it only lists, searches or writes)."""
    if e.kind == READ:
        out = list(e.paths)
        if not out and e.title.lower().startswith("read "):
            out.append(e.title.split(None, 1)[1].strip().strip("`'\""))
        return out
    if e.kind == EXECUTE and e.command:
        if first_word(e.command) in _NOT_READS:
            return []
        written = set(write_targets(e.command))
        return [w for w in _path_words(e.command) if w not in written]
    return []


def _strip_line_numbers(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and sum(1 for ln in lines if _LINE_NO.match(ln)) >= 0.6 * len(lines):
        return _LINE_NO.sub("", text)
    return text


def _body_after(events: list[Event], e: Event, name: str) -> str:
    """The skill body a harness injects after the tool call (Claude Code: a user message 'Base directory for this
    skill: …'; terminus-2-skills: 'Loaded skill: x')."""
    own = e.output
    for rx in _NAME_IN_TEXT:
        own = rx.sub("", own, count=1)
    if len(own.strip()) > 200:
        return own
    for later in events[e.index + 1: e.index + 15]:
        if later.type in (USER, OTHER) and later.text:
            m = _BODY_HEADERS.match(later.text)
            if m:
                named = (m.group(1) or m.group(2) or "").rstrip("/")
                if not name or named.rsplit("/", 1)[-1] == name or named == name:
                    return later.text
    return ""


def _known_task_skills(job: Job, cfg: Settings) -> list[str]:
    names: list[str] = []
    task = job.task_info
    if task is not None and task.skills_dir is not None:
        try:
            entries = sorted(os.scandir(task.skills_dir), key=lambda x: x.name)
        except OSError:
            entries = []
        for ent in entries:
            if ent.is_dir(follow_symlinks=False) and file_kind(task.skills_dir, f"{ent.name}/SKILL.md") == "file":
                names.append(ent.name)
    init = job.trajectory.meta.get("skills") if job.trajectory is not None else None
    if isinstance(init, list):
        names += [s for s in init if isinstance(s, str) and s not in cfg.builtin_skills and s not in names]
    return names


def _use(a: Analysis, name: str, e: Event, method: str) -> SkillUse:
    s = a.skills.get(name)
    if s is None:
        s = a.skills[name] = SkillUse(name, e.index, method)
    elif _METHOD_RANK[method] < _METHOD_RANK[s.method] and not s.loaded:
        s.method = method
    if e.index not in s.events:
        s.events.append(e.index)
    return s


def _analyze_precise(job: Job, cfg: Settings, a: Analysis) -> None:
    assert job.trajectory is not None
    events = job.trajectory.events
    task_skills = set(a.task_skills)
    for e in events:
        if e.type != TOOL or e.status == "failed":
            continue
        if is_skill_invocation(e, cfg):
            name = _invoked_name(e) or f"skill#{e.index}"
            if name in cfg.builtin_skills and name not in task_skills:
                a.ignored.append(f"{e.label()}: built-in skill {name!r}")
                continue
            s = _use(a, name, e, SKILL_TOOL)
            s.method = SKILL_TOOL
            s.notes.append(f"{e.label()}: launched skill {quote(name, 80)}")
            if not s.loaded:
                s.loaded, s.load_event = True, e.index
            if not s.text and len(a.skills) <= MAX_SKILLS:
                body = _body_after(events, e, name)
                if body:
                    s.text, s.text_source = body, f"{e.label()} result"
            continue
        targets = _read_targets(e)
        single = len(targets) == 1
        failed = None  # whether the output says the read failed (then it read nothing): asked at the first hit only
        for target in targets:
            hit = _skill_of(target) or _relative_reference(a, target)
            if hit is None:
                continue
            if failed is None:
                failed = failed_by_output(e)
            if failed:
                break
            name, rest = hit
            if name == "SKILL.md":  # codex-acp "Read SKILL.md" with no path: the frontmatter names the skill
                m = _FRONTMATTER_NAME.search(e.output[:3000])
                name = m.group(1) if m else f"skill#{e.index}"
            if name in cfg.builtin_skills and name not in task_skills:
                a.ignored.append(f"{e.label()}: built-in skill {name!r}")
                continue
            verb = "ran" if e.kind == EXECUTE and rest.lower() != "skill.md" and not rest.endswith(".md") else "read"
            if rest.lower() == "skill.md":
                s = _use(a, name, e, READ_SKILL_MD)
                s.notes.append(f"{e.label()}: read {quote(target, 120)}")
                if not s.loaded:
                    s.loaded, s.load_event = True, e.index
                if not s.text and single and e.output.strip():
                    s.text, s.text_source = _strip_line_numbers(e.output), f"{e.label()} output"
            else:
                s = _use(a, name, e, GLOB_FALLBACK)
                if "." not in rest.rsplit("/", 1)[-1]:  # a directory of the skill (cd, sys.path.append)
                    s.notes.append(f"{e.label()}: uses {quote(target, 120)}")
                    continue
                if rest not in s.sub_files:
                    s.sub_files.append(rest)
                s.notes.append(f"{e.label()}: {verb} {quote(target, 120)}")


def _analyze_literal(job: Job, a: Analysis) -> None:
    """The seed's detect_skill_invocations(), bit for bit on each tool call's JSON."""
    lines = raw_lines(job)
    assert job.trajectory is not None
    for e in job.trajectory.events:
        if e.type != TOOL:
            continue
        flat = flat_json(e, lines)
        if "Launching skill:" in flat:
            m = re.search(r"Launching skill:\s*([^\s\"\\]+)", flat)
            name = m.group(1) if m else f"skill#{e.index}"
            s = _use(a, name, e, SKILL_TOOL)
            a.literal_reads.append(name)  # skills_read.append(parse_skill_name(flat))
            s.loaded, s.load_event = True, s.load_event if s.load_event is not None else e.index
            s.notes.append(f"{e.label()}: 'Launching skill: {quote(name, 80)}'")
            if not s.text:
                body = _body_after(job.trajectory.events, e, name)
                s.text, s.text_source = body, f"{e.label()} result" if body else ""
        elif "Read SKILL.md" in e.title:
            target = next((p for p in e.paths if p.endswith("SKILL.md")), "")
            hit = _skill_of(target) if target else None
            name = hit[0] if hit else (m.group(1) if (m := _FRONTMATTER_NAME.search(e.output[:3000]))
                                       else f"skill#{e.index}")
            s = _use(a, name, e, READ_SKILL_MD)
            # skills_read.append(parse_codex_path(evt)): <skill>/SKILL.md, as in the seed's SB-3c example
            a.literal_reads.append(f"{hit[0]}/{hit[1]}" if hit else (target or name))
            s.loaded, s.load_event = True, s.load_event if s.load_event is not None else e.index
            s.notes.append(f"{e.label()}: {quote(e.title, 80)}")
            if not s.text and e.output.strip():
                s.text, s.text_source = _strip_line_numbers(e.output), f"{e.label()} output"
        elif literal_sub_hit(flat):
            # sub_files_read.append(parse_path(evt)): the call's own path, named from its skill as in the seed's
            # worked example (skill/references/x.md; a bare references/x.md belongs to the skill loaded last). A
            # SKILL.md whose text mentions references/x.md lands here too; nothing goes to skills_read.
            path = e.paths[0] if e.paths else literal_sub_path(flat)
            hit = _skill_of(path) or _relative_reference(a, path)
            a.literal_subs.append(f"{hit[0]}/{hit[1]}" if hit else path)
            a.literal_sub_events.append(e.index)
            a.literal_sub_notes.append(f"{e.label()}: references/*.md in the call ({quote(path, 120)})")


def analyze(job: Job, cfg: Settings) -> Analysis:
    """The job's skill analysis, computed once per job and settings (SB-1, SB-3a and SB-3c all read it)."""
    key = f"skills.analysis:{id(cfg)}"
    if key not in job.cache:
        job.cache[key] = _analyze(job, cfg)
    return cast(Analysis, job.cache[key])


def _analyze(job: Job, cfg: Settings) -> Analysis:
    a = Analysis(literal=cfg.literal)
    a.task_skills = _known_task_skills(job, cfg)
    if cfg.literal:
        _analyze_literal(job, a)
    else:
        _analyze_precise(job, cfg, a)
    return a


def _gate(job: Job, a: Analysis) -> str | None:
    """The N/A reason when the job is not a with-skills run, else None."""
    if job.condition == "with-skills":
        return None
    used = ", ".join(a.skills_read()[:5])
    if job.condition == "no-skills":
        if used:
            return (f"run without skills (condition no-skills) — yet it used skill(s) {used}: skill leak, the "
                    f"no-skills arm is contaminated ({a.evidence(3)})")
        return "run without skills (condition no-skills): skill checks do not apply"
    seen = f"; skills used in the trajectory: {used}" if used else ""
    return ("condition unknown: nothing says whether skills were mounted (result.json skill_mode/source/"
            f"config.agent.skills, a with-/no-skills folder name, or a task skill in Claude's init line){seen}")


MAX_SKILLS = 50  # skills whose text and workflow are looked at


def _skill_md_from_task(job: Job, name: str) -> str:
    task = job.task_info
    if task is None or task.skills_dir is None or not name or "/" in name or name.startswith("."):
        return ""
    rel = f"{name}/SKILL.md"
    try:
        st = os.lstat(task.skills_dir)
        if not stat.S_ISDIR(st.st_mode) or file_kind(task.skills_dir, rel) != "file":
            return ""
        data = read_bytes(task.skills_dir, rel, Budget(1_000_000, 1_000_000))
        return decode_text(data, task.skills_dir / rel)
    except (UnusableInput, OSError):
        return ""


def _has_references(job: Job, s: SkillUse) -> bool | None:
    """Whether the skill has references/ to open: the task's skill dir says so, else the SKILL.md text links one;
    None when neither is known."""
    task = job.task_info
    if task is not None and task.skills_dir is not None and s.name and "/" not in s.name:
        if file_kind(task.skills_dir, f"{s.name}/references") == "dir":
            return True
        if file_kind(task.skills_dir, f"{s.name}/SKILL.md") == "file":
            return False
    if s.text:
        return "references/" in s.text
    return None


@dataclass(slots=True)
class Misuse:
    top_level_only: bool | None = None
    top_evidence: str = ""
    partial: bool | None = None
    partial_evidence: str = ""
    workflows: list[dict[str, Any]] = field(default_factory=list)


def misuse(job: Job, cfg: Settings, a: Analysis) -> Misuse:
    key = f"skills.misuse:{id(cfg)}:{id(a)}"
    if job.cache.get(key, (None,))[0] is not a:  # the analysis object itself is kept, so its id is not reused
        job.cache[key] = (a, _misuse(job, cfg, a))
    return cast(Misuse, job.cache[key][1])


def _misuse(job: Job, cfg: Settings, a: Analysis) -> Misuse:
    out = Misuse()
    assert job.trajectory is not None
    loaded = [s for s in a.skills.values() if s.loaded]
    sub_refs = [f for f in a.sub_files_read() if "references/" in f and f.endswith(".md")]
    # SB-3c
    if a.literal:  # the seed's formula over the paths of the run's read calls
        reads = [p for e in job.trajectory.events if e.type == TOOL and (e.kind == READ or e.title.startswith("Read"))
                 for p in e.paths]
        skill_files = [p for p in reads if p.endswith("SKILL.md")]
        subs = [p for p in reads if "/references/" in p and p.endswith(".md")]
        out.top_level_only = bool(skill_files) and not subs
        out.top_evidence = f"literal: {len(skill_files)} SKILL.md read(s), {len(subs)} references file(s) read"
    elif not loaded:
        out.top_level_only = False
        out.top_evidence = "no SKILL.md was loaded; the agent opened the skill's files directly: " + \
            ", ".join(a.sub_files_read()[:4])
    else:
        refs = {s.name: _has_references(job, s) for s in loaded}
        linked = [n for n, r in refs.items() if r is not False]
        if sub_refs:
            out.top_level_only = False
            out.top_evidence = f"opened {len(sub_refs)} references file(s): {', '.join(sub_refs[:4])}"
        elif not linked:
            out.top_level_only = False
            out.top_evidence = f"SKILL.md of {', '.join(refs)} links no references/: nothing deeper to open"
        else:
            unknown = [n for n in linked if refs[n] is None]
            out.top_level_only = True
            out.top_evidence = (f"read SKILL.md of {', '.join(s.name for s in loaded)} but never opened a "
                                f"references/*.md" + (f" (whether {', '.join(unknown)} has references is unknown: "
                                                       "SKILL.md text not in the trajectory)" if unknown else ""))
    # SB-3a
    events = job.trajectory.events
    checked = []
    for s in loaded[:MAX_SKILLS]:
        text, source = s.text, s.text_source
        steps = workflow_steps(text) if text else []
        if not steps:
            task_text = _skill_md_from_task(job, s.name)
            if task_text:
                steps, source = workflow_steps(task_text), "task skills_dir"
                text = text or task_text
        if not text:
            out.workflows.append({"skill": s.name, "source": None, "steps": 0})
            continue
        if not steps:
            out.workflows.append({"skill": s.name, "source": source, "steps": 0})
            continue
        start = s.load_event if s.load_event is not None else s.first
        actions = "\n".join(e.action_text() for e in events if e.type == TOOL and e.index > start).lower()
        judged = [st for st in steps if st.strong or st.weak]
        done = [st.n for st in judged if performed(st, actions)]
        missing = [st for st in judged if st.n not in done]
        first_skipped = bool(judged) and judged[0].n not in done and bool(FIRST_RULE.search(judged[0].text))
        ratio = len(done) / len(judged) if judged else 1.0
        partial = bool(judged) and (ratio < cfg.workflow_follow_ratio or first_skipped)
        checked.append((s, judged, done, missing, partial, first_skipped))
        out.workflows.append({"skill": s.name, "source": source, "steps": len(steps), "judged": len(judged),
                              "performed": done, "missing": [st.n for st in missing], "partial": partial})
    if not checked:
        if not loaded:
            out.partial_evidence = "no SKILL.md was loaded: no workflow to follow"
        elif all(w["source"] is None for w in out.workflows):
            out.partial_evidence = ("workflow text unavailable: SKILL.md content is not in the trajectory"
                                    + ("" if job.task_info else " and no --trajaudit-tasks directory was given"))
        else:
            out.partial_evidence = "SKILL.md has no Workflow / Procedure / Steps section with numbered steps"
        return out
    out.partial = any(c[4] for c in checked)
    parts = []
    for s, judged, done, missing, _partial, first_skipped in checked:
        miss = "; ".join(f"{st.n}. {quote(st.text.splitlines()[0], 70)}" for st in missing[:3])
        line = f"{s.name}: {len(done)}/{len(judged)} workflow steps performed after {_label(events, s)}"
        if first_skipped:
            line += " — the prescribed first step was skipped"
        parts.append(line + (f" (missing: {miss})" if miss else ""))
    out.partial_evidence = "; ".join(parts)
    return out


def _label(events: list[Event], s: SkillUse) -> str:
    i = s.load_event if s.load_event is not None else s.first
    return events[i].label() if 0 <= i < len(events) else f"#{i}"


# ------------------------------------------------------------------------------------------------ principles

_NOT_USED = "no skill was read or run: nothing to judge (see SB-1)"


def _empty(status: str, evidence: str, a: Analysis | None = None) -> dict[str, Any]:
    return {"status": status, "skills_read": a.skills_read() if a else [],
            "sub_files_read": a.sub_files_read() if a else [], "discovery_method": a.method() if a else NONE,
            "evidence": evidence}


def _quote(job: Job, a: Analysis) -> tuple[dict[str, Any] | None, str | None]:
    """SB-2's quote for this run: the moment after its first skill use (principles/_skill_quote.py)."""
    first = min(a.skills.values(), key=lambda s: s.load_event if s.load_event is not None else s.first)
    anchor = first.load_event if first.load_event is not None else first.first
    assert job.trajectory is not None
    q, why = skill_quote(job.trajectory.events, anchor, first.name)
    return q, (why or None)


@principle("SB-1", "skill invocation", tier="C0", family="skills", key="skill_invocation", role="info")
def skill_invocation(job: Job, cfg: Settings) -> Finding:
    """Did a with-skills run load its skills (the seed's audit-skillsbench.md SB-1)? VERIFIED → PASS: a skill was
    used and neither SB-3c (top-level only) nor SB-3a (partial follow-through) fired; PARTIAL → WARN: SKILL.md read
    but no linked references/*.md opened, or the workflow not followed; NOT_INVOKED → WARN: no skill file read or
    run. N/A for no-skills runs (a skill leak is named in the reason) and when the condition is unknown.
    Information only: never changes the job verdict (skills are additive in SkillsBench)."""
    a = analyze(job, cfg)
    reason = _gate(job, a)
    if reason:
        data = _empty("N/A", reason, a)
        data["leak"] = job.condition == "no-skills" and a.used
        return Finding.na(reason, data)
    if not a.used:
        ignored = f" (built-in skills only: {'; '.join(a.ignored[:3])})" if a.ignored else ""
        avail = f"; task skills: {', '.join(a.task_skills)}" if a.task_skills else ""
        ev = f"with-skills run, but no skill file was read or run and no skill tool was called{ignored}{avail}"
        if a.literal:
            subs = a.sub_files_read()
            ev = ("literal: no tool call holds 'Launching skill:' or a 'Read SKILL.md' title" +
                  (f" (sub_files_read: {', '.join(quote(p, 120) for p in subs[:4])})" if subs else "") + avail)
        data = _empty(NOT_INVOKED, ev, a)
        data["quote"], data["quote_missing"] = None, "no skill was read or run in this run"
        if a.task_skills:
            data["task_skills"] = a.task_skills
        return Finding.warn(ev, data)
    m = misuse(job, cfg, a)
    why = []
    if m.top_level_only:
        why.append(f"top-level only: {m.top_evidence}")
    if m.partial:
        why.append(f"partial follow-through: {m.partial_evidence}")
    status = PARTIAL if why else VERIFIED
    ev = f"{status} via {a.method()}: {a.evidence()}"
    if why:
        ev += " — " + "; ".join(why)
    elif m.partial is None:
        ev += f" (workflow not checked: {m.partial_evidence})"
    data = _empty(status, ev, a)
    data["quote"], data["quote_missing"] = _quote(job, a)
    if a.ignored:
        data["ignored"] = a.ignored[:10]
    if a.task_skills:
        data["task_skills"] = a.task_skills
    if status == VERIFIED:
        return Finding.ok(ev, data)
    return Finding.warn(ev, data, a.events())


@principle("SB-3a", "skill misuse: partial follow-through", tier="C0", family="skills", key="skill_misuse",
           role="info")
def partial_follow_through(job: Job, cfg: Settings) -> Finding:
    """The agent loaded a skill but its later tool calls skip the prescribed workflow (SB-3a). The numbered steps
    of the SKILL.md 'Workflow' / 'Procedure' / 'Steps' section (from the read's output or the skill tool's result in
    the trajectory; else ``<task>/environment/skills/<skill>/SKILL.md`` under --trajaudit-tasks) are matched against
    the tool calls after the load: a step counts as performed when one of its salient tokens (inline code,
    file names, snake_case / CamelCase identifiers, --flags; for a prose-only step 1–2 of its longest content words)
    appears in a later call's command, paths or arguments. WARN when fewer than half the judgeable steps are
    performed, or a prescribed 'first' step (ledger / timeline / scaffold / before) is skipped; PASS otherwise;
    N/A without a with-skills run, a loaded skill, or workflow text with numbered steps."""
    a = analyze(job, cfg)
    reason = _gate(job, a)
    if reason:
        return Finding.na(reason, {"partial_follow_through": None, "evidence": reason})
    if not a.used:
        ev = _NOT_USED
        return Finding.na(ev, {"partial_follow_through": None, "evidence": ev})
    m = misuse(job, cfg, a)
    data = {"partial_follow_through": m.partial, "evidence": m.partial_evidence, "workflows": m.workflows}
    if m.partial is None:
        return Finding.na(m.partial_evidence, data)
    if m.partial:
        return Finding.warn(f"partial follow-through: {m.partial_evidence}", data, a.events())
    return Finding.ok(m.partial_evidence, data)


@principle("SB-3c", "skill misuse: top-level only", tier="C0", family="skills", key="skill_misuse",
           role="info")
def top_level_only(job: Job, cfg: Settings) -> Finding:
    """The agent read SKILL.md but never opened a linked references/*.md (SB-3c; SKILL.md is a router, the meat is
    in the references). Seed rule: ``bool(skill_files) and not sub_files`` (skill_files = SKILL.md reads or skill
    tool loads, sub_files = reads containing /references/ and ending .md). Precise mode skips skills known to have
    no references (no references/ in the task's skill dir, or no 'references/' in the SKILL.md text). WARN when
    top-level only; PASS otherwise; N/A without a with-skills run or any skill used."""
    a = analyze(job, cfg)
    reason = _gate(job, a)
    if reason:
        return Finding.na(reason, {"top_level_only": None, "evidence": reason})
    if not a.used:
        ev = _NOT_USED
        return Finding.na(ev, {"top_level_only": None, "evidence": ev})
    m = misuse(job, cfg, a)
    data = {"top_level_only": m.top_level_only, "evidence": m.top_evidence}
    if m.top_level_only:
        return Finding.warn(f"top-level only: {m.top_evidence}", data, a.events())
    return Finding.ok(m.top_evidence, data)



# skill impact of a task group: mean reward with vs without skills per task, agent and model (summary "skill_impact")
register_group(GroupCheck(code="SB-2", title="skill impact across conditions", family="skills", key="skill_impact"))

__all__ = ["analyze", "is_skill_invocation", "misuse", "workflow_steps", "VERIFIED", "PARTIAL", "NOT_INVOKED"]
