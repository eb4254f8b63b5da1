"""trace-grader's canonical ``traces.json``: several runs (of several tasks), each a job of its own.

A run is ``{run_id, ok, steps: [{step, tool, args, observation, ok}]}`` (``ok`` = the run delivered). The three
shapes the original accepts:

- ``{"tasks": [{"task" | "id": T, "runs": [run, ...]}, ...]}`` (a run's own ``task`` wins);
- ``{"runs": [run, ...]}`` (task = the run's ``task``, else ``"task"``);
- a bare list of runs.

Defaults as in the original: ``step`` = its 1-based position, ``tool`` = ``tool`` or ``tool_name``, ``args``
scavenged from ``file_path, command, path, url, query`` when absent, ``observation`` = "", run ``ok`` = "has
steps and every step ok", ``run_id`` = ``run_id`` or ``id`` or the task. One difference: a step without
``ok`` has an *unknown* outcome here (the original assumes ok; both never count it as a failure).
A top-level single run ``{"steps": [...]}`` is not one of the shapes (the original reads 0 runs from it).

Multi-record interface (``MULTI``): :func:`members` lists stable member ids (the run ids with characters unsafe
in a node id replaced by ``_``, ``#2``, ``#3`` added to repeats), :func:`load_member` gives one run's :class:`Trajectory` and its job metadata. :func:`load` serves
a file holding exactly one run.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..model import Event, Trajectory, UnusableInput
from ..safeio import Parsed, derived
from .common import tool_event
from .spans import Span, Spec, keep, resolve

NAME = "trace-grader-traces"
MULTI = True
# A multi-record file is indexed by its runs' spans (loaders/spans.py): the runs of a bare list, of "runs", of each
# task's "runs"; the index keeps what a run's member id and task need.
SPANS = Spec(paths=((), ("runs",), ("tasks", "*", "runs")), jsonl=False, fields=keep("run_id", "id", "task"))

_ARG_KEYS = ("file_path", "command", "path", "url", "query")
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+=,#-]")
_SNIFF = 50


def _is_step(s: Any) -> bool:
    return isinstance(s, dict) and isinstance(s.get("tool", s.get("tool_name")), str)


def _is_run(r: Any, *, strict: bool) -> bool:
    """A run object: a ``steps`` list of step objects (strict), or at least a run_id/ok with no foreign keys."""
    if not isinstance(r, dict):
        return False
    steps = r.get("steps")
    if isinstance(steps, list):
        return all(_is_step(s) for s in steps[:_SNIFF])
    return not strict and "steps" not in r and ("run_id" in r or "ok" in r)


def _is_task(t: Any) -> bool:
    return isinstance(t, dict) and isinstance(t.get("runs"), list) and \
        all(_is_run(r, strict=False) for r in t["runs"][:_SNIFF])


def sniff(parsed: Parsed) -> bool:
    if parsed.kind != "json":
        return False
    v = parsed.value
    if isinstance(v, dict):  # at least one run with a steps list: an empty {"tasks": []} is anybody's
        if "steps" in v:
            return False
        if "tasks" in v:
            tasks = v["tasks"]
            return isinstance(tasks, list) and all(_is_task(t) for t in tasks[:_SNIFF]) and \
                any(_is_run(r, strict=True) for t in tasks[:_SNIFF] for r in t["runs"][:_SNIFF])
        runs = v.get("runs")
        return isinstance(runs, list) and all(_is_run(r, strict=False) for r in runs[:_SNIFF]) and \
            any(_is_run(r, strict=True) for r in runs[:_SNIFF])
    if isinstance(v, list):
        return bool(v) and all(_is_run(r, strict=True) for r in v[:_SNIFF])
    return False


_HEAD_OBJ = re.compile(r'^\s*\{.*?"(?:tasks|runs)"\s*:\s*\[', re.S)
_HEAD_LIST = re.compile(r'^\s*\[\s*\{')
_HEAD_STEPS = re.compile(r'"steps"\s*:\s*\[')
_HEAD_TOOL = re.compile(r'"tool(?:_name)?"\s*:')


def claims(name: str, head: bytes) -> str | None:
    """At collection, from the first bytes: a traces file (``{"tasks"|"runs": [... "steps": [ ... "tool":``, or a
    list of such runs) is a multi-record container, whatever its name."""
    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "ignore")
    if not (_HEAD_STEPS.search(text) and _HEAD_TOOL.search(text)):
        return None
    if _HEAD_OBJ.match(text) or (_HEAD_LIST.match(text) and ('"run_id"' in text or '"ok"' in text)):
        return "multi"
    return None


def _task_name(value: Any, default: str) -> str:
    if value is None or value == "":
        return default
    return value if isinstance(value, str) else str(value)


def _runs(value: Any, path: str) -> list[tuple[dict[str, Any] | Span, str, str]]:
    """Every run in file order: (run object or its span, task, pointer into the file)."""
    out: list[tuple[dict[str, Any] | Span, str, str]] = []
    if isinstance(value, dict) and "tasks" in value:
        for i, t in enumerate(value["tasks"] or []):
            if not isinstance(t, dict):
                raise UnusableInput(path, f"tasks[{i}] is not an object")
            tid = _task_name(t.get("task") or t.get("id"), "task")
            runs = t.get("runs") or []
            if not isinstance(runs, list):
                raise UnusableInput(path, f"tasks[{i}].runs is not a list")
            for j, r in enumerate(runs):
                if not isinstance(r, dict | Span):
                    raise UnusableInput(path, f"tasks[{i}].runs[{j}] is not an object")
                out.append((r, _task_name(r.get("task"), tid), f"tasks[{i}].runs[{j}]"))
        return out
    raw = value.get("runs") if isinstance(value, dict) else value
    prefix = "runs" if isinstance(value, dict) else ""
    for j, r in enumerate(raw or []):
        if not isinstance(r, dict | Span):
            raise UnusableInput(path, f"{prefix}[{j}] is not an object")
        out.append((r, _task_name(r.get("task"), "task"), f"{prefix}[{j}]"))
    return out


def _run_id(r: dict[str, Any] | Span, task: str) -> str:
    rid = r.get("run_id") or r.get("id") or task
    return rid if isinstance(rid, str) else str(rid)


def member_id(name: str) -> str:
    """A node-id-safe member id: letters, digits and ``._@+=,#-`` kept, anything else ``_`` (at most 200)."""
    return _UNSAFE.sub("_", name)[:200] or "_"


def unique_ids(names: list[str]) -> list[str]:
    """Stable, unique, node-id-safe ids in file order: repeats get ``#2``, ``#3``, ..."""
    out: list[str] = []
    seen: set[str] = set()
    counts: dict[str, int] = {}
    for name in names:
        base = member_id(name)
        counts[base] = counts.get(base, 0) + 1
        mid = base if counts[base] == 1 else f"{base}#{counts[base]}"
        while mid in seen:  # a run literally named "x#2" next to two runs named "x"
            counts[base] += 1
            mid = f"{base}#{counts[base]}"
        seen.add(mid)
        out.append(mid)
    return out


def _indexed(parsed: Parsed, path: str) -> dict[str, tuple[dict[str, Any] | Span, str, str, str]]:
    """member id → (run or its span, task, run_id, pointer); ids are the run ids made node-safe, repeats numbered.
    Built once per parsed file (every record of a file is loaded from the same Parsed)."""

    def build() -> dict[str, tuple[dict[str, Any] | Span, str, str, str]]:
        runs = [(r, task, _run_id(r, task), ptr) for r, task, ptr in _runs(parsed.value, path)]
        return dict(zip(unique_ids([rid for _, _, rid, _ in runs]), runs, strict=True))

    return derived(parsed, "traces.index", build)


def members(parsed: Parsed, path: str) -> list[str]:
    return list(_indexed(parsed, str(path)))


def _status(v: Any) -> str:
    if v is None:
        return "unknown"
    return "ok" if bool(v) else "failed"  # the original's bool(): any truthy value is ok


def load_member(parsed: Parsed, path: str, member: str) -> tuple[Trajectory, dict[str, Any]]:
    path = str(path)
    index = _indexed(parsed, path)
    if member not in index:
        raise UnusableInput(path, f"no run {member!r} in this traces file")
    r, task, rid, ptr = index[member]
    r = resolve(r)  # a run's span is parsed for its load only
    steps = r.get("steps", [])
    if not isinstance(steps, list):
        raise UnusableInput(path, f"{ptr}.steps is not a list")
    events: list[Event] = []
    numbers: list[int] = []
    all_ok = True
    for i, s in enumerate(steps, 1):
        if not isinstance(s, dict):
            raise UnusableInput(path, f"{ptr}.steps[{i - 1}] is not an object")
        args = s.get("args")
        if args is None:
            args = {k: v for k, v in s.items() if k in _ARG_KEYS}
        n = s.get("step", i)
        if isinstance(n, bool) or not isinstance(n, int):
            try:
                n = int(n)
            except (TypeError, ValueError):
                raise UnusableInput(path, f"{ptr}.steps[{i - 1}].step is not an integer: {n!r}") from None
        name = s.get("tool") or s.get("tool_name") or ""
        status = _status(s.get("ok"))
        all_ok = all_ok and status != "failed"
        obs = s.get("observation")
        events.append(tool_event(len(events), name if isinstance(name, str) else str(name), args or {},
                                 output="" if obs is None else (obs if isinstance(obs, str) else str(obs)),
                                 status=status, raw=f"{ptr}.steps[{i - 1}]"))
        numbers.append(n)
    ok = r.get("ok")
    derived = ok is None
    delivered = (bool(steps) and all_ok) if derived else bool(ok)
    source = "traces.json run ok" + (" (derived: every step ok)" if derived else "")
    agent = r.get("agent") if isinstance(r.get("agent"), str) else ""
    model = r.get("model") if isinstance(r.get("model"), str) else ""
    meta = {"task": task, "run_id": rid, "member": member, "pointer": ptr, "step_numbers": numbers,
            "delivered": delivered, "delivered_source": source}
    if agent:
        meta["agent"] = agent
    if model:
        meta["model"] = model
    traj = Trajectory(format=NAME, source=path, events=events, meta=meta,
                      raw_text=orjson.dumps(r, option=orjson.OPT_NON_STR_KEYS).decode())
    job_meta = {"task": task, "trial": rid, "agent": agent, "model": model,
                "reward": 1.0 if delivered else 0.0, "reward_source": source, "exception": None}
    return traj, job_meta


def only_member(ids: list[str], path: str, what: str, unit: str) -> str:
    """The single member of a multi-record file loaded as one job (given directly as a bare file): ``what`` names
    the file ("traces file"), ``unit`` its records ("run"). None or several → unusable input, one line."""
    if not ids:
        raise UnusableInput(path, f"{what} holds no {unit}s")
    if len(ids) > 1:
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise UnusableInput(path, f"{what} holds {len(ids)} {unit}s ({shown}): each {unit} is a job of its own, "
                                  "which needs the multi-record loader")
    return ids[0]


def load(parsed: Parsed, path: str) -> Trajectory:
    """A traces file holding exactly one run (a file of several runs is read through :func:`load_member`)."""
    traj, _ = load_member(parsed, path, only_member(members(parsed, path), path, "traces file", "run"))
    return traj


__all__ = ["NAME", "MULTI", "sniff", "claims", "members", "load_member", "load"]
