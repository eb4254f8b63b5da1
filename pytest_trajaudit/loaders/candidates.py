"""Which trajectory file of a job is audited, and what every other trajectory-looking file inside it says.

A job directory may hold the same run in several formats (a Harbor claude-code trial keeps Claude Code's
stream-json ``agent/claude-code.txt``, Harbor's ATIF ``agent/trajectory.json`` and the session transcript under
``agent/sessions/projects/``) and may hold files the agent wrote itself (``agent/`` is the agent's own log folder
inside the sandbox). The audited file is the first of the job's layout's precedence list that exists
(:data:`PRECEDENCE`): the one its harness writes, the richest first. It never depends on which other files are
present.

Every other candidate (the other positions of the list, the glob positions, and any file below the job whose
name looks like a trajectory, ``discovery.looks_like_trajectory``) is read too, one at a time, within the per-file
size limit, and reduced to the set of shell commands (whitespace collapsed) and file paths its tool calls name.
A candidate that names a command or a path the audited file does not is a *disagreement*: the audited file may
hide what the run did (P7 turns it into a WARN naming both files). The reverse is no disagreement: the formats
legitimately differ in what they keep (Claude Code's stream-json interleaves sub-agent work that the ATIF file and
the main session transcript leave out; the opencode ATIF repeats every call), so an audited file that holds *more*
than another is expected. A candidate that cannot be read or parsed is listed as not audited, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..discover.jobs import Contents, contents
from ..model import Trajectory, UnusableInput
from ..safeio import Budget, decode_text, file_kind, parse_text, read_bytes
from ..scan.redact import printable

_HARBOR = (
    "agent/claude-code.txt",  # Claude stream-json: tool results with is_error, sub-agents, final result line
    "agent/trajectory.json",  # Harbor ATIF (or another JSON trajectory)
    "agent/mini-swe-agent.trajectory.json",
    "trajectory.json",
    "agent/*.traj.json",
    "*.traj.json",
    "agent/sessions/projects/*/*.jsonl",  # Claude Code session transcript (main sessions before sub-agents')
    "agent/acp_trajectory.jsonl",
    "trainer/atif.json",
    "agent/*.jsonl",
)
_BENCHFLOW = (
    "trajectory/acp_trajectory.jsonl",  # BenchFlow's canonical ACP stream, written outside the sandbox
    "agent/acp_trajectory.jsonl",  # the same stream as the agent's log folder keeps it
    "trainer/atif.json",
    *(p for p in _HARBOR if p not in ("agent/acp_trajectory.jsonl", "trainer/atif.json")),
)
PRECEDENCE: dict[str, tuple[str, ...]] = {
    "benchflow-rollout": _BENCHFLOW,
    "harbor-trial": _HARBOR,
    "attempt": _HARBOR,
    "agent-dir": _HARBOR,
}
DEFAULT_PRECEDENCE = _HARBOR

# Files a harness writes beside the trajectory that hold no tool calls to compare (listed, never parsed).
HARNESS_LOGS = {
    "trajectory/llm_trajectory.jsonl": "BenchFlow's raw LLM request/response log, not an agent trajectory",
}
MAX_LISTED = 20  # commands or paths quoted per disagreement


def order(layout: str) -> tuple[str, ...]:
    return PRECEDENCE.get(layout, DEFAULT_PRECEDENCE)


def _glob(base: Path, pattern: str) -> list[str]:
    """Existing entries matching ``pattern`` below ``base``, never listing a directory through a symlink
    (``Path.glob`` follows them). Claude Code main sessions sort before sub-agent transcripts (``agent-*``)."""
    prefix = pattern.split("*", 1)[0].rstrip("/")
    if prefix and file_kind(base, prefix) != "dir":
        return []
    found = [str(p.relative_to(base)) for p in sorted(base.glob(pattern))]
    return sorted(found, key=lambda rel: (Path(rel).name.startswith("agent-"), rel))


def positions(base: Path, layout: str) -> list[str]:
    """The candidate files that exist (in any form: a symlink or FIFO too), in the layout's precedence order."""
    seen: list[str] = []
    for pattern in order(layout):
        rels = _glob(base, pattern) if "*" in pattern else [pattern]
        for rel in rels:
            if rel not in seen and file_kind(base, rel) != "missing":
                seen.append(rel)
    return seen


@dataclass(slots=True)
class Review:
    """What the job's other candidate files say, next to the audited one (JSON builtins only)."""

    compared: list[str] = field(default_factory=list)  # candidates read and compared with the audited file
    disagreements: list[dict[str, Any]] = field(default_factory=list)  # {file, audited, commands, paths}
    not_audited: list[dict[str, str]] = field(default_factory=list)  # {path, reason}
    nested_runs: list[str] = field(default_factory=list)  # folders inside the job that look like another run


def signature(traj: Trajectory) -> tuple[set[str], set[str]]:
    """The shell commands (whitespace collapsed) and file paths a trajectory's tool calls name."""
    cmds = {" ".join(e.command.split()) for e in traj.events if e.is_tool and e.command.strip()}
    paths = {p for e in traj.events if e.is_tool for p in e.paths if p}
    return cmds, paths


def review(base: Path, audited: str | None, seen: list[str], traj: Trajectory | None,
           load: Callable[[Path, str, Budget], Trajectory], max_file: int, max_job: int,
           inner: Contents | None = None) -> Review:
    """Read every candidate of the job other than ``audited`` and compare it with ``traj`` (the audited one);
    ``seen``: the layout's candidates that exist; ``load(base, rel, budget)`` parses one file. With no audited
    trajectory (``traj`` None) the other candidates are only listed as not audited."""
    out = Review()
    inner = inner if inner is not None else contents(base)
    out.nested_runs = [printable(r) for r in inner.nested_runs]
    if inner.truncated:
        out.not_audited.append({"path": ".", "reason": "the job holds too many files or folders to look through "
                                                        "them all for other trajectories"})
    others = [r for r in dict.fromkeys([*seen, *inner.trajectories]) if r != audited]
    base_sig = signature(traj) if traj is not None else None
    budget = Budget(max_file, max_job)
    for rel in others:
        why = _unreadable(base, rel)
        if why is None and base_sig is None:
            why = "not read: the job has no audited trajectory"
        if why is not None:
            out.not_audited.append(entry(rel, why))
            continue
        try:
            other = load(base, rel, budget)
        except UnusableInput as exc:
            out.not_audited.append(entry(rel, exc.reason))
            continue
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
            out.not_audited.append(entry(rel, f"malformed trajectory: {type(exc).__name__}"))
            continue
        out.compared.append(printable(rel))
        assert base_sig is not None
        cmds, paths = signature(other)
        extra_cmds, extra_paths = sorted(cmds - base_sig[0]), sorted(paths - base_sig[1])
        if extra_cmds or extra_paths:
            out.disagreements.append({"file": printable(rel), "audited": printable(audited or ""), "n_commands": len(extra_cmds),
                                      "n_paths": len(extra_paths), "commands": [c[:200] for c in extra_cmds[:MAX_LISTED]],
                                      "paths": [p[:200] for p in extra_paths[:MAX_LISTED]]})
    return out


def entry(rel: str, reason: str) -> dict[str, str]:
    """A not-audited entry; the file name was chosen by the run: control characters and bytes that are not UTF-8
    are escaped (``redact.printable``) before any report or terminal line sees it."""
    return {"path": printable(rel), "reason": printable(" ".join(reason.split()))[:300]}


def _unreadable(base: Path, rel: str) -> str | None:
    """Why ``rel`` is not read as a trajectory (a symlink, a special file, a harness log, an empty file), or None."""
    kind = file_kind(base, rel)
    if kind == "symlink":
        return "is a symlink (symlinks are never followed)"
    if kind == "special":
        return "not a regular file (FIFOs, devices and directories are never read)"
    if kind != "file":
        return f"not a file ({kind})"
    if rel in HARNESS_LOGS:
        return HARNESS_LOGS[rel]
    try:
        if (base / rel).stat(follow_symlinks=False).st_size == 0:
            return "empty file"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or type(exc).__name__}"
    return None


def load_plain(base: Path, rel: str, budget: Budget, sniff_load: Callable[[Any, Path], Trajectory]) -> Trajectory:
    """Read and parse one candidate whole (strict decoding, no symlinks, within ``budget``)."""
    path = base / rel
    parsed = parse_text(decode_text(read_bytes(base, rel, budget), path), path,
                        log_lines=rel.endswith("claude-code.txt"))
    return sniff_load(parsed, path)
