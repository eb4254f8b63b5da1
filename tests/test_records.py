"""The TypedDicts of ``records.py`` describe the dict records the pipeline really builds: a job's meta, a task
group's compact record, the roll-up's per-job state and summary.json carry exactly the keys declared (every
required key, nothing undeclared), on the bundled examples (with their task directories, so the task card is
there too) and on an unusable job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.aggregate.groups import compact
from pytest_trajaudit.discover.jobs import find_jobs
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.records import (
    GroupRecord,
    JobMeta,
    PrVerdict,
    RollupJob,
    SkillQuote,
    Summary,
    SummaryJob,
    TaskMeta,
)
from pytest_trajaudit.settings import Settings

from .jobfactory import make_job

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def declared(td: Any) -> tuple[frozenset[str], frozenset[str]]:
    """(required keys, every declared key) of a TypedDict."""
    return td.__required_keys__, td.__required_keys__ | td.__optional_keys__


def assert_shape(td: Any, value: dict[str, Any], what: str) -> None:
    required, allowed = declared(td)
    assert required <= value.keys(), f"{what}: missing {sorted(required - value.keys())}"
    assert value.keys() <= allowed, f"{what}: undeclared {sorted(value.keys() - allowed)}"


def test_examples_meta_and_group_records_match_their_typeddicts() -> None:
    cfg = Settings(tasks_dirs=(EXAMPLES / "tasks",), timeline=True)
    reg = registry()
    refs = find_jobs(EXAMPLES / "runs")
    assert len(refs) >= 4
    seen_task_card = False
    for ref in refs:
        audit = audit_job(ref, cfg, list(reg.values()), judges=False)
        meta = dict(audit.meta)
        assert_shape(JobMeta, meta, f"{ref.dir.name} meta")
        assert {"task", "trial", "layout", "oracle", "n_events", "task_dir"} <= meta.keys()
        if "task_meta" in meta:
            seen_task_card = True
            assert_shape(TaskMeta, dict(meta["task_meta"]), f"{ref.dir.name} task_meta")
        rec = dict(compact(ref.dir.name, audit, reg))
        assert_shape(GroupRecord, rec, f"{ref.dir.name} group record")
        assert list(rec) == list(GroupRecord.__annotations__)  # the key order the JSON files are written in
        if rec["skill_quote"] is not None:
            assert_shape(SkillQuote, rec["skill_quote"], f"{ref.dir.name} skill quote")
    assert seen_task_card, "no example job found its task directory"


def test_unusable_job_meta_is_a_job_meta(tmp_path: Path) -> None:
    make_job(tmp_path, "broken__1", lines="{not json at all\n")
    (ref,) = find_jobs(tmp_path)
    audit = audit_job(ref, Settings(), list(registry().values()), judges=False)
    assert audit.error
    assert_shape(JobMeta, dict(audit.meta), "unusable job's meta")


def test_summary_and_rollup_state_match_their_typeddicts(pytester: pytest.Pytester) -> None:
    out = pytester.path / "out"
    pytester.runpytest(f"--trajaudit={EXAMPLES / 'runs'}", f"--trajaudit-tasks={EXAMPLES / 'tasks'}",
                       f"--trajaudit-report={out}", "-p", "no:cacheprovider")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert_shape(Summary, summary, "summary.json")
    assert_shape(PrVerdict, summary["pr_verdict"], "pr_verdict")
    assert summary["jobs"]
    for entry in summary["jobs"]:
        assert_shape(SummaryJob, entry, f"{entry['job']} job entry")
        assert list(entry) == list(SummaryJob.__annotations__)  # summary.json's key order
        # a job entry's detail is the roll-up's state of the job without its load count (report/summary.py)
        state = {**entry["detail"], "loads": entry["loads"]}
        assert_shape(RollupJob, state, f"{entry['job']} roll-up state")
        assert_shape(JobMeta, state["meta"], f"{entry['job']} meta in summary.json")
