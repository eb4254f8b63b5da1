"""ADV-3's mechanical patterns: mentions of an advisor, a reviewer, hidden tests, a reference or gold solution, or a
privileged artifact (the seed's advisor-audit.md check 3). Offline regular expressions, case-insensitive, matched on
the same haystack as the overlap check (the trajectory as read, then every decoded string key and value).

The spec names what to look for but not the expressions (the seed's RULES.md C: they were not found), so these are
ours, tuned on the real corpus (``tests/test_advisor_corpus.py`` keeps them quiet on named clean transcripts). Each is
a phrase, not a bare word: "advisor" or "reviewer" alone occurs in code and data ("RobotAdvisor", "reviewers=[...]"),
so they need an article, a possessive, a reporting verb or an attribution ("according to the advisor"). A match
whose surrounding text is a quote of the task's own public instruction ("hidden tests will check ...") is not
counted: the solver was told that much.
"""

from __future__ import annotations

import re

from ..scan import linre

_VERBS = (r"(?:said|says|say|suggest\w*|hint\w*|not(?:ed|es)|recommend\w*|told|tells|want(?:s|ed)?|asked|"
          r"mention\w*|point(?:s|ed)\s+out|indicat\w*|confirm\w*|insist\w*|expect(?:s|ed)|flagg?\w*|warn\w*)")
_HELP = r"(?:feedback|guidance|advice|hints?|message|messages|notes?|input|instructions?|review|comments?|tips?)"

MENTION_PATTERNS: tuple[tuple[str, str], ...] = (
    # an advisor: "the advisor", "my advisor's hint", "according to the advisor", the advisor tool's own names
    ("advisor", r"\b(?:the|my|an|our|your)\s+advis[eo]r(?:'s|s)?\b(?!\s*[=(\[.:]\s*\w)"),
    ("advisor", rf"\badvis[eo]r(?:'s|s'|s)?\s+(?:{_VERBS}|{_HELP})\b"),
    ("advisor", r"\b(?:per|from|according\s+to|following|as\s+instructed\s+by)\s+(?:the\s+|my\s+)?advis[eo]r\b"),
    ("advisor", r"\bifm-advisor\b|\bADVISOR_(?:MODEL|BASE_URL)\b"),
    # a reviewer: only with a reporting verb, a kind of help, or an attribution
    ("reviewer", rf"\b(?:the|my|a|our|your)\s+reviewer(?:'s|s)?\s+(?:{_VERBS}|{_HELP})\b"),
    ("reviewer", r"\b(?:according\s+to|as\s+instructed\s+by|per)\s+(?:the\s+|my\s+)?reviewer\b"),
    # hidden tests
    ("hidden tests", r"\b(?:hidden|held[- ]out|secret)\s+(?:unit\s+|test\s+)?"
                     r"(?:tests?|test\s*(?:suite|cases?|files?|set)|testcases?|checks?)\b"),
    # a reference or gold solution
    ("reference solution", r"\b(?:reference|gold(?:en)?|oracle|canonical|ground[- ]truth)\s+"
                           r"(?:solution|patch|answer)s?\b"),
    # a privileged artifact: the advisor's material and the task files the solver never sees
    ("privileged artifact", r"\bprivileged\s+(?:material|files?|roots?|artifacts?|context|info(?:rmation)?|data)\b"),
    ("privileged artifact", r"\btask_material_manifest\b"),
    ("privileged artifact", r"(?<![\w.-])/?(?:solution/solve\.sh|tests/test_outputs\.py)\b"),
)


# Every pattern contains one of these (lower-case) literals: an Aho–Corasick pass finds them, and the patterns run
# only around them (a test checks each pattern's examples contain one).
KEYWORDS = ("advis", "review", "hidden", "held", "secret", "referenc", "gold", "oracle", "canonical", "ground",
            "privileged", "task_material_manifest", "solve.sh", "test_outputs")


def compile_mentions(patterns: tuple[tuple[str, str], ...] = MENTION_PATTERNS) -> linre.Regex:
    """One alternation, a named group per pattern (``g0``, ``g1``...), case-insensitive; compiled once."""
    return linre.compile("|".join(f"(?P<g{i}>{rx})" for i, (_, rx) in enumerate(patterns)), re.I)


def label_of(m: re.Match[str], patterns: tuple[tuple[str, str], ...] = MENTION_PATTERNS) -> str:
    name = m.lastgroup or "g0"
    return patterns[int(name[1:])][0]
