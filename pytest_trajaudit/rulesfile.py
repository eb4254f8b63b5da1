"""``--trajaudit-rules FILE``: one YAML file holding every rule parameter.

The format is the original trace-grader adapter (``harness/trace-grader.config.yaml``), which works
unchanged, plus two optional sections of this plugin's own:

    forbidden_tools: [force_push, rm_rf]      # TG-1 (exact tool names or rule words, see rules.py)
    retry_threshold: 2                        # TG-3: > N consecutive failures of one tool
    step_budget: 25                           # TG-4: > N steps
    order_constraints:
      must_precede: [[read, edit]]            # TG-2: every B needs an earlier A
    grounding: {enabled: true}                # TG-5 on/off
    verified: false                           # the original's adapter flag (recorded only)
    judge: {enabled: false, model: null, rubric: []}   # enabled + model: the LLM judge (unless --trajaudit-judge)
    severities:                               # this plugin: per check high | medium | low
      excessive_steps: medium
    trajaudit:                                # this plugin: Settings thresholds (P8's counters)
      exploration_threshold: 8

Unlike the original (fail-open: a missing or broken file silently falls back to defaults), every problem is
an error naming the file and the key: a missing or unreadable file, invalid YAML, a duplicated or unknown
key, a value of the wrong type. Pure: raises :class:`RulesFileError`; the adapter (configure.py) turns it into a usage
error.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from .settings import DEFAULT_SEVERITIES, TRACE_CHECKS, Rules, Settings

MAX_RULES_BYTES = 1024 * 1024
SEVERITY_NAMES = ("high", "medium", "low")
TOP_KEYS = ("verified", "forbidden_tools", "retry_threshold", "step_budget", "order_constraints", "grounding",
            "judge", "severities", "trajaudit")
# Settings fields the ``trajaudit:`` section may set (each an integer ≥ its minimum).
SETTINGS_THRESHOLDS = {"repeat_prefix": 1, "retries_threshold": 1, "rewrites_threshold": 1,
                       "reversals_threshold": 1, "exploration_threshold": 1, "exploration_share_pct": 1,
                       "reread_threshold": 1}


class RulesFileError(ValueError):
    """A rules file that cannot be used: the message is one line naming the problem."""


def _type(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def _int(v: Any, key: str, minimum: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise RulesFileError(f"{key} must be an integer ≥ {minimum}, got {v!r} ({_type(v)})")
    return v


def _bool(v: Any, key: str) -> bool:
    if not isinstance(v, bool):
        raise RulesFileError(f"{key} must be true or false, got {v!r} ({_type(v)})")
    return v


def _names(v: Any, key: str) -> tuple[str, ...]:
    """A list of non-empty strings; YAML's empty value (null) is an empty list."""
    if v is None:
        return ()
    if not isinstance(v, list):
        raise RulesFileError(f"{key} must be a list of names, got {v!r} ({_type(v)})")
    for i, x in enumerate(v):
        if not isinstance(x, str) or not x.strip():
            raise RulesFileError(f"{key}[{i}] must be a non-empty string, got {x!r} ({_type(x)})")
    return tuple(v)


def _mapping(v: Any, key: str, known: tuple[str, ...]) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise RulesFileError(f"{key} must be a mapping, got {v!r} ({_type(v)})")
    for k in v:
        if k not in known:
            raise RulesFileError(f"unknown key {key}.{k} (known: {', '.join(known)})")
    return v


def _pairs(v: Any, key: str) -> tuple[tuple[str, str], ...]:
    if v is None:
        return ()
    if not isinstance(v, list):
        raise RulesFileError(f"{key} must be a list of [before, after] pairs, got {v!r} ({_type(v)})")
    out = []
    for i, p in enumerate(v):
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) and x.strip() for x in p)):
            raise RulesFileError(f"{key}[{i}] must be a pair [before, after] of tool names, got {p!r}")
        out.append((p[0], p[1]))
    return tuple(out)


def _yaml_load(text: str) -> Any:
    import yaml

    class _Loader(yaml.SafeLoader):
        """safe_load that refuses a key given twice in one mapping (the same value in two places)."""

    def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                line = key_node.start_mark.line + 1
                raise RulesFileError(f"key {key!r} given twice (line {line})")
            seen.add(key if isinstance(key, str) else id(key_node))
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise RulesFileError(f"invalid YAML{where}: {what}") from None
    except yaml.YAMLError as exc:
        raise RulesFileError(f"invalid YAML: {' '.join(str(exc).split())}") from None


def read_rules_text(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_RULES_BYTES + 1)
    except IsADirectoryError:
        raise RulesFileError("is a directory, expected a YAML file") from None
    except OSError as exc:
        raise RulesFileError(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_RULES_BYTES:
        raise RulesFileError(f"larger than {MAX_RULES_BYTES // 1024} KiB: not a rules file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RulesFileError(f"not UTF-8 text (byte {exc.start})") from None


def parse_rules(text: str, source: str | None = None) -> tuple[Rules, dict[str, int]]:
    """YAML text → (Rules, Settings overrides from the ``trajaudit:`` section). Raises RulesFileError."""
    doc = _yaml_load(text)
    if doc is None:
        doc = {}  # an empty (or comment-only) file: every default
    if not isinstance(doc, dict):
        raise RulesFileError(f"the top level must be a mapping of rule parameters, got {_type(doc)}")
    for k in doc:
        if k not in TOP_KEYS:
            raise RulesFileError(f"unknown key {k!r} (known: {', '.join(TOP_KEYS)})")
    r = Rules(source=source)
    if "verified" in doc:
        r.verified = _bool(doc["verified"], "verified")
    if "forbidden_tools" in doc:
        r.forbidden_tools = _names(doc["forbidden_tools"], "forbidden_tools")
    if "retry_threshold" in doc:
        r.retry_threshold = _int(doc["retry_threshold"], "retry_threshold")
    if "step_budget" in doc:
        r.step_budget = _int(doc["step_budget"], "step_budget")
    oc = _mapping(doc.get("order_constraints"), "order_constraints", ("must_precede",))
    if "must_precede" in oc:
        r.must_precede = _pairs(oc["must_precede"], "order_constraints.must_precede")
    gr = _mapping(doc.get("grounding"), "grounding", ("enabled",))
    if "enabled" in gr:
        r.grounding = _bool(gr["enabled"], "grounding.enabled")
    judge = _mapping(doc.get("judge"), "judge", ("enabled", "model", "rubric"))
    if "enabled" in judge:
        r.judge_enabled = _bool(judge["enabled"], "judge.enabled")
    if judge.get("model") is not None:
        if not isinstance(judge["model"], str):
            raise RulesFileError(f"judge.model must be a string or null, got {judge['model']!r}")
        r.judge_model = judge["model"]
    if "rubric" in judge:
        r.judge_rubric = _names(judge["rubric"], "judge.rubric")
    sev = _mapping(doc.get("severities"), "severities", TRACE_CHECKS)
    r.severities = dict(DEFAULT_SEVERITIES)
    for check, value in sev.items():
        if value not in SEVERITY_NAMES:
            raise RulesFileError(f"severities.{check} must be one of {', '.join(SEVERITY_NAMES)}, got {value!r}")
        r.severities[check] = value
    overrides: dict[str, int] = {}
    for k, v in _mapping(doc.get("trajaudit"), "trajaudit", tuple(SETTINGS_THRESHOLDS)).items():
        overrides[k] = _int(v, f"trajaudit.{k}", SETTINGS_THRESHOLDS[k])
    return r, overrides


def load_rules_file(path: str | Path) -> tuple[Rules, dict[str, int]]:
    p = Path(path)
    return parse_rules(read_rules_text(p), str(p))


def apply_rules_file(settings: Settings, path: str | Path) -> Settings:
    """A copy of ``settings`` with the file's rules and thresholds. Raises RulesFileError."""
    rules, overrides = load_rules_file(path)
    changes: dict[str, Any] = {"rules": rules, **overrides}  # threshold fields by name (SETTINGS_THRESHOLDS)
    return dataclasses.replace(settings, **changes)
