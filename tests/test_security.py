"""Security of an audit over a HOSTILE run tree (the seed's DESIGN.md "Security of the invocation", PYTEST-NOTES.md
§2).

Every planted file carries a payload that, if pytest imported or executed it, would write a marker file under
``<pytester.path>/MARKERS`` (outside the audited tree). Each test asserts that no marker appears *while the job is
still audited* (its items ran), so a run that is safe only because it audited nothing does not count.

Real startup ordering (ini discovery, conftest loading, xdist workers) only happens in a fresh interpreter, so
everything runs through ``pytester.runpytest_subprocess``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from tests.jobfactory import make_job

# two items per job, both PASS on a clean job; P11 (integrity) left out, so a clean job is INCOMPLETE and the
# subset is allowed to exit 0 (docs/verdicts.md)
BASE = ("-p", "no:cacheprovider", "--trajaudit-principles=P1,P2", "--trajaudit-allow-incomplete")
TIMEOUT = 60
USAGE_ERROR = 4

HAS_XDIST = importlib.util.find_spec("xdist") is not None


# --- hostile payloads -----------------------------------------------------------------------------------------

def py_payload(markers: Path, name: str) -> str:
    target = markers / name
    return ("import pathlib\n"
            f"_p = pathlib.Path({str(target)!r})\n"
            "_p.parent.mkdir(parents=True, exist_ok=True)\n"
            "_p.write_text('executed')\n"
            "def test_planted():\n    pass\n")


def doctest_payload(markers: Path, name: str) -> str:
    target = markers / name
    return (">>> import pathlib\n"
            f">>> _p = pathlib.Path({str(target)!r})\n"
            ">>> _p.parent.mkdir(parents=True, exist_ok=True)\n"
            ">>> _ = _p.write_text('executed')\n")


def pth_payload(markers: Path, name: str) -> str:
    target = markers / name
    return (f"import pathlib; _p = pathlib.Path({str(target)!r}); _p.parent.mkdir(parents=True, exist_ok=True); "
            "_p.write_text('executed')\n")


def markers_of(pytester: pytest.Pytester) -> list[str]:
    d = pytester.path / "MARKERS"
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


def assert_no_markers(pytester: pytest.Pytester) -> None:
    found = markers_of(pytester)
    assert not found, f"agent-written code was executed: {found}"


# Files planted in the job, relative to the job dir (every .py / .txt / .pth gets a payload).
JOB_PLANTS = (
    "conftest.py", "test_x.py", "x_test.py", "__init__.py", "evil.pth", "test_doc.txt",
    "tests/conftest.py", "tests/test_y.py", "tests/__init__.py",
    "verifier/conftest.py", "verifier/test_x.py", "verifier/x_test.py", "verifier/__init__.py",
    "agent/conftest.py", "agent/test_x.py", "agent/x_test.py", "agent/__init__.py",
    "trajectory/__init__.py", "trajectory/conftest.py",
)
# Files planted above the job: the audit root and an intermediate container.
TREE_PLANTS = ("runs/conftest.py", "runs/test_root.py", "runs/__init__.py",
               "runs/grp/conftest.py", "runs/grp/__init__.py", "runs/grp/test_grp.py")


def payload_for(markers: Path, rel: str) -> str:
    name = rel.replace("/", "__")
    if rel.endswith(".pth"):
        return pth_payload(markers, name)
    if rel.endswith(".txt"):
        return doctest_payload(markers, name)
    return py_payload(markers, name)


def plant_hostile_tree(pytester: pytest.Pytester) -> Path:
    """runs/grp/job: a valid job with payloads everywhere pytest might look. Returns the job dir."""
    markers = pytester.path / "MARKERS"
    job = make_job(pytester.path / "runs" / "grp", "job",
                   extra_files={rel: payload_for(markers, f"job/{rel}") for rel in JOB_PLANTS})
    for rel in TREE_PLANTS:
        p = pytester.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(payload_for(markers, rel))
    return job


def trusted_ini(pytester: pytest.Pytester, extra: str = "") -> Path:
    p = pytester.path / "trusted.ini"
    p.write_text("[pytest]\n" + extra)
    return p


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*args, timeout=TIMEOUT)


def setup_errors(result: pytest.RunResult) -> dict[str, list[str]]:
    """``ERROR at setup of X`` sections: X -> the lines of the section body."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.outlines:
        m = re.match(r"^_+ ERROR at setup of (.+?) _+$", line)
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        if line.startswith(("___", "===")):
            current = None
        elif current is not None:
            current.append(line)
    return out


def job_errors(result: pytest.RunResult, job: str) -> dict[str, list[str]]:
    # a failure header names the item "<job node id> <code>"
    return {k: v for k, v in setup_errors(result).items() if re.search(rf"(^|/){re.escape(job)}(/| |::)", k)}


def assert_job_errors(result: pytest.RunResult, job: str, *needles: str, n_items: int = 1) -> None:
    """``job`` errors once, at setup of its first item, with ONE line naming the file and the reason, no
    traceback (its other items are skipped, pointing at that error)."""
    errs = job_errors(result, job)
    assert len(errs) == n_items, (job, list(setup_errors(result)), result.stdout.str())
    for item, body in errs.items():
        assert len(body) == 1, (item, body)
        assert "unusable input" in body[0], body
        for needle in needles:
            assert needle in body[0], (needle, body[0])


# --- 1. nothing agent-written is ever imported, and the job is still audited ---------------------------------

def test_payloads_are_live_without_the_plugin(pytester: pytest.Pytester) -> None:
    """Control: plain ``pytest runs/`` (plugin inactive) DOES execute the planted code (PYTEST-NOTES V0), so the
    absence of markers in the other tests means something."""
    plant_hostile_tree(pytester)
    run(pytester, "runs", "-p", "no:cacheprovider")
    found = markers_of(pytester)
    for expected in ("runs__conftest.py", "job__conftest.py", "job__test_x.py", "job__x_test.py",
                     "job__tests__conftest.py", "job__verifier__test_x.py", "job__agent__x_test.py",
                     "job__test_doc.txt"):
        assert expected in found, found
    assert "job__evil.pth" not in found  # .pth only matters to `site` at interpreter start (PYTEST-NOTES §2.2)


SAFE_VARIANTS = {
    "equals-form": ((), 2),
    "doctest-flags": (("--doctest-modules", "--doctest-glob=*.txt"), 2),
    # V3 + H5: an IDE-style node id as a positional argument is safe only with a trusted -c config
    "node-id+trusted-c": (("runs/grp/job/result.json::P1", "-c", "trusted.ini"), 1),
    "xdist": (("-n", "2"), 2),
    "xdist+node-id+trusted-c": (("-n", "2", "runs/grp/job/result.json::P1", "-c", "trusted.ini"), 1),
}


@pytest.mark.parametrize("variant", list(SAFE_VARIANTS))
def test_hostile_tree_is_audited_and_never_imported(pytester: pytest.Pytester, variant: str) -> None:
    extra, n_passed = SAFE_VARIANTS[variant]
    if "-n" in extra and not HAS_XDIST:
        pytest.skip("pytest-xdist is not installed")
    plant_hostile_tree(pytester)
    trusted_ini(pytester)
    result = run(pytester, "--trajaudit=runs", *BASE, "-v", *extra)
    assert_no_markers(pytester)
    result.assert_outcomes(passed=n_passed)
    assert result.ret == 0
    assert any("runs/grp/job/result.json::P1" in ln and "PASSED" in ln for ln in result.outlines), result.outlines
    result.stdout.no_fnmatch_line("*test_x*")
    result.stdout.no_fnmatch_line("*test_doc*")


def test_bare_flag_with_trusted_ini_roots(pytester: pytest.Pytester) -> None:
    """``--trajaudit`` without a path takes the roots from a trusted config's ``trajaudit_roots``."""
    plant_hostile_tree(pytester)
    trusted_ini(pytester, "trajaudit_roots = runs\n")
    result = run(pytester, "-c", "trusted.ini", "--trajaudit", *BASE)
    assert_no_markers(pytester)
    result.assert_outcomes(passed=2)


def test_root_named_like_a_test_dir(pytester: pytest.Pytester) -> None:
    """pytest anchors initial conftests at ``<cwd>/test*`` (PYTEST-NOTES A1); forced noconftest covers it."""
    markers = pytester.path / "MARKERS"
    make_job(pytester.path / "test-runs", "job", extra_files={"conftest.py": py_payload(markers, "job_conftest")})
    (pytester.path / "test-runs" / "conftest.py").write_text(py_payload(markers, "root_conftest"))
    result = run(pytester, "--trajaudit=test-runs", *BASE)
    assert_no_markers(pytester)
    result.assert_outcomes(passed=2)


@pytest.mark.parametrize("root", ["runs/grp/job", "runs/grp/job/trajectory/acp_trajectory.jsonl"],
                         ids=["deep-root", "bare-file-in-job"])
def test_init_above_a_deep_root_is_not_imported(pytester: pytest.Pytester, root: str) -> None:
    """Auditing one job (or one trajectory file) inside a hostile tree: the ``__init__.py`` files above it are
    agent-reachable too and must not be imported: the directories between rootdir and the root are TreeNodes
    (never pytest's Dir/Package, whose setup imports __init__.py)."""
    plant_hostile_tree(pytester)
    result = run(pytester, f"--trajaudit={root}", *BASE)
    result.assert_outcomes(passed=2)
    assert_no_markers(pytester)


# --- 2. a config file inside the audited tree: refused ---------------------------------------------------------

HIJACK_ADDOPTS = '-k "not P"'  # would silently deselect every principle item if pytest applied it
HIJACK_CONFIGS = {
    "pytest.ini": f"[pytest]\naddopts = {HIJACK_ADDOPTS}\n",
    "tox.ini": f"[pytest]\naddopts = {HIJACK_ADDOPTS}\n",
    "setup.cfg": f"[tool:pytest]\naddopts = {HIJACK_ADDOPTS}\n",
    "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-k \"not P\"'\n",
    "pytest.toml": '[pytest]\naddopts = ["-k", "not P"]\n',
}


def assert_refused(result: pytest.RunResult, *needles: str) -> None:
    assert result.ret == USAGE_ERROR, result.stdout.str() + result.stderr.str()
    err = result.stderr.str()
    for needle in needles:
        assert needle in err, err
    out = result.stdout.str()
    assert " passed" not in out and "deselected" not in out, out


@pytest.mark.parametrize("cfg", list(HIJACK_CONFIGS))
@pytest.mark.parametrize("form", ["space-form-job", "space-form-root", "node-id"])
def test_config_inside_tree_is_refused(pytester: pytest.Pytester, cfg: str, form: str) -> None:
    """pytest picks its config from the common ancestor of the positional arguments BEFORE any plugin loads
    (PYTEST-NOTES §2.4). ``--trajaudit runs/job`` (space form) makes ``runs/job`` positional at that point;
    an IDE-style node id does too. The guard refuses; the hijack ini's ``-k "not P"`` never weakens an audit."""
    markers = pytester.path / "MARKERS"
    job = make_job(pytester.path / "runs", "job", extra_files={"conftest.py": py_payload(markers, "job_conftest")})
    where = pytester.path / "runs" if form == "space-form-root" else job
    (where / cfg).write_text(HIJACK_CONFIGS[cfg])
    args = {"space-form-job": ("--trajaudit", "runs/job"),
            "space-form-root": ("--trajaudit", "runs"),
            "node-id": ("--trajaudit=runs", "runs/job/result.json::P1")}[form]
    result = run(pytester, *args, *BASE)
    assert_refused(result, "lies inside an audited tree", cfg)
    assert_no_markers(pytester)


def test_config_inside_tree_ignored_by_equals_form(pytester: pytest.Pytester) -> None:
    """H2: with ``--trajaudit=runs/job`` nothing positional points pytest into the tree: the planted ini is
    never read, so its ``-k "not P"`` does not apply and the job is audited in full."""
    job = make_job(pytester.path / "runs", "job")
    (job / "pytest.ini").write_text(HIJACK_CONFIGS["pytest.ini"])
    result = run(pytester, "--trajaudit=runs/job", *BASE)
    result.assert_outcomes(passed=2)


def test_config_inside_tree_with_trusted_c(pytester: pytest.Pytester) -> None:
    """H5: a node id plus a trusted ``-c``: the planted ini is never read."""
    job = make_job(pytester.path / "runs", "job")
    (job / "pytest.ini").write_text(HIJACK_CONFIGS["pytest.ini"])
    trusted_ini(pytester)
    result = run(pytester, "--trajaudit=runs", "runs/job/result.json::P1", "-c", "trusted.ini", *BASE)
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("args", [
    ("--trajaudit=runs", "--rootdir=runs/job"),
    # H6: no config at all, rootdir falls back to the node id's directory
    ("--trajaudit=runs", "runs/job/result.json::P1", "--config-file=/dev/null"),
], ids=["rootdir-option", "no-config-node-id"])
def test_rootdir_inside_tree_is_refused(pytester: pytest.Pytester, args: tuple[str, ...]) -> None:
    make_job(pytester.path / "runs", "job")
    result = run(pytester, *args, *BASE)
    assert_refused(result, "rootdir", "lies inside an audited tree")


@pytest.mark.parametrize("with_ini", [True, False], ids=["planted-ini", "no-ini"])
def test_cwd_inside_tree_is_refused(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                    with_ini: bool) -> None:
    """Running from inside a job directory: pytest's rootdir (and any planted ini) is in the tree."""
    job = make_job(pytester.path / "runs", "job")
    if with_ini:
        (job / "pytest.ini").write_text(HIJACK_CONFIGS["pytest.ini"])
    monkeypatch.chdir(job)
    result = run(pytester, "--trajaudit=.", *BASE)
    assert_refused(result, "pytest.ini" if with_ini else "rootdir", "lies inside an audited tree")


def test_ini_disabling_the_plugin_fails_closed(pytester: pytest.Pytester) -> None:
    job = make_job(pytester.path / "runs", "job")
    (job / "pytest.ini").write_text("[pytest]\naddopts = -p no:trajaudit\n")
    result = run(pytester, "--trajaudit", "runs/job", *BASE)
    assert result.ret == USAGE_ERROR
    assert " passed" not in result.stdout.str()


def test_ini_plugin_import_is_pytest_own_limitation(pytester: pytest.Pytester) -> None:
    """DOCUMENTED LIMITATION (PYTEST-NOTES H1/H3/H4), not prevented: when pytest itself reads an ini from the
    audited tree, it applies ``pythonpath=`` and imports ``-p`` plugins from ``addopts`` before any entry-point
    plugin loads. The plugin cannot stop that import; it only refuses to run the audit afterwards. The defence
    is the invocation: the equals form, a trusted ``-c`` (or the ``trajaudit`` command), shown safe below.

    Variants where pytest imports agent code before the plugin can act: ``--trajaudit runs/job`` (space form),
    ``--trajaudit=runs runs/job/result.json::P1`` (node id, also with ``--rootdir=.``) without ``-c``."""
    markers = pytester.path / "MARKERS"
    job = make_job(pytester.path / "runs", "job",
                   extra_files={"pytest.ini": "[pytest]\naddopts = -p evilplug\npythonpath = .\n",
                                "evilplug.py": py_payload(markers, "evilplug")})
    assert job.is_dir()
    # unsafe invocations: pytest imports evilplug (RCE happened), then the guard refuses
    for args in (("--trajaudit", "runs/job"),
                 ("--trajaudit=runs", "runs/job/result.json::P1"),
                 ("--trajaudit=runs", "runs/job/result.json::P1", "--rootdir=.")):
        result = run(pytester, *args, *BASE)
        assert result.ret == USAGE_ERROR, (args, result.stdout.str(), result.stderr.str())
        assert "lies inside an audited tree" in result.stderr.str()
        assert markers_of(pytester) == ["evilplug"], args  # pytest's own import, before our hooks exist
        (markers / "evilplug").unlink()
    # safe invocations: the planted ini is never read, evilplug never imported, and the job is audited
    trusted_ini(pytester)
    for args, n in ((("--trajaudit=runs/job",), 2),
                    (("--trajaudit=runs", "runs/job/result.json::P1", "-c", "trusted.ini"), 1),
                    (("--trajaudit=runs", "runs/job/result.json::P1", "--config-file=/dev/null", "--rootdir=."), 1)):
        result = run(pytester, *args, *BASE)
        assert_no_markers(pytester)
        result.assert_outcomes(passed=n)


# --- 3. plain pytest never walks into trajaudit_roots --------------------------------------------------------

@pytest.mark.parametrize("extra", [(), ("--doctest-modules", "--doctest-glob=*.txt")], ids=["plain", "doctest"])
def test_plain_pytest_skips_audit_roots(pytester: pytest.Pytester, extra: tuple[str, ...]) -> None:
    plant_hostile_tree(pytester)
    pytester.makeini("[pytest]\ntrajaudit_roots = runs\n")
    pytester.makepyfile(test_trusted="def test_ok():\n    pass\n")
    result = run(pytester, "-p", "no:cacheprovider", *extra)
    assert_no_markers(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*runs/*")


def test_plain_pytest_with_only_audit_roots_says_trajaudit_is_required(pytester: pytest.Pytester) -> None:
    """Nothing but configured roots: one line naming --trajaudit and pytest's usage-error code, never a silent 5."""
    make_job(pytester.path / "runs", "job")
    pytester.makeini("[pytest]\ntrajaudit_roots = runs\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [ln for ln in result.outlines if "trajaudit_roots" in ln]
    assert lines == ["ERROR: trajaudit: trajaudit_roots is set (runs) but plain pytest does not audit; "
                     "run `pytest --trajaudit` (or `trajaudit`)"]
    # the same project with --trajaudit audits the configured root
    audited = pytester.runpytest("--trajaudit", "-p", "no:cacheprovider")
    audited.stdout.fnmatch_lines(["1 job(s): *"])
    assert audited.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    # the project's own tests, all deselected: pytest's own exit 5 and no word about the audit
    pytester.makepyfile(test_own="def test_ok():\n    pass\n")
    deselected = pytester.runpytest("-p", "no:cacheprovider", "-k", "nothing")
    assert deselected.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert not [ln for ln in deselected.outlines if "trajaudit_roots" in ln]
    (pytester.path / "test_own.py").unlink()
    # without configured roots an empty project keeps pytest's own exit 5
    pytester.makeini("[pytest]\n")
    assert pytester.runpytest("-p", "no:cacheprovider").ret == pytest.ExitCode.NO_TESTS_COLLECTED


@pytest.mark.xfail(strict=True, reason=(
    "plugin.py gap: pytest imports <cwd>/test*/conftest.py as an INITIAL conftest (PYTEST-NOTES A1), before "
    "collection, so pytest_ignore_collect cannot keep plain `pytest` out of a trajaudit_roots entry named test*"))
def test_plain_pytest_skips_audit_root_named_test_star(pytester: pytest.Pytester) -> None:
    markers = pytester.path / "MARKERS"
    make_job(pytester.path / "test-runs", "job", extra_files={"conftest.py": py_payload(markers, "job_conftest")})
    (pytester.path / "test-runs" / "conftest.py").write_text(py_payload(markers, "root_conftest"))
    pytester.makeini("[pytest]\ntrajaudit_roots = test-runs\n")
    pytester.makepyfile(test_trusted="def test_ok():\n    pass\n")
    result = run(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert_no_markers(pytester)  # fails today: ['root_conftest']


# --- 4. symlinks are never followed ----------------------------------------------------------------------------

def test_symlinked_trajectory_errors_the_job(pytester: pytest.Pytester) -> None:
    runs = pytester.path / "runs"
    outside = pytester.path / "outside.jsonl"
    outside.write_text('{"type":"user_message","text":"secret"}\n{"type":"agent_message","text":"x"}\n')
    make_job(runs, "good")
    for name, target in (("to_outside", outside), ("to_other_job", runs / "good" / "trajectory" / "acp_trajectory.jsonl"),
                         ("to_etc", Path("/etc/hostname"))):
        traj = make_job(runs, name) / "trajectory" / "acp_trajectory.jsonl"
        traj.unlink()
        traj.symlink_to(target)
    result = run(pytester, "--trajaudit=runs", *BASE)
    for name in ("to_outside", "to_other_job", "to_etc"):
        assert_job_errors(result, name, "trajectory/acp_trajectory.jsonl", "symlink")
    result.assert_outcomes(passed=2, errors=3, skipped=3)
    assert "Traceback" not in result.stdout.str()


def test_symlinked_result_json_errors_the_job(pytester: pytest.Pytester) -> None:
    runs = pytester.path / "runs"
    make_job(runs, "good")
    res = make_job(runs, "linked") / "result.json"
    res.unlink()
    res.symlink_to(runs / "good" / "result.json")
    result = run(pytester, "--trajaudit=runs", *BASE)
    assert_job_errors(result, "linked", "result.json", "symlink")
    result.assert_outcomes(passed=2, errors=1, skipped=1)


def test_symlinked_subdirectory_is_not_followed(pytester: pytest.Pytester) -> None:
    """``agent -> elsewhere``: nothing under it is read or imported. A job whose only trajectory sits behind the
    link is unusable (named, "symlink"); a job with its own trajectory is audited from that file alone."""
    markers = pytester.path / "MARKERS"
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    # a trajectory that P1 would FAIL (successful read of the oracle solution) if it were ever read
    (elsewhere / "acp_trajectory.jsonl").write_text(
        '{"type":"user_message","text":"do x"}\n'
        '{"type":"tool_call","tool_call_id":"t1","kind":"read","title":"Read /oracle/solve.sh","status":"completed",'
        '"content":[{"type":"content","content":{"type":"text","text":"echo 42"}}]}\n')
    for rel in ("conftest.py", "test_x.py", "__init__.py"):
        (elsewhere / rel).write_text(py_payload(markers, f"elsewhere__{rel}"))
    runs = pytester.path / "runs"
    (make_job(runs, "with_own") / "agent").symlink_to(elsewhere, target_is_directory=True)
    only = make_job(runs, "only_link")
    (only / "trajectory" / "acp_trajectory.jsonl").unlink()
    (only / "trajectory").rmdir()
    (only / "agent").symlink_to(elsewhere, target_is_directory=True)
    (only / "verifier").mkdir()
    result = run(pytester, "--trajaudit=runs", *BASE, "--doctest-modules")
    assert_no_markers(pytester)
    assert_job_errors(result, "only_link", "agent: is a symlink")
    result.assert_outcomes(passed=2, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*with_own/result.json ..*"])


def test_trajectory_search_never_lists_through_a_symlink(tmp_path: Path) -> None:
    """The loader's glob fallbacks (``agent/*.jsonl`` ...) must not list a directory outside the job through a
    symlinked ``agent``: file names from elsewhere never become candidates (nor reach the report's meta)."""
    from pytest_trajaudit.discover.jobs import classify
    from pytest_trajaudit.principles import registry
    from pytest_trajaudit.principles.engine import audit_job
    from pytest_trajaudit.settings import Settings

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sessions" / "projects" / "p").mkdir(parents=True)
    (elsewhere / "secret_name.jsonl").write_text("{}\n")
    (elsewhere / "sessions" / "projects" / "p" / "s.jsonl").write_text("{}\n")
    job = make_job(tmp_path / "runs", "job")
    (job / "agent").symlink_to(elsewhere, target_is_directory=True)
    ref = classify(job)
    assert ref is not None
    audit = audit_job(ref, Settings(), [registry()["P1"]])
    assert audit.error is None
    assert audit.results["P1"].status == "PASS"
    found = audit.meta["trajectory_candidates"]
    assert not any("secret_name" in c or "projects/p" in c for c in found), found


def test_symlinked_job_dirs_are_not_walked(pytester: pytest.Pytester) -> None:
    markers = pytester.path / "MARKERS"
    runs = pytester.path / "runs"
    make_job(runs, "real")
    outside_job = make_job(pytester.path / "elsewhere", "ext",
                           extra_files={"conftest.py": py_payload(markers, "ext_conftest")})
    (runs / "alias_in").symlink_to(runs / "real", target_is_directory=True)
    (runs / "alias_out").symlink_to(outside_job, target_is_directory=True)
    (runs / "grp_link").symlink_to(pytester.path / "elsewhere", target_is_directory=True)
    result = run(pytester, "--trajaudit=runs", *BASE, "-v")
    assert_no_markers(pytester)
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert "alias_in" not in out and "alias_out" not in out and "grp_link" not in out and "ext" not in out


def test_node_id_through_a_symlinked_job_is_not_audited(pytester: pytest.Pytester) -> None:
    markers = pytester.path / "MARKERS"
    runs = pytester.path / "runs"
    make_job(runs, "real")
    outside_job = make_job(pytester.path / "elsewhere", "ext",
                           extra_files={"conftest.py": py_payload(markers, "ext_conftest")})
    (runs / "alias").symlink_to(outside_job, target_is_directory=True)
    trusted_ini(pytester)
    result = run(pytester, "--trajaudit=runs", "runs/alias/result.json::P1", "-c", "trusted.ini", *BASE)
    assert_no_markers(pytester)
    assert result.ret != 0
    assert " passed" not in result.stdout.str()


@pytest.mark.parametrize("form", ["equals", "positional"])
def test_symlinked_audit_root_is_refused(pytester: pytest.Pytester, form: str) -> None:
    make_job(pytester.path / "runs", "job")
    (pytester.path / "linkruns").symlink_to(pytester.path / "runs", target_is_directory=True)
    args = ("--trajaudit=linkruns",) if form == "equals" else ("--trajaudit", "linkruns", "-c", "trusted.ini")
    trusted_ini(pytester)
    result = run(pytester, *args, *BASE)
    assert_refused(result, "symlink", "linkruns")


# --- 5. FIFOs are never opened for a blocking read -------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
@pytest.mark.parametrize("rel", ["trajectory/acp_trajectory.jsonl", "result.json"])
def test_fifo_is_an_error_not_a_hang(pytester: pytest.Pytester, rel: str) -> None:
    runs = pytester.path / "runs"
    make_job(runs, "good")
    fifo = make_job(runs, "fifo") / rel
    fifo.unlink()
    os.mkfifo(fifo)
    result = run(pytester, "--trajaudit=runs", *BASE)  # TIMEOUT turns a hang into a failure
    assert_job_errors(result, "fifo", rel, "not a regular file")
    result.assert_outcomes(passed=2, errors=1, skipped=1)


# --- 6. size limits ---------------------------------------------------------------------------------------------

def big_lines(n: int = 40) -> list[dict]:
    return ([{"type": "user_message", "text": "do x"}]
            + [{"type": "agent_message", "text": f"thinking step {i} " + "x" * 40} for i in range(n)]
            + [{"type": "agent_message", "text": "done"}])


def test_per_file_size_limit(pytester: pytest.Pytester) -> None:
    runs = pytester.path / "runs"
    make_job(runs, "small", lines=[{"type": "user_message", "text": "do x"}, {"type": "agent_message", "text": "ok"}])
    big = make_job(runs, "big", lines=big_lines())
    assert (big / "trajectory" / "acp_trajectory.jsonl").stat().st_size > 1048
    result = run(pytester, "--trajaudit=runs", "--trajaudit-max-file-mb=0.001", *BASE)
    limit = str(int(0.001 * 1024 * 1024))
    assert_job_errors(result, "big", "trajectory/acp_trajectory.jsonl", "per-file size limit", limit)
    result.assert_outcomes(passed=2, errors=1, skipped=1)


def test_per_job_size_limit(pytester: pytest.Pytester) -> None:
    """Each file fits the per-file limit; together they exceed the per-job limit."""
    runs = pytester.path / "runs"
    make_job(runs, "small", lines=[{"type": "user_message", "text": "do x"}, {"type": "agent_message", "text": "ok"}])
    result_doc = {"task_name": "t", "rollout_name": "big__1", "rewards": {"reward": 1.0}, "n_tool_calls": 0,
                  "padding": "p" * 700}
    big = make_job(runs, "big", lines=big_lines(8), result=result_doc)
    sizes = [(big / r).stat().st_size for r in ("result.json", "trajectory/acp_trajectory.jsonl")]
    assert all(s < 1048 for s in sizes) and sum(sizes) > 1048, sizes
    result = run(pytester, "--trajaudit=runs", "--trajaudit-max-job-mb=0.001", *BASE)
    limit = str(int(0.001 * 1024 * 1024))
    assert_job_errors(result, "big", "per-job size limit", limit)
    result.assert_outcomes(passed=2, errors=1, skipped=1)


# --- 7. unusable input: never a pass, never a traceback ---------------------------------------------------------

UNUSABLE_TRAJECTORIES: dict[str, str | bytes] = {
    "truncated_jsonl": '{"type":"user_message","text":"do x"}\n{"type":"agent_message","te',
    "two_docs_one_line": '{"type":"user_message","text":"a"}{"type":"agent_message","text":"b"}\n',
    "two_docs_in_jsonl": ('{"type":"user_message","text":"a"}\n'
                          '{"type":"agent_message","text":"b"}{"type":"agent_message","text":"c"}\n'),
    "trailing_comma": '{"type":"user_message","text":"a",}\n{"type":"agent_message","text":"b"}\n',
    "bom_garbage": b"\xff\xfe\x00garbage",
    "invalid_utf8": b'{"type":"user_message","text":"\xff\xfe"}\n{"type":"agent_message","text":"b"}\n',
    "invalid_utf8_text": b"hello \xc3\x28 world\n",
    "nul_bytes": b"\x00\x00\x00\x00",
    "nul_in_text": b"$ ls\nhello\x00world\n",
    "empty": "",
    "blank": "\n  \n\t\n",
    "deep_open": "[" * 100000,
    "deep_balanced": "[" * 100000 + "]" * 100000,
    "deep_line": '{"type":"user_message","text":"a"}\n' + "[" * 100000 + "\n",
    "lone_surrogate": '{"type":"user_message","text":"\\ud800"}\n{"type":"agent_message","text":"b"}\n',
    "huge_number": '{"type":"user_message","text":"a","n":1e999}\n{"type":"agent_message","text":"b"}\n',
    "wrong_types": '{"type":[1]}\n{"type":{"a":1}}\n',
    "json_not_a_trajectory": "{}",
    # 10^6-deep: refused by the strict decoder's nesting limit, never a RecursionError
    "deep_million_open": "[" * 1_000_000,
    "deep_million_balanced": '{"a":' * 1_000_000 + "1" + "}" * 1_000_000,
    "deep_million_in_line": '{"type":"user_message","text":"a"}\n{"type":"tool_call","content":' + "[" * 1_000_000 + "\n",
    # nested deep enough for a recursive loader, within orjson's 1024 levels (a fixed limit, see loaders/common.py)
    "deep_content_block": ('{"type":"user_message","text":"a"}\n{"type":"tool_call","tool_call_id":"t","kind":"read",'
                           '"title":"Read /a","status":"completed","content":[{"type":"content","content":'
                           + "[" * 1000 + "]" * 1000 + "}]}\n"),
}
UNUSABLE_RESULTS: dict[str, str | bytes] = {
    "result_truncated": '{"task_name": ',
    "result_not_object": "[1, 2]",
    "result_invalid_utf8": b'{"task_name": "\xff"}',
    "result_deep_million": '{"a":' * 1_000_000 + "1" + "}" * 1_000_000,
}
# other job files an agent writes: (file, content)
UNUSABLE_OTHER: dict[str, tuple[str, str | bytes]] = {
    "prompts_deep_million": ("prompts.json", "[" * 1_000_000 + "]" * 1_000_000),
    "prompts_deep_recursive": ("prompts.json", "[" * 900 + '"p"' + "]" * 900),
    "ctrf_deep_million": ("verifier/ctrf.json", '{"results":' * 1_000_000),
    "ctrf_not_object": ("verifier/ctrf.json", "[]"),
    "reward_nul": ("verifier/reward.txt", b"\x00\x00"),
    "output_truncated": ("verifier/output.json", '{"tests": ['),
}


def test_unusable_input_is_an_error_with_one_line(pytester: pytest.Pytester) -> None:
    runs = pytester.path / "runs"
    make_job(runs, "aaa_good")
    for name, content in UNUSABLE_TRAJECTORIES.items():
        make_job(runs, name, lines=content)
    for name, content in UNUSABLE_RESULTS.items():
        make_job(runs, name, result=content)
    for name, (rel, content) in UNUSABLE_OTHER.items():
        make_job(runs, name, extra_files={rel: content})
    result = run(pytester, "--trajaudit=runs", *BASE)
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out
    assert "unusable input" in out
    for name in UNUSABLE_TRAJECTORIES:
        assert_job_errors(result, name, "trajectory/acp_trajectory.jsonl")
    for name in UNUSABLE_RESULTS:
        assert_job_errors(result, name, "result.json")
    for name, (rel, _) in UNUSABLE_OTHER.items():
        assert_job_errors(result, name, rel)
    n_bad = len(UNUSABLE_TRAJECTORIES) + len(UNUSABLE_RESULTS) + len(UNUSABLE_OTHER)
    result.assert_outcomes(passed=2, errors=n_bad, skipped=n_bad)
    result.stdout.fnmatch_lines(["*aaa_good/result.json ..*"])
    assert result.ret != 0


# --- 8. special files, odd names, growing files, huge trees ----------------------------------------------

def _mknod_or_skip(path: Path, minor: int = 5) -> None:
    """A character device node (1, minor): /dev/zero by default, which would never end if it were read."""
    import stat as stat_mod

    try:
        os.mknod(path, stat_mod.S_IFCHR | 0o600, os.makedev(1, minor))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")


def _unix_socket(path: Path) -> None:
    import socket

    s = socket.socket(socket.AF_UNIX)
    cwd = os.getcwd()
    try:
        os.chdir(path.parent)  # a relative name: AF_UNIX paths are limited to ~108 bytes
        s.bind(path.name)
    finally:
        os.chdir(cwd)
        s.close()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_devices_sockets_and_fifos_are_never_read(pytester: pytest.Pytester) -> None:
    """A device (here /dev/zero's numbers: endless if read), a UNIX socket or a FIFO in any slot a job reads: the
    job errors at once naming the file ("not a regular file"); a special file lying loose in a container is no job;
    nothing hangs (the subprocess timeout would fail the test)."""
    runs = pytester.path / "runs"
    make_job(runs, "good")
    slots = {"dev_traj": "trajectory/acp_trajectory.jsonl", "dev_result": "result.json",
             "dev_reward": "verifier/reward.txt", "sock_traj": "trajectory/acp_trajectory.jsonl",
             "sock_ctrf": "verifier/ctrf.json", "fifo_prompts": "prompts.json", "fifo_ctrf": "verifier/ctrf.json",
             "fifo_output": "verifier/output.json", "dev_stdout": "verifier/test-stdout.txt"}
    for name, rel in slots.items():
        f = make_job(runs, name) / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.unlink(missing_ok=True)
        if name.startswith("dev"):
            _mknod_or_skip(f)
        elif name.startswith("sock"):
            _unix_socket(f)
        else:
            os.mkfifo(f)
    os.mkfifo(runs / "output.jsonl")  # loose candidates in the container: their head is never read
    _mknod_or_skip(runs / "log.eval")  # named like a run (an Inspect log): a job that says why it is unusable
    _unix_socket(runs / "traces.json")
    result = run(pytester, "--trajaudit=runs", *BASE)
    for name, rel in slots.items():
        assert_job_errors(result, name, rel, "not a regular file")
    assert_job_errors(result, "log.eval", "not a regular file")
    result.assert_outcomes(passed=2, errors=len(slots) + 1, skipped=len(slots) + 1)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_special_file_given_directly_is_refused(pytester: pytest.Pytester, kind: str) -> None:
    target = pytester.path / "traj.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        _mknod_or_skip(target)
    result = run(pytester, "--trajaudit=traj.jsonl", *BASE)
    assert_refused(result, "not a directory or regular file", "traj.jsonl")


def test_symlinks_to_etc_and_to_other_jobs_in_every_slot(pytester: pytest.Pytester) -> None:
    """Every file or directory a job reads, replaced by a symlink to /etc (file or directory) or into another job:
    the job errors naming the link; nothing behind a link is read or quoted."""
    runs = pytester.path / "runs"
    good = make_job(runs, "good", extra_files={"prompts.json": '{"instruction": "secret-of-the-good-job"}'})
    links = {
        "res_passwd": ("result.json", Path("/etc/passwd"), "result.json"),
        "reward_etc": ("verifier/reward.txt", Path("/etc/hostname"), "verifier/reward.txt"),
        "prompts_other_job": ("prompts.json", good / "prompts.json", "prompts.json"),
        "verifier_dir_etc": ("verifier", Path("/etc"), "verifier/"),
        "trajdir_other_job": ("trajectory", good / "trajectory", "trajectory: is a symlink"),
        "ctrf_etc": ("verifier/ctrf.json", Path("/etc/os-release"), "verifier/ctrf.json"),
    }
    for name, (rel, target, _) in links.items():
        job = make_job(runs, name)
        p = job / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_dir() and not p.is_symlink():
            import shutil

            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)
        p.symlink_to(target, target_is_directory=target.is_dir())
    result = run(pytester, "--trajaudit=runs", *BASE, "--trajaudit-report=out")
    for name, (_, _, named) in links.items():
        assert_job_errors(result, name, named, "symlink")
    result.assert_outcomes(passed=2, errors=len(links), skipped=len(links))
    out = result.stdout.str() + "".join(p.read_text() for p in (pytester.path / "out").rglob("*") if p.is_file())
    assert "root:" not in out and "secret-of-the-good-job" not in out  # /etc/passwd, the other job's prompt


@pytest.mark.parametrize("what", ["job-dir", "bare-file", "parent-of-root"])
def test_audit_path_that_is_a_symlink_is_refused(pytester: pytest.Pytester, what: str) -> None:
    """A job directory (or trajectory file) given directly that is itself a symlink is refused like a symlinked
    root, and so is a path through a symlinked directory (pass the real path)."""
    job = make_job(pytester.path / "runs", "job")
    if what == "job-dir":
        (pytester.path / "alias").symlink_to(job, target_is_directory=True)
        result = run(pytester, "--trajaudit=alias", *BASE)
        assert_refused(result, "symlink", "alias")
    elif what == "bare-file":
        (pytester.path / "t.jsonl").symlink_to(job / "trajectory" / "acp_trajectory.jsonl")
        result = run(pytester, "--trajaudit=t.jsonl", *BASE)
        assert_refused(result, "symlink", "t.jsonl")
    else:
        (pytester.path / "via").symlink_to(pytester.path / "runs", target_is_directory=True)
        result = run(pytester, "--trajaudit=via/job", *BASE)
        assert_refused(result, "goes through a symlink", "via/job")


ODD_NAMES = {  # directory name (bytes: some are not UTF-8) -> how job ids and node ids show it
    b"nl\nname": "nl\\nname", b"cr\rname": "cr\\rname", b"esc\x1b[2K\x1b[1Ared": "esc\\x1b[2K\\x1b[1Ared",
    b"rtl\xe2\x80\xaeevil": "rtl\\u202eevil", b"bad\xffbyte": "bad\\xffbyte", b"lit\\nname": "lit\\\\nname",
    b"tab\tname": "tab\\tname", b"sp ace": "sp ace", "ütf-8 ✓".encode(): "ütf-8 ✓",
}


def test_odd_file_names_are_escaped_everywhere(pytester: pytest.Pytester) -> None:
    """Job directories named with newlines, ESC sequences (which could erase a FAILED line on a terminal), a
    bidi override, a byte that is not UTF-8, a literal backslash: every job is audited; node ids, job ids, the
    terminal, JUnit XML and the reports show the names escaped (``redact.printable``), all distinct; nothing
    crashes (JUnit and report writing of a non-UTF-8 name included). The cheating job is still INVALID."""
    import xml.etree.ElementTree as ET

    import orjson

    runs = pytester.path / "runs"
    cheat = [{"type": "user_message", "text": "do x"},
             {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": "Read /oracle/expected_answer.json",
              "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "42"}}]},
             {"type": "agent_message", "text": "done"}]
    for raw in ODD_NAMES:
        make_job(runs, os.fsdecode(raw), lines=cheat if raw == b"nl\nname" else None,
                 result={"task_name": "t", "rewards": {"reward": 1.0}, "n_tool_calls": 1})
    bad_link = make_job(runs, "zz_badfile") / "agent" / os.fsdecode(b"x\xff\n.traj.json")
    bad_link.parent.mkdir()
    (bad_link.parent.parent / "trajectory" / "acp_trajectory.jsonl").unlink()
    bad_link.symlink_to("/etc/hostname")
    if HAS_XDIST:  # xdist ships every report to the controller: a name that is not UTF-8 crashed the worker
        par = run(pytester, "--trajaudit=runs", *BASE, "-n", "2")
        assert "INTERNALERROR" not in par.stdout.str() + par.stderr.str()
        par.assert_outcomes(passed=2 * len(ODD_NAMES) - 1, failed=1, errors=1, skipped=1)
    result = run(pytester, "--trajaudit=runs", *BASE, "-rA", "--junitxml=j.xml", "--trajaudit-report=out")
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    assert "\x1b" not in out and "\u202e" not in out and "\r" not in out
    result.assert_outcomes(passed=2 * len(ODD_NAMES) - 1, failed=1, errors=1, skipped=1)
    assert_job_errors(result, "zz_badfile", "agent/x\\xff\\n.traj.json: is a symlink")
    for shown in ODD_NAMES.values():
        assert f"PASSED runs/{shown}/result.json::P2" in out, shown
    assert "FAILED runs/nl\\nname/result.json::P1" in out
    assert "INVALID runs/nl\\nname/result.json: P1 FAIL" in out
    ET.parse(pytester.path / "j.xml")  # well-formed
    summary = orjson.loads((pytester.path / "out" / "summary.json").read_bytes())  # strict UTF-8 JSON
    ids = sorted(j["job"] for j in summary["jobs"])
    assert ids == sorted([f"runs/{shown}" for shown in ODD_NAMES.values()] + ["runs/zz_badfile"])
    assert summary["verdicts"]["INVALID"] == 1
    for f in (pytester.path / "out").rglob("*.json"):
        orjson.loads(f.read_bytes())
    assert "\x1b" not in (pytester.path / "out" / "report.md").read_text()


def test_same_root_name_twice_keeps_jobs_apart(pytester: pytest.Pytester) -> None:
    """``--trajaudit=a/runs --trajaudit=b/runs`` gave both jobs the id ``runs/j``: the roll-up merged them and
    reported the cheating job CLEAN. Job ids now take as much of the root's path as makes them unique."""
    cheat = [{"type": "user_message", "text": "do x"},
             {"type": "tool_call", "tool_call_id": "t1", "kind": "read", "title": "Read /oracle/expected_answer.json",
              "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "42"}}]}]
    make_job(pytester.path / "a" / "runs", "j")
    make_job(pytester.path / "b" / "runs", "j", lines=cheat)
    result = run(pytester, "--trajaudit=b/runs", "--trajaudit=a/runs", *BASE)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["2 job(s): 1 INVALID, 1 INCOMPLETE", "PR verdict: REJECT*",
                                 "INVALID b/runs/j/result.json: P1 FAIL*",
                                 "INCOMPLETE a/runs/j/result.json: incomplete: P11, P16 not run*"])


def test_hundred_thousand_empty_directories(pytester: pytest.Pytester) -> None:
    """runs/ with 100,000 empty directories and one real job deep inside: collection completes (an empty directory
    costs one scandir, no collector node) and audits exactly that job."""
    runs = pytester.path / "runs"
    runs.mkdir()
    for i in range(100_000):
        os.mkdir(runs / f"d{i:06d}")
    make_job(runs / "d050000" / "x", "job")
    result = pytester.runpytest_subprocess("--trajaudit=runs", *BASE, "-v", timeout=3 * TIMEOUT)  # a loaded CI box
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["runs/d050000/x/job/result.json::P1 PASSED*", "1 job(s): 1 INCOMPLETE"])


def test_tree_without_jobs_says_so(pytester: pytest.Pytester) -> None:
    """No job under the root (empty directories, files that are no runs): the verdict section says so and pytest
    exits 5 ("no tests collected"), never 0."""
    runs = pytester.path / "runs"
    for i in range(50):
        (runs / f"d{i}" / "sub").mkdir(parents=True)
    (runs / "notes.txt").write_text("not a run")
    (runs / "d1" / "config.json").write_text("{}")
    result = run(pytester, "--trajaudit=runs", *BASE)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["*trajaudit verdicts*", "0 job(s) audited: no job found under *runs*"])


def test_million_line_trajectories_complete(pytester: pytest.Pytester) -> None:
    """10^6-line inputs (JSON Lines, plain text) are audited, not hanging, with an events limit that admits them
    (the default of 500,000 refuses the JSON Lines one: tests/test_limits.py). (The campaign in fuzz/ also runs
    10^6 full events per line; here the lines are mostly empty objects to keep the suite fast.)"""
    runs = pytester.path / "runs"
    result_doc = {"task_name": "t", "rewards": {"reward": 1.0}, "n_tool_calls": 0}
    make_job(runs, "jsonl", result=result_doc,
             lines=b'{"type":"user_message","text":"do x"}\n' + b'{"type":"agent_thought","text":"t"}\n' * 100
             + b'{}\n' * 999_898 + b'{"type":"agent_message","text":"end"}\n')
    # plain text where the format allows it (a Harbor trial's CLI capture; a .jsonl slot holding text is unusable)
    (runs / "text" / "agent").mkdir(parents=True)
    (runs / "text" / "result.json").write_text(json.dumps(result_doc))
    (runs / "text" / "agent" / "claude-code.txt").write_bytes(b"output line\n" * 1_000_000)
    result = pytester.runpytest_subprocess("--trajaudit=runs", *BASE, "--trajaudit-principles=P1,P2,P7",
                                           "--trajaudit-max-events=2000000", timeout=3 * TIMEOUT)
    result.assert_outcomes(passed=6)
    assert "unusable" not in result.stdout.str()


def test_file_growing_while_read_hits_the_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that passes the size check at open and then grows (an agent process still writing): the bytes
    actually read are counted, so the job is unusable input naming the file, both for a file read whole
    (result.json) and for a streamed trajectory. Deterministic: the file grows at its first read."""
    from pytest_trajaudit.discover.jobs import classify
    from pytest_trajaudit.principles import registry
    from pytest_trajaudit.principles.engine import audit_job
    from pytest_trajaudit.settings import Settings

    limit = 64 * 1024
    real_read = os.read
    line = b'{"type":"agent_message","text":"' + b"x" * 100 + b'"}\n'
    for rel in ("result.json", "trajectory/acp_trajectory.jsonl"):
        job = make_job(tmp_path / rel.replace("/", "_"), "job")
        target = job / rel
        ino = target.stat().st_ino
        grown: list[int] = []

        def read(fd: int, n: int, target: Path = target, ino: int = ino, grown: list[int] = grown) -> bytes:
            if not grown and os.fstat(fd).st_ino == ino:
                with open(target, "ab") as fh:
                    fh.write(line * (2 * limit // len(line)))  # now twice the limit
                grown.append(1)
            return real_read(fd, n)

        monkeypatch.setattr(os, "read", read)
        ref = classify(job)
        assert ref is not None
        audit = audit_job(ref, Settings(max_file_bytes=limit, max_job_bytes=8 * limit), [registry()["P1"]])
        monkeypatch.setattr(os, "read", real_read)
        assert grown, rel
        assert audit.error is not None and audit.error.startswith(rel), audit.error
        # read whole: caught while reading; streamed: the stream's next pass re-opens the grown file and refuses it
        assert (f"grew past the per-file size limit of {limit} bytes while read" in audit.error
                or (rel != "result.json" and f"exceeds the per-file size limit of {limit} bytes" in audit.error))


def test_file_appended_by_a_background_writer(tmp_path: Path) -> None:
    """A writer thread appends to the trajectory while the job is loaded: whatever the interleaving, the load
    ends (a result or the documented unusable input) and never holds more than the per-file limit."""
    import threading

    from pytest_trajaudit.discover.jobs import classify
    from pytest_trajaudit.principles import registry
    from pytest_trajaudit.principles.engine import audit_job
    from pytest_trajaudit.settings import Settings

    limit = 1024 * 1024
    line = b'{"type":"agent_message","text":"' + b"y" * 200 + b'"}\n'
    job = make_job(tmp_path, "job")
    traj = job / "trajectory" / "acp_trajectory.jsonl"
    stop = threading.Event()

    def writer() -> None:
        with open(traj, "ab", buffering=0) as fh:
            while not stop.is_set() and fh.tell() < 2 * limit:
                fh.write(line * 50)

    t = threading.Thread(target=writer)
    t.start()
    try:
        ref = classify(job)
        assert ref is not None
        for _ in range(5):
            audit = audit_job(ref, Settings(max_file_bytes=limit, max_job_bytes=4 * limit), [registry()["P7"]])
            if audit.error is None:
                assert audit.meta["n_events"] * len(line) <= limit + 4096, audit.meta["n_events"]
            else:
                assert "\n" not in audit.error and audit.error.startswith("trajectory/acp_trajectory.jsonl")
        t.join(timeout=60)  # the writer stops by itself once the file is twice the cap
    finally:
        stop.set()
        t.join()
    assert traj.stat().st_size > limit
    audit = audit_job(ref, Settings(max_file_bytes=limit, max_job_bytes=4 * limit), [registry()["P7"]])
    assert audit.error is not None and "per-file size limit" in audit.error


def test_a_directory_the_auditor_cannot_list_is_a_collection_error_not_silence(tmp_path: Path) -> None:
    """Fail closed: an unlistable directory in the tree stops the run (exit 2) naming it, instead of looking empty
    and leaving its jobs unaudited. As root (which can list anything) the run drops to ``nobody``."""
    import os
    import sys
    import tempfile

    from .jobfactory import make_job

    base = Path(tempfile.mkdtemp(prefix="trajaudit-locked-"))
    try:
        base.chmod(0o755)
        make_job(base / "runs", "open__1")
        make_job(base / "runs" / "locked", "hidden__1")
        for d in (base / "runs", base / "runs" / "open__1", base / "runs" / "locked" / "hidden__1"):
            for p in [d, *d.rglob("*")]:
                p.chmod(0o755 if p.is_dir() else 0o644)
        (base / "runs" / "locked").chmod(0o700 if os.geteuid() == 0 else 0o000)
        (base / "trusted.ini").write_text("[pytest]\n")
        (base / "trusted.ini").chmod(0o644)
        # fork and drop privileges in the child (the venv's interpreter may not be executable by nobody)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.dup2(w, 1)
                os.dup2(w, 2)
                sys.stdout = sys.stderr = open(1, "w", closefd=False)  # noqa: SIM115 - the child's terminal
                os.environ["HOME"] = str(base)
                import importlib
                import pkgutil

                import pytest_trajaudit

                # import everything the run may import lazily while still allowed to read the venv (CI builds it
                # in a private temporary directory nobody cannot enter)
                for mod in pkgutil.walk_packages(pytest_trajaudit.__path__, "pytest_trajaudit."):
                    if not mod.name.startswith(("pytest_trajaudit.judges", "pytest_trajaudit.advisor.judging")):
                        importlib.import_module(mod.name)
                if os.geteuid() == 0:
                    os.setgid(65534)
                    os.setuid(65534)
                os.chdir(base)
                code = pytest.main(["--trajaudit=runs", "-c", "trusted.ini", "-p", "no:cacheprovider", "-q",
                                    "-p", "no:hypothesispytest"])
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(int(code))
            except BaseException:
                import traceback

                os.write(w, traceback.format_exc().encode())
                os._exit(99)
        os.close(w)
        with os.fdopen(r, encoding="utf-8", errors="replace") as fh:
            out = fh.read()
        _, status = os.waitpid(pid, 0)

        class proc:  # noqa: N801 - the shape the assertions below read
            returncode = os.waitstatus_to_exitcode(status)

        assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
        assert "trajaudit: cannot list" in out and "runs/locked" in out and "Permission denied" in out
        assert "Traceback" not in out
    finally:
        (base / "runs" / "locked").chmod(0o700)
        import shutil

        shutil.rmtree(base, ignore_errors=True)
