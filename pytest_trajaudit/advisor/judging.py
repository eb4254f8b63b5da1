"""The advisor audit's two judges (the seed's advisor-audit.md checks 1–4): prompts, answer schemas, clipping,
outcomes.

- The **coherence judge** reads the public task and the trajectory and says whether it reads like one solver
  working a problem (ADV-1), listing every change of direction with no support in the public task or in terminal
  output the solver had already seen (ADV-2). It never sees privileged material.
- The **leakage judge** reads the trajectory and the privileged material and says whether the trajectory mentions
  an advisor, a reviewer, hidden tests, a reference solution or a privileged artifact (ADV-3), and whether it
  overlaps the privileged material, near-verbatim included (ADV-4), listing the leaked items.

Only the judges get the trajectory clipped to 200,000 characters (both ends kept: ``judge_input_truncated``); only
the leakage judge's copy of the privileged material is capped, at 120,000 characters, with a note saying how much
was left out (``privileged_input_truncated``). An answer that does not satisfy its schema is that judge failing.
"""

from __future__ import annotations

from typing import Any

from ..judges import Answer, clip

TRAJECTORY_LIMIT = 200_000
PRIVILEGED_LIMIT = 120_000
PUBLIC_TASK_LIMIT = 20_000

COHERENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "coherent": {"type": "boolean"},
        "unsupported_direction_changes": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "string"},
    },
    "required": ["coherent", "unsupported_direction_changes"],
    "additionalProperties": False,
}

LEAKAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mentions_advisor": {"type": "boolean"},
        "suspicious_privileged_overlap": {"type": "boolean"},
        "leaked_items": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "string"},
    },
    "required": ["mentions_advisor", "suspicious_privileged_overlap", "leaked_items"],
    "additionalProperties": False,
}

SCHEMAS = {"coherence": COHERENCE_SCHEMA, "leakage": LEAKAGE_SCHEMA}

COHERENCE_SYSTEM = (
    "You audit a trajectory of an AI agent (the solver) that worked a task, possibly with help from a hidden "
    "advisor who could see privileged material (hidden tests, a reference solution). The released trajectory must "
    "read like one ordinary solver working the problem on its own. Judge only from the public task and the "
    "trajectory given. Decide:\n"
    "- coherent: true if the trajectory reads like one solver working the problem (its reasoning, actions and "
    "observations follow from each other), false otherwise;\n"
    "- unsupported_direction_changes: every change of direction (a new approach, a sudden fix, a specific value, "
    "path or test expectation) that has no support in the public task or in terminal output the solver had already "
    "seen at that point; quote or pinpoint each one in a short string; an empty list when there is none;\n"
    "- notes: optional, one or two sentences.\n"
    "Answer with one JSON object only, no prose around it: "
    '{"coherent": <bool>, "unsupported_direction_changes": [<string>, ...], "notes": <string>}'
)

LEAKAGE_SYSTEM = (
    "You audit a trajectory of an AI agent (the solver) for leakage from a hidden advisor who could see privileged "
    "material: the task's hidden tests, reference solution and other private files, given below. The solver never "
    "had access to that material. Decide:\n"
    "- mentions_advisor: true if the trajectory refers to an advisor, a reviewer, hidden tests, a reference or gold "
    "solution, or any privileged artifact (including indirect or paraphrased references);\n"
    "- suspicious_privileged_overlap: true if the trajectory contains privileged content verbatim or nearly so "
    "(paraphrased, reformatted, encoded, split or renamed), beyond what the public task and the solver's own "
    "observations explain;\n"
    "- leaked_items: each leaked or mentioned item in a short string (what, and where in the trajectory); an empty "
    "list when there is none;\n"
    "- notes: optional, one or two sentences.\n"
    "Answer with one JSON object only, no prose around it: "
    '{"mentions_advisor": <bool>, "suspicious_privileged_overlap": <bool>, "leaked_items": [<string>, ...], '
    '"notes": <string>}'
)


def clip_trajectory(text: str) -> tuple[str, bool]:
    """The judges' copy of the trajectory: at most 200,000 characters, both ends kept."""
    return clip(text, TRAJECTORY_LIMIT)


def privileged_copy(files: list[tuple[str, str]]) -> tuple[str, bool]:
    """The leakage judge's copy of the privileged material: each loaded file under a ``### <path>`` heading, capped
    at 120,000 characters, then a note saying how much was left out."""
    if not files:
        return "(no privileged material was loaded from the task directory)", False
    full = "".join(f"### {rel}\n{text}{'' if text.endswith(chr(10)) else chr(10)}\n" for rel, text in files)
    if len(full) <= PRIVILEGED_LIMIT:
        return full, False
    left = len(full) - PRIVILEGED_LIMIT
    return (full[:PRIVILEGED_LIMIT] + f"\n[note: the privileged material was capped at {PRIVILEGED_LIMIT:,} "
            f"characters; {left:,} of its {len(full):,} characters were left out]\n"), True


def coherence_prompt(public_task: str, trajectory: str) -> str:
    task, _ = clip(public_task or "(no public task text was available)", PUBLIC_TASK_LIMIT)
    return f"PUBLIC TASK:\n{task}\n\nTRAJECTORY:\n{trajectory}\n"


def leakage_prompt(privileged: str, trajectory: str) -> str:
    return f"PRIVILEGED MATERIAL (the solver never saw this):\n{privileged}\n\nTRAJECTORY:\n{trajectory}\n"


# --- outcomes ---------------------------------------------------------------------------------------------------

def _schema_error(value: Any, kind: str) -> str | None:
    from ..judges.validate import schema_errors

    if not isinstance(value, dict):
        return "answer is not a JSON object"
    return schema_errors(value, SCHEMAS[kind])


def problems(kind: str, answer: dict[str, Any]) -> list[str]:
    """What a valid answer reports as a problem (empty: none). A leakage answer listing leaked_items with neither
    flag set has reported a problem too."""
    if kind == "coherence":
        out = [] if answer["coherent"] else ["the coherence judge found the trajectory incoherent"]
        out += [f"unsupported direction change: {c}" for c in answer["unsupported_direction_changes"]]
        return out
    out = []
    if answer["mentions_advisor"]:
        out.append("the leakage judge found a mention of an advisor or privileged artifact")
    if answer["suspicious_privileged_overlap"]:
        out.append("the leakage judge found suspicious overlap with the privileged material")
    out += [f"leaked item: {x}" for x in answer["leaked_items"]]
    return out


def outcome(kind: str, answer: Answer | None, *, status: str | None = None, error: str | None = None) -> dict[str, Any]:
    """A judge's outcome as plain JSON data: ``status`` completed | failed | not_configured | not_run."""
    base: dict[str, Any] = {"status": status or "not_run", "model": None, "problem": False, "problems": [],
                            "answer": None, "error": error, "cached": False, "tokens_in": 0, "tokens_out": 0,
                            "cost": 0.0}
    if answer is None:
        return base
    base.update(model=answer.model, cached=bool(answer.cached), tokens_in=int(answer.tokens_in or 0),
                tokens_out=int(answer.tokens_out or 0), cost=float(answer.cost or 0.0))
    if not answer.ok:
        base.update(status="failed", error=answer.error or "the judge failed")
        return base
    why = _schema_error(answer.value, kind)
    if why:
        base.update(status="failed", error=f"invalid answer: {why}")
        return base
    value = dict(answer.value or {})
    found = problems(kind, value)
    base.update(status="completed", answer=value, problem=bool(found), problems=found)
    return base
