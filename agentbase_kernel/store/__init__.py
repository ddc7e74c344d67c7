"""Storage: the ``Store`` protocol, its filters, and the SQLite backend. SQL lives here and nowhere else."""

from __future__ import annotations

from pathlib import Path

from ..config import StorageConfig
from .base import NO_EMBEDDER, EntryFilter, iso, parse_iso, utcnow
from .protocol import EntryRow, MessageRow, Store
from .sqlite import SqliteStore

__all__ = ["NO_EMBEDDER", "EntryFilter", "EntryRow", "MessageRow", "SqliteStore", "Store", "iso", "open_store", "parse_iso",
           "utcnow"]


def open_store(path: Path, storage: StorageConfig | None = None, *, create: bool = True) -> Store:
    """The backend for ``path``, opened (created or migrated). Only SQLite for now."""
    storage = storage or StorageConfig()
    store = SqliteStore(path, busy_timeout_ms=storage.busy_timeout_ms, synchronous=storage.synchronous,
                        create=create, vector_cache_bytes=storage.vector_cache_bytes,
                        vector_shortlist_above=storage.vector_shortlist_above, fts_cache=storage.fts_cache)
    store.open()
    return store
