"""The dict-shaped JSON records that cross modules, as ``TypedDict``s.

They type what the pipeline already hands around as plain dicts (a job's meta from the engine to the roll-up
and reports, a task group's compact per-job record, the roll-up's per-job state, ``summary.json``) without
changing a byte of it: a ``TypedDict`` is a ``dict`` at run time, it crosses xdist as JSON and is written with
the same keys in the same order. Keys that only some records carry are ``NotRequired``; the JSON Schemas of
the written files are in ``report/schema.py``.
"""

# no ``from __future__ import annotations``: TypedDict reads NotRequired[...] from evaluated annotations only
# (``__required_keys__``, checked by tests/test_records.py)
from typing import Any, NotRequired, TypedDict


class TaskMeta(TypedDict):
    """The task directory's card (``--trajaudit-tasks``): shown in report.md's task section."""

    name: str
    category: str
    difficulty: str
    tags: list[str]
    description: str


class JobMeta(TypedDict, total=False):
    """A job's metadata (``principles/engine.py``'s ``job_meta``): what the roll-up, the audit JSON, report.md
    and report.html read of the job besides its findings. A job whose trajectory is unusable may carry only
    ``layout`` and ``trial``; ``agent_time_sec`` and the token counts appear only when result.json has them;
    ``timeline`` only with ``cfg.timeline``."""

    config: str
    model: str | None
    reward: float | None
    task: str
    trial: str
    agent: str
    layout: str
    condition: str | None
    oracle: bool
    trajectory_file: str | None
    trajectory_format: str | None
    n_events: int
    trajectory_candidates: list[str]
    exception: str | None
    compared: list[str]
    disagreements: list[dict[str, Any]]
    not_audited: list[dict[str, str]]
    nested_runs: list[str]
    oracle_tool_calls: int
    reward_sources: dict[str, Any]
    verifier_tests: dict[str, Any] | None
    failed_tests: list[str]
    passed_tests: list[str]
    agent_time_sec: float
    n_input_tokens: int
    n_output_tokens: int
    cost_usd: float
    task_dir: str | None
    task_lookup: str | None
    task_meta: TaskMeta
    timeline: dict[str, Any]


class SkillQuote(TypedDict):
    """A with-skills trial's quote of its skill (SB-1's finding data), read by SB-2."""

    text: str
    event: Any  # the event index the quote came from, as SB-1 recorded it (an int, or None)
    source: str


class SkillQuoteFields(TypedDict):
    """A trial's SB-2 quote fields (``aggregate/verdicts.py``'s ``skill_quote_fields``)."""

    skill_quote: SkillQuote | None
    skill_quote_missing: str | None


class GroupRecord(TypedDict):
    """A task group's compact record of one member job (``aggregate/groups.py``'s ``compact``): published by the
    job's audit into memory or, under xdist, as a JSON line of its worker's log; read by the group items (pass^k, SB-2)."""

    job: str
    task: str
    trial: str
    agent: str
    model: str
    condition: str | None
    reward: float | None
    oracle: bool
    error: str | None
    verdict: str  # the integrity verdict (job_verdict over the integrity principles only)
    delivered: bool | None  # a trace-grader item's delivery decision, None without one
    integrity: dict[str, str]  # integrity code → status
    computed: list[str]  # the codes the record was computed from (groups.needed)
    sb1: str | None  # VERIFIED | PARTIAL | NOT_INVOKED | None
    skill_quote: SkillQuote | None
    skill_quote_missing: str | None


class RollupJob(TypedDict):
    """The roll-up's state of one job (``report/summary.py``'s ``Rollup.jobs``), rebuilt by ``trajaudit merge``
    from a shard's ``jobs[].detail``."""

    meta: JobMeta
    records: dict[str, dict[str, Any]]  # code → the item's record as it arrived (JSON builtins)
    error: str | None
    loads: int
    missing: NotRequired[dict[str, str]]  # integrity code → why it produced no finding (completeness.py)
    errored: NotRequired[dict[str, str]]  # code → evidence of an item that errored
    advisor_error: NotRequired[str]  # an ADV item met unusable input


class ReviewFields(TypedDict):
    """A job entry's review fields (``report/review.py``'s ``job_fields``)."""

    fingerprints: dict[str, str]  # code → print of each FAIL / WARN (what a later run's baseline reads)
    waived: list[str]  # the codes whose finding a waiver accepted


class SummaryJob(TypedDict):
    """One entry of ``summary.json``'s ``jobs`` (``report/summary.py``'s ``Rollup.summary``), in its key order;
    ``trace_grader`` is added by ``Rollup.trace_sections``."""

    job: str
    config: str
    task: str
    trial: str
    verdict: str
    reward: float | None
    reasons: list[str]
    statuses: dict[str, str]  # code → the item's status
    loads: int
    agent: str
    model: str
    condition: str | None
    oracle: bool
    advisor_verdict: str | None
    fingerprints: dict[str, str]
    waived: list[str]
    # the roll-up's state of the job without ``loads`` (a RollupJob's other keys); Rollup.summary(deferred_detail=True)
    # holds a report.audit.Deferred instead, made when summary.json is written (the file holds the dict)
    detail: Any
    trace_grader: NotRequired[dict[str, Any] | None]  # the job's trace-grader run block, None without TG items


class ItemOutcome(TypedDict):
    """One audit item's outcome as the pytest side keeps it by node id (``adapter/rollup.py``), for the CTRF
    enrichment and the GitHub annotations (``adapter/ci.py``)."""

    job: str | None  # the job id, or the group id of a group item
    code: str
    status: str | None  # the finding's status, WAIVED when a waiver accepted it
    evidence: str


class PrVerdict(TypedDict):
    """``summary.json``'s ``pr_verdict``."""

    verdict: str
    reasons: list[str]
    oracle_rewards: dict[str, float | None]
    tests_too_tight: list[str]
    incomplete: NotRequired[dict[str, Any]]  # {line, jobs, codes, causes} of a partial run


class Summary(TypedDict):
    """``summary.json`` (``report/summary.py``'s ``Rollup.summary``), read by report.md, report.html, the merge,
    the baseline, the waivers and the CI outputs. The review sections (``report/review.py``) are added only when
    waivers or a baseline are given; ``shard`` only in a shard's summary."""

    schema_version: str
    mode: str
    shard: NotRequired[dict[str, Any]]
    n_jobs: int
    verdicts: dict[str, int]
    principles: dict[str, dict[str, int]]
    pr_verdict: PrVerdict
    configs: dict[str, dict[str, Any]]  # config → its roll-up (aggregate/verdicts.py's config_rollup)
    trace_verdicts: dict[str, int]
    pass_k: list[dict[str, Any]]
    trace_grader: dict[str, Any] | None
    skill_impact: dict[str, dict[str, Any]]
    skills_flags: list[dict[str, Any]]  # the non-blocking SkillsBench flags (aggregate/verdicts.py)
    groups: list[dict[str, Any]]
    judges: dict[str, Any]
    advisor_verdicts: dict[str, int]
    not_audited: list[dict[str, str]]
    waivers: NotRequired[dict[str, Any]]
    baseline: NotRequired[dict[str, Any]]
    jobs: list[SummaryJob]  # one entry per job, sorted by job id
