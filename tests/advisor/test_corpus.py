"""False positives on the real corpus (../shared/corpus): the ADV-3 patterns stay quiet on named clean transcripts
of every harness format and on every agent-written file of the corpus, and fire on the same transcripts with a
mention planted inside a string; a privileged line planted inside a real transcript's JSON is found."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_trajaudit.advisor.core import MENTION_RX, run_audit
from pytest_trajaudit.advisor.scan import find_mentions
from pytest_trajaudit.model import UnusableInput
from pytest_trajaudit.safeio import decode_text
from tests.advisor.kit import make_task
from tests.taskfactory import SOLUTION_LINES

pytestmark = pytest.mark.corpus

LAB = "labelled/mmoksh__swe-bench-pro-malokshiya/jobs"
CLEAN = [
    "harbor/ain3sh__codecanvas/runs/2025-12-12__02-23-38/build-cython-ext__LmYeyGq/agent/trajectory.json",
    "harbor/ain3sh__codecanvas/runs/2025-12-12__02-23-38/build-cython-ext__LmYeyGq/agent/claude-code.txt",
    "harbor/Lizhengxi25__skillsbench_trajectory_viewer/public/harbor-jobs/2026-03-12__23-23-51/3d-scan-calc__zH4ghhd/"
    "agent/trajectory.json",
    "harbor/Tobi-joshua__benchflow-agent-skill-lift/eval/runs/smoke/jobs/treatment/citation-check/r1/"
    "2026-07-26__20-57-24/citation-check__190a3859/trajectory/acp_trajectory.jsonl",
    "skillsbench-archive/minimax-traj/3d-scan-calc__t2HR7VM/agent/claude-code.txt",
    "claude-code/agentcmd-fixtures/full/full-session.jsonl",
    "claude-code/spotter-fixtures/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
    "claude-code/spotter-fixtures/tool_heavy.jsonl",
    "codex/agentcmd-fixtures/full/rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
    "mini-swe-agent/github_issue.traj.json",
    "swe-agent/SWE-agent__SWE-agent/tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00"
    "__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
    "openhands/OpenHands__OpenHands/tests/runtime/trajs/basic_gui_mode.json",
    "inspect/UKGovernmentBEIS__inspect_ai/tests/analysis/test_logs/2025-05-12T20-27-36-04-00_browser.json",
    f"{LAB}/2026-06-18__14-30-58__3303e9/malokshiya_facundoolano__google__ELkyFMW/agent/claude-code.txt",
    f"{LAB}/2026-06-18__14-30-58__3303e9/malokshiya_facundoolano__google__ELkyFMW/agent/trajectory.json",
    f"{LAB}/2026-06-22__13-56-06__c43c2e/malokshiya_facundoolano__google__wCKpGw6/agent/trajectory.json",
    "labelled/sanyamahesh2__ML4SWE-Group4/20250511_sweagent_lm_32b/trajs/sympy__sympy-19783/sympy__sympy-19783.traj",
]


def _text(corpus: Path, rel: str) -> str:
    """Decoded strictly (a Claude Code stdout capture may interleave plain-text log lines: the pytest items read it
    as such, the command refuses it as neither JSON nor JSON Lines)."""
    return decode_text((corpus / rel).read_bytes(), corpus / rel)


@pytest.mark.parametrize("rel", CLEAN, ids=[Path(r).name[:40] for r in CLEAN])
def test_patterns_stay_quiet_on_clean_transcripts(corpus: Path, rel: str) -> None:
    ms = find_mentions(_text(corpus, rel), MENTION_RX)
    assert ms.count == 0, [m.quote for m in ms.found]


def test_patterns_stay_quiet_on_every_agent_file_of_the_corpus(corpus: Path) -> None:
    """Every trajectory-like file (JSON, JSON Lines, text, .traj) outside verifier/ folders: verifier output names
    tests/test_outputs.py by itself and is never part of an agent's trajectory."""
    scanned, noisy = 0, {}
    for top, dirs, files in os.walk(corpus):
        dirs[:] = sorted(d for d in dirs if d != "verifier")
        for f in sorted(files):
            if not f.endswith((".json", ".jsonl", ".txt", ".traj")) or f in ("SOURCES.tsv",):
                continue
            p = Path(top) / f
            try:
                text = decode_text(p.read_bytes(), p)
            except UnusableInput:  # empty, binary or undecodable: not a transcript
                continue
            scanned += 1
            ms = find_mentions(text, MENTION_RX)
            if ms.count:
                noisy[str(p.relative_to(corpus))] = [m.quote for m in ms.found[:3]]
    assert scanned > 300
    assert noisy == {}


PLANTS = ["By the way, the advisor said the output must be sorted.", "Matching the reference solution now.",
          "The hidden tests expect a trailing newline.", "as the reviewer pointed out, ids are ints"]


@pytest.mark.parametrize("rel", CLEAN[:6] + CLEAN[9:13], ids=[Path(r).name[:40] for r in CLEAN[:6] + CLEAN[9:13]])
def test_patterns_fire_on_planted_mentions(corpus: Path, rel: str) -> None:
    text = _text(corpus, rel)
    for plant in PLANTS:
        planted = _plant(text, plant)
        assert find_mentions(planted, MENTION_RX).count >= 1, plant


def _plant(text: str, sentence: str) -> str:
    """``sentence`` inside the first JSON string value longer than 30 characters (escaped as JSON), or appended to
    the first line of a plain-text file."""
    import re

    m = re.search(r'"((?:[^"\\]|\\.){30,}?)"', text)
    if m is None:
        return sentence + "\n" + text
    inner = json.dumps(sentence)[1:-1]
    return text[:m.start(1)] + inner + " " + text[m.start(1):]


def test_overlap_on_a_real_trial_clean_and_planted(corpus: Path, tmp_path: Path) -> None:
    """A real Harbor trial audited against a task whose solution lines it never printed: clean; the same trial with
    a solution line planted inside a tool result's JSON string: fail."""
    src = corpus / CLEAN[0]
    task = make_task(tmp_path / "tasks", instruction="Build the Cython extension.\n")
    att = tmp_path / "att"
    (att / "agent").mkdir(parents=True)
    (att / "agent" / "trajectory.json").write_bytes(src.read_bytes())
    a = run_audit(att, task, no_judge=True)
    assert a["mechanical"]["n_verbatim_privileged_lines"] == 0 and a["checks"]["ADV-4"]["status"] == "PASS"
    doc = json.loads(src.read_text())
    doc["steps"][-1]["message"] = f"final: {SOLUTION_LINES[1]}"
    (att / "agent" / "trajectory.json").write_text(json.dumps(doc))
    a = run_audit(att, task, no_judge=True)
    assert a["verdict"] == "fail" and a["mechanical"]["verbatim_privileged_lines"] == [SOLUTION_LINES[1][:60]]
