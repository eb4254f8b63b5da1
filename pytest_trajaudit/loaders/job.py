"""Load one job: result.json, verifier files, prompts.json and the richest trajectory, into a :class:`Job`.

Read once, at the first item's setup, on the worker that runs the job. Every file goes through
:mod:`safeio` (regular files only, no symlinks, size limits). A file that exists but cannot be read or
parsed is unusable input; a missing optional file is simply absent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..discover.jobs import JobRef, contents
from ..model import Job, Trajectory, UnusableInput, Verifier
from ..safeio import (
    Budget,
    Parsed,
    decode_text,
    events_limit,
    file_kind,
    load_json_object,
    open_jsonl_stream,
    parse_text,
    read_bytes,
)
from ..scan.redact import TAIL_MARGIN, head_of, printable, tail_of
from ..settings import Settings
from . import candidates, multi
from .common import MAX_NESTING
from .sniff import detect, load_trajectory
from .task import attach_task

# Jobs that are one file, or one record of a multi-record file: no result.json / verifier / prompts around them.
FILE_LAYOUTS = ("bare-file", multi.RECORD)

# Every position a job's trajectory may have (the union of the layouts' precedence lists, ``candidates.py``).
TRAJECTORY_CANDIDATES = tuple(dict.fromkeys(p for o in (*candidates.PRECEDENCE.values(), candidates.DEFAULT_PRECEDENCE)
                                            for p in o if "*" not in p))
GLOB_CANDIDATES = tuple(dict.fromkeys(p for o in (*candidates.PRECEDENCE.values(), candidates.DEFAULT_PRECEDENCE)
                                      for p in o if "*" in p))

_NOSKILL = re.compile(r"(?:^|[-_/])(?:no[-_]?skills?|without[-_]skills?|tasks-no-skills|control)(?:$|[-_/])", re.I)
_SKILL = re.compile(r"(?:^|[-_/])(?:with[-_]?skills?|skills|treatment)(?:$|[-_/])", re.I)


def _get(d: Any, *path: str) -> Any:
    for k in path:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    return None


def _apply_result(job: Job, r: dict[str, Any]) -> None:
    job.task = str(r.get("task_name") or job.task or "")
    job.trial = str(r.get("trial_name") or r.get("rollout_name") or job.trial or "")
    agent = _get(r, "config", "agent", "name") or _get(r, "agent_info", "name") or r.get("agent")
    if isinstance(agent, dict):
        agent = agent.get("name")
    job.agent = str(agent or "")
    model = (_get(r, "config", "agent", "model_name") or _get(r, "agent_info", "model_info", "name") or r.get("model"))
    job.model = str(model or "")
    reward = _num(_get(r, "verifier_result", "rewards", "reward"))
    if reward is None:
        reward = _num(_get(r, "rewards", "reward"))
    if reward is None:
        reward = _num(r.get("reward"))
    if reward is not None:
        job.verifier.rewards["result.json"] = reward
    n = _get(r, "agent_result", "n_tool_calls")
    if n is None:
        n = r.get("n_tool_calls")
    job.n_tool_calls_reported = int(n) if isinstance(n, int) and not isinstance(n, bool) else None
    exc = r.get("exception_info") or r.get("error")
    if exc:
        if isinstance(exc, dict):
            exc = f"{exc.get('exception_type', '')}: {exc.get('exception_message', '')}".strip(": ")
        job.exception = str(exc)[:500]
    src = r.get("source")
    mode = r.get("skill_mode")
    if isinstance(mode, str):
        job.condition = "no-skills" if _NOSKILL.search(mode) or mode.startswith("no") else "with-skills"
    elif isinstance(src, str):
        job.condition = "no-skills" if "no-skills" in src else "with-skills" if src == "tasks" else None
    if job.condition is None and (_get(r, "config", "agent", "skills") or _get(r, "agent_result", "metadata", "skills_loaded")):
        job.condition = "with-skills"  # Harbor mounted agent skills, or terminus-2-skills loaded one
    job.result = {k: r[k] for k in ("task_name", "trial_name", "rollout_name", "source", "skill_mode", "task_checksum")
                  if k in r and isinstance(r[k], str | int | float | type(None))}
    tid = r.get("task_id")
    if isinstance(tid, dict) and isinstance(tid.get("path"), str):
        job.result["task_path"] = tid["path"]
    ar = a if isinstance(a := r.get("agent_result"), dict) else {}
    for k in ("n_input_tokens", "n_output_tokens", "cost_usd"):
        if _num(ar.get(k)) is not None:
            job.result[k] = ar[k]
    secs = _duration(r.get("agent_execution"))
    if secs is not None:
        job.result["agent_time_sec"] = secs


def _duration(span: Any) -> float | None:
    """Seconds between ISO ``started_at`` and ``finished_at`` (Harbor's agent_execution), or None."""
    from datetime import datetime

    if not isinstance(span, dict):
        return None
    try:
        a = datetime.fromisoformat(str(span["started_at"]).replace("Z", "+00:00"))
        b = datetime.fromisoformat(str(span["finished_at"]).replace("Z", "+00:00"))
    except (KeyError, ValueError, TypeError):
        return None
    return round((b - a).total_seconds(), 3)


def _condition_from_init(meta: dict[str, Any], cfg: Settings) -> str | None:
    """Claude Code's init line lists every skill it can load, its built-in ones included (2.1.186 lists twelve with
    no task skill; 2.0.67 lists none): a name that is not built-in means a skill was mounted. It never says
    "no-skills" (an empty or built-in-only list cannot tell a run without skills from a harness that mounts them
    elsewhere)."""
    skills = meta.get("skills")
    if isinstance(skills, list) and any(isinstance(s, str) and s not in cfg.builtin_skills for s in skills):
        return "with-skills"
    return None


def _condition_from_path(ref: JobRef) -> str | None:
    s = str(ref.dir)
    if _NOSKILL.search(s):
        return "no-skills"
    if _SKILL.search(s):
        return "with-skills"
    return None


def _optional(job: Job, base: Path, rel: str) -> str | None:
    kind = file_kind(base, rel)
    if kind == "missing":
        return None
    if kind == "dir":
        raise UnusableInput(base / rel, "is a directory, expected a file")
    if kind == "symlink":
        raise UnusableInput(base / rel, "is a symlink (symlinks are never followed)")
    if kind == "special":
        raise UnusableInput(base / rel, "not a regular file (FIFOs, devices and directories are never read)")
    job.files_read.append(rel)
    return rel


def _pick_trajectory(ref: JobRef, base: Path) -> tuple[str | None, list[str]]:
    """The audited trajectory (the first of the layout's precedence list that is a non-empty regular file; the
    last one found is taken even when empty, to report it) and every candidate that exists. A symlink or special
    file met before it is unusable input: never skipped for a file further down the list."""
    if ref.layout in FILE_LAYOUTS or ref.layout == "swe-agent-dir":  # the job is its anchor file
        return ref.anchor.name, [ref.anchor.name]
    seen = candidates.positions(base, ref.layout)
    for rel in seen:
        kind = file_kind(base, rel)
        if kind == "symlink":  # name the symlink itself: a linked agent/ folder, not a file name inside it
            link = next((p for p in _prefixes(rel) if file_kind(base, p) == "symlink"), rel)
            raise UnusableInput(base / link, "is a symlink (symlinks are never followed)")
        if kind == "special":  # name the FIFO/device itself rather than report "no trajectory found"
            raise UnusableInput(base / rel, "not a regular file (FIFOs, devices and directories are never read)")
        if kind != "file":
            continue
        try:
            if (base / rel).stat(follow_symlinks=False).st_size == 0 and rel != seen[-1]:
                continue  # an empty file next to a real one (errored BenchFlow trials leave 0-byte ACP files)
        except OSError:
            continue
        return rel, seen
    return None, seen


def audited_trajectory(ref: JobRef) -> Path | None:
    """The trajectory file an audit of the job ``ref`` reads (:func:`_pick_trajectory`), None when it has none; the
    ``trajaudit audit`` command uses it so that it reads the file the plugin does. Raises UnusableInput for a
    symlink or special file in its way."""
    rel, _ = _pick_trajectory(ref, ref.dir)
    return None if rel is None else ref.dir / rel


def _prefixes(rel: str) -> list[str]:
    """``a``, ``a/b``, ``a/b/c`` for ``a/b/c``."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def load_job(ref: JobRef, cfg: Settings, *, with_trajectory: bool = True) -> Job:
    """Load a job. ``with_trajectory=False``: result.json, verifier and prompts only (a trial whose trajectory
    is missing or unusable still has a task, an agent, a condition and a reward for skill impact). Every file is
    held to ``cfg.max_events`` (JSON objects and arrays per parse, lines per streamed file), and so is the number
    of events the trajectory loads into: past it the job is unusable input ("too many events")."""
    with events_limit(cfg.max_events):
        job = _load_job(ref, cfg, with_trajectory)
    t = job.trajectory
    if t is not None and len(t.events) > cfg.max_events:
        raise UnusableInput(t.source or ref.dir, f"too many events ({len(t.events)} > limit {cfg.max_events}; "
                                                 "--trajaudit-max-events)")
    return job


def _load_job(ref: JobRef, cfg: Settings, with_trajectory: bool) -> Job:
    base = ref.dir
    budget = Budget(cfg.max_file_bytes, cfg.max_job_bytes)
    job = Job(dir=ref.dir, anchor=ref.anchor, layout=ref.layout)
    job.trial = ref.dir.name if ref.layout not in FILE_LAYOUTS else ref.anchor.name
    if "__" in job.trial:
        job.task = job.trial.rsplit("__", 1)[0]
    if ref.layout not in FILE_LAYOUTS and _optional(job, base, "result.json"):
        _apply_result(job, load_json_object(base, "result.json", budget))
    if job.condition is None:
        job.condition = _condition_from_path(ref)
    if ref.layout not in FILE_LAYOUTS:
        _load_verifier(job, base, budget)
        if _optional(job, base, "prompts.json"):
            job.instruction = _prompt_text(load_json_any(base, "prompts.json", budget), base / "prompts.json")
    claimed = _oracle_claim(job, ref, budget)
    if not with_trajectory:
        job.is_oracle = claimed
        job.config = _config_name(job)
        if ref.layout not in FILE_LAYOUTS and ref.layout != "swe-agent-dir":
            inner = contents(base)
            job.not_audited = [candidates.entry(r, "not read: the job's trajectory is unusable input")
                               for r in dict.fromkeys([*candidates.positions(base, ref.layout), *inner.trajectories])]
            job.nested_runs = [printable(r) for r in inner.nested_runs]
        return job
    rel, seen = _pick_trajectory(ref, base)
    job.trajectory_candidates = seen
    if rel is None and claimed:
        # the oracle is never audited (it counts only through its reward): no trajectory needed. A run record
        # elsewhere in the trial is another matter: an oracle has none, and an agent run filed under the oracle's
        # name would otherwise count as the oracle, unaudited. It is audited nowhere, so the job is unusable.
        stray = contents(base).trajectories
        if stray:
            raise UnusableInput(base / stray[0], "a run record in a trial whose records name the oracle agent, "
                                "outside the places its trajectory is read from: neither an oracle run (which has "
                                "no trajectory) nor auditable as an agent run")
        job.is_oracle = True
        job.trajectory = Trajectory(format="none", source="")
        job.config = "oracle"
        _review(job, ref, None, seen, None, cfg)
        return job
    if rel is None:
        looked = ", ".join(candidates.order(ref.layout)[:4]) + ", ..."
        raise UnusableInput(base, f"no trajectory found (looked for {looked})")
    if ref.member is not None:
        job.trajectory = _load_record(job, ref, budget)
    else:
        job.files_read.append(rel)
        job.trajectory = _read_trajectory(base, rel, budget, cfg.literal)
        _apply_trajectory_facts(job, ref, job.trajectory.meta)
    meta = job.trajectory.meta
    job.model = job.model or str(meta.get("model") or "")
    job.agent = job.agent or str(meta.get("agent") or "")
    if job.condition is None:
        job.condition = _condition_from_init(meta, cfg)
    tools = sum(1 for e in job.trajectory.events if e.is_tool)
    # an oracle runs the reference solution, not an agent: a trajectory with tool calls under the oracle's name is
    # audited like any agent run (P7 says why)
    job.is_oracle = claimed and tools == 0
    job.oracle_tool_calls = tools if claimed else 0
    job.config = _config_name(job)
    _review(job, ref, rel, seen, job.trajectory, cfg)
    attach_task(job, cfg.tasks_dirs)
    if not job.instruction and job.task_info is not None:
        job.instruction = job.task_info.instruction
    if not job.instruction:
        job.instruction = next((e.text for e in job.trajectory.events if e.type == "user_message" and e.text), "")
    return job


def _read_trajectory(base: Path, rel: str, budget: Budget, literal: bool) -> Trajectory:
    """Read and load one trajectory file: streamed line by line when its format allows, else whole.

    Literal mode also needs the whole decoded text (the seeds' regexes scan "the full trajectory string"): a
    streamed file's text is read after its events are built, so the text and the parsed lines are never in memory
    together. The events are the same either way (a streamed file is JSON Lines, which ``parse_text`` reads line by
    line too)."""
    path = base / rel
    log_lines = rel.endswith("claude-code.txt")  # CLI stdout capture: plain-text warnings between JSON lines
    parsed = _streamed(base, rel, budget, log_lines)
    streamed = parsed is not None
    if parsed is None:
        parsed = parse_text(decode_text(read_bytes(base, rel, budget), path), path, log_lines=log_lines)
        if parsed.kind == "text" and rel.lower().endswith((".json", ".jsonl")):
            # a JSON file that is not JSON (a line of text before the stream) is never read as a plain-text
            # transcript, whose tool calls would all be lost: unusable, naming its first line
            first = parsed.text.lstrip().split("\n", 1)[0]
            raise UnusableInput(path, f"named .json/.jsonl but not JSON: it starts with {printable(first[:60])!r}")
    try:
        traj = load_trajectory(parsed, path)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        # hostile shapes (e.g. {"type": [1]}) can trip a format's sniff(): unusable input, never a traceback
        raise UnusableInput(path, f"malformed trajectory: {type(exc).__name__}: {str(exc)[:160]}") from None
    if literal and streamed:
        del parsed
        # already charged to the job's budget by the stream; still held to the per-file limit
        traj.raw_text = decode_text(read_bytes(base, rel, Budget(budget.max_file, budget.max_file)), path)
    return traj


def _review(job: Job, ref: JobRef, rel: str | None, seen: list[str], traj: Trajectory | None, cfg: Settings) -> None:
    """Compare the job's other trajectory files with the audited one (``candidates.review``). A job that is one
    file (a bare file, a record, a SWE-agent instance dir) has no other candidates."""
    if ref.layout in FILE_LAYOUTS or ref.layout == "swe-agent-dir":
        return
    r = candidates.review(ref.dir, rel, seen, traj,
                          lambda base, other, budget: _read_trajectory(base, other, budget, cfg.literal),
                          cfg.max_file_bytes, cfg.max_job_bytes)
    job.compared, job.disagreements, job.not_audited, job.nested_runs = \
        r.compared, r.disagreements, r.not_audited, r.nested_runs


def _oracle_claim(job: Job, ref: JobRef, budget: Budget) -> bool:
    """Whether the trial's own records name the oracle agent: result.json's agent (read above), else config.json's
    ``agent.name`` at the trial root. Never the trajectory's metadata (the agent writes its trajectory) nor a
    folder name. A config.json that cannot be read names no agent."""
    if ref.layout in FILE_LAYOUTS:
        return False
    if job.agent:
        return job.agent.lower() == "oracle"
    if file_kind(ref.dir, "config.json") != "file":
        return False
    try:
        doc = load_json_object(ref.dir, "config.json", budget)
    except UnusableInput:
        return False
    name = _get(doc, "agent", "name") or _get(doc, "config", "agent", "name")
    if not isinstance(name, str) and isinstance(doc.get("agent"), str):
        name = doc["agent"]
    return isinstance(name, str) and name.lower() == "oracle"


def _streamed(base: Path, rel: str, budget: Budget, log_lines: bool) -> Parsed | None:
    """The trajectory as a line stream (``safeio.open_jsonl_stream``) when it is JSON Lines of a format whose loader
    reads ``Parsed.records()`` one line at a time (``STREAMS = True``: ACP, Claude Code): a large trajectory is
    never held whole, as bytes, text or parsed lines. Else None: it is read whole. ``--trajaudit-literal`` always
    reads whole (the seeds' regexes scan the full trajectory string)."""
    parsed = open_jsonl_stream(base, rel, budget.max_file, log_lines=log_lines)
    if parsed is None or not getattr(detect(parsed), "STREAMS", False):
        return None
    budget.charge(base / rel, parsed.stream.size)
    return parsed


def _load_record(job: Job, ref: JobRef, budget: Budget) -> Trajectory:
    """One member of a multi-record file (``loaders/multi.py``) and the job metadata its format records."""
    traj, info = multi.load_record(ref, budget)
    job.files_read.append(ref.anchor.name)
    for key in ("task", "trial", "agent", "model"):
        value = info.get(key)
        if isinstance(value, str) and value:
            setattr(job, key, value)
    _apply_reward(job, info.get("reward"), info.get("reward_source"))
    _apply_reward_note(job, info.get("reward_note"))
    if info.get("exception"):
        job.exception = str(info["exception"])[:500]
    return traj


def _apply_trajectory_facts(job: Job, ref: JobRef, meta: dict[str, Any]) -> None:
    """What a single-file format records about its run when no result.json does (SWE-agent: the instance id, a
    reward only when the file holds one)."""
    task = meta.get("task")
    if ref.layout in (*FILE_LAYOUTS, "swe-agent-dir") and isinstance(task, str) and task \
            and not job.result.get("task_name"):
        job.task = task
    _apply_reward(job, meta.get("reward"), meta.get("reward_source"))
    _apply_reward_note(job, meta.get("reward_note"))


def _apply_reward_note(job: Job, note: Any) -> None:
    """Why a run's scorer gave no usable reward (a letter grade, a category): kept for the evidence of every
    principle that needs the reward, only while no reward is known."""
    if job.verifier.reward is None and isinstance(note, str) and note:
        job.verifier.reward_note = " ".join(note.split())[:300]


def _apply_reward(job: Job, reward: Any, source: Any) -> None:
    """A reward the trajectory file records, unless result.json / reward.txt already gave one."""
    r = _num(reward)
    if r is None or job.verifier.reward is not None:
        return
    src = str(source or "trajectory")
    job.verifier.rewards[src] = r
    job.verifier.reward, job.verifier.reward_source = r, src


def load_json_any(base: Path, rel: str, budget: Budget) -> Any:
    path = base / rel
    parsed = parse_text(decode_text(read_bytes(base, rel, budget), path), path)
    if parsed.kind == "text":
        raise UnusableInput(path, "expected JSON")
    return parsed.value


def _prompt_text(value: Any, path: Path | None = None, depth: int = 0) -> str:
    if isinstance(value, str):
        return value
    if depth >= MAX_NESTING:  # a fixed limit, never a RecursionError that depends on the caller's stack
        raise UnusableInput(path or "prompts.json", f"prompts nested more than {MAX_NESTING} levels deep")
    if isinstance(value, list):
        return "\n\n".join(_prompt_text(v, path, depth + 1) for v in value if v)
    if isinstance(value, dict):
        for k in ("instruction", "prompt", "text", "content", "prompts"):
            if k in value:
                return _prompt_text(value[k], path, depth + 1)
    return ""


def _load_verifier(job: Job, base: Path, budget: Budget) -> None:
    v: Verifier = job.verifier
    if _optional(job, base, "verifier/reward.txt"):
        text = decode_text(read_bytes(base, "verifier/reward.txt", budget), base / "verifier/reward.txt").strip()
        try:
            v.rewards["reward.txt"] = float(text.split()[0])
        except (ValueError, IndexError):
            v.rewards["reward.txt"] = None
    if _optional(job, base, "verifier/ctrf.json"):
        ctrf = load_json_object(base, "verifier/ctrf.json", budget)
        summary = _get(ctrf, "results", "summary")
        if isinstance(summary, dict):
            v.ctrf_summary = {k: summary[k] for k in ("tests", "passed", "failed", "skipped", "pending", "other")
                              if isinstance(summary.get(k), int)}
        tests = _get(ctrf, "results", "tests")
        if isinstance(tests, list):
            for t in tests:
                if isinstance(t, dict) and t.get("status") == "failed":
                    # redacted before the cut: a key the cut would split is never kept in part (redact.py)
                    v.ctrf_failures.append({"name": head_of(str(t.get("name", "")), 200),
                                            "message": head_of(str(t.get("message") or t.get("trace") or ""), 1000)})
                elif isinstance(t, dict) and t.get("status") == "passed" and len(v.passed_tests) < 50:
                    v.passed_tests.append(head_of(str(t.get("name", "")), 200))
    if v.ctrf_summary is not None:
        v.tests_source = "ctrf.json"
    elif _optional(job, base, "verifier/output.json"):
        _harbor_output(v, load_json_any(base, "verifier/output.json", budget))
    if _optional(job, base, "verifier/test-stdout.txt"):
        data = read_bytes(base, "verifier/test-stdout.txt", budget)
        v.stdout_tail = tail_of(data[-(4000 + TAIL_MARGIN):].decode("utf-8", "replace"), 4000)  # redacted, then cut
    for source in ("result.json", "reward.txt"):
        if v.rewards.get(source) is not None:
            v.reward, v.reward_source = v.rewards[source], source
            break


def _harbor_output(v: Verifier, doc: Any) -> None:
    """Harbor's verifier/output.json: {"tests": [{"name", "status": "PASSED" | "FAILED" | ...}]}."""
    tests = doc.get("tests") if isinstance(doc, dict) else None
    if not isinstance(tests, list):
        return
    statuses = [str(t.get("status", "")).lower() for t in tests if isinstance(t, dict)]
    v.ctrf_summary = {"tests": len(statuses), "passed": statuses.count("passed"), "failed": statuses.count("failed"),
                      "skipped": statuses.count("skipped")}
    v.tests_source = "output.json"
    v.passed_tests = [head_of(str(t.get("name", "")), 200) for t in tests
                      if isinstance(t, dict) and str(t.get("status", "")).lower() == "passed"][:50]
    if not v.ctrf_failures:
        v.ctrf_failures = [{"name": str(t.get("name", ""))[:200], "message": str(t.get("message") or "")[:1000]}
                           for t in tests if isinstance(t, dict) and str(t.get("status", "")).lower() == "failed"][:50]


def config_agent(agent: str) -> str:
    """The agent part of a config name, as the seed spells configs (``claude-skills``, ``codex-noskills``): an
    ACP shim's name without its ``-acp`` / ``-agent-acp`` wrapper (``claude-agent-acp`` → ``claude``,
    ``codex-acp`` → ``codex``); other agents keep their name (``claude-code``)."""
    name = (agent or "agent").rsplit("/", 1)[-1].lstrip("@")
    if name.endswith("-acp") and len(name) > 4:
        name = name[:-4]
        if name.endswith("-agent") and len(name) > 6:
            name = name[:-6]
    return name or "agent"


def _config_name(job: Job) -> str:
    agent = config_agent(job.agent or "agent")
    if job.condition == "with-skills":
        return f"{agent}-skills"
    if job.condition == "no-skills":
        return f"{agent}-noskills"
    return agent
