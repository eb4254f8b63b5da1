"""The ``trajaudit`` command as a user runs it (a subprocess of the installed console script, else the module):
its help and version, the project's own trajaudit_* settings, the same trajectories as the plugin for
``trajaudit audit``, errors on stderr."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_trajaudit import __version__
from pytest_trajaudit.cli.main import HELP, split_args
from tests.advisor.kit import make_task
from tests.jobfactory import TRAJECTORY, make_job


def _command() -> list[str]:
    """The console script a user types when it is installed next to this interpreter, else the same entry point."""
    script = Path(sys.executable).parent / "trajaudit"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "pytest_trajaudit.cli.main"]


def trajaudit(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k != "PYTEST_ADDOPTS" and not k.startswith(("JUDGE_", "ADVISOR_"))}
    return subprocess.run([*_command(), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_help_documents_every_option_with_examples(pytester: pytest.Pytester) -> None:
    p = trajaudit("--help", cwd=pytester.path)
    assert p.returncode == 0 and p.stderr == "" and p.stdout == HELP
    assert "any pytest option" in p.stdout and "Examples:" in p.stdout
    assert re.search(r"^  trajaudit runs/ .*-n auto", p.stdout, re.M)  # an example with pytest options after PATH
    for opt in ("--help", "--version", "merge", "audit", "summarize", "trace-grader", "-c/--config-file"):
        assert opt in p.stdout, opt
    # every --trajaudit-* option the plugin registers (as pytest --help lists them)
    listed = set(re.findall(r"--trajaudit(?:-[a-z-]+[a-z])?", "\n".join(pytester.runpytest("--help").outlines)))
    assert "--trajaudit-report" in listed
    missing = sorted(o for o in listed if o not in p.stdout)
    assert missing == []


def test_version_is_the_package_version_not_pytest_s(pytester: pytest.Pytester) -> None:
    p = trajaudit("--version", cwd=pytester.path)
    assert (p.returncode, p.stdout, p.stderr) == (0, f"pytest-trajaudit {__version__}\n", "")
    assert pytest.__version__ not in p.stdout or pytest.__version__ == __version__


CONFIGS = {
    "pyproject.toml": ('[tool.pytest.ini_options]\ntrajaudit_roots = ["runs"]\ntrajaudit_principles = "P1,P2"\n'
                       'trajaudit_report = "out"\ntrajaudit_allow_incomplete = true\naddopts = "-k nothing"\n'),
    "pytest.ini": ("[pytest]\ntrajaudit_roots = runs\ntrajaudit_principles = P1,P2\ntrajaudit_report = out\n"
                   "trajaudit_allow_incomplete = true\naddopts = -k nothing\n"),
    "setup.cfg": ("[tool:pytest]\ntrajaudit_roots = runs\ntrajaudit_principles = P1,P2\ntrajaudit_report = out\n"
                  "trajaudit_allow_incomplete = true\naddopts = -k nothing\n"),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_project_config_s_trajaudit_keys_apply(pytester: pytest.Pytester, name: str) -> None:
    """``trajaudit`` alone, from a subdirectory of the project: the roots, principles, report directory and
    allow-incomplete of the project's config apply, paths relative to the config file; its other keys
    (``addopts = -k nothing``) do not."""
    make_job(pytester.path / "runs", "job")
    (pytester.path / name).write_text(CONFIGS[name])
    sub = pytester.path / "docs"
    sub.mkdir()
    p = trajaudit("-p", "no:randomly", cwd=sub)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 passed" in p.stdout, p.stdout
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    assert [j["job"] for j in summary["jobs"]] == ["runs/job"]
    assert summary["pr_verdict"]["verdict"] == "INCOMPLETE"  # only P1, P2 of the integrity principles ran


def test_a_path_given_wins_over_the_configured_roots_and_an_option_over_the_config(pytester: pytest.Pytester) -> None:
    make_job(pytester.path / "runs", "job")
    make_job(pytester.path / "other", "job2")
    (pytester.path / "pytest.ini").write_text(CONFIGS["pytest.ini"])
    p = trajaudit("other", "--trajaudit-principles=P1", "-p", "no:randomly", cwd=pytester.path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed" in p.stdout and "other/job2" in p.stdout and "runs/job" not in p.stdout


def test_a_config_inside_the_audited_tree_is_never_read(pytester: pytest.Pytester) -> None:
    """``trajaudit .`` audits the working directory, its config file included: that file could be the agents'."""
    make_job(pytester.path / "runs", "job")
    (pytester.path / "pytest.ini").write_text("[pytest]\ntrajaudit_principles = P1\n")
    p = trajaudit(".", "-p", "no:randomly", cwd=pytester.path)
    assert f"trajaudit: not reading {pytester.path / 'pytest.ini'}: it lies inside an audited tree" in p.stderr
    assert "1 passed" not in p.stdout and re.search(r"\d+ passed", p.stdout), p.stdout
    (pytester.path / "pytest.ini").write_text("[pytest]\ntrajaudit_roots = .\n")
    p = trajaudit(cwd=pytester.path)
    assert p.returncode == 4 and p.stdout == ""
    assert p.stderr.strip().endswith("lies inside an audited tree; its trajaudit_roots are not used: name the PATH")
    # typed inside a job whose planted config names roots elsewhere: that config is not read either
    (pytester.path / "pytest.ini").unlink()
    job = pytester.path / "runs" / "job"
    (job / "pytest.ini").write_text("[pytest]\ntrajaudit_roots = ../../other\ntrajaudit_principles = P1\n")
    make_job(pytester.path / "other", "job2")
    p = trajaudit(cwd=job)
    assert p.returncode == 4 and p.stdout == "" and f"lies inside the job {job}" in p.stderr
    p = trajaudit(pytester.path / "other", "-p", "no:randomly", cwd=job)
    assert f"trajaudit: not reading {job / 'pytest.ini'}: it lies inside the job {job}" in p.stderr
    assert "1 passed" not in p.stdout and re.search(r"\d+ passed", p.stdout), p.stdout


@pytest.mark.parametrize("plant", ["deep-toml", "symlink", "malformed-ini", "huge"])
def test_a_planted_config_in_the_job_typed_in_is_never_opened(pytester: pytest.Pytester, plant: str) -> None:
    """``trajaudit .`` typed inside a job: a config file there is not opened at all (a symlink to /etc/passwd is not
    followed, a TOML nested past any parser's depth or a malformed ini never parsed): the job is audited."""
    job = make_job(pytester.path / "runs", "job")
    if plant == "deep-toml":
        (job / "pyproject.toml").write_text("[tool.pytest.ini_options]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    elif plant == "symlink":
        (job / "pytest.ini").symlink_to("/etc/passwd")
    elif plant == "malformed-ini":
        (job / "pytest.ini").write_text("no section header\n")
    else:
        (job / "setup.cfg").write_bytes(b"[tool:pytest]\n" + b"#" * (5 << 20))
    p = trajaudit(".", "-p", "no:randomly", cwd=job)
    assert "Traceback" not in p.stderr and "cannot be read" not in p.stderr, p.stderr
    assert f"trajaudit: not reading {job}" in p.stderr and f"it lies inside the job {job}" in p.stderr, p.stderr
    assert re.search(r"\d+ passed", p.stdout), p.stdout


def test_an_outside_config_too_deep_or_too_large_is_one_line(pytester: pytest.Pytester) -> None:
    make_job(pytester.path / "runs", "job")
    proj = pytester.path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text("[tool.pytest.ini_options]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    p = trajaudit(pytester.path / "runs", cwd=proj)
    assert p.returncode == 4 and "Traceback" not in p.stderr and "nested too deeply" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_pytest_options_follow_the_paths(pytester: pytest.Pytester) -> None:
    assert split_args(["runs", "-m", "P1", "-q"]) == (["runs"], ["-m", "P1", "-q"])
    assert split_args(["a", "b", "--", "a/result.json::P1"]) == (["a", "b"], ["a/result.json::P1"])
    assert split_args(["a"]) == (["a"], [])
    make_job(pytester.path / "runs", "job")
    p = trajaudit("runs", "-m", "P1", "-p", "no:randomly", "--trajaudit-allow-incomplete", cwd=pytester.path)
    assert p.returncode == 0 and "1 passed" in p.stdout, p.stdout + p.stderr


def test_errors_go_to_stderr(pytester: pytest.Pytester) -> None:
    for args, code, message in (
            ((), 4, "trajaudit: error: no PATH given (paths come before pytest options) and no pytest config with "
                   "trajaudit_roots"),
            (("-q", "runs"), 4, "trajaudit: error: no PATH given (paths come before pytest options)"),
            (("merge", "out"), 4, "usage: trajaudit merge"),
            (("merge", "out", "nowhere"), 4, "trajaudit merge: "),
            (("audit", "--attempt-dir", "nowhere", "--task-dir", "."), 2, "error: --attempt-dir nowhere"),
            (("summarize", "--audits", "nowhere"), 2, "error: --audits nowhere")):
        p = trajaudit(*args, cwd=pytester.path)
        assert p.returncode == code, (args, p.stdout, p.stderr)
        assert p.stdout == "" and message in p.stderr, (args, p.stderr)
    (pytester.path / "pyproject.toml").write_text("[tool.pytest.ini_options\n")
    p = trajaudit(cwd=pytester.path)
    assert p.returncode == 4 and p.stdout == "" and "pyproject.toml: cannot be read" in p.stderr


def test_audit_reads_the_trajectory_the_plugin_audits(pytester: pytest.Pytester) -> None:
    """A BenchFlow rollout's trajectory/acp_trajectory.jsonl, found as the plugin finds it; a second candidate of no
    known format beside it makes the attempt unusable (it is never left unread); an inconclusive verdict (here: a
    task directory without privileged material) says why on stderr."""
    job = make_job(pytester.path / "runs", "demo__1", extra_files={"agent/notes-trajectory.json": "[]"})
    task = make_task(pytester.path / "tasks")
    p = trajaudit("audit", "--attempt-dir", job, "--task-dir", task, "--no-judge", cwd=pytester.path)
    assert p.returncode == 2 and "notes-trajectory.json: no known trajectory format" in p.stderr, p.stderr
    (job / "agent" / "notes-trajectory.json").unlink()
    p = trajaudit("audit", "--attempt-dir", job, "--task-dir", task, "--no-judge", cwd=pytester.path)
    assert p.returncode in (0, 1), p.stderr
    assert json.loads(p.stdout)["trajectory"] == str(job / TRAJECTORY)
    empty = pytester.path / "empty-task"
    empty.mkdir()
    p = trajaudit("audit", "--attempt-dir", job, "--task-dir", empty, "--no-judge", cwd=pytester.path)
    assert p.returncode == 1 and json.loads(p.stdout)["verdict"] == "inconclusive"
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("trajaudit audit: inconclusive: ") and len(lines[0]) > 40


def test_project_config_values_become_absolute_overrides(tmp_path: Path) -> None:
    """Each ini type the plugin declares, from an ini file and from TOML's native types; the first file pytest
    would pick wins (pytest.toml before pytest.ini before pyproject.toml), searched from the directory upwards."""
    from pytest_trajaudit.cli.projectconfig import find

    (tmp_path / "tox.ini").write_text(
        "[pytest]\ntrajaudit_roots = runs 'more runs'\ntrajaudit_tasks = /abs/tasks\ntrajaudit_judge =\n"
        "    model-a\n    model-b\ntrajaudit_rules = rules.yaml\ntrajaudit_judge_cache = off\n"
        "trajaudit_literal = true\nmarkers = x\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    cfg, skipped = find(deep)
    assert skipped is None and cfg is not None and cfg.path == tmp_path / "tox.ini"
    assert cfg.roots() == [str(tmp_path / "runs"), str(tmp_path / "more runs")]
    assert dict(zip(cfg.override_args()[1::2], cfg.override_args()[::2], strict=True)) == {
        f"trajaudit_roots={tmp_path / 'runs'} '{tmp_path / 'more runs'}'": "-o",
        "trajaudit_tasks=/abs/tasks": "-o", "trajaudit_judge=model-a\nmodel-b": "-o",
        f"trajaudit_rules={tmp_path / 'rules.yaml'}": "-o", "trajaudit_judge_cache=off": "-o",
        "trajaudit_literal=true": "-o"}
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntrajaudit_strict_pass_k = true\n'
                                             'trajaudit_judge = ["m1", "m2"]\ntrajaudit_trials = 3\n')
    assert find(deep)[0].path == tmp_path / "pyproject.toml"  # pyproject.toml comes before tox.ini
    assert find(deep)[0].override_args() == ["-o", "trajaudit_strict_pass_k=true", "-o", "trajaudit_judge=m1\nm2",
                                          "-o", "trajaudit_trials=3"]
    (tmp_path / "pytest.toml").write_text('[pytest]\ntrajaudit_principles = "P1"\n')
    assert find(deep)[0].override_args() == ["-o", "trajaudit_principles=P1"]
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no pytest section: skipped
    assert find(deep)[0].path == tmp_path / "pytest.toml"


def test_summarize_takes_a_rollout_for_one_attempt(pytester: pytest.Pytester) -> None:
    """A BenchFlow rollout given to ``summarize`` is one attempt (the plugin's job), not a folder of attempts."""
    job = make_job(pytester.path / "runs", "demo__1")
    audits = pytester.path / "audits"
    audits.mkdir()
    p = trajaudit("summarize", "--audits", audits, job, "--json", cwd=pytester.path)
    assert p.returncode == 1
    assert [r["attempt"] for r in json.loads(p.stdout)["attempts"]] == [str(job)]
    task = make_task(pytester.path / "tasks")
    audit = trajaudit("audit", "--attempt-dir", job, "--task-dir", task, "--no-judge", "--output",
                      audits / "demo.json", cwd=pytester.path)
    assert audit.returncode in (0, 1), audit.stderr
    p = trajaudit("summarize", "--audits", audits, pytester.path / "runs", "--json", cwd=pytester.path)
    rows = json.loads(p.stdout)["attempts"]
    assert [(r["attempt"], r["verdict"]) for r in rows] == [(str(job), json.loads(audit.stdout)["verdict"])]


def test_a_run_without_a_verdict_says_why_on_stderr(pytester: pytest.Pytester) -> None:
    """Exit 10 (incomplete) and 5 (no job) are no FAIL and no approval: one line on stderr says which."""
    make_job(pytester.path / "runs", "job")
    (pytester.path / "empty").mkdir()
    p = trajaudit("runs", "-m", "P1", "-p", "no:randomly", cwd=pytester.path)
    assert p.returncode == 10 and "PR verdict: INCOMPLETE — P2, P11, P16 not run on 1 job" in p.stdout
    assert p.stderr.splitlines()[-1].startswith("trajaudit: exit 10: the run is INCOMPLETE: ")
    p = trajaudit("empty", cwd=pytester.path)
    assert p.returncode == 5
    assert p.stderr.splitlines()[-1] == "trajaudit: exit 5: no job found under the audit paths"
    p = trajaudit("runs", "-p", "no:randomly", "--trajaudit-principles=P1,P2,P11,P16", cwd=pytester.path)
    assert p.returncode == 0 and "trajaudit: exit" not in p.stderr
