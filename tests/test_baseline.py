"""Baseline diff (``--trajaudit-baseline``, ``--trajaudit-new-only``): fingerprints that survive volatile
evidence (baseline.py) and, end to end through pytester, new / gone / unchanged findings in the terminal,
summary.json and the reports, the new-only PR verdict and its gate, usage errors, and shards merged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_trajaudit.report import merge as merge_mod
from pytest_trajaudit.report.baseline import BaselineError, findings, fingerprint, load, normalize
from pytest_trajaudit.report.schema import SCHEMA_DIR

from .jobfactory import make_job

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "runs"
CHEAT = "runs/benchflow/citation-check__Cheat01"
STRUGGLE = "runs/benchflow/tictoc__Struggle01"
SUMMARY_SCHEMA = json.loads((SCHEMA_DIR / "summary.schema.json").read_text())


# ================================================================================= fingerprints (pure)


def test_normalize_strips_volatile_parts_and_keeps_the_words() -> None:
    assert normalize("#12 Read /tmp/tmpa1b2c3/out.json at 2026-12-05T07:18:01Z (3 rows)") == \
        "#N Read <tmp>/out.json at <time> (N rows)"
    assert normalize("/private/var/folders/xy/abc123/T/pytest-7/x  id 0123456789abcdef0 uuid "
                     "123e4567-e89b-12d3-a456-426614174000") == "<tmp>/x id <hex> uuid <hex>"
    assert normalize("token sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") != \
        "token sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"  # redacted first, as every report shows it


def test_a_fingerprint_is_stable_under_volatile_changes_and_changes_with_the_finding() -> None:
    fp = fingerprint("runs/a__1", "P1", "#3 Read /oracle/expected_answer.json, then passed (reward 1.0)")
    assert len(fp) == 16 and int(fp, 16) >= 0
    assert fp == fingerprint("runs/a__1", "P1", "#7 Read  /oracle/expected_answer.json, then passed (reward 0.5)")
    assert fp != fingerprint("runs/a__2", "P1", "#3 Read /oracle/expected_answer.json, then passed (reward 1.0)")
    assert fp != fingerprint("runs/a__1", "P2", "#3 Read /oracle/expected_answer.json, then passed (reward 1.0)")
    assert fp != fingerprint("runs/a__1", "P1", "#3 Read /oracle/other_answer.json, then passed (reward 1.0)")
    recs = {"P1": {"status": "FAIL", "evidence": "x"}, "P8": {"status": "WARN", "evidence": "y"},
            "P3": {"status": "PASS", "evidence": "z"}, "P9": {"status": "N/A", "evidence": "w"}}
    assert sorted(findings("j", recs)) == ["P1", "P8"]


@pytest.mark.parametrize(("content", "message"), [
    (b"{not json", "not JSON"),
    (b'{"schema_version": "other"}', "not a trajaudit summary.json"),
    (b'{"schema_version": "trajaudit-summary-1"}', "has no 'jobs' list"),
    (b'{"schema_version": "trajaudit-summary-1", "jobs": [{"job": "a"}]}', "job a carries neither"),
    (b'{"schema_version": "trajaudit-summary-1", "jobs": [{"job": "a", "fingerprints": {"P1": 3}}]}',
     "'fingerprints' must map codes to strings"),
])
def test_an_unusable_baseline_names_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "base.json"
    path.write_bytes(content)
    with pytest.raises(BaselineError) as exc:
        load(path)
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value)
    with pytest.raises(BaselineError, match="more than 3 for a summary.json"):
        load(path, max_bytes=3)
    with pytest.raises(BaselineError, match="not found"):
        load(tmp_path / "absent.json")


def test_a_summary_without_fingerprints_is_read_from_its_records(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"schema_version": "trajaudit-summary-1", "jobs": [
        {"job": "a", "detail": {"records": {"P1": {"status": "FAIL", "evidence": "read /oracle/x"},
                                            "P3": {"status": "PASS", "evidence": ""}}}}]}))
    assert load(path).prints == {fingerprint("a", "P1", "read /oracle/x"): ("a", "P1")}


# ================================================================================= end to end (pytester)


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    dst = pytester.path / "runs"
    shutil.copytree(EXAMPLES, dst)
    return dst


def _run(pytester: pytest.Pytester, out: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", f"--trajaudit-report={out}", *args)


def _summary(pytester: pytest.Pytester, out: str) -> dict:
    doc = json.loads((pytester.path / out / "summary.json").read_text())
    jsonschema.validate(doc, SUMMARY_SCHEMA)
    return doc


@pytest.fixture
def base(pytester: pytest.Pytester, runs: Path) -> Path:
    """The examples' summary.json, kept outside the audited tree (as a CI job downloads main's artifact)."""
    _run(pytester, "main")
    return pytester.path / "main" / "summary.json"


def test_the_same_runs_have_nothing_new_or_gone(pytester: pytest.Pytester, base: Path) -> None:
    n = sum(len(j["fingerprints"]) for j in json.loads(base.read_text())["jobs"])
    assert n > 3
    result = _run(pytester, "out", f"--trajaudit-baseline={base}", "--junitxml=audit.xml")
    junit = (pytester.path / "audit.xml").read_text()
    for name, value in (("new", 0), ("gone", 0), ("unchanged", n)):
        assert f'<property name="trajaudit.baseline.{name}" value="{value}"' in junit
    result.stdout.fnmatch_lines(["new since baseline: 0 finding(s) in 0 job(s)", "gone since baseline: 0 finding(s)",
                                 f"unchanged since baseline: {n} finding(s)"])
    b = _summary(pytester, "out")["baseline"]
    assert (b["new"], b["gone"], b["unchanged"], b["new_only"], b["file"]) == ([], [], n, False, "summary.json")


def test_new_and_gone_findings_are_listed_with_their_ids(pytester: pytest.Pytester, runs: Path, base: Path) -> None:
    shutil.rmtree(runs / "benchflow" / "tictoc__Struggle01")
    shutil.copytree(runs / "benchflow" / "citation-check__Cheat01", runs / "benchflow" / "citation-check__Cheat02")
    result = _run(pytester, "out", f"--trajaudit-baseline={base}")
    summary = _summary(pytester, "out")
    b = summary["baseline"]
    new_codes = sorted(c for c in next(j for j in summary["jobs"] if j["job"].endswith("Cheat02"))["fingerprints"])
    assert sorted(r["code"] for r in b["new"]) == new_codes and {r["job"] for r in b["new"]} == {
        "runs/benchflow/citation-check__Cheat02"}
    assert b["new_jobs"] == 1 and {r["job"] for r in b["gone"]} == {STRUGGLE}
    assert {"code": "P1", "job": "runs/benchflow/citation-check__Cheat02", "status": "FAIL"}.items() <= \
        next(r for r in b["new"] if r["code"] == "P1").items()
    out = result.stdout.str()
    assert (f"new since baseline: {len(new_codes)} finding(s) in 1 job(s): "
            "runs/benchflow/citation-check__Cheat02::P1, runs/benchflow/citation-check__Cheat02::P2, ") in out
    assert f"gone since baseline: {len(b['gone'])} finding(s): {STRUGGLE}::P8" in out
    md = (pytester.path / "out" / "report.md").read_text()
    page = (pytester.path / "out" / "report.html").read_text()
    for text in (md, page):
        assert f"new since baseline: {len(new_codes)} finding(s) in 1 job(s)" in text
        assert "gone since baseline" in text and "unchanged since baseline" in text


def test_new_only_counts_only_new_findings_in_the_pr_verdict(pytester: pytest.Pytester, runs: Path,
                                                            base: Path) -> None:
    result = _run(pytester, "out", f"--trajaudit-baseline={base}", "--trajaudit-new-only")
    summary = _summary(pytester, "out")
    assert summary["pr_verdict"]["verdict"] == "APPROVE"  # every finding is the baseline's
    assert {j["job"]: j["verdict"] for j in summary["jobs"]}[CHEAT] == "INVALID"  # a job's own verdict stays
    assert summary["baseline"]["new_only"] is True
    assert result.ret == 0
    shutil.copytree(runs / "benchflow" / "citation-check__Cheat01", runs / "benchflow" / "citation-check__Cheat02")
    result = _run(pytester, "out", f"--trajaudit-baseline={base}", "--trajaudit-new-only")
    assert _summary(pytester, "out")["pr_verdict"]["reasons"] == ["INVALID job: runs/benchflow/citation-check__Cheat02"]
    assert result.ret == 1


def test_new_only_never_passes_an_error_or_an_incomplete_run(pytester: pytest.Pytester, runs: Path,
                                                            base: Path) -> None:
    result = _run(pytester, "out", f"--trajaudit-baseline={base}", "--trajaudit-new-only", "-m", "not P16")
    assert _summary(pytester, "out")["pr_verdict"]["verdict"] == "INCOMPLETE" and result.ret == 10
    make_job(runs, "broken__1", lines="{not json\n")
    _run(pytester, "main2")  # the broken job is in the baseline too: an ERROR is no finding a baseline can hold
    _run(pytester, "out", f"--trajaudit-baseline={pytester.path / 'main2' / 'summary.json'}", "--trajaudit-new-only")
    pv = _summary(pytester, "out")["pr_verdict"]
    assert pv["verdict"] == "MAJOR CHANGES NEEDED" and any("could not be audited" in r for r in pv["reasons"])


def test_a_bad_baseline_or_new_only_alone_is_a_usage_error(pytester: pytest.Pytester, runs: Path) -> None:
    bad = pytester.path / "bad.json"
    bad.write_text("[]")
    result = _run(pytester, "out", f"--trajaudit-baseline={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and f"{bad}: not a trajaudit summary.json" in result.stderr.str()
    result = _run(pytester, "out", "--trajaudit-baseline=absent.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "absent.json: not found" in result.stderr.str()
    result = _run(pytester, "out", "--trajaudit-new-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "needs --trajaudit-baseline" in result.stderr.str()
    planted = runs / "benchflow" / "citation-check__Cheat01" / "summary.json"  # an agent could plant one
    planted.write_text(json.dumps({"schema_version": "trajaudit-summary-1", "jobs": []}))
    result = _run(pytester, "out", f"--trajaudit-baseline={planted}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "lies inside an audited tree" in result.stderr.str()


def test_shards_merge_to_the_unsharded_diff_and_waivers(pytester: pytest.Pytester, runs: Path, base: Path) -> None:
    shutil.rmtree(runs / "benchflow" / "tictoc__Struggle01")
    shutil.copytree(runs / "benchflow" / "citation-check__Cheat01", runs / "benchflow" / "citation-check__Cheat02")
    waivers = pytester.path / "waivers.yaml"
    waivers.write_text(f'waivers:\n  - job: "{CHEAT}"\n    code: P2\n    reason: "reviewed"\n'
                       '    expires: 2999-12-31\n  - job: "none/*"\n    code: P1\n    reason: "old"\n'
                       "    expires: 2999-12-31\n")
    args = (f"--trajaudit-baseline={base}", "--trajaudit-new-only", f"--trajaudit-waivers={waivers}")
    _run(pytester, "whole", *args)
    whole = _summary(pytester, "whole")
    for i in (1, 2):
        _run(pytester, f"s{i}", *args, f"--trajaudit-shard={i}/2")
        shard = _summary(pytester, f"s{i}")
        audited = {j["job"] for j in shard["jobs"]}
        assert {r["job"] for r in shard["baseline"]["gone"]} <= audited  # another shard's jobs are never gone here
    assert merge_mod.main([str(pytester.path / "merged"), str(pytester.path / "s1"), str(pytester.path / "s2")]) == 1
    merged = _summary(pytester, "merged")
    assert merged["baseline"] == whole["baseline"] and merged["waivers"] == whole["waivers"]
    assert merged["pr_verdict"] == whole["pr_verdict"]
    assert [e["entry"] for e in merged["waivers"]["stale"]] == [2]
    assert whole["pr_verdict"]["reasons"] == ["INVALID job: runs/benchflow/citation-check__Cheat02"]
    assert {r["job"] for r in whole["baseline"]["gone"]} == {STRUGGLE}
    (pytester.path / "s2" / "summary.json").write_text(
        (pytester.path / "s2" / "summary.json").read_text().replace('"new_only": true', '"new_only": false'))
    with pytest.raises(merge_mod.MergeError, match="baseline"):
        merge_mod.merge(pytester.path / "merged2", [pytester.path / "s1", pytester.path / "s2"])


_TEXT = "abcdefgxyzAQ/.#:_'"


@given(st.lists(st.tuples(st.text(_TEXT, max_size=12), st.integers(0, 10**6)), max_size=8),
       st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None)
def test_a_fingerprint_ignores_every_number(parts: list[tuple[str, int]], rnd) -> None:  # noqa: ANN001
    """Property: the same words with other numbers (event indexes, counts, rewards, millisecond times) keep the
    print."""
    text = " ".join(f"{w} {n}" for w, n in parts)
    other = " ".join(f"{w} {rnd.randint(0, 10**15)}" for w, _ in parts)
    assert fingerprint("j", "P1", text) == fingerprint("j", "P1", other)
