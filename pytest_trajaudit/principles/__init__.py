"""The principle registry: one small pure function per principle, registered with its code, tier and family.

The registry is the single list the plugin, the CLI, the README table and the audit JSON are built from.
Third-party packages add principles through the ``pytest_trajaudit_principles`` hook (see ``hookspecs.py``).

A principle registered with ``judge=True`` may return a :class:`Pending` instead of a :class:`Finding` when
``cfg.judge`` is set (LLM judges configured); without judges it returns its mechanical finding (e.g. N/A
"needs a judge"). The engine submits a Pending's requests at once and calls ``finish`` with the answers when
the item runs (see ``engine.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module

from ..judges import Answer, JudgeRequest
from ..model import Finding, Job
from ..settings import Settings


@dataclass
class Pending:
    """A deferred finding: the judge requests a principle needs, and how to turn their answers into a Finding.

    ``finish`` is pure and gets the answers in the order of ``requests``. It must never turn a failed or
    invalid answer (``ok=False``) into PASS, and it must close over small plain values only (strings, numbers),
    never the ``Job`` or its trajectory: the engine keeps it until the job's last judge item runs.
    """

    requests: list[tuple[str, JudgeRequest]]  # (model, request) pairs
    finish: Callable[[list[Answer]], Finding]
    interim: Finding | None = None  # stands until the answers arrive (e.g. for a task group's record); N/A if None


Check = Callable[[Job, Settings], "Finding | Pending"]

TIERS = ("C0", "C1", "C2")
FAMILIES = ("anticheat", "general", "skills", "advisor", "rules")
# What a principle's result does to its job's verdict (aggregate.job_verdict):
# - integrity: a FAIL makes the job INVALID, and a run in which it did not run on a job is INCOMPLETE, never
#   an approval (completeness.py);
# - quality: a C0 WARN or FAIL makes the job WARN (needs review);
# - info: reported, never changes the verdict.
ROLES = ("integrity", "quality", "info")


@dataclass(frozen=True)
class Principle:
    code: str
    title: str
    tier: str
    family: str
    func: Check
    key: str  # the audit-JSON key this principle fills
    role: str = "quality"  # one of ROLES: what its result does to the job's verdict
    judge: bool = False  # may return a Pending when judges are configured (its items run after the others)
    na_warns: bool = False  # its N/A means "could not be judged" and keeps the job from CLEAN (WARN)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"{self.code}: unknown role {self.role!r} (one of {', '.join(ROLES)})")

    @property
    def affects_verdict(self) -> bool:
        """Counted by the per-job verdict at all (every role but info)."""
        return self.role != "info"

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()

    @property
    def summary(self) -> str:
        return self.doc.split("\n", 1)[0]


_REGISTRY: dict[str, Principle] = {}


def principle(code: str, title: str, *, tier: str, family: str, key: str, role: str = "quality",
              judge: bool = False, na_warns: bool = False) -> Callable[[Check], Check]:
    if tier not in TIERS:
        raise ValueError(f"{code}: unknown tier {tier!r}")

    def deco(func: Check) -> Check:
        register(Principle(code, title, tier, family, func, key, role=role, judge=judge, na_warns=na_warns))
        return func

    return deco


def register(p: Principle) -> None:
    if p.code in _REGISTRY and _REGISTRY[p.code].func is not p.func:
        raise ValueError(f"principle {p.code} registered twice")
    _REGISTRY[p.code] = p
    _INDEX.clear()


@dataclass(frozen=True)
class GroupCheck:
    """A cross-trial check of a task group: one item per group, run after every job item (aggregate/groups.py
    evaluates it). Declared in its family's module like a principle; nothing else names its code."""

    code: str
    title: str  # its marker's text: "<code>: trajaudit group item <title>"
    family: str
    key: str  # the summary.json section it fills


_GROUPS: dict[str, GroupCheck] = {}


def register_group(g: GroupCheck) -> None:
    if g.family not in FAMILIES:
        raise ValueError(f"{g.code}: unknown family {g.family!r}")
    _GROUPS[g.code] = g


FAMILY_MODULES = ("anticheat", "gaming", "general", "verifier", "rules", "skills", "advisor")


def integrity_codes(principles: Mapping[str, Principle]) -> tuple[str, ...]:
    """The codes whose role is integrity, in the order of ``principles``."""
    return tuple(c for c, p in principles.items() if p.role == "integrity")


def registry() -> dict[str, Principle]:
    """All built-in principles (importing the family modules registers them), in code order."""
    for mod in FAMILY_MODULES:
        import_module(f"{__package__}.{mod}")
    return dict(sorted(_REGISTRY.items(), key=lambda kv: _order(kv[0])))


def group_checks() -> dict[str, GroupCheck]:
    """The task-group checks (importing the family modules declares them), in declaration order."""
    registry()
    return dict(_GROUPS)


def codes_for(key: str) -> tuple[str, ...]:
    """The codes of the built-in principles that fill the audit-JSON key ``key``, in code order: aggregation and
    reports find a principle's records by what it reports, never by its code."""
    return _index("key").get(key, ())


def code_for(key: str) -> str:
    """The code of the one built-in principle that fills the audit-JSON key ``key``."""
    (code,) = codes_for(key)
    return code


def family_codes(family: str) -> tuple[str, ...]:
    """The codes of the built-in principles of ``family``, in code order."""
    return _index("family").get(family, ())


_INDEX: dict[str, dict[str, tuple[str, ...]]] = {}  # "key" / "family" → value → codes; emptied by register()


def _index(attr: str) -> dict[str, tuple[str, ...]]:
    if attr not in _INDEX:
        index: dict[str, tuple[str, ...]] = {}
        for c, p in registry().items():
            value = getattr(p, attr)
            index[value] = (*index.get(value, ()), c)
        _INDEX[attr] = index
    return _INDEX[attr]


def _order(code: str) -> tuple[int, int, str]:
    """P1 < P2 < ... < P15 < SB-1 < SB-3a < ADV-1 < TG-1 < anything else."""
    m = re.match(r"^(P|SB-|ADV-|TG-)(\d+)(.*)$", code)
    if not m:
        return (9, 0, code)
    return (["P", "SB-", "ADV-", "TG-"].index(m.group(1)), int(m.group(2)), m.group(3))


REGISTRY_TABLE_BEGIN = "<!-- registry table: generated by python -m pytest_trajaudit.principles -->"
REGISTRY_TABLE_END = "<!-- end of registry table -->"


def registry_table() -> str:
    """The principle table of ``docs/principles.md``, made from the registry (a test keeps the page current):
    code, title, tier, family, verdict role, audit-JSON key, the module that declares it (a link from ``docs/``) and
    the first sentence of the principle's docstring."""
    rows = ["| code | title | tier | family | role | audit JSON key | source | rule |",
            "|---|---|---|---|---|---|---|---|"]
    for p in registry().values():
        rule = _first_sentence(p.doc).replace("|", "\\|")
        module = p.func.__module__.rsplit(".", 1)[-1]
        source = f"[{module}.py](../pytest_trajaudit/principles/{module}.py)"
        rows.append(f"| {p.code} | {p.title} | {p.tier} | {p.family} | {p.role} | `{p.key}` | {source} | {rule} |")
    return "\n".join([REGISTRY_TABLE_BEGIN, *rows, REGISTRY_TABLE_END])


def _first_sentence(doc: str, limit: int = 220) -> str:
    """The first sentence of a docstring's first paragraph, on one line (cut at a word with "…" past ``limit``)."""
    para = " ".join(doc.split("\n\n", 1)[0].split())
    m = re.search(r"(?<=[.!?])\s+(?=[A-Z(])", para)
    text = para[: m.start()] if m else para
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    return text
