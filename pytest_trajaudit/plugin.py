"""pytest hooks of pytest-trajaudit: options, safe collection, outcome mapping, roll-up, xdist glue.

Without ``--trajaudit`` the plugin does nothing (except keep plain ``pytest`` out of ``trajaudit_roots``).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs
from .discovery import JobRef
from .loaders.multi import node_name
from .nodes import STATE_KEY, JobNode, PrincipleItem, TrajauditWarning, TreeNode
from .principles import Principle, register, registry
from .settings import Settings

MB = 1024 * 1024


@dataclass
class State:
    roots: list[Path]  # audited directories (absolute, not resolved through symlinks)
    bare_files: list[Path]  # bare trajectory files given directly
    settings: Settings
    principles: list[Principle]
    rootpath: Path
    keys: dict[str, str] = field(default_factory=dict)

    def job_id(self, ref: JobRef) -> str:
        """Stable across machines and working directories: <root name>/<path below the root>; a record of a
        multi-record file adds ``::<member node name>`` (like its node id)."""
        target = ref.anchor if ref.layout in ("bare-file", "record") else ref.dir
        suffix = f"::{node_name(ref.member)}" if ref.member is not None else ""
        for r in self.roots:
            if target == r or r in target.parents:
                return (Path(r.name) / target.relative_to(r)).as_posix() + suffix
        return target.name + suffix

    def under_root(self, path: Path) -> bool:
        return any(path == r or r in path.parents for r in self.roots)

    def leads_to_root(self, path: Path) -> bool:
        """``path`` is a proper ancestor of an audit root or of a bare file's directory."""
        return any(path in t.parents for t in [*self.roots, *(f.parent for f in self.bare_files)])


# --- options ------------------------------------------------------------------------------------------------

def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("trajaudit", "pytest-trajaudit: audit AI-agent benchmark runs")
    g.addoption("--trajaudit", action="append", nargs="?", const="", default=None, dest="trajaudit",
                metavar="PATH", help="audit job directories / trajectory files: every PATH given (here or "
                "positionally) is an audit root. Prefer the --trajaudit=PATH form (see README: security).")
    g.addoption("--trajaudit-report", dest="trajaudit_report", default=None, metavar="DIR",
                help="write summary.json and per-job audit-<config>.json under DIR")
    g.addoption("--trajaudit-tasks", dest="trajaudit_tasks", action="append", default=None, metavar="DIR",
                help="directory of task directories (Harbor layout: instruction.md, task.toml, tests/, solution/), "
                "found by task name; repeatable. Enables task-aware P1, P9, P12, P13")
    g.addoption("--trajaudit-rules", dest="trajaudit_rules", default=None, metavar="FILE",
                help="YAML rules file (trace-grader.config.yaml compatible): TG-1..TG-5 parameters, severities "
                "and thresholds; a bad file is a usage error")
    g.addoption("--trajaudit-literal", dest="trajaudit_literal", action="store_true", default=None,
                help="run the seeds' operational regexes over the raw trajectory string, bit for bit")
    g.addoption("--trajaudit-principles", dest="trajaudit_principles", default=None, metavar="CODES",
                help="comma-separated principle codes to run (exact match, unlike -k P1)")
    g.addoption("--trajaudit-max-file-mb", dest="trajaudit_max_file_mb", type=float, default=None,
                help="per-file size limit in MiB (default 512)")
    g.addoption("--trajaudit-max-job-mb", dest="trajaudit_max_job_mb", type=float, default=None,
                help="per-job size limit in MiB over every file the job reads (default 1024)")
    parser.addini("trajaudit_roots", "audit roots used by --trajaudit without a path; plain pytest never "
                  "walks into them", type="paths", default=[])
    parser.addini("trajaudit_report", "default for --trajaudit-report", default="")
    parser.addini("trajaudit_tasks", "default for --trajaudit-tasks", type="paths", default=[])
    parser.addini("trajaudit_rules", "default for --trajaudit-rules (relative to the ini file)", default="")
    parser.addini("trajaudit_literal", "default for --trajaudit-literal", type="bool", default=False)
    parser.addini("trajaudit_principles", "default for --trajaudit-principles", default="")
    parser.addini("trajaudit_max_file_mb", "default for --trajaudit-max-file-mb", default="512")
    parser.addini("trajaudit_max_job_mb", "default for --trajaudit-max-job-mb", default="1024")


def _active(config: pytest.Config) -> bool:
    return config.getoption("trajaudit", None) is not None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Force --noconftest before any conftest.py can be imported (PYTEST-NOTES.md §2.3)."""
    ns = early_config.known_args_namespace
    if getattr(ns, "trajaudit", None) is not None:
        ns.noconftest = True


def _ini_or_opt(config: pytest.Config, name: str) -> Any:
    val = config.getoption(name, None)
    return val if val is not None else config.getini(name)


def _settings(config: pytest.Config) -> Settings:
    """The settings with ``--trajaudit-rules`` applied; a bad rules file is a usage error (never a default)."""
    settings = _base_settings(config)
    path = _rules_path(config)
    if path is None:
        return settings
    from .rulesfile import RulesFileError, apply_rules_file

    try:
        return apply_rules_file(settings, path)
    except RulesFileError as exc:
        raise pytest.UsageError(f"trajaudit: rules file {path}: {exc}") from None


def _rules_path(config: pytest.Config) -> Path | None:
    """``--trajaudit-rules`` (relative to the working directory) or ini ``trajaudit_rules`` (relative to the ini
    file's directory)."""
    opt = config.getoption("trajaudit_rules", None)
    if opt is not None:
        if not opt.strip():
            raise pytest.UsageError("trajaudit: --trajaudit-rules needs a YAML file")
        return _abs(opt)
    ini = str(config.getini("trajaudit_rules") or "").strip()
    if not ini:
        return None
    p = Path(os.path.expanduser(ini))
    if not p.is_absolute():
        p = (config.inipath.parent if config.inipath else config.rootpath) / p
    return _abs(p)


def _base_settings(config: pytest.Config) -> Settings:
    literal = bool(_ini_or_opt(config, "trajaudit_literal"))
    try:
        max_file = float(_ini_or_opt(config, "trajaudit_max_file_mb"))
        max_job = float(_ini_or_opt(config, "trajaudit_max_job_mb"))
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"trajaudit: size limits must be numbers of MiB: {exc}") from None
    if max_file <= 0 or max_job <= 0:
        raise pytest.UsageError("trajaudit: size limits must be positive")
    tasks = config.getoption("trajaudit_tasks", None) or [str(p) for p in config.getini("trajaudit_tasks")]
    tasks_dirs = []
    for t in tasks:
        p = _abs(t)
        if not p.is_dir():
            raise pytest.UsageError(f"trajaudit: --trajaudit-tasks {t}: not a directory")
        tasks_dirs.append(p)
    return Settings(literal=literal, max_file_bytes=int(max_file * MB), max_job_bytes=int(max_job * MB),
                    tasks_dirs=tuple(tasks_dirs))


def _principles(config: pytest.Config) -> list[Principle]:
    for extra in config.hook.pytest_trajaudit_principles():
        for p in extra or ():
            register(p)
    reg = registry()
    chosen = str(_ini_or_opt(config, "trajaudit_principles") or "")
    if chosen.strip():
        codes = [c.strip() for c in chosen.split(",") if c.strip()]
        unknown = [c for c in codes if c not in reg]
        if unknown:
            raise pytest.UsageError(f"trajaudit: unknown principle code(s) {', '.join(unknown)}; "
                                    f"known: {', '.join(reg)}")
        return [reg[c] for c in codes]
    return list(reg.values())


def _abs(p: str | Path) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(p))))


def _inside(child: Path | None, roots: list[Path]) -> bool:
    if child is None:
        return False
    child = _abs(child)
    return any(child == r or r in child.parents for r in roots)


def pytest_configure(config: pytest.Config) -> None:
    for p in registry().values():
        config.addinivalue_line("markers", f"{p.code}: trajaudit principle {p.code} ({p.title})")
    for t in ("c0", "c1", "c2"):
        config.addinivalue_line("markers", f"{t}: trajaudit cost tier {t.upper()}")
    for fam in ("anticheat", "general", "skills", "advisor", "rules"):
        config.addinivalue_line("markers", f"{fam}: trajaudit principle family {fam}")
    if not _active(config):
        return
    values = [v for v in config.getoption("trajaudit") if v]
    positional = [a.split("::", 1)[0] for a in (config.option.file_or_dir or [])]
    given = values + positional
    if not given:
        given = [str(p) for p in config.getini("trajaudit_roots")]
    if not given:
        raise pytest.UsageError("trajaudit: --trajaudit needs a path (--trajaudit=runs/ or a positional path)")
    roots: list[Path] = []
    bare: list[Path] = []
    for g in dict.fromkeys(given):
        p = _abs(g)
        try:
            st = os.lstat(p)
        except OSError:
            raise pytest.UsageError(f"trajaudit: audit path not found: {g}") from None
        if stat.S_ISLNK(st.st_mode):
            raise pytest.UsageError(f"trajaudit: audit path is a symlink (never followed): {g}; pass the real path")
        if stat.S_ISDIR(st.st_mode):
            roots.append(p)
        elif stat.S_ISREG(st.st_mode):
            if p.suffix in (".py", ".pyc", ".pth", ".so") or (p.name.startswith("test") and p.suffix == ".txt"):
                raise pytest.UsageError(f"trajaudit: refusing a bare file pytest itself would import or run: {g}")
            if p.name in ("result.json",) and p.parent not in roots:
                roots.append(p.parent)  # a node id like job/result.json::P1 names a job directory
            else:
                bare.append(p)
        else:
            raise pytest.UsageError(f"trajaudit: not a directory or regular file: {g}")
    # Guard: pytest read its config or chose its rootdir inside the audited tree (an agent-written pytest.ini
    # could have changed options). The plugin cannot undo what already happened; it refuses to go on.
    if _inside(config.inipath, roots):
        raise pytest.UsageError(f"trajaudit: pytest's config file {config.inipath} lies inside an audited tree; "
                                "run with -c <trusted config> (or use the `trajaudit` command)")
    if _inside(config.rootpath, roots):
        raise pytest.UsageError(f"trajaudit: rootdir {config.rootpath} lies inside an audited tree; run from "
                                "outside it or pass --rootdir=<trusted dir> -c <trusted config>")
    state = State(roots, bare, _settings(config), _principles(config), _abs(config.rootpath))
    state.keys = {p.code: p.key for p in state.principles}
    config.stash[STATE_KEY] = state
    if not config.option.file_or_dir:
        config.args = [str(p) for p in roots + bare]
    if config.option.tbstyle == "auto":
        config.option.tbstyle = "line"  # pytest 9.2's long failure summary is O(failures × items)
    if not hasattr(config, "workerinput"):
        report_dir = _ini_or_opt(config, "trajaudit_report") or None
        rollup = RollupPlugin(config, state, Path(report_dir) if report_dir else None)
        config.stash[ROLLUP_KEY] = rollup
        config.pluginmanager.register(rollup, "trajaudit-rollup")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(), "trajaudit-xdist")


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector):
    state: State | None = parent.config.stash.get(STATE_KEY, None)
    if state is None:
        return None
    path = _abs(path)
    walk = state.under_root(path)
    bare = tuple(sorted(f for f in state.bare_files if f.parent == path))
    # A directory between rootdir and a deeper root must not stay pytest's Dir/Package: a Package imports
    # its __init__.py. It becomes a TreeNode that only leads towards the roots.
    leads = not walk and state.leads_to_root(path)
    if walk or bare or leads:
        return TreeNode.from_parent(parent, path=path, walk=walk, bare=bare)
    return None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Plain pytest (plugin inactive) never walks into the configured audit roots."""
    if _active(config):
        return None
    roots = [_abs(p) for p in config.getini("trajaudit_roots")]
    if roots and _inside(collection_path, roots):
        return True
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep each job's items contiguous (undoes pytest-randomly's shuffle) and tell each job which of its
    principles are still selected, so it computes only those."""
    if STATE_KEY not in config.stash:
        return
    order: dict[int, int] = {}
    groups: dict[int, list[pytest.Item]] = {}
    others: list[pytest.Item] = []
    for it in items:
        if isinstance(it, PrincipleItem):
            key = id(it.parent)
            order.setdefault(key, len(order))
            groups.setdefault(key, []).append(it)
        else:
            others.append(it)
    regrouped = [it for key in sorted(groups, key=order.__getitem__) for it in groups[key]]
    for group in groups.values():
        group[0].parent.selected = [it.principle.code for it in group]  # type: ignore[attr-defined]
    items[:] = regrouped + others


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if isinstance(item, PrincipleItem) and (nextitem is None or nextitem.parent is not item.parent):
        item.job.release()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    rep = yield
    if isinstance(item, PrincipleItem) and item.record is not None:
        if call.when == "call" or (call.when == "setup" and rep.failed):
            rep.trajaudit = item.record
        if call.when == "call" and item.warn_msg is not None and rep.passed:
            rep.outcome = "skipped"
            rep.wasxfail = item.warn_msg
    return rep


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    rec = getattr(report, "trajaudit", None)
    if rec and report.when == "call" and getattr(report, "wasxfail", None) is not None and rec.get("status") == "WARN":
        return "xfailed", "w", "WARN"
    return None


# --- controller-side roll-up --------------------------------------------------------------------------------

ROLLUP_KEY = pytest.StashKey["RollupPlugin"]()


class RollupPlugin:
    def __init__(self, config: pytest.Config, state: State, report_dir: Path | None) -> None:
        from .report.summary import Rollup

        self.config = config
        self.state = state
        self.report_dir = report_dir
        self.rollup = Rollup("literal" if state.settings.literal else "precise")
        self.summary: dict[str, Any] | None = None
        self.items: dict[str, dict[str, Any]] = {}  # node id → status/evidence, for the CTRF report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = getattr(report, "trajaudit", None)
        if rec:
            self.rollup.add(rec)
            self.items[report.nodeid] = {"job": rec["job"], "code": rec["code"], "status": rec.get("status"),
                                         "evidence": rec.get("evidence") or rec.get("error") or ""}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.rollup.jobs:
            return
        verdicts = self.rollup.verdicts()
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            counts: dict[str, int] = {}
            for job_id, (v, _) in verdicts.items():
                counts[v] = counts.get(v, 0) + 1
                xml.add_global_property(f"trajaudit.verdict:{job_id}", v)
            for v, n in sorted(counts.items()):
                xml.add_global_property(f"trajaudit.jobs.{v}", str(n))
        if self.report_dir is not None:
            self.summary = self.rollup.write(self.report_dir, self.state.keys)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rollup.jobs:
            return
        terminalreporter.section("trajaudit verdicts")
        for line in self.rollup.terminal_lines():
            terminalreporter.write_line(line)
        if self.report_dir is not None:
            terminalreporter.write_line(f"reports: {self.report_dir}/summary.json and {self.report_dir}/jobs/")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        _enrich_ctrf(config, self.rollup, self.items)


def _enrich_ctrf(config: pytest.Config, rollup: Any, items: dict[str, dict[str, Any]]) -> None:
    """Add job verdicts and the PR verdict to a pytest-json-ctrf report (results.extra.trajaudit) and each audit
    item's status and evidence to its test (tests[].extra.trajaudit). The file is written before unconfigure."""
    path = config.getoption("ctrf", None) if config.pluginmanager.hasplugin("ctrf") else None
    if not path or not rollup.jobs or not os.path.isfile(path):
        return
    import json

    from .redact import redact

    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        results = doc.setdefault("results", {})
        extra = results.setdefault("extra", {})
        summary = rollup.summary()
        extra["trajaudit"] = {"verdicts": {k: v for k, (v, _) in rollup.verdicts().items()},
                              "pr_verdict": summary["pr_verdict"]["verdict"]}
        for t in results.get("tests", []):
            info = items.get(t.get("name")) if isinstance(t, dict) else None
            if info:
                t.setdefault("extra", {})["trajaudit"] = {**info, "evidence": redact(info["evidence"])[:2000]}
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)
    except (OSError, ValueError):
        pass


class XdistHooks:
    """Registered only when pytest-xdist is present. A job's items share one node id prefix
    (``…/result.json::``), so loadscope keeps a job on one worker; make it the default under ``-n``."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any):
        explicit = any(a == "--dist" or a.startswith("--dist=") for a in config.invocation_params.args)
        if config.getoption("dist") == "load" and not explicit:
            from xdist.scheduler import LoadScopeScheduling

            return LoadScopeScheduling(config, log)
        return None


__all__ = ["TrajauditWarning", "JobNode"]
