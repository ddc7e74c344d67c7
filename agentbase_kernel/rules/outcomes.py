"""How an outcome moves an entry's confidence: a Beta count per entry, its mean the confidence.

An entry's confidence ``c`` is read as the mean of a Beta(alpha, beta) belief. The first outcome
that touches an entry starts its counts from what it holds now: ``alpha = K * c``, ``beta = K * (1 - c)``
(``K``, the prior strength, is ``lifecycle.outcome_prior_strength``: how many outcomes the
starting value is worth). An outcome of value ``v`` in [0, 1] and weight ``w`` in (0, 1] adds
``w * v`` to alpha and ``w * (1 - v)`` to beta; the confidence becomes ``alpha / (alpha + beta)``.

Bounded: the confidence stays in [0, 1], and one outcome moves it by at most ``w / (alpha + beta + w)``,
so never more than ``1 / (K + 1)``. Reversible: reverting takes the outcome's counts back out.
A confidence changed by something else meanwhile (``update(confidence=...)``, a duplicate that
reinforced the entry) is respected: the counts are rescaled to it, keeping their total (the
evidence), before the next outcome or revert applies.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidArgument

__all__ = ["OUTCOME_VALUES", "apply_outcome", "check_outcome", "revert_counts"]

#: the value an ``outcome_type`` stands for when the caller gives none
OUTCOME_VALUES = {"success": 1.0, "succeeded": 1.0, "helpful": 1.0, "positive": 1.0, "partial": 0.5,
                  "failure": 0.0, "failed": 0.0, "harmful": 0.0, "negative": 0.0, "wrong": 0.0}


def check_outcome(outcome_type: Any, value: Any, weight: Any) -> tuple[str, float, float]:
    """``(outcome_type, value, weight)`` checked: a non-empty label, a value in [0, 1] (a bool is 1 / 0;
    ``None`` takes the label's ``OUTCOME_VALUES``), a weight in (0, 1]."""
    if not isinstance(outcome_type, str) or not outcome_type.strip():
        raise InvalidArgument(f"outcome_type must be a non-empty str, got {outcome_type!r}", param="outcome_type")
    label = outcome_type.strip()
    if value is None:
        if label.casefold() not in OUTCOME_VALUES:
            raise InvalidArgument(f"outcome_type {label!r} has no default value - pass value= in [0, 1] "
                                  f"(known: {sorted(OUTCOME_VALUES)})", param="value")
        value = OUTCOME_VALUES[label.casefold()]
    elif isinstance(value, bool):
        value = 1.0 if value else 0.0
    if not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidArgument(f"value must be a number in [0, 1] (1 success, 0 failure), got {value!r}",
                              param="value")
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not 0 < weight <= 1:
        raise InvalidArgument(f"weight must be a number in (0, 1], got {weight!r}", param="weight")
    return label, float(value), float(weight)


def _anchored(confidence: float, counts: tuple[float, float, float] | None, strength: float) -> tuple[float, float]:
    """The counts to build on: started from ``confidence``, or rescaled to it if it moved since."""
    if counts is None:
        return strength * confidence, strength * (1.0 - confidence)
    alpha, beta, written = counts
    if abs(written - confidence) > 1e-9:
        total = max(alpha + beta, strength)
        return total * confidence, total * (1.0 - confidence)
    return alpha, beta


def apply_outcome(confidence: float, counts: tuple[float, float, float] | None, *, value: float, weight: float,
                  strength: float) -> dict[str, float]:
    """One outcome on one entry: ``{success, failure, alpha, beta, confidence_before, confidence_after}``."""
    alpha, beta = _anchored(confidence, counts, strength)
    success, failure = weight * value, weight * (1.0 - value)
    alpha, beta = alpha + success, beta + failure
    return {"success": success, "failure": failure, "alpha": alpha, "beta": beta,
            "confidence_before": confidence, "confidence_after": _mean(alpha, beta, confidence)}


def revert_counts(confidence: float, counts: tuple[float, float, float] | None, *, success: float, failure: float,
                  strength: float) -> dict[str, float]:
    """An outcome's counts taken back out of one entry: ``{alpha, beta, confidence}``."""
    alpha, beta = _anchored(confidence, counts, strength)
    alpha, beta = max(0.0, alpha - success), max(0.0, beta - failure)
    return {"alpha": alpha, "beta": beta, "confidence": _mean(alpha, beta, confidence)}


def _mean(alpha: float, beta: float, fallback: float) -> float:
    total = alpha + beta
    return round(alpha / total, 6) if total > 0 else fallback
