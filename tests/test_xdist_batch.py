"""Batching an xdist worker's item events by job (pytest_trajaudit/xdist_batch.py)."""

from __future__ import annotations

import marshal
import threading
from pathlib import Path

import pytest

from pytest_trajaudit import xdist_batch

xdist_remote = pytest.importorskip("xdist.remote")


class Interactor:
    """The parts of xdist's WorkerInteractor the batcher touches: sendevent, torun (xdist's own TestQueue),
    nextitem_index."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict]] = []
        self.torun = xdist_remote.TestQueue(xdist_remote.execnet.gateway_base.get_execmodel("thread"))
        self.nextitem_index: object = None

    def sendevent(self, name: str, **kwargs: object) -> None:
        self.sent.append((name, kwargs))


JOB = {0: "a", 1: "a", 2: "a", 3: "b", 4: "b"}  # item index → job


def _same_job(done: object, nxt: object) -> bool:
    return isinstance(done, int) and isinstance(nxt, int) and JOB.get(done) == JOB.get(nxt)


def _item(it: Interactor, i: int, nxt: object) -> None:
    it.nextitem_index = nxt
    it.sendevent("logstart", nodeid=f"j::{i}", location=("j", 0, f"j::{i}"))
    for when in ("setup", "call", "teardown"):
        it.sendevent("testreport", data={"when": when, "nodeid": f"j::{i}", "sections": [("a", "b")]})
    it.sendevent("logfinish", nodeid=f"j::{i}", location=("j", 0, f"j::{i}"))
    it.sendevent("runtest_protocol_complete", item_index=i, duration=0.1)


def _unbatch(sent: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    process = xdist_batch.controller_unbatch(out.append)
    for name, kwargs in sent:
        process((name, kwargs))
    return out


def _alone(indices: list[int], nexts: list[object]) -> list[tuple[str, dict]]:
    plain = Interactor()
    for i, n in zip(indices, nexts, strict=True):
        _item(plain, i, n)
    return plain.sent


def test_a_job_crosses_as_one_message_and_unpacks_to_the_same_events() -> None:
    it = Interactor()
    b = xdist_batch.WorkerBatcher(it, _same_job)
    nexts: list[object] = [1, 2, 3, 4, xdist_remote.Marker.SHUTDOWN]
    for i, n in zip(range(5), nexts, strict=True):
        _item(it, i, n)
        if i < 2:
            assert it.sent == []  # job a is not done yet: nothing sent
    assert [name for name, _ in it.sent] == [xdist_batch.EVENT, xdist_batch.EVENT] and b.batches == 2
    assert _unbatch(it.sent) == _alone(list(range(5)), nexts)  # same events, same order, tuples kept
    assert isinstance(_unbatch(it.sent)[0][1]["location"], tuple)


def test_other_events_flush_first_and_keep_their_order() -> None:
    it = Interactor()
    xdist_batch.WorkerBatcher(it, _same_job)
    _item(it, 0, 1)
    it.sendevent("warning_recorded", nodeid="j::0", when="runtest", location=None, warning_message_data={})
    it.sendevent("workerfinished", workeroutput={"exitstatus": 0})
    assert [n for n, _ in it.sent] == [xdist_batch.EVENT, "workerfinished"]
    names = [n for n, _ in _unbatch(it.sent)]
    assert names[-2:] == ["warning_recorded", "workerfinished"] and names[0] == "logstart"


def test_sends_what_waits_before_it_would_wait_for_work() -> None:
    """A worker asks for its next item before it finishes the current one; when none is queued the controller may
    be waiting for these very events to hand out more (xdist's plain loadscope does): send them first."""
    it = Interactor()
    b = xdist_batch.WorkerBatcher(it, _same_job)
    _item(it, 0, 1)
    it.torun.put(7)
    assert it.torun.get() == 7 and it.sent == []  # something was queued: no need to send
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(it.torun.get()))
    waiter.start()
    for _ in range(200):
        if it.sent:
            break
        threading.Event().wait(0.01)
    assert [n for n, _ in it.sent] == [xdist_batch.EVENT] and b.buf == []  # sent while waiting
    it.torun.put(8)
    waiter.join(5)
    assert got == [8]


def test_a_batch_is_bounded() -> None:
    it = Interactor()
    b = xdist_batch.WorkerBatcher(it, lambda done, nxt: True, limit=10)
    for i in range(4):
        _item(it, i, i + 1)  # one endless job: 6 events per item
    assert [len(marshal.loads(kw["events"])) for _, kw in it.sent] == [10, 10] and len(b.buf) == 4


def test_what_marshal_cannot_carry_goes_alone() -> None:
    it = Interactor()
    xdist_batch.WorkerBatcher(it, _same_job)
    it.nextitem_index = 3
    it.sendevent("logstart", nodeid="j::0", location=("j", 0, "j::0"))
    it.sendevent("testreport", data={"odd": object()})  # execnet could not send it either: xdist would fail
    it.sendevent("runtest_protocol_complete", item_index=0, duration=0.0)
    assert [n for n, _ in it.sent] == ["logstart", "testreport", "runtest_protocol_complete"]


def test_an_unreadable_batch_is_an_internal_error_not_a_silent_loss() -> None:
    out: list[tuple[str, dict]] = []
    xdist_batch.controller_unbatch(out.append)((xdist_batch.EVENT, {"events": b"\x00garbage"}))
    assert out[0][0] == "internal_error" and "unreadable event batch" in out[0][1]["formatted_error"]


def test_only_the_offered_format_is_accepted() -> None:
    assert xdist_batch.accepted({xdist_batch.OFFER: xdist_batch.offer()})
    assert not xdist_batch.accepted({}) and not xdist_batch.accepted({xdist_batch.OFFER: -1})


# --- end to end ------------------------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

PROBE = (
    "import pathlib, pytest\n"
    "@pytest.hookimpl(trylast=True)\n"
    "def pytest_configure_node(node):\n"
    "    inner = node.process_from_remote\n"
    "    def count(ev):\n"
    "        if type(ev) is tuple:\n"
    "            with open('events.txt', 'a') as f:\n"
    "                f.write(ev[0] + '\\n')\n"
    "        inner(ev)\n"
    "    node.process_from_remote = count\n")


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    import shutil

    shutil.copytree(EXAMPLES / "runs", pytester.path / "runs")
    shutil.copytree(EXAMPLES / "tasks", pytester.path / "tasks")
    pytester.makepyfile(probe=PROBE)
    return pytester.path / "runs"


def _outcomes(pytester: pytest.Pytester, *args: str) -> tuple[int, dict[str, int], list[str]]:
    events = pytester.path / "events.txt"
    events.unlink(missing_ok=True)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit=runs",
                                      "--trajaudit-tasks=tasks", "-rsxf", *args, timeout=300)
    lines = sorted(ln for ln in r.outlines if ln.startswith(("SKIPPED", "XFAIL", "FAILED")))
    seen = events.read_text().split() if events.exists() else []
    return r.ret, r.parseoutcomes(), lines + [f"#events {len(seen)} batches {seen.count(xdist_batch.EVENT)}"]


@pytest.mark.parametrize("dist", ["default", "loadscope", "load", "worksteal", "loadfile"])
def test_every_dist_mode_finishes_with_the_serial_outcomes(pytester: pytest.Pytester, runs: Path,
                                                           dist: str) -> None:
    """Batched events never stall a scheduler (xdist's own loadscope hands out work only when a worker has fewer
    than two items open; worksteal steals from a worker's queue) and give the serial run's outcomes and lines."""
    pytest.importorskip("xdist")
    pytester.syspathinsert()
    ret, counts, lines = _outcomes(pytester)
    extra = () if dist == "default" else (f"--dist={dist}",)
    pret, pcounts, plines = _outcomes(pytester, "-n", "2", "-p", "probe", *extra)
    assert (pret, pcounts, plines[:-1]) == (ret, counts, lines[:-1])
    events, batches = (int(x) for x in plines[-1].split()[1::2])
    items = sum(counts.values())
    assert 0 < batches < items  # batched: fewer messages than items, let alone their ~6 events each
    assert events < items


def test_batching_can_be_turned_off(pytester: pytest.Pytester, runs: Path) -> None:
    pytest.importorskip("xdist")
    pytester.syspathinsert()
    ret, counts, lines = _outcomes(pytester, "-n", "2", "-p", "probe", "-p", "no:trajaudit-xdist-batch")
    batched = _outcomes(pytester, "-n", "2", "-p", "probe")
    assert (ret, counts, lines[:-1]) == batched[:2] + (batched[2][:-1],)
    events, batches = (int(x) for x in lines[-1].split()[1::2])
    assert batches == 0 and events > 5 * sum(counts.values())  # xdist's own: every event alone


CRASHY = (
    "import os, pathlib\n"
    "def pytest_runtest_logstart(nodeid, location):\n"
    "    flag = pathlib.Path(os.environ['TRAJAUDIT_TEST_CRASH_FLAG'])\n"
    "    if nodeid.endswith('::P4') and 'csv-stats' in nodeid and os.environ.get('PYTEST_XDIST_WORKER') \\\n"
    "            and not flag.exists():\n"
    "        flag.write_text('crashed')\n"
    "        os._exit(1)  # a worker killed mid-job (segfault, OOM kill)\n")


@pytest.mark.parametrize("attempt", range(3))
def test_a_worker_crash_mid_job_neither_hangs_nor_loses_items(pytester: pytest.Pytester, runs: Path,
                                                              monkeypatch: pytest.MonkeyPatch, attempt: int) -> None:
    """xdist 3.8's loadscope could hang after replacing a crashed worker (pytest-xdist #1323, #1327; seen here
    about one run in two): the audit scheduler re-queues only the items still to run and ends a worker's last
    unit with its shutdown. Every item is reported once; the crash fails exactly one item of the crashed job
    (with batching, the job's first unreported one); the rest of that job runs on the replacement."""
    pytest.importorskip("xdist")
    pytester.makepyfile(crashy=CRASHY)
    pytester.syspathinsert()
    monkeypatch.setenv("TRAJAUDIT_TEST_CRASH_FLAG", str(pytester.path / f"crashed-{attempt}"))
    _, serial, _ = _outcomes(pytester)
    ret, counts, lines = _outcomes(pytester, "-n", "2", "-p", "crashy")
    assert (pytester.path / f"crashed-{attempt}").exists()  # the worker did crash
    assert ret == 1 and sum(counts.values()) == sum(serial.values())
    crashed = [ln for ln in lines if ln.startswith("FAILED") and " - worker 'gw" in ln]
    assert len(crashed) == 1 and "csv-stats" in crashed[0]
    assert counts["failed"] == serial.get("failed", 0) + 1
