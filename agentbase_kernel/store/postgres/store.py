"""``PostgresStore``: the ``Store`` protocol on one PostgreSQL database with pgvector.

Each job lives in its own part (``entries``, ``sessions``, ``search`` (vectors), ``fts``, ``entities``, ``traces``,
``lifecycle``, ``portable``); this class connects, migrates and puts the parts together.
"""

from __future__ import annotations

import contextlib
import math
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.types.json import set_json_loads

from ...errors import EmbeddingMismatch, SchemaTooNew, StorageError
from ..base import NO_EMBEDDER
from .archive import ArchiveMixin
from .connection import PgConnections
from .core import fetch_one, mapped, storage_error
from .entities import EntitiesMixin
from .escape import loads_jsonb
from .fts import FtsMixin
from .governance import GovernanceMixin
from .lifecycle import LifecycleMixin
from .migrations import ADVISORY_LOCK_KEY, MIGRATIONS, SCHEMA_VERSION, WRITE_LOCK_KEY
from .planner import PlannerStatsMixin
from .portable import PortableMixin
from .search import SearchMixin
from .sessions import SessionsMixin
from .traces import TracesMixin

__all__ = ["PostgresStore"]

# a scope with more rows than this is searched through the HNSW index (``search.py``)
VECTOR_SHORTLIST_ABOVE = 50_000


class PostgresStore(SessionsMixin, SearchMixin, FtsMixin, EntitiesMixin, TracesMixin, PortableMixin, LifecycleMixin,
                    ArchiveMixin, GovernanceMixin, PlannerStatsMixin):
    """All persistence in one PostgreSQL database (pgvector installed on the server).

    Usage::

        store = PostgresStore("postgresql://agent@db.internal/agentbase")
        store.open()
        store.get_entry("id", Scope(user_id="alice"))
    """

    def __init__(self, url: str, *, create: bool = True, pool_max: int = 10,
                 timeout_s: float = 30.0, vector_shortlist_above: int = VECTOR_SHORTLIST_ABOVE,
                 synchronous: str = "NORMAL", fts_cache: bool = True,
                 fts_common_rows: int = 5_000) -> None:
        self.url = url
        # SQLite's synchronous=NORMAL in WAL mode may lose the last commits on power loss, never
        # consistency: PostgreSQL's synchronous_commit=off is the same promise (FULL keeps it on)
        self.synchronous_commit = "on" if synchronous.upper() in ("FULL", "EXTRA") else "off"
        self.create = create
        self.conns = PgConnections(url, max_size=pool_max, timeout_s=timeout_s)
        self.vector_shortlist_above = vector_shortlist_above
        self._cache_lock = threading.RLock()
        self.fts_cache = fts_cache
        self.fts_common_rows = fts_common_rows
        self._shares: dict[str, float] = {}
        self._shares_at = -math.inf
        self._rows_unanalysed = 0
        self._rows_analysed = 0.0
        self._fts: dict[Any, Any] = {}
        self._fts_seq = -1
        self._fts_totals: dict[Any, tuple[Any, ...]] = {}
        self._fts_now: Any = None
        self._parsed: dict[str, tuple[str, list[str]]] = {}
        self._counts: dict[Any, tuple[int, int]] = {}
        self._index_dim: int | None = None
        self._ef_search: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._unindexed_writes = 0
        self._next_index_check = 0
        self._bulk_depth = 0

    # -- lifecycle ---------------------------------------------------------------------------------
    def open(self) -> None:
        conn = self.conns.connect()
        try:
            self._migrate(conn)
        except psycopg.Error as exc:
            raise storage_error(self.conns.shown, exc) from exc
        finally:
            conn.close()
        self.conns.open(configure=self._configure)

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        # the HNSW scan keeps walking until enough rows pass a search's filter (search.py)
        conn.execute("SELECT set_config('timezone', 'UTC', false), set_config('synchronous_commit', %s, false), "
                     "set_config('hnsw.iterative_scan', 'strict_order', false)", (self.synchronous_commit,))
        register_vector(conn)
        set_json_loads(loads_jsonb, conn)  # strings in jsonb come back with their NULs (escape.py)

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        """Apply the missing migrations under a session advisory lock (one process at a time)."""
        conn.execute("SELECT pg_advisory_lock(%s)", (ADVISORY_LOCK_KEY,))
        try:
            version = self._version(conn)
            if version is None:
                if not self.create:
                    raise StorageError(f"{self.conns.shown} holds no agentbase data - pass create=True to set it up",
                                       path=self.conns.shown)
                conn.execute("CREATE TABLE agentbase_schema (version integer NOT NULL)")
                conn.execute("INSERT INTO agentbase_schema (version) VALUES (0)")
                version = 0
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.conns.shown} has schema version {version}, newer than this agentbase knows "
                    f"({SCHEMA_VERSION}) - upgrade agentbase to open it; the database was not modified",
                    path=self.conns.shown)
            while version < SCHEMA_VERSION:
                with conn.transaction():
                    try:
                        MIGRATIONS[version](conn)
                    except psycopg.errors.FeatureNotSupported as exc:
                        raise StorageError(f"{self.conns.shown} cannot be set up: {exc} - install pgvector on the "
                                           "server", path=self.conns.shown) from exc
                    except (psycopg.errors.UndefinedFile, psycopg.errors.InsufficientPrivilege) as exc:
                        raise StorageError(
                            f"{self.conns.shown} cannot be set up: {str(exc).strip()} - the pgvector extension must "
                            "be installed on the server, and the first connection needs the right to CREATE "
                            "EXTENSION vector (or run it once as a superuser)", path=self.conns.shown) from exc
                    conn.execute("UPDATE agentbase_schema SET version = %s", (version + 1,))
                version += 1
        finally:
            with contextlib.suppress(Exception):
                conn.execute("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK_KEY,))

    @staticmethod
    def _version(conn: psycopg.Connection[Any]) -> int | None:
        if fetch_one(conn.execute("SELECT to_regclass('agentbase_schema')"), "to_regclass")[0] is None:
            return None
        row = conn.execute("SELECT max(version) FROM agentbase_schema").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def close(self) -> None:
        self.conns.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several store calls into one atomic write (nested: a savepoint).

        The kernel reads, decides and writes inside one transaction (dedup, supersession, metadata
        patches), trusting that no other writer moves in between - what SQLite's one write lock
        gives. Here the outermost block takes a transaction-scoped advisory lock, so these groups
        run one at a time across every process and machine, while reads and single-call writes
        stay concurrent.
        """
        outermost = self.conns.current is None
        try:
            with self.conns.write(savepoint=True) as conn:
                if outermost:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
                yield
        except psycopg.Error as exc:
            raise storage_error(self.conns.shown, exc) from exc

    @mapped
    def schema_version(self) -> int:
        with self.conns.read() as conn:
            return int(fetch_one(conn.execute("SELECT max(version) FROM agentbase_schema"), "the schema version")[0])

    def journal_mode(self) -> str:
        """PostgreSQL always writes ahead to its WAL."""
        return "wal"

    @mapped
    def check_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later (as ``SqliteStore``)."""
        with self.conns.write() as conn:
            conn.execute("LOCK TABLE meta IN SHARE ROW EXCLUSIVE MODE")
            rows = dict(conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim')").fetchall())
            if name == NO_EMBEDDER or not rows or rows.get("embedding_model") == NO_EMBEDDER:
                if name != NO_EMBEDDER or not rows:
                    with conn.cursor() as cur:
                        cur.executemany("INSERT INTO meta (key, value) VALUES (%s, %s) "
                                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                        [("embedding_model", name), ("embedding_dim", str(dim))])
                return
        if int(rows["embedding_dim"]) != dim:
            raise EmbeddingMismatch(
                f"Embedding dimension {dim} does not match this store ({rows['embedding_dim']}, model "
                f"{rows['embedding_model']!r}) - open it with the embedder that created it, or use another database",
                path=self.conns.shown)
        if rows["embedding_model"] != name:
            raise EmbeddingMismatch(
                f"Embedder {name!r} differs from the one that wrote this store ({rows['embedding_model']!r}) - "
                "open it with that embedder, or use another database", path=self.conns.shown)

    @mapped
    def meta(self) -> dict[str, str]:
        with self.conns.read() as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    @mapped
    def stats(self) -> dict[str, int]:
        """Row counts: every entry (expired and superseded too), the live ones, sessions, messages, vectors."""
        with self.conns.read() as conn:
            row = fetch_one(conn.execute(
                "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM entries WHERE invalid_at IS NULL), "
                "(SELECT count(*) FROM sessions), (SELECT count(*) FROM messages), "
                "(SELECT count(*) FROM embeddings)"), "stats")
        return dict(zip(("entries", "entries_valid", "sessions", "messages", "vectors"), map(int, row)))

    @mapped
    def verify(self) -> dict[str, Any]:
        """Check the database: every entry's full-text vector is the one its text gives, and
        which texts have no vector yet. (PostgreSQL checks its own pages and foreign keys.)"""
        with self.conns.read() as conn:
            n_entries, stale = fetch_one(conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE fts IS DISTINCT FROM "
                "setweight(to_tsvector('agentbase_english', agentbase_fold(search_text)), 'A') || "
                "setweight(to_tsvector('agentbase_english', agentbase_fold(search_context)), 'B')) FROM entries"),
                "verify")
            missing_vec = fetch_one(conn.execute(
                "SELECT count(DISTINCT e.content_hash) FROM entries e LEFT JOIN embeddings v "
                "ON v.content_hash = e.content_hash WHERE v.content_hash IS NULL"), "verify")[0]
        return {"integrity": "ok", "foreign_keys": 0, "fts_ok": stale == 0, "entries": int(n_entries),
                "fts_rows": int(n_entries) - int(stale), "texts_without_vector": int(missing_vec), "ok": stale == 0}
