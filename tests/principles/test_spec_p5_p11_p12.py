"""P5 (format vs reasoning), P11's solver reconstruction and P12's number spellings against the spec
(the seed's audit-general.md P5, P11 steps 1–5, P12 "equivalent number representations")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_trajaudit.principles._rerun import perturbations
from pytest_trajaudit.principles._substance import same_substance, shows
from pytest_trajaudit.settings import Settings
from tests.jobfactory import make_job
from tests.principles.builders import msg, run, sh, user, write
from tests.principles.test_verifier import _job
from tests.taskfactory import ctrf, make_task, result_doc

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
    """The seed's audit-general.md P12: equivalent number representations, ``1.0 ↔ 1`` and ``0.5 ↔ 5e-1``."""
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


# ==================================================================================================== P11

DATA = "1\n2\n3\n4\n5\n6\n"
SOLVER = ("import json\n"
          "nums = [int(x) for x in open('/root/data.txt').read().split()]\n"
          "json.dump([n for n in nums if n % 2 == 0], open('/root/out.json', 'w'))\n"
          "print('wrote', len(nums))\n")
WRONG_SOLVER = SOLVER.replace("n % 2 == 0", "n % 3 == 0")


def _p11_tasks(tmp_path: Path, expected: str = "[2, 4, 6]", **p11) -> Path:
    tasks = tmp_path / "tasks"
    conf = {"output": "/root/out.json", "expected": "tests/expected.json", "timeout": 20, **p11}
    toml = "\n".join(["[task]", 'name = "demo"', "", "[trajaudit.p11]", *(f"{k} = {json.dumps(v)}" for k, v in conf.items()),
                      'inputs = {"/root/data.txt" = "environment/data.txt"}', ""])
    make_task(tasks, "demo", toml=toml, tests={"expected.json": expected}, environment={"data.txt": DATA})
    return tasks


def _solver_lines(*scripts: str, run_cmd: str = "cd /root && python3 solve.py") -> list:
    lines = [user("Write the even numbers of /root/data.txt to /root/out.json.")]
    for text in scripts:
        lines += [write("/root/solve.py", text), sh(run_cmd, "wrote 6")]
    return [*lines, msg("Done: wrote /root/out.json.")]


def _p11(tmp_path: Path, tasks: Path | None, *, lines: list | None = None, delivered: str | None = "[2, 4, 6]",
         reward: float = 1.0, rerun: bool = True, files: dict | None = None):
    files = dict(files or {})
    if delivered is not None:
        files["artifacts/out.json"] = delivered
    cfg = Settings(tasks_dirs=(tasks,) if tasks else (), rerun=rerun)
    j = _job(tmp_path, reward=reward, lines=lines if lines is not None else _solver_lines(SOLVER), files=files,
             tasks=(tasks,) if tasks else (), cfg=cfg)
    return run("P11", j, cfg)


def test_p11_reconstructed_solver_that_reproduces_the_output_is_aligned(tmp_path):
    f = _p11(tmp_path, _p11_tasks(tmp_path))
    assert f.status == "PASS", f.evidence
    assert f.evidence.startswith("aligned: the reconstructed solver /root/solve.py (run at #")
    assert "reproduces the delivered output; re-run vs expected: equal in substance" in f.evidence
    assert f.data["reconstructed"] is True and f.data["aligned"] is True
    assert f.data["reconstruction"]["solver"]["exit_code"] == 0


def test_p11_diff_that_explains_a_partial_reward_is_aligned(tmp_path):
    """The spec's codex-noskills shape: the re-run's ids against the oracle's (|pred ∩ exp|, subsets, FP/FN)."""
    f = _p11(tmp_path, _p11_tasks(tmp_path, expected="[2, 4]"), reward=0.85)
    assert f.status == "PASS", f.evidence
    assert ("|pred|=3, |exp|=2, |pred ∩ exp|=2, exp ⊂ pred, 1 false positive(s), 0 false negative(s)"
            in f.evidence)
    assert f.data["reconstruction"]["vs_expected"]["false_positives"] == 1


def test_p11_solver_that_does_not_reproduce_the_delivered_output_is_a_finding(tmp_path):
    f = _p11(tmp_path, _p11_tasks(tmp_path), delivered="[2, 4, 6, 8]")
    assert f.status == "WARN", f.evidence
    assert "does not reproduce the delivered output artifacts/out.json" in f.evidence
    assert f.data["reconstructed"] is True and f.data["aligned"] is False


def test_p11_reward_one_for_an_output_that_differs_from_the_oracle_is_flipped_signal(tmp_path):
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=_solver_lines(WRONG_SOLVER), delivered="[3, 6]", reward=1.0)
    assert f.status == "FAIL", f.evidence
    assert f.evidence.startswith("flipped_signal: the reconstructed solver")
    assert f.data["flipped_signal"] is True


def test_p11_uses_the_last_version_the_agent_ran(tmp_path):
    """v1 (wrong) ran, v2 ran and wrote the output, v3 was written after the last run and never ran."""
    lines = _solver_lines(WRONG_SOLVER, SOLVER)
    lines.insert(-1, write("/root/solve.py", "raise SystemExit('never ran')\n"))
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=lines)
    assert f.status == "PASS", f.evidence
    assert f.data["reconstruction"]["solver"]["run_event"] == lines.index(lines[4])


def _planted(marker: Path) -> str:
    """A solver that writes the marker (outside everything the mapping covers) with what it saw."""
    return ("import json, os, resource\n"
            f"open({str(marker)!r}, 'w').write(json.dumps({{'env': sorted(os.environ), "
            "'fsize': resource.getrlimit(resource.RLIMIT_FSIZE)[0], 'cpu': resource.getrlimit(resource.RLIMIT_CPU)[0], "
            "'nproc': resource.getrlimit(resource.RLIMIT_NPROC)[0], 'cwd': os.getcwd()}))\n" + SOLVER)


def test_p11_without_the_opt_in_nothing_is_executed(tmp_path):
    marker = tmp_path / "ran"
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=_solver_lines(_planted(marker)), rerun=False,
             files={"verifier/reward.txt": "1"})
    assert not marker.exists()
    assert f.data["reconstructed"] is False
    assert f.data["reconstruction"]["outcome"].startswith("skipped: re-runs are off: pass --trajaudit-rerun")
    # with a single reward source the mechanical check has nothing to compare: N/A, with the reason
    g = _p11(tmp_path / "b", _p11_tasks(tmp_path / "b"), lines=_solver_lines(_planted(marker)), rerun=False)
    assert g.status == "N/A"
    assert "reconstruction: re-runs are off: pass --trajaudit-rerun" in g.evidence
    assert not marker.exists()


def test_p11_solver_runs_scrubbed_and_limited_in_a_temp_dir(tmp_path, monkeypatch):
    """The control for the test above: with the opt-in the planted solver runs, without the caller's
    environment, under resource limits, outside the job and task directories."""
    monkeypatch.setenv("TRAJAUDIT_TEST_SECRET", "x")
    marker = tmp_path / "ran"
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=_solver_lines(_planted(marker)))
    assert f.status == "PASS", f.evidence
    seen = json.loads(marker.read_text())
    assert "TRAJAUDIT_TEST_SECRET" not in seen["env"]
    assert set(seen["env"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
                                "LC_CTYPE"}
    assert seen["fsize"] == 256 * 2**20 and 0 < seen["cpu"] <= 21 and seen["nproc"] > 0
    assert not seen["cwd"].startswith(str(tmp_path))
    assert Path(seen["cwd"]).name == "root"


def test_p11_solver_that_hangs_is_killed_and_na(tmp_path):
    f = _p11(tmp_path, _p11_tasks(tmp_path, timeout=1), lines=_solver_lines("import time\ntime.sleep(60)\n# out.json\n"))
    assert f.data["reconstructed"] is False
    assert f.data["reconstruction"]["outcome"] == "skipped: the reconstructed solver /root/solve.py timed out after 1s"


def test_p11_solver_that_fails_here_is_na_with_its_error(tmp_path):
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=_solver_lines("import no_such_module_x  # out.json\n"))
    assert f.data["reconstructed"] is False
    assert "exited 1 here" in f.data["reconstruction"]["outcome"]
    assert "ModuleNotFoundError" in f.data["reconstruction"]["outcome"]


@pytest.mark.parametrize(("lines", "reason"), [
    ([user("go"), sh("python3 -c 'print(1)' > /root/out.json"), msg("done")], "no `python <script>.py` run"),
    ([user("go"), sh("python3 /root/solve.py"), msg("done")], "none of the last 1 script run(s) is a script the agent wrote"),
])
def test_p11_solver_not_literal_is_na(tmp_path, lines, reason):
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=lines)
    assert f.status == "N/A"
    assert reason in f.data["reconstruction"]["outcome"]


def test_p11_stdout_redirect_is_the_output(tmp_path):
    script = "print('[2, 4, 6]')\n"
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=_solver_lines(script, run_cmd="python3 /root/solve.py > /root/out.json"))
    assert f.status == "PASS", f.evidence


def test_p11_symlinked_input_is_not_followed(tmp_path):
    tasks = _p11_tasks(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("8\n")
    data = tasks / "demo" / "environment" / "data.txt"
    data.unlink()
    data.symlink_to(secret)
    f = _p11(tmp_path, tasks)
    assert f.data["reconstructed"] is False
    assert "symlink" in f.data["reconstruction"]["outcome"]


def test_p11_no_task_config_leaves_the_evidence_alone(tmp_path):
    f = _p11(tmp_path, None)
    assert f.status == "N/A"
    assert "reconstruction" not in f.evidence
    assert f.data["reconstruction"]["outcome"].startswith("skipped: reconstruction needs the task's inputs")


def test_p11_error_evidence_names_container_paths_not_the_temp_dir(tmp_path):
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=_solver_lines("raise RuntimeError(__file__)  # out.json\n"))
    outcome = f.data["reconstruction"]["outcome"]
    assert "RuntimeError: /root/solve.py" in outcome
    assert "trajaudit-p11-" not in outcome


def test_p11_reconstruction_through_the_plugin_only_with_the_opt_in(pytester: pytest.Pytester):
    """End to end: without --trajaudit-rerun the planted solver never runs and P11 says why; with it, it runs and
    the delivered output it reproduces is aligned with the oracle's."""
    root = pytester.path
    marker = root / "ran"
    _p11_tasks(root)
    make_job(root / "runs", "demo__1", _solver_lines(_planted(marker)),
             result_doc(reward=1.0, trial="demo__1"), {"artifacts/out.json": "[2, 4, 6]"})
    args = ("-p", "no:cacheprovider", "--trajaudit=runs", "--trajaudit-tasks=tasks", "--trajaudit-principles=P11",
            "-rs")
    off = pytester.runpytest(*args)
    off.assert_outcomes(skipped=1)
    off.stdout.fnmatch_lines(["*P11*reconstruction: re-runs are off: pass --trajaudit-rerun*"])
    assert not marker.exists()
    on = pytester.runpytest(*args, "--trajaudit-rerun", "-rA")
    on.assert_outcomes(passed=1)
    assert marker.exists()


def test_p11_worse_of_cross_check_and_reconstruction_wins(tmp_path):
    """Reward sources on both sides of a pass (flipped_signal) stay FAIL although the reconstruction aligns."""
    f = _p11(tmp_path, _p11_tasks(tmp_path), files={"verifier/reward.txt": "0\n"})
    assert f.status == "FAIL"
    assert f.evidence.startswith("flipped_signal: reward sources disagree")
    assert "; aligned: the reconstructed solver /root/solve.py" in f.evidence
    assert f.data["flipped_signal"] is True and f.data["reconstructed"] is True and f.data["aligned"] is False
    assert f.events  # the solver's run, for the report's timeline


_json = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.text(max_size=5)
                     | st.floats(allow_nan=False, allow_infinity=False),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
                     max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_p12_layout_variants_are_json_dumps_layouts(doc):
    """The whitespace variants are json.dumps' own layouts of the document, numbers as the document spelled them."""
    text = json.dumps(doc, ensure_ascii=False)
    got = dict(perturbations(text.encode()))
    for name, kw in (("whitespace: compact JSON", {"separators": (",", ":")}), ("whitespace: indented JSON", {"indent": 2})):
        want = json.dumps(doc, ensure_ascii=False, **kw)
        assert got.get(name, text.encode()) == want.encode()
    for v in got.values():
        assert json.loads(v) == json.loads(text)


def test_p12_whitespace_variants_keep_number_spellings():
    """One change at a time: a layout change never respells 5e-1 or 0.50."""
    got = _names(b'{"a": [5e-1, 0.50]}')
    assert got["whitespace: compact JSON"] == b'{"a":[5e-1,0.50]}'
    assert got["whitespace: indented JSON"] == b'{\n  "a": [\n    5e-1,\n    0.50\n  ]\n}'
    assert got["exponents as decimals"] == b'{"a": [0.5, 0.50]}'
    assert got["decimals in exponent notation"] == b'{"a": [5e-1, 5e-1]}'


def test_p11_dot_dot_in_the_agents_paths_stays_in_the_temp_dir(tmp_path):
    """The script path and its cd come from the trajectory: ``..`` is resolved lexically, never above the copy."""
    escape = "/root/../../../../../../../.." + str(tmp_path / "escaped.py")
    lines = [user("go"), write(escape, SOLVER), sh(f"cd /root/../.. && python3 {escape}", "wrote 6"), msg("done")]
    f = _p11(tmp_path, _p11_tasks(tmp_path), lines=lines)
    assert not (tmp_path / "escaped.py").exists()
    assert f.data["reconstruction"]["solver"]["script"] == str(tmp_path / "escaped.py")
    assert f.data["reconstruction"]["solver"]["cwd"] == "/"
    assert f.status == "PASS", f.evidence
