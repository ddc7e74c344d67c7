"""Calibrated scores for the fused ranking: the probability that a hit is what the question asks for.

The fused score is relative (the best candidate of any question is near 1.0, even when nothing in
the scope is about the question). A logistic model turns it into a probability with what the
question's best matches say in absolute terms (the best cosine anywhere in the scope, the best raw
BM25, the share of the question's words no memory holds and the share its best keyword match
lacks) and the hit's place in the ranking. It rises with the fused score and falls with the
place, so within one question the order is unchanged;
across questions and scopes the same score means the same hit rate (docs/retrieval.md shows the
reliability table). The weights (``calibration.json`` beside this module) are fitted on the dev
sets by ``python -m benchmarks train-ranker``.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgument

__all__ = ["CALIBRATION_INPUTS", "PACKAGED_CALIBRATION", "Calibration", "load_calibration"]

PACKAGED_CALIBRATION = Path(__file__).resolve().parent / "calibration.json"
# what the model reads, in this order (the fused score first)
CALIBRATION_INPUTS: tuple[str, ...] = ("fused", "top_cosine", "top_bm25_log", "unseen_share", "lacked_share",
                                       "rank_log")
_LOCK = threading.Lock()
_LOADED: dict[str, Calibration] = {}


@dataclass(frozen=True)
class Calibration:
    """``sigmoid(bias + weights . inputs)``; the fused score's weight is positive, the rank's not.

    Usage::

        cal = load_calibration()
        cal.question(top_cosine=0.62, top_bm25=7.1, unseen_share=0.0, lacked_share=0.25)(0.93, rank=0)
    """

    weights: tuple[float, ...]
    bias: float

    def __post_init__(self) -> None:
        if len(self.weights) != len(CALIBRATION_INPUTS) or not self.weights[0] > 0 or self.weights[-1] > 0:
            raise InvalidArgument("calibration weights do not match this version's inputs (or would reorder a "
                                  "ranking): retrain them with `python -m benchmarks train-ranker`")

    def question(self, *, top_cosine: float, top_bm25: float, unseen_share: float,
                 lacked_share: float) -> _Scorer:
        """The fused score -> probability map of one question."""
        w = self.weights
        base = (self.bias + w[1] * top_cosine + w[2] * math.log1p(max(top_bm25, 0.0)) + w[3] * unseen_share
                + w[4] * lacked_share)
        return _Scorer(w[0], w[-1], base)


@dataclass(frozen=True)
class _Scorer:
    slope: float
    per_rank: float  # times log(1 + rank): at most 0
    base: float

    def __call__(self, fused: float, rank: int) -> float:
        """The probability for a hit with this fused score (at most 1) at this 0-based place."""
        z = self.base + self.slope * min(max(fused, 0.0), 1.0) + self.per_rank * math.log1p(rank)
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def load_calibration(path: str | Path | None = None) -> Calibration:
    """The calibration in ``path`` (default: the packaged one), read once per process."""
    where = str(Path(path) if path else PACKAGED_CALIBRATION)
    with _LOCK:
        if where not in _LOADED:
            try:
                spec = json.loads(Path(where).read_text())
                if list(spec["inputs"]) != list(CALIBRATION_INPUTS):
                    raise ValueError(f"inputs {spec['inputs']} are not {list(CALIBRATION_INPUTS)}")
                cal = Calibration(tuple(float(x) for x in spec["weights"]), float(spec["bias"]))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise InvalidArgument(f"cannot read score calibration {where}: {exc}") from None
            _LOADED[where] = cal
        return _LOADED[where]
