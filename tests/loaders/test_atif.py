"""Harbor ATIF loader (``agent/trajectory.json``, BenchFlow ``trainer/atif.json``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_trajaudit.loaders import atif
from pytest_trajaudit.loaders.common import clip
from pytest_trajaudit.model import AGENT, OTHER, THOUGHT, TOOL, USER
from pytest_trajaudit.safeio import decode_text, parse_text
from tests.helpers import load_file, load_text

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def doc(*steps: dict, version: str = "ATIF-v1.2", agent: dict | None = None) -> str:
    return json.dumps({
        "schema_version": version,
        "session_id": "sess-1",
        "agent": agent if agent is not None else {"name": "claude-code", "version": "2.1.0", "model_name": "claude-x",
                                                  "extra": {"cwds": ["/app", "/app/sub"]}},
        "steps": list(steps),
        "final_metrics": {"total_steps": len(steps)},
    })


def call(cid: str, name: str, args, **extra) -> dict:
    d = {"tool_call_id": cid, "function_name": name, "arguments": args}
    if extra:
        d["extra"] = extra
    return d


def obs(*results: tuple[str, str]) -> dict:
    return {"results": [{"source_call_id": sid, "content": content} for sid, content in results]}


def test_claude_code_converter_shape():
    t = load_text(doc(
        {"step_id": 1, "source": "user", "message": "Fix the bug", "extra": {"is_sidechain": False}},
        {"step_id": 2, "source": "agent", "message": "", "reasoning_content": "null"},
        {"step_id": 3, "source": "agent", "message": "Let me look.", "reasoning_content": "Plan: read first."},
        {"step_id": 4, "source": "agent", "message": "Executed Bash toolu_1",
         "tool_calls": [call("toolu_1", "Bash", {"command": "pytest -q", "description": "run"})],
         "observation": obs(("toolu_1", "Exit code 1\n1 failed")),
         "extra": {"tool_result_is_error": True, "is_sidechain": False}},
        {"step_id": 5, "source": "agent", "message": "Executed Read toolu_2",
         "tool_calls": [call("toolu_2", "Read", json.dumps({"file_path": "/app/x.py"}))],
         "observation": obs(("toolu_2", "1\u2192import os")), "extra": {"tool_result_is_error": False}},
        {"step_id": 6, "source": "agent", "message": "Executed Bash toolu_3",
         "tool_calls": [call("toolu_3", "Bash", {"command": "git diff"})],
         "extra": {"tool_result_is_error": False}},  # no observation, but the converter says it succeeded
        {"step_id": 7, "source": "agent", "message": "Executed Edit toolu_4",
         "tool_calls": [call("toolu_4", "Edit", {"file_path": "/app/x.py", "old_string": "a", "new_string": "b"})],
         "observation": obs(("toolu_4", "<tool_use_error>String to replace not found</tool_use_error>"))},
        {"step_id": 8, "source": "agent", "message": "Executed Bash toolu_5",
         "tool_calls": [call("toolu_5", "Bash", {"command": "sleep 100"})]},
        {"step_id": 9, "source": "agent", "message": "Done."},
    ), "trajectory.json")
    assert t.format == "atif"
    assert [e.type for e in t.events] == [USER, THOUGHT, AGENT, TOOL, TOOL, TOOL, TOOL, TOOL, AGENT]
    assert [e.index for e in t.events] == list(range(9))
    assert t.events[1].text == "Plan: read first." and t.events[1].raw == "steps[2].reasoning_content"
    assert t.events[2].raw == "steps[2].message"
    pytest_ev, read_ev, diff_ev, edit_ev, sleep_ev = t.tool_calls()
    assert (pytest_ev.command, pytest_ev.status, pytest_ev.raw) == ("pytest -q", "failed", "steps[3].tool_calls[0]")
    assert "1 failed" in pytest_ev.output
    assert (read_ev.kind, read_ev.paths, read_ev.status) == ("read", ("/app/x.py",), "ok")
    assert (diff_ev.command, diff_ev.status, diff_ev.output) == ("git diff", "ok", "")
    assert (edit_ev.kind, edit_ev.status) == ("edit", "failed")
    assert sleep_ev.status == "unknown"
    assert not any(e.text.startswith("Executed ") for e in t.events)
    assert t.meta == {"schema_version": "ATIF-v1.2", "session_id": "sess-1", "agent": "claude-code",
                      "agent_version": "2.1.0", "model": "claude-x", "cwd": "/app",
                      "final_metrics": {"total_steps": 9}}


def test_reasoning_comes_before_message_and_calls_of_its_step():
    t = load_text(doc({"step_id": 1, "source": "agent", "message": "I will run it.", "reasoning_content": "why",
                       "tool_calls": [call("c1", "bash", {"command": "ls"})], "observation": obs(("c1", "a b"))}))
    assert [(e.type, e.raw) for e in t.events] == [
        (THOUGHT, "steps[0].reasoning_content"), (AGENT, "steps[0].message"), (TOOL, "steps[0].tool_calls[0]")]


@pytest.mark.parametrize("nullish", ["null", "", None, "None"])
def test_null_reasoning_is_no_thought(nullish):
    t = load_text(doc({"step_id": 1, "source": "agent", "message": "hi", "reasoning_content": nullish}))
    assert [e.type for e in t.events] == [AGENT]


def test_opencode_duplicated_calls_and_results_are_deduplicated():
    dup_calls = [call("call_1", "read", {"filePath": "/app/README.md"}), call("call_1", "read", {"filePath": "/app/README.md"}),
                 call("call_2", "bash", {"command": "npm test", "description": "t"}),
                 call("call_2", "bash", {"command": "npm test", "description": "t"})]
    t = load_text(doc(
        {"step_id": 1, "source": "agent", "message": "(tool use)", "reasoning_content": "look\nlook",
         "tool_calls": dup_calls,
         "observation": obs(("call_1", "# readme"), ("call_1", "# readme"), ("call_2", "ok 3 tests"),
                            ("call_2", "ok 3 tests"))},
        {"step_id": 2, "source": "agent", "message": "All tests pass."},
        version="ATIF-v1.6", agent={"name": "metacode", "version": "1.4", "model_name": "meta/x"},
    ))
    tools = t.tool_calls()
    assert [(e.tool, e.kind) for e in tools] == [("read", "read"), ("bash", "execute")]
    assert tools[0].paths == ("/app/README.md",)  # camelCase filePath
    assert tools[0].output == "# readme" and tools[1].output == "ok 3 tests"
    assert tools[1].raw == "steps[0].tool_calls[2]"
    assert all(e.status == "ok" for e in tools)
    assert [e.type for e in t.events] == [THOUGHT, TOOL, TOOL, AGENT]  # "(tool use)" placeholder dropped
    assert t.meta["duplicate_tool_calls"] == 2
    assert t.meta["agent"] == "metacode" and "cwd" not in t.meta


def test_acp_converter_extra_status_and_title():
    t = load_text(doc(
        {"step_id": 1, "source": "user", "message": "task"},
        {"step_id": 2, "source": "agent", "message": "",
         "tool_calls": [call("t1", "read", {}, title="Read File", status="completed")],
         "observation": obs(("t1", "content"))},
        {"step_id": 3, "source": "agent", "message": "",
         "tool_calls": [call("t2", "edit", {}, title="Write", status="completed")]},
        {"step_id": 4, "source": "agent", "message": "",
         "tool_calls": [call("t3", "execute", {"command": "rm -rf x"}, title="rm -rf x", status="failed")],
         "observation": obs(("t3", "permission denied"))},
        version="ATIF-v1.7", agent={"name": "@agentclientprotocol/claude-agent-acp", "model_name": "m"},
    ))
    a, b, c = t.tool_calls()
    assert (a.title, a.kind, a.status) == ("Read File", "read", "ok")
    assert (b.title, b.kind, b.status) == ("Write", "edit", "ok")
    assert (c.kind, c.command, c.status) == ("execute", "rm -rf x", "failed")


def test_sidechain_steps_and_system_steps():
    t = load_text(doc(
        {"step_id": 1, "source": "user", "message": "Warmup", "extra": {"is_sidechain": True}},
        {"step_id": 2, "source": "agent", "message": "Ready.", "extra": {"is_sidechain": True}},
        {"step_id": 3, "source": "system", "message": "You are a helpful agent."},
        {"step_id": 4, "source": "user", "message": "Real task", "extra": {"is_sidechain": False}},
    ))
    assert [(e.type, e.sidechain) for e in t.events] == [(USER, True), (AGENT, True), (OTHER, False), (USER, False)]


def test_result_flags_and_results_without_source_id():
    t = load_text(doc(
        {"step_id": 1, "source": "agent", "message": "",
         "tool_calls": [call("c1", "Bash", {"command": "make"})],
         "observation": {"results": [{"content": "make: *** [all] Error 2", "extra": {"is_error": True}}]}},
        {"step_id": 2, "source": "agent", "message": "",
         "tool_calls": [call("c2", "Bash", {"command": "a"}), call("c3", "Bash", {"command": "b"})],
         "observation": {"results": [{"source_call_id": "c3", "content": "B"}, {"content": "a note"}]}},
    ))
    make, a, b = t.tool_calls()
    assert (make.status, make.output) == ("failed", "make: *** [all] Error 2")
    assert (a.status, b.status, b.output) == ("unknown", "ok", "B")
    assert t.events[-1].type == OTHER and t.events[-1].text == "a note"


def test_message_as_content_parts_and_string_arguments():
    t = load_text(doc(
        {"step_id": 1, "source": "user", "message": [{"type": "text", "text": "part one"}, {"type": "text", "text": "two"}]},
        {"step_id": 2, "source": "agent", "message": "",
         "tool_calls": [call("c", "Bash", '{"command": "echo hi"}')],
         "observation": {"results": [{"source_call_id": "c", "content": [{"type": "text", "text": "hi"}]}]}},
    ))
    assert t.events[0].text == "part one\ntwo"
    assert (t.events[1].command, t.events[1].output, t.events[1].status) == ("echo hi", "hi", "ok")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"schema_version": "ATIF-v1.0", "steps": []}', True),
        ('{"schema_version": "ATIF-v1.7", "agent": {}, "steps": [{"step_id": 1, "source": "user"}]}', True),
        ('{"steps": [{"step_id": 1, "source": "user", "message": "x"}]}', True),
        ('{"steps": [{"step_id": 1, "message": "x"}]}', False),
        ('{"steps": []}', False),
        ('{"schema_version": "1.0", "trajectory": []}', False),
        ('[{"episode": 0, "prompt": "p", "response": "r"}, {"episode": 1, "prompt": "p", "response": "r"}]', False),
        ('{"a": 1}\n{"b": 2}\n', False),
        ("no json here", False),
    ],
)
def test_sniff(text, expected):
    assert atif.sniff(parse_text(text, "trajectory.json")) is expected


# --- real corpus ----------------------------------------------------------------------------------------------

def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted([*CORPUS.glob("**/agent/trajectory.json"), *CORPUS.glob("**/trainer/atif.json")])


def _rel(p: Path) -> str:
    return str(p.relative_to(CORPUS)) if CORPUS in p.parents else str(p)


def _raw(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", _corpus_files(), ids=_rel)
def test_corpus_files_load(corpus, path):
    raw = _raw(path)
    parsed = parse_text(decode_text(path.read_bytes(), path), path)
    if not isinstance(raw, dict):  # terminus-2-skills episode array: not ATIF, the chat loader's job
        assert isinstance(raw, list) and "episode" in raw[0]
        assert not atif.sniff(parsed)
        return
    assert atif.sniff(parsed)
    t = load_file(path)
    assert t.format == "atif"
    assert t.meta["schema_version"] == raw["schema_version"]
    assert t.meta["model"] == raw["agent"]["model_name"] and t.meta["agent"] == raw["agent"]["name"]
    assert [e.index for e in t.events] == list(range(len(t.events)))
    ids = {c["tool_call_id"] for s in raw["steps"] for c in s.get("tool_calls") or []}
    tools = t.tool_calls()
    assert len(tools) == len(ids) == len({e.raw for e in tools})
    # each event points at a call with its name and command
    for e in tools:
        si = int(e.raw.split("]")[0].split("[")[1])
        ci = int(e.raw.split("tool_calls[")[1].rstrip("]"))
        c = raw["steps"][si]["tool_calls"][ci]
        assert e.tool == c["function_name"]
        if e.kind == "execute":
            assert e.command == c["arguments"].get("command")
    assert not any(e.type == THOUGHT and e.text.strip() == "null" for e in t.events)
    # the claude-code converter's error flag decides the status
    flagged = Counter(bool(s["extra"]["tool_result_is_error"]) for s in raw["steps"]
                      if isinstance(s.get("extra"), dict) and "tool_result_is_error" in s["extra"])
    if flagged:
        assert Counter(e.status for e in tools)["failed"] == flagged[True]
        assert Counter(e.status for e in tools)["ok"] >= flagged[False]  # the key is often absent when false


def test_corpus_v12_codecanvas_spot_checks(corpus):
    path = corpus / "harbor/ain3sh__codecanvas/runs/2025-12-12__02-23-38/build-cython-ext__LmYeyGq/agent/trajectory.json"
    t = load_file(path)
    assert t.meta["cwd"] == "/app"
    # step 83 has no observation; its extra says the (empty) result was not an error
    diff = [e for e in t.tool_calls() if e.command == "git diff pyknotid/spacecurves/periodicline.py"]
    assert [(e.status, e.raw) for e in diff] == [("ok", "steps[82].tool_calls[0]"), ("ok", "steps[84].tool_calls[0]")]
    eisdir = [e for e in t.tool_calls() if "EISDIR" in e.output]
    assert len(eisdir) == 1 and eisdir[0].tool == "Read" and eisdir[0].status == "failed"
    # the two "Warmup" subagents are sidechain
    side = [e for e in t.events if e.sidechain]
    assert [e.type for e in side] == [USER, USER, AGENT, AGENT]
    assert Counter(e.status for e in t.tool_calls()) == Counter({"ok": 53, "failed": 7})


def test_corpus_minimax_null_reasoning(corpus):
    path = corpus / "skillsbench-archive/minimax-traj/3d-scan-calc__t2HR7VM/agent/trajectory.json"
    raw = _raw(path)
    assert sum(s.get("reasoning_content") == "null" for s in raw["steps"]) == 7
    t = load_file(path)
    assert not any(e.type == THOUGHT for e in t.events)
    assert t.meta["cwd"] == "/root" and t.meta["model"] == "MiniMax-M2"
    read = [e for e in t.tool_calls() if e.paths == ("/root/material_density_table.md",)]
    assert len(read) == 1 and read[0].status == "ok" and "Unobtanium" in read[0].output


def test_corpus_v17_benchflow(corpus):
    path = next(corpus.glob("harbor/Tobi-joshua__benchflow-agent-skill-lift/**/citation-check__190a3859/trainer/atif.json"))
    t = load_file(path)
    assert t.meta["schema_version"] == "ATIF-v1.7"
    assert t.meta["agent"] == "@agentclientprotocol/claude-agent-acp"
    tools = t.tool_calls()
    assert Counter(e.kind for e in tools) == Counter({"fetch": 7, "read": 1, "think": 1, "edit": 1})
    assert Counter(e.title for e in tools)["Web search"] == 7
    assert all(e.status == "ok" for e in tools)  # every call says "completed", the last Write has no observation


def test_corpus_opencode_duplicates(corpus):
    n = 0
    for path in sorted(corpus.glob("labelled/*/jobs/*/*/agent/trajectory.json")):
        raw = _raw(path)
        if raw["agent"]["name"] != "metacode":
            continue
        n += 1
        calls = [c for s in raw["steps"] for c in s.get("tool_calls") or []]
        ids = {c["tool_call_id"] for c in calls}
        assert len(calls) == 2 * len(ids)  # the quirk this test is about
        t = load_file(path)
        tools = t.tool_calls()
        assert len(tools) == len(ids) and t.meta["duplicate_tool_calls"] == len(ids)
        results = {r["source_call_id"]: r["content"] for s in raw["steps"]
                   for r in (s.get("observation") or {}).get("results") or []}
        for e in tools:
            step = raw["steps"][int(e.raw.split("]")[0].split("[")[1])]
            cid = step["tool_calls"][int(e.raw.split("tool_calls[")[1].rstrip("]"))]["tool_call_id"]
            assert e.output == clip(results[cid])  # once, not twice
        kinds = {e.tool: e.kind for e in tools}
        assert kinds.get("bash", "execute") == "execute" and kinds.get("read", "read") == "read"
        assert all(e.paths for e in tools if e.tool in ("read", "edit", "write"))
        assert sum(e.type == AGENT for e in t.events) >= 1
    assert n == 7


def test_corpus_atif_agrees_with_session_transcript(corpus):
    """ATIF and the session transcript of one claude-code run hold the same tool calls (ATIF may reorder
    parallel calls)."""
    pairs = 0
    for agent_dir in sorted(corpus.glob("labelled/*/jobs/*/*/agent")):
        sessions = sorted((agent_dir / "sessions/projects/-app").glob("*.jsonl"))
        if len(sessions) != 1:
            continue
        a, b = load_file(agent_dir / "trajectory.json"), load_file(sessions[0])
        sig_a = Counter((e.tool, e.command, e.paths, e.status) for e in a.tool_calls())
        sig_b = Counter((e.tool, e.command, e.paths, e.status) for e in b.tool_calls())
        assert sig_a == sig_b, agent_dir
        assert a.meta["session_id"] == b.meta["session_id"]
        pairs += 1
    assert pairs == 15
