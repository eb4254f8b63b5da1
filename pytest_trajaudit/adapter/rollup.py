"""The controller's roll-up: one stateful plugin object per run (as pytest's junitxml keeps its ``LogXML``),
created and registered in ``pytest_configure`` only when auditing and not on an xdist worker, kept under
:data:`ROLLUP_KEY`, unregistered in ``pytest_unconfigure``. It gathers every audit item's record, writes the
reports at session finish, sets the exit status from the PR verdict and prints the verdict lines."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from ..records import ItemOutcome, Summary
from ..scan.redact import printable
from . import _compat
from .configure import State, abspath, baseline, ini_or_opt, waivers_path
from .nodes import SHARD_KEY

ROLLUP_KEY = pytest.StashKey["RollupPlugin"]()


class RollupPlugin:
    def __init__(self, config: pytest.Config, state: State, report_dir: Path | None) -> None:
        from ..report.summary import Rollup

        self.config = config
        self.state = state
        self.report_dir = report_dir
        from ..aggregate.completeness import coverage_for

        declared = state.declarations()
        self.rollup = Rollup("literal" if state.settings.literal else "precise",
                             roles={c: (p.role, p.na_warns) for c, p in declared.items()})
        self.rollup.coverage = coverage_for(config, declared, [p.code for p in state.principles], state.narrowed)
        if state.settings.judge is not None:
            self.rollup.judges.models = list(state.settings.judge.models)
        self.summary: Summary | None = None
        self.lines: list[str] | None = None  # the verdict lines of the terminal summary (made at session finish)
        self.incomplete = False  # the PR verdict is INCOMPLETE
        self.items: dict[str, ItemOutcome] = {}  # node id → status/evidence, for CTRF and CI annotations
        # kept only for a reader of it: an entry per item would otherwise live until the session ends for nothing
        self.keep_items = os.environ.get("GITHUB_ACTIONS") == "true" or ctrf_path(config) is not None
        self.files: dict[str, str] = {}  # job id → its trajectory file, for CI annotations
        self.failed_findings: list[tuple[str, str, str]] = []  # (job, code, evidence) of each FAILED audit item
        self.nodes: dict[str, str] = {}  # job id → its items' node id prefix, naming the job in verdict lines
        self.xml_key = _compat.junit_xml_key()  # pytest's LogXML is stashed by junitxml's pytest_configure, after this one

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = getattr(report, "trajaudit", None)
        if rec:
            self.rollup.add(rec)
            if "job" in rec and rec["job"] not in self.nodes:
                self.nodes[rec["job"]] = report.nodeid.rsplit("::", 1)[0]
            if report.failed:
                from .terminal import one_line

                one_line(report, self.config)
            if rec.get("reported_at"):
                return  # an unusable job's item skipped in favour of its one error: no annotation of its own
            job = rec.get("job") or rec.get("group")
            if self.keep_items:
                waived = (rec.get("waiver") or {}).get("applied") is True
                self.items[report.nodeid] = {"job": job, "code": rec["code"],
                                             "status": "WAIVED" if waived else rec.get("status"),
                                             "evidence": rec.get("evidence") or rec.get("error") or ""}
            if report.failed and report.when == "call" and rec.get("status") == "FAIL" and rec.get("job"):
                self.failed_findings.append((rec["job"], rec["code"], str(rec.get("evidence") or "")))
            traj = (rec.get("meta") or {}).get("trajectory_file")
            if traj and job:
                self.files[job] = traj
            xml = self.config.stash.get(self.xml_key, None)
            if xml is not None:
                from .ci import junit_system_out

                junit_system_out(xml, report, rec)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.config.option.collectonly:
            return  # nothing was audited: no verdict, no report
        from ..aggregate.completeness import exit_status, stop_cause

        self.rollup.coverage.stop_cause = stop_cause(self.config, session.exitstatus)  # type: ignore[union-attr]  # set in __init__
        self.rollup.apply_coverage()  # jobs whose integrity items did not all run are INCOMPLETE
        if not self.rollup.jobs and not self.rollup.groups:
            if self.rollup.shard is not None:
                # a shard that drew no job is not a failure (exit 0, not 5), and it writes its (empty) report so
                # that `trajaudit merge` sees every shard
                if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
                    session.exitstatus = pytest.ExitCode.OK
                if self.report_dir is not None:
                    self.summary = self.rollup.write(self.report_dir, self.state.keys)
            return
        verdicts = self.rollup.verdicts()  # every report is in: computed once for the reports and the terminal
        if self.report_dir is not None:
            self.summary = self.rollup.write(self.report_dir, self.state.keys, verdicts)
        else:
            self.summary = self.rollup.summary(deferred_detail=True, verdicts=verdicts)  # no reader of the detail
        pv = self.summary["pr_verdict"]
        xml = self.config.stash.get(self.xml_key, None)
        if xml is not None:
            from ..report.summary import suite_properties

            for name, value in suite_properties(self.summary):
                xml.add_global_property(name, value)
        # the terminal's verdict lines, made now from the summary: only the CTRF enrichment reads the summary
        # later, so without it the summary is freed before pytest's JUnit writer builds its whole document
        self.lines = self.rollup.terminal_lines(self.summary, self.nodes, verdicts)
        self.incomplete = pv["verdict"] == "INCOMPLETE"
        if ctrf_path(self.config) is None:
            self.summary = None
        b = self.rollup.baseline
        if b is not None and b.new_only and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
            # --trajaudit-new-only: the items of findings the baseline already had still show FAILED, but when
            # they are all the run's failures, they do not fail it (the PR verdict decides, as it counted them)
            from ..report.baseline import fingerprint

            if len(self.failed_findings) == session.testsfailed and all(
                    fingerprint(*f) in b.prints for f in self.failed_findings):
                session.exitstatus = pytest.ExitCode.OK
        session.exitstatus = exit_status(session.exitstatus, pv["verdict"],
                                         allow=bool(ini_or_opt(self.config, "trajaudit_allow_incomplete")))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.config.option.collectonly:
            cov = self.rollup.coverage
            terminalreporter.section("trajaudit verdicts")
            terminalreporter.write_line(f"{len(cov.jobs) if cov else 0} job(s) collected, not audited (--collect-only)")
            return
        if not self.rollup.jobs and not self.rollup.groups:
            # say why nothing ran (pytest then exits 5, "no tests collected"): an empty tree must not look audited
            where = ", ".join(printable(str(p)) for p in [*self.state.roots, *self.state.bare_files]) or "-"
            terminalreporter.section("trajaudit verdicts")
            terminalreporter.write_line(f"0 job(s) audited: no job found under {where}")
            return
        terminalreporter.section("trajaudit verdicts")
        lines = self.lines if self.lines is not None else self.rollup.terminal_lines(None, self.nodes)
        for line in lines:
            terminalreporter.write_line(line)
        if self.report_dir is not None:
            d = self.report_dir
            terminalreporter.write_line(f"reports: {d}/summary.json, {d}/report.md and {d}/jobs/")
        if self.incomplete:
            terminalreporter.write_line("a partial run is never an approval: audit every integrity principle of "
                                        "every job for a verdict (docs/verdicts.md)")
        if os.environ.get("GITHUB_ACTIONS") == "true":
            from .ci import github_annotations

            for line in github_annotations(self.items, self.files, str(self.config.invocation_params.dir)):
                terminalreporter.write_line(line)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        enrich_ctrf(config, self.rollup, self.items, self.summary)


def ctrf_path(config: pytest.Config) -> str | None:
    """The pytest-json-ctrf report this run writes (``--ctrf FILE``), None without one."""
    path = config.getoption("ctrf", None) if config.pluginmanager.hasplugin("ctrf") else None
    return path or None


def enrich_ctrf(config: pytest.Config, rollup: Any, items: dict[str, ItemOutcome],
                 summary: Summary | None = None) -> None:
    """Add job verdicts and the PR verdict to a pytest-json-ctrf report (results.extra.trajaudit) and each audit
    item's status and evidence to its test (tests[].extra.trajaudit). The file is written before unconfigure."""
    path = ctrf_path(config)
    if not path or not rollup.jobs or not os.path.isfile(path):
        return
    import json

    import orjson

    from ..scan.redact import redact

    fast = config.pluginmanager.get_plugin("trajaudit-ctrf-fast")
    try:
        doc = fast.take(path) if fast is not None else None  # the document pytest-json-ctrf just wrote, if kept
        if doc is None:
            with open(path, "rb") as fh:
                raw = fh.read()
            try:
                doc = orjson.loads(raw)
            except orjson.JSONDecodeError:  # NaN or Infinity, which the standard library writes and reads
                doc = json.loads(raw)
        results = doc.setdefault("results", {})
        extra = results.setdefault("extra", {})
        summary = summary if summary is not None else rollup.summary()
        pv = summary["pr_verdict"]
        extra["trajaudit"] = {"verdicts": {j["job"]: j["verdict"] for j in summary["jobs"]},
                              "pr_verdict": pv["verdict"], "pr_reasons": pv["reasons"][:10],
                              **({"incomplete": pv["incomplete"]["line"]} if pv.get("incomplete") else {})}
        for t in results.get("tests", []):
            info = items.get(t.get("name")) if isinstance(t, dict) else None  # type: ignore[arg-type]  # a CTRF name: a node id
            if info:
                t.setdefault("extra", {})["trajaudit"] = {**info, "evidence": redact(info["evidence"])[:2000]}
        from .ci import ctrf_statuses

        ctrf_statuses(doc, items)
        from ..report.audit import json_bytes, write_bytes_atomic

        # atomically, keeping the file's mode (pytest-json-ctrf created it; readers never see half a file); encoded
        # by orjson like every report of the plugin (strict JSON, UTF-8): the standard library indents in Python
        write_bytes_atomic(Path(path), json_bytes(doc), stat.S_IMODE(os.stat(path).st_mode))
    except (OSError, ValueError):
        pass


def create(config: pytest.Config, state: State, tops: list[Path]) -> RollupPlugin:
    """The run's roll-up, with the report directory checked (never inside an audited tree, also by real path: a
    symlink into a job, or the job of a path below it; agent-planted files there would steer our writes), the
    shard, the waivers and the baseline."""
    from ..discover.trust import inside

    report_dir = ini_or_opt(config, "trajaudit_report") or None
    if report_dir and inside(abspath(report_dir), tops):
        raise pytest.UsageError(f"trajaudit: --trajaudit-report {report_dir} lies inside an audited tree; "
                                "write the reports outside it")
    plugin = RollupPlugin(config, state, Path(report_dir) if report_dir else None)
    shard = config.stash.get(SHARD_KEY, None)
    if shard is not None:
        from ..discover.shard import fingerprint

        plugin.rollup.shard = {"index": shard.index, "count": shard.count, "settings": fingerprint(
            state.settings, [p.code for p in state.principles], list(state.group_codes), state.trials,
            state.strict_pass_k)}
    if state.waivers or waivers_path(config) is not None:
        plugin.rollup.waivers = [w.as_json() for w in state.waivers]
    plugin.rollup.baseline = baseline(config, tops, state.settings.max_file_bytes)
    return plugin
