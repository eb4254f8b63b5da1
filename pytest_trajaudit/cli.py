"""``trajaudit`` console command: run the audit through pytest the safe way.

    trajaudit [run] PATH [PATH ...] [-- PYTEST_ARGS ...]
    trajaudit merge OUT_DIR SHARD_DIR [SHARD_DIR ...]
    trajaudit audit --attempt-dir DIR --task-dir DIR [--output FILE] [--no-judge] ...   (advisor audit)
    trajaudit summarize --audits DIR [ATTEMPT ...]                                      (advisor verdicts)
    trajaudit trace-grader (--traces F | --audit F | --transcript F) [--json] ...      (trace-grader report)

It always passes a trusted config (``-c`` the packaged empty ``safe.ini``; a ``-c`` of the caller's comes after it
and wins), ``--rootdir`` outside the audited trees, ``-p no:cacheprovider`` (nothing is written into the evidence),
``-p no:anyio`` (skips litellm's transitive pytest plugin) and ``--trajaudit=PATH`` in the equals form
(PYTEST-NOTES.md §2.4-2.5). pytest runs in a child interpreter started with ``-P`` (the working directory is not put
on ``sys.path``) whose working directory is that rootdir, above every audited tree: a ``pytest.py``,
``argparse.py`` or ``zipfile.py`` an agent left in its job is never imported, even when the command is typed inside
the job or ``PYTHONPATH`` holds ``.``. Relative paths the caller gave (audit paths, node ids, the values of the
path options in ``PATH_OPTIONS``) are made absolute against the caller's working directory first, so they mean
what they meant there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SAFE_INI = Path(__file__).resolve().parent / "safe.ini"


def trusted_rootdir(paths: list[str], cwd: Path | None = None) -> Path:
    """The working directory, unless it lies in an audited tree (trust.audited_tree: a path inside a job makes
    the whole job the tree); then the directory just above the highest such tree."""
    from .trust import audited_tree

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


USAGE = __doc__.split("\n\n", 2)[1]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "merge":  # combine --trajaudit-shard reports (report/merge.py)
        from .report.merge import main as merge_main

        return merge_main(argv[1:])
    if argv and argv[0] in ("audit", "summarize"):  # the advisor audit (advisor/cli.py; no pytest involved)
        from .advisor.cli import main as advisor_main

        return advisor_main(argv)
    if argv and argv[0] == "trace-grader":  # the original trace-grader's report and exit code (trace_cli.py)
        from .trace_cli import main as trace_main

        return trace_main(argv[1:])
    if argv and argv[0] == "run":
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print("usage:" + USAGE)
        print("Audits every PATH (job directories, trees of them, or trajectory files) as pytest items.")
        return 0 if argv else 4
    if "--" in argv:
        i = argv.index("--")
        paths, extra = argv[:i], argv[i + 1:]
    else:
        paths = [a for a in argv if not a.startswith("-")]
        extra = [a for a in argv if a.startswith("-")]
    # pytest runs in a child interpreter: this module stays pytest-free (DESIGN.md) and the audit gets a clean
    # process (no state from the caller, the same as a CI step). -P keeps the working directory off sys.path and
    # the child starts above every audited tree (see the module docstring).
    import subprocess

    cwd = Path(os.getcwd())
    return subprocess.call([sys.executable, "-P", "-m", "pytest", *build_args(paths, extra, cwd)],
                           cwd=trusted_rootdir(paths, cwd))


if __name__ == "__main__":
    raise SystemExit(main())
