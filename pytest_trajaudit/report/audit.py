"""Build the per-job audit JSON (seed schema, the seed's audit-general.md) and summary.json from plain results."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from ..scan.redact import redact_tree
from .paths import open_dir_nofollow

CORE_KEYS = ("anti_cheat_read", "anti_cheat_write", "agentic_floor", "tool_breakdown", "verbatim_final")


def _redact_tree(value: Any) -> Any:
    return redact_tree(value)


def trace_grader_block(meta: Mapping[str, Any], records: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The original's per-run report ``{task, run_id, delivered, step_count, flags, corrupt_success, verdict}``
    built from the TG items' flags (in check order), or None when no TG item judged the job."""
    from ..aggregate.verdicts import corrupt_success, trace_run_verdict
    from ..principles import family_codes

    # the rules family in code order: the original's check order
    recs = [(c, records[c]) for c in family_codes("rules")
            if c in records and "step_count" in (records[c].get("data") or {})]
    if not recs:
        return None
    base = recs[0][1]["data"]
    flags = [{k: f.get(k) for k in ("check", "severity", "step", "tool", "detail")}
             for _, r in recs for f in (r["data"].get("flags") or [])]
    delivered = base.get("delivered")
    return {"task": meta.get("task") or "", "run_id": meta.get("trial") or "", "delivered": delivered,
            "delivered_source": base.get("delivered_source") or "", "step_count": base.get("step_count", 0),
            "flags": flags, "n_flags": sum(int(r["data"].get("n_flags") or 0) for _, r in recs),
            "corrupt_success": corrupt_success(delivered, flags),
            "verdict": trace_run_verdict(delivered, flags), "mode": base.get("mode") or "precise",
            "checks": {c: r["status"] for c, r in recs}}


def advisor_block(records: dict[str, dict[str, Any]], error: str | None = None) -> dict[str, Any] | None:
    """The advisor audit of a job (the same block ``trajaudit audit`` writes) from its ADV items' records; None
    without ADV items; ``{"verdict": None, "error": ...}`` when an ADV item met unusable input."""
    from ..advisor.core import from_records

    if error:
        return {"verdict": None, "error": error}
    return from_records(records)


def build_audit(job_id: str, meta: Mapping[str, Any], records: dict[str, dict[str, Any]], verdict: str,
                reasons: list[str], keys: dict[str, str], error: str | None = None,
                advisor_error: str | None = None) -> dict[str, Any]:
    """records: code → {status, evidence, data, events, tier, family}; keys: code → audit-JSON key.
    ``advisor_error``: an ADV item's unusable input (the advisor audit then has no verdict)."""
    reward = meta.get("reward")
    audit: dict[str, Any] = {
        "config": meta.get("config") or "agent",
        "model": meta.get("model"),
        "reward": reward,
        "verdict": verdict,
        "anti_cheat_read": None,
        "anti_cheat_write": None,
        # the failure bucket; a failed run (or one without a reward) that no judge bucketed: "unjudged"
        "failure_bucket": "passed" if reward is not None and reward >= 1.0 else "unjudged",
        "agentic_floor": None,
        "tool_breakdown": None,
        "verbatim_final": None,
    }
    for code, rec in records.items():
        key = keys.get(code)
        if not key:
            continue
        data = dict(rec.get("data") or {})
        if key == "verbatim_final":
            audit[key] = data.get("verbatim_final")
        elif key == "failure_bucket":
            audit[key] = data.get("failure_bucket") or audit[key]
            audit["failure_evidence"] = {"status": rec["status"], "evidence": rec["evidence"]}
        elif key == "format_vs_reasoning":
            audit[key] = data.get("format_vs_reasoning") or ("n/a" if rec["status"] == "N/A" else None)
        elif key in ("row_vs_entity_gotcha", "verifier_alignment", "tests_too_tight", "llm_judge_concurrence"):
            if not data:  # N/A without data (e.g. an oracle run): nothing to say in the seed's shape
                audit[key] = None
                continue
            data.setdefault("status", rec["status"])
            data.setdefault("evidence", rec["evidence"])
            for flag in ("aligned", "aligned_by_prose"):  # seed booleans: absent when nothing decided them
                if key == "verifier_alignment" and data.get(flag) is None:
                    data.pop(flag, None)
            audit[key] = data
        elif key in ("tool_breakdown",):
            audit[key] = {k: data[k] for k in ("total", "by_kind", "by_title") if k in data} or None
        elif key in ("agentic_floor", "struggle"):
            if data:
                data.setdefault("status", rec["status"])
                audit[key] = data
        elif key == "advisor":  # the advisor checks fill one block, rebuilt below by the advisor core
            continue
        elif key == "skill_misuse":  # two checks fill one {partial_follow_through, top_level_only, evidence}
            # seed booleans: a check that was not judged is false, with its N/A in ``statuses``
            merged = audit.get(key) or {"partial_follow_through": False, "top_level_only": False, "evidence": "",
                                        "statuses": {}}
            ev = data.pop("evidence", "") or rec["evidence"]
            for flag in ("partial_follow_through", "top_level_only"):
                if flag in data:
                    merged["statuses"][flag] = rec["status"]
                    data[flag] = bool(data[flag])
            merged.update(data)
            if ev and ev not in merged["evidence"]:
                merged["evidence"] = f"{merged['evidence']}; {ev}" if merged["evidence"] else ev
            audit[key] = merged
        else:
            data.setdefault("status", rec["status"])
            data.setdefault("evidence", rec["evidence"])
            if key == "self_doubt" and data["status"] in ("PASS", "WARN"):
                data["status"] = "present" if rec["status"] == "WARN" else "none"
            audit[key] = data
    audit["trace_grader"] = trace_grader_block(meta, records)
    audit["advisor"] = advisor_block(records, advisor_error)
    audit.update({
        "job": job_id,
        "task": meta.get("task") or "",
        "trial": meta.get("trial") or "",
        "layout": meta.get("layout") or "",
        "condition": meta.get("condition"),
        "trajectory_file": meta.get("trajectory_file"),
        "trajectory_format": meta.get("trajectory_format"),
        "verdict_reasons": reasons,
        "principles": {c: {"status": r["status"], "evidence": r["evidence"], "tier": r.get("tier", ""),
                           "family": r.get("family", ""), "events": r.get("events", [])[:50],
                           **({"waiver": r["waiver"]} if isinstance(r.get("waiver"), dict) else {})}
                       for c, r in records.items()},
        "error": error,
    })
    redacted: dict[str, Any] = _redact_tree(audit)  # the same dict shape, every string redacted
    return redacted


REPORT_MODE = 0o600  # report files quote evidence (agent output, privileged task lines): owner-only (see README)


def _printable_tree(value: Any) -> Any:
    """Strings made writable as UTF-8 (a file name that is not UTF-8 carries lone surrogates: see
    ``redact.printable``) and non-finite numbers as null (strict JSON has no NaN)."""
    import math

    from ..scan.redact import printable

    if type(value) is Deferred:
        value = value.make()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return printable(value)
    if isinstance(value, list):
        return [_printable_tree(v) for v in value]
    if isinstance(value, dict):
        return {_printable_tree(k) if isinstance(k, str) else k: _printable_tree(v) for k, v in value.items()}
    return value


class Deferred:
    """A value made when it is written, not held: a summary's per-job ``detail`` (a copy of each of the job's
    records) is made job by job as ``summary.json`` is encoded, so the summary never holds a second copy of every
    record (at the end of an audit of 2,000 jobs that copy was 24 MiB, the run's peak). The JSON writers here
    encode it as what :meth:`value` returns; a reader of the summary in memory calls :meth:`value`."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def value(self) -> Any:
        return self.make()


def _deferred(obj: Any) -> Any:
    """orjson's and json's ``default``: the value of a :class:`Deferred`; anything else stays unencodable."""
    if type(obj) is Deferred:
        return obj.make()
    raise TypeError(f"Type is not JSON serializable: {type(obj).__name__}")


def json_bytes(value: Any) -> bytes:
    """``value`` (JSON builtins) as strict JSON indented by two spaces, UTF-8, with a final newline: the layout of
    ``json.dumps(indent=2, ensure_ascii=False)``, made by orjson in C (the standard library indents in Python: 9.2 s
    to encode the reports of a 10,000-job audit, 0.54 s here; README "Performance"). Non-finite numbers become
    null (strict JSON has no NaN), non-string keys strings, as ``json`` makes them. What orjson refuses (a lone surrogate from a
    file name that is not UTF-8, an integer past 64 bits) goes the standard library's way, with strings made
    writable (:func:`_printable_tree`). The bytes are ``json``'s but for some floats under 1e-4, which orjson
    spells differently (``0.00001`` for ``1e-05``, ``2.5e-7`` for ``2.5e-07``): the same numbers."""
    try:
        return orjson.dumps(value, default=_deferred,
                            option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        pass
    try:
        text = json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False, default=_deferred)
        return (text + "\n").encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        text = json.dumps(_printable_tree(value), indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False)
        return (text + "\n").encode("utf-8", "backslashreplace")


_OPTS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS


def json_chunks(value: Any) -> Any:
    """:func:`json_bytes` of a dict in pieces: each top-level value, and each element of a top-level list, is
    encoded on its own and re-indented to its depth, so a summary of 100,000 jobs never exists as one bytes
    object (it would be gigabytes beside the summary itself). Together the pieces are exactly orjson's encoding
    of the whole (JSON strings hold no raw newline, so indenting after each newline touches only the layout). A
    value orjson refuses raises ``orjson.JSONEncodeError`` (the caller starts over with :func:`json_bytes`);
    anything but a non-empty dict with string keys is one piece."""
    if not isinstance(value, dict) or not value or not all(type(k) is str for k in value):
        yield json_bytes(value)
        return
    dumps = orjson.dumps
    yield b"{\n"
    last = len(value) - 1
    for i, (k, v) in enumerate(value.items()):
        yield b"  " + dumps(k) + b": "
        if isinstance(v, list) and v:
            yield b"[\n"
            end = len(v) - 1
            for j, e in enumerate(v):
                yield b"    " + dumps(e, default=_deferred, option=_OPTS).replace(b"\n", b"\n    ") + (
                    b",\n" if j < end else b"\n")
            yield b"  ]"
        else:
            yield dumps(v, default=_deferred, option=_OPTS).replace(b"\n", b"\n  ")
        yield b",\n" if i < last else b"\n"
    yield b"}\n"


def write_json_atomic(path: Path, value: Any, mode: int = REPORT_MODE, base: Path | None = None) -> None:
    """``value`` as strict JSON (:func:`json_bytes`), written to a temporary file beside ``path`` and renamed over
    it, so a reader never sees a partial file and an interrupted run leaves the previous one. Written in pieces
    (:func:`json_chunks`); what orjson refuses is written whole by :func:`json_bytes`'s fallback."""

    def write(fh: Any) -> None:
        try:
            for chunk in json_chunks(value):
                fh.write(chunk)
        except orjson.JSONEncodeError:
            fh.seek(0)
            fh.truncate()
            fh.write(json_bytes(value))

    _write_atomic(path, write, mode, base)


def write_text_atomic(path: Path, text: str, mode: int = REPORT_MODE, base: Path | None = None) -> None:
    """Write ``text`` as UTF-8 (what cannot be encoded backslash-escaped) atomically: :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8", "backslashreplace"), mode, base)


def write_bytes_atomic(path: Path, data: bytes, mode: int = REPORT_MODE, base: Path | None = None) -> None:
    """Write ``data`` atomically (a temporary file in the same directory, then a rename) with ``mode``; new
    directories are created 0700. ``base``: the report directory; the directories between it and ``path`` are
    opened without following symlinks (``paths.open_dir_nofollow``: a planted link there is replaced by a real
    directory). A name that already exists as a symlink is replaced, never followed."""
    _write_atomic(path, lambda fh: fh.write(data), mode, base)


def _write_atomic(path: Path, write: Any, mode: int, base: Path | None) -> None:
    """:func:`write_bytes_atomic` with ``write(fh)`` filling the temporary file."""
    base = path.parent if base is None else base
    fd = open_dir_nofollow(base, path.parent.relative_to(base))
    tmp = f".{path.name}.{secrets.token_hex(8)}.tmp"
    try:
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
        try:
            os.fchmod(out, mode)
            with os.fdopen(out, "wb") as fh:
                write(fh)
            os.replace(tmp, path.name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
