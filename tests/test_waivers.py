"""Waivers (``--trajaudit-waivers``): the file's rules (waivers.py) and, end to end through pytester, a waived
FAIL/WARN skipped as WAIVED and left out of the verdicts, expired and stale entries reported, usage errors, the
file refused inside an audited root, hostile reasons escaped, and the gate (never an ERROR or INCOMPLETE into
an approval)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.principles import registry
from pytest_trajaudit.report.schema import SCHEMA_DIR
from pytest_trajaudit.report.waivers import MAX_BYTES, Waiver, WaiverError, decide, load, parse, skip_reason

from .jobfactory import make_job
from .test_report_html import browser, open_page  # noqa: F401 - the module-scoped Chromium fixture

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "runs"
CHEAT = "runs/benchflow/citation-check__Cheat01"
STRUGGLE = "runs/benchflow/tictoc__Struggle01"
CODES = list(registry())
TODAY = dt.date(2027, 3, 1)
SUMMARY_SCHEMA = json.loads((SCHEMA_DIR / "summary.schema.json").read_text())


# ================================================================================= the file's rules (pure)


def _entry(**kw: object) -> dict:
    return {"job": "runs/*", "code": "P1", "reason": "known", "expires": "2027-03-01", **kw}


def test_a_valid_file_parses_dates_quoted_or_not() -> None:
    ws = parse({"waivers": [_entry(), _entry(expires=dt.date(2030, 1, 2), evidence="/oracle/")]}, CODES)
    assert ws == [Waiver(1, "runs/*", "P1", "known", dt.date(2027, 3, 1)),
                  Waiver(2, "runs/*", "P1", "known", dt.date(2030, 1, 2), "/oracle/")]
    assert parse({"waivers": []}, CODES) == [] and parse({"waivers": None}, CODES) == []


@pytest.mark.parametrize(("doc", "message"), [
    (None, "empty"),
    ([1, 2], "expected a mapping with only a 'waivers' list"),
    ({"waivers": [], "extra": 1}, "unknown key(s): extra"),
    ({"waivers": {"job": "x"}}, "'waivers' must be a list"),
    ({"waivers": ["P1"]}, "entry 1: expected a mapping"),
    ({"waivers": [_entry(), {"job": "a", "code": "P2", "expires": "2027-01-01"}]}, "entry 2 (a::P2): 'reason' is required"),
    ({"waivers": [_entry(reason="  ")]}, "entry 1 (runs/*::P1): 'reason' is required"),
    ({"waivers": [{"job": "a", "code": "P1", "reason": "r"}]}, "entry 1 (a::P1): 'expires' is required"),
    ({"waivers": [_entry(expires="next year")]}, "'expires' next year is not a date"),
    ({"waivers": [_entry(code="P99")]}, "entry 1 (runs/*::P99): unknown principle code P99"),
    ({"waivers": [_entry(reasons="typo")]}, "unknown key(s) reasons"),
    ({"waivers": [_entry(evidence="")]}, "'evidence' must be a non-empty string"),
    ({"waivers": [_entry(job=3)]}, "entry 1: 'job' is required"),
])
def test_a_bad_entry_is_an_error_naming_it(doc: object, message: str) -> None:
    with pytest.raises(WaiverError) as exc:
        parse(doc, CODES, "w.yaml")
    assert message in str(exc.value) and str(exc.value).startswith("w.yaml: ")


def test_load_refuses_malformed_oversized_and_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("waivers:\n  - job: [unclosed\n")
    with pytest.raises(WaiverError, match=r"bad.yaml: malformed YAML at line \d"):
        load(bad, CODES)
    big = tmp_path / "big.yaml"
    big.write_text("#" * (MAX_BYTES + 1))
    with pytest.raises(WaiverError, match="more than"):
        load(big, CODES)
    with pytest.raises(WaiverError, match="not found"):
        load(tmp_path / "absent.yaml", CODES)
    with pytest.raises(WaiverError, match="not a regular file"):
        load(tmp_path, CODES)
    tagged = tmp_path / "tagged.yaml"  # safe_load only: no Python object is ever built from the file
    tagged.write_text("waivers: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(WaiverError, match="malformed YAML"):
        load(tagged, CODES)


def test_decide_expiry_is_inclusive_in_utc_and_the_first_match_wins() -> None:
    ws = parse({"waivers": [_entry(job="runs/a*", expires="2027-02-28"), _entry(job="runs/*", reason="second"),
                            _entry(job="runs/*", code="P2", evidence="/oracle/")]}, CODES)
    d = decide(ws, "runs/abc", "P1", "FAIL", "ev", TODAY)
    assert d == {"entry": 2, "reason": "second", "expires": "2027-03-01", "applied": True}  # entry 1 expired
    assert skip_reason(d) == "WAIVED: second (until 2027-03-01)"
    after = decide(ws, "runs/abc", "P1", "WARN", "ev", TODAY + dt.timedelta(days=1))
    assert after == {"entry": 1, "reason": "known", "expires": "2027-02-28", "applied": False}
    assert decide(ws, "runs/abc", "P1", "PASS", "ev", TODAY) is None  # only a FAIL or WARN is waived
    assert decide(ws, "runs/abc", "P1", "N/A", "ev", TODAY) is None
    assert decide(ws, "other/abc", "P1", "FAIL", "ev", TODAY) is None  # the glob
    assert decide(ws, "runs/x", "P2", "FAIL", "read /work/x", TODAY) is None  # the evidence substring
    assert decide(ws, "runs/x", "P2", "FAIL", "read /oracle/answer", TODAY)["applied"] is True


# ================================================================================= end to end (pytester)


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    dst = pytester.path / "runs"
    shutil.copytree(EXAMPLES, dst)
    return dst


def _waivers(pytester: pytest.Pytester, text: str, name: str = "waivers.yaml") -> Path:
    path = pytester.path / "review" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=out", *args)


def _summary(pytester: pytest.Pytester) -> dict:
    doc = json.loads((pytester.path / "out" / "summary.json").read_text())
    jsonschema.validate(doc, SUMMARY_SCHEMA)
    return doc


STRUGGLE_P8 = """\
waivers:
  - job: "runs/benchflow/tictoc__*"
    code: P8
    reason: "the task is meant to take several attempts"
    expires: 2999-12-31
"""


def test_a_waived_warn_is_skipped_and_the_pr_verdict_approves(pytester: pytest.Pytester, runs: Path) -> None:
    shutil.rmtree(runs / "benchflow" / "citation-check__Cheat01")
    before = _run(pytester)
    assert "PR verdict: APPROVE WITH CAVEATS — 1 WARN job: runs/benchflow/tictoc__Struggle01" in before.stdout.str()
    result = _run(pytester, f"--trajaudit-waivers={_waivers(pytester, STRUGGLE_P8)}", "-rs")
    result.stdout.fnmatch_lines([
        "*trajaudit verdicts*",
        "3 job(s): 2 CLEAN, 1 ORACLE",
        "PR verdict: APPROVE — all jobs CLEAN, oracle reward 1.0",
        f"waived: {STRUGGLE}::P8 — the task is meant to take several attempts",
        "*SKIPPED*tictoc__Struggle01/result.json*: WAIVED: the task is meant to take several attempts (until 2999-12-31)",
    ])
    assert result.ret == 0
    summary = _summary(pytester)
    job = next(j for j in summary["jobs"] if j["job"] == STRUGGLE)
    assert (job["verdict"], job["waived"], job["statuses"]["P8"]) == ("CLEAN", ["P8"], "WARN")
    assert summary["waivers"]["applied"] == [{"job": STRUGGLE, "code": "P8", "entry": 1, "expires": "2999-12-31",
                                              "reason": "the task is meant to take several attempts"}]
    assert summary["waivers"]["stale"] == [] and summary["waivers"]["expired"] == []
    line = f"waived: {STRUGGLE}::P8 — the task is meant to take several attempts"
    assert line in (pytester.path / "out" / "report.md").read_text()
    page = (pytester.path / "out" / "report.html").read_text()
    assert line in page
    audit_file, = (pytester.path / "out" / "jobs").glob("**/tictoc__Struggle01/audit-*.json")
    audit = json.loads(audit_file.read_text())
    jsonschema.validate(audit, json.loads((SCHEMA_DIR / "audit.schema.json").read_text()))
    assert (audit["verdict"], audit["principles"]["P8"]["status"]) == ("CLEAN", "WARN")
    assert audit["principles"]["P8"]["waiver"] == {"entry": 1, "applied": True, "expires": "2999-12-31",
                                                   "reason": "the task is meant to take several attempts"}
    data = json.loads(page.split('id="trajaudit-data">', 1)[1].split("</script>", 1)[0])
    job = next(j for j in data["jobs"] if j["job"] == STRUGGLE)  # the job's view marks the finding WAIVED
    assert job["statuses"]["P8"] == "WAIVED"
    assert next(f for f in job["findings"] if f["code"] == "P8")["evidence"].startswith(
        "waived (the task is meant to take several attempts, until 2999-12-31): struggle")


def test_a_waived_integrity_fail_leaves_the_job_invalid_through_the_other_fail(pytester: pytest.Pytester,
                                                                               runs: Path) -> None:
    w = _waivers(pytester, f"""\
waivers:
  - job: "{CHEAT}"
    code: P1
    reason: "the answer file is part of the public statement"
    expires: 2999-12-31
    evidence: "/oracle/expected_answer.json"
""")
    result = _run(pytester, f"--trajaudit-waivers={w}")
    result.assert_outcomes(failed=1, passed=37, skipped=53, xfailed=7)  # P1 skipped (WAIVED), P2 still fails
    summary = _summary(pytester)
    cheat = next(j for j in summary["jobs"] if j["job"] == CHEAT)
    assert cheat["verdict"] == "INVALID" and cheat["waived"] == ["P1"]
    assert [r for r in cheat["reasons"] if r.startswith("P1")] == [] and cheat["reasons"][0].startswith("P2 FAIL")
    assert summary["pr_verdict"]["verdict"] == "REJECT"


def test_an_evidence_substring_that_does_not_match_leaves_the_finding_and_is_stale(pytester: pytest.Pytester,
                                                                                  runs: Path) -> None:
    w = _waivers(pytester, f"""\
waivers:
  - job: "{CHEAT}"
    code: P1
    reason: "only the public copy"
    expires: 2999-12-31
    evidence: "/public/answer.json"
""")
    result = _run(pytester, f"--trajaudit-waivers={w}")
    result.assert_outcomes(failed=2, passed=37, skipped=52, xfailed=7)
    result.stdout.fnmatch_lines([f"stale waiver: entry 1 ({CHEAT}::P1, until 2999-12-31) matched no finding"])
    assert [e["entry"] for e in _summary(pytester)["waivers"]["stale"]] == [1]


def test_an_expired_waiver_does_not_apply_and_is_named(pytester: pytest.Pytester, runs: Path) -> None:
    w = _waivers(pytester, """\
waivers:
  - job: "runs/benchflow/tictoc__*"
    code: P8
    reason: "accepted for the last release"
    expires: 2001-01-01
""")
    result = _run(pytester, f"--trajaudit-waivers={w}")
    result.stdout.fnmatch_lines([f"expired waiver: {STRUGGLE}::P8 (2001-01-01)",
                                 f"WARN    {STRUGGLE}/result.json: P8 WARN: struggle*"])
    summary = _summary(pytester)
    assert summary["waivers"]["applied"] == [] and summary["waivers"]["stale"] == []
    assert [(e["job"], e["code"], e["expires"]) for e in summary["waivers"]["expired"]] == [
        (STRUGGLE, "P8", "2001-01-01")]
    assert next(j for j in summary["jobs"] if j["job"] == STRUGGLE)["verdict"] == "WARN"
    assert f"expired waiver: {STRUGGLE}::P8 (2001-01-01)" in (pytester.path / "out" / "report.md").read_text()


@pytest.mark.parametrize(("text", "message"), [
    ("waivers:\n  - job: a\n    code: P1\n    expires: 2030-01-01\n", "entry 1 (a::P1): 'reason' is required"),
    ("waivers:\n  - job: a\n    code: P1\n    reason: r\n", "entry 1 (a::P1): 'expires' is required"),
    ("waivers:\n  - job: a\n    code: NOPE\n    reason: r\n    expires: 2030-01-01\n", "unknown principle code NOPE"),
    ("waivers: [\n", "malformed YAML"),
])
def test_a_bad_waivers_file_is_a_usage_error_naming_the_entry(pytester: pytest.Pytester, runs: Path, text: str,
                                                              message: str) -> None:
    result = _run(pytester, f"--trajaudit-waivers={_waivers(pytester, text)}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str() and "waivers.yaml" in result.stderr.str()


def test_a_waivers_file_inside_an_audited_root_is_refused(pytester: pytest.Pytester, runs: Path) -> None:
    planted = runs / "benchflow" / "citation-check__Cheat01" / "waivers.yaml"
    planted.write_text(STRUGGLE_P8)
    result = _run(pytester, f"--trajaudit-waivers={planted}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "lies inside an audited tree" in result.stderr.str()
    link = pytester.path / "review.yaml"  # outside by its path, inside by its real path
    os.symlink(planted, link)
    result = _run(pytester, f"--trajaudit-waivers={link}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "lies inside an audited tree" in result.stderr.str()


def test_the_ini_option_is_relative_to_the_ini_file(pytester: pytest.Pytester, runs: Path) -> None:
    _waivers(pytester, STRUGGLE_P8)
    pytester.makeini("[pytest]\ntrajaudit_waivers = review/waivers.yaml\n")
    result = _run(pytester)
    result.stdout.fnmatch_lines([f"waived: {STRUGGLE}::P8 — *"])


def test_hostile_reasons_are_escaped_in_every_output(pytester: pytest.Pytester, runs: Path) -> None:
    w = _waivers(pytester, """\
waivers:
  - job: "runs/benchflow/tictoc__*"
    code: P8
    reason: "ok\\e[2J\\e]0;owned\\a <script>window.pwned=1</script>"
    expires: 2999-12-31
""")
    result = _run(pytester, f"--trajaudit-waivers={w}", "-rs")
    out = result.stdout.str()
    assert "\x1b" not in out and "\x07" not in out
    assert "waived: runs/benchflow/tictoc__Struggle01::P8 — ok\\x1b[2J\\x1b]0;owned\\x07 <script>" in out
    assert "WAIVED: ok\\x1b[2J" in out
    md = (pytester.path / "out" / "report.md").read_text()
    assert "\x1b" not in md
    page = (pytester.path / "out" / "report.html").read_text()
    assert "<script>window.pwned" not in page and "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page


def test_a_waiver_never_turns_an_error_or_an_incomplete_run_into_approval(pytester: pytest.Pytester,
                                                                         runs: Path) -> None:
    make_job(runs, "broken__1", lines="{not json\n")  # unusable input: the job is ERROR
    w = _waivers(pytester, f"""\
waivers:
  - job: "runs/*"
    code: P1
    reason: "blanket"
    expires: 2999-12-31
  - job: "runs/*"
    code: P2
    reason: "blanket"
    expires: 2999-12-31
  - job: "{STRUGGLE}"
    code: P8
    reason: "known"
    expires: 2999-12-31
""")
    _run(pytester, f"--trajaudit-waivers={w}")
    summary = _summary(pytester)
    verdicts = {j["job"]: j["verdict"] for j in summary["jobs"]}
    assert verdicts["runs/broken__1"] == "ERROR"
    assert summary["pr_verdict"]["verdict"] == "MAJOR CHANGES NEEDED"
    assert any("could not be audited" in r for r in summary["pr_verdict"]["reasons"])
    shutil.rmtree(runs / "broken__1")
    result = _run(pytester, f"--trajaudit-waivers={w}", "-m", "not P16")  # an integrity principle deselected
    summary = _summary(pytester)
    assert summary["pr_verdict"]["verdict"] == "INCOMPLETE"
    assert result.ret == 10


def test_waivers_under_xdist_match_the_in_process_run(pytester: pytest.Pytester, runs: Path) -> None:
    w = _waivers(pytester, STRUGGLE_P8 + f"""\
  - job: "{CHEAT}"
    code: P2
    reason: "conftest write reviewed"
    expires: 2999-12-31
  - job: "nothing/*"
    code: P3
    reason: "stale"
    expires: 2999-12-31
""")
    _run(pytester, f"--trajaudit-waivers={w}")
    serial = _summary(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=out",
                                           f"--trajaudit-waivers={w}", "-n", "2")
    assert result.ret == 1
    parallel = _summary(pytester)
    assert parallel["waivers"] == serial["waivers"]
    assert [e["entry"] for e in serial["waivers"]["stale"]] == [3]
    assert [(a["job"], a["code"]) for a in serial["waivers"]["applied"]] == [(CHEAT, "P2"), (STRUGGLE, "P8")]
    assert {j["job"]: j["verdict"] for j in parallel["jobs"]} == {j["job"]: j["verdict"] for j in serial["jobs"]}


def test_the_trajaudit_command_resolves_the_waivers_and_baseline_paths(tmp_path: Path) -> None:
    """The command runs pytest from a trusted directory: a relative waivers file or baseline still means the one
    beside the caller."""
    from pytest_trajaudit.cli.main import build_args

    make_job(tmp_path / "runs", "job")
    (tmp_path / "review").mkdir()
    (tmp_path / "review" / "waivers.yaml").write_text("waivers: []\n")
    (tmp_path / "main.json").write_text("{}")
    args = build_args(["runs"], ["--trajaudit-waivers=review/waivers.yaml", "--trajaudit-baseline", "main.json"],
                      cwd=tmp_path)
    assert f"--trajaudit-waivers={tmp_path / 'review' / 'waivers.yaml'}" in args
    assert args[args.index("--trajaudit-baseline") + 1] == str(tmp_path / "main.json")


def test_a_waived_warn_raises_no_warning_so_warnings_as_errors_still_pass(pytester: pytest.Pytester,
                                                                         runs: Path) -> None:
    shutil.rmtree(runs / "benchflow" / "citation-check__Cheat01")
    args = ("--trajaudit-principles=P8", "--trajaudit-allow-incomplete", "-W",
            "error::pytest_trajaudit.TrajauditWarning")
    assert _run(pytester, *args).ret == 1  # the WARN is an error under -W error
    result = _run(pytester, *args, f"--trajaudit-waivers={_waivers(pytester, STRUGGLE_P8)}")
    result.assert_outcomes(passed=1, skipped=2)  # the oracle's N/A, and the WAIVED item
    assert "TrajauditWarning" not in result.stdout.str()
    assert result.ret == 0


def test_the_example_waivers_file_waives_the_struggling_run(pytester: pytest.Pytester, runs: Path) -> None:
    example = REPO / "examples" / "review" / "waivers.yaml"
    assert [(w.code, w.evidence) for w in load(example, CODES)] == [("P8", None), ("P9", "environment/data/aborts.tsv")]
    shutil.copytree(REPO / "examples" / "tasks", pytester.path / "tasks")
    result = _run(pytester, "--trajaudit-tasks=tasks", f"--trajaudit-waivers={example}")
    result.stdout.fnmatch_lines(["4 job(s): 2 CLEAN, 1 INVALID, 1 ORACLE", f"waived: {STRUGGLE}::P8 — *",
                                 f"waived: {STRUGGLE}::P9 — *"])
    waivers = _summary(pytester)["waivers"]
    assert len(waivers["applied"]) == 2 and waivers["stale"] == [] and waivers["expired"] == []


def test_browser_review_section_and_waived_finding(browser, pytester: pytest.Pytester, runs: Path) -> None:  # noqa: F811
    """report.html in Chromium: the review section lists the waiver, a hostile reason stays text, the job's view
    shows the finding as WAIVED, and the page logs no error."""
    w = _waivers(pytester, STRUGGLE_P8.replace("the task is meant to take several attempts",
                                               "<img src=x onerror=window.__pwned=1> known"))
    _run(pytester, f"--trajaudit-waivers={w}")
    page, problems = open_page(browser, pytester.path / "out" / "report.html")
    review = page.locator("#review li").all_inner_texts()
    assert review == [f"waived: {STRUGGLE}::P8 — <img src=x onerror=window.__pwned=1> known"]
    page.locator("tr.job", has_text="tictoc__Struggle01").first.click()
    assert "WAIVED" in page.locator(".finding[data-code='P8']").first.inner_text()
    page.select_option("#f-status", "WAIVED")  # the status filter keeps only jobs with a waived finding
    shown = page.locator("tr.job").all_inner_texts()
    assert len(shown) == 1 and "tictoc__Struggle01" in shown[0]
    assert page.evaluate("window.__pwned") is None and page.locator("body img").count() == 0
    assert problems == []
    page.close()
