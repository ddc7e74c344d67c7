"""``SqliteStore``: the ``Store`` protocol on one SQLite file.

Each job lives in its own part (``entries``, ``vector_search``, ``fts``, ``sessions``,
``entities``, ``traces``); this class opens the file, migrates it and puts the parts together.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import EmbeddingMismatch, SchemaTooNew, StorageError
from ..base import NO_EMBEDDER
from ..vectors import VectorIndex
from .archive import ArchiveMixin
from .connection import Connections, is_locked_error, locked_error
from .core import mapped
from .entities import EntitiesMixin
from .fts import FtsMixin
from .governance import GovernanceMixin
from .lifecycle import LifecycleMixin
from .migrations import MIGRATIONS, SCHEMA_VERSION
from .portable import PortableMixin
from .sessions import SessionsMixin
from .traces import TracesMixin
from .vector_search import OVERFETCH_MAX, VECTOR_CACHE_BYTES, VECTOR_SHORTLIST_ABOVE, VectorsMixin

__all__ = ["SqliteStore"]


class SqliteStore(SessionsMixin, VectorsMixin, FtsMixin, EntitiesMixin, TracesMixin, PortableMixin,
                  LifecycleMixin, ArchiveMixin, GovernanceMixin):
    """All persistence for one database file.

    Usage::

        store = SqliteStore(Path("memory.db"))
        store.open()
        store.get_entry("id", Scope(user_id="alice"))
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000, synchronous: str = "NORMAL",
                 use_vec: bool = True, create: bool = True, vector_cache_bytes: int = VECTOR_CACHE_BYTES,
                 fts_cache: bool = True, vector_shortlist_above: int = VECTOR_SHORTLIST_ABOVE,
                 overfetch_max: int = OVERFETCH_MAX) -> None:
        self.path = path
        self.create = create
        self.conns = Connections(path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous,
                                 use_vec=use_vec)
        self._module = self.conns.module
        self.vector_cache_bytes = vector_cache_bytes
        self.vector_shortlist_above = vector_shortlist_above
        self.overfetch_max = overfetch_max
        self.fts_cache = fts_cache
        self._cache_lock = threading.RLock()
        self._vindex: OrderedDict[tuple[str | None, ...], VectorIndex] = OrderedDict()
        self._fts: dict[Any, Any] = {}
        self._fts_seq = -1
        self._fts_now = ""


    def open(self) -> None:
        if str(self.path) != ":memory:" and not self.path.exists():
            if not self.create:
                raise StorageError(f"{self.path} does not exist - pass create=True to make it",
                                   path=str(self.path))
            if self.path.parent and not self.path.parent.exists():
                raise StorageError(f"The folder {self.path.parent} does not exist - create it first",
                                   path=str(self.path))
        try:
            conn = self.conns.get()
            # check before touching anything: a newer file must stay byte-for-byte as it was
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.path} has schema version {version}, newer than this agentbase knows "
                    f"({SCHEMA_VERSION}) - upgrade agentbase to open it; the file was not modified",
                    path=str(self.path))
            if str(self.path) != ":memory:" and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            self._migrate()
        except self._module.DatabaseError as exc:
            self.conns.close()
            raise StorageError(f"{self.path} is not a usable SQLite database: {exc}",
                               path=str(self.path)) from exc
        except BaseException:
            self.conns.close()
            raise

    def _migrate(self) -> None:
        conn = self.conns.get()
        while True:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                return
            with self.conns.write() as wconn:
                # another process may have migrated while we waited for the lock
                current = wconn.execute("PRAGMA user_version").fetchone()[0]
                if current != version:
                    continue
                MIGRATIONS[version](wconn)
                wconn.execute(f"PRAGMA user_version = {version + 1}")

    def close(self) -> None:
        self.conns.close()
        with self._cache_lock:
            self._vindex.clear()
            self._fts = {}

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several store calls into one atomic write."""
        try:
            with self.conns.write():
                yield
        except self._module.Error as exc:
            if is_locked_error(exc):
                raise locked_error(self.path, exc) from exc
            raise StorageError(f"SQLite error on {self.path}: {exc}", path=str(self.path)) from exc

    @contextlib.contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Nothing to defer here: the file keeps no vector index (the RAM one is built by the first
        search after the load) and FTS5 indexes each row as it is written."""
        yield

    @mapped
    def schema_version(self) -> int:
        return int(self.conns.get().execute("PRAGMA user_version").fetchone()[0])

    @mapped
    def journal_mode(self) -> str:
        return str(self.conns.get().execute("PRAGMA journal_mode").fetchone()[0])

    @mapped
    def check_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later.

        ``"none"`` (writes made without an embedder) is recorded only on a file that records
        nothing yet, and a real embedder named later replaces it: the texts written before then
        have no vectors until ``rebuild``, and ``verify`` says so.
        """
        with self.conns.write() as conn:
            rows = dict(conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim')").fetchall())
            if name == NO_EMBEDDER or not rows or rows.get("embedding_model") == NO_EMBEDDER:
                if name != NO_EMBEDDER or not rows:
                    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                     [("embedding_model", name), ("embedding_dim", str(dim))])
                return
        if int(rows["embedding_dim"]) != dim:
            raise EmbeddingMismatch(
                f"Embedding dimension {dim} does not match this store ({rows['embedding_dim']}, model "
                f"{rows['embedding_model']!r}) - open it with the embedder that created it, or pass a new path",
                path=str(self.path))
        if rows["embedding_model"] != name:
            raise EmbeddingMismatch(
                f"Embedder {name!r} differs from the one that wrote this store ({rows['embedding_model']!r}) - "
                "open it with that embedder, or pass a new path", path=str(self.path))

    @mapped
    def meta(self) -> dict[str, str]:
        with self.conns.read() as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    @mapped
    def stats(self) -> dict[str, int]:
        """Row counts of the file: every entry (expired and superseded too), the live ones,
        sessions, messages and stored vectors."""
        with self.conns.read() as conn:
            def one(sql: str) -> int:
                return int(conn.execute(sql).fetchone()[0])

            return {"entries": one("SELECT count(*) FROM entries"),
                    "entries_valid": one("SELECT count(*) FROM entries WHERE invalid_at IS NULL"),
                    "sessions": one("SELECT count(*) FROM sessions"),
                    "messages": one("SELECT count(*) FROM messages"),
                    "vectors": one("SELECT count(*) FROM embeddings")}

    def cache_stats(self) -> dict[str, int]:
        """What this process holds in RAM for searches: vector indexes (and their bytes) and FTS items."""
        with self._cache_lock:
            return {"vector_indexes": len(self._vindex),
                    "vector_index_bytes": sum(i.nbytes for i in self._vindex.values()),
                    "shortlisted_indexes": sum(i.codes is not None for i in self._vindex.values()),
                    "fts_items": len(self._fts),
                    "fts_rankings": sum(1 for k in self._fts if isinstance(k, tuple) and k[0] == "rank")}

    @mapped
    def _fts_integrity(self, conn: Any) -> bool | None:
        """FTS5's own integrity check; ``None`` when it could not run in a read transaction (the check
        is an INSERT: a concurrent writer's lock or commit stops it there)."""
        try:
            conn.execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)")
            return True
        except self._module.Error:
            # busy, or a snapshot a concurrent commit made stale: retried under the write lock, whose
            # answer is final
            return None

    def verify(self) -> dict[str, Any]:
        """Check the file: SQLite integrity, FTS in step with entries, vectors for every text."""
        with self.conns.read() as conn:
            # A connection that outlived writes made by this process's other connections can hold a
            # stale FTS5 structure: its integrity_check then says "malformed inverted index" on a
            # healthy file (issue 9). A fresh connection of the same library sees the file as it is.
            fresh = self._module.connect(str(self.path), timeout=self.conns.busy_timeout_ms / 1000)
            try:
                integrity = fresh.execute("PRAGMA integrity_check").fetchone()[0]
                # FTS5's check too: a pooled connection may hold a stale FTS structure while the
                # background embedder writes; the fresh one, in autocommit, waits for a writer's lock
                fts_ok = self._fts_integrity(fresh)
            finally:
                fresh.close()
            fk = conn.execute("PRAGMA foreign_key_check").fetchall()
            if fts_ok is None:  # could not run even so: ask under the write lock, whose answer is final
                with self.conns.write() as writer:
                    fts_ok = bool(self._fts_integrity(writer))
            n_entries = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
            n_fts = conn.execute("SELECT count(*) FROM entries_fts_docsize").fetchone()[0]
            missing_vec = conn.execute(
                "SELECT count(DISTINCT e.content_hash) FROM entries e LEFT JOIN embeddings v "
                "ON v.content_hash = e.content_hash WHERE v.content_hash IS NULL").fetchone()[0]
        return {"integrity": integrity, "foreign_keys": len(fk), "fts_ok": bool(fts_ok and n_fts == n_entries),
                "entries": n_entries, "fts_rows": n_fts, "texts_without_vector": missing_vec,
                "ok": integrity == "ok" and not fk and fts_ok and n_fts == n_entries}
