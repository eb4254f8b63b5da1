"""Judge usage and agreement: per-item stats (worker side), run totals and Cohen's kappa (controller side).

Pure and light (no litellm): the controller of an xdist run imports this to build summary.json."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from . import Answer

MAX_ERRORS = 5


def item_stats(answers: Sequence[Answer]) -> dict[str, Any]:
    """What one item's judge answers cost: JSON builtins (it crosses to the xdist controller in the report).
    ``calls`` counts answers requested, ``cached`` those served without a new HTTP call, ``attempts`` the HTTP
    requests actually sent (retries included)."""
    return {
        "models": sorted({a.model for a in answers}),
        "calls": len(answers),
        "cached": sum(1 for a in answers if a.cached),
        "failures": sum(1 for a in answers if not a.ok),
        "attempts": sum(a.attempts for a in answers),
        "tokens_in": sum(a.tokens_in for a in answers),
        "tokens_out": sum(a.tokens_out for a in answers),
        "cost": round(sum(a.cost for a in answers), 8),
        "errors": [f"{a.model}: {a.error}" for a in answers if not a.ok][:MAX_ERRORS],
    }


def cohen_kappa(pairs: Sequence[tuple[Any, Any]]) -> float | None:
    """Cohen's kappa of two raters over ``pairs`` of labels. None when undefined: no pairs, or chance agreement
    is 1 (both raters gave one and the same label throughout)."""
    n = len(pairs)
    if n == 0:
        return None
    po = sum(1 for a, b in pairs if a == b) / n
    labels = {x for p in pairs for x in p}
    pe = sum((sum(1 for a, _ in pairs if a == lab) / n) * (sum(1 for _, b in pairs if b == lab) / n)
             for lab in labels)
    if pe >= 1.0:
        return None
    return round((po - pe) / (1 - pe), 6)


def _concurrence_code() -> str:
    """The code of the principle that reports the judges' concurrence (its audit-JSON key)."""
    from ..principles import code_for

    return code_for("llm_judge_concurrence")


class Totals:
    """Run totals over item records (``rec["judge"]``) plus the labels of concurrence items
    (``rec["data"]["judge_labels"]``: model → label, None for a failed answer)."""

    def __init__(self, models: Iterable[str] = ()) -> None:
        self.models = list(models)
        self.calls = self.cached = self.failures = self.attempts = self.tokens_in = self.tokens_out = 0
        self.cost = 0.0
        self.errors: list[str] = []
        self.labels: dict[str, dict[str, Any]] = {}  # item id → model → label

    def add(self, item_id: str, rec: dict[str, Any]) -> None:
        st = rec.get("judge")
        if isinstance(st, dict):
            for k in ("calls", "cached", "failures", "attempts", "tokens_in", "tokens_out"):
                setattr(self, k, getattr(self, k) + int(st.get(k) or 0))
            self.cost += float(st.get("cost") or 0.0)
            for m in st.get("models") or ():
                if m not in self.models:
                    self.models.append(m)
            if len(self.errors) < MAX_ERRORS:
                self.errors += [f"{item_id}: {e}" for e in st.get("errors") or ()][:MAX_ERRORS - len(self.errors)]
        labels = (rec.get("data") or {}).get("judge_labels")
        if isinstance(labels, dict):
            self.labels[item_id] = labels

    def kappa_pairs(self) -> list[dict[str, Any]]:
        out = []
        for a, b in combinations(self.models, 2):
            pairs = [(lab[a], lab[b]) for lab in self.labels.values()
                     if lab.get(a) is not None and lab.get(b) is not None]
            agree = sum(1 for x, y in pairs if x == y)
            out.append({"models": [a, b], "n": len(pairs), "agreement": round(agree / len(pairs), 6) if pairs else None,
                        "kappa": cohen_kappa(pairs)})
        return out

    def summary(self) -> dict[str, Any]:
        pairs = self.kappa_pairs()
        first = pairs[0] if pairs else {"n": 0, "agreement": None, "kappa": None}
        return {"models": list(self.models), "calls": self.calls, "cached": self.cached, "failures": self.failures,
                "attempts": self.attempts, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "cost": round(self.cost, 8), "kappa": first["kappa"], "kappa_items": first["n"],
                "agreement": first["agreement"], "kappa_pairs": pairs, "errors": list(self.errors)}

    def terminal_line(self) -> str | None:
        if not self.models and not self.calls:
            return None
        line = (f"judges: {', '.join(self.models) or 'none'}: {self.calls} answer(s), {self.cached} cached, "
                f"{self.failures} failed; {self.tokens_in:,} tokens in / {self.tokens_out:,} out; ${self.cost:.4f}")
        s = self.summary()
        if s["kappa_items"]:
            k = "undefined" if s["kappa"] is None else f"{s['kappa']:.3f}"
            line += (f"; {_concurrence_code()} kappa {k} over {s['kappa_items']} item(s) "
                     f"(agreement {s['agreement']:.0%})")
        return line
