"""Determinism: the same tree gives byte-identical reports (``summary.json``, every per-job audit JSON,
``report.md``) and the same verdict section across reruns, ``-n 0`` / ``-n 2`` / ``-n 2 --dist load`` (a job's items
split over workers: reports arrive interleaved) and ``--trajaudit-shard`` + ``trajaudit merge``.

The tree mixes the examples (with their task), clean, cheating and failing jobs, unusable input, a multi-record
file and names that need escaping. ``SOURCE_DATE_EPOCH`` pins report.md's date (the only clock in the reports).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_trajaudit.report import merge as merge_mod
from tests.jobfactory import make_job

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BASE = ("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-tasks=tasks")

CHEAT = [{"type": "user_message", "text": "do x"},
         {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": "Read /oracle/expected_answer.json",
          "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "42"}}]},
         {"type": "agent_message", "text": "Actually, I'm not sure this is right. Submitting what I have."}]
STRUGGLE = [{"type": "user_message", "text": "do x"}] + [
    {"type": "tool_call", "tool_call_id": f"t{i}", "kind": "edit", "title": "Write /root/solve.py",
     "status": "completed", "content": [{"type": "diff", "path": "/root/solve.py", "newText": f"v{i}"}]}
    for i in range(3)] + [{"type": "agent_message", "text": "wait, that approach won't work"}]


def build_tree(root: Path) -> None:
    shutil.copytree(EXAMPLES / "runs", root / "runs")
    shutil.copytree(EXAMPLES / "tasks", root / "tasks")
    runs = root / "runs" / "mixed"
    for i in range(12):
        res = {"task_name": f"task{i % 3}", "rollout_name": f"task{i % 3}__{i}", "rewards": {"reward": [1.0, 0.0, 0.5][i % 3]},
               "n_tool_calls": 1, "skill_mode": ["with-skills", "no-skills"][i % 2], "agent": "claude-agent-acp",
               "model": "m"}
        lines = [CHEAT, STRUGGLE, None, "[" * 3000, None, CHEAT][i % 6]
        make_job(runs, f"task{i % 3}__{i}", lines=lines, result=res)
    make_job(runs, "odd\nname\x1b[2K", result={"task_name": "task0", "rewards": {"reward": 1.0}, "n_tool_calls": 1})
    records = [{"instance_id": f"inst-{k}", "instruction": "fix", "history": [
        {"id": 1, "source": "agent", "action": "run", "args": {"command": "cat /oracle/solve.sh"}, "message": ""},
        {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": "echo 42", "extras": {}}],
        "test_result": {"resolved": k % 2 == 0}, "metadata": {"agent_class": "CodeActAgent"}} for k in range(3)]
    (root / "runs" / "oh").mkdir(parents=True)
    (root / "runs" / "oh" / "output.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def files(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def verdict_section(result: pytest.RunResult) -> list[str]:
    lines = result.outlines
    start = next(i for i, ln in enumerate(lines) if "trajaudit verdicts" in ln)
    out = []
    for ln in lines[start + 1:]:
        if ln.startswith("=") or ln.startswith("reports:"):
            break
        out.append(ln)
    return out


def test_reports_are_byte_identical_across_reruns_workers_and_shards(pytester: pytest.Pytester,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    build_tree(pytester.path)
    runs = {
        "serial": ("in", ()),
        "serial-again": ("in", ()),
        # -n 2 with --dist load: a job's items are split over both workers and its reports arrive interleaved with
        # other jobs' (the default loadscope keeps a job on one worker: a weaker test of the same transport)
        "xdist-split-jobs": ("sub", ("-n", "2", "--dist", "load")),
    }
    outputs: dict[str, dict[str, bytes]] = {}
    sections: dict[str, list[str]] = {}
    outcomes: dict[str, dict[str, int]] = {}
    for name, (how, extra) in runs.items():
        args = (*BASE, f"--trajaudit-report=out-{name}", *extra)
        r = pytester.runpytest(*args) if how == "in" else pytester.runpytest_subprocess(*args, timeout=120)
        assert r.ret == 1, r.stdout.str()
        outputs[name] = files(pytester.path / f"out-{name}")
        sections[name] = verdict_section(r)
        outcomes[name] = {k: v for k, v in r.parseoutcomes().items() if k not in ("warnings", "warning")}
    shard_dirs = []
    for i in (1, 2):
        r = pytester.runpytest(*BASE, f"--trajaudit-shard={i}/2", f"--trajaudit-report=shard-{i}")
        assert r.ret in (0, 1)
        shard_dirs.append(str(pytester.path / f"shard-{i}"))
    merge_mod.main([str(pytester.path / "out-merged"), *shard_dirs])
    outputs["merged-shards"] = files(pytester.path / "out-merged")

    ref = outputs["serial"]
    summary = json.loads(ref["summary.json"])
    assert summary["n_jobs"] >= 20 and summary["verdicts"]["INVALID"] >= 4 and summary["verdicts"]["ERROR"] >= 2
    assert any(j["job"].rsplit("/", 1)[-1] == "odd\\nname\\x1b[2K" for j in summary["jobs"])
    assert "report.md" in ref and sum(1 for k in ref if k.startswith("jobs/")) == summary["n_jobs"]
    for name, out in outputs.items():
        assert out.keys() == ref.keys(), name
        for f in ref:
            assert out[f] == ref[f], (name, f)
    for name in runs:
        assert outcomes[name] == outcomes["serial"], name
        assert sections[name] == sections["serial"], name
    assert any(ln.startswith("INVALID") for ln in sections["serial"])


def test_report_date_is_pinned_by_source_date_epoch(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    make_job(pytester.path / "runs", "j")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=out")
    assert "Date: 1970-01-02 " in (pytester.path / "out" / "report.md").read_text()
