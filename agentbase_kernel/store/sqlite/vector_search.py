"""Vectors: the ``embeddings`` table and nearest-neighbour search with a per-scope cache.

``VectorIndex`` per scope (the filter's user/agent/project/session) holds the scope's vectors in
RAM, refreshed row by row from the ``entry_changes`` log (migration 2) inside the search's own read
snapshot, so writes by this process and by others are seen at once. Other filter terms are checked
in SQL on the nearest rows (over-fetching), or, when too few pass, by ranking only the rows SQL
says pass: always exact.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...errors import InvalidArgument, StorageError
from ...records import Scope
from ..base import EntryFilter
from ..sql import SqlCore, mapped
from ..vectors import VectorIndex, decode, encode, nearest, top_k_cosine
from .connection import Connections

__all__ = ["VECTOR_CACHE_BYTES", "VECTOR_SHORTLIST_ABOVE", "VectorsMixin"]

# 2 GiB: one scope of 1M memories at 384 dims (1.5 GB) fits; least recently searched scopes go first
VECTOR_CACHE_BYTES = 2 << 30
# a scope with more vectors is searched through a 1-bit shortlist, then exactly (store/vectors.py)
VECTOR_SHORTLIST_ABOVE = 50_000
# nearest rows checked against a filter in SQL before asking SQL for every row that passes it
OVERFETCH_MAX = 4096


class VectorsMixin(SqlCore):
    """``put_vectors`` / ``vectors_for`` by content hash, and ``vector_search`` within a filter."""

    conns: Connections
    vector_cache_bytes: int
    vector_shortlist_above: int
    overfetch_max: int
    _vindex: OrderedDict[tuple[str | None, ...], VectorIndex]

    @property
    def vec_enabled(self) -> bool:
        """sqlite-vec is loaded (else vectors are searched with numpy)."""
        return bool(self.conns.vec_loaded)

    @property
    def vector_backend(self) -> str:
        return "sqlite-vec" if self.vec_enabled else "numpy"

    @mapped
    def vectors_for(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        with self.conns.read() as conn:
            rows = self.select_in(conn, "SELECT content_hash, vector FROM embeddings WHERE {in}", "content_hash", hashes)
        return {h: decode(blob) for h, blob in rows}

    @mapped
    def indexed_vectors(self, scope: Scope, rids: Iterable[int]) -> dict[int, np.ndarray]:
        """The vectors of these entries (by rid) from the scope's in-RAM index, brought up to date
        with the change log first: the same float32 values ``vectors_for`` reads from the file,
        without reading them. Rows the index lacks (no vector, no index built for the scope by a
        search, or inside a write transaction) are left out for ``vectors_for`` to answer."""
        wanted = np.fromiter((int(r) for r in rids), dtype=np.int64)
        if not len(wanted) or self.vector_cache_bytes <= 0 or self.conns.in_write:
            return {}
        with self._cache_lock, self.conns.read() as conn:
            key = (scope.user_id, scope.agent_id, scope.project_id, scope.session_id)
            # only an index a search already built: building one (or counting a scope over the
            # budget) here would cost more than the reads it saves
            index = self._vector_index(conn, scope) if key in self._vindex else None
            if index is None or not index.size:
                return {}
            have = index.rids[: index.size]
            pos = np.minimum(np.searchsorted(have, wanted), index.size - 1)
            # a removed row keeps its place with a zero norm; a zero vector is left to the file too
            found = (have[pos] == wanted) & (index.norms[pos] != 0)
            rows = index.matrix[pos[found]]  # a copy: the index changes in place on later writes
        return dict(zip(wanted[found].tolist(), rows))

    @mapped
    def put_vectors(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        with self.conns.write() as conn:
            conn.executemany("INSERT OR IGNORE INTO embeddings (content_hash, vector) VALUES (?, ?)",
                             [(h, encode(v)) for h, v in items])

    def _vector_param(self, vector: np.ndarray) -> bytes:
        return encode(vector)

    def _vector_bytes(self, value: Any) -> bytes:
        return bytes(value)

    @mapped
    def vector_search(self, query: np.ndarray, flt: EntryFilter, k: int, *, force_numpy: bool = False,
                      use_index: bool = True) -> list[tuple[int, float]]:
        """``(entry rid, cosine distance)`` nearest first, ties by rid, within the filter.

        Searches the scope's in-RAM ``VectorIndex`` (both backends), or with ``use_index=False``
        (and inside a write transaction, whose rows may still roll back) scans the file: through
        sqlite-vec, or numpy with ``force_numpy=True`` or without the extension. Same results either way.

        Raises:
            InvalidArgument: the query's dimension is not the stored vectors'.
        """
        if k <= 0:
            return []
        where, args = self.where_sql(flt)
        if use_index and self.vector_cache_bytes > 0 and not self.conns.in_write:
            with self._cache_lock, self.conns.read() as conn:
                index = self._vector_index(conn, flt.scope)
                if index is not None:
                    return self._index_search(conn, index, query, where, args, k)
        blob = encode(query)
        with self.conns.read() as conn:
            if self.vec_enabled and not force_numpy:
                rows = conn.execute(
                    f"SELECT e.rid, vec_distance_cosine(v.vector, ?) AS d FROM entries e "
                    f"JOIN embeddings v ON v.content_hash = e.content_hash WHERE {where} "
                    "ORDER BY d, e.rid LIMIT ?", [blob, *args, k]).fetchall()
                # zero vectors have no direction: sqlite-vec gives NULL, and we leave them out
                return [(int(r[0]), float(r[1])) for r in rows if r[1] is not None]
            rows = conn.execute(
                f"SELECT e.rid, v.vector FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                f"WHERE {where}", args).fetchall()
        try:
            return top_k_cosine(query, [r[0] for r in rows], [r[1] for r in rows], k)
        except ValueError as exc:
            raise InvalidArgument(f"The query vector ({np.asarray(query).size} dims) does not match the "
                                  f"stored vectors: {exc}") from exc

    def _scope_where(self, scope: Scope) -> tuple[str, list[Any]]:
        return self.where_sql(EntryFilter(scope=scope, include_expired=True, include_invalid=True, archived=None))

    def _vector_index(self, conn: Any, scope: Scope) -> VectorIndex | None:
        """The scope's index, brought up to date with the change log; ``None`` if it is over budget."""
        key = (scope.user_id, scope.agent_id, scope.project_id, scope.session_id)
        seq = self._changes_seq(conn)
        index = self._vindex.get(key)
        if index is not None and index.seq != seq and not self._refresh(conn, index, scope, seq):
            del self._vindex[key]
            index = None
        if index is None:
            where, args = self._scope_where(scope)
            count = conn.execute(f"SELECT count(*) FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                                 f"WHERE {where}", args).fetchone()[0]
            first = conn.execute(f"SELECT length(v.vector) FROM entries e JOIN embeddings v "
                                 f"ON v.content_hash = e.content_hash WHERE {where} LIMIT 1", args).fetchone()
            dim = (first[0] // 4) if first else 0
            if count * (dim * 4 + 12) > self.vector_cache_bytes:
                return None
            rows = conn.execute(f"SELECT e.rid, v.vector FROM entries e JOIN embeddings v "
                                f"ON v.content_hash = e.content_hash WHERE {where} ORDER BY e.rid", args)
            try:
                index = VectorIndex.build(rows, count=count, dim=dim, seq=seq,
                                          shortlist_above=self.vector_shortlist_above)
            except ValueError as exc:
                raise StorageError(f"{self.path} holds vectors of different sizes ({exc}) - "
                                   "re-embed it with one embedder", path=str(self.path)) from exc
            self._vindex[key] = index
            total = sum(i.nbytes for i in self._vindex.values())
            while total > self.vector_cache_bytes and len(self._vindex) > 1:
                _, evicted = self._vindex.popitem(last=False)
                total -= evicted.nbytes
        self._vindex.move_to_end(key)
        return index

    def _refresh(self, conn: Any, index: VectorIndex, scope: Scope, seq: int) -> bool:
        """Apply the logged changes past ``index.seq``; False when a rebuild is the better way."""
        low = conn.execute("SELECT min(seq) FROM entry_changes").fetchone()[0]
        if low is None or low > index.seq + 1 or seq < index.seq:
            return False  # the log was pruned past this index (or the file was replaced)
        changed = [r[0] for r in conn.execute("SELECT DISTINCT rid FROM entry_changes WHERE seq > ?", (index.seq,))]
        if len(changed) > max(4096, index.live // 8):
            return False
        where, args = self._scope_where(scope)
        rows: list[tuple[int, bytes]] = []
        for i in range(0, len(changed), 500):
            part = changed[i : i + 500]
            rows.extend(conn.execute(
                f"SELECT e.rid, v.vector FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                f"WHERE e.rid IN ({','.join('?' * len(part))}) AND {where}", [*part, *args]))
        present = {r[0] for r in rows}
        try:
            index.apply([r for r in changed if r not in present], sorted(rows))
        except ValueError:
            return False
        index.seq = seq
        return True

    def _index_search(self, conn: Any, index: VectorIndex, query: np.ndarray, where: str, args: list[Any],
                      k: int) -> list[tuple[int, float]]:
        dim = index.matrix.shape[1]
        if np.asarray(query).shape != (dim,) and index.size:
            raise InvalidArgument(f"The query vector has {np.asarray(query).size} dims, this store's vectors "
                                  f"have {dim} - embed the query with the store's embedder")
        if not index.size:
            return []
        rids = index.rids[: index.size]
        # the filter is checked on the nearest rows, in (distance, rid) order, 2k, 16k, ... at a time;
        # an exact search computes the distances once for every round
        passing: dict[int, bool] = {}
        full: np.ndarray | None = None
        n = max(2 * k, k + 32)
        while True:
            if full is None and index.shortlist_size(n) is None:
                full = index.distances(query)
                if full is None:
                    return []
            found = index.nearest(query, n, dist=full)
            if found is None:
                return []
            order, dist = found
            found_rids = [int(r) for r in rids[order]]
            fresh = [r for r in found_rids if r not in passing]
            ok = self._rids_passing(conn, fresh, where, args)
            passing.update((r, r in ok) for r in fresh)
            out = [(r, float(d)) for r, d in zip(found_rids, dist.tolist()) if passing[r]]
            if len(out) >= k or len(order) < n:
                return out[:k]
            if n >= self.overfetch_max:
                break
            n *= 8
        # a selective filter: rank only the rows SQL says pass, exactly
        allowed = np.fromiter((r[0] for r in conn.execute(f"SELECT e.rid FROM entries e WHERE {where}", args)),
                              dtype=np.int64)
        if full is None:
            full = index.distances(query)
            if full is None:
                return []
        full = np.where(np.isin(rids, allowed), full, np.inf)
        return [(int(rids[i]), float(full[i])) for i in nearest(full, rids, k)]

    def _rids_passing(self, conn: Any, rids: list[int], where: str, args: list[Any]) -> set[int]:
        out: set[int] = set()
        for i in range(0, len(rids), 500):
            part = rids[i : i + 500]
            out.update(r[0] for r in conn.execute(
                f"SELECT e.rid FROM entries e NOT INDEXED WHERE e.rid IN ({','.join('?' * len(part))}) AND {where}", [*part, *args]))
        return out
