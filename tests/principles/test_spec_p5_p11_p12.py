"""P5 (format vs reasoning), P11's solver reconstruction and P12's number spellings against the spec
(audit-general.md P5, P11 steps 1–5, P12 "equivalent number representations")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_trajaudit.principles._rerun import perturbations
from pytest_trajaudit.principles._substance import same_substance, shows
from pytest_trajaudit.settings import Settings
from tests.principles.builders import msg, run, sh, user, write
from tests.principles.test_verifier import _job
from tests.taskfactory import ctrf, make_task

# ==================================================================================================== P5

SEED_LINES = [user("Write the ids as a JSON array to /root/unnecessary_aborts.json."),
              sh("python /root/solve.py", "computed 3216 unnecessary aborts"),
              msg("computed 3216 unnecessary aborts")]
DECODE = "json.decoder.JSONDecodeError: Extra data: line 2 column 1 (char 5)"


def test_p5_a_decode_error_alone_is_not_format_loss(tmp_path):
    """The seed's synthetic example without the expected value: the decode error says the shape is wrong, not
    that the answer was right. Unknown, with the reason."""
    j = _job(tmp_path, reward=0.0, lines=SEED_LINES,
             files={"verifier/ctrf.json": ctrf(0, 1, [("test_output_is_json", DECODE)])})
    f = run("P5", j)
    assert f.status == "N/A"
    assert f.evidence.startswith("format or reasoning loss unknown: the verifier failed on shape ('json.decoder') "
                                 "but shows no expected value")
    assert f.data["format_vs_reasoning"] == "n/a"
    assert "task_flag" not in f.data


@pytest.mark.parametrize("message", [
    "E   json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "E   FileNotFoundError: [Errno 2] No such file or directory: '/root/out.json'",
    "E   TypeError: list indices must be integers or slices, not str",
    "AssertionError: expected a list, got dict",
])
def test_p5_shape_errors_without_an_expected_value_are_unknown(tmp_path, message):
    f = run("P5", _job(tmp_path, reward=0.0, files={"verifier/test-stdout.txt": f"tests/test_outputs.py F\n{message}\n"}))
    assert f.status == "N/A", f.evidence
    assert f.evidence.startswith("format or reasoning loss unknown")


def test_p5_seed_format_loss_when_the_verifier_shows_the_expected_value(tmp_path):
    """The seed's synthetic example, right answer: the verifier shows it expected 3216 ids, the agent's stdout
    says it computed 3216 → right in substance, wrong in shape."""
    failure = ("test_output_is_json", f"{DECODE}\nexpected 3216 ids")
    j = _job(tmp_path, reward=0.0, lines=SEED_LINES, files={"verifier/ctrf.json": ctrf(0, 1, [failure])})
    f = run("P5", j)
    assert f.status == "WARN"
    assert f.evidence.startswith("format_loss: the agent's output shows the expected 3216 and the verifier failed "
                                 "on shape ('json.decoder')")
    assert "agent's final: computed 3216 unnecessary aborts" in f.evidence
    assert f.data["format_vs_reasoning"] == "format_loss"
    assert f.data["task_flag"] == "essential_difficulty"


def test_p5_decode_error_with_a_different_answer_is_unknown(tmp_path):
    lines = [*SEED_LINES[:1], sh("python /root/solve.py", "computed 4469 unnecessary aborts"), msg("4469 ids")]
    failure = ("test_output_is_json", f"{DECODE}\nexpected 3216 ids")
    f = run("P5", _job(tmp_path, reward=0.0, lines=lines, files={"verifier/ctrf.json": ctrf(0, 1, [failure])}))
    assert f.status == "N/A"
    assert f.evidence.startswith("format or reasoning loss unknown: the agent's output does not show the expected 3216")


@pytest.mark.parametrize(("message", "expected_kind"), [
    # pytest's rewritten assert: the same values, a different shape
    ("E       AssertionError: assert '1\\n2\\n3' == '[1, 2, 3]'", "format_loss"),
    ("E       assert {'n': 5.0} == {'n': 5}", "format_loss"),
    ("E       assert 'OK ' == 'ok'", "format_loss"),
    ("E       assert '5e-1' == '0.5'", "format_loss"),
    # unittest and prose forms
    ("AssertionError: '[3, 1]' != '3\\n1'", "format_loss"),
    ("expected [1, 2, 3], got '1,2,3'", "format_loss"),
    # a different value is a wrong answer, whatever else failed
    ("E       assert [1, 2] == [1, 2, 3]", "reasoning_loss"),
    (f"{DECODE}\nE       assert 4469 == 3216", "reasoning_loss"),
    ("Expected: 3216\nActual: 4469", "reasoning_loss"),
])
def test_p5_compares_what_the_verifier_got_with_what_it_expected(tmp_path, message, expected_kind):
    f = run("P5", _job(tmp_path, reward=0.0, files={"verifier/test-stdout.txt": f"tests/test_outputs.py F\n{message}\n"}))
    assert f.data["format_vs_reasoning"] == expected_kind, f.evidence
    assert f.status == ("WARN" if expected_kind == "format_loss" else "PASS")


def test_p5_source_line_expression_is_not_a_value(tmp_path):
    """pytest prints the failing source line (``assert len(ids) == 3216``) before the values."""
    stdout = ">       assert len(ids) == 3216\nE       assert 3216 == 3216.0\n"
    f = run("P5", _job(tmp_path, reward=0.0, files={"verifier/test-stdout.txt": stdout}))
    assert f.data["verifier_got"] == "3216"
    assert f.data["format_vs_reasoning"] == "format_loss"


def _p5_task(tmp_path: Path) -> Path:
    tasks = tmp_path / "tasks"
    make_task(tasks, "demo", toml={"trajaudit": {"p12": {"output": "/root/out.json", "command": ["true"]}}})
    return tasks


@pytest.mark.parametrize(("saved", "kind"), [("1\n2\n3\n", "format_loss"), ("1\n2\n4\n", "reasoning_loss")])
def test_p5_compares_the_saved_output_with_the_expected_value(tmp_path, saved, kind):
    """Expected value shown, got value not: the agent's saved file (artifacts/) decides."""
    tasks = _p5_task(tmp_path)
    failure = ("test_out", f"{DECODE}\nexpected [1, 2, 3]")
    j = _job(tmp_path, reward=0.0, tasks=(tasks,), lines=[user("go"), msg("done")],
             files={"verifier/ctrf.json": ctrf(0, 1, [failure]), "artifacts/out.json": saved})
    f = run("P5", j)
    assert f.data["format_vs_reasoning"] == kind, f.evidence
    assert f.data["artifact"] == "artifacts/out.json"


def test_p5_value_mismatch_without_values_stays_reasoning_loss(tmp_path):
    f = run("P5", _job(tmp_path, reward=0.0, files={"verifier/test-stdout.txt": "E   AssertionError: wrong count\n"}))
    assert f.status == "PASS"
    assert f.evidence.startswith("reasoning_loss: value mismatch ('AssertionError')")


@pytest.mark.parametrize(("a", "b", "same"), [
    ("[1, 2, 3]", "1\n2\n3\n", True), ('{"a": 1, "b": [2.0]}', '{"b": [2], "a": 1}', True),
    ("0.5", "5e-1", True), ("Hello  World", "hello world", True), ("[1, 2, 3]", "[1, 2]", False),
    ('{"a": 1}', '{"b": 1}', False), ("", "", False),
])
def test_substance_normalizes_numbers_whitespace_case_and_structure(a, b, same):
    assert same_substance(a, b) is same


def test_shows_finds_the_value_as_whole_tokens():
    assert shows("computed 3216 unnecessary aborts.", "3216")
    assert not shows("computed 32160 aborts", "3216")
    assert shows("ids: [4, 5, 6]", "[4, 5, 6]")


# ==================================================================================================== P12


def _names(data: bytes) -> dict[str, bytes]:
    return dict(perturbations(data))


@pytest.mark.parametrize(("original", "name", "variant"), [
    (b'{"p": 0.5}', "decimals in exponent notation", b'{"p": 5e-1}'),
    (b'{"p": 5e-1}', "exponents as decimals", b'{"p": 0.5}'),
    (b'[1.0, 0.25]', "integral floats as ints", b"[1, 0.25]"),
    (b'[1, 2]', "ints as floats", b"[1.0, 2.0]"),
    (b'[1e-05]', "exponents as decimals", b"[0.00001]"),
    (b'[123.25, -0.001]', "decimals in exponent notation", b"[1.2325e2, -1e-3]"),
    (b"0.5\n", "decimals in exponent notation", b"5e-1\n"),
    (b"score 5e-1\n", "exponents as decimals", b"score 0.5\n"),
    (b"total 1.0\n", "integral floats as ints", b"total 1\n"),
])
def test_p12_number_spellings(original, name, variant):
    """audit-general.md P12: equivalent number representations, ``1.0 ↔ 1`` and ``0.5 ↔ 5e-1``."""
    got = _names(original)
    assert got.get(name) == variant, got
    assert json.loads(variant) == json.loads(original) if original.startswith((b"[", b"{")) else True


def test_p12_number_spellings_leave_ids_and_strings_alone():
    got = _names(b'{"id": "0.5", "n": 7}\n')
    assert all(b'"0.5"' in v for v in got.values())
    assert "decimals in exponent notation" not in got
    text = _names(b"txn 0042 at v1.5.2\n")
    assert all(b"0042" in v and b"v1.5.2" in v for v in text.values())


def test_p12_exponent_spelling_passes_a_verifier_that_wants_it(tmp_path):
    """A verifier that compares the text with "5e-1" rejects 0.5 and accepts the perturbation."""
    from tests.principles.test_verifier import _p12, _p12_tasks

    check = "import sys\nsys.exit(0 if open(sys.argv[1]).read().strip() == '[5e-1]' else 1)\n"
    f = _p12(tmp_path, _p12_tasks(tmp_path, check), "[0.5]")
    assert f.status == "WARN"
    assert f.data["perturbations_passing"] == ["decimals in exponent notation"]


_ = Settings  # kept for the P11 tests below
