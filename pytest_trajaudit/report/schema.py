"""Pydantic models of what the plugin writes; ``schemas/*.schema.json`` are generated from them
(``python -m pytest_trajaudit.report.schema`` rewrites them; a test checks they are current)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["PASS", "WARN", "FAIL", "N/A"]
Verdict = Literal["CLEAN", "WARN", "INVALID", "ERROR", "ORACLE"]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class StatusEvidence(_Open):
    status: Status | Literal["none", "present"]
    evidence: str = ""


class AgenticFloor(_Open):
    n_tool_calls: int
    verdict: Literal["above", "below", "borderline"]
    status: Status | None = None
    evidence: str = ""


class ToolBreakdown(_Open):
    total: int
    by_kind: dict[str, int]
    by_title: dict[str, int]


class Struggle(_Open):
    retries: int
    rewrites: int
    reversals: int
    exploration_loop: int
    verdict: Literal["wrong_answer", "struggle"]


class PrincipleResult(BaseModel):
    status: Status
    evidence: str
    tier: str
    family: str
    events: list[int] = Field(default_factory=list)


class Audit(_Open):
    """audit-<config>.json: the seed's core keys first, then extensions and trajaudit's own fields."""

    config: str
    model: str | None
    reward: float | None
    verdict: Verdict
    anti_cheat_read: StatusEvidence | None
    anti_cheat_write: StatusEvidence | None
    failure_bucket: Literal["passed", "hard", "unfair_instruction", "unfair_test", "unfair_env",
                            "capability_gap", "ignored_instruction"] | None
    agentic_floor: AgenticFloor | None
    tool_breakdown: ToolBreakdown | None
    verbatim_final: str | None
    memorization_signal: StatusEvidence | None = None
    struggle: Struggle | None = None
    filesystem_pollution: StatusEvidence | None = None
    self_doubt: StatusEvidence | None = None
    job: str
    task: str
    trial: str
    layout: str
    condition: str | None
    trajectory_file: str | None
    trajectory_format: str | None
    verdict_reasons: list[str]
    principles: dict[str, PrincipleResult]
    error: str | None = None


class JobSummary(BaseModel):
    job: str
    config: str
    task: str
    trial: str
    verdict: Verdict
    reward: float | None
    reasons: list[str]
    statuses: dict[str, Status]
    loads: int = 0


class Summary(BaseModel):
    model_config = ConfigDict(extra="allow")
    schema_version: Literal["trajaudit-summary-1"]
    mode: Literal["precise", "literal"]
    n_jobs: int
    verdicts: dict[str, int]
    principles: dict[str, dict[str, int]]
    jobs: list[JobSummary]


SCHEMAS = {"audit.schema.json": Audit, "summary.schema.json": Summary}
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def render(name: str) -> str:
    schema: dict[str, Any] = SCHEMAS[name].model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    for fname in SCHEMAS:
        (SCHEMA_DIR / fname).write_text(render(fname))
        print("wrote", SCHEMA_DIR / fname)
