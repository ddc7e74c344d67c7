"""Vector encoding, the exact cosine ranking, and ``VectorIndex``: one scope's vectors in RAM.

Vectors are stored as little-endian float32 BLOBs, L2-normalised, so outsiders can read them
with ``np.frombuffer(blob, "<f4")``.

Every search ranks by cosine distance, ties by rid, and leaves zero vectors out (they have no
direction), like sqlite-vec's ``vec_distance_cosine`` does. ``VectorIndex`` holds a scope's vectors
as one float32 matrix, so a search is one matrix-vector product instead of reading every BLOB: it
costs 4 bytes x dim per memory (384 dims: 1.5 KB; 1M memories: 1.5 GB of RAM). The store keeps it
in step with the file through the ``entry_changes`` log (migration 2).

A scope bigger than ``shortlist_above`` rows is searched in two steps: a 1-bit code per row (the
sign of each centred dimension, 48 bytes at 384 dims) picks a shortlist by Hamming distance, and
the shortlist is ranked exactly. At 100k rows a query reads 5 MB of codes and 6% of the rows instead
of all 150 MB (the exact product is bound by memory speed): the vector leg went from 12.8 to 6.6 ms,
keeping 0.998 of the exact top 10 (docs/retrieval.md has the figures on real MiniLM vectors).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["VectorIndex", "cosine_distances", "decode", "encode", "nearest", "top_k_cosine"]

# the shortlist of a big scope: this share of its rows, at least SHORTLIST_MIN, and at least
# SHORTLIST_PER_RESULT per row asked for (a filter that asks for more gets a longer list)
SHORTLIST_SHARE = 0.06
SHORTLIST_MIN = 4096
SHORTLIST_PER_RESULT = 32


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def decode(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


# The product is bound by one core's memory bandwidth (100k x 384: 16 ms with one thread, 9 ms with
# two, here).
SEARCH_THREADS = min(2, os.cpu_count() or 1)
_SPLIT_ROWS = 32_768
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _matvec(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``matrix @ q``, large matrices in ``SEARCH_THREADS`` row blocks (BLAS releases the GIL)."""
    global _pool
    threads = min(SEARCH_THREADS, len(matrix) // _SPLIT_ROWS)
    if threads < 2:
        return np.asarray(matrix @ q)
    with _pool_lock:
        if _pool is None or _pool._max_workers < threads - 1:
            _pool = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="agentbase-vectors")
        pool = _pool
    out = np.empty(len(matrix), dtype=np.result_type(matrix.dtype, q.dtype))
    # block edges at multiples of 64 rows: BLAS then takes every row down the same code path as
    # in one product (its remainder loop rounds differently), so the distances are bit-identical
    bounds = [0, *(len(matrix) * i // threads // 64 * 64 for i in range(1, threads)), len(matrix)]
    futures = [pool.submit(np.dot, matrix[a:b], q, out[a:b]) for a, b in zip(bounds[1:-1], bounds[2:])]
    np.dot(matrix[: bounds[1]], q, out[: bounds[1]])
    for f in futures:
        f.result()
    return out


if hasattr(np, "bitwise_count"):  # numpy >= 2
    def _popcount(words: np.ndarray) -> np.ndarray:
        return np.asarray(np.bitwise_count(words))
else:  # pragma: no cover - numpy 1.x
    _BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)

    def _popcount(words: np.ndarray) -> np.ndarray:
        return _BYTE_BITS[words.view(np.uint8)]


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.atleast_2d(rows)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def _codes(rows: np.ndarray, center: np.ndarray) -> np.ndarray:
    """One bit per dimension of each unit row (above the centre or not), packed into uint64 words."""
    bits = np.packbits(_unit(rows) > center, axis=1)
    pad = -bits.shape[1] % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits).view(np.uint64)


def cosine_distances(matrix: np.ndarray, norms: np.ndarray, query: np.ndarray) -> np.ndarray | None:
    """Cosine distance of each row to ``query``; ``inf`` for zero rows; ``None`` for a zero query."""
    q = np.asarray(query, dtype=np.float32)
    q_norm = float(np.linalg.norm(q))
    if q_norm == 0:
        return None
    sims = _matvec(matrix, q) / np.where(norms == 0, 1.0, norms * q_norm)
    dist = 1.0 - sims.astype(np.float64)
    dist[norms == 0] = np.inf
    return dist


def nearest(dist: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` smallest finite distances, ordered by (distance, id)."""
    if n <= 0 or not len(dist):
        return np.empty(0, dtype=np.int64)
    if n < len(dist):
        # every row tied with the n-th distance comes along, so the id tie-break stays exact
        kth = np.partition(dist, n - 1)[n - 1]
        cand = np.nonzero(dist <= kth)[0]
    else:
        cand = np.nonzero(np.isfinite(dist))[0]
    cand = cand[np.isfinite(dist[cand])]
    return np.asarray(cand[np.lexsort((ids[cand], dist[cand]))][:n])


def top_k_cosine(query: np.ndarray, ids: list[int], blobs: list[bytes], k: int) -> list[tuple[int, float]]:
    """``(id, cosine distance)`` of the ``k`` nearest, ties broken by id, like sqlite-vec's order."""
    if not ids:
        return []
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), -1)
    dist = cosine_distances(matrix, np.linalg.norm(matrix, axis=1), query)
    if dist is None:
        return []
    id_array = np.asarray(ids, dtype=np.int64)
    return [(ids[i], float(dist[i])) for i in nearest(dist, id_array, k)]


class VectorIndex:
    """The vectors of one scope as a float32 matrix, rows sorted by rid.

    Usage::

        index = VectorIndex.build(rows, count=len(rows), dim=384)
        index.apply(removed=[7], upserted=[(12, blob)])
        [(rid, dist), ...] = index.search(query, 10)

    A removed row keeps its place with a zero norm, which every search leaves out, and is reused
    if its rid comes back; ``compact()`` drops such rows once they are many.
    """

    def __init__(self, rids: np.ndarray, matrix: np.ndarray, seq: int = 0, *, shortlist_above: int = 0) -> None:
        self.rids = rids
        self.matrix = matrix
        self.norms = np.linalg.norm(matrix, axis=1) if len(matrix) else np.empty(0, dtype=np.float32)
        self.size = len(rids)
        self.dead = 0
        self.seq = seq  # the last change-log entry this index reflects
        # 0: always exact; else scopes bigger than this are shortlisted by 1-bit codes first
        self.shortlist_above = shortlist_above
        self.center: np.ndarray | None = None  # built with the codes, on the first shortlisted search
        self.codes: np.ndarray | None = None

    @classmethod
    def build(cls, rows: Iterable[tuple[int, bytes]], *, count: int, dim: int, seq: int = 0,
              chunk: int = 4096, shortlist_above: int = 0) -> VectorIndex:
        """Fill from ``(rid, blob)`` rows sorted by rid; ``count`` rows at most (one matrix, no copies)."""
        rids = np.empty(count, dtype=np.int64)
        matrix = np.empty((count, dim), dtype=np.float32)
        n = 0
        batch: list[tuple[int, bytes]] = []
        it = iter(rows)
        while True:
            batch = [row for _, row in zip(range(chunk), it)]
            if not batch:
                break
            m = len(batch)
            rids[n : n + m] = [r[0] for r in batch]
            matrix[n : n + m] = np.frombuffer(b"".join(r[1] for r in batch), dtype="<f4").reshape(m, dim)
            n += m
        return cls(rids[:n], matrix[:n], seq, shortlist_above=shortlist_above)

    @property
    def nbytes(self) -> int:
        codes = 0 if self.codes is None else self.codes.nbytes
        return int(self.matrix.nbytes + self.rids.nbytes + self.norms.nbytes + codes)

    @property
    def live(self) -> int:
        return self.size - self.dead

    def distances(self, query: np.ndarray) -> np.ndarray | None:
        n = self.size
        return cosine_distances(self.matrix[:n], self.norms[:n], query)

    def shortlist_size(self, n: int) -> int | None:
        """Rows the 1-bit shortlist takes for ``n`` results, or ``None`` when the search is exact."""
        size = self.size
        if not self.shortlist_above or size <= self.shortlist_above:
            return None
        wanted = max(SHORTLIST_MIN, int(size * SHORTLIST_SHARE), SHORTLIST_PER_RESULT * n)
        return wanted if wanted < size // 2 else None

    def nearest(self, query: np.ndarray, n: int, *, dist: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray] | None:
        """Positions of the ``n`` nearest rows in (distance, rid) order, and their distances.

        Exact up to ``shortlist_above`` rows, or when ``dist`` (this query's ``distances()``, which
        a caller asking again with a larger ``n`` already has) is given; above, exact within the
        1-bit shortlist. ``None`` for a zero query.
        """
        rids = self.rids[: self.size]
        wanted = self.shortlist_size(n) if dist is None else None
        if wanted is not None:
            q = np.asarray(query, dtype=np.float32)
            pos = self._shortlist(q, wanted)
            found = cosine_distances(self.matrix[pos], self.norms[pos], q)
            if found is None:
                return None
            order = nearest(found, rids[pos], n)
            return pos[order], found[order]
        if dist is None:
            dist = self.distances(query)
            if dist is None:
                return None
        order = nearest(dist, rids, n)
        return order, dist[order]

    def _shortlist(self, q: np.ndarray, wanted: int) -> np.ndarray:
        """Positions of (about) the ``wanted`` rows nearest to ``q`` by Hamming distance, ascending."""
        size = self.size
        if self.codes is None or self.center is None:
            # in blocks: a temporary of 1M x 384 rows would be 1.5 GB
            blocks = range(0, len(self.matrix), 65_536)
            total = sum(_unit(self.matrix[i : min(i + 65_536, size)]).sum(axis=0) for i in blocks if i < size)
            self.center = (total / max(size, 1)).astype(np.float32)
            self.codes = np.vstack([_codes(self.matrix[i : i + 65_536], self.center) for i in blocks])
        counts = _popcount(self.codes[:size] ^ _codes(q, self.center)[0])
        hamming = counts[:, 0].astype(np.uint16)
        for j in range(1, counts.shape[1]):  # column by column: 2x faster than sum(axis=1) here
            hamming += counts[:, j]
        # every row up to the Hamming distance that reaches ``wanted`` (ties come along)
        cut = int(np.searchsorted(np.bincount(hamming).cumsum(), wanted))
        return np.nonzero(hamming <= cut)[0]

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        found = self.nearest(query, k)
        if found is None:
            return []
        rids = self.rids[: self.size]
        return [(int(rids[i]), float(d)) for i, d in zip(*found)]

    def apply(self, removed: Iterable[int], upserted: Iterable[tuple[int, bytes]]) -> None:
        """Drop ``removed`` rids and put ``(rid, blob)`` rows (new or changed)."""
        rids = self.rids[: self.size]
        for rid in removed:
            i = int(np.searchsorted(rids, rid))
            if i < self.size and rids[i] == rid and self.norms[i] != 0:
                self.norms[i] = 0
                self.matrix[i] = 0  # its stale code may shortlist it: the exact step drops zero rows
                self.dead += 1
        for rid, blob in upserted:
            vec = np.frombuffer(blob, dtype="<f4")
            if vec.shape != (self.matrix.shape[1],):
                raise ValueError(f"vector of {vec.size} dims in a {self.matrix.shape[1]}-dim index")
            rids = self.rids[: self.size]
            i = int(np.searchsorted(rids, rid))
            if i < self.size and rids[i] == rid:
                if self.norms[i] == 0:
                    self.dead -= 1
            else:
                self._open_row(i, rid)
            self.matrix[i] = vec
            self.norms[i] = np.linalg.norm(self.matrix[i])
            if self.codes is not None and self.center is not None:
                self.codes[i] = _codes(vec, self.center)[0]
            if self.norms[i] == 0:
                self.dead += 1
        if self.dead > 1024 and self.dead > self.size // 4:
            self.compact()

    def _open_row(self, i: int, rid: int) -> None:
        """Make room for ``rid`` at position ``i`` (the end, for the usual growing rid)."""
        if self.size == len(self.rids):
            grow = max(1024, self.size // 4)
            self.rids = np.concatenate([self.rids, np.zeros(grow, dtype=np.int64)])
            self.matrix = np.concatenate([self.matrix, np.zeros((grow, self.matrix.shape[1]), dtype=np.float32)])
            self.norms = np.concatenate([self.norms, np.zeros(grow, dtype=self.norms.dtype)])
            if self.codes is not None:
                self.codes = np.concatenate([self.codes, np.zeros((grow, self.codes.shape[1]), dtype=np.uint64)])
        if i < self.size:  # a rid below the largest (SQLite reuses a deleted max rid): shift the tail
            self.rids[i + 1 : self.size + 1] = self.rids[i : self.size].copy()
            self.matrix[i + 1 : self.size + 1] = self.matrix[i : self.size].copy()
            self.norms[i + 1 : self.size + 1] = self.norms[i : self.size].copy()
            if self.codes is not None:
                self.codes[i + 1 : self.size + 1] = self.codes[i : self.size].copy()
        self.rids[i] = rid
        self.size += 1

    def compact(self) -> None:
        keep = np.nonzero(self.norms[: self.size] != 0)[0]
        self.rids = self.rids[keep]
        self.matrix = self.matrix[keep]
        self.norms = self.norms[keep]
        if self.codes is not None:
            self.codes = self.codes[keep]
        self.size = len(keep)
        self.dead = 0
