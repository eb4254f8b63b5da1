"""The private pytest / pytest-xdist API that adapter/_compat.py names still exists with the shape the adapter uses.

A pytest or xdist upgrade that moves one of them fails here, by name, instead of deep inside an audit run."""

from __future__ import annotations

import inspect

import pytest

from pytest_trajaudit.adapter import _compat


def test_the_tested_versions_are_listed_and_match_the_installed_ones() -> None:
    import xdist

    assert set(_compat.TESTED) == {"pytest", "pytest-xdist"}
    installed = {"pytest": pytest.__version__, "pytest-xdist": xdist.__version__}
    for dist, versions in _compat.TESTED.items():
        assert any(installed[dist].startswith(v + ".") or installed[dist] == v for v in versions), (
            f"{dist} {installed[dist]} is not among the versions adapter/_compat.py was tested with {versions}: "
            "check every private API listed there, then add the version")


def test_pytest_skipping_internals() -> None:
    skipping = _compat.skipping()
    assert isinstance(skipping.xfailed_key, pytest.StashKey)
    assert list(inspect.signature(skipping.evaluate_skip_marks).parameters) == ["item"]
    assert list(inspect.signature(skipping.evaluate_xfail_marks).parameters) == ["item"]


def test_pytest_runner_internals() -> None:
    runner = _compat.runner()
    assert list(inspect.signature(runner.check_interactive_exception).parameters) == ["call", "report"]
    assert list(inspect.signature(runner.get_reraise_exceptions).parameters) == ["config"]
    assert "item" in inspect.signature(runner.show_test_item).parameters
    assert "reraise" in inspect.signature(pytest.CallInfo.from_call).parameters


def test_pytest_session_node_and_report_internals(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    items, rec = pytester.inline_genitems()
    item = items[0]
    state = _compat.setup_state(item.session)
    assert callable(state.setup) and callable(state.teardown_exact)
    assert isinstance(_compat.node_markers(item.keywords), dict)
    assert _compat.node_markers({}) is None
    exc = _compat.skip_at_item("why")
    assert isinstance(exc, pytest.skip.Exception) and exc._use_item_location is True
    rep = pytest.TestReport.from_item_and_call(item, pytest.CallInfo.from_call(lambda: None, when="call"))
    assert _compat.report_id_field() in rep.__dict__ and str(rep.__dict__[_compat.report_id_field()]) == rep.nodeid
    assert _compat.node_relpath(item.session, str(item.path)) == item.location[0]
    for name in _compat.NODE_OVERRIDES:
        assert callable(getattr(pytest.Item, name)), name


def test_pytest_plugin_manager_terminal_and_junit_internals(pytester: pytest.Pytester, tmp_path) -> None:
    config = pytester.parseconfigure(f"--junitxml={tmp_path / 'j.xml'}")
    pm = config.pluginmanager
    assert _compat.confcutdir(pm) is not None
    _compat.set_confcutdir(pm, tmp_path)
    assert pm._confcutdir == tmp_path
    xml = config.stash.get(_compat.junit_xml_key(), None)
    assert xml is not None and callable(xml.add_global_property) and callable(xml.node_reporter)
    tr = pm.get_plugin("terminalreporter")
    assert isinstance(tr, _compat.terminal_reporter_class())
    assert hasattr(_compat.terminal_file(tr), "fileno") and _compat.terminal_writer(tr) is tr._tw
    for hook in ("pytest_runtest_logstart", "pytest_runtest_logreport", "pytest_warning_recorded"):
        assert callable(getattr(_compat.terminal_reporter_class(), hook))
    loc = _compat.ReprFileLocation("job/result.json", 1, "P1: why")
    assert (loc.path, loc.lineno, loc.message) == ("job/result.json", 1, "P1: why")
    assert callable(_compat.junit_node)
    parse = _compat.node_id_parse()
    assert parse is not None and str(parse("job/result.json::P1")) == "job/result.json::P1"
    assert pytest.TestReport("job/result.json::P1", ("job/result.json", 0, "P1"), {}, "passed", None, "call",
                             )._id == parse("job/result.json::P1")  # what reports keep (xdist.report_builder)


def test_xdist_internals() -> None:
    controller = _compat.xdist_worker_controller()
    assert controller is not None
    for attr in ("process_from_remote", "notify_inproc", "send_runtest_some", "shutdown"):
        assert callable(getattr(controller, attr)), attr
    loadscope = _compat.xdist_loadscope()
    for attr in _compat.LOADSCOPE_INTERNALS:
        assert callable(getattr(loadscope, attr)), attr
    from xdist.dsession import DSession
    from xdist.remote import WorkerInteractor

    assert WorkerInteractor.__name__ == _compat.INTERACTOR
    for attr in ("triggershutdown", "loop_once", "worker_runtest_protocol_complete"):
        assert callable(getattr(DSession, attr)), attr
    assert callable(WorkerInteractor.sendevent)
    source = inspect.getsource(WorkerInteractor)
    assert all(f"self.{a}" in source for a in ("torun", "nextitem_index")), "WorkerInteractor's queue moved"
    import xdist.plugin

    assert f'"{_compat.DSESSION}"' in inspect.getsource(xdist.plugin), "xdist registers DSession by another name"


def test_only_the_adapter_imports_pytest_and_only_compat_its_internals() -> None:
    """The core stays pytest-free; private pytest and xdist modules are reached through adapter/_compat.py only."""
    import ast
    from pathlib import Path

    import pytest_trajaudit

    pkg = Path(pytest_trajaudit.__file__).parent
    pytest_ok = {"plugin.py", "nodes.py"}
    offenders: list[str] = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "pytest" and not (rel in pytest_ok or rel.startswith("adapter/")):
                    offenders.append(f"{rel}: import {name}")
                if top in ("_pytest", "xdist") and rel != "adapter/_compat.py":
                    offenders.append(f"{rel}: import {name} (go through adapter/_compat.py)")
    assert not offenders, offenders
