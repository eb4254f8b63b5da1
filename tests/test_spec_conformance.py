"""Conformance with the specification's own examples: every file in ``../shared/spec/reference/`` is walked here
(``test_every_reference_file_is_walked`` fails when one is added without a check).

- ``audit-example.json`` (the PR #755 claude-skills audit): it validates against the published audit schema, and a
  job rebuilt from its stated figures (the seed's RULES.md "Golden tests from the docs") audits, in both modes, to the
  same record, field by field, except where docs/spec-differences.md ("Reports and audit JSON") lists a deliberate
  difference: those fields are asserted to hold the documented value.
- ``report-template.txt``: report.md has the template's sections in order, its Recommendation verdicts, the
  oracle's tests list, the trajectory-evidence quotes, the token diagnostic and its gap note, the root-cause
  categories and "Suggested improvements"; the policy-compliance section is the documented absence.
- ``trace-grader/``: literal mode reproduces the original's JSON and text reports and its self-test's report
  block (tests/test_trace_grader_parity.py holds the full parity suite and the precise-mode difference).
- ``junit-10.xsd``: the JUnit XML of an audit validates (tests/test_ci_consumers.py covers both families and
  xdist).
- ``trajectory-audit.md`` (the layer index and job layout) and ``policy-rubric.md`` (Stage-1 policy, a review
  of the task itself): the layout is the one the plugin discovers; the policy rubric is the documented absence.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_trajaudit.loaders.job import config_agent
from pytest_trajaudit.report import template
from pytest_trajaudit.report.markdown import render as render_md
from pytest_trajaudit.report.schema import SCHEMA_DIR
from pytest_trajaudit.report.summary import Rollup

from .conftest import REPO
from .jobfactory import make_job


def _reference() -> Path | None:
    """``shared/spec/reference`` beside the repository or beside one of its parents (a git worktree)."""
    for base in REPO.parents:
        ref = base / "shared" / "spec" / "reference"
        if ref.is_dir():
            return ref
    return None


REF = _reference()
pytestmark = pytest.mark.skipif(REF is None, reason="../shared/spec/reference is not present")

# every reference file and the test that walks it
WALKED = {
    "audit-example.json": ("test_audit_example_validates_against_the_published_schema",
                           "test_the_worked_example_rebuilt_audits_to_the_same_record"),
    "report-template.txt": ("test_report_md_follows_the_template_sections",
                            "test_report_md_carries_the_templates_parts"),
    "junit-10.xsd": ("test_junit_xml_of_the_worked_example_validates",),
    "trajectory-audit.md": ("test_the_layout_of_the_layer_index_is_discovered",),
    "policy-rubric.md": ("test_report_md_follows_the_template_sections",),
    "trace-grader/trace-grader.config.yaml": ("test_trace_grader_goldens_in_literal_mode",),
    "trace-grader/trace-grader.fixtures.json": ("test_trace_grader_goldens_in_literal_mode",),
    "trace-grader/fixtures-report.json": ("test_trace_grader_goldens_in_literal_mode",),
    "trace-grader/fixtures-report.txt": ("test_trace_grader_goldens_in_literal_mode",),
    "trace-grader/self-test.txt": ("test_trace_grader_goldens_in_literal_mode",),
}


def test_every_reference_file_is_walked() -> None:
    assert REF is not None
    files = {p.relative_to(REF).as_posix() for p in REF.rglob("*") if p.is_file()}
    assert files == set(WALKED)
    names = {n for tests in WALKED.values() for n in tests}
    assert names <= set(globals())


# ============================================================================================ audit-example.json

def _example() -> dict[str, Any]:
    assert REF is not None
    return json.loads((REF / "audit-example.json").read_text(encoding="utf-8"))


def _audit_schema() -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / "audit.schema.json").read_text(encoding="utf-8"))


def test_audit_example_validates_against_the_published_schema() -> None:
    jsonschema.Draft202012Validator(_audit_schema()).validate(_example())


@pytest.mark.parametrize(("mutate", "why"), [
    (lambda d: d["struggle"].update(verdict="confident"), "a verdict outside the seed's values"),
    (lambda d: d["verifier_alignment"].update(aligned="yes"), "aligned is a boolean"),
    (lambda d: d["skill_misuse"].update(top_level_only=None), "top_level_only is a boolean"),
    (lambda d: d.pop("anti_cheat_read"), "a core key is missing"),
    (lambda d: d.update(failure_bucket="lucky"), "a bucket outside the enum"),
])
def test_the_schema_still_rejects_what_the_seed_does_not_allow(mutate: Any, why: str) -> None:
    doc = _example()
    mutate(doc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(_audit_schema()).validate(doc)


TASK = "tictoc-unnecessary-abort-detection"
SKILLS = ("transaction-protocol-reasoning", "transaction-concurrency-control-foundations")
REFS_MD = f"/root/.claude/skills/{SKILLS[1]}/references/representative-protocols.md"


def _tool(n: int, kind: str, title: str, text: str = "", **more: Any) -> dict[str, Any]:
    return {"type": "tool_call", "tool_call_id": f"toolu_{n:02d}", "kind": kind, "title": title,
            "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": text}}],
            **more}


def worked_example_lines(final: str) -> list[dict[str, Any]]:
    """The PR #755 claude-skills run as the seed's RULES.md states it (the trajectory itself is not public): 22
    entries, 10 tool calls (ToolSearch 1, Skill 2, Read File 3, Terminal 3, Write 1), both skills launched through the
    Skill tool, a references/*.md read and 3 data-sampling calls before the one Write, then the verbatim final."""
    think = [{"type": "agent_thought", "text": t} for t in (
        "Let me find the tools available.", "A skill covers transaction protocols.", "And the foundations skill.",
        "The representative protocols reference has the TicToc mini-spec.", "Sample the abort records.",
        "Look at the writes.", "Now write the analyzer.", "Run it.", "Check the output.", "Count the ids.")]
    calls = [
        _tool(1, "other", "ToolSearch", "Skill"),
        _tool(2, "other", "Skill", f"Launching skill: {SKILLS[0]}"),
        _tool(3, "other", "Skill", f"Launching skill: {SKILLS[1]}"),
        _tool(4, "read", "Read File", "# Representative protocols\nTicToc: validate with wts/rts; ats_at_write",
              locations=[{"path": REFS_MD}]),
        _tool(5, "read", "Read File", "txn\tkey\tlocal_wts\tcurrent_wts\tcommit_ts\tats_at_abort\n7\ta\t3\t5\t9\t4",
              locations=[{"path": "/root/data/aborts.tsv"}]),
        _tool(6, "execute", "Terminal", "txn key wts ats_at_write\n3 a 5 2", rawInput={"command": "head -5 /root/data/writes.tsv"}),
        {"type": "tool_call", "tool_call_id": "toolu_07", "kind": "edit", "title": "Write", "status": "completed",
         "content": [{"type": "diff", "path": "/root/analyze.py", "oldText": None,
                      "newText": "import bisect, json\n# per-key timeline + ats discriminator\n"}]},
        _tool(8, "execute", "Terminal", "wrote 3216 ids", rawInput={"command": "python3 /root/analyze.py"}),
        _tool(9, "read", "Read File", "[101, 102, 107]", locations=[{"path": "/root/unnecessary_aborts.json"}]),
        _tool(10, "execute", "Terminal", "3216",
              rawInput={"command": "python3 -c \"import json; print(len(json.load(open('/root/unnecessary_aborts.json'))))\""}),
    ]
    lines: list[dict[str, Any]] = [{"type": "user_message", "text": "Find the unnecessarily aborted transactions "
                                    "in /root/data and write their ids to /root/unnecessary_aborts.json."}]
    for t, c in zip(think, calls, strict=True):
        lines += [t, c]
    lines.append({"type": "agent_message", "text": final})
    assert len(lines) == 22
    return lines


def _worked_example_tree(root: Path, final: str) -> None:
    """``jobs/<config>/<run-id>/<task>__<trial>/`` (trajectory-audit.md) with the claude-skills job, its
    claude-noskills pair (reward 0.10) and the oracle (3 passed tests in its ctrf.json)."""
    result = {"task_name": TASK, "agent": "claude-agent-acp", "model": "claude-opus-4-7", "n_tool_calls": 10,
              "error": None}
    make_job(root / "jobs/claude-skills/run1", f"{TASK}__a1b2c3", worked_example_lines(final),
             {**result, "rollout_name": f"{TASK}__a1b2c3", "rewards": {"reward": 1.0}, "skill_mode": "with-skill"},
             {"verifier/reward.txt": "1.0\n"})
    noskills = [{"type": "user_message", "text": "Find the unnecessarily aborted transactions."},
                _tool(1, "read", "Read File", "txn\tkey", locations=[{"path": "/root/data/aborts.tsv"}]),
                _tool(2, "execute", "Terminal", "19316", rawInput={"command": "python3 /root/solve.py"}),
                {"type": "agent_message", "text": "unnecessary iff commit_ts < current_wts AND no intermediate "
                 "writer in (local_wts, commit_ts]"}]
    make_job(root / "jobs/claude-noskills/run1", f"{TASK}__d4e5f6", noskills,
             {**result, "rollout_name": f"{TASK}__d4e5f6", "rewards": {"reward": 0.1}, "skill_mode": "no-skill",
              "n_tool_calls": 2}, {"verifier/reward.txt": "0.1\n"})
    ctrf = {"results": {"tool": {"name": "pytest"}, "summary": {"tests": 3, "passed": 3, "failed": 0},
                        "tests": [{"name": n, "status": "passed", "duration": 1} for n in
                                  ("test_output_exists", "test_output_is_json_list", "test_ids_are_integers")]}}
    oracle = root / f"jobs/oracle/run1/{TASK}__oracle"  # the oracle runs the reference solution: no trajectory
    (oracle / "verifier").mkdir(parents=True)
    (oracle / "result.json").write_text(json.dumps({"task_name": TASK, "rollout_name": f"{TASK}__oracle",
                                                    "agent": "oracle", "rewards": {"reward": 1.0}}))
    (oracle / "verifier/ctrf.json").write_text(json.dumps(ctrf))
    (oracle / "verifier/reward.txt").write_text("1.0\n")


@pytest.fixture(scope="module", params=["precise", "literal"])
def worked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin's reports on the worked-example tree, in each mode: one audit run in a child pytest per mode,
    shared by the module."""
    root = tmp_path_factory.mktemp(f"worked-{request.param}")
    _worked_example_tree(root, _example()["verbatim_final"])
    out = root / "out"
    mode = ["--trajaudit-literal"] if request.param == "literal" else []
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--trajaudit=jobs", *mode,
                          f"--trajaudit-report={out}", "--junitxml=junit.xml"],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stdout[-2000:] + run.stderr[-2000:]
    return out


def _plugin_audit(out: Path, config: str) -> dict[str, Any]:
    found = sorted(out.glob(f"jobs/**/audit-{config}.json"))
    assert len(found) == 1, sorted(p.name for p in out.glob("jobs/**/audit-*.json"))
    return json.loads(found[0].read_text(encoding="utf-8"))


def test_the_worked_example_rebuilt_audits_to_the_same_record(worked: Path) -> None:
    example = _example()
    got = _plugin_audit(worked, "claude-skills")  # the file name carries the seed's config name
    jsonschema.Draft202012Validator(_audit_schema()).validate(got)

    # every key of the example, and every sub-key, is in the plugin's record; the seed's "_comment" / "_note"
    # remarks are the plugin's "evidence" (documented)
    assert {k for k in example if not k.startswith("_")} <= set(got)
    for key, value in example.items():
        if isinstance(value, dict):
            missing = {k for k in value if not k.startswith("_")} - set(got[key])
            assert missing == ({"aligned_by_prose"} if key == "verifier_alignment" else set()), key  # documented
            if any(k.startswith("_") for k in value):
                assert got[key]["evidence"], key

    same = {
        "config": "claude-skills", "model": "claude-opus-4-7", "reward": 1.0, "verdict": "CLEAN",
        "failure_bucket": "passed", "format_vs_reasoning": "n/a", "verbatim_final": example["verbatim_final"],
    }
    for key, value in same.items():
        assert got[key] == example[key] == value, key
    assert got["tool_breakdown"] == example["tool_breakdown"]
    for key in ("anti_cheat_read", "anti_cheat_write", "memorization_signal", "filesystem_pollution", "self_doubt"):
        assert got[key]["status"] == example[key]["status"], key
    for key, sub in (("agentic_floor", ("n_tool_calls", "verdict")),
                     ("struggle", ("retries", "rewrites", "reversals", "exploration_loop")),
                     ("row_vs_entity_gotcha", ("applies",)),
                     ("verifier_alignment", ("reconstructed",)),
                     ("tests_too_tight", ("checked", "perturbations_passing")),
                     ("llm_judge_concurrence", ("checked", "agreement")),
                     ("skill_invocation", ("status", "skills_read", "sub_files_read", "discovery_method")),
                     ("skill_misuse", ("partial_follow_through", "top_level_only"))):
        assert {k: got[key][k] for k in sub} == {k: example[key][k] for k in sub}, key
    assert got["skill_invocation"]["sub_files_read"] == [f"{SKILLS[1]}/references/representative-protocols.md"]

    # documented differences (docs/spec-differences.md, "Reports and audit JSON")
    assert example["struggle"]["verdict"] == "wrong_answer_or_confident_solve"
    assert got["struggle"]["verdict"] == "wrong_answer"  # the seed's enum value; the schema accepts both
    assert example["verifier_alignment"]["aligned_by_prose"] is True and "aligned" not in example["verifier_alignment"]
    assert got["verifier_alignment"]["aligned"] is True  # checked mechanically: result.json and reward.txt agree
    assert "aligned_by_prose" not in got["verifier_alignment"]  # only a judge argues from the prose
    # the follow-through needs the skill's workflow text (--trajaudit-tasks): not judged here, so false (the
    # example's value) with its N/A in statuses
    assert got["skill_misuse"]["statuses"] == {"partial_follow_through": "N/A", "top_level_only": "PASS"}
    # trajaudit's own fields follow the seed's keys
    assert got["job"].endswith(f"{TASK}__a1b2c3") and got["task"] == TASK and got["condition"] == "with-skills"


def test_config_names_follow_the_seed() -> None:
    assert [config_agent(a) for a in ("claude-agent-acp", "codex-acp", "claude-code", "@org/codex-acp", "acp",
                                      "-acp", "")] == ["claude", "codex", "claude-code", "codex", "acp", "-acp",
                                                       "agent"]


def test_the_worked_example_pair_and_oracle(worked: Path) -> None:
    noskills = _plugin_audit(worked, "claude-noskills")
    jsonschema.Draft202012Validator(_audit_schema()).validate(noskills)
    assert noskills["reward"] == 0.1 and noskills["condition"] == "no-skills"
    oracle = _plugin_audit(worked, "oracle")
    assert oracle["verdict"] == "ORACLE"
    summary = json.loads((worked / "summary.json").read_text(encoding="utf-8"))
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text(encoding="utf-8")))
    # The seed's RULES.md golden: "Skill impact: claude +90.0 pp helped", keyed by the shim name
    impact = summary["skill_impact"]["claude-agent-acp"]
    assert (impact["delta_pp"], impact["outcome"]) == (90.0, "helped")
    assert set(summary["configs"]) == {"claude-skills", "claude-noskills", "oracle"}


# ======================================================================================== report-template.txt

def _template_sections() -> list[str]:
    assert REF is not None
    text = (REF / "report-template.txt").read_text(encoding="utf-8")
    return re.findall(r"^=+\n\s*(.+?)\s*\n=+$", text, re.M)


# template section → report.md heading; None: not in report.md (documented)
SECTIONS = {
    "PR #{PR_NUMBER} BENCHMARK REPORT: {TASK_NAME}": "# Benchmark audit report:",
    "TASK DESCRIPTION": "## Task description",
    "ORACLE RESULTS": "## Oracle results",
    "POLICY COMPLIANCE SUMMARY": None,  # Stage-1 policy (policy-rubric.md) reviews the task, not the runs
    "BENCHMARK RESULTS TABLE": "## Benchmark results",
    "SKILLS IMPACT ANALYSIS": "## Skills impact",
    "FAILURE ANALYSIS": "## Failure analysis",
    "CRITICAL FINDINGS": "## Critical findings",
    "RECOMMENDATION": "## Recommendation",
    "ARTIFACTS": "## Artifacts",
    "END OF REPORT": None,  # Markdown ends with the file
}


def test_report_md_follows_the_template_sections(worked: Path) -> None:
    assert _template_sections() == list(SECTIONS)
    md = (worked / "report.md").read_text(encoding="utf-8")
    pos = [md.index(h) for h in SECTIONS.values() if h]
    assert pos == sorted(pos)
    assert "Policy" not in md and "policy.json" not in md  # the documented absence, not a stub section
    assert REF is not None
    rubric = (REF / "policy-rubric.md").read_text(encoding="utf-8")
    assert "## Stage 1 — Static Policy Checks (no execution)" in rubric  # what the absent section would report


def _template_text() -> str:
    assert REF is not None
    return (REF / "report-template.txt").read_text(encoding="utf-8")


def test_report_md_carries_the_templates_parts(worked: Path) -> None:
    tpl = _template_text()
    md = (worked / "report.md").read_text(encoding="utf-8")
    # Recommendation: the template's verdicts (INCOMPLETE is trajaudit's own, docs/verdicts.md) and both lists
    verdicts = re.search(r"Verdict: \{(.+)\}", tpl).group(1).split(" | ")  # type: ignore[union-attr]
    from pytest_trajaudit.report.schema import PRVerdict
    allowed = PRVerdict.model_json_schema()["properties"]["verdict"]["enum"]
    assert set(allowed) - set(verdicts) == {"INCOMPLETE"} and set(verdicts) <= set(allowed)
    rec = md[md.index("## Recommendation"):md.index("## Artifacts")]
    assert "Required changes:" in tpl and "Suggested improvements:" in tpl
    assert "Suggested improvements:\n\n1. " in rec
    # Oracle: "Tests Passed:" with [PASS] lines
    assert "Tests Passed:" in tpl and "[PASS] {test_name}" in tpl
    orc = md[md.index("## Oracle results"):md.index("## Benchmark results")]
    assert "Tests Passed (jobs/oracle/run1/" in orc
    for name in ("test_output_exists", "test_output_is_json_list", "test_ids_are_integers"):
        assert f"  [PASS] {name}\n" in orc
    assert "| 3/3 |" in orc
    # token diagnostic: the template's line, and the gap note when the harness records no tokens (ACP: null)
    assert "Token diagnostic (low output tokens on passing runs = possible shortcut):" in tpl
    assert "Token diagnostic unavailable for 2 agent job(s)" in md
    # Skills impact: "Trajectory evidence (quote specific log lines for any non-zero Δ)"
    assert "Trajectory evidence (quote specific log lines for any non-zero Δ):" in tpl
    sk = md[md.index("## Skills impact"):md.index("## Failure analysis")]
    assert "Trajectory evidence (for each non-zero Δ):" in sk and "- claude-agent-acp (helped): " in sk
    # Failure analysis: "Root cause: capability gap | task issue | skill issue | cheating" and quoted evidence
    cats = re.search(r"Root cause: (.+)", tpl).group(1).split(" | ")  # type: ignore[union-attr]
    assert tuple(cats) == template.ROOT_CAUSES
    fa = md[md.index("## Failure analysis"):md.index("## Critical findings")]
    cause = re.search(r"- Root cause: (.+?) \(", fa)
    assert cause and cause.group(1) in (*template.ROOT_CAUSES, template.UNDETERMINED)
    assert "- Trajectory evidence" in fa


def _recs(**by_code: tuple[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c: {"status": s, "evidence": f"{c} evidence", "data": d} for c, (s, d) in by_code.items()}


@pytest.mark.parametrize(("meta", "records", "expected"), [
    ({}, _recs(P1=("FAIL", {}), P3=("PASS", {"failure_bucket": "hard"})), template.CHEATING),
    ({}, _recs(P16=("FAIL", {}), P3=("PASS", {"failure_bucket": "unfair_test"})), template.CHEATING),
    ({}, _recs(P1=("PASS", {}), P3=("PASS", {"failure_bucket": "unfair_env"})), template.TASK_ISSUE),
    ({}, _recs(P5=("PASS", {"format_vs_reasoning": "format_loss"})), template.TASK_ISSUE),
    ({}, _recs(P11=("FAIL", {"flipped_signal": True})), template.TASK_ISSUE),
    ({}, _recs(P12=("FAIL", {"checked": True, "perturbations_passing": ["0.5 -> 5e-1"]})), template.TASK_ISSUE),
    ({"condition": "with-skills"}, _recs(**{"SB-1": ("WARN", {"status": "NOT_INVOKED"})},
                                          P3=("PASS", {"failure_bucket": "hard"})), template.SKILL_ISSUE),
    ({"condition": "with-skills"}, _recs(**{"SB-3c": ("WARN", {"top_level_only": True})}), template.SKILL_ISSUE),
    ({"condition": "no-skills"}, _recs(**{"SB-1": ("N/A", {"status": "N/A"})},
                                        P3=("PASS", {"failure_bucket": "hard"})), template.CAPABILITY_GAP),
    ({}, _recs(P3=("PASS", {"failure_bucket": "ignored_instruction"})), template.CAPABILITY_GAP),
    ({}, _recs(P5=("PASS", {"format_vs_reasoning": "reasoning_loss"})), template.CAPABILITY_GAP),
    ({}, _recs(P3=("N/A", {"failure_bucket": None}), P1=("PASS", {})), template.UNDETERMINED),
])
def test_root_causes_map_onto_the_templates_categories(meta: dict, records: dict, expected: str) -> None:
    assert template.root_cause(meta, records)[0] == expected


def test_suggested_improvements_and_evidence_in_report_md() -> None:
    r = Rollup()
    meta = {"config": "claude-skills", "reward": 0.0, "task": "t", "trial": "t__1", "agent": "claude-agent-acp",
            "model": "m", "condition": "with-skills", "oracle": False, "n_output_tokens": None}
    r.add({"job": "j", "code": "P8", "status": "WARN", "evidence": "struggle: #4 agent_message: 'Actually'",
           "data": {}, "events": [], "tier": "C0", "family": "general", "affects": True, "meta": meta})
    summary = r.summary()
    summary["skill_impact"] = {"claude-agent-acp": {"delta_pp": -40.0, "outcome": "hurt", "unlock_quote": None,
                                                    "misled_quote": "SKILL.md: treat every soft abort as unnecessary",
                                                    "caveat": "one trial per arm: likely noise"}}
    md = render_md(summary, r.jobs, "2026-01-01")
    assert "- claude-agent-acp (hurt): > SKILL.md: treat every soft abort as unnecessary" in md
    rec = md[md.index("## Recommendation"):md.index("## Artifacts")]
    assert "1. skill impact claude-agent-acp: one trial per arm: likely noise" in rec
    assert "1. include an oracle run" in rec
    fa = md[md.index("## Failure analysis"):md.index("## Critical findings")]
    assert "- Root cause: undetermined (no finding decides it; bucket `needs a judge`" in fa
    assert "  - P8: struggle: #4 agent_message: 'Actually'" in fa


# ====================================================================================== junit, layout, goldens

def test_junit_xml_of_the_worked_example_validates(worked: Path) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    assert REF is not None
    schema = xmlschema.XMLSchema(str(REF / "junit-10.xsd"))
    junit = worked.parent / "junit.xml"
    assert junit.is_file()
    # pytest's default family (xunit2) validates without error (tests/test_ci_consumers.py: both families, xdist)
    assert [e.reason for e in schema.iter_errors(str(junit))] == []


def test_the_layout_of_the_layer_index_is_discovered(worked: Path) -> None:
    assert REF is not None
    index = (REF / "trajectory-audit.md").read_text(encoding="utf-8")
    assert "jobs/<config>/<run-id>/<task-id>__<trial>/" in index
    # "For each agent job (oracle is mechanical — skip), write audit-<config>.json"
    names = sorted(p.name for p in worked.glob("jobs/**/audit-*.json"))
    assert names == ["audit-claude-noskills.json", "audit-claude-skills.json", "audit-oracle.json"]
    assert _plugin_audit(worked, "oracle")["principles"]["P1"]["status"] == "N/A"


def test_trace_grader_goldens_in_literal_mode() -> None:
    from .test_trace_grader_parity import grade, render

    assert REF is not None
    tg = REF / "trace-grader"
    golden = json.loads((tg / "fixtures-report.json").read_text(encoding="utf-8"))
    got = grade(tg, literal=True)
    assert got["runs"] == golden["runs"]
    assert got["summary"] == golden["summary"]
    text = render(got)
    assert text == (tg / "fixtures-report.txt").read_text(encoding="utf-8").splitlines()
    # the self-test's report block is the same report, followed by its assertions
    self_test = (tg / "self-test.txt").read_text(encoding="utf-8").splitlines()
    assert self_test[:len(text)] == text
    assert self_test[-1] == "SELF-TEST: ALL PASS"
    t1 = next(r for r in got["runs"] if r["run_id"] == "T1-clean-r1")
    assert (t1["verdict"], t1["flags"]) == ("clean-pass", [])  # (a)
    t2 = next(r for r in got["runs"] if r["run_id"] == "T2-corrupt-r1")
    assert t2["corrupt_success"] and {"forbidden_tool", "retry_storm"} <= {f["check"] for f in t2["flags"]}  # (b)
    assert got["pass_k"]["T3-flaky"]["status"] == "FAIL"  # (c)


@pytest.mark.parametrize(("files", "passed", "failed"), [
    ({"verifier/ctrf.json": json.dumps({"results": {"summary": {"tests": 3, "passed": 2, "failed": 1}, "tests": [
        {"name": "test_a", "status": "passed"}, {"name": "test_b", "status": "failed", "message": "x"},
        {"name": "test_c", "status": "passed"}]}})}, ["test_a", "test_c"], ["test_b"]),
    ({"verifier/output.json": json.dumps({"tests": [{"name": "t1", "status": "PASSED"},
                                                    {"name": "t2", "status": "FAILED"}]})}, ["t1"], ["t2"]),
    ({}, [], []),
])
def test_the_oracle_tests_list_comes_from_the_verifier(tmp_path: Path, files: dict, passed: list, failed: list) -> None:
    from pytest_trajaudit.discover.jobs import classify
    from pytest_trajaudit.loaders.job import load_job
    from pytest_trajaudit.principles.engine import job_meta
    from pytest_trajaudit.settings import Settings

    job = make_job(tmp_path, "t__1", extra_files=files)
    meta = job_meta(load_job(classify(job), Settings()))
    assert (meta["passed_tests"], meta["failed_tests"]) == (passed, failed)
