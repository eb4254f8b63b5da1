"""``trajaudit audit`` and ``trajaudit summarize``: the advisor-leakage audit of one attempt, and the verdicts of
many (the seed's advisor-audit.md "Run it", "Output and exit codes"). No pytest here: the same core as the ADV items.

    trajaudit audit --attempt-dir DIR --task-dir DIR [--trajectory FILE] [--privileged-root PATH ...]
                    [--output FILE] [--no-judge] [--judge-model M] [--judge-base-url URL]
                    [--judge-api-key-env VAR] [--judge-provider P] [--judge-timeout S] [--judge-retries N]
                    [--judge-cache DIR|off]
    trajaudit summarize --audits DIR [ATTEMPT ...] [--json]

Exit codes of ``audit``: 0 pass or pass_mechanical_only; 1 fail or inconclusive; 2 unusable input (no verdict,
nothing written). ``summarize``: 0 when every attempt passed, 1 when one did not (or has no audit), 2 when a
path or an audit is unusable (not written by ``trajaudit audit``, its trajectory changed since, or the audit
directory lies inside an audited attempt). ``summarize`` reads only the audit directory the user names, never an
``advisor/audit.json`` inside an attempt.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from ..loaders.task import PrivilegedUnreadable
from ..model import UnusableInput

PASSING = ("pass", "pass_mechanical_only")
_RANK = {"pass": 0, "pass_mechanical_only": 1, "inconclusive": 2, "fail": 3, "error": 4}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise SystemExit(_error(message))


def _audit_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="trajaudit audit", description="Audit one advised attempt for advisor leakage "
                 "(fails closed: exit 0 pass, 1 fail or inconclusive, 2 unusable input).")
    ap.add_argument("--attempt-dir", required=True, help="the attempt directory (must exist)")
    ap.add_argument("--task-dir", required=True, help="the task directory holding the privileged material")
    ap.add_argument("--trajectory", help="audit this file as given (JSON, JSON Lines or plain text); default: "
                    "the file the pytest plugin audits for this directory (e.g. trajectory/acp_trajectory.jsonl "
                    "of a BenchFlow rollout), else agent/trajectory.json, agent/mini-swe-agent.trajectory.json, "
                    "trajectory.json, then any *trajectory*.json beneath the attempt directory")
    ap.add_argument("--privileged-root", action="append", dest="privileged_roots", metavar="PATH",
                    help="a privileged root relative to --task-dir (repeatable); overrides the task's own "
                    "advisor/task_material_manifest.json and the default layout (README.md, solution, tests); "
                    "the attempt directory is never consulted")
    ap.add_argument("--output", help="also write the audit JSON here, mode 0600 (trajaudit summarize --audits DIR "
                    "reads the audits in DIR: keep DIR outside the attempts)")
    ap.add_argument("--max-events", type=_positive_int, default=None, metavar="N",
                    help="events (and JSON objects and arrays) a trajectory or result.json may hold (default 500000)")
    ap.add_argument("--no-judge", action="store_true", help="mechanical checks only (verdict at best "
                    "pass_mechanical_only)")
    ap.add_argument("--judge-model", help="judge model (default $JUDGE_MODEL, else $ADVISOR_MODEL)")
    ap.add_argument("--judge-base-url", help="OpenAI-compatible base URL (default $JUDGE_BASE_URL, else "
                    "$ADVISOR_BASE_URL)")
    ap.add_argument("--judge-api-key-env", default="JUDGE_API_KEY", metavar="VAR",
                    help="environment variable holding the API key (default JUDGE_API_KEY)")
    ap.add_argument("--judge-provider", default="openai", help="LiteLLM provider prefix (default openai)")
    ap.add_argument("--judge-timeout", type=float, default=None, help="total seconds per HTTP attempt (default 120)")
    ap.add_argument("--judge-retries", type=int, default=None, help="retries after 5xx/429/timeouts (default 2)")
    ap.add_argument("--judge-cache", default=None, metavar="DIR",
                    help="answer cache directory ('off' disables it; default $XDG_CACHE_HOME/pytest-trajaudit/judges)")
    return ap


def _error(msg: str) -> int:
    """One ``error:`` line on stderr (exit 2): the message names agent-chosen files, so every control character,
    line break and escape sequence in it is shown escaped (``printable``) and secrets are redacted."""
    from ..scan.redact import printable, redact

    print(f"error: {printable(redact(msg))}", file=sys.stderr)
    return 2


def _judge_config(args: argparse.Namespace) -> tuple[Any, str | None]:
    """(JudgeConfig or None, why no judge is configured). Raises UnusableInput for an invalid endpoint."""
    from ..judges import (
        DEFAULT_RETRIES,
        DEFAULT_TIMEOUT,
        JudgeConfig,
        default_cache_dir,
        env_api_key,
        env_base_url,
        env_model,
    )
    from .core import endpoint_error

    model = args.judge_model or env_model()
    base_url = args.judge_base_url or env_base_url()
    why = endpoint_error(base_url)
    if why:
        raise UnusableInput("--judge-base-url", why)
    if not model:
        return None, "no judge model configured (--judge-model, $JUDGE_MODEL or $ADVISOR_MODEL)"
    if args.judge_cache == "off":
        cache = None
    else:
        cache = Path(os.path.abspath(args.judge_cache)) if args.judge_cache else default_cache_dir()
    try:
        cfg = JudgeConfig(models=(model,), base_url=base_url, api_key=env_api_key(args.judge_api_key_env),
                          timeout=args.judge_timeout if args.judge_timeout is not None else DEFAULT_TIMEOUT,
                          retries=args.judge_retries if args.judge_retries is not None else DEFAULT_RETRIES,
                          concurrency=2, cache_dir=cache, provider=args.judge_provider or "openai")
    except ValueError as exc:
        raise UnusableInput("--judge-*", str(exc)) from None
    return cfg, None


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by its owner only (0600). Raises OSError."""
    from ..report.audit import write_text_atomic

    write_text_atomic(path, text, 0o600)


def _output_problem(out: Path, roots: list[tuple[str, str]]) -> str:
    """Why ``--output`` may not be written (""): a symlinked directory on its path (never written through), or
    a real path inside the attempt or task directory (the audit quotes privileged lines; the run being audited
    writes the attempt)."""
    from .core import symlinked_component

    link = symlinked_component(out.parent)
    if link is not None:
        return f"its directory {link} is a symlink (never written through): pass the real path"
    for flag, root in roots:
        if _inside(out.parent, Path(root)) or _inside(out, Path(root)):
            return f"lies inside the {flag} directory {root}: write the audit outside the audited tree"
    return ""


def audit_main(argv: list[str]) -> int:
    """``trajaudit audit``: any unusable input, running out of memory included, is one ``error:`` line, exit 2."""
    try:
        return _audit_main(argv)
    except MemoryError:
        return _error("out of memory while auditing (the trajectory or a file of the attempt is too large to "
                      "audit): no verdict, nothing written")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _audit_main(argv: list[str]) -> int:
    args = _audit_parser().parse_args(argv)
    from ..report.audit import _redact_tree
    from .core import find_trajectories, run_audit

    attempt = Path(os.path.abspath(args.attempt_dir))
    if not attempt.is_dir():
        return _error(f"--attempt-dir {args.attempt_dir}: not an existing directory")
    if not Path(args.task_dir).is_dir():
        return _error(f"--task-dir {args.task_dir}: not an existing directory")
    try:
        judge, unconfigured = (None, None) if args.no_judge else _judge_config(args)
        trajs = [Path(os.path.abspath(args.trajectory))] if args.trajectory else \
            find_trajectories(Path(os.path.realpath(attempt)))
    except UnusableInput as exc:
        return _error(str(exc))
    out = Path(os.path.abspath(args.output)) if args.output else None
    if out is not None:
        traj = next((t for t in trajs if _same_file(out, t)), None)
        if traj is not None:
            return _error(f"--output {args.output} would overwrite the audited trajectory {traj}: refused, "
                          "nothing written")
        problem = _output_problem(out, [("--attempt-dir", args.attempt_dir), ("--task-dir", args.task_dir)])
        if problem:
            return _error(f"--output {args.output}: {problem}; nothing written")
        try:
            st = os.stat(out)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return _error(f"--output {args.output}: cannot be written: {exc.strerror or exc}")
        if st is not None and stat.S_ISDIR(st.st_mode):
            return _error(f"--output {args.output}: is a directory")
    from ..safeio import DEFAULT_MAX_EVENTS, events_limit

    try:
        with events_limit(args.max_events or DEFAULT_MAX_EVENTS, "--max-events"):
            audit = run_audit(attempt, args.task_dir, trajectory=trajs[0] if args.trajectory else None,
                              privileged_roots=args.privileged_roots,
                              judge=judge, no_judge=args.no_judge, judge_unconfigured=unconfigured)
    except PrivilegedUnreadable as exc:
        return _error(f"cannot read privileged material in {args.task_dir}: {', '.join(exc.paths)}")
    except UnusableInput as exc:
        return _error(str(exc))
    text = json.dumps(_redact_tree(audit), indent=2, ensure_ascii=False) + "\n"
    if out is not None:
        try:
            write_private(out, text)
        except OSError as exc:
            return _error(f"--output {args.output}: cannot be written: {exc.strerror or exc}")
    sys.stdout.write(text)
    sys.stdout.flush()
    if audit["verdict"] not in PASSING:  # why it is no pass, where a script's log shows it (stdout is the JSON)
        from ..scan.redact import printable, redact

        reasons = [str(r) for r in audit.get("verdict_reasons") or audit.get("issues") or []]
        print(f"trajaudit audit: {audit['verdict']}: " + ("; ".join(printable(redact(r)) for r in reasons)
                                                          or "no reason recorded"), file=sys.stderr)
    return 0 if audit["verdict"] in PASSING else 1


# --- summarize --------------------------------------------------------------------------------------------------

def _not_a_dir(path: Path) -> str:
    """Why ``path`` is not a real directory ("" when it is): missing, or anything else, a symlink included."""
    try:
        st = os.lstat(path)
    except OSError:
        return "not found"
    return "" if stat.S_ISDIR(st.st_mode) else "not a directory (symlinks are never followed)"


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (after symlinks) is ``root`` or lies below it (after symlinks)."""
    p, r = os.path.realpath(path), os.path.realpath(root)
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)


def _read_audit(path: Path) -> tuple[dict[str, Any] | None, str]:
    """(the audit JSON, "") of one file in the audit directory, or (None, why it cannot be used)."""
    from ..safeio import Budget, decode_text, read_bytes

    try:
        doc = json.loads(decode_text(read_bytes(path.parent, path.name, Budget(64 * 1024 * 1024, 64 * 1024 * 1024)),
                                     path))
    except UnusableInput as exc:
        return None, exc.reason
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(doc, dict) or doc.get("verdict") not in ("pass", "pass_mechanical_only", "inconclusive", "fail"):
        return None, "holds no advisor verdict"
    if not all(isinstance(doc.get(k), str) for k in ("attempt_dir", "trajectory", "trajectory_sha256")):
        return None, "not written by trajaudit audit (no attempt_dir, trajectory and trajectory_sha256)"
    return doc, ""


def _check_audit(doc: dict[str, Any], audits: Path) -> str:
    """Why an audit cannot be trusted now (its directory lies inside the attempt it judged, its trajectory is
    gone or changed since), or ""."""
    from .core import file_sha256

    attempt = Path(doc["attempt_dir"])
    if _inside(audits, attempt):
        return "the audit directory lies inside the audited attempt (the run could have written it)"
    listed = doc.get("trajectories")
    files = [(t["path"], t["sha256"]) for t in listed] if isinstance(listed, list) else \
        [(doc["trajectory"], doc["trajectory_sha256"])]
    for path, want in files:  # (every trajectory the audit read together)
        traj = Path(path)
        try:
            digest = file_sha256(traj)
        except UnusableInput as exc:
            return f"audited trajectory {traj}: {exc.reason}"
        if digest != want:
            return f"the audited trajectory changed since the audit (re-run trajaudit audit): {traj}"
    return ""


def _audit_files(audits: Path) -> list[Path]:
    """The ``*.json`` regular files (never symlinks) directly in the audit directory, sorted."""
    out = []
    with os.scandir(audits) as it:
        for e in it:
            if e.name.endswith(".json") and e.is_file(follow_symlinks=False):
                out.append(Path(e.path))
    return sorted(out)


def _attempt_dirs(path: Path) -> list[Path]:
    """``path`` itself when it is a job by the plugin's discovery rules or holds a trajectory at one of the usual
    positions, else its subdirectories (never symlinks)."""
    from ..discover.jobs import classify
    from .core import TRAJECTORY_LOOKUP

    if classify(path) is not None or any(os.path.lexists(path / rel) for rel in TRAJECTORY_LOOKUP):
        return [path]
    out = []
    with os.scandir(path) as it:
        for e in it:
            if e.is_dir(follow_symlinks=False) and not e.name.startswith("."):
                out.append(Path(e.path))
    return sorted(out) or [path]


def summarize_main(argv: list[str]) -> int:
    ap = _Parser(prog="trajaudit summarize", description="Advisor verdicts from the audits trajaudit audit wrote "
                 "(--output) to an audit directory outside the audited attempts. An audit.json found inside an "
                 "attempt is never read: the run could have written it.")
    ap.add_argument("--audits", required=True, metavar="DIR",
                    help="the directory holding the audit JSON files (trajaudit audit --output DIR/<name>.json); it "
                    "must lie outside every audited attempt")
    ap.add_argument("attempts", nargs="*", metavar="ATTEMPT",
                    help="attempt directories (or directories of attempts) that must each have an audit in DIR "
                    "('missing' otherwise); default: every audit in DIR")
    ap.add_argument("--json", action="store_true", help="print JSON instead of lines")
    args = ap.parse_args(argv)
    audits = Path(os.path.abspath(args.audits))
    problem = _not_a_dir(audits)
    if problem:
        return _error(f"--audits {args.audits}: {problem}")
    wanted: list[Path] = []
    for p in args.attempts:
        path = Path(os.path.abspath(p))
        problem = _not_a_dir(path)
        if problem:
            return _error(f"{p}: {problem}")
        if _inside(audits, path):
            return _error(f"--audits {args.audits} lies inside the audited tree {p}: refused (an audit there could "
                          "have been written by the run)")
        try:
            wanted += _attempt_dirs(path)
        except OSError as exc:
            return _error(f"{p}: cannot be listed: {exc.strerror or exc}")
    try:
        files = _audit_files(audits)
    except OSError as exc:
        return _error(f"--audits {args.audits}: cannot be listed: {exc.strerror or exc}")
    rows: list[dict[str, str]] = []
    by_attempt: dict[str, dict[str, str]] = {}
    for f in files:
        doc, why = _read_audit(f)
        if doc is None:
            rows.append({"attempt": "", "audit": str(f), "verdict": "error", "reason": why})
            continue
        why = _check_audit(doc, audits)
        reasons = doc.get("verdict_reasons") if isinstance(doc.get("verdict_reasons"), list) else []
        row = {"attempt": doc["attempt_dir"], "audit": str(f), "verdict": "error" if why else doc["verdict"],
               "reason": why or (str(reasons[0]) if reasons else "")}
        rows.append(row)
        key = os.path.realpath(doc["attempt_dir"])
        if key not in by_attempt or _RANK[row["verdict"]] > _RANK[by_attempt[key]["verdict"]]:
            by_attempt[key] = row  # several audits of one attempt (one per trajectory file): the worst stands
    if wanted:
        picked = [by_attempt.get(os.path.realpath(a)) or {"attempt": str(a), "audit": "", "verdict": "missing",
                                                            "reason": f"no audit of it in {args.audits}"}
                  for a in wanted]
        rows = picked + [r for r in rows if r["verdict"] == "error" and not r["attempt"]]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    if args.json:
        print(json.dumps({"attempts": rows, "counts": counts}, indent=2))
    else:
        from ..scan.redact import printable, redact

        for r in rows:  # paths and reasons come from audit files and agent-chosen names: escaped, one line
            reason = printable(redact(r["reason"]))
            reason = reason if len(reason) <= 140 else reason[:139] + "…"
            print(f"{r['verdict']:<21} {printable(r['attempt'] or r['audit'])}"
                  + (f": {reason}" if reason and r["verdict"] not in PASSING else ""))
        order = ("fail", "inconclusive", "error", "missing", "pass_mechanical_only", "pass")
        print(f"{len(rows)} attempt(s): " + (", ".join(f"{counts[v]} {v}" for v in order if counts.get(v)) or "none"))
    if any(r["verdict"] == "error" for r in rows):
        return 2
    return 0 if rows and all(r["verdict"] in PASSING for r in rows) else 1


def main(argv: list[str]) -> int:
    """``argv[0]`` is ``audit`` or ``summarize``."""
    cmd, rest = argv[0], argv[1:]
    if cmd == "audit":
        return audit_main(rest)
    return summarize_main(rest)
