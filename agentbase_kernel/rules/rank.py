"""Recency and access as numbers in [0, 1], and how much a scope wants to keep an entry.

``keep_score`` (importance + recency + access) is what capacity archives by; the composite rank
term (``lifecycle/composite.py``) weighs the same three against relevance.
"""

from __future__ import annotations

from datetime import datetime

from ..records import Entry

__all__ = ["ACCESS_SCALE", "access_factor", "keep_score", "recency"]

#: f(access) = n / (n + ACCESS_SCALE): the first few accesses matter most, then it saturates
ACCESS_SCALE = 5.0


def recency(entry: Entry, reference: datetime, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)`` of the entry's valid-from (else created) time; 1.0 when undated
    or stamped after ``reference``."""
    when = entry.valid_from or entry.created_at
    if when is None:
        return 1.0
    age_days = (reference - when).total_seconds() / 86400
    return float(0.5 ** (max(age_days, 0.0) / half_life_days))


def access_factor(count: int) -> float:
    return count / (count + ACCESS_SCALE) if count > 0 else 0.0


def keep_score(entry: Entry, reference: datetime, half_life_days: float) -> float:
    """How much a scope wants to keep an entry: importance + recency + access (each in [0, 1])."""
    return entry.importance + recency(entry, reference, half_life_days) + access_factor(entry.access_count)
