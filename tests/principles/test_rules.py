"""Rules family: TG-1..TG-5 (the trace-grader path checks), each with a positive and a negative fixture, over
canonical traces, Claude Code, BenchFlow ACP, Codex and SWE-agent-style tool names, in both modes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_trajaudit.aggregate.verdicts import trace_run_verdict
from pytest_trajaudit.loaders import hooklib, traces
from pytest_trajaudit.loaders.common import tool_event
from pytest_trajaudit.model import Job, Trajectory, Verifier
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.rules import actions
from pytest_trajaudit.safeio import parse_text
from pytest_trajaudit.settings import Rules, Settings
from tests.helpers import load_text
from tests.principles.builders import acp_job, read, sh, write

TG = ("TG-1", "TG-2", "TG-3", "TG-4", "TG-5")


def cfg(literal: bool = False, **rules) -> Settings:
    return Settings(literal=literal, rules=Rules(**rules))


def run(code: str, j: Job, settings: Settings | None = None):
    return registry()[code].func(j, settings or cfg())


def tjob(*steps: tuple, ok: bool = True) -> Job:
    """A job from canonical trace steps (tool, args[, ok])."""
    doc = {"runs": [{"run_id": "r", "task": "T", "ok": ok,
                     "steps": [{"tool": s[0], "args": s[1], **({"ok": s[2]} if len(s) > 2 else {})} for s in steps]}]}
    traj, meta = traces.load_member(parse_text(json.dumps(doc), "traces.json"), "traces.json", "r")
    return Job(dir=Path("/jobs"), anchor=Path("/jobs/traces.json"), layout="bare-file", task=meta["task"],
               trial=meta["trial"], verifier=Verifier(reward=meta["reward"], reward_source=meta["reward_source"]),
               trajectory=traj)


def claude_job(*calls: tuple, reward: float | None = 1.0, cwd: str = "/app", side: tuple = ()) -> Job:
    """A Claude Code session transcript: calls are (name, input[, is_error]); ``side`` are sub-agent calls."""
    lines: list[dict] = [{"type": "user", "sessionId": "S", "isSidechain": False, "cwd": cwd,
                          "message": {"role": "user", "content": "fix the bug"}}]
    for i, c in enumerate([*calls, *side]):
        sc = i >= len(calls)
        lines.append({"type": "assistant", "sessionId": "S", "isSidechain": sc, "message": {
            "id": f"m{i}", "role": "assistant", "content": [{"type": "tool_use", "id": f"u{i}", "name": c[0],
                                                             "input": c[1]}]}})
        lines.append({"type": "user", "sessionId": "S", "isSidechain": sc, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"u{i}", "content": "out", "is_error": bool(c[2:] and c[2])}]}})
    traj = load_text("\n".join(json.dumps(x) for x in lines) + "\n", "session.jsonl")
    traj.meta["cwd"] = cwd
    return Job(dir=Path("/jobs/t"), anchor=Path("/jobs/t/result.json"), layout="harbor-trial",
               verifier=Verifier(reward=reward, reward_source="reward.txt" if reward is not None else None),
               trajectory=traj)


def events_job(*events, reward: float | None = 1.0) -> Job:
    for i, e in enumerate(events):
        e.index = i
    return Job(dir=Path("/jobs/t"), anchor=Path("/jobs/t/x"), layout="bare-file",
               verifier=Verifier(reward=reward), trajectory=Trajectory("chat", "x", list(events)))


def test_rules_family_registered():
    reg = registry()
    assert [c for c, p in reg.items() if p.family == "rules"] == list(TG)
    assert {reg[c].key for c in TG} == {"forbidden_tool", "out_of_order", "retry_storm", "excessive_steps",
                                       "edited_without_read"}
    assert all(reg[c].tier == "C0" and not reg[c].affects_verdict for c in TG)


# ============================================================================================ tool-name mapping


@pytest.mark.parametrize(("event", "expected"), [
    (tool_event(0, "Read", {"file_path": "/a"}), {"read"}),  # Claude Code
    (tool_event(0, "read", {"path": "/a"}), {"read"}),  # opencode, traces.json
    (tool_event(0, "Read", {}, kind="read", title="Read File"), {"read"}),  # BenchFlow ACP
    (tool_event(0, "str_replace_editor", {"command": "view", "path": "/a"}), {"read"}),  # SWE-agent / OpenHands
    (tool_event(0, "str_replace_editor", {"command": "str_replace", "path": "/a"}), {"edit"}),
    (tool_event(0, "str_replace_editor", {"command": "create", "path": "/a", "file_text": "x"}), {"write"}),
    (tool_event(0, "Edit", {"file_path": "/a"}), {"edit"}),
    (tool_event(0, "MultiEdit", {"file_path": "/a"}), {"edit"}),
    (tool_event(0, "Write", {"file_path": "/a"}), {"write"}),
    (tool_event(0, "write_file", {"path": "/a"}), {"write"}),
    (tool_event(0, "apply_patch", {"input": "*** Update File: a"}), {"edit"}),  # Codex
    (tool_event(0, "Bash", {"command": "cat /a"}), {"execute", "read"}),
    (tool_event(0, "shell", {"command": ["bash", "-lc", "sed -n 1,40p a.py"]}), {"execute", "read"}),
    (tool_event(0, "Bash", {"command": "grep -rn foo src"}), {"execute", "search"}),
    (tool_event(0, "Bash", {"command": "cat a > b"}), {"execute"}),  # writes: not a read
    (tool_event(0, "Bash", {"command": "python x.py"}), {"execute"}),
    (tool_event(0, "Grep", {"pattern": "x"}), {"search"}),
    (tool_event(0, "Glob", {"pattern": "*.py"}), {"search"}),
    (tool_event(0, "WebFetch", {"url": "u"}), {"fetch"}),
    (tool_event(0, "TodoWrite", {"todos": []}), {"plan"}),
    (tool_event(0, "update_plan", {"plan": []}), {"plan"}),
    (tool_event(0, "force_push", {}), set()),
])
def test_rule_words(event, expected):
    assert actions(event) == expected


# ============================================================================================ TG-1 forbidden


def test_tg1_forbidden_tool_fails_with_the_original_flag():
    f = run("TG-1", tjob(("read", {}), ("force_push", {"remote": "origin"})), cfg(forbidden_tools=("force_push",)))
    assert f.status == "FAIL"
    assert f.evidence == "high forbidden_tool: forbidden tool 'force_push' used at step 2"
    [flag] = f.data["flags"]
    assert {k: flag[k] for k in ("check", "severity", "step", "tool", "detail")} == {
        "check": "forbidden_tool", "severity": "high", "step": 2, "tool": "force_push",
        "detail": "forbidden tool 'force_push' used at step 2"}


def test_tg1_pass_and_not_applicable():
    assert run("TG-1", tjob(("read", {})), cfg(forbidden_tools=("force_push",))).status == "PASS"
    na = run("TG-1", tjob(("force_push", {})))  # engine default: no forbidden tools
    assert na.status == "N/A" and "no forbidden_tools configured" in na.evidence
    assert run("TG-1", tjob(), cfg(forbidden_tools=("x",))).evidence == "no tool calls: no path to grade"


def test_tg1_names_in_any_case_and_rule_words_precise_only():
    j = claude_job(("Bash", {"command": "git push --force"}), ("WebFetch", {"url": "https://x"}))
    assert run("TG-1", j, cfg(forbidden_tools=("bash",))).status == "FAIL"
    assert run("TG-1", j, cfg(forbidden_tools=("fetch",))).data["flags"][0]["tool"] == "WebFetch"
    assert run("TG-1", j, cfg(True, forbidden_tools=("bash", "fetch"))).status == "PASS"  # literal: exact names
    assert run("TG-1", j, cfg(True, forbidden_tools=("Bash",))).status == "FAIL"


def test_tg1_sub_agent_calls_precise_only():
    j = claude_job(("Read", {"file_path": "/a"}), side=(("force_push", {}),))
    f = run("TG-1", j, cfg(forbidden_tools=("force_push",)))
    assert f.status == "FAIL" and f.data["flags"][0]["step"] is None and "sub-agent" in f.evidence
    assert run("TG-1", j, cfg(True, forbidden_tools=("force_push",))).status == "PASS"


def test_tg1_severity_override_turns_fail_into_warn():
    settings = cfg(forbidden_tools=("force_push",))
    settings.rules.severities["forbidden_tool"] = "medium"
    f = run("TG-1", tjob(("force_push", {})), settings)
    assert f.status == "WARN" and f.data["flags"][0]["severity"] == "medium"
    assert trace_run_verdict(True, f.data["flags"]) == "pass-with-warnings"


# ============================================================================================ TG-2 out of order


def test_tg2_flags_every_offending_step():
    f = run("TG-2", tjob(("edit", {"path": "a"}), ("edit", {"path": "a"}), ("read", {"path": "a"}),
                         ("edit", {"path": "a"})), cfg(must_precede=(("read", "edit"),)))
    assert f.status == "WARN"
    assert [fl["detail"] for fl in f.data["flags"]] == ["'edit' at step 1 not preceded by 'read'",
                                                        "'edit' at step 2 not preceded by 'read'"]


def test_tg2_pass_and_not_applicable():
    rules = {"must_precede": (("read", "edit"), ("plan", "act"))}
    assert run("TG-2", tjob(("read", {}), ("edit", {})), cfg(**rules)).status == "PASS"
    assert run("TG-2", tjob(("edit", {}))).status == "N/A"  # engine default: no pairs


def test_tg2_maps_each_format_onto_the_rule_words():
    rules = {"must_precede": (("read", "edit"),)}
    # Claude Edit without a Read: precise flags it; literal never matches 'read'/'edit' against Read/Edit (quirk)
    j = claude_job(("Edit", {"file_path": "/app/a.py", "old_string": "x", "new_string": "y"}))
    assert run("TG-2", j, cfg(**rules)).status == "WARN"
    assert run("TG-2", j, cfg(True, **rules)).status == "PASS"
    # a shell read grounds the order; ACP 'Read File' counts as read
    assert run("TG-2", claude_job(("Bash", {"command": "cat /app/a.py"}), ("Edit", {"file_path": "/app/a.py"})),
               cfg(**rules)).status == "PASS"
    acp = acp_job(read("/root/in.csv"), write("/root/solve.py"), sh("python /root/solve.py"))
    assert run("TG-2", acp, cfg(must_precede=(("read", "write"), ("execute", "write")))).data["n_flags"] == 1


# ============================================================================================ TG-3 retry storm


def test_tg3_storm_of_one_tool():
    f = run("TG-3", tjob(("read", {}, True), ("edit", {}, False), ("edit", {}, False), ("edit", {}, False),
                         ("edit", {}, True)), cfg(retry_threshold=2))
    assert f.status == "WARN"
    assert [(fl["step"], fl["detail"]) for fl in f.data["flags"]] == [(2, "'edit' failed 3x in a row (> threshold 2)")]


@pytest.mark.parametrize("steps", [
    [("edit", {}, False), ("edit", {}, False), ("edit", {}, True)],  # at the threshold, not above
    [("edit", {}, False), ("test", {}, False), ("edit", {}, False)],  # different tools
    [("edit", {}, False), ("edit", {}, True), ("edit", {}, False), ("edit", {}, False)],  # broken by a success
])
def test_tg3_no_storm(steps):
    assert run("TG-3", tjob(*steps), cfg(retry_threshold=2)).status == "PASS"


def test_tg3_claude_errors_and_unknown_outcomes():
    j = claude_job(*[("Bash", {"command": "make"}, True)] * 4)
    assert run("TG-3", j).data["flags"][0]["detail"] == "'Bash' failed 4x in a row (> threshold 3)"
    na = run("TG-3", tjob(("edit", {}), ("edit", {})))  # no step says whether it succeeded
    assert na.status == "N/A" and "retry storms cannot be seen" in na.evidence


def test_tg3_not_applicable_on_a_hooklib_log():
    log = "\n".join(json.dumps({"ts": "t", "event": e, "session_id": "S", "tool_name": "Bash", "command": "ls"})
                    for e in ("PreToolUse", "PostToolUse")) + "\n"
    traj, _ = hooklib.load_member(parse_text(log, "a.jsonl"), "a.jsonl", "S")
    f = run("TG-3", Job(dir=Path("/j"), anchor=Path("/j/a.jsonl"), layout="bare-file", trajectory=traj))
    assert f.status == "N/A" and "records no failed calls" in f.evidence


# ============================================================================================ TG-4 excessive steps


def test_tg4_budget():
    over = run("TG-4", tjob(*[("read", {})] * 41))
    assert over.status == "WARN"
    flag = over.data["flags"][0]
    assert (flag["step"], flag["tool"], flag["detail"], flag["severity"]) == (41, None, "41 steps > budget 40", "low")
    assert run("TG-4", tjob(*[("read", {})] * 40)).status == "PASS"
    assert run("TG-4", tjob(*[("read", {})] * 3), cfg(step_budget=2)).status == "WARN"


# ============================================================================================ TG-5 grounding


def test_tg5_edit_without_read_once_per_file():
    j = claude_job(("Edit", {"file_path": "/app/a.py"}), ("Edit", {"file_path": "/app/a.py"}),
                   ("Edit", {"file_path": "/app/b.py"}))
    f = run("TG-5", j)
    assert f.status == "WARN"
    assert [fl["detail"] for fl in f.data["flags"]] == [
        "'Edit' edited '/app/a.py' at step 1 without reading it first (ungrounded)",
        "'Edit' edited '/app/b.py' at step 3 without reading it first (ungrounded)"]
    assert run("TG-5", j, cfg(True)).data["n_flags"] == 2  # the original's own tool names


@pytest.mark.parametrize("first", [
    ("Read", {"file_path": "/app/a.py"}),
    ("Write", {"file_path": "/app/a.py", "content": "x"}),  # authored: knows its content
    ("Grep", {"pattern": "def", "path": "/app/a.py"}),
    ("Bash", {"command": "cat a.py"}),  # precise: shell read, relative to the cwd /app
    ("Read", {"file_path": "a.py"}),  # precise: relative path resolved against the cwd
])
def test_tg5_grounded_edits(first):
    assert run("TG-5", claude_job(first, ("Edit", {"file_path": "/app/a.py"}))).status == "PASS"


def test_tg5_literal_keeps_the_original_vocabulary():
    # lower-case fixture names are not Edit/Read for the original (quirk): literal never flags them
    j = tjob(("edit", {"path": "db.sql"}, True))
    assert run("TG-5", j, cfg(True)).status == "PASS"
    assert run("TG-5", j).status == "WARN"
    # a shell read does not ground for the original
    sj = claude_job(("Bash", {"command": "cat /app/a.py"}), ("Edit", {"file_path": "/app/a.py"}))
    assert run("TG-5", sj, cfg(True)).status == "WARN"


def test_tg5_precise_failed_edits_and_created_files():
    failed = claude_job(("Edit", {"file_path": "/app/a.py"}, True))  # Claude refused: nothing was edited
    assert run("TG-5", failed).status == "PASS"
    assert run("TG-5", failed, cfg(True)).status == "WARN"
    patch = "*** Begin Patch\n*** Add File: new.py\n+x\n*** Update File: old.py\n@@\n-a\n+b\n*** End Patch"
    ev = tool_event(0, "apply_patch", {"input": patch}, status="ok")
    ev.paths = ("new.py", "old.py")
    f = run("TG-5", events_job(ev))
    assert [fl["detail"] for fl in f.data["flags"]] == [
        "'apply_patch' edited 'old.py' at step 1 without reading it first (ungrounded)"]
    add_only = tool_event(0, "apply_patch", {"input": "*** Add File: new.py\n+x"}, status="ok")
    add_only.paths = ("new.py",)
    assert run("TG-5", events_job(add_only)).evidence == "no in-place edits"
    view = tool_event(0, "str_replace_editor", {"command": "view", "path": "/r/x.py"}, status="ok")
    edit = tool_event(1, "str_replace_editor", {"command": "str_replace", "path": "/r/x.py"}, status="ok")
    assert run("TG-5", events_job(view, edit)).status == "PASS"


def test_tg5_not_applicable():
    assert run("TG-5", claude_job(("Edit", {"file_path": "/a"})), cfg(grounding=False)).status == "N/A"
    no_path = run("TG-5", acp_job(read("/root/x"), {"type": "tool_call", "tool_call_id": "e1", "kind": "edit",
                                                      "title": "Edit", "status": "completed", "content": []}))
    assert no_path.status == "N/A" and "none records the file" in no_path.evidence
    assert run("TG-5", claude_job(("Read", {"file_path": "/a"}))).evidence == "no in-place edits"


# ============================================================================================ run verdict


def test_delivery_and_run_verdict_inputs():
    assert run("TG-4", tjob(("read", {}), ok=False)).data["delivered"] is False
    j = claude_job(("Read", {"file_path": "/a"}), reward=0.5)
    assert (run("TG-4", j).data["delivered"], run("TG-4", j).data["delivered_source"]) == \
        (False, "reward 0.5 (reward.txt)")
    none = run("TG-4", claude_job(("Read", {"file_path": "/a"}), reward=None)).data
    assert none["delivered"] is None and "as if delivered" in none["delivered_source"]


@pytest.mark.parametrize(("delivered", "severities", "verdict"), [
    (True, [], "clean-pass"),
    (True, ["medium", "low"], "pass-with-warnings"),
    (True, ["low", "high"], "corrupt-success"),
    (False, ["high"], "fail"),
    (False, [], "fail"),
    (None, [], "clean-pass"),  # no delivery signal: the flags decide (the original's transcript rule)
    (None, ["high"], "corrupt-success"),
])
def test_trace_run_verdict(delivered, severities, verdict):
    assert trace_run_verdict(delivered, [{"severity": s} for s in severities]) == verdict


def test_every_rule_is_pure_and_mode_aware():
    j = tjob(("edit", {"path": "a"}, False), ("force_push", {}))
    settings = cfg(forbidden_tools=("force_push",), must_precede=(("read", "edit"),))
    before = dataclasses.asdict(settings.rules)
    for code in TG:
        f1, f2 = run(code, j, settings), run(code, j, settings)
        assert (f1.status, f1.data) == (f2.status, f2.data)
        assert f1.data["mode"] == "precise" and run(code, j, dataclasses.replace(settings, literal=True)).data["mode"] == "literal"
    assert dataclasses.asdict(settings.rules) == before


def _hook_job(*lines: dict) -> Job:
    log = "\n".join(json.dumps({"ts": "t", "session_id": "S", **ln}) for ln in lines) + "\n"
    traj, _ = hooklib.load_member(parse_text(log, "a.jsonl"), "a.jsonl", "S")
    return Job(dir=Path("/j"), anchor=Path("/j/a.jsonl"), layout="bare-file", trajectory=traj)


def test_hooklib_pre_and_post_of_one_edit_are_two_steps_in_literal_mode():
    """The seed's RULES.md D: hooklib logs PreToolUse and PostToolUse with tool_name, so the original counts one Edit
    as 2 steps and flags it edited_without_read once (the Post step finds the path already seen). Precise mode merges
    the pair into one call."""
    j = _hook_job({"event": "PreToolUse", "tool_name": "Edit", "file_path": "/app/a.py"},
                  {"event": "PostToolUse", "tool_name": "Edit", "file_path": "/app/a.py"})
    lit = run("TG-5", j, cfg(literal=True))
    assert lit.data["step_count"] == 2 and lit.data["delivered"] is True
    assert [(f["check"], f["step"], f["tool"]) for f in lit.data["flags"]] == [("edited_without_read", 1, "Edit")]
    assert run("TG-4", j, cfg(literal=True)).data["step_count"] == 2
    precise = run("TG-5", j)
    assert precise.data["step_count"] == 1 and precise.data["n_flags"] == 1


def test_hooklib_literal_delivery_reads_each_lines_ok():
    """The original: step ok = the line's ``ok`` (default true), run ok = all steps ok; a PostToolUseFailure line
    without ``ok`` is ok there, a failed call here."""
    j = _hook_job({"event": "PreToolUse", "tool_name": "Bash", "command": "make"},
                  {"event": "PostToolUseFailure", "tool_name": "Bash", "command": "make"})
    assert run("TG-4", j, cfg(literal=True)).data["delivered"] is True
    assert run("TG-4", j).data["delivered"] is False
    k = _hook_job({"event": "PostToolUse", "tool_name": "Bash", "command": "make", "ok": False})
    assert run("TG-4", k, cfg(literal=True)).data["delivered"] is False


def test_the_five_checks_share_one_reading_of_a_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """TG-1..TG-5 of one job build its steps once and read each call's rule names and actions once (a 10,000-run
    traces.json runs the five checks on every run), and give the same findings as fresh readings would."""
    from pytest_trajaudit.principles import rules

    settings = cfg(forbidden_tools=("WebFetch",), must_precede=(("Bash", "Edit"),), step_budget=2)
    j = claude_job(("Read", {"file_path": "/app/a.py"}), ("Edit", {"file_path": "/app/b.py"}),
                   ("WebFetch", {"url": "https://x"}), ("Bash", {"command": "cat /app/b.py"}))
    counts = {"steps": 0, "actions": 0}
    real_steps, real_actions = rules._steps_of, rules.actions

    def steps_of(*a):
        counts["steps"] += 1
        return real_steps(*a)

    def actions(e):
        counts["actions"] += 1
        return real_actions(e)

    monkeypatch.setattr(rules, "_steps_of", steps_of)
    monkeypatch.setattr(rules, "actions", actions)
    shared = [run(code, j, settings) for code in TG]
    assert counts == {"steps": 1, "actions": 4}  # one list of steps, one reading of each of the 4 calls
    fresh = [run(code, dataclasses.replace(j, cache={}), settings) for code in TG]
    assert [(f.status, f.evidence, f.data) for f in shared] == [(f.status, f.evidence, f.data) for f in fresh]
    assert [f.status for f in shared] == ["FAIL", "WARN", "PASS", "WARN", "WARN"]
