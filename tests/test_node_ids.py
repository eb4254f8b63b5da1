"""Node ids round-trip and IDE discovery: every id pytest prints for an audit item (``--co -q``, ``-v``, FAILED lines)
selects exactly that item when pasted back, for an audit root inside the rootdir, nested below it and outside it,
in the ``--trajaudit=ROOT <id>`` form and the space form ``--trajaudit <id>``; every item's path is a file and the
tree an IDE builds from the items' paths has no collisions (docs/ci.md, "Checking IDE discovery")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.loaders.test_openhands import jsonl, record_2025, record_opendevin

from .jobfactory import make_job

BASE = ("-p", "no:cacheprovider", "-p", "no:randomly", "--trajaudit-principles=P1,PASSK")


def build(root: Path) -> Path:
    """A task group of two trials (group items), a lone job, and a multi-record file (record items)."""
    for n, reward in ((1, 1.0), (2, 0.0)):
        make_job(root / "grp", f"alpha__{n}", result={"task_name": "alpha", "rollout_name": f"alpha__{n}",
                                                       "rewards": {"reward": reward}, "n_tool_calls": 1})
    make_job(root, "solo", lines=[{"type": "user_message", "text": "do x"},
                                  {"type": "tool_call", "tool_call_id": "t1", "kind": "read",
                                   "title": "Read /tests/test_outputs.py", "status": "completed",
                                   "content": [{"type": "content", "content": {"type": "text", "text": "x"}}]},
                                  {"type": "agent_message", "text": "done"}])
    (root / "oh").mkdir(parents=True)
    (root / "oh" / "output.jsonl").write_text(jsonl(record_2025("org__repo-1"), record_opendevin("Q_1")))
    return root


def collected(result: pytest.RunResult) -> list[str]:
    return [ln for ln in result.stdout.lines if "::" in ln and " " not in ln]


def layouts(pytester: pytest.Pytester, where: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """Build the runs for one placement; return the --trajaudit value to use from the working directory and the
    arguments that name the trusted config (a root outside the project: ``-c``, as docs/usage.md says)."""
    if where == "inside":
        pytester.makeini("[pytest]\n")
        build(pytester.path / "runs")
        return ("runs",)
    if where == "nested":
        pytester.makeini("[pytest]\n")
        build(pytester.path / "a" / "b" / "runs")
        return ("a/b/runs",)
    build(pytester.path / "runs")
    proj = pytester.path / "proj"
    proj.mkdir()
    (proj / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.chdir(proj)
    return ("../runs", "-c", "pytest.ini")


@pytest.mark.parametrize("where", ["inside", "nested", "outside"])
def test_every_printed_id_selects_exactly_that_item(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                    where: str) -> None:
    root, *cfg = layouts(pytester, where, monkeypatch)
    ids = collected(pytester.runpytest(*BASE, *cfg, f"--trajaudit={root}", "--co", "-q"))
    assert len(ids) == len(set(ids)) == 5 + 1  # 5 jobs (2 trials, solo, 2 records) x P1 + the group's PASSK
    assert all(i.startswith(f"{root}/") for i in ids), ids  # resolvable from here (no root-relative ids)
    assert f"{root}/grp/alpha__1/result.json::alpha::PASSK" in ids
    assert f"{root}/oh/output.jsonl::Q_1::P1" in ids
    space = {ids[0], ids[-1], next(i for i in ids if "::Q_1::" in i)}  # a job's, the group's and a record's item
    for nodeid in ids:
        forms = [(f"--trajaudit={root}", nodeid)] + ([("--trajaudit", nodeid)] if nodeid in space else [])
        for args in forms:
            again = collected(pytester.runpytest(*BASE, *cfg, *args, "--co", "-q"))
            assert again == [nodeid], (args, again)
    # the ids of -v lines and of FAILED lines are the same strings
    run = pytester.runpytest(*BASE, *cfg, f"--trajaudit={root}", "-v")
    shown = {ln.split(" ", 1)[0] for ln in run.stdout.lines if " " in ln and ln.split(" ", 1)[0] in ids}
    assert shown == set(ids)
    failed = [ln.split(" ")[1] for ln in run.stdout.lines if ln.startswith("FAILED ")]
    assert failed and set(failed) <= set(ids)


def test_verdict_lines_name_jobs_by_their_node_ids(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    root, *cfg = layouts(pytester, "outside", monkeypatch)
    result = pytester.runpytest(*BASE, *cfg, f"--trajaudit={root}")
    verdicts = result.stdout.lines[result.stdout.lines.index(next(ln for ln in result.stdout.lines
                                                                   if "trajaudit verdicts" in ln)):]
    assert any(ln.startswith(f"INVALID {root}/solo/result.json: P1 FAIL") for ln in verdicts), verdicts
    result.stdout.fnmatch_lines([f"FAILED {root}/solo/result.json::P1 - P1: *"])


class Items:
    """Keeps the session's items after collection (an IDE's discovery reads the same)."""

    def __init__(self) -> None:
        self.items: list[pytest.Item] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = list(session.items)


def ide_tree(items: list[pytest.Item]) -> tuple[dict[str, Path], set[str], list[str]]:
    """The keys of the tree a path-based test explorer builds (VS Code's python_files/vscode_pytest): a file node
    per item's parent path (the class's parent for an item of a ``pytest.Class``), folder nodes for every directory
    above a file, a test per ``<absolute path>::<node id after its path>``."""
    def file_of(it: pytest.Item) -> Path:
        node = it.parent
        while isinstance(node, pytest.Class):
            node = node.parent
        return node.path

    files = {os.fspath(file_of(it)): file_of(it) for it in items}
    folders = {os.fspath(d) for p in files.values() for d in p.parents}
    tests = [f"{os.fspath(it.path)}::{it.nodeid.split('::', 1)[1]}" for it in items]
    return files, folders, tests


@pytest.mark.parametrize("where", ["inside", "nested", "outside"])
def test_ide_discovery_properties(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    root, *cfg = layouts(pytester, where, monkeypatch)
    seen = Items()
    pytester.runpytest(*BASE, *cfg, f"--trajaudit={root}", "--co", "-q", plugins=[seen])
    items = seen.items
    assert len(items) == 6
    assert all(it.path.is_file() for it in items)  # group items too: anchored on their first trial's file
    files, folders, tests = ide_tree(items)
    assert all(p.is_file() for p in files.values())
    assert not set(files) & folders  # no file node collides with a folder node of the same path
    assert len(set(tests)) == len(items)  # every test has its own place in the tree
    chains = [tuple(n.nodeid for n in it.listchain()[1:]) for it in items]
    assert len(set(chains)) == len(items)
    for it in items:  # each record of a multi-record file is a labelled node (an explorer nests a class's items
        if it.path.name == "output.jsonl":  # under a node named by it) and is named in the item's node id
            assert isinstance(it.parent, pytest.Class) and not isinstance(it.parent.parent, pytest.Class)
            assert it.parent.name in ("org__repo-1", "Q_1") and f"::{it.parent.name}::" in it.nodeid
        else:
            assert not isinstance(it.parent, pytest.Class)
    groups = [it for it in items if it.name == "PASSK"]
    assert [g.nodeid.split("::", 1)[0] for g in groups] == [f"{root}/grp/alpha__1/result.json"]


def test_space_form_with_a_job_item_id(pytester: pytest.Pytester) -> None:
    build(pytester.path / "runs")
    result = pytester.runpytest(*BASE, "--trajaudit", "runs/solo/result.json::P1")
    result.assert_outcomes(failed=1)
    summary = json.dumps(result.stdout.lines)
    assert "not found" not in summary


def test_a_path_inside_the_root_names_the_left_out_jobs_and_record_files(pytester: pytest.Pytester) -> None:
    """``--trajaudit=runs runs/solo``: the task group's trials and the multi-record file the path leaves out are
    INCOMPLETE (the file by its own id); a record selected alone leaves its file's other records out too."""
    build(pytester.path / "runs")
    out = pytester.path / "out"
    r = pytester.runpytest(*BASE, "--trajaudit=runs", f"--trajaudit-report={out}", "runs/solo")
    summary = json.loads((out / "summary.json").read_text())
    verdicts = {j["job"]: j["verdict"] for j in summary["jobs"]}
    assert verdicts["runs/grp/alpha__1"] == verdicts["runs/grp/alpha__2"] == "INCOMPLETE"
    assert verdicts["runs/oh/output.jsonl"] == "INCOMPLETE" and verdicts["runs/solo"] != "INCOMPLETE"
    assert summary["pr_verdict"]["verdict"] != "APPROVE" and r.ret != 0
    r = pytester.runpytest(*BASE, "--trajaudit=runs", f"--trajaudit-report={out}", "runs/oh/output.jsonl::Q_1")
    verdicts = {j["job"]: j["verdict"] for j in json.loads((out / "summary.json").read_text())["jobs"]}
    assert verdicts["runs/oh/output.jsonl"] == "INCOMPLETE" and "runs/oh/output.jsonl::Q_1" in verdicts
    assert verdicts["runs/solo"] == "INCOMPLETE" and r.ret != 0
    r = pytester.runpytest(*BASE, "--trajaudit=runs", f"--trajaudit-report={out}", "runs/oh/output.jsonl")
    verdicts = {j["job"]: j["verdict"] for j in json.loads((out / "summary.json").read_text())["jobs"]}
    assert "runs/oh/output.jsonl" not in verdicts  # the whole file was selected: its records stand for it
