"""trace-grader inputs: canonical ``traces.json`` (three shapes, multi-record) and hooklib audit logs.

The multi-record plumbing (``discovery.JobRef.member``, one job per member in ``nodes.py``) is built
separately; these tests call the modules' interface (``MULTI``, ``members``, ``load_member``) directly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_trajaudit.loaders import hooklib, traces
from pytest_trajaudit.loaders.sniff import detect, load_trajectory
from pytest_trajaudit.model import EDIT, READ, TOOL, UnusableInput
from pytest_trajaudit.safeio import decode_text, parse_text

STEPS = [{"step": 1, "tool": "read", "args": {"path": "a.py"}, "observation": "ok", "ok": True},
         {"step": 2, "tool": "edit", "args": {"path": "a.py"}, "observation": "applied", "ok": False}]


def parsed(doc, name: str = "traces.json"):
    text = doc if isinstance(doc, str) else json.dumps(doc)
    return parse_text(text, name)


def jl(*lines: dict) -> str:
    return "\n".join(json.dumps(x) for x in lines) + "\n"


# ================================================================================================ traces.json

SHAPES = {
    "tasks": {"tasks": [{"task": "T1", "runs": [{"run_id": "r1", "ok": True, "steps": STEPS}]},
                        {"id": "T2", "runs": [{"run_id": "r2", "ok": False, "steps": STEPS[:1]},
                                              {"run_id": "r3", "task": "T2b", "steps": STEPS}]}]},
    "runs": {"runs": [{"run_id": "r1", "task": "T1", "ok": True, "steps": STEPS},
                      {"run_id": "r2", "task": "T2", "ok": False, "steps": STEPS[:1]},
                      {"run_id": "r3", "task": "T2b", "steps": STEPS}]},
    "list": [{"run_id": "r1", "task": "T1", "ok": True, "steps": STEPS},
             {"run_id": "r2", "task": "T2", "ok": False, "steps": STEPS[:1]},
             {"run_id": "r3", "task": "T2b", "steps": STEPS}],
}


@pytest.mark.parametrize("shape", SHAPES)
def test_three_shapes_give_the_same_members_and_jobs(shape):
    p = parsed(SHAPES[shape])
    assert detect(p) is traces
    assert traces.MULTI is True
    assert traces.members(p, "traces.json") == ["r1", "r2", "r3"]
    jobs = {m: traces.load_member(p, "traces.json", m) for m in ("r1", "r2", "r3")}
    assert {m: (meta["task"], meta["trial"], meta["reward"]) for m, (_, meta) in jobs.items()} == {
        "r1": ("T1", "r1", 1.0), "r2": ("T2", "r2", 0.0),
        # no run ok: derived from the steps (r3 has a failed step), as the original does
        "r3": ("T2b", "r3", 0.0)}
    traj, meta = jobs["r1"]
    assert set(meta) == {"task", "trial", "agent", "model", "reward", "reward_source", "exception"}
    assert traj.format == "trace-grader-traces"
    assert [(e.type, e.tool, e.kind, e.status, e.paths, e.output) for e in traj.events] == [
        (TOOL, "read", READ, "ok", ("a.py",), "ok"), (TOOL, "edit", EDIT, "failed", ("a.py",), "applied")]
    assert traj.meta["step_numbers"] == [1, 2]
    assert traj.meta["delivered"] is True


def test_step_defaults_follow_the_original():
    doc = {"runs": [{"id": "x", "steps": [
        {"tool_name": "Bash", "command": "ls", "query": "q", "other": 1},  # args scavenged, tool_name
        {"tool": "Read", "file_path": "/a", "step": 7, "ok": True},
        {"tool": "Edit", "args": {"file_path": "/a"}}]}]}
    traj, meta = traces.load_member(parsed(doc), "t.json", "x")
    e0, e1, e2 = traj.events
    assert (e0.tool, e0.command, json.loads(e0.args)) == ("Bash", "ls", {"command": "ls", "query": "q"})
    assert e1.paths == ("/a",)
    assert traj.meta["step_numbers"] == [1, 7, 3]  # step = its 1-based index unless given
    assert e0.status == "unknown" and e0.output == ""  # no ok: unknown (the original assumes ok)
    assert meta["task"] == "task" and meta["reward"] == 1.0  # no failed step: delivered (derived)


def test_run_id_falls_back_to_the_task_and_repeats_get_stable_suffixes():
    doc = {"runs": [{"task": "T", "steps": []}, {"task": "T", "steps": []}, {"run_id": "T#2", "steps": []}]}
    p = parsed(doc)
    assert traces.members(p, "t.json") == ["T", "T#2", "T#2#2"]
    assert traces.members(p, "t.json") == traces.members(parsed(doc), "t.json")  # stable
    _, meta = traces.load_member(p, "t.json", "T#2")
    assert meta["trial"] == "T" and meta["reward"] == 0.0  # no steps: not delivered


def test_single_run_file_loads_like_any_trajectory_and_several_runs_need_members():
    one = parsed({"runs": [{"run_id": "r", "ok": True, "steps": STEPS}]})
    assert len(load_trajectory(one, "t.json").events) == 2
    with pytest.raises(UnusableInput, match="holds 3 runs .*each run is a job of its own"):
        load_trajectory(parsed(SHAPES["runs"]), "t.json")
    with pytest.raises(UnusableInput, match="holds no runs"):
        traces.load(parsed({"runs": []}), "t.json")


@pytest.mark.parametrize("doc", [
    {"steps": STEPS},  # a lone run object: the original reads 0 runs from it; not this format
    [{"role": "user", "content": "hi"}],  # a chat list
    {"runs": [{"name": "x"}]},  # no run shape
    {"tasks": [{"task": "T"}]},  # a task without runs
    {"tasks": [], "job_name": "x"},  # Harbor's config.json: no run at all
    {"runs": []},
    [1, 2, 3],
])
def test_sniff_refuses_other_shapes(doc):
    assert not traces.sniff(parsed(doc))


def test_malformed_runs_are_unusable_input_naming_the_place():
    bad = {"tasks": [{"task": "T", "runs": [{"run_id": "r", "steps": [{"tool": "x", "step": "three"}]}]}]}
    with pytest.raises(UnusableInput, match=r"tasks\[0\]\.runs\[0\]\.steps\[0\]\.step is not an integer"):
        traces.load_member(parsed(bad), "t.json", "r")
    with pytest.raises(UnusableInput, match="no run 'nope'"):
        traces.load_member(parsed(SHAPES["list"]), "t.json", "nope")


def test_original_fixtures_file(corpus: Path):
    """The trace-grader corpus file: 5 runs of 3 tasks, run verdict inputs as the original reads them."""
    path = corpus / "trace-grader" / "harness" / "tests" / "trace-grader.fixtures.json"
    p = parse_text(decode_text(path.read_bytes(), path), path)
    assert detect(p) is traces
    ids = traces.members(p, str(path))
    assert ids == ["T1-clean-r1", "T2-corrupt-r1", "T3-flaky-r1", "T3-flaky-r2", "T3-flaky-r3"]
    got = {}
    for m in ids:
        traj, meta = traces.load_member(p, str(path), m)
        got[m] = (meta["task"], meta["reward"], len(traj.events), [e.status for e in traj.events].count("failed"))
    assert got == {"T1-clean-r1": ("T1-clean", 1.0, 3, 0), "T2-corrupt-r1": ("T2-corrupt", 1.0, 5, 3),
                   "T3-flaky-r1": ("T3-flaky", 1.0, 2, 0), "T3-flaky-r2": ("T3-flaky", 1.0, 2, 0),
                   "T3-flaky-r3": ("T3-flaky", 0.0, 3, 1)}


def test_corpus_config_is_not_a_trajectory(corpus: Path):
    path = corpus / "trace-grader" / "harness" / "trace-grader.config.yaml"
    p = parse_text(decode_text(path.read_bytes(), path), path)
    assert not traces.sniff(p) and not hooklib.sniff(p)


# ================================================================================================ hooklib


def hk(event: str, tool: str | None = None, sid: str | None = "S1", **kw) -> dict:
    d = {"ts": "2026-06-28T10:00:00", "event": event, "session_id": sid, "tool_name": tool, **kw}
    return {k: v for k, v in d.items() if v is not None}


def test_hooklib_pre_post_pairs_are_one_call_and_sessions_are_members():
    log = jl(hk("SessionStart"),
             hk("PreToolUse", "Edit", file_path="/a.py"),
             hk("PostToolUse", "Edit", file_path="/a.py"),
             hk("PreToolUse", "Bash", command="ls"),  # blocked or failed: no PostToolUse
             hk("PreToolUse", "Read", sid="S2", file_path="/b"),
             hk("PostToolUse", "Read", sid="S2", file_path="/b"),
             hk("PostToolUse", "Write", file_path="/c"),  # Post only (no Pre hook for Write)
             hk("Stop"))
    p = parsed(log, "2026-06-28.jsonl")
    assert detect(p) is hooklib
    assert hooklib.members(p, "x.jsonl") == ["S1", "S2"]
    traj, meta = hooklib.load_member(p, "x.jsonl", "S1")
    assert [(e.tool, e.status, e.paths, e.command) for e in traj.events] == [
        ("Edit", "ok", ("/a.py",), ""), ("Bash", "unknown", (), "ls"), ("Write", "ok", ("/c",), "")]
    assert traj.events[0].raw == "line 2 (PreToolUse) + line 3 (PostToolUse)"
    assert meta == {"task": "S1", "trial": "S1", "agent": "claude-code", "model": "", "reward": None,
                    "reward_source": None, "exception": None}
    assert traj.meta["delivered"] is True and traj.meta["failures_recorded"] is False


def test_hooklib_failures_and_code_logger_lines():
    log = jl({"ts": "t", "event": "file.edit", "tool": "Edit", "path": "x.md"},
             {"ts": "t", "event": "file.edit", "tool": "Edit", "path": "x.md", "ok": False},
             hk("PreToolUse", "Bash", sid=None, command="make"),
             hk("PostToolUseFailure", "Bash", sid=None, command="make"))
    p = parsed(log)
    assert hooklib.members(p, "e.jsonl") == ["audit-session"]
    traj, _ = hooklib.load_member(p, "e.jsonl", "audit-session")
    assert [(e.tool, e.status) for e in traj.events] == [("Edit", "unknown"), ("Edit", "failed"), ("Bash", "failed")]
    assert traj.meta["delivered"] is False and traj.meta["failures_recorded"] is True


def test_hooklib_single_session_loads_directly_and_sniff_is_specific():
    one = parsed(jl(hk("PreToolUse", "Bash", command="ls"), hk("PostToolUse", "Bash", command="ls")))
    assert [e.tool for e in load_trajectory(one, "a.jsonl").events] == ["Bash"]
    assert not hooklib.sniff(parsed(jl({"type": "user_message", "text": "x", "ts": 1, "event": "e"},
                                       {"type": "tool_call", "title": "t", "ts": 1, "event": "e"})))
    assert not hooklib.sniff(parsed(jl(hk("SessionStart"), hk("Stop"))))  # no tool line at all


def test_member_ids_are_safe_in_node_ids_and_unique():
    doc = {"runs": [{"run_id": "a b/c::d", "steps": []}, {"run_id": "a_b_c__d", "steps": []},
                    {"run_id": "line\nbreak", "steps": []}]}
    p = parsed(doc)
    ids = traces.members(p, "t.json")
    assert ids == ["a_b_c__d", "a_b_c__d#2", "line_break"]
    _, meta = traces.load_member(p, "t.json", "a_b_c__d")
    assert meta["trial"] == "a b/c::d"  # the job keeps the run's own id


# ================================================================================================ one parse per file


def _many_runs(n: int) -> dict:
    return {"tasks": [{"task": f"T{t}", "runs": [{"run_id": f"T{t}-r{r}", "ok": True, "steps": STEPS}
                                                for r in range(5)]} for t in range(n // 5)]}


def test_a_multi_record_file_is_parsed_and_indexed_once_for_all_its_records(tmp_path: Path, monkeypatch):
    from pytest_trajaudit.loaders import multi
    from pytest_trajaudit.loaders.job import load_job
    from pytest_trajaudit.settings import Settings

    f = tmp_path / "traces.json"
    f.write_text(json.dumps(_many_runs(200)))
    walks = []
    real_runs = traces._runs
    monkeypatch.setattr(traces, "_runs", lambda *a: walks.append(1) or real_runs(*a))
    multi.release()
    before = multi.parses
    refs = multi.find_all_jobs(f)  # collection: lists the members, parsing the file (traces.json has no index)
    assert len(refs) == 200 and multi.parses == before + 1
    jobs = [load_job(ref, Settings()) for ref in refs]
    assert [j.trial for j in jobs] == [f"T{t}-r{r}" for t in range(40) for r in range(5)]
    assert {len(j.trajectory.events) for j in jobs} == {2}
    assert multi.parses == before + 1  # every record loaded from the one parse
    assert len(walks) == 1  # and from one index of its runs
    assert not multi._cache  # released with the file's last record

    load_job(refs[7], Settings())  # a record loaded again parses the file again, once
    load_job(refs[8], Settings())
    assert multi.parses == before + 2


def test_a_changed_multi_record_file_is_parsed_again(tmp_path: Path):
    from pytest_trajaudit.loaders import multi
    from pytest_trajaudit.loaders.job import load_job
    from pytest_trajaudit.settings import Settings

    f = tmp_path / "traces.json"
    f.write_text(json.dumps(_many_runs(10)))
    multi.release()
    refs = multi.find_all_jobs(f)
    before = multi.parses
    assert load_job(refs[0], Settings()).trial == "T0-r0"  # from the parse the listing made
    doc = _many_runs(10)
    doc["tasks"][0]["runs"][1]["steps"] = STEPS[:1]
    f.write_text(json.dumps(doc) + " ")  # another size: another identity
    assert len(load_job(refs[1], Settings()).trajectory.events) == 1
    assert multi.parses == before + 1
    multi.release()


def test_the_container_cache_is_bounded(tmp_path: Path):
    from pytest_trajaudit.loaders import multi
    from pytest_trajaudit.loaders.job import load_job
    from pytest_trajaudit.settings import Settings

    multi.release()
    refs = []
    for i in range(4):
        f = tmp_path / f"traces{i}.json"
        f.write_text(json.dumps(_many_runs(10)))
        refs.append(multi.find_all_jobs(f)[0])  # one record of each: none is released by its last record
    for ref in refs:
        load_job(ref, Settings())
    assert len(multi._cache) == multi.MAX_CONTAINERS
    multi.release()
