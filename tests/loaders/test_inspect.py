"""Inspect AI logs (``.json`` and the ``.eval`` zip) → one job per sample × epoch; hostile archives."""

from __future__ import annotations

import io
import json
import struct
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.discover.jobs import JobRef
from pytest_trajaudit.loaders import inspect_ai
from pytest_trajaudit.loaders.job import load_job
from pytest_trajaudit.loaders.multi import RECORD, find_all_jobs, list_members, load_record, member_ref
from pytest_trajaudit.loaders.sniff import detect
from pytest_trajaudit.model import (
    AGENT,
    EDIT,
    EXECUTE,
    FETCH,
    OTHER,
    READ,
    THOUGHT,
    TOOL,
    USER,
    UnusableInput,
)
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.safeio import Budget, SafeZip, open_zip, parse_bytes, parse_text
from pytest_trajaudit.settings import Settings
from tests.helpers import load_text

MAX = 1 << 30
REASONING = "a" * 32
CMD = "b" * 32


def model(content: Any, calls: list[tuple[str, str, dict]] = (), span: str = "s-agent") -> dict:
    msg = {"role": "assistant", "content": content,
           "tool_calls": [{"id": i, "function": f, "arguments": a} for i, f, a in calls]}
    return {"event": "model", "span_id": span, "model": "openai/gpt-x", "input": ["huge prompt"],
            "output": {"choices": [{"message": msg}]}, "call": {"request": "raw"}}


def sample(sid: Any = 1, epoch: int = 1, score: Any = "C", error: dict | None = None) -> dict:
    events = [
        {"event": "sample_init", "sample": {"input": "Do the task", "id": sid}},
        {"event": "span_begin", "id": "s-setup", "type": "solver", "name": "setup"},
        {"event": "sandbox", "span_id": "s-setup", "action": "exec", "cmd": "python taskhelper.py --operation start",
         "result": 0, "output": ""},
        {"event": "span_begin", "id": "s-agent", "type": "agent", "name": "react"},
        model([{"type": "reasoning", "reasoning": f"attachment://{REASONING}", "signature": "sig"},
               {"type": "text", "text": "Let me read it."}], [("t1", "bash", {"cmd": f"attachment://{CMD}"})]),
        # Inspect 0.3.13x writes the tool span before its tool event ...
        {"event": "span_begin", "id": "s-t1", "parent_id": "s-agent", "type": "tool", "name": "bash"},
        {"event": "tool", "span_id": "s-agent", "type": "function", "id": "t1", "function": "bash",
         "arguments": {"cmd": f"attachment://{CMD}"}, "result": '{"answer": 42}', "events": []},
        {"event": "sandbox", "span_id": "s-t1", "action": "exec",
         "cmd": "bash --login -c 'cat /oracle/expected_answer.json'", "result": 0},
        {"event": "span_end", "id": "s-t1"},
        model("", [("t2", "bash", {"cmd": "git log --oneline"})]),
        # ... 0.3.9x after it
        {"event": "tool", "span_id": "s-agent", "id": "t2", "function": "bash", "arguments": {"cmd": "git log --oneline"},
         "result": "fatal: not a git repository"},
        {"event": "span_begin", "id": "s-t2", "parent_id": "s-agent", "type": "tool", "name": "bash"},
        {"event": "sandbox", "span_id": "s-t2", "action": "exec", "cmd": "bash --login -c 'git log'", "result": 128},
        {"event": "span_end", "id": "s-t2"},
        model("", [("t3", "text_editor", {"command": "view", "path": "/app/x.py"}),
                   ("t4", "python", {"code": "1/0"})]),
        {"event": "tool", "span_id": "s-agent", "id": "t3", "function": "text_editor",
         "arguments": {"command": "view", "path": "/app/x.py"}, "result": "1 x = 1"},
        {"event": "tool", "span_id": "s-agent", "id": "t4", "function": "python", "arguments": {"code": "1/0"},
         "result": "", "error": {"type": "unknown", "message": "ZeroDivisionError"}},
        model([{"type": "text", "text": "The answer is 42."}]),
        {"event": "span_begin", "id": "s-score", "type": "scorer", "name": "match"},
        {"event": "sandbox", "span_id": "s-score", "action": "exec", "cmd": "python taskhelper.py --operation score",
         "result": 0},
        {"event": "score", "span_id": "s-score", "score": {"value": score}},
    ]
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Do the task"},
                {"role": "assistant", "content": "Let me read it."}]
    return {"id": sid, "epoch": epoch, "input": "Do the task", "target": "42", "messages": messages,
            "output": {"choices": [{"message": {"role": "assistant", "content": "The answer is 42."}}]},
            "scores": {"match": {"value": score, "answer": "42"}}, "metadata": {}, "store": {}, "events": events,
            "attachments": {REASONING: "I should check the answer file.", CMD: "cat /oracle/expected_answer.json"},
            "error": error}


def header(n: int = 2) -> dict:
    return {"version": 2, "status": "success",
            "eval": {"task": "mytask", "model": "openai/gpt-x", "dataset": {"samples": n}, "run_id": "r1",
                     "packages": {"inspect_ai": "0.3.130"}, "config": {"epochs": 2}},
            "plan": {"steps": [{"solver": "setup"}, {"solver": "metr_agents/react"}]},
            "results": {"scores": []}, "stats": {}}


SAMPLES = [sample(1, 1, "C"), sample(1, 2, "I"), sample("b", 1, 0.5, error={"message": "boom", "traceback": "tb"})]


def log_json(samples: list[dict] = SAMPLES) -> str:
    return json.dumps({**header(), "samples": samples}, indent=2)


def eval_zip(samples: list[dict] = SAMPLES, extra: list[tuple[str, bytes]] = ()) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", json.dumps(header()))
        for s in reversed(samples):  # member order is not sorted in real files either
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        z.writestr("header.json", json.dumps(header()))
        z.writestr("summaries.json", "[]")
        for name, data in extra:
            z.writestr(name, data)
    return b.getvalue()


def tools(t):
    return [e for e in t.events if e.type == TOOL]


# --------------------------------------------------------------------------- the model


def test_events_mapping_attachments_and_harness_sandbox(tmp_path: Path):
    f = tmp_path / "log.json"
    f.write_text(log_json())
    t, info = load_record(member_ref(JobRef(tmp_path, f, RECORD), "1_epoch_1"), Budget())
    assert t.format == "inspect-ai"
    assert [e.type for e in t.events] == [OTHER, USER, OTHER, THOUGHT, AGENT, TOOL, TOOL, TOOL, TOOL, AGENT, OTHER]
    assert t.events[3].text == "I should check the answer file."  # attachment:// resolved
    cat, git, view, py = tools(t)
    assert (cat.kind, cat.command, cat.paths, cat.status, cat.output) == (
        EXECUTE, "cat /oracle/expected_answer.json", ("/oracle/expected_answer.json",), "ok", '{"answer": 42}')
    assert (git.command, git.status) == ("git log --oneline", "failed")  # exit 128 from its sandbox exec
    assert (view.kind, view.paths, view.command, view.status) == (READ, ("/app/x.py",), "", "ok")
    assert (py.kind, py.status) == (EXECUTE, "failed") and "ZeroDivisionError" in py.output
    harness = [e.text for e in t.events if e.type == OTHER and "harness" in e.text]
    assert harness == ["[harness sandbox exec] python taskhelper.py --operation start (exit 0)",
                       "[harness sandbox exec] python taskhelper.py --operation score (exit 0)"]
    assert not any("taskhelper" in e.command for e in tools(t))  # never an agent action
    assert t.meta["sandbox_events"] == {"harness": 2, "in_tool_calls": 2}
    assert info == {"task": "mytask/1", "trial": "1_epoch_1", "agent": "metr_agents/react", "model": "openai/gpt-x",
                    "reward": 1.0, "reward_source": "scores.match.value", "reward_note": None,
                    "exception": None}
    assert json.loads(t.raw_text)["epoch"] == 1


@pytest.mark.parametrize(("value", "reward"), [
    ("C", 1.0), ("I", 0.0), ("P", 0.5), ("N", 0.0), (1, 1.0), (0.25, 0.25), (True, 1.0), ("yes", 1.0),
    ("0.75", 0.75), ({"a": 1}, None), ("maybe", None), (None, None),
])
def test_score_values(value, reward):
    _, info = inspect_ai.load_member(parse_text(log_json([sample(1, 1, value)]), "l.json"), "l.json", "1_epoch_1")
    assert info["reward"] == reward
    assert info["reward_source"] == (None if reward is None else "scores.match.value")
    assert info["task"] == "mytask/1"  # the header's dataset says 2 samples


def test_eval_zip_members_from_central_directory_and_load(tmp_path: Path):
    f = tmp_path / "run.eval"
    f.write_bytes(eval_zip())
    assert inspect_ai.claims("run.eval", f.read_bytes()[:4096]) == "multi"
    ids = list_members(JobRef(tmp_path, f, RECORD), MAX, inspect_ai)
    assert ids == ["1_epoch_1", "1_epoch_2", "b_epoch_1"]  # natural order, not archive order
    with open_zip(tmp_path, "run.eval", MAX) as z:
        assert inspect_ai.scan_members(tmp_path, "run.eval", MAX) == inspect_ai.members(
            parse_bytes(f.read_bytes(), f), str(f)) == inspect_ai._zip_ids(z)
    jobs = {r.member: load_job(r, Settings()) for r in find_all_jobs(tmp_path)}
    assert set(jobs) == set(ids)
    b = jobs["b_epoch_1"]
    assert (b.reward, b.verifier.reward_source, b.exception) == (0.5, "scores.match.value", "error: boom")
    assert (b.task, b.trial, b.model, b.agent, b.layout) == ("mytask/b", "b_epoch_1", "openai/gpt-x",
                                                             "metr_agents/react", RECORD)
    assert json.loads(b.trajectory.raw_text)["id"] == "b"  # the sample member's own text
    assert jobs["1_epoch_2"].reward == 0.0
    assert [e.kind for e in tools(b.trajectory)] == [EXECUTE, EXECUTE, READ, EXECUTE]


def test_json_and_eval_give_the_same_jobs(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "log.json").write_text(log_json())
    (tmp_path / "b" / "log.eval").write_bytes(eval_zip())
    by_form = {}
    for d in ("a", "b"):
        refs = find_all_jobs(tmp_path / d)
        by_form[d] = {r.member: [(e.type, e.kind, e.command, e.paths, e.status, e.text) for e in
                                 load_job(r, Settings()).trajectory.events] for r in refs}
    assert by_form["a"] == by_form["b"] and len(by_form["a"]) == 3


def test_messages_when_there_are_no_events():
    s = {"id": "q", "epoch": 1, "input": "Q?", "target": "x", "scores": {"m": {"value": "I"}},
         "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "Q?"},
                      {"role": "assistant", "content": [{"type": "text", "text": "Checking."}],
                       "tool_calls": [{"id": "c1", "function": "bash", "arguments": {"cmd": "cat /tests/test_outputs.py"}},
                                      {"id": "c2", "function": "web_search", "arguments": {"query": "x"}},
                                      {"id": "c3", "function": "bash", "arguments": {"cmd": "ls"}}]},
                      {"role": "tool", "tool_call_id": "c1", "function": "bash", "content": "def test(): ..."},
                      {"role": "tool", "tool_call_id": "c2", "function": "web_search", "content": "",
                       "error": {"type": "timeout", "message": "timed out"}},
                      {"role": "assistant", "content": "x"}]}
    t = load_text(json.dumps(s), "q_epoch_1.json")  # one sample file on its own
    assert t.meta["source"] == "messages"
    assert [e.type for e in t.events] == [OTHER, USER, AGENT, TOOL, TOOL, TOOL, AGENT]
    cat, web, ls = tools(t)
    assert (cat.paths, cat.status, cat.output) == (("/tests/test_outputs.py",), "ok", "def test(): ...")
    assert (web.kind, web.status) == (FETCH, "failed") and ls.status == "unknown"


def test_old_log_tc_refs_and_single_sample_load():
    s = sample(1, 1, "I")
    s["transcript"] = {"events": s.pop("events"), "content": s.pop("attachments")}
    s["transcript"]["events"][4]["output"]["choices"][0]["message"]["content"][0]["reasoning"] = f"tc://{REASONING}"
    t = load_text(json.dumps({**header(1), "samples": [s]}), "old.json")
    assert t.events[3].text == "I should check the answer file."
    assert "unresolved_attachments" not in t.meta
    with pytest.raises(UnusableInput, match="log holds 3 samples"):
        load_text(log_json(), "l.json")


def test_unresolved_attachment_is_counted_not_fatal():
    s = sample()
    s["attachments"] = {}
    t = load_text(json.dumps({**header(1), "samples": [s]}), "l.json")
    assert t.meta["unresolved_attachments"] == 2
    assert tools(t)[0].command == f"attachment://{CMD}"


def test_sniff_and_claims():
    assert detect(parse_text(log_json(), "l.json")) is inspect_ai
    assert detect(parse_bytes(eval_zip(), "l.eval")) is inspect_ai
    assert inspect_ai.claims("2025-05-12_browser.json", log_json().encode()[:4096]) == "multi"
    assert inspect_ai.claims("result.json", b'{"task_name": "x"}') is None
    assert inspect_ai.claims("x.eval", b"not a zip") is None


def test_anticheat_sees_reads_in_samples(tmp_path: Path):
    (tmp_path / "run.eval").write_bytes(eval_zip())
    for ref in find_all_jobs(tmp_path):
        audit = audit_job(ref, Settings(), [registry()["P1"]])
        assert audit.error is None and audit.results["P1"].status == "FAIL"
        assert "/oracle/expected_answer.json" in audit.results["P1"].evidence


# --------------------------------------------------------------------------- hostile archives


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    b = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns on duplicate names
        with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
            for n, d in members:
                z.writestr(n, d)
    return b.getvalue()


def _patch_central(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    i = data.index(b"PK\x01\x02")
    return data[:i + offset] + struct.pack(fmt, value) + data[i + offset + struct.calcsize(fmt):]


BIG = b"0" * 1_000_000
HEADER = ("header.json", json.dumps(header()).encode())


@pytest.mark.parametrize(("data", "max_file", "reason"), [
    (_zip([HEADER, ("/etc/passwd", b"x")]), MAX, "absolute member name"),
    (_zip([HEADER, ("C:/x.json", b"x")]), MAX, "absolute member name"),
    (_zip([HEADER, ("samples/../../x_epoch_1.json", b"x")]), MAX, "escapes the archive"),
    (_zip([HEADER, ("samples/a_epoch_1.json", b"{}"), ("samples/a_epoch_1.json", b"{}")]), MAX,
     "appears more than once"),
    (_zip([HEADER, ("samples/inner.zip", b"x")]), MAX, "nested archive"),
    (_zip([HEADER, ("samples/a_epoch_1.json", BIG)]), 100_000, "declares 1000000 bytes, over the per-file size"),
    (_patch_central(_zip([("samples/a_epoch_1.json", BIG), HEADER]), 8, "<H", 1), MAX, "is encrypted"),
    (_zip([HEADER, ("samples/a_epoch_1.json", BIG)])[:200], MAX, "not a valid zip archive"),
])
def test_hostile_zip_is_refused_before_reading(tmp_path: Path, data, max_file, reason):
    f = tmp_path / "run.eval"
    f.write_bytes(data)
    with pytest.raises(UnusableInput) as exc:
        list_members(JobRef(tmp_path, f, RECORD), max_file, inspect_ai)
    assert reason in exc.value.reason and "\n" not in str(exc.value)


@pytest.mark.parametrize(("data", "reason"), [
    (_patch_central(_zip([("samples/a_epoch_1.json", BIG), HEADER]), 24, "<I", 100), "is corrupt: Bad CRC-32"),
    (_zip([HEADER, ("samples/a_epoch_1.json", _zip([("x", b"y")]))]), "nested zip archive"),
    (_zip([HEADER, ("samples/a_epoch_1.json", b"\xff\xfe{")]), "does not decode as utf-16"),
    (_zip([HEADER, ("samples/a_epoch_1.json", b"[1, 2]\n[3]")]), "not one JSON document"),
])
def test_hostile_member_is_refused_while_reading(tmp_path: Path, data, reason):
    """A lying size (the central directory says 100 bytes, the stream inflates to 1 MB) never inflates past the
    declared size; a zip inside a sample and undecodable JSON are unusable."""
    f = tmp_path / "run.eval"
    f.write_bytes(data)
    ref = JobRef(tmp_path, f, RECORD)
    assert list_members(ref, MAX, inspect_ai) == ["a_epoch_1"]
    with pytest.raises(UnusableInput) as exc:
        load_record(member_ref(ref, "a_epoch_1"), Budget())
    assert reason in exc.value.reason or reason in str(exc.value)
    assert "\n" not in str(exc.value)


def test_decompressed_bytes_count_against_the_job_limit(tmp_path: Path):
    f = tmp_path / "run.eval"
    f.write_bytes(_zip([HEADER, ("samples/a_epoch_1.json", json.dumps(sample()).encode() + b" " * 200_000)]))
    with pytest.raises(UnusableInput, match="per-job size limit"):
        load_record(member_ref(JobRef(tmp_path, f, RECORD), "a_epoch_1"), Budget(max_file=MAX, max_job=100_000))


def test_safezip_reads_only_from_memory():
    z = SafeZip(eval_zip(), "mem.eval")
    assert "header.json" in z.names() and z.read_json("header.json")["version"] == 2


# --------------------------------------------------------------------------- real files


def test_every_real_log_loads_and_matches_raw(corpus: Path):
    root = corpus / "inspect"
    refs = find_all_jobs(root)
    assert sorted(r.member for r in refs) == ["1_epoch_1", "1_epoch_1"] + [f"default_epoch_{i}" for i in range(1, 7)]
    for ref in refs:
        job = load_job(ref, Settings())
        t = job.trajectory
        if ref.anchor.suffix == ".eval":
            with zipfile.ZipFile(ref.anchor) as z:
                raw = json.loads(z.read(f"samples/{ref.member}.json"))
        else:
            raw = json.loads(ref.anchor.read_text())["samples"][0]
        atts = raw.get("attachments") or (raw.get("transcript") or {}).get("content") or {}
        raw_events = raw.get("events") or raw["transcript"]["events"]
        raw_tools = [e for e in raw_events if e["event"] == "tool"]
        calls = tools(t)
        assert [e.tool for e in calls] == [e["function"] for e in raw_tools]
        for ev, r in zip(calls, raw_tools, strict=True):
            cmd = r["arguments"].get("cmd")
            if cmd is not None:
                cmd = atts.get(cmd.removeprefix("attachment://"), cmd)
                assert ev.command == cmd and ev.kind == EXECUTE
        assert not any(e.command.startswith("python taskhelper.py") for e in calls)
        assert not any(e.text.startswith(("attachment://", "tc://")) for e in t.events)
        score = next(iter(raw["scores"].values()))["value"]
        assert job.reward == {"C": 1.0, "I": 0.0, 1: 1.0}[score]
        assert job.model == json.loads(ref.anchor.read_text())["eval"]["model"] if ref.anchor.suffix == ".json" \
            else job.model == "anthropic/claude-opus-4-1-20250805"


def test_real_eval_spot_checks(corpus: Path):
    f = corpus / "inspect/METR__inspect-action/tests/core/importer/data_fixtures/eval_logs/small.eval"
    ref = JobRef(f.parent, f, RECORD)
    t, info = load_record(member_ref(ref, "default_epoch_1"), Budget())
    cat = next(e for e in tools(t) if e.command == "cat /home/agent/input")
    assert cat.paths == ("/home/agent/input",) and cat.status == "ok"
    sed = next(e for e in tools(t) if e.command.startswith("sed -i"))
    assert "list_type = cells" in sed.command
    first_run = next(e for e in tools(t) if "./oxDNA input" in e.command)
    assert first_run.status == "failed"  # the sandbox exec inside the tool span exited 1
    harness = [e.text for e in t.events if e.type == OTHER and e.text.startswith("[harness sandbox")]
    assert any("--operation score" in h for h in harness) and any("--operation start" in h for h in harness)
    assert (info["task"], info["reward"], info["agent"]) == ("oxdna_simple", 1.0, "metr_agents/react")
    browser = corpus / "inspect/UKGovernmentBEIS__inspect_ai/tests/analysis/test_logs"
    [bref] = find_all_jobs(browser)
    job = load_job(bref, Settings())
    assert [e.kind for e in tools(job.trajectory)] == [FETCH] * 4
    assert job.trajectory.events[-1].type == AGENT and job.reward == 1.0
    assert job.trajectory.meta["sandbox_events"] == {"harness": 0, "in_tool_calls": 10}


def test_real_jobs_have_no_anticheat_fail(corpus: Path):
    principles = [p for p in registry().values() if p.family == "anticheat"]
    for ref in find_all_jobs(corpus / "inspect"):
        audit = audit_job(ref, Settings(), principles)
        assert audit.error is None, audit.error
        assert not [c for c, r in audit.results.items() if r.status == "FAIL"], ref


def test_edit_kinds():
    t = load_text(json.dumps({**header(1), "samples": [{
        **sample(), "events": [model("", [("e", "text_editor", {"command": "create", "path": "/app/y.py"})]),
                               {"event": "tool", "id": "e", "function": "text_editor",
                                "arguments": {"command": "create", "path": "/app/y.py", "file_text": "x"},
                                "result": "created"}]}]}), "l.json")
    [ev] = tools(t)
    assert (ev.kind, ev.paths, ev.status) == (EDIT, ("/app/y.py",), "ok")


def test_model_graded_scorer_is_not_the_agent():
    s = sample()
    s["events"] += [
        {"event": "model", "span_id": "s-score", "output": {"choices": [{"message": {
            "role": "assistant", "content": "GRADE: C. The answer key /oracle/solution.txt says 42."}}]}},
    ]
    old = sample()
    old["events"] = [{"event": "step", "action": "begin", "type": "solver", "name": "generate"},
                     model([{"type": "text", "text": "42"}], span=None),
                     {"event": "step", "action": "end", "type": "solver", "name": "generate"},
                     {"event": "step", "action": "begin", "type": "scorer", "name": "model_graded_qa"},
                     model([{"type": "text", "text": "GRADE: I"}], span=None),
                     {"event": "step", "action": "end", "type": "scorer", "name": "model_graded_qa"}]
    for smp, final in ((s, "The answer is 42."), (old, "42")):
        t = load_text(json.dumps({**header(1), "samples": [smp]}), "l.json")
        agent = [e.text for e in t.events if e.type == AGENT]
        assert agent[-1] == final and not any("GRADE" in x for x in agent)
        assert t.meta["scorer_events"] == 1


def test_duplicate_samples_and_unsafe_ids(tmp_path: Path):
    f = tmp_path / "log.json"
    f.write_text(log_json([sample(1, 1), sample(1, 1)]))
    with pytest.raises(UnusableInput, match="duplicate record id '1_epoch_1'"):
        list_members(JobRef(tmp_path, f, RECORD), MAX, inspect_ai)
    g = tmp_path / "odd.eval"
    g.write_bytes(eval_zip([sample("a::b [1]", 1)]))
    ref = JobRef(tmp_path, g, RECORD)
    assert list_members(ref, MAX, inspect_ai) == ["a::b [1]_epoch_1"]
    t, info = load_record(member_ref(ref, "a::b [1]_epoch_1"), Budget())
    assert info["trial"] == "a::b [1]_epoch_1" and tools(t)
    from pytest_trajaudit.loaders.multi import node_name
    assert node_name("a::b [1]_epoch_1") == "a__b__1__epoch_1"
