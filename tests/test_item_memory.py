"""What an audit keeps per item until the session ends, and what it lets go: a job's trajectory is unreachable
once the job's last item has run (lean and full protocols), the three reports of an item share one keywords
dict, an item keeps no flattened copy of its keywords, no N/A message and no empty set of extra keyword
matches, and the roll-up keeps no per-item entry without a consumer (CTRF, GitHub annotations)."""

from __future__ import annotations

import shutil
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.adapter.nodes import JobNode, PrincipleItem
from pytest_trajaudit.model import Trajectory
from pytest_trajaudit.principles import engine

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "runs"
TASKS = EXAMPLES.parent / "tasks"


@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    shutil.copytree(EXAMPLES, pytester.path / "runs")
    shutil.copytree(TASKS, pytester.path / "tasks")
    return pytester.path / "runs"


class _Events(list):  # a list that takes weak references
    pass


class _Watched(Trajectory):  # Trajectory has slots; a subclass without them takes weak references
    pass


class Watch:
    """Replaces each loaded trajectory by a weakly referenced copy and checks, after every job's last item, that
    the copy and its event list are gone (by reference counting alone: no collection is forced)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.refs: dict[str, list[weakref.ref[Any]]] = {}
        self.checked: list[str] = []
        self.alive: list[str] = []
        real = engine.load_job

        def load_job(ref: Any, cfg: Any, **kw: Any) -> Any:
            job = real(ref, cfg, **kw)
            t = job.trajectory
            if t is not None and kw.get("with_trajectory", True):
                w = _Watched(t.format, t.source, _Events(t.events), t.raw_text, t.meta)
                job.trajectory = w
                self.refs.setdefault(str(ref.anchor), []).extend([weakref.ref(w), weakref.ref(w.events)])
            return job

        monkeypatch.setattr(engine, "load_job", load_job)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        res = yield
        job = item.parent
        if isinstance(item, PrincipleItem) and (nextitem is None or nextitem.parent is not job):
            assert isinstance(job, JobNode)
            key = str(job.ref.anchor)
            self.checked.append(key)
            if job._audit is not None or any(r() is not None for r in self.refs.get(key, ())):
                self.alive.append(key)
        return res


@pytest.mark.parametrize("protocol", ["lean", "full"])
def test_a_jobs_trajectory_is_gone_after_its_last_item(pytester: pytest.Pytester, runs: Path,
                                                       monkeypatch: pytest.MonkeyPatch, protocol: str) -> None:
    watch = Watch(monkeypatch)
    rec = pytester.inline_run("-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit=runs",
                              "--trajaudit-tasks=tasks", f"--trajaudit-protocol={protocol}", plugins=[watch])
    assert rec.ret == 1  # the examples hold FAIL findings
    assert len(watch.refs) >= 3 and set(watch.refs) <= set(watch.checked)
    assert watch.alive == []


def test_a_held_trajectory_is_seen(pytester: pytest.Pytester, runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a principle that keeps the trajectory it was given is caught."""
    watch = Watch(monkeypatch)
    held: list[Any] = []
    real = engine._audit_loaded

    def audit_loaded(job: Any, *a: Any, **kw: Any) -> Any:
        held.append(job.trajectory)
        return real(job, *a, **kw)

    monkeypatch.setattr(engine, "_audit_loaded", audit_loaded)
    pytester.inline_run("-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit=runs", "--trajaudit-tasks=tasks",
                        plugins=[watch])
    assert watch.alive and set(watch.alive) == {k for k, refs in watch.refs.items() if refs}


class Reports:
    def __init__(self) -> None:
        self.reports: list[pytest.TestReport] = []
        self.items: list[pytest.Item] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.append(report)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = list(session.items)


@pytest.mark.parametrize("protocol", ["lean", "full"])
def test_an_items_reports_share_one_keywords_dict(pytester: pytest.Pytester, runs: Path, protocol: str) -> None:
    probe = Reports()
    pytester.inline_run("-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit=runs", "--trajaudit-tasks=tasks",
                        f"--trajaudit-protocol={protocol}", plugins=[probe])
    by_item: dict[str, list[pytest.TestReport]] = {}
    for r in probe.reports:
        by_item.setdefault(r.nodeid, []).append(r)
    items = [i for i in probe.items if isinstance(i, PrincipleItem)]
    assert len(items) > 100
    for item in items:
        reps = by_item[item.nodeid]
        assert [r.when for r in reps] == ["setup", "call", "teardown"] or [r.when for r in reps] == [
            "setup", "teardown"]
        assert all(r.keywords is reps[0].keywords for r in reps)
        assert reps[0].keywords == dict.fromkeys(item.keywords, 1)  # what pytest puts in a report
        assert list(reps[0].keywords) == list(item.keywords)
        # the item keeps pytest's NodeKeywords, no report-keywords or N/A leftovers, no empty extra-match set
        assert type(item.keywords) is not dict
        assert item.report_keywords is None and item.na_msg is None
        assert item.__dict__["_extra_keyword_matches"] is None
        # its attributes were only reassigned during the run: every item's __dict__ still shares its class's key
        # table (a CPython split dict), smaller than a dict of its own with the same items
        assert sys.getsizeof(item.__dict__) < sys.getsizeof(dict(item.__dict__))
        assert list(item.__dict__) == list(items[0].__dict__)
        if protocol == "lean":  # nor the phases' outcomes the tmp_path fixture would read (an audit item has none)
            from _pytest.tmpdir import tmppath_result_key

            assert tmppath_result_key not in item.stash
        assert item.extra_keyword_matches == set()  # made again when asked for
    assert any(r.outcome == "skipped" and "N/A:" in str(r.longrepr) for r in probe.reports)


def test_a_keyword_added_between_phases_keeps_its_own_dict(pytester: pytest.Pytester, runs: Path) -> None:
    """A plugin that marks an item during its run gets the report keywords pytest would give each phase."""
    pytester.syspathinsert()
    pytester.makepyfile(marker=
        "import pytest\n"
        "@pytest.hookimpl(wrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    rep = yield\n"
        "    if call.when == 'setup':\n"
        "        item.add_marker('late')\n"
        "    return rep\n")
    probe = Reports()
    pytester.inline_run("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "marker", "--trajaudit=runs",
                        "--trajaudit-protocol=full", plugins=[probe])
    setup = [r for r in probe.reports if r.when == "setup" and "::P1" in r.nodeid]
    call = [r for r in probe.reports if r.when == "call" and "::P1" in r.nodeid]
    assert setup and call
    assert all("late" not in r.keywords for r in setup) and all("late" in r.keywords for r in call)


def test_ctrf_items_only_with_a_consumer(pytester: pytest.Pytester, runs: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_trajaudit.adapter.rollup import ROLLUP_KEY

    seen: dict[str, int] = {}

    class Peek:
        def __init__(self, tag: str) -> None:
            self.tag = tag

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session: pytest.Session) -> None:
            seen[self.tag] = len(session.config.stash[ROLLUP_KEY].items)

    pytest.importorskip("ctrf")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for tag, extra in (("plain", ()), ("ctrf", ("--ctrf=c.json",))):
        pytester.inline_run("-p", "no:cacheprovider", "--trajaudit=runs", *extra, plugins=[Peek(tag)])
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    pytester.inline_run("-p", "no:cacheprovider", "--trajaudit=runs", plugins=[Peek("github")])
    assert seen["plain"] == 0 and seen["ctrf"] > 50 and seen["github"] == seen["ctrf"]


class Stats:
    """Reads the terminal reporter's statistics at the end of the session."""

    kept: dict[str, list[Any]]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        self.kept = {k: list(v) for k, v in tr.stats.items()}


def _summary(result: pytest.RunResult) -> list[str]:
    """The terminal output without its timings."""
    import re

    return [re.sub(r" in [0-9.]+s.*", "", line) for line in result.outlines]


def test_empty_phase_reports_are_not_kept(pytester: pytest.Pytester, runs: Path) -> None:
    """pytest files passing setup/teardown reports under the category "" and keeps them for -rP's teardown
    sections only: the sectionless ones are taken back out; one with sections (here a plugin's, on the P1 items'
    teardown) stays and still prints, and the terminal's output is pytest's own."""
    pytester.syspathinsert()
    pytester.makepyfile(sections=
        "import pytest\n"
        "@pytest.hookimpl(wrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    rep = yield\n"
        "    if call.when == 'teardown' and item.name == 'P1':\n"
        "        rep.sections.append(('Captured stdout teardown', 'TEARDOWN-OUTPUT'))\n"
        "    return rep\n")
    args = ("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "sections", "--trajaudit=runs",
            "--trajaudit-tasks=tasks", "-rA")
    trimmed, kept = Stats(), Stats()
    pytester.inline_run(*args, plugins=[trimmed])
    pytester.inline_run(*args, "-p", "no:trajaudit-phase-trim", plugins=[kept])
    assert len(kept.kept[""]) > 200  # pytest's own: two per item
    left = trimmed.kept[""]
    assert left and all(r.when == "teardown" and r.sections and r.nodeid.endswith("::P1") for r in left)
    assert len(left) == sum(1 for r in kept.kept[""] if r.sections)
    for cat in kept.kept:
        if cat:
            assert [r.nodeid for r in trimmed.kept[cat]] == [r.nodeid for r in kept.kept[cat]], cat
    out = pytester.runpytest_subprocess(*args)
    same = pytester.runpytest_subprocess(*args, "-p", "no:trajaudit-phase-trim")
    assert "TEARDOWN-OUTPUT" in out.stdout.str()
    assert _summary(out) == _summary(same)
