"""The learned second stage: gradient-boosted trees read from a small JSON file, scored with numpy.

The file (``ranker.json`` beside this module, written by ``python -m benchmarks train-ranker``) holds
each tree as arrays (split feature, threshold, children, leaf value) and a Platt scaling fitted on
leave-one-set-out predictions, so ``score`` is a probability that a candidate is what the question
asks for: comparable across questions and scopes, and the same on every machine (no model call,
no randomness).

    ranker = load_ranker()
    probabilities = ranker.score(matrix(signals))
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from .features import FEATURES

__all__ = ["PACKAGED", "Ranker", "load_ranker"]

PACKAGED = Path(__file__).resolve().parent / "ranker.json"
_LOCK = threading.Lock()
_LOADED: dict[str, Ranker] = {}


class Ranker:
    """A tree ensemble over ``FEATURES``; ``score`` gives calibrated probabilities.

    Usage::

        ranker = Ranker(json.loads(PACKAGED.read_text()))
        ranker.score(features)   # (n,) in [0, 1]
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        if spec.get("format") != 1 or list(spec.get("features", ())) != list(FEATURES):
            raise InvalidArgument("ranker weights do not match this version's features: retrain them "
                                  "with `python -m benchmarks train-ranker`")
        trees = spec["trees"]
        width = max(len(t["value"]) for t in trees)

        def padded(key: str, dtype: Any, fill: float) -> np.ndarray:
            out = np.full((len(trees), width), fill, dtype=dtype)
            for i, t in enumerate(trees):
                out[i, : len(t[key])] = t[key]
            return out

        self.feature = padded("feature", np.intp, 0)
        self.threshold = padded("threshold", np.float64, 0.0)
        self.left = padded("left", np.intp, 0)
        self.right = padded("right", np.intp, 0)
        self.leaf = padded("leaf", bool, 1)
        self.missing_left = padded("missing_left", bool, 1)
        self.value = padded("value", np.float64, 0.0)
        self.baseline = float(spec["baseline"])
        self.platt = (float(spec["platt"][0]), float(spec["platt"][1]))
        self.meta = dict(spec.get("meta", {}))
        self._trees = np.arange(len(trees))[:, None]
        self._depth = _max_depth(trees)

    def raw(self, X: np.ndarray) -> np.ndarray:
        """The ensemble's log-odds for each row (the trees' sum plus the baseline)."""
        n = X.shape[0]
        if not n:
            return np.zeros(0)
        node = np.zeros((len(self._trees), n), dtype=np.intp)
        cols = np.arange(n)[None, :]
        for _ in range(self._depth):
            x = X[cols, self.feature[self._trees, node]]
            go_left = np.where(np.isnan(x), self.missing_left[self._trees, node], x <= self.threshold[self._trees, node])
            step = np.where(go_left, self.left[self._trees, node], self.right[self._trees, node])
            node = np.where(self.leaf[self._trees, node], node, step)
        out: np.ndarray = self.baseline + self.value[self._trees, node].sum(axis=0)
        return out

    def score(self, X: np.ndarray) -> np.ndarray:
        """Calibrated probabilities in [0, 1]."""
        a, b = self.platt
        return 1.0 / (1.0 + np.exp(-(a * self.raw(X) + b)))


def _max_depth(trees: list[dict[str, Any]]) -> int:
    deepest = 0
    for t in trees:
        depth = {0: 0}
        for node in range(len(t["value"])):
            if not t["leaf"][node]:
                depth[t["left"][node]] = depth[t["right"][node]] = depth[node] + 1
        deepest = max(deepest, max(depth.values()))
    return deepest


def load_ranker(path: str | Path | None = None) -> Ranker:
    """The ranker in ``path`` (default: the packaged weights), read once per process."""
    where = str(Path(path) if path else PACKAGED)
    with _LOCK:
        if where not in _LOADED:
            try:
                spec = json.loads(Path(where).read_text())
            except (OSError, ValueError) as exc:
                raise InvalidArgument(f"cannot read ranker weights {where}: {exc}") from None
            _LOADED[where] = Ranker(spec)
        return _LOADED[where]
