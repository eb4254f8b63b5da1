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
    assert _shell._WRITES == {} and _shell._FAILED == {} and _shell._ACTS == {} and needles._SEEN == {}
    # remembered answers carried over from another job (as if forget() were missing) change nothing either
    _shell.write_targets("echo x > /tmp/y")
    again = {r.dir.name: audit_job(r, Settings(), principles).results for r in refs}
    assert again == before


def test_action_text_is_built_once_per_event_and_only_for_that_event() -> None:
    _shell.forget()
    e = Event(0, TOOL, READ, command="cat /oracle/x", paths=("/oracle/x",))
    first = _shell.action_text(e)
    assert first == e.action_text() and _shell.action_text(e) is first  # the same string: one set match serves all
    other = Event(1, TOOL, READ, command="ls")
    _shell._ACTS[id(other)] = (e, "stale")  # an entry under this id for another event is not its text
    assert _shell.action_text(other) == "ls"
    _shell.forget()
    assert _shell._ACTS == {} and _shell.action_text(e) == first and _shell.action_text(e) is not first
