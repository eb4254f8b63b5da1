"""xdist glue: hooks registered only when pytest-xdist is present (:class:`XdistHooks`, and on the controller
:class:`XdistBatchHooks`; the "optionally using hooks from 3rd party plugins" pattern of pytest-randomly), the
audit scope scheduler, the JSON transport of audit items' reports, the batching of a worker's item events
(``xdist_batch.py``) and the quiet terminal of a worker nobody watches. xdist's private API goes through
``_compat``."""

from __future__ import annotations

import functools
import os
import stat
from typing import Any

import pytest

from . import _compat, rollup
from .nodes import STATE_KEY, PrincipleItem

# Reports cross from xdist workers as report.__dict__ through execnet's pure-Python serializer, which walks every
# nested value (keywords, user properties, an item's record with its evidence, data and events) on the worker and
# again on the controller: ship an audit item's report as one JSON string instead (C json on both ends:
# serializing was an eighth of a worker's time and the controller's largest cost). The controller restores it
# before pytest rebuilds the report, with the tuples JSON turned into lists made tuples again. A report that is
# not JSON-able crosses as pytest's own dict.
_PACKED = "trajaudit-report-json"
_AUDIT_REPORTS: Any = None  # weakref.WeakSet of the reports made for audit items in this process


def audit_reports() -> Any:
    global _AUDIT_REPORTS
    if _AUDIT_REPORTS is None:
        import weakref

        _AUDIT_REPORTS = weakref.WeakSet()
    return _AUDIT_REPORTS


def pack(report: Any, data: Any) -> Any:
    """``pytest_report_to_serializable``'s answer for ``report``: an audit item's report from a worker sending
    reports one by one as one JSON string, anything else as ``data`` (pytest's own dict)."""
    if isinstance(data, dict) and not BATCHED and _AUDIT_REPORTS is not None and report in _AUDIT_REPORTS:
        import json

        try:
            return {"$report_type": data.get("$report_type"), _PACKED: json.dumps(data, separators=(",", ":"))}
        except (TypeError, ValueError):
            pass
    return data


_PLAIN_TYPES = frozenset({str, int, float, bool, type(None), tuple, list, dict})


def plain_report_json(report: Any) -> dict[str, Any] | None:
    """What pytest's ``pytest_report_to_serializable`` gives for a ``TestReport`` whose attributes all have plain
    types (an audit item's always do: its ``longrepr`` is None, a ``(path, line, reason)`` tuple or, for a FAIL,
    its text), without pytest's ``isinstance(value, os.PathLike)`` on every attribute: an ABC check, about eleven
    per report, 0.2 s of CPU per xdist worker on 500 × 1 MiB. None for any other report (a Python
    error's traceback repr, another report class): pytest serializes it."""
    if type(report) is not pytest.TestReport:
        return None
    data = report.__dict__.copy()
    id_field = _compat.report_id_field()
    if id_field in data:  # pytest ≥ 9.1 keeps the node id as an object and sends its string, as "nodeid"
        data["nodeid"] = str(data.pop(id_field))
    if isinstance(data.get("longrepr"), str):  # adapter/terminal.LineRepr: its text, as pytest sends it
        data["longrepr"] = str(data["longrepr"])
    if not all(type(v) in _PLAIN_TYPES for v in data.values()):
        return None
    if "result" in data:
        data["result"] = None
    data["$report_type"] = "TestReport"
    return data


def _tuples(data: dict[str, Any]) -> dict[str, Any]:
    """Undo JSON's tuple → list on the fields pytest's reports hold as tuples (execnet keeps tuples)."""
    if isinstance(data.get("location"), list):
        data["location"] = tuple(data["location"])
    for key in ("sections", "user_properties"):
        if isinstance(data.get(key), list):
            data[key] = [tuple(x) if isinstance(x, list) else x for x in data[key]]
    if isinstance(data.get("longrepr"), list):  # a skip's (path, line, reason)
        data["longrepr"] = tuple(data["longrepr"])
    return data


def unpack(data: Any) -> None:
    """On the controller, before pytest rebuilds a report: restore a packed one's dict in place."""
    if isinstance(data, dict) and isinstance(data.get(_PACKED), str):
        import json

        packed = data.pop(_PACKED)
        data.update(_tuples(json.loads(packed)))


# The pytest_report_from_serializable implementations known to give a plain TestReport's dict to pytest's own
# rebuild: pytest's ("reports" rebuilds it; "subtests" takes only its own report type) and ours (unpack above).
REBUILDERS = frozenset({"reports", "subtests", "trajaudit"})


def report_builder(config: pytest.Config) -> Any:
    """On the controller: what ``pytest_report_from_serializable`` makes of an xdist ``testreport``'s dict, for the
    dicts an audit item's reports cross as (a ``TestReport`` whose ``longrepr`` is None, a skip's ``(path, line,
    reason)`` or a text), without the hook's dispatch, ``_report_kwargs_from_json`` and a node id parse per report:
    ``TestReport(**data)``, which is what pytest's ``TestReport._from_json`` returns for such a dict, with the
    reports of one item sharing one (frozen) ``NodeId``. The builder answers None for any other dict (a traceback
    repr, another report type, a JSON-packed report), which the hook then rebuilds; and there is no builder when
    a plugin beyond :data:`REBUILDERS` implements the hook, as it may answer otherwise."""
    impls = config.hook.pytest_report_from_serializable.get_hookimpls()
    if not {impl.plugin_name for impl in impls} <= REBUILDERS:
        return None
    test_report = pytest.TestReport
    parse = _compat.node_id_parse()
    ids: dict[str, Any] = {}  # node id → NodeId: the reports of one item arrive together

    def build(data: Any) -> Any:
        if type(data) is not dict or data.get("$report_type") != "TestReport" or "_report_type" in data \
                or _PACKED in data:
            return None
        longrepr = data.get("longrepr")
        if longrepr is not None and type(longrepr) not in (str, tuple):
            return None
        if longrepr and "reprcrash" in longrepr and "reprtraceback" in longrepr:
            return None  # what pytest's rebuild takes for a traceback repr (a text can hold both words)
        nodeid = data.get("nodeid")
        if parse is not None and type(nodeid) is str:
            node_id = ids.get(nodeid)
            if node_id is None:
                if len(ids) >= 4096:  # bounded: a cache across the items of a batch or two
                    ids.clear()
                node_id = ids[nodeid] = parse(nodeid)
            data["nodeid"] = node_id
        return test_report(**data)

    return build


class XdistHooks:
    """Registered only when pytest-xdist is present. A job's items share one node id prefix
    (``…/result.json::``), so loadscope keeps a job on one worker; make it the default under ``-n``."""

    def pytest_configure_node(self, node: Any) -> None:
        state = node.config.stash.get(STATE_KEY, None)
        path = getattr(state.store, "path", None) if state is not None else None
        if path is not None:
            node.workerinput["trajaudit_store"] = str(path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> dict[str, Any] | None:
        return plain_report_json(report)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """On the controller: a worker's collection manifest (completeness.py) joins the roll-up."""
        plugin = node.config.stash.get(rollup.ROLLUP_KEY, None)
        if plugin is not None:
            plugin.rollup.coverage.add(getattr(node, "workeroutput", {}).get("trajaudit_coverage"))

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any):
        explicit = any(a == "--dist" or a.startswith("--dist=") for a in config.invocation_params.args)
        if config.getoption("dist") == "load" and not explicit:
            return audit_scope_scheduling()(config, log)
        return None


class XdistBatchHooks:
    """On the controller: offer each worker to batch its item events by job, and unpack the batches
    (xdist_batch.py). Registered as ``trajaudit-xdist-batch``: ``-p no:trajaudit-xdist-batch`` sends every event
    alone, as xdist does."""

    def pytest_configure_node(self, node: Any) -> None:
        from . import xdist_batch

        node.workerinput[xdist_batch.OFFER] = xdist_batch.offer()
        dsession = node.config.pluginmanager.get_plugin(_compat.DSESSION)
        handler = "worker_" + xdist_batch.INPROC
        if dsession is not None and not hasattr(dsession, handler):
            dispatch = xdist_batch.dispatcher(dsession)
            if dispatch is not None:
                setattr(dsession, handler, dispatch)
        gather = dsession is not None and hasattr(dsession, handler) and hasattr(node, "putevent")
        fast = gather and xdist_own_queueing(node)
        node.process_from_remote = xdist_batch.controller_unbatch(
            node.process_from_remote, node if gather else None,
            node.config.hook.pytest_report_from_serializable if fast else None,
            report_builder(node.config) if fast else None)


def xdist_own_queueing(node: Any) -> bool:
    """``node`` queues events exactly as the ``xdist_batch`` fast path does: xdist's own ``WorkerController``
    (neither its event handling nor its queueing overridden), with its debug log (``--debug``) off."""
    WorkerController: Any = _compat.xdist_worker_controller()  # noqa: N806 - a class (its methods compared below)
    if WorkerController is None:  # pragma: no cover - this hook is xdist's
        return False
    cls: Any = type(node)
    return (issubclass(cls, WorkerController)
            and cls.process_from_remote is WorkerController.process_from_remote
            and cls.notify_inproc is WorkerController.notify_inproc
            and not getattr(getattr(node, "log", None), "enabled", True))  # xdist logs when it is truthy


class QuietWorkerTerminal:
    """On an xdist worker whose terminal output goes to ``/dev/null`` (a local or ssh worker: execnet keeps the
    real standard output for its pipe to the controller and points fd 1 at ``/dev/null``): the terminal reporter
    stops rendering each item (progress characters, stats, warning texts) that nobody sees; the controller renders
    every item from the reports it receives, so that rendering is CPU spent for nothing.
    The reporter stays registered under its name with its other hooks, so
    ``get_terminal_writer``, ``--setup-show`` and live logs still find it. Registered as
    ``trajaudit-quiet-worker-terminal``: ``-p no:trajaudit-quiet-worker-terminal`` leaves the reporter as it is."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        pm = session.config.pluginmanager
        tr = pm.get_plugin("terminalreporter")
        quiet = quiet_reporter_class()
        if tr is None or type(tr) is not quiet.__mro__[1] or not writes_to_devnull(tr):
            return  # another plugin's reporter, or one whose output someone may see: leave it alone
        pm.unregister(tr)
        tr.__class__ = quiet
        pm.register(tr, "terminalreporter")


def writes_to_devnull(tr: Any) -> bool:
    try:
        st = os.fstat(_compat.terminal_file(tr).fileno())
        null = os.stat(os.devnull)
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev


@functools.cache
def quiet_reporter_class() -> type:
    TerminalReporter = _compat.terminal_reporter_class()  # noqa: N806 - a class

    # pluggy registers only the routines among a plugin's ``pytest_*`` attributes: None removes a hook
    per_item = ("pytest_runtest_logstart", "pytest_runtest_logreport", "pytest_runtest_logfinish",
                "pytest_warning_recorded")
    return type("QuietWorkerTerminalReporter", (TerminalReporter,), dict.fromkeys(per_item))


def batch_worker_events(config: pytest.Config) -> None:
    """On an xdist worker offered batching (xdist_batch.py): send a job's item events as one message."""
    from . import xdist_batch

    if not xdist_batch.accepted(config.workerinput):  # type: ignore[attr-defined]
        return
    interactor = _compat.worker_interactor(config)
    if interactor is None or not hasattr(interactor.torun, "lock"):
        return

    def same_job(done: Any, nxt: Any) -> bool:
        items = interactor.session.items
        if not (isinstance(done, int) and isinstance(nxt, int) and 0 <= done < len(items) and 0 <= nxt < len(items)):
            return False
        return isinstance(items[done], PrincipleItem) and items[nxt].parent is items[done].parent

    global BATCHED
    BATCHED = True
    xdist_batch.WorkerBatcher(interactor, same_job)


BATCHED = False  # this xdist worker batches its events (marshal keeps a report's dict as it is: no JSON packing)


@functools.cache
def audit_scope_scheduling() -> type:
    """xdist's ``LoadScopeScheduling`` (a job's items share one scope, so one worker reads it once) with two changes
    for audits of many jobs:

    - linear bookkeeping: xdist 3.8 looks every item of an assigned scope up with ``list.index`` over the whole
      collection, and recounts every item ever assigned to a worker after each report (``_pending_of`` in
      ``_reschedule`` and ``tests_finished``): O(items²) on the controller, minutes at 100,000 items. Here a worker's
      collection is indexed once and its open items are counted as they are assigned and completed;
    - one job queued ahead: a worker is given its next scope when the open items fall to one scope's worth (xdist:
      to 2 items), so it never waits for the controller between two jobs (a worker needs the next item before it
      can finish the current one). At the end the workers differ by at most one job.

    Falls back to plain ``LoadScopeScheduling`` when xdist's internals differ from what this relies on."""
    LoadScopeScheduling = _compat.xdist_loadscope()  # noqa: N806 - a class

    if not all(hasattr(LoadScopeScheduling, a) for a in _compat.LOADSCOPE_INTERNALS):
        return LoadScopeScheduling

    class AuditScopeScheduling(LoadScopeScheduling):  # type: ignore[misc, valid-type]
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self._index: dict[Any, dict[str, int]] = {}  # node → {node id: index in its collection}
            self._open: dict[Any, int] = {}  # node → items assigned and not completed
            self._unit: dict[Any, int] = {}  # node → size of the last scope assigned to it

        def _assign_work_unit(self, node: Any) -> None:
            assert self.workqueue
            scope, work_unit = self.workqueue.popitem(last=False)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            index = self._index.get(node)
            if index is None:
                index = self._index[node] = {}
                for i, nodeid in enumerate(self.registered_collections[node]):
                    index.setdefault(nodeid, i)  # the first occurrence, like list.index
            todo = [index[nodeid] for nodeid, completed in work_unit.items() if not completed]
            self._open[node] = self._open.get(node, 0) + len(todo)
            self._unit[node] = len(todo)
            if todo:
                node.send_runtest_some(todo)
            if not self.workqueue:  # nothing left to hand out: a worker needs its next item, or the end, to finish
                node.shutdown()    # the current one (pytest-xdist #1327: a replacement given one item waited)

        def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
            nodeid = self.registered_collections[node][item_index]
            unit = self.assigned_work[node][self._split_scope(nodeid)]
            if not unit[nodeid]:
                unit[nodeid] = True
                self._open[node] = self._open.get(node, 0) - 1
            self._reschedule(node)

        def _pending_of(self, workload: Any) -> int:
            for node, assigned in self.assigned_work.items():
                if assigned is workload:
                    return self._open.get(node, 0)
            return super()._pending_of(workload)  # a workload already removed (remove_node)

        def _reschedule(self, node: Any) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._open.get(node, 0) > max(2, self._unit.get(node, 0)):
                return
            self._assign_work_unit(node)

        def remove_node(self, node: Any) -> Any:
            """xdist 3.8's puts a crashed worker's whole workload back, completed items and the item it crashed
            on included, so a replacement worker could be handed a unit with nothing left to run, or the crash
            again (pytest-xdist #1323, #1371). Here only the items still to run go back, without the crash
            item (xdist has already reported it failed), at the front of the queue."""
            self._index.pop(node, None)
            self._open.pop(node, None)
            self._unit.pop(node, None)
            workload = self.assigned_work.pop(node, {})
            todo = [(scope, nodeid) for scope, unit in workload.items() for nodeid, done in unit.items() if not done]
            if not todo:
                return None
            crashitem = todo[0][1]
            for scope, nodeid in reversed(todo[1:]):
                if scope not in self.workqueue:
                    self.workqueue[scope] = {}
                    self.workqueue.move_to_end(scope, last=False)
                self.workqueue[scope][nodeid] = False
            for other in list(self.assigned_work):
                self._reschedule(other)
            return crashitem

    return AuditScopeScheduling


def register(config: pytest.Config) -> None:
    """Wire the xdist hooks in (pytest_configure, only when pytest-xdist is present), and on a worker batch its
    events and quiet its terminal."""
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(), "trajaudit-xdist")
        if not hasattr(config, "workerinput"):
            config.pluginmanager.register(XdistBatchHooks(), "trajaudit-xdist-batch")  # -p no:… turns it off
    if hasattr(config, "workerinput"):
        batch_worker_events(config)
        config.pluginmanager.register(QuietWorkerTerminal(), "trajaudit-quiet-worker-terminal")  # -p no:… keeps it
