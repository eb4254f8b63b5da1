"""The advisor audit's one core, shared by ``trajaudit audit`` and the ADV-1..ADV-5 pytest items.

:func:`prepare` runs the mechanical checks on a trajectory's text against the loaded privileged material and
builds the two judges' prompts; :func:`assemble` turns that state and the judges' outcomes into the audit (the
verdict, its reasons and each check's status); :func:`check` is one check's (status, evidence), which is what a
pytest item reports. :func:`run_audit` is the command's path: find and read the files, call the judges, assemble.
Nothing here imports pytest.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..aggregate.verdicts import advisor_verdict
from ..loaders.sniff import load_trajectory
from ..loaders.task import PrivilegedMaterial, load_privileged, load_public
from ..model import UnusableInput
from ..safeio import Budget, decode_text, file_kind, loads_bounded, max_events, parse_text, read_bytes
from ..scan.overlap import Matcher, privileged_lines
from ..scan.redact import quote
from . import judging
from .layout import Layout, resolve_layout
from .patterns import MENTION_PATTERNS, compile_mentions
from .scan import scan

SCHEMA_VERSION = "trajaudit-advisor-1"
ISSUE_NO_MATERIAL = "no privileged material was loaded from the task directory"
ISSUE_NO_EVENTS = "the trajectory holds no events to audit"
LINE_MIN = 40  # a privileged line counts from 40 characters (whitespace collapsed)
MENTION_RX = compile_mentions(MENTION_PATTERNS)


# --- the task side: privileged material, its matcher, the public text (cached per process) -----------------------

@dataclass(slots=True)
class TaskSide:
    layout: Layout
    material: PrivilegedMaterial
    matcher: Matcher
    instruction: str  # the task's public instruction (never under a privileged root)
    public_lines_excluded: int  # privileged lines dropped because the public task text holds them too


_task_cache: OrderedDict[tuple[Any, ...], TaskSide] = OrderedDict()
_TASK_CACHE_MAX = 32


def task_side(task_dir: Path | None, layout: Layout) -> TaskSide:
    """Load the privileged material of ``task_dir`` under ``layout`` (raises
    :class:`~pytest_trajaudit.loaders.task.PrivilegedUnreadable`), once per process."""
    key = (str(task_dir) if task_dir else None, layout.privileged_roots, layout.excluded_directory_names)
    hit = _task_cache.get(key)
    if hit is not None:
        _task_cache.move_to_end(key)
        return TaskSide(layout, hit.material, hit.matcher, hit.instruction, hit.public_lines_excluded)
    material = load_privileged(task_dir, layout.privileged_roots, layout.excluded_directory_names)
    instruction, public = ("", []) if task_dir is None else load_public(task_dir, layout.privileged_roots)
    lines = privileged_lines(((f.rel, f.text) for f in material.loaded), LINE_MIN)
    matcher = Matcher.build(lines, [instruction, *(f.text for f in public)])
    side = TaskSide(layout, material, matcher, instruction, len(lines) - len(matcher.lines))
    _task_cache[key] = side
    if len(_task_cache) > _TASK_CACHE_MAX:
        _task_cache.popitem(last=False)
    return side


# --- the mechanical checks and the judges' prompts --------------------------------------------------------------

@dataclass(slots=True)
class Prepared:
    state: dict[str, Any]  # JSON builtins only: what assemble() needs besides the judges' outcomes
    coherence_prompt: str
    leakage_prompt: str


def prepare(text: str, side: TaskSide, *, judged: bool, reward: float | None, reward_source: str | None,
            where: str = "trajectory", trajectory_kind: str | None = None, events: int | None = None) -> Prepared:
    """Run ADV-3's patterns and ADV-4's overlap over ``text`` (one pass over the haystack) and build both judges'
    prompts. ``judged``: judges are meant to run (no ``--no-judge``; in pytest: ``--trajaudit-judge`` given).
    ``events``: how many events the plugin's loader read from the trajectory (0: nothing to audit, an issue).
    Every issue besides :data:`ISSUE_NO_MATERIAL` (no events, strings the scan could not decode) is a gap in what
    was checked: :func:`verdict_of` never passes it."""
    mat = side.material
    overlap, ms, gaps = scan(text, side.matcher, MENTION_RX, side.instruction, where)
    mentions = ms.found
    loaded = mat.loaded
    issues = [] if loaded else [ISSUE_NO_MATERIAL]
    if events == 0:
        issues.append(ISSUE_NO_EVENTS)
    issues += gaps
    clipped, judge_trunc = judging.clip_trajectory(text)
    priv, priv_trunc = judging.privileged_copy([(f.rel, f.text) for f in loaded])
    state: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "task_dir": str(mat.task_dir) if mat.task_dir else None,
        "privileged_roots": list(side.layout.privileged_roots),
        "layout_source": side.layout.source,
        "excluded_directory_names": list(side.layout.excluded_directory_names),
        "privileged_files": [f.rel for f in loaded],
        "privileged_bytes": mat.total_bytes,
        "privileged_lines": len(side.matcher.lines),
        "public_lines_excluded": side.public_lines_excluded,
        "privileged_notes": mat.notes[:100],
        "material_loaded": bool(loaded),
        "issues": issues,
        "trajectory_format": trajectory_kind,
        "trajectory_chars": len(text),
        "reward": reward,
        "reward_source": reward_source if reward is not None else None,
        "no_judge": not judged,
        "judge_input_truncated": judge_trunc,
        "privileged_input_truncated": priv_trunc,
        "mechanical": {
            "advisor_mentions": [{"pattern": m.label, "match": quote(m.match, 80), "quote": quote(m.quote, 160)}
                                 for m in mentions],
            "n_advisor_mentions": ms.count,
            "mentions_quoting_public_instruction": ms.quoted,
            "verbatim_privileged_lines": overlap.quotes(),
            "verbatim_privileged_sources": [f"{ln.source}:{ln.lineno}" for ln in overlap.lines],
            "n_verbatim_privileged_lines": len(overlap.lines),
        },
    }
    state["mechanical"]["hit"] = bool(mentions or overlap.lines)
    return Prepared(state, judging.coherence_prompt(side.instruction, clipped), judging.leakage_prompt(priv, clipped))


def judge_requests(prep: Prepared) -> dict[str, Any]:
    """The two :class:`~pytest_trajaudit.judges.JudgeRequest` objects, by judge name."""
    from ..judges import JudgeRequest

    return {"coherence": JudgeRequest("coherence", prep.coherence_prompt, judging.COHERENCE_SCHEMA,
                                      judging.COHERENCE_SYSTEM),
            "leakage": JudgeRequest("leakage", prep.leakage_prompt, judging.LEAKAGE_SCHEMA, judging.LEAKAGE_SYSTEM)}


# --- verdict and checks -----------------------------------------------------------------------------------------

def _not_run() -> dict[str, Any]:
    return judging.outcome("coherence", None, status="not_run")


def verdict_of(state: dict[str, Any], coherence: dict[str, Any], leakage: dict[str, Any]) -> tuple[str, list[str]]:
    mech = state["mechanical"]
    hits = [f"mention of {m['pattern']}: {m['quote']}" for m in mech["advisor_mentions"]]
    hits += [f"verbatim privileged line ({src}): {q}"
             for q, src in zip(mech["verbatim_privileged_lines"], mech["verbatim_privileged_sources"], strict=False)]
    probs = [p for o in (coherence, leakage) if o["status"] == "completed" for p in o["problems"]]
    verdict, reasons = advisor_verdict(
        mechanical_hits=hits, judge_problems=probs, material_loaded=state["material_loaded"],
        no_judge=state["no_judge"],
        judges_completed=coherence["status"] == "completed" and leakage["status"] == "completed")
    gaps = scan_gaps(state)
    if verdict in ("pass", "pass_mechanical_only") and gaps:
        return "inconclusive", gaps  # part of the trajectory was not checked: never a pass
    return verdict, reasons


def scan_gaps(state: dict[str, Any]) -> list[str]:
    """The issues that leave part of the trajectory unchecked (every issue but no privileged material)."""
    return [str(i) for i in state.get("issues") or [] if i != ISSUE_NO_MATERIAL]


def _judge_gap(name: str, o: dict[str, Any], state: dict[str, Any]) -> tuple[str, str]:
    """(status, evidence) of a check whose judge gave no usable answer."""
    if state["no_judge"]:
        return "N/A", f"needs the {name} judge; judges are off (pytest: --trajaudit-judge MODEL; trajaudit " \
                      "audit: without --no-judge)"
    if o["status"] == "failed":
        return "WARN", f"inconclusive: the {name} judge failed: {o['error']}"
    if o["status"] == "not_configured":
        return "WARN", f"inconclusive: the {name} judge did not run: {o['error'] or 'no judge endpoint configured'}"
    return "WARN", f"inconclusive: the {name} judge did not run"


def coherence_check(state: dict[str, Any], coherence: dict[str, Any] | None = None,
                    leakage: dict[str, Any] | None = None) -> tuple[str, str]:
    """(status, evidence) of the coherence check: the coherence judge's ``coherent``."""
    coh = coherence or _not_run()
    if coh["status"] != "completed":
        return _judge_gap("coherence", coh, state)
    ans = coh["answer"]
    note = f": {quote(ans['notes'], 300)}" if ans.get("notes") else ""
    if not ans["coherent"]:
        return "FAIL", f"the coherence judge ({coh['model']}) says the trajectory does not read like one solver{note}"
    return "PASS", f"the coherence judge ({coh['model']}) says it reads like one solver working the problem"


def direction_check(state: dict[str, Any], coherence: dict[str, Any] | None = None,
                    leakage: dict[str, Any] | None = None) -> tuple[str, str]:
    """(status, evidence) of the direction-change check: the coherence judge's unsupported direction changes."""
    coh = coherence or _not_run()
    if coh["status"] != "completed":
        return _judge_gap("coherence", coh, state)
    changes = coh["answer"]["unsupported_direction_changes"]
    if changes:
        shown = "; ".join(quote(c, 200) for c in changes[:5])
        return "FAIL", f"{len(changes)} unsupported direction change(s) ({coh['model']}): {shown}" + (
            f" (+{len(changes) - 5})" if len(changes) > 5 else "")
    return "PASS", f"no unsupported direction change ({coh['model']})"


def mention_check(state: dict[str, Any], coherence: dict[str, Any] | None = None,
                  leakage: dict[str, Any] | None = None) -> tuple[str, str]:
    """(status, evidence) of the mention check: the mechanical patterns, then the leakage judge's
    ``mentions_advisor``."""
    leak = leakage or _not_run()
    mech = state["mechanical"]
    ms = mech["advisor_mentions"]
    if ms:
        shown = "; ".join(f"{m['pattern']}: {m['quote']!r}" for m in ms[:3])
        return "FAIL", f"{mech['n_advisor_mentions']} mention(s) of an advisor or privileged artifact: {shown}" + (
            f" (+{len(ms) - 3})" if len(ms) > 3 else "")
    if leak["status"] == "completed" and leak["answer"]["mentions_advisor"]:
        items = "; ".join(quote(x, 160) for x in leak["answer"]["leaked_items"][:3])
        return "FAIL", f"the leakage judge ({leak['model']}) found a mention of an advisor or privileged " \
                       f"artifact" + (f": {items}" if items else "")
    gaps = scan_gaps(state)
    if gaps:
        return "WARN", "inconclusive: no mention found, but " + "; ".join(gaps)
    if leak["status"] == "completed":
        return "PASS", f"no mention of an advisor (patterns and the leakage judge, {leak['model']})"
    if state["no_judge"]:
        return "PASS", "no mention of an advisor (mechanical patterns only: no judge)"
    return _judge_gap("leakage", leak, state)


def overlap_check(state: dict[str, Any], coherence: dict[str, Any] | None = None,
                  leakage: dict[str, Any] | None = None) -> tuple[str, str]:
    """(status, evidence) of the privileged-overlap check: verbatim privileged lines, then the leakage judge's
    near-verbatim view."""
    leak = leakage or _not_run()
    mech = state["mechanical"]
    lines = mech["verbatim_privileged_lines"]
    if lines:
        shown = "; ".join(f"{src}: {q!r}" for q, src in
                          zip(lines[:3], mech["verbatim_privileged_sources"][:3], strict=False))
        return "FAIL", f"{len(lines)} privileged line(s) verbatim in the trajectory: {shown}" + (
            f" (+{len(lines) - 3})" if len(lines) > 3 else "")
    if leak["status"] == "completed":
        ans = leak["answer"]
        if ans["suspicious_privileged_overlap"] or (ans["leaked_items"] and not ans["mentions_advisor"]):
            items = "; ".join(quote(x, 160) for x in ans["leaked_items"][:3])
            why = "suspicious overlap with" if ans["suspicious_privileged_overlap"] else \
                "leaked items (neither flag set) from"
            return "FAIL", f"the leakage judge ({leak['model']}) found {why} the privileged material" + (
                f": {items}" if items else "")
    gaps = scan_gaps(state)
    if gaps:
        return "WARN", "inconclusive: no privileged line found verbatim, but " + "; ".join(gaps)
    if not state["material_loaded"]:
        return "WARN", f"inconclusive: {ISSUE_NO_MATERIAL} (roots {', '.join(state['privileged_roots']) or 'none'}" \
                       f", {state['layout_source']} layout)"
    if leak["status"] == "completed":
        return "PASS", f"no privileged line verbatim ({state['privileged_lines']} lines of ≥ {LINE_MIN} " \
                       f"characters) and no overlap found by the leakage judge ({leak['model']})"
    if state["no_judge"]:
        return "PASS", f"no privileged line verbatim ({state['privileged_lines']} lines of ≥ {LINE_MIN} " \
                       "characters; mechanical only: no judge)"
    return _judge_gap("leakage", leak, state)


def verification_check(state: dict[str, Any], coherence: dict[str, Any] | None = None,
                       leakage: dict[str, Any] | None = None) -> tuple[str, str]:
    """(status, evidence) of the verification check: :func:`verification` of the state's reward."""
    return verification(state["reward"], state["reward_source"])


def verification(reward: float | None, source: str | None) -> tuple[str, str]:
    """ADV-5: the verifier's own verdict, read, never judged. PASS: reward ≥ 1.0; WARN: the verifier did not pass
    (information: it never changes the advisor verdict); N/A: no reward."""
    if reward is None:
        return "N/A", "no reward: result.json and verifier/reward.txt are missing or hold no number"
    if reward >= 1.0:
        return "PASS", f"the verifier passed: reward {reward:g} ({source})"
    return "WARN", f"the verifier did not pass: reward {reward:g} ({source})"


def assemble(state: dict[str, Any], coherence: dict[str, Any] | None = None,
             leakage: dict[str, Any] | None = None) -> dict[str, Any]:
    """The advisor audit: the state, both judges' outcomes, the verdict with its reasons, and every check, keyed by
    its code as the registry declares it (``principles/advisor.py``'s :data:`CHECKS`)."""
    from ..principles.advisor import CHECKS

    coh = coherence or _not_run()
    leak = leakage or _not_run()
    verdict, reasons = verdict_of(state, coh, leak)
    out = dict(state)
    out["verdict"] = verdict
    out["verdict_reasons"] = reasons
    out["judges"] = {"coherence": coh, "leakage": leak}
    out["checks"] = {code: dict(zip(("status", "evidence"), decide(state, coh, leak), strict=True))
                     for code, (_, decide) in CHECKS.items()}
    return out


def from_records(records: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The advisor audit rebuilt from the advisor items' records (their ``data``): the same :func:`assemble`. A
    judge whose items were not run is ``not_run``, so a partial selection never passes."""
    from ..principles.advisor import CHECKS

    recs = {c: r for c, r in records.items() if c in CHECKS and isinstance((r.get("data") or {}).get("advisor"), dict)}
    if not recs:
        return None
    state = next(iter(recs.values()))["data"]["advisor"]
    outs: dict[str, dict[str, Any] | None] = {"coherence": None, "leakage": None}
    for code, (judge, _) in CHECKS.items():  # each judge's outcome from the first of its checks that carries one
        if judge is None or outs[judge] is not None:
            continue
        o = (recs.get(code) or {}).get("data", {}).get("judge")
        if isinstance(o, dict) and o.get("status") in ("completed", "failed", "not_configured"):
            outs[judge] = o
    return assemble(state, outs["coherence"], outs["leakage"])


# --- the command's path: files of an attempt directory ---------------------------------------------------------

TRAJECTORY_LOOKUP = ("agent/trajectory.json", "agent/mini-swe-agent.trajectory.json", "trajectory.json")
_SKIP_WALK = {"advisor", ".git", "__pycache__", "node_modules"}
MAX_REWARD_FILE = 64 * 1024 * 1024


def trajectory_candidates(attempt_dir: Path) -> list[str]:
    """Every candidate trajectory file of the attempt directory that exists in any form (a symlink or FIFO too),
    relative to it: the file the plugin audits and every position of the layout's precedence list when the
    directory is a job by the discovery rules, then :data:`TRAJECTORY_LOOKUP`, then any ``*trajectory*.json``
    beneath it (shallowest first, then by path; ``advisor/`` and symlinked directories never searched)."""
    from ..discover.jobs import classify
    from ..loaders import candidates
    from ..loaders.job import audited_trajectory

    out: list[str] = []

    def add(path: Path) -> None:
        rel = os.path.relpath(path, attempt_dir)
        if not rel.startswith(".." + os.sep) and rel not in out:
            out.append(rel)

    ref = classify(attempt_dir)
    if ref is not None:
        audited = audited_trajectory(ref)
        if audited is not None:
            add(audited)
        for rel in candidates.positions(ref.dir, ref.layout):
            add(ref.dir / rel)
    for rel in TRAJECTORY_LOOKUP:
        if file_kind(attempt_dir, rel) != "missing":
            add(attempt_dir / rel)
    found: list[tuple[int, str]] = []
    for top, dirs, files in os.walk(attempt_dir, followlinks=False):
        rel_top = os.path.relpath(top, attempt_dir)
        depth = 0 if rel_top == "." else rel_top.count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if not (depth == 0 and d == "advisor") and d not in _SKIP_WALK - {"advisor"}
                         and not os.path.islink(os.path.join(top, d)))
        for f in files:
            if "trajectory" in f and f.endswith(".json") and file_kind(Path(top), f) != "missing":
                found.append((depth, f if rel_top == "." else os.path.join(rel_top, f)))
    for _, rel in sorted(found):
        add(attempt_dir / rel)
    return out


MAX_NAMED = 8  # candidate files named in the refusal
MAX_CANDIDATES = 8  # candidate trajectory files audited together; more is unusable input


def find_trajectories(attempt_dir: Path) -> list[Path]:
    """Every candidate trajectory file of the attempt directory (:func:`trajectory_candidates`), the plugin's pick
    first. All of them are audited together: the run being audited writes the attempt directory and could plant a
    decoy that the precedence list prefers (a ``trajectory/acp_trajectory.jsonl`` holding nothing), so no file
    stands in for the others (a Harbor Claude Code trial has both ``agent/claude-code.txt`` and
    ``agent/trajectory.json``: the same run twice). None is unusable input, and so is a symlink or special file
    at any candidate position."""
    rels = trajectory_candidates(attempt_dir)
    if not rels:
        raise UnusableInput(attempt_dir, "no trajectory found (looked for the layout's trajectory files, "
                            + ", ".join(TRAJECTORY_LOOKUP) + " and any *trajectory*.json beneath it)")
    if len(rels) > MAX_CANDIDATES:
        shown = ", ".join(rels[:MAX_NAMED]) + f" (+{len(rels) - MAX_NAMED})"
        raise UnusableInput(attempt_dir, f"{len(rels)} candidate trajectory files ({shown}), more than "
                            f"{MAX_CANDIDATES}: audit the run's own with --trajectory FILE")
    out = []
    for rel in rels:
        kind = file_kind(attempt_dir, rel)
        if kind == "symlink":
            raise UnusableInput(attempt_dir / rel, "is a symlink (never followed)")
        if kind != "file":
            raise UnusableInput(attempt_dir / rel, "not a regular file (never opened)")
        out.append(attempt_dir / rel)
    return out


def symlinked_component(path: Path) -> Path | None:
    """The first existing component of ``path`` (made absolute, not resolved) that is a symlink, or None."""
    cur = Path(os.path.abspath(path))
    for p in [*reversed(cur.parents), cur]:
        try:
            if stat.S_ISLNK(os.lstat(p).st_mode):
                return p
        except OSError:
            return None  # missing from here on (or unreadable: the read that follows names it)
    return None


def read_trajectory(path: Path, max_bytes: int | None = None) -> tuple[str, str, int]:
    """(decoded text, kind json | jsonl | text, number of events), read once as bytes without following a symlink,
    decoded strictly (safeio) and loaded by the plugin's own loaders (``loaders/sniff.py``: format detection by
    shape, never by name): empty, undecodable, starting like JSON without being one document or JSON Lines, named
    ``.json``/``.jsonl`` without being JSON, of no format a loader recognises, malformed for its format or with
    more events than the events limit is unusable input."""
    budget = Budget() if max_bytes is None else Budget(max_bytes, max_bytes)
    data = read_bytes(path.parent, path.name, budget)
    text = decode_text(data, path)
    del data
    parsed = parse_text(text, path)
    if parsed.kind == "text" and path.name.lower().endswith((".json", ".jsonl")):
        # as the plugin's job loader: a JSON file that is not JSON is never read as a plain-text transcript
        first = text.lstrip().split("\n", 1)[0]
        raise UnusableInput(path, f"named .json/.jsonl but not JSON: it starts with {first[:60]!r}")
    traj = load_trajectory(parsed, path)
    n = len(traj.events)
    if n > max_events():
        raise UnusableInput(path, f"too many events ({n} > limit {max_events()})")
    return text, parsed.kind, n


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _result_reward(doc: Any) -> float | None:
    if not isinstance(doc, dict):
        return None
    vr = doc.get("verifier_result")
    for holder in (vr.get("rewards") if isinstance(vr, dict) else None, doc.get("rewards"), doc):
        if isinstance(holder, dict):
            r = _number(holder.get("reward"))
            if r is not None:
                return r
    return None


def read_reward(attempt_dir: Path) -> tuple[float | None, str | None]:
    """ADV-5's reward: Harbor's ``result.json`` (``verifier_result.rewards.reward``, ``rewards.reward`` or
    ``reward``), else ``verifier/reward.txt`` (one number). A missing file, or content that is not JSON or a
    number, gives None; a file that exists but cannot be read (a symlink, a special file, no permission) is
    unusable input. Both files are read when present."""
    values: dict[str, float | None] = {}
    for rel in ("result.json", "verifier/reward.txt"):
        kind = file_kind(attempt_dir, rel)
        if kind == "missing":
            continue
        if kind == "symlink":
            raise UnusableInput(attempt_dir / rel, "exists but cannot be read: a symlink (never followed)")
        if kind != "file":
            raise UnusableInput(attempt_dir / rel, "exists but cannot be read: not a regular file")
        data = read_bytes(attempt_dir, rel, Budget(MAX_REWARD_FILE, MAX_REWARD_FILE))
        try:
            text = decode_text(data, attempt_dir / rel)
        except UnusableInput:
            values[rel] = None
            continue
        if rel == "result.json":
            try:  # held to the events limit before anything is built, as every reader of the plugin
                values[rel] = _result_reward(loads_bounded(text, attempt_dir / rel))
            except orjson.JSONDecodeError:
                values[rel] = None
        else:
            try:
                values[rel] = _number(float(text.strip()))
            except ValueError:
                values[rel] = None
    for rel in ("result.json", "verifier/reward.txt"):
        if values.get(rel) is not None:
            return values[rel], rel
    return None, None


def file_sha256(path: Path, max_bytes: int | None = None) -> str:
    """SHA-256 of a file's bytes, read without following a symlink and within the trajectory size limit: ties an
    audit to the exact trajectory it judged (``trajaudit summarize`` checks it)."""
    import hashlib

    budget = Budget() if max_bytes is None else Budget(max_bytes, max_bytes)
    return hashlib.sha256(read_bytes(path.parent, path.name, budget)).hexdigest()


def layout_for(task_dir: Path | None, privileged_roots: Sequence[str] | None) -> Layout:
    """The privileged layout from the flag or the task directory's own manifest (never from the attempt)."""
    return resolve_layout(task_dir, list(privileged_roots) if privileged_roots else None)


_URL = re.compile(r"^https?://[^\s/?#]+(?::\d+)?(?:/[^\s]*)?$", re.I)


def endpoint_error(base_url: str | None) -> str | None:
    """Why ``base_url`` is not a usable judge endpoint (an http(s) URL with a host), or None."""
    if base_url is None:
        return None
    if not _URL.match(base_url.strip()):
        return f"invalid judge endpoint {base_url!r}: expected an http:// or https:// URL with a host"
    return None


def run_audit(attempt_dir: str | Path, task_dir: str | Path, *, trajectory: str | Path | None = None,
              privileged_roots: Sequence[str] | None = None, judge: Any = None, no_judge: bool = False,
              judge_unconfigured: str | None = None) -> dict[str, Any]:
    """Audit one attempt (the ``trajaudit audit`` command without its output handling). ``judge``: a
    :class:`~pytest_trajaudit.judges.JudgeConfig` (its first model judges), or None. ``judge_unconfigured``: why no
    judge could be configured (the judges are then ``not_configured``, never a pass). Raises
    :class:`~pytest_trajaudit.model.UnusableInput` (and its subclass
    :class:`~pytest_trajaudit.loaders.task.PrivilegedUnreadable`) for unusable input: there is no verdict then."""
    attempt = Path(os.path.realpath(attempt_dir))
    task = Path(os.path.realpath(task_dir))
    if not os.path.isdir(attempt):
        raise UnusableInput(attempt_dir, "--attempt-dir is not an existing directory")
    if not os.path.isdir(task):
        raise UnusableInput(task_dir, "--task-dir is not an existing directory")
    if judge is not None and not no_judge:
        why = endpoint_error(getattr(judge, "base_url", None))
        if why:
            raise UnusableInput("--judge-base-url", why)
    trajs = [Path(os.path.abspath(trajectory))] if trajectory is not None else find_trajectories(attempt)
    for traj in trajs:
        link = symlinked_component(traj.parent)
        if link is not None:
            raise UnusableInput(traj, f"its directory {link} is a symlink (never followed): pass the real path")
    layout = layout_for(task, privileged_roots)
    side = task_side(task, layout)
    reward, source = read_reward(attempt)
    # every candidate is read and loaded (one of no known format is unusable input) and scanned as one text
    read = [read_trajectory(t) for t in trajs]
    text = "\n".join(r[0] for r in read)
    kind, events = read[0][1], sum(r[2] for r in read)
    traj = trajs[0]
    prep = prepare(text, side, judged=not no_judge, reward=reward, reward_source=source,
                   where=", ".join(str(t) for t in trajs), trajectory_kind=kind, events=events)
    del text, read
    coh = leak = None
    if not no_judge:
        if judge is None or not getattr(judge, "models", None):
            gap = judge_unconfigured or "no judge endpoint configured (--judge-model / --judge-base-url)"
            coh = judging.outcome("coherence", None, status="not_configured", error=gap)
            leak = judging.outcome("leakage", None, status="not_configured", error=gap)
        else:
            from ..judges import submit

            model = judge.models[0]
            reqs = judge_requests(prep)
            futs = {k: submit(model, r, judge) for k, r in reqs.items()}
            coh = judging.outcome("coherence", futs["coherence"].result())
            leak = judging.outcome("leakage", futs["leakage"].result())
    audit = assemble(prep.state, coh, leak)
    audit = {"attempt_dir": str(attempt), "trajectory": str(traj), "trajectory_sha256": file_sha256(traj),
             **({"trajectories": [{"path": str(t), "sha256": file_sha256(t)} for t in trajs]} if len(trajs) > 1
                else {}), **audit}
    return audit
