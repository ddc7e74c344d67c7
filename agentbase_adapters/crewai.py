"""CrewAI adapter: a storage backend for CrewAI's unified ``Memory``, on agentbase.

    from crewai import Memory
    from agentbase_adapters.crewai import AgentBaseStorage

    storage = AgentBaseStorage("memory.db", user_id="alice")
    memory = Memory(storage=storage, embedder=storage.embedder)     # was: Memory() (LanceDB + OpenAI embeddings)

Implements CrewAI's ``StorageBackend`` protocol (save / search / delete / update / get_record /
list_records / get_scope_info / list_scopes / list_categories / count / reset, the async
``asave`` / ``asearch`` / ``adelete``, and the optional ``touch_records``). One ``MemoryRecord`` is
one kernel entry with the record's id: its text is the content, CrewAI's scope path, categories,
metadata, importance, source and privacy live in the entry metadata (``crewai_*``), the categories
are also its tags; the kernel scope is the storage's (``user_id=`` ...), so the Mem0 swap, the MCP
server and the dashboard find a crew's memories there.

CrewAI hands ``search`` a query *vector*. agentbase ranks by text (full text + its own vectors +
entities), so ``storage.embedder`` - the kernel's own embedding model (local, no API key) as a CrewAI
embedder - remembers which text each vector it made came from, and ``search`` asks the kernel with
that text. A vector from another embedder cannot be turned back into text: ``search`` says so
(``ValueError``) instead of guessing. Scores are LanceDB's scale, ``1 / (1 + squared L2)`` of unit
vectors (``1 / (3 - 2 cos)``), so ``min_score`` and the consolidation threshold mean what they do there.

Every call goes through a circuit breaker (5 failures -> 30 s pause -> one trial); CrewAI itself
treats memory as optional in a crew (a failed recall or save is logged, the task goes on).

Install with ``pip install 'agentbase-memory[crewai]'``.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

import numpy as np

from agentbase_adapters._require import require

require("crewai.memory.storage.backend", extra="crewai")

from crewai.memory.types import MemoryRecord, ScopeInfo  # noqa: E402

from agentbase_adapters._failopen import FailOpen  # noqa: E402
from agentbase_adapters._harness import open_store  # noqa: E402
from agentbase_kernel import AgentBase, Entry, EntryNotFound, Kernel, in_thread  # noqa: E402

__all__ = ["AgentBaseEmbedder", "AgentBaseStorage"]

_STORE = "crewai"
_MARK = {"crewai_store": _STORE}
_R = TypeVar("_R")
_PAGE = 1000
_UNSET: Any = object()


def _naive_utc(when: datetime) -> datetime:
    """CrewAI's timestamps are naive UTC (``datetime.utcnow()``)."""
    return when.astimezone(timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def _stamp(when: datetime) -> str:
    """A naive-UTC ISO time of fixed width, so that stored stamps compare as strings in SQL."""
    return _naive_utc(when).isoformat(timespec="microseconds")


def _aware(when: datetime) -> datetime:
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when


def _key(vector: Sequence[float]) -> bytes:
    return hashlib.blake2b(np.asarray(vector, dtype=np.float32).tobytes(), digest_size=16).digest()


class AgentBaseEmbedder:
    """The kernel's embedding model as a CrewAI embedder (``embedder([texts]) -> vectors``).

    It remembers the text of the last ``keep`` vectors it made, so the storage can search by text. With
    no embedding model on the database (``embedder=None``) it makes a stand-in vector per text (a seeded
    random unit vector: equal texts, equal vectors) that still carries the text to the search.
    """

    def __init__(self, db: AgentBase, *, guard: FailOpen | None = None, keep: int = 10_000) -> None:
        self.db = db
        self.guard = guard if guard is not None else FailOpen(name=_STORE)
        self._texts: collections.OrderedDict[bytes, str] = collections.OrderedDict()
        self._keep = keep
        self._lock = threading.Lock()
        self._model: Any = _UNSET

    def _embedding_model(self) -> Any:
        """The database's embedding model, asked for once (through the breaker: opening the store may fail);
        it is local, so it keeps embedding queries while the store is down."""
        if self._model is _UNSET:
            def model() -> Any:
                self.db.sync.initialize()
                return self.db.sync.embedder

            self._model = self.guard.call(model)
        return self._model

    def _vectors(self, texts: list[str]) -> np.ndarray:
        model = self._embedding_model()
        if model is not None:
            return np.asarray(model.embed_batch(texts), dtype=np.float32)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            row = np.random.default_rng(seed).standard_normal(64)
            out[i] = row / np.linalg.norm(row)
        return out

    def __call__(self, input: list[str]) -> list[list[float]]:
        texts = [input] if isinstance(input, str) else list(input)
        vectors = self._vectors(texts) if texts else np.zeros((0, 0), dtype=np.float32)
        out = [row.tolist() for row in vectors]
        with self._lock:
            for text, row in zip(texts, out):
                self._texts[_key(row)] = text
                self._texts.move_to_end(_key(row))
            while len(self._texts) > self._keep:
                self._texts.popitem(last=False)
        return out

    def text_of(self, vector: Sequence[float]) -> str | None:
        """The text this embedder turned into ``vector``, if it still remembers it."""
        with self._lock:
            return self._texts.get(_key(vector))


def _to_record(entry: Entry) -> MemoryRecord:
    meta = entry.metadata
    created = meta.get("crewai_created_at")
    accessed = meta.get("crewai_last_accessed")
    assert entry.created_at is not None
    created_at = datetime.fromisoformat(created) if isinstance(created, str) else _naive_utc(entry.created_at)
    return MemoryRecord(
        id=entry.id, content=entry.l2_full, scope=str(meta.get("crewai_scope", "/")),
        categories=list(meta.get("crewai_categories") or []), metadata=dict(meta.get("crewai_metadata") or {}),
        importance=float(meta.get("crewai_importance", 0.5)), created_at=created_at,
        last_accessed=datetime.fromisoformat(accessed) if isinstance(accessed, str) else created_at,
        source=meta.get("crewai_source"), private=bool(meta.get("crewai_private", False)))


def _entry_fields(record: MemoryRecord) -> dict[str, Any]:
    """A record as ``add_memory`` / ``update`` keywords (the kernel scope is the storage's)."""
    return {
        "text": record.content, "tags": list(record.categories), "importance": float(record.importance),
        "metadata": {**_MARK, "crewai_scope": record.scope, "crewai_categories": list(record.categories),
                     "crewai_metadata": dict(record.metadata), "crewai_importance": float(record.importance),
                     "crewai_created_at": _stamp(record.created_at), "crewai_last_accessed": _stamp(record.last_accessed),
                     "crewai_source": record.source, "crewai_private": bool(record.private)}}


def _checked(records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """Refuse, before anything is written, what LanceDB refuses: metadata that is not JSON (``TypeError``)."""
    for record in records:
        try:
            json.dumps(record.metadata)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"memory record {record.id}: metadata must be JSON-serializable ({exc})") from None
    return list(records)


def _scope_filter(scope_prefix: str | None) -> dict[str, Any]:
    """Records whose scope path starts with ``scope_prefix`` (as a string, as LanceDB's ``LIKE 'p%'``);
    ``None``, ``""`` and ``"/"`` select everything."""
    if scope_prefix is None or not scope_prefix.strip("/"):
        return {}
    prefix = scope_prefix.rstrip("/")
    return {"crewai_scope": {"startswith": prefix if prefix.startswith("/") else "/" + prefix}}


def _record_filter(scope_prefix: str | None = None, categories: Sequence[str] | None = None,
                   metadata_filter: dict[str, Any] | None = None) -> dict[str, Any]:
    """CrewAI's filters as one kernel metadata filter, evaluated by the store: any of ``categories``,
    every ``metadata_filter`` key equal (a missing key equals ``None``, as ``dict.get`` has it)."""
    flt: dict[str, Any] = {**_MARK, **_scope_filter(scope_prefix)}
    parts: list[dict[str, Any]] = []
    if categories:
        parts.append({"OR": [{"crewai_categories": {"contains": c}} for c in categories]})
    for key, value in (metadata_filter or {}).items():
        path = f"crewai_metadata.{key}"
        parts.append({"OR": [{path: None}, {path: {"exists": False}}]} if value is None else {path: {"eq": value}})
    if parts:
        flt["AND"] = parts
    return flt


def _similarity_score(cosine: float) -> float:
    """LanceDB's score for unit vectors: ``1 / (1 + |a - b|^2) = 1 / (3 - 2 cos)``."""
    return 1.0 / (3.0 - 2.0 * max(-1.0, min(1.0, cosine)))


class AgentBaseStorage:
    """CrewAI memory records in an agentbase database, in one kernel scope.

    Args:
        db: An open ``AgentBase`` (left open by ``close()``), a path or PostgreSQL URL this storage
            opens, or ``None`` for ``$AGENTBASE_PATH`` / ./agentbase.db.
        user_id, agent_id, project_id: The kernel scope every record is kept in.
        guard: The circuit breaker every store call goes through.
        defer_embedding: Saves return once stored and FTS-searchable; vectors follow in the background.
        **options: ``AgentBase`` options when ``db`` is a path.
    """

    def __init__(self, db: AgentBase | str | os.PathLike[str] | None = None, *, user_id: str | None = None,
                 agent_id: str | None = None, project_id: str | None = None, guard: FailOpen | None = None,
                 defer_embedding: bool | None = True, **options: Any) -> None:
        self.db, self._owns_db = open_store(db, source=_STORE, options=options)
        ids = (("user_id", user_id), ("agent_id", agent_id), ("project_id", project_id))
        self.scope: dict[str, Any] = {k: v for k, v in ids if v is not None}
        self.defer_embedding = defer_embedding
        self._owns_guard = guard is None
        self.guard = guard if guard is not None else FailOpen(name=_STORE)
        self.embedder = AgentBaseEmbedder(self.db, guard=self.guard)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.db!r}, {self.scope!r})"

    @property
    def _kernel(self) -> Kernel:
        return self.db.sync

    def _guarded(self, fn: Callable[..., _R], *args: Any, **kwargs: Any) -> _R:
        return self.guard.call(fn, *args, **kwargs)

    def _entries(self, metadata: dict[str, Any], *, order: str = "asc") -> list[Entry]:
        out: list[Entry] = []
        while True:
            page = self._kernel.list(metadata=metadata, limit=_PAGE, offset=len(out), order=order, **self.scope)
            out.extend(page)
            if len(page) < _PAGE:
                return out

    def _get(self, record_id: str) -> Entry | None:
        try:
            entry = self._kernel.get(record_id, **self.scope)
        except EntryNotFound:
            return None
        return entry if entry.metadata.get("crewai_store") == _STORE else None

    # -- writes --------------------------------------------------------------------------------
    def save(self, records: list[MemoryRecord]) -> None:
        """Store each record under its id (a record whose id is already there replaces it)."""
        if records:
            self._guarded(self._save, _checked(records))

    def _save(self, records: list[MemoryRecord]) -> None:
        with self._kernel.transaction():
            for record in records:
                if self._get(record.id) is not None:
                    self._update(record)
                    continue
                fields = _entry_fields(record)
                self._kernel.add_memory(fields.pop("text"), entry_id=record.id, dedup=False,
                                        created_at=_aware(record.created_at), actor=record.source or _STORE,
                                        defer_embedding=self.defer_embedding, **fields, **self.scope)

    def update(self, record: MemoryRecord) -> None:
        """Replace the record with this id (created if it is not there)."""
        self._guarded(self._upsert, _checked([record])[0])

    def _upsert(self, record: MemoryRecord) -> None:
        with self._kernel.transaction():
            if self._get(record.id) is None:
                self._save([record])
            else:
                self._update(record)

    def _update(self, record: MemoryRecord) -> None:
        self._kernel.update(record.id, actor=record.source or _STORE, **_entry_fields(record), **self.scope)

    def touch_records(self, record_ids: list[str]) -> None:
        """Set ``last_accessed`` to now on these records (CrewAI calls it after a recall)."""
        if record_ids:
            self._guarded(self._touch, list(record_ids))

    def _touch(self, record_ids: list[str]) -> None:
        now = _stamp(datetime.now(timezone.utc))
        with self._kernel.transaction():
            for record_id in dict.fromkeys(record_ids):
                entry = self._get(record_id)
                if entry is not None:
                    self._kernel.update(record_id, metadata={**entry.metadata, "crewai_last_accessed": now},
                                        **self.scope)

    def delete(self, scope_prefix: str | None = None, categories: list[str] | None = None,
               record_ids: list[str] | None = None, older_than: datetime | None = None,
               metadata_filter: dict[str, Any] | None = None) -> int:
        """Delete the records matching every criterion given; how many were deleted.

        Raises:
            TypeError: ``older_than`` is not a datetime.
        """
        if older_than is not None and not isinstance(older_than, datetime):
            raise TypeError(f"older_than must be a datetime, not {type(older_than).__name__}")
        return self._guarded(self._delete, scope_prefix, categories, record_ids, older_than, metadata_filter)

    def _delete(self, scope_prefix: str | None, categories: list[str] | None, record_ids: list[str] | None,
                older_than: datetime | None, metadata_filter: dict[str, Any] | None) -> int:
        flt = _record_filter(scope_prefix, categories, metadata_filter)
        if older_than is not None:
            flt["crewai_created_at"] = {"lt": _stamp(older_than)}
        with self._kernel.transaction():
            if record_ids is not None and flt == _MARK:
                doomed = [e for e in (self._get(i) for i in dict.fromkeys(record_ids)) if e is not None]
            else:
                wanted = None if record_ids is None else set(record_ids)
                doomed = [e for e in self._entries(flt) if wanted is None or e.id in wanted]
            for entry in doomed:
                self._kernel.delete(entry.id, **self.scope)
        return len(doomed)

    def reset(self, scope_prefix: str | None = None) -> None:
        """Delete every record (of ``scope_prefix`` and the scopes under it)."""
        self._guarded(self._reset, scope_prefix)

    def _reset(self, scope_prefix: str | None) -> None:
        flt: dict[str, Any] = dict(_MARK)
        if scope_prefix is not None and scope_prefix.strip("/"):
            path = "/" + scope_prefix.strip("/")
            flt["OR"] = [{"crewai_scope": path}, {"crewai_scope": {"startswith": path + "/"}}]
        with self._kernel.transaction():
            for entry in self._entries(flt):
                self._kernel.delete(entry.id, **self.scope)

    # -- reads ---------------------------------------------------------------------------------
    def get_record(self, record_id: str) -> MemoryRecord | None:
        entry = self._guarded(self._get, record_id)
        return None if entry is None else _to_record(entry)

    def search(self, query_embedding: list[float], scope_prefix: str | None = None,
               categories: list[str] | None = None, metadata_filter: dict[str, Any] | None = None,
               limit: int = 10, min_score: float = 0.0) -> list[tuple[MemoryRecord, float]]:
        """The records best matching the text ``query_embedding`` was made from, best first, with
        LanceDB-scaled scores of at least ``min_score``.

        Raises:
            ValueError: ``query_embedding`` is not a vector, or was not made by ``self.embedder``.
        """
        try:
            vector = np.asarray(query_embedding, dtype=np.float32)
        except (TypeError, ValueError):
            vector = np.zeros(0, dtype=np.float32)
        if vector.ndim != 1 or not vector.size:
            raise ValueError(f"query_embedding must be a list of floats, not {type(query_embedding).__name__}")
        query = self.embedder.text_of(query_embedding)
        if query is None:
            raise ValueError("AgentBaseStorage searches by text: this vector was not made by storage.embedder - "
                             "build the memory as Memory(storage=storage, embedder=storage.embedder)")
        if limit <= 0:
            return []
        return self._guarded(self._search, query, list(query_embedding), _record_filter(scope_prefix, categories,
                                                                                         metadata_filter),
                             limit, min_score)

    def _search(self, query: str, vector: list[float], flt: dict[str, Any], limit: int,
                min_score: float) -> list[tuple[MemoryRecord, float]]:
        hits = list(self._kernel.find(query, top_k=min(limit, self._kernel.max_top_k), metadata=flt, **self.scope))
        unmeasured = [h for h in hits if h.similarity is None]
        cosines: dict[str, float] = {h.id: float(h.similarity) for h in hits if h.similarity is not None}
        if unmeasured:  # found by words only: measure them against the query as the vector leg would
            rows = np.asarray(self.embedder([h.entry.l2_full for h in unmeasured]), dtype=np.float32)
            q = np.asarray(vector, dtype=np.float32)
            if rows.shape[1:] == q.shape:
                cosines.update({h.id: float(c) for h, c in zip(unmeasured, rows @ q)})
        out = [(_to_record(h.entry), _similarity_score(cosines.get(h.id, 0.0))) for h in hits]
        # the kernel chose which records (words, meaning, entities); they come ordered by their score, as LanceDB's
        out.sort(key=lambda pair: -pair[1])
        return [(r, s) for r, s in out if s >= min_score][:limit]

    def list_records(self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0) -> list[MemoryRecord]:
        """Records of ``scope_prefix``, newest first."""
        if limit <= 0 or offset < 0:
            return []
        entries = self._guarded(self._kernel.list, metadata={**_MARK, **_scope_filter(scope_prefix)}, limit=limit,
                                offset=offset, order="desc", **self.scope)
        return [_to_record(e) for e in entries]

    def _rows(self, scope_prefix: str | None) -> list[Entry]:
        return self._guarded(self._entries, {**_MARK, **_scope_filter(scope_prefix)})

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """How many records ``scope`` (and every scope under it) holds, their categories, oldest and
        newest, and the scope's immediate children."""
        scope = scope.rstrip("/") or "/"
        prefix = "" if scope == "/" else (scope if scope.startswith("/") else "/" + scope)
        records = [_to_record(e) for e in self._rows(prefix or None)]
        if not records:
            return ScopeInfo(path=scope, record_count=0, categories=[], oldest_record=None, newest_record=None,
                             child_scopes=[])
        child = prefix + "/"
        children = {child + r.scope[len(child):].split("/", 1)[0] for r in records
                    if r.scope.startswith(child) and r.scope[len(child):].split("/", 1)[0]}
        dates = [r.created_at for r in records]
        return ScopeInfo(path=scope, record_count=len(records),
                         categories=sorted({c for r in records for c in r.categories}),
                         oldest_record=min(dates), newest_record=max(dates), child_scopes=sorted(children))

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The immediate child scopes of ``parent``."""
        parent = parent.rstrip("/") or ""
        prefix = parent + "/" if parent else "/"
        children = set()
        for entry in self._rows(prefix if prefix != "/" else None):
            scope = str(entry.metadata.get("crewai_scope", ""))
            if scope.startswith(prefix) and scope != (prefix.rstrip("/") or "/"):
                first = scope[len(prefix):].split("/", 1)[0]
                if first:
                    children.add(prefix + first)
        return sorted(children)

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """Category -> how many records of ``scope_prefix`` carry it."""
        counts: collections.Counter[str] = collections.Counter()
        for entry in self._rows(scope_prefix):
            counts.update(entry.metadata.get("crewai_categories") or [])
        return dict(counts)

    def count(self, scope_prefix: str | None = None) -> int:
        """How many records ``scope_prefix`` (and the scopes under it) holds; ``None`` / ``"/"``: all."""
        return self._guarded(self._kernel.count, metadata={**_MARK, **_scope_filter(scope_prefix)}, **self.scope)

    asave = in_thread(save)
    asearch = in_thread(search)
    adelete = in_thread(delete)

    # -- lifecycle -----------------------------------------------------------------------------
    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every record saved so far is vector-searchable too (it is FTS-searchable at once)."""
        return self._kernel.wait_embedded(timeout)

    def close(self) -> None:
        """Wait for pending vectors; close the database if this storage opened it. Safe twice."""
        if self._owns_guard:
            self.guard.close()
        if self._owns_db:
            self._kernel.close()
        elif not self._kernel.closed:
            self._kernel.wait_embedded()

