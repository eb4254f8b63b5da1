"""OpenHands event lists and evaluation ``output.jsonl`` records → the normalized model (one job per record)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.discover.jobs import JobRef, bare_file
from pytest_trajaudit.loaders import openhands
from pytest_trajaudit.loaders.job import load_job
from pytest_trajaudit.loaders.multi import RECORD, find_all_jobs, list_members, load_record, member_ref
from pytest_trajaudit.loaders.sniff import detect
from pytest_trajaudit.model import AGENT, EDIT, EXECUTE, OTHER, READ, THOUGHT, TOOL, USER, UnusableInput
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.safeio import Budget, parse_text
from pytest_trajaudit.settings import Settings
from tests.helpers import load_file, load_text

MAX = 1 << 30


def act(i: int, action: str, args: dict, fn: str | None = None, source: str = "agent") -> dict:
    e: dict[str, Any] = {"id": i, "timestamp": "2025-01-01T00:00:00", "source": source, "message": "",
                         "action": action, "args": args}
    if fn:
        e["tool_call_metadata"] = {"function_name": fn, "tool_call_id": f"c{i}", "model_response": {"big": "x"}}
    return e


def obs(i: int, cause: int | None, kind: str, content: str, exit_code: int | None = None) -> dict:
    e: dict[str, Any] = {"id": i, "timestamp": "2025-01-01T00:00:01", "source": "agent", "message": "",
                         "observation": kind, "content": content, "extras": {}}
    if cause is not None:
        e["cause"] = cause
    if exit_code is not None:
        e["extras"] = {"command": "", "metadata": {"exit_code": exit_code}}
    return e


EVENTS = [
    act(0, "system", {"content": "You are OpenHands agent"}),
    act(1, "message", {"content": "Please fix the bug"}, source="user"),
    act(2, "run", {"command": "cat /oracle/expected_answer.json", "thought": "Let me look."}, "execute_bash"),
    obs(3, 2, "run", '{"answer": 42}', 0),
    act(4, "run", {"command": "git log --oneline -3"}, "execute_bash"),
    obs(5, 4, "run", "abc fix\ndef init", 0),
    act(6, "run", {"command": "make test"}, "execute_bash"),
    obs(7, 6, "run", "1 failed", 2),
    act(8, "run", {"command": "python -m http.server"}, "execute_bash"),
    obs(9, 8, "run", "Serving HTTP", -1),
    act(10, "read", {"path": "/workspace/a.py", "start": 0, "end": -1}, "str_replace_editor"),
    obs(11, 10, "read", "Here's the result of running `cat -n` on /workspace/a.py"),
    act(12, "edit", {"path": "/workspace/a.py", "command": "str_replace", "old_str": "x", "new_str": "y"},
        "str_replace_editor"),
    obs(13, 12, "edit", "ERROR:\nNo replacement was performed"),
    obs(14, None, "error", "Parameter 'command' is expected to be one of ['view', 'create']"),
    act(15, "think", {"thought": "Maybe the parser."}, "think"),
    obs(16, 15, "think", "Your thought has been logged."),
    act(17, "change_agent_state", {"agent_state": "running"}, source="environment"),
    obs(18, None, "agent_state_changed", ""),
    act(19, "run_ipython", {"code": "open_file('/workspace/b.py')"}, "execute_ipython_cell"),
    obs(20, 19, "run_ipython", "[File: /workspace/b.py (3 lines total)]"),
    act(21, "finish", {"final_thought": "Fixed the parser.", "task_completed": "true", "outputs": {}}, "finish"),
]


def tools(t):
    return [e for e in t.events if e.type == TOOL]


def record_2025(iid: str = "org__repo-1", resolved: Any = None, error: str | None = None) -> dict:
    tr: dict[str, Any] = {"git_patch": "diff --git a/a.py b/a.py\n"}
    if resolved is not None:
        tr["report"] = {"resolved": resolved}
    return {"instance_id": iid, "instruction": "Please fix the bug",
            "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "openai/m1", "api_key": "**********"},
                         "max_iterations": 50},
            "history": EVENTS, "metrics": {}, "error": error, "test_result": tr, "instance": {"repo": "org/repo"}}


def record_opendevin(rid: str = "Q_1", result: Any = False) -> dict:
    return {"id": rid, "instance": {"id": rid}, "instruction": "Answer A or B", "metadata": {"model_name": "gpt-4o"},
            "history": [[act(0, "message", {"content": "Answer A or B"}, source="user"),
                         {"message": "No observation", "observation": "null", "content": "", "extras": {}}],
                        [act(1, "run_ipython", {"code": "print(1)", "thought": "compute"}),
                         obs(2, 1, "run_ipython", "1")],
                        [act(3, "finish", {"outputs": {}, "thought": ""}),
                         {"message": "No observation", "observation": "null", "content": "", "extras": {}}]],
            "final_message": "A", "messages": [], "error": None, "test_result": {"result": result}}


def record_resolver(number: int = 5) -> dict:
    return {"issue": {"owner": "neubig", "repo": "pr-viewer", "number": number, "title": "t", "body": "b"},
            "issue_type": "issue", "instruction": "Please fix the following issue", "base_commit": "",
            "git_patch": "diff", "history": [
                {"content": "Please fix the following issue", "action": "message"},
                {"command": "cat README.md", "thought": "look", "action": "run", "is_confirmed": "confirmed"},
                {"content": "# readme", "command_id": -1, "command": "cat README.md", "exit_code": 0,
                 "observation": "run"},
                {"code": "edit_file_by_replace('/workspace/a.ts', to_replace='x', new_content='y')",
                 "thought": "edit", "action": "run_ipython"},
                {"content": "[No exact match found in /workspace/a.ts for\n```x```]", "observation": "run_ipython"},
                {"outputs": {}, "thought": "Done.", "action": "finish"}],
            "metrics": {}, "success": True, "comment_success": None, "result_explanation": "judge",
            "error": "RuntimeError: Agent reached maximum iteration"}


def jsonl(*records: dict) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


# --------------------------------------------------------------------------- event lists


def test_event_list_mapping():
    t = load_text(json.dumps(EVENTS), "session.json")
    assert t.format == "openhands"
    assert [e.type for e in t.events] == [OTHER, USER, THOUGHT, TOOL, TOOL, TOOL, TOOL, TOOL, TOOL, OTHER, THOUGHT,
                                          TOOL, AGENT]
    cat, git, make, http, read, edit, ipy = tools(t)
    assert (cat.kind, cat.command, cat.paths, cat.status, cat.output) == (
        EXECUTE, "cat /oracle/expected_answer.json", ("/oracle/expected_answer.json",), "ok", '{"answer": 42}')
    assert cat.tool == "execute_bash" and "model_response" not in cat.args
    assert (git.command, git.status) == ("git log --oneline -3", "ok")
    assert make.status == "failed" and http.status == "unknown"  # exit 2; -1 = still running, no exit code
    assert (read.kind, read.tool, read.paths, read.status, read.command) == (
        READ, "str_replace_editor", ("/workspace/a.py",), "ok", "")
    assert (edit.kind, edit.paths, edit.status) == (EDIT, ("/workspace/a.py",), "failed")
    assert (ipy.kind, ipy.paths, ipy.status) == (READ, ("/workspace/b.py",), "ok")  # agentskills open_file
    assert t.events[2].text == "Let me look." and t.events[-1].text == "Fixed the parser."
    assert t.events[9].text.startswith("error: Parameter 'command'")


def test_sniff_and_claims():
    assert detect(parse_text(json.dumps(EVENTS), "s.json")) is openhands
    assert detect(parse_text(jsonl(record_2025(), record_opendevin()), "output.jsonl")) is openhands
    assert openhands.claims("basic.json", json.dumps(EVENTS).encode()[:4096]) == "single"
    assert openhands.claims("output.jsonl", jsonl(record_2025()).encode()[:4096]) == "multi"
    assert openhands.claims("output.jsonl", b'{"some": "other tool"}\n') is None
    assert openhands.claims("config.json", b'{"instruction": 1}') is None
    assert not openhands.sniff(parse_text(json.dumps([{"role": "user", "content": "x"}]), "chat.json"))


# --------------------------------------------------------------------------- records


@pytest.mark.parametrize(("rec", "reward", "source"), [
    (record_2025(resolved=True), 1.0, "test_result.report.resolved"),
    (record_2025(resolved=False), 0.0, "test_result.report.resolved"),
    (record_2025(), None, None),  # only git_patch: resolution is computed later, never invented
    (record_2025(resolved="yes"), None, None),
    ({**record_2025(), "report": {"resolved": True}}, 1.0, "report.resolved"),
    (record_opendevin(result=True), 1.0, "test_result.result"),
    (record_opendevin(result="A"), None, None),
    (record_resolver(), None, None),  # success is an LLM judge's opinion: not a reward
])
def test_resolution_is_a_reward_only_when_recorded(tmp_path: Path, rec, reward, source):
    f = tmp_path / "output.jsonl"
    f.write_text(jsonl(rec))
    [ref] = find_all_jobs(tmp_path)
    assert ref.layout == RECORD and ref.member is not None
    job = load_job(ref, Settings())
    assert (job.reward, job.verifier.reward_source) == (reward, source)


def test_three_flavours_in_one_file(tmp_path: Path):
    f = tmp_path / "output.jsonl"
    reordered = {"instruction": "x", **record_2025("org__repo-2")}  # first key is not the id: parsed line
    f.write_text(jsonl(record_2025(error="RuntimeError: stuck"), record_opendevin(), record_resolver(), reordered))
    container = JobRef(tmp_path, f, RECORD)
    ids = list_members(container, MAX, openhands)
    assert ids == ["org__repo-1", "Q_1", "neubig__pr-viewer-5", "org__repo-2"]
    assert openhands.scan_members(tmp_path, "output.jsonl", MAX) == openhands.members(
        parse_text(f.read_text(), f), str(f))
    jobs = {r.member: load_job(r, Settings()) for r in find_all_jobs(tmp_path)}
    a, q, r = jobs["org__repo-1"], jobs["Q_1"], jobs["neubig__pr-viewer-5"]
    assert (a.task, a.trial, a.agent, a.model, a.exception) == (
        "org__repo-1", "org__repo-1", "CodeActAgent", "openai/m1", "RuntimeError: stuck")
    assert a.layout == RECORD and a.trajectory.raw_text == f.read_text().split("\n")[0]
    assert "api_key" not in json.dumps(a.trajectory.meta)
    assert [e.type for e in q.trajectory.events] == [USER, THOUGHT, TOOL, AGENT]
    assert q.model == "gpt-4o" and q.reward == 0.0 and q.trajectory.events[-1].text == "A"
    cat, edit = tools(r.trajectory)
    assert (cat.command, cat.paths, cat.status) == ("cat README.md", ("README.md",), "ok")
    assert (edit.kind, edit.paths, edit.status) == (EDIT, ("/workspace/a.ts",), "failed")
    assert r.exception.startswith("RuntimeError") and r.trajectory.meta["resolver_success"] is True


def test_single_record_json_and_load_of_a_multi_file():
    t = load_text(json.dumps(record_2025()), "one.json")  # one record given as a file: read as that record
    assert len(tools(t)) == 7
    with pytest.raises(UnusableInput, match="holds 2 evaluation records"):
        load_text(jsonl(record_2025(), record_opendevin()), "output.jsonl")


@pytest.mark.parametrize(("content", "reason"), [
    (jsonl(record_2025("dup"), record_opendevin("dup")), "duplicate record id 'dup'"),
    (jsonl(record_2025("a")) + '{"instance_id": "b", "history": [\n', "neither one JSON document nor JSON Lines"),
    (jsonl(record_2025("a b")) + jsonl(record_2025("a_b")), "share the node name 'a_b'"),
    (jsonl(record_2025("x\u0007")), "control characters"),
    ('{"instance_id": "a"}\n{"instance_id": "b"}\n', "no known multi-record format matches this jsonl file"),
])
def test_hostile_containers_are_unusable_with_one_line(tmp_path: Path, content, reason):
    f = tmp_path / "output.jsonl"
    f.write_text(content)
    with pytest.raises(UnusableInput) as exc:
        ids = list_members(JobRef(tmp_path, f, RECORD), MAX, openhands)
        for m in ids:  # listing may be cheap: the bad part surfaces when a record loads
            load_record(member_ref(JobRef(tmp_path, f, RECORD), m), Budget())
    assert reason in str(exc.value) and "\n" not in str(exc.value)


def test_member_over_the_job_limit(tmp_path: Path):
    f = tmp_path / "output.jsonl"
    f.write_text(jsonl(record_2025("a"), record_2025("b")))
    ref = member_ref(JobRef(tmp_path, f, RECORD), "a")
    with pytest.raises(UnusableInput, match="per-file size limit"):
        load_record(ref, Budget(max_file=100, max_job=100))


def test_anticheat_sees_reads_in_records_and_event_lists(tmp_path: Path):
    (tmp_path / "output.jsonl").write_text(jsonl(record_2025()))
    (tmp_path / "session.json").write_text(json.dumps(EVENTS))
    refs = find_all_jobs(tmp_path)
    assert sorted((r.layout, r.member) for r in refs) == [("bare-file", None), (RECORD, "org__repo-1")]
    for ref in refs:
        audit = audit_job(ref, Settings(), [registry()["P1"]])
        assert audit.error is None
        assert audit.results["P1"].status == "FAIL", ref
        assert "/oracle/expected_answer.json" in audit.results["P1"].evidence


# --------------------------------------------------------------------------- real files


def _raw_actions(history: list) -> list[dict]:
    out = []
    for item in history:
        for d in item if isinstance(item, list) else [item]:
            if isinstance(d, dict) and isinstance(d.get("action"), str):
                out.append(d)
    return out


def _run_commands(history: list) -> list[str]:
    return [(a.get("args") or a).get("command") for a in _raw_actions(history) if a["action"] == "run"]


def test_every_real_file_loads_and_matches_raw(corpus: Path):
    root = corpus / "openhands"
    refs = find_all_jobs(root)
    assert len([r for r in refs if r.member]) == 11 and len([r for r in refs if not r.member]) == 2
    for ref in refs:
        job = load_job(ref, Settings())
        t = job.trajectory
        assert t.format == "openhands"
        if ref.member is None:
            raw_history = json.loads(ref.anchor.read_text())
        else:
            line = t.meta["record_line"]
            rec = json.loads(ref.anchor.read_text().split("\n")[line - 1])
            raw_history = rec["history"]
            assert t.raw_text == ref.anchor.read_text().split("\n")[line - 1]
            tr = rec.get("test_result") or {}
            if isinstance(tr.get("result"), bool):
                assert (job.reward, job.verifier.reward_source) == (float(tr["result"]), "test_result.result")
            else:
                assert job.reward is None
        runs = [e for e in tools(t) if e.tool == "execute_bash"]
        assert [e.command for e in runs] == _run_commands(raw_history), ref
        assert [e.index for e in t.events] == list(range(len(t.events)))


def test_real_statuses_follow_exit_codes(corpus: Path):
    path = corpus / "openhands/OpenHands__OpenHands/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl"
    for n, line in enumerate(path.read_text().splitlines(), 1):
        rec = json.loads(line)
        by_id = {e["id"]: e for e in rec["history"] if "id" in e}
        t, info = load_record(member_ref(JobRef(path.parent, path, RECORD), rec["instance_id"]), Budget())
        for ev in tools(t):
            i = int(ev.raw.removeprefix("history[").rstrip("]"))
            a = rec["history"][i]
            answer = next((o for o in rec["history"] if o.get("cause") == a["id"]), None)
            code = ((answer or {}).get("extras") or {}).get("metadata", {}).get("exit_code")
            if a["action"] == "run":
                assert ev.status == ("ok" if code == 0 else "unknown" if code == -1 else "failed"), (n, ev.command)
            if a["action"] == "edit" and answer is not None and answer["content"].startswith("ERROR:"):
                assert ev.status == "failed"
            if a["action"] in ("read", "edit"):
                assert ev.paths == (a["args"]["path"],)
        assert by_id
        if n == 3:
            assert "maximum iteration" in info["exception"]


def test_real_reads_and_greps_name_their_files(corpus: Path):
    path = corpus / "openhands/OpenHands__OpenHands/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl"
    t, _ = load_record(member_ref(JobRef(path.parent, path, RECORD), "ponylang__ponyc-4595"), Budget())
    grep = next(e for e in tools(t) if e.command.startswith('grep -n "DECL(pattern);"'))
    assert grep.paths == ("/workspace/ponylang__ponyc__0.1/src/libponyc/ast/parser.c",) and grep.status == "ok"
    resolver = corpus / "openhands/OpenHands__OpenHands/tests/unit/resolver/mock_output/output.jsonl"
    t, info = load_record(member_ref(JobRef(resolver.parent, resolver, RECORD), "neubig__pr-viewer-5"), Budget())
    cat = next(e for e in tools(t) if e.command == "cat LICENSE")
    assert cat.paths == ("LICENSE",) and cat.status == "ok" and info["reward"] is None
    gui = load_file(corpus / "openhands/OpenHands__OpenHands/tests/runtime/trajs/basic_gui_mode.json")
    server = next(e for e in tools(gui) if "http.server" in e.command)
    assert server.status == "unknown"  # exit code -1: "no new output after 30 seconds"


def test_real_jobs_have_no_anticheat_fail(corpus: Path):
    principles = [p for p in registry().values() if p.family == "anticheat"]
    for ref in find_all_jobs(corpus / "openhands"):
        audit = audit_job(ref, Settings(), principles)
        assert audit.error is None, audit.error
        assert not [c for c, r in audit.results.items() if r.status == "FAIL"], ref


def test_bare_event_list_job(corpus: Path):
    f = corpus / "openhands/OpenHands__OpenHands/tests/runtime/trajs/wrong_initial_state.json"
    job = load_job(bare_file(f), Settings())
    assert job.reward is None and job.agent == "openhands"
    mv = next(e for e in tools(job.trajectory) if e.command.startswith("mv "))
    assert mv.status == "ok" and [e.kind for e in tools(job.trajectory)] == [READ, EXECUTE, READ]


def test_environment_messages_are_not_the_users():
    events = [act(0, "message", {"content": "Agent state: paused"}, source="environment"),
              act(1, "message", {"content": "do it"}, source="user")]
    t = load_text(json.dumps(events), "s.json")
    assert [e.type for e in t.events] == [OTHER, USER]
