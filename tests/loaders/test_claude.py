"""Claude Code loaders: stream-json (``agent/claude-code.txt``) and native session transcripts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_trajaudit.loaders import claude
from pytest_trajaudit.loaders.common import OUTPUT_CLIP, clip
from pytest_trajaudit.loaders.sniff import load_trajectory
from pytest_trajaudit.model import AGENT, OTHER, THOUGHT, TOOL, USER
from pytest_trajaudit.safeio import decode_text, parse_text
from tests.helpers import load_file, load_text

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def jl(*lines: dict) -> str:
    return "\n".join(json.dumps(x) for x in lines) + "\n"


# --- stream-json fixtures -------------------------------------------------------------------------------------

SID = "11111111-2222-3333-4444-555555555555"


def init(**kw) -> dict:
    d = {"type": "system", "subtype": "init", "cwd": "/app", "session_id": SID, "model": "claude-test-1",
         "tools": ["Bash", "Read", "Skill"], "skills": ["pdf", "xlsx"], "claude_code_version": "2.1.0",
         "uuid": "u0"}
    d.update(kw)
    return d


def asst(mid: str, *blocks: dict, parent: str | None = None) -> dict:
    return {"type": "assistant", "message": {"id": mid, "type": "message", "role": "assistant", "model": "claude-test-1",
                                             "content": list(blocks)},
            "parent_tool_use_id": parent, "session_id": SID, "uuid": "u"}


def result_of(tid: str, content, is_error: bool = False, parent: str | None = None) -> dict:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": is_error}]},
        "parent_tool_use_id": parent, "session_id": SID, "uuid": "u"}


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def thinking(t: str) -> dict:
    return {"type": "thinking", "thinking": t, "signature": "sig"}


def use(tid: str, name: str, **inp) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def final(result: str, is_error: bool = False) -> dict:
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": result, "num_turns": 2,
            "total_cost_usd": 0.25, "usage": {"input_tokens": 10, "output_tokens": 5}, "session_id": SID}


def test_stream_json_merges_one_message_split_over_lines():
    t = load_text(jl(
        init(),
        asst("msg_1", thinking("Look at the repo first.")),
        asst("msg_1", text("I'll list the files.")),
        asst("msg_1", use("toolu_1", "Bash", command="ls -la /app", description="list")),
        result_of("toolu_1", "total 0\nREADME.md"),
        asst("msg_2", text("Done: the repo has a README.")),
        final("Done: the repo has a README."),
    ))
    assert t.format == "claude-stream-json"
    assert [e.type for e in t.events] == [THOUGHT, AGENT, TOOL, AGENT]
    assert [e.index for e in t.events] == [0, 1, 2, 3]
    bash = t.events[2]
    assert (bash.tool, bash.kind, bash.command, bash.status) == ("Bash", "execute", "ls -la /app", "ok")
    assert "README.md" in bash.output
    assert bash.raw.startswith("line 4")
    assert t.events[0].raw == "line 2" and t.events[0].text == "Look at the repo first."
    assert t.meta["model"] == "claude-test-1"
    assert t.meta["cwd"] == "/app"
    assert t.meta["session_id"] == SID
    assert t.meta["skills"] == ["pdf", "xlsx"]
    assert t.meta["final_result"] == "Done: the repo has a README."
    assert t.meta["is_error"] is False and t.meta["complete"] is True
    assert t.meta["total_cost_usd"] == 0.25
    # the result text equals the last assistant text: no extra message is appended
    assert sum(e.type == AGENT for e in t.events) == 2


def test_stream_json_parallel_calls_keep_block_order_and_match_results_by_id():
    t = load_text(jl(
        init(),
        asst("msg_1", use("toolu_a", "Read", file_path="/app/a.py")),
        result_of("toolu_a", "print('a')"),
        asst("msg_1", use("toolu_b", "Read", file_path="/app/b.py")),
        result_of("toolu_b", [{"type": "text", "text": "print('b')"}]),
        asst("msg_1", use("toolu_a", "Read", file_path="/app/a.py")),  # a repeated block is not a second call
    ))
    tools = t.tool_calls()
    assert [e.paths for e in tools] == [("/app/a.py",), ("/app/b.py",)]
    assert [e.output for e in tools] == ["print('a')", "print('b')"]
    assert all(e.kind == "read" and e.status == "ok" for e in tools)
    assert t.meta["complete"] is False


def test_stream_json_adjacent_text_blocks_of_one_message_become_one_event():
    t = load_text(jl(init(), asst("m", text("first part")), asst("m", text("\n\n")), asst("m", text("second part"))))
    assert [(e.type, e.text) for e in t.events] == [(AGENT, "first part\nsecond part")]


def test_stream_json_error_result_is_failed_and_missing_result_is_unknown():
    t = load_text(jl(
        init(),
        asst("m1", use("toolu_1", "Bash", command="pytest -q")),
        result_of("toolu_1", "Exit code 1\nFAILED test_x", is_error=True),
        asst("m2", use("toolu_2", "Bash", command="sleep 999")),
    ))
    first, second = t.tool_calls()
    assert (first.command, first.status) == ("pytest -q", "failed")
    assert "FAILED test_x" in first.output
    assert (second.command, second.status, second.output) == ("sleep 999", "unknown", "")


def test_stream_json_killed_agent_without_result_line_still_loads():
    t = load_text(jl(init(), asst("m1", text("Starting.")), asst("m1", use("toolu_1", "Bash", command="make"))))
    assert t.meta["complete"] is False
    assert "final_result" not in t.meta
    assert [e.type for e in t.events] == [AGENT, TOOL]
    assert t.events[-1].status == "unknown"


def test_stream_json_subagent_lines_are_sidechain():
    t = load_text(jl(
        init(),
        asst("m1", use("toolu_task", "Task", description="explore", prompt="Find tests", subagent_type="Explore")),
        {"type": "user", "message": {"role": "user", "content": [text("Find tests")]},
         "parent_tool_use_id": "toolu_task", "session_id": SID},
        asst("s1", use("toolu_sub", "Grep", pattern="def test_", path="/app"), parent="toolu_task"),
        result_of("toolu_sub", "/app/tests/test_a.py", parent="toolu_task"),
        asst("s2", text("Tests are in /app/tests."), parent="toolu_task"),
        result_of("toolu_task", [text("Tests are in /app/tests.")]),
        asst("m2", text("Found them.")),
        final("Found them."),
    ))
    by_tool = {e.tool: e for e in t.tool_calls()}
    assert by_tool["Task"].sidechain is False and by_tool["Task"].kind == "think"
    assert by_tool["Task"].status == "ok"
    assert by_tool["Grep"].sidechain is True and by_tool["Grep"].kind == "search"
    side = [e for e in t.events if e.sidechain]
    assert [e.type for e in side] == [USER, TOOL, AGENT]
    assert t.tool_calls(include_sidechain=False) == [by_tool["Task"]]
    assert [e.text for e in t.events if e.type == AGENT and not e.sidechain] == ["Found them."]


def test_stream_json_final_text_only_in_result_line_is_appended():
    t = load_text(jl(
        init(),
        asst("m1", use("toolu_1", "Write", file_path="/app/out.txt", content="42")),
        result_of("toolu_1", "File created successfully at: /app/out.txt"),
        final("All done, the answer is 42."),
    ))
    assert t.events[-1].type == AGENT
    assert t.events[-1].text == "All done, the answer is 42."
    assert t.events[-1].raw == "line 4"
    assert t.events[0].kind == "edit" and t.events[0].paths == ("/app/out.txt",)


def test_stream_json_tool_kinds_follow_common_mapping():
    names = {"Bash": {"command": "echo hi"}, "Read": {"file_path": "/a"}, "Write": {"file_path": "/b", "content": ""},
             "Edit": {"file_path": "/c", "old_string": "x", "new_string": "y"}, "Grep": {"pattern": "x"},
             "Glob": {"pattern": "*.py"}, "WebFetch": {"url": "https://example.com", "prompt": "p"},
             "Task": {"prompt": "p"}, "TodoWrite": {"todos": []}, "Skill": {"skill": "pdf"}}
    lines = [init()] + [asst(f"m{i}", use(f"t{i}", n, **a)) for i, (n, a) in enumerate(names.items())]
    t = load_text(jl(*lines))
    kinds = {e.tool: e.kind for e in t.tool_calls()}
    assert kinds == {"Bash": "execute", "Read": "read", "Write": "edit", "Edit": "edit", "Grep": "search",
                     "Glob": "search", "WebFetch": "fetch", "Task": "think", "TodoWrite": "think", "Skill": "skill"}
    bash = t.tool_calls()[0]
    assert bash.command == "echo hi" and '"command"' in bash.args


def test_single_line_stream_json_is_a_claude_file():
    t = load_text(json.dumps(init()))
    assert t.format == "claude-stream-json"
    assert t.events == [] and t.meta["skills"] == ["pdf", "xlsx"]


# --- session transcript fixtures ------------------------------------------------------------------------------

SESSION = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"


def sline(kind: str, content, *, side: bool = False, mid: str | None = None, **extra) -> dict:
    msg: dict = {"role": kind, "content": content}
    if kind == "assistant":
        msg.update({"id": mid or "msg_x", "type": "message", "model": "claude-sess-1"})
    d = {"parentUuid": None, "isSidechain": side, "userType": "external", "cwd": "/work/proj", "sessionId": SESSION,
         "version": "2.0.50", "gitBranch": "main", "type": kind, "message": msg, "uuid": "u",
         "timestamp": "2026-01-01T00:00:00Z"}
    d.update(extra)
    return d


def test_session_transcript_basic():
    t = load_text(jl(
        {"type": "summary", "summary": "Fix the parser", "leafUuid": "x"},
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False},
        sline("user", "Please fix the parser"),
        sline("assistant", [thinking("Read it first")], mid="msg_1"),
        sline("assistant", [use("toolu_1", "Read", file_path="/work/proj/parser.py")], mid="msg_1"),
        sline("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "1\u2192def parse(): ..."}],
              toolUseResult={"type": "text", "file": {"filePath": "/work/proj/parser.py"}}),
        {"type": "system", "subtype": "turn_duration", "sessionId": SESSION, "isSidechain": False, "durationMs": 5},
        sline("assistant", [text("Fixed.")], mid="msg_2"),
    ))
    assert t.format == "claude-session"
    assert [e.type for e in t.events] == [USER, THOUGHT, TOOL, AGENT]
    read = t.events[2]
    assert (read.kind, read.paths, read.status, read.raw) == ("read", ("/work/proj/parser.py",), "ok", "line 5 (result: line 6)")
    assert "def parse" in read.output
    assert t.meta["session_id"] == SESSION
    assert t.meta["cwd"] == "/work/proj"
    assert t.meta["model"] == "claude-sess-1"
    assert t.meta["agent"] == "claude-code" and t.meta["agent_version"] == "2.0.50"
    assert t.meta["summaries"] == ["Fix the parser"]


def test_session_sidechain_lines_are_kept_and_marked():
    t = load_text(jl(
        sline("user", "Go"),
        sline("assistant", [use("toolu_t", "Task", prompt="look")], mid="m1"),
        sline("user", "look", side=True),
        sline("assistant", [use("toolu_s", "Bash", command="git log -1")], side=True, mid="m2"),
        sline("user", [{"type": "tool_result", "tool_use_id": "toolu_s", "content": "boom", "is_error": True}], side=True),
        sline("user", [{"type": "tool_result", "tool_use_id": "toolu_t", "content": "done"}]),
    ))
    sub = [e for e in t.events if e.sidechain]
    assert [(e.type, e.command, e.status) for e in sub] == [(USER, "", "unknown"), (TOOL, "git log -1", "failed")]
    assert [e.tool for e in t.tool_calls(include_sidechain=False)] == ["Task"]


def test_session_agent_progress_lines_become_sidechain_events():
    inner_asst = {"type": "assistant", "message": {"id": "msg_sub", "role": "assistant", "model": "claude-haiku",
                                                   "content": [use("toolu_p", "WebSearch", query="x")]}}
    inner_user = {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_p", "content": "results"}]}}
    prog = {"type": "progress", "sessionId": SESSION, "isSidechain": False, "parentToolUseID": "toolu_t",
            "uuid": "p"}
    t = load_text(jl(
        sline("assistant", [use("toolu_t", "Task", prompt="search")], mid="m1"),
        {**prog, "data": {"type": "hook_progress", "hookEvent": "PreToolUse"}},
        {**prog, "data": {"type": "agent_progress", "message": inner_asst, "prompt": "search"}},
        {**prog, "data": {"type": "agent_progress", "message": inner_user, "prompt": "search"}},
        sline("user", [{"type": "tool_result", "tool_use_id": "toolu_t", "content": "ok"}]),
    ))
    web = [e for e in t.tool_calls() if e.tool == "WebSearch"]
    assert len(web) == 1 and web[0].sidechain and web[0].status == "ok" and web[0].output == "results"
    assert t.meta["model"] == "claude-sess-1"  # a subagent's model is not the run's model


def test_session_meta_messages_and_orphan_results_are_other_events():
    t = load_text(jl(
        sline("user", "<local-command-caveat>Caveat: generated by local commands</local-command-caveat>", isMeta=True),
        sline("user", [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "late answer"}]),
        sline("user", "real request"),
    ))
    assert [e.type for e in t.events] == [OTHER, USER, OTHER]
    assert "toolu_gone" in t.events[2].text
    assert t.meta["orphan_tool_results"] == 1


def test_session_subagent_file_is_sidechain_only():
    t = load_text(jl(sline("user", "Warmup", side=True, agentId="a1"),
                     sline("assistant", [text("Ready.")], side=True, mid="m", agentId="a1")))
    assert t.format == "claude-session"
    assert all(e.sidechain for e in t.events) and t.meta["sidechain_only"] is True
    assert t.meta["agent_id"] == "a1"


# --- sniff ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "lines",
    [
        # ACP
        [{"type": "user_message", "text": "hi"}, {"type": "tool_call", "tool_call_id": "1", "kind": "read", "title": "Read"}],
        # Codex rollout
        [{"type": "session_meta", "payload": {"id": "x", "cwd": "/"}},
         {"type": "response_item", "payload": {"type": "message", "role": "user", "content": []}}],
        # codex exec --json
        [{"type": "thread.started", "thread_id": "t"}, {"type": "item.completed", "item": {"type": "agent_message"}}],
        # a plain chat list without any Claude Code keys
        [{"type": "user", "message": {"role": "user", "content": "hi"}},
         {"type": "assistant", "message": {"role": "assistant", "content": "yo"}}],
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
    ],
)
def test_sniff_rejects_other_jsonl_shapes(lines):
    assert not claude.sniff(parse_text(jl(*lines), "x.jsonl"))


def test_sniff_rejects_json_documents_and_text():
    assert not claude.sniff(parse_text('{"schema_version": "ATIF-v1.2", "steps": []}', "t.json"))
    assert not claude.sniff(parse_text("[1, 2]", "t.json"))
    assert not claude.sniff(parse_text("plain text log", "t.txt"))


# --- real corpus ----------------------------------------------------------------------------------------------

def _corpus_files(pattern: str) -> list[Path]:
    return sorted(CORPUS.glob(pattern)) if CORPUS.is_dir() else []


STREAM_FILES = _corpus_files("**/claude-code.txt")
SESSION_FILES = _corpus_files("**/sessions/**/*.jsonl") + _corpus_files("claude-code/**/*.jsonl")


def _rel(p: Path) -> str:
    return str(p.relative_to(CORPUS)) if CORPUS in p.parents else str(p)


def _raw_lines(path: Path) -> list[tuple[int, dict]]:
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict):
            out.append((i, v))
    return out


def _raw_tool_uses(path: Path) -> tuple[dict[str, tuple[int, dict]], dict[str, bool]]:
    """tool_use blocks (id → (line, block)) and tool_result error flags (id → is_error) of a raw file."""
    uses: dict[str, tuple[int, dict]] = {}
    errors: dict[str, bool] = {}
    for lineno, v in _raw_lines(path):
        if v.get("type") == "progress" and isinstance(v.get("data"), dict) and v["data"].get("type") == "agent_progress":
            v = v["data"].get("message") or {}
        msg = v.get("message")
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
            continue
        for b in msg["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                uses.setdefault(b["id"], (lineno, b))
            elif isinstance(b, dict) and b.get("type") == "tool_result":
                errors.setdefault(b["tool_use_id"], b.get("is_error") is True)
    return uses, errors


def _load_tolerant(path: Path):
    """Load a stream-json capture the way a job load does: plain-text CLI warning lines between the JSON
    lines are tolerated in agent/claude-code.txt only (codecanvas has two); every JSON line must parse."""
    text = decode_text(path.read_bytes(), path)
    return load_trajectory(parse_text(text, path, log_lines=path.name == "claude-code.txt"), path)


def _check_against_raw(path: Path, traj) -> None:
    uses, errors = _raw_tool_uses(path)
    tools = traj.tool_calls()
    assert len(tools) == len(uses), "one tool event per tool_use block"
    by_line = Counter(int(e.raw.split()[1]) for e in tools)
    assert sorted(by_line.elements()) == sorted(ln for ln, _ in uses.values())
    for e in tools:
        lineno = int(e.raw.split()[1])
        candidates = [b for ln, b in uses.values() if ln == lineno and b["name"] == e.tool]
        assert candidates, f"{e.label()} has no tool_use on line {lineno}"
        if e.kind == "execute":
            candidates = [b for b in candidates if b["input"].get("command") == e.command]
        assert candidates, f"{e.label()} command {e.command!r} not found on line {lineno}"
        b = candidates[0]
        expected = "unknown" if b["id"] not in errors else ("failed" if errors[b["id"]] else "ok")
        assert e.status == expected, f"{e.label()} ({b['id']}) status"
    assert [e.index for e in traj.events] == list(range(len(traj.events)))


@pytest.mark.parametrize("path", STREAM_FILES, ids=_rel)
def test_corpus_stream_json_loads_and_matches_raw(corpus, path):
    t = _load_tolerant(path)
    assert t.format == "claude-stream-json"
    _check_against_raw(path, t)
    assert t.meta.get("model") and t.meta.get("cwd") and t.meta.get("session_id")
    assert isinstance(t.meta.get("skills"), list)
    raw_results = [v for _, v in _raw_lines(path) if v.get("type") == "result"]
    if raw_results:
        assert t.meta["final_result"] == raw_results[-1]["result"]
        assert any(e.type == AGENT and t.meta["final_result"].strip() in e.text for e in t.events)
    side_raw = sum(1 for _, v in _raw_lines(path) if v.get("type") == "assistant" and v.get("parent_tool_use_id")
                   for b in v["message"]["content"] if b.get("type") == "tool_use")
    assert sum(e.sidechain for e in t.tool_calls()) == side_raw


@pytest.mark.parametrize("path", SESSION_FILES, ids=_rel)
def test_corpus_session_transcripts_load_and_match_raw(corpus, path):
    t = load_file(path)
    assert t.format == "claude-session"
    _check_against_raw(path, t)
    raw = _raw_lines(path)
    if all(v.get("isSidechain") is True for _, v in raw if v.get("type") in ("user", "assistant")):
        assert all(e.sidechain for e in t.events)


def test_corpus_stream_json_spot_check_subagent_command(corpus):
    path = next(corpus.glob("labelled/*/jobs/2026-06-22__14-49-15__c9111d/*V8KJhUV/agent/claude-code.txt"))
    t = load_file(path)
    ev = [e for e in t.tool_calls() if e.command == "find /app -maxdepth 1 -type f | head -20"]
    assert len(ev) == 1
    assert ev[0].sidechain is True and ev[0].status == "ok" and ev[0].kind == "execute"
    assert "/app/package.json" in ev[0].output
    assert "deep-research" in t.meta["skills"]
    task = [e for e in t.tool_calls() if e.raw.startswith("line 3")]
    assert task and task[0].sidechain is False


def test_corpus_stream_json_failed_call(corpus):
    path = next(corpus.glob("labelled/*/jobs/2026-06-18__14-22-47__ba3d5e/*ompn6zz/agent/claude-code.txt"))
    uses, errors = _raw_tool_uses(path)
    failed_ids = [tid for tid, err in errors.items() if err]
    assert failed_ids == ["toolu_01XsTiiKTEz4dZ52GyFGX2mr"]
    lineno, block = uses[failed_ids[0]]
    t = load_file(path)
    ev = [e for e in t.tool_calls() if e.raw.startswith(f"line {lineno} ")]
    assert len(ev) == 1 and ev[0].tool == block["name"] and ev[0].status == "failed"
    assert [e.status for e in t.tool_calls()].count("failed") == 1


def test_corpus_minimax_stream_json_meta(corpus):
    t = load_file(corpus / "skillsbench-archive/minimax-traj/3d-scan-calc__t2HR7VM/agent/claude-code.txt")
    assert t.meta["skills"] == ["mesh-analysis"]
    assert t.meta["model"] == "minimax/MiniMax-M2.1"
    assert t.meta["cwd"] == "/root"
    assert t.meta["agent_version"] == "2.1.19"
    assert sum(e.type == THOUGHT for e in t.events) == 7
    reads = [e for e in t.tool_calls() if e.tool == "Read"]
    assert ("/root/material_density_table.md",) in [e.paths for e in reads]


def test_corpus_codecanvas_stream_json_with_stray_warning_lines(corpus):
    """Lines 66-67 of this claude-code.txt are Claude Code warnings, not JSON; the other lines must still load."""
    run = corpus / "harbor/ain3sh__codecanvas/runs/2025-12-12__02-23-38/build-cython-ext__LmYeyGq/agent"
    path = run / "claude-code.txt"
    text = path.read_text(encoding="utf-8")
    kept = "\n".join(ln if ln.lstrip().startswith("{") else "" for ln in text.split("\n"))
    parsed = parse_text(kept, path)
    assert claude.sniff(parsed)
    t = claude.load(parsed, str(path))
    _check_against_raw(path, t)
    assert Counter(e.status for e in t.tool_calls()) == Counter({"ok": 53, "failed": 7})
    session = load_file(run / "sessions/projects/-app/45dab0f2-bbf1-443a-8c95-c9c9ab285262.jsonl")
    sig = [(e.tool, e.command, e.paths, e.status) for e in t.tool_calls(include_sidechain=False)]
    assert sig == [(e.tool, e.command, e.paths, e.status) for e in session.tool_calls(include_sidechain=False)]


def test_corpus_stream_json_and_session_agree(corpus):
    """The same Harbor run in both formats yields the same main-thread tool calls, in the same order."""
    pairs = 0
    for agent_dir in sorted(corpus.glob("labelled/*/jobs/*/*/agent")):
        stream = agent_dir / "claude-code.txt"
        sessions = sorted((agent_dir / "sessions/projects/-app").glob("*.jsonl"))
        if not stream.is_file() or len(sessions) != 1:
            continue
        a, b = load_file(stream), load_file(sessions[0])
        sig_a = [(e.tool, e.command, e.paths, e.status) for e in a.tool_calls(include_sidechain=False)]
        sig_b = [(e.tool, e.command, e.paths, e.status) for e in b.tool_calls(include_sidechain=False)]
        assert sig_a == sig_b, agent_dir
        assert a.meta["session_id"] == b.meta["session_id"]
        pairs += 1
    assert pairs == 15


def test_corpus_big_session_with_skill_compaction_and_agent_progress(corpus):
    base = corpus / "claude-code/spotter-fixtures"
    t = load_file(base / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
    skills = [e for e in t.tool_calls() if e.kind == "skill"]
    assert len(skills) == 1 and skills[0].tool == "Skill" and "hex-docs-search" in skills[0].args
    assert t.meta["compacted"] is True
    assert any(e.type == OTHER and e.text.startswith("This session is being continued") for e in t.events)
    # the subagent's calls streamed as agent_progress equal the calls in its own transcript file
    sub = load_file(base / "ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl")
    in_main = [(e.tool, e.args) for e in t.tool_calls() if e.sidechain]
    assert in_main == [(e.tool, e.args) for e in sub.tool_calls()]
    assert len(in_main) == 12


@pytest.mark.parametrize("n", [OUTPUT_CLIP - 1, OUTPUT_CLIP, OUTPUT_CLIP + 1, 3 * OUTPUT_CLIP + 7])
def test_long_tool_results_are_clipped_exactly_as_clip_would(n: int):
    """The reader keeps a long result by its two ends only; what an event gets is still ``clip`` of the whole
    text, for a call's result and for a result whose call is not in the file (a prefix before the text)."""
    body = "".join(chr(ord("a") + i % 26) for i in range(n))
    t = load_text(jl(init(), asst("m1", use("t1", "Bash", command="cat big")), result_of("t1", body),
                     result_of("t_gone", body + "!"), final("done")))
    call = [e for e in t.events if e.type == TOOL][0]
    assert call.output == clip(body) and type(call.output) is str
    orphan = [e for e in t.events if e.type == OTHER and "t_gone" in e.text][0]
    assert orphan.text == clip("tool result for unknown call t_gone: " + body + "!")
