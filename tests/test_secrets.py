"""Evidence and reports never contain a secret.

Synthetic keys of every common shape are planted in every field the plugin can quote (commands, tool outputs,
messages, thoughts, file paths, result.json fields, the verifier's test names and messages, its stdout, task names,
prompts, record ids of a multi-record file, unusable-input error text) of jobs built to FAIL/WARN, so their
evidence quotes those fields. No key may appear in the terminal output, the JUnit XML, the CTRF file,
``summary.json``, the per-job audit JSON or ``report.md``. Report files are written owner-only (0600) and
atomically (no temporary file is left behind).

None of these keys is real: each is assembled here from a shape prefix and filler.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from pathlib import Path

import pytest

from pytest_trajaudit.scan.redact import redact
from tests.jobfactory import make_job

F = "Q7x9K2m4P8w3R6t1Y5u0"  # filler: letters and digits, never a real key
SECRETS = {
    "openai": "sk-" + F + "abcd",
    "openai-project": "sk-proj-" + F + F,
    "anthropic": "sk-ant-api03-" + F + "-_" + F,
    "openrouter": "sk-or-v1-" + F.lower() + "0123456789ab",
    "aws-key-id": "AKIA" + "Z7Y6X5W4V3U2T1S0",
    "aws-secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + F[:10],
    "github-classic": "ghp_" + F + "aB3dE5gH7jK9mN1p",
    "github-fine": "github_pat_" + F + "_" + F + F,
    "slack": "xoxb-" + "123456789012-1234567890123-" + F,
    "google": "AIza" + "Sy" + F + "abcdefghijklm",
    "huggingface": "hf_" + F + "abcdefghijklmn",
    "gitlab": "glpat-" + F,
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ." + F + "SflKxwRJSMeKKF2QT4fwpM",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + F + "\n" + F + "AQAB\n-----END RSA PRIVATE KEY-----",
    "bearer": "Bearer " + F + "zz.yy",
    "url-password": "https://deploy:Hunter2" + F[:8] + "@git.example.com/repo.git",
    "password-query": "https://api.example.com/login?user=bob&password=Sup3rS3cret" + F[:6],
}
# what must never appear: the key material itself (for the bearer token and URLs, the secret part)
NEEDLES = {name: s for name, s in SECRETS.items()}
NEEDLES["pem"] = "MIIEow" + F
NEEDLES["bearer"] = F + "zz.yy"
NEEDLES["url-password"] = "Hunter2" + F[:8]
NEEDLES["password-query"] = "Sup3rS3cret" + F[:6]
NEEDLES["aws-secret"] = "wJalrXUtnFEMI/K7MDENG"


def test_redact_covers_every_shape() -> None:
    for name, s in SECRETS.items():
        for text in (s, f"x {s} y", f'"{s}"', f"KEY={s}", f"see ({s}).", f"line\\n{s}"):
            out = redact(text if name != "aws-secret" else f"aws_secret_access_key = {s}")
            assert NEEDLES[name] not in out, (name, text, out)


def _all(s: str) -> str:
    return " ".join(v if k != "aws-secret" else f"aws_secret_access_key={v}" for k, v in SECRETS.items()) + " " + s


def build(root: Path) -> None:
    runs = root / "runs"
    secrets_text = _all("")
    one_line = " ".join(v if k != "aws-secret" else f"aws_secret_access_key={v}" for k, v in SECRETS.items()
                        if k != "pem")  # a bare AWS secret has no shape: it is found by its label
    lines = [
        {"type": "user_message", "text": "task: " + secrets_text},
        {"type": "agent_thought", "text": "I recall the answer key; " + secrets_text},
        # P1: a successful read of privileged material whose path and output hold keys
        {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": f"Read /oracle/{SECRETS['openai']}/expected_answer.json",
         "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": secrets_text}}]},
        # P2: writing a conftest.py whose command line holds keys
        {"type": "tool_call", "tool_call_id": "t2", "kind": "execute", "title": f"echo {one_line} > /app/tests/conftest.py",
         "status": "completed", "rawInput": {"command": f"echo {one_line} > /app/tests/conftest.py"},
         "content": [{"type": "content", "content": {"type": "text", "text": secrets_text}}]},
        {"type": "tool_call", "tool_call_id": "t3", "kind": "execute", "title": f"curl -H 'Authorization: {SECRETS['bearer']}' {SECRETS['url-password']}",
         "status": "failed", "content": [{"type": "content", "content": {"type": "text", "text": secrets_text}}]},
        {"type": "tool_call", "tool_call_id": "t4", "kind": "execute", "title": f"curl -H 'Authorization: {SECRETS['bearer']}' {SECRETS['url-password']}",
         "status": "failed", "content": [{"type": "content", "content": {"type": "text", "text": secrets_text}}]},
        {"type": "tool_call", "tool_call_id": "t5", "kind": "edit", "title": f"Write /root/{SECRETS['github-classic']}.py",
         "status": "completed", "content": [{"type": "diff", "path": f"/etc/{SECRETS['aws-key-id']}.conf", "newText": secrets_text}]},
        {"type": "agent_message", "text": "Actually, wait, I'm not sure this is right. Submitting what I have: " + secrets_text},
    ]
    result = {"task_name": "task-" + SECRETS["aws-key-id"], "rollout_name": "r__1", "rewards": {"reward": 0.0},
              "n_tool_calls": 2, "agent": "claude-agent-acp", "model": "model " + SECRETS["huggingface"],
              "error": "RuntimeError: upstream said " + secrets_text}
    ctrf = {"results": {"summary": {"tests": 2, "passed": 0, "failed": 2}, "tests": [
        {"name": f"test_uses_{SECRETS['openai']}", "status": "failed", "message": "AssertionError: " + secrets_text},
        {"name": "test_two " + SECRETS["slack"], "status": "failed", "trace": "Traceback: " + secrets_text}]}}
    make_job(runs, "leaky__1", lines=lines, result=result,
             extra_files={"verifier/ctrf.json": json.dumps(ctrf), "verifier/reward.txt": "0.0\n",
                          "verifier/test-stdout.txt": "FAILED " + secrets_text + "\nExpecting value: " + secrets_text,
                          "prompts.json": json.dumps({"instruction": "Solve it. " + secrets_text}),
                          f"agent/{SECRETS['gitlab']}.jsonl": "{}\n"})
    # unusable input whose error text would quote agent-written text
    make_job(runs, "broken__1", lines='{"type":"user_message","text":"a"}\n{"' + SECRETS["openai"] + '": }\n')
    # a multi-record file: record ids, instructions and histories hold keys
    recs = [{"instance_id": f"inst-{k}", "instruction": secrets_text, "history": [
        {"id": 1, "source": "agent", "action": "run", "args": {"command": f"cat /oracle/solve.sh {one_line}"}, "message": ""},
        {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": secrets_text, "extras": {}}],
        "test_result": {"resolved": False}, "metadata": {"agent_class": "CodeActAgent"}} for k in range(2)]
    (runs / "oh").mkdir(parents=True)
    (runs / "oh" / "output.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


HAS_CTRF = importlib.util.find_spec("ctrf") is not None


def test_no_secret_reaches_any_output(pytester: pytest.Pytester) -> None:
    build(pytester.path)
    args = ["-p", "no:cacheprovider", "--trajaudit=runs", "-rA", "-v", "--junitxml=out.xml", "--trajaudit-report=rep"]
    if HAS_CTRF:
        args.append("--ctrf=ctrf.json")
    result = pytester.runpytest_subprocess(*args, "-W", "default", timeout=120)
    assert result.ret == 1
    outputs = {"terminal": result.stdout.str() + result.stderr.str(),
               "junit": (pytester.path / "out.xml").read_text()}
    if HAS_CTRF:
        outputs["ctrf"] = (pytester.path / "ctrf.json").read_text()
    for p in sorted((pytester.path / "rep").rglob("*")):
        if p.is_file():
            outputs[p.relative_to(pytester.path).as_posix()] = p.read_text()
    assert "rep/summary.json" in outputs and "rep/report.md" in outputs
    assert any("/audit-" in k for k in outputs)
    # the jobs were audited and their evidence quoted (so the checks below mean something)
    term = outputs["terminal"]
    assert "FAILED runs/leaky__1/result.json::P1" in term and "FAILED runs/leaky__1/result.json::P2" in term
    assert "<REDACTED>" in term and "<REDACTED>" in outputs["rep/summary.json"]
    assert "ERROR runs/broken__1/result.json::P1 - unusable input" in term
    leaks = [(where, name) for where, text in outputs.items() for name, needle in NEEDLES.items() if needle in text]
    assert not leaks, leaks


def test_report_files_are_owner_only_and_written_atomically(pytester: pytest.Pytester) -> None:
    """Reports quote agent output and privileged task lines (ADV-4, P1): 0600, like the advisor audit's
    ``audit.json`` (the seed's advisor-audit.md). Each file is written to a temporary file and renamed: none is
    left."""
    make_job(pytester.path / "runs", "j")
    out = pytester.path / "rep"
    out.mkdir()
    (out / "summary.json").symlink_to(pytester.path / "elsewhere.json")  # a planted link is replaced, not followed
    old_umask = os.umask(0)
    try:
        pytester.runpytest("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-report=rep")
    finally:
        os.umask(old_umask)
    assert not (pytester.path / "elsewhere.json").exists()
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"summary.json", "report.md"} and any(p.name.startswith("audit-") for p in files)
    for p in files:
        assert not p.is_symlink()
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
        assert not p.name.endswith(".tmp"), p
    json.loads((out / "summary.json").read_text())


def test_report_dir_inside_the_audited_tree_is_refused(pytester: pytest.Pytester) -> None:
    make_job(pytester.path / "runs", "j")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajaudit=runs",
                                           "--trajaudit-report=runs/audit", timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--trajaudit-report runs/audit lies inside an audited tree*"])
    assert not (pytester.path / "runs" / "audit").exists()
