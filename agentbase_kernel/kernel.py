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
import functools
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from . import arguments as check
from .config import Config, RetrievalConfig, locate_database
from .errors import ClosedError, EntryNotFound, InvalidArgument, PermissionDenied
from .governance import AsyncGovernance, Governance
from .ingest.pipeline import Ingestor
from .lifecycle import Prefetch, Reinforcer
from .lifecycle.capacity import enforce
from .lifecycle.composite import CompositeRank
from .lifecycle.consolidate import Consolidation
from .lifecycle.gate import Gate
from .lifecycle.schedule import ConsolidationSchedule
from .lifecycle.skills import SkillJudge
from .outcomes import AsyncOutcomes, Outcomes
from .proposals import AsyncProposals, Proposals, describe_zone
from .records import AddResult, ContextType, Entry, FindResult, HistoryEvent, Scope, SkillWarning
from .retrieve.pipeline import MAX_TOP_K, Decomposer, Reranker, Retriever
from .rules.permissions import Verdicts
from .rules.trust import Writer, writing_as
from .scoped import AsyncScopedMemory, ScopedMemory
from .sessions import AsyncSessions, Sessions
from .skills import AsyncSkills, Skills
from .store import NO_EMBEDDER, EntryFilter, Store, open_store, redact_url
from .telemetry import traced
from .threads import in_thread

__all__ = ["AgentBase", "Kernel"]

_UNSET: Any = object()
P = ParamSpec("P")
R = TypeVar("R")


def _on_sessions(method: Callable[Concatenate[Sessions, P], R]) -> Callable[Concatenate[Kernel, P], R]:
    """A ``Kernel`` method that is ``kernel.sessions``' ``method`` (same parameters, same doc)."""

    @functools.wraps(method)
    def call(self: Kernel, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(self.sessions, *args, **kwargs)

    return call


def _on_skills(method: Callable[Concatenate[Skills, P], R]) -> Callable[Concatenate[Kernel, P], R]:
    """A ``Kernel`` method that is ``kernel.skills``' ``method`` (same parameters, same doc)."""

    @functools.wraps(method)
    def call(self: Kernel, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(self.skills, *args, **kwargs)

    return call


def _on_governance(method: Callable[Concatenate[Governance, P], R]) -> Callable[Concatenate[Kernel, P], R]:
    """A ``Kernel`` method that is ``kernel.governance``' ``method`` (same parameters, same doc)."""

    @functools.wraps(method)
    def call(self: Kernel, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(self.governance, *args, **kwargs)

    return call


def _on_outcomes(method: Callable[Concatenate[Outcomes, P], R]) -> Callable[Concatenate[Kernel, P], R]:
    """A ``Kernel`` method that is ``kernel.outcomes``' ``method`` (same parameters, same doc)."""

    @functools.wraps(method)
    def call(self: Kernel, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(self.outcomes, *args, **kwargs)

    return call


def _on_proposals(method: Callable[Concatenate[Proposals, P], R]) -> Callable[Concatenate[Kernel, P], R]:
    """A ``Kernel`` method that is ``kernel.proposals``' ``method`` (same parameters, same doc)."""

    @functools.wraps(method)
    def call(self: Kernel, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(self.proposals, *args, **kwargs)

    return call


class Kernel:
    """The synchronous agentbase core over one database (a SQLite file or a ``postgresql://`` URL).

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

    # -- opening and closing --------------------------------------------------------------------
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

    # -- who is acting: the agent policies judge, the source stamped on writes (docs/lifecycle.md)
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

    def stats(self) -> dict[str, Any]:
        """Row counts of the whole file: ``entries`` (expired and superseded too), ``entries_valid``,
        ``sessions``, ``messages`` and ``vectors`` (one per distinct text); ``outcomes`` is
        ``outcome_stats()`` (outcomes recorded, the confidence distribution, the most-helped and
        most-harmed entries) and ``proposals_pending`` the proposals waiting for a person."""
        store = self._ready()
        return {**store.stats(), "outcomes": self.outcome_stats(),
                "proposals_pending": len(store.list_proposals(Scope(), status="pending", limit=None))}

    # -- one scope, sessions, governance: the parts of the facade --------------------------------
    def scope(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
              session_id: str | None = None) -> ScopedMemory:
        """The memory, find and session calls of one scope, without scope keywords (this kernel's
        agent and source apply). Every scope-keyword method of ``Kernel`` is one of its calls.

        Usage::

            alice = kernel.scope(user_id="alice")
            alice.add_memory("I like green tea")
            alice.find("tea")

        Raises:
            ScopeError: an id that is not a non-empty str.
        """
        return ScopedMemory(self, check.scope_of(user_id, agent_id, project_id, session_id))

    @property
    def sessions(self) -> Sessions:
        """Sessions and their messages (``kernel.sessions.create``, ``.add_messages``, ``.commit`` ...)."""
        return Sessions(self)

    @property
    def skills(self) -> Skills:
        """Skills as governed records: versions, promotion, verification, health
        (``kernel.skills.add``, ``.update``, ``.promote``, ``.verify`` ...; docs/skills.md)."""
        return Skills(self)

    @property
    def governance(self) -> Governance:
        """Scope policies, conflicts and the audit log (``kernel.governance.grant``, ``.resolve`` ...)."""
        return Governance(self)

    @property
    def outcomes(self) -> Outcomes:
        """Outcomes and the confidence they move (``kernel.outcomes.record_outcome`` ...)."""
        return Outcomes(self)

    @property
    def proposals(self) -> Proposals:
        """Approval zones and proposals (``kernel.proposals.protect``, ``.approve`` ...)."""
        return Proposals(self)

    # -- memories (each the scope handle's call: ``self.scope(...).<method>``) ------------------
    @traced("add_memory")  # the span covers the scope's checks too; the handle's call is part of it
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
        """``scope(...).add_memory``: store one memory verbatim (plus facts when ``infer``); an exact
        duplicate is a NOOP. ``ScopedMemory.add_memory`` says what each option does.

        Raises:
            InvalidArgument: empty text, bad types, or malformed ids.
            PermissionDenied: a scope policy forbids this kernel's agent to write the scope.
        """
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .add_memory(text, category=category, tags=tags, metadata=metadata, role=role, actor=actor,
                        context_type=context_type, confidence=confidence, created_at=created_at,
                        valid_from=valid_from, expires_at=expires_at, infer=infer, entry_id=entry_id, dedup=dedup,
                        stream=stream, defer_embedding=defer_embedding, speaker=speaker, trust=trust,
                        importance=importance, split_stream=split_stream)

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
            return self._add_checked(prepared, progress)

    def _add_checked(self, items: builtins.list[dict[str, Any]],
                     progress: Callable[[int, int], None] | None = None) -> builtins.list[AddResult]:
        """Write checked memory items; those an approval zone holds become proposals (``PROPOSED``)."""
        proposed = self.proposals.intercept(items)
        if not proposed:
            return self._wrote(self.ingestor.add_many(items, progress=progress))
        rest = [item for n, item in enumerate(items) if n not in proposed]
        written = iter(self._wrote(self.ingestor.add_many(rest, progress=progress)) if rest else [])
        return [proposed[n] if n in proposed else next(written) for n in range(len(items))]

    def get(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            project_id: str | None = None, session_id: str | None = None) -> Entry:
        """``scope(...).get``: the entry, or ``EntryNotFound`` (a ``KeyError``) when missing or outside the scope."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .get(entry_id)

    def update(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None, text: str | None = None,
               metadata: dict[str, Any] | None = None, tags: Sequence[str] | None = None,
               category: str | None = None, expires_at: Any = _UNSET, confidence: float | None = None,
               actor: str | None = None, importance: float | None = None) -> Entry:
        """``scope(...).update``: change an entry in place; a new text goes through ingest as on insert."""
        options: dict[str, Any] = {} if expires_at is _UNSET else {"expires_at": expires_at}
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .update(entry_id, text=text, metadata=metadata, tags=tags, category=category, confidence=confidence,
                    actor=actor, importance=importance, **options)

    def delete(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Entry:
        """``scope(...).delete``: delete one entry and return it. ``EntryNotFound`` when missing."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .delete(entry_id, actor=actor)

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None,
                   project_id: str | None = None, session_id: str | None = None,
                   metadata: dict[str, Any] | None = None) -> int:
        """``scope(...).delete_all``: every entry of a scope (matching ``metadata`` if given). At least
        one scope keyword is required (``reset()`` wipes all)."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .delete_all(metadata=metadata)

    def reset(self) -> None:
        """Wipe every entry, session, message and history row in the file.

        Raises:
            PermissionDenied: an approval zone exists - a wipe would delete what it protects without
                a person's approval. ``unprotect(zone_id)`` each zone (``zones()``) first.
        """
        self._gate.check("write", Scope(), "reset", whole=True)
        zones = self.proposals.zones()
        if zones:
            raise PermissionDenied(
                f"reset() would delete memories that {len(zones)} approval zone(s) protect: "
                + "; ".join(describe_zone(z) for z in zones)
                + " - remove each first with kernel.unprotect(zone_id) (a person's kernel), then reset",
                agent=self._agent, access="write", operation="reset")
        self._ready().reset()

    def list(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
             session_id: str | None = None, context_type: Any = None, category: str | None = None,
             tags: Sequence[str] | None = None, role: str | None = None, include_expired: bool = False,
             include_invalid: bool = False, as_of: datetime | None = None, metadata: dict[str, Any] | None = None,
             since: datetime | None = None, until: datetime | None = None, limit: int | None = 100,
             offset: int = 0, order: str = "asc", archived: bool | None = False,
             min_trust: float | None = None, text_contains: str | None = None,
             min_confidence: float | None = None) -> builtins.list[Entry]:
        """``scope(...).list``: entries in creation order, filtered; ``limit=None`` for all."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .list(context_type=context_type, category=category, tags=tags, role=role,
                  include_expired=include_expired, include_invalid=include_invalid, as_of=as_of, metadata=metadata,
                  since=since, until=until, limit=limit, offset=offset, order=order, archived=archived,
                  min_trust=min_trust, text_contains=text_contains, min_confidence=min_confidence)

    def count(self, /, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
              session_id: str | None = None, **filters: Any) -> int:
        """``scope(...).count``: how many entries ``list`` would return without a limit."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .count(**filters)

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
        for effect in store.outcome_effects([entry_id]):
            events.append(HistoryEvent(f"{effect['outcome_id']}:{entry_id}", entry_id, "OUTCOME",
                                       f"{effect['confidence_before']:.4g}", f"{effect['confidence_after']:.4g}",
                                       effect["created_at"], effect["actor"],
                                       reason=f"{effect['outcome_type']} (value {effect['value']:g})"
                                              + (" - reverted" if effect["reverted_at"] else "")))
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
             trust_weight: float = 0.0, min_confidence: float | None = None,
             min_score: float | None = None) -> FindResult:
        """``scope(...).find``: hybrid retrieval (FTS5 + vectors + NER + intents), best first, with a
        trace. ``ScopedMemory.find`` says what each option does."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .find(query, top_k=top_k, context_type=context_type, category=category, tags=tags, role=role,
                  since=since, until=until, as_of=as_of, metadata=metadata, reference_time=reference_time,
                  token_budget=token_budget, strategy=strategy, include_expired=include_expired, config=config,
                  reinforce=reinforce, min_trust=min_trust, trust_weight=trust_weight,
                  min_confidence=min_confidence, min_score=min_score)

    def retrieve_by_entities(self, entities: Sequence[str], *, top_k: int = 10, budget_tokens: int | None = None,
                             user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                             session_id: str | None = None, context_type: Any = None,
                             reinforce: bool | None = None) -> FindResult:
        """``scope(...).retrieve_by_entities``: the memories and skills linked to these file paths,
        table names, URLs or ids, best first, within ``budget_tokens``."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .retrieve_by_entities(entities, top_k=top_k, budget_tokens=budget_tokens, context_type=context_type,
                                  reinforce=reinforce)

    def _embed_before_find(self, flt: EntryFilter, config: RetrievalConfig | None) -> int:
        """Read-your-writes for vectors: embed the searched scope's queued texts (up to
        ``ingest.find_embeds_at_most``) before ranking; returns how many still wait."""
        ingestor = self.ingestor
        if ingestor.embedder is None or not (config or self.config.retrieval).vectors:
            return 0
        return ingestor.embed_awaiting(flt.scope, self.config.ingest.find_embeds_at_most)

    def _reinforce(self, result: FindResult, scope: Scope, query: str, reinforce: bool | None) -> None:
        """Queue the access bumps (and read audit rows) of a find's hits, off the read path."""
        lifecycle = self.config.lifecycle
        assert self._reinforcer is not None
        self._reinforcer.record([h.entry.id for h in result.hits], scope=scope,
                                bump=lifecycle.reinforce if reinforce is None else reinforce,
                                audit=lifecycle.audit and lifecycle.audit_reads, detail={"query": query[:200]})

    def trace_session(self, *, user_id: str | None = None, agent_id: str | None = None,
                      project_id: str | None = None, session_id: str | None = None, limit: int = 20) -> builtins.list[dict[str, Any]]:
        """``scope(...).trace_session``: the most recent retrieval traces made in a scope, with their steps."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .trace_session(limit=limit)

    def entity_graph(self, *, entity: str | None = None, user_id: str | None = None, agent_id: str | None = None,
                     project_id: str | None = None, session_id: str | None = None, limit: int = 200) -> dict[str, Any]:
        """``scope(...).entity_graph``: entities seen in a scope and the co-occurrence links between them."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .entity_graph(entity=entity, limit=limit)

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

    # -- sessions (``self.sessions``, under their older names) ---------------------------------------
    create_session = _on_sessions(Sessions.create)
    get_session = _on_sessions(Sessions.get)
    list_sessions = _on_sessions(Sessions.list)
    update_session = _on_sessions(Sessions.update)
    delete_session = _on_sessions(Sessions.delete)
    add_message = _on_sessions(Sessions.add_message)
    add_messages = _on_sessions(Sessions.add_messages)
    list_messages = _on_sessions(Sessions.list_messages)
    get_message = _on_sessions(Sessions.get_message)
    update_message = _on_sessions(Sessions.update_message)
    delete_message = _on_sessions(Sessions.delete_message)
    update_messages = _on_sessions(Sessions.update_messages)
    delete_messages = _on_sessions(Sessions.delete_messages)
    set_messages = _on_sessions(Sessions.set_messages)
    clear_session = _on_sessions(Sessions.clear)
    count_messages = _on_sessions(Sessions.count_messages)
    commit_session = _on_sessions(Sessions.commit)

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

    def rebuild(self, *, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Rebuild the FTS index from the entries and embed any text that lacks a vector
        (``progress(done, total)`` counts those texts)."""
        store = self._ready()
        store.rebuild_fts()
        if self.embedder is not None:
            self.ingestor.embed_missing(store.hashes_without_vector(), progress=progress)
        return self.verify()

    # -- export / import (agentbase_kernel/portable/, docs/export-format.md) -------------------
    def export(self, out: str | os.PathLike[str] | Any, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None,
               metadata: dict[str, Any] | None = None, vectors: bool = True, traces: bool = False,
               progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """``scope(...).export``: write the file (or one scope of it) as an agentbase export, JSON
        Lines, streamed, to a path (written to ``out.partial`` and renamed when complete) or a text
        stream. Returns how many records of each type were written."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .export(out, metadata=metadata, vectors=vectors, traces=traces, progress=progress)

    def import_(self, source: str | os.PathLike[str] | Any, *, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None,
                embed_progress: Callable[[int, int], None] | None = None, on_conflict: str = "fail",
                user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                allow_truncated: bool = False) -> dict[str, Any]:
        """Read an agentbase export (a path, a text stream, or header + record dicts) in one transaction.

        Ids and times are kept; a record already here in the same scope is skipped, or updated when
        its ``updated_at`` is newer, so importing twice is safe. Every record is checked as an API
        write is; a bad line raises ``InvalidArgument`` naming it and nothing is written. Vectors
        are kept when the file's embedder is this database's, else the texts are embedded again.
        ``dry_run`` checks every line and counts records, writing nothing. ``progress(done, total)``
        counts records; ``embed_progress(done, total)`` the texts embedded after them (a phase of
        its own: thousands of texts take seconds).

        An import never changes the owner of a row, nor writes into a row, session or link of a
        scope the file does not bring: a record whose id is in another scope is a conflict, and
        ``on_conflict`` says what then happens - ``"fail"`` (``ImportConflict``, nothing written),
        ``"skip"`` (left out) or ``"rekey"`` (imported under a new id); each is listed in the
        summary's ``conflicts``. ``user_id`` / ``agent_id`` / ``project_id`` replace every record's
        own (forcing the target scope; never a merge into rows of other scopes).

        A file that ends before its trailer, or does not match it, raises ``IncompleteExport``
        unless ``allow_truncated`` (then the summary's ``warnings`` say so).
        """
        from .portable import import_records

        forced = check.scope_of(user_id, agent_id, project_id).as_dict()
        self._gate.check("write", Scope(), "import", whole=True)
        with writing_as(Writer("import", self._agent)), self.bulk_load():
            return import_records(self, self._ready(), source, embedder=self.embedder, backfill=self.ingestor,
                                  dry_run=bool(dry_run), progress=progress, embed_progress=embed_progress,
                                  on_conflict=on_conflict, scope=forced, allow_truncated=bool(allow_truncated))

    # -- the Markdown mirror (agentbase_kernel/markdown.py, docs/markdown.md) -------------------
    def export_markdown(self, directory: str | os.PathLike[str], *, user_id: str | None = None,
                        agent_id: str | None = None, project_id: str | None = None, session_id: str | None = None,
                        force: bool = False) -> dict[str, Any]:
        """Write the live memories (one Markdown file each, one folder per scope) and sessions (one
        file each) of a scope into ``directory``, with the manifest ``sync_markdown`` compares against.

        Raises:
            InvalidArgument: ``directory`` holds edits not synced yet (unless ``force``), or is a file.
        """
        from .markdown import export_markdown

        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        self._gate.check("read", scope, "export_markdown", whole=True)
        return export_markdown(self, directory, scope, force=bool(force))

    def sync_markdown(self, directory: str | os.PathLike[str]) -> dict[str, Any]:
        """Bring a person's edits, new files and deletions in a Markdown mirror back through ingest
        (``source`` / actor ``human_edited``, audited); a change on both sides is reported in
        ``conflicts`` and neither side is overwritten. Then the files are rewritten as an export
        would write them. Returns ``{added, updated, deleted, conflicts, ignored}``."""
        from .markdown import sync_markdown

        return sync_markdown(self, directory)

    def rebuild_from_markdown(self, directory: str | os.PathLike[str]) -> dict[str, Any]:
        """Write a Markdown mirror's memories and sessions into this database through the import path
        (ids, scopes and times kept); returns the import summary."""
        from .markdown import rebuild_from_markdown

        return rebuild_from_markdown(self, directory)

    # -- reinforcement, capacity, archival, consolidation (docs/lifecycle.md) ---------------------
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

    def _skill_judge(self) -> SkillJudge:
        store, reinforcer = self._ready(), self._reinforcer
        lifecycle = self.config.lifecycle

        def access(ids: builtins.list[str]) -> dict[str, tuple[int, datetime | None]]:
            return reinforcer.with_queued(ids, store.access_stats) if reinforcer is not None \
                else store.access_stats(ids)

        return SkillJudge(store, lifecycle.skill_half_life_days, lifecycle.skill_health_threshold, access)

    def _skill_warnings(self, entries: Iterable[Entry]) -> builtins.list[SkillWarning]:
        """The warnings of the skills among ``entries`` (below the health threshold, or drifted)."""
        from .store.base import utcnow

        return [s.warning for s in self._skill_judge().skills(entries, utcnow()) if s.warning is not None]

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

    def prefetch(self, user_message: str, *, user_id: str | None = None, agent_id: str | None = None,
                 project_id: str | None = None, session_id: str | None = None, token_budget: int = 1000,
                 relevant_k: int = 10, recent_k: int = 5, reinforce: bool | None = None) -> Prefetch:
        """``scope(...).prefetch``: context to inject before answering ``user_message``, within
        ``token_budget`` tokens (profile facts, relevant and recent memories)."""
        if not isinstance(user_message, str):  # checked before the scope, as it always was
            raise InvalidArgument(f"user_message must be a str, got {type(user_message).__name__}")
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .prefetch(user_message, token_budget=token_budget, relevant_k=relevant_k, recent_k=recent_k,
                      reinforce=reinforce)

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
        """``scope(...).archive``: take an entry out of search and default reads, keeping it."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .archive(entry_id, actor=actor)

    def restore(self, entry_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Entry:
        """``scope(...).restore``: bring an archived entry back into search."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .restore(entry_id, actor=actor)

    def set_capacity(self, max_items: int | None, *, user_id: str | None = None, agent_id: str | None = None,
                     project_id: str | None = None, session_id: str | None = None) -> builtins.list[str]:
        """``scope(...).set_capacity``: how many live entries exactly this scope keeps; returns the ids
        it archived."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .set_capacity(max_items)

    def capacity(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                 session_id: str | None = None) -> dict[str, int]:
        """``scope(...).capacity``: ``{"max_items": cap (0: no limit), "live": live entries}``."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .capacity()

    def consolidate(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                    session_id: str | None = None, older_than: timedelta | float | datetime | None = None,
                    max_importance: float | None = None, min_items: int | None = None,
                    summarizer: Callable[[str], str] | None = None, actor: str | None = None) -> Consolidation:
        """``scope(...).consolidate``: fold exactly this scope's older, low-importance memories into
        one summary entry (``ScopedMemory.consolidate`` says how)."""
        return self.scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id) \
            .consolidate(older_than=older_than, max_importance=max_importance, min_items=min_items,
                         summarizer=summarizer, actor=actor)

    def _consolidate_now(self, scope: Scope) -> Consolidation:
        """The background schedule's job: consolidate with the configured settings."""
        return ScopedMemory(self, scope).consolidate(actor="agentbase:schedule")

    def wait_consolidated(self, timeout: float | None = None) -> bool:
        """Block until the background consolidations due by ``lifecycle.consolidate_every_writes`` or
        ``consolidate_idle_seconds`` have run (``False`` if ``timeout`` ran out first)."""
        self._ready()
        assert self._schedule is not None
        return self._schedule.idle(timeout)

    # -- skills (``self.skills``, under these names; docs/skills.md) ------------------------------------
    add_skill = _on_skills(Skills.add)
    update_skill = _on_skills(Skills.update)
    promote_skill = _on_skills(Skills.promote)
    verify_skill = _on_skills(Skills.verify)
    get_skill = _on_skills(Skills.get)
    list_skills = _on_skills(Skills.list)
    skill_versions = _on_skills(Skills.versions)

    # -- governance (``self.governance``, under the same names) ---------------------------------------
    grant = _on_governance(Governance.grant)
    revoke = _on_governance(Governance.revoke)
    policies = _on_governance(Governance.policies)
    conflicts = _on_governance(Governance.conflicts)
    resolve = _on_governance(Governance.resolve)
    audit = _on_governance(Governance.audit)
    audit_replay = _on_governance(Governance.audit_replay)

    # -- outcomes (``self.outcomes``) and approval zones / proposals (``self.proposals``) -------------
    record_outcome = _on_outcomes(Outcomes.record_outcome)
    get_outcome = _on_outcomes(Outcomes.get_outcome)
    revert_outcome = _on_outcomes(Outcomes.revert_outcome)
    list_outcomes = _on_outcomes(Outcomes.list_outcomes)
    outcome_stats = _on_outcomes(Outcomes.outcome_stats)
    protect = _on_proposals(Proposals.protect)
    unprotect = _on_proposals(Proposals.unprotect)
    zones = _on_proposals(Proposals.zones)
    propose = _on_proposals(Proposals.propose)
    get_proposal = _on_proposals(Proposals.get_proposal)
    list_proposals = _on_proposals(Proposals.list_proposals)
    approve = _on_proposals(Proposals.approve)
    reject = _on_proposals(Proposals.reject)


class AgentBase:
    """Agent memory on one database (a SQLite file or PostgreSQL): the async facade over ``Kernel`` (``db.sync``).

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

    def scope(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
              session_id: str | None = None) -> AsyncScopedMemory:
        """``Kernel.scope`` for async code: ``await db.scope(user_id="alice").find("tea")``."""
        return AsyncScopedMemory(self.sync.scope(user_id=user_id, agent_id=agent_id, project_id=project_id,
                                                 session_id=session_id))

    @property
    def sessions(self) -> AsyncSessions:
        """``Kernel.sessions`` for async code: ``await db.sessions.add_messages(...)``."""
        return AsyncSessions(self.sync.sessions)

    @property
    def skills(self) -> AsyncSkills:
        """``Kernel.skills`` for async code: ``await db.skills.add(...)``."""
        return AsyncSkills(self.sync.skills)

    @property
    def governance(self) -> AsyncGovernance:
        """``Kernel.governance`` for async code: ``await db.governance.grant(...)``."""
        return AsyncGovernance(self.sync.governance)

    @property
    def outcomes(self) -> AsyncOutcomes:
        """``Kernel.outcomes`` for async code: ``await db.outcomes.record_outcome(...)``."""
        return AsyncOutcomes(self.sync.outcomes)

    @property
    def proposals(self) -> AsyncProposals:
        """``Kernel.proposals`` for async code: ``await db.proposals.approve(...)``."""
        return AsyncProposals(self.sync.proposals)

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
    retrieve_by_entities = in_thread(Kernel.retrieve_by_entities)
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
    export_markdown = in_thread(Kernel.export_markdown)
    sync_markdown = in_thread(Kernel.sync_markdown)
    rebuild_from_markdown = in_thread(Kernel.rebuild_from_markdown)
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
    audit_replay = in_thread(Kernel.audit_replay)
    record_outcome = in_thread(Kernel.record_outcome)
    get_outcome = in_thread(Kernel.get_outcome)
    revert_outcome = in_thread(Kernel.revert_outcome)
    list_outcomes = in_thread(Kernel.list_outcomes)
    outcome_stats = in_thread(Kernel.outcome_stats)
    protect = in_thread(Kernel.protect)
    unprotect = in_thread(Kernel.unprotect)
    zones = in_thread(Kernel.zones)
    propose = in_thread(Kernel.propose)
    get_proposal = in_thread(Kernel.get_proposal)
    list_proposals = in_thread(Kernel.list_proposals)
    approve = in_thread(Kernel.approve)
    reject = in_thread(Kernel.reject)
    add_skill = in_thread(Kernel.add_skill)
    update_skill = in_thread(Kernel.update_skill)
    promote_skill = in_thread(Kernel.promote_skill)
    verify_skill = in_thread(Kernel.verify_skill)
    get_skill = in_thread(Kernel.get_skill)
    list_skills = in_thread(Kernel.list_skills)
    skill_versions = in_thread(Kernel.skill_versions)

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
