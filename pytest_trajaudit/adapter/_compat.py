"""Every private pytest / pytest-xdist API the adapter relies on, in one place.

Tested with pytest 9.2 and pytest-xdist 3.8 (:data:`TESTED`). ``tests/test_compat.py`` checks that each name below
still exists with the shape used here, so an upgrade that moves one fails loudly there rather than deep inside a
run. Modules pytest does not import at ``import pytest`` (``_pytest.skipping``, ``_pytest.junitxml``) and xdist
are imported on first use, keeping ``import pytest_trajaudit.plugin`` cheap.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

# a failure's crash location (adapter/terminal.py); pytest imports this module at ``import pytest`` already
from _pytest._code.code import ReprFileLocation as ReprFileLocation

TESTED = {"pytest": ("9.2",), "pytest-xdist": ("3.8",)}

# --- pytest ---------------------------------------------------------------------------------------------------


def skipping() -> Any:
    """``_pytest.skipping``: ``xfailed_key``, ``evaluate_skip_marks``, ``evaluate_xfail_marks`` (the lean protocol
    evaluates skip/xfail marks as pytest's own setup hook does)."""
    import _pytest.skipping

    return _pytest.skipping


def runner() -> Any:
    """``_pytest.runner``: ``check_interactive_exception``, ``get_reraise_exceptions``, ``show_test_item``."""
    import _pytest.runner

    return _pytest.runner


def setup_state(session: pytest.Session) -> Any:
    """The session's ``SetupState`` (``setup(item)``, ``teardown_exact(nextitem)``)."""
    return session._setupstate


def skip_at_item(reason: str) -> BaseException:
    """The exception ``pytest.skip(reason)`` raises, located at the item instead of the raising code."""
    return pytest.skip.Exception(reason, _use_item_location=True)


def node_markers(keywords: Any) -> dict[str, Any] | None:
    """A node's own keywords (``NodeKeywords._markers``), None when ``keywords`` is not pytest's NodeKeywords."""
    return getattr(keywords, "_markers", None)


def forget_tmp_path_result(item: pytest.Item) -> None:
    """Drop what ``_pytest.tmpdir``'s makereport wrapper records in every item's stash (the phases' outcomes, read
    by the ``tmp_path`` fixture's teardown, which deletes the entry itself): an audit item has no such fixture, so
    the entry would live until the session ends. An item whose stash holds nothing else gets an empty one."""
    from _pytest.tmpdir import tmppath_result_key

    stash = item.stash
    if tmppath_result_key in stash:
        del stash[tmppath_result_key]
        if not len(stash):  # the emptied one keeps its grown table; pytest's ``_store`` alias follows
            fresh = item.stash = pytest.Stash()
            if getattr(item, "_store", None) is stash:  # a slot of pytest's Node
                item._store = fresh


def junit_xml_key() -> Any:
    """The ``StashKey`` under which ``_pytest.junitxml`` keeps its ``LogXML`` (``add_global_property``,
    ``node_reporter(report)``)."""
    from _pytest.junitxml import xml_key

    return xml_key


@functools.cache
def terminal_reporter_class() -> type:
    """``_pytest.terminal.TerminalReporter`` (the class a quiet xdist worker's reporter derives from)."""
    from _pytest.terminal import TerminalReporter

    return TerminalReporter


def terminal_writer(tr: Any) -> Any:
    """A terminal reporter's ``TerminalWriter`` (``TerminalReporter._tw``), None if it has none."""
    return getattr(tr, "_tw", None)


def terminal_file(tr: Any) -> Any:
    """The file a terminal reporter writes to (``TerminalReporter._tw._file``)."""
    return tr._tw._file


# ``Node._repr_failure_py``: pytest renders setup errors through it rather than ``repr_failure``; nodes.py's
# items override it to keep an unusable job's error to one line.
NODE_OVERRIDES = ("_repr_failure_py",)


def node_relpath(session: pytest.Session, path: str) -> str:
    """What ``Item.location`` makes of a path: relative to the rootdir (``Session._node_location_to_relpath`` of
    ``_pytest.pathlib.absolutepath``)."""
    from _pytest.pathlib import absolutepath

    return session._node_location_to_relpath(absolutepath(path))


def junit_node(xml: Any, report: Any) -> Any:
    """The JUnit ``<testcase>`` reporter of ``report`` (``LogXML.node_reporter``), to append elements to."""
    return xml.node_reporter(report)


def report_id_field() -> str:
    """The ``TestReport.__dict__`` key pytest ≥ 9.1 keeps the node id under (sent as ``"nodeid"``)."""
    return "_id"


def node_id_parse() -> Any:
    """``_pytest.nodeid.NodeId.parse`` (pytest ≥ 9.1: a report keeps its node id as a frozen ``NodeId``), or None
    where pytest has none (reports then parse their string themselves)."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pragma: no cover - pytest < 9.1
        return None
    return NodeId.parse


def set_confcutdir(pm: pytest.PytestPluginManager, path: Path) -> None:
    pm._confcutdir = path


def confcutdir(pm: pytest.PytestPluginManager) -> Path | None:
    return getattr(pm, "_confcutdir", None)


# --- pytest-xdist ---------------------------------------------------------------------------------------------


def xdist_worker_controller() -> type | None:
    """``xdist.workermanage.WorkerController`` (``process_from_remote``, ``notify_inproc``, ``log``), or None
    without xdist."""
    try:
        from xdist.workermanage import WorkerController
    except ImportError:  # pragma: no cover - only asked from xdist's hooks
        return None
    return WorkerController


def xdist_loadscope() -> type:
    """``xdist.scheduler.LoadScopeScheduling``; :data:`LOADSCOPE_INTERNALS` are the members the audit scheduler
    overrides or calls."""
    from xdist.scheduler import LoadScopeScheduling

    return LoadScopeScheduling


LOADSCOPE_INTERNALS = ("_assign_work_unit", "_pending_of", "_reschedule", "mark_test_complete", "remove_node",
                       "_split_scope")  # besides its instances' workqueue, assigned_work, registered_collections

# The controller's DSession plugin (registered as "dsession"): its main loop calls ``worker_<event>`` handlers and
# ``loop_once``/``triggershutdown``; the worker's WorkerInteractor has ``sendevent``, ``torun`` (with ``lock()``),
# ``nextitem_index`` and ``session`` (xdist_batch.py).
DSESSION = "dsession"
INTERACTOR = "WorkerInteractor"
INTERACTOR_ATTRS = ("sendevent", "torun", "nextitem_index")


def worker_interactor(config: pytest.Config) -> Any:
    """The worker's ``WorkerInteractor`` plugin with the attributes batching uses, else None."""
    return next((p for p in config.pluginmanager.get_plugins() if type(p).__name__ == INTERACTOR
                 and all(hasattr(p, a) for a in INTERACTOR_ATTRS)), None)
