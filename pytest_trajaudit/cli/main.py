"""``trajaudit`` console command: run the audit through pytest the safe way (:data:`HELP` is its ``--help``).

    trajaudit [run] [PATH ...] [PYTEST_OPTION ...]     (or PATH ... -- PYTEST_ARGS ...)
    trajaudit merge OUT_DIR SHARD_DIR [SHARD_DIR ...]
    trajaudit audit --attempt-dir DIR --task-dir DIR [--output FILE] [--no-judge] ...   (advisor audit)
    trajaudit summarize --audits DIR [ATTEMPT ...]                                      (advisor verdicts)
    trajaudit trace-grader (--traces F | --audit F | --transcript F) [--json] ...      (trace-grader report)

It always passes a trusted config (``-c`` the packaged empty ``safe.ini``; a ``-c`` of the caller's comes after it
and wins), ``--rootdir`` outside the audited trees, ``-p no:cacheprovider`` (nothing is written into the evidence),
``-p no:anyio`` (skips litellm's transitive pytest plugin) and ``--trajaudit=PATH`` in the equals form (the seed's
PYTEST-NOTES.md §2.4-2.5). pytest runs in a child interpreter started with ``-P`` (the working directory is not put
on ``sys.path``) whose working directory is that rootdir, above every audited tree: a ``pytest.py``, ``argparse.py``
or ``zipfile.py`` an agent left in its job is never imported, even when the command is typed inside the job or
``PYTHONPATH`` holds ``.``. Relative paths the caller gave (audit paths, node ids, the values of the path options in
``PATH_OPTIONS``) are made absolute against the caller's working directory first, so they mean what they meant there.
The ``trajaudit_*`` keys of the caller's own pytest config (projectconfig.py) are passed on as ``-o`` options, never
a config file inside an audited tree.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SAFE_INI = Path(__file__).resolve().parent / "safe.ini"


def trusted_rootdir(paths: list[str], cwd: Path | None = None) -> Path:
    """The working directory, unless it lies in an audited tree (trust.audited_tree: a path inside a job makes
    the whole job the tree); then the directory just above the highest such tree."""
    from ..discover.trust import audited_tree

    cwd = Path(os.path.abspath(cwd or os.getcwd()))
    rootdir = cwd
    for p in paths:
        top = audited_tree(Path(_absolute(p, cwd)))
        if not top.is_dir() or top.is_symlink():
            top = top.parent
        if rootdir == top or top in rootdir.parents:
            rootdir = top.parent
    return rootdir


def build_args(paths: list[str], extra: list[str], cwd: Path | None = None) -> list[str]:
    cwd = Path(os.path.abspath(cwd or os.getcwd()))
    rootdir = trusted_rootdir(paths, cwd)
    args = ["-c", str(SAFE_INI), f"--rootdir={rootdir}", "-p", "no:cacheprovider", "-p", "no:anyio"]
    if not any(a.startswith("--tb") for a in extra):
        args.append("--tb=line")
    args += [f"--trajaudit={_absolute(p, cwd)}" for p in paths]
    return args + absolute_args(extra, cwd)


# Options whose value is a file or directory, resolved by pytest against its working directory. The child runs
# elsewhere, so their relative values are made absolute against the caller's.
PATH_OPTIONS = frozenset({
    "-c", "--config-file", "--rootdir", "--basetemp", "--confcutdir", "--junitxml", "--junit-xml", "--ctrf",
    "--log-file", "--trajaudit", "--trajaudit-report", "--trajaudit-tasks", "--trajaudit-rules",
    "--trajaudit-judge-cache", "--trajaudit-waivers", "--trajaudit-baseline", "--ignore", "--ignore-glob",
})


# Options that take a value that is no path in the next argument (``-k agent``): that value is left alone even
# when a file of that name exists.
VALUE_OPTIONS = frozenset({
    "-k", "-m", "-p", "-o", "-W", "-r", "-n", "--deselect", "--maxfail", "--dist", "--tx", "--durations",
    "--durations-min", "--color", "--code-highlight", "--junit-prefix", "--capture", "--tb", "--show-capture",
    "--log-level", "--log-format", "--log-date-format", "--log-cli-level", "--log-file-level", "--import-mode",
    "--override-ini", "--pythonwarnings", "--verbosity", "--trajaudit-principles", "--trajaudit-shard",
    "--trajaudit-trials", "--trajaudit-protocol", "--trajaudit-judge", "--trajaudit-judge-base-url",
    "--trajaudit-judge-api-key-env", "--trajaudit-judge-provider", "--trajaudit-judge-timeout",
    "--trajaudit-judge-retries", "--trajaudit-judge-concurrency", "--trajaudit-max-file-mb",
    "--trajaudit-max-job-mb", "--trajaudit-privileged-root",
})


def _absolute(value: str, cwd: Path) -> str:
    if not value or os.path.isabs(value) or value in ("off",):
        return value
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(value)))


def absolute_args(extra: list[str], cwd: Path) -> list[str]:
    """``extra`` with every relative path made absolute against ``cwd``: the values of ``PATH_OPTIONS`` (``-c F``,
    ``--junitxml=F``) and positional node ids whose file part exists there (``runs/job/result.json::P1``)."""
    out: list[str] = []
    pending = ""  # "path" / "value": the previous option takes this argument as its value
    for a in extra:
        if pending:
            out.append(_absolute(a, cwd) if pending == "path" else a)
            pending = ""
        elif a.startswith("-"):
            name, eq, value = a.partition("=")
            if name in PATH_OPTIONS and eq:
                out.append(f"{name}={_absolute(value, cwd)}")
                continue
            out.append(a)
            if not eq and name != "--trajaudit":  # --trajaudit's value is optional: a path after it is positional
                pending = "path" if name in PATH_OPTIONS else "value" if name in VALUE_OPTIONS else ""
        else:
            head, sep, rest = a.partition("::")
            out.append(_absolute(head, cwd) + sep + rest if os.path.lexists(cwd / head) else a)
    return out


HELP = """\
usage: trajaudit [run] [PATH ...] [PYTEST_OPTION ...]
       trajaudit [run] [PATH ...] -- [PYTEST_OPTION_OR_NODE_ID ...]
       trajaudit merge OUT_DIR SHARD_DIR [SHARD_DIR ...]
       trajaudit audit --attempt-dir DIR --task-dir DIR [OPTIONS]      (trajaudit audit --help)
       trajaudit summarize --audits DIR [ATTEMPT ...] [--json]          (trajaudit summarize --help)
       trajaudit trace-grader (--traces F | --audit F | --transcript F) [--json] ...
                                                                        (trajaudit trace-grader --help)
       trajaudit --version | --help

Audits every PATH (a tree of job directories, one job, or a trajectory file) as pytest items, one per audit
principle per job, run the safe way: a trusted pytest config, a rootdir and working directory above every
audited tree, nothing written into them, nothing imported from them (docs/trust.md).

PATH         an audit root; several may be given. Without one, the trajaudit_roots of the project's config.
PYTEST_OPTION
             any pytest option, including every --trajaudit-* option (pytest --help lists them; docs/usage.md
             explains each). Options follow the paths; after "--" everything goes to pytest as given, node ids
             included. Relative paths in them mean what they mean in your working directory.

The --trajaudit-* options (pytest options; each has an ini key trajaudit_*; docs/usage.md):
  --trajaudit-tasks=DIR           task directories, found by task name (repeatable)
  --trajaudit-report=DIR          write summary.json, report.md, report.html and one audit JSON per job
  --trajaudit-principles=CODES    compute only these principle codes (comma-separated, exact)
  --trajaudit-literal             the seeds' operational regexes over the raw text, bit for bit
  --trajaudit-rules=FILE          a trace-grader-compatible YAML rules file
  --trajaudit-trials=K            expected trials per task group
  --trajaudit-strict-pass-k       a flaky task group fails its PASSK item instead of WARN
  --trajaudit-privileged-root=P   advisor audit: a privileged root relative to each task directory (repeatable)
  --trajaudit-rerun               let P12 re-run the task's own verifier (executes task code; off by default)
  --trajaudit-shard=I/N           audit shard I of N (see `trajaudit merge`)
  --trajaudit-allow-incomplete    a deliberate subset exits 0 instead of 10 (the verdict stays INCOMPLETE)
  --trajaudit-waivers=FILE        YAML waivers: accepted findings (job glob, code, reason, expiry; docs/review.md)
  --trajaudit-baseline=SUMMARY    an earlier run's summary.json: findings new, gone and unchanged since it
  --trajaudit-new-only            with --trajaudit-baseline: only new findings count in the PR verdict
  --trajaudit-protocol=lean|full  how audit items run (default lean)
  --trajaudit-max-file-mb=MB, --trajaudit-max-job-mb=MB, --trajaudit-max-events=N, --trajaudit-audit-budget=S
                                  per-file and per-job bounds (docs/limits.md)
  --trajaudit-judge=MODEL         an LLM judge through litellm (repeatable; the judge extra); with
  --trajaudit-judge-base-url=URL, --trajaudit-judge-api-key-env=VAR, --trajaudit-judge-provider=NAME,
  --trajaudit-judge-timeout=S, --trajaudit-judge-retries=N, --trajaudit-judge-concurrency=N,
  --trajaudit-judge-cache=DIR|off (docs/judges.md)
The command passes --trajaudit=PATH itself for every PATH.

Subcommands:
  run        the default: the audit above (the word may be left out)
  merge      combine the --trajaudit-report directories of --trajaudit-shard runs into one report and verdict
  audit      advisor-leakage audit of one attempt, without pytest (docs/advisor.md)
  summarize  advisor verdicts from the audits `trajaudit audit --output` wrote
  trace-grader
             the original trace-grader's report and exit code for one run (docs/trace-grader.md)

Options of the command itself:
  -h, --help   this text
  --version    print pytest-trajaudit's version

Project configuration: the trajaudit_* keys of the pytest config found from the working directory upwards
(pytest.toml, pytest.ini, pyproject.toml [tool.pytest.ini_options], tox.ini, setup.cfg; the file pytest itself
would read) are passed on, paths relative to that file; the file's other keys are not. A config file inside an
audited tree is never read. A -c/--config-file of yours replaces this: pytest then reads that file.

Examples:
  trajaudit runs/                                   audit a tree
  trajaudit                                         audit the trajaudit_roots of the project's config
  trajaudit runs/ -q --trajaudit-report=out/        reports: out/summary.json, report.md, report.html
  trajaudit runs/ -m anticheat -n auto              one family, in parallel
  trajaudit runs/ --trajaudit-tasks=tasks/ --junitxml=audit.xml
  trajaudit runs/ -- runs/job1/result.json::P1      one item by its node id
  trajaudit merge merged/ out/shard-1 out/shard-2
  trajaudit audit --attempt-dir runs/job1 --task-dir tasks/demo --no-judge

Exit codes: pytest's (0 nothing failed, 1 a FAIL or unusable input, 2 interrupted, 4 usage error, 5 no job
found) and 10 for an incomplete run (docs/verdicts.md).
"""


def version() -> str:
    """The installed distribution's version, else the package's own (a source checkout on sys.path)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("pytest-trajaudit")
    except PackageNotFoundError:
        from .. import __version__

        return __version__


def _fail(message: str, usage: bool = False) -> int:
    """A usage error: one line on stderr (after the usage lines when asked), pytest's usage-error code 4."""
    if usage:
        print(HELP.split("\n\n", 1)[0], file=sys.stderr)
    print(f"trajaudit: error: {message}", file=sys.stderr)
    return 4


def split_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(audit paths, pytest arguments): the leading arguments up to the first option or ``--`` are paths; what
    follows goes to pytest (``--`` itself dropped), so an option's value (``-m P1``) is never taken for a path."""
    for i, a in enumerate(argv):
        if a == "--":
            return argv[:i], argv[i + 1:]
        if a.startswith("-"):
            return argv[:i], argv[i:]
    return list(argv), []


def _project_config(paths: list[str], extra: list[str], cwd: Path) -> tuple[list[str], list[str]] | int:
    """(audit paths, ``-o`` arguments from the project config), or an exit code after a usage error."""
    from ..discover.trust import audited_tree, enclosing_job, inside
    from . import projectconfig

    if any(a in ("-c", "--config-file") or a.startswith(("--config-file=", "-c=")) for a in extra):
        if not paths:
            return _fail("no PATH given (with -c the audit roots come from --trajaudit=PATH or a PATH)", usage=True)
        return paths, []  # pytest reads the caller's own config file
    # a config inside an audited tree, or inside any job directory (one the command was typed in, even when the
    # roots that config names lie elsewhere), may be an agent's: never opened
    given = [audited_tree(Path(_absolute(p, cwd))) for p in paths]
    job = enclosing_job(cwd)

    def untrusted(base: Path) -> bool:
        return inside(base, given) or (job is not None and inside(base, [job]))

    try:
        project, skipped = projectconfig.find(cwd, untrusted)
    except projectconfig.ConfigError as exc:
        return _fail(str(exc))
    from_config = not paths
    if skipped is not None:
        where = f"the job {job}" if job is not None and inside(skipped, [job]) else "an audited tree"
        if from_config:
            return _fail(f"{skipped} lies inside {where}; its trajaudit_roots are not used: name the PATH")
        print(f"trajaudit: not reading {skipped}: it lies inside {where}", file=sys.stderr)
        return paths, []
    if from_config:
        paths = project.roots() if project is not None else []
        if not paths:
            where = f"no trajaudit_roots in {project.path}" if project else "no pytest config with trajaudit_roots"
            return _fail(f"no PATH given (paths come before pytest options) and {where}", usage=True)
    if project is None:
        return paths, []
    # the roots a config names may lie around it: a config inside one of them may be an agent's
    tops = [audited_tree(Path(_absolute(p, cwd))) for p in paths]
    if inside(project.path, tops):
        if from_config:
            return _fail(f"{project.path} lies inside an audited tree; its trajaudit_roots are not used: name the PATH")
        print(f"trajaudit: not reading {project.path}: it lies inside an audited tree", file=sys.stderr)
        return paths, []
    return paths, project.override_args()


def run_main(argv: list[str]) -> int:
    """``trajaudit [run] [PATH ...] [PYTEST_OPTION ...]``: pytest in a child interpreter, the safe way."""
    paths, extra = split_args(argv)
    cwd = Path(os.getcwd())
    resolved = _project_config(paths, extra, cwd)
    if isinstance(resolved, int):
        return resolved
    paths, overrides = resolved
    # pytest runs in a child interpreter: this module stays pytest-free (the seed's DESIGN.md) and the audit gets a
    # clean process (no state from the caller, the same as a CI step). -P keeps the working directory off sys.path and
    # the child starts above every audited tree (see the module docstring). The project's -o settings come
    # before the caller's options, so an -o of the caller's wins.
    import subprocess

    rc = subprocess.call([sys.executable, "-P", "-m", "pytest", *build_args(paths, overrides + extra, cwd)],
                         cwd=trusted_rootdir(paths, cwd))
    why = NO_VERDICT.get(rc)
    if why:  # a run that gives no approval without a FAIL: say why where a CI log's error stream shows it
        print(f"trajaudit: exit {rc}: {why}", file=sys.stderr)
    return rc


# Exit codes of a run that is neither a pass nor a FAIL, and what they mean (pytest's own errors already explain
# themselves on stderr).
NO_VERDICT = {
    5: "no job found under the audit paths",
    10: "the run is INCOMPLETE: an integrity principle did not run on some job (the verdict lines above name "
        "them and why; docs/verdicts.md)",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv[0] if argv else ""
    if cmd == "merge":  # combine --trajaudit-shard reports (report/merge.py)
        from ..report.merge import main as merge_main

        return merge_main(argv[1:])
    if cmd in ("audit", "summarize"):  # the advisor audit (advisor/cli.py; no pytest involved)
        from ..advisor.cli import main as advisor_main

        return advisor_main(argv)
    if cmd == "trace-grader":  # the original trace-grader's report and exit code (cli/trace_grader.py)
        from .trace_grader import main as trace_main

        return trace_main(argv[1:])
    if cmd in ("-h", "--help"):
        print(HELP, end="")
        return 0
    if cmd == "--version":
        print(f"pytest-trajaudit {version()}")
        return 0
    return run_main(argv[1:] if cmd == "run" else argv)


if __name__ == "__main__":
    raise SystemExit(main())
