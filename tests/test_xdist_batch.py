"""Batching an xdist worker's item events by job (pytest_trajaudit/xdist_batch.py)."""

from __future__ import annotations

import marshal
import os
import re
import threading
import types
from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.adapter import xdist_batch
from pytest_trajaudit.aggregate.completeness import EXIT_INCOMPLETE
from pytest_trajaudit.discover.jobs import find_jobs

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


class Node:
    """A WorkerController's queue side: process_from_remote turns each event into a queue entry through
    ``node.putevent`` (xdist's notify_inproc)."""

    def __init__(self) -> None:
        self.queue: list[tuple[str, dict]] = []
        self.putevent = self.queue.append

    def process_from_remote(self, eventcall: tuple[str, dict]) -> None:
        name, kwargs = eventcall
        if name == "boom":
            raise RuntimeError("boom")
        self.putevent((name, {"node": "n", **kwargs}))


def _batched_sent() -> list[tuple[str, dict]]:
    it = Interactor()
    xdist_batch.WorkerBatcher(it, _same_job)
    for i, n in zip(range(5), [1, 2, 3, 4, xdist_remote.Marker.SHUTDOWN], strict=True):
        _item(it, i, n)
    it.sendevent("workerfinished", workeroutput={})
    return it.sent


def test_a_batch_reaches_the_controller_queue_as_one_entry_in_order() -> None:
    sent = _batched_sent()
    alone = Node()
    for name, kwargs in sent:
        xdist_batch.controller_unbatch(alone.process_from_remote)((name, kwargs))  # no node: entry per event
    gathered = Node()
    process = xdist_batch.controller_unbatch(gathered.process_from_remote, gathered)
    for name, kwargs in sent:
        process((name, kwargs))
    assert [n for n, _ in gathered.queue] == [xdist_batch.INPROC, xdist_batch.INPROC, "workerfinished"]
    assert len(alone.queue) == 31 and alone.queue[-1][0] == "workerfinished"
    flat = [e for n, kw in gathered.queue[:2] for e in kw["events"]] + gathered.queue[2:]
    assert flat == alone.queue  # the same entries, in the same order
    assert gathered.putevent == gathered.queue.append  # the node's own putevent is back


def test_the_node_gets_its_putevent_back_when_an_event_fails() -> None:
    node = Node()
    process = xdist_batch.controller_unbatch(node.process_from_remote, node)
    blob = marshal.dumps([("logstart", {"nodeid": "a"}), ("boom", {})])
    with pytest.raises(RuntimeError):
        process((xdist_batch.EVENT, {"events": blob}))
    assert node.putevent == node.queue.append and node.queue == []


SAMPLE = (
    "import pytest, warnings\n"
    "def test_pass(record_property):\n"
    "    record_property('k', {'a': [1, 2]})\n"
    "def test_fail():\n"
    "    assert 1 == 2\n"
    "def test_skip():\n"
    "    pytest.skip('why')\n"
    "@pytest.mark.xfail(reason='known')\n"
    "def test_xfail():\n"
    "    assert 0\n"
    "def test_out():\n"
    "    print('hello')\n"
    "    warnings.warn(UserWarning('w'))\n")


def _controller(config: pytest.Config, queue: list, debug: bool = False):
    """xdist's own WorkerController, with only what its process_from_remote uses set (no gateway)."""
    from xdist.remote import Producer
    from xdist.workermanage import WorkerController

    node = WorkerController.__new__(WorkerController)
    node.config, node.putevent, node._down = config, queue.append, False
    node.log = Producer("workerctl-gw0", enabled="pytestdebug.log" if debug else config.option.debug)  # as xdist
    node.gateway = types.SimpleNamespace(id="gw0")  # its repr, in xdist's log line
    return node


def _entry(config: pytest.Config, entry: tuple[str, dict]) -> tuple:
    """A queue entry, comparable: a report by its class and what pytest serializes of it (a traceback repr has
    no equality of its own), plus its item_index if xdist set one; a warning by what it says and where."""
    name, kwargs = entry

    def comparable(k: str, v: Any) -> object:
        if k == "warning_message":
            return type(v.message).__name__, str(v.message), v.category, v.filename, v.lineno
        if k != "rep":
            return v
        data = config.hook.pytest_report_to_serializable(config=config, report=v)
        return type(v).__name__, data, getattr(v, "item_index", None)

    return name, sorted((k, comparable(k, v)) for k, v in kwargs.items())


def test_the_fast_path_queues_what_xdist_queues(pytester: pytest.Pytester) -> None:
    """A batch's per-item events become exactly the queue entries xdist's own process_from_remote makes of them
    (real reports: passed with a property, a failure's traceback, skip, xfail, captured output), warnings and
    anything else still go through xdist; with xdist's debug log on, or a WorkerController that handles events
    its own way, nothing takes the fast path."""
    from xdist.remote import serialize_warning_message
    from xdist.workermanage import WorkerController

    from pytest_trajaudit.adapter import xdist as plugin_xdist

    pytester.makepyfile(test_sample=SAMPLE)
    rec = pytester.inline_run("-p", "no:cacheprovider")
    config = pytester.parseconfigure()
    events: list[tuple[str, dict]] = []
    for i, rep in enumerate(rec.getreports("pytest_runtest_logreport")):
        data = config.hook.pytest_report_to_serializable(config=config, report=rep)
        data.update(item_index=i, worker_id="gw0", testrun_uid="u")
        events += [("logstart", {"nodeid": rep.nodeid, "location": rep.location}), ("testreport", {"data": data}),
                   ("logfinish", {"nodeid": rep.nodeid, "location": rep.location}),
                   ("runtest_protocol_complete", {"item_index": i, "duration": 0.5})]
    with pytest.warns(UserWarning) as caught:
        import warnings

        warnings.warn(UserWarning("w"))
    events.append(("warning_recorded", {"warning_message_data": serialize_warning_message(caught[0]),
                                        "when": "runtest", "nodeid": "x", "location": None}))
    blob = marshal.dumps(events)

    queue: list = []
    node = _controller(config, queue)
    assert plugin_xdist.xdist_own_queueing(node)
    for event in marshal.loads(blob):
        node.process_from_remote(tuple(event))
    xdist_entries = [_entry(config, e) for e in queue]
    queue.clear()
    process = xdist_batch.controller_unbatch(node.process_from_remote, node,
                                             config.hook.pytest_report_from_serializable)
    process((xdist_batch.EVENT, {"events": blob}))
    assert [n for n, _ in queue] == [xdist_batch.INPROC] and node.putevent == queue.append
    fast = [_entry(config, e) for e in queue[0][1]["events"]]
    assert fast == xdist_entries
    assert sum(n == "testreport" for n, _ in fast) >= 5 and fast[-1][0] == "warning_recorded"
    assert any(n == "testreport" and dict(kw)["rep"][1]["outcome"] == "failed"
               and isinstance(dict(kw)["rep"][1]["longrepr"], dict) for n, kw in fast)  # a traceback repr

    assert not plugin_xdist.xdist_own_queueing(_controller(config, [], debug=True))

    class Own(WorkerController):
        def process_from_remote(self, eventcall):  # type: ignore[override]
            return super().process_from_remote(eventcall)

    mine = Own.__new__(Own)
    mine.log = _controller(config, []).log
    assert not plugin_xdist.xdist_own_queueing(mine)


def test_an_event_the_fast_path_cannot_convert_goes_to_xdist() -> None:
    """A report the hook cannot rebuild (or declines), an item_index beside the data (xdist pops it), an unknown
    event: each is handed to process_from_remote as it came, in its place."""
    node = Node()
    calls: list = []

    def from_serializable(config: object, data: dict) -> object:
        calls.append(data)
        if data.get("bad"):
            raise ValueError("no")
        return None if data.get("none") else ("rep", data["n"])

    node.config = object()
    process = xdist_batch.controller_unbatch(node.process_from_remote, node, from_serializable)
    events = [("logstart", {"nodeid": "a"}), ("testreport", {"data": {"n": 1}}), ("testreport", {"data": {"bad": 1}}),
              ("testreport", {"data": {"none": 1}}), ("testreport", {"data": {"n": 2}, "item_index": 3}),
              ("other", {"x": 1}), ("runtest_protocol_complete", {"item_index": 0, "duration": 1.0})]
    process((xdist_batch.EVENT, {"events": marshal.dumps(events)}))
    [(name, kw)] = node.queue
    assert name == xdist_batch.INPROC
    assert kw["events"] == [
        ("logstart", {"node": node, "nodeid": "a"}), ("testreport", {"node": node, "rep": ("rep", 1)}),
        ("testreport", {"node": "n", "data": {"bad": 1}}), ("testreport", {"node": "n", "data": {"none": 1}}),
        ("testreport", {"node": "n", "data": {"n": 2}, "item_index": 3}), ("other", {"node": "n", "x": 1}),
        ("runtest_protocol_complete", {"node": node, "item_index": 0, "duration": 1.0})]
    assert len(calls) == 3


class Session:
    """What xdist's DSession offers the dispatcher: worker_* handlers, sched.tests_finished, shouldstop,
    triggershutdown (and loop_once, the loop that looks the handlers up)."""

    def __init__(self, finish_after: int, stop_at: str | None = None) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.shutdowns = 0
        self.finish_after, self.stop_at = finish_after, stop_at
        self.sched = self

    @property
    def tests_finished(self) -> bool:
        return len(self.calls) >= self.finish_after

    def __getattr__(self, name: str):
        if not name.startswith("worker_"):
            raise AttributeError(name)

        def handler(**kwargs: object) -> None:
            self.calls.append((name[len("worker_"):], kwargs))
            if name[len("worker_"):] == self.stop_at:
                self.shouldstop = "stop"

        return handler

    def loop_once(self) -> None:  # pragma: no cover - only looked up
        raise AssertionError

    def triggershutdown(self) -> None:
        self.shutdowns += 1


def test_the_dispatcher_hands_on_each_entry_and_checks_after_each_as_xdist_does() -> None:
    events = [("logstart", {"nodeid": "a"}), ("testreport", {"rep": 1}), ("runtest_protocol_complete", {"i": 0})]
    ds = Session(finish_after=99)
    xdist_batch.dispatcher(ds)(events)
    assert ds.calls == events and ds.shutdowns == 0
    ds = Session(finish_after=2)  # all work done after the second entry: shut down after it (and after the third)
    xdist_batch.dispatcher(ds)(events)
    assert ds.calls == events and ds.shutdowns == 2
    ds = Session(finish_after=99, stop_at="testreport")  # -x: a failure asks to stop
    xdist_batch.dispatcher(ds)(events)
    assert ds.shutdowns == 2


def test_a_session_without_the_known_loop_gets_no_dispatcher() -> None:
    assert xdist_batch.dispatcher(object()) is None


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
    "    node.process_from_remote = count\n"
    "    ds = node.config.pluginmanager.get_plugin('dsession')\n"
    "    handle = getattr(ds, 'worker_trajaudit_inproc', None)\n"
    "    if handle is not None and not hasattr(handle, 'probed'):\n"
    "        def dispatch(events):\n"
    "            with open('events.txt', 'a') as f:\n"
    "                f.write('inproc\\n')\n"
    "            handle(events)\n"
    "        dispatch.probed = True\n"
    "        ds.worker_trajaudit_inproc = dispatch\n"
    "def pytest_sessionfinish(session):\n"
    "    tr = session.config.pluginmanager.get_plugin('terminalreporter')\n"
    "    who = getattr(session.config, 'workerinput', {}).get('workerid', 'controller')\n"
    "    with open('reporters.txt', 'a') as f:\n"
    "        f.write(who + ' ' + type(tr).__name__ + '\\n')\n")


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
    (pytester.path / "reporters.txt").unlink(missing_ok=True)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit=runs",
                                      "--trajaudit-tasks=tasks", "-rsxf", *args, timeout=300)
    lines = sorted(ln for ln in r.outlines if ln.startswith(("SKIPPED", "XFAIL", "FAILED")))
    seen = events.read_text().split() if events.exists() else []
    return r.ret, r.parseoutcomes(), lines + [f"#events {len(seen) - seen.count('inproc')} batches "
                                              f"{seen.count(xdist_batch.EVENT)} inproc {seen.count('inproc')}"]


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
    events, batches, inproc = (int(x) for x in plines[-1].split()[1::2])
    items = sum(counts.values())
    assert 0 < batches < items  # batched: fewer messages than items, let alone their ~6 events each
    assert events < items
    assert inproc == batches  # each batch is one entry of the controller's queue


def test_batching_can_be_turned_off(pytester: pytest.Pytester, runs: Path) -> None:
    pytest.importorskip("xdist")
    pytester.syspathinsert()
    ret, counts, lines = _outcomes(pytester, "-n", "2", "-p", "probe", "-p", "no:trajaudit-xdist-batch")
    batched = _outcomes(pytester, "-n", "2", "-p", "probe")
    assert (ret, counts, lines[:-1]) == batched[:2] + (batched[2][:-1],)
    events, batches, inproc = (int(x) for x in lines[-1].split()[1::2])
    assert batches == 0 == inproc and events > 5 * sum(counts.values())  # xdist's own: every event alone


def _reporters(pytester: pytest.Pytester) -> list[str]:
    return sorted((pytester.path / "reporters.txt").read_text().splitlines())


def test_a_worker_reporter_whose_output_nobody_sees_renders_nothing(pytester: pytest.Pytester, runs: Path) -> None:
    """A worker's fd 1 is /dev/null: its terminal reporter keeps its place and its other hooks (--setup-show
    writes through it) but not the per-item ones; the controller's output is the same as with the plain one."""
    pytest.importorskip("xdist")
    pytester.syspathinsert()
    quiet = _outcomes(pytester, "-n", "2", "-p", "probe", "--setup-show")
    assert _reporters(pytester) == ["controller TerminalReporter", "gw0 QuietWorkerTerminalReporter",
                                    "gw1 QuietWorkerTerminalReporter"]
    plain = _outcomes(pytester, "-n", "2", "-p", "probe", "--setup-show", "-p", "no:trajaudit-quiet-worker-terminal")
    assert _reporters(pytester) == ["controller TerminalReporter", "gw0 TerminalReporter", "gw1 TerminalReporter"]
    assert quiet[:2] == plain[:2] and quiet[2][:-1] == plain[2][:-1]
    assert quiet[1] == _outcomes(pytester)[1]  # the serial run's counts, warnings included


def test_a_reporter_writing_anywhere_else_is_left_alone(tmp_path: Path) -> None:
    import os
    from types import SimpleNamespace

    from pytest_trajaudit.adapter.xdist import writes_to_devnull

    with open(os.devnull, "w") as null, open(tmp_path / "out.txt", "w") as real:
        assert writes_to_devnull(SimpleNamespace(_tw=SimpleNamespace(_file=null)))
        assert not writes_to_devnull(SimpleNamespace(_tw=SimpleNamespace(_file=real)))
    assert not writes_to_devnull(SimpleNamespace(_tw=SimpleNamespace(_file=real)))  # closed
    assert not writes_to_devnull(SimpleNamespace())


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


def test_x_stops_a_batched_xdist_run_early(pytester: pytest.Pytester, runs: Path) -> None:
    """-x under -n 2: the failure arrives inside a batch; the dispatcher makes xdist's stop check after it, so the
    run stops as xdist's own does (interrupted, one failure, not every item run)."""
    pytest.importorskip("xdist")

    def items(r: pytest.RunResult) -> int:
        return sum(r.parseoutcomes().get(k, 0) for k in ("passed", "failed", "skipped", "xfailed"))

    everything = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajaudit=runs", "-n", "2", timeout=300)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajaudit=runs", "-x", "-n", "2", timeout=300)
    assert r.ret == pytest.ExitCode.INTERRUPTED
    r.stdout.fnmatch_lines(["*stopping after 1 failures*"])
    assert r.parseoutcomes()["failed"] == 1 and items(r) < items(everything)


def test_the_no_reports_measurement_aid_runs_every_item_and_sends_none(pytester: pytest.Pytester,
                                                                       runs: Path) -> None:
    """benchmarks/xdist_noreports.py, which measure.py (c) uses for the most any report transport could give:
    the workers still run every item (counted on the workers), the controller receives no report."""
    pytest.importorskip("xdist")
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    pytester.makepyfile(counter=(  # (not PYTEST_XDIST_WORKER: this test may itself run in an xdist worker)
        "who = []\n"
        "def pytest_configure(config):\n"
        "    who.append('worker' if hasattr(config, 'workerinput') else 'controller')\n"
        "def pytest_runtest_logreport(report):\n"
        "    if report.when == 'call':\n"
        "        with open('calls.txt', 'a') as f:\n"
        "            f.write(who[0] + '\\n')\n"))
    pytester.syspathinsert()
    serial = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "counter", "--trajaudit=runs",
                                           "--trajaudit-tasks=tasks", timeout=300)
    items = sum(serial.parseoutcomes().get(k, 0) for k in ("passed", "failed", "skipped", "xfailed"))
    assert items > 0 and (pytester.path / "calls.txt").read_text().split() == ["controller"] * items
    (pytester.path / "calls.txt").unlink()
    os_env = {"PYTHONPATH": os.pathsep.join([str(bench), str(pytester.path)])}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in os_env.items():
            mp.setenv(k, v)
        r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "counter", "-p", "xdist_noreports",
                                          "-n", "2", "--trajaudit=runs", "--trajaudit-tasks=tasks", timeout=300)
    # collected, none reported: no finding reached the roll-up, so every job is INCOMPLETE (never an approval)
    assert r.ret == EXIT_INCOMPLETE and "no tests ran" in r.stdout.str()
    assert sorted((pytester.path / "calls.txt").read_text().split()) == ["worker"] * items


def test_the_process_probe_writes_one_line_per_process(pytester: pytest.Pytester, runs: Path) -> None:
    """benchmarks/procprobe.py, the source of the README's per-process figures for (c): under -n 2 one line from
    the controller and one from each worker, the workers' audit work adding up to every job the run audited
    once (the controller audits none); under -n 0 one line from the single process, with every job."""
    pytest.importorskip("xdist")
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    line = re.compile(r"(\w+): loop wall [\d.]+ s \| main thread on CPU [\d.]+ s, waiting for a core [\d.]+ s, "
                      r"blocked [\d.]+ s \| process CPU [\d.]+ s \| audit work [\d.]+ s \((\d+) jobs\)")
    out = pytester.path / "probe.log"

    def probe(*args: str) -> dict[str, int]:
        out.unlink(missing_ok=True)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PYTHONPATH", str(bench))
            mp.setenv("TRAJAUDIT_PROBE_OUT", str(out))
            r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "procprobe", "--trajaudit=runs",
                                              *args, timeout=300)
        assert r.ret == pytest.ExitCode.TESTS_FAILED  # the examples' cheating run
        found = [line.fullmatch(x) for x in out.read_text().splitlines()]
        assert all(found), out.read_text()
        return {m.group(1): int(m.group(2)) for m in found if m}

    jobs = len(find_jobs(runs))
    assert probe("-n", "0") == {"main": jobs}
    lines = probe("-n", "2")
    assert sorted(lines) == ["controller", "gw0", "gw1"] and lines["controller"] == 0
    assert lines["gw0"] + lines["gw1"] == jobs


# --- the controller's report builder -------------------------------------------------------------------------------

def _audit_tree(root: Path) -> None:
    """The examples (a FAIL, WARNs, N/As, passes) plus an unusable job (an ERROR at setup)."""
    import shutil

    shutil.copytree(EXAMPLES / "runs", root / "runs")
    shutil.copytree(EXAMPLES / "tasks", root / "tasks")
    shutil.copy(EXAMPLES / "review" / "waivers.yaml", root / "waivers.yaml")
    broken = root / "runs" / "benchflow" / "broken__Unusable01"
    broken.mkdir()
    (broken / "result.json").write_text("{not json")


def _built_and_hooked(config: pytest.Config, reports: list) -> list[tuple[Any, Any]]:
    """Each report as the builder and as the hook rebuild it from what a worker sends (every report whose dict
    the builder takes; None from the builder otherwise)."""
    import copy

    from pytest_trajaudit.adapter import xdist as plugin_xdist

    build = plugin_xdist.report_builder(config)
    assert build is not None
    out = []
    for rep in reports:
        data = config.hook.pytest_report_to_serializable(config=config, report=rep)
        data.update(item_index=0, worker_id="gw0", testrun_uid="u")
        mine = build(copy.deepcopy(data))
        hooked = config.hook.pytest_report_from_serializable(config=config, data=copy.deepcopy(data))
        out.append((mine, hooked))
    return out


def test_the_builder_makes_the_reports_the_hook_makes(pytester: pytest.Pytester) -> None:
    """Every report of an audit (PASS, FAIL with its text, WARN as xfail, N/A and WAIVED skips, an unusable job's
    ERROR) and of plain tests (a property, captured output sections, skip, xfail) comes out of the builder with
    the same class and attributes as out of pytest_report_from_serializable; a traceback repr is left to the hook."""
    _audit_tree(pytester.path)
    rec = pytester.inline_run("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-tasks=tasks",
                              "--trajaudit-waivers=waivers.yaml")
    audit = rec.getreports("pytest_runtest_logreport")
    pytester.makepyfile(test_sample=SAMPLE)
    plain = pytester.inline_run("-p", "no:cacheprovider", "test_sample.py").getreports("pytest_runtest_logreport")
    config = pytester.parseconfigure()
    statuses = {(getattr(r, "trajaudit", None) or {}).get("status") for r in audit}
    waived = [r for r in audit if ((getattr(r, "trajaudit", None) or {}).get("waiver") or {}).get("applied")]
    assert {"PASS", "FAIL", "WARN", "N/A", "ERROR"} <= statuses and waived
    assert any(r.failed and r.when == "setup" for r in audit)  # the unusable job
    assert any(hasattr(r, "wasxfail") for r in audit)
    assert any(r.sections for r in plain) and any(r.user_properties for r in plain)
    pairs = _built_and_hooked(config, audit + plain)
    for mine, hooked in pairs:
        if mine is None:
            assert not isinstance(hooked.longrepr, (str, tuple, type(None)))  # a traceback repr: the hook's
            continue
        assert type(mine) is type(hooked) is pytest.TestReport
        assert mine.__dict__ == hooked.__dict__
        assert list(mine.__dict__) == list(hooked.__dict__)  # the same attributes in the same order
    assert all(mine is not None for mine, _ in pairs[:len(audit)])  # every audit report takes the builder
    assert sum(mine is None for mine, _ in pairs) == 2  # test_fail's and test_xfail's tracebacks


def test_the_builder_leaves_what_it_does_not_know_to_the_hook(pytester: pytest.Pytester) -> None:
    """A text holding both words pytest's rebuild looks for, another report type, a dict longrepr: None; a plugin
    of its own answering the hook: no builder at all."""
    from pytest_trajaudit.adapter import xdist as plugin_xdist

    config = pytester.parseconfigure()
    build = plugin_xdist.report_builder(config)
    base = {"$report_type": "TestReport", "nodeid": "a.py::t", "location": ("a.py", 0, "t"), "keywords": {},
            "outcome": "passed", "longrepr": None, "when": "call"}
    assert isinstance(build(dict(base)), pytest.TestReport)
    assert build(dict(base, longrepr="reprcrash and reprtraceback")) is None
    assert build(dict(base, longrepr={"reprcrash": None})) is None
    assert build(dict(base, **{"$report_type": "CollectReport"})) is None
    assert build(dict(base, _report_type="SubTestReport")) is None
    a, b = build(dict(base)), build(dict(base, when="teardown"))
    assert a.nodeid == "a.py::t" and a._id is b._id  # one NodeId for an item's reports

    class Mine:
        @pytest.hookimpl(tryfirst=True)
        def pytest_report_from_serializable(self, config: pytest.Config, data: dict) -> None:
            return None

    config.pluginmanager.register(Mine(), "mine")
    assert plugin_xdist.report_builder(config) is None


def test_an_items_reports_share_one_keywords_dict_across_the_wire() -> None:
    """The worker makes an item's later reports refer to its first report's keywords (equal dicts), so marshal
    carries the dict once; another item, or other keywords, keep their own."""
    it = Interactor()
    b = xdist_batch.WorkerBatcher(it, _same_job)
    it.nextitem_index = 1
    for nodeid, when, kw in (("j::0", "setup", {"P1": 1}), ("j::0", "call", {"P1": 1}),
                             ("j::0", "teardown", {"P1": 1, "x": 1}), ("j::1", "setup", {"P1": 1})):
        it.sendevent("testreport", data={"nodeid": nodeid, "when": when, "keywords": dict(kw)})
    b.flush()
    [(name, kwargs)] = it.sent
    events = marshal.loads(kwargs["events"])
    kws = [e[1]["data"]["keywords"] for e in events]
    assert kws == [{"P1": 1}, {"P1": 1}, {"P1": 1, "x": 1}, {"P1": 1}]
    assert kws[0] is kws[1] and kws[2] is not kws[0] and kws[3] is not kws[0]


def _normal_junit(path: Path) -> list[str]:
    """The testcases of a JUnit file, times and host left out, in node id order (workers finish jobs in any
    order), and the suite's properties and counts."""
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    for el in suite.iter():
        for attr in ("time", "timestamp", "hostname"):
            el.attrib.pop(attr, None)
    cases = sorted(ET.tostring(c, encoding="unicode") for c in suite.findall("testcase"))
    props = suite.find("properties")
    return [str(sorted(suite.attrib.items())), ET.tostring(props, encoding="unicode") if props is not None else "",
            *cases]


def _normal_ctrf(path: Path) -> dict:
    """The CTRF document but for times, ids and what xdist itself adds (the worker's name and line)."""
    import json

    doc = json.loads(path.read_text())
    results = doc["results"]
    for key in ("start", "stop", "duration"):
        results["summary"].pop(key, None)
    results.pop("environment", None)
    doc.pop("generatedBy", None)
    doc.pop("timestamp", None)
    doc.pop("reportId", None)
    for t in results["tests"]:
        for key in ("start", "stop", "duration", "threadId"):
            t.pop(key, None)
        extra = t.get("extra")
        if isinstance(extra, dict):  # pytest-json-ctrf names the worker under xdist, whatever the transport
            extra.pop("worker", None)
            if not extra:
                del t["extra"]
        for key in ("trace", "message"):  # pytest's failure text under xdist starts with the worker's line
            if isinstance(t.get(key), str):
                t[key] = re.sub(r"^\[gw\d+\] [^\n]*(\n|$)", "", t[key]) or None
            if key in t and t[key] is None:
                del t[key]
    results["tests"].sort(key=lambda t: t["name"])
    return doc


def test_n2_writes_what_n0_writes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the batched transport and the report builder, -n 2 gives -n 0's JUnit XML and CTRF (but for times),
    summary.json and report.md, outcomes, terminal lines and verdicts: FAIL, WARN, N/A, WAIVED and an ERROR."""
    pytest.importorskip("xdist")
    pytest.importorskip("ctrf")
    import shutil

    _audit_tree(pytester.path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out = {}
    for name, extra in (("n0", ("-n", "0")), ("n2", ("-n", "2"))):
        shutil.rmtree(pytester.path / "out", ignore_errors=True)
        r = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit=runs", "--trajaudit-tasks=tasks",
            "--trajaudit-waivers=waivers.yaml", "-rsxfE", "--junitxml=out/junit.xml", "--ctrf=out/ctrf.json",
            "--trajaudit-report=out/report", *extra, timeout=300)  # one place: the terminal names it
        lines = sorted(ln for ln in r.outlines if ln.startswith(("SKIPPED", "XFAIL", "FAILED", "ERROR", "WARN")))
        start = next(i for i, ln in enumerate(r.outlines) if "trajaudit verdicts" in ln)
        end = next(i for i, ln in enumerate(r.outlines) if i > start and ln.startswith("="))
        verdicts = r.outlines[start:end]  # the section (pytest's own summaries list items in arrival order)
        out[name] = (r.ret, r.parseoutcomes(), lines, verdicts,
                     _normal_junit(pytester.path / "out" / "junit.xml"), _normal_ctrf(pytester.path / "out" / "ctrf.json"),
                     (pytester.path / "out" / "report" / "summary.json").read_bytes(),
                     (pytester.path / "out" / "report" / "report.md").read_bytes())
    n0, n2 = out["n0"], out["n2"]
    assert n0[1].get("failed") and n0[1].get("errors") and n0[1].get("xfailed") and n0[1].get("skipped")
    for i, what in enumerate(("exit", "outcomes", "lines", "verdicts", "junit", "ctrf", "summary.json",
                              "report.md")):
        assert n2[i] == n0[i], what


def test_last_failed_after_n2_is_what_it_is_after_n0(pytester: pytest.Pytester) -> None:
    """pytest's cache records the same failures from the reports the controller rebuilds, and --lf reruns them."""
    pytest.importorskip("xdist")
    import json
    import shutil

    _audit_tree(pytester.path)
    seen = {}
    for name in ("0", "2"):
        shutil.rmtree(pytester.path / ".pytest_cache", ignore_errors=True)
        args = ("-p", "no:randomly", "--trajaudit=runs", "--trajaudit-tasks=tasks")
        pytester.runpytest_subprocess(*args, "-n", name, timeout=300)
        lastfailed = json.loads((pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed").read_text())
        rerun = pytester.runpytest_subprocess(*args, "--lf", "-n", "0", timeout=300)
        seen[name] = (lastfailed, rerun.parseoutcomes())
    assert seen["2"] == seen["0"]
    assert seen["0"][0] and seen["0"][1].get("failed")
