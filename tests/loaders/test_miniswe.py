"""mini-swe-agent *.traj.json → the normalized model."""

from __future__ import annotations

import json
import re

import pytest

from pytest_trajaudit.loaders import chat, miniswe
from pytest_trajaudit.loaders.sniff import detect
from pytest_trajaudit.model import AGENT, EXECUTE, OTHER, THOUGHT, TOOL, USER
from pytest_trajaudit.safeio import parse_text
from tests.helpers import load_file, load_text

SYSTEM = {"role": "system", "content": "You are a helpful assistant that can interact with a computer."}
TASK = {"role": "user", "content": "Please solve this issue: fix division"}


def act(thought: str, command: str, fence: str = "bash") -> dict:
    return {"role": "assistant", "content": f"THOUGHT: {thought}\n\n```{fence}\n{command}\n```"}


def obs(code: int, output: str) -> dict:
    return {"role": "user", "content": f"<returncode>{code}</returncode>\n<output>\n{output}\n</output>"}


def v1(messages: list[dict], **info) -> str:
    base = {"exit_status": "Submitted", "submission": "diff --git a/x b/x\n",
            "model_stats": {"instance_cost": 0.1, "api_calls": 3},
            "config": {"model": {"model_name": "anthropic/claude-sonnet-4"}, "agent": {}}}
    return json.dumps({"info": base | info, "messages": messages, "trajectory_format": "mini-swe-agent-1"})


def tools(traj):
    return [e for e in traj.events if e.type == TOOL]


# --------------------------------------------------------------------------- sniff


@pytest.mark.parametrize("doc", [
    {"trajectory_format": "mini-swe-agent-1.1", "info": {}, "messages": []},
    {"info": {"exit_status": "Submitted"}, "messages": [SYSTEM]},
    [SYSTEM, TASK, act("look", "ls"), obs(0, "a")],
    [SYSTEM, TASK, {"role": "assistant", "content": "x\n```mswea_bash_command\nls\n```"}],
])
def test_sniff_accepts_current_and_legacy_shapes(doc):
    assert miniswe.sniff(parse_text(json.dumps(doc), "t.traj.json"))


@pytest.mark.parametrize("doc", [
    [SYSTEM, TASK, {"role": "assistant", "content": "hello"}],  # a plain chat: no mini-swe-agent markers
    {"trajectory": [], "history": [], "info": {"exit_status": "submitted"}},  # SWE-agent .traj
    {"messages": [TASK]},
    [1, 2, 3],
    [{"content": "<returncode>0</returncode>"}],  # no role
    "text",
])
def test_sniff_rejects_other_shapes(doc):
    assert not miniswe.sniff(parse_text(json.dumps(doc), "t.json"))


def test_plain_chat_list_goes_to_chat_not_miniswe():
    parsed = parse_text(json.dumps([SYSTEM, TASK, {"role": "assistant", "content": "hello"}]), "t.json")
    assert detect(parsed) is chat


# --------------------------------------------------------------------------- v1 / legacy text actions


def test_v1_actions_observations_and_meta():
    t = load_text(v1([
        SYSTEM, TASK,
        act("Let me look around.", "ls -la"),
        obs(0, "total 4\nfile.py"),
        act("Run the tests.", "pytest -q", fence="mswea_bash_command"),
        obs(1, "1 failed"),
        {"role": "assistant", "content": "Two actions:\n```bash\nls\n```\n```bash\npwd\n```"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
        act("Long one.", "sleep 100"),
        {"role": "user", "content": "The last command <command>sleep 100</command> timed out and has been killed.\n"
                                    "The output of the command was:\n<output>\n\n</output>"},
        act("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"),
        {"role": "user", "content": "diff --git a/x b/x\n"},
    ]), "t.traj.json")
    assert t.format == "mini-swe-agent"
    assert t.meta["model"] == "anthropic/claude-sonnet-4"
    assert t.meta["exit_status"] == "Submitted" and t.meta["submission"] == "diff --git a/x b/x\n"
    assert t.meta["model_stats"]["api_calls"] == 3
    types = [e.type for e in t.events]
    assert types == [OTHER, USER, THOUGHT, TOOL, THOUGHT, TOOL, AGENT, USER, THOUGHT, TOOL, THOUGHT, TOOL]
    ls, pytest_, sleep, submit = tools(t)
    assert (ls.kind, ls.command, ls.status, ls.output) == (EXECUTE, "ls -la", "ok", "total 4\nfile.py")
    assert (pytest_.command, pytest_.status, pytest_.output) == ("pytest -q", "failed", "1 failed")
    assert sleep.status == "failed"
    assert submit.status == "unknown" and submit.output == "diff --git a/x b/x\n"
    assert t.events[2].text == "Let me look around."  # the THOUGHT prose, without the block
    assert ls.raw == "messages[2]"
    assert [e.index for e in t.events] == list(range(len(t.events)))


def test_legacy_list_infers_submission_and_observation_prefix():
    t = load_text(json.dumps([
        SYSTEM, TASK,
        act("first", "cat a.py"),
        {"role": "user", "content": "Observation: {'output': 'x = 1\\n', 'returncode': 0}"},
        act("second", "grep -r foo ."),
        {"role": "user", "content": "Observation: nothing"},
        act("done", "echo MINI_SWE_AGENT_FINAL_OUTPUT"),
        {"role": "user", "content": "final patch"},
    ]), "legacy.traj.json")
    assert t.meta["legacy"] is True
    cat, grep, done = tools(t)
    assert cat.status == "ok"
    assert (grep.status, grep.output) == ("unknown", "nothing")
    assert t.meta["submission"] == "final patch" and t.meta["exit_status"] == "Submitted"
    assert done.command == "echo MINI_SWE_AGENT_FINAL_OUTPUT"


def test_info_submission_wins_over_inferred_one():
    t = load_text(v1([SYSTEM, TASK, act("s", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
                      {"role": "user", "content": "other"}], submission="from info"), "t.traj.json")
    assert t.meta["submission"] == "from info"


# --------------------------------------------------------------------------- v2 (1.1): extra + tool calls


def test_v2_toolcalls_extra_returncode_and_exit_message():
    doc = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"exit_status": "", "submission": "", "config": {"model": {"model_name": "openai/gpt-5-mini"}}},
        "messages": [
            SYSTEM, TASK,
            {"role": "assistant", "content": "I'll list and test.",
             "tool_calls": [
                 {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
                 {"id": "call_b", "type": "function",
                  "function": {"name": "bash", "arguments": '{"command": "pytest"}'}}],
             "extra": {"actions": [{"command": "ls", "tool_call_id": "call_a"},
                                   {"command": "pytest", "tool_call_id": "call_b"}]}},
            {"role": "tool", "tool_call_id": "call_b", "content": '{"returncode": 1, "output": "E fail"}',
             "extra": {"raw_output": "E fail", "returncode": 1}},
            {"role": "tool", "tool_call_id": "call_a", "content": '{"returncode": 0, "output": "a.py"}',
             "extra": {"raw_output": "a.py", "returncode": 0}},
            {"role": "assistant", "content": "Submitting.",
             "extra": {"actions": [{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}]}},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>",
             "extra": {"raw_output": "", "returncode": 0}},
            {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": "patch"}},
        ],
    }
    t = load_text(json.dumps(doc), "v2.traj.json")
    ls, pytest_, submit = tools(t)
    assert (ls.command, ls.status, ls.output) == ("ls", "ok", "a.py")
    assert (pytest_.command, pytest_.status, pytest_.output) == ("pytest", "failed", "E fail")
    assert submit.status == "ok"
    assert t.events[-1].type == OTHER
    assert t.meta["exit_status"] == "Submitted" and t.meta["submission"] == "patch"
    assert t.meta["model"] == "openai/gpt-5-mini"


# --------------------------------------------------------------------------- real files


def test_real_files_match_raw(corpus):
    for name in ("github_issue.traj.json", "local.traj.json"):
        path = corpus / "mini-swe-agent" / name
        raw = json.loads(path.read_text(encoding="utf-8"))
        t = load_file(path)
        assert t.format == "mini-swe-agent" and t.meta["legacy"] is True
        actions = [m for m in raw if m["role"] == "assistant"
                   and len(re.findall(r"```mswea_bash_command\n", m["content"])) == 1]
        calls = tools(t)
        assert len(calls) == len(actions) > 0
        for ev in calls:
            i = int(ev.raw.strip("[]"))
            assert ev.command in raw[i]["content"]
            m = re.match(r"<returncode>(-?\d+)</returncode>", raw[i + 1]["content"])
            expected = "unknown" if m is None else ("ok" if m.group(1) == "0" else "failed")
            assert ev.status == expected
        assert calls[-1].command.startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
        assert t.meta["submission"] == raw[-1]["content"]


def test_real_github_issue_spot_checks(corpus):
    t = load_file(corpus / "mini-swe-agent" / "github_issue.traj.json")
    first = tools(t)[0]
    assert first.command == "cat /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py"
    assert first.status == "failed" and "No such file or directory" in first.output
    run = [e for e in tools(t) if e.command == "python3 tests/missing_colon.py"]
    assert len(run) == 1 and run[0].status == "ok" and run[0].output == "8.2"
    assert t.events[1].type == USER and t.events[1].text.startswith("Please solve this issue")


def test_hostile_field_types_do_not_crash():
    t = load_text(json.dumps({"trajectory_format": "mini-swe-agent-1.1", "info": {"config": ["x"]}, "messages": [
        SYSTEM, "not a dict", {"role": ["assistant"], "content": 3},
        {"role": "assistant", "content": [{"type": "text", "text": "x\n```bash\nls\n```"}],
         "extra": {"actions": [{"command": None}, 5]}, "tool_calls": "nope"},
        {"role": "tool", "tool_call_id": {"a": 1}, "content": None, "extra": {"returncode": "0"}},
        {"type": ["function_call_output"], "call_id": ["x"]},
        {"role": "exit", "extra": []},
    ]}), "t.traj.json")
    assert [e.index for e in t.events] == list(range(len(t.events)))
    (ls,) = tools(t)
    assert ls.command == "ls" and ls.status == "unknown"
