"""Importance, recency and access as numbers in [0, 1], and the composite rank term built on them.

``CompositeRank`` re-scores retrieval's candidates (one hook: the ``rank_term`` step of ``retrieve/steps.py``) as

    (w_sim * relevance + w_rec * 0.5^(age / half_life) + w_imp * importance + w_acc * f(access))
    / (w_sim + w_rec + w_imp + w_acc)

where relevance is the candidate's retrieval score (before the pipeline caps it at 1) over the
best one's; candidates keep the pipeline's order where the composite ties. It is off by default
(``lifecycle.rank_composite``): the ablation in docs/lifecycle.md did not find it positive on both
dev sets. ``keep_score`` (importance + recency + access) is what capacity archives by.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..config import LifecycleConfig
from ..records import Entry
from ..store.protocol import RetentionStore

__all__ = ["ACCESS_SCALE", "CompositeRank", "access_factor", "keep_score", "recency"]

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


class CompositeRank:
    """The retrieval hook: re-scores (``final``) and re-sorts the candidates (objects with ``entry``
    and ``final``), given each one's retrieval score in the pipeline's order."""

    def __init__(self, store: RetentionStore, config: LifecycleConfig) -> None:
        self.store = store
        self.weights = (config.rank_w_sim, config.rank_w_rec, config.rank_w_imp, config.rank_w_acc)
        self.half_life_days = config.half_life_days

    def __call__(self, ordered: Sequence[Any], reference: datetime, relevance: Sequence[float]) -> list[Any]:
        if not ordered:
            return list(ordered)
        w_sim, w_rec, w_imp, w_acc = self.weights
        best = max(relevance) or 1.0
        access = self.store.access_stats(c.entry.id for c in ordered) if w_acc else {}
        total = sum(self.weights)
        for c, rel in zip(ordered, relevance):
            score = w_sim * rel / best
            if w_rec:
                score += w_rec * recency(c.entry, reference, self.half_life_days)
            if w_imp:
                score += w_imp * c.entry.importance
            if w_acc:
                score += w_acc * access_factor(access.get(c.entry.id, (0, None))[0])
            c.final = score / total
        position = {id(c): i for i, c in enumerate(ordered)}
        return sorted(ordered, key=lambda c: (-c.final, position[id(c)]))
