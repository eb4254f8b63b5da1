"""Small hand-written seed files, one or more per trajectory format (no corpus data is copied here), plus the
project's own examples. The campaign adds the real corpus (``../shared/corpus``) when it is present."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


def _jl(*lines: object) -> bytes:
    return ("\n".join(json.dumps(x) for x in lines) + "\n").encode()


def _j(doc: object) -> bytes:
    return json.dumps(doc).encode()


_SID = "11111111-2222-3333-4444-555555555555"

# name -> (file name the seed is usually found under, content)
INLINE: dict[str, tuple[str, bytes]] = {
    "acp": ("acp_trajectory.jsonl", _jl(
        {"type": "user_message", "text": "do x"},
        {"type": "agent_thought", "text": "plan"},
        {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": "Read /oracle/solve.sh",
         "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "echo 42"}}]},
        {"type": "tool_call", "tool_call_id": "t2", "kind": "execute", "title": "Terminal", "status": "failed",
         "rawInput": {"command": "pip install pytest "}, "content": []},
        {"type": "agent_message", "text": "done"})),
    "claude-stream": ("claude-code.txt", _jl(
        {"type": "system", "subtype": "init", "cwd": "/app", "session_id": _SID, "model": "claude-test-1",
         "tools": ["Bash", "Read"], "skills": ["pdf"], "uuid": "u0"},
        {"type": "assistant", "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-test-1",
                                          "content": [{"type": "text", "text": "Let me look"},
                                                      {"type": "tool_use", "id": "tu1", "name": "Bash",
                                                       "input": {"command": "cat /app/tests/conftest.py"}}]},
         "parent_tool_use_id": None, "session_id": _SID, "uuid": "u1"},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "x", "is_error": False}]},
         "parent_tool_use_id": None, "session_id": _SID, "uuid": "u2"},
        {"type": "result", "subtype": "success", "result": "done", "session_id": _SID})),
    "claude-session": ("session.jsonl", _jl(
        {"type": "user", "sessionId": _SID, "uuid": "a", "isSidechain": False,
         "message": {"role": "user", "content": "fix it"}},
        {"type": "assistant", "sessionId": _SID, "uuid": "b", "isSidechain": False,
         "message": {"role": "assistant", "model": "claude-x", "content": [
             {"type": "tool_use", "id": "tu1", "name": "Read", "input": {"file_path": "/app/a.py"}}]}},
        {"type": "user", "sessionId": _SID, "uuid": "c", "isSidechain": False,
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "1 a"}]},
         "toolUseResult": {"type": "text"}})),
    "codex-rollout": ("rollout.jsonl", _jl(
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cwd": "/repo", "originator": "codex_cli_rs"}},
        {"timestamp": "t", "type": "turn_context", "payload": {"cwd": "/repo", "model": "gpt-5-codex"}},
        {"timestamp": "t", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                                                                "arguments": json.dumps({"command": ["bash", "-lc", "ls"]})}},
        {"timestamp": "t", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1",
            "output": json.dumps({"output": "a\n", "metadata": {"exit_code": 0, "duration_seconds": 0.1}})}})),
    "codex-exec": ("exec.jsonl", _jl(
        {"type": "thread.started", "thread_id": "x"}, {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i1", "type": "command_execution", "command": "bash -lc ls",
                                            "aggregated_output": "a", "exit_code": 0, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 1}})),
    "atif": ("trajectory.json", _j({
        "schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "claude-code", "model_name": "m"},
        "steps": [{"step_id": 1, "source": "user", "message": "Fix the bug"},
                  {"step_id": 2, "source": "agent", "message": "x", "reasoning_content": "null",
                   "tool_calls": [{"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "ls"}}],
                   "observation": {"results": [{"source_call_id": "c1", "content": "a"}]},
                   "extra": {"tool_result_is_error": False}}]})),
    "miniswe": ("x.traj.json", _j({
        "info": {"exit_status": "Submitted", "submission": "diff", "config": {"model": {"model_name": "m"}}},
        "messages": [{"role": "system", "content": "You are a helpful assistant."},
                     {"role": "user", "content": "Please solve this issue"},
                     {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
                     {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"}],
        "trajectory_format": "mini-swe-agent-1"})),
    "sweagent": ("inst.traj", _j({
        "environment": "main", "trajectory": [
            {"action": "open /app/a.py", "observation": "[File: /app/a.py]", "response": "look", "thought": "look",
             "state": {"open_file": "/app/a.py", "working_dir": "/repo"}},
            {"action": "submit", "observation": "diff", "response": "done", "thought": "done", "state": "{}"}],
        "history": [{"role": "system", "content": "SETTING: You are an autonomous programmer", "agent": "primary"},
                    {"role": "user", "content": "We're currently solving the following issue", "agent": "primary"}],
        "info": {"exit_status": "submitted", "submission": "diff", "model_stats": {}}})),
    "openhands-events": ("events.json", _j([
        {"id": 0, "timestamp": "t", "source": "user", "message": "", "action": "message", "args": {"content": "fix"}},
        {"id": 1, "timestamp": "t", "source": "agent", "message": "", "action": "run",
         "args": {"command": "cat /oracle/x", "thought": "t"},
         "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "c1"}},
        {"id": 2, "timestamp": "t", "source": "agent", "message": "", "observation": "run", "cause": 1,
         "content": "42", "extras": {"command": "", "metadata": {"exit_code": 0}}}])),
    "openhands-output": ("output.jsonl", _jl(
        {"instance_id": "django__django-1", "instruction": "fix", "history": [
            {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}, "message": ""},
            {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": "a", "extras": {}}],
         "test_result": {"git_patch": ""}, "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "m"}}},
        {"instance_id": "django__django-2", "instruction": "fix", "history": [],
         "test_result": {}, "metadata": {}})),
    "inspect": ("log.json", _j({
        "version": 2, "status": "success", "eval": {"task": "t", "model": "openai/gpt-x", "run_id": "r"},
        "samples": [{"id": 1, "epoch": 1, "input": "Do the task", "target": "42",
                     "messages": [{"role": "user", "content": "Do the task"},
                                  {"role": "assistant", "content": "ok", "tool_calls": [
                                      {"id": "t1", "function": "bash", "arguments": {"cmd": "ls"}}]},
                                  {"role": "tool", "tool_call_id": "t1", "content": "a"}],
                     "events": [], "scores": {"match": {"value": "C"}}}]})),
    "traces": ("traces.json", _j({"tasks": [{"task": "T1", "runs": [{"run_id": "r1", "ok": True, "steps": [
        {"step": 1, "tool": "read", "args": {"path": "a.py"}, "observation": "ok", "ok": True},
        {"step": 2, "tool": "Edit", "args": {"file_path": "a.py"}, "ok": False}]}]}]})),
    "hooklib": ("audit.jsonl", _jl(
        {"ts": "t", "event": "PreToolUse", "session_id": "s1", "tool_name": "Edit", "file_path": "/a.py"},
        {"ts": "t", "event": "PostToolUse", "session_id": "s1", "tool_name": "Edit", "file_path": "/a.py"},
        {"ts": "t", "event": "PreToolUse", "session_id": "s2", "tool_name": "Bash", "command": "ls"})),
    "chat": ("messages.json", _j([
        {"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "assistant", "content": "done"}])),
    "transcript": ("run.md", (
        b"# run\n\n```json\n{\"model\": \"m\", \"task_id\": \"t1\"}\n```\n\n### USER / HARNESS\n\n````\nDo x.\n"
        b"```\n>>> f(1)\n2\n```\n````\n\n### ASSISTANT\n\nLooking.\n\n### TOOL CALL: run_bash\n\n```json\n"
        b"{\"cmd\": \"cat /oracle/solve.sh\"}\n```\n\n### TOOL RESULT\n\n```\necho 42\n```\n\n"
        b"### FINAL /app/a.py\n\n```python\nx = 1\n```\n\n### SCORER\n\nvalue: C\n")),
    "ccexport": ("session.txt", (
        "> fix it\n\n\u23fa I'll look.\n\n\u23fa Bash(cat /oracle/so\n      lve.sh)\n  \u23bf  echo 42\n\n"
        "\u23fa Update(a.py)\n  \u23bf  Updated a.py with 1 addition\n").encode()),
    "text": ("transcript.txt", b"$ ls\na b\n$ cat /oracle/solve.sh\necho 42\n"),
    "result": ("result.json", _j({
        "task_name": "t", "trial_name": "t__1", "config": {"agent": {"name": "claude-code", "model_name": "m"}},
        "verifier_result": {"rewards": {"reward": 0.5}}, "agent_result": {"n_tool_calls": 3, "cost_usd": 0.1},
        "exception_info": {"exception_type": "E", "exception_message": "m"},
        "agent_execution": {"started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z"}})),
    "ctrf": ("ctrf.json", _j({"results": {"summary": {"tests": 2, "passed": 1, "failed": 1},
                                           "tests": [{"name": "test_a", "status": "failed", "message": "boom"}]}})),
}


def example_files() -> dict[str, tuple[str, bytes]]:
    """The project's own example job files (``examples/runs``)."""
    out = {}
    root = REPO / "examples" / "runs"
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and p.stat().st_size <= 256 * 1024:
            out[f"example:{p.relative_to(root)}"] = (p.name, p.read_bytes())
    return out


CORPUS_SUFFIXES = (".json", ".jsonl", ".txt", ".traj", ".eval")


def corpus_files(max_bytes: int = 512 * 1024) -> dict[str, tuple[str, bytes]]:
    """Real files of ``../shared/corpus`` up to ``max_bytes`` (empty when the corpus is absent)."""
    out = {}
    if not CORPUS.is_dir():
        return out
    for p in sorted(CORPUS.rglob("*")):
        try:
            if p.is_symlink() or not p.is_file() or not p.name.endswith(CORPUS_SUFFIXES):
                continue
            if p.stat().st_size > max_bytes:
                continue
            out[f"corpus:{p.relative_to(CORPUS)}"] = (p.name, p.read_bytes())
        except OSError:
            continue
    return out


def all_seeds(*, corpus: bool = False) -> dict[str, tuple[str, bytes]]:
    seeds = dict(INLINE)
    seeds.update(example_files())
    if corpus:
        seeds.update(corpus_files())
    return seeds
