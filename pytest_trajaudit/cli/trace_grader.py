"""``trajaudit trace-grader``: the original trace-grader's command line (the seed's RULES.md D) on the plugin's
loaders and its trace-grader principles, without pytest.

    trajaudit trace-grader (--traces FILE | --audit FILE | --transcript FILE) [--task NAME] [--config YAML]
                           [--json] [--literal]

Input precedence is the original's: ``--traces`` > ``--audit`` > ``--transcript``; none given → usage error, exit 2.
Each run of the file (a ``traces.json`` run, an audit log's session, a Claude Code session) is graded by the
trace-grader checks under ``--config`` (the original's ``trace-grader.config.yaml`` or a ``--trajaudit-rules``
file; the engine defaults without it), and the original's report is printed: text, or its JSON with ``--json``.
``--task`` names the task of an audit log's or a transcript's runs (default: the session id; a transcript's run
and task are named after its file). Exit code: 3 when a
run is a corrupt success or a task is flaky, else 0 (report/tracegrader.py). An unreadable file, a file with no run
in it, or a bad ``--config`` prints one line naming the file and the problem and exits 2: the original skips
unparseable lines and tracebacks (exit 1) on malformed JSON; here unusable input fails closed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..settings import Settings

EXIT_UNUSABLE = 2


class TraceInputError(Exception):
    """Input the grader cannot use; the message is one line naming the file and the problem."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="trajaudit trace-grader",
                                description="Grade the path an agent took (the original trace-grader's report).")
    p.add_argument("--traces", help="canonical traces.json ({tasks:[...]}, {runs:[...]} or a list of runs)")
    p.add_argument("--audit", help="hooklib.audit() / code-logger events JSON Lines (one run per session)")
    p.add_argument("--transcript", help="a Claude Code session transcript (JSON Lines)")
    p.add_argument("--task", help="task name of an audit log's or transcript's runs (default: the session id)")
    p.add_argument("--config", help="rules file (the original's trace-grader.config.yaml shape)")
    p.add_argument("--json", action="store_true", help="print the JSON report")
    p.add_argument("--literal", action="store_true", help="the original's exact rules (--trajaudit-literal)")
    return p


def grade(path: Path, settings: Settings, task: str | None = None, transcript: bool = False) -> list[dict[str, Any]]:
    """The trace-grader block of every run in ``path`` (report.audit.trace_grader_block), in file order.
    ``transcript``: a session transcript carries no task verdict, so a run of unknown delivery is reported
    delivered, as the original forces a transcript's ``run.ok`` (its verdict is graded that way already).
    Raises TraceInputError for a file that cannot be read or holds no run."""
    from ..loaders.multi import file_jobs
    from ..principles import registry
    from ..principles.engine import audit_job
    from ..report.audit import trace_grader_block

    principles = [p for p in registry().values() if p.family == "rules"]
    blocks = []
    for ref in file_jobs(path, settings.max_file_bytes, given=True):
        audit = audit_job(ref, settings, principles, judges=False)
        if audit.error:
            raise TraceInputError(audit.error)
        records = {c: {"status": r.status, "evidence": r.evidence, "data": r.data} for c, r in audit.results.items()}
        block = trace_grader_block(audit.meta, records)
        if block is None:
            continue
        block["task"] = task or block["task"] or block["run_id"]  # the original: --task, else the session
        if transcript and block["delivered"] is None:
            block["delivered"] = True
        blocks.append(block)
    if not blocks:
        raise TraceInputError(f"{path}: no run to grade")
    return blocks


def main(argv: list[str] | None = None) -> int:
    from ..principles.rules import judge_axis
    from ..report import tracegrader
    from ..rulesfile import RulesFileError, apply_rules_file
    from ..settings import Settings

    args = _parser().parse_args(argv)
    source, task, kind = next(((v, t, k) for v, t, k in ((args.traces, None, "traces"), (args.audit, args.task, "audit"),
                                                         (args.transcript, args.task, "transcript")) if v),
                              (None, None, None))
    if source is None:
        _parser().error("one of --traces, --audit or --transcript is required")
    settings = Settings(literal=args.literal)
    try:
        if args.config:
            settings = apply_rules_file(settings, args.config)
        blocks = grade(Path(source), settings, task, transcript=kind == "transcript")
    except RulesFileError as exc:
        print(f"error: {args.config}: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except TraceInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    rep = tracegrader.report(blocks, judge_axis(settings))
    if args.json:
        print(json.dumps(rep, indent=2, ensure_ascii=False))
    else:
        print("\n".join(tracegrader.text(rep)))
    return tracegrader.exit_code(rep["summary"])


if __name__ == "__main__":
    raise SystemExit(main())
