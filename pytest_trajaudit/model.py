"""The one normalized model every principle reads.

Loaders turn any trajectory format into a :class:`Trajectory` of :class:`Event` objects; the job loader
fills a :class:`Job` (paths, reward, verifier, prompts, the trajectory). Principles return a
:class:`Finding`. These are slotted dataclasses rather than pydantic models: a 50 MB trajectory yields
hundreds of thousands of events and per-event validation would dominate the audit. The report schema
(what users consume) is pydantic, in ``report/schema.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Status = Literal["PASS", "WARN", "FAIL", "N/A"]

# Event types follow ACP naming (the seed's audit-general.md): every format maps onto these.
USER = "user_message"
AGENT = "agent_message"
THOUGHT = "agent_thought"
TOOL = "tool_call"
OTHER = "other"

# Normalized tool kinds. ACP's five plus the ones real exports use; loaders may pass any string.
READ, EDIT, EXECUTE, SEARCH, FETCH, THINK, SKILL, OTHER_KIND = (
    "read", "edit", "execute", "search", "fetch", "think", "skill", "other",
)


class UnusableInput(Exception):
    """Input that cannot be audited: names the file and the reason, in one line."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


@dataclass(slots=True)
class Event:
    """One step of a trajectory. A tool call is one event with its result merged in."""

    index: int
    type: str  # user_message | agent_message | agent_thought | tool_call | other
    kind: str = ""  # tool kind (read/edit/execute/search/fetch/think/skill/other/...); "" for non-tools
    tool: str = ""  # tool name as the harness named it (Bash, Read, shell, str_replace_editor, ...)
    title: str = ""  # free-form title (ACP title; otherwise the tool name)
    command: str = ""  # shell command for execute-like calls
    paths: tuple[str, ...] = ()  # file paths the call names (read/edit targets, diff paths, locations)
    args: str = ""  # the call's arguments rendered as text (JSON), for pattern scans
    output: str = ""  # the tool result (text), possibly clipped by the loader
    status: str = "unknown"  # ok | failed | unknown
    text: str = ""  # message / thought text
    raw: str = ""  # pointer into the source file, e.g. "line 12" or "steps[3].tool_calls[0]"
    sidechain: bool = False  # sub-agent work (Claude sidechains, Task tool) kept apart from the main thread
    # An agent message's submissions: the content of its fenced code blocks when the harness takes the answer from
    # the message (a chat-harness transcript runs them against the tests); () otherwise. ``text`` keeps the fences.
    code: tuple[str, ...] = ()

    @property
    def is_tool(self) -> bool:
        return self.type == TOOL

    def label(self) -> str:
        """Short human label: '#12 Bash' / '#3 Read File'."""
        name = self.title or self.tool or self.type
        return f"#{self.index} {name}"

    def brief(self) -> str:
        """What to quote in evidence: the command, else the paths, else the title / message text."""
        if self.command:
            return self.command
        if self.paths:
            return " ".join(self.paths)
        return self.title or self.text or self.args

    def action_text(self) -> str:
        """What the agent authored for this call: command, paths and arguments (never the output)."""
        parts = [self.command, " ".join(self.paths), self.args]
        if self.title and self.title not in (self.tool,):
            parts.append(self.title)
        return "\n".join(p for p in parts if p)


@dataclass(slots=True)
class Trajectory:
    format: str  # loader name, e.g. "acp-jsonl", "claude-stream-json"
    source: str  # path of the file it came from
    events: list[Event] = field(default_factory=list)
    raw_text: str = ""  # the decoded file text (the seeds' "full trajectory string"); "" for multi-file
    meta: dict[str, Any] = field(default_factory=dict)  # model, agent, cwd, session id, ...

    def tool_calls(self, include_sidechain: bool = True) -> list[Event]:
        return [e for e in self.events if e.type == TOOL and (include_sidechain or not e.sidechain)]


@dataclass(slots=True)
class Verifier:
    reward: float | None = None
    reward_source: str | None = None  # result.json | reward.txt | ctrf
    rewards: dict[str, Any] = field(default_factory=dict)  # every reward source seen, by source
    ctrf_summary: dict[str, Any] | None = None  # {tests, passed, failed, ...} from ctrf.json or Harbor output.json
    tests_source: str | None = None  # which file the test summary came from
    ctrf_failures: list[dict[str, str]] = field(default_factory=list)  # {name, message}
    passed_tests: list[str] = field(default_factory=list)  # names of the passed tests (the first 50)
    stdout_tail: str = ""  # last lines of verifier/test-stdout.txt
    reward_note: str = ""  # why the reward is unknown although a scorer answered (e.g. a letter grade), else ""


@dataclass(slots=True)
class TaskFile:
    """One file of a task directory (trusted: written by the task author, found under ``--trajaudit-tasks``)."""

    rel: str  # path relative to the task dir, e.g. "tests/test_outputs.py", "solution/solve.sh"
    text: str  # decoded text ("" for binary or over-limit files)
    size: int = 0


@dataclass(slots=True)
class Task:
    """A Harbor-layout task directory: instruction.md, task.toml, tests/, solution/, environment/."""

    dir: Path
    name: str
    instruction: str = ""
    toml: dict[str, Any] = field(default_factory=dict)  # task.toml parsed (tomllib); {} when absent
    privileged: list[TaskFile] = field(default_factory=list)  # every file under tests/ and solution/
    public: list[TaskFile] = field(default_factory=list)  # text files under environment/ (what the agent may see)
    skills_dir: Path | None = None  # environment/skills (or skills/) when present
    notes: list[str] = field(default_factory=list)  # what could not be read (over limits, binary, symlinks)

    def trajaudit_config(self) -> dict[str, Any]:
        """The task's own ``[trajaudit]`` table of task.toml (e.g. P9's entity key)."""
        t = self.toml.get("trajaudit")
        return t if isinstance(t, dict) else {}


@dataclass(slots=True)
class Job:
    """One audited run: a Harbor trial, a BenchFlow rollout, or a bare trajectory file."""

    dir: Path  # the job directory (for a bare file: its parent)
    anchor: Path  # the file its node is anchored on (result.json or the trajectory file)
    layout: str  # harbor-trial | benchflow-rollout | attempt | agent-dir | bare-file
    config: str = ""  # e.g. "claude-code-skills"; used for audit-<config>.json
    task: str = ""
    trial: str = ""
    agent: str = ""
    model: str = ""
    condition: str | None = None  # "with-skills" | "no-skills" | None when unknown
    is_oracle: bool = False
    result: dict[str, Any] = field(default_factory=dict)  # selected result.json fields
    n_tool_calls_reported: int | None = None
    exception: str | None = None  # exception recorded by the harness
    verifier: Verifier = field(default_factory=Verifier)
    instruction: str = ""  # prompts.json / first user message
    trajectory: Trajectory | None = None
    trajectory_candidates: list[str] = field(default_factory=list)  # files considered, richest first
    files_read: list[str] = field(default_factory=list)  # every file this job's loading opened
    compared: list[str] = field(default_factory=list)  # other candidates read and compared (loaders/candidates.py)
    disagreements: list[dict[str, Any]] = field(default_factory=list)  # candidates naming what the audited one lacks
    not_audited: list[dict[str, str]] = field(default_factory=list)  # {path, reason}: files inside the job not audited
    nested_runs: list[str] = field(default_factory=list)  # folders inside the job that look like another run
    oracle_tool_calls: int = 0  # result.json/config.json name the oracle, yet the trajectory has this many tool calls
    task_info: Task | None = None  # the task directory, when found under --trajaudit-tasks
    task_lookup: str = ""  # why no task was found (or which directory was used)
    cache: dict[str, Any] = field(default_factory=dict)  # per-job values shared by a family's principles (advisor)

    @property
    def reward(self) -> float | None:
        return self.verifier.reward

    def no_reward(self) -> str:
        """Evidence for a job without a reward: 'no reward recorded', with the reason when a scorer answered
        something that is not a reward (e.g. 'no reward recorded: Inspect scorer value(s) with no agreed
        reward: grade=A')."""
        note = self.verifier.reward_note
        return f"no reward recorded: {note}" if note else "no reward recorded"


@dataclass(slots=True)
class Finding:
    """What a principle concludes. ``data`` holds the audit-JSON fragment (JSON builtins only)."""

    status: Status
    evidence: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    events: list[int] = field(default_factory=list)

    @classmethod
    def ok(cls, evidence: str = "", data: dict[str, Any] | None = None) -> Finding:
        return cls("PASS", evidence, data or {})

    @classmethod
    def warn(cls, evidence: str, data: dict[str, Any] | None = None, events: list[int] | None = None) -> Finding:
        return cls("WARN", evidence, data or {}, events or [])

    @classmethod
    def fail(cls, evidence: str, data: dict[str, Any] | None = None, events: list[int] | None = None) -> Finding:
        return cls("FAIL", evidence, data or {}, events or [])

    @classmethod
    def na(cls, reason: str, data: dict[str, Any] | None = None) -> Finding:
        return cls("N/A", reason, data or {})
