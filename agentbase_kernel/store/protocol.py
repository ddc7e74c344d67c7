"""The storage interface, split by role: what each part of the kernel asks of a database.

Each role is a ``Protocol`` naming the methods one kind of caller needs, so a part of the kernel is
typed against the role it uses and nothing more:

    Transactional   transaction() and in_transaction: what every writing role shares
    Maintenance     open / close / bulk_load, counts, integrity, reset, the FTS rebuild, stored traces
    EntryStore      entries, their history, supersession, links, entities      (ingest, the kernel)
    VectorStore     one vector per distinct text, and the embedder that made them   (ingest)
    SearchIndex     full-text and vector legs, rids, turn neighbours, provenance, traces   (retrieve/)
    SessionStore    sessions, messages and their links to entries              (ingest, the kernel)
    RetentionStore  access counts, archival, per-scope capacity               (lifecycle/)
    GovernanceStore the audit log, scope policies, conflicts, outcomes and confidence, approval zones
                    and proposals                                             (lifecycle/gate.py, the kernel)
    SkillStore      skill versions and entity drift marks                      (lifecycle/skills.py, the kernel)
    PortableStore   export records, import them keeping ids and times; the audit log replayed  (portable/)

``Store`` is their union: what a backend implements (SQLite, PostgreSQL + pgvector, and the
in-memory reference store ``store/memory/``), checked by the contract suite in
``agentbase_kernel.testing``. Backends raise the kernel's exceptions (``EntryNotFound``,
``InvalidArgument``, ``StorageError`` ...), never their driver's.

Entries have a string ``id`` and an integer ``rid`` (the backend's row number, increasing with
insertion): the search legs return rids because they are cheap to pass around; ``entries_by_rid``
turns them back into entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, TypedDict

import numpy as np

from ..records import Entry, HistoryEvent, Message, Provenance, Scope, Session, Trace
from .base import EntryFilter

__all__ = ["EntryRow", "EntryStore", "GovernanceStore", "Maintenance", "MessageRow", "PortableStore", "RetentionStore",
           "SearchIndex", "SessionStore", "SkillStore", "Store", "Transactional", "VectorStore"]


class EntryRow(TypedDict, total=False):
    """One entry as ingest hands it to ``insert_entry`` (``ingest.pipeline.Ingestor.build_row``)."""

    id: str | None
    l2_full: str  # required: the verbatim text
    l0_abstract: str  # required
    l1_overview: str  # required
    content_hash: str  # required: md5 of l2_full, the exact-dedup key within a scope
    search_text: str  # required: what full-text search indexes as the entry's own words
    search_context: str  # the words around it (neighbouring turns), indexed with less weight
    context_type: str
    category: str | None
    tags: list[str]
    user_id: str | None
    agent_id: str | None
    project_id: str | None
    session_id: str | None
    role: str | None
    actor: str | None
    confidence: float
    metadata: dict[str, Any]
    event_dates: list[str]
    date_min: str | None
    date_max: str | None
    flags: list[str]
    subject_key: str | None  # facts about one subject: a newer one supersedes older ones
    created_at: datetime | None
    valid_from: datetime | None
    expires_at: datetime | None
    dedup: bool  # False keeps equal texts as separate entries
    importance: float | None  # [0, 1]; ingest fills it (rules/importance.py)
    trust: float  # provenance (rules/trust.py): 0..1, the role's default unless the caller set it
    source: str | None  # the adapter or path that wrote it
    written_by: str | None  # the acting agent


class MessageRow(TypedDict, total=False):
    id: str | None
    role: str  # required
    content: str  # required
    name: str | None
    metadata: dict[str, Any]
    payload: Any
    status: str
    created_at: datetime | None


class Transactional(Protocol):
    """Several calls as one atomic write: what every writing role shares."""

    def transaction(self) -> AbstractContextManager[None]:
        """Several calls as one atomic write; nested use is a savepoint."""

    @property
    def in_transaction(self) -> bool:
        """True inside this thread's write transaction (what it writes may still roll back)."""


class Maintenance(Protocol):
    """Opening and closing the database, counting and checking it, wiping it."""

    def open(self) -> None:
        """Create or migrate the database; ``SchemaTooNew`` leaves a newer file untouched."""

    def close(self) -> None:
        """Release connections and caches. Safe to call twice."""

    def bulk_load(self) -> AbstractContextManager[None]:
        """Writes inside may leave index upkeep to the end of the block (a large import)."""

    def schema_version(self) -> int: ...

    def journal_mode(self) -> str: ...

    def meta(self) -> dict[str, str]:
        """The file's recorded facts (``embedding_model``, ``embedding_dim`` ...)."""

    def stats(self) -> dict[str, int]:
        """Row counts: ``entries`` (all), ``entries_valid``, ``sessions``, ``messages``, ``vectors``."""

    def verify(self) -> dict[str, Any]:
        """Integrity report with at least ``ok``, ``entries`` and ``texts_without_vector``."""

    def reset(self) -> None:
        """Delete every entry, session, message, link, trace and vector."""

    def rebuild_fts(self) -> None: ...

    def load_traces(self, scope: Scope, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent retrieval traces saved in exactly this scope, newest first."""


class EntryStore(Transactional, Protocol):
    """Entries: insert (exact dedup), read, change, delete, supersede, link, and their entities."""

    def insert_entry(self, row: EntryRow, *, history: bool = True) -> tuple[Entry, bool]:
        """Insert, or return the live exact duplicate of the same scope: ``(entry, inserted)``."""

    def get_entry(self, entry_id: str, scope: Scope | None = None) -> Entry:
        """``EntryNotFound`` when missing or outside ``scope``."""

    def get_entries(self, entry_ids: Iterable[str]) -> dict[str, Entry]: ...

    def live_duplicates(self, keys: Iterable[tuple[Scope, str]]) -> dict[tuple[Scope, str], Entry]:
        """For each ``(scope, content_hash)``, the live entry an ``insert_entry`` of that text (with
        dedup) would return as its duplicate, when there is one: how ingest skips analysing a text
        the scope already holds."""

    def update_entry(self, entry_id: str, scope: Scope, changes: dict[str, Any], *,
                     actor: str | None = None) -> Entry:
        """Apply column changes (keys of ``EntryRow``); an UPDATE history event when ``l2_full``
        changes; ``DuplicateEntry`` if the new text is another live entry's in the same scope."""

    def reinforce(self, entry_id: str, confidence: float) -> None:
        """Raise an entry's confidence (an exact duplicate arrived); its ``updated_at`` stays."""

    def delete_entry(self, entry_id: str, scope: Scope, *, actor: str | None = None) -> Entry: ...

    def delete_entries(self, flt: EntryFilter, *, actor: str | None = None) -> int: ...

    def list_entries(self, flt: EntryFilter, *, limit: int | None = 100, offset: int = 0,
                     order: str = "asc") -> list[Entry]:
        """In insertion order (``"desc"``: newest first); ``limit=None`` for all."""

    def count_entries(self, flt: EntryFilter) -> int: ...

    def history(self, entry_id: str) -> list[HistoryEvent]: ...

    def live_subject_entries(self, scope: Scope, subject_key: str, exclude_id: str) -> list[Entry]: ...

    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        """Mark ``old_id`` invalid from ``at`` and link it to its successor; never deletes."""

    def link_entries(self, src: str, dst: str, relation: str) -> None: ...

    def add_entities(self, entry_id: str, entities: list[tuple[str, str, str]], observed_at: datetime, *,
                     replace: bool = False) -> None:
        """Store an entry's ``(norm, label, text)`` entities and link those that occur together;
        ``replace`` drops the ones it had first (its text changed)."""

    def entity_graph(self, flt: EntryFilter, entity: str | None = None, limit: int = 200) -> dict[str, Any]: ...

    def entity_matches(self, keys: Sequence[str], flt: EntryFilter, limit: int = 200) -> dict[str, list[str]]:
        """Entries ``flt`` passes that are linked to an entity named by one of ``keys``: its norm is the
        key, or ends with ``/key`` or ``.key`` (a path's file, a dotted name's last part).
        ``{entry_id: [keys matched]}``, newest entries first, at most ``limit`` entries."""

    def entities_of(self, entry_ids: Iterable[str]) -> dict[str, list[str]]:
        """``{entry_id: [entity norms]}`` of the entries that have entities."""

    def append_search_context(self, entry_id: str, text: str) -> None:
        """Add words to an entry's full-text context column (a turn that came after it)."""


class VectorStore(Protocol):
    """One vector per distinct text (keyed by content hash), and the embedder that made them."""

    def check_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; ``EmbeddingMismatch`` for a different one later."""

    def missing_vectors(self, hashes: Iterable[str]) -> set[str]: ...

    def vectors_for(self, hashes: Iterable[str]) -> dict[str, np.ndarray]: ...

    def put_vectors(self, items: Iterable[tuple[str, np.ndarray]]) -> None: ...

    def hashes_without_vector(self) -> list[tuple[str, str]]:
        """``(content_hash, text)`` of every stored text that has no vector yet."""


class SearchIndex(Protocol):
    """What retrieval reads: the two recall legs, rids back to entries, the turns around a hit,
    where a hit came from, and the trace it leaves. (``get_entries`` and ``vectors_for`` are
    also ``EntryStore``'s and ``VectorStore``'s.)"""

    @property
    def vector_backend(self) -> str:
        """How vectors are searched (``"sqlite-vec"``, ``"numpy"``, ``"pgvector"``)."""

    def fts_search(self, terms: list[str], flt: EntryFilter, k: int, *, per_term: int = 400) -> list[tuple[int, float]]:
        """``(rid, score)`` best first: BM25 with the IDF of the filtered scope."""

    def vector_search(self, query: np.ndarray, flt: EntryFilter, k: int) -> list[tuple[int, float]]:
        """``(rid, cosine distance)`` nearest first, ties by rid, exact within the filter."""

    def entries_by_rid(self, rids: Iterable[int]) -> dict[int, Entry]: ...

    def get_entries(self, entry_ids: Iterable[str]) -> dict[str, Entry]: ...

    def vectors_for(self, hashes: Iterable[str]) -> dict[str, np.ndarray]: ...

    def indexed_vectors(self, scope: Scope, rids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these entries (by rid) that the store already holds in RAM for
        ``scope``'s searches; rows it does not hold are left out (``vectors_for`` reads those)."""

    def neighbour_turn_hashes(self, rids: Iterable[int]) -> dict[int, tuple[str | None, str | None]]:
        """For each turn entry, the content hashes of the turns just before and after it."""

    def session_neighbours(self, entry_ids: list[str], window: int, flt: EntryFilter) -> dict[str, list[str]]:
        """For each turn entry, the turn entries within ``window`` turns of it in its session."""

    def provenance(self, entry_ids: Iterable[str]) -> dict[str, list[Provenance]]: ...

    def save_trace(self, trace: Trace, scope: Scope, result_ids: list[str], total_ms: float) -> None: ...


class SessionStore(Transactional, Protocol):
    """Sessions, their ordered messages, and the links from messages and sessions to entries."""

    def ensure_session(self, session_id: str, scope: Scope,
                       metadata: dict[str, Any] | None) -> tuple[Session, bool]:
        """The session, created in ``scope`` if missing: ``(session, created)``."""

    def find_session(self, session_id: str) -> Session | None: ...

    def list_sessions(self, scope: Scope, limit: int | None, offset: int) -> list[Session]: ...

    def update_session(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       committed: bool = False, summary_entry_id: str | None = None) -> Session: ...

    def delete_session(self, session_id: str) -> None:
        """The session, its messages and the entries only they produced."""

    def insert_message(self, session_id: str, row: MessageRow, position: int | None = None) -> Message: ...

    def attach_entry(self, message_id: str, entry_id: str, session_id: str, relation: str = "turn") -> None:
        """Link a message's turn entry: ``message.entry_id``, its provenance and the session link."""

    def link_source(self, entry_id: str, message_id: str) -> None: ...

    def link_session(self, session_id: str, entry_id: str, relation: str) -> None: ...

    def get_message(self, session_id: str, message_id: str) -> Message: ...

    def message_sessions(self, message_ids: Iterable[str]) -> dict[str, str]:
        """``{message_id: session_id}`` for those of ``message_ids`` that exist (import checks ids with it)."""
        ...

    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> list[Message]: ...

    def count_messages(self, session_id: str, status: str | None = None) -> int: ...

    def update_message(self, session_id: str, message_id: str, changes: dict[str, Any]) -> Message: ...

    def delete_message(self, session_id: str, message_id: str) -> Message: ...

    def delete_messages(self, session_id: str, status: str | None = None) -> int: ...


class RetentionStore(Transactional, Protocol):
    """What decides what a scope keeps: access counts, archival and per-scope capacity
    (docs/lifecycle.md)."""

    def bump_access(self, counts: dict[str, tuple[int, str]], reads: Sequence[dict[str, Any]] = ()) -> None:
        """Add access counts ``{id: (n, last ISO time)}`` and append read audit rows, in one write."""

    def access_stats(self, entry_ids: Iterable[str]) -> dict[str, tuple[int, datetime | None]]:
        """``{id: (access_count, last_accessed_at)}`` of the ids that were ever accessed."""

    def archive_entries(self, entry_ids: Sequence[str], *, reason: str, actor: str | None = None) -> list[str]:
        """Set ``archived_at`` (out of default reads and search) with an ARCHIVE history event and an
        ``archive`` audit row each; returns the ids that were live. Never deletes."""

    def restore_entries(self, entry_ids: Sequence[str], *, actor: str | None = None) -> list[str]:
        """Clear ``archived_at`` with a RESTORE event and a ``restore`` audit row; returns the ids restored."""

    def scope_size(self, scope: Scope) -> int:
        """Live entries (not archived, superseded or expired) whose scope ids are exactly ``scope``'s."""

    def scope_entries(self, scope: Scope) -> list[Entry]:
        """Those entries, oldest first, with ``access_count`` / ``last_accessed_at`` filled."""

    def scope_capacity(self, scope: Scope) -> int | None:
        """The capacity set for exactly this scope, or ``None``."""

    def set_scope_capacity(self, scope: Scope, max_items: int | None) -> None:
        """Set (``None``: remove) the capacity of exactly this scope."""


class GovernanceStore(Transactional, Protocol):
    """The audit log, scope policies and conflicts (docs/lifecycle.md). ``EntryFilter.min_trust``
    and ``EntryFilter.exclude_scopes`` apply to every filtered read of the other roles."""

    def configure_audit(self, enabled: bool, max_rows: int) -> None:
        """Store the audit switch and size limit in the file; prune to the limit."""

    def audit_rows(self, scope: Scope, *, since: datetime | None = None, until: datetime | None = None,
                   kinds: Sequence[str] | None = None, limit: int | None = 100) -> list[dict[str, Any]]:
        """Audit rows of a scope, newest first."""

    def append_audit(self, kind: str, *, actor: str | None, scope: Scope, entry_ids: Sequence[str] = (),
                     detail: dict[str, Any] | None = None) -> None:
        """Append one audit row (``denied``, ``resolve``, ``policy`` ...) in its own write, unless the
        file's audit switch is off."""

    def policies(self) -> list[dict[str, Any]]:
        """Every policy: ``{agent, scope, read, write, created_at}``. Called on every permission check:
        may return the same (unmutated) list while nothing changed, which lets the kernel cache its
        verdicts on it."""

    def set_policy(self, agent: str, scope: Scope, *, read: bool, write: bool) -> None:
        """Create or replace the policy of ``agent`` on exactly ``scope``."""

    def delete_policy(self, agent: str, scope: Scope) -> bool: ...

    def add_conflict(self, old: Entry, new: Entry, reason: str, subject_key: str | None) -> str:
        """Record that two live entries of one scope contradict each other; returns its id."""

    def list_conflicts(self, scope: Scope, *, include_closed: bool = False, entry_ids: Iterable[str] | None = None,
                       conflict_id: str | None = None) -> list[dict[str, Any]]:
        """``{id, status, reason, subject_key, scope, entry_ids, kept, actor, created_at, resolved_at, texts}``;
        status is ``open`` (both sides current), ``resolved`` or ``superseded`` (a side no longer current)."""

    def resolve_conflict(self, conflict_id: str, keep: str, *, actor: str | None) -> dict[str, Any]:
        """Supersede the side not kept by ``keep`` and close the conflict, atomically;
        ``InvalidArgument`` for an unknown or closed conflict or a ``keep`` not in it."""

    # -- outcomes and confidence (rules/outcomes.py) ------------------------------------------------
    def confidence_counts(self, entry_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``{id: {"confidence": float, "counts": (alpha, beta, confidence they gave) | None}}`` of the
        ids that exist."""

    def save_outcome(self, outcome: dict[str, Any], effects: Sequence[dict[str, Any]]) -> None:
        """Store an outcome ``{id, session_id, scope, outcome_type, value, weight, actor, trace_ids, detail,
        created_at}`` and its ``effects`` (``entry_id, success, failure, confidence_before, confidence_after,
        alpha, beta``); set each entry's counts and confidence; an ``outcome`` audit row; atomically."""

    def revert_outcome(self, outcome_id: str, at: Any, changes: Sequence[dict[str, Any]], *,
                       actor: str | None) -> None:
        """Mark an outcome reverted and write ``changes`` (``entry_id, alpha, beta, confidence``), with an
        ``outcome_revert`` audit row, atomically."""

    def list_outcomes(self, scope: Scope, *, outcome_id: str | None = None, include_reverted: bool = True,
                      limit: int | None = 100) -> list[dict[str, Any]]:
        """Outcomes of a scope (its ``session_id`` the outcome's session), newest first, with ``effects``."""

    def outcome_effects(self, entry_ids: Iterable[str]) -> list[dict[str, Any]]:
        """Every outcome's effect on the ids, oldest first (with the outcome's type, value, actor, times)."""

    def outcome_stats(self, scope: Scope, *, top: int = 5) -> dict[str, Any]:
        """``outcomes``, ``reverted``, ``by_type``, ``confidence_buckets`` (ten), ``entries_with_outcomes``,
        ``most_helped``, ``most_harmed``."""

    # -- approval zones and proposals (rules/zones.py) ----------------------------------------------
    def set_zone(self, zone: dict[str, Any]) -> None:
        """Create a zone ``{id, scope, key_prefix, category, actor, created_at}``; a ``zone`` audit row."""

    def delete_zone(self, zone_id: str, *, actor: str | None) -> bool: ...

    def zones(self) -> list[dict[str, Any]]:
        """Every zone, oldest first."""

    def save_proposal(self, proposal: dict[str, Any], *, kind: str = "propose", actor: str | None = None) -> None:
        """Write a proposal (new, or every field by id) with a ``proposal`` audit row saying ``kind``."""

    def get_proposal(self, proposal_id: str) -> dict[str, Any]:
        """``InvalidArgument`` when there is none."""

    def list_proposals(self, scope: Scope, *, status: str | None = None, limit: int | None = 100,
                       offset: int = 0) -> list[dict[str, Any]]:
        """Proposals whose scope has each id ``scope`` sets, oldest first."""


class SkillStore(Transactional, Protocol):
    """Skills as governed records (docs/skills.md): the versions of each named skill, and what later
    memories said about the entities skills name. Rows go with their entry when it is deleted."""

    def add_skill_version(self, entry_id: str, scope: Scope, name: str, version: int, *, authored_by: str | None,
                          status: str, created_at: datetime) -> None:
        """Name the skill entry ``entry_id`` as ``version`` of ``name`` in ``scope``; ``status`` is
        ``current``, ``candidate`` or ``retired``. A second row for the same scope, name and version
        raises ``InvalidArgument``."""

    def skill_versions(self, scope: Scope | None = None, *, name: str | None = None,
                       entry_ids: Iterable[str] | None = None, exact: bool = False) -> list[dict[str, Any]]:
        """``{entry_id, name, version, authored_by, status, created_at, verified_at, scope}`` of the
        versions whose scope has each id ``scope`` sets (``exact``: exactly ``scope``), by name, version, scope."""

    def set_skill_version(self, entry_id: str, *, status: str | None = None,
                          verified_at: datetime | None = None) -> None:
        """Change a version's status and/or verification time."""

    def add_drift(self, entry_id: str, scope: Scope, marks: Sequence[tuple[str, str, str | None]],
                  at: datetime) -> None:
        """Record that entry ``entry_id`` marks entities ``(entity norm, "deprecated" | "renamed", new name)``."""

    def drift_marks(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        """``{entity, kind, replacement, entry_id, scope, created_at, text}`` of the marks (by live,
        unarchived entries) on an entity one of ``keys`` names (``key_matches`` either way), oldest first."""


class PortableStore(Transactional, Protocol):
    """Rows out and back in with their ids and times (``portable/``, docs/export-format.md)."""

    def export_records(self, flt: EntryFilter, *, vectors: bool = False,
                       traces: bool = False) -> Iterable[tuple[str, dict[str, Any]]]:
        """Every row ``flt`` reaches as ``(kind, fields)`` in import order, paged from one snapshot."""

    def import_record(self, kind: str, fields: dict[str, Any]) -> str:
        """Write one exported row keeping ids and times: ``"inserted"``, ``"updated"`` or ``"skipped"``."""

    def restore_times(self, table: str, row_id: str, *, created_at: str | None = None,
                      updated_at: str | None = None, history: list[dict[str, Any]] | None = None) -> None:
        """Set an entry's or session's times after ingest wrote it; ``history`` replaces its events."""

    def audit_log(self, from_sequence: int = 0, limit: int = 500) -> list[dict[str, Any]]:
        """Audit rows after ``from_sequence``, oldest first: ``seq, at, kind, actor, scope`` (the four
        ids), ``entry_ids, detail`` and ``state`` (an entry's row as the change left it, or ``None``)."""

    def replay_entry(self, state: dict[str, Any]) -> None:
        """Write an entry row as an audit row's ``state`` holds it (inserted, or every column replaced)."""

    def replay_delete(self, entry_id: str, *, actor: str | None = None) -> bool:
        """Delete the entry if it exists; ``False`` if not."""


class Store(Maintenance, EntryStore, VectorStore, SearchIndex, SessionStore, RetentionStore, GovernanceStore,
            SkillStore, PortableStore, Protocol):
    """Everything the kernel asks of a database: the union of the roles, what a backend implements.
    Every method is one atomic step; ``transaction()`` groups several."""
