"""The facade: ``Kernel`` (sync core) and ``AgentBase`` (its async face).

Adapters import only this. ``AgentBase`` methods are coroutines that run the sync core in a
worker thread, so they never block the event loop; ``db.sync`` is the ``Kernel`` itself, plain
blocking code that is safe to call from inside a running loop (Jupyter, async web apps).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import copy
import os
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, cast

from . import arguments as check
from .config import Config, RetrievalConfig, locate_database
from .errors import ClosedError, EntryNotFound, InvalidArgument, ScopeError
from .ingest.pipeline import Ingestor, validate_text
from .lifecycle import AuditEvent, Prefetch, Reinforcer
from .lifecycle.audit import check_kinds
from .lifecycle.capacity import effective_capacity, enforce
from .lifecycle.composite import CompositeRank
from .lifecycle.consolidate import Consolidation
from .lifecycle.gate import Gate
from .lifecycle.schedule import ConsolidationSchedule
from .records import AddResult, ContextType, Entry, FindResult, HistoryEvent, Message, Scope, Session
from .retrieve.pipeline import MAX_TOP_K, Decomposer, Reranker, Retriever
from .rules.conflicts import Conflict
from .rules.importance import check_importance
from .rules.permissions import Policy, Verdicts, policy_of
from .rules.trust import Writer, check_trust, writing_as
from .store import NO_EMBEDDER, EntryFilter, MessageRow, Store, open_store, redact_url
from .store.base import utcnow
from .telemetry import traced
from .threads import in_thread

__all__ = ["AgentBase", "Kernel"]

_UNSET: Any = object()


class Kernel:
    """The synchronous agentbase core over one SQLite file.

    Usage::

        with Kernel("memory.db", embedder=None) as k:
            k.add_memory("I like green tea", user_id="alice")
            k.find("tea", user_id="alice")
    """

    #: ``find`` returns at most this many hits; ``list(limit=, offset=)`` pages through any number
    max_top_k: int = MAX_TOP_K

    def __init__(self, path: str | os.PathLike[str] | None = None, *, embedder: Any = "auto",
                 ner: str | None = "auto", config: Config | None = None, create: bool = True,
                 summarizer: Callable[[str], str] | None = None, reranker: Reranker | None = None,
                 decomposer: Decomposer | None = None, agent: str | None = None, source: str = "kernel") -> None:
        # one rule for every entry point: path, $AGENTBASE_PATH, the .agentbase pointer, ./agentbase.db
        choice = locate_database(path)
        self.path: Path | str = choice.location
        self.path_from = choice.source
        if isinstance(embedder, str) and embedder == "auto" and choice.embedder:
            embedder = choice.embedder  # what `agentbase init --embedder` recorded in the pointer
        if ner == "auto" and choice.ner:
            ner = choice.ner
        # governance (docs/lifecycle.md): the acting agent that policies judge, and the write path
        self._agent = check.check_id("agent", agent)
        if not isinstance(source, str) or not source:
            raise InvalidArgument(f"source must be a non-empty str, got {source!r}", param="source")
        self._source = source
        self._root: Kernel = self  # a view (``view``, ``as_agent``) shares its root's open file
        self._verdicts = Verdicts()  # permission verdicts on the current policies, shared with views
        self.config = config or Config.load()
        self._embedder_spec = embedder
        self._ner_spec = ner
        self._create = create
        self._summarizer = summarizer
        self._reranker = reranker
        self._decomposer = decomposer
        self._open_lock = threading.Lock()
        self._store: Store | None = None
        self._closed = False
        self.embedder: Any = None
        self._embedder_reason: str | None = None
        self.ner: Any = None
        self._ingestor: Ingestor | None = None
        self._retriever: Retriever | None = None
        self._reinforcer: Reinforcer | None = None
        self._schedule: ConsolidationSchedule | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def initialize(self) -> Kernel:
        """Open the file, apply migrations, load NER and the embedder. Idempotent."""
        self._ready()
        return self

    def _ready(self) -> Store:
        if self._root is not self:
            store = self._root._ready()
            if self._store is not store:
                root = self._root
                self._store, self.embedder, self.ner = root._store, root.embedder, root.ner
                self._ingestor, self._retriever, self._reinforcer = root._ingestor, root._retriever, root._reinforcer
                self._schedule = root._schedule
            return store
        if self._closed:
            raise ClosedError("Cannot use the database, as it has been closed.")
        if self._store is not None:
            return self._store
        with self._open_lock:
            if self._store is None:
                from .text.embedders import get_embedder, no_embedder_reason
                from .text.embedders.remote import prepare_remote
                from .text.ner import load_ner

                store = open_store(self.path, self.config.storage, create=self._create)
                try:
                    spec = self._embedder_spec
                    file_has_none = store.meta().get("embedding_model") == NO_EMBEDDER
                    if isinstance(spec, str) and spec.casefold() == "auto" and file_has_none:
                        spec = None  # "auto" opens a file written without an embedder as it was written
                    embedder = get_embedder(spec)
                    # never silent: "auto" finding no model warns once; info() says why either way
                    self._embedder_reason = (None if embedder is not None
                                             else no_embedder_reason(self._embedder_spec, file_has_none=file_has_none))
                    if embedder is not None:
                        prepare_remote(embedder, self.config.embedder, store.meta())  # fail-open HTTP embedders
                        store.check_embedder(embedder.name, embedder.dim)
                except BaseException:
                    store.close()
                    raise
                self.embedder = embedder
                self.ner = load_ner(self._ner_spec) if self.config.ingest.ner else load_ner(None)
                self._ingestor = Ingestor(store, config=self.config.ingest, ner=self.ner, embedder=embedder,
                                          summarizer=self._summarizer,
                                          defer_embedding=self.config.ingest.defer_embedding)
                self._retriever = Retriever(store, config=self.config.retrieval, ner=self.ner, embedder=embedder,
                                            reranker=self._reranker, decomposer=self._decomposer)
                lifecycle = self.config.lifecycle
                try:
                    store.configure_audit(lifecycle.audit, lifecycle.audit_max_rows)
                except BaseException:
                    store.close()
                    raise
                self._reinforcer = Reinforcer(store, interval=lifecycle.reinforce_flush_seconds)
                if lifecycle.rank_composite:
                    self._retriever.rank_term = CompositeRank(store, lifecycle)
                self._schedule = ConsolidationSchedule(lifecycle.consolidate_every_writes, self._consolidate_now,
                                                       idle_seconds=lifecycle.consolidate_idle_seconds)
                self._store = store
                # texts a killed process stored without their (deferred) vectors: embedded in the background
                self._ingestor.resume()
        return self._store

    @property
    def ingestor(self) -> Ingestor:
        self._ready()
        assert self._ingestor is not None
        return self._ingestor

    @property
    def retriever(self) -> Retriever:
        self._ready()
        assert self._retriever is not None
        return self._retriever

    def close(self, *, wait_embedded: bool = True) -> None:
        """Close every connection. Safe to call twice.

        With deferred embedding, waits for the background embedder first (``wait_embedded=False``
        stops it at once; what it did not reach is embedded by the next deferred write or ``rebuild``).
        A view closes the file it shares.
        """
        if self._root is not self:
            self._root.close(wait_embedded=wait_embedded)
            return
        if self._schedule is not None:
            self._schedule.close()
        if self._reinforcer is not None:
            self._reinforcer.close()
        if self._ingestor is not None:
            self._ingestor.close(wait=wait_embedded)
        if self._store is not None:
            self._store.close()
        self._store = None
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._root._closed

    # -- governance: who is acting (docs/lifecycle.md) ------------------------------------------
    @property
    def agent(self) -> str | None:
        """The acting agent that scope policies judge (``None``: the file's owner, unrestricted)."""
        return self._agent

    @property
    def source(self) -> str:
        """The write path stamped on every entry this kernel writes (``Entry.source``)."""
        return self._source

    def view(self, *, agent: str | None = _UNSET, source: str = _UNSET) -> Kernel:
        """This kernel over the same open file, acting as another agent and/or writing as another
        source. Cheap: nothing is opened twice; closing a view closes the file.

        Usage::

            bot = kernel.view(agent="bot-b")           # policies now apply to bot-b
            mem0_path = kernel.view(source="mem0")     # entries record source "mem0"
        """
        out = copy.copy(self)
        if agent is not _UNSET:
            out._agent = check.check_id("agent", agent)
        if source is not _UNSET:
            if not isinstance(source, str) or not source:
                raise InvalidArgument(f"source must be a non-empty str, got {source!r}", param="source")
            out._source = source
        return out

    def as_agent(self, agent: str | None) -> Kernel:
        """``view(agent=agent)``: this file, with ``agent``'s permissions."""
        return self.view(agent=agent)

    @property
    def _gate(self) -> Gate:
        return Gate(self._ready(), self._agent, audit=self.config.lifecycle.audit, queue=self._reinforcer,
                    verdicts=self._verdicts)

    def _writing(self) -> Any:
        return writing_as(Writer(self._source, self._agent))

    def _check_entry(self, access: str, entry: Entry, operation: str) -> Entry:
        if self._agent is not None:
            self._gate.check(access, entry.scope, operation, exact=True, entry_ids=[entry.id])
        return entry

    def _check_session(self, access: str, session_id: str, operation: str,
                       scope: Scope | None = None) -> None:
        """Judge a call on one session by the session's scope (or, if it does not exist yet, the
        scope it would be created in)."""
        if self._agent is None:
            return
        session = self._ready().find_session(session_id)
        base = session.scope if session is not None else (scope or Scope())
        self._gate.check(access, Scope(base.user_id, base.agent_id, base.project_id, session_id), operation,
                         exact=True)

    def __enter__(self) -> Kernel:
        return self.initialize()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def info(self) -> dict[str, Any]:
        """What this kernel runs with: file, schema, vector backend, NER stage, embedder; for a remote
        embedder its circuit breaker (``embedder_breaker``), and the texts still waiting for a vector
        (``vector_backlog``, counted while this process has embedding work outstanding)."""
        from .text.embedders.remote import breaker_state

        store = self._ready()
        breaker = breaker_state(self.embedder)
        ingestor = self.ingestor
        # counting reads every entry (80 ms at 20k): done only while this process has embedding work
        # outstanding; verify() always counts
        outstanding = self.embedder is not None and (
            ingestor.pending > 0 or ingestor.embed_error is not None or ingestor.unavailable is not None
            or (breaker is not None and breaker["state"] != "closed"))
        backlog = len(store.hashes_without_vector()) if outstanding else 0
        return {"path": self.location, "path_from": self.path_from, "schema_version": store.schema_version(), "journal_mode": store.journal_mode(),
                "vector_backend": store.vector_backend,
                "ner_stage": self.ingestor.ner_stage,
                "embedder": getattr(self.embedder, "name", None), "dim": getattr(self.embedder, "dim", None),
                "embedder_reason": self._root._embedder_reason,
                "embedder_breaker": breaker, "vector_backlog": backlog}

    @property
    def location(self) -> str:
        """The file path, or the database URL without its password: what to print."""
        return redact_url(self.path) if isinstance(self.path, str) else str(self.path)

    def stats(self) -> dict[str, int]:
        """Row counts of the whole file: ``entries`` (expired and superseded too), ``entries_valid``,
        ``sessions``, ``messages`` and ``vectors`` (one per distinct text)."""
        return self._ready().stats()

    # -- entries -------------------------------------------------------------------------------
    @traced("add_memory")
    def add_memory(self, text: str, *, user_id: str | None = None, agent_id: str | None = None,
                   project_id: str | None = None, session_id: str | None = None, category: str | None = None,
                   tags: Sequence[str] = (), metadata: dict[str, Any] | None = None, role: str | None = "user",
                   actor: str | None = None, context_type: ContextType | str = "memory", confidence: float = 1.0,
                   created_at: datetime | None = None, valid_from: datetime | None = None,
                   expires_at: datetime | date | str | None = None, infer: bool = False,
                   entry_id: str | None = None, dedup: bool = True, stream: str | None = None,
                   defer_embedding: bool | None = None, speaker: str | None = None,
                   trust: float | None = None, importance: float | None = None,
                   split_stream: bool = True) -> AddResult:
        """Store one memory verbatim (plus facts when ``infer``). An exact duplicate is a NOOP.

        ``dedup=False`` keeps this entry even when the scope already holds the same text (for
        key-value callers such as a LangGraph store, where two keys may hold equal values).

        ``stream`` names a conversation that arrives one write at a time (a Mem0 ``run_id``, a
        LangGraph namespace): writes with the same stream in the same scope are indexed and
        ranked as neighbouring turns of a session (``ingest/streams.py``). ``speaker`` is who said
        it: searchable with the text, as a session turn's name; without one, a text that opens with
        ``"Name: "`` is read as said by that name. A stream write more than ``ingest.stream_gap_minutes``
        after the previous one (by its ``created_at``, else the date its text is stamped with, else
        when it arrived) starts a new stream session; ``split_stream=False`` keeps the stream one
        session (the caller named it).

        ``defer_embedding`` overrides ``ingest.defer_embedding`` for this write: ``True`` returns
        once the text is stored and FTS-searchable, and a background thread adds its vector
        (``wait_embedded()``; ``close()`` waits for it).

        ``trust`` (0..1) overrides the default its ``role`` gives (``rules/trust.py``).
        ``importance`` in [0, 1] ranks the memory for capacity and consolidation (and the optional
        composite rank term); ``None`` lets the rule decide (``rules/importance.py``).

        Raises:
            InvalidArgument: empty text, bad types, or malformed ids.
            PermissionDenied: a scope policy forbids this kernel's agent to write the scope.
        """
        item = check.memory_item(text, user_id=user_id, agent_id=agent_id, project_id=project_id,
                                 session_id=session_id, category=category, tags=tags, metadata=metadata, role=role,
                                 actor=actor, context_type=context_type, confidence=confidence, created_at=created_at,
                                 valid_from=valid_from, expires_at=expires_at, infer=infer, entry_id=entry_id,
                                 dedup=dedup, stream=stream, defer_embedding=defer_embedding, speaker=speaker,
                                 trust=trust, importance=importance, split_stream=split_stream)
        self._check_items([item], "add_memory")
        with self._writing():
            return self._wrote(self.ingestor.add_many([item]))[0]

    def _check_items(self, items: builtins.list[dict[str, Any]], operation: str) -> None:
        if self._agent is not None:
            for scope in {check.scope_of(i.get("user_id"), i.get("agent_id"), i.get("project_id"), i.get("session_id"))
                          for i in items}:
                self._gate.check("write", scope, operation, exact=True)

    @traced("add_memories")
    def add_memories(self, items: Iterable[dict[str, Any]], *,
                     progress: Callable[[int, int], None] | None = None) -> list[AddResult]:
        """Bulk import: one transaction for all; ``progress(done, total)`` after each item."""
        if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
            raise InvalidArgument(f"items must be a list of dicts, got {type(items).__name__}")
        prepared = []
        for item in items:
            if not isinstance(item, dict) or "text" not in item:
                raise InvalidArgument("each item must be a dict with a 'text' key")
            prepared.append(check.memory_item(item["text"], **{k: v for k, v in item.items() if k != "text"}))
        self._check_items(prepared, "add_memories")
        with self._writing():
            return self._wrote(self.ingestor.add_many(prepared, progress=progress))

    def get(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            project_id: str | None = None, session_id: str | None = None) -> Entry:
        """The entry, or ``EntryNotFound`` (a ``KeyError``) when missing or outside the scope."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        entry = self._check_entry("read", self._ready().get_entry(check.entry_id(entry_id), scope), "get")
        return self._with_access([entry])[0]

    def update(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None, text: str | None = None,
               metadata: dict[str, Any] | None = None, tags: Sequence[str] | None = None,
               category: str | None = None, expires_at: Any = _UNSET, confidence: float | None = None,
               actor: str | None = None, importance: float | None = None) -> Entry:
        """Change an entry in place; a new text goes through ingest (``Ingestor.update``) as on insert."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        store = self._ready()
        entry_id = check.entry_id(entry_id)
        changes: dict[str, Any] = {}
        if text is not None:
            text = validate_text(text)
        if metadata is not None:
            changes["metadata"] = check.metadata(metadata)
        new_tags = check.tags(tags) if tags is not None else None
        if category is not None:
            if not isinstance(category, str):
                raise InvalidArgument(f"category must be a str, got {type(category).__name__}")
            changes["category"] = category
        if expires_at is not _UNSET:
            changes["expires_at"] = check.when(expires_at, "expires_at")
        if confidence is not None:
            if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not 0 <= confidence <= 1:
                raise InvalidArgument(f"confidence must be a number in [0, 1], got {confidence!r}")
            changes["confidence"] = float(confidence)
        if importance is not None:
            changes["importance"] = check_importance(importance)
        if self._agent is not None:  # judged before the transaction, so that the denial's audit row stays
            self._check_entry("write", store.get_entry(entry_id, scope), "update")
        with store.transaction():
            current = store.get_entry(entry_id, scope)
            return self.ingestor.update(current, scope, changes, text=text, tags=new_tags, actor=actor)

    def delete(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Entry:
        """Delete one entry and return it (a DELETE history event stays). ``EntryNotFound`` when missing."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        entry_id = check.entry_id(entry_id)
        if self._agent is not None:
            self._check_entry("write", self._ready().get_entry(entry_id, scope), "delete")
        return self._ready().delete_entry(entry_id, scope, actor=actor)

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None,
                   project_id: str | None = None, session_id: str | None = None,
                   metadata: dict[str, Any] | None = None) -> int:
        """Delete every entry of a scope (those matching ``metadata`` if given). At least one scope
        keyword is required (``reset()`` wipes all)."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        if scope.is_empty:
            raise ScopeError("delete_all needs at least one of user_id, agent_id, project_id, session_id - "
                             "use reset() to wipe the whole database")
        flt = EntryFilter(scope=scope, include_expired=True, include_invalid=True,
                          metadata=check.metadata_filter(metadata), archived=None)
        flt.exclude_scopes = self._gate.check("write", scope, "delete_all")
        return self._ready().delete_entries(flt)

    def reset(self) -> None:
        """Wipe every entry, session, message and history row in the file."""
        self._gate.check("write", Scope(), "reset", whole=True)
        self._ready().reset()

    def _filter(self, *, user_id: Any = None, agent_id: Any = None, project_id: Any = None, session_id: Any = None,
                context_type: Any = None, category: Any = None, tags: Any = None, role: Any = None,
                include_expired: bool = False, include_invalid: bool = False, as_of: Any = None,
                metadata: Any = None, since: Any = None, until: Any = None, archived: Any = False,
                min_trust: Any = None, operation: str = "list") -> EntryFilter:
        if context_type is not None:
            try:
                context_type = ContextType(getattr(context_type, "value", context_type)).value
            except ValueError:
                raise InvalidArgument(f"context_type must be one of memory, resource, skill; got {context_type!r}") from None
        if archived not in (False, True, None):
            raise InvalidArgument(f"archived must be False, True or None (both), got {archived!r}")
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        return EntryFilter(
            scope=scope, context_type=context_type, category=category,
            tags=tuple(check.tags(tags)) if tags is not None else None, role=role, include_expired=include_expired,
            include_invalid=include_invalid, as_of=check.when(as_of, "as_of"),
            metadata=check.metadata_filter(metadata),
            since=check.when(since, "since"), until=check.when(until, "until"), archived=archived,
            min_trust=check_trust(min_trust),
            exclude_scopes=self._gate.check("read", scope, operation) if self._agent is not None else ())

    def list(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
             session_id: str | None = None, context_type: Any = None, category: str | None = None,
             tags: Sequence[str] | None = None, role: str | None = None, include_expired: bool = False,
             include_invalid: bool = False, as_of: datetime | None = None, metadata: dict[str, Any] | None = None,
             since: datetime | None = None, until: datetime | None = None, limit: int | None = 100,
             offset: int = 0, order: str = "asc", archived: bool | None = False,
             min_trust: float | None = None) -> builtins.list[Entry]:
        """Entries in creation order, filtered; ``limit=None`` for all. ``archived=True`` lists only
        archived entries (capacity, consolidation), ``None`` both. ``min_trust`` leaves out entries
        less trusted (``Entry.trust``)."""
        if order not in ("asc", "desc"):
            raise InvalidArgument(f"order must be 'asc' or 'desc', got {order!r}")
        flt = self._filter(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id,
                           context_type=context_type, category=category, tags=tags, role=role,
                           include_expired=include_expired, include_invalid=include_invalid, as_of=as_of,
                           metadata=metadata, since=since, until=until, archived=archived, min_trust=min_trust)
        return self._with_access(self._ready().list_entries(flt, limit=check.limit(limit),
                                                            offset=check.limit(offset, "offset") or 0, order=order))

    def count(self, /, **filters: Any) -> int:
        """How many entries ``list`` would return without a limit."""
        return self._ready().count_entries(self._filter(**filters, operation="count"))

    def history(self, entry_id: str) -> builtins.list[HistoryEvent]:
        """ADD / UPDATE / DELETE events of an entry, oldest first (``[]`` for an unknown id), with
        ``CONFLICT`` (a contradicting fact kept beside it) and ``RESOLVE`` (which side a ``resolve``
        kept, old value the side dropped) events from conflicts."""
        entry_id = check.entry_id(entry_id)
        store = self._ready()
        if self._agent is not None:
            try:
                self._check_entry("read", store.get_entry(entry_id), "history")
            except EntryNotFound:  # a deleted entry's scope is gone with it: only the owner reads its past
                if store.policies():
                    self._gate.deny("read", Scope(), "history", None, [entry_id])
        events = store.history(entry_id)
        for row in store.list_conflicts(Scope(), include_closed=True, entry_ids=[entry_id]):
            a, b = row["entry_ids"]
            other = row["texts"][1] if a == entry_id else row["texts"][0]
            mine = row["texts"][0] if a == entry_id else row["texts"][1]
            events.append(HistoryEvent(row["id"], entry_id, "CONFLICT", mine, other, row["created_at"],
                                       reason=row["reason"]))
            if row["status"] == "resolved":
                kept_text, lost_text = (row["texts"][0], row["texts"][1]) if row["kept"] == a else \
                    (row["texts"][1], row["texts"][0])
                events.append(HistoryEvent(f"{row['id']}:resolve", entry_id, "RESOLVE", lost_text, kept_text,
                                           row["resolved_at"], row["actor"],
                                           reason=f"conflict {row['id']} ({row['reason']}) resolved: kept {row['kept']}"))
        events.sort(key=lambda e: e.created_at)
        return events

    # -- retrieval -----------------------------------------------------------------------------
    @traced("find")
    def find(self, query: str, *, top_k: int = 10, user_id: str | None = None, agent_id: str | None = None,
             project_id: str | None = None, session_id: str | None = None, context_type: Any = None,
             category: str | None = None, tags: Sequence[str] | None = None, role: str | None = None,
             since: datetime | None = None, until: datetime | None = None, as_of: datetime | None = None,
             metadata: dict[str, Any] | None = None, reference_time: datetime | None = None,
             token_budget: int | None = None, strategy: str = "auto", include_expired: bool = False,
             config: Any = None, reinforce: bool | None = None, min_trust: float | None = None,
             trust_weight: float = 0.0) -> FindResult:
        """Hybrid retrieval (FTS5 + vectors + NER + intents), best first, with a trace.

        Each returned entry's ``access_count`` / ``last_accessed_at`` are bumped after the search,
        batched off the read path (``reinforce=False`` or ``lifecycle.reinforce`` off to skip).

        ``min_trust`` leaves out entries less trusted (in SQL, before ranking); ``trust_weight`` w
        in [0, 1] re-ranks by ``score * (1 - w + w * trust)`` (off by default: not measured to
        help, docs/lifecycle.md). Hits whose entry is in an open conflict carry its id in
        ``hit.entry.conflicts``, and ``result.trace.conflicts`` lists those entries.
        """
        flt = self._filter(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id,
                           context_type=context_type, category=category, tags=tags, role=role,
                           include_expired=include_expired, as_of=as_of, metadata=metadata, since=since, until=until,
                           min_trust=min_trust, operation="find")
        if not isinstance(trust_weight, (int, float)) or isinstance(trust_weight, bool) or not 0 <= trust_weight <= 1:
            raise InvalidArgument(f"trust_weight must be a number in [0, 1], got {trust_weight!r}", param="trust_weight")
        if token_budget is not None:
            check.limit(token_budget, "token_budget")
        if config is not None and not isinstance(config, RetrievalConfig):
            raise InvalidArgument(f"config must be a RetrievalConfig (Config().retrieval), got {type(config).__name__}")
        if reinforce is not None and not isinstance(reinforce, bool):
            raise InvalidArgument(f"reinforce must be a bool or None, got {type(reinforce).__name__}")
        waiting = self._embed_before_find(flt, config)
        result = self.retriever.find(query, top_k=top_k, flt=flt,
                                     reference_time=check.when(reference_time, "reference_time"),
                                     token_budget=token_budget, strategy=strategy, config=config)
        if waiting and result.trace.degrade_reason is None:
            result.trace.degrade_reason = (f"{waiting} memories of this scope still wait for their vectors: "
                                           "ranked by FTS + NER alone (wait_embedded() first for full ranking)")
        self._govern_hits(result, flt, float(trust_weight))
        lifecycle = self.config.lifecycle
        assert self._reinforcer is not None
        self._reinforcer.record([h.entry.id for h in result.hits], scope=flt.scope,
                                bump=lifecycle.reinforce if reinforce is None else reinforce,
                                audit=lifecycle.audit and lifecycle.audit_reads, detail={"query": query[:200]})
        return result

    def _embed_before_find(self, flt: EntryFilter, config: RetrievalConfig | None) -> int:
        """Read-your-writes for vectors: embed the searched scope's queued texts (up to
        ``ingest.find_embeds_at_most``) before ranking; returns how many still wait."""
        ingestor = self.ingestor
        if ingestor.embedder is None or not (config or self.config.retrieval).vectors:
            return 0
        return ingestor.embed_awaiting(flt.scope, self.config.ingest.find_embeds_at_most)

    def trace_session(self, *, user_id: str | None = None, agent_id: str | None = None,
                      project_id: str | None = None, session_id: str | None = None, limit: int = 20) -> builtins.list[dict[str, Any]]:
        """The most recent retrieval traces made in a scope, with their steps."""
        self._gate.check("read", check.scope_of(user_id, agent_id, project_id, session_id), "trace_session",
                         whole=True)
        return self._ready().load_traces(check.scope_of(user_id, agent_id, project_id, session_id), check.count(limit))

    def entity_graph(self, *, entity: str | None = None, user_id: str | None = None, agent_id: str | None = None,
                     project_id: str | None = None, session_id: str | None = None, limit: int = 200) -> dict[str, Any]:
        """Entities seen in a scope and the co-occurrence links between them."""
        flt = EntryFilter(scope=check.scope_of(user_id, agent_id, project_id, session_id), include_invalid=True)
        flt.exclude_scopes = self._gate.check("read", flt.scope, "entity_graph")
        if entity is not None and not isinstance(entity, str):
            raise InvalidArgument(f"entity must be a str, got {type(entity).__name__}")
        return self._ready().entity_graph(flt, entity, check.count(limit))

    def diff_entries(self, a: str, b: str) -> dict[str, Any]:
        """Field-by-field differences between two entries (e.g. a fact and its successor)."""
        ea, eb = self.get(a), self.get(b)
        out = {}
        for name in ("l2_full", "category", "tags", "scope", "role", "confidence", "metadata", "created_at",
                     "valid_from", "invalid_at", "superseded_by", "event_dates", "flags"):
            va, vb = getattr(ea, name), getattr(eb, name)
            if va != vb:
                out[name] = {"a": va, "b": vb}
        return out

    # -- sessions ------------------------------------------------------------------------------
    def create_session(self, session_id: str | None = None, *, user_id: str | None = None,
                       agent_id: str | None = None, project_id: str | None = None,
                       metadata: dict[str, Any] | None = None) -> Session:
        """Create a session, or return the existing one with this id (its scope must agree)."""
        sid = check.check_id("session_id", session_id) or f"sess_{uuid.uuid4().hex}"
        scope = check.scope_of(user_id, agent_id, project_id)
        self._check_session("write", sid, "create_session", scope)
        session, created = self._ready().ensure_session(sid, scope, check.metadata(metadata))
        if not created:
            for field_name in ("user_id", "agent_id", "project_id"):
                wanted = getattr(scope, field_name)
                if wanted is not None and getattr(session.scope, field_name) != wanted:
                    raise ScopeError(f"Session {sid!r} belongs to another {field_name} - use a different session id")
        return session

    def get_session(self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                    project_id: str | None = None) -> Session:
        from .errors import SessionNotFound

        scope = check.scope_of(user_id, agent_id, project_id)
        session = self._ready().find_session(check.check_id("session_id", session_id) or "")
        if session is None or any(getattr(scope, f) is not None and getattr(session.scope, f) != getattr(scope, f)
                                  for f in ("user_id", "agent_id", "project_id")):
            raise SessionNotFound(session_id)
        if self._agent is not None:
            self._gate.check("read", Scope(session.scope.user_id, session.scope.agent_id, session.scope.project_id,
                                           session.id), "get_session", exact=True)
        return session

    def list_sessions(self, *, user_id: str | None = None, agent_id: str | None = None,
                      project_id: str | None = None, limit: int | None = 100, offset: int = 0) -> builtins.list[Session]:
        scope = check.scope_of(user_id, agent_id, project_id)
        hidden = self._gate.check("read", scope, "list_sessions")
        if not hidden:
            return self._ready().list_sessions(scope, check.limit(limit), check.limit(offset, "offset") or 0)
        # leave out the sessions of scopes this agent may not read, then page
        visible = [s for s in self._ready().list_sessions(scope, None, 0)
                   if not any(all(getattr(Scope(s.scope.user_id, s.scope.agent_id, s.scope.project_id, s.id), f) == v
                                  for f, v in p.as_dict().items()) for p in hidden)]
        start = check.limit(offset, "offset") or 0
        size = check.limit(limit)
        return visible[start:] if size is None else visible[start:start + size]

    def update_session(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       metadata_patch: dict[str, Any] | None = None) -> Session:
        """Replace the session's metadata, or merge ``metadata_patch`` into it (``None`` values
        remove keys) inside one write transaction, so concurrent patches from several processes
        never lose each other's keys."""
        if (metadata is None) == (metadata_patch is None):
            raise InvalidArgument("Pass either metadata= or metadata_patch=, not both or neither")
        store = self._ready()
        self._check_session("write", self.get_session(session_id).id, "update_session")
        with store.transaction():
            session = self.get_session(session_id)
            if metadata_patch is not None:
                merged = dict(session.metadata)
                for key, value in check.metadata(metadata_patch).items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                metadata = merged
            return store.update_session(session_id, metadata=check.metadata(metadata))

    def delete_session(self, session_id: str) -> None:
        """Delete a session, its messages and the turn entries made from them."""
        self.get_session(session_id)
        self._check_session("write", session_id, "delete_session")
        self._ready().delete_session(session_id)

    def add_message(self, session_id: str, role: str, content: str, *, name: str | None = None,
                    metadata: dict[str, Any] | None = None, payload: Any = None, created_at: Any = None,
                    message_id: str | None = None, status: str = "active", position: int | None = None,
                    ingest: bool = True, user_id: str | None = None, agent_id: str | None = None,
                    project_id: str | None = None) -> Message:
        """Append (or insert at ``position``) one turn; with ``ingest`` it also becomes a memory.

        Scope keywords work as in ``add_messages`` (checked in the same transaction)."""
        return self.add_messages(session_id, [{
            "role": role, "content": content, "name": name, "metadata": metadata, "payload": payload,
            "created_at": created_at, "message_id": message_id, "status": status, "ingest": ingest}],
            position=position, user_id=user_id, agent_id=agent_id, project_id=project_id)[0]

    @traced("add_messages")
    def add_messages(self, session_id: str, messages: Sequence[dict[str, Any]], *,
                     position: int | None = None, progress: Callable[[int, int], None] | None = None,
                     user_id: str | None = None, agent_id: str | None = None,
                     project_id: str | None = None) -> builtins.list[Message]:
        """Append many turns in one transaction; each ingested turn becomes a memory in the session's scope.

        ``position`` follows ``list.insert`` (negative counts from the end, past the end appends).
        Scope keywords create a missing session in that scope, and must match an existing one
        (checked in the same transaction), else ``ScopeError``.
        """
        sid = check.check_id("session_id", session_id)
        if sid is None:
            raise ScopeError("session_id is required")
        if position is not None and (not isinstance(position, int) or isinstance(position, bool)):
            raise InvalidArgument(f"position must be an int, got {position!r}")
        scope = check.scope_of(user_id, agent_id, project_id)
        if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Iterable):
            raise InvalidArgument(f"messages must be a list of dicts, got {type(messages).__name__}")
        items = [check.message_item(m) for m in messages]
        self._check_session("write", sid, "add_messages", scope)
        store = self._ready()
        with self._writing(), store.transaction():
            session, _ = store.ensure_session(sid, scope, None)
            check.require_scope(session, scope)
            written = Scope(**session.scope.as_dict(), session_id=sid)
            stored: builtins.list[Message] = []
            for i, item in enumerate(items):
                pos = None if position is None else position + i
                stored.append(store.insert_message(sid, cast(MessageRow, item), pos))
            turns = [m for m, item in zip(stored, items) if item["ingest"]]
            self.ingestor.add_turns(session, stored, turns, appended=position is None, progress=progress)
            ids = [m.id for m in stored]
        if turns:
            self._after_write({written})
        return [store.get_message(sid, mid) for mid in ids]

    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> builtins.list[Message]:
        """Messages by sequence. Unknown session -> ``[]``."""
        if order not in ("asc", "desc"):
            raise InvalidArgument(f"order must be 'asc' or 'desc', got {order!r}")
        if status not in (None, "active", "archived"):
            raise InvalidArgument(f"status must be 'active', 'archived' or None, got {status!r}")
        self._check_session("read", check.check_id("session_id", session_id) or "", "list_messages")
        return self._ready().list_messages(check.check_id("session_id", session_id) or "", status=status,
                                           limit=check.limit(limit), offset=check.limit(offset, "offset") or 0, order=order,
                                           after=after, before=before)

    def get_message(self, session_id: str, message_id: str) -> Message:
        self._check_session("read", check.check_id("session_id", session_id) or "", "get_message")
        return self._ready().get_message(check.check_id("session_id", session_id) or "", check.check_id("message_id", message_id) or "")

    def update_message(self, session_id: str, message_id: str, *, metadata: Any = _UNSET,
                       status: Any = _UNSET, payload: Any = _UNSET) -> Message:
        changes: dict[str, Any] = {}
        if metadata is not _UNSET:
            changes["metadata"] = check.metadata(metadata)
        if status is not _UNSET:
            if status not in ("active", "archived"):
                raise InvalidArgument(f"status must be 'active' or 'archived', got {status!r}")
            changes["status"] = status
        if payload is not _UNSET:
            if payload is not None:
                check.json_value(payload, "payload")
            changes["payload"] = payload
        self._check_session("write", session_id, "update_message")
        return self._ready().update_message(session_id, message_id, changes)

    def delete_message(self, session_id: str, message_id: str) -> Message:
        """Delete one message and the entries only it produced."""
        self._check_session("write", session_id, "delete_message")
        return self._ready().delete_message(session_id, message_id)

    def update_messages(self, session_id: str, message_ids: Sequence[str], *, status: str) -> builtins.list[Message]:
        """Set the status of several messages in one transaction (e.g. archive the oldest n)."""
        if status not in ("active", "archived"):
            raise InvalidArgument(f"status must be 'active' or 'archived', got {status!r}")
        self._check_session("write", session_id, "update_messages")
        store = self._ready()
        with store.transaction():
            return [store.update_message(session_id, mid, {"status": status}) for mid in check.ids(message_ids, "message_ids")]

    def delete_messages(self, session_id: str, message_ids: Sequence[str]) -> builtins.list[Message]:
        """Delete several messages (and the entries only they produced) in one transaction."""
        self._check_session("write", session_id, "delete_messages")
        store = self._ready()
        with store.transaction():
            return [store.delete_message(session_id, mid) for mid in check.ids(message_ids, "message_ids")]

    def set_messages(self, session_id: str, messages: Sequence[dict[str, Any]], *, user_id: str | None = None,
                     agent_id: str | None = None, project_id: str | None = None) -> builtins.list[Message]:
        """Replace every message of the session in one transaction (scope keywords as in ``add_messages``)."""
        self._check_session("write", session_id, "set_messages", check.scope_of(user_id, agent_id, project_id))
        store = self._ready()
        with store.transaction():
            store.delete_messages(session_id)
            return self.add_messages(session_id, messages, user_id=user_id, agent_id=agent_id,
                                     project_id=project_id)

    def clear_session(self, session_id: str, *, status: str | None = None) -> int:
        """Delete the session's messages (optionally of one status) and their turn entries."""
        self._check_session("write", session_id, "clear_session")
        return self._ready().delete_messages(session_id, status)

    def count_messages(self, session_id: str, *, status: str | None = None) -> int:
        self._check_session("read", session_id, "count_messages")
        return self._ready().count_messages(session_id, status)

    @traced("commit_session")
    def commit_session(self, session_id: str) -> Entry:
        """Write the rule-based session summary and link every entry the session produced."""
        session = self.get_session(session_id)
        self._check_session("write", session.id, "commit_session")
        with self._writing():
            return self.ingestor.commit_session(session, self._ready().list_messages(session_id))

    def transaction(self) -> Any:
        """Group several kernel writes into one atomic transaction (nested calls are savepoints).

        Usage::

            with kernel.transaction():
                kernel.add_memory(...); kernel.delete(...)
        """
        return self._ready().transaction()

    def bulk_load(self) -> contextlib.AbstractContextManager[None]:
        """Load many memories, then index: on PostgreSQL the vector (HNSW) index is built once when
        the block ends instead of being kept up per write (searches inside rank exactly).

        Usage::

            with kernel.bulk_load():
                for batch in batches:
                    kernel.add_memories(batch)
        """
        return self._ready().bulk_load()

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """With ``ingest.defer_embedding``: block until every stored text has its vector.

        Returns ``False`` if ``timeout`` ran out first or the background embedder failed. Without
        deferred embedding it returns ``True`` at once (writes embed before they return).
        """
        return self.ingestor.wait_embedded(timeout)

    # -- maintenance ---------------------------------------------------------------------------
    def verify(self) -> dict[str, Any]:
        """Integrity check, FTS in step with entries, every text with a vector (when embedding).

        While the background embedder is at work (``embedding_pending`` > 0, e.g. after deferred
        writes or on opening a file a killed process left), texts without a vector are its backlog
        and do not count as missing.
        """
        from .text.embedders.remote import breaker_state

        before = self.ingestor.pending
        report = self._ready().verify()
        pending = max(before, self.ingestor.pending)  # the worker may finish a batch during the check
        report["embedding_pending"] = pending
        if self.embedder is None:
            report["texts_without_vector"] = 0
        # a remote embedder that is down leaves a backlog by design (fail-open): not a broken file
        breaker = breaker_state(self.embedder)
        report["embedder_breaker"] = breaker
        report["vector_backlog"] = report["texts_without_vector"]
        waiting = pending > 0 or (breaker is not None and breaker["state"] != "closed")
        report["ok"] = report["ok"] and (report["texts_without_vector"] == 0 or waiting)
        return report

    def rebuild(self) -> dict[str, Any]:
        """Rebuild the FTS index from the entries and embed any text that lacks a vector."""
        store = self._ready()
        store.rebuild_fts()
        if self.embedder is not None:
            self.ingestor.embed_missing(store.hashes_without_vector())
        return self.verify()

    # -- export / import (agentbase_kernel/portable/, docs/export-format.md) -------------------
    def export(self, out: str | os.PathLike[str] | Any, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None,
               metadata: dict[str, Any] | None = None, vectors: bool = True, traces: bool = False,
               progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Write the file (or one scope of it) as an agentbase export: JSON Lines, streamed.

        ``out`` is a path (written to ``out.partial`` and renamed when complete) or a text stream.
        Returns how many records of each type were written; ``progress(done, total)`` counts entries.
        """
        from .portable import write_export

        flt = EntryFilter(scope=check.scope_of(user_id, agent_id, project_id, session_id), include_expired=True,
                          include_invalid=True, metadata=check.metadata_filter(metadata), archived=None)
        # an export copies sessions and messages too: it runs only where the agent may read everything
        self._gate.check("read", flt.scope, "export", whole=True)
        filters = {k: v for k, v in {**flt.scope.as_dict(), "metadata": flt.metadata}.items() if v is not None}
        return write_export(self._ready(), out, flt, embedder=self.embedder, vectors=bool(vectors),
                            traces=bool(traces), filters=filters, progress=progress)

    def import_(self, source: str | os.PathLike[str] | Any, *, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Read an agentbase export (a path, a text stream, or header + record dicts) in one transaction.

        Ids and times are kept; a record already here is skipped, or updated when its ``updated_at``
        is newer, so importing twice is safe. A bad line raises ``InvalidArgument`` naming it and
        nothing is written. Vectors are kept when the file's embedder is this database's, else the
        texts are embedded again. ``dry_run`` checks every line and counts records, writing nothing.
        """
        from .portable import import_records

        self._gate.check("write", Scope(), "import", whole=True)
        with writing_as(Writer("import", self._agent)), self.bulk_load():
            return import_records(self, self._ready(), source, embedder=self.embedder, backfill=self.ingestor,
                                  dry_run=bool(dry_run), progress=progress)

    # -- lifecycle: reinforcement, audit, prefetch (issue 22, docs/lifecycle.md) -----------------
    def _with_access(self, entries: builtins.list[Entry]) -> builtins.list[Entry]:
        # read-your-writes: the counts include this process's reinforcement still queued for the flush
        store, reinforcer = self._ready(), self._reinforcer
        ids = [e.id for e in entries]
        stats = {} if not ids else (reinforcer.with_queued(ids, store.access_stats) if reinforcer is not None
                                    else store.access_stats(ids))
        for entry in entries:
            if entry.id in stats:
                entry.access_count, entry.last_accessed_at = stats[entry.id]
        self._mark_conflicts(entries)
        return entries

    def _mark_conflicts(self, entries: builtins.list[Entry]) -> builtins.list[str]:
        """Fill ``Entry.conflicts`` with the open conflicts each entry is in; returns the flagged ids."""
        if not entries:
            return []
        marks: dict[str, builtins.list[str]] = {}
        for row in self._ready().list_conflicts(Scope(), entry_ids=[e.id for e in entries]):
            for eid in row["entry_ids"]:
                marks.setdefault(eid, []).append(row["id"])
        for entry in entries:
            entry.conflicts = marks.get(entry.id, [])
        return [e.id for e in entries if e.conflicts]

    def _govern_hits(self, result: FindResult, flt: EntryFilter, trust_weight: float) -> None:
        """After retrieval: drop anything outside the reader's permissions (belt and braces: the
        filter already leaves it out), re-rank by trust when asked, flag conflicts in hits and trace."""
        if flt.exclude_scopes:
            result.hits = [h for h in result.hits
                           if not any(all(getattr(h.entry.scope, f) == v for f, v in s.as_dict().items())
                                      for s in flt.exclude_scopes)]
        if trust_weight:
            for hit in result.hits:
                hit.score *= 1 - trust_weight + trust_weight * hit.entry.trust
            result.hits.sort(key=lambda h: -h.score)
        result.trace.conflicts = self._mark_conflicts([h.entry for h in result.hits])

    def flush_lifecycle(self) -> int:
        """Write the queued reinforcement bumps (and read audit rows) now; returns entries bumped.

        A background thread does this every ``lifecycle.reinforce_flush_seconds`` and ``close`` does
        it last; call it when you need ``get`` to show the counts of the finds just made.
        """
        self._ready()
        assert self._reinforcer is not None
        return self._reinforcer.flush()

    def audit(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
              session_id: str | None = None, since: datetime | None = None, until: datetime | None = None,
              kinds: Sequence[str] | str | None = None, limit: int | None = 100) -> builtins.list[AuditEvent]:
        """The audit log of a scope, newest first: who wrote, updated, superseded, deleted (and, with
        ``lifecycle.audit_reads``, read) which entries, and when.

        Each given scope id must match the row's. Write rows are made by the change's own transaction
        (a rolled-back write leaves none); read rows are written with the reinforcement flush.
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        hidden = self._gate.check("read", scope, "audit")
        size = check.limit(limit)
        rows = self._ready().audit_rows(scope, since=check.when(since, "since"), until=check.when(until, "until"),
                                        kinds=check_kinds(kinds), limit=None if hidden else size)
        if hidden:  # rows of scopes this agent may not read are left out
            rows = [r for r in rows if not any(all(getattr(r["scope"], f) == v for f, v in p.as_dict().items())
                                               for p in hidden)][:size]
        return [AuditEvent(**row) for row in rows]

    def prefetch(self, user_message: str, *, user_id: str | None = None, agent_id: str | None = None,
                 project_id: str | None = None, session_id: str | None = None, token_budget: int = 1000,
                 relevant_k: int = 10, recent_k: int = 5, reinforce: bool | None = None) -> Prefetch:
        """Context to inject before answering ``user_message``, within ``token_budget`` tokens: the
        user's current profile facts, the memories ``find`` ranks most relevant to the message and
        the most recent ones, deduplicated. ``result.text()`` is ready for a system prompt.

        The profile is read across the user's sessions (``session_id`` is ignored for it); relevant
        and recent memories honour the whole scope.
        """
        from .lifecycle.prefetch import build_prefetch

        if not isinstance(user_message, str):
            raise InvalidArgument(f"user_message must be a str, got {type(user_message).__name__}")
        if not isinstance(token_budget, int) or isinstance(token_budget, bool) or token_budget < 1:
            raise InvalidArgument(f"token_budget must be a positive int, got {token_budget!r}")
        if not 1 <= check.count(relevant_k, "relevant_k") <= self.max_top_k:
            raise InvalidArgument(f"relevant_k must be in [1, {self.max_top_k}], got {relevant_k!r}")
        check.count(recent_k, "recent_k")
        self._gate.check("read", check.scope_of(user_id, agent_id, project_id, session_id), "prefetch")
        scope = check.scope_of(user_id, agent_id, project_id, session_id).as_dict()
        return build_prefetch(self.list, self.find, user_message, scope, token_budget=token_budget,
                              relevant_k=relevant_k, recent_k=recent_k, reinforce=reinforce)

    # -- lifecycle: capacity, archival, consolidation (docs/lifecycle.md) ------------------------
    def _wrote(self, results: builtins.list[AddResult]) -> builtins.list[AddResult]:
        """After a write: capacity and the consolidation schedule for each scope written to (a NOOP
        may have brought an archived entry back). What the write stored is archived last."""
        entries = [r.entry for r in results] + [f.entry for r in results for f in r.facts]
        self._after_write({e.scope for e in entries}, protect={e.id for e in entries})
        return results

    def _after_write(self, scopes: set[Scope], protect: set[str] | frozenset[str] = frozenset()) -> None:
        store = self._ready()
        lifecycle = self.config.lifecycle
        for scope in scopes:
            enforce(store, scope, default=lifecycle.max_items_per_scope, half_life_days=lifecycle.half_life_days,
                    protect=protect)
        assert self._schedule is not None
        self._schedule.wrote(scopes)

    def archive(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Entry:
        """Take an entry out of search and default reads, keeping it (an ARCHIVE history event and
        an ``archive`` audit row). ``restore`` brings it back. Archiving an archived entry is a no-op."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        store = self._ready()
        entry = self._check_entry("write", store.get_entry(check.entry_id(entry_id), scope), "archive")
        store.archive_entries([entry.id], reason="manual", actor=actor)
        return self._with_access([store.get_entry(entry.id)])[0]

    def restore(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Entry:
        """Bring an archived entry back into search (a RESTORE event, a ``restore`` audit row).

        If its scope is at capacity, the scope's lowest-scoring other entry is archived instead.
        ``EntryNotFound`` when missing or outside the scope; restoring a live entry is a no-op."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        store = self._ready()
        entry = self._check_entry("write", store.get_entry(check.entry_id(entry_id), scope), "restore")
        if store.restore_entries([entry.id], actor=actor):
            lifecycle = self.config.lifecycle
            enforce(store, entry.scope, default=lifecycle.max_items_per_scope,
                    half_life_days=lifecycle.half_life_days, protect={entry.id}, actor=actor)
        return self._with_access([store.get_entry(entry.id)])[0]

    def set_capacity(self, max_items: int | None, *, user_id: str | None = None, agent_id: str | None = None,
                     project_id: str | None = None, session_id: str | None = None) -> builtins.list[str]:
        """Set how many live entries exactly this scope keeps (0: no limit; ``None``: back to
        ``lifecycle.max_items_per_scope``), stored in the file for every process. Applies at once:
        returns the ids it archived."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        if scope.is_empty:
            raise ScopeError("set_capacity needs at least one of user_id, agent_id, project_id, session_id - "
                             "lifecycle.max_items_per_scope is the default for every scope")
        if max_items is not None:
            check.count(max_items, "max_items")
        self._gate.check("write", scope, "set_capacity", exact=True)
        store = self._ready()
        store.set_scope_capacity(scope, max_items)
        lifecycle = self.config.lifecycle
        return enforce(store, scope, default=lifecycle.max_items_per_scope, half_life_days=lifecycle.half_life_days)

    def capacity(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                 session_id: str | None = None) -> dict[str, int]:
        """``{"max_items": cap (0: no limit), "live": live entries}`` of exactly this scope."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        self._gate.check("read", scope, "capacity", exact=True)
        store = self._ready()
        return {"max_items": effective_capacity(store, scope, self.config.lifecycle.max_items_per_scope),
                "live": store.scope_size(scope)}

    def consolidate(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                    session_id: str | None = None, older_than: timedelta | float | datetime | None = None,
                    max_importance: float | None = None, min_items: int | None = None,
                    summarizer: Callable[[str], str] | None = None, actor: str | None = None) -> Consolidation:
        """Fold exactly this scope's older, low-importance memories into one summary entry.

        Sources: live entries created before ``older_than`` (a ``timedelta`` or days before now, or
        a cutoff ``datetime``; default ``lifecycle.consolidate_older_than_days``) with importance
        <= ``max_importance`` (default ``lifecycle.consolidate_max_importance``), at least
        ``min_items`` of them. The summary (category ``consolidation``) links to each source
        (``consolidates``); the sources are archived. Rule-based unless ``summarizer(text) -> str``
        is given. Idempotent: a second run finds nothing to fold and returns an empty result.
        """
        from .lifecycle.consolidate import consolidate as run

        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        if scope.is_empty:
            raise ScopeError("consolidate needs at least one of user_id, agent_id, project_id, session_id")
        self._gate.check("write", scope, "consolidate", exact=True)
        lifecycle = self.config.lifecycle
        if older_than is None:
            older_than = lifecycle.consolidate_older_than_days
        if isinstance(older_than, datetime):
            cutoff = older_than if older_than.tzinfo else older_than.replace(tzinfo=timezone.utc)
        elif isinstance(older_than, timedelta):
            cutoff = utcnow() - older_than
        elif isinstance(older_than, (int, float)) and not isinstance(older_than, bool) and older_than >= 0:
            cutoff = utcnow() - timedelta(days=older_than)
        else:
            raise InvalidArgument(f"older_than must be a timedelta, days >= 0 or a datetime, got {older_than!r}")
        max_importance = check_importance(lifecycle.consolidate_max_importance if max_importance is None
                                          else max_importance)
        min_items = lifecycle.consolidate_min_items if min_items is None else check.count(min_items, "min_items")
        if summarizer is not None and not callable(summarizer):
            raise InvalidArgument(f"summarizer must be callable, got {type(summarizer).__name__}")
        result = run(self._ready(), scope, write=self.ingestor.add_many, ner=self.ner, cutoff=cutoff,
                     max_importance=max_importance or 0.0, min_items=max(2, min_items), summarizer=summarizer,
                     actor=actor)
        if result.summary is not None:
            enforce(self._ready(), scope, default=lifecycle.max_items_per_scope, half_life_days=lifecycle.half_life_days,
                    protect={result.summary.id})
        return result

    def _consolidate_now(self, scope: Scope) -> Consolidation:
        """The background schedule's job: consolidate with the configured settings."""
        return self.consolidate(user_id=scope.user_id, agent_id=scope.agent_id, project_id=scope.project_id,
                                session_id=scope.session_id, actor="agentbase:schedule")

    def wait_consolidated(self, timeout: float | None = None) -> bool:
        """Block until the background consolidations due by ``lifecycle.consolidate_every_writes`` or
        ``consolidate_idle_seconds`` have run (``False`` if ``timeout`` ran out first)."""
        self._ready()
        assert self._schedule is not None
        return self._schedule.idle(timeout)

    # -- governance: permissions and conflicts (issue 22, docs/lifecycle.md) --------------------
    def grant(self, agent: str, *, user_id: str | None = None, agent_id: str | None = None,
              project_id: str | None = None, session_id: str | None = None, read: bool = True,
              write: bool = False) -> Policy:
        """Let ``agent`` read (and/or write) the scope; the scope becomes protected, so agents
        without a grant on it lose access. Replaces ``agent``'s earlier policy on the same scope.

        Usage::

            kernel.grant("bot-a", project_id="p1", read=True, write=True)
            kernel.grant("bot-b", project_id="p1", read=True)        # b may read, not write

        Raises:
            PermissionDenied: called by a kernel acting as an agent (only the owner manages policies).
            ScopeError: no scope keyword given.
        """
        scope = self._policy_scope("grant", user_id, agent_id, project_id, session_id)
        grantee = check.check_id("agent", agent)
        if grantee is None:
            raise InvalidArgument("grant needs the agent id it applies to", param="agent")
        if not isinstance(read, bool) or not isinstance(write, bool):
            raise InvalidArgument("read and write must be bools")
        store = self._ready()
        store.set_policy(grantee, scope, read=read, write=write)
        if self.config.lifecycle.audit:
            store.append_audit("policy", actor=self._agent, scope=scope,
                               detail={"op": "grant", "agent": grantee, "read": read, "write": write})
        return next(p for p in self.policies(agent=grantee) if p.scope == scope)

    def revoke(self, agent: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None) -> bool:
        """Remove ``agent``'s policy on exactly this scope; ``False`` if it had none. A scope whose
        last policy goes is open again."""
        scope = self._policy_scope("revoke", user_id, agent_id, project_id, session_id)
        agent = check.check_id("agent", agent) or ""
        store = self._ready()
        removed = store.delete_policy(agent, scope)
        if removed and self.config.lifecycle.audit:
            store.append_audit("policy", actor=self._agent, scope=scope, detail={"op": "revoke", "agent": agent})
        return removed

    def policies(self, *, agent: str | None = None, user_id: str | None = None, agent_id: str | None = None,
                 project_id: str | None = None, session_id: str | None = None) -> builtins.list[Policy]:
        """The scope policies in the file: ``agent``'s only, if given; each given scope id must equal
        the policy scope's."""
        agent = check.check_id("agent", agent)
        wanted = check.scope_of(user_id, agent_id, project_id, session_id).as_dict()
        return [policy_of(r) for r in self._ready().policies() if (agent is None or r["agent"] == agent)
                and all(getattr(r["scope"], k) == v for k, v in wanted.items())]

    def _policy_scope(self, operation: str, *ids: str | None) -> Scope:
        scope = check.scope_of(*ids)
        if self._agent is not None:
            self._gate.deny("write", scope, operation, None)
        if scope.is_empty:
            raise ScopeError(f"{operation} needs at least one of user_id, agent_id, project_id, session_id")
        return scope

    def conflicts(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                  session_id: str | None = None, include_closed: bool = False) -> builtins.list[Conflict]:
        """Contradicting facts of a scope kept side by side, oldest first: open ones (both still
        current), or every one with ``include_closed``. Each given scope id must match."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        hidden = self._gate.check("read", scope, "conflicts")
        rows = self._ready().list_conflicts(scope, include_closed=bool(include_closed))
        return [Conflict.from_row(r) for r in rows
                if not any(all(getattr(r["scope"], f) == v for f, v in p.as_dict().items()) for p in hidden)]

    def resolve(self, conflict_id: str, *, keep: str, user_id: str | None = None, agent_id: str | None = None,
                project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Conflict:
        """Settle a conflict: ``keep`` stays current, the other entry is superseded by it (its
        ``history`` gets a ``RESOLVE`` event saying why). Scope keywords, if given, must match.

        Raises:
            InvalidArgument: unknown or already closed conflict, or ``keep`` not one of its entries.
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        conflict_id = check.check_id("conflict_id", conflict_id) or ""
        keep = check.entry_id(keep)
        store = self._ready()
        found = store.list_conflicts(scope, include_closed=True, conflict_id=conflict_id)
        if not found:
            raise InvalidArgument(f"No conflict with id {conflict_id!r} in this scope", param="conflict_id")
        if self._agent is not None:
            self._gate.check("write", found[0]["scope"], "resolve", exact=True, entry_ids=found[0]["entry_ids"])
        with store.transaction():
            row = store.resolve_conflict(conflict_id, keep, actor=actor or self._agent)
            if self.config.lifecycle.audit:
                store.append_audit("resolve", actor=actor or self._agent, scope=row["scope"], entry_ids=row["entry_ids"],
                                   detail={"conflict_id": conflict_id, "kept": keep, "reason": row["reason"]})
        return Conflict.from_row(row)


class AgentBase:
    """Agent memory on one SQLite file: the async facade over ``Kernel`` (``db.sync``).

    Usage::

        db = AgentBase(path="./my_agent.db")
        await db.add_memory("User prefers Python 3.12", category="preference")
        results = await db.find("Python preferences", top_k=5)
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, **options: Any) -> None:
        self._sync = Kernel(path, **options)

    @property
    def sync(self) -> Kernel:
        """The blocking ``Kernel`` underneath: safe to call from inside a running loop."""
        return self._sync

    @property
    def path(self) -> Path | str:
        return self.sync.path

    def view(self, *, agent: str | None = _UNSET, source: str = _UNSET) -> AgentBase:
        """The same open file acting as another agent and/or writing as another source (``Kernel.view``)."""
        out = AgentBase.__new__(AgentBase)
        out._sync = self.sync.view(agent=agent, source=source)
        return out

    def as_agent(self, agent: str | None) -> AgentBase:
        """``view(agent=agent)``: this file, with ``agent``'s permissions."""
        return self.view(agent=agent)

    @property
    def agent(self) -> str | None:
        return self.sync.agent

    initialize = in_thread(Kernel.initialize)
    add_memory = in_thread(Kernel.add_memory)
    add_memories = in_thread(Kernel.add_memories)
    get = in_thread(Kernel.get)
    update = in_thread(Kernel.update)
    delete = in_thread(Kernel.delete)
    delete_all = in_thread(Kernel.delete_all)
    reset = in_thread(Kernel.reset)
    list = in_thread(Kernel.list)
    count = in_thread(Kernel.count)
    history = in_thread(Kernel.history)
    find = in_thread(Kernel.find)
    trace_session = in_thread(Kernel.trace_session)
    entity_graph = in_thread(Kernel.entity_graph)
    diff_entries = in_thread(Kernel.diff_entries)
    create_session = in_thread(Kernel.create_session)
    get_session = in_thread(Kernel.get_session)
    list_sessions = in_thread(Kernel.list_sessions)
    update_session = in_thread(Kernel.update_session)
    delete_session = in_thread(Kernel.delete_session)
    add_message = in_thread(Kernel.add_message)
    add_messages = in_thread(Kernel.add_messages)
    list_messages = in_thread(Kernel.list_messages)
    get_message = in_thread(Kernel.get_message)
    update_message = in_thread(Kernel.update_message)
    delete_message = in_thread(Kernel.delete_message)
    update_messages = in_thread(Kernel.update_messages)
    delete_messages = in_thread(Kernel.delete_messages)
    set_messages = in_thread(Kernel.set_messages)
    clear_session = in_thread(Kernel.clear_session)
    count_messages = in_thread(Kernel.count_messages)
    commit_session = in_thread(Kernel.commit_session)
    verify = in_thread(Kernel.verify)
    rebuild = in_thread(Kernel.rebuild)
    info = in_thread(Kernel.info)
    stats = in_thread(Kernel.stats)
    wait_embedded = in_thread(Kernel.wait_embedded)
    export = in_thread(Kernel.export)
    import_ = in_thread(Kernel.import_)
    flush_lifecycle = in_thread(Kernel.flush_lifecycle)
    audit = in_thread(Kernel.audit)
    prefetch = in_thread(Kernel.prefetch)
    archive = in_thread(Kernel.archive)
    restore = in_thread(Kernel.restore)
    set_capacity = in_thread(Kernel.set_capacity)
    capacity = in_thread(Kernel.capacity)
    consolidate = in_thread(Kernel.consolidate)
    wait_consolidated = in_thread(Kernel.wait_consolidated)
    grant = in_thread(Kernel.grant)
    revoke = in_thread(Kernel.revoke)
    policies = in_thread(Kernel.policies)
    conflicts = in_thread(Kernel.conflicts)
    resolve = in_thread(Kernel.resolve)

    @contextlib.asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """``Kernel.bulk_load`` for async code: ``async with db.bulk_load():``; the index build at the
        end runs in a worker thread."""
        block = self.sync.bulk_load()
        block.__enter__()
        try:
            yield
        except BaseException as exc:
            if not await asyncio.to_thread(block.__exit__, type(exc), exc, exc.__traceback__):
                raise
        else:
            await asyncio.to_thread(block.__exit__, None, None, None)

    async def close(self) -> None:
        """Close the file (after the deferred embedder, if any, has caught up). Safe to call twice."""
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AgentBase:
        await self.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __enter__(self) -> AgentBase:
        self.sync.initialize()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sync.close()

    def __repr__(self) -> str:
        return f"AgentBase({self.sync.location!r})"
