"""Harbor ATIF trajectories (``agent/trajectory.json``, BenchFlow ``trainer/atif.json``), ATIF-v1.0 … v1.7.

Shape: ``{"schema_version": "ATIF-v1.x", "session_id", "agent": {name, version, model_name, extra},
"steps": [...], "final_metrics"}``. A step is ``{step_id, source: user|agent|system, message, reasoning_content,
tool_calls[]{tool_call_id, function_name, arguments}, observation{results[]{source_call_id, content}}, extra}``.

Per step the events are: the reasoning (``agent_thought``), the message (``agent_message`` / ``user_message``),
then one tool event per call with its result merged in. Converter quirks handled here:

- the claude-code converter writes ``reasoning_content`` as the string ``"null"`` and a placeholder message
  ``"Executed <Tool> <id>"`` on tool steps; it records the result's error flag in the step's
  ``extra.tool_result_is_error`` (and ``extra.tool_result_metadata.raw_tool_result.is_error``);
- the opencode/metacode converter writes every tool call and every result twice in the same step and a
  placeholder message ``"(tool use)"``; calls are deduplicated by ``tool_call_id``, results by ``source_call_id``;
- the BenchFlow ACP converter (v1.7) puts ``{"title", "status"}`` in ``tool_calls[].extra`` and leaves
  ``arguments`` empty.

Status: ``failed`` when an error flag says so or the result text carries an unambiguous error marker
(``<tool_use_error>``, the converter's ``[error] tool reported failure``, Claude's ``Exit code N``); ``ok`` when a
result (or a success flag) exists; ``unknown`` otherwise.
"""

from __future__ import annotations

from typing import Any

from ..model import AGENT, OTHER, THOUGHT, USER, Event, Trajectory
from ..safeio import Parsed
from ..scan import linre
from .common import clip, flatten_text, tool_event

NAME = "atif"

_NULLISH = {"", "null", "none", "None", "NULL"}
_PLACEHOLDER = linre.compile(r"^(?:\(tool use\)|\(no content\)|Executed \S+ \S+)$")
_ERROR_MARKERS = linre.compile(
    r"<tool_use_error>|\[error\] tool reported failure|\A\s*Exit code [1-9]\d*\b"
)
_STATUS = {"completed": "ok", "success": "ok", "ok": "ok", "failed": "failed", "error": "failed",
           "cancelled": "failed", "canceled": "failed"}
_EXTRA_PATH_KEYS = ("filePath", "filepath", "notebookPath", "absolutePath", "dirPath")


def _looks_like_steps(steps: Any) -> bool:
    if not isinstance(steps, list):
        return False
    head = [s for s in steps[:50] if isinstance(s, dict)]
    return bool(head) and all("source" in s and "step_id" in s for s in head)


def sniff(parsed: Parsed) -> bool:
    if parsed.kind != "json" or not isinstance(parsed.value, dict):
        return False
    doc = parsed.value
    version = doc.get("schema_version")
    if isinstance(version, str) and version.upper().startswith("ATIF"):
        return True
    return _looks_like_steps(doc.get("steps"))


def _text(value: Any) -> str:
    return flatten_text(value) if not isinstance(value, str) else value


def _reasoning(value: Any) -> str:
    """Reasoning text; ``None`` and the literal string "null" (claude-code converter) are empty."""
    text = _text(value)
    return "" if text.strip() in _NULLISH else text


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _step_error_flag(step: dict[str, Any], call_id: str, n_calls: int) -> bool | None:
    """The claude-code converter's per-step error flag, when it belongs to this call."""
    extra = step.get("extra")
    if not isinstance(extra, dict):
        return None
    for key in ("tool_result_metadata", "metadata"):
        meta = extra.get(key)
        raw = meta.get("raw_tool_result") if isinstance(meta, dict) else None
        if isinstance(raw, dict) and raw.get("tool_use_id") == call_id and "is_error" in raw:
            return _is_true(raw.get("is_error"))
    if n_calls == 1:
        for key in ("tool_result_is_error", "is_error"):
            if key in extra and extra[key] is not None:
                return _is_true(extra[key])
    return None


def _call_status(step: dict[str, Any], call: dict[str, Any], results: list[dict[str, Any]], n_calls: int) -> str:
    cextra = got if isinstance(got := call.get("extra"), dict) else {}
    flags: list[bool] = []
    for src in (cextra, *results, *[r.get("extra") for r in results if isinstance(r.get("extra"), dict)]):
        if isinstance(src, dict) and src.get("is_error") is not None:
            flags.append(_is_true(src["is_error"]))
    step_flag = _step_error_flag(step, str(call.get("tool_call_id") or ""), n_calls)
    if step_flag is not None:
        flags.append(step_flag)
    if any(flags):
        return "failed"
    for r in results:
        if _ERROR_MARKERS.search(_text(r.get("content"))[:2000]):
            return "failed"
    declared = got if isinstance(got := cextra.get("status"), str) else None
    if declared and _STATUS.get(declared.lower()) == "failed":
        return "failed"
    if results or flags or (declared and _STATUS.get(declared.lower()) == "ok"):
        return "ok"
    return "unknown"


def _merge_results(results: list[dict[str, Any]]) -> str:
    texts: list[str] = []
    for r in results:
        t = _text(r.get("content"))
        if t and t not in texts:
            texts.append(t)
    return "\n".join(texts)


def load(parsed: Parsed, path: str) -> Trajectory:
    doc = parsed.value
    steps = doc.get("steps")
    if not isinstance(steps, list):
        steps = []
    meta: dict[str, Any] = {}
    if isinstance(doc.get("schema_version"), str):
        meta["schema_version"] = doc["schema_version"]
    if isinstance(doc.get("session_id"), str):
        meta["session_id"] = doc["session_id"]
    agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    for src, dst in (("name", "agent"), ("version", "agent_version"), ("model_name", "model")):
        if isinstance(agent.get(src), str) and agent[src]:
            meta[dst] = agent[src]
    aextra = got if isinstance(got := agent.get("extra"), dict) else {}
    cwds = aextra.get("cwds")
    if isinstance(cwds, list) and cwds and isinstance(cwds[0], str):
        meta["cwd"] = cwds[0]
    if isinstance(doc.get("final_metrics"), dict):
        meta["final_metrics"] = doc["final_metrics"]

    events: list[Event] = []
    seen_calls: set[str] = set()
    duplicates = 0
    for si, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        source = step.get("source")
        sextra = got if isinstance(got := step.get("extra"), dict) else {}
        sidechain = _is_true(sextra.get("is_sidechain"))
        if "cwd" not in meta and isinstance(sextra.get("cwd"), str) and sextra["cwd"]:
            meta["cwd"] = sextra["cwd"]
        if "model" not in meta and isinstance(step.get("model_name"), str) and step["model_name"]:
            meta["model"] = step["model_name"]
        base = f"steps[{si}]"

        calls: list[tuple[int, dict[str, Any]]] = []
        step_ids: set[str] = set()
        for ci, call in enumerate(step.get("tool_calls") or []):
            if not isinstance(call, dict):
                continue
            cid = call.get("tool_call_id")
            if isinstance(cid, str) and cid:
                if cid in seen_calls:
                    duplicates += 1
                    continue
                seen_calls.add(cid)
                step_ids.add(cid)
            calls.append((ci, call))

        by_call: dict[str, list[dict[str, Any]]] = {}
        loose: list[dict[str, Any]] = []
        observation = got if isinstance(got := step.get("observation"), dict) else {}
        for r in observation.get("results") or []:
            if not isinstance(r, dict):
                continue
            sid = r.get("source_call_id")
            if isinstance(sid, str) and sid in step_ids:
                by_call.setdefault(sid, []).append(r)
            else:
                loose.append(r)
        if loose and len(calls) == 1 and not by_call:  # a single call's result without a source id
            cid = str(calls[0][1].get("tool_call_id") or "")
            by_call[cid] = loose
            loose = []

        reasoning = _reasoning(step.get("reasoning_content"))
        if reasoning:
            events.append(Event(index=len(events), type=THOUGHT, text=clip(reasoning),
                                raw=f"{base}.reasoning_content", sidechain=sidechain))
        message = _text(step.get("message"))
        if message.strip() and not (calls and _PLACEHOLDER.match(message.strip())):
            etype = {"user": USER, "agent": AGENT}.get(str(source), OTHER)
            events.append(Event(index=len(events), type=etype, text=clip(message), raw=f"{base}.message",
                                sidechain=sidechain))
        for ci, call in calls:
            cid = str(call.get("tool_call_id") or "")
            results = by_call.get(cid, []) if cid else []
            cextra = got if isinstance(got := call.get("extra"), dict) else {}
            title = cextra.get("title") if isinstance(cextra.get("title"), str) and cextra.get("title") else None
            args = call.get("arguments")
            ev = tool_event(
                len(events), str(call.get("function_name") or ""), args,
                output=_merge_results(results), status=_call_status(step, call, results, len(calls)),
                title=title, raw=f"{base}.tool_calls[{ci}]", sidechain=sidechain,
            )
            if isinstance(args, dict):
                extra_paths = [v for k in _EXTRA_PATH_KEYS if isinstance(v := args.get(k), str) and v]
                if extra_paths:
                    ev.paths = tuple(dict.fromkeys([*ev.paths, *extra_paths]))
            events.append(ev)
        for r in loose:  # observations not tied to a call of this step (e.g. a system note)
            text = _text(r.get("content"))
            if text.strip():
                events.append(Event(index=len(events), type=OTHER, text=clip(text),
                                    raw=f"{base}.observation", sidechain=sidechain))
    if duplicates:
        meta["duplicate_tool_calls"] = duplicates
    return Trajectory(format=NAME, source=path, events=events, meta=meta)


__all__ = ["NAME", "sniff", "load"]
