"""Skills family (the seed's audit-skillsbench.md): SB-1 skill invocation, SB-3a partial follow-through, SB-3c
top-level only, in every event shape (Claude Code Skill tool, Codex reads of SKILL.md, generic reads, BenchFlow
``kind: "skill"``, terminus-2-skills) and both modes; the seed's own examples; condition detection; SB-2 skill impact
and the PR-level skills flags; and the real corpus (3d-scan-calc Δ = +20 pp, the BenchFlow skill-lift pair)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.aggregate.verdicts import skill_impact, skill_outcome, skills_flags
from pytest_trajaudit.discover.jobs import bare_file, find_jobs
from pytest_trajaudit.loaders.job import load_job
from pytest_trajaudit.model import TOOL, Job, Task, UnusableInput
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.principles.skills import is_skill_invocation, workflow_steps
from pytest_trajaudit.report import schema as schema_mod
from pytest_trajaudit.report.audit import build_audit
from pytest_trajaudit.report.summary import Rollup
from pytest_trajaudit.settings import Settings
from tests.helpers import load_text
from tests.principles.builders import (
    LITERAL,
    MODES,
    PRECISE,
    job,
    msg,
    read,
    run,
    sh,
    thought,
    tool,
    user,
    write,
)

SCHEMA_DIR = Path(schema_mod.__file__).resolve().parent.parent / "schemas"

SKILL_MD = """---
name: trace-ledger
description: Build ledgers before inference.
---

# Trace Ledger

See [the protocol notes](references/protocols.md) for the discriminator.

## Workflow

1. Build a Trace Ledger and an Object Ledger BEFORE doing any deep inference (`ledger.json`).
2. Run `python scripts/classify.py --strict` over the ledger.
3. Write the ids to `/root/out.json`.
"""

NO_REF_SKILL_MD = "---\nname: plain\n---\n# Plain\n\nJust run `tool.py`.\n"


def sjob(*lines: dict, condition: str | None = "with-skills", reward: float | None = None,
         task_info: Task | None = None) -> Job:
    j = job(load_text(_jl(*lines), "acp_trajectory.jsonl"), reward=reward)
    j.condition = condition
    j.task_info = task_info
    return j


def _jl(*lines: dict) -> str:
    if not lines or lines[0].get("type") != "user_message":
        lines = (user("Solve the task."), *lines)
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def sb1(j, cfg=PRECISE):
    return run("SB-1", j, cfg)


def sb3a(j, cfg=PRECISE):
    return run("SB-3a", j, cfg)


def sb3c(j, cfg=PRECISE):
    return run("SB-3c", j, cfg)


# ACP shapes -------------------------------------------------------------------------------------------------

def skill_tool(name: str, body: str | None = None) -> dict:
    """claude-agent-acp: kind other, title Skill, content 'Launching skill: <name>' (the PR #755 shape)."""
    text = f"Launching skill: {name}" + (f"\n\n{body}" if body else "")
    return tool("other", "Skill", output=text)


def codex_read_skill(path: str, text: str) -> dict:
    """codex-acp: title 'Read SKILL.md', the path in locations, the manifest as content."""
    return tool("read", "Read SKILL.md", output=text, locations=[path])


def bf_skill(name: str, body: str = "# Body") -> dict:
    """Current BenchFlow: kind 'skill' (invoke_skill), the result '[skill: <name>]' + body."""
    return tool("skill", "invoke_skill", output=f"[skill: {name}]\n{body}")


# =========================================================================================== registry

def test_registered_as_skills_family_information_only():
    reg = registry()
    for code, key in (("SB-1", "skill_invocation"), ("SB-3a", "skill_misuse"), ("SB-3c", "skill_misuse")):
        p = reg[code]
        assert (p.tier, p.family, p.key, p.affects_verdict) == ("C0", "skills", key, False)
    assert list(reg).index("SB-1") < list(reg).index("SB-3a") < list(reg).index("SB-3c")


# =========================================================================================== SB-1 shapes

@pytest.mark.parametrize("mode", MODES)
def test_seed_verified_example_claude_skill_tool(mode):
    """The seed's audit-skillsbench.md VERIFIED (PR #755 claude-skills) and audit-example.json's skill_invocation."""
    j = sjob(tool("search", "ToolSearch", output="found Skill"), read("/root/traces/aborts.tsv", "1\t2"),
             skill_tool("transaction-protocol-reasoning"), thought("Now the foundations skill."),
             skill_tool("transaction-concurrency-control-foundations"),
             tool("read", "Read File", output="TicToc mini-spec ...",
                  locations=["references/representative-protocols.md"]),
             sh("head -5 /root/traces/writes.tsv", "1\t2\t3"),
             write("/root/analyze.py", "import bisect\n"), sh("python /root/analyze.py", "3216"),
             msg("Output written to /root/unnecessary_aborts.json with 3216 ids."), reward=1.0)
    f = sb1(j, MODES[mode])
    assert f.status == "PASS"
    assert f.data["status"] == "VERIFIED"
    assert f.data["skills_read"] == ["transaction-protocol-reasoning", "transaction-concurrency-control-foundations"]
    assert f.data["sub_files_read"] == [
        "transaction-concurrency-control-foundations/references/representative-protocols.md"]
    assert f.data["discovery_method"] == "Skill tool"
    assert "transaction-protocol-reasoning" in f.data["evidence"]
    jsonschema.validate({"skill_invocation": f.data},
                        {"type": "object", "properties": {"skill_invocation": _schema_def("SkillInvocation")}})


@pytest.mark.parametrize("mode", MODES)
def test_seed_partial_example_codex_reads_three_manifests_only(mode):
    """PR #755 codex-skills: 'Read SKILL.md' × 3, no references/*.md → PARTIAL, top_level_only."""
    names = ["transaction-concurrency-control-foundations", "transaction-protocol-reasoning",
             "transaction-trace-analysis"]
    reads = [codex_read_skill(f"/root/.codex/skills/{n}/SKILL.md",
                              f"---\nname: {n}\n---\nSee references/validation-and-abort-records.md") for n in names]
    j = sjob(*reads, sh("awk -F'\\t' '$4<=$5' /root/traces/aborts.tsv > /root/out.txt", ""), reward=0.45)
    f = sb1(j, MODES[mode])
    assert (f.status, f.data["status"]) == ("WARN", "PARTIAL")
    # literal: parse_codex_path, the seed's SB-3c example `skills_read = ["<skill>/SKILL.md", ...]`
    assert f.data["skills_read"] == ([f"{n}/SKILL.md" for n in names] if mode == "literal" else names)
    assert f.data["sub_files_read"] == []
    assert f.data["discovery_method"] == "Read SKILL.md"
    c = sb3c(j, MODES[mode])
    assert c.status == "WARN" and c.data["top_level_only"] is True


@pytest.mark.parametrize("mode", MODES)
def test_seed_not_invoked_example(mode):
    """'rg "Launching skill|Read SKILL\\.md|/skills/" trajectory.jsonl → (no matches), final reward: 1.0'."""
    j = sjob(read("/root/traces/aborts.tsv", "1\t2"), write("/root/solve.py"), sh("python /root/solve.py", "ok"),
             reward=1.0)
    f = sb1(j, MODES[mode])
    assert (f.status, f.data["status"], f.data["discovery_method"]) == ("WARN", "NOT_INVOKED", "none")
    assert f.data["skills_read"] == [] and f.data["sub_files_read"] == []
    assert sb3a(j, MODES[mode]).status == "N/A" and sb3c(j, MODES[mode]).status == "N/A"


@pytest.mark.parametrize("mode", MODES)
def test_claude_stream_json_skill_tool_with_injected_body(mode):
    """Claude Code: Skill tool_use {"skill": x} → tool_result 'Launching skill: x' → a user message with the body."""
    sid = "s-1"

    def line(t, content, **kw):
        return {"type": t, "message": {"id": kw.get("mid"), "role": "assistant" if t == "assistant" else "user",
                                       "content": content}, "parent_tool_use_id": None, "session_id": sid}

    text = "\n".join(json.dumps(x) for x in [
        {"type": "system", "subtype": "init", "cwd": "/root", "session_id": sid, "model": "m", "tools": ["Skill"],
         "skills": ["trace-ledger"]},
        line("user", [{"type": "text", "text": "Solve it."}]),
        line("assistant", [{"type": "tool_use", "id": "tu1", "name": "Skill", "input": {"skill": "trace-ledger"}}],
             mid="m1"),
        line("user", [{"type": "tool_result", "tool_use_id": "tu1", "content": "Launching skill: trace-ledger"}]),
        line("user", [{"type": "text", "text": "Base directory for this skill: /root/.claude/skills/trace-ledger\n\n"
                       + SKILL_MD}]),
        line("assistant", [{"type": "tool_use", "id": "tu2", "name": "Read",
                            "input": {"file_path": "/root/.claude/skills/trace-ledger/references/protocols.md"}}],
             mid="m2"),
        line("user", [{"type": "tool_result", "tool_use_id": "tu2", "content": "protocol notes"}]),
        line("assistant", [{"type": "tool_use", "id": "tu3", "name": "Write",
                            "input": {"file_path": "/root/ledger.json", "content": "{}"}}], mid="m3"),
        line("user", [{"type": "tool_result", "tool_use_id": "tu3", "content": "ok"}]),
        line("assistant", [{"type": "tool_use", "id": "tu4", "name": "Bash",
                            "input": {"command": "python scripts/classify.py --strict > /root/out.json"}}],
             mid="m4"),
        line("user", [{"type": "tool_result", "tool_use_id": "tu4", "content": "done"}]),
    ]) + "\n"
    traj = load_text(text, "claude-code.txt")
    assert traj.format == "claude-stream-json"
    j = job(traj)
    j.condition = "with-skills"
    f = sb1(j, MODES[mode])
    assert (f.status, f.data["status"], f.data["discovery_method"]) == ("PASS", "VERIFIED", "Skill tool")
    assert f.data["skills_read"] == ["trace-ledger"]
    assert f.data["sub_files_read"] == ["trace-ledger/references/protocols.md"]
    a = sb3a(j, MODES[mode])
    assert a.status == "PASS" and a.data["partial_follow_through"] is False
    assert a.data["workflows"][0]["performed"] == [1, 2, 3]


def test_codex_rollout_shell_reads_skill_md():
    """Codex CLI: `cat /root/.codex/skills/x/SKILL.md` through the shell tool (no Read tool at all)."""
    def call(cid, cmd):
        return {"timestamp": "t", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": cid,
            "arguments": json.dumps({"command": ["bash", "-lc", cmd]})}}

    def out(cid, text):
        return {"timestamp": "t", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": cid,
            "output": json.dumps({"output": text, "metadata": {"exit_code": 0}})}}

    text = "\n".join(json.dumps(x) for x in [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cwd": "/root"}},
        call("c1", "ls /root/.codex/skills"), out("c1", "trace-ledger"),
        call("c2", "sed -n '1,200p' /root/.codex/skills/trace-ledger/SKILL.md"), out("c2", SKILL_MD),
        call("c3", "python /root/solve.py > /root/out.json"), out("c3", ""),
    ]) + "\n"
    traj = load_text(text, "rollout.jsonl")
    assert traj.format == "codex-rollout"
    j = job(traj)
    j.condition = "with-skills"
    f = sb1(j)
    assert f.data["skills_read"] == ["trace-ledger"] and f.data["discovery_method"] == "Read SKILL.md"
    assert f.data["status"] == "PARTIAL"  # never opened references/protocols.md, skipped the ledger step
    assert sb3c(j).data["top_level_only"] is True
    a = sb3a(j)
    assert a.status == "WARN" and a.data["partial_follow_through"] is True
    assert "prescribed first step was skipped" in a.evidence
    ls_call = next(e for e in traj.events if e.type == TOOL and e.command.startswith("ls"))
    assert f"#{ls_call.index} " not in f.data["evidence"]  # listing the skills mount is discovery, not a read


@pytest.mark.parametrize("mode", MODES)
def test_generic_reads_of_skill_files(mode):
    """Generic fallback: a Read of **/SKILL.md, then **/skills/**/*.md (any mount point)."""
    j = sjob(read("/workspace/skills/trace-ledger/SKILL.md", SKILL_MD),
             read("/workspace/skills/trace-ledger/references/protocols.md", "notes"),
             write("/root/ledger.json", "{}"), sh("python scripts/classify.py --strict", "ok"),
             write("/root/out.json", "[]"))
    f = sb1(j, MODES[mode])
    if mode == "precise":
        assert (f.data["status"], f.data["discovery_method"]) == ("VERIFIED", "Read SKILL.md")
        assert f.data["skills_read"] == ["trace-ledger"]
        assert f.data["sub_files_read"] == ["trace-ledger/references/protocols.md"]
    else:  # no generic fallback in the seed's code: 'references/…md' anywhere in an event's JSON is a sub-file,
        # parse_path(evt) its path, and nothing goes to skills_read (the SKILL.md's own text names references/)
        assert f.data["skills_read"] == []
        assert f.data["sub_files_read"] == ["trace-ledger/SKILL.md", "trace-ledger/references/protocols.md"]
        assert (f.data["status"], f.data["discovery_method"]) == ("NOT_INVOKED", "none")


def test_literal_skill_md_mentioning_a_reference_is_only_a_sub_file():
    """The seed's detect_skill_invocations: a Read File of SKILL.md whose text names references/bar.md matches
    neither 'Launching skill:' nor a 'Read SKILL.md' title, so only sub_files_read gets it (parse_path(evt)) — no
    skill was read, no Glob fallback. Precise mode counts the SKILL.md read."""
    j = sjob(read("/root/.claude/skills/foo/SKILL.md", "# Foo\n\nSee references/bar.md for details.\n"),
             sh("python /root/solve.py", "ok"))
    lit = sb1(j, LITERAL)
    assert (lit.status, lit.data["status"], lit.data["discovery_method"]) == ("WARN", "NOT_INVOKED", "none")
    assert (lit.data["skills_read"], lit.data["sub_files_read"]) == ([], ["foo/SKILL.md"])
    assert "sub_files_read: foo/SKILL.md" in lit.evidence
    assert run("SB-3c", j, LITERAL).status == "N/A"  # no skill used
    precise = sb1(j, PRECISE)
    assert (precise.data["skills_read"], precise.data["discovery_method"]) == (["foo"], "Read SKILL.md")


def test_generic_skill_script_only_is_glob_fallback():
    """The real 3d-scan-calc shape: Glob finds the skill, the agent reads and runs its script, never SKILL.md."""
    j = sjob(tool("search", "Glob", output="/root/.claude/skills/mesh-analysis/SKILL.md\n/root/scan.stl"),
             read("/root/.claude/skills/mesh-analysis/scripts/mesh_tool.py", "class MeshAnalyzer: ..."),
             sh("python3 /root/.claude/skills/mesh-analysis/scripts/mesh_tool.py /root/scan.stl", "{}"))
    f = sb1(j)
    assert (f.status, f.data["status"], f.data["discovery_method"]) == ("PASS", "VERIFIED", "Glob fallback")
    assert f.data["skills_read"] == ["mesh-analysis"]
    assert f.data["sub_files_read"] == ["mesh-analysis/scripts/mesh_tool.py"]
    assert sb3c(j).data["top_level_only"] is False
    assert sb3a(j).status == "N/A"


@pytest.mark.parametrize("mode", MODES)
def test_benchflow_kind_skill(mode):
    j = sjob(bf_skill("transaction-protocol-reasoning"), write("/root/ledger.json"),
             sh("python scripts/classify.py --strict > /root/out.json"))
    f = sb1(j, MODES[mode])
    if mode == "precise":
        assert f.data["skills_read"] == ["transaction-protocol-reasoning"]
        assert f.data["discovery_method"] == "Skill tool"
    else:  # no 'Launching skill:' in the line: the seed's code does not see BenchFlow's own kind
        assert f.data["status"] == "NOT_INVOKED"


def test_terminus_load_skill_body_in_next_message():
    """terminus-2-skills: {"load_skill": x} → 'Loaded skill: x' + SKILL.md in the next prompt."""
    j = sjob(tool("skill", "load_skill trace-ledger", raw_input={"load_skill": "trace-ledger"}),
             user("Loaded skill: trace-ledger\n---\n" + SKILL_MD),
             sh("python scripts/classify.py --strict > /root/out.json"))
    f = sb1(j)
    assert f.data["skills_read"] == ["trace-ledger"]
    a = sb3a(j)
    assert a.status == "WARN"  # ledger step skipped
    assert a.data["workflows"][0]["source"].endswith("result")


@pytest.mark.parametrize(("line", "expected"), [
    (tool("other", "Skill", output="Launching skill: x"), True),
    (tool("other", "skill", output="anything"), True),
    (tool("tool", "run", output="<skill_content name=\"x\">body</skill_content>"), True),
    (tool("other", "Read", output="## Skill: x\nbody"), True),
    (tool("other", "x", output="Tool: invoke_skill\nResult:\n[skill: x]\nbody"), True),
    (tool("skill", "whatever"), True),
    (tool("execute", "invoke_skill"), True),
    (tool("execute", "Terminal", output="Launching skill: x"), False),  # real kind: output never reclassifies
    (tool("read", "skill"), False),  # bare title "skill" only for unclassified kinds (ACP tool = title)
    (tool("other", "Notes", output="the log says Launching skill: x"), False),  # not at the start
    (tool("other", "x", output="Tool: invoke_skill\nno marker"), False),
])
def test_production_classifier(line, expected):
    [e] = [e for e in load_text(_jl(line), "a.jsonl").events if e.type == TOOL]
    assert is_skill_invocation(e, PRECISE) is expected


def test_quoted_launch_text_is_a_skill_only_in_literal_mode():
    """The doc's `"Launching skill:" in json.dumps(evt)` trips on any quoted text; the classifier does not."""
    j = sjob(sh("grep -r 'Launching skill:' /root/logs", "/root/logs/a.log: Launching skill: pdf"))
    assert sb1(j, PRECISE).data["status"] == "NOT_INVOKED"
    lit = sb1(j, LITERAL)
    assert lit.data["skills_read"] == ["pdf"] and lit.data["discovery_method"] == "Skill tool"


def test_mentions_and_listings_are_not_reads():
    j = sjob(msg("I will read /root/.claude/skills/x/SKILL.md next."), sh("ls -la /root/.claude/skills/x"),
             sh("find / -name SKILL.md", "/root/.claude/skills/x/SKILL.md"),
             read("/root/.claude/skills/x/SKILL.md", "cat: No such file or directory"),
             tool("read", "Read File", status="failed", raw_input={"file_path": "/root/skills/y/SKILL.md"}))
    assert sb1(j).data["status"] == "NOT_INVOKED"


def test_failed_skill_call_does_not_count():
    assert sb1(sjob(tool("other", "Skill", status="failed", output="Launching skill: x"))).data["status"] == \
        "NOT_INVOKED"


def test_hostile_commands_and_skill_texts_stay_linear():
    """Agent-written commands and SKILL.md text go through regexes: none may backtrack quadratically."""
    import time

    long_path = "cat " + "a/" * 50_000 + "x"
    md = "## Workflow\n" + "\n".join(f"{i % 99}. run `step_{i}.py` " + "a_" * 20 for i in range(5_000))
    t0 = time.perf_counter()
    j = sjob(read("/s/skills/k/SKILL.md", md), sh(long_path), sh("# a" + " " * 20_000 + "x"),
             sh("cat " + "references/" * 20_000), write("/root/x.py", "\n" * 100_000))
    for cfg in (PRECISE, LITERAL):
        for code in ("SB-1", "SB-3a", "SB-3c"):
            run(code, j, cfg)
    assert time.perf_counter() - t0 < 10


def test_builtin_skills_are_ignored_unless_the_task_ships_one(tmp_path):
    j = sjob(skill_tool("verify"))
    f = sb1(j)
    assert f.data["status"] == "NOT_INVOKED" and "built-in" in f.evidence
    task = _task(tmp_path, {"verify": "# Verify\n"})
    f2 = sb1(sjob(skill_tool("verify"), task_info=task))
    assert f2.data["skills_read"] == ["verify"]


# =========================================================================================== condition gates

@pytest.mark.parametrize("mode", MODES)
def test_no_skills_run_is_na(mode):
    j = sjob(read("/root/in.csv"), condition="no-skills")
    for code in ("SB-1", "SB-3a", "SB-3c"):
        f = run(code, j, MODES[mode])
        assert f.status == "N/A" and "without skills" in f.evidence
    assert sb1(j).data["leak"] is False


def test_no_skills_run_that_used_a_skill_names_the_leak():
    """BenchFlow's no-skill-leak eval shape: a no-skills run that read and invoked a skill."""
    j = sjob(read("/home/agent/.codex/skills/task-helper/SKILL.md", "# helper"), bf_skill("task-helper"),
             condition="no-skills")
    f = sb1(j)
    assert f.status == "N/A" and "skill leak" in f.evidence and f.data["leak"] is True
    assert f.data["skills_read"] == ["task-helper"]


def test_unknown_condition_is_na_with_reason():
    f = sb1(sjob(skill_tool("x"), condition=None))
    assert f.status == "N/A" and f.evidence.startswith("condition unknown") and "skills used" in f.evidence


# =========================================================================================== SB-3c

def test_top_level_only_negative_when_references_opened():
    j = sjob(codex_read_skill("/root/.codex/skills/trace-ledger/SKILL.md", SKILL_MD),
             sh("cat /root/.codex/skills/trace-ledger/references/protocols.md", "notes"))
    f = sb3c(j)
    assert f.status == "PASS" and f.data["top_level_only"] is False


def test_top_level_only_skips_skills_without_references_in_precise_mode():
    j = sjob(codex_read_skill("/root/.codex/skills/plain/SKILL.md", NO_REF_SKILL_MD), sh("python tool.py"))
    assert sb3c(j, PRECISE).data["top_level_only"] is False
    assert sb3c(j, LITERAL).data["top_level_only"] is True  # the seed's formula, literally
    assert sb1(j, PRECISE).data["status"] == "VERIFIED"


def test_top_level_only_uses_the_task_skill_dir(tmp_path):
    task = _task(tmp_path, {"plain": NO_REF_SKILL_MD}, references={"plain": ["deep.md"]})
    j = sjob(skill_tool("plain"), sh("python tool.py"), task_info=task)  # no text in the trajectory
    f = sb3c(j)
    assert f.status == "WARN" and f.data["top_level_only"] is True and "unknown" not in f.evidence


def test_top_level_only_unknown_references_still_applies_the_seed_rule():
    f = sb3c(sjob(skill_tool("opaque"), sh("python x.py")))
    assert f.status == "WARN" and "unknown" in f.evidence


def test_bare_relative_reference_is_attributed_to_the_loaded_skill():
    j = sjob(skill_tool("a"), skill_tool("b", "see references/deep.md"),
             tool("read", "Read File", locations=["references/deep.md"], output="x"))
    assert sb1(j).data["sub_files_read"] == ["b/references/deep.md"]


# =========================================================================================== SB-3a

def test_workflow_steps_numbered_list_and_step_headings():
    steps = workflow_steps(SKILL_MD)
    assert [s.n for s in steps] == [1, 2, 3]
    assert "ledger.json" in steps[0].strong
    assert "scripts/classify.py" in steps[1].strong and "--strict" in steps[1].strong
    md = "# S\n\n## Procedure\n\n### Step 1: Build the per-key timeline\ntext\n### Step 2: Run `solve.py`\n## Notes\n1. x"
    steps = workflow_steps(md)
    assert [(s.n, s.text.splitlines()[0]) for s in steps] == [(1, "Build the per-key timeline"), (2, "Run `solve.py`")]
    assert "timeline" in steps[0].weak


def test_workflow_steps_ignores_lists_outside_the_section_and_in_code():
    md = "# S\n\n1. not a step\n\n## Workflow\n\n```\n1. in code\n```\n\nprose\n\n## Other\n\n1. no"
    assert workflow_steps(md) == []
    assert workflow_steps("# S\n**Steps:**\n1. Run `a.py`\n2. Run `b.py`\n") != []


def test_follow_through_pass_and_partial():
    good = sjob(read("/skills/trace-ledger/SKILL.md", SKILL_MD), read("/skills/trace-ledger/references/protocols.md"),
                write("/root/ledger.json", "{}"), sh("python scripts/classify.py --strict"),
                write("/root/out.json", "[]"))
    f = sb3a(good)
    assert f.status == "PASS" and f.data["partial_follow_through"] is False
    assert sb1(good).data["status"] == "VERIFIED"
    bad = sjob(read("/skills/trace-ledger/SKILL.md", SKILL_MD), read("/skills/trace-ledger/references/protocols.md"),
               thought("I should build a per-txn ledger first."), write("/root/solve.py", "print(1)"),
               write("/root/out.json", "[]"))
    f = sb3a(bad)
    assert f.status == "WARN" and f.data["partial_follow_through"] is True
    assert "1/3" in f.evidence and "first step was skipped" in f.evidence
    assert sb1(bad).data["status"] == "PARTIAL" and "partial follow-through" in sb1(bad).evidence


def test_follow_through_counts_only_actions_after_the_load():
    j = sjob(write("/root/ledger.json"), sh("python scripts/classify.py --strict"),
             read("/skills/trace-ledger/SKILL.md", SKILL_MD), write("/root/out.json", "[]"))
    assert sb3a(j).data["partial_follow_through"] is True


def test_follow_through_reads_skill_md_from_the_task(tmp_path):
    task = _task(tmp_path, {"trace-ledger": SKILL_MD})
    j = sjob(skill_tool("trace-ledger"), write("/root/ledger.json"), sh("python scripts/classify.py --strict"),
             write("/root/out.json"), task_info=task)
    f = sb3a(j)
    assert f.status == "PASS" and f.data["workflows"][0]["source"] == "task skills_dir"


def test_follow_through_never_follows_a_symlinked_skill_md(tmp_path):
    secret = tmp_path / "outside.md"
    secret.write_text(SKILL_MD)
    task = _task(tmp_path, {"trace-ledger": None})
    (task.skills_dir / "trace-ledger" / "SKILL.md").symlink_to(secret)
    f = sb3a(sjob(skill_tool("trace-ledger"), task_info=task))
    assert f.status == "N/A" and "unavailable" in f.evidence


def test_follow_through_na_reasons():
    assert "unavailable" in sb3a(sjob(skill_tool("x"))).evidence
    assert "no --trajaudit-tasks" in sb3a(sjob(skill_tool("x"))).evidence
    f = sb3a(sjob(read("/skills/plain/SKILL.md", NO_REF_SKILL_MD)))
    assert f.status == "N/A" and "no Workflow" in f.evidence


def test_claude_read_output_line_numbers_are_stripped():
    numbered = "\n".join(f"{i + 1:>6}→{ln}" for i, ln in enumerate(SKILL_MD.splitlines()))
    j = sjob(read("/root/.claude/skills/trace-ledger/SKILL.md", numbered), write("/root/ledger.json"),
             sh("python scripts/classify.py --strict > /root/out.json"))
    assert sb3a(j).data["workflows"][0]["steps"] == 3


# =========================================================================================== audit JSON

def test_audit_json_has_the_seed_shape():
    """skill_invocation / skill_misuse as in reference/audit-example.json (SB-3a and SB-3c merge into one)."""
    reg = registry()
    j = sjob(skill_tool("a"), read("/root/.claude/skills/a/references/r.md"), write("/root/x.py"), reward=1.0)
    records = {}
    for code in ("SB-1", "SB-3a", "SB-3c"):
        f = run(code, j)
        records[code] = {"status": f.status, "evidence": f.evidence, "data": f.data, "events": f.events,
                         "tier": "C0", "family": "skills"}
    keys = {c: p.key for c, p in reg.items()}
    audit = build_audit("j", {"config": "claude-skills", "reward": 1.0}, records, "CLEAN", [], keys)
    si, sm = audit["skill_invocation"], audit["skill_misuse"]
    assert set(si) >= {"status", "skills_read", "sub_files_read", "discovery_method", "evidence"}
    assert (si["status"], si["skills_read"], si["sub_files_read"]) == ("VERIFIED", ["a"], ["a/references/r.md"])
    assert set(sm) >= {"partial_follow_through", "top_level_only", "evidence"}
    # seed booleans: SB-3a was not judged (no workflow text): false, with its N/A in statuses
    assert sm["top_level_only"] is False and sm["partial_follow_through"] is False
    assert sm["statuses"] == {"partial_follow_through": "N/A", "top_level_only": "PASS"}
    assert "references" in sm["evidence"] and "workflow text unavailable" in sm["evidence"]
    example = json.loads((Path(__file__).resolve().parents[3] / "shared/spec/reference/audit-example.json")
                         .read_text()) if (Path(__file__).resolve().parents[3] / "shared/spec").is_dir() else None
    if example is not None:
        assert set(example["skill_invocation"]) <= set(si) and set(example["skill_misuse"]) <= set(sm)
    schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    for key in ("skill_invocation", "skill_misuse"):
        jsonschema.validate(audit[key], {**schema["$defs"][_def_of(key)], "$defs": schema["$defs"]})


def _def_of(key: str) -> str:
    return {"skill_invocation": "SkillInvocation", "skill_misuse": "SkillMisuse"}[key]


def _schema_def(name: str) -> dict:
    schema = json.loads((SCHEMA_DIR / "audit.schema.json").read_text())
    return {**schema["$defs"][name], "$defs": schema["$defs"]}


# =========================================================================================== condition detection

def _trial(root: Path, name: str, result: dict | None, init_skills: list[str] | None) -> Path:
    d = root / name
    (d / "agent").mkdir(parents=True)
    (d / "verifier").mkdir()
    if result is not None:
        (d / "result.json").write_text(json.dumps(result))
    lines = [{"type": "system", "subtype": "init", "cwd": "/root", "session_id": "s", "model": "m", "tools": ["Bash"],
              **({"skills": init_skills} if init_skills is not None else {})},
             {"type": "assistant", "message": {"id": "m1", "role": "assistant",
                                               "content": [{"type": "text", "text": "done"}]},
              "parent_tool_use_id": None, "session_id": "s"}]
    (d / "agent" / "claude-code.txt").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return d


@pytest.mark.parametrize(("result", "init_skills", "folder", "expected"), [
    (None, ["mesh-analysis"], "runs", "with-skills"),  # a non-built-in skill in Claude's init line
    (None, ["verify", "debug", "simplify"], "runs", None),  # built-ins only (Claude Code 2.1.186, no task skill)
    (None, [], "runs", None),  # Claude Code 2.0.67 without skills: cannot say no-skills
    ({"source": "tasks-no-skills"}, ["mesh-analysis"], "runs", "no-skills"),  # result.json wins
    (None, ["mesh-analysis"], "no_skills", "no-skills"),  # the folder name wins over the init line
    ({"skill_mode": "with-skill"}, None, "control", "with-skills"),  # skill_mode wins over the folder
    ({"config": {"agent": {"skills": ["/skills/x"]}}}, None, "runs", "with-skills"),  # Harbor agent skills
    ({"config": {"agent": {"skills": []}}}, None, "runs", None),  # empty: nothing said
    ({"agent_result": {"metadata": {"skills_loaded": ["mesh-analysis"]}}}, None, "runs", "with-skills"),
])
def test_condition_precedence(tmp_path, result, init_skills, folder, expected):
    d = _trial(tmp_path / "audit" / folder, "t__abc", result, init_skills)
    [ref] = find_jobs(d)
    assert load_job(ref, Settings()).condition == expected


def test_load_job_without_trajectory_keeps_result_meta(tmp_path):
    d = tmp_path / "audit" / "t__r1"
    d.mkdir(parents=True)
    (d / "result.json").write_text(json.dumps({"task_name": "t", "trial_name": "t__r1", "source": "tasks",
                                               "verifier_result": {"rewards": {"reward": 0.5}},
                                               "config": {"agent": {"name": "claude-code", "model_name": "m"}}}))
    [ref] = find_jobs(d)
    with pytest.raises(UnusableInput):
        load_job(ref, Settings())
    j = load_job(ref, Settings(), with_trajectory=False)
    assert (j.task, j.agent, j.model, j.condition, j.reward, j.trajectory) == ("t", "claude-code", "m",
                                                                               "with-skills", 0.5, None)
    a = audit_job(ref, Settings(), [registry()["SB-1"]])
    assert a.error and a.meta["reward"] == 0.5 and a.meta["condition"] == "with-skills"


# =========================================================================================== SB-2 and flags

def _t(task="t", agent="claude-agent-acp", model="m", condition="with-skills", reward=1.0, **kw):
    return {"task": task, "agent": agent, "model": model, "condition": condition, "reward": reward,
            "job": kw.pop("job", f"{task}/{agent}/{model}/{condition}/{reward}/{len(kw)}"), **kw}


@pytest.mark.parametrize(("delta", "outcome"), [(10.0, "helped"), (9.99, "no-op"), (-10.0, "hurt"), (-9.99, "no-op"),
                                                (0.0, "no-op"), (90.0, "helped"), (-40.0, "hurt"),
                                                ((0.6 - 0.5) * 100, "helped"), ((0.5 - 0.6) * 100, "hurt")])
def test_outcome_boundaries_are_inclusive(delta, outcome):
    assert skill_outcome(delta) == outcome


def test_seed_pr755_skill_impact_shape():
    trials = [_t(agent="claude-agent-acp", reward=1.0), _t(agent="claude-agent-acp", condition="no-skills", reward=0.10),
              _t(agent="codex-acp", reward=0.45), _t(agent="codex-acp", condition="no-skills", reward=0.85)]
    imp = skill_impact(trials, unlock_quotes={"claude-agent-acp": "validation-and-abort-records.md names ats"},
                       misled_quotes={"codex-acp": "applied only the hard-vs-soft cut"})
    assert list(imp) == ["claude-agent-acp", "codex-acp"]
    c, x = imp["claude-agent-acp"], imp["codex-acp"]
    assert (c["with_skills_reward"], c["no_skills_reward"], c["delta_pp"], c["outcome"]) == (1.0, 0.1, 90.0, "helped")
    assert c["unlock_quote"].startswith("validation") and c["misled_quote"] is None
    assert (x["delta_pp"], x["outcome"], x["unlock_quote"]) == (-40.0, "hurt", None)
    assert x["misled_quote"] == "applied only the hard-vs-soft cut"
    assert "needs ≥ 3 trials" in x["caveat"] and x["likely_noise"] is False
    schema = json.loads((SCHEMA_DIR / "summary.schema.json").read_text())
    for e in imp.values():
        jsonschema.validate(e, {**schema["$defs"]["SkillImpact"], "$defs": schema["$defs"]})


def test_noise_caveat_and_trial_counts():
    one = skill_impact([_t(reward=0.7), _t(condition="no-skills", reward=0.5)])["claude-agent-acp"]
    assert one["likely_noise"] is True and "likely noise" in one["caveat"]
    many = skill_impact([_t(reward=r) for r in (1, 1, 0)] + [_t(condition="no-skills", reward=r) for r in (0, 0, 1)])
    e = many["claude-agent-acp"]
    assert (e["n_with_skills"], e["n_no_skills"], e["caveat"], e["likely_noise"]) == (3, 3, None, False)
    assert e["delta_pp"] == pytest.approx(33.3, abs=0.05)


def test_pairing_excludes_unrewarded_oracle_and_unknown_condition():
    trials = [_t(reward=1.0), _t(reward=None), _t(condition="no-skills", reward=0.0), _t(condition=None, reward=0.0),
              _t(agent="oracle", oracle=True, reward=1.0), _t(agent="other-agent", reward=1.0)]
    imp = skill_impact(trials)
    assert list(imp) == ["claude-agent-acp"]  # other-agent has no no-skills arm
    assert (imp["claude-agent-acp"]["n_with_skills"], imp["claude-agent-acp"]["n_no_skills"]) == (1, 1)


def test_keys_qualify_only_when_needed():
    two_models = [_t(model="a"), _t(model="a", condition="no-skills"), _t(model="b"), _t(model="b", condition="no-skills")]
    assert sorted(skill_impact(two_models)) == ["claude-agent-acp@a", "claude-agent-acp@b"]
    two_tasks = [_t(task="x"), _t(task="x", condition="no-skills"), _t(task="y"), _t(task="y", condition="no-skills")]
    assert sorted(skill_impact(two_tasks)) == ["x/claude-agent-acp@m", "y/claude-agent-acp@m"]
    assert list(skill_impact([_t(agent="@agentclientprotocol/claude-agent-acp"),
                              _t(condition="no-skills")])) == ["claude-agent-acp"]


def test_flags_hurt_all_noop_all_never_discovered_directive_and_leak():
    hurt = [_t(agent="a", reward=0.5), _t(agent="a", condition="no-skills", reward=0.8),
            _t(agent="b", reward=0.1), _t(agent="b", condition="no-skills", reward=0.9)]
    flags = {f["flag"] for f in skills_flags(hurt, skill_impact(hurt))}
    assert "skills_hurt_all_agents" in flags
    hurt_one = [_t(agent="a", reward=0.85), _t(agent="a", condition="no-skills", reward=1.0)] + hurt[2:]
    assert "skills_hurt_all_agents" not in {f["flag"] for f in skills_flags(hurt_one, skill_impact(hurt_one))}
    noop = [_t(agent="a", reward=1.0, sb1="NOT_INVOKED"), _t(agent="a", condition="no-skills", reward=1.0),
            _t(agent="b", reward=0.5, sb1="NOT_INVOKED"), _t(agent="b", condition="no-skills", reward=0.55)]
    got = skills_flags(noop, skill_impact(noop))
    assert {f["flag"] for f in got} == {"skills_noop_all_agents", "skill_never_discovered"}
    assert all(f["blocking"] is False for f in got)
    assert "skills never read" in skill_impact(noop)["a"]["evidence"]
    found = [_t(agent="a", reward=1.0, sb1="VERIFIED"), _t(agent="a", condition="no-skills", reward=1.0),
             _t(agent="b", reward=0.5, sb1="NOT_INVOKED"), _t(agent="b", condition="no-skills", reward=0.5)]
    assert "skill_never_discovered" not in {f["flag"] for f in skills_flags(found, skill_impact(found))}
    strong = [_t(agent="a", reward=1.0, top_level_only=True, sb1="PARTIAL"), _t(agent="a", condition="no-skills"),
              _t(agent="b", reward=0.2, partial_follow_through=False), _t(agent="b", condition="no-skills", reward=0.2)]
    got = {f["flag"]: f for f in skills_flags(strong, skill_impact(strong))}
    assert "SB-3c" in got["skill_workflow_not_directive"]["message"]
    weak_only = [dict(t, top_level_only=(t["agent"] == "b")) for t in strong]
    assert "skill_workflow_not_directive" not in {f["flag"] for f in skills_flags(weak_only, skill_impact(weak_only))}
    assert "skill_workflow_not_directive" in {
        f["flag"] for f in skills_flags(weak_only, skill_impact(weak_only), strongest={"t": ("b", "m")})}
    leak = [_t(reward=1.0), _t(condition="no-skills", reward=1.0, leak=True)]
    assert "no_skills_leak" in {f["flag"] for f in skills_flags(leak, skill_impact(leak))}


# =========================================================================================== real corpus

def _trials_of(refs, cfg=None):
    cfg = cfg or Settings()
    out = []
    for ref in refs:
        try:
            j = load_job(ref, cfg)
        except UnusableInput:  # most archived trials kept only result.json
            j = load_job(ref, cfg, with_trajectory=False)
        out.append({"task": j.task, "agent": j.agent, "model": j.model, "condition": j.condition,
                    "reward": j.reward, "job": str(ref.dir), "oracle": j.is_oracle})
    return out


def test_corpus_3d_scan_calc_delta_is_plus_20(corpus: Path) -> None:
    refs = [r for r in find_jobs(corpus / "skillsbench-archive") if r.dir.name.startswith("3d-scan-calc__")]
    trials = _trials_of(refs)
    assert sorted(t["condition"] for t in trials) == ["no-skills"] * 5 + ["with-skills"] * 5
    imp = skill_impact(trials)
    assert list(imp) == ["claude-code"]
    e = imp["claude-code"]
    assert (e["with_skills_reward"], e["no_skills_reward"], e["delta_pp"], e["outcome"]) == (1.0, 0.8, 20.0, "helped")
    assert (e["n_with_skills"], e["n_no_skills"], e["caveat"]) == (5, 5, None)
    assert sorted(e["no_skills_rewards"]) == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert (e["task"], e["model"]) == ("3d-scan-calc", "minimax/MiniMax-M2.1")


def test_corpus_benchflow_skill_lift_delta(corpus: Path) -> None:
    """Control 0.0 vs treatment 1.0 (the four auth-failed trials have no reward and do not count): +100 pp, n=1."""
    root = corpus / "harbor" / "Tobi-joshua__benchflow-agent-skill-lift"
    trials = _trials_of(find_jobs(root))
    assert len(trials) == 6
    imp = skill_impact(trials)
    e = imp["claude-agent-acp"]
    assert (e["with_skills_reward"], e["no_skills_reward"], e["delta_pp"], e["outcome"]) == (1.0, 0.0, 100.0, "helped")
    assert (e["n_with_skills"], e["n_no_skills"], e["likely_noise"]) == (1, 1, False)
    assert "needs ≥ 3 trials" in e["caveat"]
    assert [Path(j).name for j in e["jobs"]["with-skills"]] == ["citation-check__190a3859"]


def _corpus_refs(corpus: Path):
    for t in ("harbor", "skillsbench-archive", "labelled"):
        yield from find_jobs(corpus / t)
    for t in ("claude-code", "codex", "skillsbench-archive"):
        for f in sorted((corpus / t).rglob("*")):
            if f.suffix in (".jsonl", ".json") and f.is_file() and not f.is_symlink() and f.name != "result.json":
                yield bare_file(f)


def test_corpus_sb1_statuses_are_sensible(corpus: Path) -> None:
    principles = [registry()[c] for c in ("SB-1", "SB-3a", "SB-3c")]
    seen: dict[str, str] = {}
    for mode in (Settings(), Settings(literal=True)):
        for ref in _corpus_refs(corpus):
            a = audit_job(ref, mode, principles)
            if a.error:
                continue
            for code, r in a.results.items():
                assert r.internal_error is None, (ref.dir, code, r.internal_error)
            sb = a.results["SB-1"]
            assert sb.status in ("PASS", "WARN", "N/A")
            assert sb.data["status"] in ("VERIFIED", "PARTIAL", "NOT_INVOKED", "N/A")
            if mode.literal:
                continue
            rel = str(ref.anchor.relative_to(corpus))
            seen[rel] = sb.data["status"]
            if a.meta["condition"] == "with-skills" and _reads_skill_md(ref, mode):
                assert sb.data["status"] != "NOT_INVOKED", rel
    t2 = "skillsbench-archive/minimax-traj/3d-scan-calc__t2HR7VM/result.json"
    assert seen[t2] == "VERIFIED"
    terminus = next(k for k in seen if k.endswith("3d-scan-calc__zH4ghhd/result.json"))
    assert seen[terminus] == "VERIFIED"
    treatment = next(k for k in seen if "citation-check__190a3859" in k)
    control = next(k for k in seen if "citation-check__1398f575" in k)
    assert (seen[treatment], seen[control]) == ("NOT_INVOKED", "N/A")
    spotter = next(k for k in seen if k.endswith("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"))
    assert seen[spotter] == "N/A"  # a personal Claude session: condition unknown


def _reads_skill_md(ref, cfg) -> bool:
    j = load_job(ref, cfg)
    return any(e.type == TOOL and e.status != "failed" and ("SKILL.md" in " ".join(e.paths) or "SKILL.md" in e.command)
               for e in j.trajectory.events)


def test_corpus_terminus_skill_load_and_t2_detail(corpus: Path) -> None:
    d = corpus / "harbor/Lizhengxi25__skillsbench_trajectory_viewer/public/harbor-jobs/2026-03-12__23-23-51"
    [ref] = find_jobs(d / "3d-scan-calc__zH4ghhd")
    a = audit_job(ref, Settings(), [registry()[c] for c in ("SB-1", "SB-3a", "SB-3c")])
    sb = a.results["SB-1"].data
    assert (sb["skills_read"], sb["discovery_method"]) == (["mesh-analysis"], "Skill tool")
    assert "mesh-analysis/scripts/mesh_tool.py" in sb["sub_files_read"]
    assert a.results["SB-3c"].data["top_level_only"] is False  # the mesh-analysis SKILL.md links no references/
    [ref] = find_jobs(corpus / "skillsbench-archive/minimax-traj/3d-scan-calc__t2HR7VM")
    sb = audit_job(ref, Settings(), [registry()["SB-1"]]).results["SB-1"].data
    assert (sb["skills_read"], sb["discovery_method"]) == (["mesh-analysis"], "Glob fallback")
    assert sb["task_skills"] == ["mesh-analysis"]  # from Claude's init line


def test_corpus_summary_skill_impact_and_flags(corpus: Path) -> None:
    """summary.json end to end through the Rollup (result-only trials count through their result.json)."""
    principles = list(registry().values())
    roll = Rollup()
    roots = [corpus / "skillsbench-archive", corpus / "harbor" / "Tobi-joshua__benchflow-agent-skill-lift"]
    for ref in [r for root in roots for r in find_jobs(root)]:
        a = audit_job(ref, Settings(), principles)
        base = {"job": str(ref.dir.relative_to(corpus)), "meta": a.meta, "loads": 1}
        if a.error:
            roll.add({**base, "code": "SB-1", "status": "ERROR", "error": a.error})
            continue
        for p in principles:
            r = a.results[p.code]
            roll.add({**base, "code": p.code, "status": r.status, "evidence": r.evidence, "data": r.data,
                      "events": r.events, "tier": p.tier, "family": p.family, "affects": p.affects_verdict})
    s = roll.summary()
    assert s["skill_impact"]["claude-code"]["delta_pp"] == 20.0
    assert s["skill_impact"]["claude-agent-acp"]["delta_pp"] == 100.0
    assert [f["flag"] for f in s["skills_flags"]] == ["skill_never_discovered"]  # citation-check treatment
    jsonschema.validate(json.loads(json.dumps(s)), json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))


# =========================================================================================== helpers

def _task(tmp_path: Path, skills: dict[str, str | None], references: dict[str, list[str]] | None = None) -> Task:
    tdir = tmp_path / "tasks" / "t"
    sdir = tdir / "environment" / "skills"
    for name, text in skills.items():
        (sdir / name).mkdir(parents=True)
        if text is not None:
            (sdir / name / "SKILL.md").write_text(text)
    for name, files in (references or {}).items():
        (sdir / name / "references").mkdir(parents=True, exist_ok=True)
        for f in files:
            (sdir / name / "references" / f).write_text("deep")
    return Task(dir=tdir, name="t", skills_dir=sdir)


# =========================================================================================== SB-2 quotes (per trial)

def test_sb1_records_the_agents_words_after_the_skill_load_as_the_sb2_quote():
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    j = sjob(read("/root/in.csv", "a,b"), skill_tool("trace-ledger", SKILL_MD),
             thought(f"The skill says: build the ledger before inference. key {secret} " + "x" * 400),
             sh("python ledger.py", "ok"))
    f = sb1(j)
    q = f.data["quote"]
    assert q["text"].startswith("The skill says: build the ledger before inference.")
    assert secret not in q["text"] and len(q["text"]) <= 300 and q["text"].endswith("…")
    assert "after loading trace-ledger" in q["source"] and "Skill" in q["source"]
    assert f.data["quote_missing"] is None


def test_sb1_quote_falls_back_to_the_step_that_applied_the_skill():
    j = sjob(codex_read_skill("/root/.codex/skills/trace-ledger/SKILL.md", SKILL_MD),
             sh("python scripts/classify.py --strict > /root/out.json", "done"))
    q = sb1(j).data["quote"]
    assert q["text"] == "python scripts/classify.py --strict > /root/out.json" and q["source"].startswith("step #")


@pytest.mark.parametrize("mode", MODES)
def test_sb1_without_anything_to_quote_says_why(mode):
    loaded_last = sb1(sjob(read("/root/in.csv"), skill_tool("trace-ledger")), MODES[mode])
    assert loaded_last.data["quote"] is None
    assert loaded_last.data["quote_missing"].startswith("nothing after loading trace-ledger")
    never = sb1(sjob(read("/root/in.csv")), MODES[mode])
    assert never.data["quote"] is None and never.data["quote_missing"] == "no skill was read or run in this run"


def test_literal_skills_read_appends_once_per_matching_call():
    """The seed's detect_skill_invocations appends on every match: a skill launched twice is listed twice."""
    j = sjob(skill_tool("ledger"), sh("python a.py", "ok"), skill_tool("ledger"), sh("python b.py", "ok"))
    assert sb1(j, LITERAL).data["skills_read"] == ["ledger", "ledger"]
    assert sb1(j, PRECISE).data["skills_read"] == ["ledger"]
