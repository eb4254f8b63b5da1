"""Bounded work on hostile input (docs/limits.md): the events limit (``--trajaudit-max-events``) and the time
budget of a job's audit (``--trajaudit-audit-budget``). Past either, the job is unusable input: an ERROR naming
the file (or the job) and the limit, never a pass, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_trajaudit.discover.jobs import JobRef
from pytest_trajaudit.loaders.job import load_job
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.safeio import DEFAULT_MAX_EVENTS, count_containers
from pytest_trajaudit.settings import Settings
from pytest_trajaudit.timebudget import TICKS, AuditTimeout, budget
from tests.jobfactory import DEFAULT_LINES, make_job

TIMEOUT = 120


def ref(job: Path) -> JobRef:
    return JobRef(job, job / "result.json", "benchflow-rollout")


def audit(job: Path, **settings: object):  # noqa: ANN201 - a JobAudit
    principles = [p for code, p in registry().items() if code in ("P1", "P2", "P10")]
    return audit_job(ref(job), Settings(**settings), principles)  # type: ignore[arg-type]


def acp_lines(n: int) -> list[dict]:
    """A BenchFlow ACP trajectory of ``n`` lines (a user message, tool calls, a final message), each line one event:
    the shape of the real BenchFlow runs in the corpus (harbor/…/trajectory/acp_trajectory.jsonl)."""
    calls = [{"type": "tool_call", "tool_call_id": f"t{i}", "kind": "read", "title": f"Read /root/in{i}.txt",
              "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "data"}}]}
             for i in range(n - 2)]
    return [{"type": "user_message", "text": "do x"}, *calls, {"type": "agent_message", "text": "done"}]


# --- counting ----------------------------------------------------------------------------------------------------

def test_count_containers_ignores_brackets_inside_strings() -> None:
    text = json.dumps([{"code": "def f(): return {'a': [1, 2]}", "esc": "\\\"{[", "n": [[], {}]}])
    assert count_containers(text, 0) == 5 == count_containers(text.encode(), 0)
    assert count_containers(text, 100) <= 100  # under the limit: an upper bound is enough


# --- the events limit ----------------------------------------------------------------------------------------------

def test_tiny_objects_past_the_default_limit_are_too_many_events(tmp_path: Path) -> None:
    """``[{},{},…]``: three bytes per object, some 70 bytes of Python objects each once parsed. One object past the
    default limit is refused before anything is parsed, naming the file and the count."""
    n = DEFAULT_MAX_EVENTS  # with the enclosing array: one container past the limit
    job = make_job(tmp_path, "tiny", lines=b"[" + b"{}," * (n - 1) + b"{}]")
    a = audit(job)
    assert a.results == {}
    assert a.error == (f"trajectory/acp_trajectory.jsonl: too many events ({n + 1} JSON objects and arrays > limit "
                       f"{DEFAULT_MAX_EVENTS}; --trajaudit-max-events)")


def test_streamed_json_lines_past_the_limit(tmp_path: Path) -> None:
    """A valid ACP trajectory (read line by line, never whole) with more lines than the limit is refused."""
    job = make_job(tmp_path, "long", lines=acp_lines(30))
    a = audit(job, max_events=20)
    assert a.results == {} and a.error is not None
    assert a.error.startswith("trajectory/acp_trajectory.jsonl: too many events (21 lines, or more > limit 20;")


def test_events_within_the_limit_are_audited(tmp_path: Path) -> None:
    job = make_job(tmp_path, "fits", lines=acp_lines(20))
    a = audit(job, max_events=20)
    assert a.error is None and a.meta["n_events"] == 20
    assert {r.status for r in a.results.values()} == {"PASS"}


def test_whole_document_past_the_limit(tmp_path: Path) -> None:
    """A trajectory parsed whole (one JSON document: an OpenAI chat list, as mini-swe-agent and chat exports
    write) is counted before it is parsed."""
    msgs = [{"role": "user", "content": "do x"}] + [{"role": "assistant", "content": f"step {i}"} for i in range(40)]
    job = make_job(tmp_path, "chat", lines=json.dumps(msgs))
    assert audit(job, max_events=200).error is None
    err = audit(job, max_events=20).error
    assert err == "trajectory/acp_trajectory.jsonl: too many events (42 JSON objects and arrays > limit 20; " \
                  "--trajaudit-max-events)"


def test_json_inside_a_tool_call_counts_too(tmp_path: Path) -> None:
    """Tool arguments written as a JSON string (OpenAI chat ``function.arguments``) are decoded by the loader: a
    string holding many tiny objects is held to the same limit as the file around it."""
    args = json.dumps({"command": "ls", "pad": [{} for _ in range(60)]})
    msgs = [{"role": "user", "content": "do x"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": args}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": "done"}]
    job = make_job(tmp_path, "args", lines=json.dumps(msgs))
    assert audit(job, max_events=100).error is None
    err = audit(job, max_events=50).error
    assert err is not None and "too many events (62 JSON objects and arrays > limit 50;" in err


def test_events_limit_option_and_ini(pytester: pytest.Pytester) -> None:
    runs = pytester.path / "runs"
    make_job(runs, "short", lines=DEFAULT_LINES)
    make_job(runs, "long", lines=acp_lines(30))
    base = ("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=P1,P2")
    for extra, ini in ((("--trajaudit-max-events=20",), None), ((), "[pytest]\ntrajaudit_max_events = 20\n")):
        if ini:
            pytester.makefile(".ini", pytest=ini)
        result = pytester.runpytest_subprocess(*base, *extra, timeout=TIMEOUT)
        result.assert_outcomes(passed=2, errors=1, skipped=1)  # one error per unusable job
        out = result.stdout.str()
        assert "ERROR   runs/long/result.json: trajectory/acp_trajectory.jsonl: too many events (21 lines, or " \
               "more > limit 20; --trajaudit-max-events)" in out
        assert "APPROVE" not in out.split("PR verdict:")[-1].splitlines()[0]


def test_events_limit_must_be_a_positive_whole_number(pytester: pytest.Pytester) -> None:
    make_job(pytester.path / "runs", "short")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajaudit=runs",
                                           "--trajaudit-max-events=0", timeout=TIMEOUT)
    assert result.ret == 4 and "--trajaudit-max-events" in result.stderr.str()


# --- the time budget -----------------------------------------------------------------------------------------------

def test_audit_past_its_budget_is_unusable_input(tmp_path: Path) -> None:
    """A budget smaller than any audit can take: the job is an ERROR, "audit exceeded N s", with no result."""
    job = make_job(tmp_path, "big", lines=acp_lines(5000))
    a = audit(job, audit_budget=1e-9)
    assert a.results == {} and a.error == "audit exceeded 1e-09 s (--trajaudit-audit-budget)"
    ok = audit(job)  # the default budget: audited
    assert ok.error is None and len(ok.results) == 3


def test_budget_is_checked_inside_a_long_loop(tmp_path: Path) -> None:
    """Loading alone (no principle has run yet) stops on a spent budget: the streamed reader checks the clock
    while it reads (every few thousand lines), not only between principles."""
    job = make_job(tmp_path, "big", lines=acp_lines(4 * TICKS))
    with budget(1e-9, job), pytest.raises(AuditTimeout) as exc:
        load_job(ref(job), Settings())
    assert exc.value.reason == "audit exceeded 1e-09 s (--trajaudit-audit-budget)"
    load_job(ref(job), Settings())  # outside a budget: loads


def test_audit_budget_option_and_ini(pytester: pytest.Pytester) -> None:
    make_job(pytester.path / "runs", "big", lines=acp_lines(3000))
    base = ("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=P1,P2")
    for extra, ini in ((("--trajaudit-audit-budget=0.000001",), None),
                       ((), "[pytest]\ntrajaudit_audit_budget = 0.000001\n")):
        if ini:
            pytester.makefile(".ini", pytest=ini)
        result = pytester.runpytest_subprocess(*base, *extra, timeout=TIMEOUT)
        result.assert_outcomes(errors=1, skipped=1)  # one error per unusable job
        out = result.stdout.str()
        assert "ERROR   runs/big/result.json: audit exceeded 1e-06 s (--trajaudit-audit-budget)" in out
        assert result.ret != 0


# --- literal mode on a streamed file ------------------------------------------------------------------------------

@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_literal_mode_streams_events_and_keeps_the_whole_text(tmp_path: Path, bom: bytes) -> None:
    """``--trajaudit-literal`` builds a JSON Lines trajectory's events from the line stream, as precise mode does,
    and then reads the file's text for the seeds' whole-string regexes: the same events in both modes, and the
    text is the file's, BOM removed (``decode_text``), so a seed pattern spanning lines still matches."""
    lines = acp_lines(6)
    lines[2]["content"][0]["content"]["text"] = "pip install -q\nmy-json-tools "  # LETHAL only across the newline
    body = "".join(json.dumps(x) + "\n" for x in lines)
    job = make_job(tmp_path, "lit", lines=bom + body.encode())
    literal, precise = load_job(ref(job), Settings(literal=True)), load_job(ref(job), Settings())
    assert literal.trajectory.raw_text == body
    assert precise.trajectory.raw_text == ""  # streamed and not needed: never held
    assert [(e.type, e.kind, e.args, e.output) for e in literal.trajectory.events] == \
        [(e.type, e.kind, e.args, e.output) for e in precise.trajectory.events]


def test_literal_mode_reread_is_held_to_the_per_file_limit_and_not_charged_twice(tmp_path: Path) -> None:
    """The text read after the stream is the same file: its bytes count once toward the per-job limit (a job whose
    one trajectory fits the limit is audited in literal mode as in precise mode)."""
    job = make_job(tmp_path, "fits", lines=acp_lines(40))
    size = (job / "trajectory" / "acp_trajectory.jsonl").stat().st_size
    total = sum(p.stat().st_size for p in job.rglob("*") if p.is_file())
    for literal in (False, True):
        a = audit(job, literal=literal, max_job_bytes=total + 1, max_file_bytes=size + 1)
        assert a.error is None, a.error
