"""What CI tools read from an audit: JUnit XML valid against the JUnit schema pytest validates itself against,
CTRF valid against the CTRF schema with WARN as status "other", and GitHub Actions annotations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import REPO

XSD = REPO.parent / "shared" / "spec" / "reference" / "junit-10.xsd"
EXAMPLES = REPO / "examples"


def _audit(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(f"--trajaudit={EXAMPLES / 'runs'}", f"--trajaudit-tasks={EXAMPLES / 'tasks'}",
                              "-p", "no:cacheprovider", "-p", "no:randomly", *args)


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_junit_xml_is_valid_for_both_families(pytester: pytest.Pytester, family: str, workers: tuple[str, ...]) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    if workers:
        pytest.importorskip("xdist")
    if not XSD.is_file():
        pytest.skip("../shared/spec/reference/junit-10.xsd is not present")
    r = _audit(pytester, "--junitxml=out.xml", "-o", f"junit_family={family}", *workers)
    assert r.ret == 1
    schema = xmlschema.XMLSchema(str(XSD))
    errors = {e.reason for e in schema.iter_errors(str(pytester.path / "out.xml"))}
    # plain pytest's own xunit1 output carries testcase file/line attributes the schema does not know (xunit2 drops
    # them): the audit's XML may have exactly the errors plain pytest has, no other
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n\ndef test_bad():\n    assert 0\n")
    pytester.runpytest("test_plain.py", "--junitxml=plain.xml", "-o", f"junit_family={family}", "-p", "no:trajaudit")
    plain = {e.reason for e in schema.iter_errors(str(pytester.path / "plain.xml"))}
    assert errors <= plain and (family == "xunit1" or plain == set())
    text = (pytester.path / "out.xml").read_text(encoding="utf-8")
    assert text.count("<system-out>trajaudit: ") == text.count("<testcase ") > 100
    assert 'name="trajaudit.jobs.INVALID" value="1"' in text  # suite-level properties stay


def _untimed(path: Path) -> bytes:
    import re

    return re.sub(rb' (time|timestamp)="[^"]*"', b"", path.read_bytes())


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_junit_file_is_pytests_own_when_streamed(pytester: pytest.Pytester, workers: tuple[str, ...]) -> None:
    """The JUnit document is serialized into the file as it is made (adapter/junit.py): byte for byte what pytest's
    own writer makes of the same session, timings aside; the examples' evidence holds characters past U+00FF."""
    if workers:
        pytest.importorskip("xdist")
    _audit(pytester, "--junitxml=streamed.xml", *workers)
    _audit(pytester, "--junitxml=pytest.xml", "-p", "no:trajaudit-junit-stream", *workers)
    streamed, own = _untimed(pytester.path / "streamed.xml"), _untimed(pytester.path / "pytest.xml")
    if workers:  # testcases come in the order the workers' reports arrive: compare them as a sorted list
        tail = b"</testsuite></testsuites>"
        assert streamed.endswith(tail) and own.endswith(tail)
        assert sorted(streamed[:-len(tail)].split(b"<testcase ")) == sorted(own[:-len(tail)].split(b"<testcase "))
    else:
        assert streamed == own
    assert "≤".encode() in streamed and streamed.count(b"<testcase ") > 100


def _ctrf_schema() -> Path:
    """The schema the CTRF project ships in its reference implementation (npm package ``ctrf``), which .ci/run
    unpacks and names in TRAJAUDIT_CTRF_SCHEMA."""
    path = os.environ.get("TRAJAUDIT_CTRF_SCHEMA")
    if not path or not Path(path).is_file():
        pytest.skip("TRAJAUDIT_CTRF_SCHEMA names no file (.ci/run unpacks it from the npm package ctrf)")
    return Path(path)


def test_ctrf_report_is_valid_and_warn_is_other(pytester: pytest.Pytester) -> None:
    pytest.importorskip("ctrf")
    import jsonschema

    schema = json.loads(_ctrf_schema().read_text(encoding="utf-8"))
    r = _audit(pytester, "--ctrf=ctrf.json")
    assert r.ret == 1
    doc = json.loads((pytester.path / "ctrf.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    tests = doc["results"]["tests"]
    by_status: dict[str, set[str]] = {}
    for t in tests:
        by_status.setdefault(t["extra"]["trajaudit"]["status"], set()).add(t["status"])
    assert by_status["WARN"] == {"other"} and by_status["N/A"] == {"skipped"}
    assert by_status["FAIL"] == {"failed"} and by_status["PASS"] == {"passed"}
    summary = doc["results"]["summary"]
    assert summary["other"] == sum(t["status"] == "other" for t in tests) > 0
    assert summary["tests"] == len(tests) == sum(summary[k] for k in ("passed", "failed", "skipped", "pending",
                                                                    "other"))


def test_ctrf_enrichment_reads_what_the_standard_library_wrote(tmp_path: Path) -> None:
    """pytest-json-ctrf writes with ``json.dump`` (ASCII escapes, NaN allowed): the enrichment reads such a file,
    writes strict UTF-8 JSON (NaN becomes null, a lone surrogate is escaped) and keeps the file's mode."""
    from types import SimpleNamespace

    from pytest_trajaudit.adapter.rollup import enrich_ctrf

    path = tmp_path / "ctrf.json"
    doc = {"results": {"tool": {"name": "pytest"}, "summary": {"tests": 2},
                       "tests": [{"name": "runs/j::P1", "status": "skipped", "duration": float("nan")},
                                 {"name": "runs/j\udce9é::P2", "status": "passed", "duration": 1}]}}
    path.write_text(json.dumps(doc, indent=4), encoding="ascii")
    os.chmod(path, 0o640)
    config = SimpleNamespace(getoption=lambda name, default=None: str(path),
                             pluginmanager=SimpleNamespace(hasplugin=lambda name: True, get_plugin=lambda name: None))
    summary = {"pr_verdict": {"verdict": "REJECT", "reasons": ["j: FAIL"]}, "jobs": [{"job": "j", "verdict": "FAIL"}]}
    items = {"runs/j::P1": {"job": "j", "code": "P1", "status": "WARN", "evidence": "key sk-" + "a" * 48}}
    enrich_ctrf(config, SimpleNamespace(jobs={"j": {}}), items, summary)  # type: ignore[arg-type]
    raw = path.read_bytes()
    out = json.loads(raw)  # strict: json.loads would accept NaN, so check the text too
    assert b"NaN" not in raw and out["results"]["tests"][0]["duration"] is None
    assert out["results"]["tests"][0]["status"] == "other"
    assert "sk-" + "a" * 48 not in raw.decode("utf-8")
    assert out["results"]["extra"]["trajaudit"]["pr_verdict"] == "REJECT"
    assert out["results"]["tests"][1]["name"] == "runs/j\\xe9é::P2"  # the byte that is not UTF-8, escaped
    assert out["results"]["summary"]["other"] == 1
    assert os.stat(path).st_mode & 0o777 == 0o640


def _ctrf_untimed(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    for key in ("reportId", "timestamp"):
        doc.pop(key, None)
    results = doc["results"]
    for key in ("start", "stop", "duration"):
        results["summary"].pop(key, None)
        for t in results["tests"]:
            t.pop(key, None)
    return doc


def test_ctrf_file_is_the_same_when_encoded_once(pytester: pytest.Pytester) -> None:
    """pytest-json-ctrf's document encoded by orjson and enriched in memory (adapter/ctrf.py) is the document its
    own ``json.dump`` writes and the enrichment reads back, timings and the report's id aside."""
    pytest.importorskip("ctrf")
    _audit(pytester, "--ctrf=fast.json")
    _audit(pytester, "--ctrf=own.json", "-p", "no:trajaudit-ctrf-fast")
    fast, own = _ctrf_untimed(pytester.path / "fast.json"), _ctrf_untimed(pytester.path / "own.json")
    assert fast == own
    assert len(fast["results"]["tests"]) > 100 and fast["results"]["extra"]["trajaudit"]["pr_verdict"]


def test_ctrf_fast_save_converts_like_json_dump_and_falls_back(tmp_path: Path) -> None:
    """Values JSON lacks become ``str(value)`` as with ``json.dump(default=str)``; a document orjson refuses (a
    lone surrogate) is written by pytest-json-ctrf's own ``save``; the wrapper leaves the report object as it was."""
    import datetime
    from types import SimpleNamespace

    from pytest_trajaudit.adapter.ctrf import FastCtrf
    from pytest_trajaudit.adapter.rollup import ROLLUP_KEY

    class Report:
        def __init__(self, doc: dict) -> None:
            self.doc, self.saved_by_own = doc, False

        def get_report(self) -> dict:
            return self.doc

        def save(self, report_file: str) -> None:
            self.saved_by_own = True
            Path(report_file).write_text(json.dumps(self.doc, default=str, indent=4), encoding="utf-8")

    def finish(doc: dict, path: Path) -> tuple[Report, FastCtrf]:
        report = Report(doc)
        roll = SimpleNamespace(rollup=SimpleNamespace(jobs={"j": {}}))
        config = SimpleNamespace(_ctrf=SimpleNamespace(_report=report), stash={ROLLUP_KEY: roll})
        fast = FastCtrf(config)  # type: ignore[arg-type]
        gen = fast.pytest_sessionfinish(None)  # type: ignore[arg-type]
        next(gen)
        report.save(str(path))  # (what pytest-json-ctrf's own sessionfinish calls)
        with pytest.raises(StopIteration):
            gen.send(None)
        assert "save" not in vars(report)
        return report, fast

    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    doc = {"results": {"tests": [{"name": "a", "where": tmp_path, "pair": (1, 2), "at": when, "n": float("nan")}],
                       "summary": {1: "x"}}}
    report, fast = finish(doc, tmp_path / "a.json")
    expected = json.loads(json.dumps(doc, default=str).replace("NaN", "null"))
    assert not report.saved_by_own and json.loads((tmp_path / "a.json").read_text()) == expected
    assert fast.take(str(tmp_path / "a.json")) == expected and fast.take(str(tmp_path / "a.json")) is None
    report, fast = finish({"results": {"tests": [{"name": "j\udce9"}]}}, tmp_path / "b.json")
    assert report.saved_by_own and fast.take(str(tmp_path / "b.json")) is None


def test_github_actions_annotations(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    r = _audit(pytester)
    errors = [ln for ln in r.outlines if ln.startswith("::error ")]
    warns = [ln for ln in r.outlines if ln.startswith("::warning ")]
    assert len(errors) == 2 and len(warns) >= 2
    p1 = next(ln for ln in errors if "citation-check__Cheat01%3A%3AP1" in ln)
    # file= the job's trajectory, title= the job and code (":" escaped in a property), message after "::"
    assert "file=" in p1 and "acp_trajectory.jsonl" in p1 and "%3A%3AP1" in p1
    assert p1.split("::", 2)[2].startswith("FAIL P1: ") and "/oracle/expected_answer.json" in p1
    assert all("\n" not in ln for ln in errors + warns)


def test_no_annotations_outside_github_actions(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    r = _audit(pytester)
    assert not [ln for ln in r.outlines if ln.startswith(("::error", "::warning"))]


def test_annotation_text_is_escaped_and_redacted() -> None:
    from pytest_trajaudit.adapter.ci import github_annotations

    items = {"r/x.json::P1": {"job": "r/x", "code": "P1", "status": "FAIL",
                              "evidence": "read 100%\nthen \x1b[31mred\x1b[0m key sk-ant-api03-" + "A" * 90}}
    (line,) = github_annotations(items, {"r/x": "/ws/r/x/t.jsonl"}, "/ws")
    assert line.startswith("::error file=r/x/t.jsonl,title=r/x%3A%3AP1::FAIL P1: read 100%25")
    assert "\x1b" not in line and "\n" not in line and "A" * 40 not in line
