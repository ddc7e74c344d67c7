"""Vector encoding and the brute-force cosine search used when sqlite-vec cannot load.

Vectors are stored as little-endian float32 BLOBs, L2-normalised, so outsiders can read them
with ``np.frombuffer(blob, "<f4")``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["decode", "encode", "top_k_cosine"]


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def decode(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


def top_k_cosine(query: np.ndarray, ids: list[int], blobs: list[bytes], k: int) -> list[tuple[int, float]]:
    """``(id, cosine distance)`` of the ``k`` nearest, ties broken by id, like sqlite-vec's order."""
    if not ids:
        return []
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), -1)
    q = np.asarray(query, dtype=np.float32)
    row_norms = np.linalg.norm(matrix, axis=1)
    q_norm = float(np.linalg.norm(q))
    if q_norm == 0:
        return []
    sims = (matrix @ q) / np.where(row_norms == 0, 1.0, row_norms * q_norm)
    dist = 1.0 - sims.astype(np.float64)
    # like sqlite-vec, a zero vector has no distance and is left out
    keep = np.nonzero(row_norms > 0)[0]
    order = keep[np.lexsort((np.asarray(ids)[keep], dist[keep]))][:k]
    return [(ids[i], float(dist[i])) for i in order]
