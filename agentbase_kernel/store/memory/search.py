"""``SearchIndex`` in memory: BM25 (``fts.py``) and exact cosine ranking (``store/vectors.py``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...errors import InvalidArgument, StorageError
from ...records import Entry, Provenance, Scope, Trace
from ..base import EntryFilter
from ..vectors import cosine_distances, nearest
from .entries import EntriesMixin
from .fts import bm25_rank
from .tables import now

__all__ = ["SearchMixin"]


class SearchMixin(EntriesMixin):
    """The recall legs, rids back to entries, the turns around a hit, provenance and traces."""

    @property
    def vector_backend(self) -> str:
        return "numpy"

    def fts_search(self, terms: list[str], flt: EntryFilter, k: int, *, per_term: int = 400) -> list[tuple[int, float]]:
        if not terms:
            return []
        with self._lock:
            docs = {r["rid"]: (r["search_text"], r["search_context"]) for r in self._rows(flt)}
            every = [(r["search_text"], r["search_context"]) for r in self.tables.entries.values()]
            return bm25_rank(terms, docs, every, k, per_term)

    def vector_search(self, query: np.ndarray, flt: EntryFilter, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        with self._lock:
            rows = [(r["rid"], self.tables.vectors[r["content_hash"]]) for r in self._rows(flt)
                    if r["content_hash"] in self.tables.vectors]
        if not rows:
            return []
        try:
            matrix = np.stack([v for _, v in rows]).astype(np.float32)
        except ValueError as exc:
            raise StorageError(f"This store holds vectors of different sizes ({exc}) - re-embed it with one "
                               "embedder") from exc
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (matrix.shape[1],):
            raise InvalidArgument(f"The query vector has {q.size} dims, this store's vectors have {matrix.shape[1]} "
                                  "- embed the query with the store's embedder")
        dist = cosine_distances(matrix, np.linalg.norm(matrix, axis=1), q)
        if dist is None:
            return []
        rids = np.asarray([rid for rid, _ in rows], dtype=np.int64)
        return [(int(rids[i]), float(dist[i])) for i in nearest(dist, rids, k)]

    def indexed_vectors(self, scope: Scope, rids: Iterable[int]) -> dict[int, np.ndarray]:
        """None: ``vectors_for`` is already a lookup in RAM here."""
        return {}

    def entries_by_rid(self, rids: Iterable[int]) -> dict[int, Entry]:
        with self._lock:
            out = {}
            for rid in dict.fromkeys(rids):
                entry_id = self.tables.rids.get(rid)
                if entry_id is not None:
                    out[rid] = self._entry(self.tables.entries[entry_id])
            return out

    # -- session turns -------------------------------------------------------------------------
    def _turn_message(self, entry_id: str) -> dict[str, Any] | None:
        """The first message (by rid) whose turn is this entry."""
        return next((m for m in self.tables.messages.values() if m["entry_id"] == entry_id), None)

    def _session_messages(self, session_id: str) -> list[dict[str, Any]]:
        return sorted((m for m in self.tables.messages.values() if m["session_id"] == session_id),
                      key=lambda m: m["seq"])

    def neighbour_turn_hashes(self, rids: Iterable[int]) -> dict[int, tuple[str | None, str | None]]:
        out: dict[int, tuple[str | None, str | None]] = {}
        with self._lock:
            entries = self.tables.entries
            for rid in dict.fromkeys(rids):
                entry_id = self.tables.rids.get(rid)
                for message in [m for m in self.tables.messages.values() if entry_id and m["entry_id"] == entry_id]:
                    turns = self._session_messages(message["session_id"])
                    i = next(n for n, m in enumerate(turns) if m["id"] == message["id"])
                    hashes = []
                    for near in (turns[i - 1] if i > 0 else None, turns[i + 1] if i + 1 < len(turns) else None):
                        row = entries.get(near["entry_id"]) if near is not None and near["entry_id"] else None
                        hashes.append(row["content_hash"] if row is not None else None)
                    if hashes[0] or hashes[1]:
                        out[rid] = (hashes[0], hashes[1])
        return out

    def session_neighbours(self, entry_ids: list[str], window: int, flt: EntryFilter) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        with self._lock:
            visible = {r["id"] for r in self._rows(flt)}
            for entry_id in entry_ids:
                message = self._turn_message(entry_id)
                if message is None:
                    continue
                near: list[str] = []
                for m in self._session_messages(message["session_id"]):
                    if abs(m["seq"] - message["seq"]) <= window and m["entry_id"] in visible \
                            and m["entry_id"] != entry_id and m["entry_id"] not in near:
                        near.append(m["entry_id"])
                out[entry_id] = near
        return out

    def provenance(self, entry_ids: Iterable[str]) -> dict[str, list[Provenance]]:
        with self._lock:
            ids = list(dict.fromkeys(entry_ids))
            out: dict[str, list[Provenance]] = {i: [] for i in ids}
            for message in self.tables.messages.values():  # in message rid order
                for entry_id in ids:
                    if (entry_id, message["id"]) in self.tables.entry_sources:
                        out[entry_id].append(Provenance(message["id"], message["session_id"], message["role"],
                                                        copy.deepcopy(message["metadata"])))
            return out

    # -- traces --------------------------------------------------------------------------------
    def save_trace(self, trace: Trace, scope: Scope, result_ids: list[str], total_ms: float) -> None:
        with self._lock:
            self.tables.traces[trace.id] = {
                "id": trace.id, "query": trace.query, "scope": scope.as_dict(), "intents": list(trace.intents),
                "degrade_reason": trace.degrade_reason, "result_ids": list(result_ids), "total_ms": total_ms,
                "created_at": now(), "steps": [{"name": s.name, "ms": s.ms, "candidates": s.candidates,
                                                "params": copy.deepcopy(s.params)} for s in trace.steps]}

    def load_traces(self, scope: Scope, limit: int = 20) -> list[dict[str, Any]]:
        wanted = scope.as_dict()
        with self._lock:
            newest = sorted(self.tables.traces.values(), key=lambda t: t["created_at"], reverse=True)
            return [copy.deepcopy(t) for t in newest if all(t["scope"].get(k) == v for k, v in wanted.items())][:limit]
