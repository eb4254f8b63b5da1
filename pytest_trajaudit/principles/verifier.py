"""General family, part 2: the principles that read the verifier and the task (audit-general.md P3, P5, P9, P11,
P12, P13). Task-aware checks need ``--trajaudit-tasks``; without the data they need they are N/A with the reason."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from ..model import TOOL, Finding, Job, Task, UnusableInput
from ..redact import quote
from ..safeio import Budget, decode_text, file_kind, read_bytes
from ..settings import Settings
from . import principle
from ._rerun import rerun_perturbations
from .general import verbatim_final


def verifier_message(job: Job, limit: int = 600) -> str:
    """The verifier's own failure message: ctrf failures (name: message), else the telling lines of test-stdout."""
    v = job.verifier
    if v.ctrf_failures:
        parts = [f"{f['name']}: {f['message']}".strip(": ") for f in v.ctrf_failures[:5]]
        more = f" (+{len(v.ctrf_failures) - 5} more failed)" if len(v.ctrf_failures) > 5 else ""
        return quote(" | ".join(parts), limit) + more
    if v.stdout_tail:
        lines = [ln for ln in v.stdout_tail.splitlines() if _TELLING.search(ln)]
        if lines:
            return quote(" | ".join(lines[-6:]), limit)
        return quote(v.stdout_tail[-limit:], limit)
    return ""


_TELLING = re.compile(r"(?i)error|assert|fail|expected|mismatch|traceback|exception|not found")


def _final_quote(job: Job) -> str:
    e, text = verbatim_final(job)
    return quote(text, 300) if e is not None else ""


def _evidence_quotes(job: Job) -> str:
    fq, vm = _final_quote(job), verifier_message(job)
    return f"agent's final: {fq or '(none)'}; verifier: {vm or '(no failure message)'}"


# --- P3 ------------------------------------------------------------------------------------------------------

@principle("P3", "failure-fairness bucket", tier="C2", family="general", key="failure_bucket")
def failure_bucket(job: Job, cfg: Settings) -> Finding:
    """Bucket a run: reward 1.0 → passed (PASS); a harness exception or a verifier that produced no reward →
    unfair_env (WARN: the environment, not the agent, ended the run). Telling hard / unfair_instruction /
    unfair_test / capability_gap / ignored_instruction apart needs a judge: N/A until one is configured. The
    evidence always quotes the agent's verbatim final (P10) and the verifier's failure message."""
    quotes = _evidence_quotes(job)
    data: dict[str, Any] = {"agent_final": _final_quote(job), "verifier_message": verifier_message(job)}
    r = job.reward
    if r is not None and r >= 1.0:
        data["failure_bucket"] = "passed"
        return Finding.ok(f"passed (reward {r:g})", data)
    if job.exception:
        data["failure_bucket"] = "unfair_env"
        return Finding.warn(f"unfair_env: the harness recorded an exception ({quote(job.exception, 200)}); {quotes}", data)
    if r is None:
        if job.layout == "bare-file":
            return Finding.na("a bare trajectory carries no verifier result", data)
        data["failure_bucket"] = "unfair_env"
        return Finding.warn(f"unfair_env: the verifier produced no reward; {quotes}", data)
    data["failure_bucket"] = None
    return Finding.na(f"reward {r:g}: hard / unfair_instruction / unfair_test / capability_gap / "
                      f"ignored_instruction needs a judge; {quotes}", data)


# --- P5 ------------------------------------------------------------------------------------------------------

_FORMAT = re.compile(
    r"(?i)JSONDecodeError|Expecting (?:value|property name|',' delimiter)|Extra data: line|Unterminated string"
    r"|json\.decoder|FileNotFoundError|No such file or directory|(?:file|output)\b[^\n]{0,40}\b(?:does not exist|not found|missing)"
    r"|\bmissing (?:file|output)|UnicodeDecodeError|could not (?:parse|decode)|invalid (?:json|format|syntax)"
    r"|\bTypeError\b|expected (?:a |an )?(?:list|dict|str|string|int|integer|float|object|array|mapping)\b"
    r"|wrong (?:type|shape|format)|\bKeyError\b|is not (?:a valid|JSON serializable)|not of type"
    r"|shape mismatch|ParserError|EmptyDataError|unexpected (?:format|type|columns?)")
_VALUE = re.compile(
    r"(?i)AssertionError|\bassert\b[^\n]*(?:==|!=|<=|>=|<|>| in )|mismatch|expected [^\n]{1,80}\b(?:got|but|actual)"
    r"|\bincorrect\b|wrong (?:answer|value|result|count)|not equal|differ|out of tolerance|too (?:high|low|many|few)")


@principle("P5", "format vs reasoning failure", tier="C1", family="general", key="format_vs_reasoning")
def format_vs_reasoning(job: Job, cfg: Settings) -> Finding:
    """Failed runs only (N/A when the reward is 1.0 or absent). From the verifier's failure messages: a JSON
    decode error, a missing output file, a wrong type or shape → format_loss (WARN: flag the task for
    essential_difficulty if the agent's answer was right); only value mismatches → reasoning_loss (PASS: the
    verifier caught a wrong answer). N/A when the messages tell neither."""
    r = job.reward
    if r is None:
        return Finding.na("no reward recorded")
    if r >= 1.0:
        return Finding.na(f"reward is {r:g}: C1 runs on failures only", {"format_vs_reasoning": "n/a"})
    msgs = [f"{f['name']}: {f['message']}" for f in job.verifier.ctrf_failures]
    if job.verifier.stdout_tail:
        msgs.append(job.verifier.stdout_tail)
    if not msgs:
        return Finding.na("the verifier recorded no failure message (no ctrf failures, no test-stdout)")
    fmt = [m for m in (_FORMAT.search(x) for x in msgs) if m]
    val = [m for m in (_VALUE.search(x) for x in msgs) if m]
    data: dict[str, Any] = {"agent_final": _final_quote(job), "verifier_message": verifier_message(job)}
    if fmt:
        data["format_vs_reasoning"] = "format_loss"
        data["task_flag"] = "essential_difficulty"
        return Finding.warn(f"format_loss: the verifier failed on shape/format ({fmt[0].group(0)!r}): check whether "
                            f"the agent's answer was right; {_evidence_quotes(job)}", data)
    if val:
        data["format_vs_reasoning"] = "reasoning_loss"
        return Finding.ok(f"reasoning_loss: value mismatch ({val[0].group(0)!r}); {_evidence_quotes(job)}", data)
    return Finding.na(f"the failure message tells neither format nor value loss: needs a judge; {_evidence_quotes(job)}",
                      data)


# --- P9 ------------------------------------------------------------------------------------------------------

_entity_cache: dict[tuple[str, str, str], tuple[int, int]] = {}


def _entity_counts(task: Task, source: str, key: str, cfg: Settings) -> tuple[int, int]:
    ck = (str(task.dir), source, key)
    if ck in _entity_cache:
        return _entity_cache[ck]
    parts = Path(source).parts
    if not source or Path(source).is_absolute() or ".." in parts:
        raise UnusableInput(task.dir / "task.toml", f"[trajaudit.p9] source {source!r} must be relative to the task dir")
    kind = file_kind(task.dir, source)
    if kind != "file":
        raise UnusableInput(task.dir / source, f"[trajaudit.p9] source is {kind}")
    text = decode_text(read_bytes(task.dir, source, Budget(cfg.max_file_bytes, cfg.max_file_bytes)), task.dir / source)
    values: list[Any] = []
    if source.endswith((".jsonl", ".ndjson")):
        import orjson

        for ln in text.splitlines():
            if ln.strip():
                obj = orjson.loads(ln)
                values.append(repr(obj.get(key)) if isinstance(obj, dict) else None)
    elif source.endswith(".json"):
        import orjson

        doc = orjson.loads(text)
        rows = doc if isinstance(doc, list) else []
        values = [repr(o.get(key)) if isinstance(o, dict) else None for o in rows]
    else:
        delim = "\t" if source.endswith(".tsv") else ","
        reader = csv.reader(io.StringIO(text), delimiter=delim)
        header = next(reader, [])
        if key not in header:
            raise UnusableInput(task.dir / source, f"[trajaudit.p9] no column {key!r} in the header")
        col = header.index(key)
        values = [row[col] if col < len(row) else None for row in reader if row]
    counts = (len(values), len({v for v in values if v is not None}))
    _entity_cache[ck] = counts
    return counts


_AGG = re.compile(r"(?i)\b(?:set\(|unique|distinct|drop_duplicates|groupby|group by|any\(|all\(|dedup|nunique)")


@principle("P9", "per-row vs per-entity gotcha", tier="C0", family="general", key="row_vs_entity_gotcha")
def row_vs_entity(job: Job, cfg: Settings) -> Finding:
    """Set-output tasks whose source data has several rows per entity. Applies only when the task declares its
    entity key in task.toml (``[trajaudit.p9] source = "environment/data/aborts.tsv"``, ``entity_key =
    "txn_id"``); states the row and entity counts. Several rows per entity on a failed run → WARN (check the
    agent aggregated per entity, quoting whether its code dedups); one row per entity, or a passing run → PASS."""
    task = job.task_info
    if task is None:
        return Finding.na(f"needs the task's entity key: {job.task_lookup or 'no --trajaudit-tasks given'}",
                          {"applies": False})
    conf = task.trajaudit_config().get("p9")
    if not isinstance(conf, dict) or not conf.get("entity_key") or not conf.get("source"):
        return Finding.na("the task declares no entity key ([trajaudit.p9] source + entity_key in task.toml)",
                          {"applies": False})
    source, key = str(conf["source"]), str(conf["entity_key"])
    try:
        rows, entities = _entity_counts(task, source, key, cfg)
    except UnusableInput as exc:
        return Finding.na(f"cannot count entities: {exc}", {"applies": False})
    except ValueError as exc:
        return Finding.na(f"cannot count entities: {source}: {exc}", {"applies": False})
    applies = rows > entities
    data: dict[str, Any] = {"applies": applies, "rows": rows, "entities": entities, "entity_key": key, "source": source}
    counts = f"{rows:,} rows, {entities:,} unique {key} in {source}"
    if not applies:
        data["evidence"] = f"{counts}: one row per entity"
        return Finding.ok(data["evidence"], data)
    code = "\n".join(e.action_text() for e in job.trajectory.events if e.type == TOOL)
    dedup = bool(_AGG.search(code)) and key in code
    data["agent_aggregates"] = dedup
    if job.reward is not None and job.reward >= 1.0:
        data["evidence"] = f"{counts}: several rows per entity, and the run passed"
        return Finding.ok(data["evidence"], data)
    data["evidence"] = (f"{counts}: several rows per entity on a failed run — check the agent's output is per "
                        f"entity ({'its code aggregates by ' + key if dedup else 'no aggregation by ' + key + ' seen in its code'})")
    return Finding.warn(data["evidence"], data)


# --- P11 -----------------------------------------------------------------------------------------------------

_CLAIM_FAIL = re.compile(r"(?i)\b(?:(?:could not|couldn't|unable to|failed to|did not manage to|was not able to) "
                         r"(?:solve|complete|finish|fix|pass|get)|I give up|giving up|not (?:been )?able to (?:solve|complete))")
_CLAIM_OK = re.compile(r"(?i)\b(?:all (?:\d+ )?(?:tests|checks) (?:now )?pass(?:ed|ing)?|successfully|task (?:is )?"
                       r"(?:complete|completed|done|finished)|(?:has|have) been (?:fixed|implemented|completed|resolved)|solved)\b")


@principle("P11", "verifier aligned with truth", tier="C0", family="general", key="verifier_alignment")
def verifier_alignment(job: Job, cfg: Settings) -> Finding:
    """Every reward source agrees (result.json, verifier/reward.txt, the ctrf/test summary) and the agent's final
    claim does not contradict the verifier. A contradiction that flips the signal — reward 1.0 with failed
    verifier tests, or one source saying pass while another says fail — is flipped_signal: FAIL, job INVALID.
    Other disagreements (different partial rewards, reward 0 with every test passing, a pass the agent itself
    calls a failure) → WARN. N/A when only one source exists (aligned_by_prose needs a judge)."""
    v = job.verifier
    rewards = {k: val for k, val in v.rewards.items() if val is not None}
    bad = [k for k, val in v.rewards.items() if val is None]
    tests = v.ctrf_summary or {}
    data: dict[str, Any] = {"reconstructed": False, "aligned": None, "sources": dict(rewards),
                            "tests": dict(tests), "flipped_signal": False}
    flips: list[str] = []
    warns: list[str] = [f"{k} holds no number" for k in bad]
    vals = sorted(set(rewards.values()))
    if len(vals) > 1:
        desc = ", ".join(f"{k}={val:g}" for k, val in rewards.items())
        passes = {val >= 1.0 for val in vals}
        (flips if len(passes) > 1 else warns).append(f"reward sources disagree ({desc})")
    r = job.reward
    n, failed, passed = tests.get("tests", 0), tests.get("failed", 0), tests.get("passed", 0)
    src = v.tests_source or "ctrf.json"
    if r is not None and n:
        if r >= 1.0 and failed:
            flips.append(f"reward {r:g} but {failed}/{n} verifier tests failed ({src})")
        elif r <= 0.0 and passed == n:
            warns.append(f"reward {r:g} although all {n} verifier tests passed ({src}; a separate scorer?)")
    e, final = verbatim_final(job)
    claim = "failure" if final and _CLAIM_FAIL.search(final) else "success" if final and _CLAIM_OK.search(final) else "unknown"
    data["final_claim"] = claim
    if claim == "failure" and r is not None and r >= 1.0:
        warns.append(f"passed although the agent's final says it failed: {quote(final, 160)}")
    checks = len(rewards) + (1 if n else 0)
    if flips:
        data.update(flipped_signal=True, aligned=False, diff_summary="; ".join(flips + warns))
        return Finding.fail("flipped_signal: " + data["diff_summary"], data)
    if warns:
        data.update(aligned=False, diff_summary="; ".join(warns))
        return Finding.warn(data["diff_summary"], data)
    if checks < 2:
        why = "only one reward source" if rewards else "no reward source"
        return Finding.na(f"{why} and no test summary to cross-check; aligned_by_prose needs a judge", data)
    data.update(aligned=True, diff_summary=f"{checks} verifier signals agree (" + ", ".join(
        [f"{k}={val:g}" for k, val in rewards.items()] + ([f"{passed}/{n} tests passed"] if n else [])) + ")")
    return Finding.ok(data["diff_summary"], data)


# --- P12 -----------------------------------------------------------------------------------------------------

@principle("P12", "tests-too-tight ablation", tier="C1", family="general", key="tests_too_tight")
def tests_too_tight(job: Job, cfg: Settings) -> Finding:
    """Failed runs only. Re-runs the task's verifier in a subprocess (timeout; never in-process; never on
    agent-written code) on syntactic perturbations of the agent's output artifact — whitespace normalization,
    JSON key order, trailing newline, integral floats ↔ ints — one at a time. Any that passes where the original
    fails → WARN, tests_too_tight (flag the task for outcome_verified); none → PASS. Needs ``[trajaudit.p12]``
    in task.toml (command, output) and the artifact under the job's ``artifacts/``; N/A with the reason otherwise."""
    r = job.reward
    if r is None:
        return Finding.na("no reward recorded", {"checked": False, "perturbations_passing": []})
    if r >= 1.0:
        return Finding.na(f"reward is {r:g}: C1 runs on failures only", {"checked": False, "perturbations_passing": []})
    task = job.task_info
    if task is None:
        return Finding.na(f"needs the task's verifier: {job.task_lookup or 'no --trajaudit-tasks given'}",
                          {"checked": False, "perturbations_passing": []})
    return rerun_perturbations(job, task, cfg)


# --- P13 -----------------------------------------------------------------------------------------------------

_LLM_IMPORT = re.compile(r"(?m)^\s*(?:import|from)\s+(anthropic|openai|litellm)\b")


@principle("P13", "LLM-judge concurrence", tier="C2", family="general", key="llm_judge_concurrence")
def llm_judge_concurrence(job: Job, cfg: Settings) -> Finding:
    """Applies only when the task's verifier (a .py file under tests/ or verifier/, e.g. test_outputs.py or
    score_outputs.py) imports anthropic, openai or litellm. The concurrence itself (the same judge prompt through
    ≥ 2 models) needs ``--trajaudit-judge`` models; until then N/A, saying whether it would apply."""
    task = job.task_info
    if task is None:
        return Finding.na(f"cannot tell whether the verifier calls an LLM: {job.task_lookup or 'no --trajaudit-tasks given'}",
                          {"checked": False, "agreement": None, "applicable": None})
    hits = []
    for f in task.privileged:
        if f.rel.split("/", 1)[0] in ("tests", "verifier") and f.rel.endswith(".py") and f.text:
            m = _LLM_IMPORT.search(f.text)
            if m:
                hits.append(f"{f.rel} imports {m.group(1)}")
    data = {"checked": False, "agreement": None, "applicable": bool(hits), "llm_imports": hits}
    if not hits:
        return Finding.na("the task's verifier does not call an LLM (no anthropic/openai/litellm import)", data)
    return Finding.na(f"applies ({'; '.join(hits[:3])}) but cross-judge concurrence needs at least two "
                      "--trajaudit-judge models (none configured)", data)

