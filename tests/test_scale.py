"""Performance and scale: the lean item protocol, streamed JSON Lines, --trajaudit-shard and
``trajaudit merge``. No test here asserts a time; memory is asserted through tracemalloc peaks."""

from __future__ import annotations

import json
import os
import re
import shutil
import tracemalloc
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.discover.jobs import find_jobs
from pytest_trajaudit.discover.shard import Shard, in_shard, parse_shard, shard_key, shard_of
from pytest_trajaudit.loaders.job import load_job
from pytest_trajaudit.loaders.sniff import load_trajectory
from pytest_trajaudit.model import UnusableInput
from pytest_trajaudit.report import merge as merge_mod
from pytest_trajaudit.report.schema import SCHEMA_DIR
from pytest_trajaudit.safeio import open_jsonl_stream, parse_text
from pytest_trajaudit.settings import Settings

from .jobfactory import make_job

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "runs"
TASKS = EXAMPLES.parent / "tasks"
MB = 1024 * 1024
SUMMARY_SCHEMA = json.loads((SCHEMA_DIR / "summary.schema.json").read_text())


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", *args)


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    shutil.copytree(EXAMPLES, pytester.path / "runs")
    shutil.copytree(TASKS, pytester.path / "tasks")
    return pytester.path / "runs"


# --- lean protocol ---------------------------------------------------------------------------------------------

def test_per_job_shortcuts_give_what_pytest_gives(pytester: pytest.Pytester, runs: Path) -> None:
    """An audit item's keywords (flattened, the job's part built once), location (made relative once per job) and
    hook proxy (looked up once per job after collection) equal pytest's own for every item of the examples."""
    from _pytest.nodes import Item

    from pytest_trajaudit.adapter.nodes import PrincipleItem
    from pytest_trajaudit.adapter.protocol import flat_keywords

    items = [i for i in pytester.inline_genitems("-p", "no:cacheprovider", "--trajaudit=runs",
                                                 "--trajaudit-tasks=tasks")[0] if isinstance(i, PrincipleItem)]
    assert len(items) > 100
    for item in items:
        flat = flat_keywords(item)
        theirs = {k: item.keywords[k] for k in item.keywords}  # NodeKeywords: own first, nearest node wins
        assert flat == theirs and list(flat) == list(theirs)
        assert item.location == Item.location.func(item)  # type: ignore[attr-defined]
        assert item.ihook is item.session.gethookproxy(item.path)
    assert all("_trajaudit_flat_keywords" in i.parent.__dict__ and "_trajaudit_ihook" in i.parent.__dict__
               for i in items)  # shared per job


def _testcases(xml: str) -> list[str]:
    """The JUnit testcases without their timings (the only part two runs may differ in)."""
    cases = re.findall(r"<testcase .*?(?:/>|</testcase>)", xml, re.S)
    return [re.sub(r' time="[^"]*"', "", c) for c in cases]


def test_lean_and_full_protocol_give_the_same_reports(pytester: pytest.Pytester, runs: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    results = {}
    for proto in ("lean", "full"):
        r = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", f"--trajaudit-protocol={proto}", "-rsx",
                 f"--junitxml={proto}.xml", f"--trajaudit-report=out-{proto}")
        results[proto] = r
        assert r.ret == 1
    lean, full = results["lean"], results["full"]
    assert lean.parseoutcomes() == full.parseoutcomes()
    assert lean.parseoutcomes()["skipped"] > 10 and lean.parseoutcomes()["xfailed"] >= 1
    lean_xml = (pytester.path / "lean.xml").read_text()
    assert _testcases(lean_xml) == _testcases((pytester.path / "full.xml").read_text())
    assert '<skipped type="pytest.skip"' in lean_xml and '<skipped type="pytest.xfail"' in lean_xml
    assert (pytester.path / "out-lean/summary.json").read_bytes() == (pytester.path / "out-full/summary.json").read_bytes()
    # N/A is located at the item (result.json:1), WARN is an xfail with a TrajauditWarning, as before
    lean.stdout.fnmatch_lines(["SKIPPED [[]1[]] runs/*/result.json:1: N/A: P*"])
    lean.stdout.fnmatch_lines(["*TrajauditWarning*"])
    skips = sorted(ln for ln in lean.outlines if ln.startswith("SKIPPED"))
    assert skips == sorted(ln for ln in full.outlines if ln.startswith("SKIPPED"))


def test_lean_protocol_keeps_maxfail_and_xdist(pytester: pytest.Pytester, runs: Path) -> None:
    r = _run(pytester, "--trajaudit=runs", "-x")
    assert r.ret == 1
    assert r.parseoutcomes()["failed"] == 1
    r.stdout.fnmatch_lines(["*stopping after 1 failures*"])
    serial = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks")
    parallel = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "-n", "2")
    assert serial.parseoutcomes() == parallel.parseoutcomes()


def test_lean_protocol_honours_skip_and_xfail_marks(pytester: pytest.Pytester, runs: Path) -> None:
    """A plugin (``-p``: an audit never loads conftest.py) that waives principles with marks gets the same outcome
    from both protocols: a skip mark skips, a non-strict xfail turns a FAIL into xfailed, run=False never runs."""
    pytester.syspathinsert()
    pytester.makepyfile(waive=
        "import pytest\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for it in items:\n"
        "        code = it.name\n"
        "        if code == 'P1':\n"
        "            it.add_marker(pytest.mark.xfail(reason='P1 waived'))\n"
        "        elif code == 'P2':\n"
        "            it.add_marker(pytest.mark.skip(reason='P2 not for this benchmark'))\n"
        "        elif code == 'P4':\n"
        "            it.add_marker(pytest.mark.xfail(run=False, reason='P4 off'))\n")
    out = {}
    for proto in ("lean", "full"):
        r = _run(pytester, "--trajaudit=runs", f"--trajaudit-protocol={proto}", "-rsx", "-p", "waive")
        out[proto] = (r.ret, r.parseoutcomes(), sorted(ln for ln in r.outlines if ln.startswith(("SKIPPED", "XFAIL"))))
    assert out["lean"] == out["full"]
    ret, counts, lines = out["lean"]
    assert ret == 0 and "failed" not in counts  # the one P1 FAIL of the examples is waived
    assert any("P2 not for this benchmark" in ln for ln in lines)
    assert any("[NOTRUN] P4 off" in ln for ln in lines)
    assert any("P1 waived" in ln for ln in lines)


def test_gc_pacing_freezes_during_the_audit_and_thaws_after(pytester: pytest.Pytester, runs: Path) -> None:
    """The session's long-lived objects are frozen (out of every collection's walk) while the audit runs, the
    garbage of each step is still collected, and the next full collection after the session returns them all."""
    import gc

    pytester.syspathinsert()
    pytester.makepyfile(probe=(
        "import gc, pathlib\n"
        "class Cycle:\n"
        "    def __init__(self):\n"
        "        self.me = self\n"
        "    def __del__(self):\n"
        "        pathlib.Path('freed').write_text('yes')\n"
        "def pytest_collection_finish(session):\n"
        "    Cycle()  # cyclic garbage made before the first freeze: it must not be frozen with the session\n"
        "def pytest_sessionfinish(session):\n"
        "    pathlib.Path('frozen').write_text(str(gc.get_freeze_count()))\n"))
    r = _run(pytester, "--trajaudit=runs", "-p", "probe")
    assert r.ret == 1
    assert int((pytester.path / "frozen").read_text()) > 1000
    assert (pytester.path / "freed").read_text() == "yes"
    gc.collect()
    assert gc.get_freeze_count() == 0
    r = _run(pytester, "--trajaudit=runs", "-p", "no:trajaudit-gc", "-p", "probe")  # the pacer can be turned off
    assert int((pytester.path / "frozen").read_text()) == 0


def test_a_tool_names_kind_is_remembered_exactly_and_boundedly() -> None:
    from pytest_trajaudit.loaders import common

    names = ["Bash", "Read", " read_file ", "mcp__x__y", "Write", "web-fetch", "", "str_replace_editor", "Unknown",
             "x" * 300]
    common._KIND_MEMO.clear()
    first = [common.kind_for_tool(n) for n in names]
    assert first == [common._kind_for_tool(n) for n in names]
    assert [common.kind_for_tool(n) for n in names] == first  # answered from the memo: the same
    assert "x" * 300 not in common._KIND_MEMO and "Bash" in common._KIND_MEMO  # a long name is not kept
    assert common.kind_for_tool(None) == common._kind_for_tool(None)  # type: ignore[arg-type]
    for i in range(5000):  # an agent inventing tool names cannot grow it past its bound
        common.kind_for_tool(f"tool{i}")
    assert len(common._KIND_MEMO) <= 4096


def test_argument_shortcuts_answer_as_the_full_lookups() -> None:
    """command_from_args / paths_from_args return early when the arguments hold none of their keys: the answer
    is the one the full lookup gives (forced by adding those keys with None, which the lookup skips)."""
    from pytest_trajaudit.loaders import common

    cases = [{}, {"description": "d"}, {"command": "ls"}, {"cmd": ["bash", "-lc", "echo hi"]}, {"code": ""},
             {"file_path": "/a", "path": "/b"}, {"edits": [{"path": "/c"}, {"file": "/d"}, "x"]},
             {"input": "x", "filePath": "/e"}, {"commands": ["a", 1]}, {"path": "p" * 5000}, {1: "x"}]
    for args in cases:
        full_cmd = {**args, **dict.fromkeys(k for k in common._CMD_KEYS if k not in args)}
        full_paths = {**args, **dict.fromkeys(k for k in common._PATH_KEYS if k not in args)}
        assert not common._CMD_SET.isdisjoint(full_cmd) and not common._PATH_SET.isdisjoint(full_paths)
        assert common.command_from_args(args) == common.command_from_args(full_cmd), args
        assert common.paths_from_args(args) == common.paths_from_args(full_paths), args
    assert common.command_from_args({"cmd": ["bash", "-lc", "echo hi"]}) == "echo hi"
    assert common.paths_from_args({"edits": [{"path": "/c"}]}) == ("/c",)
    for args in ("ls", None, [1]):
        assert common.command_from_args(args) == "" and common.paths_from_args(args) == ()


def test_the_cyclic_collector_pauses_for_a_job_and_comes_back_as_it_was(monkeypatch) -> None:
    """audit_job pauses the cyclic GC while it reads and audits one job, and restores the caller's setting, also
    when the job is unusable or a loader raises."""
    import gc

    from pytest_trajaudit.principles import engine, registry
    from pytest_trajaudit.principles.engine import audit_job

    principles = [p for p in registry().values() if p.family != "advisor"]
    ref = find_jobs(EXAMPLES)[0]
    real = engine.load_job
    seen: list[bool] = []

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(engine, "load_job", spy)
    was = gc.isenabled()
    try:
        gc.enable()
        assert audit_job(ref, Settings(), principles).error is None
        assert seen[0] is False and gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        audit_job(ref, Settings(), principles)
        assert not gc.isenabled()
        gc.enable()

        def unusable(*a, **k):
            if k.get("with_trajectory", True):
                raise UnusableInput(ref.dir / "x", "broken")
            return real(*a, **k)

        monkeypatch.setattr(engine, "load_job", unusable)
        assert audit_job(ref, Settings(), principles).error
        assert gc.isenabled()

        def crash(*a, **k):
            raise RuntimeError("loader bug")

        monkeypatch.setattr(engine, "load_job", crash)
        try:
            audit_job(ref, Settings(), principles)
        except RuntimeError:
            pass
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()

def test_reports_packed_for_xdist_arrive_whole(pytester: pytest.Pytester, runs: Path) -> None:
    """Audit items' reports cross from the workers as one JSON string each (adapter/xdist.py): what the controller
    rebuilds gives the same JUnit testcases (properties from the teardown report, skip reasons from the
    (path, line, reason) tuple), the same -rsx lines and the same outcomes as a serial run."""
    pytest.importorskip("xdist")
    out = {}
    for name, extra in (("serial", ()), ("xdist", ("-n", "2"))):
        r = _run(pytester, "--trajaudit=runs", "--trajaudit-tasks=tasks", "-rsxf", f"--junitxml={name}.xml", *extra)
        assert r.ret == 1
        lines = sorted(ln for ln in r.outlines if ln.startswith(("SKIPPED", "XFAIL", "FAILED")))
        out[name] = (r.parseoutcomes(), lines, _junit_cases(pytester.path / f"{name}.xml"))
    assert out["xdist"] == out["serial"]
    counts, lines, cases = out["serial"]
    assert counts["skipped"] > 10 and any(ln.startswith("SKIPPED [1] runs/") for ln in lines)
    assert sum("<system-out>trajaudit: " in c for c in cases) == len(cases) > 50
    assert any('<skipped type="pytest.skip"' in c for c in cases) and any("<failure" in c for c in cases)


def _junit_cases(path: Path) -> list[str]:
    """Every JUnit testcase, whole (properties, failure, skipped), without its time, in node-id order."""
    import xml.etree.ElementTree as ET

    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        case.attrib.pop("time", None)
        cases.append(ET.tostring(case, encoding="unicode"))
    return sorted(cases)


def test_bad_protocol_is_a_usage_error(pytester: pytest.Pytester, runs: Path) -> None:
    pytester.makeini("[pytest]\ntrajaudit_protocol = quick\n")
    r = _run(pytester, "--trajaudit=runs")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*trajaudit_protocol must be 'lean' or 'full'*"])


# --- streamed JSON Lines ---------------------------------------------------------------------------------------

def _acp_lines(n: int, out_kb: int) -> list[dict]:
    body = ("x = compute(row, 42)  # padding line of a tool output\n" * (out_kb * 1024 // 52 + 1))[: out_kb * 1024]
    lines: list[dict] = [{"type": "user_message", "text": "fix the parser"}]
    for i in range(n):
        lines.append({"type": "agent_thought", "text": f"step {i}: look at the file"})
        lines.append({"type": "tool_call", "tool_call_id": f"t{i}", "kind": "execute", "title": f"cat /app/f{i}.py",
                      "status": "failed" if i % 7 == 0 else "completed",
                      "content": [{"type": "content", "content": {"type": "text", "text": body}}]})
    lines.append({"type": "agent_message", "text": "done"})
    return lines


def _claude_lines(n: int, out_kb: int) -> list[dict]:
    body = ("tests/test_parser.py::test_row PASSED\n" * (out_kb * 1024 // 38 + 1))[: out_kb * 1024]
    lines: list[dict] = [{"type": "system", "subtype": "init", "cwd": "/app", "session_id": "s1", "model": "m",
                          "tools": ["Bash"]}]
    for i in range(n):
        lines.append({"type": "assistant", "session_id": "s1", "parent_tool_use_id": None, "message": {
            "id": f"msg{i}", "role": "assistant", "model": "m",
            "content": [{"type": "tool_use", "id": f"tu{i}", "name": "Bash", "input": {"command": f"pytest -k {i}"}}]}})
        lines.append({"type": "user", "session_id": "s1", "parent_tool_use_id": None, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{i}", "content": body,
                                         "is_error": i % 5 == 0}]}})
    lines.append({"type": "result", "subtype": "success", "is_error": False, "result": "all green",
                  "session_id": "s1"})
    return lines


def _write_jsonl(path: Path, lines: list[dict], *, crlf: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nl = "\r\n" if crlf else "\n"
    path.write_text("".join(json.dumps(x) + nl for x in lines) + nl, encoding="utf-8")  # a trailing blank line
    return path


@pytest.mark.parametrize("fmt", ["acp", "claude"])
def test_streamed_and_whole_reads_give_the_same_trajectory(tmp_path: Path, fmt: str) -> None:
    lines = _acp_lines(120, 3) if fmt == "acp" else _claude_lines(120, 3)
    rel = "t.jsonl" if fmt == "acp" else "agent/claude-code.txt"
    path = _write_jsonl(tmp_path / rel, lines, crlf=fmt == "claude")
    log_lines = fmt == "claude"
    streamed = open_jsonl_stream(tmp_path, rel, 64 * MB, log_lines=log_lines)
    assert streamed is not None and streamed.stream is not None and len(streamed.value) == 50
    whole = parse_text(path.read_text(encoding="utf-8"), path, log_lines=log_lines)
    a, b = load_trajectory(streamed, path), load_trajectory(whole, path)
    assert (a.format, a.meta) == (b.format, b.meta)
    assert a.events == b.events and len(a.events) > 120
    assert a.raw_text == "" and b.raw_text  # the whole text is not kept for a streamed file


def test_line_reader_equals_split_for_any_chunking(tmp_path: Path) -> None:
    """iter_lines (a buffered reader's readline, lines longer than the buffer included) gives, for any bytes and
    buffer size, exactly the non-blank lines of ``split(b"\\n")`` with their line numbers."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_trajaudit.safeio import iter_lines

    f = tmp_path / "f"

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from([b"a", b"bb", b"\n", b" ", b"\t\n", b"xyz" * 9, b"\n\n", b"\r"]), max_size=40),
           st.sampled_from([1, 16, 17, 64]))
    def check(parts: list[bytes], chunk: int) -> None:
        data = b"".join(parts)
        f.write_bytes(data)
        want = [(i + 1, ln) for i, ln in enumerate(data.split(b"\n")) if ln.strip()]
        assert list(iter_lines(tmp_path, "f", 1 << 20, chunk)) == want

    check()


def test_only_certain_json_lines_are_streamed(tmp_path: Path) -> None:
    (tmp_path / "pretty.json").write_text(json.dumps({"a": [1, 2]}, indent=2))
    (tmp_path / "one.jsonl").write_text(json.dumps({"type": "user_message", "text": "x"}) + "\n\n")
    (tmp_path / "utf16.jsonl").write_bytes("".join(json.dumps(x) + "\n" for x in _acp_lines(2, 1)).encode("utf-16"))
    (tmp_path / "text.txt").write_text("plain\ntext\n")
    for name in ("pretty.json", "one.jsonl", "utf16.jsonl", "text.txt"):
        assert open_jsonl_stream(tmp_path, name, MB) is None, name


def test_streamed_file_stays_strict(tmp_path: Path) -> None:
    lines = [json.dumps(x) for x in _acp_lines(80, 1)]
    lines[150] = '{"type": "tool_call", "broken'
    make_job(tmp_path, "job__1", lines="\n".join(lines) + "\n")
    ref = find_jobs(tmp_path)[0]
    with pytest.raises(UnusableInput, match=r"neither one JSON document nor JSON Lines: line 151"):
        load_job(ref, Settings())
    make_job(tmp_path, "job__2", lines="\n".join(lines[:100]) + "\n" + '{"type": "agent_message", "text": "a\x00"}\n')
    with pytest.raises(UnusableInput, match="NUL"):
        load_job(find_jobs(tmp_path / "job__2")[0], Settings())
    # a NUL outside a string too; an escaped one (\u0000) is JSON and stays; CRLF line ends are whitespace
    make_job(tmp_path, "job__3", lines="\n".join(lines[:100]) + "\n" + '{"type": "agent_message"}\x00\n')
    with pytest.raises(UnusableInput, match="NUL"):
        load_job(find_jobs(tmp_path / "job__3")[0], Settings())
    make_job(tmp_path, "job__4", lines="\r\n".join(lines[:100]) + "\r\n"
             + '{"type": "agent_message", "text": "a\\u0000b"}\r\n')
    job = load_job(find_jobs(tmp_path / "job__4")[0], Settings())
    assert job.trajectory.format == "acp-jsonl" and "a\x00b" in [e.text for e in job.trajectory.events]


def test_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    job = make_job(tmp_path, "big__1", lines=_acp_lines(4, 1))
    traj = job / "trajectory" / "acp_trajectory.jsonl"
    with open(traj, "r+b") as fh:  # sparse: 3 GiB of size, nothing written (never read: refused at fstat)
        fh.truncate(3 * 1024 * MB)
    with pytest.raises(UnusableInput, match=r"exceeds the per-file size limit of 536870912 bytes"):
        load_job(find_jobs(tmp_path)[0], Settings())


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", ["acp", "claude"])
def test_a_large_json_lines_trajectory_is_never_held_whole(tmp_path: Path, fmt: str) -> None:
    """8 MiB of trajectory with 64 KiB tool outputs: the streamed load peaks far below the file's size (events
    keep 20,000 characters of each output); reading it whole (literal mode) needs more than the file's size."""
    if fmt == "acp":
        make_job(tmp_path, "big__1", lines=_acp_lines(130, 64))
        traj = tmp_path / "big__1" / "trajectory" / "acp_trajectory.jsonl"
    else:
        traj = _write_jsonl(tmp_path / "big__1" / "agent" / "claude-code.txt", _claude_lines(130, 64))
        (tmp_path / "big__1" / "result.json").write_text(json.dumps({"task_name": "big", "trial_name": "big__1",
                                                                     "verifier_result": {"rewards": {"reward": 1}}}))
    size = traj.stat().st_size
    assert size > 8 * MB
    ref = find_jobs(tmp_path)[0]
    load_job(ref, Settings())  # imports and compiled patterns out of the measurement
    streamed = _peak(lambda: load_job(ref, Settings()))
    whole = _peak(lambda: load_job(ref, Settings(literal=True)))
    assert streamed < 0.5 * size, (streamed, size)
    assert whole > size, (whole, size)


# --- shards ------------------------------------------------------------------------------------------------------

def test_parse_shard() -> None:
    assert parse_shard("2/3") == Shard(2, 3) and parse_shard(" 1 / 1 ") == Shard(1, 1)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", ""):
        with pytest.raises(ValueError, match="trajaudit-shard"):
            parse_shard(bad)


def test_assignment_is_pinned_and_keeps_task_groups_together(tmp_path: Path) -> None:
    # pinned values: the assignment must not change between versions, machines or Python builds
    assert [shard_of(k, 3) for k in ("group:alpha", "group:beta", "group:gamma", "job:loose", "job:a/b/c")] == \
        [1, 3, 3, 2, 3]
    for i in (1, 2, 3):
        make_job(tmp_path / "with-skills", f"alpha__{i}")
        make_job(tmp_path / "no-skills", f"alpha__{i}")
    make_job(tmp_path, "loose")
    refs = find_jobs(tmp_path)
    assert {shard_key(r, [tmp_path]) for r in refs} == {"group:alpha", "job:loose"}
    for n in (2, 3, 5):
        owners = {r.dir.name: [i for i in range(1, n + 1) if in_shard(r, [tmp_path], Shard(i, n))] for r in refs}
        assert all(len(v) == 1 for v in owners.values())
        assert len({tuple(v) for k, v in owners.items() if k.startswith("alpha")}) == 1
    # relative to the root: the same tree elsewhere gets the same shard keys
    moved = tmp_path.parent / (tmp_path.name + "-moved")
    shutil.copytree(tmp_path, moved)
    assert sorted(shard_key(r, [moved]) for r in find_jobs(moved)) == sorted(shard_key(r, [tmp_path]) for r in refs)


def _trial(root: Path, task: str, n: int, reward: float, mode: str | None = None, cheat: bool = False) -> None:
    result = {"task_name": task, "rollout_name": f"{task}__{n}", "rewards": {"reward": reward}, "n_tool_calls": 1}
    if mode:
        result["skill_mode"] = mode
    lines = None
    if cheat:
        lines = [{"type": "user_message", "text": "do x"},
                 {"type": "tool_call", "tool_call_id": "t1", "kind": "execute", "title": "cat /oracle/answer.json",
                  "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "42"}}]},
                 {"type": "agent_message", "text": "done"}]
    make_job(root, f"{task}__{n}", lines=lines, result=result)


def _tree(root: Path) -> None:
    for n, r in enumerate((1.0, 0.0, 1.0), 1):
        _trial(root / "claude", "alpha", n, r, cheat=n == 3)
    for n in (1, 2):
        _trial(root / "with-skills", "beta", n, 1.0, mode="with-skills")
        _trial(root / "no-skills", "beta", n, 0.0 if n == 1 else 1.0, mode="no-skills")
    for n in (1, 2):
        _trial(root / "claude", "gamma", n, 1.0)
        _trial(root / "claude", "delta", n, 0.0)
    make_job(root, "loose")


def _files(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("tree", ["examples", "trials"])
def test_merged_shards_equal_an_unsharded_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                              tree: str, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    if tree == "examples":
        shutil.copytree(EXAMPLES, pytester.path / "runs")
        shutil.copytree(TASKS, pytester.path / "tasks")
        args = ["--trajaudit=runs", "--trajaudit-tasks=tasks"]
    else:
        _tree(pytester.path / "runs")
        args = ["--trajaudit=runs"]
    _run(pytester, *args, "--trajaudit-report=full")
    full = _files(pytester.path / "full")
    summary = json.loads(full["summary.json"])
    assert "shard" not in summary
    if tree == "trials":
        assert summary["groups"] and summary["skill_impact"] and summary["pass_k"]
    for n in (2, 3):
        shard_dirs = []
        for i in range(1, n + 1):
            out = pytester.path / f"s{n}-{i}"
            r = _run(pytester, *args, f"--trajaudit-shard={i}/{n}", f"--trajaudit-report={out}")
            assert r.ret in (0, 1)
            doc = json.loads((out / "summary.json").read_text())
            assert doc["shard"]["index"] == i and doc["shard"]["count"] == n
            jsonschema.validate(doc, SUMMARY_SCHEMA)
            shard_dirs.append(out)
        jobs = [[j["job"] for j in json.loads((d / "summary.json").read_text())["jobs"]] for d in shard_dirs]
        assert sorted(sum(jobs, [])) == sorted(j["job"] for j in summary["jobs"])
        if tree == "trials":
            assert all(jobs), jobs  # every shard drew some jobs: the comparison below means something
        rc = merge_mod.main([str(pytester.path / f"merged-{n}"), *map(str, shard_dirs)])
        assert rc == (1 if summary["pr_verdict"]["verdict"] in ("REJECT", "MAJOR CHANGES NEEDED") else 0)
        merged = _files(pytester.path / f"merged-{n}")
        assert merged.keys() == full.keys()
        for name in full:
            assert merged[name] == full[name], name
    assert "PR verdict:" in capsys.readouterr().out


def test_shard_under_xdist_and_an_empty_shard(pytester: pytest.Pytester) -> None:
    _tree(pytester.path / "runs")
    serial = _run(pytester, "--trajaudit=runs", "--trajaudit-shard=2/2", "--trajaudit-report=a")
    parallel = _run(pytester, "--trajaudit=runs", "--trajaudit-shard=2/2", "--trajaudit-report=b", "-n", "2")
    assert serial.parseoutcomes() == parallel.parseoutcomes()
    assert [j["job"] for j in json.loads((pytester.path / "a/summary.json").read_text())["jobs"]] == \
        [j["job"] for j in json.loads((pytester.path / "b/summary.json").read_text())["jobs"]]
    empty = pytester.path / "one"
    make_job(empty, "loose")  # job:loose lands on shard 1 of 2
    r = _run(pytester, "--trajaudit=one", "--trajaudit-shard=2/2", "--trajaudit-report=e")
    assert r.ret == 0  # not 5 (no tests ran): an empty shard is normal
    doc = json.loads((pytester.path / "e/summary.json").read_text())
    assert doc["n_jobs"] == 0 and doc["shard"]["index"] == 2


def test_bad_shard_option_is_a_usage_error(pytester: pytest.Pytester, runs: Path) -> None:
    r = _run(pytester, "--trajaudit=runs", "--trajaudit-shard=3/2")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--trajaudit-shard 3/2: needs 1 <= I <= N*"])



def test_a_shard_never_prints_a_pr_verdict(pytester: pytest.Pytester) -> None:
    """A shard audits part of the run: its verdict line says so, so no log reader takes it for the PR's."""
    _tree(pytester.path / "runs")
    for i in (1, 2):
        out = _run(pytester, "--trajaudit=runs", f"--trajaudit-shard={i}/2").stdout.str()
        assert "PR verdict:" not in out and f"Shard {i}/2 verdict: " in out
        assert "one shard of the run, not the whole PR" in out

def test_merge_refuses_what_does_not_add_up(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    _tree(pytester.path / "runs")
    for i in (1, 2):
        _run(pytester, "--trajaudit=runs", f"--trajaudit-shard={i}/2", f"--trajaudit-report=s{i}")
    _run(pytester, "--trajaudit=runs", "--trajaudit-shard=2/2", "--trajaudit-literal", "--trajaudit-report=lit")
    _run(pytester, "--trajaudit=runs", "--trajaudit-shard=1/3", "--trajaudit-report=of3")
    _run(pytester, "--trajaudit=runs", "--trajaudit-report=plain")
    p = pytester.path
    cases = [
        ([p / "s1"], "missing shard(s) 2/2"),
        ([p / "s1", p / "s1"], "shard 1/2 given twice"),
        ([p / "s1", p / "lit"], "settings"),
        ([p / "s1", p / "of3"], "shard count"),
        ([p / "plain"], "not a shard's summary"),
        ([p / "nowhere"], "not found"),
    ]
    for dirs, message in cases:
        assert merge_mod.main([str(p / "out"), *map(str, dirs)]) == 4
        assert message in capsys.readouterr().err, message  # errors go to stderr
    s1 = json.loads((p / "s1" / "summary.json").read_text())
    s1["shard"]["index"] = 2  # a forged shard 2 that repeats shard 1's jobs
    (p / "dup").mkdir()
    (p / "dup" / "summary.json").write_text(json.dumps(s1))
    assert merge_mod.main([str(p / "out"), str(p / "s1"), str(p / "dup")]) == 4
    assert "shards overlap" in capsys.readouterr().err
    assert merge_mod.main([str(p / "s2"), str(p / "s1"), str(p / "s2")]) == 4
    assert "the output directory is one of the shards" in capsys.readouterr().err
    s2 = json.loads((p / "s2" / "summary.json").read_text())
    job = next(j for j in s2["jobs"] if j["detail"]["records"])
    code = next(iter(job["detail"]["records"]))
    job["detail"]["records"][code] = "PASS"  # a tampered shard: one record is not an object
    (p / "bad").mkdir()
    (p / "bad" / "summary.json").write_text(json.dumps(s2))
    assert merge_mod.main([str(p / "out"), str(p / "s1"), str(p / "bad")]) == 4
    err = capsys.readouterr().err
    assert f"its {code} record is not a JSON object" in err and len(err.strip().splitlines()) == 1
    assert not (p / "out").exists()



def test_merge_refuses_malformed_shards_in_one_line(pytester: pytest.Pytester,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A shard edited by hand or by an agent: wrong types anywhere the merge reads are refused with exit 4 and one
    line naming the file (never a traceback), and the text read from the shard is escaped in that line."""
    _tree(pytester.path / "runs")
    for i in (1, 2):
        _run(pytester, "--trajaudit=runs", f"--trajaudit-shard={i}/2", f"--trajaudit-report=s{i}")
    p = pytester.path
    good = json.loads((p / "s2" / "summary.json").read_text())
    job0 = next(j for j in good["jobs"] if j["detail"]["records"])
    code = next(iter(job0["detail"]["records"]))

    def tamper(name: str, edit) -> Path:
        doc = json.loads(json.dumps(good))
        edit(doc)
        (p / name).mkdir()
        (p / name / "summary.json").write_text(json.dumps(doc))
        return p / name

    def first_job(doc: dict) -> dict:
        return next(j for j in doc["jobs"] if j["job"] == job0["job"])

    cases = [
        (tamper("jobs-int", lambda d: d.update(jobs=5)), "jobs or groups is not a list"),
        (tamper("job-int", lambda d: d["jobs"].append(7)), "a jobs entry without a job id"),
        (tamper("group-int", lambda d: d.update(groups=[7])), "a groups entry without a group and a code"),
        (tamper("records-list", lambda d: first_job(d)["detail"].update(records=[1])), "records, meta or loads"),
        (tamper("meta-str", lambda d: first_job(d)["detail"].update(meta="x")), "records, meta or loads"),
        (tamper("waivers-list", lambda d: d.update(waivers=[1])), "waivers is not an object"),
        (tamper("baseline-bad", lambda d: d.update(baseline={"findings": [{"job": 1}]})),
         "baseline.findings is not a list of findings"),
        # deeper than the shape check: a record whose data is not an object
        (tamper("data-list", lambda d: first_job(d)["detail"]["records"][code].update(data=[1, 2])),
         "the shards' records are malformed"),
    ]
    for shard, message in cases:
        rc = merge_mod.main([str(p / "out"), str(p / "s1"), str(shard)])
        err = capsys.readouterr().err
        assert rc == 4 and message in err, (shard.name, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    # a job id with a terminal escape, reported by both shards: the line names it escaped
    evil_job = {**job0, "job": "x\x1b[31mred"}
    tamper("evil", lambda d: d["jobs"].append(evil_job))
    s1 = json.loads((p / "s1" / "summary.json").read_text())
    s1["jobs"].append(evil_job)
    (p / "evil1").mkdir()
    (p / "evil1" / "summary.json").write_text(json.dumps(s1))
    assert merge_mod.main([str(p / "out"), str(p / "evil1"), str(p / "evil")]) == 4
    err = capsys.readouterr().err
    assert "shards overlap" in err and "\x1b" not in err and "x\\x1b[31mred is in two shards" in err, err


# --- the default xdist scheduler -------------------------------------------------------------------------------

class _FakeNode:
    def __init__(self, name: str) -> None:
        self.name, self.shutting_down, self.sent = name, False, []
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True


class _FakeConfig:
    """What xdist's LoadScopeScheduling reads of a config: two popen workers, no reordering."""

    class option:  # noqa: N801 - mimics config.option
        loadscopereorder = False
        tx = ["popen", "popen"]
        numprocesses = None

    def getvalue(self, name: str):
        return getattr(self.option, name)

    def getoption(self, name: str, default=None):
        return getattr(self.option, name, default)


def test_audit_scheduler_keeps_jobs_whole_and_one_ahead() -> None:
    pytest.importorskip("xdist")
    from pytest_trajaudit.adapter.xdist import audit_scope_scheduling

    cls = audit_scope_scheduling()
    assert cls.__name__ == "AuditScopeScheduling"
    sched = cls(_FakeConfig())
    collection = [f"runs/j{j}/result.json::P{p}" for j in range(5) for p in range(1, 4)]
    a, b = _FakeNode("gw0"), _FakeNode("gw1")
    for node in (a, b):
        sched.add_node(node)
        sched.add_node_collection(node, list(collection))
    sched.schedule()
    # each worker starts with two whole jobs (one queued ahead), indices into its own collection
    assert a.sent == [[0, 1, 2], [6, 7, 8]] and b.sent == [[3, 4, 5], [9, 10, 11]]
    for i in (0, 1):
        sched.mark_test_complete(a, i)
    assert len(a.sent) == 2  # 4 items still open: more than one job's worth
    sched.mark_test_complete(a, 2)  # first job done: the last job goes to gw0, the queue is empty
    assert a.sent[-1] == [12, 13, 14] and not sched.tests_finished
    for i in (6, 7, 8, 12, 13, 14):
        sched.mark_test_complete(a, i)
    for i in (3, 4, 5, 9):
        sched.mark_test_complete(b, i)
    assert not sched.tests_finished and sched.has_pending  # gw1 has 2 items open
    sched.mark_test_complete(b, 10)
    assert sched.tests_finished and sched.has_pending  # xdist's rule: finished below 2 open items per worker
    sched.mark_test_complete(b, 11)
    assert not sched.has_pending
    assert sched.remove_node(a) is None and sched.remove_node(b) is None


def test_the_package_opts_out_of_assert_rewriting(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest marks every module of a pytest11 distribution for assert rewriting (and re-parses them in every
    process when it may not write bytecode): the package takes itself off pytest's real hook, and only itself."""
    import sys

    from _pytest.assertion.rewrite import AssertionRewritingHook

    import pytest_trajaudit

    config = pytester.parseconfig()
    hook = AssertionRewritingHook(config)
    hook.mark_rewrite("pytest_trajaudit", "some_other_plugin")
    monkeypatch.setattr(sys, "meta_path", [hook, *sys.meta_path])
    state = type("State", (), {"trace": staticmethod(lambda *a: None)})()
    assert hook._is_marked_for_rewrite("some_other_plugin.mod", state)
    pytest_trajaudit._no_assert_rewrite()
    assert not hook._is_marked_for_rewrite("pytest_trajaudit.plugin", state)
    assert hook._is_marked_for_rewrite("some_other_plugin.mod2", state)


def test_collection_classifies_each_directory_once(pytester: pytest.Pytester, runs: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A root with task-group items walks the whole root to plan its groups before pytest collects the
    directories below it; those reuse that walk instead of listing and classifying every directory again."""
    import collections

    from pytest_trajaudit.discover import jobs as discovery

    seen: collections.Counter[Path] = collections.Counter()
    classify = discovery.classify

    def counting(path: Path):
        seen[path] += 1
        return classify(path)

    monkeypatch.setattr(discovery, "classify", counting)
    r = _run(pytester, "--trajaudit=runs", "--co", "-q")
    assert r.ret == 0
    assert any("::PASSK" in ln for ln in r.outlines)  # the groups were planned from the walk
    assert len(seen) >= 5 and max(seen.values()) == 1
    jobs = [ln for ln in r.outlines if ln.endswith("::P1")]
    assert len(jobs) == len(discovery.find_jobs(runs)) >= 4


def test_plain_reports_serialize_as_pytest_serializes_them(pytester: pytest.Pytester, runs: Path) -> None:
    """adapter.xdist.plain_report_json skips pytest's PathLike check for reports of plain values; what it returns is
    what pytest's own hook returns (keys in the same order), for every report of an audit (PASS, FAIL, WARN, N/A,
    PASSK), and it declines the rest (a Python error's traceback repr, another report class)."""
    from _pytest.reports import pytest_report_to_serializable as pytests_own

    from pytest_trajaudit.adapter.xdist import plain_report_json

    rec = pytester.inline_run("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-tasks=tasks")
    reports = [r for r in rec.getreports("pytest_runtest_logreport")]
    assert len(reports) > 100
    fast = [(plain_report_json(r), pytests_own(r)) for r in reports]
    taken = [(mine, theirs) for mine, theirs in fast if mine is not None]
    assert all(mine == theirs and list(mine) == list(theirs) for mine, theirs in taken)
    assert len(taken) == len(reports)  # an audit FAIL's longrepr is its text: plain too
    outcomes = {(m["when"], m["outcome"]) for m, _ in taken}
    assert {("call", "passed"), ("call", "skipped"), ("call", "failed"), ("setup", "passed"),
            ("teardown", "passed")} <= outcomes
    assert any(m.get("wasxfail") for m, _ in taken)  # WARN
    crash = reports[0]
    try:
        raise ValueError("x")
    except ValueError as exc:
        crash.longrepr = pytest.ExceptionInfo.from_exception(exc).getrepr()  # a Python error's repr
    assert plain_report_json(crash) is None and pytests_own(crash)["longrepr"]["reprcrash"]
    assert plain_report_json(pytest.CollectReport("x", "passed", None, [])) is None


@pytest.mark.parametrize("plant", ["deep", "fifo", "symlink", "directory"])
def test_merge_refuses_a_planted_summary_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          plant: str) -> None:
    """A shard's summary.json nested too deeply for any parser, a FIFO, a symlink (to /dev/zero here) or a
    directory: one line naming the file, exit 4, never a traceback or a wait."""
    shard = tmp_path / "shard"
    shard.mkdir()
    target = shard / "summary.json"
    if plant == "deep":
        target.write_text("[" * 100_000 + "]" * 100_000)
    elif plant == "fifo":
        os.mkfifo(target)
    elif plant == "symlink":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()
    assert merge_mod.main([str(tmp_path / "out"), str(shard)]) == 4
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "summary.json" in err, err
    assert {"deep": "nested too deeply", "fifo": "not a regular file", "symlink": "is a symlink",
            "directory": "summary.json"}[plant] in err
    assert not (tmp_path / "out").exists()


def test_merge_follows_a_shard_directory_given_as_a_symlink(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The shard directory is the caller's own argument (resolved); only summary.json inside it is never followed."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "summary.json").write_text('{"schema_version": "x"}')
    (tmp_path / "link").symlink_to(real)
    assert merge_mod.main([str(tmp_path / "out"), str(tmp_path / "link")]) == 4
    err = capsys.readouterr().err
    assert "not a trajaudit summary.json" in err and "symlink" not in err, err
