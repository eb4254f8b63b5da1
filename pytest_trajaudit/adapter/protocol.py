"""The lean run protocol of audit items (``--trajaudit-protocol=lean``, the default; the seed's PYTEST-NOTES.md §6):
per-phase capture, logging and the PYTEST_CURRENT_TEST bookkeeping are most of pytest's per-item cost, and an
audit item never prints. pytest's private runner API goes through ``_compat``."""

from __future__ import annotations

from typing import Any

import pytest

from . import _compat
from .nodes import GroupItem, PrincipleItem


def release_job(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a job's last item: drop the job's audit (JobNode.release)."""
    if isinstance(item, PrincipleItem) and (nextitem is None or nextitem.parent is not item.parent):
        item.job.release()


LEAN_KEY = pytest.StashKey[bool]()


def lean(config: pytest.Config) -> bool:
    """The run protocol is lean (``--trajaudit-protocol``, else ini ``trajaudit_protocol``); read once."""
    on = config.stash.get(LEAN_KEY, None)
    if on is None:
        mode = config.getoption("trajaudit_protocol", None) or str(config.getini("trajaudit_protocol") or "lean")
        if mode.strip() not in ("lean", "full"):
            raise pytest.UsageError(f"trajaudit: trajaudit_protocol must be 'lean' or 'full', got {mode!r}")
        on = config.stash[LEAN_KEY] = mode.strip() == "lean"
    return on


def flat_keywords(item: pytest.Item) -> dict[str, Any]:
    """``item.keywords`` as one dict with NodeKeywords' iteration order and lookup (the nearest node wins), built
    in one walk up the chain. The parent's part is built once and kept on the parent (its keywords no longer
    change once items run: -k/-m selection is over)."""
    own = _compat.node_markers(item.keywords)
    parent = item.parent
    if own is None or parent is None:
        return _walk_keywords(item)
    above = parent.__dict__.get("_trajaudit_flat_keywords")
    if above is None:
        above = parent.__dict__["_trajaudit_flat_keywords"] = _walk_keywords(parent)
    flat = dict(own)
    for k, v in above.items():
        flat.setdefault(k, v)
    return flat


def _walk_keywords(start: Any) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    node: Any = start
    while node is not None:
        own = _compat.node_markers(node.keywords)
        if own is None:  # not pytest's NodeKeywords: take the mapping as it iterates
            return {k: start.keywords[k] for k in start.keywords}
        for k, v in own.items():
            flat.setdefault(k, v)
        node = node.parent
    return flat


_SKIP_MARKS = ("skip", "skipif", "xfail")


def _lean_setup(item: pytest.Item, session: pytest.Session) -> None:
    """What the setup hook chain does for an audit item: ``skip``/``skipif``/``xfail`` marks (a plugin loaded with
    ``-p`` may add them, e.g. to waive a principle) are evaluated as ``_pytest.skipping`` does, then the item is
    set up. An item
    without such a mark records "no xfail" at once (the makereport wrapper of ``_pytest.skipping`` looks it up
    for every phase)."""
    skipping = _compat.skipping()
    keywords = item.keywords
    if any(m in keywords for m in _SKIP_MARKS):
        skipped = skipping.evaluate_skip_marks(item)
        if skipped:
            raise _compat.skip_at_item(skipped.reason)
        item.stash[skipping.xfailed_key] = xfailed = skipping.evaluate_xfail_marks(item)
        if xfailed and not item.config.option.runxfail and not xfailed.run:
            raise pytest.xfail.Exception("[NOTRUN] " + xfailed.reason, pytrace=False)
    # an item without such a mark stores nothing: the makereport wrapper of ``_pytest.skipping`` reads the key
    # with ``stash.get(xfailed_key, None)``, the same "no xfail" without an entry in every item's stash
    _compat.setup_state(session).setup(item)


def run(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Run an audit item the way ``_pytest.runner.runtestprotocol`` does, minus the ``pytest_runtest_setup/call/
    teardown`` hook chains (capture, logging, skipping, PYTEST_CURRENT_TEST): the item is set up through the
    session's SetupState, run, torn down, and every phase still goes through ``pytest_runtest_makereport`` and
    ``pytest_runtest_logreport`` (terminal, JUnit, CTRF, xdist's report transport, -x/--maxfail) and, on an
    error, ``pytest_exception_interact`` (--pdb). Hook wrappers around this hook (warnings capture, CTRF,
    faulthandler) still wrap it. ``--trajaudit-protocol=full`` uses pytest's own protocol instead."""
    if not isinstance(item, PrincipleItem | GroupItem) or not lean(item.config):
        return None
    runner = _compat.runner()
    check_interactive_exception, show_test_item = runner.check_interactive_exception, runner.show_test_item

    ihook = item.ihook
    config = item.config
    session = item.session
    reraise = runner.get_reraise_exceptions(config)

    def phase(when: Any, func: Any) -> pytest.TestReport:
        call = pytest.CallInfo.from_call(func, when=when, reraise=reraise)
        rep = ihook.pytest_runtest_makereport(item=item, call=call)
        ihook.pytest_runtest_logreport(report=rep)
        if check_interactive_exception(call, rep):
            ihook.pytest_exception_interact(node=item, call=call, report=rep)
        return rep

    def teardown() -> None:
        nxt = None if session.shouldfail or session.shouldstop else nextitem
        try:
            _compat.setup_state(session).teardown_exact(nxt)
        finally:
            release_job(item, nxt)

    keywords = item.keywords
    if type(keywords) is not dict:
        # every report copies the keywords (TestReport.from_item_and_call), and NodeKeywords walks the whole
        # parent chain on each iteration: flatten them once for the item's run (selection by -k/-m is over by now)
        item.keywords = flat_keywords(item)
    try:
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        if phase("setup", lambda: _lean_setup(item, session)).passed:
            setup_only = config.getoption("setuponly", False)
            if config.getoption("setupshow", False):
                show_test_item(item, add_space=not setup_only)
            if not setup_only:
                phase("call", item.runtest)
        phase("teardown", teardown)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        _compat.forget_tmp_path_result(item)
    finally:
        # the flat copy served the item's run; the item keeps its own NodeKeywords (the same keys and lookups)
        # rather than a second mapping per item for the rest of the session
        item.keywords = keywords
    return True
