"""``SqliteStore``: the ``Store`` protocol on one SQLite file.

The SQL core (``store/sql/``) holds entries, sessions, governance, export and the rest; this class
opens the file, migrates it, maps SQLite's errors, and adds what is SQLite's own: FTS5 search
(``fts``), vectors searched in RAM or by sqlite-vec (``vector_search``), and ``verify``.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ...errors import InvalidArgument, SchemaTooNew, StorageError
from ..sql import CallGate, SqlStore, mapped
from ..vectors import VectorIndex
from .connection import Connections, is_locked_error, locked_error
from .dialect import SqliteDialect
from .fts import FtsMixin
from .migrations import MIGRATIONS, SCHEMA_VERSION
from .vector_search import OVERFETCH_MAX, VECTOR_CACHE_BYTES, VECTOR_SHORTLIST_ABOVE, VectorsMixin

__all__ = ["SqliteStore"]


class SqliteStore(VectorsMixin, FtsMixin, SqlStore):
    """All persistence for one database file.

    Usage::

        store = SqliteStore(Path("memory.db"))
        store.open()
        store.get_entry("id", Scope(user_id="alice"))
    """

    conns: Connections

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000, synchronous: str = "NORMAL",
                 use_vec: bool = True, create: bool = True, vector_cache_bytes: int = VECTOR_CACHE_BYTES,
                 fts_cache: bool = True, vector_shortlist_above: int = VECTOR_SHORTLIST_ABOVE,
                 overfetch_max: int = OVERFETCH_MAX) -> None:
        self.path = path
        self.create = create
        self.conns = Connections(path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous,
                                 use_vec=use_vec)
        self.dialect = SqliteDialect()
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
        self._gate = CallGate()

    def _call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Translate the sqlite errors a caller can act on; keep the cause."""
        try:
            return fn(self, *args, **kwargs)
        except UnicodeEncodeError as exc:  # a lone surrogate in any bound string
            raise InvalidArgument(f"{exc.object[:80]!r} contains lone surrogate code points and is not valid "
                                  "Unicode - decode it with errors='replace' first") from exc
        except OverflowError as exc:  # a Python int beyond SQLite's 64 bits
            raise InvalidArgument(f"A number is too large for the database ({exc}) - pass it as a string") from exc
        except self._module.Error as exc:
            if is_locked_error(exc):
                raise locked_error(self.path, exc) from exc
            if isinstance(exc, self._module.IntegrityError) or "binding parameter" in str(exc):
                raise InvalidArgument(f"Rejected by the database: {exc}") from exc
            raise StorageError(f"SQLite error on {self.path}: {exc}", path=str(self.path)) from exc

    def _export_error(self, exc: BaseException) -> BaseException | None:
        if isinstance(exc, self._module.Error):
            return InvalidArgument(f"Export failed reading {self.path}: {exc}")
        return None

    def open(self) -> None:
        self._gate.reopen()
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
        self._gate.close(timeout_s=self.conns.busy_timeout_ms / 1000)
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
            # healthy file. A fresh connection of the same library sees the file as it is.
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
