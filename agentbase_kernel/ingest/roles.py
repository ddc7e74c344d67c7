"""What ingest needs of the store: the roles it writes through, as one type."""

from __future__ import annotations

from typing import Protocol

from ..store.protocol import EntryStore, GovernanceStore, SessionStore, SkillStore, VectorStore

__all__ = ["IngestStore"]


class IngestStore(EntryStore, VectorStore, SessionStore, GovernanceStore, SkillStore, Protocol):
    """Entries and their vectors, the sessions turns and streams are written into, and the
    conflicts a new fact can open (``GovernanceStore.add_conflict``), and the entity drift a text
    marks (``SkillStore.add_drift``)."""
