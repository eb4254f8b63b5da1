"""The principle registry: one small pure function per principle, registered with its code, tier and family.

The registry is the single list the plugin, the CLI, the README table and the audit JSON are built from.
Third-party packages add principles through the ``pytest_trajaudit_principles`` hook (see ``hookspecs.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

from ..model import Finding, Job
from ..settings import Settings

Check = Callable[[Job, Settings], Finding]

TIERS = ("C0", "C1", "C2")
FAMILIES = ("anticheat", "general", "skills", "advisor", "rules")


@dataclass(frozen=True)
class Principle:
    code: str
    title: str
    tier: str
    family: str
    func: Check
    key: str  # the audit-JSON key this principle fills
    affects_verdict: bool = True  # counted by the per-job verdict (C0 WARN → WARN)

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()

    @property
    def summary(self) -> str:
        return self.doc.split("\n", 1)[0]


_REGISTRY: dict[str, Principle] = {}


def principle(code: str, title: str, *, tier: str, family: str, key: str,
              affects_verdict: bool = True) -> Callable[[Check], Check]:
    if tier not in TIERS:
        raise ValueError(f"{code}: unknown tier {tier!r}")

    def deco(func: Check) -> Check:
        register(Principle(code, title, tier, family, func, key, affects_verdict))
        return func

    return deco


def register(p: Principle) -> None:
    if p.code in _REGISTRY and _REGISTRY[p.code].func is not p.func:
        raise ValueError(f"principle {p.code} registered twice")
    _REGISTRY[p.code] = p


FAMILY_MODULES = ("anticheat", "general", "verifier", "rules", "skills")


def registry() -> dict[str, Principle]:
    """All built-in principles (importing the family modules registers them), in code order."""
    for mod in FAMILY_MODULES:
        import_module(f"{__package__}.{mod}")
    return dict(sorted(_REGISTRY.items(), key=lambda kv: _order(kv[0])))


def _order(code: str) -> tuple[int, int, str]:
    """P1 < P2 < ... < P15 < SB-1 < SB-3a < ADV-1 < TG-1 < anything else."""
    m = re.match(r"^(P|SB-|ADV-|TG-)(\d+)(.*)$", code)
    if not m:
        return (9, 0, code)
    return (["P", "SB-", "ADV-", "TG-"].index(m.group(1)), int(m.group(2)), m.group(3))
