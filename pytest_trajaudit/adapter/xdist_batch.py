"""Batch an xdist worker's per-item events by job, to cut the controller's cost under ``-n``.

xdist sends every event of every item as its own execnet message: ``logstart``, three ``testreport`` (setup, call,
teardown), ``logfinish``, ``runtest_protocol_complete`` and any ``warning_recorded``, six or seven messages for an
item that takes a fraction of a millisecond. Each costs a pure-Python serialization on the worker, a pipe write,
a read and a pure-Python deserialization in the controller's receiver thread, which shares the cores with the
workers. Here a worker keeps the events of one job's items and sends them as one message (``marshal``: C on both
ends, tuples kept) when the job's last item is done, before it would wait for work, before any other event, and
every :data:`LIMIT` events. The controller unpacks the message and hands each event to xdist in order, exactly as
if it had arrived alone: every hook on the controller (terminal, JUnit, CTRF, ``-x``/``--maxfail``, the
scheduler) sees the same events, a job later at most.

Both ends must agree: the controller offers batching in the worker's ``workerinput`` (the ``marshal`` format
version), and a worker batches only when it is offered the version it writes, so a worker without this module (an
older install behind ``--tx``) or with another format simply sends events one by one.

No pytest here (adapter/xdist.py wires it in). The worker is our own process: what it sends is as trusted as what
xdist itself sends, the audited files never reach ``marshal`` other than as strings inside reports."""

from __future__ import annotations

import marshal
import threading
from collections.abc import Callable
from typing import Any

OFFER = "trajaudit_batch"  # key in workerinput
EVENT = "trajaudit_events"  # the batch's event name
INPROC = "trajaudit_inproc"  # a batch's gathered entries on the controller's queue
LIMIT = 2048  # events per batch at most (a job of a few hundred items flushes every ~300 items)
PER_ITEM = frozenset({"logstart", "logfinish", "testreport", "warning_recorded", "runtest_protocol_complete"})


def offer() -> int:
    return marshal.version


def accepted(workerinput: dict[str, Any]) -> bool:
    return workerinput.get(OFFER) == marshal.version


class WorkerBatcher:
    """Wraps an xdist ``WorkerInteractor``: its ``sendevent`` and its queue's ``get``.

    ``same_job(done, next)`` says whether item index ``next`` continues the job of item index ``done``; until it
    does not, a finished item's events wait. The lock makes ``sendevent`` safe from execnet's receiver thread
    (xdist's ``steal`` answers from there)."""

    def __init__(self, interactor: Any, same_job: Callable[[Any, Any], bool], limit: int = LIMIT) -> None:
        self.interactor = interactor
        self.send_one: Callable[..., None] = interactor.sendevent
        self.same_job = same_job
        self.limit = limit
        self.buf: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.batches = 0
        self.keywords: tuple[Any, Any] = (None, None)  # (node id, keywords) of the last report
        interactor.sendevent = self.sendevent
        queue = interactor.torun
        self._get = queue.get
        queue.get = self.get

    def sendevent(self, name: str, **kwargs: Any) -> None:
        with self.lock:
            if name in PER_ITEM:
                if name == "testreport":
                    self._share_keywords(kwargs.get("data"))
                self.buf.append((name, kwargs))
                if len(self.buf) < self.limit and (
                        name != "runtest_protocol_complete"
                        or self.same_job(kwargs.get("item_index"), self.interactor.nextitem_index)):
                    return
                self._flush()
                return
            self._flush()
            self.send_one(name, **kwargs)

    def _share_keywords(self, data: Any) -> None:
        """An item's reports (setup, call, teardown) carry equal ``keywords`` dicts, one copy each: the later ones
        refer to the first, which ``marshal`` then writes once and the controller reads once (its reports of the
        item share that dict, as they share the item's location tuple and node id string)."""
        if type(data) is not dict or type(data.get("keywords")) is not dict:
            return
        nodeid, keywords = self.keywords
        if data.get("nodeid") == nodeid and data["keywords"] == keywords:
            data["keywords"] = keywords
        else:
            self.keywords = (data.get("nodeid"), data["keywords"])

    def get(self) -> Any:
        """The worker's next item index; sends what waits first when it would have to wait for one (the
        controller may be waiting for those very events before it hands out more work)."""
        with self.interactor.torun.lock() as items:
            waiting = not items
        if waiting:
            self.flush()
        return self._get()

    def flush(self) -> None:
        with self.lock:
            self._flush()

    def _flush(self) -> None:
        if not self.buf:
            return
        events, self.buf = self.buf, []
        try:
            blob = marshal.dumps(events)
        except ValueError:  # something execnet can send and marshal cannot: send them as xdist would
            for name, kwargs in events:
                self.send_one(name, **kwargs)
            return
        self.batches += 1
        self.send_one(EVENT, events=blob)


AS_SENT = frozenset({"logstart", "logfinish", "runtest_protocol_complete"})  # queued with the node added, as sent


def controller_unbatch(process: Callable[[Any], None], node: Any = None,
                       from_serializable: Callable[..., Any] | None = None,
                       build: Callable[[Any], Any] | None = None) -> Callable[[Any], None]:
    """Wrap a ``WorkerController.process_from_remote``: a batch is handed on event by event.

    xdist's ``process_from_remote`` (execnet's receiver thread) turns each event into what the controller's main
    loop handles (a report rebuilt, a warning unpacked) and puts it on the session's queue, one queue entry and one
    main-loop turn per event. With ``node`` (the ``WorkerController`` of ``process``, whose session runs
    :func:`dispatcher`), the entries of one batch are gathered and queued as one (:data:`INPROC`), which the main
    loop hands on in order: the same calls, one queue hand-over per batch instead of per event.

    ``from_serializable`` (the config's ``pytest_report_from_serializable`` hook; given only for xdist's own
    ``WorkerController`` with its debug log off) makes the entries of a batch's per-item events here, as xdist's
    ``process_from_remote`` and ``notify_inproc`` make them, without formatting each entry into a log line nobody
    writes: :data:`AS_SENT` events are queued with ``node`` added, a ``testreport`` with its report rebuilt by the
    hook, which costs the receiver threads less CPU than xdist's own path. Any other event, or one
    that fails here, goes to ``process``. ``build`` (adapter/xdist.py's ``report_builder``) rebuilds the reports it
    knows as the hook would, without it; the hook rebuilds those it answers None for."""

    def process_from_remote(eventcall: Any) -> None:
        if type(eventcall) is tuple and len(eventcall) == 2 and eventcall[0] == EVENT:
            try:
                events = marshal.loads(eventcall[1]["events"])
            except (KeyError, TypeError, ValueError, EOFError) as exc:
                process(("internal_error", {"formatted_error": f"trajaudit: unreadable event batch: {exc}"}))
                return
            if node is None:
                for event in events:
                    process(tuple(event))
                return
            # process_from_remote queues through node.putevent; only this node's receiver thread calls it
            gathered: list[Any] = []
            put, node.putevent = node.putevent, gathered.append
            try:
                for event in events:
                    if from_serializable is None or not _queue(event, node, from_serializable, gathered, build):
                        process(tuple(event))
            finally:
                node.putevent = put
            put((INPROC, {"events": gathered}))
            return
        process(eventcall)

    return process_from_remote


def _queue(event: Any, node: Any, from_serializable: Callable[..., Any], gathered: list[Any],
           build: Callable[[Any], Any] | None = None) -> bool:
    """Queue ``event``'s entry as xdist would (True), or leave it to xdist (False: another kind of event, or one
    that does not convert: xdist then reports the failure its own way)."""
    try:
        name, kwargs = event
        if name in AS_SENT:
            gathered.append((name, {"node": node, **kwargs}))
            return True
        if name != "testreport" or "item_index" in kwargs:
            return False
        data = kwargs["data"]
        rep = build(data) if build is not None else None
        if rep is None:
            rep = from_serializable(config=node.config, data=data)
    except Exception:
        return False
    if rep is None:
        return False
    gathered.append((name, {"node": node, "rep": rep}))
    return True


def dispatcher(dsession: Any) -> Callable[..., None] | None:
    """The controller's handler of :data:`INPROC` entries (set as ``dsession.worker_<INPROC>``, where xdist's main
    loop looks its handlers up): each gathered entry goes to its ``worker_<event>`` handler as if it had come off
    the queue alone, followed by the checks xdist's loop makes after each (all work done; ``-x``/``--maxfail``
    asked to stop). None when this xdist's session lacks what that needs: then batches are handed on per event."""
    if not all(callable(getattr(dsession, a, None)) for a in ("triggershutdown", "loop_once")):
        return None

    handlers: dict[str, Callable[..., None]] = {}  # event name → its bound handler, looked up once

    def handle(events: list[tuple[str, dict[str, Any]]]) -> None:
        for callname, kwargs in events:
            handler = handlers.get(callname)
            if handler is None:
                handler = handlers[callname] = getattr(dsession, "worker_" + callname)
            handler(**kwargs)
            if dsession.sched.tests_finished or getattr(dsession, "shouldstop", False):
                dsession.triggershutdown()

    return handle
