"""How much an entry matters, in [0, 1]: the caller's value, else a rule over what ingest knows.

The rule uses only what is stored with every entry (so migration m007 gives old entries the same
value ingest gives new ones): its category, who said it, whether ingest derived it as a fact, and
how many named entities it mentions. Preferences and profile facts outrank chit-chat; the user's
own words outrank an assistant's or a tool's; names and facts make a memory more specific.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import InvalidArgument

__all__ = ["DEFAULT_IMPORTANCE", "check_importance", "rule_importance"]

DEFAULT_IMPORTANCE = 0.5

# by category; anything else (None, custom categories) starts at DEFAULT_IMPORTANCE
_CATEGORY = {
    "preference": 0.75, "profile": 0.7, "relationship": 0.7, "possession": 0.65, "fact": 0.65,
    "consolidation": 0.6, "session_summary": 0.55, "turn": 0.4,
}
_ROLE = {"user": 0.1, "system": 0.0, "import": 0.0, "assistant": -0.1, "ai": -0.1, "tool": -0.15,
         "function": -0.15}


def rule_importance(*, category: str | None, role: str | None, derived: bool, entities: int) -> float:
    """The rule-based importance of an entry (module docstring), rounded to 3 places."""
    value = _CATEGORY.get(category or "", DEFAULT_IMPORTANCE)
    value += _ROLE.get(role or "", 0.0)
    if derived:
        value += 0.1
    value += min(max(int(entities), 0), 3) * 0.05
    return round(min(1.0, max(0.0, value)), 3)


def check_importance(value: Any) -> float | None:
    """``None`` (let the rule decide) or a finite number in [0, 1]; else ``InvalidArgument``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 1:
        raise InvalidArgument(f"importance must be a number in [0, 1] or None, got {value!r}")
    return float(value)
