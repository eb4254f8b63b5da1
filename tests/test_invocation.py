"""Invocation guards (docs/trust.md): no way of starting an audit lets agent-written files choose pytest's config,
rootdir or imports.

The ``pytest.ini`` planted in these tests carries ``addopts = -k "not P"``: applied, it would deselect every audit
item (the anti-cheat items included) and the run would look clean. Every form of audit path that can make pytest
read it must be refused (exit 4) instead. Real startup ordering (ini discovery before any plugin) only happens in a
fresh interpreter, so everything runs through a subprocess.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jobfactory import make_job
from tests.test_security import BASE, HIJACK_CONFIGS, assert_refused, run

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
