"""Build the per-job audit JSON (seed schema, audit-general.md) and summary.json from plain results."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..redact import redact

CORE_KEYS = ("anti_cheat_read", "anti_cheat_write", "agentic_floor", "tool_breakdown", "verbatim_final")


def _redact_tree(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: _redact_tree(v) for k, v in value.items()}
    return value


def build_audit(job_id: str, meta: dict[str, Any], records: dict[str, dict[str, Any]], verdict: str,
                reasons: list[str], keys: dict[str, str], error: str | None = None) -> dict[str, Any]:
    """records: code → {status, evidence, data, events, tier, family}; keys: code → audit-JSON key."""
    reward = meta.get("reward")
    audit: dict[str, Any] = {
        "config": meta.get("config") or "agent",
        "model": meta.get("model"),
        "reward": reward,
        "verdict": verdict,
        "anti_cheat_read": None,
        "anti_cheat_write": None,
        "failure_bucket": "passed" if reward is not None and reward >= 1.0 else None,
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
        elif key in ("tool_breakdown",):
            audit[key] = {k: data[k] for k in ("total", "by_kind", "by_title") if k in data} or None
        elif key in ("agentic_floor", "struggle"):
            if data:
                data.setdefault("status", rec["status"])
                audit[key] = data
        else:
            data.setdefault("status", rec["status"])
            data.setdefault("evidence", rec["evidence"])
            if key == "self_doubt" and data["status"] in ("PASS", "WARN"):
                data["status"] = "present" if rec["status"] == "WARN" else "none"
            audit[key] = data
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
                           "family": r.get("family", ""), "events": r.get("events", [])[:50]}
                       for c, r in records.items()},
        "error": error,
    })
    return _redact_tree(audit)


def write_json_atomic(path: Path, value: Any, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, indent=2, sort_keys=False, ensure_ascii=False)
            fh.write("\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def safe_component(s: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in s)
    return out.strip(".") or "job"
