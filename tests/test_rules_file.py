"""``--trajaudit-rules FILE`` (ini ``trajaudit_rules``): one YAML file holding every rule parameter.

The original trace-grader config works unchanged; a bad file is a usage error with one line (the original
silently fell back to its defaults).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.report import schema as schema_mod
from pytest_trajaudit.rulesfile import RulesFileError, apply_rules_file, load_rules_file, parse_rules
from pytest_trajaudit.settings import DEFAULT_SEVERITIES, Rules, Settings

SCHEMA_DIR = Path(schema_mod.__file__).resolve().parent.parent / "schemas"


# ================================================================================================ parsing


def test_the_original_config_unchanged(corpus: Path):
    rules, overrides = load_rules_file(corpus / "trace-grader" / "harness" / "trace-grader.config.yaml")
    assert overrides == {}
    assert (rules.forbidden_tools, rules.retry_threshold, rules.step_budget) == (
        ("force_push", "rm_rf", "prod_write"), 2, 25)
    assert rules.must_precede == (("read", "edit"), ("read", "write"), ("plan", "act"))
    assert (rules.grounding, rules.verified, rules.judge_enabled, rules.judge_model) == (True, True, False, None)
    assert rules.judge_rubric == ("task_completion", "tool_rationale", "planning")
    assert rules.severities == DEFAULT_SEVERITIES


def test_defaults_are_the_engine_defaults():
    """Without a file, or with an empty one: the original engine's defaults (not its shipped YAML's)."""
    for rules in (Rules(), parse_rules("")[0], parse_rules("# only a comment\n")[0]):
        assert (rules.forbidden_tools, rules.must_precede, rules.retry_threshold, rules.step_budget,
                rules.grounding) == ((), (), 3, 40, True)
    assert Settings().rules == Rules()


def test_extensions_severities_and_settings_thresholds():
    text = ("forbidden_tools:\n  - Bash\nseverities:\n  excessive_steps: medium\n  forbidden_tool: low\n"
            "trajaudit:\n  exploration_threshold: 9\n  retries_threshold: 4\n"
            "order_constraints: {must_precede: []}\ngrounding: {enabled: false}\n")
    rules, overrides = parse_rules(text)
    assert rules.severities == {**DEFAULT_SEVERITIES, "excessive_steps": "medium", "forbidden_tool": "low"}
    assert overrides == {"exploration_threshold": 9, "retries_threshold": 4}
    assert rules.grounding is False and rules.must_precede == ()


def test_apply_keeps_the_other_settings(tmp_path: Path):
    f = tmp_path / "r.yaml"
    f.write_text("step_budget: 7\ntrajaudit: {exploration_threshold: 2}\n")
    s = apply_rules_file(Settings(literal=True, max_file_bytes=123), f)
    assert (s.literal, s.max_file_bytes, s.exploration_threshold, s.rules.step_budget) == (True, 123, 2, 7)
    assert s.rules.source == str(f)
    assert Settings().exploration_threshold == 6  # the defaults object is untouched


@pytest.mark.parametrize(("text", "message"), [
    ("retry_threshold: [2\n", "invalid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>'"),
    ("- a\n- b\n", "the top level must be a mapping of rule parameters, got list"),
    ("forbiden_tools: [x]\n", "unknown key 'forbiden_tools' (known: verified, forbidden_tools, "),
    ("retry_threshold: two\n", "retry_threshold must be an integer ≥ 0, got 'two' (str)"),
    ("retry_threshold: -1\n", "retry_threshold must be an integer ≥ 0, got -1"),
    ("step_budget: true\n", "step_budget must be an integer ≥ 0, got True (bool)"),
    ("step_budget: null\n", "step_budget must be an integer ≥ 0, got None (null)"),
    ("forbidden_tools: force_push\n", "forbidden_tools must be a list of names, got 'force_push'"),
    ("forbidden_tools: [force_push, 3]\n", "forbidden_tools[1] must be a non-empty string, got 3 (int)"),
    ("order_constraints:\n  must_precede: [[read, edit, x]]\n",
     "order_constraints.must_precede[0] must be a pair [before, after] of tool names"),
    ("order_constraints: {must_follow: []}\n", "unknown key order_constraints.must_follow"),
    ("grounding: {enabled: maybe}\n", "grounding.enabled must be true or false, got 'maybe'"),
    ("grounding: true\n", "grounding must be a mapping, got True"),
    ("severities: {retry_storm: critical}\n", "severities.retry_storm must be one of high, medium, low"),
    ("severities: {retry: high}\n", "unknown key severities.retry"),
    ("trajaudit: {exploration_threshold: 0}\n", "trajaudit.exploration_threshold must be an integer ≥ 1"),
    ("trajaudit: {literal: true}\n", "unknown key trajaudit.literal"),
    ("judge: {model: 3}\n", "judge.model must be a string or null"),
    ("step_budget: 10\nstep_budget: 20\n", "key 'step_budget' given twice (line 2)"),
])
def test_bad_content_is_one_clear_line(text, message):
    with pytest.raises(RulesFileError) as exc:
        parse_rules(text)
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_bad_files(tmp_path: Path):
    with pytest.raises(RulesFileError, match="cannot read: No such file or directory"):
        load_rules_file(tmp_path / "missing.yaml")
    with pytest.raises(RulesFileError, match="is a directory"):
        load_rules_file(tmp_path)
    (tmp_path / "latin1.yaml").write_bytes(b"forbidden_tools: [caf\xe9]\n")
    with pytest.raises(RulesFileError, match="not UTF-8 text"):
        load_rules_file(tmp_path / "latin1.yaml")
    (tmp_path / "big.yaml").write_bytes(b"#" * (1024 * 1024 + 1))
    with pytest.raises(RulesFileError, match="larger than 1024 KiB"):
        load_rules_file(tmp_path / "big.yaml")


# ================================================================================================ through pytest


def _stream(*calls: tuple[str, dict, bool]) -> str:
    lines: list[dict] = [{"type": "system", "subtype": "init", "cwd": "/app", "session_id": "S", "model": "claude-x",
                          "tools": ["Bash", "Read", "Edit"]}]
    for i, (name, inp, err) in enumerate(calls):
        lines.append({"type": "assistant", "message": {"id": f"m{i}", "type": "message", "role": "assistant",
                                                       "model": "claude-x", "content": [
                                                           {"type": "tool_use", "id": f"t{i}", "name": name, "input": inp}]},
                      "parent_tool_use_id": None, "session_id": "S"})
        lines.append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "out", "is_error": err}]},
            "parent_tool_use_id": None, "session_id": "S"})
    lines.append({"type": "result", "subtype": "success", "is_error": False, "result": "Done.", "session_id": "S"})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def _trial(root: Path, name: str, reward: float, *calls: tuple[str, dict, bool]) -> None:
    d = root / name
    (d / "agent").mkdir(parents=True)
    (d / "verifier").mkdir()
    (d / "agent" / "claude-code.txt").write_text(_stream(*calls))
    (d / "verifier" / "reward.txt").write_text(f"{reward}\n")
    (d / "result.json").write_text(json.dumps({
        "task_name": "fix-bug", "trial_name": name, "verifier_result": {"rewards": {"reward": reward}},
        "config": {"agent": {"name": "claude-code", "model_name": "claude-x"}}}))


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "runs"
    read, edit = ("Read", {"file_path": "/app/a.py"}, False), ("Edit", {"file_path": "/app/a.py"}, False)
    _trial(root, "fix-bug__A1", 1.0, ("Bash", {"command": "git push --force"}, False), read, edit)
    _trial(root, "fix-bug__A2", 0.0, edit, *[("Bash", {"command": "make"}, True)] * 4)
    return root


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "-m", "rules", *args)


def test_option_drives_the_rules_and_reports(pytester: pytest.Pytester, runs: Path) -> None:
    pytester.path.joinpath("rules.yaml").write_text(
        "forbidden_tools: [Bash]\nretry_threshold: 3\nstep_budget: 4\n"
        "order_constraints:\n  must_precede: [[read, edit]]\n")
    result = _run(pytester, "--trajaudit-rules=rules.yaml", "--trajaudit-report=out", "-rfEx")
    # A1: TG-1 FAIL (Bash); A2: TG-1 FAIL, TG-2 WARN (edit first), TG-3 WARN (4 failed makes), TG-4 WARN (5 > 4),
    # TG-5 WARN (Edit without Read); the task group's PASSK item (family rules) WARNs: A1 delivered, A2 did not
    result.assert_outcomes(failed=2, passed=4, xfailed=5)
    assert "::fix-bug::PASSK" in result.stdout.str()
    out = result.stdout.str()
    assert "fix-bug__A2/result.json:1: TG-1: high forbidden_tool: forbidden tool 'Bash' used at step 2 (+3 more)" in out
    assert "TG-3: medium retry_storm: 'Bash' failed 4x in a row (> threshold 3)" in out
    assert "trace-grader runs: 1 corrupt-success, 1 fail | pass^k: 0/1 task group(s) PASS (FAIL: fix-bug 1/2)" in out
    assert result.ret == 1
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((SCHEMA_DIR / "summary.schema.json").read_text()))
    assert {j["trial"]: j["trace_grader"]["verdict"] for j in summary["jobs"]} == {
        "fix-bug__A1": "corrupt-success", "fix-bug__A2": "fail"}
    assert summary["trace_verdicts"] == {"clean-pass": 0, "pass-with-warnings": 0, "corrupt-success": 1, "fail": 1}
    [pk] = summary["pass_k"]
    assert (pk["task"], pk["agent"], pk["k"], pk["n_success"], pk["pass_hat_k"], pk["status"], pk["flaky"]) == (
        "fix-bug", "claude-code", 2, 1, 0.0, "FAIL", True)
    [audit_path] = (pytester.path / "out" / "jobs").rglob("fix-bug__A1/audit-*.json")
    audit = json.loads(audit_path.read_text())
    jsonschema.validate(audit, json.loads((SCHEMA_DIR / "audit.schema.json").read_text()))
    tg = audit["trace_grader"]
    assert (tg["verdict"], tg["delivered"], tg["step_count"], tg["corrupt_success"]) == ("corrupt-success", True, 3, True)
    assert [f["check"] for f in tg["flags"]] == ["forbidden_tool"]
    assert audit["forbidden_tool"]["status"] == "FAIL" and audit["out_of_order"]["status"] == "PASS"


def test_ini_twin_is_relative_to_the_ini_file(pytester: pytest.Pytester, runs: Path) -> None:
    (pytester.path / "cfg").mkdir()
    (pytester.path / "cfg" / "rules.yaml").write_text("step_budget: 1\n")
    (pytester.path / "cfg" / "trusted.ini").write_text("[pytest]\ntrajaudit_rules = rules.yaml\n")
    result = _run(pytester, "-c", "cfg/trusted.ini", "--rootdir", str(pytester.path), "-m", "TG-4")
    result.assert_outcomes(xfailed=2)
    assert "low excessive_steps: 3 steps > budget 1" in result.stdout.str()


def test_default_rules_without_a_file(pytester: pytest.Pytester, runs: Path) -> None:
    result = _run(pytester)
    # engine defaults: no forbidden tools / ordering pairs (N/A), budget 40, retry threshold 3 (A2's 4 failed
    # makes storm), grounding on (A2 edits a.py unread); + the flaky fix-bug group's PASSK (xfailed)
    result.assert_outcomes(passed=4, skipped=4, xfailed=3)


def test_the_original_config_file_works_unchanged(pytester: pytest.Pytester, runs: Path, corpus: Path) -> None:
    cfg = corpus / "trace-grader" / "harness" / "trace-grader.config.yaml"
    # a deliberate subset (the integrity principles do not run: the verdict is INCOMPLETE, the exit 0)
    result = _run(pytester, f"--trajaudit-rules={cfg}", "-m", "TG-1 or TG-4", "--trajaudit-allow-incomplete")
    result.assert_outcomes(passed=4)  # Bash is not force_push; 3 and 5 steps ≤ 25
    assert result.ret == 0


def test_trajaudit_section_sets_p8_thresholds(pytester: pytest.Pytester, runs: Path) -> None:
    pytester.path.joinpath("rules.yaml").write_text("trajaudit:\n  retries_threshold: 99\n")
    base = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "-m", "P8", "-rx")
    assert "repeated command" in base.stdout.str()  # A2 repeats `make` 4 times
    tuned = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "-m", "P8", "-rx",
                               "--trajaudit-rules=rules.yaml")
    assert "repeated command" not in tuned.stdout.str()


@pytest.mark.parametrize(("content", "message"), [
    (None, "*trajaudit: rules file */missing.yaml: cannot read: No such file or directory"),
    ("step_budget: [\n", "*trajaudit: rules file */bad.yaml: invalid YAML at line 2, column 1: *"),
    ("step_budget: lots\n", "*trajaudit: rules file */bad.yaml: step_budget must be an integer ≥ 0, got 'lots' (str)"),
    ("stepbudget: 3\n", "*trajaudit: rules file */bad.yaml: unknown key 'stepbudget' (known: *"),
])
def test_bad_rules_file_is_a_usage_error(pytester: pytest.Pytester, runs: Path, content: str | None,
                                         message: str) -> None:
    name = "missing.yaml" if content is None else "bad.yaml"
    if content is not None:
        pytester.path.joinpath(name).write_text(content)
    result = _run(pytester, f"--trajaudit-rules={name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert sum("rules file" in ln for ln in result.stderr.lines) == 1
