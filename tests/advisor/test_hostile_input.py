"""Hostile input to ``trajaudit audit``, each planted by the run being audited: a decoy or empty trajectory, file
names carrying terminal escapes, a key beside an advisor mention, a text of millions of words, a container bomb in
result.json, an output path inside the attempt or through a symlink, a trajectory behind a symlinked directory, and
JSON nested too deep inside a string. Each fails closed: one ``error:`` line (exit 2) or no pass."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from pytest_trajaudit.advisor.core import ISSUE_NO_EVENTS
from pytest_trajaudit.scan.overlap import collapse
from tests.advisor.kit import CLEAN, atif, cli, cli_inprocess, make_attempt, make_task
from tests.taskfactory import SOLUTION_LINES


@pytest.fixture
def task(tmp_path: Path) -> Path:
    return make_task(tmp_path / "tasks")


def run(att: Path, task: Path, *more: str | Path) -> tuple[int, dict | None, str]:
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--no-judge", *more)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr


def one_error_line(err: str) -> bool:
    return err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


LEAK = atif(f"My advisor said to run {SOLUTION_LINES[1]}")


# --- 1. decoys and trajectories with nothing to audit -------------------------------------------------------------

@pytest.mark.parametrize("decoy,content", [
    ("trajectory/acp_trajectory.jsonl", '{"type":"x","text":"ok"}\n{"type":"y","text":"done"}\n'),
    ("agent/claude-code.txt", "all good, nothing to see\n"),
    ("logs/other-trajectory.json", json.dumps(CLEAN)),
])
def test_a_planted_decoy_never_wins(tmp_path: Path, task: Path, decoy: str, content: str) -> None:
    """A decoy beside the run's trajectory: a file of no known format makes the attempt unusable (exit 2, one line);
    a loadable one is audited together with the real one, whose leak still fails the audit."""
    att = make_attempt(tmp_path, trajectory=LEAK, files={decoy: content})
    rc, doc, err = run(att, task)
    if decoy.endswith(".jsonl"):
        assert rc == 2 and doc is None and one_error_line(err) and "no known trajectory format" in err
    else:
        assert rc == 1 and doc is not None and doc["verdict"] == "fail", err
        assert str(att / "agent" / "trajectory.json") in [t["path"] for t in doc["trajectories"]]
    rc, doc, _ = run(att, task, "--trajectory", att / "agent" / "trajectory.json")
    assert rc == 1 and doc is not None and doc["verdict"] == "fail"


def test_a_lone_unknown_format_is_unusable(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, trajectory=None,
                       files={"trajectory/acp_trajectory.jsonl": '{"type":"x","text":"ok"}\n{"type":"y"}\n'})
    rc, doc, err = run(att, task)
    assert rc == 2 and doc is None and one_error_line(err) and "no known trajectory format" in err


@pytest.mark.parametrize("content", ["{}", "[]", "42", '"text"', "null", '{"a": 1}\n{"b": 2}\n',
                                     '[{"x": 1}, {"y": 2}]'])
def test_a_trajectory_of_no_known_format_is_unusable(tmp_path: Path, task: Path, content: str) -> None:
    att = make_attempt(tmp_path)
    t = tmp_path / "t.json"
    t.write_text(content + "\n")
    rc, doc, err = run(att, task, "--trajectory", t)
    assert rc == 2 and doc is None and one_error_line(err), (content, err)


def test_a_trajectory_with_no_events_is_inconclusive(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)
    t = tmp_path / "t.json"
    t.write_text(json.dumps({"schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "x"}, "steps": []}))
    rc, doc, err = run(att, task, "--trajectory", t)
    assert rc == 1 and doc is not None and doc["verdict"] == "inconclusive"
    assert ISSUE_NO_EVENTS in doc["issues"] and ISSUE_NO_EVENTS in err
    assert doc["checks"]["ADV-3"]["status"] == "WARN" and doc["checks"]["ADV-4"]["status"] == "WARN"


# --- 2. agent-chosen names on the error line ------------------------------------------------------------------------

@pytest.mark.parametrize("name,content", [
    ("\x1b]0;PWNED\x07\x1b[2Jtrajectory.json", b""),
    ("x\nerror: forged second line\ntrajectory.json", b"[1,"),
    ("\u202eevil\x9btrajectory.json", b"\xff\xfe\xfd"),
])
def test_error_line_is_one_escaped_line(tmp_path: Path, task: Path, name: str, content: bytes) -> None:
    att = make_attempt(tmp_path, trajectory=None)
    (att / "sub").mkdir()
    (att / "sub" / name).write_bytes(content)
    rc, _, err = run(att, task)
    assert rc == 2 and one_error_line(err), err
    assert not any(c in err[:-1] for c in "\x1b\x07\n\r\u202e\x9b"), err


def test_parser_errors_are_escaped(tmp_path: Path) -> None:
    p = cli("audit", "--attempt-dir", tmp_path, "--bogus\x1b[2J")
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert p.returncode == 2 and len(lines) == 1 and "\x1b" not in p.stderr


# --- 3. a key beside an advisor mention -----------------------------------------------------------------------------

SK = "sk-abcdefghijklmnopqrstuvwxABCDEFGHIJKLMNOPQRSTUVWX"
GH = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_key_cut_by_the_quote_is_never_shown_in_part(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, trajectory=[{"role": "assistant", "content": f"OPENAI_API_KEY={SK} the advisor said so"},
                                             {"role": "assistant", "content": f"token {GH} per the advisor"}])
    out = tmp_path / "audits" / "a.json"
    p = cli("audit", "--attempt-dir", att, "--task-dir", task, "--no-judge", "--output", out)
    assert p.returncode == 1
    for text in (p.stdout, p.stderr, out.read_text()):
        for key in (SK, GH):
            for i in range(len(key) - 12):
                assert key[i:i + 12] not in text, (key[i:i + 12], text[:300])
    quotes = [m["quote"] for m in json.loads(p.stdout)["mechanical"]["advisor_mentions"]]
    assert quotes == ["OPENAI_API_KEY=<REDACTED> the advisor said so", "token <REDACTED> per the advisor"]


# --- 4. millions of words: collapse without a list of every word ------------------------------------------------------

WS = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u1680", "\u2000", "\u2028", "\u3000"]


def test_chunked_collapse_equals_split_join() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice([*WS, "a", "b", "xy", "é", "\u200b"]) for _ in range(rng.randint(0, 80)))
        expected = " ".join(text.split())
        assert collapse(text) == expected
        for chunk in (1, 2, 3, 5, 8, 13):
            assert collapse(text, chunk) == expected, (text, chunk)


def test_collapse_of_many_short_words_is_bounded() -> None:
    text = "ab " * 2_000_000 + "\n  cd\t"
    assert collapse(text) == " ".join(text.split())


def test_running_out_of_memory_is_one_line(tmp_path: Path, task: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_trajaudit.advisor.core as core

    def boom(*a: object, **k: object) -> None:
        raise MemoryError

    monkeypatch.setattr(core, "run_audit", boom)
    att = make_attempt(tmp_path)
    rc, out, err = cli_inprocess("audit", "--attempt-dir", att, "--task-dir", task, "--no-judge")
    assert rc == 2 and out == "" and one_error_line(err) and "out of memory" in err


# --- 5. a container bomb in result.json -------------------------------------------------------------------------------

def test_result_json_container_bomb_is_refused(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, reward=None, files={"result.json": "[" + "{}," * 600_000 + "{}]"})
    rc, doc, err = run(att, task)
    assert rc == 2 and doc is None and one_error_line(err) and "result.json" in err and "too many" in err
    assert "--max-events" in err and "--trajaudit-max-events" not in err  # the option this command has
    rc, doc, err = run(att, task, "--max-events", "1000000")  # raised: the file is read (a list: no reward)
    assert rc in (0, 1) and doc is not None, err
    rc, doc, err = run(att, task, "--max-events", "0")
    assert rc == 2 and doc is None and "--max-events" in err


# --- 6. --output inside the attempt or task, or through a symlinked directory ----------------------------------------

def test_output_inside_the_audited_tree_is_refused(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (att / "advisor").symlink_to(elsewhere)
    (tmp_path / "outlink").symlink_to(att)
    for out in (att / "audit.json", att / "new" / "dir" / "audit.json", task / "audit.json",
                att / "advisor" / "audit.json", tmp_path / "outlink" / "audit.json"):
        rc, doc, err = run(att, task, "--output", out)
        assert rc == 2 and doc is None and one_error_line(err), (out, err)
        assert not out.exists() and not (att / "new").exists()
    assert list(elsewhere.iterdir()) == []
    rc, _, _ = run(att, task, "--output", tmp_path / "audits" / "a.json")
    assert rc == 0 and (tmp_path / "audits" / "a.json").is_file()


# --- 7. a trajectory behind a symlinked directory ----------------------------------------------------------------------

def test_trajectory_through_a_symlinked_directory_is_refused(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path, trajectory=LEAK)
    (tmp_path / "outside" / "sub").mkdir(parents=True)
    (tmp_path / "outside" / "sub" / "trajectory.json").write_text(json.dumps(CLEAN))
    (att / "agent" / "logs").symlink_to(tmp_path / "outside")
    rc, doc, err = run(att, task, "--trajectory", att / "agent" / "logs" / "sub" / "trajectory.json")
    assert rc == 2 and doc is None and one_error_line(err) and "symlink" in err


# --- 8. JSON nested too deep inside a string -----------------------------------------------------------------------------

def test_too_deep_inner_json_is_inconclusive_never_a_pass(tmp_path: Path, task: Path) -> None:
    pad = "[" * 995 + "]" * 995
    traj = [{"role": "assistant", "content": "tool call",
             "arguments": '{"cmd": "the \\u0061dvisor said so", "pad": ' + pad + "}"}]
    att = make_attempt(tmp_path, trajectory=traj)
    rc, doc, err = run(att, task)
    assert rc == 1 and doc is not None and doc["verdict"] == "inconclusive"
    assert any("nested too deep" in i for i in doc["issues"]) and "nested too deep" in err
    assert doc["checks"]["ADV-3"]["status"] == "WARN"


def test_too_deep_json_line_of_a_plain_transcript_is_a_gap(tmp_path: Path, task: Path) -> None:
    att = make_attempt(tmp_path)
    t = tmp_path / "run.txt"
    t.write_text("USER: task\n" + "[" * 1200 + '"the \\u0061dvisor said so"' + "]" * 1200 + "\n")
    rc, doc, _ = run(att, task, "--trajectory", t)
    assert rc == 1 and doc is not None and doc["verdict"] == "inconclusive"


def test_summarize_keeps_the_worst_audit_of_an_attempt(tmp_path: Path, task: Path) -> None:
    """Two trajectories of one attempt audited separately (as a refusal of several candidates asks): the attempt
    is as good as its worst audit, whichever was written last."""
    att = make_attempt(tmp_path / "runs", "a1", trajectory=LEAK, files={"agent/claude-code.txt": "all good\n"})
    out = tmp_path / "audits"
    assert run(att, task, "--trajectory", att / "agent" / "trajectory.json", "--output", out / "1.json")[0] == 1
    assert run(att, task, "--trajectory", att / "agent" / "claude-code.txt", "--output", out / "2.json")[0] == 0
    p = cli("summarize", "--audits", out, att)
    assert p.returncode == 1 and p.stdout.startswith("fail"), p.stdout
    assert os.path.isfile(out / "1.json")
