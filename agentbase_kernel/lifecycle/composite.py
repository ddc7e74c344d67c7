"""The composite rank term: retrieval's candidates re-scored by relevance, recency, importance and
access (one hook: the ``rank_term`` step of ``retrieve/steps.py``)::

    (w_sim * relevance + w_rec * 0.5^(age / half_life) + w_imp * importance + w_acc * f(access))
    / (w_sim + w_rec + w_imp + w_acc)

where relevance is the candidate's retrieval score (before the pipeline caps it at 1) over the
best one's; candidates keep the pipeline's order where the composite ties. It is off by default
(``lifecycle.rank_composite``): the ablation in docs/lifecycle.md did not find it positive on both
dev sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..config import LifecycleConfig
from ..rules.rank import access_factor, recency
from ..store.protocol import RetentionStore

__all__ = ["CompositeRank"]


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
