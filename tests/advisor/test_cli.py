"""``trajaudit audit`` and ``trajaudit summarize`` as a user runs them (a subprocess): exit codes 0/1/2, the audit
printed and written with mode 0600, the refusal to overwrite the trajectory, the trajectory lookup order, unusable
input (exit 2, nothing written), privileged-material precedence."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import jsonschema
import pytest

from pytest_trajaudit.advisor.core import ISSUE_NO_MATERIAL
from pytest_trajaudit.report.schema import SCHEMA_DIR
from tests.advisor.kit import (
    CLEAN,
    README_LINE,
    TEST_LINE,
    atif,
    audit_json,
    cli,
    cli_inprocess,
    make_attempt,
    make_task,
    unprivileged,
)
from tests.taskfactory import SOLUTION_LINES


@pytest.fixture
def task(tmp_path: Path) -> Path:
    return make_task(tmp_path / "tasks")


SCHEMA = json.loads((SCHEMA_DIR / "advisor-audit.schema.json").read_text())


def audit(att: Path, task: Path, *more: str | Path, **kw) -> tuple[int, dict | None, str]:
    """Run the command; the JSON it prints always satisfies the shipped schema."""
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, *more, **kw)
    doc = audit_json(p) if p.stdout.strip() else None
    if doc is not None:
        jsonschema.validate(doc, SCHEMA)
    return p.returncode, doc, p.stderr


def test_clean_attempt_passes_mechanical_only_and_writes_0600(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)
    out = tmp_path / "audits" / "audit.json"
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--output", out, "--no-judge")
    assert p.returncode == 0, p.stderr
    doc = audit_json(p)
    jsonschema.validate(doc, SCHEMA)
    assert doc["verdict"] == "pass_mechanical_only"
    assert json.loads(out.read_text()) == doc  # printed and written
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert doc["privileged_roots"] == ["README.md", "solution", "tests"] and doc["layout_source"] == "default"
    assert doc["reward"] == 1.0 and doc["reward_source"] == "result.json"
    assert doc["judge_input_truncated"] is False and doc["privileged_input_truncated"] is False
    assert doc["trajectory"] == str(att / "agent" / "trajectory.json")


def test_overwriting_an_existing_output_keeps_0600(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)
    out = tmp_path / "audit.json"
    out.write_text("old")
    os.chmod(out, 0o644)
    assert audit(att, task, "--output", out, "--no-judge")[0] == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600 and json.loads(out.read_text())["verdict"]


@pytest.mark.parametrize("leak", [SOLUTION_LINES[1], TEST_LINE, README_LINE])
def test_a_verbatim_privileged_line_fails_with_exit_1(tmp_path: Path, task: Path, leak: str) -> None:
    att = make_attempt(tmp_path, trajectory=atif(f"Let me try: {leak}"))
    rc, doc, _ = audit(att, task, "--no-judge")
    assert rc == 1 and doc["verdict"] == "fail"
    assert doc["mechanical"]["verbatim_privileged_lines"] == [" ".join(leak.split())[:60]]
    assert doc["checks"]["ADV-4"]["status"] == "FAIL"


def test_a_copy_inside_tool_call_arguments_fails(tmp_path: Path, task: Path) -> None:
    call = {"tool_call_id": "c1", "function_name": "bash",
            "arguments": json.dumps({"command": f"python3 - <<'EOF'\n{SOLUTION_LINES[0]}\nEOF"})}
    att = make_attempt(tmp_path, trajectory=atif("reading", calls=[call]))
    rc, doc, _ = audit(att, task, "--no-judge")
    assert rc == 1 and doc["mechanical"]["n_verbatim_privileged_lines"] == 1


def test_a_mention_of_the_advisor_fails(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, trajectory=atif("The advisor said the ids must be sorted."))
    rc, doc, _ = audit(att, task, "--no-judge")
    assert rc == 1 and doc["checks"]["ADV-3"]["status"] == "FAIL"
    assert doc["mechanical"]["advisor_mentions"][0]["pattern"] == "advisor"


def test_the_instruction_naming_hidden_tests_is_not_a_mention(tmp_path: Path, task: Path) -> None:
    rc, doc, _ = audit(make_attempt(tmp_path), task, "--no-judge")  # the user turn quotes the instruction
    assert rc == 0 and doc["mechanical"]["mentions_quoting_public_instruction"] >= 1


def test_no_privileged_material_is_inconclusive(tmp_path: Path) -> None:
    empty_task = tmp_path / "wrong-task"
    empty_task.mkdir()
    att = make_attempt(tmp_path, trajectory=atif("done", user_text="Write the ids to /root/out.json."))
    rc, doc, _ = audit(att, empty_task, "--no-judge")
    assert rc == 1 and doc["verdict"] == "inconclusive" and doc["issues"] == [ISSUE_NO_MATERIAL]
    assert doc["material_loaded"] is False


def test_only_binary_material_is_inconclusive_and_a_hit_still_fails(tmp_path: Path) -> None:
    t = make_task(tmp_path / "t", readme=None, solution={"a.bin": b"\x00\x01" * 50}, tests={"b.bin": b"\x00" * 9})
    rc, doc, _ = audit(make_attempt(tmp_path), t, "--no-judge")  # its instruction.md is public: no mention
    assert (rc, doc["verdict"]) == (1, "inconclusive")
    att = make_attempt(tmp_path, "a2", trajectory=atif("my advisor told me"))
    rc, doc, _ = audit(att, t, "--no-judge")
    assert (rc, doc["verdict"]) == (1, "fail") and ISSUE_NO_MATERIAL in doc["issues"]


def test_without_judge_settings_the_judges_are_not_configured_and_inconclusive(tmp_path: Path, task: Path) -> None:
    rc, doc, _ = audit(make_attempt(tmp_path), task)
    assert rc == 1 and doc["verdict"] == "inconclusive"
    assert {o["status"] for o in doc["judges"].values()} == {"not_configured"}
    assert doc["checks"]["ADV-1"]["status"] == "WARN"


@pytest.mark.parametrize("url", ["not a url", "ftp://host/v1", "http://", "localhost:3000"])
def test_invalid_judge_endpoint_is_exit_2(tmp_path: Path, task: Path, url: str) -> None:
    att = make_attempt(tmp_path)
    out = att / "advisor" / "audit.json"
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--judge-model", "m", "--judge-base-url", url,
            "--output", out)
    assert p.returncode == 2 and "invalid judge endpoint" in p.stderr and not out.exists()
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--output", out, env={"JUDGE_MODEL": "m",
                                                                                      "JUDGE_BASE_URL": url})
    assert p.returncode == 2 and not out.exists()
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, env={"ADVISOR_MODEL": "m", "ADVISOR_BASE_URL": url})
    assert p.returncode == 2 and "invalid judge endpoint" in p.stderr  # the advisor's variables are the fallback
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--no-judge", env={"JUDGE_BASE_URL": url})
    assert p.returncode == 0  # --no-judge never looks at the endpoint


# --- privileged-material precedence -----------------------------------------------------------------------------

def test_privileged_root_flag_overrides_the_manifest(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, trajectory=atif(f"so: {README_LINE}"))
    (task / "advisor").mkdir()
    (task / "advisor" / "task_material_manifest.json").write_text(json.dumps({"privileged_roots": ["solution"]}))
    rc, doc, _ = audit(att, task, "--no-judge")
    assert (rc, doc["layout_source"], doc["privileged_roots"]) == (0, "manifest", ["solution"])
    rc, doc, _ = audit(att, task, "--no-judge", "--privileged-root", "README.md", "--privileged-root", "tests")
    assert (rc, doc["layout_source"], doc["privileged_roots"]) == (1, "flag", ["README.md", "tests"])


@pytest.mark.parametrize("root", ["/etc", "../x", ""])
def test_bad_privileged_root_is_exit_2(tmp_path: Path, task: Path, root: str) -> None:
    rc, doc, err = audit(make_attempt(tmp_path), task, "--no-judge", "--privileged-root", root)
    assert rc == 2 and doc is None and err.startswith("error: --privileged-root")


@pytest.mark.parametrize("plant", ["advisor-symlink", "advisor-file", "manifest-symlink", "manifest-dir",
                                   "manifest-garbage", "manifest-bad-roots"])
def test_unknown_layout_is_refused_without_the_flag(tmp_path: Path, task: Path, plant: str) -> None:
    """The task's own layout (``<task-dir>/advisor/task_material_manifest.json``) that cannot be known."""
    att = make_attempt(tmp_path)
    adv = task / "advisor"
    if plant == "advisor-symlink":
        adv.symlink_to(att)
    elif plant == "advisor-file":
        adv.write_text("x")
    else:
        adv.mkdir()
        man = adv / "task_material_manifest.json"
        if plant == "manifest-symlink":
            (tmp_path / "m.json").write_text('{"privileged_roots": ["tests"]}')
            man.symlink_to(tmp_path / "m.json")
        elif plant == "manifest-dir":
            man.mkdir()
        elif plant == "manifest-garbage":
            man.write_text("{nope")
        else:
            man.write_text('{"privileged_roots": ["../../etc"]}')
    out = tmp_path / "out.json"
    rc, doc, err = audit(att, task, "--no-judge", "--output", out)
    assert rc == 2 and doc is None and err.startswith("error: ") and not out.exists()
    rc, doc, _ = audit(att, task, "--no-judge", "--privileged-root", "tests")  # the flag overrides everything
    assert rc == 0 and doc["layout_source"] == "flag"


def test_unreadable_privileged_material_refuses_to_judge(open_tmp: Path) -> None:
    task = make_task(open_tmp / "tasks")
    att = make_attempt(open_tmp)
    os.chmod(open_tmp / "tasks", 0o755)
    os.chmod(task / "tests" / "test_outputs.py", 0)
    os.chmod(task / "solution", 0)
    out = open_tmp / "audits" / "audit.json"
    (open_tmp / "audits").mkdir()
    os.chmod(open_tmp / "audits", 0o777)
    cli_inprocess("audit", "--attempt-dir", att, "--task-dir", open_tmp / "nope")  # warm every import up as root
    rc, stdout, stderr = unprivileged(lambda: cli_inprocess("audit", "--attempt-dir", att, "--task-dir", task,
                                                            "--output", out, "--no-judge"))
    assert rc == 2 and stdout == ""
    assert stderr == f"error: cannot read privileged material in {task}: solution, tests/test_outputs.py\n"
    assert not out.exists()
    os.chmod(task / "tests" / "test_outputs.py", 0o644)
    os.chmod(task / "solution", 0o755)
    rc, stdout, _ = unprivileged(lambda: cli_inprocess("audit", "--attempt-dir", att, "--task-dir", task,
                                                       "--output", out, "--no-judge"))
    assert rc == 0 and json.loads(stdout)["verdict"] == "pass_mechanical_only"


def test_unwritable_output_is_exit_2(open_tmp: Path) -> None:
    task = make_task(open_tmp / "tasks")
    att = make_attempt(open_tmp)
    locked = open_tmp / "locked"
    locked.mkdir(mode=0o555)
    os.chmod(locked, 0o555)
    cli_inprocess("audit", "--attempt-dir", att, "--task-dir", open_tmp / "nope")
    rc, stdout, stderr = unprivileged(lambda: cli_inprocess("audit", "--attempt-dir", att, "--task-dir", task,
                                                            "--output", locked / "a.json", "--no-judge"))
    assert rc == 2 and stdout == "" and "cannot be written" in stderr


# --- output refusals and exit 2 ---------------------------------------------------------------------------------

def test_output_resolving_to_the_trajectory_is_refused(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)
    traj = att / "agent" / "trajectory.json"
    before = traj.read_bytes()
    (tmp_path / "link.json").symlink_to(traj)
    os.link(traj, tmp_path / "hard.json")
    for out in (traj, att / "agent" / ".." / "agent" / "trajectory.json", tmp_path / "link.json",
                tmp_path / "hard.json"):
        rc, doc, err = audit(att, task, "--no-judge", "--output", out)
        assert rc == 2 and doc is None and "would overwrite the audited trajectory" in err
    explicit = tmp_path / "t.json"
    explicit.write_text(json.dumps(atif("x")))
    rc, _, err = audit(att, task, "--no-judge", "--trajectory", explicit, "--output", explicit)
    assert rc == 2 and "would overwrite" in err
    assert traj.read_bytes() == before


def test_output_that_is_a_directory_is_exit_2(tmp_path: Path, task: Path) -> None:
    rc, doc, err = audit(make_attempt(tmp_path), task, "--no-judge", "--output", tmp_path)
    assert rc == 2 and doc is None and "is a directory" in err


@pytest.mark.parametrize("which", ["attempt", "task"])
def test_missing_directories_are_exit_2(tmp_path: Path, task: Path, which: str) -> None:
    att = make_attempt(tmp_path)
    args = (tmp_path / "nope", task) if which == "attempt" else (att, tmp_path / "nope")
    rc, doc, err = audit(*args, "--no-judge")
    assert rc == 2 and doc is None and "not an existing directory" in err


def test_attempt_dir_must_exist_even_with_trajectory(tmp_path: Path, task: Path) -> None:
    t = tmp_path / "t.json"
    t.write_text(json.dumps(atif("x")))
    rc, _, _ = audit(tmp_path / "nope", task, "--no-judge", "--trajectory", t)
    assert rc == 2


def test_no_trajectory_found_is_exit_2(tmp_path: Path, task: Path) -> None:
    rc, doc, err = audit(make_attempt(tmp_path, trajectory=None), task, "--no-judge")
    assert rc == 2 and "no trajectory found" in err


@pytest.mark.parametrize("content", [b"", b"\n \n", b'{"steps": [', b'{"a": 1}{"b": 2}', b'{"a": [1,]}',
                                     b"[INFO] a plain log\n", b"\xff\xfe\xfa\x00garbage", b"[" * 3000 + b"]" * 3000])
def test_unusable_trajectory_is_exit_2(tmp_path: Path, task: Path, content: bytes) -> None:
    att = make_attempt(tmp_path, trajectory=content)
    out = tmp_path / "out.json"
    rc, doc, err = audit(att, task, "--no-judge", "--output", out)
    assert rc == 2 and doc is None and err.startswith("error: ") and not out.exists()


def test_symlinked_or_fifo_trajectory_is_exit_2(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, trajectory=None)
    (att / "agent").mkdir()
    (tmp_path / "real.json").write_text(json.dumps(atif("x")))
    (att / "agent" / "trajectory.json").symlink_to(tmp_path / "real.json")
    rc, _, err = audit(att, task, "--no-judge")
    assert rc == 2 and "symlink" in err
    (att / "agent" / "trajectory.json").unlink()
    os.mkfifo(att / "agent" / "trajectory.json")
    rc, _, err = audit(att, task, "--no-judge")
    assert rc == 2 and "not a regular file" in err


@pytest.mark.parametrize("rel", ["result.json", "verifier/reward.txt"])
def test_reward_file_that_cannot_be_read_is_exit_2(tmp_path: Path, task: Path, rel: str) -> None:
    att = make_attempt(tmp_path, reward=None)
    (att / rel).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(att / rel)
    rc, doc, err = audit(att, task, "--no-judge")
    assert rc == 2 and doc is None and "cannot be read" in err
    os.unlink(att / rel)
    (tmp_path / "r").write_text("1")
    (att / rel).symlink_to(tmp_path / "r")
    rc, doc, err = audit(att, task, "--no-judge")
    assert rc == 2 and "symlink" in err


@pytest.mark.parametrize("result,reward_txt,expected", [
    (1.0, None, (1.0, "result.json")),
    (None, "0.5\n", (0.5, "verifier/reward.txt")),
    (None, "not a number", (None, None)),
    (None, None, (None, None)),
    ("garbage", "1", (1.0, "verifier/reward.txt")),
    ("garbage", None, (None, None)),
    (0.0, "1", (0.0, "result.json")),
])
def test_reward_is_read_never_judged(tmp_path: Path, task: Path, result, reward_txt, expected) -> None:
    att = make_attempt(tmp_path, reward=result if isinstance(result, float) else None, reward_txt=reward_txt)
    if result == "garbage":
        (att / "result.json").write_text("{not json")
    rc, doc, _ = audit(att, task, "--no-judge")
    assert rc == 0 and (doc["reward"], doc["reward_source"]) == expected
    assert doc["checks"]["ADV-5"]["status"] == {1.0: "PASS", 0.5: "WARN", 0.0: "WARN", None: "N/A"}[expected[0]]


# --- the trajectory lookup order --------------------------------------------------------------------------------

LOOKUP = ["agent/trajectory.json", "agent/mini-swe-agent.trajectory.json", "trajectory.json",
          "logs/run/my-trajectory.json"]


@pytest.mark.parametrize("rel", LOOKUP)
def test_one_candidate_trajectory_is_found(tmp_path: Path, task: Path, rel: str) -> None:
    files = {rel: json.dumps(atif(f"file {rel}")), "advisor/advisor_trajectory.json": json.dumps(atif("the advisor's"))}
    att = make_attempt(tmp_path, trajectory=None, files=files)
    rc, doc, _ = audit(att, task, "--no-judge")
    assert rc == 0 and doc["trajectory"] == str(att / rel)


@pytest.mark.parametrize("first", range(len(LOOKUP)))
def test_several_candidate_trajectories_are_audited_together(tmp_path: Path, task: Path, first: int) -> None:
    """However the candidates are placed, none stands in for the others (a run could plant the one the order
    prefers): all are read and scanned as one, each named with its hash; ``--trajectory`` audits one."""
    files = {rel: json.dumps(atif(f"file {rel}")) for rel in LOOKUP[first:]}
    files["a/b/c/deeper-trajectory.json"] = json.dumps(atif("deeper, and my advisor said so"))
    att = make_attempt(tmp_path, trajectory=None, files=files)
    rc, doc, _ = audit(att, task, "--no-judge")
    assert rc == 1 and doc["verdict"] == "fail"  # the mention in the last candidate counts
    listed = [t["path"] for t in doc["trajectories"]]
    assert sorted(listed) == sorted(str(att / r) for r in [*LOOKUP[first:], "a/b/c/deeper-trajectory.json"])
    assert doc["trajectory"] == listed[0] and all(len(t["sha256"]) == 64 for t in doc["trajectories"])
    rc, doc, _ = audit(att, task, "--no-judge", "--trajectory", att / LOOKUP[first])
    assert rc == 0 and doc["trajectory"] == str(att / LOOKUP[first]) and "trajectories" not in doc


def test_advisor_folder_is_never_searched(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, trajectory=None, files={"advisor/trajectory-advisor.json": json.dumps(atif("x"))})
    rc, _, err = audit(att, task, "--no-judge")
    assert rc == 2 and "no trajectory found" in err


def test_explicit_trajectory_is_used_as_given(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)  # has agent/trajectory.json
    chat = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "my advisor says hi"}]
    t = tmp_path / "loop.json"
    t.write_text(json.dumps(chat))
    rc, doc, _ = audit(att, task, "--no-judge", "--trajectory", t)
    assert rc == 1 and doc["trajectory"] == str(t) and doc["trajectory_format"] == "json"
    (tmp_path / "link.json").symlink_to(t)
    rc, doc, err = audit(att, task, "--no-judge", "--trajectory", tmp_path / "link.json")
    assert rc == 2 and doc is None and "symlink" in err  # used as given, but never through a symlink


def test_jsonl_and_plain_text_trajectories(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)
    jl = tmp_path / "run.jsonl"
    jl.write_text("\n".join(json.dumps(v) for v in (
        {"type": "system", "subtype": "init", "session_id": "s"},
        *({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": c}]},
           "session_id": "s"} for c in ("a", SOLUTION_LINES[2])))))
    rc, doc, _ = audit(att, task, "--no-judge", "--trajectory", jl)
    assert (rc, doc["trajectory_format"], doc["mechanical"]["n_verbatim_privileged_lines"]) == (1, "jsonl", 1)
    txt = tmp_path / "run.txt"
    txt.write_text("USER: task\nASSISTANT: done, nothing copied\n")
    rc, doc, _ = audit(att, task, "--no-judge", "--trajectory", txt)
    assert (rc, doc["trajectory_format"]) == (0, "text")


def test_judge_copy_is_clipped_and_flagged(tmp_path: Path, task: Path) -> None:
    big = atif("x" * 250_000)
    rc, doc, _ = audit(make_attempt(tmp_path, trajectory=big), task, "--no-judge")
    assert rc == 0 and doc["judge_input_truncated"] is True and doc["privileged_input_truncated"] is False


# --- summarize --------------------------------------------------------------------------------------------------

def test_manifest_planted_in_the_attempt_is_never_read(tmp_path: Path, task: Path) -> None:
    """A run that copies the solution verbatim and plants ``advisor/task_material_manifest.json`` in its own attempt
    (naming a root that holds nothing, or a symlink, or garbage): the layout still comes from the task side, the
    leak fails (exit 1)."""
    for i, planted in enumerate(['{"privileged_roots": ["nothing-here"]}', '{"privileged_roots": []}', "{nope"]):
        att = make_attempt(tmp_path / str(i), trajectory=atif(f"Using {SOLUTION_LINES[1]}"),
                           files={"advisor/task_material_manifest.json": planted})
        rc, doc, _ = audit(att, task, "--no-judge")
        assert (rc, doc["verdict"], doc["layout_source"]) == (1, "fail", "default"), planted


def test_summarize(tmp_path: Path, task: Path) -> None:
    """Audits written by ``trajaudit audit --output`` to a directory outside the attempts: the verdict of each, a
    missing one for an attempt never audited, an audit that is not this tool's (or broken) an error."""
    runs, out = tmp_path / "runs", tmp_path / "audits"
    out.mkdir()
    good = make_attempt(runs, "a1")
    bad = make_attempt(runs, "a2", trajectory=atif("The advisor said so."))
    make_attempt(runs, "a3")  # never audited
    for att in (good, bad):
        cli("audit", "--attempt-dir", att, "--task-dir", task, "--no-judge", "--output", out / f"{att.name}.json")
    p = cli("summarize", "--audits", out, runs)
    assert p.returncode == 1
    assert p.stdout.splitlines()[-1] == "3 attempt(s): 1 fail, 1 missing, 1 pass_mechanical_only"
    p = cli("summarize", "--audits", out, good)
    assert p.returncode == 0 and p.stdout.startswith("pass_mechanical_only")
    p = cli("summarize", "--audits", out, runs, "--json")
    assert {r["verdict"] for r in json.loads(p.stdout)["attempts"]} == {"pass_mechanical_only", "fail", "missing"}
    (out / "a1.json").write_text("{broken")
    assert cli("summarize", "--audits", out, good).returncode == 2
    assert cli("summarize", "--audits", tmp_path / "nope").returncode == 2
    assert cli("summarize", runs).returncode == 2  # --audits is required: no audit is looked for in the attempts


def test_summarize_never_trusts_an_audit_inside_an_attempt(tmp_path: Path, task: Path) -> None:
    """A planted ``advisor/audit.json`` saying pass beside a broken trajectory: summarize never reads it (the
    attempt has no audit in the user's directory: missing, exit 1); an audit directory inside the audited tree is
    refused (exit 2); an audit whose trajectory changed after it was written is an error (exit 2)."""
    runs, out = tmp_path / "runs", tmp_path / "audits"
    out.mkdir()
    att = make_attempt(runs, "a1", trajectory="{broken")
    (att / "advisor").mkdir()
    (att / "advisor" / "audit.json").write_text(json.dumps({"verdict": "pass", "verdict_reasons": []}))
    p = cli("summarize", "--audits", out, att)
    assert p.returncode == 1 and p.stdout.startswith("missing")
    assert cli("summarize", "--audits", att / "advisor", att).returncode == 2
    p = cli("summarize", "--audits", att / "advisor")
    assert p.returncode == 2 and "not written by trajaudit audit" in p.stdout
    ok = make_attempt(runs, "a2")
    cli("audit", "--attempt-dir", ok, "--task-dir", task, "--no-judge", "--output", out / "a2.json")
    assert cli("summarize", "--audits", out, ok).returncode == 0
    (ok / "agent" / "trajectory.json").write_text(json.dumps(atif(f"Using {SOLUTION_LINES[1]}")))
    p = cli("summarize", "--audits", out, ok)
    assert p.returncode == 2 and "changed since the audit" in p.stdout
    planted_in_tree = ok / "audits"  # an audit the command refuses to write there, copied in by hand
    planted_in_tree.mkdir()
    (ok / "agent" / "trajectory.json").write_text(json.dumps(CLEAN))
    cli("audit", "--attempt-dir", ok, "--task-dir", task, "--no-judge", "--output", out / "a2.json")
    (planted_in_tree / "a2.json").write_bytes((out / "a2.json").read_bytes())
    p = cli("summarize", "--audits", planted_in_tree)
    assert p.returncode == 2 and "inside the audited attempt" in p.stdout


# --- judge settings precedence (in-process: nothing is sent) -------------------------------------------------------

def _cfg(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], *flags: str):
    from pytest_trajaudit.advisor.cli import _audit_parser, _judge_config

    for k in ("JUDGE_MODEL", "JUDGE_BASE_URL", "ADVISOR_MODEL", "ADVISOR_BASE_URL", "JUDGE_API_KEY", "MY_KEY"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    args = _audit_parser().parse_args(["--attempt-dir", ".", "--task-dir", ".", "--judge-cache", "off", *flags])
    return _judge_config(args)


def test_judge_settings_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    both = {"JUDGE_MODEL": "jm", "ADVISOR_MODEL": "am", "JUDGE_BASE_URL": "http://j:1/v1",
            "ADVISOR_BASE_URL": "http://a:1/v1", "JUDGE_API_KEY": "jk", "MY_KEY": "mk"}
    cfg, why = _cfg(monkeypatch, both)
    assert (cfg.models, cfg.base_url, cfg.api_key, cfg.provider, why) == (("jm",), "http://j:1/v1", "jk", "openai",
                                                                          None)
    cfg, _ = _cfg(monkeypatch, {"ADVISOR_MODEL": "am", "ADVISOR_BASE_URL": "http://a:1/v1"})
    assert (cfg.models, cfg.base_url, cfg.api_key) == (("am",), "http://a:1/v1", None)
    cfg, _ = _cfg(monkeypatch, both, "--judge-model", "fm", "--judge-base-url", "https://f/v1",
                  "--judge-api-key-env", "MY_KEY", "--judge-provider", "anthropic")
    assert (cfg.models, cfg.base_url, cfg.api_key, cfg.provider) == (("fm",), "https://f/v1", "mk", "anthropic")
    cfg, why = _cfg(monkeypatch, {"JUDGE_BASE_URL": "http://j:1/v1"})
    assert cfg is None and why.startswith("no judge model configured")
