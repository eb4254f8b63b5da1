"""Prompt material for the judge principles (P3, P11, P13): the job rendered as text, clipped and redacted.

Everything here runs while the job is loaded and returns plain strings, so a principle's ``finish`` closure
captures strings only. Secrets are redacted before any text leaves for a judge (``redact.py``). Pure.
"""

from __future__ import annotations

from typing import Any

from ..judges import Answer, JudgeRequest, clip
from ..model import TOOL, Event, Job
from ..scan.redact import quote, redact

SYSTEM = ("You are a careful auditor of AI-agent benchmark runs. You read a task, what the agent did and what the "
          "verifier said, and you answer with exactly one JSON object that matches the requested schema: no prose "
          "before or after it, no Markdown.")

TRAJECTORY_CHARS = 60_000  # the rendered trajectory a judge sees (both ends kept)
INSTRUCTION_CHARS = 20_000
FINAL_CHARS = 8_000
VERIFIER_CHARS = 20_000  # verifier sources shown to P3 / P13
EVENT_CHARS = 2_000  # one event's text or tool output


def _event_line(e: Event) -> str:
    if e.type == TOOL:
        head = f"[{e.index}] tool {e.kind or '?'} {e.title or e.tool}".rstrip()
        body = e.command or " ".join(e.paths) or e.args
        out = clip(e.output, EVENT_CHARS)[0] if e.output else ""
        return f"{head} ({e.status}): {clip(body, EVENT_CHARS)[0]}" + (f"\n  -> {out}" if out else "")
    return f"[{e.index}] {e.type}: {clip(e.text, EVENT_CHARS)[0]}"


def render_trajectory(job: Job, limit: int = TRAJECTORY_CHARS) -> tuple[str, bool]:
    """The main thread (sub-agent work marked), one block per event, redacted, clipped to ``limit`` keeping both
    ends; returns (text, clipped)."""
    t = job.trajectory
    if t is None or not t.events:
        return "(no trajectory events)", False
    lines = [("(sub-agent) " if e.sidechain else "") + _event_line(e) for e in t.events]
    return clip(redact("\n".join(lines)), limit)


def instruction(job: Job) -> str:
    text = job.task_info.instruction if job.task_info is not None and job.task_info.instruction else job.instruction
    return clip(redact(text or "(instruction unknown)"), INSTRUCTION_CHARS)[0]


def verifier_sources(job: Job, only: list[str] | None = None) -> str:
    """The task's test/verifier sources (trusted task files), or '' without a task directory."""
    task = job.task_info
    if task is None:
        return ""
    files = [f for f in task.privileged if f.rel.split("/", 1)[0] in ("tests", "verifier") and f.text
             and (only is None or f.rel in only)]
    text = "\n\n".join(f"--- {f.rel} ---\n{f.text}" for f in files)
    return clip(redact(text), VERIFIER_CHARS)[0] if text else ""


def section(title: str, body: str) -> str:
    return f"## {title}\n{body.strip() or '(none)'}\n"


def request(purpose: str, prompt: str, schema: dict[str, Any]) -> JudgeRequest:
    return JudgeRequest(purpose, prompt, schema, SYSTEM)


def failed(a: Answer) -> str:
    """One line for evidence: which judge failed and why (never the prompt)."""
    return f"judge {a.model} failed: {quote(a.error or 'no answer', 240)}"


def reason(a: Answer, key: str = "reason", limit: int = 300) -> str:
    v = (a.value or {}).get(key)
    return quote(v if isinstance(v, str) else "", limit)
