"""Codex CLI rollouts and `codex exec --json` streams → the normalized model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_trajaudit.loaders import codex
from pytest_trajaudit.loaders.sniff import detect
from pytest_trajaudit.model import AGENT, EDIT, EXECUTE, FETCH, OTHER, THOUGHT, TOOL, USER
from pytest_trajaudit.safeio import parse_text
from tests.helpers import load_file, load_text


def jl(*lines: dict) -> str:
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def ri(payload: dict) -> dict:
    return {"timestamp": "2025-09-25T21:12:14.126Z", "type": "response_item", "payload": payload}


def em(payload: dict) -> dict:
    return {"timestamp": "2025-09-25T21:12:14.126Z", "type": "event_msg", "payload": payload}


def call(call_id: str, argv: list[str] | None = None, name: str = "shell", args: dict | None = None) -> dict:
    a = args if args is not None else {"command": argv, "workdir": "."}
    return ri({"type": "function_call", "name": name, "arguments": json.dumps(a), "call_id": call_id})


def out(call_id: str, output: str, exit_code: int | None = None) -> dict:
    if exit_code is None:
        body = output
    else:
        body = json.dumps({"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": 0.1}})
    return ri({"type": "function_call_output", "call_id": call_id, "output": body})


SESSION = {"timestamp": "t", "type": "session_meta",
           "payload": {"id": "sess-1", "cwd": "/repo", "originator": "codex_cli_rs", "cli_version": "0.40.0"}}
TURN = {"timestamp": "t", "type": "turn_context", "payload": {"cwd": "/repo", "model": "gpt-5-codex"}}


def tools(traj):
    return [e for e in traj.events if e.type == TOOL]


def assert_consecutive(traj):
    assert [e.index for e in traj.events] == list(range(len(traj.events)))


# --------------------------------------------------------------------------- sniff


def test_sniff_accepts_rollout_and_exec_streams():
    assert codex.sniff(parse_text(jl(SESSION, TURN, call("c1", ["ls"])), "r.jsonl"))
    assert codex.sniff(parse_text(jl({"type": "thread.started", "thread_id": "x"}, {"type": "turn.started"}), "e.jsonl"))
    # a one-line rollout parses as one JSON document
    assert codex.sniff(parse_text(json.dumps(TURN), "one.jsonl"))


@pytest.mark.parametrize("text", [
    jl({"type": "tool_call", "tool_call_id": "a", "kind": "execute", "title": "ls"}, {"type": "agent_message", "text": "hi"}),
    jl({"type": "assistant", "message": {"role": "assistant", "content": []}}, {"type": "user", "message": {}}),
    json.dumps([{"role": "user", "content": "hi"}]),
    json.dumps({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}),
    jl({"a": 1}, {"b": 2}, {"type": "turn.started"}, {"c": 3}, {"d": 4}),
    "plain text\n",
])
def test_sniff_rejects_other_shapes(text):
    assert not codex.sniff(parse_text(text, "x.jsonl"))


# --------------------------------------------------------------------------- rollout


def test_rollout_merges_outputs_and_maps_exit_codes():
    t = load_text(jl(
        SESSION, TURN,
        ri({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]}),
        call("c1", ["bash", "-lc", "ls -la"]),
        call("c2", ["bash", "-lc", "pytest -q"]),
        out("c1", "a\nb\n", 0),
        out("c2", "1 failed", 1),
        call("c3", args={"command": "cat x", "workdir": "/repo"}, name="shell_command"),
        out("c3", "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nno such file"),
        call("c4", ["bash", "-lc", "true"]),
        out("c4", "plain text without an exit code"),
    ))
    assert t.format == "codex-rollout"
    assert t.meta["model"] == "gpt-5-codex" and t.meta["cwd"] == "/repo" and t.meta["session_id"] == "sess-1"
    assert t.events[0].type == USER and t.events[0].text == "fix the bug"
    calls = tools(t)
    assert [(e.command, e.kind, e.status) for e in calls] == [
        ("ls -la", EXECUTE, "ok"), ("pytest -q", EXECUTE, "failed"), ("cat x", EXECUTE, "failed"),
        ("true", EXECUTE, "unknown"),
    ]
    assert calls[0].output == "a\nb\n" and calls[1].output == "1 failed"
    assert calls[0].raw == "line 4"
    assert_consecutive(t)


def test_rollout_prefers_response_items_over_event_msg_duplicates():
    t = load_text(jl(
        SESSION, TURN,
        ri({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]}),
        ri({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "do it"}]}),
        em({"type": "user_message", "message": "do it", "kind": "plain"}),
        em({"type": "agent_reasoning", "text": "**Thinking**"}),
        em({"type": "token_count", "info": {"total_token_usage": {"total_tokens": 10}}}),
        ri({"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Thinking**"}], "encrypted_content": "x"}),
        ri({"type": "reasoning", "summary": [], "encrypted_content": "y"}),
        call("c1", ["bash", "-lc", "ls"]),
        em({"type": "exec_command_end", "call_id": "c1", "exit_code": 0, "aggregated_output": "f"}),
        out("c1", "f", 0),
        em({"type": "agent_message", "message": "done"}),
        ri({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
    ))
    assert [e.type for e in t.events] == [USER, USER, THOUGHT, TOOL, AGENT]
    assert [e.text for e in t.events if e.type == AGENT] == ["done"]
    assert t.meta["token_usage"] == {"total_tokens": 10}


def test_rollout_event_msg_only_builds_calls_from_begin_end_pairs():
    t = load_text(jl(
        SESSION,
        em({"type": "user_message", "message": "list files"}),
        em({"type": "agent_reasoning", "text": "plan"}),
        em({"type": "exec_command_begin", "call_id": "e1", "command": ["bash", "-lc", "ls"], "cwd": "/repo"}),
        em({"type": "exec_command_end", "call_id": "e1", "stdout": "a", "stderr": "", "aggregated_output": "a",
            "exit_code": 0}),
        em({"type": "exec_command_begin", "call_id": "e2", "command": ["bash", "-lc", "false"], "cwd": "/repo"}),
        em({"type": "exec_command_end", "call_id": "e2", "stdout": "", "stderr": "boom", "exit_code": 1}),
        em({"type": "patch_apply_begin", "call_id": "p1", "auto_approved": True,
            "changes": {"/repo/a.py": {"update": {"unified_diff": "..."}}}}),
        em({"type": "patch_apply_end", "call_id": "p1", "stdout": "ok", "stderr": "", "success": True}),
        em({"type": "turn_aborted", "reason": "interrupted"}),
        em({"type": "agent_message", "message": "done"}),
    ))
    assert [e.type for e in t.events] == [USER, THOUGHT, TOOL, TOOL, TOOL, OTHER, AGENT]
    ls, false, patch = tools(t)
    assert (ls.command, ls.status, ls.output) == ("ls", "ok", "a")
    assert (false.command, false.status) == ("false", "failed")
    assert (patch.kind, patch.paths, patch.status) == (EDIT, ("/repo/a.py",), "ok")
    assert "interrupted" in t.events[5].text


PATCH = """*** Begin Patch
*** Update File: src/app.py
@@
-a
+b
*** Add File: src/new.py
+x
*** Delete File: old.txt
*** Update File: src/mv.py
*** Move to: src/moved.py
*** End Patch"""


def test_apply_patch_custom_tool_and_shell_forms_are_edits_with_paths():
    t = load_text(jl(
        SESSION,
        ri({"type": "custom_tool_call", "status": "completed", "call_id": "a1", "name": "apply_patch", "input": PATCH}),
        ri({"type": "custom_tool_call_output", "call_id": "a1",
            "output": json.dumps({"output": "Success. Updated the following files:\nM src/app.py\n",
                                  "metadata": {"exit_code": 0}})}),
        call("a2", ["apply_patch", PATCH]),
        out("a2", "apply_patch verification failed: no such file"),
        call("a3", ["bash", "-lc", "apply_patch <<'EOF'\n" + PATCH + "\nEOF"]),
        out("a3", "Success. Updated the following files:\nM src/app.py"),
        call("a4", name="apply_patch", args={"input": PATCH}),
        out("a4", "Done", 0),
    ))
    expected = ("src/app.py", "src/new.py", "old.txt", "src/mv.py", "src/moved.py")
    calls = tools(t)
    assert len(calls) == 4
    assert all(e.kind == EDIT and e.paths == expected and e.command == "" for e in calls)
    assert [e.status for e in calls] == ["ok", "failed", "ok", "ok"]
    assert codex.patch_paths("no patch here") == ()


def test_exec_command_end_supplies_exit_code_missing_from_plain_output():
    t = load_text(jl(
        SESSION,
        call("c1", ["bash", "-lc", "make"]),
        em({"type": "exec_command_end", "call_id": "c1", "exit_code": 2, "aggregated_output": "err"}),
        out("c1", "err"),
    ))
    (ev,) = tools(t)
    assert (ev.status, ev.output) == ("failed", "err")


def test_local_shell_web_search_update_plan_and_developer_messages():
    t = load_text(jl(
        SESSION,
        ri({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions/>"}]}),
        ri({"type": "local_shell_call", "call_id": "l1", "status": "completed",
            "action": {"type": "exec", "command": ["bash", "-lc", "cat README.md"], "working_directory": "/repo"}}),
        out("l1", "hello", 0),
        ri({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "pytest xfail"}}),
        call("u1", name="update_plan", args={"plan": [{"step": "a", "status": "pending"}]}),
        out("u1", "Plan updated"),
        out("zz", "orphan"),
    ))
    assert t.events[0].type == OTHER  # harness instructions are not the user's words
    shell, web, plan = tools(t)
    assert (shell.tool, shell.command, shell.status, shell.output) == ("local_shell", "cat README.md", "ok", "hello")
    assert (web.kind, web.status) == (FETCH, "ok") and "pytest xfail" in web.args
    assert plan.kind == "think" and plan.command == ""
    assert t.meta["orphan_outputs"] == 1


def test_old_rollout_without_session_meta():
    t = load_text(jl(
        {"id": "old-1", "timestamp": "2025-07-01T00:00:00Z", "instructions": None, "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", "ls"]}),
         "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1",
         "output": json.dumps({"output": "x", "metadata": {"exit_code": 0}})},
        {"record_type": "state"},
    ))
    assert t.format == "codex-rollout" and t.meta["session_id"] == "old-1"
    assert [e.type for e in t.events] == [USER, TOOL]
    assert (t.events[1].command, t.events[1].status) == ("ls", "ok")


# --------------------------------------------------------------------------- exec --json


def test_exec_json_merges_item_states_and_keeps_order():
    t = load_text(jl(
        {"type": "thread.started", "thread_id": "th-1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "**Plan**"}},
        {"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc 'cat a.txt'",
                                          "aggregated_output": "", "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "reading"}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc 'cat a.txt'",
                                            "aggregated_output": "hello\n", "exit_code": 0, "status": "completed"}},
        {"type": "item.started", "item": {"id": "item_3", "type": "command_execution", "command": "bash -lc 'exit 3'",
                                          "aggregated_output": "", "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "item_3", "type": "command_execution", "command": "bash -lc 'exit 3'",
                                            "aggregated_output": "", "exit_code": 3, "status": "failed"}},
        {"type": "item.completed", "item": {"id": "item_4", "type": "file_change", "status": "completed",
                                            "changes": [{"path": "/w/a.txt", "kind": "update"},
                                                        {"path": "/w/b.txt", "kind": "add"}]}},
        {"type": "item.completed", "item": {"id": "item_5", "type": "mcp_tool_call", "server": "docs", "tool": "lookup",
                                            "arguments": {"q": "x"}, "result": None,
                                            "error": {"message": "timeout"}, "status": "failed"}},
        {"type": "item.started", "item": {"id": "item_6", "type": "command_execution", "command": "sleep 100",
                                          "aggregated_output": "", "status": "in_progress"}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 5}},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}},
        {"type": "error", "message": "stream disconnected"},
    ))
    assert t.format == "codex-exec-json" and t.meta["session_id"] == "th-1"
    assert [e.type for e in t.events] == [THOUGHT, TOOL, AGENT, TOOL, TOOL, TOOL, TOOL, OTHER]
    cat, fail, change, mcp, running = tools(t)
    assert (cat.command, cat.output, cat.status, cat.raw) == ("cat a.txt", "hello\n", "ok", "line 6")
    assert (fail.command, fail.status) == ("exit 3", "failed")
    assert (change.kind, change.paths, change.status) == (EDIT, ("/w/a.txt", "/w/b.txt"), "ok")
    assert (mcp.status, mcp.output) == ("failed", "timeout")
    assert (running.command, running.status) == ("sleep 100", "unknown")
    assert t.meta["usage"] == {"input_tokens": 11, "cached_input_tokens": 0, "output_tokens": 6}
    assert_consecutive(t)


# --------------------------------------------------------------------------- real files


def _raw_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_codex_corpus_file_loads(corpus):
    files = sorted((corpus / "codex").rglob("*.jsonl"))
    assert len(files) >= 20
    for f in files:
        t = load_file(f)
        assert t.format in ("codex-rollout", "codex-exec-json"), f
        assert_consecutive(t)
        assert detect(parse_text(f.read_text(encoding="utf-8"), f)) is codex


def test_real_rollout_matches_raw_file(corpus):
    (path,) = sorted((corpus / "codex" / "agentcmd-fixtures" / "full").glob("rollout-*.jsonl"))
    raw = _raw_lines(path)
    t = load_file(path)
    items = [x["payload"] for x in raw if x["type"] == "response_item"]
    fcalls = [p for p in items if p["type"] == "function_call"]
    calls = tools(t)
    assert len(calls) == len(fcalls) == 34
    # every call's command is the script of its raw arguments, and its status the raw exit code
    outputs = {p["call_id"]: json.loads(p["output"]) for p in items if p["type"] == "function_call_output"}
    for ev, p in zip(calls, fcalls, strict=True):
        argv = json.loads(p["arguments"])["command"]
        assert ev.command == argv[2] and ev.kind == EXECUTE
        code = outputs[p["call_id"]]["metadata"]["exit_code"]
        assert ev.status == ("ok" if code == 0 else "failed")
        assert raw[int(ev.raw.split()[1]) - 1]["payload"]["call_id"] == p["call_id"]
    rg = [e for e in calls if e.command == 'rg "createService" -g"*.ts"']
    assert len(rg) == 1 and rg[0].status == "ok" and "crudIssues.ts" in rg[0].output
    # event_msg duplicates add nothing: one thought per non-empty reasoning summary, one final answer
    summaries = [p for p in items if p["type"] == "reasoning" and p["summary"]]
    assert len([e for e in t.events if e.type == THOUGHT]) == len(summaries)
    assert [e.type for e in t.events].count(AGENT) == 1
    assert [e.type for e in t.events].count(USER) == 2
    assert t.meta["model"] == "gpt-5-codex" and t.meta["session_id"] == raw[0]["payload"]["id"]


def test_real_individual_fixtures(corpus):
    base = corpus / "codex" / "agentcmd-fixtures" / "individual"
    (ev,) = load_file(base / "function-shell-bash.jsonl").events
    assert (ev.kind, ev.command) == (EXECUTE, 'rg "TeamSheet"')
    (plan,) = load_file(base / "function-update_plan.jsonl").events
    assert plan.tool == "update_plan" and plan.kind == "think"
    assert load_file(base / "turn-context.jsonl").meta["model"] == "gpt-5-codex"
    assert [e.type for e in load_file(base / "event-turn-aborted.jsonl").events] == [OTHER]
    assert load_file(base / "event-token-count.jsonl").events == []


def test_real_exec_streams(corpus):
    base = corpus / "codex" / "agentcmd-exec-json-stream"
    t = load_file(base / "stream-output-4.jsonl")
    (cat,) = tools(t)
    assert (cat.command, cat.status, cat.output) == ("cat test.js", "ok", "console.log('Hello World');\n")
    (change,) = tools(load_file(base / "stream-output-3.jsonl"))
    assert change.kind == EDIT and change.paths == ("/private/tmp/codex-research-test/hello.txt",)
    for f in base.glob("*.jsonl"):
        raw = _raw_lines(f)
        ids = {x["item"]["id"] for x in raw if x["type"].startswith("item.")}
        assert len(load_file(f).events) == len(ids)


@pytest.mark.parametrize("lines", [
    [SESSION,
     {"timestamp": "t", "type": ["response_item"], "payload": {}},
     ri({"type": {"x": 1}, "role": ["user"]}),
     ri({"type": "message", "role": ["user"], "content": "not a list"}),
     ri({"type": "function_call", "name": None, "arguments": "{not json", "call_id": {"a": 1}}),
     ri({"type": "function_call_output", "call_id": ["c"], "output": {"content": "x", "success": False}}),
     em({"type": "exec_command_end", "call_id": None, "exit_code": "0"})],
    [{"type": "thread.started", "thread_id": ["x"]},
     {"type": "item.completed", "item": {"id": ["x"], "type": "command_execution", "exit_code": True}},
     {"type": "item.completed", "item": {"id": "i", "type": ["reasoning"]}},
     {"type": "item.updated", "item": {"id": "j", "type": "file_change", "changes": [None, {"path": 3}]}},
     {"type": "turn.completed", "usage": {"input_tokens": "many"}}],
])
def test_hostile_field_types_do_not_crash(lines):
    # called directly: the sniff chain is not under test here
    parsed = parse_text(jl(*lines), "x.jsonl")
    assert codex.sniff(parsed)
    t = codex.load(parsed, "x.jsonl")
    assert_consecutive(t)
