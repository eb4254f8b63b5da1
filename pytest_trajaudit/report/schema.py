"""Pydantic models of what the plugin writes; ``schemas/*.schema.json`` are generated from them
(``python -m pytest_trajaudit.report.schema`` rewrites them; a test checks they are current)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

Status = Literal["PASS", "WARN", "FAIL", "N/A"]
Verdict = Literal["CLEAN", "WARN", "INVALID", "INCOMPLETE", "ERROR", "ORACLE"]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class StatusEvidence(_Open):
    status: Status | Literal["none", "present"]
    evidence: str = ""


class AgenticFloor(_Open):
    n_tool_calls: int
    verdict: Literal["above", "below", "borderline"]
    status: Status | None = None
    evidence: str = ""


class ToolBreakdown(_Open):
    total: int
    by_kind: dict[str, int]
    by_title: dict[str, int]


class Struggle(_Open):
    retries: int
    rewrites: int
    reversals: int
    exploration_loop: int
    # the worked example (reference/audit-example.json) spells the passing verdict wrong_answer_or_confident_solve
    verdict: Literal["wrong_answer", "struggle", "wrong_answer_or_confident_solve"]


class RowEntity(_Open):
    applies: bool
    evidence: str = ""


class VerifierAlignment(_Open):
    """``aligned`` is absent when nothing decided it (the worked example leaves it out and says
    ``aligned_by_prose``); a boolean otherwise, as in the seed."""

    reconstructed: bool
    aligned: bool | SkipJsonSchema[None] = None
    aligned_by_prose: bool | SkipJsonSchema[None] = None
    diff_summary: str = ""
    flipped_signal: bool = False


class TestsTooTight(_Open):
    checked: bool
    perturbations_passing: list[str]


class JudgeConcurrence(_Open):
    checked: bool
    agreement: bool | float | None


class PrincipleResult(BaseModel):
    status: Status
    evidence: str
    tier: str
    family: str
    events: list[int] = Field(default_factory=list)
    waiver: Waiver | None = Field(default=None, description="--trajaudit-waivers: the entry that matched this "
                                  "FAIL/WARN (applied: it did not count in the verdict; false: it had expired)")


class Waiver(BaseModel):
    entry: int = Field(ge=1, description="position in the waivers file")
    reason: str
    expires: str = Field(description="YYYY-MM-DD (UTC)")
    applied: bool


TraceVerdict = Literal["clean-pass", "pass-with-warnings", "corrupt-success", "fail"]
Severity = Literal["high", "medium", "low"]


class TraceFlag(_Open):
    """One trace-grader flag, the original's shape (plus ``event``: the event index in the trajectory)."""

    check: Literal["forbidden_tool", "out_of_order", "retry_storm", "excessive_steps", "edited_without_read"]
    severity: Severity
    step: int | None
    tool: str | None
    detail: str


class RuleCheck(_Open):
    """A TG-1..TG-5 result (audit keys forbidden_tool, out_of_order, retry_storm, excessive_steps,
    edited_without_read)."""

    status: Status
    evidence: str = ""
    step_count: int | None = None
    delivered: bool | None = None
    severity: Severity | None = None
    n_flags: int = 0
    flags: list[TraceFlag] = Field(default_factory=list)


class TraceGrader(BaseModel):
    """The original trace-grader's per-run report, from the TG items' flags."""

    task: str
    run_id: str
    delivered: bool | None
    delivered_source: str
    step_count: int
    flags: list[TraceFlag]
    n_flags: int
    corrupt_success: bool
    verdict: TraceVerdict
    mode: Literal["precise", "literal"]
    checks: dict[str, Status]


class SkillInvocation(_Open):
    """SB-1 (audit-skillsbench.md); ``N/A`` (outside the seed's enum) for runs without skills or of unknown
    condition, with the reason as evidence."""

    status: Literal["VERIFIED", "PARTIAL", "NOT_INVOKED", "N/A"]
    skills_read: list[str] = Field(default_factory=list)
    sub_files_read: list[str] = Field(default_factory=list)
    discovery_method: Literal["Skill tool", "Read SKILL.md", "Glob fallback", "none"] = "none"
    evidence: str = ""


class SkillMisuse(_Open):
    """SB-3a (partial_follow_through) and SB-3c (top_level_only), booleans as in the seed: ``false`` when a check
    was not judged, with its N/A in ``statuses`` and the reason in ``evidence``."""

    partial_follow_through: bool
    top_level_only: bool
    evidence: str = ""
    statuses: dict[Literal["partial_follow_through", "top_level_only"], Status] = Field(
        default_factory=dict, description="each check's item status (N/A: not judged, the boolean is false)")


AdvisorVerdict = Literal["pass", "pass_mechanical_only", "inconclusive", "fail"]


class AdvisorMention(BaseModel):
    pattern: Literal["advisor", "reviewer", "hidden tests", "reference solution", "privileged artifact"]
    match: str
    quote: str = Field(description="the match with up to 40 characters each side (at most 160)")


class AdvisorMechanical(BaseModel):
    advisor_mentions: list[AdvisorMention] = Field(description="ADV-3 pattern hits (the first 50 distinct)")
    n_advisor_mentions: int = Field(ge=0)
    mentions_quoting_public_instruction: int = Field(ge=0, description="matches that quote the task's public "
                                                     "instruction (not counted)")
    verbatim_privileged_lines: list[str] = Field(description="ADV-4: the first 60 characters of each matched "
                                                 "privileged line")
    verbatim_privileged_sources: list[str] = Field(description="<file>:<line> of each matched line, same order")
    n_verbatim_privileged_lines: int = Field(ge=0)
    hit: bool = Field(description="any mechanical check hit")


class AdvisorJudge(BaseModel):
    """One judge's outcome. ``completed``: a valid answer; ``failed``: an error or an answer outside the schema;
    ``not_configured``: judges were wanted but no endpoint/model was set; ``not_run``: no judge, or its items were
    not selected."""

    status: Literal["completed", "failed", "not_configured", "not_run"]
    model: str | None
    problem: bool
    problems: list[str]
    answer: dict[str, Any] | None
    error: str | None
    cached: bool
    tokens_in: int
    tokens_out: int
    cost: float


class AdvisorCheck(BaseModel):
    status: Status
    evidence: str


class AdvisorAudit(_Open):
    """The advisor-leakage audit (advisor-audit.md): ``trajaudit audit``'s output and the ``advisor`` key of a
    job's audit JSON. Quotes privileged material (60 characters per matched line): keep it private."""

    schema_version: Literal["trajaudit-advisor-1"]
    verdict: AdvisorVerdict
    verdict_reasons: list[str]
    task_dir: str | None
    privileged_roots: list[str]
    layout_source: Literal["flag", "manifest", "default"]
    excluded_directory_names: list[str]
    privileged_files: list[str] = Field(description="files whose text was loaded")
    privileged_bytes: int
    privileged_lines: int = Field(description="privileged lines of at least 40 characters matched against")
    public_lines_excluded: int = Field(description="privileged lines dropped because the public task holds them")
    privileged_notes: list[str] = Field(description="what was not loaded and why (symlinks, special files, limits)")
    material_loaded: bool
    issues: list[str]
    trajectory_format: str | None
    trajectory_chars: int
    reward: float | None
    reward_source: str | None
    no_judge: bool
    judge_input_truncated: bool
    privileged_input_truncated: bool
    mechanical: AdvisorMechanical
    judges: dict[Literal["coherence", "leakage"], AdvisorJudge]
    checks: dict[Literal["ADV-1", "ADV-2", "ADV-3", "ADV-4", "ADV-5"], AdvisorCheck]


class AdvisorError(BaseModel):
    """An ADV item met unusable input (an unreadable manifest or privileged file): no verdict at all."""

    verdict: None
    error: str


class AdvisorCommandAudit(AdvisorAudit):
    """``trajaudit audit``'s JSON: the advisor audit plus the files it read."""

    attempt_dir: str
    trajectory: str
    trajectory_sha256: str = Field(description="SHA-256 of the audited trajectory's bytes (trajaudit summarize "
                                   "checks that the file is unchanged)")


class Audit(_Open):
    """audit-<config>.json: the seed's core keys first, then extensions and trajaudit's own fields. The plugin
    always writes its own fields (``job`` … ``principles``); they are optional here so that the seed's own records
    (reference/audit-example.json) validate too."""

    config: str
    model: str | None
    reward: float | None
    verdict: Verdict
    anti_cheat_read: StatusEvidence | None
    anti_cheat_write: StatusEvidence | None
    # P3: the spec's buckets, and "unjudged" for a failed run no judge bucketed
    failure_bucket: Literal["passed", "hard", "unfair_instruction", "unfair_test", "unfair_env",
                            "capability_gap", "ignored_instruction", "unjudged"]
    agentic_floor: AgenticFloor | None
    tool_breakdown: ToolBreakdown | None
    verbatim_final: str | None
    failure_evidence: StatusEvidence | None = None
    format_vs_reasoning: Literal["n/a", "format_loss", "reasoning_loss"] | None = None
    row_vs_entity_gotcha: RowEntity | None = None
    verifier_alignment: VerifierAlignment | None = None
    tests_too_tight: TestsTooTight | None = None
    llm_judge_concurrence: JudgeConcurrence | None = None
    memorization_signal: StatusEvidence | None = None
    verifier_gaming: StatusEvidence | None = None
    struggle: Struggle | None = None
    filesystem_pollution: StatusEvidence | None = None
    self_doubt: StatusEvidence | None = None
    skill_invocation: SkillInvocation | None = None
    skill_misuse: SkillMisuse | None = None
    forbidden_tool: RuleCheck | None = None
    out_of_order: RuleCheck | None = None
    retry_storm: RuleCheck | None = None
    excessive_steps: RuleCheck | None = None
    edited_without_read: RuleCheck | None = None
    trace_grader: TraceGrader | None = None
    advisor: AdvisorAudit | AdvisorError | None = None
    job: str = ""
    task: str = ""
    trial: str = ""
    layout: str = ""
    condition: str | None = None
    trajectory_file: str | None = None
    trajectory_format: str | None = None
    verdict_reasons: list[str] = Field(default_factory=list)
    principles: dict[str, PrincipleResult] = Field(default_factory=dict)
    error: str | None = None


class TraceJobSummary(BaseModel):
    verdict: TraceVerdict
    delivered: bool | None
    step_count: int
    n_flags: int
    corrupt_success: bool


class PassK(BaseModel):
    """pass^k of one task group (trials of one task under one agent, model and condition)."""

    task: str
    agent: str
    model: str
    condition: str | None
    k: int
    n_trials: int = Field(description="trials with a known outcome (counted)")
    n_success: int = Field(description="delivered trials, integrity-adjusted (an INVALID job never delivers)")
    n_fail: int
    n_invalid: int
    n_error: int
    n_unknown: int = Field(description="trials without a reward or delivery signal (not counted)")
    n_success_raw: int = Field(description="delivered trials by reward alone")
    pass_hat_k: float | None = Field(description="C(n_success, k) / C(n_trials, k)")
    pass_hat_k_raw: float | None
    status: Literal["PASS", "FAIL", "N/A"]
    reason: str
    flaky: bool = Field(description="the seed's flaky: pass^k not reached (a single failed trial included)")
    inconsistent: bool = Field(description="some trials delivered and some did not")
    trials: list[str]
    jobs: list[str]


class JobDetail(BaseModel):
    """A job's roll-up state, from which ``trajaudit merge`` recomputes every section (report/merge.py)."""

    model_config = ConfigDict(extra="allow")
    meta: dict[str, Any]
    error: str | None = None
    records: dict[str, dict[str, Any]] = Field(description="principle code → its item's record, in arrival order")
    missing: dict[str, str] | None = Field(default=None, description="integrity code → why it produced no "
                                           "finding on this job (absent when every one did)")
    errored: dict[str, str] | None = Field(default=None, description="principle code → the internal error its "
                                           "item raised")


class ShardInfo(BaseModel):
    """``--trajaudit-shard I/N``: this summary covers shard I of N (absent for an unsharded or merged run)."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)
    settings: str = Field(description="digest of the settings, principle codes and group options")


class JobSummary(BaseModel):
    job: str
    config: str
    task: str
    trial: str
    verdict: Verdict
    reward: float | None
    reasons: list[str]
    statuses: dict[str, Status]
    loads: int = 0
    agent: str = ""
    model: str = ""
    condition: str | None = None
    oracle: bool = False
    trace_grader: TraceJobSummary | None = None
    advisor_verdict: Literal["pass", "pass_mechanical_only", "inconclusive", "fail", "error"] | None = Field(
        default=None, description="the advisor audit's verdict (error: an ADV item met unusable input); null "
        "without ADV items")
    fingerprints: dict[str, str] = Field(default_factory=dict, description="principle code → the stable "
                                         "fingerprint of its FAIL/WARN finding (baseline.py; what a later "
                                         "--trajaudit-baseline reads)")
    waived: list[str] = Field(default_factory=list, description="codes whose finding a waiver accepted (they do "
                              "not count in the verdict)")
    detail: JobDetail | None = None


class Incomplete(BaseModel):
    """Integrity principles that produced no finding on some job (docs/verdicts.md): the run is no approval."""

    line: str = Field(description="e.g. 'P1, P2 not run on 3 jobs (selection: -k P10)'")
    jobs: list[str] = Field(description="the INVALID or INCOMPLETE jobs an integrity principle did not run on")
    codes: list[str] = Field(description="the integrity codes that did not run, in registry order")
    causes: list[str] = Field(description="why: 'selection: -k P10', 'stopped by -x', 'interrupted', ...")


class PRVerdict(BaseModel):
    verdict: Literal["APPROVE", "APPROVE WITH CAVEATS", "MAJOR CHANGES NEEDED", "INCOMPLETE", "REJECT"]
    reasons: list[str]
    oracle_rewards: dict[str, float | None]
    tests_too_tight: list[str]
    incomplete: Incomplete | None = Field(default=None, description="present when an integrity principle did "
                                          "not run on an INVALID or INCOMPLETE job")


class ConfigResult(BaseModel):
    agent: str
    model: str
    condition: str | None
    oracle: bool
    jobs: int
    verdicts: dict[str, int]
    rewards: list[float]
    mean_reward: float | None


class TraceGraderPassK(BaseModel):
    """The original trace-grader's pass^k of one task (its runs grouped by task name alone)."""

    k: int
    n_success: int
    n_fail: int
    pass_hat_k: bool = Field(description="every one of the task's k runs delivered")


class TraceGraderCounts(BaseModel):
    n_runs: int
    n_tasks: int
    verdicts: dict[TraceVerdict, int]
    tasks_repeatable: int
    tasks_flaky: int = Field(description="tasks whose pass^k is false (a task whose only run failed included)")
    judge_axis: str = Field(description='"active" only when verified and judge.enabled, else '
                                        '"disabled (adapter, verified:false)"')


class TraceGraderSummary(BaseModel):
    """The original trace-grader's report summary over the runs a trace-grader item judged."""

    pass_k: dict[str, TraceGraderPassK]
    summary: TraceGraderCounts
    exit_code: Literal[0, 3] = Field(description="the original's exit: 3 if a run is a corrupt success or a task is "
                                                 "flaky, else 0")


class SkillImpact(_Open):
    """SB-2 for one task × agent × model: the seed's six fields first, then trial counts and the caveat."""

    with_skills_reward: float
    no_skills_reward: float
    delta_pp: float
    outcome: Literal["helped", "hurt", "no-op"]
    unlock_quote: str | None
    misled_quote: str | None
    quote_job: str | None = Field(default=None, description="the with-skills job the quote comes from")
    quote_source: str | None = Field(default=None, description="the trajectory moment quoted, or \"given\"")
    quote_missing: str | None = Field(default=None, description="a helped / hurt entry with nothing to quote: why")
    task: str
    agent: str
    model: str
    n_with_skills: int
    n_no_skills: int
    likely_noise: bool = Field(description="one trial per arm and |delta| < 30 pp")
    caveat: str | None


class SkillsFlag(BaseModel):
    """A SkillsBench PR-level flag (never blocking; feeds the report's suggested improvements)."""

    flag: Literal["skills_hurt_all_agents", "skills_noop_all_agents", "skill_never_discovered",
                  "skill_workflow_not_directive", "no_skills_leak"]
    task: str
    message: str
    blocking: Literal[False]
    refs: list[str]


class GroupSummary(BaseModel):
    """A task group's cross-trial item (``<root>::<task>::PASSK`` / ``::SB-2``) as it ran."""

    group: str  # <root name>::<task>
    task: str
    code: Literal["PASSK", "SB-2"]
    status: Literal["PASS", "WARN", "FAIL", "N/A", "ERROR"]
    evidence: str
    members: list[str]
    data: dict[str, Any]


class KappaPair(BaseModel):
    models: list[str] = Field(min_length=2, max_length=2)
    n: int = Field(description="P13 items where both models gave a valid answer")
    agreement: float | None = Field(description="share of those items where they agreed")
    kappa: float | None = Field(description="Cohen's kappa; null when undefined (no items, or one label throughout)")


class JudgesSummary(BaseModel):
    """LLM judge usage over the run (all processes) and P13 concurrence."""

    models: list[str] = Field(description="configured judge models (empty: no judge)")
    calls: int = Field(ge=0, description="judge answers requested")
    cached: int = Field(ge=0, description="answers served without a new HTTP call (disk cache or a shared call)")
    failures: int = Field(ge=0, description="answers that failed (HTTP error, timeout, invalid JSON, schema violation)")
    attempts: int = Field(ge=0, description="HTTP requests sent, retries included")
    tokens_in: int = Field(ge=0)
    tokens_out: int = Field(ge=0)
    cost: float = Field(ge=0, description="USD from litellm's price map (0 for models it does not know)")
    kappa: float | None = Field(description="Cohen's kappa of the first two models over P13 items")
    kappa_items: int = Field(ge=0)
    agreement: float | None
    kappa_pairs: list[KappaPair]
    errors: list[str] = Field(description="the first few failed answers: item, model and reason")


class NotAudited(BaseModel):
    job: str = Field(description="the job the file lies in")
    path: str = Field(description="the file, relative to the job directory")
    reason: str = Field(description="why it was not audited")


class WaiverEntry(BaseModel):
    entry: int = Field(ge=1, description="position in the waivers file")
    job: str = Field(description="glob on the job id")
    code: str
    reason: str
    expires: str = Field(description="YYYY-MM-DD (UTC); the waiver holds through that day")
    evidence: str | None = Field(default=None, description="substring the finding's evidence must contain")


class WaiverUse(BaseModel):
    job: str
    code: str
    entry: int
    reason: str
    expires: str


class Waivers(BaseModel):
    """``--trajaudit-waivers``: the file's entries, the findings they waived, the findings an expired entry
    matched (they count), and the entries that matched no finding."""

    entries: list[WaiverEntry]
    applied: list[WaiverUse]
    expired: list[WaiverUse]
    stale: list[WaiverEntry]


class FindingRef(BaseModel):
    job: str
    code: str
    fingerprint: str
    status: str | None = None


class BaselineDiff(BaseModel):
    """``--trajaudit-baseline``: this run's findings against an earlier summary.json's (a shard counts as gone
    only the baseline findings of the jobs it audited)."""

    file: str = Field(description="the baseline file's name")
    new_only: bool = Field(description="--trajaudit-new-only: only new findings counted in the PR verdict")
    findings: list[FindingRef] = Field(description="the baseline's findings (what `trajaudit merge` diffs against)")
    new: list[FindingRef]
    new_jobs: int = Field(ge=0, description="jobs with a new finding")
    gone: list[FindingRef]
    unchanged: int = Field(ge=0, description="findings present in both runs")


class Summary(BaseModel):
    model_config = ConfigDict(extra="allow")
    schema_version: Literal["trajaudit-summary-1"]
    mode: Literal["precise", "literal"]
    shard: ShardInfo | None = None
    n_jobs: int
    verdicts: dict[str, int]
    principles: dict[str, dict[str, int]]
    pr_verdict: PRVerdict
    configs: dict[str, ConfigResult]
    trace_verdicts: dict[TraceVerdict, int]
    pass_k: list[PassK]
    trace_grader: TraceGraderSummary | None = Field(
        default=None, description="the original trace-grader's summary shape; null when no trace-grader item judged a job")
    skill_impact: dict[str, SkillImpact] = Field(default_factory=dict)
    skills_flags: list[SkillsFlag] = Field(default_factory=list)
    groups: list[GroupSummary] = Field(default_factory=list)
    judges: JudgesSummary | None = None
    advisor_verdicts: dict[Literal["pass", "pass_mechanical_only", "inconclusive", "fail", "error"], int] = Field(
        default_factory=dict, description="advisor verdicts of the jobs with ADV items")
    not_audited: list[NotAudited] = Field(
        default_factory=list, description="trajectory-looking files inside jobs that were not audited, with the reason")
    waivers: Waivers | None = Field(default=None, description="present with --trajaudit-waivers")
    baseline: BaselineDiff | None = Field(default=None, description="present with --trajaudit-baseline")
    jobs: list[JobSummary]


SCHEMAS: dict[str, type[BaseModel]] = {"audit.schema.json": Audit, "summary.schema.json": Summary,
           "advisor-audit.schema.json": AdvisorCommandAudit}
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def render(name: str) -> str:
    schema: dict[str, Any] = SCHEMAS[name].model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    for fname in SCHEMAS:
        (SCHEMA_DIR / fname).write_text(render(fname))
        print("wrote", SCHEMA_DIR / fname)
