"""Invocation guards (docs/trust.md): no way of starting an audit lets agent-written files choose pytest's config,
rootdir or imports.

The ``pytest.ini`` planted in these tests carries ``addopts = -k "not P"``: applied, it would deselect every audit
item (the anti-cheat items included) and the run would look clean. Every form of audit path that can make pytest
read it must be refused (exit 4) instead. Real startup ordering (ini discovery before any plugin) only happens in a
fresh interpreter, so everything runs through a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.jobfactory import make_job
from tests.test_security import BASE, HIJACK_CONFIGS, assert_refused, py_payload, run

TRAJ = "trajectory/acp_trajectory.jsonl"


def _job_with_planted_ini(pytester: pytest.Pytester, cfg: str = "pytest.ini") -> Path:
    job = make_job(pytester.path / "runs", "job", extra_files={"agent/notes.txt": "x"})
    (job / cfg).write_text(HIJACK_CONFIGS[cfg])
    return job


# --- the config guard covers every form of audit path --------------------------------------------------------

SPACE_FORMS = {
    # a trajectory file as the audit path: pytest searches its config upwards from the file's directory and
    # finds the job's pytest.ini
    "trajectory-file": ("--trajaudit", f"runs/job/{TRAJ}"),
    # a directory below a job: the job above it is agent-written too
    "below-a-job": ("--trajaudit", "runs/job/agent"),
    # an IDE-style node id of a trajectory-file root
    "node-id-of-a-file": (f"--trajaudit=runs/job/{TRAJ}", f"runs/job/{TRAJ}::P1"),
}


@pytest.mark.parametrize("cfg", ["pytest.ini", "pyproject.toml"])
@pytest.mark.parametrize("form", list(SPACE_FORMS))
def test_config_in_the_enclosing_job_is_refused(pytester: pytest.Pytester, form: str, cfg: str) -> None:
    """``pytest --trajaudit runs/job/trajectory/acp_trajectory.jsonl`` with a ``pytest.ini`` planted in that job:
    pytest reads the ini (the path is positional when the config is searched); the guard sees that the ini lies
    in the job the audited path belongs to and refuses, so its ``-k "not P"`` never deselects the audit."""
    _job_with_planted_ini(pytester, cfg)
    result = run(pytester, *SPACE_FORMS[form], *BASE)
    assert_refused(result, "lies inside an audited tree", cfg)


@pytest.mark.parametrize("path", [TRAJ, "agent", "."], ids=["trajectory-file", "below-a-job", "the-job"])
def test_equals_form_from_inside_the_job_is_refused(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                     path: str) -> None:
    """``--trajaudit=PATH`` (equals form) run from inside the job: pytest takes the ini of the working directory,
    the planted one. Refused whether PATH is the job, a directory below it or its trajectory file."""
    job = _job_with_planted_ini(pytester)
    monkeypatch.chdir(job)
    result = run(pytester, f"--trajaudit={path}", *BASE)
    assert_refused(result, "pytest.ini", "lies inside an audited tree")


def test_rootdir_in_the_enclosing_job_is_refused(pytester: pytest.Pytester) -> None:
    """No config at all, ``--rootdir`` set to the job while only its ``agent/`` directory is audited."""
    make_job(pytester.path / "runs", "job", extra_files={"agent/notes.txt": "x"})
    result = run(pytester, "--trajaudit=runs/job/agent", "--rootdir=runs/job", "--config-file=/dev/null", *BASE)
    assert_refused(result, "rootdir", "lies inside an audited tree")


@pytest.mark.parametrize("form", ["space", "equals"])
def test_trajectory_file_in_a_clean_job_is_audited(pytester: pytest.Pytester, form: str) -> None:
    """Control: without a planted config the same audit paths run (the guard refuses only what is hostile)."""
    make_job(pytester.path / "runs", "job")
    args = ("--trajaudit", f"runs/job/{TRAJ}") if form == "space" else (f"--trajaudit=runs/job/{TRAJ}",)
    result = run(pytester, *args, *BASE)
    result.assert_outcomes(passed=2)


def test_planted_ini_is_not_read_by_the_equals_form_from_outside(pytester: pytest.Pytester) -> None:
    """``--trajaudit=runs/job/agent`` from outside: nothing positional points pytest into the job, the planted
    ini is never read and the audit is not refused."""
    _job_with_planted_ini(pytester)
    result = run(pytester, f"--trajaudit=runs/job/{TRAJ}", *BASE)
    result.assert_outcomes(passed=2)


# --- the `trajaudit` command never imports from the working directory ----------------------------------------

# Modules Python or pytest import at start-up: planted in the working directory, they would run if that directory
# were on sys.path (``python -m pytest`` puts it there first).
SHADOWS = ("pytest.py", "argparse.py", "zipfile.py")


def _trajaudit_command() -> list[str]:
    """The installed console script when there is one (what a user types), else the same entry point run the way
    the script runs it (its own directory, not the working directory, first on sys.path)."""
    script = Path(sys.executable).parent / "trajaudit"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-P", "-c", "import sys; from pytest_trajaudit.cli.main import main; sys.exit(main())"]


def _plant_shadows(job: Path, markers: Path) -> None:
    for name in SHADOWS:
        (job / name).write_text(py_payload(markers, name))


@pytest.mark.parametrize(("where", "path"), [("job", "."), ("job/agent", "..")], ids=["in-the-job", "below-it"])
def test_trajaudit_dot_inside_a_job_imports_nothing_from_it(pytester: pytest.Pytester, where: str, path: str) -> None:
    """``trajaudit .`` typed inside a job directory (``trajaudit ..`` below it) holding an agent-written ``pytest.py``,
    ``argparse.py`` and ``zipfile.py``: none of them runs, the job is audited, and the caller's options, with
    paths relative to the caller's directory, still apply (the JUnit file lands where ``../..`` says)."""
    markers = pytester.path / "MARKERS"
    job = make_job(pytester.path / "runs", "job", extra_files={"agent/notes.txt": "x"})
    _plant_shadows(job, markers)
    _plant_shadows(job / "agent", markers)
    cwd = pytester.path / "runs" / where
    up = os.path.relpath(pytester.path, cwd)
    junit = os.path.join(up, "junit.xml")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    env["PYTHONPATH"] = "."  # a common CI setting: "." would be the job if the child kept this directory
    proc = subprocess.run([*_trajaudit_command(), path, "--", "-p", "no:randomly", "--trajaudit-principles=P1,P2", "--trajaudit-allow-incomplete",
                           f"--junitxml={junit}"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    found = sorted(p.name for p in markers.iterdir()) if markers.is_dir() else []
    assert found == [], (found, proc.stdout, proc.stderr)
    assert "2 passed" in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0
    assert (pytester.path / "junit.xml").is_file()


def test_python_m_pytest_inside_a_job_runs_the_planted_module(pytester: pytest.Pytester) -> None:
    """Control (documented in docs/trust.md): ``python -m pytest`` typed inside a job imports the job's
    ``pytest.py`` before any plugin exists. No plugin can prevent it; the ``trajaudit`` command does."""
    markers = pytester.path / "MARKERS"
    job = make_job(pytester.path / "runs", "job")
    _plant_shadows(job, markers)
    subprocess.run([sys.executable, "-m", "pytest", "--trajaudit=."], cwd=job, capture_output=True, timeout=120)
    assert (markers / "pytest.py").is_file()


def test_cli_resolves_relative_paths_against_the_callers_directory(tmp_path: Path) -> None:
    from pytest_trajaudit.cli.main import absolute_args, build_args, trusted_rootdir

    job = make_job(tmp_path / "runs", "job", extra_files={"agent/notes.txt": "x"})
    # the child starts above the whole job, also from a directory below it
    assert trusted_rootdir(["."], job / "agent") == tmp_path / "runs"
    assert trusted_rootdir([f"job/{TRAJ}"], tmp_path / "runs") == tmp_path / "runs"
    assert trusted_rootdir(["runs"], tmp_path) == tmp_path
    args = build_args(["."], ["-c", "../t.ini", "--junitxml=o.xml", "-k", "agent", "--trajaudit-judge-cache=off",
                              f"{TRAJ}::P1", "-m", "P1"], cwd=job)
    assert f"--trajaudit={job}" in args
    assert args[args.index("-c", 2) + 1] == str(tmp_path / "runs" / "t.ini")
    assert f"--junitxml={job / 'o.xml'}" in args
    assert args[args.index("-k") + 1] == "agent"  # a -k expression is no path, even with an agent/ beside it
    assert "--trajaudit-judge-cache=off" in args
    assert f"{job / TRAJ}::P1" in args
    assert absolute_args(["--trajaudit", "x"], job) == ["--trajaudit", "x"]  # no such file: left as given
