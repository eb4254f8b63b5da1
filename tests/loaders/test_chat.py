"""Generic chat message lists and Terminus episode dumps → the normalized model."""

from __future__ import annotations

import json

import pytest

from pytest_trajaudit.loaders import chat, miniswe
from pytest_trajaudit.loaders.sniff import detect
from pytest_trajaudit.model import AGENT, EXECUTE, OTHER, READ, SKILL, THOUGHT, TOOL, USER, UnusableInput
from pytest_trajaudit.safeio import parse_text
from tests.helpers import load_file, load_text

TERMINUS_TRIAL = (
    "harbor/Lizhengxi25__skillsbench_trajectory_viewer/public/harbor-jobs/2026-03-12__23-23-51/"
    "3d-scan-calc__zH4ghhd/agent/trajectory.json"
)


def tools(traj):
    return [e for e in traj.events if e.type == TOOL]


def parsed(doc):
    return parse_text(json.dumps(doc), "t.json")


# --------------------------------------------------------------------------- sniff


@pytest.mark.parametrize("doc", [
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], "model": "m"},
    [{"episode": 0, "prompt": "p", "response": "r"}],
    [{"role": "user", "content": "x"}, {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}],
])
def test_sniff_accepts_chat_and_episode_lists(doc):
    assert chat.sniff(parsed(doc))


@pytest.mark.parametrize("doc", [
    [],
    [1, 2, 3],
    ["user", "assistant"],
    [{"a": 1}, {"b": 2}],
    [{"role": "user", "content": "x"}, {"source": "agent", "action": "run"}],  # one item is not a message
    [{"role": "narrator", "content": "x"}],  # no known role at all
    [{"id": 1, "source": "agent", "message": "m", "action": "run", "args": {}}],  # OpenHands events
    [{"prompt": "p"}],  # half an episode
    {"messages": []},
    {"history": [{"role": "user", "content": "x"}]},
    {"trajectory_format": "mini-swe-agent-1.1", "messages": [{"role": "user", "content": "x"}]},
    {"a": 1},
])
def test_sniff_rejects_everything_else(doc):
    assert not chat.sniff(parsed(doc))


def test_unknown_list_is_unusable_not_a_chat():
    with pytest.raises(UnusableInput, match="no known trajectory format"):
        load_text(json.dumps([{"a": 1}, {"b": 2}]), "t.json")


def test_marked_list_goes_to_miniswe_and_text_is_not_json():
    doc = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "x\n```bash\nls\n```"},
           {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"}]
    assert detect(parsed(doc)) is miniswe
    assert not chat.sniff(parse_text("role: user\n", "t.txt"))


# --------------------------------------------------------------------------- chat dialects


def test_openai_tool_calls_merge_results_by_id():
    t = load_text(json.dumps({"model": "gpt-4o", "messages": [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Fix it"},
        {"role": "assistant", "content": None, "reasoning_content": "think first",
         "tool_calls": [
             {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'}},
             {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "x = 1"},
        {"role": "tool", "tool_call_id": "c1", "content": "Exit code: 1\n2 failed"},
        {"role": "assistant", "content": "Fixed."},
    ]}), "t.json")
    assert t.format == "chat-messages" and t.meta["model"] == "gpt-4o"
    assert [e.type for e in t.events] == [OTHER, USER, THOUGHT, TOOL, TOOL, AGENT]
    bash, read = tools(t)
    assert (bash.kind, bash.command, bash.status, bash.output) == (EXECUTE, "pytest -q", "failed", "Exit code: 1\n2 failed")
    assert (read.kind, read.paths, read.output, read.status) == (READ, ("a.py",), "x = 1", "ok")
    assert bash.raw == "messages[2].tool_calls[0]" and t.events[5].raw == "messages[5]"
    assert [e.index for e in t.events] == list(range(len(t.events)))


def test_anthropic_blocks_tool_use_and_tool_result():
    t = load_text(json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "Run the tests"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Running."},
            {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "make test"}},
            {"type": "tool_use", "id": "tu2", "name": "Read", "input": {"file_path": "/w/a.py"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "boom", "is_error": True},
            {"type": "tool_result", "tool_use_id": "tu2", "content": [{"type": "text", "text": "src"}],
             "is_error": False}]},
    ]), "t.json")
    assert [e.type for e in t.events] == [USER, THOUGHT, AGENT, TOOL, TOOL]
    bash, read = tools(t)
    assert (bash.command, bash.status, bash.output) == ("make test", "failed", "boom")
    assert (read.paths, read.status, read.output) == (("/w/a.py",), "ok", "src")
    assert bash.raw == "[1].content[2]"


def test_legacy_function_role_gemini_parts_and_responses_items():
    t = load_text(json.dumps([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "function_call": {"name": "bash", "arguments": '{"command": "ls"}'}},
        {"role": "function", "name": "bash", "content": "a.py"},
        {"role": "model", "parts": [{"functionCall": {"name": "run_command", "args": {"command": "pwd"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_command", "response": {"output": "/w"}}}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command": ["bash", "-lc", "whoami"]}',
         "call_id": "r1"},
        {"type": "function_call_output", "call_id": "r1", "output": "root"},
    ]), "t.json")
    ls, pwd, who = tools(t)
    assert (ls.command, ls.output) == ("ls", "a.py")
    assert (pwd.command, pwd.output) == ("pwd", "/w")
    assert (who.command, who.output) == ("whoami", "root")


# --------------------------------------------------------------------------- terminus


def test_terminus_episodes_json_prose_and_xml():
    resp1 = json.dumps({"analysis": "a", "plan": "p", "commands": [
        {"keystrokes": "ls -la\n", "duration": 0.1}, {"keystrokes": "cat x\n", "duration": 0.1}],
        "task_complete": False})
    resp2 = "Let me look.\n```json\n" + json.dumps({"analysis": "b", "commands": [{"keystrokes": "C-c"}]}) + "\n```"
    resp3 = "<response><analysis>x</analysis><commands><keystrokes duration=\"1\">make\n</keystrokes></commands></response>"
    t = load_text(json.dumps([
        {"episode": 0, "prompt": "Task: do it\n$ ", "response": '{"load_skill": "pdf"}'},
        {"episode": 0, "prompt": "Loaded skill: pdf\n...", "response": resp1},
        {"episode": 1, "prompt": "New Terminal Output:\nfiles", "response": resp2},
        {"episode": 2, "prompt": "New Terminal Output:\n^C", "response": resp3},
        {"episode": 3, "prompt": "New Terminal Output:\nok", "response": json.dumps({"commands": [], "task_complete": True})},
    ]), "trajectory.json")
    assert t.format == "terminus-episodes" and t.meta["task_complete"] is True
    skill, *keys = tools(t)
    assert (skill.kind, skill.status, skill.tool) == (SKILL, "ok", "load_skill") and "pdf" in skill.args
    assert [(e.kind, e.command, e.status) for e in keys] == [
        (EXECUTE, "ls -la", "unknown"), (EXECUTE, "cat x", "unknown"), (EXECUTE, "C-c", "unknown"),
        (EXECUTE, "make", "unknown")]
    assert t.events[0].type == USER and t.events[1].type == AGENT
    assert keys[0].raw == "[1].response.commands[0]"
    assert [e.index for e in t.events] == list(range(len(t.events)))


def test_terminus_response_that_is_not_json_is_just_a_message():
    t = load_text(json.dumps([{"episode": 0, "prompt": "p", "response": "I am not sure {what} to do"}]), "t.json")
    assert [e.type for e in t.events] == [USER, AGENT]


# --------------------------------------------------------------------------- real file


def test_real_terminus_trial_matches_raw(corpus):
    path = corpus / TERMINUS_TRIAL
    raw = json.loads(path.read_text(encoding="utf-8"))
    t = load_file(path)
    assert t.format == "terminus-episodes"
    n_keys = sum(json.dumps(ep["response"]).count('\\"keystrokes\\"') for ep in raw)
    execs = [e for e in tools(t) if e.kind == EXECUTE]
    assert len(execs) == n_keys == 5
    assert execs[0].command == "cat /root/material_density_table.md" and execs[0].status == "unknown"
    # the response with prose before its JSON still yields its command
    assert any(e.command.startswith("sed -n '1,200p' /root/.claude/skills/mesh-analysis") for e in execs)
    (skill,) = [e for e in tools(t) if e.kind == SKILL]
    assert "mesh-analysis" in skill.args and skill.status == "ok"
    assert [e.text for e in t.events if e.type == USER] == [ep["prompt"] for ep in raw]
    assert t.meta["task_complete"] is True


def test_hostile_field_types_do_not_crash():
    t = load_text(json.dumps([
        {"role": "user", "content": {"weird": True}},
        {"role": "assistant", "content": [1, None, {"type": ["tool_use"]}], "tool_calls": [None, {"function": "x"}]},
        {"role": "tool", "tool_call_id": ["a"], "content": [{"type": "text", "text": "orphan"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": {"x": 1}, "content": 5}]},
        {"type": "function_call", "call_id": ["c"], "name": None, "arguments": 7},
    ]), "t.json")
    assert [e.index for e in t.events] == list(range(len(t.events)))
