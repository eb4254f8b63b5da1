"""Nothing hostile reaches the reader (docs/trust.md "What reaches the reader").

One audit of planted jobs, read in every output a human or CI sees: the terminal (FAILED/WARN/N/A lines, the
warnings summary, the verdict lines), the JUnit XML, ``summary.json``, the per-job audit JSON and ``report.md``.

- Secrets: each shape of a maintained rule set (gitleaks rule ids and detect-secrets plugins, cited in
  ``redact.SHAPES``) is planted in its own job, in a command that makes P2 fail (so its evidence quotes it), in an
  agent message, the verifier's test output and ``result.json``. None of these keys is real: each is assembled
  from a shape prefix and filler.
- Terminal controls: ESC/CSI/OSC sequences, BEL, CR, a C1 CSI and a bidi override, planted the same way, are
  shown escaped (``\\x1b``), never raw.
"""

from __future__ import annotations

import base64
import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_trajaudit.scan.redact import SHAPES, clean, clean_text, redact, tail_of
from tests.jobfactory import make_job

F = "Q7x9K2m4P8w3R6t1Y5u0"  # filler: letters and digits, never a real key
BASIC = base64.b64encode(("deploy:Hunter2" + F).encode()).decode()
# shape name -> (planted text, what must never appear)
PLANTED: dict[str, tuple[str, str]] = {
    "stripe": ("sk_live_" + F + "abcd", "sk_live_" + F),
    "pgp-private-key": ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXyz" + F + "\n" + F + "=\n=abcd\n"
                        "-----END PGP PRIVATE KEY BLOCK-----", "lQOYBGXyz" + F),
    "google-oauth": ("ya29.a0Ae" + F + F, "a0Ae" + F),
    "azure-account-key": ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + (F * 5)[:86] + "==;"
                          "EndpointSuffix=core.windows.net", (F * 5)[:40]),
    "http-basic": ("Authorization: Basic " + BASIC, BASIC),
    "npm": ("npm_" + F + F[:16], "npm_" + F),
    "slack-webhook": ("https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/" + F + "abcd", "B02GHIJKL/" + F),
    "sendgrid": ("SG." + F + "ab." + F + F + "abc", "SG." + F),
    "putty-private-key": ("PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 1\n"
                          "AAAAB3NzaC1yc2E\nPrivate-Lines: 1\nAAABAG" + F + F + "\n"
                          "Private-MAC: 8f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6", "AAABAG" + F),
}
CONTROLS = {"ESC": "\x1b", "BEL": "\x07", "CR": "\r", "C1-CSI": "\x9b", "RLO": "\u202e", "BS": "\x08"}
HOSTILE_TEXT = "\x1b[2K\r\x1b[32mPASSED\x1b[0m \x1b]0;pwned\x07 \x9b31m \u202eexe.txt\x08"
OUTPUTS = ("terminal", "junit", "summary.json", "audit-json", "report.md")


def _job_lines(text: str) -> list[dict[str, Any]]:
    one = text.replace("'", "")
    return [
        {"type": "user_message", "text": "Do the task."},
        # P2 fails on writing a conftest.py: its evidence quotes this command
        {"type": "tool_call", "tool_call_id": "t1", "kind": "execute", "title": f"printf '{one}' > /app/tests/conftest.py",
         "status": "completed", "rawInput": {"command": f"printf '{one}' > /app/tests/conftest.py"},
         "content": [{"type": "content", "content": {"type": "text", "text": text}}]},
        {"type": "agent_message", "text": "Actually, wait, I am not sure. Submitting: " + text},
    ]


def _plant(runs: Path, name: str, text: str) -> None:
    ctrf = {"results": {"summary": {"tests": 1, "passed": 0, "failed": 1}, "tests": [
        {"name": "test_out", "status": "failed", "message": "AssertionError: " + text}]}}
    make_job(runs, name, lines=_job_lines(text),
             result={"task_name": "t", "rollout_name": f"{name}__1", "rewards": {"reward": 0.0}, "n_tool_calls": 1,
                     "error": "RuntimeError: " + text},
             extra_files={"verifier/ctrf.json": json.dumps(ctrf), "verifier/reward.txt": "0\n",
                          "verifier/test-stdout.txt": "FAILED test_out\nE   AssertionError: " + text + "\n"})


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One audit of every planted job (a subprocess: the real start-up), its outputs by name."""
    root = tmp_path_factory.mktemp("hostile")
    runs = root / "runs"
    for name, (text, _) in PLANTED.items():
        _plant(runs, f"secret-{name}", text)
    _plant(runs, "controls", HOSTILE_TEXT)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "--trajaudit=runs", "-rA", "-v", "-W", "default", "--junitxml=out.xml",
                           "--trajaudit-report=rep", "--trajaudit-principles=P1,P2,P3,P8,P11"],
                          cwd=root, capture_output=True, text=True, timeout=300)
    audits = sorted((root / "rep" / "jobs").rglob("audit-*.json"))
    return {"terminal": proc.stdout + proc.stderr, "junit": (root / "out.xml").read_text(encoding="utf-8"),
            "summary.json": (root / "rep" / "summary.json").read_text(encoding="utf-8"),
            "audit-json": "\n".join(p.read_text(encoding="utf-8") for p in audits),
            "report.md": (root / "rep" / "report.md").read_text(encoding="utf-8"), "rc": str(proc.returncode)}


def _strings(doc: Any) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


def _decoded(where: str, text: str) -> str:
    """The text a reader of ``where`` gets: JSON strings decoded (``\\u001b`` is ESC to whoever prints them)."""
    if where == "junit":
        return html.unescape(text)
    if where == "report.md":  # Markdown's backslash escapes render as the characters they escape
        return re.sub(r"\\([\\`\[\]<>|])", r"\1", text)
    if where == "summary.json":
        return "\n".join(_strings(json.loads(text)))
    if where == "audit-json":
        return "\n".join(s for part in text.split("\n}\n") if part.strip()
                         for s in _strings(json.loads(part + ("\n}" if not part.rstrip().endswith("}") else ""))))
    return text


def test_the_planted_jobs_were_audited_and_quoted(outputs: dict[str, str]) -> None:
    """Guards the tests below against passing on an audit that quoted nothing."""
    term = outputs["terminal"]
    assert outputs["rc"] == "1"
    for name in [*PLANTED, "controls"]:
        job = f"secret-{name}" if name in PLANTED else name
        assert f"FAILED runs/{job}/result.json::P2" in term, (job, term[-3000:])
    for where in OUTPUTS:
        assert "<REDACTED>" in _decoded(where, outputs[where]), where


@pytest.mark.parametrize("where", OUTPUTS)
@pytest.mark.parametrize("shape", list(PLANTED))
def test_no_secret_shape_reaches_an_output(outputs: dict[str, str], shape: str, where: str) -> None:
    needle = PLANTED[shape][1]
    text = outputs[where]
    assert needle not in text
    assert needle not in _decoded(where, text)


@pytest.mark.parametrize("where", OUTPUTS)
@pytest.mark.parametrize("control", list(CONTROLS))
def test_no_terminal_control_reaches_an_output(outputs: dict[str, str], control: str, where: str) -> None:
    char = CONTROLS[control]
    text = _decoded(where, outputs[where])
    assert char not in text, (control, where)


def test_controls_are_shown_escaped_on_the_terminal(outputs: dict[str, str]) -> None:
    term = outputs["terminal"]
    line = next(ln for ln in term.splitlines() if ln.startswith("runs/controls/result.json:1: P2: ") and "PASSED" in ln)
    assert "\\x1b[2K\\r\\x1b[32mPASSED" in line
    assert "\\u202e" in outputs["report.md"] or "\\x1b" in outputs["report.md"]


# --- redaction before truncation ------------------------------------------------------------------------------

def test_a_key_straddling_the_start_of_the_verifier_stdout_tail_is_redacted_whole() -> None:
    """The verifier's stdout is kept as its last 4,000 characters. A key that starts before that window and ends
    inside it was cut first and redacted after: the part inside (no longer shaped like a key) was kept."""
    key = "sk_live_" + F + F + "abcdefg"  # 55 characters
    text = "x" * 5000 + " " + key + "\n" + "y" * 3964
    assert text[-4000:].startswith(key[-35:])  # what a cut-then-redact kept
    kept = tail_of(text, 4000)
    assert len(kept) <= 4000
    assert key[-20:] not in kept and F not in kept


def test_a_private_key_whose_begin_line_is_cut_off_is_redacted_to_its_end() -> None:
    block = PLANTED["pgp-private-key"][0].replace("\n\n", "\n" + "A" * 70_000 + "\n")
    kept = tail_of("log\n" + block + "\ndone\n", 200)
    assert kept == "<REDACTED>\ndone\n"


def test_verifier_stdout_tail_of_a_loaded_job_is_redacted_before_the_cut(tmp_path: Path) -> None:
    from pytest_trajaudit.discover.jobs import classify
    from pytest_trajaudit.loaders.job import load_job
    from pytest_trajaudit.settings import Settings

    key = "sk_live_" + F + F + "abcdefg"
    job = make_job(tmp_path, "j", extra_files={"verifier/test-stdout.txt": "x" * 5000 + " " + key + "\n" + "y" * 3964})
    loaded = load_job(classify(job), Settings())
    assert key[-20:] not in loaded.verifier.stdout_tail


# --- the functions every output goes through -----------------------------------------------------------------

@pytest.mark.parametrize("shape", list(PLANTED))
def test_redact_covers_each_planted_shape(shape: str) -> None:
    text, needle = PLANTED[shape]
    for t in (text, f"x {text} y", f'"{text}"', f"log\\n{text}"):
        assert needle not in redact(t), (shape, t)


def test_every_shape_cites_its_rule_set() -> None:
    for source, _ in SHAPES:
        assert source.startswith(("gitleaks ", "detect-secrets ", "Google ")), source


def test_clean_escapes_controls_and_clean_text_keeps_lines() -> None:
    assert clean("a\x1b[31mb\nc\td\x07") == "a\\x1b[31mb\\nc\\td\\x07"
    assert clean_text("a\x1b[31mb\nc\td\x9b") == "a\\x1b[31mb\nc\td\\x9b"
    assert clean("plain C:\\path") == "plain C:\\path"  # backslashes are not doubled in quotes


def test_judge_answers_are_cleaned_where_they_become_a_result() -> None:
    """A judge's reasoning is model output (it may echo the trajectory): the result built from it is cleaned."""
    from concurrent.futures import Future

    from pytest_trajaudit.judges import Answer
    from pytest_trajaudit.model import Finding
    from pytest_trajaudit.principles.engine import Deferred, JobAudit

    fut: Future[Answer] = Future()
    fut.set_result(Answer("m", True, {"reason": "\x1b]0;x\x07 " + PLANTED["npm"][0]}, None))
    audit = JobAudit({}, {}, pending={"P3": Deferred([fut], lambda a: Finding.warn(
        a[0].value["reason"], {"reason": a[0].value["reason"]}), ["m"])})
    res = audit.resolve("P3")
    assert "\x1b" not in res.evidence and "\x07" not in res.evidence and "\\x1b]0;x\\x07" in res.evidence
    assert PLANTED["npm"][1] not in res.evidence and PLANTED["npm"][1] not in json.dumps(res.data)
    assert "\x1b" not in res.data["reason"]


def test_a_key_cut_by_the_tool_output_clip_is_not_shown_in_part() -> None:
    """Tool outputs longer than an event keeps are clipped at load (their two ends), before any redaction; the
    parts of a key the clip cut no longer have its shape. What is shown masks the runs touching the marker."""
    from pytest_trajaudit.loaders.common import OUTPUT_CLIP, clip

    key = "sk_live_" + F + F + "abcdefg"
    half = OUTPUT_CLIP // 2
    head = "w " * ((half - 20) // 2) + key  # the head's cut falls 20 characters into the key
    body = "z " * 20000
    text = head + " " + body + " " + key + " " + "t" * (half - 36)  # the tail's cut falls 20 characters in
    clipped = clip(text)
    assert key[8:20] in clipped and key[-35:-23] in clipped  # the fragments the clip kept
    for shown in (redact(clipped), clean(clipped), clean_text(clipped)):
        assert key[8:20] not in shown and key[-35:-23] not in shown and "<CLIPPED>" in shown


def test_clip_marker_masking_is_linear_and_leaves_other_text() -> None:
    assert redact("x abcdefghij [... 5 characters clipped ...]\n  klmnopqrstu y") == \
        "x <CLIPPED> [... 5 characters clipped ...]\n  <CLIPPED> y"
    assert redact("a [... 5 characters clipped ...] b") == "a [... 5 characters clipped ...] b"
    many = "ab [... 5 characters clipped ...] " * 50000
    assert redact(many) == many  # short runs kept; one pass over 1.7 MB of markers
