"""What the shell heuristics remember within one job (principles/_shell.py) never changes an answer."""

from __future__ import annotations

from pathlib import Path

from pytest_trajaudit.discover.jobs import find_jobs
from pytest_trajaudit.model import READ, TOOL, Event
from pytest_trajaudit.principles import _shell, registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.scan import needles
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
