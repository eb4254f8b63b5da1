"""Report paths (docs/trust.md "Reports"): the plugin never writes into an audited tree, never through a planted
symlink, and never lets one job's audit JSON overwrite another's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_trajaudit.report.audit import write_text_atomic
from pytest_trajaudit.report.paths import job_paths
from tests.jobfactory import make_job


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajaudit-principles=P1,P2", *args, timeout=60)


@pytest.mark.parametrize("how", ["symlink-to-a-job", "symlink-to-the-root", "in-the-enclosing-job"])
def test_report_dir_whose_real_path_is_in_an_audited_tree_is_refused(pytester: pytest.Pytester, how: str) -> None:
    """A report directory that resolves into the audited tree (a symlink ``rep`` -> ``runs/job/out``), or that lies
    in the job of an audit path below it (``--trajaudit=runs/job/agent``): one-line usage error, nothing written."""
    job = make_job(pytester.path / "runs", "job", extra_files={"agent/notes.txt": "x"})
    if how == "in-the-enclosing-job":
        args = ("--trajaudit=runs/job/agent", "--trajaudit-report=runs/job/out")
        target = job / "out"
    else:
        target = job / "out" if how == "symlink-to-a-job" else pytester.path / "runs" / "out"
        target.mkdir()
        (pytester.path / "rep").symlink_to(target)
        args = ("--trajaudit=runs", "--trajaudit-report=rep")
    result = _run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    errors = [ln for ln in result.stderr.lines if "trajaudit" in ln]
    assert len(errors) == 1 and "lies inside an audited tree" in errors[0], result.stderr.lines
    assert not target.exists() or not any(target.iterdir())



@pytest.mark.parametrize(("flag", "name"), [("--junitxml", "junit.xml"), ("--ctrf", "ctrf.json"),
                                            ("--html", "report.html"), ("--basetemp", "tmp")])
def test_other_outputs_inside_an_audited_tree_are_refused(pytester: pytest.Pytester, flag: str, name: str) -> None:
    """JUnit, CTRF, pytest-html and pytest's base temporary directory (which pytest empties) never go into an
    audited job: one-line usage error, nothing written there."""
    if flag in ("--ctrf", "--html"):
        pytest.importorskip({"--ctrf": "ctrf", "--html": "pytest_html"}[flag])
    job = make_job(pytester.path / "runs", "job")
    result = _run(pytester, "--trajaudit=runs", f"{flag}=runs/job/{name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    errors = [ln for ln in result.stderr.lines if "trajaudit" in ln]
    assert len(errors) == 1 and f"{flag} " in errors[0] and "lies inside an audited tree" in errors[0], errors
    assert not (job / name).exists()
    result = _run(pytester, "--trajaudit=runs", f"{flag}=out/{name}")  # outside the tree: written
    assert result.ret in (0, 1, 10)  # 10: P1 and P2 only, an incomplete run
    assert flag == "--basetemp" or (pytester.path / "out" / name).exists()  # (an audit makes no temporary files)

def test_planted_jobs_symlink_in_the_report_dir_is_not_followed(pytester: pytest.Pytester) -> None:
    """``rep/jobs`` left as a symlink to somewhere else (here a directory standing for another tree): the audit
    JSON goes to a real ``rep/jobs`` directory, nothing is written through the link."""
    make_job(pytester.path / "runs", "job")
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    rep = pytester.path / "rep"
    rep.mkdir()
    (rep / "jobs").symlink_to(elsewhere)
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-report=rep")
    result.assert_outcomes(passed=2)
    assert list(elsewhere.iterdir()) == []
    assert not (rep / "jobs").is_symlink() and (rep / "jobs").is_dir()
    assert list((rep / "jobs").rglob("audit-*.json"))


def test_symlink_deeper_in_the_report_tree_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "rep" / "jobs").mkdir(parents=True)
    (tmp_path / "rep" / "jobs" / "runs").symlink_to(elsewhere)
    write_text_atomic(tmp_path / "rep" / "jobs" / "runs" / "j" / "a.json", "{}", base=tmp_path / "rep")
    assert list(elsewhere.iterdir()) == []
    assert (tmp_path / "rep" / "jobs" / "runs" / "j" / "a.json").read_text() == "{}"


@pytest.mark.parametrize("planted", ["dangling", "to-a-file", "to-a-directory"])
def test_every_kind_of_symlink_in_the_report_tree_is_replaced_not_followed(tmp_path: Path, planted: str) -> None:
    """A component is opened with ``O_NOFOLLOW`` before anything else looks at it: a dangling link, a link to a file
    and a link to a directory are each removed and replaced by a real directory; their targets stay untouched."""
    target = tmp_path / "target"
    if planted == "to-a-file":
        target.write_text("keep")
    elif planted == "to-a-directory":
        target.mkdir()
    (tmp_path / "rep" / "jobs").mkdir(parents=True)
    (tmp_path / "rep" / "jobs" / "runs").symlink_to(target)
    write_text_atomic(tmp_path / "rep" / "jobs" / "runs" / "a.json", "{}", base=tmp_path / "rep")
    runs = tmp_path / "rep" / "jobs" / "runs"
    assert not runs.is_symlink() and runs.is_dir() and (runs / "a.json").read_text() == "{}"
    if planted == "to-a-file":
        assert target.read_text() == "keep"
    elif planted == "to-a-directory":
        assert list(target.iterdir()) == []
    else:
        assert not target.exists()


def test_a_file_where_a_report_folder_belongs_is_an_error_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "rep" / "jobs").mkdir(parents=True)
    (tmp_path / "rep" / "jobs" / "runs").write_text("not a folder")
    with pytest.raises(NotADirectoryError):
        write_text_atomic(tmp_path / "rep" / "jobs" / "runs" / "a.json", "{}", base=tmp_path / "rep")
    assert (tmp_path / "rep" / "jobs" / "runs").read_text() == "not a folder"
    (tmp_path / "plain").write_text("x")
    with pytest.raises(FileExistsError):  # the report directory itself: a file there is refused by mkdir
        write_text_atomic(tmp_path / "plain" / "a.json", "{}", base=tmp_path / "plain")


def test_job_ids_that_make_the_same_file_name_never_overwrite_each_other(pytester: pytest.Pytester) -> None:
    """``r#2`` and ``r_2`` (and ``r 2``) were all written to ``jobs/runs/r_2/``: the last one won."""
    for name in ("r#2", "r_2", "r 2"):
        make_job(pytester.path / "runs", name, result={"task_name": name, "rollout_name": name,
                                                        "rewards": {"reward": 1.0}, "n_tool_calls": 1})
    result = _run(pytester, "--trajaudit=runs", "--trajaudit-report=rep")
    result.assert_outcomes(passed=6)
    audits = sorted((pytester.path / "rep" / "jobs").rglob("audit-*.json"))
    assert len(audits) == 3, audits
    assert sorted(json.loads(p.read_text())["job"] for p in audits) == ["runs/r 2", "runs/r#2", "runs/r_2"]


def test_job_paths_are_distinct_stable_and_case_safe() -> None:
    ids = ["runs/r#2", "runs/r_2", "runs/R_2", "runs/a b", "runs/a_b", "runs/x/y", "runs/oh/out.jsonl::i-1", "../x"]
    paths = job_paths(ids)
    assert len({p.as_posix().casefold() for p in paths.values()}) == len(ids)
    assert paths["runs/a_b"] == Path("runs/a_b") and paths["runs/x/y"] == Path("runs/x/y")  # safe names kept
    assert paths == job_paths(list(reversed(ids)))
    assert all(".." not in p.parts and not p.is_absolute() for p in paths.values())
    # a crafted name equal to another id's digest form still gets its own path
    crafted = paths["runs/r#2"].name
    again = job_paths(["runs/r#2", f"runs/{crafted}"])
    assert again["runs/r#2"] != again[f"runs/{crafted}"]


def test_merge_writes_through_the_same_guards(tmp_path: Path) -> None:
    """``trajaudit merge`` writes with the same writer: a planted ``jobs`` link in its output is not followed."""
    from pytest_trajaudit.report.summary import Rollup

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / "jobs")
    r = Rollup()
    r.add({"job": "runs/j", "code": "P1", "tier": "C0", "family": "anticheat", "affects": True, "key": "k",
           "status": "PASS", "evidence": "ok", "data": {}, "meta": {}})
    r.write(out, {"P1": "k"})
    assert list(elsewhere.iterdir()) == []
