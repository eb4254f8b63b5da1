"""What the shell heuristics remember within one job (principles/_shell.py) never changes an answer."""

from __future__ import annotations

from pathlib import Path

from pytest_trajaudit import needles
from pytest_trajaudit.discovery import find_jobs
from pytest_trajaudit.engine import audit_job
from pytest_trajaudit.model import READ, TOOL, Event
from pytest_trajaudit.principles import _shell, registry
from pytest_trajaudit.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "runs"


def test_write_targets_are_remembered_as_computed_and_handed_out_as_copies() -> None:
    _shell.forget()
    cmd = "cat > /app/out.txt <<'EOF'\nx\nEOF\necho hi >> log.txt"
    first = _shell.write_targets(cmd)
    assert first == ["/app/out.txt", "log.txt"]
    first.append("poisoned")  # a caller that changes what it got changes nothing remembered
    assert _shell.write_targets(cmd) == ["/app/out.txt", "log.txt"]
    _shell.forget()
    assert _shell._WRITES == {} and _shell.write_targets(cmd) == ["/app/out.txt", "log.txt"]


def test_failed_by_output_trusts_what_it_remembers_only_for_the_same_string() -> None:
    _shell.forget()
    ok = Event(0, TOOL, READ, output="".join(["all good\n"] * 3))
    bad = Event(1, TOOL, READ, output="cat: x: No such file or directory")
    assert _shell.failed_by_output(bad) and not _shell.failed_by_output(ok)
    # an entry under this id for another (equal or not) string object is not this string's answer
    _shell._FAILED[id(ok.output)] = ("".join(["all good\n"] * 3), True)
    assert not _shell.failed_by_output(ok)
    assert _shell.failed_by_output(bad) and not _shell.failed_by_output(Event(2, TOOL, READ))


def test_an_audit_forgets_its_job() -> None:
    principles = [p for p in registry().values() if p.family != "advisor"]
    refs = find_jobs(EXAMPLES)
    assert refs
    _shell.forget()
    before = {r.dir.name: audit_job(r, Settings(), principles).results for r in refs}
    assert _shell._WRITES == {} and _shell._FAILED == {} and _shell._FOUND == {}
    # remembered answers carried over from another job (as if forget() were missing) change nothing either
    _shell.write_targets("echo x > /tmp/y")
    again = {r.dir.name: audit_job(r, Settings(), principles).results for r in refs}
    assert again == before


def test_a_text_is_scanned_once_per_event_and_the_answer_is_only_that_events() -> None:
    _shell.forget()
    act = "cat /oracle/x && " + "y" * needles.FUSE_MIN
    e = Event(0, TOOL, READ, command=act)
    first = _shell.found(e, _shell.ACT, e.action_text())
    assert first is not None and ("/oracle/", False) in first.present
    assert _shell.found(e, _shell.ACT, e.action_text()) is first  # remembered: P2 reuses P1's scan
    assert _shell.found(e, _shell.TEXT, "z" * needles.FUSE_MIN) is not first  # the event's other text: its own
    other = Event(1, TOOL, READ, command="ls " + "y" * needles.FUSE_MIN)
    _shell._FOUND[(id(other), _shell.ACT)] = (e, first)  # an entry under this id for another event is not its
    assert ("/oracle/", False) not in _shell.found(other, _shell.ACT, other.action_text()).present
    short = Event(2, TOOL, READ, command="cat /oracle/x")
    assert _shell.found(short, _shell.ACT, short.action_text()) is None  # under FUSE_MIN: the loop answers
    assert (id(short), _shell.ACT) not in _shell._FOUND  # and nothing is remembered for it
    _shell.forget()
    assert _shell._FOUND == {} and _shell.found(e, _shell.ACT, e.action_text()) is not first


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

    from pytest_trajaudit import engine
    from pytest_trajaudit.model import UnusableInput

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
