"""SWE-agent ``.traj`` (0.x and 1.x) → the normalized model, discovery of its layouts, anti-cheat visibility."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from pytest_trajaudit.discover.jobs import bare_file, classify, loose_files
from pytest_trajaudit.loaders import miniswe, sweagent
from pytest_trajaudit.loaders.job import load_job
from pytest_trajaudit.loaders.multi import find_all_jobs
from pytest_trajaudit.loaders.sniff import detect
from pytest_trajaudit.model import EDIT, EXECUTE, OTHER, OTHER_KIND, READ, SEARCH, THOUGHT, TOOL, USER
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.safeio import parse_text
from pytest_trajaudit.settings import Settings
from tests.helpers import load_file, load_text

SYSTEM = {"role": "system", "content": "SETTING: You are an autonomous programmer", "agent": "primary"}
DEMO = {"role": "user", "content": "Here is a demonstration:\nopen /oracle/solve.sh\ncat /verifier/test.sh",
        "agent": "primary", "is_demo": True}
TASK = {"role": "user", "content": "We're currently solving the following issue: fix division", "agent": "primary"}


def step(action: str, observation: str, thought: str = "thinking", open_file: str = "n/a", v0: bool = True) -> dict:
    state = {"open_file": open_file, "working_dir": "/repo"}
    return {"action": action, "observation": observation, "response": f"{thought}\n```\n{action}\n```",
            "thought": thought, "state": json.dumps(state) if v0 else state}


def traj(steps: list[dict], info: dict | None = None, v0: bool = True, **extra) -> dict:
    doc = {"environment": "swe_main" if v0 else "main", "trajectory": steps,
           "history": [SYSTEM, DEMO, TASK], "info": {"exit_status": "submitted", "submission": "diff --git a/x b/x\n",
                                                      "model_stats": {"api_calls": len(steps)}, **(info or {})}}
    doc.update(extra)
    return doc


def tools(t):
    return [e for e in t.events if e.type == TOOL]


# --------------------------------------------------------------------------- sniff


def test_sniff_accepts_both_versions_and_rejects_neighbours():
    assert sweagent.sniff(parse_text(json.dumps(traj([step("ls", "a")])), "x.traj"))
    assert sweagent.sniff(parse_text(json.dumps(traj([step("ls", "a", v0=False)], v0=False)), "x.traj"))
    mini = {"info": {"exit_status": "Submitted"}, "messages": [SYSTEM], "trajectory_format": "mini-swe-agent-1"}
    assert not sweagent.sniff(parse_text(json.dumps(mini), "t.traj.json"))
    assert not sweagent.sniff(parse_text(json.dumps({"trajectory": [{"x": 1}], "info": {}, "history": []}), "t"))
    assert not miniswe.sniff(parse_text(json.dumps(traj([step("ls", "a")])), "x.traj"))
    assert detect(parse_text(json.dumps(traj([step("ls", "a")])), "x.traj")) is sweagent
    assert sweagent.claims("a.traj", b"") == "single" and sweagent.claims("a.traj.json", b"{") is None


# --------------------------------------------------------------------------- actions


def test_tool_bundle_commands_map_to_kinds_paths_and_status():
    t = load_text(json.dumps(traj([
        step("find_file missing_colon.py\n", 'Found 1 matches for "missing_colon.py" in /repo:\n/repo/tests/m.py'),
        step("open tests/m.py\n", "[File: /repo/tests/m.py (10 lines total)]\n1:def f(a)", open_file="/repo/tests/m.py"),
        step("goto 5\n", "[File: /repo/tests/m.py (10 lines total)]\n5:x", open_file="/repo/tests/m.py"),
        step("edit 4:4\ndef f(a):\nend_of_edit\n", "[File: /repo/tests/m.py (10 lines total)]\nFile updated.",
             open_file="/repo/tests/m.py"),
        step("edit 1:1\nbad(\nend_of_edit\n", "Your proposed edit has introduced new syntax error(s). ...",
             open_file="/repo/tests/m.py"),
        step("create repro.py\n", "[File: /repo/repro.py (1 lines total)]\n1:", open_file="/repo/repro.py"),
        step("search_dir division src\n", "Found 2 matches for \"division\" in /repo/src:"),
        step("submit\n", "diff --git a/tests/m.py b/tests/m.py"),
    ])), "x.traj")
    calls = tools(t)
    got = [(e.tool, e.kind, e.paths, e.status) for e in calls]
    assert got == [
        ("find_file", SEARCH, (), "ok"),
        ("open", READ, ("tests/m.py",), "ok"),
        ("goto", READ, ("/repo/tests/m.py",), "ok"),
        ("edit", EDIT, ("/repo/tests/m.py",), "ok"),
        ("edit", EDIT, ("/repo/tests/m.py",), "failed"),
        ("create", EDIT, ("repro.py",), "ok"),
        ("search_dir", SEARCH, ("src",), "ok"),
        ("submit", OTHER_KIND, (), "ok"),
    ]
    assert all(e.command == "" for e in calls)  # tool-bundle commands are not shell commands
    assert calls[3].output.endswith("File updated.")
    assert '"action"' in calls[3].args and "end_of_edit" in calls[3].args


def test_str_replace_editor_and_shell_commands():
    t = load_text(json.dumps(traj([
        step("str_replace_editor view /testbed/a.py", "Here's the result of running `cat -n` on /testbed/a.py:\n 1 x",
             v0=False),
        step("str_replace_editor view /testbed/a.py  --view_range 1 5", "The path /testbed/a.py does not exist.",
             v0=False),
        step("str_replace_editor create /testbed/r.py --file_text 'print(1)\n'",
             "File created successfully at: /testbed/r.py", v0=False),
        step("str_replace_editor str_replace /testbed/a.py   --old_str 'x' --new_str 'y'",
             "The file /testbed/a.py has been edited. Here's the result", v0=False),
        step("cat /oracle/expected_answer.json", '{"answer": 42}', v0=False),
        step("cd /testbed && git log --oneline -5", "abc123 fix\ndef456 init", v0=False),
        step("python /testbed/r.py", "Traceback (most recent call last):\n  File x\nNameError: name 'q'", v0=False),
        step("cat /nope", "cat: /nope: No such file or directory", v0=False),
        step("rm r.py", "Your command ran successfully and did not produce any output.", v0=False),
        step("python long.py", "", v0=False),
    ], v0=False)), "x.traj")
    view, bad_view, create, replace, cat, git, py, cat_missing, rm, quiet = tools(t)
    assert (view.kind, view.paths, view.status, view.command) == (READ, ("/testbed/a.py",), "ok", "")
    assert (bad_view.kind, bad_view.status) == (READ, "failed")
    assert (create.kind, create.paths, create.status) == (EDIT, ("/testbed/r.py",), "ok")
    assert '"create"' in create.args  # P8's whole-file-write rule sees it
    assert (replace.kind, replace.status) == (EDIT, "ok")
    assert (cat.kind, cat.command, cat.paths, cat.status) == (
        EXECUTE, "cat /oracle/expected_answer.json", ("/oracle/expected_answer.json",), "ok")
    assert (git.kind, git.status) == (EXECUTE, "ok") and "git log" in git.command
    assert py.status == "failed" and cat_missing.status == "failed"
    assert rm.status == "ok" and quiet.status == "unknown"  # no exit codes in a .traj: nothing to go on


def test_demo_is_not_the_agents_and_meta():
    doc = traj([step("ls\n", "a.py")], info={"submission": None, "exit_status": "submitted"})
    t = load_text(json.dumps(doc), "inst.traj")
    assert [e.type for e in t.events] == [OTHER, USER, THOUGHT, TOOL, OTHER]
    assert "/oracle/solve.sh" not in "".join(e.text + e.command for e in t.events)  # the demonstration
    assert t.events[1].text.startswith("We're currently solving")
    assert t.meta["submission"] is None and t.meta["exit_status"] == "submitted"
    assert t.meta["sweagent_format"] == "0.x" and t.meta["agent"] == "swe-agent"
    assert "reward" not in t.meta and "model" not in t.meta  # never invented
    assert t.meta["task"] == "inst"
    assert t.events[-1].text == "exit_status: submitted"


def test_v1_replay_config_as_string_gives_model_and_task():
    rc = {"agent": {"model": {"name": "gpt-4o", "api_key": "**********"}},
          "problem_statement": {"id": "django__django-11099"}}
    doc = traj([step("ls", "a", v0=False)], v0=False, replay_config=json.dumps(rc))
    doc["info"]["swe_agent_version"] = "1.0.1"
    t = load_text(json.dumps(doc), "x.traj")
    assert t.meta["model"] == "gpt-4o" and t.meta["task"] == "django__django-11099"
    assert t.meta["sweagent_format"] == "1.x" and t.meta["agent_version"] == "1.0.1"
    assert "api_key" not in json.dumps(t.meta)


@pytest.mark.parametrize(("info", "reward", "source"), [
    ({}, None, None),
    ({"reward": 0.5}, 0.5, "info.reward"),
    ({"resolved": True}, 1.0, "info.resolved"),
    ({"resolved": "yes"}, None, None),
    ({"reward": True}, None, None),
])
def test_reward_only_when_the_file_records_one(tmp_path: Path, info, reward, source):
    f = tmp_path / "inst.traj"
    f.write_text(json.dumps(traj([step("ls", "a")], info=info)))
    job = load_job(bare_file(f), Settings())
    assert job.verifier.reward == reward and job.verifier.reward_source == source
    assert job.task == "inst" and job.agent == "swe-agent" and job.layout == "bare-file"


def test_hostile_shapes_do_not_crash():
    t = load_text(json.dumps({"environment": "x", "info": {"exit_status": ["x"], "submission": 3},
                              "history": "nope", "replay_config": "{not json",
                              "trajectory": [{"action": None}, {"action": ["ls"]}, {"action": "open", "state": 5},
                                             {"action": "edit 1:2", "observation": {"a": 1}, "thought": None},
                                             {"action": "str_replace_editor", "observation": None}]}), "x.traj")
    assert [e.index for e in t.events] == list(range(len(t.events)))
    assert [e.tool for e in tools(t)] == ["open", "edit", "bash"]


# --------------------------------------------------------------------------- discovery and jobs


def test_layouts_instance_dir_and_loose_files(tmp_path: Path):
    one = tmp_path / "runs" / "django__django-1" / "django__django-1.traj"
    one.parent.mkdir(parents=True)
    one.write_text(json.dumps(traj([step("ls", "a")])))
    (one.parent / "django__django-1.pred").write_text("{}")
    flat = tmp_path / "runs" / "run0x"
    flat.mkdir()
    for name in ("a.traj", "b.traj"):
        (flat / name).write_text(json.dumps(traj([step("ls", "a")])))
    (flat / "all_preds.jsonl").write_text("{}\n")
    ref = classify(one.parent)
    assert ref is not None and ref.layout == "swe-agent-dir" and ref.anchor == one
    assert classify(flat) is None
    # candidates by name; all_preds.jsonl is read (4 KiB) but no format claims it, so it is no job (below)
    assert [p.name for p in loose_files(flat)] == ["a.traj", "all_preds.jsonl", "b.traj"]
    refs = find_all_jobs(tmp_path / "runs")
    assert sorted((r.layout, r.anchor.name) for r in refs) == [
        ("bare-file", "a.traj"), ("bare-file", "b.traj"), ("swe-agent-dir", "django__django-1.traj")]
    job = load_job(ref, Settings())
    assert job.task == "django__django-1" and job.trial == "django__django-1"
    assert job.trajectory is not None and job.trajectory.format == "swe-agent"


def test_anticheat_sees_answer_reads_and_git_history(tmp_path: Path):
    f = tmp_path / "x.traj"
    f.write_text(json.dumps(traj([step("cat /oracle/expected_answer.json", '{"answer": 42}', v0=False),
                                  step("git log --all --oneline", "abc fix", v0=False)], v0=False), ))
    audit = audit_job(bare_file(f), Settings(), [registry()["P1"]])
    assert audit.error is None
    assert audit.results["P1"].status == "FAIL"
    assert "/oracle/expected_answer.json" in audit.results["P1"].evidence
    git = [e for e in tools(load_file(f)) if "git log" in e.command]
    assert len(git) == 1 and git[0].kind == EXECUTE


# --------------------------------------------------------------------------- real files


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:  # the first line of a multi-line --file_text '...'
        return line.split()


def _real(corpus: Path) -> list[Path]:
    files = sorted((corpus / "swe-agent").rglob("*.traj")) + \
        sorted((corpus / "labelled" / "sanyamahesh2__ML4SWE-Group4").rglob("*.traj"))
    assert len(files) == 9
    return files


def test_every_real_traj_loads_and_matches_raw(corpus: Path):
    for path in _real(corpus):
        raw = json.loads(path.read_text(encoding="utf-8"))
        t = load_file(path)
        assert t.format == "swe-agent", path
        assert t.meta["exit_status"] == raw["info"]["exit_status"]
        steps = [s for s in raw["trajectory"] if isinstance(s.get("action"), str) and s["action"].strip()]
        calls = tools(t)
        assert len(calls) == len(steps), path
        for ev in calls:
            i = int(ev.raw.removeprefix("trajectory[").rstrip("]"))
            s = raw["trajectory"][i]
            assert ev.output == s["observation"]
            first = _words(s["action"].split("\n", 1)[0])
            if ev.kind == EXECUTE:
                assert ev.command == s["action"].rstrip("\n"), path
            elif first and first[0] == "str_replace_editor":
                assert ev.paths == (first[2],) and ev.kind == (READ if first[1] == "view" else EDIT)
            elif first and first[0] == "open":
                assert ev.paths == (first[1],) and ev.kind == READ
        thoughts = [e for e in t.events if e.type == THOUGHT]
        assert len(thoughts) == sum(1 for s in raw["trajectory"] if (s.get("thought") or s.get("response")))
        demo = [m for m in raw["history"] if m.get("is_demo")]
        for m in demo:
            assert not any(m["content"] == e.text for e in t.events)


def test_real_spot_checks(corpus: Path):
    base = corpus / "swe-agent" / "SWE-agent__SWE-agent"
    pydicom = load_file(next(base.rglob("pydicom__pydicom-1458.traj")))
    edits = [e for e in tools(pydicom) if e.tool == "edit"]
    assert [e.status for e in edits] == ["ok", "failed", "failed", "failed", "ok"]
    assert edits[1].paths == ("/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py",)
    run = [e for e in tools(pydicom) if e.command == "python reproduce_bug.py"]
    assert [e.status for e in run] == ["failed", "unknown"]
    madeup = load_file(base / "commit0_prepare/traj_example/portalocker_madeup_cmd/97af1e.traj")
    assert madeup.meta["submission"] is None and madeup.meta["exit_status"] == "submitted"
    assert [(e.tool, e.status) for e in tools(madeup)] == [("edit", "failed"), ("edit", "failed"), ("submit", "ok")]
    assert any("git reset --hard" in e.text for e in madeup.events if e.type == THOUGHT)  # invented, not a call
    assert not any("git reset" in e.command for e in tools(madeup))
    lm = corpus / "labelled/sanyamahesh2__ML4SWE-Group4/20250511_sweagent_lm_32b/trajs/sympy__sympy-19783"
    job = load_job(classify(lm), Settings())
    assert job.layout == "swe-agent-dir" and job.task == "sympy__sympy-19783" and job.model == "gpt-4o"
    assert job.reward is None  # results.json next to the trajectories is not read: no invented reward
    views = [e for e in tools(job.trajectory) if e.kind == READ]
    assert views and all(e.paths[0].startswith("/testbed/sympy/physics/quantum/") for e in views)


def test_real_jobs_have_no_anticheat_fail(corpus: Path):
    principles = [p for p in registry().values() if p.family == "anticheat"]
    for root in (corpus / "swe-agent", corpus / "labelled" / "sanyamahesh2__ML4SWE-Group4"):
        refs = find_all_jobs(root)
        for ref in refs:
            audit = audit_job(ref, Settings(), principles)
            assert audit.error is None, (ref.anchor, audit.error)
            assert audit.meta["trajectory_format"] == "swe-agent"
            assert not [c for c, r in audit.results.items() if r.status == "FAIL"], ref.anchor
