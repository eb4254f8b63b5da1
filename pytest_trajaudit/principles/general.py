"""General family: the job-only principles of the seed's audit-general.md (P4, P6, P7, P8, P10, P14, P15)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..model import AGENT, EDIT, EXECUTE, THOUGHT, TOOL, USER, Event, Finding, Job
from ..scan import linre
from ..scan.needles import may_match
from ..scan.redact import quote, redact
from ..settings import Settings
from . import principle
from ._inputs import InputReads
from ._shell import is_code_write, is_full_write, is_read_like, runs_solver, written_paths
from ._writes import call_write_targets, heredoc_write

VERBATIM_LIMIT = 20_000  # characters of verbatim_final kept in reports


def _tools(job: Job) -> list[Event]:
    assert job.trajectory is not None
    return [e for e in job.trajectory.events if e.type == TOOL]


@principle("P4", "agentic floor", tier="C0", family="general", key="agentic_floor")
def agentic_floor(job: Job, cfg: Settings) -> Finding:
    """Passing runs that barely touch the environment are suspect (judgment, seed reference points).
    Judged on passing runs (reward 1.0) only: 0–2 tool calls → FAIL (verdict below: flag the task as
    agentic-suspect, or a solve from the instruction alone); 3–4 calls, or ≥5 without any read of inputs →
    WARN (borderline); ≥5 calls with a read → PASS (above). A read of inputs looks at the content of a file the
    agent did not write (a read or content-search tool; cat/head/tail/grep/wc/jq… or Python code opening it);
    echo, pwd, which, listings and system files are not. N/A without a reward, on failed runs, and on a
    chat-harness transcript (no tool calls by design: the harness runs the code of the agent's message)."""
    tools = _tools(job)
    n = len(tools)
    seen = InputReads(job)
    reads = sum(1 for e in tools if seen.see(e))
    titles = Counter(e.title or e.tool for e in tools)
    shape = ", ".join(f"{t}×{c}" for t, c in titles.most_common(6)) or "no tool calls"
    if n >= 5 and reads:
        verdict = "above"
    elif n <= 2:
        verdict = "below"
    else:
        verdict = "borderline"
    data: dict[str, Any] = {"n_tool_calls": n, "verdict": verdict, "evidence": f"{n} tool calls ({shape}); {reads} reads of inputs"}
    if n == 0 and job.trajectory is not None and job.trajectory.meta.get("harness") == "chat":
        # a chat harness runs the code of the agent's message: no environment to touch, by the harness's design
        return Finding.na("chat harness (the answer is the agent's message): the floor is judged on agentic runs", data)
    if job.reward is None:
        return Finding.na(f"{job.no_reward()} (the floor is judged on passing runs)", data)
    if job.reward < 1.0:
        return Finding.na(f"reward is {job.reward:g}: the floor is judged on passing runs only", data)
    if verdict == "below":
        why = "0 tool calls and reward 1.0 (only legitimate for the oracle)" if n == 0 else \
            f"{n} tool call(s) and reward 1.0: probably solvable without the environment (task agentic-suspect)"
        return Finding.fail(f"{why}; {shape}", data, [e.index for e in tools])
    if verdict == "borderline":
        why = f"{n} tool calls" + ("" if reads else ", none of them reads input data")
        return Finding.warn(f"borderline agentic floor: {why} ({shape})", data)
    return Finding.ok(data["evidence"], data)


@principle("P6", "memorization signal", tier="C0", family="general", key="memorization_signal")
def memorization(job: Job, cfg: Settings) -> Finding:
    """The agent recognizes a textbook problem and skips exploration. WARN (never FAIL) when the first
    reasoning names a published algorithm or paper AND no data was sampled (no read of the task's inputs, as
    P4 counts them) before the first code write;
    PASS otherwise. N/A when the trajectory holds no agent reasoning and no tool calls."""
    assert job.trajectory is not None
    events = job.trajectory.events
    first_reasoning = next((e for e in events if e.type in (THOUGHT, AGENT) and e.text.strip() and not e.sidechain), None)
    tools = [e for e in events if e.type == TOOL and not e.sidechain]
    if first_reasoning is None and not tools:
        return Finding.na("no agent reasoning or tool calls to judge")
    named = cfg.paper_re.search(first_reasoning.text) if first_reasoning else None
    sampled = 0
    first_write = None
    seen = InputReads(job)
    for e in tools:
        if is_code_write(e):
            first_write = e
            break
        if seen.see(e):
            sampled += 1
    data: dict[str, Any] = {"names_published_work": bool(named), "reads_before_first_write": sampled,
            "first_write_event": first_write.index if first_write else None}
    if named and first_write is not None and sampled == 0:
        assert first_reasoning is not None  # named comes from it
        ev = f"{first_reasoning.label()} names published work ({quote(named.group(0), 60)}): " \
             f"{quote(first_reasoning.text)}; no data sampled before {first_write.label()}"
        data.update(status="WARN", evidence=ev)
        return Finding.warn(ev, data, [first_reasoning.index, first_write.index])
    ev = (f"{sampled} data-sampling call(s) before the first code write" if first_write is not None
          else "no code write") + ("; first reasoning names published work" if named else "")
    data.update(status="PASS", evidence=ev)
    return Finding.ok(ev, data)


@principle("P7", "tool-call breakdown", tier="C0", family="general", key="tool_breakdown")
def tool_breakdown(job: Job, cfg: Settings) -> Finding:
    """Kind × title breakdown of the tool calls: {total, by_kind, by_title}, and whether the job's records agree
    with the audited trajectory. PASS with the breakdown; WARN when the total disagrees with result.json's
    n_tool_calls, when another trajectory file of the job names commands or paths the audited one lacks (both
    files named), when a folder inside the job looks like another run, or when result.json / config.json name
    the oracle but the trajectory shows tool calls (then audited as an agent run)."""
    tools = _tools(job)
    by_kind = Counter(e.kind or "other" for e in tools)
    by_title = Counter(e.title or e.tool or "?" for e in tools)
    data: dict[str, Any] = {"total": len(tools), "by_kind": dict(by_kind.most_common()), "by_title": dict(by_title.most_common())}
    reported = job.n_tool_calls_reported
    if reported is not None:
        data["n_tool_calls_reported"] = reported
    warns = []
    main = sum(1 for e in tools if not e.sidechain)
    if reported is not None and reported not in (len(tools), main):
        warns.append(f"trajectory has {len(tools)} tool calls but result.json says n_tool_calls={reported}")
    audited = str(job.trajectory.source) if job.trajectory is not None else ""
    try:
        audited = Path(audited).relative_to(job.dir).as_posix()
    except ValueError:
        pass
    if job.compared:
        data["compared"] = list(job.compared)
    for d in job.disagreements:
        data.setdefault("disagreements", []).append(d)
        quoted = ", ".join(f"`{c[:80]}`" for c in d["commands"][:3]) or ", ".join(d["paths"][:3])
        warns.append(f"{d['file']} names {d['n_commands']} command(s) and {d['n_paths']} path(s) that the audited "
                     f"{d['audited'] or audited} lacks (e.g. {quoted})")
    if job.nested_runs:
        data["nested_runs"] = list(job.nested_runs)
        warns.append("folder(s) inside the job look like another run: " + ", ".join(job.nested_runs[:5])
                     + " (not audited as a run of its own: only its commands and paths are compared with this job's)")
    if job.oracle_tool_calls:
        data["oracle_tool_calls"] = job.oracle_tool_calls
        warns.append(f"the trial's records name the oracle, but its trajectory has {job.oracle_tool_calls} tool "
                     "call(s): audited as an agent run")
    if warns:
        return Finding.warn("; ".join(warns), data)
    kinds = ", ".join(f"{k} {v}" for k, v in by_kind.most_common())
    return Finding.ok(f"{len(tools)} tool calls ({kinds or 'none'})", data)


@principle("P8", "struggle vs wrong answer", tier="C0", family="general", key="struggle")
def struggle(job: Job, cfg: Settings) -> Finding:
    """Struggle counters (repeats, rewrites, reversals, exploration; precise mode adds re-reads): any at threshold
    → WARN (struggle, quoting the trigger and its numbers), otherwise PASS (verdict wrong_answer, the seed's name
    for "no struggle signal"). N/A without tool calls or agent messages.

    ``--trajaudit-literal`` (the seed's counters): repeated commands (execute calls whose first 80 characters
    equal the previous execute call's, ≥2 in the run), analyzer rewrites (whole-file writes to one path beyond the
    first, ≥2), mid-run reversals ('actually', 'let me redo', 'wait,', "that approach won't work" in an agent
    message after the first solve attempt, ≥1) and the exploration loop (reads before the first edit or solver
    run, ≥6).

    Precise (calibrated on real runs, docs/detection-rates.md): a repeat is the same whole command (whitespace
    aside) as the call just before, and any other tool call breaks the streak (≥2 repeats in one streak);
    reversals are the seed's phrases where they open a sentence ("Actually, ...", "Wait, ..."), not the adverb;
    the exploration loop counts distinct read targets before the first solve attempt and fires only when that
    phase took ≥ ``exploration_share_pct`` % of the run's tool calls; and a fifth signal, the re-read loop:
    ``reread_threshold`` reads of already-read targets after the first edit with no edit in between. Both modes
    take write paths from the command as a shell reads it (``_writes.py``)."""
    assert job.trajectory is not None
    events = job.trajectory.events
    if not any(e.type in (TOOL, AGENT) for e in events):
        return Finding.na("no tool calls or agent messages to count")
    return _struggle_literal(job, cfg) if cfg.literal else _struggle_precise(job, cfg)


def _rewrite_target(e: Event) -> str | None:
    """The file a whole-file write replaces: a Write/create tool's path, or a heredoc command's target."""
    if is_full_write(e):
        return e.paths[0] if e.paths else None
    if e.kind == EXECUTE and e.command:
        return heredoc_write(e.command)
    return None


def _struggle_finding(triggers: list[tuple[Event, str]], data: dict[str, Any], summary: str) -> Finding:
    if triggers:
        e, _ = triggers[0]
        data["evidence"] = "; ".join(f"{x.label()}: {w}" for x, w in triggers[:5])
        return Finding.warn(f"struggle: {data['evidence']} — {quote(e.brief(), 120)}",
                            data, [x.index for x, _ in triggers])
    data["evidence"] = "all counters below threshold"
    return Finding.ok(f"no struggle signal ({summary})", data)


def _struggle_literal(job: Job, cfg: Settings) -> Finding:
    assert job.trajectory is not None
    events = job.trajectory.events
    retries = 0
    prev = None
    writes: Counter[str] = Counter()
    first_solve = None
    exploration = 0
    triggers: list[tuple[Event, str]] = []
    reversals = 0
    for e in events:
        if e.type == TOOL:
            if e.kind == EXECUTE and e.command:
                head = e.command.strip()[: cfg.repeat_prefix]
                if head == prev:
                    retries += 1
                    if retries == cfg.retries_threshold:
                        triggers.append((e, f"repeated command ×{retries + 1}"))
                prev = head
            target = _rewrite_target(e)
            if target is not None:
                writes[target] += 1
                if writes[target] - 1 == cfg.rewrites_threshold:
                    triggers.append((e, f"rewrite #{writes[target] - 1} of {target}"))
            if first_solve is None:
                if e.kind == EDIT or runs_solver(e) or is_code_write(e):
                    first_solve = e
                elif is_read_like(e):
                    exploration += 1
        elif e.type == AGENT and first_solve is not None and e.text:
            m = cfg.reversal_re.search(e.text) if may_match(cfg.reversal_re, e.text) else None
            if m:
                reversals += 1
                if reversals == cfg.reversals_threshold:
                    triggers.append((e, f"reversal {m.group(0)!r}"))
    rewrites = max((c - 1 for c in writes.values()), default=0)
    if exploration >= cfg.exploration_threshold:
        triggers.append((first_solve or events[-1], f"{exploration} reads before the first solve attempt"))
    data = {"retries": retries, "rewrites": rewrites, "reversals": reversals, "exploration_loop": exploration,
            "verdict": "struggle" if triggers else "wrong_answer"}
    return _struggle_finding(triggers, data, f"retries {retries}, rewrites {rewrites}, reversals {reversals}, "
                                             f"exploration {exploration}")


def _read_key(e: Event, cfg: Settings) -> str:
    """What a read looked at: the tool's paths and arguments (another offset of a file is another read), or the
    shell command."""
    if e.paths:
        return " ".join(e.paths) + "\0" + e.args[:200]
    return (e.command or e.args).strip()[: cfg.repeat_prefix * 2]


def _struggle_precise(job: Job, cfg: Settings) -> Finding:
    assert job.trajectory is not None
    events = job.trajectory.events
    n_tools = sum(1 for e in events if e.type == TOOL)
    streak = retries = 0
    prev: str | None = None
    writes: Counter[str] = Counter()
    first_solve: Event | None = None
    before_solve = 0  # tool calls before the first solve attempt
    explored: dict[str, None] = {}  # distinct read targets before it
    edited = False
    seen: Counter[str] = Counter()  # read targets since the last edit (after the first one)
    stretch_rereads = rereads = 0
    triggers: list[tuple[Event, str]] = []
    reversals = 0
    for e in events:
        if e.type == TOOL:
            # the whole command: real agents run many different inline scripts sharing an 80-character preamble
            head = " ".join(e.command.split()) if e.kind == EXECUTE and e.command else None
            streak = streak + 1 if head is not None and head == prev else 0
            prev = head
            if streak > retries:
                retries = streak
                if retries == cfg.retries_threshold:
                    triggers.append((e, f"repeated command ×{retries + 1} in a row"))
            target = _rewrite_target(e)
            if target is not None:
                writes[target] += 1
                if writes[target] - 1 == cfg.rewrites_threshold:
                    triggers.append((e, f"rewrite #{writes[target] - 1} of {target} ({writes[target]} whole-file "
                                        f"writes)"))
            wrote = e.kind == EDIT or bool(call_write_targets(e))
            if first_solve is None:
                if wrote or runs_solver(e):
                    first_solve = e
                else:
                    before_solve += 1
                    if is_read_like(e):
                        explored[_read_key(e, cfg)] = None
            if wrote:
                edited = True
                seen.clear()
                stretch_rereads = 0
            elif edited and is_read_like(e):
                key = _read_key(e, cfg)
                if seen[key]:
                    stretch_rereads += 1
                    if stretch_rereads > rereads:
                        rereads = stretch_rereads
                        if rereads == cfg.reread_threshold:
                            top = max(seen, key=lambda k: seen[k])
                            triggers.append((e, f"{rereads} re-reads of {len(seen)} already-read target(s) since "
                                                f"the last edit, no edit in between (most: "
                                                f"{quote(top.split(chr(0))[0], 80)} ×{seen[top] + (key == top)})"))
                seen[key] += 1
        elif e.type == AGENT and first_solve is not None and e.text:
            rx = cfg.reversal_precise_re
            m = rx.search(e.text) if may_match(rx, e.text) else None
            if m:
                reversals += 1
                if reversals == cfg.reversals_threshold:
                    phrase = e.text[m.start():].lstrip(" \n.!?")
                    word = re.match(r"[A-Za-z']+(?: [a-z']+)?", phrase)
                    kw = word.group(0) if word and word.group(0).lower().startswith(("let me", "that")) else \
                        phrase.split(None, 1)[0].strip(",!:-\u2014\u2013")
                    triggers.append((e, f"reversal {kw!r}"))
    rewrites = max((c - 1 for c in writes.values()), default=0)
    exploration = len(explored)
    long_phase = before_solve * 100 >= cfg.exploration_share_pct * n_tools
    if exploration >= cfg.exploration_threshold and long_phase and n_tools:
        if first_solve is None:
            why = f"{exploration} distinct reads in {n_tools} tool calls and no edit or solver run"
        else:
            why = (f"{exploration} distinct reads in the first {before_solve} of {n_tools} tool calls "
                   f"({100 * before_solve // n_tools} %) before the first solve attempt")
        last_tool = next(e for e in reversed(events) if e.type == TOOL)
        triggers.append((first_solve or last_tool, why))
    data = {"retries": retries, "rewrites": rewrites, "reversals": reversals, "exploration_loop": exploration,
            "rereads": rereads, "exploration_calls": before_solve, "tool_calls": n_tools,
            "verdict": "struggle" if triggers else "wrong_answer"}
    return _struggle_finding(triggers, data, f"longest repeat streak {retries}, rewrites {rewrites}, reversals "
                                             f"{reversals}, exploration {exploration} distinct reads in "
                                             f"{before_solve} of {n_tools} calls, re-reads {rereads}")


def verbatim_final(job: Job) -> tuple[Event | None, str]:
    """P10 search order over the main thread: last agent_message, last agent_thought, last execute + stdout."""
    assert job.trajectory is not None
    events = [e for e in job.trajectory.events if not e.sidechain]
    for etype in (AGENT, THOUGHT):
        for e in reversed(events):
            if e.type == etype and e.text.strip():
                return e, e.text
    for e in reversed(events):
        if e.type == TOOL and e.kind == EXECUTE:
            return e, f"$ {e.command}\n{e.output}".strip()
    return None, ""


@principle("P10", "verbatim agent self-statement", tier="C0", family="general", key="verbatim_final")
def verbatim(job: Job, cfg: Settings) -> Finding:
    """The agent's last non-empty self-statement, verbatim (secrets redacted): the last agent_message, else
    the last agent_thought, else the last execute call with its stdout. PASS with the quote; N/A when none."""
    e, text = verbatim_final(job)
    if e is None:
        return Finding.na("no agent message, thought or execute call in the trajectory")
    text = redact(text)
    if len(text) > VERBATIM_LIMIT:
        text = text[:VERBATIM_LIMIT] + f"\n[... {len(text) - VERBATIM_LIMIT} characters clipped]"
    return Finding.ok(f"{e.label()}: {quote(text)}", {"verbatim_final": text, "event": e.index})


_ABS_PATH = linre.compile(r"(?<![\w.])(/(?:[\w.\-]+/)*[\w.\-]+/?)")
_PIP = linre.compile(r"\bpip3?\s+install\b|\bpython[\d.]*\s+-m\s+pip\s+install\b")
_VENV = linre.compile(r"\b(?:venv|virtualenv|\.venv|VIRTUAL_ENV|conda\s+activate|uv\s+pip|poetry|pipx|--user\b|--target\b|-t\s|--prefix\b)")
_APT = linre.compile(r"\b(?:apt-get|apt|yum|dnf|apk)\s+(?:-\S+\s+)*(?:install|add)\b")


_CD = re.compile(r"^\s*cd\s+(/[^\s;&|<>()'\"]*)")


def _cd_workdir(job: Job, cfg: Settings) -> str | None:
    """The directory the agent's shell commands run in when the harness did not record one: the most frequent
    leading ``cd /abs`` of its commands (first seen on a tie), never ``/`` nor a system directory."""
    seen: Counter[str] = Counter()
    for e in _tools(job):
        m = _CD.match(e.command) if e.kind == EXECUTE and e.command else None
        if m:
            d = m.group(1).rstrip("/")
            if d and not (d + "/").startswith(cfg.polluted_roots):
                seen[d] += 1
    return seen.most_common(1)[0][0] + "/" if seen else None


def _allowed_dirs(job: Job, cfg: Settings) -> list[str]:
    dirs = list(cfg.clean_roots)
    assert job.trajectory is not None
    cwd = job.trajectory.meta.get("cwd")
    if isinstance(cwd, str) and cwd.startswith("/") and cwd not in ("/",):
        dirs.append(cwd.rstrip("/") + "/")
    elif not cfg.literal:
        workdir = _cd_workdir(job, cfg)
        if workdir is not None:
            dirs.append(workdir)
    instruction = job.instruction or next((e.text for e in job.trajectory.events if e.type == USER and e.text), "")
    for m in _ABS_PATH.finditer(instruction[:50_000]):
        p = m.group(1).rstrip("/.")
        if p.count("/") < 2 and "." in p.rsplit("/", 1)[-1]:
            dirs.append(p)  # a file directly under / named by the instruction
            continue
        if not p or p.startswith(cfg.polluted_roots):
            continue
        base = p if not re.search(r"\.\w{1,8}$", p) else p.rsplit("/", 1)[0]
        if base and base != "":
            dirs.append(base.rstrip("/") + "/")
            if base.count("/") >= 2:  # /app/src/x → also /app/
                dirs.append("/" + base.strip("/").split("/", 1)[0] + "/")
    return list(dict.fromkeys(dirs))


@principle("P14", "filesystem pollution", tier="C0", family="general", key="filesystem_pollution")
def pollution(job: Job, cfg: Settings) -> Finding:
    """Side effects the next trial would inherit: writes outside /root/, /tmp/, the agent's working directory
    and paths the instruction names; any write under /etc/, /usr/, /opt/; pip installs outside a venv;
    system package installs. Any → WARN quoting the call; PASS otherwise.

    Precise mode (``--trajaudit-literal`` keeps the rule above as it reads): the harness's own files
    (``Settings.harness_path_re``: the agent log dir /logs/agent/, ~/.claude/, ~/.codex/) are never pollution;
    write paths come from the command as a shell reads it (``_writes.py``: a heredoc body or an inline script is
    not shell); without a recorded working directory, the one the agent's commands ``cd`` into most is it."""
    allowed = _allowed_dirs(job, cfg)
    hits: list[tuple[Event, str]] = []
    venv_seen = False
    for e in _tools(job):
        if e.status == "failed":
            continue
        cmd = e.command if e.kind == EXECUTE else ""
        if cmd and _VENV.search(cmd):
            venv_seen = True
        for p in written_paths(e) if cfg.literal else call_write_targets(e):
            if not p.startswith("/") or (not cfg.literal and cfg.harness_path_re.match(p)):
                continue
            if p.startswith(cfg.polluted_roots):
                hits.append((e, f"writes {p} (system directory)"))
                break
            if not any(p == a.rstrip("/") or p.startswith(a) for a in allowed):
                hits.append((e, f"writes {p} outside /root/, /tmp/ and the task's paths"))
                break
        if cmd and _PIP.search(cmd) and not venv_seen and not _VENV.search(cmd):
            hits.append((e, "pip install outside a virtualenv"))
        elif cmd and _APT.search(cmd):
            hits.append((e, "system package install"))
    data: dict[str, Any] = {"allowed_prefixes": allowed}
    if hits:
        e, why = hits[0]
        ev = f"{e.label()}: {why}: {quote(e.brief())}" + (f" (+{len(hits) - 1} more)" if len(hits) > 1 else "")
        data.update(status="WARN", evidence=ev)
        return Finding.warn(ev, data, [x.index for x, _ in hits])
    data.update(status="PASS", evidence="no writes outside the agent's scratch space and the task's paths")
    return Finding.ok(data["evidence"], data)


@principle("P15", "self-doubt signal", tier="C0", family="general", key="self_doubt", role="info")
def self_doubt(job: Job, cfg: Settings) -> Finding:
    """Doubt in the agent's final message ("I'm not sure this is right", "this might be wrong", "submitting
    what I have", ...). Information only: present → WARN that never changes the job verdict; none → PASS;
    N/A without a final agent message (a format that records only reasoning, e.g. mini-swe-agent's THOUGHT
    prose, is judged on its last thought)."""
    assert job.trajectory is not None
    events = [e for e in job.trajectory.events if not e.sidechain]
    final = next((e for e in reversed(events) if e.type == AGENT and e.text.strip()), None)
    if final is None:
        final = next((e for e in reversed(events) if e.type == THOUGHT and e.text.strip()), None)
    if final is None:
        return Finding.na("no final agent message")
    m = cfg.doubt_re.search(final.text)
    if m:
        start = max(0, m.start() - 60)
        ev = f"{final.label()}: {quote(final.text[start:m.end() + 100])}"
        return Finding.warn(f"self-doubt present: {ev}", {"status": "present", "evidence": ev}, [final.index])
    return Finding.ok("final message states its result without hedging",
                      {"status": "none", "evidence": "no doubt phrase in the final message"})
