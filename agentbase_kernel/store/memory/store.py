"""``MemoryStore``: every role of ``Store`` on plain Python dicts - the readable specification.

No SQL and no file: each role is a short mixin over the tables (``tables.py``), written for
reading rather than speed (every read scans). It passes the same contract suite as the SQLite and
PostgreSQL stores (``agentbase_kernel.testing.StoreContractTests``), so where the SQL is hard to
follow, this says what it means.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .learning import LearningMixin
from .tables import Tables

__all__ = ["MemoryStore"]

#: reported as the schema version (the export header records it): the SQL backends' migrations
#: do not apply to a store that is never written to disk
SCHEMA_VERSION = 1


class MemoryStore(LearningMixin):
    """A ``Store`` that lives in this process only.

    Usage::

        store = MemoryStore()
        store.open()
        entry, inserted = store.insert_entry({"l2_full": "I like tea", ...})
    """

    # -- Maintenance ---------------------------------------------------------------------------
    def open(self) -> None:
        """Nothing to create or migrate."""

    def close(self) -> None:
        """Nothing to release: the data stays with the object."""

    @contextlib.contextmanager
    def bulk_load(self) -> Iterator[None]:
        """No index to defer."""
        yield

    def schema_version(self) -> int:
        return SCHEMA_VERSION

    def journal_mode(self) -> str:
        return "memory"

    def meta(self) -> dict[str, str]:
        with self._lock:
            return dict(self.tables.meta)

    def stats(self) -> dict[str, int]:
        with self._lock:
            t = self.tables
            return {"entries": len(t.entries),
                    "entries_valid": sum(1 for r in t.entries.values() if r["invalid_at"] is None),
                    "sessions": len(t.sessions), "messages": len(t.messages), "vectors": len(t.vectors)}

    def verify(self) -> dict[str, Any]:
        """Nothing can drift here (no separate index, no foreign keys to break): only the texts
        still waiting for a vector are counted."""
        with self._lock:
            n = len(self.tables.entries)
            missing = len({r["content_hash"] for r in self.tables.entries.values()} - self.tables.vectors.keys())
            return {"integrity": "ok", "foreign_keys": 0, "fts_ok": True, "entries": n, "fts_rows": n,
                    "texts_without_vector": missing, "ok": True}

    def reset(self) -> None:
        """Entries, sessions, messages, links, entities, traces and vectors go; the file's settings,
        policies, capacities and audit log stay (as on the SQL backends)."""
        with self._lock:
            old = self.tables
            self.tables = Tables(meta=old.meta, audit=old.audit, capacity=old.capacity, policies=old.policies,
                                 zones=old.zones, counters=old.counters)

    def rebuild_fts(self) -> None:
        """The ranking reads the entries themselves: there is no index to rebuild."""
