"""Builders for advisor-audit tests: task directories with privileged material, Harbor-style attempt directories,
ATIF-like trajectories, the ``trajaudit`` command in a subprocess, and running a function as an unprivileged user
(permission tests: root reads everything, so as root the function runs in a forked child that dropped to nobody)."""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from tests.taskfactory import SOLUTION_LINES

INSTRUCTION = "Write the unnecessary aborts to /root/out.json. Hidden tests will check the output format.\n"
TEST_LINE = "assert json.load(open('/root/out.json')) == sorted(expected_unnecessary_ids)"
README_LINE = "The intended fix is to compare commit_ts against current_wts for each txn row."


def make_task(root: Path, name: str = "demo", *, readme: str | None = README_LINE + "\n",
              solution: dict[str, str | bytes] | None = None, tests: dict[str, str | bytes] | None = None,
              instruction: str = INSTRUCTION, extra: dict[str, str | bytes] | None = None) -> Path:
    """A task dir: instruction.md (public), README.md, solution/solve.sh (the three SOLUTION_LINES), tests/."""
    d = root / name
    files: dict[str, str | bytes] = {"instruction.md": instruction}
    if readme is not None:
        files["README.md"] = readme
    for rel, c in (solution if solution is not None else {"solve.sh": "#!/bin/bash\n" + "\n".join(SOLUTION_LINES)
                                                        + "\n"}).items():
        files[f"solution/{rel}"] = c
    for rel, c in (tests if tests is not None else {"test_outputs.py": "import json\n" + TEST_LINE + "\n"}).items():
        files[f"tests/{rel}"] = c
    files.update(extra or {})
    for rel, c in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(c, bytes):
            p.write_bytes(c)
        else:
            p.write_text(c, encoding="utf-8")
    return d


def atif(*agent_messages: str, user_text: str = INSTRUCTION, calls: list[dict[str, Any]] | None = None) -> dict:
    """A small Harbor ATIF-like trajectory: the user's task, then agent steps (one per message)."""
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": user_text}]
    for i, m in enumerate(agent_messages, 2):
        steps.append({"step_id": i, "source": "agent", "message": m})
    if calls:
        steps.append({"step_id": len(steps) + 1, "source": "agent", "message": "running",
                      "tool_calls": calls})
    return {"schema_version": "ATIF-v1.2", "session_id": "s1", "agent": {"name": "claude-code"}, "steps": steps}


CLEAN = atif("I will read the data first.", "I computed the ids and wrote them to /root/out.json.")


def make_attempt(root: Path, name: str = "attempt-1", *, trajectory: Any = CLEAN, rel: str = "agent/trajectory.json",
                 reward: float | None = 1.0, reward_txt: str | None = None,
                 files: dict[str, str | bytes] | None = None) -> Path:
    """An attempt dir: the trajectory at ``rel`` (a dict/list is JSON-encoded, str/bytes written as given),
    result.json with ``verifier_result.rewards.reward`` (None: no result.json), optional verifier/reward.txt."""
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    out: dict[str, str | bytes] = dict(files or {})
    if trajectory is not None:
        out[rel] = trajectory if isinstance(trajectory, str | bytes) else json.dumps(trajectory)
    if reward is not None:
        out["result.json"] = json.dumps({"trial_name": name, "verifier_result": {"rewards": {"reward": reward}}})
    if reward_txt is not None:
        out["verifier/reward.txt"] = reward_txt
    for r, c in out.items():
        p = d / r
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(c, bytes):
            p.write_bytes(c)
        else:
            p.write_text(c, encoding="utf-8")
    return d


def cli(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``trajaudit ARGS`` in a subprocess (the console script's module), judge variables cleared unless given."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGE_", "ADVISOR_"))}
    return subprocess.run([sys.executable, "-m", "pytest_trajaudit.cli.main", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**base, **(env or {})}, timeout=300)


def audit_json(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout)


def unprivileged(fn: Callable[[], Any]) -> Any:
    """``fn()`` as a user without root's permission override: directly when not root, else in a forked child that
    dropped to nobody (every module it needs must already be imported: it cannot read /root). Returns what ``fn``
    returns; an exception in the child is re-raised here as RuntimeError with its repr."""
    if os.geteuid() != 0:
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            result: Any = ("ok", fn())
        except BaseException as exc:
            result = ("err", repr(exc))
        with os.fdopen(w, "wb") as fh:
            fh.write(pickle.dumps(result))
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data)
    if kind == "err":
        raise RuntimeError(value)
    return value


def cli_inprocess(*args: str | Path) -> tuple[int, str, str]:
    """``trajaudit ARGS`` in this process (for :func:`unprivileged`): (exit code, stdout, stderr)."""
    from pytest_trajaudit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()
