"""``trajaudit`` console command: run the audit through pytest the safe way.

    trajaudit [run] PATH [PATH ...] [-- PYTEST_ARGS ...]
    trajaudit merge OUT_DIR SHARD_DIR [SHARD_DIR ...]
    trajaudit audit --attempt-dir DIR --task-dir DIR [--output FILE] [--no-judge] ...   (advisor audit)
    trajaudit summarize --audits DIR [ATTEMPT ...]                                      (advisor verdicts)

It always passes a trusted config (``-c`` the packaged empty ``safe.ini``), ``--rootdir`` outside the audited
trees, ``-p no:cacheprovider`` (nothing is written into the evidence), ``-p no:anyio`` (skips litellm's
transitive pytest plugin) and ``--trajaudit=PATH`` in the equals form (PYTEST-NOTES.md §2.4-2.5).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SAFE_INI = Path(__file__).resolve().parent / "safe.ini"


def build_args(paths: list[str], extra: list[str], cwd: Path | None = None) -> list[str]:
    cwd = Path(os.path.abspath(cwd or os.getcwd()))
    roots = [Path(os.path.abspath(p)) for p in paths]
    rootdir = cwd
    for r in roots:
        top = r if r.is_dir() and not r.is_symlink() else r.parent
        if rootdir == top or top in rootdir.parents:
            rootdir = top.parent
    args = ["-c", str(SAFE_INI), f"--rootdir={rootdir}", "-p", "no:cacheprovider", "-p", "no:anyio"]
    if not any(a.startswith("--tb") for a in extra):
        args.append("--tb=line")
    args += [f"--trajaudit={p}" for p in paths]
    return args + extra


USAGE = __doc__.split("\n\n", 2)[1]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "merge":  # combine --trajaudit-shard reports (report/merge.py)
        from .report.merge import main as merge_main

        return merge_main(argv[1:])
    if argv and argv[0] in ("audit", "summarize"):  # the advisor audit (advisor/cli.py; no pytest involved)
        from .advisor.cli import main as advisor_main

        return advisor_main(argv)
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
    # process (no state from the caller, the same as a CI step)
    import subprocess

    return subprocess.call([sys.executable, "-m", "pytest", *build_args(paths, extra)])


if __name__ == "__main__":
    raise SystemExit(main())
