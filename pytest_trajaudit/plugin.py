"""The pytest plugin of pytest-trajaudit (the ``pytest11`` entry point): it declares the options and wires
pytest's hooks to the adapter package (``adapter/``), where the logic lives.

Without ``--trajaudit`` the plugin does nothing (except keep plain ``pytest`` out of ``trajaudit_roots``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import TrajauditWarning, hookspecs
from .adapter import collect, configure, outcomes, protocol, rollup, xdist
from .adapter.ctrf import FastCtrf
from .adapter.gcpacer import GcPacer
from .adapter.junit import StreamingJunit
from .adapter.nodes import JobNode
from .adapter.terminal import PhaseReportTrim

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


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Force --noconftest before any conftest.py can be imported (the seed's PYTEST-NOTES.md §2.3)."""
    ns = early_config.known_args_namespace
    if getattr(ns, "trajaudit", None) is not None:
        ns.noconftest = True


# --- configuration ------------------------------------------------------------------------------------------

def pytest_configure(config: pytest.Config) -> None:
    configure.add_markers(config)
    if not configure.active(config):
        return
    state, tops = configure.setup(config)
    if not hasattr(config, "workerinput"):
        # the roll-up lives on the controller only, one object under a StashKey (as pytest's junitxml does)
        plugin = rollup.create(config, state, tops)
        config.stash[rollup.ROLLUP_KEY] = plugin
        config.pluginmanager.register(plugin, "trajaudit-rollup")
        if config.pluginmanager.hasplugin("html"):  # pytest-html: an Audit column and the evidence in each row
            from .adapter.html import HtmlHooks

            config.pluginmanager.register(HtmlHooks(), "trajaudit-html")
        config.pluginmanager.register(PhaseReportTrim(config), "trajaudit-phase-trim")  # None under -p no:…
        config.pluginmanager.register(StreamingJunit(config), "trajaudit-junit-stream")
        if rollup.ctrf_path(config) is not None:
            config.pluginmanager.register(FastCtrf(config), "trajaudit-ctrf-fast")
    xdist.register(config)
    pacer = GcPacer()
    config.add_cleanup(pacer.close)  # before pytest's own cleanups, so it runs after them (a LIFO stack)
    config.pluginmanager.register(pacer, "trajaudit-gc")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Cancel judge requests still queued in this process (an interrupted run must not wait for them); the
    roll-up (its own unconfigure has run: it was registered later) leaves the plugin manager."""
    from .judges import shutdown

    shutdown()
    plugin = config.stash.get(rollup.ROLLUP_KEY, None)
    if plugin is not None:
        del config.stash[rollup.ROLLUP_KEY]
        config.pluginmanager.unregister(plugin)


# --- collection ---------------------------------------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector):
    return collect.directory(path, parent)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Plain pytest (plugin inactive) never walks into the configured audit roots."""
    return collect.ignore(collection_path, config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep each job's items contiguous (undoes pytest-randomly's shuffle); judge and group items go last."""
    collect.order(config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    collect.finish(session)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Plain pytest with ``trajaudit_roots`` and nothing collected: a usage error (4) naming ``--trajaudit``."""
    collect.plain_pytest_notice(session, exitstatus)


# --- running and reporting audit items ----------------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Audit items run through the lean protocol (adapter/protocol.py) unless ``--trajaudit-protocol=full``."""
    return protocol.run(item, nextitem)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    protocol.release_job(item, nextitem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    rep = yield
    outcomes.adjust(item, call, rep)
    return rep


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    return outcomes.teststatus(report)


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: Any):
    data = yield
    return xdist.pack(report, data)


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: Any):
    xdist.unpack(data)
    return (yield)


__all__ = ["TrajauditWarning", "JobNode"]
