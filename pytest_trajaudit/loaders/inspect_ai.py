"""Inspect AI eval logs: the JSON log (``*.json``) and the ``.eval`` zip, one job per sample × epoch.

- JSON log: ``{version, status, eval, plan, results, stats, samples: [sample]}``.
- ``.eval``: a zip with ``header.json`` (the log without samples) and one ``samples/<id>_epoch_<n>.json`` per sample,
  read from memory through :class:`safeio.SafeZip` (never extracted; listing reads only the central directory).
- A sample: ``{id, epoch, input, target, messages, output, scores, metadata, store, events, error, limit,
  attachments}`` (older logs: ``transcript: {events, content}``).

Member id: ``<sample id>_epoch_<epoch>`` (the ``.eval`` member's name), so the same sample has the same id in both
forms. Long strings are deduplicated as ``attachment://<hash>`` (``tc://<hash>`` in older logs), resolved from
the sample's ``attachments`` (``transcript.content``) before anything is read.

Events, when the sample has ``model``/``tool`` events: the messages before the first assistant message
(system → other, user → user_message), then in event order: each ``model`` event's output message (reasoning
parts → agent_thought, text → agent_message), each ``tool`` event as one tool call (``arguments``, ``result``,
``error``), ``error`` events → other. ``model``/``tool`` events of scoring (inside a ``scorer`` span, or a ``step``
of type ``scorer`` in older logs: a model-graded scorer) are the grader's, never the agent's: left out and
counted in ``meta["scorer_events"]``. ``sandbox`` events are the harness's own commands (tool-support probes,
task setup and teardown, scoring such as ``python taskhelper.py --operation score``) unless they run inside a tool
call's span: harness ones become ``other`` events ("[harness sandbox exec] …"), never agent actions; the ones
inside a tool span only lend their exit code to that call's status. Without such events the ``messages`` are used
(assistant ``tool_calls`` joined to ``tool`` messages by ``tool_call_id``).

Tools: ``bash`` (``cmd``) and ``python`` (``code``) → execute (``paths`` = the files a shell command prints);
``text_editor``/``str_replace_editor`` → read for ``view``, else edit (``path``); ``web_browser_*``/``web_search``
→ fetch; ``think`` → think; ``submit`` → other. A tool with a custom name (``run_bash``, ``python_exec``,
``file_editor``, …) gets its kind from its arguments (``common.infer_kind``: a ``cmd``/``command``/``code`` string
→ execute; a ``path`` with content → edit; a ``path`` alone → read; an editor sub-command → read for ``view``,
else edit), so its commands reach P1/P2. Status: ``error`` → failed; else the exit code of the tool's
sandbox command when recorded (0 ok, other failed); else ok (the tool returned normally).

Reward: the first scorer in ``scores`` whose value has one meaning as a number: Inspect's letters as its
``value_to_float`` documents them (``C``/``I``/``P``/``N`` → 1/0/0.5/0), numbers, booleans, and the pass/fail words
(yes/no, true/false, correct/incorrect, pass/fail, passed/failed, success/failure, resolved/unresolved, any case);
``reward_source`` = ``scores.<scorer>.value``. Any other value (a letter grade, a category, a dict of metrics) leaves
the reward unknown, and ``reward_note`` says which scorer returned what. Every score value is kept in
``meta["scores"]``. Task: ``eval.task`` (``<task>/<sample id>`` when the log holds several samples);
model: ``eval.model``; agent: the last solver of ``plan.steps``.

Harness: a sample whose ``model`` events offered the model no tool and that has no tool call is a chat harness's
(``meta["harness"] = "chat"``: the scorer runs the code of the agent's message, whose fenced blocks are then the
submissions in ``Event.code``); otherwise ``"tools"``. A log without model events does not say (no ``harness``).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..model import (
    AGENT,
    EDIT,
    EXECUTE,
    FETCH,
    OTHER,
    READ,
    THOUGHT,
    TOOL,
    USER,
    Event,
    Trajectory,
    UnusableInput,
)
from ..safeio import Parsed, SafeZip, decode_text, derived, is_zip, open_zip, parse_text
from ..scan import linre
from .common import clip, flatten_text, mark_submissions, score_value, shell_read_paths, tool_event
from .spans import Span, Spec, keep, resolve

NAME = "inspect-ai"
MULTI = True
# A JSON log is indexed by its samples' spans (loaders/spans.py); the index keeps what a sample's member id needs.
# An .eval zip reads each sample from its own archive member.
SPANS = Spec(paths=(("samples",),), jsonl=False, fields=keep("id", "epoch"))

_SAMPLE_NAME = linre.compile(r"^samples/(.+)\.json$")
_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"')
_REF = linre.compile(r"^(?:attachment|tc)://([0-9a-fA-F]{8,64})$")
_EDITORS = {"text_editor", "str_replace_editor", "str_replace_based_edit_tool", "edit_file"}
MAX_DEPTH = 200


# --------------------------------------------------------------------------- shapes


def _is_log(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("eval"), dict) and "version" in v and (
        "samples" in v or "status" in v or "results" in v)


def _is_sample(v: Any) -> bool:
    return isinstance(v, dict) and "epoch" in v and isinstance(v.get("messages"), list) and "input" in v and (
        "events" in v or "scores" in v or "transcript" in v or "output" in v)


def sniff(parsed: Parsed) -> bool:
    if parsed.kind == "zip":
        names = parsed.value.names()
        return "header.json" in names or "_journal/start.json" in names
    return parsed.kind == "json" and (_is_log(parsed.value) or _is_sample(parsed.value))


def claims(name: str, head: bytes) -> str | None:
    if name.endswith(".eval") and is_zip(head):
        return "multi"
    if name.endswith(".json") and _JSON_HEAD.match(head.removeprefix(b"\xef\xbb\xbf")):
        return "multi"
    return None


# --------------------------------------------------------------------------- members


def _natural(s: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _zip_ids(z: SafeZip) -> list[str]:
    ids = [m.group(1) for n in z.names() if (m := _SAMPLE_NAME.match(n))]
    return sorted(ids, key=_natural)


def _sample_id(s: dict[str, Any] | Span) -> str:
    sid = s.get("id")
    return f"{sid if isinstance(sid, str | int) and not isinstance(sid, bool) else ''}_epoch_{s.get('epoch', 1)}"


def members(parsed: Parsed, path: str) -> list[str] | None:
    if parsed.kind == "zip":
        return _zip_ids(parsed.value)
    v = parsed.value
    if _is_log(v):
        samples = v.get("samples") or []
        if not isinstance(samples, list):
            raise UnusableInput(path, "samples is not a list")
        return [_sample_id(s) for s in samples if isinstance(s, dict | Span)]
    return None


def scan_members(base: Any, rel: str, max_file: int) -> list[str] | None:
    """``.eval``: the sample names of the zip's central directory (nothing is decompressed). A JSON log has no
    index: None (the caller parses it)."""
    if not rel.endswith(".eval"):
        return None
    with open_zip(base, rel, max_file) as z:
        return _zip_ids(z)


# --------------------------------------------------------------------------- attachments


class _Refs:
    def __init__(self, table: dict[str, Any]) -> None:
        self.table = {k: v for k, v in table.items() if isinstance(v, str)} if isinstance(table, dict) else {}
        self.unresolved = 0

    def __call__(self, value: Any, depth: int = 0) -> Any:
        """``value`` with every ``attachment://``/``tc://`` string replaced by its text (one level: an attachment
        is never itself expanded)."""
        if depth > MAX_DEPTH:
            raise ValueError("nesting too deep")
        if isinstance(value, str):
            if value.startswith(("attachment://", "tc://")):
                m = _REF.match(value)
                if m and m.group(1) in self.table:
                    return self.table[m.group(1)]
                self.unresolved += 1
            return value
        if isinstance(value, list):
            return [self(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {k: self(v, depth + 1) for k, v in value.items()}
        return value


# --------------------------------------------------------------------------- helpers


def _parts(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a message content: a string, or a list of parts (text / reasoning / image ...)."""
    if isinstance(content, str):
        return content, ""
    texts: list[str] = []
    reasons: list[str] = []
    if isinstance(content, list):
        for p in content:
            if not isinstance(p, dict):
                continue
            if p.get("type") == "reasoning":
                r = p.get("reasoning") if isinstance(p.get("reasoning"), str) else p.get("summary")
                if isinstance(r, str) and r.strip() and not p.get("redacted"):
                    reasons.append(r)
            elif p.get("type") == "text" and isinstance(p.get("text"), str):
                texts.append(p["text"])
    return "\n".join(t for t in texts if t), "\n".join(reasons)


def _error_text(err: Any) -> str:
    if isinstance(err, dict):
        return f"{err.get('type') or 'error'}: {flatten_text(err.get('message'))}"
    return flatten_text(err) if err else ""


def _tool(index: int, fn: str, args: Any, result: Any, error: Any, raw: str, exit_code: int | None) -> Event:
    args = args if isinstance(args, dict) else ({"input": args} if args not in (None, "") else {})
    output = result if isinstance(result, str) else flatten_text(result)
    if error:
        output = f"{_error_text(error)}\n{output}".strip()
        status = "failed"
    elif exit_code is not None:
        status = "ok" if exit_code == 0 else "failed"
    else:
        status = "ok"
    name = fn or "tool"
    if name in _EDITORS:
        kind: str | None = READ if str(args.get("command", "")) == "view" else EDIT
        ev = tool_event(index, name, args, kind=kind, output=output, status=status, raw=raw)
        ev.command = ""
        return ev
    kind = FETCH if name.startswith(("web_browser", "web_search")) else None
    ev = tool_event(index, name, args, kind=kind, output=output, status=status, raw=raw)
    if ev.kind == EXECUTE and ev.command and _shell(name, args):
        ev.paths = tuple(dict.fromkeys([*ev.paths, *shell_read_paths(ev.command)]))
    return ev


def _shell(name: str, args: dict[str, Any]) -> bool:
    """A shell command (``cmd``/``command``), not Python source (the ``python`` tool, or a ``code`` argument)."""
    if name == "python" or "python" in name.split("_"):
        return False
    return any(isinstance(args.get(k), str) and args[k].strip() for k in ("cmd", "command"))


def _prelude(messages: list[Any], refs: _Refs, events: list[Event]) -> None:
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") == "assistant":
            return
        text, _ = _parts(refs(m.get("content")))
        if not text:
            continue
        etype = USER if m.get("role") == "user" else OTHER
        events.append(Event(index=len(events), type=etype, text=clip(text), raw=f"messages[{i}]"))


def _assistant(msg: dict[str, Any], refs: _Refs, raw: str, events: list[Event]) -> None:
    text, reasoning = _parts(refs(msg.get("content")))
    if reasoning:
        events.append(Event(index=len(events), type=THOUGHT, text=clip(reasoning), raw=raw))
    if text.strip():
        events.append(Event(index=len(events), type=AGENT, text=clip(text), raw=raw))


def _tool_spans(evs: list[Any]) -> tuple[dict[str, int], dict[int, int]]:
    """(span id → index of the tool event it runs, tool-event index → exit code of its last sandbox exec).

    A tool call's span (``span_begin`` with ``type: "tool"``, ``name`` = the function) is written before or after
    its ``tool`` event depending on the Inspect version; spans and events of one function are paired in order.
    A span nested in a tool span (``parent_id``) belongs to that call too."""
    parent: dict[str, str] = {}
    spans_by_fn: dict[str, list[str]] = {}
    tools_by_fn: dict[str, list[int]] = {}
    for i, e in enumerate(evs):
        if not isinstance(e, dict):
            continue
        if e.get("event") == "span_begin" and isinstance(e.get("id"), str):
            if isinstance(e.get("parent_id"), str):
                parent[e["id"]] = e["parent_id"]
            if e.get("type") == "tool":
                spans_by_fn.setdefault(str(e.get("name") or ""), []).append(e["id"])
        elif e.get("event") == "tool":
            tools_by_fn.setdefault(str(e.get("function") or ""), []).append(i)
    owner: dict[str, int] = {}
    for fn, spans in spans_by_fn.items():
        for sid, idx in zip(spans, tools_by_fn.get(fn, []), strict=False):
            owner[sid] = idx

    def owning(span: Any) -> int | None:
        seen = 0
        while isinstance(span, str) and seen < 1000:
            if span in owner:
                return owner[span]
            span, seen = parent.get(span), seen + 1
        return None

    span_owner: dict[str, int] = {}
    codes: dict[int, int] = {}
    for e in evs:
        if isinstance(e, dict) and e.get("event") == "sandbox" and isinstance(e.get("span_id"), str):
            owned = owning(e["span_id"])
            if owned is None:
                continue
            span_owner[e["span_id"]] = owned
            code = e.get("result")
            if e.get("action") == "exec" and isinstance(code, int) and not isinstance(code, bool):
                codes[owned] = code
    return span_owner, codes


def _scoring(evs: list[Any]) -> set[int]:
    """Indexes of the events that belong to scoring: inside a ``scorer`` span (or any span below one), or between
    a ``step`` begin/end of type ``scorer`` (older logs). A model-graded scorer's model calls are the grader's."""
    parent: dict[str, str] = {}
    kind: dict[str, str] = {}
    for e in evs:
        if isinstance(e, dict) and e.get("event") == "span_begin" and isinstance(e.get("id"), str):
            kind[e["id"]] = str(e.get("type") or "")
            if isinstance(e.get("parent_id"), str):
                parent[e["id"]] = e["parent_id"]

    def under_scorer(span: Any) -> bool:
        n = 0
        while isinstance(span, str) and n < 1000:
            if kind.get(span) in ("scorer", "scorers"):
                return True
            span, n = parent.get(span), n + 1
        return False

    out: set[int] = set()
    steps: list[str] = []
    for i, e in enumerate(evs):
        if not isinstance(e, dict):
            continue
        if e.get("event") == "step":
            if e.get("action") == "begin":
                steps.append(str(e.get("type") or ""))
            elif steps:
                steps.pop()
            continue
        if "scorer" in steps or under_scorer(e.get("span_id")):
            out.add(i)
    return out


def _from_events(sample: dict[str, Any], evs: list[Any], refs: _Refs, meta: dict[str, Any]) -> list[Event]:
    events: list[Event] = []
    _prelude(sample.get("messages") or [], refs, events)
    in_tool_span, exit_codes = _tool_spans(evs)
    scoring = _scoring(evs)
    harness = in_tool = grader = 0
    for i, e in enumerate(evs):
        if not isinstance(e, dict):
            continue
        kind = e.get("event")
        raw = f"events[{i}]"
        if kind in ("model", "tool") and i in scoring:
            grader += 1  # a model-graded scorer at work: never the agent's words or actions
            continue
        if kind == "model":
            out = got if isinstance(got := e.get("output"), dict) else {}
            choices = got if isinstance(got := out.get("choices"), list) else []
            msg = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
            if isinstance(msg, dict):
                _assistant(msg, refs, raw, events)
            elif e.get("error"):
                events.append(Event(index=len(events), type=OTHER, text=clip(f"model error: {e['error']}"), raw=raw))
        elif kind == "tool":
            events.append(_tool(len(events), str(e.get("function") or ""), refs(e.get("arguments")),
                                refs(e.get("result")), refs(e.get("error")), raw, exit_codes.get(i)))
        elif kind == "sandbox":
            if e.get("span_id") in in_tool_span:
                in_tool += 1  # the implementation of an agent's tool call: its exit code is on that call
                continue
            harness += 1
            cmd = refs(e.get("cmd")) or refs(e.get("file")) or ""
            code = e.get("result")
            events.append(Event(index=len(events), type=OTHER, raw=raw,
                                text=clip(f"[harness sandbox {e.get('action') or 'exec'}] {flatten_text(cmd)}"
                                          + (f" (exit {code})" if isinstance(code, int) else ""))))
        elif kind == "error":
            err = refs(e.get("error"))
            events.append(Event(index=len(events), type=OTHER, text=clip(f"error: {_error_text(err)}"), raw=raw))
    meta["sandbox_events"] = {"harness": harness, "in_tool_calls": in_tool}
    if grader:
        meta["scorer_events"] = grader
    return events


def _from_messages(sample: dict[str, Any], refs: _Refs) -> list[Event]:
    events: list[Event] = []
    messages = sample.get("messages") or []
    results: dict[str, dict[str, Any]] = {}
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str):
            results.setdefault(m["tool_call_id"], m)
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        raw = f"messages[{i}]"
        role = m.get("role")
        if role == "assistant":
            _assistant(m, refs, raw, events)
            for j, call in enumerate(m.get("tool_calls") or []):
                if not isinstance(call, dict):
                    continue
                res = results.get(got) if isinstance(got := call.get("id"), str) else None
                fn = call.get("function")
                fn = fn.get("name") if isinstance(fn, dict) else fn
                events.append(_tool(len(events), str(fn or ""), refs(call.get("arguments")),
                                    refs(res.get("content")) if res else "", refs(res.get("error")) if res else None,
                                    f"{raw}.tool_calls[{j}]", None))
                if res is None:
                    events[-1].status = "unknown"
        elif role in ("user", "system"):
            text, _ = _parts(refs(m.get("content")))
            if text:
                events.append(Event(index=len(events), type=USER if role == "user" else OTHER, text=clip(text),
                                    raw=raw))
    return events


def _scores(sample: dict[str, Any]) -> tuple[dict[str, Any], float | None, str | None, str | None]:
    """(every score value by scorer, reward, its source, why the reward is unknown). The reward is the first
    scorer's value that has one meaning as a number; when none has, the note names what the scorers returned."""
    scores = got if isinstance(got := sample.get("scores"), dict) else {}
    values = {}
    reward = source = None
    unknown: list[str] = []
    for name, sc in scores.items():
        val = sc.get("value") if isinstance(sc, dict) else None
        values[name] = val if isinstance(val, str | int | float | bool | type(None)) else str(val)[:200]
        f = score_value(val)
        if reward is None and f is not None:
            reward, source = f, f"scores.{name}.value"
        elif f is None:
            shown = " ".join(str(val).split())[:60] if not isinstance(val, dict) else "a dict of metrics"
            unknown.append(f"{name}={shown}" if val is not None else f"{name} has no value")
    note = None
    if reward is None:
        note = ("Inspect scorer value(s) with no agreed reward: " + ", ".join(unknown[:4])) if unknown else \
            "the sample has no scores"
    return values, reward, source, note


def _chat_harness(evs: list[Any], events: list[Event]) -> bool:
    """A chat harness (the scorer takes the answer from the agent's message): the model was offered no tool in any
    of its calls (``model`` events list the tools they offered) and no tool was called. A model that was offered
    tools and used none is an agent's run, not a chat harness's."""
    if any(e.type == TOOL for e in events):
        return False
    models = [e for e in evs if isinstance(e, dict) and e.get("event") == "model"]
    return bool(models) and not any(e.get("tools") for e in models)


def _header_meta(header: dict[str, Any]) -> dict[str, Any]:
    ev = got if isinstance(got := header.get("eval"), dict) else {}
    steps = header.get("plan", {}).get("steps") if isinstance(header.get("plan"), dict) else None
    solvers = [s.get("solver") for s in steps if isinstance(s, dict) and isinstance(s.get("solver"), str)] \
        if isinstance(steps, list) else []
    pkgs = got if isinstance(got := ev.get("packages"), dict) else {}
    meta = {"agent": solvers[-1] if solvers else "inspect-ai", "solvers": solvers,
            "model": ev.get("model") if isinstance(ev.get("model"), str) else "",
            "eval_task": ev.get("task") if isinstance(ev.get("task"), str) else "",
            "run_id": ev.get("run_id"), "inspect_ai": pkgs.get("inspect_ai"), "log_status": header.get("status")}
    ds = got if isinstance(got := ev.get("dataset"), dict) else {}
    meta["dataset_samples"] = ds.get("samples") if isinstance(ds.get("samples"), int) else None
    return meta


def _build(header: dict[str, Any], sample: dict[str, Any], path: str, member: str, raw_text: str,
           n_samples: int) -> tuple[Trajectory, dict[str, Any]]:
    meta = _header_meta(header)
    transcript = got if isinstance(got := sample.get("transcript"), dict) else {}
    table = got if isinstance(got := sample.get("attachments"), dict) else {}
    if isinstance(transcript.get("content"), dict):
        table = {**transcript["content"], **table}
    refs = _Refs(table)
    evs = got if isinstance(got := sample.get("events"), list) else transcript.get("events")
    evs = evs if isinstance(evs, list) else []
    if any(isinstance(e, dict) and e.get("event") in ("model", "tool") for e in evs):
        events = _from_events(sample, evs, refs, meta)
        meta["source"] = "events"
        mark_submissions(events, meta, chat=_chat_harness(evs, events))
    else:
        events = _from_messages(sample, refs)
        meta["source"] = "messages"
    values, reward, source, note = _scores(sample)
    meta["scores"] = values
    meta["sample_id"], meta["epoch"] = sample.get("id"), sample.get("epoch")
    if refs.unresolved:
        meta["unresolved_attachments"] = refs.unresolved
    err = sample.get("error")
    exception = _error_text(err)[:500] if err else None
    if isinstance(sample.get("limit"), dict):
        meta["limit"] = sample["limit"]
        exception = exception or f"limit reached: {sample['limit'].get('type', '')}"
    traj = Trajectory(format=NAME, source=path, events=events, meta=meta)
    traj.raw_text = raw_text
    task = meta["eval_task"] or "inspect"
    if (meta.get("dataset_samples") or 0) > 1 or n_samples > 1:
        task = f"{task}/{sample.get('id')}"
    info = {"task": task, "trial": member, "agent": meta["agent"], "model": meta["model"],
            "reward": reward, "reward_source": source, "reward_note": note, "exception": exception}
    return traj, info


def _distinct_samples(ids: list[str]) -> int:
    return len({i.rsplit("_epoch_", 1)[0] for i in ids})


def load_member(parsed: Parsed, path: str, member: str) -> tuple[Trajectory, dict[str, Any]]:
    if parsed.kind == "zip":
        z: SafeZip = parsed.value
        budget = z.budget
        name = f"samples/{member}.json"
        names, distinct = derived(parsed, "inspect.zip", lambda: (set(z.names()), _distinct_samples(_zip_ids(z))))
        if name not in names:
            raise UnusableInput(path, f"no sample {member!r} in this log")
        header = z.read_json("header.json", budget) if "header.json" in names else \
            z.read_json("_journal/start.json", budget)
        data = z.read(name, budget)
        text = decode_text(data, f"{path}!{name}")
        doc = parse_text(text, f"{path}!{name}")
        if doc.kind != "json":
            raise UnusableInput(path, f"zip member {name!r} is not one JSON document")
        sample = doc.value
        if not isinstance(sample, dict) or not isinstance(header, dict):
            raise UnusableInput(path, f"zip member {name!r} is not a sample object")
        return _build(header, sample, path, member, text, distinct)
    v = parsed.value
    header, by_id, distinct = derived(parsed, "inspect.index", lambda: _json_index(v))
    sample = by_id.get(member)
    if sample is None:
        raise UnusableInput(path, f"no sample {member!r} in this log")
    sample = resolve(sample)  # a sample's span is parsed for its load only
    raw = orjson.dumps(sample).decode()
    return _build(dict(header), sample, path, member, raw, distinct)


def _json_index(v: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any] | Span], int]:
    """A JSON log's header, its samples by member id (the first of each id) and its number of distinct samples,
    built once per parsed file."""
    samples = [s for s in (v.get("samples") or []) if isinstance(s, dict | Span)]
    by_id: dict[str, dict[str, Any] | Span] = {}
    for s in samples:
        by_id.setdefault(_sample_id(s), s)
    header = {k: val for k, val in v.items() if k != "samples"}
    return header, by_id, _distinct_samples([_sample_id(s) for s in samples])


def load(parsed: Parsed, path: str) -> Trajectory:
    """A log holding exactly one sample, or one sample file on its own (``samples/<id>_epoch_<n>.json``)."""
    if parsed.kind == "json" and _is_sample(parsed.value):
        member = _sample_id(parsed.value)
        traj, _ = _build({}, parsed.value, path, member, parsed.text, 1)
        return traj
    ids = members(parsed, path) or []
    if len(ids) != 1:
        raise UnusableInput(path, f"log holds {len(ids)} samples: each sample is a job of its own "
                                  "(a multi-record file)")
    traj, _ = load_member(parsed, path, ids[0])
    return traj


__all__ = ["NAME", "MULTI", "sniff", "claims", "members", "scan_members", "load_member", "load"]
