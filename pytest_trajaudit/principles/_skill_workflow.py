"""SKILL.md workflows for SB-3a (principles/skills.py): the numbered steps of a skill's "Workflow" /
"Procedure" / "Steps" section, the salient tokens of each step, and whether a run's later actions perform it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..scan import linre

_HEADING = linre.compile(r"^[ ]{0,3}(#{1,6})[ \t]+(\S.*)$")
_BOLD = linre.compile(r"^[ ]{0,3}\*\*([^*]+)\*\*:?[ \t]*$")
_WORKFLOW = linre.compile(r"\b(?:workflow|procedure|steps?)\b", re.I)
_ITEM = linre.compile(r"^(\s*)(\d{1,2})[.)]\s+(.+)$")
_STEP_HEADING = linre.compile(r"^(?:step\s*)?(\d{1,2})\s*[:.)\-–]\s*(.+)$", re.I)
_FENCE = linre.compile(r"^\s*(```|~~~)")
_CODE_SPAN = linre.compile(r"`([^`\n]+)`")
_FILE = linre.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.(?:py|sh|js|ts|json|jsonl|csv|tsv|md|txt|ya?ml|toml|sql|ipynb|"
                   r"xlsx|xls|docx|pptx|pdf|stl|bib|html|xml|parquet|r|jl|go|rs|c|cpp|h)\b", re.I)
_IDENT = linre.compile(r"\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|\w+\.\w+(?=\())")
_FLAG = linre.compile(r"(?<![\w-])--[a-z][\w-]+")
_WORD = linre.compile(r"[A-Za-z][A-Za-z-]{4,}")
FIRST_RULE = linre.compile(r"\b(?:ledger|timeline|scaffold|before|first)\b", re.I)
_GENERIC = {
    "python", "python3", "bash", "sh", "cd", "pip", "pip3", "cat", "ls", "echo", "print", "import", "sys.path",
    "json", "self", "true", "false", "none", "null", "skill.md", "readme.md", "__init__", "__main__", "sudo",
}
_STOP = {
    "about", "above", "after", "again", "against", "because", "before", "being", "below", "between", "could",
    "every", "first", "should", "their", "there", "these", "those", "through", "under", "until", "using", "where",
    "which", "while", "would", "other", "always", "never", "start", "based", "check", "ensure", "output", "input",
    "result", "results", "value", "values", "provide", "provided", "following", "available", "directly", "given",
    "needed", "needs", "whether", "without", "within", "further", "example", "make", "sure", "right", "skill",
    "skills", "correct", "correctly", "carefully", "specific", "approach", "instead", "doing", "think",
}


MAX_STEPS = 50  # workflow steps judged per skill (bounds the work on a hostile SKILL.md)


@dataclass(slots=True)
class Step:
    n: int
    text: str
    strong: list[str] = field(default_factory=list)
    weak: list[str] = field(default_factory=list)


def _stem(w: str) -> str:
    w = w.lower()
    for suf in ("ing", "ed", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            return w[: -len(suf)]
    return w


def _tokens(step: Step) -> Step:
    text = step.text
    strong: list[str] = []
    code = [m.group(1) for m in _CODE_SPAN.finditer(text)]
    prose = _CODE_SPAN.sub(" ", text)
    for chunk in code:
        c = chunk.strip().rstrip("()")
        if " " not in c and "<" not in c and "{" not in c and len(c) >= 3:
            strong.append(c)
        else:
            strong += [m.group(0) for m in _FILE.finditer(chunk)] + [m.group(0) for m in _IDENT.finditer(chunk)]
            strong += [m.group(0) for m in _FLAG.finditer(chunk)]
    strong += [m.group(0) for m in _FILE.finditer(prose)] + [m.group(0) for m in _IDENT.finditer(prose)]
    strong += [m.group(0) for m in _FLAG.finditer(prose)]
    seen: list[str] = []
    for t in strong:
        t = t.strip(".,:;'\"")
        if len(t) >= 3 and t.lower() not in _GENERIC and "<" not in t and t not in seen:
            seen.append(t)
    step.strong = seen[:12]
    if not seen:
        words = [_stem(w) for w in _WORD.findall(prose) if w.lower() not in _STOP]
        uniq = list(dict.fromkeys(w for w in words if len(w) >= 4))
        step.weak = sorted(uniq, key=len, reverse=True)[:8]
    return step


def workflow_steps(skill_md: str) -> list[Step]:
    """The numbered steps of the first 'Workflow' / 'Procedure' / 'Steps' section of a SKILL.md (a numbered list,
    or '### Step N: …' sub-headings); an indented continuation or a code block belongs to the step above it."""
    lines = skill_md.splitlines()
    i = 0
    while i < len(lines):
        start = _section_start(lines, i)
        if start is None:
            return []
        level, body_from = start
        body: list[str] = []
        in_code = False
        j = body_from
        while j < len(lines):
            ln = lines[j]
            if _FENCE.match(ln):
                in_code = not in_code
            elif not in_code:
                h = _HEADING.match(ln)
                if h and len(h.group(1)) <= level and level > 0:
                    break
                if level == 0 and (h or _BOLD.match(ln)) and j > body_from:
                    break
            body.append(ln)
            j += 1
        steps = _steps_of(body)
        if steps:
            return [_tokens(s) for s in steps[:MAX_STEPS]]
        i = j if j > i else i + 1
    return []


def _htext(h: re.Match[str]) -> str:
    return h.group(2).strip().rstrip("#").rstrip()


def _section_start(lines: list[str], i: int) -> tuple[int, int] | None:
    """(heading level, first body line) of the next workflow heading at or after line i; bold pseudo-headings
    get level 0. Code blocks are skipped."""
    in_code = False
    for k in range(i, len(lines)):
        ln = lines[k]
        if _FENCE.match(ln):
            in_code = not in_code
            continue
        if in_code:
            continue
        h = _HEADING.match(ln)
        if h and _WORKFLOW.search(_htext(h)) and not _STEP_HEADING.match(_htext(h)):
            return len(h.group(1)), k + 1
        b = _BOLD.match(ln)
        if b and _WORKFLOW.search(b.group(1)):
            return 0, k + 1
    return None


def _steps_of(body: list[str]) -> list[Step]:
    steps: list[Step] = []
    # '### Step 1: Build the ledger' sub-headings
    for ln in body:
        h = _HEADING.match(ln)
        if h:
            m = _STEP_HEADING.match(_htext(h))
            if m and _htext(h).lower().startswith("step"):
                steps.append(Step(int(m.group(1)), m.group(2).strip()))
            elif steps:
                break
        elif steps:
            steps[-1].text += "\n" + ln
    if steps:
        return steps
    indent: int | None = None
    in_code = False
    for ln in body:
        if _FENCE.match(ln):
            in_code = not in_code
            if steps:
                steps[-1].text += "\n" + ln
            continue
        m = None if in_code else _ITEM.match(ln)
        if m and (indent is None or len(m.group(1)) <= indent):
            indent = len(m.group(1)) if indent is None else indent
            steps.append(Step(int(m.group(2)), m.group(3).strip()))
        elif steps and (in_code or ln.startswith((" ", "\t")) or not ln.strip() or (m and indent is not None)):
            steps[-1].text += "\n" + ln
        elif steps and ln.strip():
            break  # prose after the list ends it
    return steps


def performed(step: Step, actions: str) -> bool:
    if step.strong:
        for t in step.strong:
            tl = t.lower()
            if tl in actions or ("/" in tl and tl.rsplit("/", 1)[-1] in actions):
                return True
        return False
    if not step.weak:
        return False
    need = 1 if len(step.weak) <= 2 else 2
    found = sum(1 for w in step.weak if re.search(r"(?<![a-z])" + re.escape(w), actions))
    return found >= need
