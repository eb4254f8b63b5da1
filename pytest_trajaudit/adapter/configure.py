"""Reading the options: the audit roots, the settings and the session's :class:`State` (pytest_configure).

A bad value is a ``pytest.UsageError`` naming it, never a silent default.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..discover.jobs import JobRef, Walk
from ..loaders.multi import node_name
from ..principles import Principle, group_checks, registry
from ..records import GroupRecord
from ..scan.redact import printable
from ..settings import Settings
from . import protocol
from .nodes import SHARD_KEY, STATE_KEY

MB = 1024 * 1024


@dataclass
class State:
    roots: list[Path]  # audited directories (absolute, not resolved through symlinks)
    bare_files: list[Path]  # bare trajectory files given directly
    settings: Settings
    principles: list[Principle]
    rootpath: Path
    keys: dict[str, str] = field(default_factory=dict)
    registry: dict[str, Principle] = field(default_factory=dict)  # built-in + plugin-contributed principles
    group_codes: tuple[str, ...] = ()  # task-group check items to collect per group
    grouped: set[str] = field(default_factory=set)  # job ids that belong to a planned task group
    store: Any = None  # groups.MemoryStore, or groups.DirStore shared by xdist workers
    strict_pass_k: bool = False
    trials: int | None = None
    walk: Walk = field(default_factory=Walk)  # the session's one view of the audited trees (discover/jobs.py)
    collected_jobs: list[Any] = field(default_factory=list)  # every job node collected (completeness.py)
    # positional paths and node ids that select part of an audit root: the jobs they leave out are INCOMPLETE
    narrowed: list[str] = field(default_factory=list)
    waivers: list[Any] = field(default_factory=list)  # waivers.Waiver entries of --trajaudit-waivers
    today: Any = None  # the UTC date waivers expire against, taken once at configure (one answer per process)

    def declarations(self) -> dict[str, Principle]:
        """Every principle of the session (built-in and plugin-contributed), by code."""
        return self.registry or registry()

    def compute_record(self, job_id: str, ref: JobRef) -> GroupRecord:
        """A group member's record computed by the group item itself (its job ran elsewhere or not at all)."""
        from ..aggregate.groups import compact, needed
        from ..principles.engine import audit_job

        reg = self.declarations()
        return compact(job_id, audit_job(ref, self.settings, [reg[c] for c in needed(reg) if c in reg], judges=False),
                       reg)

    def job_id(self, ref: JobRef) -> str:
        """Stable across machines and working directories: <root name>/<path below the root>; a record of a
        multi-record file adds ``::<member node name>`` (like its node id)."""
        target = ref.anchor if ref.layout in ("bare-file", "record") else ref.dir
        suffix = f"::{node_name(ref.member)}" if ref.member is not None else ""
        for r in self.roots:
            if target == r or r in target.parents:
                return printable((Path(self.label(r)) / target.relative_to(r)).as_posix()) + suffix
        return printable(self.label(target)) + suffix

    def label(self, p: Path) -> str:
        """The name of an audit root or bare file in job ids: its base name, or, when another root or bare file
        has the same base name (``--trajaudit=a/runs --trajaudit=b/runs``), its shortest trailing part that no
        other has (``a/runs``, ``b/runs``): two jobs never share an id, so the roll-up never merges them."""
        others = [q for q in (*self.roots, *self.bare_files) if q != p]
        for n in range(1, len(p.parts) + 1):
            if not any(q.parts[-n:] == p.parts[-n:] for q in others):
                return Path(*p.parts[-n:]).as_posix()
        return p.as_posix()

    def under_root(self, path: Path) -> bool:
        return any(path == r or r in path.parents for r in self.roots)

    def leads_to_root(self, path: Path) -> bool:
        """``path`` is a proper ancestor of an audit root or of a bare file's directory."""
        return any(path in t.parents for t in [*self.roots, *(f.parent for f in self.bare_files)])


def active(config: pytest.Config) -> bool:
    return config.getoption("trajaudit", None) is not None


def ini_or_opt(config: pytest.Config, name: str) -> Any:
    val = config.getoption(name, None)
    return val if val is not None else config.getini(name)


def _settings(config: pytest.Config) -> Settings:
    """The settings with ``--trajaudit-rules`` applied; a bad rules file is a usage error (never a default)."""
    settings = _base_settings(config)
    path = _rules_path(config)
    if path is not None:
        from ..rulesfile import RulesFileError, apply_rules_file

        try:
            settings = apply_rules_file(settings, path)
        except RulesFileError as exc:
            raise pytest.UsageError(f"trajaudit: rules file {path}: {exc}") from None
    settings.judge = _judge_config(config, settings)
    return settings


def _judge_config(config: pytest.Config, settings: Settings) -> Any:
    """The LLM judges (judges/options.py): the options, else their ini twins, else the rules file's judge
    section; None when no model is named. The ini's cache path is relative to the ini file."""
    from ..judges.options import JudgeOptionError, build

    def get(name: str) -> Any:
        opt = config.getoption(f"trajaudit_{name}", None)
        return opt if opt is not None else config.getini(f"trajaudit_{name}")

    ini_cache = config.getoption("trajaudit_judge_cache", None) is None
    base = (config.inipath.parent if config.inipath else config.rootpath) if ini_cache else None
    try:
        return build(get, rules_model=settings.rules.judge_model, rules_enabled=settings.rules.judge_enabled,
                     base=base)
    except (JudgeOptionError, ValueError) as exc:
        raise pytest.UsageError(f"trajaudit: {exc}") from None


def _user_file(config: pytest.Config, name: str, what: str) -> Path | None:
    """``--trajaudit-<name>`` (relative to the working directory) or ini ``trajaudit_<name>`` (relative to the ini
    file's directory), as an absolute path; None when neither is set."""
    opt = config.getoption(f"trajaudit_{name}", None)
    if opt is not None:
        if not str(opt).strip():
            raise pytest.UsageError(f"trajaudit: --trajaudit-{name} needs {what}")
        return abspath(opt)
    ini = str(config.getini(f"trajaudit_{name}") or "").strip()
    if not ini:
        return None
    p = Path(os.path.expanduser(ini))
    if not p.is_absolute():
        p = (config.inipath.parent if config.inipath else config.rootpath) / p
    return abspath(p)


def _rules_path(config: pytest.Config) -> Path | None:
    """The trace-grader rules file: ``--trajaudit-rules`` or ini ``trajaudit_rules``."""
    return _user_file(config, "rules", "a YAML file")


def waivers_path(config: pytest.Config) -> Path | None:
    """The waivers file: ``--trajaudit-waivers`` or ini ``trajaudit_waivers``."""
    return _user_file(config, "waivers", "a YAML file")


def _waivers(config: pytest.Config, tops: list[Path]) -> list[Any]:
    """The waivers file's entries; a file inside an audited tree (by real path too: an agent could plant one) or
    a bad file is a usage error naming the entry."""
    path = waivers_path(config)
    if path is None:
        return []
    from ..discover.trust import inside
    from ..report.waivers import WaiverError, load

    if inside(path, tops):
        raise pytest.UsageError(f"trajaudit: the waivers file {printable(str(path))} lies inside an audited tree; "
                                "keep it outside every audited root (e.g. in the benchmark's repository)")
    codes: dict[str, Principle] = config.stash[REGISTRY_KEY]  # the session's principles, by code
    try:
        return load(path, codes)
    except WaiverError as exc:
        raise pytest.UsageError(f"trajaudit: waivers: {printable(str(exc))}") from None


def baseline(config: pytest.Config, tops: list[Path], max_bytes: int) -> Any:
    """``--trajaudit-baseline``: the earlier run's findings (baseline.py); a file inside an audited tree, or one
    that is not a readable summary.json, is a usage error naming it."""
    opt = config.getoption("trajaudit_baseline", None)
    new_only = bool(config.getoption("trajaudit_new_only", None))
    if opt is None or not str(opt).strip():
        if new_only:
            raise pytest.UsageError("trajaudit: --trajaudit-new-only needs --trajaudit-baseline SUMMARY")
        return None
    from ..discover.trust import inside
    from ..report.baseline import BaselineError, load

    path = abspath(opt)
    if inside(path, tops):
        raise pytest.UsageError(f"trajaudit: the baseline {printable(str(path))} lies inside an audited tree; "
                                "give a summary.json from outside it")
    try:
        b = load(path, max(max_bytes, 1))
    except BaselineError as exc:
        raise pytest.UsageError(f"trajaudit: baseline: {printable(str(exc))}") from None
    b.new_only = new_only
    return b


def _base_settings(config: pytest.Config) -> Settings:
    literal = bool(ini_or_opt(config, "trajaudit_literal"))
    try:
        max_file = float(ini_or_opt(config, "trajaudit_max_file_mb"))
        max_job = float(ini_or_opt(config, "trajaudit_max_job_mb"))
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"trajaudit: size limits must be numbers of MiB: {exc}") from None
    if max_file <= 0 or max_job <= 0:
        raise pytest.UsageError("trajaudit: size limits must be positive")
    try:
        max_events = int(str(ini_or_opt(config, "trajaudit_max_events")).strip())
        budget = float(ini_or_opt(config, "trajaudit_audit_budget"))
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"trajaudit: --trajaudit-max-events needs a whole number and "
                                f"--trajaudit-audit-budget a number of seconds: {exc}") from None
    if max_events <= 0 or not budget > 0:
        raise pytest.UsageError("trajaudit: --trajaudit-max-events and --trajaudit-audit-budget must be positive")
    tasks = config.getoption("trajaudit_tasks", None) or [str(p) for p in config.getini("trajaudit_tasks")]
    tasks_dirs = []
    for t in tasks:
        p = abspath(t)
        if not p.is_dir():
            raise pytest.UsageError(f"trajaudit: --trajaudit-tasks {t}: not a directory")
        tasks_dirs.append(p)
    return Settings(literal=literal, max_file_bytes=int(max_file * MB), max_job_bytes=int(max_job * MB),
                    max_events=max_events, audit_budget=budget,
                    tasks_dirs=tuple(tasks_dirs), privileged_roots=_privileged_roots(config),
                    rerun=bool(ini_or_opt(config, "trajaudit_rerun")),
                    timeline=bool(ini_or_opt(config, "trajaudit_report")))


def _privileged_roots(config: pytest.Config) -> tuple[str, ...]:
    """``--trajaudit-privileged-root`` (else ini ``trajaudit_privileged_roots``); a bad root is a usage error."""
    from ..advisor.layout import flag_layout
    from ..model import UnusableInput

    roots = config.getoption("trajaudit_privileged_root", None) or list(config.getini("trajaudit_privileged_roots"))
    try:
        return flag_layout(roots).privileged_roots if roots else ()
    except UnusableInput as exc:
        raise pytest.UsageError(f"trajaudit: --trajaudit-privileged-root: {exc.reason}") from None


REGISTRY_KEY = pytest.StashKey[dict[str, Principle]]()


def _principles(config: pytest.Config) -> tuple[list[Principle], tuple[str, ...]]:
    """The per-job principles and the task-group codes selected by ``--trajaudit-principles``."""
    groups = tuple(group_checks())
    reg = dict(registry())  # plugin-contributed principles live in this session's copy, never the global one
    for extra in config.hook.pytest_trajaudit_principles():
        for p in extra or ():
            old = reg.get(p.code)
            if old is not None and old.func is not p.func:
                raise pytest.UsageError(f"trajaudit: principle code {p.code} is defined twice "
                                        f"({old.func.__module__} and {p.func.__module__})")
            if old is None:
                config.addinivalue_line("markers", f"{p.code}: trajaudit principle {p.code} ({p.title})")
            reg[p.code] = p
    config.stash[REGISTRY_KEY] = reg
    chosen = str(ini_or_opt(config, "trajaudit_principles") or "")
    if chosen.strip():
        codes = [c.strip() for c in chosen.split(",") if c.strip()]
        unknown = [c for c in codes if c not in reg and c not in groups]
        if unknown:
            raise pytest.UsageError(f"trajaudit: unknown principle code(s) {', '.join(unknown)}; "
                                    f"known: {', '.join([*reg, *groups])}")
        return [reg[c] for c in codes if c in reg], tuple(c for c in groups if c in codes)
    return list(reg.values()), groups


def _trials(config: pytest.Config) -> int | None:
    raw = ini_or_opt(config, "trajaudit_trials")
    if raw is None or str(raw).strip() == "":
        return None
    try:
        k = int(str(raw).strip())
    except ValueError:
        raise pytest.UsageError(f"trajaudit: --trajaudit-trials needs a positive integer, got {raw!r}") from None
    if k < 1:
        raise pytest.UsageError(f"trajaudit: --trajaudit-trials needs a positive integer, got {k}")
    return k


def abspath(p: str | Path) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(p))))


def inside_roots(child: Path | None, roots: list[Path]) -> bool:
    if child is None:
        return False
    child = abspath(child)
    return any(child == r or r in child.parents for r in roots)


def read_shard(config: pytest.Config) -> Any:
    spec = config.getoption("trajaudit_shard", None)
    if spec is None:
        return None
    from ..discover.shard import parse_shard

    try:
        return parse_shard(spec)
    except ValueError as exc:
        raise pytest.UsageError(f"trajaudit: {exc}") from None


def group_store(config: pytest.Config) -> Any:
    """Where jobs publish the records their task group reads: memory, or under xdist a private directory the
    controller creates (mode 0700, removed at unconfigure) and hands to every worker."""
    from ..aggregate.groups import DirStore, MemoryStore

    shared = getattr(config, "workerinput", {}).get("trajaudit_store")
    if shared:
        return DirStore(shared)
    if config.pluginmanager.hasplugin("xdist") and (config.getoption("numprocesses", None) or
                                                     config.getoption("tx", None)):
        import tempfile

        path = tempfile.mkdtemp(prefix="trajaudit-groups-")
        config.add_cleanup(lambda: _rmtree(path))
        return DirStore(path)
    return MemoryStore()


def _rmtree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def add_markers(config: pytest.Config) -> None:
    """Declare the markers of every principle, cost tier and family (also without --trajaudit: -m/--strict-markers)."""
    for p in registry().values():
        config.addinivalue_line("markers", f"{p.code}: trajaudit principle {p.code} ({p.title})")
    for t in ("c0", "c1", "c2"):
        config.addinivalue_line("markers", f"{t}: trajaudit cost tier {t.upper()}")
    for fam in ("anticheat", "general", "skills", "advisor", "rules"):
        config.addinivalue_line("markers", f"{fam}: trajaudit principle family {fam}")
    for g in group_checks().values():
        config.addinivalue_line("markers", f"{g.code}: trajaudit group item {g.title}")


def output_paths(config: pytest.Config) -> list[tuple[str, str]]:
    """The files and directories this pytest run writes that an option names: pytest's JUnit XML, its base
    temporary directory (which pytest empties) and debug log, and the reports of pytest-json-ctrf, pytest-html and
    pytest-reportlog when they are loaded (``--trajaudit-report`` is checked where the roll-up is made)."""
    opt = config.option
    found = [("--junitxml", getattr(opt, "xmlpath", None)), ("--basetemp", getattr(opt, "basetemp", None)),
             ("--debug", getattr(opt, "debug", None))]
    for plugin, name, flag in (("ctrf", "ctrf", "--ctrf"), ("html", "htmlpath", "--html"),
                               ("reportlog", "report_log", "--report-log")):
        if config.pluginmanager.hasplugin(plugin):
            found.append((flag, config.getoption(name, None)))
    return [(flag, str(v)) for flag, v in found if isinstance(v, str | os.PathLike) and str(v)]


def _narrows(arg: str, dirs: list[Path]) -> bool:
    """``arg`` (a positional path or node id) selects part of one of the audit directories ``dirs``: it lies
    strictly inside one, or names items of one (``root::…``)."""
    from . import nodeids

    path, _, parts = arg.partition("::")
    p = abspath(path)
    return nodeids.subsumed(p, dirs) or (bool(parts) and p in dirs)


def setup(config: pytest.Config) -> tuple[State, list[Path]]:
    """Under --trajaudit: resolve the audit roots and bare files (refusing symlinks, files pytest would import,
    a config file or rootdir inside an audited tree), read every option into the session's :class:`State`
    (stashed under ``STATE_KEY``), point pytest's arguments at the roots; returns the state and the audited trees."""
    from . import nodeids

    values, ids = nodeids.split_ids([v for v in config.getoption("trajaudit") if v])  # the space form's node ids
    args = [*ids, *(config.option.file_or_dir or [])]
    walk = Walk()  # the session's one view of the trees: the directories classified here are not classified again
    given = values + [a.split("::", 1)[0] for a in config.option.file_or_dir or []]
    for a in args:  # a task group's node id alone: audit the directory that holds its trials
        top = nodeids.group_root(a, abspath(a.split("::", 1)[0]), walk.classify)
        if top is not None:
            given.append(str(top))
    if not given:
        given = [str(p) for p in config.getini("trajaudit_roots")]
    if not given:
        raise pytest.UsageError("trajaudit: --trajaudit needs a path (--trajaudit=runs/ or a positional path)")
    roots: list[Path] = []
    bare: list[Path] = []
    dirs = [abspath(g) for g in given if os.path.isdir(abspath(g)) and not os.path.islink(abspath(g))]
    for g in dict.fromkeys(given):
        p = abspath(g)
        if nodeids.subsumed(p, dirs):
            continue  # a node id inside a given audit root selects in it; it is no root of its own
        try:
            st = os.lstat(p)
        except OSError:
            raise pytest.UsageError(f"trajaudit: audit path not found: {g}") from None
        if stat.S_ISLNK(st.st_mode):
            raise pytest.UsageError(f"trajaudit: audit path is a symlink (never followed): {g}; pass the real path")
        real = Path(os.path.realpath(p))
        if real != p:  # a symlinked directory above it: pytest could not match the path, and links are never followed
            raise pytest.UsageError(f"trajaudit: audit path {g} goes through a symlink; pass the real path {real}")
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
    # could have changed options). The plugin cannot undo what already happened; it refuses to go on. The tree of
    # a trajectory file or of a directory inside a job is that whole job (trust.py).
    from ..discover.trust import audited_tree, inside

    tops = [audited_tree(p, walk.classify) for p in roots + bare]
    if inside(config.inipath, tops):
        raise pytest.UsageError(f"trajaudit: pytest's config file {config.inipath} lies inside an audited tree; "
                                "run with -c <trusted config> (or use the `trajaudit` command)")
    if inside(config.rootpath, tops):
        raise pytest.UsageError(f"trajaudit: rootdir {config.rootpath} lies inside an audited tree; run from "
                                "outside it or pass --rootdir=<trusted dir> -c <trusted config>")
    for opt, value in output_paths(config):
        if inside(abspath(value), tops):
            raise pytest.UsageError(f"trajaudit: {opt} {printable(value)} lies inside an audited tree; write it "
                                    "outside (nothing is written into the evidence)")
    principles, group_codes = _principles(config)
    # a path or node id inside an audit root selects part of it; the verdict still covers the whole root
    narrowed = [a for a in args if _narrows(a, dirs)]
    state = State(roots, bare, _settings(config), principles, abspath(config.rootpath), group_codes=group_codes,
                  strict_pass_k=bool(ini_or_opt(config, "trajaudit_strict_pass_k")), trials=_trials(config),
                  registry=config.stash[REGISTRY_KEY], walk=walk)
    state.keys = {p.code: p.key for p in state.principles}
    state.narrowed = narrowed
    state.waivers = _waivers(config, tops)
    if state.waivers:
        from ..report.waivers import utc_today

        state.today = utc_today()
    judge = state.settings.judge
    if judge is not None and judge.cache_dir is not None and inside(judge.cache_dir, tops):
        raise pytest.UsageError(f"trajaudit: the judge cache {judge.cache_dir} lies inside an audited tree; "
                                "pass --trajaudit-judge-cache DIR outside it")
    if judge is not None:  # pydantic's warnings about litellm's own types, raised in judge threads mid-item
        config.addinivalue_line("filterwarnings", "ignore:Items? .* on TypedDict class .*ReadOnly:UserWarning")
    state.store = group_store(config)
    from ..aggregate.groups import needed

    state.store.codes = needed(state.declarations())
    config.stash[STATE_KEY] = state
    config.args = args or [str(p) for p in roots + bare]
    nodeids.widen_base(config, roots + bare)  # an audit path outside the rootdir: its node ids resolve
    if config.option.tbstyle == "auto":
        config.option.tbstyle = "line"  # pytest 9.2's long failure summary is O(failures × items)
    protocol.lean(config)  # validates trajaudit_protocol now (a bad value is a usage error, not an internal one)
    shard = read_shard(config)
    if shard is not None:
        config.stash[SHARD_KEY] = shard
    return state, tops
