"""pytest hooks of pytest-trajaudit: options, safe collection, outcome mapping, roll-up, xdist glue.

Without ``--trajaudit`` the plugin does nothing (except keep plain ``pytest`` out of ``trajaudit_roots``).
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs
from .discovery import JobRef, Walk
from .loaders.multi import node_name
from .nodes import (
    COLLECTED_KEY,
    SHARD_KEY,
    STATE_KEY,
    GroupItem,
    JobNode,
    PrincipleItem,
    TrajauditWarning,
    TreeNode,
)
from .principles import Principle, registry
from .redact import printable
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
    registry: dict[str, Principle] = field(default_factory=dict)  # built-in + plugin-contributed principles
    group_codes: tuple[str, ...] = ()  # PASSK / SB-2 items to collect per task group
    grouped: set[str] = field(default_factory=set)  # job ids that belong to a planned task group
    store: Any = None  # groups.MemoryStore, or groups.DirStore shared by xdist workers
    strict_pass_k: bool = False
    trials: int | None = None
    walk: Walk = field(default_factory=Walk)  # the session's one view of the audited trees (discovery.py)
    collected_jobs: list[Any] = field(default_factory=list)  # every job node collected (completeness.py)
    waivers: list[Any] = field(default_factory=list)  # waivers.Waiver entries of --trajaudit-waivers
    today: Any = None  # the UTC date waivers expire against, taken once at configure (one answer per process)

    def declarations(self) -> dict[str, Principle]:
        """Every principle of the session (built-in and plugin-contributed), by code."""
        return self.registry or registry()

    def compute_record(self, job_id: str, ref: JobRef) -> dict[str, Any]:
        """A group member's record computed by the group item itself (its job ran elsewhere or not at all)."""
        from .engine import audit_job
        from .groups import compact, needed

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
    g.addoption("--trajaudit-trials", dest="trajaudit_trials", type=int, default=None, metavar="K",
                help="expected trials per task group: a missing or duplicated trial makes its PASSK item an error")
    g.addoption("--trajaudit-strict-pass-k", dest="trajaudit_strict_pass_k", action="store_true", default=None,
                help="a flaky task group (pass^k < 1) fails its PASSK item instead of WARN")
    g.addoption("--trajaudit-privileged-root", dest="trajaudit_privileged_root", action="append", default=None,
                metavar="PATH", help="advisor audit (ADV-1..ADV-5): a privileged root relative to each job's task "
                "directory (repeatable); overrides the task's advisor/task_material_manifest.json and the default "
                "layout (README.md, solution, tests), and gives every job ADV items")
    g.addoption("--trajaudit-rerun", dest="trajaudit_rerun", action="store_true", default=None,
                help="let P12 run the task's verifier command (from the task directory, never from a job) on "
                "perturbed copies of the agent's output; off by default: it executes task-provided code")
    g.addoption("--trajaudit-max-file-mb", dest="trajaudit_max_file_mb", type=float, default=None,
                help="per-file size limit in MiB (default 512)")
    g.addoption("--trajaudit-max-job-mb", dest="trajaudit_max_job_mb", type=float, default=None,
                help="per-job size limit in MiB over every file the job reads (default 1024)")
    g.addoption("--trajaudit-max-events", dest="trajaudit_max_events", type=int, default=None,
                help="per-job limit on events: JSON objects and arrays per parsed file, lines per JSON Lines file, "
                "events per trajectory (default 500000); past it the job is unusable input (docs/limits.md)")
    g.addoption("--trajaudit-audit-budget", dest="trajaudit_audit_budget", type=float, default=None,
                metavar="SECONDS", help="CPU seconds one job's audit may take (default 60); past it the job is "
                "unusable input, 'audit exceeded N s' (docs/limits.md)")
    # LLM judges (judges/; README "Judges"): off unless a model is named
    g.addoption("--trajaudit-judge", dest="trajaudit_judge", action="append", default=None, metavar="MODEL",
                help="LLM judge model (litellm name; repeatable: two or more enable P13 concurrence). Judges P3's "
                "failure bucket, P11's aligned_by_prose and P13; needs the 'judge' extra (litellm)")
    g.addoption("--trajaudit-judge-base-url", dest="trajaudit_judge_base_url", default=None, metavar="URL",
                help="OpenAI-compatible base URL (default: $JUDGE_BASE_URL, then $ADVISOR_BASE_URL, then the provider's)")
    g.addoption("--trajaudit-judge-timeout", dest="trajaudit_judge_timeout", default=None, metavar="SECONDS",
                help="total seconds per judge HTTP attempt, however the server trickles its answer (default 120)")
    g.addoption("--trajaudit-judge-retries", dest="trajaudit_judge_retries", default=None, metavar="N",
                help="retries after a 5xx, 429, timeout or connection error (default 2; never on a bad answer)")
    g.addoption("--trajaudit-judge-concurrency", dest="trajaudit_judge_concurrency", default=None, metavar="N",
                help="judge requests in flight per process (default 8)")
    g.addoption("--trajaudit-judge-cache", dest="trajaudit_judge_cache", default=None, metavar="DIR",
                help="answer cache (default $XDG_CACHE_HOME/pytest-trajaudit/judges; 'off' disables it)")
    g.addoption("--trajaudit-judge-api-key-env", dest="trajaudit_judge_api_key_env", default=None, metavar="VAR",
                help="environment variable holding the judge API key (default JUDGE_API_KEY); never a key itself")
    g.addoption("--trajaudit-judge-provider", dest="trajaudit_judge_provider", default=None, metavar="NAME",
                help="litellm provider prefix for a model name without one (default openai)")
    g.addoption("--trajaudit-protocol", dest="trajaudit_protocol", choices=("lean", "full"), default=None,
                help="how audit items run: 'lean' (default: setup/call/teardown without pytest's per-item output "
                "and log capture; every report hook, JUnit, xdist, -x still run) or 'full' (pytest's own protocol)")
    g.addoption("--trajaudit-allow-incomplete", dest="trajaudit_allow_incomplete", action="store_true", default=None,
                help="a deliberate subset: a run whose PR verdict is INCOMPLETE (an integrity principle deselected "
                "or not reached) exits 0 instead of 10; the verdict stays INCOMPLETE (docs/verdicts.md)")
    g.addoption("--trajaudit-shard", dest="trajaudit_shard", default=None, metavar="I/N",
                help="audit only shard I of N (1-based, 1 <= I <= N): jobs are assigned by a sha256 of their task "
                "group (or their path below the audit root), stable across machines; see `trajaudit merge`")
    g.addoption("--trajaudit-waivers", dest="trajaudit_waivers", default=None, metavar="FILE",
                help="YAML file of waivers (job glob, code, reason, expires, optional evidence substring): a matching "
                "FAIL/WARN is skipped as WAIVED and does not count in the verdicts; outside every audited root "
                "(docs/review.md)")
    g.addoption("--trajaudit-baseline", dest="trajaudit_baseline", default=None, metavar="SUMMARY",
                help="summary.json of an earlier run: report the findings new since it, gone since it and unchanged")
    g.addoption("--trajaudit-new-only", dest="trajaudit_new_only", action="store_true", default=None,
                help="with --trajaudit-baseline: only new findings count in the PR verdict (never makes an ERROR "
                "or INCOMPLETE job pass)")
    parser.addini("trajaudit_waivers", "default for --trajaudit-waivers (relative to the ini file)", default="")
    parser.addini("trajaudit_roots", "audit roots used by --trajaudit without a path; plain pytest never "
                  "walks into them", type="paths", default=[])
    parser.addini("trajaudit_report", "default for --trajaudit-report", default="")
    parser.addini("trajaudit_tasks", "default for --trajaudit-tasks", type="paths", default=[])
    parser.addini("trajaudit_rules", "default for --trajaudit-rules (relative to the ini file)", default="")
    parser.addini("trajaudit_literal", "default for --trajaudit-literal", type="bool", default=False)
    parser.addini("trajaudit_principles", "default for --trajaudit-principles", default="")
    parser.addini("trajaudit_trials", "default for --trajaudit-trials", default="")
    parser.addini("trajaudit_strict_pass_k", "default for --trajaudit-strict-pass-k", type="bool", default=False)
    parser.addini("trajaudit_privileged_roots", "default for --trajaudit-privileged-root (one per line)",
                  type="linelist", default=[])
    parser.addini("trajaudit_rerun", "default for --trajaudit-rerun", type="bool", default=False)
    parser.addini("trajaudit_max_file_mb", "default for --trajaudit-max-file-mb", default="512")
    parser.addini("trajaudit_max_job_mb", "default for --trajaudit-max-job-mb", default="1024")
    parser.addini("trajaudit_max_events", "default for --trajaudit-max-events", default="500000")
    parser.addini("trajaudit_audit_budget", "default for --trajaudit-audit-budget (seconds)", default="60")
    parser.addini("trajaudit_judge", "default for --trajaudit-judge (one model per line)", type="linelist",
                  default=[])
    for name in ("base_url", "timeout", "retries", "concurrency", "cache", "api_key_env", "provider"):
        parser.addini(f"trajaudit_judge_{name}", f"default for --trajaudit-judge-{name.replace('_', '-')}", default="")
    parser.addini("trajaudit_allow_incomplete", "default for --trajaudit-allow-incomplete", type="bool",
                  default=False)
    parser.addini("trajaudit_protocol", "default for --trajaudit-protocol (lean or full)", default="lean")


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
    if path is not None:
        from .rulesfile import RulesFileError, apply_rules_file

        try:
            settings = apply_rules_file(settings, path)
        except RulesFileError as exc:
            raise pytest.UsageError(f"trajaudit: rules file {path}: {exc}") from None
    settings.judge = _judge_config(config, settings)
    return settings


def _judge_config(config: pytest.Config, settings: Settings) -> Any:
    """The LLM judges (judges/options.py): the options, else their ini twins, else the rules file's judge
    section; None when no model is named. The ini's cache path is relative to the ini file."""
    from .judges.options import JudgeOptionError, build

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


def _waivers_path(config: pytest.Config) -> Path | None:
    """``--trajaudit-waivers`` (relative to the working directory) or ini ``trajaudit_waivers`` (relative to the
    ini file's directory)."""
    opt = config.getoption("trajaudit_waivers", None)
    if opt is not None:
        if not str(opt).strip():
            raise pytest.UsageError("trajaudit: --trajaudit-waivers needs a YAML file")
        return _abs(opt)
    ini = str(config.getini("trajaudit_waivers") or "").strip()
    if not ini:
        return None
    p = Path(os.path.expanduser(ini))
    if not p.is_absolute():
        p = (config.inipath.parent if config.inipath else config.rootpath) / p
    return _abs(p)


def _waivers(config: pytest.Config, tops: list[Path]) -> list[Any]:
    """The waivers file's entries; a file inside an audited tree (by real path too: an agent could plant one) or
    a bad file is a usage error naming the entry."""
    path = _waivers_path(config)
    if path is None:
        return []
    from .trust import inside
    from .waivers import WaiverError, load

    if inside(path, tops):
        raise pytest.UsageError(f"trajaudit: the waivers file {printable(str(path))} lies inside an audited tree; "
                                "keep it outside every audited root (e.g. in the benchmark's repository)")
    try:
        return load(path, config.stash[REGISTRY_KEY])
    except WaiverError as exc:
        raise pytest.UsageError(f"trajaudit: waivers: {printable(str(exc))}") from None


def _baseline(config: pytest.Config, tops: list[Path], max_bytes: int) -> Any:
    """``--trajaudit-baseline``: the earlier run's findings (baseline.py); a file inside an audited tree, or one
    that is not a readable summary.json, is a usage error naming it."""
    opt = config.getoption("trajaudit_baseline", None)
    new_only = bool(config.getoption("trajaudit_new_only", None))
    if opt is None or not str(opt).strip():
        if new_only:
            raise pytest.UsageError("trajaudit: --trajaudit-new-only needs --trajaudit-baseline SUMMARY")
        return None
    from .baseline import BaselineError, load
    from .trust import inside

    path = _abs(opt)
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
    literal = bool(_ini_or_opt(config, "trajaudit_literal"))
    try:
        max_file = float(_ini_or_opt(config, "trajaudit_max_file_mb"))
        max_job = float(_ini_or_opt(config, "trajaudit_max_job_mb"))
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"trajaudit: size limits must be numbers of MiB: {exc}") from None
    if max_file <= 0 or max_job <= 0:
        raise pytest.UsageError("trajaudit: size limits must be positive")
    try:
        max_events = int(str(_ini_or_opt(config, "trajaudit_max_events")).strip())
        budget = float(_ini_or_opt(config, "trajaudit_audit_budget"))
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"trajaudit: --trajaudit-max-events needs a whole number and "
                                f"--trajaudit-audit-budget a number of seconds: {exc}") from None
    if max_events <= 0 or not budget > 0:
        raise pytest.UsageError("trajaudit: --trajaudit-max-events and --trajaudit-audit-budget must be positive")
    tasks = config.getoption("trajaudit_tasks", None) or [str(p) for p in config.getini("trajaudit_tasks")]
    tasks_dirs = []
    for t in tasks:
        p = _abs(t)
        if not p.is_dir():
            raise pytest.UsageError(f"trajaudit: --trajaudit-tasks {t}: not a directory")
        tasks_dirs.append(p)
    return Settings(literal=literal, max_file_bytes=int(max_file * MB), max_job_bytes=int(max_job * MB),
                    max_events=max_events, audit_budget=budget,
                    tasks_dirs=tuple(tasks_dirs), privileged_roots=_privileged_roots(config),
                    rerun=bool(_ini_or_opt(config, "trajaudit_rerun")),
                    timeline=bool(_ini_or_opt(config, "trajaudit_report")))


def _privileged_roots(config: pytest.Config) -> tuple[str, ...]:
    """``--trajaudit-privileged-root`` (else ini ``trajaudit_privileged_roots``); a bad root is a usage error."""
    from .advisor.layout import flag_layout
    from .model import UnusableInput

    roots = config.getoption("trajaudit_privileged_root", None) or list(config.getini("trajaudit_privileged_roots"))
    try:
        return flag_layout(roots).privileged_roots if roots else ()
    except UnusableInput as exc:
        raise pytest.UsageError(f"trajaudit: --trajaudit-privileged-root: {exc.reason}") from None


REGISTRY_KEY = pytest.StashKey[dict]()


def _principles(config: pytest.Config) -> tuple[list[Principle], tuple[str, ...]]:
    """The per-job principles and the group codes (PASSK, SB-2) selected by ``--trajaudit-principles``."""
    from .groups import GROUP_CODES

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
    chosen = str(_ini_or_opt(config, "trajaudit_principles") or "")
    if chosen.strip():
        codes = [c.strip() for c in chosen.split(",") if c.strip()]
        unknown = [c for c in codes if c not in reg and c not in GROUP_CODES]
        if unknown:
            raise pytest.UsageError(f"trajaudit: unknown principle code(s) {', '.join(unknown)}; "
                                    f"known: {', '.join([*reg, *GROUP_CODES])}")
        return [reg[c] for c in codes if c in reg], tuple(c for c in GROUP_CODES if c in codes)
    return list(reg.values()), GROUP_CODES


def _trials(config: pytest.Config) -> int | None:
    raw = _ini_or_opt(config, "trajaudit_trials")
    if raw is None or str(raw).strip() == "":
        return None
    try:
        k = int(str(raw).strip())
    except ValueError:
        raise pytest.UsageError(f"trajaudit: --trajaudit-trials needs a positive integer, got {raw!r}") from None
    if k < 1:
        raise pytest.UsageError(f"trajaudit: --trajaudit-trials needs a positive integer, got {k}")
    return k


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
    config.addinivalue_line("markers", "PASSK: trajaudit group item pass^k across a task's trials")
    config.addinivalue_line("markers", "SB-2: trajaudit group item skill impact across conditions")
    if not _active(config):
        return
    from .adapter import nodeids

    values, ids = nodeids.split_ids([v for v in config.getoption("trajaudit") if v])  # the space form's node ids
    args = [*ids, *(config.option.file_or_dir or [])]
    walk = Walk()  # the session's one view of the trees: the directories classified here are not classified again
    given = values + [a.split("::", 1)[0] for a in config.option.file_or_dir or []]
    for a in args:  # a task group's node id alone: audit the directory that holds its trials
        top = nodeids.group_root(a, _abs(a.split("::", 1)[0]), walk.classify)
        if top is not None:
            given.append(str(top))
    if not given:
        given = [str(p) for p in config.getini("trajaudit_roots")]
    if not given:
        raise pytest.UsageError("trajaudit: --trajaudit needs a path (--trajaudit=runs/ or a positional path)")
    roots: list[Path] = []
    bare: list[Path] = []
    dirs = [_abs(g) for g in given if os.path.isdir(_abs(g)) and not os.path.islink(_abs(g))]
    for g in dict.fromkeys(given):
        p = _abs(g)
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
    from .trust import audited_tree, inside

    tops = [audited_tree(p, walk.classify) for p in roots + bare]
    if inside(config.inipath, tops):
        raise pytest.UsageError(f"trajaudit: pytest's config file {config.inipath} lies inside an audited tree; "
                                "run with -c <trusted config> (or use the `trajaudit` command)")
    if inside(config.rootpath, tops):
        raise pytest.UsageError(f"trajaudit: rootdir {config.rootpath} lies inside an audited tree; run from "
                                "outside it or pass --rootdir=<trusted dir> -c <trusted config>")
    principles, group_codes = _principles(config)
    state = State(roots, bare, _settings(config), principles, _abs(config.rootpath), group_codes=group_codes,
                  strict_pass_k=bool(_ini_or_opt(config, "trajaudit_strict_pass_k")), trials=_trials(config),
                  registry=config.stash[REGISTRY_KEY], walk=walk)
    state.keys = {p.code: p.key for p in state.principles}
    state.waivers = _waivers(config, tops)
    if state.waivers:
        from .waivers import utc_today

        state.today = utc_today()
    judge = state.settings.judge
    if judge is not None and judge.cache_dir is not None and inside(judge.cache_dir, tops):
        raise pytest.UsageError(f"trajaudit: the judge cache {judge.cache_dir} lies inside an audited tree; "
                                "pass --trajaudit-judge-cache DIR outside it")
    if judge is not None:  # pydantic's warnings about litellm's own types, raised in judge threads mid-item
        config.addinivalue_line("filterwarnings", "ignore:Items? .* on TypedDict class .*ReadOnly:UserWarning")
    state.store = _group_store(config)
    from .groups import needed

    state.store.codes = needed(state.declarations())
    config.stash[STATE_KEY] = state
    config.args = args or [str(p) for p in roots + bare]
    nodeids.widen_base(config, roots + bare)  # an audit path outside the rootdir: its node ids resolve
    if config.option.tbstyle == "auto":
        config.option.tbstyle = "line"  # pytest 9.2's long failure summary is O(failures × items)
    _lean(config)  # validates trajaudit_protocol now (a bad value is a usage error, not an internal one)
    shard = _shard(config)
    if shard is not None:
        config.stash[SHARD_KEY] = shard
    if not hasattr(config, "workerinput"):
        report_dir = _ini_or_opt(config, "trajaudit_report") or None
        # inside an audited tree, also by real path (a symlink into a job) or in the job of a path below it:
        # agent-planted files there would steer our writes
        if report_dir and inside(_abs(report_dir), tops):
            raise pytest.UsageError(f"trajaudit: --trajaudit-report {report_dir} lies inside an audited tree; "
                                    "write the reports outside it")
        rollup = RollupPlugin(config, state, Path(report_dir) if report_dir else None)
        if shard is not None:
            from .shard import fingerprint

            rollup.rollup.shard = {"index": shard.index, "count": shard.count, "settings": fingerprint(
                state.settings, [p.code for p in state.principles], list(state.group_codes), state.trials,
                state.strict_pass_k)}
        if state.waivers or _waivers_path(config) is not None:
            rollup.rollup.waivers = [w.as_json() for w in state.waivers]
        rollup.rollup.baseline = _baseline(config, tops, state.settings.max_file_bytes)
        config.stash[ROLLUP_KEY] = rollup
        config.pluginmanager.register(rollup, "trajaudit-rollup")
        if config.pluginmanager.hasplugin("html"):  # pytest-html: an Audit column and the evidence in each row
            from .adapter.html import HtmlHooks

            config.pluginmanager.register(HtmlHooks(), "trajaudit-html")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(), "trajaudit-xdist")
        if not hasattr(config, "workerinput"):
            config.pluginmanager.register(XdistBatchHooks(), "trajaudit-xdist-batch")  # -p no:… turns it off
    if hasattr(config, "workerinput"):
        _batch_worker_events(config)
        config.pluginmanager.register(QuietWorkerTerminal(), "trajaudit-quiet-worker-terminal")  # -p no:… keeps it
    pacer = GcPacer()
    config.add_cleanup(pacer.close)  # before pytest's own cleanups, so it runs after them (a LIFO stack)
    config.pluginmanager.register(pacer, "trajaudit-gc")


def pytest_collection_finish(session: pytest.Session) -> None:
    session.stash[COLLECTED_KEY] = True  # no conftest joins after this: PrincipleItem.ihook is fixed per job
    state = session.config.stash.get(STATE_KEY, None)
    if state is not None:  # which integrity items this collection will run, for the roll-up (completeness.py)
        from .completeness import manifest

        m = manifest(state.collected_jobs, session.items, [p.code for p in state.principles])
        if hasattr(session.config, "workerinput"):
            session.config.workeroutput["trajaudit_coverage"] = m  # type: ignore[attr-defined]
        elif ROLLUP_KEY in session.config.stash:
            session.config.stash[ROLLUP_KEY].rollup.coverage.add(m)


def _shard(config: pytest.Config) -> Any:
    spec = config.getoption("trajaudit_shard", None)
    if spec is None:
        return None
    from .shard import parse_shard

    try:
        return parse_shard(spec)
    except ValueError as exc:
        raise pytest.UsageError(f"trajaudit: {exc}") from None


def _group_store(config: pytest.Config) -> Any:
    """Where jobs publish the records their task group reads: memory, or under xdist a private directory the
    controller creates (mode 0700, removed at unconfigure) and hands to every worker."""
    from .groups import DirStore, MemoryStore

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
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Plain pytest with ``trajaudit_roots`` configured found nothing to run: say in one line that the audit
    needs ``--trajaudit`` and exit with pytest's usage-error code (4) instead of a silent 5 ("no tests
    collected"), which a CI step could read as "nothing to audit"."""
    config = session.config
    if _active(config) or exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED or hasattr(config, "workerinput"):
        return
    roots = [str(p) for p in config.getini("trajaudit_roots")]
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if not roots or (tr is not None and tr.stats.get("deselected")):  # -k/-m deselected the project's own tests
        return
    shown = ", ".join(printable(os.path.relpath(r, config.invocation_params.dir)) for r in roots)
    line = (f"trajaudit: trajaudit_roots is set ({shown}) but plain pytest does not audit; "
            "run `pytest --trajaudit` (or `trajaudit`)")
    if tr is not None:
        tr.write_line("ERROR: " + line, red=True, bold=True)
    else:
        import sys

        print("ERROR: " + line, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.USAGE_ERROR


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep each job's items contiguous (undoes pytest-randomly's shuffle) and tell each job which of its
    principles are still selected, so it computes only those."""
    if STATE_KEY not in config.stash:
        return
    order: dict[int, int] = {}
    groups: dict[int, list[pytest.Item]] = {}
    others: list[pytest.Item] = []
    task_groups: list[pytest.Item] = []
    for it in items:
        if isinstance(it, PrincipleItem):
            key = id(it.parent)
            order.setdefault(key, len(order))
            groups.setdefault(key, []).append(it)
        elif isinstance(it, GroupItem):
            task_groups.append(it)
        else:
            others.append(it)
    regrouped = [it for key in sorted(groups, key=order.__getitem__) for it in groups[key]]
    for group in groups.values():
        group[0].parent.selected = [it.principle.code for it in group]  # type: ignore[attr-defined]
    # group items last, in node-id order: they read what the jobs published (groups.py)
    # judge items (a judge principle with judges configured) last: their answers arrive while the rest runs. A job
    # keeps its other items together and only its small pending judge state until then (JobNode.release). Under
    # xdist, loadscope still sends a job as one unit, so there they end that unit.
    judged = [it for it in regrouped if getattr(it, "principle", None) is not None and it.principle.judge]
    judge_cfg = getattr(config.stash[STATE_KEY].settings, "judge", None)
    if judged and judge_cfg is not None:
        regrouped = [it for it in regrouped if not (it.principle.judge)]  # type: ignore[attr-defined]
        # in-process, a judge item about to wait loads the next jobs with judge items first (their requests go
        # out meanwhile: a judge-only selection such as -m P3 still overlaps its calls). Not on an xdist worker:
        # there the controller decides what runs next.
        if not hasattr(config, "workerinput"):
            order = list(dict.fromkeys(it.parent for it in judged))
            for n, job in enumerate(order):
                job.prefetch = order[n + 1:n + 1 + judge_cfg.concurrency]  # type: ignore[attr-defined]
    else:
        judged = []
    items[:] = regrouped + others + sorted(task_groups, key=lambda it: it.nodeid) + judged


def pytest_unconfigure(config: pytest.Config) -> None:
    """Cancel judge requests still queued in this process (an interrupted run must not wait for them)."""
    from .judges import shutdown

    shutdown()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if isinstance(item, PrincipleItem) and (nextitem is None or nextitem.parent is not item.parent):
        item.job.release()


# --- lean run protocol for audit items (PYTEST-NOTES.md §6: per-phase capture, logging and the
# PYTEST_CURRENT_TEST bookkeeping are most of pytest's per-item cost, and an audit item never prints) -----------

LEAN_KEY = pytest.StashKey[bool]()


def _lean(config: pytest.Config) -> bool:
    lean = config.stash.get(LEAN_KEY, None)
    if lean is None:
        mode = config.getoption("trajaudit_protocol", None) or str(config.getini("trajaudit_protocol") or "lean")
        if mode.strip() not in ("lean", "full"):
            raise pytest.UsageError(f"trajaudit: trajaudit_protocol must be 'lean' or 'full', got {mode!r}")
        lean = config.stash[LEAN_KEY] = mode.strip() == "lean"
    return lean


def _flat_keywords(item: pytest.Item) -> dict[str, Any]:
    """``item.keywords`` as one dict with NodeKeywords' iteration order and lookup (the nearest node wins), built
    in one walk up the chain. The parent's part is built once and kept on the parent (its keywords no longer
    change once items run: -k/-m selection is over)."""
    own = getattr(item.keywords, "_markers", None)
    parent = item.parent
    if own is None or parent is None:
        return _walk_keywords(item)
    above = parent.__dict__.get("_trajaudit_flat_keywords")
    if above is None:
        above = parent.__dict__["_trajaudit_flat_keywords"] = _walk_keywords(parent)
    flat = dict(own)
    for k, v in above.items():
        flat.setdefault(k, v)
    return flat


def _walk_keywords(start: Any) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    node: Any = start
    while node is not None:
        own = getattr(node.keywords, "_markers", None)
        if own is None:  # not pytest's NodeKeywords: take the mapping as it iterates
            return {k: start.keywords[k] for k in start.keywords}
        for k, v in own.items():
            flat.setdefault(k, v)
        node = node.parent
    return flat


_SKIP_MARKS = ("skip", "skipif", "xfail")


def _lean_setup(item: pytest.Item, session: pytest.Session) -> None:
    """What the setup hook chain does for an audit item: ``skip``/``skipif``/``xfail`` marks (a plugin loaded with
    ``-p`` may add them, e.g. to waive a principle) are evaluated as ``_pytest.skipping`` does, then the item is
    set up. An item
    without such a mark records "no xfail" at once (the makereport wrapper of ``_pytest.skipping`` looks it up
    for every phase)."""
    from _pytest.skipping import xfailed_key

    keywords = item.keywords
    if any(m in keywords for m in _SKIP_MARKS):
        from _pytest.skipping import evaluate_skip_marks, evaluate_xfail_marks

        skipped = evaluate_skip_marks(item)
        if skipped:
            raise pytest.skip.Exception(skipped.reason, _use_item_location=True)
        item.stash[xfailed_key] = xfailed = evaluate_xfail_marks(item)
        if xfailed and not item.config.option.runxfail and not xfailed.run:
            raise pytest.xfail.Exception("[NOTRUN] " + xfailed.reason, pytrace=False)
    else:
        item.stash[xfailed_key] = None
    session._setupstate.setup(item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Run an audit item the way ``_pytest.runner.runtestprotocol`` does, minus the ``pytest_runtest_setup/call/
    teardown`` hook chains (capture, logging, skipping, PYTEST_CURRENT_TEST): the item is set up through the
    session's SetupState, run, torn down, and every phase still goes through ``pytest_runtest_makereport`` and
    ``pytest_runtest_logreport`` (terminal, JUnit, CTRF, xdist's report transport, -x/--maxfail) and, on an
    error, ``pytest_exception_interact`` (--pdb). Hook wrappers around this hook (warnings capture, CTRF,
    faulthandler) still wrap it. ``--trajaudit-protocol=full`` uses pytest's own protocol instead."""
    if not isinstance(item, PrincipleItem | GroupItem) or not _lean(item.config):
        return None
    from _pytest.runner import CallInfo, check_interactive_exception, get_reraise_exceptions, show_test_item

    ihook = item.ihook
    config = item.config
    session = item.session
    reraise = get_reraise_exceptions(config)

    def phase(when: Any, func: Any) -> pytest.TestReport:
        call = CallInfo.from_call(func, when=when, reraise=reraise)
        rep = ihook.pytest_runtest_makereport(item=item, call=call)
        ihook.pytest_runtest_logreport(report=rep)
        if check_interactive_exception(call, rep):
            ihook.pytest_exception_interact(node=item, call=call, report=rep)
        return rep

    def teardown() -> None:
        nxt = None if session.shouldfail or session.shouldstop else nextitem
        try:
            session._setupstate.teardown_exact(nxt)
        finally:
            pytest_runtest_teardown(item, nxt)

    if type(item.keywords) is not dict:
        # every report copies the keywords (TestReport.from_item_and_call), and NodeKeywords walks the whole
        # parent chain on each iteration: flatten them once (selection by -k/-m is over by now)
        item.keywords = _flat_keywords(item)  # type: ignore[assignment]
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    if phase("setup", lambda: _lean_setup(item, session)).passed:
        setup_only = config.getoption("setuponly", False)
        if config.getoption("setupshow", False):
            show_test_item(item, add_space=not setup_only)
        if not setup_only:
            phase("call", item.runtest)
    phase("teardown", teardown)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    rep = yield
    na = getattr(item, "na_msg", None)
    if na is not None and call.when == "call" and rep.passed:
        # N/A: a skip without raising (no traceback to build): the same report pytest.skip(...,
        # _use_item_location=True) gives, i.e. (path, line, "Skipped: <reason>")
        path, line = item.reportinfo()[:2]
        rep.outcome = "skipped"
        rep.longrepr = (os.fspath(path), (line or 0) + 1, f"Skipped: {na}")
    if not _BATCHED and isinstance(item, PrincipleItem | GroupItem) and hasattr(item.config, "workerinput"):
        _audit_reports().add(rep)  # an xdist worker sending reports one by one: pack this one as JSON
    if isinstance(item, PrincipleItem | GroupItem) and item.record is not None:
        if call.when == "call" or (call.when == "setup" and not rep.passed):  # setup: unusable input
            rep.trajaudit = item.record
        if call.when == "call" and item.warn_msg is not None and rep.passed:
            rep.outcome = "skipped"
            rep.wasxfail = item.warn_msg
    if isinstance(item, PrincipleItem) and item.record is not None:
        if call.when == "setup" and rep.passed:
            _decide_waiver(item)
        elif call.when == "call" and rep.passed and (item.record.get("waiver") or {}).get("applied"):
            from .waivers import skip_reason

            path, line = item.reportinfo()[:2]
            rep.outcome = "skipped"
            rep.longrepr = (os.fspath(path), (line or 0) + 1, f"Skipped: {printable(skip_reason(item.record['waiver']))}")
    return rep


def _decide_waiver(item: PrincipleItem) -> None:
    """Once the item's finding is known (at setup, before it runs: a waived WARN then raises no warning, which
    ``-W error::…TrajauditWarning`` would make a failure): a FAIL or WARN that an unexpired waiver matches is
    marked applied in its record (the item is skipped with ``WAIVED: <reason> (until <date>)`` at makereport), one
    only an expired waiver matches is marked expired; the decision travels in the record to the roll-up
    (waivers.py)."""
    state = item.config.stash.get(STATE_KEY, None)
    rec = item.record
    if state is None or not state.waivers or rec is None or rec.get("status") not in ("FAIL", "WARN"):
        return
    from .redact import redact
    from .waivers import decide

    evidence = str(rec.get("evidence") or "")
    d = decide(state.waivers, item.job.job_id, rec.get("code", ""), rec.get("status"), evidence, state.today)
    if d is None and evidence:  # the substring as the reports show the evidence (secret-redacted)
        d = decide(state.waivers, item.job.job_id, rec.get("code", ""), rec.get("status"), redact(evidence),
                   state.today)
    if d is not None:
        rec["waiver"] = d


# Reports cross from xdist workers as report.__dict__ through execnet's pure-Python serializer, which walks every
# nested value (keywords, user properties, an item's record with its evidence, data and events) on the worker and
# again on the controller: ship an audit item's report as one JSON string instead (C json on both ends:
# serializing was an eighth of a worker's time and the controller's largest cost). The controller restores it
# before pytest rebuilds the report, with the tuples JSON turned into lists made tuples again. A report that is
# not JSON-able crosses as pytest's own dict.
_PACKED = "trajaudit-report-json"
_AUDIT_REPORTS: Any = None  # weakref.WeakSet of the reports made for audit items in this process


def _audit_reports() -> Any:
    global _AUDIT_REPORTS
    if _AUDIT_REPORTS is None:
        import weakref

        _AUDIT_REPORTS = weakref.WeakSet()
    return _AUDIT_REPORTS


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: Any):
    data = yield
    if isinstance(data, dict) and not _BATCHED and _AUDIT_REPORTS is not None and report in _AUDIT_REPORTS:
        import json

        try:
            return {"$report_type": data.get("$report_type"), _PACKED: json.dumps(data, separators=(",", ":"))}
        except (TypeError, ValueError):
            pass
    return data


_PLAIN_TYPES = frozenset({str, int, float, bool, type(None), tuple, list, dict})


def plain_report_json(report: Any) -> dict[str, Any] | None:
    """What pytest's ``pytest_report_to_serializable`` gives for a ``TestReport`` whose attributes all have plain
    types (an audit item's always do: its ``longrepr`` is None, a ``(path, line, reason)`` tuple or, for a FAIL,
    its text), without pytest's ``isinstance(value, os.PathLike)`` on every attribute: an ABC check, about eleven
    per report, 0.2 s of CPU per xdist worker on 500 × 1 MiB. None for any other report (a Python
    error's traceback repr, another report class): pytest serializes it."""
    if type(report) is not pytest.TestReport:
        return None
    data = report.__dict__.copy()
    if "_id" in data:  # pytest ≥ 9.1 keeps the node id as an object and sends its string, as "nodeid"
        data["nodeid"] = str(data.pop("_id"))
    if isinstance(data.get("longrepr"), str):  # adapter/terminal.LineRepr: its text, as pytest sends it
        data["longrepr"] = str(data["longrepr"])
    if not all(type(v) in _PLAIN_TYPES for v in data.values()):
        return None
    if "result" in data:
        data["result"] = None
    data["$report_type"] = "TestReport"
    return data


def _tuples(data: dict[str, Any]) -> dict[str, Any]:
    """Undo JSON's tuple → list on the fields pytest's reports hold as tuples (execnet keeps tuples)."""
    if isinstance(data.get("location"), list):
        data["location"] = tuple(data["location"])
    for key in ("sections", "user_properties"):
        if isinstance(data.get(key), list):
            data[key] = [tuple(x) if isinstance(x, list) else x for x in data[key]]
    if isinstance(data.get("longrepr"), list):  # a skip's (path, line, reason)
        data["longrepr"] = tuple(data["longrepr"])
    return data


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: Any):
    if isinstance(data, dict) and isinstance(data.get(_PACKED), str):
        import json

        packed = data.pop(_PACKED)
        data.update(_tuples(json.loads(packed)))
    return (yield)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    rec = getattr(report, "trajaudit", None)
    if rec and report.when == "call" and getattr(report, "wasxfail", None) is not None and rec.get("status") == "WARN":
        return "xfailed", "w", "WARN"
    if rec and report.when == "call" and report.skipped and (rec.get("waiver") or {}).get("applied"):
        return "skipped", "s", "WAIVED"
    return None


# --- garbage collection pacing ------------------------------------------------------------------------------

class GcPacer:
    """Keep the cyclic garbage collector's work linear in an audit's size. Everything collection builds, and
    every report the run keeps (pytest's terminal statistics hold each one until exit), is live until the session
    ends, yet each full collection walked it all again: a third of the CPU of an audit of 2,000 small jobs and a
    sixth for 500 jobs of 1 MiB (``benchmarks/measure.py``). So after collection, and then every
    :attr:`EVERY` reports, one collection frees what is garbage (cycles, with their ``__del__``: pytest's
    unraisable-exception check sees them as usual) and ``gc.freeze()`` moves the survivors out of later
    collections' sight. Reference counting still frees frozen objects. At the end (:meth:`close`, after pytest's
    own cleanups) they return to the collector lazily, at the next full collection of this process: an in-process
    caller (pytester, an IDE) goes on as before, while the command line exits without one last walk over
    everything."""

    EVERY = 6000

    def __init__(self) -> None:
        self.reports = 0
        self.frozen = False

    def _step(self) -> None:
        import gc

        gc.collect()
        gc.freeze()
        self.frozen = True

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._step()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports += 1
        if self.reports % self.EVERY == 0:
            self._step()

    def close(self) -> None:
        if not self.frozen:
            return
        import gc
        import sys

        finalizing, callbacks, unfreeze = sys.is_finalizing, gc.callbacks, gc.unfreeze  # module globals go at exit

        def thaw(phase: str, info: dict[str, int]) -> None:
            # at a full collection (gc.collect(), or one due); not the interpreter's last one at exit
            if phase == "start" and info.get("generation") == 2 and not finalizing():
                callbacks.remove(thaw)
                unfreeze()

        self.frozen = False
        gc.callbacks.append(thaw)


# --- controller-side roll-up --------------------------------------------------------------------------------

ROLLUP_KEY = pytest.StashKey["RollupPlugin"]()


class RollupPlugin:
    def __init__(self, config: pytest.Config, state: State, report_dir: Path | None) -> None:
        from .report.summary import Rollup

        self.config = config
        self.state = state
        self.report_dir = report_dir
        from .completeness import coverage_for

        declared = state.declarations()
        self.rollup = Rollup("literal" if state.settings.literal else "precise",
                             roles={c: (p.role, p.na_warns) for c, p in declared.items()})
        self.rollup.coverage = coverage_for(config, declared, [p.code for p in state.principles])
        if state.settings.judge is not None:
            self.rollup.judges.models = list(state.settings.judge.models)
        self.summary: dict[str, Any] | None = None
        self.items: dict[str, dict[str, Any]] = {}  # node id → status/evidence, for CTRF and CI annotations
        self.files: dict[str, str] = {}  # job id → its trajectory file, for CI annotations
        self.failed_findings: list[tuple[str, str, str]] = []  # (job, code, evidence) of each FAILED audit item
        self.nodes: dict[str, str] = {}  # job id → its items' node id prefix, naming the job in verdict lines
        from _pytest.junitxml import xml_key

        self.xml_key = xml_key  # pytest's LogXML is stashed by junitxml's pytest_configure, after this one

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = getattr(report, "trajaudit", None)
        if rec:
            self.rollup.add(rec)
            if "job" in rec and rec["job"] not in self.nodes:
                self.nodes[rec["job"]] = report.nodeid.rsplit("::", 1)[0]
            if report.failed:
                from .adapter.terminal import one_line

                one_line(report, self.config)
            if rec.get("reported_at"):
                return  # an unusable job's item skipped in favour of its one error: no annotation of its own
            job = rec.get("job") or rec.get("group")
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
                from .adapter.ci import junit_system_out

                junit_system_out(xml, report, rec)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.config.option.collectonly:
            return  # nothing was audited: no verdict, no report
        from .completeness import exit_status, stop_cause

        self.rollup.coverage.stop_cause = stop_cause(self.config, session.exitstatus)
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
        if self.report_dir is not None:
            self.summary = self.rollup.write(self.report_dir, self.state.keys)
        else:
            self.summary = self.rollup.summary()
        pv = self.summary["pr_verdict"]
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            from .report.summary import suite_properties

            for name, value in suite_properties(self.summary):
                xml.add_global_property(name, value)
        b = self.rollup.baseline
        if b is not None and b.new_only and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
            # --trajaudit-new-only: the items of findings the baseline already had still show FAILED, but when
            # they are all the run's failures, they do not fail it (the PR verdict decides, as it counted them)
            from .baseline import fingerprint

            if len(self.failed_findings) == session.testsfailed and all(
                    fingerprint(*f) in b.prints for f in self.failed_findings):
                session.exitstatus = pytest.ExitCode.OK
        session.exitstatus = exit_status(session.exitstatus, pv["verdict"],
                                         allow=bool(_ini_or_opt(self.config, "trajaudit_allow_incomplete")))

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
        for line in self.rollup.terminal_lines(self.summary, self.nodes):  # the summary built at session finish
            terminalreporter.write_line(line)
        if self.report_dir is not None:
            d = self.report_dir
            terminalreporter.write_line(f"reports: {d}/summary.json, {d}/report.md and {d}/jobs/")
        if self.summary and self.summary["pr_verdict"]["verdict"] == "INCOMPLETE":
            terminalreporter.write_line("a partial run is never an approval: audit every integrity principle of "
                                        "every job for a verdict (docs/verdicts.md)")
        if os.environ.get("GITHUB_ACTIONS") == "true":
            from .adapter.ci import github_annotations

            for line in github_annotations(self.items, self.files, str(self.config.invocation_params.dir)):
                terminalreporter.write_line(line)
        if not (self.config.pluginmanager.hasplugin("ctrf") and self.config.getoption("ctrf", None)):
            self.summary = None  # only the CTRF enrichment reads it later: free it before pytest's own summary

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        _enrich_ctrf(config, self.rollup, self.items, self.summary)


def _enrich_ctrf(config: pytest.Config, rollup: Any, items: dict[str, dict[str, Any]],
                 summary: dict[str, Any] | None = None) -> None:
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
        summary = summary if summary is not None else rollup.summary()
        pv = summary["pr_verdict"]
        extra["trajaudit"] = {"verdicts": {j["job"]: j["verdict"] for j in summary["jobs"]},
                              "pr_verdict": pv["verdict"], "pr_reasons": pv["reasons"][:10],
                              **({"incomplete": pv["incomplete"]["line"]} if pv.get("incomplete") else {})}
        for t in results.get("tests", []):
            info = items.get(t.get("name")) if isinstance(t, dict) else None
            if info:
                t.setdefault("extra", {})["trajaudit"] = {**info, "evidence": redact(info["evidence"])[:2000]}
        from .adapter.ci import ctrf_statuses

        ctrf_statuses(doc, items)
        from .report.audit import write_text_atomic

        # atomically, keeping the file's mode (pytest-json-ctrf created it; readers never see half a file)
        write_text_atomic(Path(path), json.dumps(doc, indent=2), stat.S_IMODE(os.stat(path).st_mode))
    except (OSError, ValueError):
        pass


class XdistHooks:
    """Registered only when pytest-xdist is present. A job's items share one node id prefix
    (``…/result.json::``), so loadscope keeps a job on one worker; make it the default under ``-n``."""

    def pytest_configure_node(self, node: Any) -> None:
        state = node.config.stash.get(STATE_KEY, None)
        path = getattr(state.store, "path", None) if state is not None else None
        if path is not None:
            node.workerinput["trajaudit_store"] = str(path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> dict[str, Any] | None:
        return plain_report_json(report)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """On the controller: a worker's collection manifest (completeness.py) joins the roll-up."""
        rollup = node.config.stash.get(ROLLUP_KEY, None)
        if rollup is not None:
            rollup.rollup.coverage.add(getattr(node, "workeroutput", {}).get("trajaudit_coverage"))

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any):
        explicit = any(a == "--dist" or a.startswith("--dist=") for a in config.invocation_params.args)
        if config.getoption("dist") == "load" and not explicit:
            return audit_scope_scheduling()(config, log)
        return None


class XdistBatchHooks:
    """On the controller: offer each worker to batch its item events by job, and unpack the batches
    (xdist_batch.py). Registered as ``trajaudit-xdist-batch``: ``-p no:trajaudit-xdist-batch`` sends every event
    alone, as xdist does."""

    def pytest_configure_node(self, node: Any) -> None:
        from . import xdist_batch

        node.workerinput[xdist_batch.OFFER] = xdist_batch.offer()
        dsession = node.config.pluginmanager.get_plugin("dsession")
        handler = "worker_" + xdist_batch.INPROC
        if dsession is not None and not hasattr(dsession, handler):
            dispatch = xdist_batch.dispatcher(dsession)
            if dispatch is not None:
                setattr(dsession, handler, dispatch)
        gather = dsession is not None and hasattr(dsession, handler) and hasattr(node, "putevent")
        node.process_from_remote = xdist_batch.controller_unbatch(
            node.process_from_remote, node if gather else None,
            node.config.hook.pytest_report_from_serializable if gather and _xdist_own_queueing(node) else None)


def _xdist_own_queueing(node: Any) -> bool:
    """``node`` queues events exactly as the ``xdist_batch`` fast path does: xdist's own ``WorkerController``
    (neither its event handling nor its queueing overridden), with its debug log (``--debug``) off."""
    try:
        from xdist.workermanage import WorkerController
    except ImportError:  # pragma: no cover - this hook is xdist's
        return False
    cls = type(node)
    return (issubclass(cls, WorkerController)
            and cls.process_from_remote is WorkerController.process_from_remote
            and cls.notify_inproc is WorkerController.notify_inproc
            and not getattr(getattr(node, "log", None), "enabled", True))  # xdist logs when it is truthy


class QuietWorkerTerminal:
    """On an xdist worker whose terminal output goes to ``/dev/null`` (a local or ssh worker: execnet keeps the
    real standard output for its pipe to the controller and points fd 1 at ``/dev/null``): the terminal reporter
    stops rendering each item (progress characters, stats, warning texts) that nobody sees; the controller renders
    every item from the reports it receives, so that rendering is CPU spent for nothing.
    The reporter stays registered under its name with its other hooks, so
    ``get_terminal_writer``, ``--setup-show`` and live logs still find it. Registered as
    ``trajaudit-quiet-worker-terminal``: ``-p no:trajaudit-quiet-worker-terminal`` leaves the reporter as it is."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        pm = session.config.pluginmanager
        tr = pm.get_plugin("terminalreporter")
        quiet = _quiet_reporter_class()
        if tr is None or type(tr) is not quiet.__mro__[1] or not _writes_to_devnull(tr):
            return  # another plugin's reporter, or one whose output someone may see: leave it alone
        pm.unregister(tr)
        tr.__class__ = quiet
        pm.register(tr, "terminalreporter")


def _writes_to_devnull(tr: Any) -> bool:
    try:
        st = os.fstat(tr._tw._file.fileno())
        null = os.stat(os.devnull)
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev


@functools.cache
def _quiet_reporter_class() -> type:
    from _pytest.terminal import TerminalReporter

    # pluggy registers only the routines among a plugin's ``pytest_*`` attributes: None removes a hook
    per_item = ("pytest_runtest_logstart", "pytest_runtest_logreport", "pytest_runtest_logfinish",
                "pytest_warning_recorded")
    return type("QuietWorkerTerminalReporter", (TerminalReporter,), dict.fromkeys(per_item))


def _batch_worker_events(config: pytest.Config) -> None:
    """On an xdist worker offered batching (xdist_batch.py): send a job's item events as one message."""
    from . import xdist_batch

    if not xdist_batch.accepted(config.workerinput):  # type: ignore[attr-defined]
        return
    interactor = next((p for p in config.pluginmanager.get_plugins() if type(p).__name__ == "WorkerInteractor"
                       and all(hasattr(p, a) for a in ("sendevent", "torun", "nextitem_index"))), None)
    if interactor is None or not hasattr(interactor.torun, "lock"):
        return

    def same_job(done: Any, nxt: Any) -> bool:
        items = interactor.session.items
        if not (isinstance(done, int) and isinstance(nxt, int) and 0 <= done < len(items) and 0 <= nxt < len(items)):
            return False
        return isinstance(items[done], PrincipleItem) and items[nxt].parent is items[done].parent

    global _BATCHED
    _BATCHED = True
    xdist_batch.WorkerBatcher(interactor, same_job)


_BATCHED = False  # this xdist worker batches its events (marshal keeps a report's dict as it is: no JSON packing)


@functools.cache
def audit_scope_scheduling() -> type:
    """xdist's ``LoadScopeScheduling`` (a job's items share one scope, so one worker reads it once) with two changes
    for audits of many jobs:

    - linear bookkeeping: xdist 3.8 looks every item of an assigned scope up with ``list.index`` over the whole
      collection, and recounts every item ever assigned to a worker after each report (``_pending_of`` in
      ``_reschedule`` and ``tests_finished``): O(items²) on the controller, minutes at 100,000 items. Here a worker's
      collection is indexed once and its open items are counted as they are assigned and completed;
    - one job queued ahead: a worker is given its next scope when the open items fall to one scope's worth (xdist:
      to 2 items), so it never waits for the controller between two jobs (a worker needs the next item before it
      can finish the current one). At the end the workers differ by at most one job.

    Falls back to plain ``LoadScopeScheduling`` when xdist's internals differ from what this relies on."""
    from xdist.scheduler import LoadScopeScheduling

    needed = ("_assign_work_unit", "_pending_of", "_reschedule", "mark_test_complete", "remove_node", "_split_scope")
    if not all(hasattr(LoadScopeScheduling, a) for a in needed):
        return LoadScopeScheduling

    class AuditScopeScheduling(LoadScopeScheduling):  # type: ignore[misc, valid-type]
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self._index: dict[Any, dict[str, int]] = {}  # node → {node id: index in its collection}
            self._open: dict[Any, int] = {}  # node → items assigned and not completed
            self._unit: dict[Any, int] = {}  # node → size of the last scope assigned to it

        def _assign_work_unit(self, node: Any) -> None:
            assert self.workqueue
            scope, work_unit = self.workqueue.popitem(last=False)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            index = self._index.get(node)
            if index is None:
                index = self._index[node] = {}
                for i, nodeid in enumerate(self.registered_collections[node]):
                    index.setdefault(nodeid, i)  # the first occurrence, like list.index
            todo = [index[nodeid] for nodeid, completed in work_unit.items() if not completed]
            self._open[node] = self._open.get(node, 0) + len(todo)
            self._unit[node] = len(todo)
            if todo:
                node.send_runtest_some(todo)
            if not self.workqueue:  # nothing left to hand out: a worker needs its next item, or the end, to finish
                node.shutdown()    # the current one (pytest-xdist #1327: a replacement given one item waited)

        def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
            nodeid = self.registered_collections[node][item_index]
            unit = self.assigned_work[node][self._split_scope(nodeid)]
            if not unit[nodeid]:
                unit[nodeid] = True
                self._open[node] = self._open.get(node, 0) - 1
            self._reschedule(node)

        def _pending_of(self, workload: Any) -> int:
            for node, assigned in self.assigned_work.items():
                if assigned is workload:
                    return self._open.get(node, 0)
            return super()._pending_of(workload)  # a workload already removed (remove_node)

        def _reschedule(self, node: Any) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._open.get(node, 0) > max(2, self._unit.get(node, 0)):
                return
            self._assign_work_unit(node)

        def remove_node(self, node: Any) -> Any:
            """xdist 3.8's puts a crashed worker's whole workload back, completed items and the item it crashed
            on included, so a replacement worker could be handed a unit with nothing left to run, or the crash
            again (pytest-xdist #1323, #1371). Here only the items still to run go back, without the crash
            item (xdist has already reported it failed), at the front of the queue."""
            self._index.pop(node, None)
            self._open.pop(node, None)
            self._unit.pop(node, None)
            workload = self.assigned_work.pop(node, {})
            todo = [(scope, nodeid) for scope, unit in workload.items() for nodeid, done in unit.items() if not done]
            if not todo:
                return None
            crashitem = todo[0][1]
            for scope, nodeid in reversed(todo[1:]):
                if scope not in self.workqueue:
                    self.workqueue[scope] = {}
                    self.workqueue.move_to_end(scope, last=False)
                self.workqueue[scope][nodeid] = False
            for other in list(self.assigned_work):
                self._reschedule(other)
            return crashitem

    return AuditScopeScheduling


__all__ = ["TrajauditWarning", "JobNode"]
