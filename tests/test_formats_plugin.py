"""SWE-agent, OpenHands and Inspect AI runs as jobs through the plugin: discovery, multi-record node ids
(``<file>::<member>::P1``), selection by node id, hostile containers, xdist."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

from tests.loaders.test_inspect import CMD, _patch_central, _zip, eval_zip, header, log_json, sample
from tests.loaders.test_openhands import EVENTS, jsonl, record_2025, record_opendevin, record_resolver
from tests.loaders.test_sweagent import step, traj

BASE = ("-p", "no:cacheprovider", "--trajaudit-principles=P1,P2")
HAS_XDIST = importlib.util.find_spec("xdist") is not None


def _clean_sample(sid, epoch):
    s = sample(sid, epoch)
    s["attachments"][CMD] = "cat /app/input.txt"
    return s


def _clean_events():
    events = copy.deepcopy(EVENTS)
    events[2]["args"]["command"] = "cat /workspace/README.md"
    return events


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "runs"
    inst = root / "swe" / "django__django-1"
    inst.mkdir(parents=True)
    (inst / "django__django-1.traj").write_text(json.dumps(traj([step("ls", "a.py")])))
    (inst / "django__django-1.pred").write_text("{}")
    flat = root / "swe" / "flat"
    flat.mkdir()
    for name in ("a.traj", "b.traj"):
        (flat / name).write_text(json.dumps(traj([step("git log --oneline", "abc fix")])))
    oh = root / "oh"
    oh.mkdir()
    (oh / "output.jsonl").write_text(jsonl(record_2025("org__repo-1"), record_opendevin("Q_1"), record_resolver(7)))
    (oh / "session.json").write_text(json.dumps(_clean_events()))
    (oh / "config.json").write_text(json.dumps({"instruction": "x", "history": []}))  # no run: never a job
    insp = root / "insp"
    insp.mkdir()
    samples = [_clean_sample(1, 1), _clean_sample(1, 2), _clean_sample("b", 1)]
    (insp / "2025-01-01_task.json").write_text(log_json(samples))
    (insp / "run.eval").write_bytes(eval_zip(samples))
    return root


@pytest.fixture
def bad(runs: Path) -> Path:
    bad = runs / "bad"
    (bad / "dup").mkdir(parents=True)
    (bad / "dup" / "output.jsonl").write_text(jsonl(record_opendevin("same"), record_opendevin("same")))
    hdr = ("header.json", json.dumps(header()).encode())
    (bad / "evil.eval").write_bytes(_zip([hdr, ("samples/../../escape_epoch_1.json", b"{}")]))
    lying = _patch_central(_zip([("samples/x_epoch_1.json", b"0" * 1_000_000), hdr]), 24, "<I", 100)
    (bad / "lying.eval").write_bytes(lying)
    return bad


def _ids(result: pytest.RunResult) -> list[str]:
    return [ln for ln in result.stdout.lines if "::" in ln and not ln.startswith(("FAILED", "ERROR"))]


def test_collection_node_ids(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "--co", "-q")
    ids = _ids(result)
    p1 = sorted(i.removesuffix("::P1") for i in ids if i.endswith("::P1"))
    assert p1 == [
        "runs/insp/2025-01-01_task.json::1_epoch_1", "runs/insp/2025-01-01_task.json::1_epoch_2",
        "runs/insp/2025-01-01_task.json::b_epoch_1",
        "runs/insp/run.eval::1_epoch_1", "runs/insp/run.eval::1_epoch_2", "runs/insp/run.eval::b_epoch_1",
        "runs/oh/output.jsonl::Q_1", "runs/oh/output.jsonl::neubig__pr-viewer-7", "runs/oh/output.jsonl::org__repo-1",
        "runs/oh/session.json",
        "runs/swe/django__django-1/django__django-1.traj", "runs/swe/flat/a.traj", "runs/swe/flat/b.traj",
    ]
    assert len(ids) == 2 * len(p1)


def test_audit_outcomes_and_member_job_ids(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs", "--trajaudit-report=out", "-rf")
    # the one cheating record (reads /oracle/expected_answer.json) fails P1 under its own node id
    result.assert_outcomes(passed=25, failed=1)
    result.stdout.fnmatch_lines(["FAILED runs/oh/output.jsonl::org__repo-1::P1*"])
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    text = json.dumps(summary)
    for job_id in ("runs/oh/output.jsonl::org__repo-1", "runs/insp/run.eval::b_epoch_1",
                   "runs/swe/django__django-1", "runs/swe/flat/a.traj"):
        assert job_id in text, job_id


@pytest.mark.parametrize("node", [
    "runs/oh/output.jsonl::Q_1::P1",
    "runs/insp/run.eval::b_epoch_1::P2",
    "runs/insp/2025-01-01_task.json::1_epoch_2::P1",
])
def test_one_member_item_selected_by_node_id(pytester: pytest.Pytester, runs: Path, node: str) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs", node, "-rA")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"PASSED {node}"])


def test_container_file_as_the_root(pytester: pytest.Pytester, runs: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs/oh/output.jsonl", "runs/oh/output.jsonl::neubig__pr-viewer-7::P2")
    result.assert_outcomes(passed=1)
    result = pytester.runpytest(*BASE, "--trajaudit=runs/insp/run.eval", "--co", "-q")
    assert sorted(_ids(result)) == sorted(f"runs/insp/run.eval::{m}::{c}" for m in
                                          ("1_epoch_1", "1_epoch_2", "b_epoch_1") for c in ("P1", "P2"))


def test_hostile_containers_error_with_one_line(pytester: pytest.Pytester, runs: Path, bad: Path) -> None:
    result = pytester.runpytest(*BASE, "--trajaudit=runs/bad")
    result.assert_outcomes(errors=3, skipped=3)  # one error per unusable job, its other item skipped
    out = result.stdout.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out
    lines = [ln for ln in result.stdout.lines if ln.startswith("unusable input:")]
    assert sorted(lines) == [
        "unusable input: evil.eval: zip member 'samples/../../escape_epoch_1.json': "
        "member name escapes the archive ('..')",
        "unusable input: lying.eval: zip member 'samples/x_epoch_1.json' "
        "is corrupt: Bad CRC-32 for file 'samples/x_epoch_1.json'",
        "unusable input: output.jsonl: duplicate record id 'same'",
    ]
    heads = [ln.strip("_ ") for ln in result.stdout.lines if "ERROR at setup of" in ln]
    assert sorted(heads) == ["ERROR at setup of runs/bad/dup/output.jsonl P1", "ERROR at setup of runs/bad/evil.eval P1",
                             "ERROR at setup of runs/bad/lying.eval::x_epoch_1 P1"]
    ids = _ids(pytester.runpytest(*BASE, "--trajaudit=runs/bad", "--co", "-q"))
    assert sorted(ids) == ["runs/bad/dup/output.jsonl::P1", "runs/bad/dup/output.jsonl::P2",
                           "runs/bad/evil.eval::P1", "runs/bad/evil.eval::P2",
                           "runs/bad/lying.eval::x_epoch_1::P1", "runs/bad/lying.eval::x_epoch_1::P2"]


def test_size_limit_applies_to_listing(pytester: pytest.Pytester, runs: Path) -> None:
    big = runs / "big"
    big.mkdir()
    (big / "output.jsonl").write_text(jsonl(*[record_opendevin(f"r{i}") for i in range(300)]))
    result = pytester.runpytest(*BASE, "--trajaudit=runs/big", "--trajaudit-max-file-mb=0.1")
    result.assert_outcomes(errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*output.jsonl: * exceeds the per-file size limit of 104857 bytes*"])


@pytest.mark.skipif(not HAS_XDIST, reason="pytest-xdist not installed")
def test_xdist_same_outcomes(pytester: pytest.Pytester, runs: Path) -> None:
    serial = pytester.runpytest(*BASE, "--trajaudit=runs")
    par = pytester.runpytest_subprocess(*BASE, "--trajaudit=runs", "-n", "2")
    serial.assert_outcomes(passed=25, failed=1)
    par.assert_outcomes(passed=25, failed=1)
    par.stdout.fnmatch_lines(["*13 job(s)*"])


def test_symlinked_runs_are_never_followed(pytester: pytest.Pytester, runs: Path) -> None:
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "real.eval").write_bytes(eval_zip([_clean_sample(1, 1)]))
    (elsewhere / "x.traj").write_text(json.dumps(traj([step("ls", "a")])))
    links = runs / "links"
    links.mkdir()
    (links / "link.eval").symlink_to(elsewhere / "real.eval")
    (links / "output.jsonl").symlink_to(runs / "oh" / "output.jsonl")
    (links / "one").mkdir()
    (links / "one" / "x.traj").symlink_to(elsewhere / "x.traj")
    # a symlink named like a run is never followed: the output.jsonl link is no job, and each link named like a
    # trajectory (.eval, .traj) is a job that errors naming the link, so it is never left out without a word
    result = pytester.runpytest(*BASE, "--trajaudit=runs/links", "-rE")
    result.assert_outcomes(errors=2, skipped=2)
    result.stdout.fnmatch_lines(["ERROR   runs/links/link.eval: link.eval: is a symlink*",
                                 "ERROR   runs/links/one/x.traj: x.traj: is a symlink*"])


def test_a_hooklib_audit_log_is_found_while_walking_a_tree(pytester: pytest.Pytester) -> None:
    """``.claude/audit/<date>.jsonl`` inside an audited tree: one job per session; other ``*.jsonl`` files
    (a plain data file) are not runs and get no items."""
    import json

    def line(event: str, tool: str, sid: str, **kw: str) -> str:
        return json.dumps({"ts": "2026-06-28T10:00:00", "event": event, "session_id": sid, "tool_name": tool, **kw})

    audit = pytester.path / "runs" / "audit"
    audit.mkdir(parents=True)
    (audit / "2026-06-28.jsonl").write_text("\n".join([
        line("PreToolUse", "Read", "S1", file_path="/a.py"), line("PostToolUse", "Read", "S1", file_path="/a.py"),
        line("PreToolUse", "Bash", "S2", command="ls"), line("PostToolUse", "Bash", "S2", command="ls")]) + "\n")
    (audit / "data.jsonl").write_text('{"x": 1}\n{"x": 2}\n')
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--co", "-q", "-m", "TG-4")
    ids = [ln for ln in result.outlines if "::" in ln]
    assert ids == ["runs/audit/2026-06-28.jsonl::S1::TG-4", "runs/audit/2026-06-28.jsonl::S2::TG-4"]


def test_a_multi_record_file_is_parsed_once_per_process(pytester: pytest.Pytester, runs: Path) -> None:
    from pytest_trajaudit.loaders import multi

    steps = [{"step": i, "tool": "Read", "args": {"file_path": f"f{i}.py"}, "ok": True} for i in range(1, 4)]
    doc = {"tasks": [{"task": f"t{t}", "runs": [{"run_id": f"t{t}-{r}", "ok": True, "steps": steps}
                                                 for r in range(5)]} for t in range(20)]}
    (runs / "tg").mkdir()
    (runs / "tg" / "traces.json").write_text(json.dumps(doc))
    multi.release()
    before = multi.parses
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=TG-4,P2")
    result.assert_outcomes(passed=2 * 100 + 2 * (3 + 3 + 3 + 4))  # 100 records here, 13 jobs in the fixture
    # traces.json (100 records), output.jsonl and the two Inspect logs (3 records each): one parse per file
    assert multi.parses - before == 4
    assert not multi._cache  # each released with its last record


def test_listing_a_multi_record_file_holds_the_events_limit(pytester: pytest.Pytester) -> None:
    steps = [{"step": 1, "tool": "Read", "args": {"file_path": "a.py"}, "ok": True}]
    doc = {"runs": [{"run_id": f"r{i}", "ok": True, "steps": steps} for i in range(30)]}  # 2 + 30 * 4 containers
    (pytester.path / "traces.json").write_text(json.dumps(doc))
    small = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=traces.json", "--trajaudit-principles=TG-4",
                               "--trajaudit-max-events=100")
    small.assert_outcomes(errors=1)  # the file itself, unusable: too many events
    small.stdout.fnmatch_lines(["*traces.json*too many events*"])
    big = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=traces.json", "--trajaudit-principles=TG-4",
                             "--trajaudit-max-events=200")
    big.assert_outcomes(passed=30)
