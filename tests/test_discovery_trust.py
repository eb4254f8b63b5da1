"""Nothing inside a job decides what is audited (the seed's DESIGN.md, ``discover/jobs.py``): planted folders, extra
trajectory files, an oracle label in the trajectory, never hide a run; every trajectory-looking file is audited or
listed.

The layouts are those of real runs: the bundled examples (BenchFlow rollouts, a Harbor claude-code trial with
``agent/claude-code.txt``), Harbor's ATIF ``agent/trajectory.json`` as the claude-code converter writes it (the
corpus's ``labelled/`` trials), and mini-swe-agent's batch output ``<instance>/<instance>.traj.json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_trajaudit.aggregate.verdicts import config_rollup
from pytest_trajaudit.discover.jobs import classify, find_jobs
from pytest_trajaudit.loaders.multi import find_all_jobs
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.settings import Settings
from tests.jobfactory import make_job

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "runs"
GENERAL = "--trajaudit-principles=" + ",".join(f"P{i}" for i in range(1, 17))
CHEAT_READ = {"type": "tool_call", "tool_call_id": "t9", "kind": "read", "title": "Read /oracle/expected_answer.json",
              "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "[1, 2]"}}]}


def _audit(ref, codes=("P1", "P2", "P7")):
    return audit_job(ref, Settings(), [registry()[c] for c in codes], judges=False)


def _atif(*commands: str, agent: str = "claude-code") -> str:
    """Harbor's ATIF as the claude-code converter writes it: one agent step per Bash call with its observation."""
    steps = [{"step_id": 1, "source": "user", "message": "Fix the bug"}]
    for i, cmd in enumerate(commands, start=2):
        steps.append({"step_id": i, "source": "agent", "message": f"Executed Bash toolu_{i}",
                      "tool_calls": [{"tool_call_id": f"toolu_{i}", "function_name": "Bash",
                                      "arguments": {"command": cmd}}],
                      "observation": {"results": [{"source_call_id": f"toolu_{i}", "content": "ok"}]}})
    return json.dumps({"schema_version": "ATIF-v1.2", "session_id": "s", "steps": steps,
                       "agent": {"name": agent, "version": "1", "model_name": "claude-x"}})


def _stream(*commands: str) -> str:
    """Claude Code ``--output-format stream-json`` (Harbor's agent/claude-code.txt): one tool_use per command."""
    lines = [{"type": "system", "subtype": "init", "cwd": "/app", "model": "claude-x", "session_id": "s1",
              "tools": ["Bash"]}]
    for i, cmd in enumerate(commands):
        lines.append({"type": "assistant", "message": {"id": f"m{i}", "role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": cmd}}]}})
        lines.append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok", "is_error": False}]}})
    lines.append({"type": "result", "subtype": "success", "is_error": False, "result": "done"})
    return "".join(json.dumps(x) + "\n" for x in lines)


def _harbor_trial(root: Path, name: str, files: dict[str, str], result: dict | None = None) -> Path:
    d = root / name
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    (d / "verifier").mkdir(parents=True, exist_ok=True)
    (d / "verifier" / "reward.txt").write_text("1.0\n")
    res = result if result is not None else {"task_name": "t", "trial_name": name,
                                             "config": {"agent": {"name": "claude-code", "model_name": "claude-x"}},
                                             "verifier_result": {"rewards": {"reward": 1.0}}}
    (d / "result.json").write_text(json.dumps(res))
    return d


# --- 1. nothing below a job decides whether it is one --------------------------------------------------------

@pytest.fixture
def runs(pytester: pytest.Pytester) -> Path:
    dst = pytester.path / "runs"
    shutil.copytree(EXAMPLES, dst)
    return dst


def test_planted_run_folder_inside_the_cheating_job_keeps_it_audited(pytester: pytest.Pytester, runs: Path) -> None:
    """A planted ``oracle/result.json`` (an oracle-looking nested run) inside the cheating BenchFlow job: the job
    is still audited (REJECT, exit 1) and the nested folder is a P7 finding on it, never a job of its own."""
    cheat = runs / "benchflow" / "citation-check__Cheat01"
    (cheat / "oracle").mkdir()
    (cheat / "oracle" / "result.json").write_text(json.dumps({"agent": "oracle", "rewards": {"reward": 1.0}}))
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", GENERAL)
    result.stdout.fnmatch_lines([
        "4 job(s): 1 CLEAN, 1 WARN, 1 INVALID, 1 ORACLE",
        "PR verdict: REJECT — INVALID job: runs/benchflow/citation-check__Cheat01",
        "INVALID runs/benchflow/citation-check__Cheat01/result.json: P1 FAIL:*",
    ])
    assert "runs/benchflow/citation-check__Cheat01/oracle" not in result.stdout.str().replace(
        "runs/benchflow/citation-check__Cheat01/oracle ", "")
    assert result.ret == 1
    [ref] = find_jobs(cheat)
    p7 = _audit(ref).results["P7"]
    assert p7.status == "WARN" and "oracle" in p7.evidence and p7.data["nested_runs"] == ["oracle"]


def test_empty_attempts_folder_inside_a_harbor_trial_keeps_it_a_job(tmp_path: Path) -> None:
    """An empty ``attempts/`` planted in a Harbor claude-code trial: the trial is still the job."""
    trial = _harbor_trial(tmp_path, "t__1", {"agent/claude-code.txt": _stream("cat /oracle/solve.sh")})
    (trial / "attempts").mkdir()
    [ref] = find_jobs(tmp_path)
    assert (ref.dir, ref.layout) == (trial, "harbor-trial")
    assert _audit(ref).results["P1"].status == "FAIL"


def test_nested_trajectory_and_attempts_inside_a_job_are_compared_not_jobs(tmp_path: Path) -> None:
    """A trial with its own trajectory and a planted ``attempts/001/agent/trajectory.json``: one job, audited from
    its own claude-code.txt; the planted attempt is read, compared (its extra command is a P7 WARN naming both
    files) and reported as a nested run."""
    trial = _harbor_trial(tmp_path, "t__1", {
        "agent/claude-code.txt": _stream("cat /oracle/solve.sh"),
        "attempts/001/agent/trajectory.json": _atif("ls"),
    })
    [ref] = find_jobs(tmp_path)
    assert ref.dir == trial
    a = _audit(ref)
    assert a.meta["trajectory_file"].endswith("agent/claude-code.txt")
    assert a.results["P1"].status == "FAIL"
    p7 = a.results["P7"]
    assert p7.status == "WARN"
    assert "attempts/001/agent/trajectory.json names 1 command(s)" in p7.evidence and "`ls`" in p7.evidence
    assert p7.data["nested_runs"] == ["attempts"]


def test_real_multi_attempt_trial_is_a_container_of_its_attempts(tmp_path: Path) -> None:
    """Harbor's multi-attempt layout: a trial dir whose own root has no trajectory, its attempts under
    ``attempts/NNN/`` each a job."""
    trial = tmp_path / "t__1"
    _harbor_trial(trial / "attempts", "001", {"agent/trajectory.json": _atif("ls")})
    _harbor_trial(trial / "attempts", "002", {"agent/claude-code.txt": _stream("pwd")})
    (trial / "result.json").write_text(json.dumps({"task_name": "t", "trial_name": "t__1"}))
    refs = find_jobs(tmp_path)
    assert [(r.dir.name, r.layout) for r in refs] == [("001", "attempt"), ("002", "attempt")]
    assert classify(trial) is None


def test_trial_result_json_beside_a_planted_run_folder_stays_a_trial(tmp_path: Path) -> None:
    """A result-only trial (no agent/, no verifier/: the skillsbench archive keeps many) with a planted folder
    holding a result.json: its own result.json names a trial, so it is the job; a Harbor job folder
    (``n_total_trials``) above its trials stays a container."""
    trial = tmp_path / "job" / "t__1"
    trial.mkdir(parents=True)
    (trial / "result.json").write_text(json.dumps({"task_name": "t", "trial_name": "t__1"}))
    (trial / "x").mkdir()
    (trial / "x" / "result.json").write_text(json.dumps({"agent": "oracle"}))
    (tmp_path / "job" / "result.json").write_text(json.dumps({"id": "j", "n_total_trials": 1, "stats": {}}))
    refs = find_jobs(tmp_path)
    assert [(r.dir, r.layout) for r in refs] == [(trial, "harbor-trial")]


# --- 2. every trajectory-looking file is audited or listed ----------------------------------------------------

def test_unreadable_candidates_are_listed_not_audited(pytester: pytest.Pytester, runs: Path) -> None:
    """A garbage ``agent/trajectory.json`` beside Harbor's claude-code.txt, and a loose ``*.trajectory.json`` in a
    container that no format reads: the first is listed as not audited (terminal and summary.json), the second
    is a job whose load says why (ERROR), never dropped."""
    (runs / "harbor-job" / "csv-stats__Clean01" / "agent" / "trajectory.json").write_text("{not json")
    (runs / "harbor-job" / "stray.trajectory.json").write_text('{"hello": 1}')
    result = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-principles=P1,P2",
                                "--trajaudit-report=out")
    result.stdout.fnmatch_lines([
        "5 job(s):*1 ERROR*",
        "ERROR   runs/harbor-job/stray.trajectory.json:*no known trajectory format*",
        "not audited: runs/harbor-job/csv-stats__Clean01/agent/trajectory.json: *",
    ])
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    assert [(e["job"], e["path"]) for e in summary["not_audited"]] == [
        ("runs/harbor-job/csv-stats__Clean01", "agent/trajectory.json")]
    report = (pytester.path / "out" / "report.md").read_text()
    assert "## Not audited" in report and "csv-stats__Clean01/agent/trajectory.json" in report


def test_loose_trajectory_named_files_are_jobs_by_name_or_content(tmp_path: Path) -> None:
    """In a container: a ``*.trajectory.json`` is a job whatever its content (its load decides), a mini-swe-agent
    file is a job by its content under any ``.json`` name, an unrelated ``notes.json`` is nothing."""
    (tmp_path / "a.trajectory.json").write_text(_atif("ls"))
    (tmp_path / "run.json").write_text(json.dumps({"info": {"mini_version": "1.0", "exit_status": "Submitted"},
                                                    "messages": [], "trajectory_format": "mini-swe-agent-1"}))
    (tmp_path / "notes.json").write_text('{"todo": []}')
    names = sorted(r.anchor.name for r in find_all_jobs(tmp_path))
    assert names == ["a.trajectory.json", "run.json"]


# --- 3. several candidate trajectories -------------------------------------------------------------------------

def test_planted_acp_file_never_wins_over_harbors_own_trajectory(tmp_path: Path) -> None:
    """A planted ``agent/acp_trajectory.jsonl`` (benign) beside Harbor's ``agent/claude-code.txt`` (the cheat):
    the job is audited from claude-code.txt (P1 FAIL), and the planted file's different commands are a P7 WARN
    naming both files."""
    benign = ('{"type":"user_message","text":"do x"}\n'
              '{"type":"tool_call","tool_call_id":"t1","kind":"execute","title":"`python solve.py`",'
              '"status":"completed","content":[]}\n')
    trial = _harbor_trial(tmp_path, "t__1", {"agent/claude-code.txt": _stream("cat /oracle/solve.sh"),
                                             "agent/acp_trajectory.jsonl": benign})
    [ref] = find_jobs(tmp_path)
    a = _audit(ref)
    assert a.meta["trajectory_file"] == str(trial / "agent/claude-code.txt")
    assert a.results["P1"].status == "FAIL"
    p7 = a.results["P7"]
    assert p7.status == "WARN"
    assert "agent/acp_trajectory.jsonl" in p7.evidence and "agent/claude-code.txt" in p7.evidence


def test_overwritten_primary_is_caught_by_the_other_formats(tmp_path: Path) -> None:
    """The run in three formats (stream-json, ATIF, session transcript, as Harbor keeps a claude-code trial),
    with the audited claude-code.txt rewritten to hide a command the ATIF file still records: P7 WARN."""
    trial = _harbor_trial(tmp_path, "t__1", {"agent/claude-code.txt": _stream("ls"),
                                             "agent/trajectory.json": _atif("ls", "cat /tests/test_outputs.py")})
    [ref] = find_jobs(tmp_path)
    p7 = _audit(ref).results["P7"]
    assert p7.status == "WARN" and "cat /tests/test_outputs.py" in p7.evidence
    assert p7.data["disagreements"][0]["file"] == "agent/trajectory.json"
    assert trial.name in str(ref.dir)


def test_formats_that_agree_give_no_warning(tmp_path: Path) -> None:
    """The same commands in ATIF and stream-json, in another order and with a repeat (the formats legitimately
    differ in order and dedupe): no disagreement; the audited file holding more than the other is none either."""
    _harbor_trial(tmp_path, "t__1", {"agent/claude-code.txt": _stream("ls", "pytest -q", "ls", "git  diff"),
                                     "agent/trajectory.json": _atif("git diff", "ls")})
    [ref] = find_jobs(tmp_path)
    a = _audit(ref)
    assert a.results["P7"].status == "PASS", a.results["P7"].evidence
    assert a.meta["compared"] == ["agent/trajectory.json"] and a.meta["disagreements"] == []


def test_no_real_corpus_job_has_disagreeing_or_nested_records(corpus: Path) -> None:
    """Measured on every real job of the corpus (the labelled trials keep each run in three formats): no
    disagreement, no nested run, and every file that was not read is named with its reason."""
    checked = 0
    for tree in ("harbor", "skillsbench-archive", "labelled"):
        for ref in find_all_jobs(corpus / tree):
            meta = _audit(ref, ("P7",)).meta
            assert meta.get("disagreements", []) == [] and meta.get("nested_runs", []) == [], ref.dir
            checked += len(meta.get("compared") or [])
    assert checked >= 30  # the labelled claude-code trials: ATIF + session transcript beside claude-code.txt


# --- 4. oracle status ---------------------------------------------------------------------------------------

def test_oracle_name_in_the_trajectory_does_not_make_an_oracle(tmp_path: Path) -> None:
    """An ATIF trajectory whose ``agent.name`` is "oracle" (the agent writes its trajectory) in a trial whose
    result.json names no agent, and a bare ATIF file with that name: both audited (P1 FAIL), neither ORACLE."""
    trial = _harbor_trial(tmp_path / "runs", "oracle__1", {"agent/trajectory.json": _atif("cat /oracle/solve.sh",
                                                                                          agent="oracle")},
                          result={"task_name": "t", "trial_name": "oracle__1"})
    bare = tmp_path / "loose" / "x.trajectory.json"
    bare.parent.mkdir()
    bare.write_text(_atif("cat /oracle/solve.sh", agent="oracle"))
    for ref in [*find_jobs(trial), *find_all_jobs(bare)]:
        a = _audit(ref)
        assert a.meta["oracle"] is False and a.results["P1"].status == "FAIL", ref


def test_oracle_label_with_agent_tool_calls_is_audited_and_flagged(tmp_path: Path) -> None:
    """result.json names the oracle but the trajectory holds tool calls: audited as an agent run, P7 WARN."""
    _harbor_trial(tmp_path, "t__oracle", {"agent/claude-code.txt": _stream("cat /oracle/solve.sh")},
                  result={"task_name": "t", "trial_name": "t__oracle", "config": {"agent": {"name": "oracle"}},
                          "verifier_result": {"rewards": {"reward": 1.0}}})
    [ref] = find_jobs(tmp_path)
    a = _audit(ref)
    assert a.meta["oracle"] is False and a.results["P1"].status == "FAIL"
    assert a.results["P7"].status == "WARN" and "name the oracle" in a.results["P7"].evidence


def test_oracle_named_by_config_json_without_a_trajectory_is_an_oracle(tmp_path: Path) -> None:
    """Harbor's trial config.json names the oracle agent and no trajectory exists: ORACLE, as result.json would."""
    d = tmp_path / "t__1"
    d.mkdir()
    (d / "result.json").write_text(json.dumps({"task_name": "t", "trial_name": "t__1",
                                               "verifier_result": {"rewards": {"reward": 1.0}}}))
    (d / "config.json").write_text(json.dumps({"agent": {"name": "oracle"}}))
    [ref] = find_jobs(tmp_path)
    assert _audit(ref).meta["oracle"] is True


def test_folder_named_oracle_is_no_oracle(tmp_path: Path) -> None:
    """A folder name is no oracle record: a BenchFlow job folder ``oracle-run`` with a cheating trajectory and no
    agent in result.json is audited."""
    job = make_job(tmp_path, "oracle-run", lines=[{"type": "user_message", "text": "do x"}, CHEAT_READ])
    [ref] = find_jobs(job)
    assert _audit(ref).results["P1"].status == "FAIL"


# --- 6. mini-swe-agent batch layout --------------------------------------------------------------------------

def test_mini_swe_agent_batch_layout_is_found_by_content(tmp_path: Path, corpus: Path) -> None:
    """mini-swe-agent's batch output ``<instance>/<instance>.traj.json`` (no Harbor parent): each is a job, found
    from its first 4 KiB (the real files are the repository's own fixtures, legacy list-of-messages shape)."""
    for src in sorted((corpus / "mini-swe-agent").glob("*.traj.json")):
        inst = src.name.removesuffix(".traj.json")
        (tmp_path / inst).mkdir()
        shutil.copy(src, tmp_path / inst / src.name)
    refs = find_all_jobs(tmp_path)
    assert sorted(r.anchor.name for r in refs) == ["github_issue.traj.json", "local.traj.json"]
    for ref in refs:
        a = audit_job(ref, Settings(), [registry()["P7"]], judges=False)
        assert a.error is None and a.meta["trajectory_format"] == "mini-swe-agent"
        assert a.results["P7"].data["total"] > 0


# --- 7. configs keyed by agent and model --------------------------------------------------------------------

def test_configs_are_keyed_by_agent_and_model_of_each_job() -> None:
    """Two Inspect runs with different models in one tree (their records name no agent beyond the solver):
    each model is its own configuration; one model keeps the plain name."""
    jobs = [{"job": "a.eval::1", "config": "react", "verdict": "CLEAN", "reward": 1.0, "agent": "react",
             "model": "anthropic/claude-opus-4-1"},
            {"job": "b.eval::1", "config": "react", "verdict": "WARN", "reward": 0.0, "agent": "react",
             "model": "openai/gpt-5"},
            {"job": "c", "config": "codex", "verdict": "CLEAN", "reward": 1.0, "agent": "codex", "model": "m"}]
    out = config_rollup(jobs)
    assert list(out) == ["codex", "react@anthropic/claude-opus-4-1", "react@openai/gpt-5"]
    assert out["react@openai/gpt-5"]["model"] == "openai/gpt-5" and out["react@openai/gpt-5"]["rewards"] == [0.0]


def test_not_audited_names_are_escaped(tmp_path: Path) -> None:
    """A planted file whose name carries a terminal escape (``ESC[2J`` clears the screen) is listed as not audited
    with the escape made visible, in the job's meta and so in every report and terminal line."""
    trial = _harbor_trial(tmp_path, "t__1", {"agent/claude-code.txt": _stream("ls")})
    (trial / "agent" / "x\x1b[2J.trajectory.json").write_text("{not json")
    [ref] = find_jobs(tmp_path)
    [entry] = _audit(ref).meta["not_audited"]
    assert entry["path"] == "agent/x\\x1b[2J.trajectory.json" and "\x1b" not in entry["reason"]


def test_loose_session_logs_are_jobs_by_content(tmp_path: Path, corpus: Path) -> None:
    """An agent's own JSON Lines log lying loose in a runs tree, whatever its name: a Claude Code session transcript
    (``<uuid>.jsonl``), a Codex rollout, a ``codex exec --json`` stream (the corpus's real files) is a job, found
    from the complete lines of its first 4 KiB; a data file of JSON lines is not."""
    found = {r.anchor.name for t in ("claude-code", "codex") for r in find_all_jobs(corpus / t)}
    assert {"ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", "full-session.jsonl",
            "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
            "stream-output-1.jsonl"} <= found
    (tmp_path / "session.jsonl").write_text(_stream("ls", "pwd"))
    (tmp_path / "data.jsonl").write_text('{"x": 1}\n{"x": 2}\n')
    assert [r.anchor.name for r in find_all_jobs(tmp_path)] == ["session.jsonl"]


def test_a_tasks_own_result_json_inside_a_job_is_no_nested_run(tmp_path: Path) -> None:
    """An output file the task asked for (``artifacts/result.json`` holding ``{"mean": 3.2}``) is no run record:
    no P7 finding; one that reads like a run record (trial keys, a reward) is."""
    trial = _harbor_trial(tmp_path, "t__1", {"agent/claude-code.txt": _stream("ls"),
                                             "artifacts/result.json": '{"mean": 3.2}'})
    [ref] = find_jobs(tmp_path)
    assert _audit(ref).results["P7"].status == "PASS"
    (trial / "artifacts" / "result.json").write_text('{"trial_name": "x", "reward": 1.0}')
    assert _audit(ref).results["P7"].data["nested_runs"] == ["artifacts"]


def test_planted_attempts_never_replace_a_trial_with_its_own_agent_folder(tmp_path: Path) -> None:
    """A trial whose trajectory sits where no fixed position names it (a Claude Code session transcript under
    ``agent/sessions/``) and a planted ``attempts/001/`` with a benign trajectory: the trial keeps its own
    ``agent/`` folder, so it stays the job (audited from its session: P1 FAIL), never a container of the plant."""
    trial = _harbor_trial(tmp_path, "t__1", {"agent/sessions/projects/-app/s1.jsonl": _stream("cat /oracle/solve.sh"),
                                             "attempts/001/agent/trajectory.json": _atif("ls")})
    [ref] = find_jobs(tmp_path)
    assert (ref.dir, ref.layout) == (trial, "harbor-trial")
    a = _audit(ref)
    assert a.meta["trajectory_file"].endswith("s1.jsonl") and a.results["P1"].status == "FAIL"


# --- run records no format's sniffer recognises ---------------------------------------------------------------

_OH = {"instance_id": "org__repo-1", "history": [{"id": 0, "source": "user", "action": "message",
                                                   "args": {"content": "fix it"}}]}
_INSPECT_SORTED = json.dumps({"eval": {"task": "t", "model": "m"}, "samples": [], "status": "success",
                              "version": 2}, sort_keys=True)


@pytest.mark.parametrize(("name", "data"), [
    ("output.jsonl", ("\ufeff" + json.dumps(_OH) + "\n").encode("utf-16")),  # UTF-16, which JSON allows
    ("2025-06-01_t.json", _INSPECT_SORTED.encode()),  # an Inspect log saved with sorted keys
    ("traces.json", json.dumps({"tasks": [{"task": "t", "description": "x" * 5000, "runs": []}]}).encode()),
    ("audit.jsonl", b"\n" + json.dumps({"event": "PreToolUse", "tool_name": "Bash"}).encode() + b"\n"),
    ("rollout.jsonl", json.dumps({"type": "session_meta", "payload": {"instructions": "y" * 5000}}).encode()),
])
def test_a_loose_run_record_no_format_claims_is_a_job_never_skipped(pytester: pytest.Pytester, name: str,
                                                                     data: bytes) -> None:
    """A record re-encoded or re-ordered until no format's sniffer recognises it (the Inspect, OpenHands, traces,
    hooklib and Codex variants) is still a job: audited, or an ERROR naming the file; never dropped silently."""
    make_job(pytester.path / "runs", "clean")
    (pytester.path / "runs" / name).write_bytes(data)
    pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=out")
    jobs = [j["job"] for j in json.loads((pytester.path / "out" / "summary.json").read_text())["jobs"]]
    assert any(j.startswith(f"runs/{name}") for j in jobs), jobs


@pytest.mark.parametrize("name", ["data.json", "package.json", "metrics.jsonl", "notes.json"])
def test_loose_json_without_a_run_records_keys_is_no_job(tmp_path: Path, name: str) -> None:
    from pytest_trajaudit.discover.jobs import looks_like_run_record

    data = {"data.json": b'{"rows": [1, 2], "name": "x"}', "package.json": b'{"scripts": {"tool_name": 1}}',
            "metrics.jsonl": b'{"loss": 0.1}\n{"loss": 0.05}\n', "notes.json": b'"the messages": 3'}[name]
    assert not looks_like_run_record(tmp_path / name, data)


def test_a_claude_code_capture_whose_first_line_is_a_warning_is_still_its_json_stream(
        pytester: pytest.Pytester) -> None:
    """Harbor's agent/claude-code.txt interleaves the CLI's plain-text warnings with its JSON stream, the first
    line included: the stream's tool calls are audited (the cheating read FAILs), not read as a transcript."""
    runs = pytester.path / "runs"
    shutil.copytree(EXAMPLES / "harbor-job", runs)
    cc = next(runs.rglob("claude-code.txt"))
    lines = cc.read_text().splitlines()
    use = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "cat /oracle/expected_answer.json"}}]}}
    res = {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_x", "content": "[1, 2]", "is_error": False}]}}
    cc.write_text("\n".join(["Warning: could not find ripgrep; falling back to grep", *lines[:2],
                             json.dumps(use), json.dumps(res), *lines[2:]]) + "\n")
    r = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "-m", "P1")
    r.stdout.fnmatch_lines(["*P1 FAIL*/oracle/expected_answer.json*"])


def test_a_jsonl_slot_file_that_starts_with_text_is_unusable_not_a_transcript(pytester: pytest.Pytester) -> None:
    """An ACP trajectory with a line of text before its stream is never read as a plain-text transcript (whose
    tool calls would all be lost): the job is unusable input naming the file and its first line."""
    runs = pytester.path / "runs"
    shutil.copytree(EXAMPLES / "benchflow" / "citation-check__Cheat01", runs / "cheat")
    acp = next(runs.rglob("acp_trajectory.jsonl"))
    acp.write_text("Warning: something\n" + acp.read_text())
    r = pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs")
    r.stdout.fnmatch_lines(["*acp_trajectory.jsonl: named .json/.jsonl but not JSON: it starts with 'Warning: something'*"])
    assert "APPROVE" not in r.stdout.str() and r.ret != 0
