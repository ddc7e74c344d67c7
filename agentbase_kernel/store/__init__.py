"""Storage: the ``Store`` protocol, its filters, the SQL core (``sql/``) and its backends (SQLite;
PostgreSQL + pgvector), and the in-memory reference store. SQL lives here and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import StorageConfig
from ..errors import InvalidArgument, MissingDependency
from .base import NO_EMBEDDER, EntryFilter, iso, parse_iso, utcnow
from .postgres import is_postgres_url, redact_url
from .protocol import EntryRow, MessageRow, Store
from .sqlite import SqliteStore

__all__ = ["NO_EMBEDDER", "EntryFilter", "EntryRow", "MessageRow", "SqliteStore", "Store", "is_postgres_url", "iso",
           "open_store", "parse_iso", "redact_url", "utcnow"]


def open_store(path: str | os.PathLike[str], storage: StorageConfig | None = None, *, create: bool = True) -> Store:
    """The backend for ``path``, opened (created or migrated): a ``postgresql://`` (or
    ``postgres://``) URL string opens PostgreSQL, anything else is a SQLite file."""
    storage = storage or StorageConfig()
    if is_postgres_url(path):
        store: Store = _postgres(str(path), storage, create)
        return store
    if str(path).lower().startswith(("postgresql:/", "postgres:/")):
        raise InvalidArgument(f"{str(path)[:12]}... looks like a PostgreSQL URL made into a file path (a Path folds "
                              "'//') - pass the URL as a string")
    sqlite = SqliteStore(Path(path), busy_timeout_ms=storage.busy_timeout_ms, synchronous=storage.synchronous,
                         create=create, vector_cache_bytes=storage.vector_cache_bytes,
                         vector_shortlist_above=storage.vector_shortlist_above, fts_cache=storage.fts_cache)
    sqlite.open()
    return sqlite


def _postgres(url: str, storage: StorageConfig, create: bool) -> Store:
    try:
        from .postgres.store import PostgresStore
    except ImportError as exc:
        raise MissingDependency(f"PostgreSQL needs the postgres extra ({exc.name or exc} is missing): "
                                "pip install 'agentbase-memory[postgres]'") from exc
    store = PostgresStore(url, create=create, timeout_s=max(1.0, storage.busy_timeout_ms / 1000),
                          vector_shortlist_above=storage.vector_shortlist_above, synchronous=storage.synchronous,
                          fts_cache=storage.fts_cache, fts_common_rows=storage.fts_common_rows)
    store.open()
    return store
