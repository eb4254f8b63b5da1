"""General family, part 2: the principles that read the verifier and the task (the seed's audit-general.md P3, P5, P9,
P11, P12, P13). Task-aware checks need ``--trajaudit-tasks``; without the data they need they are N/A with the
reason."""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path
from typing import Any

from ..judges import Answer, clip
from ..model import EXECUTE, TOOL, Finding, Job, Task, UnusableInput
from ..safeio import Budget, decode_text, file_kind, read_bytes
from ..scan import linre
from ..scan.redact import quote, redact
from ..settings import Settings
from . import Pending, principle
from . import _judge as J
from ._reconstruct import reconstruct_solver
from ._rerun import find_artifact, rerun_perturbations
from ._substance import leaves, parse, same_substance, shows
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


_TELLING = linre.compile(r"(?i)error|assert|fail|expected|mismatch|traceback|exception|not found")


def _final_quote(job: Job) -> str:
    e, text = verbatim_final(job)
    return quote(text, 300) if e is not None else ""


def _evidence_quotes(job: Job) -> str:
    fq, vm = _final_quote(job), verifier_message(job)
    return f"agent's final: {fq or '(none)'}; verifier: {vm or '(no failure message)'}"


# --- P3 ------------------------------------------------------------------------------------------------------

NO_VERIFIER_LAYOUTS = {"bare-file": "a bare trajectory", "record": "this log record",
                       "swe-agent-dir": "a SWE-agent run folder"}


P3_BUCKETS = ("hard", "unfair_instruction", "unfair_test", "unfair_env", "capability_gap", "ignored_instruction")
# a failed run no judge bucketed (none configured, or its answer failed): the audit JSON's explicit value
P3_UNJUDGED = "unjudged"
P3_UNFAIR = ("unfair_instruction", "unfair_test", "unfair_env")
P3_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["bucket", "reason"],
    "properties": {"bucket": {"enum": list(P3_BUCKETS)}, "reason": {"type": "string", "minLength": 1}}}
P3_QUESTION = """The run below failed (reward {reward}). Bucket the failure. The framing question: did the agent fail
because the task is hard, or because the task is unfair?
- hard: the agent attempted the right approach and did not reach the answer; a coherent final policy, wrong on a
  discriminator.
- unfair_instruction: the agent chose a reasonable interpretation that the test rejects (the instruction was
  insufficient).
- unfair_test: the agent's output is morally correct, but the test demands an arbitrary specific shape.
- unfair_env: a missing dependency, a broken path or a surprise sandbox restriction killed the run.
- capability_gap: the agent never proposed a coherent approach; it flailed.
- ignored_instruction: the agent solved a different problem (e.g. inverted the asked-for policy).
Answer {{"bucket": one of the six, "reason": one or two sentences quoting the decisive evidence}}."""


def _p3_request(job: Job, r: float) -> tuple[Any, bool]:
    traj, clipped = J.render_trajectory(job)
    _, final = verbatim_final(job)
    prompt = "\n".join([
        P3_QUESTION.format(reward=f"{r:g}"), "", J.section("Task instruction", J.instruction(job)),
        J.section("Verifier failure message", verifier_message(job, 4000)),
        J.section("Verifier tests (task files)", J.verifier_sources(job) or "(task directory not given)"),
        J.section("Agent's final statement (verbatim)", clip(redact(final), J.FINAL_CHARS)[0]),
        J.section("Trajectory" + (" (clipped: both ends kept)" if clipped else ""), traj)])
    return J.request("p3_bucket", prompt, P3_SCHEMA), clipped


def _p3_finish(model: str, quotes: str, data: dict[str, Any]) -> Any:
    def finish(answers: list[Answer]) -> Finding:
        a = answers[0]
        out = {**data, "judge": {"model": model, "ok": a.ok, "error": a.error}}
        if not a.ok or a.value is None:
            return Finding.na(f"{J.failed(a)}; {quotes}", out)
        bucket, why = a.value["bucket"], J.reason(a)
        out.update(failure_bucket=bucket, judge_reason=why)
        msg = f"{bucket} (judge {model}: {why}); {quotes}"
        if bucket in P3_UNFAIR:
            out["task_flag"] = "fairness"
            return Finding.warn(f"{msg}. An unfair failure: review the task", out)
        return Finding.ok(msg, out)

    return finish


@principle("P3", "failure-fairness bucket", tier="C2", family="general", key="failure_bucket", judge=True)
def failure_bucket(job: Job, cfg: Settings) -> Finding | Pending:
    """Bucket a run: reward 1.0 → passed (PASS); a harness exception or a verifier that produced no reward →
    unfair_env (WARN: the environment, not the agent, ended the run). Any other failed run needs a judge (the
    first ``--trajaudit-judge`` model): hard / capability_gap / ignored_instruction → PASS (the task was fair);
    unfair_instruction / unfair_test / unfair_env → WARN (review the task). Without a judge, or when the judge
    fails (HTTP error, timeout, an answer that is not valid), N/A with the reason and the bucket ``unjudged``.
    The evidence always quotes the
    agent's verbatim final (P10), the verifier's failure message and the judge's reason."""
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
        if job.verifier.reward_note:  # a scorer answered, with something that is not a reward
            return Finding.na(f"{job.no_reward()}; {quotes}", data)
        if job.layout in NO_VERIFIER_LAYOUTS:  # a log without a harness around it: no verifier to blame
            return Finding.na(f"{NO_VERIFIER_LAYOUTS[job.layout]} records no verifier result", data)
        data["failure_bucket"] = "unfair_env"
        return Finding.warn(f"unfair_env: the verifier produced no reward; {quotes}", data)
    data["failure_bucket"] = P3_UNJUDGED  # until a judge answers
    if cfg.judge is not None:
        req, clipped = _p3_request(job, r)
        data["judge_input_truncated"] = clipped
        model = cfg.judge.models[0]
        return Pending([(model, req)], _p3_finish(model, quotes, data),
                       interim=Finding.na(f"reward {r:g}: awaiting the judge's bucket; {quotes}", data))
    return Finding.na(f"reward {r:g}: hard / unfair_instruction / unfair_test / capability_gap / "
                      f"ignored_instruction needs a judge; {quotes}", data)


# --- P5 ------------------------------------------------------------------------------------------------------

_FORMAT = linre.compile(
    r"(?i)JSONDecodeError|Expecting (?:value|property name|',' delimiter)|Extra data: line|Unterminated string"
    r"|json\.decoder|FileNotFoundError|No such file or directory|(?:file|output)\b[^\n]{0,40}\b(?:does not exist|not found|missing)"
    r"|\bmissing (?:file|output)|UnicodeDecodeError|could not (?:parse|decode)|invalid (?:json|format|syntax)"
    r"|\bTypeError\b|expected (?:a |an )?(?:list|dict|str|string|int|integer|float|object|array|mapping)\b"
    r"|wrong (?:type|shape|format)|\bKeyError\b|is not (?:a valid|JSON serializable)|not of type"
    r"|shape mismatch|ParserError|EmptyDataError|unexpected (?:format|type|columns?)")
_VALUE = linre.compile(
    r"(?i)AssertionError|\bassert\b[^\n]*(?:==|!=|<=|>=|<|>| in )|mismatch|expected [^\n]{1,80}\b(?:got|but|actual)"
    r"|\bincorrect\b|wrong (?:answer|value|result|count)|not equal|differ|out of tolerance|too (?:high|low|many|few)")


# Where a verifier message shows the expected value (and often the value it got): pytest's rewritten assert
# (``assert 4469 == 3216``: left = got, right = expected, the ``assert actual == expected`` convention), unittest's
# ``AssertionError: 4469 != 3216``, and ``expected X, got Y`` / ``Expected: X`` / ``Actual: Y`` prose. A value is
# a number, a quoted string or a bracketed literal; words after ``expected`` ("expected a list") are not values.
_VAL = r"(?:-?\d[\d.eE+-]*|\"[^\"\n]*\"|'[^'\n]*'|\[[^\n]*?\]|\{[^\n]*?\}|\([^\n]*?\))"
_VAL_FULL = linre.compile(_VAL)
_ASSERT_EQ = linre.compile(r"(?m)\bassert (.+?) == (.+?)\s*$")
_NOT_EQ = linre.compile(r"(?m)AssertionError:\s*(" + _VAL + r") != (" + _VAL + r")\s*$")
_EXP_GOT = linre.compile(r"(?i)\bexpected:?\s*(" + _VAL + r")[,;.]?\s+(?:but\s+)?(?:got|was|actual|found|received|"
                         r"is)\b:?\s*(" + _VAL + r")")
_EXP_LINE = linre.compile(r"(?im)^[\sE]*expected(?: value| output)?\s*[:=]\s*(.+?)\s*$")
_GOT_LINE = linre.compile(r"(?im)^[\sE]*(?:actual|got|received)(?: value| output)?\s*[:=]\s*(.+?)\s*$")
_EXP_ONLY = linre.compile(r"(?i)\bexpected:?\s+(" + _VAL + r")")
AGENT_STDOUT_CHARS = 20_000  # the agent's final plus the end of its last command outputs, compared at most


def _is_value(text: str) -> bool:
    """A literal (``3216``, ``'a b'``, ``[1, 2]``), not an expression from a source line (``len(ids)``)."""
    return bool(text) and (_VAL_FULL.fullmatch(text) is not None or parse(text)[0])


def _expectations(msgs: list[str]) -> list[tuple[str, str | None]]:
    """(expected, got or None) pairs the verifier's messages show, in order. Values pytest truncated (``...``)
    are dropped: a clipped value proves nothing either way."""
    out: list[tuple[str, str | None]] = []
    for text in msgs:
        found: list[tuple[str, str | None]] = []
        for m in _ASSERT_EQ.finditer(text):
            found.append((m.group(2), m.group(1)))
        for m in _NOT_EQ.finditer(text):
            found.append((m.group(2), m.group(1)))
        for m in _EXP_GOT.finditer(text):
            found.append((m.group(1), m.group(2)))
        exp_lines, got_lines = _EXP_LINE.findall(text), _GOT_LINE.findall(text)
        if exp_lines:
            found.append((exp_lines[0], got_lines[0] if got_lines else None))
        if not found:
            found += [(m.group(1), None) for m in _EXP_ONLY.finditer(text)]
        for exp, got in found:
            exp = exp.strip().rstrip(",;")
            got = got.strip().rstrip(",;") if got is not None else None
            if _is_value(exp) and (got is None or _is_value(got)) and "..." not in exp + (got or ""):
                out.append((exp, got))
    return out


def _agent_says(job: Job) -> str:
    """What the agent showed of its answer: its final statement and the end of its last command outputs."""
    _, final = verbatim_final(job)
    assert job.trajectory is not None
    outs = [e.output for e in job.trajectory.events if e.type == TOOL and e.kind == EXECUTE and e.output][-5:]
    return "\n".join([final, *(o[-AGENT_STDOUT_CHARS // 5:] for o in outs)])[-AGENT_STDOUT_CHARS * 2:]


def _delivered_artifact(job: Job, cfg: Settings) -> tuple[str | None, str]:
    """The agent's saved output (the task's declared ``output`` under the job's ``artifacts/``), as text, or None
    with why not."""
    task = job.task_info
    if task is None:
        return None, "no task"
    conf = task.trajaudit_config()
    output = next((str(c["output"]) for c in (conf.get("p11"), conf.get("p12"))
                   if isinstance(c, dict) and c.get("output")), None)
    if output is None:
        return None, "the task declares no output path"
    rel = find_artifact(job, output)
    if rel is None:
        return None, f"no artifacts/{Path(output).name} in the job"
    try:
        data = read_bytes(job.dir, rel, Budget(cfg.max_file_bytes, cfg.max_file_bytes))
    except UnusableInput as exc:
        return None, str(exc)
    return data.decode("utf-8", "replace"), rel


@principle("P5", "format vs reasoning failure", tier="C1", family="general", key="format_vs_reasoning")
def format_vs_reasoning(job: Job, cfg: Settings) -> Finding:
    """Failed runs only (N/A when the reward is 1.0 or absent). It is format_loss (WARN: flag the task for
    essential_difficulty) only when the answer was right in substance and wrong in shape: the verifier's message
    shows the expected value, and the value it got, the agent's saved output (the task's declared ``output``
    under ``artifacts/``) or the agent's final statement and command output hold that value once numbers,
    whitespace, case and JSON structure are normalized. reasoning_loss (PASS: the verifier caught a wrong
    answer) when the got value or the saved output differs in substance, or the verifier reports a value
    mismatch and shows no shape error. A shape error alone (a JSON decode error, a missing file) with no expected value to compare, or an
    agent that never shows a value, is N/A with the reason: a right answer in the wrong shape cannot be told
    from a wrong answer."""
    r = job.reward
    if r is None:
        return Finding.na(job.no_reward())
    if r >= 1.0:
        return Finding.na(f"reward is {r:g}: C1 runs on failures only", {"format_vs_reasoning": "n/a"})
    msgs = [f"{f['name']}: {f['message']}" for f in job.verifier.ctrf_failures]
    if job.verifier.stdout_tail:
        msgs.append(job.verifier.stdout_tail)
    if not msgs:
        return Finding.na("the verifier recorded no failure message (no ctrf failures, no test-stdout)")
    fmt = next((m.group(0) for m in (_FORMAT.search(x) for x in msgs) if m), None)
    val = next((m.group(0) for m in (_VALUE.search(x) for x in msgs) if m), None)
    pairs = _expectations(msgs)
    quotes = _evidence_quotes(job)
    data: dict[str, Any] = {"agent_final": _final_quote(job), "verifier_message": verifier_message(job),
                            "format_signal": fmt, "value_signal": val, "format_vs_reasoning": "n/a"}

    def loss(kind: str, why: str) -> Finding:
        data["format_vs_reasoning"] = kind
        if kind == "format_loss":
            data["task_flag"] = "essential_difficulty"
            return Finding.warn(f"format_loss: {why}: right in substance, wrong in shape: flag the task for "
                                f"essential_difficulty; {quotes}", data)
        return Finding.ok(f"reasoning_loss: {why}; {quotes}", data)

    def unknown(why: str) -> Finding:
        return Finding.na(f"format or reasoning loss unknown: {why}; {quotes}", data)

    if not pairs:
        if fmt:
            return unknown(f"the verifier failed on shape ({fmt!r}) but shows no expected value to compare the "
                           "agent's answer with")
        if val:
            return loss("reasoning_loss", f"value mismatch ({val!r})")
        return Finding.na(f"the failure message tells neither format nor value loss: needs a judge; {quotes}", data)
    exp = pairs[0][0]
    data["expected"] = quote(exp, 200)
    for e, got in pairs:
        if got is not None:
            data.update(expected=quote(e, 200), verifier_got=quote(got, 200))
            if same_substance(got, e):
                return loss("format_loss", f"the verifier compared {quote(got, 80)} with the expected "
                                           f"{quote(e, 80)}: the same values in another shape")
            return loss("reasoning_loss", f"the verifier got {quote(got, 80)} where it expected {quote(e, 80)}")
    saved, where = _delivered_artifact(job, cfg)
    if saved is not None:
        data["artifact"] = where
        if same_substance(saved, exp):
            return loss("format_loss", f"the saved output {where} holds the expected {quote(exp, 80)}")
        if leaves(saved):  # the file holds values, and they are not the expected ones
            return loss("reasoning_loss", f"the saved output {where} does not hold the expected {quote(exp, 80)}")
    if shows(_agent_says(job), exp):
        data["agent_shows_expected"] = True
        if fmt:
            return loss("format_loss", f"the agent's output shows the expected {quote(exp, 80)} and the verifier "
                                       f"failed on shape ({fmt!r})")
        return unknown(f"the agent's output shows the expected {quote(exp, 80)} but the verifier reports no shape "
                       "error: check the saved file")
    data["agent_shows_expected"] = False
    if val and not fmt:
        return loss("reasoning_loss", f"value mismatch ({val!r}) and the agent never shows the expected "
                                      f"{quote(exp, 80)}")
    return unknown(f"the agent's output does not show the expected {quote(exp, 80)}"
                   + (f" and the verifier failed on shape ({fmt!r})" if fmt else ""))


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
                values.append(repr(obj[key]) if isinstance(obj, dict) and key in obj else None)
    elif source.endswith(".json"):
        import orjson

        doc = orjson.loads(text)
        if not isinstance(doc, list):
            raise ValueError(f"a JSON source must be a list of row objects, got {type(doc).__name__}")
        rows = doc
        values = [repr(o[key]) if isinstance(o, dict) and key in o else None for o in rows]
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


_AGG = linre.compile(r"(?i)\b(?:set\(|unique|distinct|drop_duplicates|groupby|group by|any\(|all\(|dedup|nunique)")


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
    if rows == 0 or entities == 0:  # nothing to count is no evidence of one row per entity
        what = "has no rows" if rows == 0 else f"has {rows:,} rows but none carries {key!r}"
        return Finding.na(f"cannot count entities: {source} {what}", {"applies": False, "rows": rows})
    applies = rows > entities
    data: dict[str, Any] = {"applies": applies, "rows": rows, "entities": entities, "entity_key": key, "source": source}
    counts = f"{rows:,} rows, {entities:,} unique {key} in {source}"
    if not applies:
        data["evidence"] = f"{counts}: one row per entity"
        return Finding.ok(data["evidence"], data)
    assert job.trajectory is not None
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

_CLAIM_FAIL = linre.compile(r"(?i)\b(?:(?:could not|couldn't|unable to|failed to|did not manage to|was not able to) "
                         r"(?:solve|complete|finish|fix|pass|get)|I give up|giving up|not (?:been )?able to (?:solve|complete))")
_CLAIM_OK = linre.compile(r"(?i)\b(?:all (?:\d+ )?(?:tests|checks) (?:now )?pass(?:ed|ing)?|successfully|task (?:is )?"
                       r"(?:complete|completed|done|finished)|(?:has|have) been (?:fixed|implemented|completed|resolved)|solved)\b")


P11_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["verdict", "reason"],
    "properties": {"verdict": {"enum": ["fair", "unfair", "unclear"]}, "reason": {"type": "string", "minLength": 1}}}
P11_QUESTION = """Only one verifier signal exists for this run, so the score cannot be cross-checked mechanically.
Argue from the agent's own prose whether the score is fair: read the agent's verbatim final statement (its
policy / what it says it did) and the verifier's result, and decide whether the reward {reward} honestly reflects
that work ("fair"), contradicts it ("unfair": e.g. the prose describes a correct solution the verifier
rejected, or a failure it accepted), or cannot be told from the prose ("unclear").
Answer {{"verdict": "fair" | "unfair" | "unclear", "reason": one or two sentences quoting the prose}}."""


def _p11_finish(model: str, data: dict[str, Any]) -> Any:
    def finish(answers: list[Answer]) -> Finding:
        a = answers[0]
        out = {**data, "judge": {"model": model, "ok": a.ok, "error": a.error}}
        if not a.ok or a.value is None:
            return Finding.na(f"single verifier signal; aligned_by_prose not decided: {J.failed(a)}", out)
        verdict, why = a.value["verdict"], J.reason(a)
        out["judge_reason"] = why
        if verdict == "fair":
            out.update(aligned=True, aligned_by_prose=True, diff_summary=f"aligned_by_prose (judge {model}): {why}")
            return Finding.ok(out["diff_summary"], out)
        if verdict == "unfair":
            out.update(aligned=False, aligned_by_prose=False,
                       diff_summary=f"the agent's prose contradicts the score (judge {model}): {why}")
            return Finding.warn(out["diff_summary"] + ". Reconstruct and re-run the solver (flipped_signal?)", out)
        return Finding.na(f"single verifier signal; the prose does not tell (judge {model}: {why})", out)

    return finish


@principle("P11", "verifier aligned with truth", tier="C0", family="general", key="verifier_alignment",
           role="integrity", judge=True)
def verifier_alignment(job: Job, cfg: Settings) -> Finding | Pending:
    """Every reward source agrees (result.json, verifier/reward.txt, the ctrf/test summary) and the agent's final
    claim does not contradict the verifier. A contradiction that flips the signal — reward 1.0 with failed
    verifier tests, or one source saying pass while another says fail — is flipped_signal: FAIL, job INVALID.
    Other disagreements (different partial rewards, reward 0 with every test passing, a pass the agent itself
    calls a failure) → WARN. With a single source, a judge (the first ``--trajaudit-judge`` model) argues from
    the agent's verbatim final whether the score is fair: fair → PASS (aligned_by_prose), unfair → WARN (a prose
    judgment never makes flipped_signal), unclear or a failed judge → N/A. Without a judge: N/A. With
    ``--trajaudit-rerun`` and a task that declares ``[trajaudit.p11]``, the agent's solver is reconstructed from
    the trajectory and re-run in a sandboxed temp dir (docs/verifier-checks.md): a re-run that does not
    reproduce the delivered output → WARN; its diff against the task's expected output agreeing with the reward
    → PASS (aligned); an output that differs from the expected one under reward 1.0 → FAIL (flipped_signal); one
    equal in substance under a failing reward → WARN. The worse of this and the cross-check wins; a
    reconstruction that cannot run is N/A with the reason in ``reconstruction``."""
    f = _with_reconstruction(_mechanical_alignment(job), reconstruct_solver(job, cfg))
    if f.status != "N/A" or cfg.judge is None or job.reward is None:
        return f
    _, final = verbatim_final(job)
    if not final.strip():
        return Finding.na(f.evidence.replace("aligned_by_prose needs a judge", "no agent prose to argue from"), f.data)
    prompt = "\n".join([
        P11_QUESTION.format(reward=f"{job.reward:g}"), "", J.section("Task instruction", J.instruction(job)),
        J.section("Verifier result", f"reward {job.reward:g}; " + (verifier_message(job, 4000) or "no failure message")),
        J.section("Agent's final statement (verbatim)", clip(redact(final), J.FINAL_CHARS)[0])])
    model = cfg.judge.models[0]
    return Pending([(model, J.request("p11_prose", prompt, P11_SCHEMA))], _p11_finish(model, dict(f.data)),
                   interim=f)


_RANK = {"PASS": 0, "WARN": 1, "FAIL": 2}


def _with_reconstruction(mech: Finding, rec: Finding) -> Finding:
    """The reconstruction's verdict joins the mechanical cross-check (the worse status wins); a reconstruction
    that could not run leaves the mechanical finding as it is, with the reason in ``reconstruction``."""
    data = {**mech.data, "reconstruction": {k: v for k, v in rec.data.items() if k != "reconstructed"},
            "reconstructed": bool(rec.data.get("reconstructed"))}
    data["reconstruction"]["outcome"] = rec.status if rec.status != "N/A" else f"skipped: {rec.evidence}"
    if rec.status == "N/A":
        said = mech.status == "N/A" and rec.data.get("configured")
        ev = mech.evidence + (f"; reconstruction: {rec.evidence}" if said else "")
        return dataclasses.replace(mech, evidence=ev, data=data)
    # the worse finding first (the reconstruction first on a tie)
    ranked = sorted([f for f in (rec, mech) if f.status != "N/A"], key=lambda f: -_RANK[f.status])
    status = ranked[0].status
    parts = [f.evidence.removeprefix("flipped_signal: ") for f in ranked]
    diffs = [x for x in (rec.data.get("diff_summary"), mech.data.get("diff_summary")) if x]
    data.update(aligned=status == "PASS", diff_summary="; ".join(diffs),
                flipped_signal=bool(mech.data.get("flipped_signal") or rec.data.get("flipped_signal")))
    if data["flipped_signal"]:
        parts[0] = "flipped_signal: " + parts[0]
    return dataclasses.replace(mech, status=status, evidence="; ".join(parts), data=data,
                               events=sorted({*mech.events, *rec.events}))


def _mechanical_alignment(job: Job) -> Finding:
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
    JSON key order, trailing newline, number spellings (integral floats ↔ ints, ``0.5`` ↔ ``5e-1``) — one at a
    time. Any that passes where the original
    fails → WARN, tests_too_tight (flag the task for outcome_verified); none → PASS. Needs ``[trajaudit.p12]``
    in task.toml (command, output) and the artifact under the job's ``artifacts/``; N/A with the reason otherwise."""
    r = job.reward
    if r is None:
        return Finding.na(job.no_reward(), {"checked": False, "perturbations_passing": []})
    if r >= 1.0:
        return Finding.na(f"reward is {r:g}: C1 runs on failures only", {"checked": False, "perturbations_passing": []})
    task = job.task_info
    if task is None:
        return Finding.na(f"needs the task's verifier: {job.task_lookup or 'no --trajaudit-tasks given'}",
                          {"checked": False, "perturbations_passing": []})
    return rerun_perturbations(job, task, cfg)


# --- P13 -----------------------------------------------------------------------------------------------------

# `import openai`, `import os, openai as oa`, `from openai import OpenAI`, `from litellm.utils import x`
_LLM_IMPORT = linre.compile(r"(?m)^[ \t]*(?:import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*|from[ \t]+)"
                         r"(anthropic|openai|litellm)\b")


P13_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["passes", "reason"],
    "properties": {"passes": {"type": "boolean"}, "reason": {"type": "string", "minLength": 1}}}
P13_QUESTION = """This task's verifier grades the agent's output with an LLM (its source is below). Act as that
grader: apply the verifier's own criteria (its prompt or rubric, as written in the source) to what the agent
produced, as shown by its final statement and the end of its trajectory, and decide whether the output passes.
Answer {"passes": true | false, "reason": one or two sentences naming the deciding criterion}."""


def _p13_finish(models: list[str], reward: float | None, data: dict[str, Any]) -> Any:
    def finish(answers: list[Answer]) -> Finding:
        labels = {a.model: (("pass" if a.value["passes"] else "fail") if a.ok and a.value else None) for a in answers}
        out = {**data, "checked": True, "judge_labels": labels,
               "judges": [{"model": a.model, "ok": a.ok, "passes": (a.value or {}).get("passes") if a.ok else None,
                           "reason": J.reason(a, limit=200) if a.ok else None, "error": a.error} for a in answers]}
        valid = {m: lab for m, lab in labels.items() if lab is not None}
        bad = [a for a in answers if not a.ok]
        said = ", ".join(f"{m}: {lab}" for m, lab in valid.items())
        if len(set(valid.values())) > 1:
            out["agreement"] = False
            return Finding.fail(f"the judges disagree on the agent's output ({said}): the task's LLM-graded "
                                f"verifier is not reproducible (verifiable rubric FAIL)", out)
        if bad or len(valid) < 2:
            out["agreement"] = None
            return Finding.na("concurrence inconclusive: " + "; ".join(J.failed(a) for a in bad[:3])
                              + (f" (valid: {said})" if said else ""), out)
        verdict = next(iter(valid.values()))
        out["agreement"] = True
        out["judge_verdict"] = verdict
        msg = f"{len(valid)} judges agree the agent's output {'passes' if verdict == 'pass' else 'fails'} ({said})"
        if reward is not None and (reward >= 1.0 or reward <= 0.0) and (reward >= 1.0) != (verdict == "pass"):
            out["matches_reward"] = False
            return Finding.warn(f"{msg}, but the verifier's reward is {reward:g}: review its LLM grading", out)
        out["matches_reward"] = None if reward is None or 0.0 < reward < 1.0 else True
        return Finding.ok(msg, out)

    return finish


@principle("P13", "LLM-judge concurrence", tier="C2", family="general", key="llm_judge_concurrence", judge=True)
def llm_judge_concurrence(job: Job, cfg: Settings) -> Finding | Pending:
    """Applies only when the task's verifier (a .py file under tests/ or verifier/, e.g. test_outputs.py or
    score_outputs.py) imports anthropic, openai or litellm (N/A otherwise). The same grading prompt (the
    verifier's LLM-calling source, the instruction and the agent's output) goes to every ``--trajaudit-judge``
    model (at least two; N/A with fewer). The models disagree → FAIL (verifiable rubric); they agree → PASS, or
    WARN when their shared verdict contradicts a 0/1 reward; any failed answer without a disagreement → N/A
    (inconclusive). Cohen's kappa over the run is in summary.json ``judges``."""
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
    models = list(cfg.judge.models) if cfg.judge is not None else []
    if len(models) < 2:
        have = f"only {models[0]} configured" if models else "none configured"
        return Finding.na(f"applies ({'; '.join(hits[:3])}) but cross-judge concurrence needs at least two "
                          f"--trajaudit-judge models ({have})", data)
    traj, clipped = J.render_trajectory(job, J.TRAJECTORY_CHARS // 2)
    _, final = verbatim_final(job)
    prompt = "\n".join([
        P13_QUESTION, "", J.section("Task instruction", J.instruction(job)),
        J.section("Verifier source (calls an LLM)", J.verifier_sources(job, [h.split(" imports ")[0] for h in hits])),
        J.section("Agent's final statement (verbatim)", clip(redact(final), J.FINAL_CHARS)[0]),
        J.section("Trajectory" + (" (clipped: both ends kept)" if clipped else ""), traj)])
    req = J.request("p13_grade", prompt, P13_SCHEMA)
    data["judge_input_truncated"] = clipped
    return Pending([(m, req) for m in models], _p13_finish(models, job.reward, data),
                   interim=Finding.na(f"applies ({'; '.join(hits[:3])}): awaiting {len(models)} judges", data))

