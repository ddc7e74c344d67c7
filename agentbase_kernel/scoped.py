"""``kernel.scope(user_id=...)``: the memory, find and session calls of one scope, without scope keywords.

A ``ScopedMemory`` is bound to a ``Scope`` (any of ``user_id``, ``agent_id``, ``project_id``,
``session_id``) and to the kernel (or view) it came from, so every call reads and writes that
scope with that kernel's agent and source. It is where those calls are implemented:
``Kernel.add_memory(text, user_id="u")`` is ``kernel.scope(user_id="u").add_memory(text)``.

Usage::

    alice = kernel.scope(user_id="alice")
    alice.add_memory("I like green tea")
    alice.find("tea")
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from . import arguments as check
from .config import RetrievalConfig
from .errors import InvalidArgument, ScopeError
from .lifecycle.audit import AuditEvent
from .lifecycle.capacity import effective_capacity, enforce
from .lifecycle.consolidate import Consolidation
from .lifecycle.prefetch import Prefetch
from .records import AddResult, ContextType, Entry, FindResult, Message, Outcome, Proposal, Scope, Session, Zone
from .rules.conflicts import Conflict
from .rules.importance import check_importance
from .rules.trust import check_trust
from .store import EntryFilter
from .store.base import utcnow
from .telemetry import traced
from .threads import in_thread

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["AsyncScopedMemory", "ScopedMemory"]

_UNSET: Any = object()


class ScopedMemory:
    """One scope of the database: memories, search and sessions there (``kernel.scope(...)``).

    Usage::

        bob = kernel.scope(user_id="bob", session_id="s1")
        bob.add_messages([{"role": "user", "content": "I moved to Oslo"}])
        bob.find("where does bob live")
    """

    def __init__(self, kernel: Kernel, scope: Scope) -> None:
        self._kernel = kernel
        self.scope = scope

    def __repr__(self) -> str:
        ids = ", ".join(f"{k}={v!r}" for k, v in self.scope.as_dict().items())
        return f"ScopedMemory({ids})"

    @property
    def _ids(self) -> dict[str, str | None]:
        return {"user_id": self.scope.user_id, "agent_id": self.scope.agent_id,
                "project_id": self.scope.project_id, "session_id": self.scope.session_id}

    # -- memories ------------------------------------------------------------------------------
    @traced("add_memory")
    def add_memory(self, text: str, *, category: str | None = None, tags: Sequence[str] = (),
                   metadata: dict[str, Any] | None = None, role: str | None = "user", actor: str | None = None,
                   context_type: ContextType | str = "memory", confidence: float = 1.0,
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
        k = self._kernel
        item = check.memory_item(text, **self._ids, category=category, tags=tags, metadata=metadata, role=role,
                                 actor=actor, context_type=context_type, confidence=confidence, created_at=created_at,
                                 valid_from=valid_from, expires_at=expires_at, infer=infer, entry_id=entry_id,
                                 dedup=dedup, stream=stream, defer_embedding=defer_embedding, speaker=speaker,
                                 trust=trust, importance=importance, split_stream=split_stream)
        k._check_items([item], "add_memory")
        with k._writing():
            return k._add_checked([item])[0]

    def add_memories(self, items: Iterable[dict[str, Any]], *,
                     progress: Callable[[int, int], None] | None = None) -> builtins.list[AddResult]:
        """``Kernel.add_memories`` with this scope's ids filled into every item (an item that names
        another id of a scope key is a ``ScopeError``)."""
        if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
            raise InvalidArgument(f"items must be a list of dicts, got {type(items).__name__}")
        filled = []
        for item in items:
            if not isinstance(item, dict):
                raise InvalidArgument("each item must be a dict with a 'text' key")
            for key, value in self.scope.as_dict().items():
                if item.get(key) not in (None, value):
                    raise ScopeError(f"An item names {key}={item[key]!r} in a scope of {key}={value!r}")
            filled.append({**item, **self.scope.as_dict()})
        return self._kernel.add_memories(filled, progress=progress)

    def get(self, entry_id: str) -> Entry:
        """The entry, or ``EntryNotFound`` (a ``KeyError``) when missing or outside the scope."""
        k = self._kernel
        entry = k._check_entry("read", k._ready().get_entry(check.entry_id(entry_id), self.scope), "get")
        return k._with_access([entry])[0]

    def update(self, entry_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None,
               tags: Sequence[str] | None = None, category: str | None = None, expires_at: Any = _UNSET,
               confidence: float | None = None, actor: str | None = None,
               importance: float | None = None) -> Entry:
        """Change an entry in place; a new text goes through ingest (``Ingestor.update``) as on insert."""
        k, scope = self._kernel, self.scope
        store = k._ready()
        entry_id = check.entry_id(entry_id)
        changes: dict[str, Any] = {}
        if text is not None:
            text = check.validate_text(text)
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
        if k.agent is not None:  # judged before the transaction, so that the denial's audit row stays
            k._check_entry("write", store.get_entry(entry_id, scope), "update")
        if text is not None:  # an agent's new text in an approval zone, or over a person's, is a proposal
            current = store.get_entry(entry_id, scope)
            if current.l2_full != text and k.proposals.guard(current, "update", text=text, actor=actor) is not None:
                return current
        with store.transaction():
            current = store.get_entry(entry_id, scope)
            return k.ingestor.update(current, scope, changes, text=text, tags=new_tags, actor=actor)

    def delete(self, entry_id: str, *, actor: str | None = None) -> Entry:
        """Delete one entry and return it (a DELETE history event stays). ``EntryNotFound`` when missing."""
        k = self._kernel
        entry_id = check.entry_id(entry_id)
        current = k._ready().get_entry(entry_id, self.scope)
        if k.agent is not None:
            k._check_entry("write", current, "delete")
        if k.proposals.guard(current, "delete", actor=actor) is not None:
            return current  # an approval zone (or a person's entry): a proposal to delete it, for a person
        return k._ready().delete_entry(entry_id, self.scope, actor=actor)

    def delete_all(self, *, metadata: dict[str, Any] | None = None) -> int:
        """Delete every entry of the scope (those matching ``metadata`` if given) and return how
        many were deleted. The scope must set at least one id (``Kernel.reset()`` wipes all).

        As with ``delete``, an entry an approval zone holds, or a human-approved one, is not
        deleted by an agent's or adapter's kernel: it gets a ``delete`` proposal for a person
        (``list_proposals``) and is not counted. The proposals and the deletes are one transaction."""
        if self.scope.is_empty:
            raise ScopeError("delete_all needs at least one of user_id, agent_id, project_id, session_id - "
                             "use reset() to wipe the whole database")
        k = self._kernel
        flt = EntryFilter(scope=self.scope, include_expired=True, include_invalid=True,
                          metadata=check.metadata_filter(metadata), archived=None)
        flt.exclude_scopes = k._gate.check("write", self.scope, "delete_all")
        store = k._ready()
        with store.transaction():
            k.proposals.guard_deletes(flt)
            return store.delete_entries(flt)

    def _filter(self, *, context_type: Any = None, category: Any = None, tags: Any = None, role: Any = None,
                include_expired: bool = False, include_invalid: bool = False, as_of: Any = None,
                metadata: Any = None, since: Any = None, until: Any = None, archived: Any = False,
                min_trust: Any = None, text_contains: Any = None, min_confidence: Any = None,
                operation: str = "list") -> EntryFilter:
        if context_type is not None:
            try:
                context_type = ContextType(getattr(context_type, "value", context_type)).value
            except ValueError:
                raise InvalidArgument(f"context_type must be one of memory, resource, skill; got {context_type!r}") from None
        if archived not in (False, True, None):
            raise InvalidArgument(f"archived must be False, True or None (both), got {archived!r}")
        k = self._kernel
        return EntryFilter(
            scope=self.scope, context_type=context_type, category=category,
            tags=tuple(check.tags(tags)) if tags is not None else None, role=role, include_expired=include_expired,
            include_invalid=include_invalid, as_of=check.when(as_of, "as_of"),
            metadata=check.metadata_filter(metadata),
            since=check.when(since, "since"), until=check.when(until, "until"), archived=archived,
            min_trust=check_trust(min_trust), text_contains=check.text_needle(text_contains),
            min_confidence=None if min_confidence is None else check.confidence(min_confidence),
            exclude_scopes=k._gate.check("read", self.scope, operation) if k.agent is not None else ())

    def list(self, *, context_type: Any = None, category: str | None = None, tags: Sequence[str] | None = None,
             role: str | None = None, include_expired: bool = False, include_invalid: bool = False,
             as_of: datetime | None = None, metadata: dict[str, Any] | None = None, since: datetime | None = None,
             until: datetime | None = None, limit: int | None = 100, offset: int = 0, order: str = "asc",
             archived: bool | None = False, min_trust: float | None = None,
             text_contains: str | None = None, min_confidence: float | None = None) -> builtins.list[Entry]:
        """Entries in creation order, filtered; ``limit=None`` for all. ``archived=True`` lists only
        archived entries (capacity, consolidation), ``None`` both. ``min_trust`` leaves out entries
        less trusted (``Entry.trust``). ``text_contains`` keeps the entries whose text holds that exact,
        case-sensitive substring (evaluated by the store: a literal grep over a scope)."""
        if order not in ("asc", "desc"):
            raise InvalidArgument(f"order must be 'asc' or 'desc', got {order!r}")
        flt = self._filter(context_type=context_type, category=category, tags=tags, role=role,
                           include_expired=include_expired, include_invalid=include_invalid, as_of=as_of,
                           metadata=metadata, since=since, until=until, archived=archived, min_trust=min_trust,
                           text_contains=text_contains, min_confidence=min_confidence)
        k = self._kernel
        return k._with_access(k._ready().list_entries(flt, limit=check.limit(limit),
                                                      offset=check.limit(offset, "offset") or 0, order=order))

    def count(self, /, **filters: Any) -> int:
        """How many entries ``list`` would return without a limit (``list``'s filter keywords)."""
        return self._kernel._ready().count_entries(self._filter(**filters, operation="count"))

    # -- retrieval -----------------------------------------------------------------------------
    @traced("find")
    def find(self, query: str, *, top_k: int = 10, context_type: Any = None, category: str | None = None,
             tags: Sequence[str] | None = None, role: str | None = None, since: datetime | None = None,
             until: datetime | None = None, as_of: datetime | None = None, metadata: dict[str, Any] | None = None,
             reference_time: datetime | None = None, token_budget: int | None = None, strategy: str = "auto",
             include_expired: bool = False, config: Any = None, reinforce: bool | None = None,
             min_trust: float | None = None, trust_weight: float = 0.0,
             min_confidence: float | None = None, min_score: float | None = None) -> FindResult:
        """Hybrid retrieval (FTS5 + vectors + NER + intents), best first, with a trace.

        Each returned entry's ``access_count`` / ``last_accessed_at`` are bumped after the search,
        batched off the read path (``reinforce=False`` or ``lifecycle.reinforce`` off to skip).

        ``min_trust`` leaves out entries less trusted (in SQL, before ranking); ``trust_weight`` w
        in [0, 1] re-ranks by ``score * (1 - w + w * trust)`` (off by default: not measured to
        help, docs/lifecycle.md). Hits whose entry is in an open conflict carry its id in
        ``hit.entry.conflicts``, and ``result.trace.conflicts`` lists those entries.

        ``min_confidence`` leaves out entries whose confidence (moved by ``record_outcome``) is lower;
        confidence is not a ranking term (not measured to help: docs/retrieval.md, "Outcomes").

        ``hit.score`` is a calibrated probability that the memory is what the question asks for
        (comparable across questions and scopes; docs/retrieval.md has its reliability table), and
        ``min_score`` in [0, 1] leaves out hits scoring below it (after ``trust_weight``).
        """
        k = self._kernel
        flt = self._filter(context_type=context_type, category=category, tags=tags, role=role,
                           include_expired=include_expired, as_of=as_of, metadata=metadata, since=since, until=until,
                           min_trust=min_trust, min_confidence=min_confidence, operation="find")
        if not isinstance(trust_weight, (int, float)) or isinstance(trust_weight, bool) or not 0 <= trust_weight <= 1:
            raise InvalidArgument(f"trust_weight must be a number in [0, 1], got {trust_weight!r}", param="trust_weight")
        if token_budget is not None:
            check.limit(token_budget, "token_budget")
        if min_score is not None and (not isinstance(min_score, (int, float)) or isinstance(min_score, bool)
                                      or not 0 <= min_score <= 1):
            raise InvalidArgument(f"min_score must be a number in [0, 1], got {min_score!r}", param="min_score")
        if config is not None and not isinstance(config, RetrievalConfig):
            raise InvalidArgument(f"config must be a RetrievalConfig (Config().retrieval), got {type(config).__name__}")
        if reinforce is not None and not isinstance(reinforce, bool):
            raise InvalidArgument(f"reinforce must be a bool or None, got {type(reinforce).__name__}")
        waiting = k._embed_before_find(flt, config)
        result = k.retriever.find(query, top_k=top_k, flt=flt,
                                  reference_time=check.when(reference_time, "reference_time"),
                                  token_budget=token_budget, strategy=strategy, config=config)
        if waiting and result.trace.degrade_reason is None:
            result.trace.degrade_reason = (f"{waiting} memories of this scope still wait for their vectors: "
                                           "ranked by FTS + NER alone (wait_embedded() first for full ranking)")
        k._govern_hits(result, flt, float(trust_weight))
        if min_score is not None:
            result.hits = [h for h in result.hits if h.score >= min_score]
        result.skill_warnings = k._skill_warnings(h.entry for h in result.hits)
        k._reinforce(result, flt.scope, query, reinforce)
        return result

    @traced("retrieve_by_entities")
    def retrieve_by_entities(self, entities: Sequence[str], *, top_k: int = 10, budget_tokens: int | None = None,
                             context_type: Any = None, reinforce: bool | None = None) -> FindResult:
        """The memories and skills linked to ``entities`` (file paths, table names, URLs, ids): what
        to know before an action touches them, best first, within ``budget_tokens`` tokens.

        An entry is linked to a name when ingest found it in the text (paths, snake_case and dotted
        identifiers, backtick spans, ticket ids, URLs, names) or a finished turn recorded it in
        ``touched_entities`` (``add_messages``). ``src/app/db.py`` also finds memories that name
        ``db.py`` (weighted half); ranking is in ``retrieve/entities.py``. Each hit's
        ``matched_by`` lists ``"entity:<name>"``.

        Raises:
            InvalidArgument: ``entities`` not a non-empty list of non-empty str, or a bad ``top_k`` /
                ``budget_tokens``.
        """
        from .retrieve.entities import retrieve_by_entities

        k = self._kernel
        names = check.entity_names(entities)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= k.max_top_k:
            raise InvalidArgument(f"top_k must be an int in [1, {k.max_top_k}], got {top_k!r}", param="top_k")
        if budget_tokens is not None:
            check.limit(budget_tokens, "budget_tokens")
        if reinforce is not None and not isinstance(reinforce, bool):
            raise InvalidArgument(f"reinforce must be a bool or None, got {type(reinforce).__name__}")
        flt = self._filter(context_type=context_type, operation="retrieve_by_entities")
        result = retrieve_by_entities(k._ready(), names, flt, top_k=top_k, budget_tokens=budget_tokens)
        k._govern_hits(result, flt, 0.0)
        result.skill_warnings = k._skill_warnings(h.entry for h in result.hits)
        k._reinforce(result, flt.scope, result.trace.query, reinforce)
        return result

    def prefetch(self, user_message: str, *, token_budget: int = 1000, relevant_k: int = 10, recent_k: int = 5,
                 reinforce: bool | None = None) -> Prefetch:
        """Context to inject before answering ``user_message``, within ``token_budget`` tokens: the
        user's current profile facts, the memories ``find`` ranks most relevant to the message and
        the most recent ones, deduplicated. ``result.text()`` is ready for a system prompt.

        The profile is read across the user's sessions (``session_id`` is ignored for it); relevant
        and recent memories honour the whole scope.
        """
        from .lifecycle.prefetch import build_prefetch

        k = self._kernel
        if not isinstance(user_message, str):
            raise InvalidArgument(f"user_message must be a str, got {type(user_message).__name__}")
        if not isinstance(token_budget, int) or isinstance(token_budget, bool) or token_budget < 1:
            raise InvalidArgument(f"token_budget must be a positive int, got {token_budget!r}")
        if not 1 <= check.count(relevant_k, "relevant_k") <= k.max_top_k:
            raise InvalidArgument(f"relevant_k must be in [1, {k.max_top_k}], got {relevant_k!r}")
        check.count(recent_k, "recent_k")
        k._gate.check("read", self.scope, "prefetch")
        out = build_prefetch(k.list, k.find, user_message, self.scope.as_dict(), token_budget=token_budget,
                             relevant_k=relevant_k, recent_k=recent_k, reinforce=reinforce)
        out.skill_warnings = k._skill_warnings(out.entries)
        return out

    def trace_session(self, *, limit: int = 20) -> builtins.list[dict[str, Any]]:
        """The most recent retrieval traces made in the scope, with their steps."""
        self._kernel._gate.check("read", self.scope, "trace_session", whole=True)
        return self._kernel._ready().load_traces(self.scope, check.count(limit))

    def entity_graph(self, *, entity: str | None = None, limit: int = 200) -> dict[str, Any]:
        """Entities seen in the scope and the co-occurrence links between them."""
        flt = EntryFilter(scope=self.scope, include_invalid=True)
        flt.exclude_scopes = self._kernel._gate.check("read", flt.scope, "entity_graph")
        if entity is not None and not isinstance(entity, str):
            raise InvalidArgument(f"entity must be a str, got {type(entity).__name__}")
        return self._kernel._ready().entity_graph(flt, entity, check.count(limit))

    # -- capacity, archival, consolidation (docs/lifecycle.md) ------------------------------------
    def archive(self, entry_id: str, *, actor: str | None = None) -> Entry:
        """Take an entry out of search and default reads, keeping it (an ARCHIVE history event and
        an ``archive`` audit row). ``restore`` brings it back. Archiving an archived entry is a no-op."""
        k = self._kernel
        store = k._ready()
        entry = k._check_entry("write", store.get_entry(check.entry_id(entry_id), self.scope), "archive")
        store.archive_entries([entry.id], reason="manual", actor=actor)
        return k._with_access([store.get_entry(entry.id)])[0]

    def restore(self, entry_id: str, *, actor: str | None = None) -> Entry:
        """Bring an archived entry back into search (a RESTORE event, a ``restore`` audit row).

        If its scope is at capacity, the scope's lowest-scoring other entry is archived instead.
        ``EntryNotFound`` when missing or outside the scope; restoring a live entry is a no-op."""
        k = self._kernel
        store = k._ready()
        entry = k._check_entry("write", store.get_entry(check.entry_id(entry_id), self.scope), "restore")
        if store.restore_entries([entry.id], actor=actor):
            lifecycle = k.config.lifecycle
            enforce(store, entry.scope, default=lifecycle.max_items_per_scope,
                    half_life_days=lifecycle.half_life_days, protect={entry.id}, actor=actor)
        return k._with_access([store.get_entry(entry.id)])[0]

    def set_capacity(self, max_items: int | None) -> builtins.list[str]:
        """Set how many live entries exactly this scope keeps (0: no limit; ``None``: back to
        ``lifecycle.max_items_per_scope``), stored in the file for every process. Applies at once:
        returns the ids it archived."""
        if self.scope.is_empty:
            raise ScopeError("set_capacity needs at least one of user_id, agent_id, project_id, session_id - "
                             "lifecycle.max_items_per_scope is the default for every scope")
        if max_items is not None:
            check.count(max_items, "max_items")
        k = self._kernel
        k._gate.check("write", self.scope, "set_capacity", exact=True)
        store = k._ready()
        store.set_scope_capacity(self.scope, max_items)
        lifecycle = k.config.lifecycle
        return enforce(store, self.scope, default=lifecycle.max_items_per_scope,
                       half_life_days=lifecycle.half_life_days)

    def capacity(self) -> dict[str, int]:
        """``{"max_items": cap (0: no limit), "live": live entries}`` of exactly this scope."""
        k = self._kernel
        k._gate.check("read", self.scope, "capacity", exact=True)
        store = k._ready()
        return {"max_items": effective_capacity(store, self.scope, k.config.lifecycle.max_items_per_scope),
                "live": store.scope_size(self.scope)}

    def consolidate(self, *, older_than: timedelta | float | datetime | None = None,
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

        scope, k = self.scope, self._kernel
        if scope.is_empty:
            raise ScopeError("consolidate needs at least one of user_id, agent_id, project_id, session_id")
        k._gate.check("write", scope, "consolidate", exact=True)
        lifecycle = k.config.lifecycle
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
        result = run(k._ready(), scope, write=k.ingestor.add_many, ner=k.ner, cutoff=cutoff,
                     max_importance=max_importance or 0.0, min_items=max(2, min_items), summarizer=summarizer,
                     actor=actor)
        if result.summary is not None:
            enforce(k._ready(), scope, default=lifecycle.max_items_per_scope, half_life_days=lifecycle.half_life_days,
                    protect={result.summary.id})
        return result

    # -- governance in this scope ------------------------------------------------------------------
    def audit(self, *, since: datetime | None = None, until: datetime | None = None,
              kinds: Sequence[str] | str | None = None, limit: int | None = 100) -> builtins.list[AuditEvent]:
        """The scope's audit log, newest first (``Governance.audit``)."""
        return self._kernel.governance.audit(**self._ids, since=since, until=until, kinds=kinds, limit=limit)

    def conflicts(self, *, include_closed: bool = False) -> builtins.list[Conflict]:
        """The scope's contradicting facts, oldest first (``Governance.conflicts``)."""
        return self._kernel.governance.conflicts(**self._ids, include_closed=include_closed)

    def record_outcome(self, outcome_type: str, value: float | bool | None = None, *,
                       entry_ids: Sequence[str] | None = None, trace_ids: Sequence[str] | None = None,
                       top_k: int | None = None, weight: float = 1.0, detail: dict[str, Any] | None = None,
                       actor: str | None = None) -> Outcome:
        """How the scope's session went (``Outcomes.record_outcome``; the scope needs a session_id)."""
        return self._kernel.outcomes.record_outcome(
            self._session_id("record_outcome"), outcome_type, value, entry_ids=entry_ids, trace_ids=trace_ids,
            top_k=top_k, weight=weight, detail=detail, actor=actor, **self._owner)

    def outcome_stats(self, *, top: int = 5) -> dict[str, Any]:
        """Outcomes and confidence in the scope (``Outcomes.outcome_stats``)."""
        return self._kernel.outcomes.outcome_stats(**self._ids, top=top)

    def protect(self, *, key_prefix: str | None = None, category: str | None = None,
                actor: str | None = None) -> Zone:
        """Mark the scope human-approved (``Proposals.protect``)."""
        return self._kernel.proposals.protect(**self._ids, key_prefix=key_prefix, category=category, actor=actor)

    def propose(self, text: str | None = None, *, op: str = "add", entry_id: str | None = None,
                category: str | None = None, tags: Sequence[str] = (), metadata: dict[str, Any] | None = None,
                reason: str | None = None, proposer: str | None = None) -> Proposal:
        """Propose a write in the scope for a person to approve (``Proposals.propose``)."""
        return self._kernel.proposals.propose(text, **self._ids, op=op, entry_id=entry_id, category=category,
                                              tags=tags, metadata=metadata, reason=reason, proposer=proposer)

    def list_proposals(self, *, status: str | None = "pending", limit: int | None = 100,
                       offset: int = 0) -> builtins.list[Proposal]:
        """The scope's proposals, oldest first (``Proposals.list_proposals``)."""
        return self._kernel.proposals.list_proposals(**self._ids, status=status, limit=limit, offset=offset)

    def export(self, out: str | os.PathLike[str] | Any, *, metadata: dict[str, Any] | None = None,
               vectors: bool = True, traces: bool = False,
               progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Write the scope as an agentbase export: JSON Lines, streamed.

        ``out`` is a path (written to ``out.partial`` and renamed when complete) or a text stream.
        Returns how many records of each type were written; ``progress(done, total)`` counts entries.
        """
        from .portable import write_export

        k = self._kernel
        flt = EntryFilter(scope=self.scope, include_expired=True, include_invalid=True,
                          metadata=check.metadata_filter(metadata), archived=None)
        # an export copies sessions and messages too: it runs only where the agent may read everything
        k._gate.check("read", flt.scope, "export", whole=True)
        filters = {key: v for key, v in {**flt.scope.as_dict(), "metadata": flt.metadata}.items() if v is not None}
        return write_export(k._ready(), out, flt, embedder=k.embedder, vectors=bool(vectors),
                            traces=bool(traces), filters=filters, progress=progress)

    # -- sessions in this scope --------------------------------------------------------------------
    def _session_id(self, operation: str) -> str:
        if self.scope.session_id is None:
            raise ScopeError(f"{operation} needs a scope with a session_id - kernel.scope(..., session_id=...)")
        return self.scope.session_id

    @property
    def _owner(self) -> dict[str, str | None]:
        return {"user_id": self.scope.user_id, "agent_id": self.scope.agent_id, "project_id": self.scope.project_id}

    def create_session(self, session_id: str | None = None, *,
                       metadata: dict[str, Any] | None = None) -> Session:
        """Create the scope's session (``session_id``, else the scope's own, else a new id) in the
        scope's user/agent/project, or return it if it exists (its scope must agree)."""
        return self._kernel.sessions.create(session_id if session_id is not None else self.scope.session_id,
                                            **self._owner, metadata=metadata)

    def list_sessions(self, *, limit: int | None = 100, offset: int = 0) -> builtins.list[Session]:
        """The sessions of the scope's user/agent/project."""
        return self._kernel.sessions.list(**self._owner, limit=limit, offset=offset)

    def add_message(self, role: str, content: str, *, name: str | None = None,
                    metadata: dict[str, Any] | None = None, payload: Any = None, created_at: Any = None,
                    message_id: str | None = None, status: str = "active", position: int | None = None,
                    ingest: bool = True) -> Message:
        """Append one turn to the scope's session (``Sessions.add_message``)."""
        return self._kernel.sessions.add_message(
            self._session_id("add_message"), role, content, name=name, metadata=metadata, payload=payload,
            created_at=created_at, message_id=message_id, status=status, position=position, ingest=ingest,
            **self._owner)

    def add_messages(self, messages: Sequence[dict[str, Any]], *, position: int | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     touched_entities: Sequence[str] | None = None) -> builtins.list[Message]:
        """Append many turns to the scope's session in one transaction (``Sessions.add_messages``)."""
        return self._kernel.sessions.add_messages(self._session_id("add_messages"), messages, position=position,
                                                  progress=progress, touched_entities=touched_entities,
                                                  **self._owner)

    def list_messages(self, *, status: str | None = None, limit: int | None = None, offset: int = 0,
                      order: str = "asc", after: str | None = None,
                      before: str | None = None) -> builtins.list[Message]:
        """The scope's session's messages by sequence (``Sessions.list_messages``)."""
        return self._kernel.sessions.list_messages(self._session_id("list_messages"), status=status, limit=limit,
                                                   offset=offset, order=order, after=after, before=before)

    def commit_session(self) -> Entry:
        """Summarise the scope's session (``Sessions.commit``)."""
        return self._kernel.sessions.commit(self._session_id("commit_session"))


class AsyncScopedMemory:
    """``ScopedMemory`` for async code (``db.scope(...)``): each method runs in a worker thread."""

    def __init__(self, scoped: ScopedMemory) -> None:
        self._sync = scoped

    @property
    def scope(self) -> Scope:
        return self._sync.scope

    def __repr__(self) -> str:
        return f"Async{self._sync!r}"

    add_memory = in_thread(ScopedMemory.add_memory)
    add_memories = in_thread(ScopedMemory.add_memories)
    get = in_thread(ScopedMemory.get)
    update = in_thread(ScopedMemory.update)
    delete = in_thread(ScopedMemory.delete)
    delete_all = in_thread(ScopedMemory.delete_all)
    list = in_thread(ScopedMemory.list)
    count = in_thread(ScopedMemory.count)
    find = in_thread(ScopedMemory.find)
    prefetch = in_thread(ScopedMemory.prefetch)
    retrieve_by_entities = in_thread(ScopedMemory.retrieve_by_entities)
    trace_session = in_thread(ScopedMemory.trace_session)
    entity_graph = in_thread(ScopedMemory.entity_graph)
    archive = in_thread(ScopedMemory.archive)
    restore = in_thread(ScopedMemory.restore)
    set_capacity = in_thread(ScopedMemory.set_capacity)
    capacity = in_thread(ScopedMemory.capacity)
    consolidate = in_thread(ScopedMemory.consolidate)
    audit = in_thread(ScopedMemory.audit)
    conflicts = in_thread(ScopedMemory.conflicts)
    record_outcome = in_thread(ScopedMemory.record_outcome)
    outcome_stats = in_thread(ScopedMemory.outcome_stats)
    protect = in_thread(ScopedMemory.protect)
    propose = in_thread(ScopedMemory.propose)
    list_proposals = in_thread(ScopedMemory.list_proposals)
    export = in_thread(ScopedMemory.export)
    create_session = in_thread(ScopedMemory.create_session)
    list_sessions = in_thread(ScopedMemory.list_sessions)
    add_message = in_thread(ScopedMemory.add_message)
    add_messages = in_thread(ScopedMemory.add_messages)
    list_messages = in_thread(ScopedMemory.list_messages)
    commit_session = in_thread(ScopedMemory.commit_session)
