"""BenchFlow ACP trajectories of one event: BenchFlow writes ``trajectory/acp_trajectory.jsonl`` without a trailing
newline, so a rollout that ended after its first event is a one-line file (one JSON document, not JSON Lines)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_trajaudit.discover.jobs import find_jobs
from pytest_trajaudit.loaders import acp
from pytest_trajaudit.loaders.sniff import detect
from pytest_trajaudit.model import EXECUTE, TOOL, USER
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.safeio import parse_text
from pytest_trajaudit.settings import Settings
from tests.helpers import load_text
from tests.jobfactory import make_job

# The shape of a real BenchFlow capture line (corpus harbor/ BenchFlow rollouts): generic title, command in rawInput.
CAT_KEY = {"type": "tool_call", "tool_call_id": "toolu_01", "kind": "execute", "title": "Terminal",
           "status": "completed", "rawInput": {"command": "cat /solution/solve.sh"},
           "content": [{"type": "content", "content": {"type": "text", "text": "#!/bin/bash\necho 42 > /app/out"}}]}


def test_one_event_without_newline_is_an_acp_trajectory() -> None:
    text = json.dumps(CAT_KEY)
    assert parse_text(text, "acp_trajectory.jsonl").kind == "json"  # one line: one JSON document
    assert detect(parse_text(text, "acp_trajectory.jsonl")) is acp
    traj = load_text(text, "acp_trajectory.jsonl")
    assert traj.format == acp.NAME
    [ev] = traj.events
    assert ev.type == TOOL and ev.kind == EXECUTE and ev.command == "cat /solution/solve.sh"
    assert ev.status == "ok" and ev.raw == "line 1"


def test_one_message_line_loads() -> None:
    traj = load_text('{"type":"user_message","text":"fix the build"}', "acp_trajectory.jsonl")
    assert [(e.type, e.text) for e in traj.events] == [(USER, "fix the build")]


def test_one_json_object_of_another_shape_is_not_acp() -> None:
    """A lone object with a ``message`` (Claude-style) or an unknown type is not an ACP event."""
    assert not acp.sniff(parse_text('{"type":"user_message","message":{"role":"user"}}', "x.json"))
    assert not acp.sniff(parse_text('{"type":"result","text":"x"}', "x.json"))
    assert not acp.sniff(parse_text('[{"type":"user_message","text":"x"}]', "x.json"))


def test_one_line_rollout_is_audited(tmp_path: Path) -> None:
    """End to end: the rollout is discovered, loads, and P1 sees the command of its single event."""
    make_job(tmp_path, "citation-check__1", json.dumps(CAT_KEY))
    [ref] = find_jobs(tmp_path)
    audit = audit_job(ref, Settings(), list(registry().values()))
    assert audit.error is None
    assert audit.meta["trajectory_format"] == acp.NAME and audit.meta["n_events"] == 1
    assert audit.results["P1"].status == "FAIL"
