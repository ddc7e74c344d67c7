"""Vector search on PostgreSQL with pgvector: exact, or HNSW for big scopes (full text: ``fts.py``).

Vectors: a scope (the filter's rows) of at most ``shortlist_above`` rows is ranked exactly by
cosine distance; a bigger one through the HNSW index (cosine) with pgvector's iterative scan,
which keeps walking the graph until enough rows pass the filter - and if it still finds fewer
than ``k``, the exact ranking answers. Like the SQLite store's shortlist, the big-scope path is
approximate (HNSW recall), the small one exact.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import numpy as np

from ...errors import InvalidArgument
from ...records import Scope
from ..base import EntryFilter, utcnow
from ..sql import mapped
from ..vectors import encode
from .planner import PlannerStatsMixin, count_is_fresh

__all__ = ["SearchMixin", "as_array"]

# the HNSW index is created under this transaction lock, so racing processes make it once
_INDEX_LOCK = 0x61_67_65_6E_74_62_62


def as_array(value: Any) -> np.ndarray:
    """A vector read from the database (pgvector's ``Vector``, or already an array) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, dtype=np.float32)


def _build_memory_mb(conn: Any, dim: int) -> int:
    """Memory for building the HNSW graph of the table's vectors: each element holds its vector and
    its neighbour lists (~4 bytes a dimension + ~400 bytes with pgvector's default m = 16), kept
    between 512 MB and 3 GB so a big table never asks a small server for more than that."""
    estimate = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'embeddings'::regclass").fetchone()[0]
    rows = max(float(estimate or 0), 0.0)
    if rows <= 0:
        rows = float(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
    return int(min(3072, max(512, rows * (4 * dim + 400) * 1.15 / 2**20)))


class SearchMixin(PlannerStatsMixin):
    """``put_vectors`` / ``vectors_for`` / ``vector_search``."""

    vector_shortlist_above: int
    _counts: dict[Any, tuple[int, int]]
    _index_dim: int | None
    _ef_search: weakref.WeakKeyDictionary[Any, int]
    _unindexed_writes: int
    _next_index_check: int
    _bulk_depth: int

    @property
    def vector_backend(self) -> str:
        return "pgvector"

    # -- vectors -----------------------------------------------------------------------------------
    @mapped
    def vectors_for(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        with self.conns.read() as conn:
            rows = conn.execute("SELECT content_hash, vector FROM embeddings WHERE content_hash = ANY(?)",
                                (wanted,), binary=True).fetchall()
        return {h: as_array(v) for h, v in rows}

    def indexed_vectors(self, scope: Scope, rids: Iterable[int]) -> dict[int, np.ndarray]:
        """None: pgvector searches in the server, this process holds no vectors (``vectors_for`` reads them)."""
        return {}

    @mapped
    def put_vectors(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(h, np.asarray(v, dtype=np.float32)) for h, v in items]
        if not rows:
            return
        with self.conns.write() as conn:
            conn.executemany("INSERT INTO embeddings (content_hash, vector) VALUES (?, ?) ON CONFLICT DO NOTHING", rows)
            self._ensure_index(conn, len(rows[0][1]), len(rows))

    def _vector_param(self, vector: np.ndarray) -> np.ndarray:
        return np.asarray(vector, dtype=np.float32)

    def _vector_bytes(self, value: Any) -> bytes:
        return encode(as_array(value))

    def _vectors_added(self, conn: Any, dim: int, count: int) -> None:
        self._ensure_index(conn, dim, count)

    @contextlib.contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Writes inside do not make the HNSW index; it is built once, when the outermost block ends.

        pgvector updates the graph on every insert (~13 ms a vector past 50,000 here), while one
        build over the loaded table takes a fraction of that per row: the advice is to load, then
        index. Searches meanwhile rank exactly. An index that already exists is kept up as usual.
        """
        with self._cache_lock:
            self._bulk_depth += 1
        try:
            yield
        finally:
            with self._cache_lock:
                self._bulk_depth -= 1
                outermost = self._bulk_depth == 0
        # after a failed load the next write's check makes the index instead
        if outermost and self._index_dim is None:
            self._build_index_now()

    @mapped
    def _build_index_now(self) -> None:
        with self.conns.write() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_dim'").fetchone()
            if row is None or int(row[0]) <= 0:
                return
            self._ensure_index(conn, int(row[0]), 0, now=True)

    def _ensure_index(self, conn: Any, dim: int, added: int, *, now: bool = False) -> None:
        """The HNSW (cosine) index, made once the table holds more vectors than a scope searched
        exactly: below that every search is exact, and writes skip the index's upkeep (most of
        a write's cost). Checked on this process's first write and every 1,000 vectors after,
        not inside ``bulk_load``; ``now`` checks at once (the end of a ``bulk_load``)."""
        if self._index_dim is not None or self.vector_shortlist_above <= 0:
            return
        self._unindexed_writes += added
        if not now and (self._unindexed_writes < self._next_index_check or self._bulk_depth):
            return
        self._next_index_check = self._unindexed_writes + 1000
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_INDEX_LOCK,))
        row = conn.execute("SELECT value FROM meta WHERE key = 'hnsw_dim'").fetchone()
        if row is not None:
            self._index_dim = int(row[0])
            return
        count = conn.execute("SELECT count(*) FROM (SELECT 1 FROM embeddings LIMIT ?) x",
                             (self.vector_shortlist_above + 1,)).fetchone()[0]
        if count > self.vector_shortlist_above:
            # the graph built in memory is several times faster than one spilling to disk
            conn.execute(f"SET LOCAL maintenance_work_mem = '{_build_memory_mb(conn, dim)}MB'")
            conn.execute(f"CREATE INDEX IF NOT EXISTS embeddings_hnsw ON embeddings "
                         f"USING hnsw ((vector::vector({int(dim)})) vector_cosine_ops)")
            conn.execute("INSERT INTO meta (key, value) VALUES ('hnsw_dim', ?)", (str(int(dim)),))
            self._index_dim = dim

    def _dims(self, conn: Any) -> tuple[int | None, int | None, int]:
        """The stored vectors' dimension (as ``check_embedder`` recorded it), the HNSW index's if
        made, and the change log's seq (the scope-size cache's key): one statement."""
        seq, embedding_dim, hnsw_dim = conn.execute(
            "SELECT (SELECT coalesce(max(seq), 0) FROM entry_changes), "
            "(SELECT value FROM meta WHERE key = 'embedding_dim'), (SELECT value FROM meta WHERE key = 'hnsw_dim')").fetchone()
        if self._index_dim is None and hnsw_dim is not None:
            self._index_dim = int(hnsw_dim)
        dim = hnsw_dim or embedding_dim
        return (int(dim) if dim and int(dim) > 0 else None), self._index_dim, int(seq)

    @mapped
    def vector_search(self, query: np.ndarray, flt: EntryFilter, k: int) -> list[tuple[int, float]]:
        """``(entry rid, cosine distance)`` nearest first, ties by rid, within the filter.

        Raises:
            InvalidArgument: the query's dimension is not the stored vectors'.
        """
        if k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        now = utcnow()
        where, args = self.where_sql(flt, now=now)
        with self.conns.read() as conn:
            self._fresh_statistics(conn)
            dim, indexed, seq = self._dims(conn)
            if dim is not None and q.size != dim:
                raise InvalidArgument(f"The query vector has {q.size} dims, this store's vectors have {dim}")
            rows: list[Any] = []
            if indexed is not None and self.vector_shortlist_above > 0:
                if self._count(conn, where, args, now, seq) > self.vector_shortlist_above:
                    rows = self._hnsw_search(conn, q, indexed, where, args, k)
            if len(rows) < k:
                rows = conn.execute(
                    f"SELECT e.rid, v.vector <=> ? AS d FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                    f"WHERE {where} ORDER BY d, e.rid LIMIT ?", [q, *args, k]).fetchall()
        # zero vectors have no direction (NaN distance): left out, as on SQLite
        hits = [(int(r), float(d)) for r, d in rows if d is not None and not math.isnan(d)]
        hits.sort(key=lambda h: (h[1], h[0]))
        return hits[:k]

    def _hnsw_search(self, conn: Any, q: np.ndarray, dim: int, where: str, args: list[Any], k: int) -> list[Any]:
        """The HNSW walk with pgvector's iterative scan (each connection has it on, ``store.py``) and
        a candidate list twice ``k``: set on the connection once per size, not per search (a
        transaction with ``SET LOCAL`` was three more round trips)."""
        ef = max(40, min(1000, 2 * k))
        if self.conns.in_write:  # a setting changed in a transaction that rolls back would not stay
            with conn.transaction():
                conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                return self._hnsw_rows(conn, q, dim, where, args, k)
        with self._cache_lock:
            current = self._ef_search.get(conn)
        if current != ef:
            conn.execute("SELECT set_config('hnsw.ef_search', ?, false)", (str(ef),))
            with self._cache_lock:
                self._ef_search[conn] = ef
        return self._hnsw_rows(conn, q, dim, where, args, k)

    def _hnsw_rows(self, conn: Any, q: np.ndarray, dim: int, where: str, args: list[Any], k: int) -> list[Any]:
        rows: list[Any] = conn.execute(
            f"SELECT e.rid, v.vector::vector({dim}) <=> ?::vector({dim}) AS d FROM embeddings v "
            f"JOIN entries e ON e.content_hash = v.content_hash WHERE {where} ORDER BY d LIMIT ?",
            [q, *args, k]).fetchall()
        return rows

    def _count(self, conn: Any, where: str, args: list[Any], now: datetime, seq: int | None = None) -> int:
        """Entries in a filter, cached per filter while ``count_is_fresh`` (the exact-or-HNSW choice;
        a count 1% behind does not change it noticeably)."""
        key = (where, tuple(None if a is now else repr(a) for a in args))
        seq = self._changes_seq(conn) if seq is None else seq
        with self._cache_lock:
            hit = self._counts.get(key)
            if hit is not None and count_is_fresh(hit[0], seq, hit[1]):
                return hit[1]
        n = int(conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args).fetchone()[0])
        if not self.conns.in_write:
            with self._cache_lock:
                if len(self._counts) > 4096:
                    self._counts.clear()
                self._counts[key] = (seq, n)
        return n
