"""The original trace-grader's report (the seed's RULES.md D), built from the plugin's per-run trace-grader blocks
(``report.audit.trace_grader_block``): per run ``{task, run_id, delivered, step_count, flags, corrupt_success,
verdict}``, ``pass_k: {task: {k, n_success, n_fail, pass_hat_k}}`` with ``pass_hat_k`` a bool,
``summary: {n_runs, n_tasks, verdicts, tasks_repeatable, tasks_flaky, judge_axis}``, the text report, and the
exit code (3 when a run is a corrupt success or a task is flaky, else 0).

As in the original, runs are grouped by task name alone, k is the task's number of runs and ``pass_hat_k`` is
"every run delivered"; ``tasks_flaky`` counts the tasks that fall short, a task whose only run failed included.
A run whose delivery is unknown (no reward and no loader signal, e.g. a Claude Code session) counts as delivered,
as its verdict does (the original forces a transcript's ``run.ok`` to true). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..aggregate.verdicts import TRACE_VERDICTS

RUN_KEYS = ("task", "run_id", "delivered", "step_count", "flags", "corrupt_success", "verdict")
FLAG_KEYS = ("check", "severity", "step", "tool", "detail")
MARK = {"clean-pass": "PASS", "pass-with-warnings": "WARN", "corrupt-success": "CORRUPT", "fail": "FAIL"}
EXIT_FLAGGED = 3
JUDGE_DISABLED = "disabled (adapter, verified:false)"  # the original's judge line unless verified and enabled


def pass_k(runs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """task → ``{k, n_success, n_fail, pass_hat_k}`` in order of the tasks' first runs."""
    out: dict[str, dict[str, Any]] = {}
    for r in runs:
        e = out.setdefault(str(r["task"]), {"k": 0, "n_success": 0, "n_fail": 0, "pass_hat_k": False})
        e["k"] += 1
        if r["delivered"] is False:
            e["n_fail"] += 1
        else:
            e["n_success"] += 1
    for e in out.values():
        e["pass_hat_k"] = e["k"] > 0 and e["n_success"] == e["k"]
    return out


def summary(runs: Sequence[Mapping[str, Any]], tasks: Mapping[str, Mapping[str, Any]], judge_axis: str) -> dict[str, Any]:
    verdicts = dict.fromkeys(TRACE_VERDICTS, 0)
    for r in runs:
        verdicts[r["verdict"]] += 1
    repeatable = sum(1 for e in tasks.values() if e["pass_hat_k"])
    return {"n_runs": len(runs), "n_tasks": len(tasks), "verdicts": verdicts, "tasks_repeatable": repeatable,
            "tasks_flaky": len(tasks) - repeatable, "judge_axis": judge_axis}


def report(blocks: Iterable[Mapping[str, Any]], judge_axis: str) -> dict[str, Any]:
    """The original's ``--json`` report from trace-grader blocks, in run order."""
    runs = [{**{k: b[k] for k in RUN_KEYS}, "flags": [{k: f.get(k) for k in FLAG_KEYS} for f in b["flags"]]}
            for b in blocks]
    tasks = pass_k(runs)
    return {"runs": runs, "pass_k": tasks, "summary": summary(runs, tasks, judge_axis)}


def exit_code(summary_block: Mapping[str, Any]) -> int:
    """The original's exit: 3 if any run is a corrupt success or any task is flaky, else 0 (warnings alone and
    empty input give 0)."""
    flagged = summary_block["verdicts"].get("corrupt-success", 0) > 0 or summary_block["tasks_flaky"] > 0
    return EXIT_FLAGGED if flagged else 0


def text(rep: Mapping[str, Any]) -> list[str]:
    """The original's text report, line for line."""
    bar = "─" * 60
    out = ["TraceGrader report", bar]
    for r in rep["runs"]:
        out.append(f"[{MARK[r['verdict']]:7}] {r['task']} / {r['run_id']}  "
                   f"(delivered={r['delivered']}, steps={r['step_count']}, flags={len(r['flags'])})")
        out += [f"            - {f['severity']:6} {f['check']}: {f['detail']}" for f in r["flags"]]
    out += [bar, "pass^k (repeatability — ALL k runs must deliver):"]
    for task, e in rep["pass_k"].items():
        out.append(f"    {task}: pass^{e['k']} = {'pass' if e['pass_hat_k'] else 'FAIL'}  "
                   f"({e['n_success']}/{e['k']} runs delivered)")
    s, v = rep["summary"], rep["summary"]["verdicts"]
    out += [bar, f"summary: runs={s['n_runs']} tasks={s['n_tasks']} | clean={v['clean-pass']} "
                 f"warn={v['pass-with-warnings']} corrupt={v['corrupt-success']} fail={v['fail']} | "
                 f"repeatable={s['tasks_repeatable']} flaky={s['tasks_flaky']}",
            f"agent-as-judge axis: {s['judge_axis']}"]
    return out


def summary_block(blocks: Sequence[Mapping[str, Any]], judge_axis: str) -> dict[str, Any] | None:
    """summary.json's ``trace_grader``: the original's ``pass_k`` and ``summary`` and its exit code over the jobs
    a trace-grader item judged (each job one run; its per-run block is in ``jobs[].trace_grader``); None when no
    job was judged."""
    if not blocks:
        return None
    rep = report(blocks, judge_axis)
    return {"pass_k": rep["pass_k"], "summary": rep["summary"], "exit_code": exit_code(rep["summary"])}
