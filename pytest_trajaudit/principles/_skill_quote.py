"""The trajectory moment SB-2 quotes for a with-skills run (the seed's audit-skillsbench.md: a helped outcome quotes
"the trajectory moment where skill guidance unlocked a step", a hurt one "the misleading guidance or the shortcut the
skill enabled").

The quote is taken after the run's first skill use (the skill tool's call or the SKILL.md read; a skill file opened
directly when nothing was loaded): the agent's own
words right after it (the first non-empty agent message or thought), else the first step that applied it (the
first later edit or shell call: its command or paths). It is redacted and cut to :data:`QUOTE_CHARS` characters
(``redact.quote``) and names the event it came from. None with the reason when there is nothing to quote.
"""

from __future__ import annotations

from typing import Any

from ..model import AGENT, EDIT, EXECUTE, THOUGHT, TOOL, Event
from ..scan.redact import quote

QUOTE_CHARS = 300
_TEXT_TYPES = (AGENT, THOUGHT)
_APPLY_KINDS = (EDIT, EXECUTE)


def skill_quote(events: list[Event], load: int, skill: str) -> tuple[dict[str, Any] | None, str]:
    """(``{text, event, source}`` or None, the reason when None) for the skill first used at event index ``load``.
    Sub-agent (sidechain) events are not the run's own words and are skipped."""
    if not 0 <= load < len(events):
        return None, f"the event where {skill} was used (#{load}) is not in the trajectory"
    label = events[load].label()
    after = [e for e in events[load + 1:] if not e.sidechain]
    for e in after:
        if e.type in _TEXT_TYPES and e.text.strip():
            kind = "message" if e.type == AGENT else "thought"
            return {"text": quote(e.text, QUOTE_CHARS), "event": e.index,
                    "source": f"agent {kind} #{e.index} after loading {skill} ({label})"}, ""
    for e in after:
        if e.type == TOOL and e.kind in _APPLY_KINDS and e.status != "failed" and (text := e.brief().strip()):
            return {"text": quote(text, QUOTE_CHARS), "event": e.index,
                    "source": f"step {e.label()} after loading {skill} ({label})"}, ""
    return None, f"nothing after loading {skill} ({label}) to quote: no agent text and no edit or shell step"
