"""Write small Harbor-layout task directories for tests (instruction.md, task.toml, tests/, solution/, environment/)
and load BenchFlow jobs against them the way the plugin does (``load_job`` with ``Settings(tasks_dirs=...)``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_trajaudit.discover.jobs import classify
from pytest_trajaudit.loaders.job import load_job
from pytest_trajaudit.model import Job
from pytest_trajaudit.settings import Settings
from tests.jobfactory import make_job

# Three solution lines, each well over the 40-character privileged-line minimum.
SOLUTION_LINES = (
    "rows = list(csv.DictReader(open('/root/aborts.tsv'), delimiter='\\t'))",
    "unnecessary = sorted({int(r['txn']) for r in rows if int(r['commit_ts']) < int(r['current_wts'])})",
    "json.dump(unnecessary, open('/root/out.json', 'w'), separators=(',', ':'))",
)
SOLVE_SH = "#!/bin/bash\npython3 - <<'EOF'\nimport csv, json\n" + "\n".join(SOLUTION_LINES) + "\nEOF\n"

# A verifier that wants exactly the JSON text "[1, 2, 3]" (the seed's unfair_test example).
TIGHT_CHECK = (
    "import json, sys\n"
    "expected = json.dumps([1, 2, 3])\n"
    "got = open(sys.argv[1], encoding='utf-8').read().strip()\n"
    "sys.exit(0 if got == expected else 1)\n"
)
# A verifier that parses the JSON and compares the values (fair: no perturbation changes its verdict).
FAIR_CHECK = (
    "import json, sys\n"
    "got = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "sys.exit(0 if got == [1, 2, 3] else 1)\n"
)
P12_PYTHON = {"output": "/root/out.json", "command": ["{python}", "{tests_dir}/check.py", "{output}"], "timeout": 10}


def toml_text(table: dict[str, Any], prefix: str = "") -> str:
    """A tiny TOML writer for the shapes tests use (scalars, lists of scalars, nested tables)."""
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in table.items() if isinstance(v, dict)}
    out = []
    if prefix and scalars:
        out.append(f"[{prefix}]")
    for k, v in scalars.items():
        out.append(f"{k} = {json.dumps(v)}")
    if scalars:
        out.append("")
    for k, v in tables.items():
        out.append(toml_text(v, f"{prefix}.{k}" if prefix else k))
    return "\n".join(out)


def make_task(root: str | Path, name: str = "demo", *, instruction: str = "Write the answer to /root/out.json.\n",
              toml: dict[str, Any] | str | None = None, tests: dict[str, str | bytes] | None = None,
              solution: dict[str, str | bytes] | None = None, environment: dict[str, str | bytes] | None = None,
              extra: dict[str, str | bytes] | None = None) -> Path:
    """Create ``root/name`` as a task directory and return its path. ``toml``: a dict (written as TOML, with
    ``[task] name`` defaulting to ``name``) or the raw text. ``tests``/``solution``/``environment``/``extra``: files
    by path relative to that folder (``extra``: relative to the task dir)."""
    d = Path(root) / name
    d.mkdir(parents=True, exist_ok=True)
    if instruction is not None:
        (d / "instruction.md").write_text(instruction, encoding="utf-8")
    if toml is None:
        toml = {}
    if isinstance(toml, dict):
        toml = toml_text({"task": {"name": name}, **toml})
    (d / "task.toml").write_text(toml, encoding="utf-8")
    for top, files in (("tests", tests), ("solution", solution), ("environment", environment), ("", extra)):
        for rel, content in (files or {}).items():
            p = d / top / rel if top else d / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content, encoding="utf-8")
    return d


def result_doc(task: str = "demo", *, reward: float | None = 0.0, trial: str = "demo__1", **more: Any) -> dict:
    doc: dict[str, Any] = {"task_name": task, "rollout_name": trial, "n_tool_calls": 1, **more}
    if reward is not None:
        doc["rewards"] = {"reward": reward}
    return doc


def ctrf(passed: int, failed: int, failures: list[tuple[str, str]] = ()) -> str:
    tests = [{"name": f"test_ok_{i}", "status": "passed"} for i in range(passed)]
    tests += [{"name": n, "status": "failed", "message": m} for n, m in failures]
    tests += [{"name": f"test_bad_{i}", "status": "failed", "message": "assert 1 == 2"}
              for i in range(failed - len(failures))]
    return json.dumps({"results": {"tool": {"name": "pytest"}, "summary": {
        "tests": passed + failed, "passed": passed, "failed": failed, "skipped": 0, "pending": 0, "other": 0},
        "tests": tests}})


def load(job_root: str | Path, name: str = "demo__1", *, lines: list[Any] | None = None,
         result: dict[str, Any] | None = None, files: dict[str, str | bytes] | None = None,
         tasks: tuple[Path, ...] = (), cfg: Settings | None = None) -> Job:
    """Write a BenchFlow job ``job_root/name`` and load it with ``--trajaudit-tasks`` = ``tasks``."""
    path = make_job(job_root, name, lines, result if result is not None else result_doc(trial=name), files)
    ref = classify(path)
    assert ref is not None
    if cfg is None:
        cfg = Settings(tasks_dirs=tuple(tasks))
    return load_job(ref, cfg)
