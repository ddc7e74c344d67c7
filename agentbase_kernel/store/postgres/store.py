"""``PostgresStore``: the ``Store`` protocol on one PostgreSQL database with pgvector.

The SQL core (``store/sql/``) holds entries, sessions, governance, export and the rest; this class
connects, migrates, maps the driver's errors, and adds what is PostgreSQL's own: BM25 over
``tsvector`` (``fts``, ``common_terms``, ``planner``), pgvector search (``search``) and the calls
done in one statement (``batched``).
"""

from __future__ import annotations

import contextlib
import math
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.types.json import set_json_loads

from ...errors import SchemaTooNew, StorageError
from ..sql import CallGate, SqlStore, mapped
from .batched import BatchedMixin
from .connection import PgConnection, PgConnections
from .dialect import PostgresDialect
from .errors import fetch_one, run_mapped, storage_error
from .escape import loads_jsonb
from .fts import FtsMixin
from .migrations import ADVISORY_LOCK_KEY, MIGRATIONS, SCHEMA_VERSION, WRITE_LOCK_KEY
from .planner import PlannerStatsMixin
from .search import SearchMixin

__all__ = ["PostgresStore"]

# a scope with more rows than this is searched through the HNSW index (``search.py``)
VECTOR_SHORTLIST_ABOVE = 50_000


class PostgresStore(BatchedMixin, SearchMixin, FtsMixin, PlannerStatsMixin, SqlStore):
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
        self.dialect = PostgresDialect()
        #: the database URL without its password (what errors and ``info()`` show)
        self.path = self.conns.shown
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
        self._gate = CallGate()

    _elsewhere = "use another database"

    def _call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return run_mapped(self.conns, fn, self, args, kwargs)

    def _export_error(self, exc: BaseException) -> BaseException | None:
        return storage_error(self.conns.shown, exc) if isinstance(exc, psycopg.Error) else None

    def _lock_meta(self, conn: Any) -> None:
        conn.execute("LOCK TABLE meta IN SHARE ROW EXCLUSIVE MODE")

    # -- opening -----------------------------------------------------------------------------------
    def open(self) -> None:
        self._gate.reopen()
        conn = self.conns.connect()
        try:
            self._migrate(conn)
        except psycopg.Error as exc:
            raise storage_error(self.conns.shown, exc) from exc
        finally:
            conn.close()
        self.conns.open(configure=self._configure)

    def _configure(self, conn: PgConnection) -> None:
        # the HNSW scan keeps walking until enough rows pass a search's filter (search.py)
        conn.execute("SELECT set_config('timezone', 'UTC', false), set_config('synchronous_commit', ?, false), "
                     "set_config('hnsw.iterative_scan', 'strict_order', false)", (self.synchronous_commit,))
        register_vector(conn)
        set_json_loads(loads_jsonb, conn)  # strings in jsonb come back with their NULs (escape.py)

    def _migrate(self, conn: PgConnection) -> None:
        """Apply the missing migrations under a session advisory lock (one process at a time)."""
        conn.execute("SELECT pg_advisory_lock(?)", (ADVISORY_LOCK_KEY,))
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
                    conn.execute("UPDATE agentbase_schema SET version = ?", (version + 1,))
                version += 1
        finally:
            with contextlib.suppress(Exception):
                conn.execute("SELECT pg_advisory_unlock(?)", (ADVISORY_LOCK_KEY,))

    @staticmethod
    def _version(conn: PgConnection) -> int | None:
        if fetch_one(conn.execute("SELECT to_regclass('agentbase_schema')"), "to_regclass")[0] is None:
            return None
        row = conn.execute("SELECT max(version) FROM agentbase_schema").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def close(self) -> None:
        self._gate.close(timeout_s=self.conns.timeout_s)
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
                    conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK_KEY,))
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
    def verify(self) -> dict[str, Any]:
        """Check the database: every entry's full-text vector is the one its text gives, and
        which texts have no vector yet. (PostgreSQL checks its own pages and foreign keys.)"""
        with self.conns.read() as conn:
            n_entries, stale = fetch_one(conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE fts IS DISTINCT FROM "
                "setweight(to_tsvector('agentbase_english', agentbase_fold(search_text)), 'A') || "
                "setweight(to_tsvector('agentbase_english', agentbase_fold(search_context)), 'B')) FROM entries"), "verify")
            missing_vec = fetch_one(conn.execute(
                "SELECT count(DISTINCT e.content_hash) FROM entries e LEFT JOIN embeddings v "
                "ON v.content_hash = e.content_hash WHERE v.content_hash IS NULL"), "verify")[0]
        return {"integrity": "ok", "foreign_keys": 0, "fts_ok": stale == 0, "entries": int(n_entries),
                "fts_rows": int(n_entries) - int(stale), "texts_without_vector": int(missing_vec), "ok": stale == 0}
