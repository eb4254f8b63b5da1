"""P12's re-run executes task-provided code only, and only when asked (docs/trust.md "Verifier re-runs").

Every hostile artifact here would create ``ran`` if it were executed. The artifact is what an agent wrote into its
job; the command is the task's (trusted), but a task may name the artifact where a program goes, and a task
directory can itself lie in a job: neither may ever run agent-written bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_trajaudit.principles._rerun import job_code_reason
from pytest_trajaudit.settings import Settings
from tests.principles.builders import run
from tests.principles.test_verifier import _job, _p12, _p12_tasks
from tests.taskfactory import P12_PYTHON, TIGHT_CHECK, make_task


def _marker(tmp_path: Path) -> Path:
    return tmp_path / "ran"


def test_reruns_are_off_by_default(tmp_path):
    """Without --trajaudit-rerun (Settings.rerun) the verifier never starts: N/A with the option to pass."""
    marker = _marker(tmp_path)
    check = f"open({str(marker)!r}, 'w').write('x')\n"
    tasks = _p12_tasks(tmp_path, check)
    f = _p12(tmp_path, tasks, cfg=Settings(tasks_dirs=(tasks,)))
    assert f.status == "N/A"
    assert f.evidence.startswith("re-runs are off: pass --trajaudit-rerun")
    assert not marker.exists()


SH_PAYLOAD = "touch {marker}\n"


@pytest.mark.parametrize(("output", "command", "content"), [
    # a script without an extension: the #! line gives it away, whatever runs it
    ("/root/answer", ["sh", "{output}"], "#!/bin/sh\n" + SH_PAYLOAD),
    # a shell script under a name the suffix list once missed
    ("/root/answer.zsh", ["sh", "{output}"], SH_PAYLOAD),
    ("/root/answer.ps1", ["sh", "{output}"], SH_PAYLOAD),
    # no #! and an innocent name: the command itself runs the artifact as a script
    ("/root/answer.txt", ["bash", "{output}"], SH_PAYLOAD),
    ("/root/answer.txt", ["/usr/bin/env", "A=1", "timeout", "5", "sh", "-e", "{output}"], SH_PAYLOAD),
    ("/root/answer.txt", ["{python}", "-u", "{output}"], "open({marker!r}, 'w').write('x')\n"),
    ("/root/answer.txt", ["{output}"], "#!/bin/sh\n" + SH_PAYLOAD),
], ids=["extensionless-shebang", "zsh", "ps1", "bash-operand", "env-timeout-sh", "python-operand", "as-program"])
def test_agent_written_artifact_is_never_executed(tmp_path, output, command, content):
    marker = _marker(tmp_path)
    p12 = {**P12_PYTHON, "output": output, "command": command}
    text = content.format(marker=str(marker))
    f = _p12(tmp_path, _p12_tasks(tmp_path, TIGHT_CHECK, p12), text, where=f"artifacts/{Path(output).name}")
    assert f.status == "N/A", f.evidence
    assert "code" in f.evidence or "refused" in f.evidence, f.evidence
    assert not marker.exists()


def test_executable_binary_artifact_is_refused(tmp_path):
    f = _p12(tmp_path, _p12_tasks(tmp_path, TIGHT_CHECK, {**P12_PYTHON, "output": "/root/out"}),
             b"\x7fELF\x02\x01\x01" + b"\0" * 64, where="artifacts/out")
    assert f.status == "N/A"
    assert f.evidence == ("the output artifact artifacts/out is an executable binary: re-running the verifier on it "
                          "could execute agent-written code")


def test_task_directory_inside_the_job_is_refused(tmp_path):
    """``--trajaudit-tasks`` pointing into a job: the "task" and its verifier were written by the agent."""
    marker = _marker(tmp_path)
    jobs = tmp_path / "jobs"
    planted = jobs / "demo__1" / "artifacts" / "tasks"
    make_task(planted, "demo", toml={"trajaudit": {"p12": P12_PYTHON}},
              tests={"check.py": f"open({str(marker)!r}, 'w').write('x')\n"})
    cfg = Settings(tasks_dirs=(planted,), rerun=True)
    j = _job(tmp_path, tasks=(planted,), files={"artifacts/out.json": "[1,2,3]"}, cfg=cfg)
    f = run("P12", j, cfg)
    assert f.status == "N/A"
    assert "lies inside the job directory" in f.evidence
    assert not marker.exists()


def test_task_directory_symlinked_into_the_job_is_refused(tmp_path):
    """The same through a symlink: compared by real path."""
    marker = _marker(tmp_path)
    j = _job(tmp_path, files={"artifacts/out.json": "[1,2,3]"})
    inner = j.dir / "artifacts" / "tasks"
    make_task(inner, "demo", toml={"trajaudit": {"p12": P12_PYTHON}},
              tests={"check.py": f"open({str(marker)!r}, 'w').write('x')\n"})
    assert job_code_reason(["{python}", "{tests_dir}/check.py", "{output}"], j.dir, inner / "demo", "/usr/bin") \
        == f"the task directory {inner / 'demo'} lies inside the job directory"
    link = tmp_path / "linked-tasks"
    link.mkdir()
    os.symlink(inner / "demo", link / "demo")
    assert "lies inside the job directory" in job_code_reason(["x"], j.dir, link / "demo", "/usr/bin")


def test_command_naming_a_file_in_the_job_is_refused(tmp_path):
    marker = _marker(tmp_path)
    j = _job(tmp_path, files={"artifacts/out.json": "[1,2,3]", "artifacts/tool": "#!/bin/sh\ntouch " + str(marker)})
    tool = j.dir / "artifacts" / "tool"
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", toml={"trajaudit": {"p12": {**P12_PYTHON, "command": [str(tool), "{output}"]}}},
              tests={"check.py": TIGHT_CHECK})
    cfg = Settings(tasks_dirs=(tasks,), rerun=True)
    j = _job(tmp_path, files={"artifacts/out.json": "[1,2,3]"}, tasks=(tasks,), cfg=cfg)
    f = run("P12", j, cfg)
    assert f.status == "N/A"
    assert f.evidence.startswith(f"re-run refused: the command names {tool}, which lies in the job directory")
    assert not marker.exists()


def test_program_on_path_from_the_job_is_never_found(tmp_path, monkeypatch):
    """A ``PATH`` entry inside the job is dropped for the re-run, so a bare program name cannot resolve there."""
    marker = _marker(tmp_path)
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", toml={"trajaudit": {"p12": {**P12_PYTHON, "command": ["verify-it", "{output}"]}}},
              tests={"check.py": TIGHT_CHECK})
    cfg = Settings(tasks_dirs=(tasks,), rerun=True)
    j = _job(tmp_path, files={"artifacts/out.json": "[1,2,3]", "bin/verify-it": f"#!/bin/sh\ntouch {marker}\n"},
             tasks=(tasks,), cfg=cfg)
    prog = j.dir / "bin" / "verify-it"
    prog.chmod(0o755)
    monkeypatch.setenv("PATH", f"{j.dir / 'bin'}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    f = run("P12", j, cfg)
    assert f.status == "N/A"
    assert not marker.exists()


def test_the_artifact_copy_is_owner_only_and_not_executable(tmp_path):
    """The verifier sees a 0600 copy: even a task command that tries to exec it cannot."""
    probe = tmp_path / "mode"
    check = f"import os, sys\nopen({str(probe)!r}, 'w').write(oct(os.stat(sys.argv[1]).st_mode & 0o777))\nsys.exit(1)\n"
    f = _p12(tmp_path, _p12_tasks(tmp_path, check))
    assert f.status in ("PASS", "N/A", "WARN")
    assert probe.read_text() == "0o600"
