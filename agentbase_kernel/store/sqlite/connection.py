"""Opening SQLite: the module that can load extensions, pragmas, transactions, error mapping.

The stdlib ``sqlite3`` often cannot load extensions (this machine, macOS system Python), so we
prefer ``sqlean`` (sqlean.py) and then ``pysqlite3``; with neither, the stdlib module works and
vectors are searched with numpy instead of sqlite-vec.
"""

from __future__ import annotations

import contextlib
import importlib
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ...errors import DatabaseLocked, StorageError
from .filters import LOWER_FUNCTION, sql_lower

__all__ = ["Connections", "is_locked_error", "locked_error", "sqlite_module"]

_MODULE: ModuleType | None = None


def sqlite_module() -> ModuleType:
    """The best available DB-API module: sqlean, then pysqlite3, then the stdlib."""
    global _MODULE
    if _MODULE is None:
        for name in ("sqlean", "pysqlite3.dbapi2", "sqlite3"):
            try:
                _MODULE = importlib.import_module(name)
                break
            except ImportError:
                continue
    assert _MODULE is not None
    return _MODULE


def _load_vec(conn: Any) -> bool:
    try:
        import sqlite_vec
    except ImportError:
        return False
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        return True
    except Exception:
        return False


def is_locked_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class Connections:
    """One SQLite connection per thread on one file, with transactions that nest.

    Usage::

        conns = Connections(Path("memory.db"), busy_timeout_ms=30_000)
        with conns.write() as conn:
            conn.execute("INSERT ...")
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000, synchronous: str = "NORMAL",
                 use_vec: bool = True) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self.synchronous = synchronous
        self.use_vec = use_vec
        self.module = sqlite_module()
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False
        self.vec_loaded: bool | None = None

    # -- connections -------------------------------------------------------------------------
    def get(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            self._local.depth = 0
        return conn

    def _open(self) -> Any:
        target, uri = str(self.path), False
        if target == ":memory:":
            # one private in-memory database shared by this object's per-thread connections
            target, uri = f"file:agentbase-{id(self)}?mode=memory&cache=shared", True
        try:
            conn = self.module.connect(
                target, timeout=self.busy_timeout_ms / 1000, isolation_level=None,
                check_same_thread=False, uri=uri,
            )
        except self.module.Error as exc:
            raise StorageError(f"Cannot open {self.path}: {exc} - check the path and its permissions",
                               path=str(self.path)) from exc
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        conn.create_function(LOWER_FUNCTION, 1, sql_lower, deterministic=True)
        loaded = _load_vec(conn) if self.use_vec else False
        if self.vec_loaded is None:
            self.vec_loaded = loaded
        with self._lock:
            self._all.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(Exception):
                    conn.close()
            self._all.clear()
            self._closed = True
        self._local = threading.local()

    # -- transactions ------------------------------------------------------------------------
    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction (BEGIN IMMEDIATE, retried while another writer holds the lock).

        Nested calls become savepoints, so a failing inner block rolls back only itself.
        """
        conn = self.get()
        depth = self._local.depth
        if depth:
            name = f"sp{depth}"
            conn.execute(f"SAVEPOINT {name}")
            self._local.depth += 1
            try:
                yield conn
            except BaseException:
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
                raise
            else:
                conn.execute(f"RELEASE {name}")
            finally:
                self._local.depth -= 1
            return
        self._begin(conn)
        self._local.depth = 1
        self._local.writing = True
        try:
            yield conn
        except BaseException:
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
            raise
        else:
            self._commit(conn)
        finally:
            self._local.depth = 0
            self._local.writing = False

    @property
    def in_write(self) -> bool:
        """True inside this thread's write transaction: what it reads may still roll back."""
        return bool(getattr(self._local, "writing", False))

    @property
    def current(self) -> Any | None:
        """This thread's connection while it is inside a transaction."""
        return self._local.conn if getattr(self._local, "depth", 0) else None

    @contextlib.contextmanager
    def read(self, *, snapshot: bool = True) -> Iterator[Any]:
        """A consistent read snapshot (deferred transaction), or the enclosing write. (Every read is
        a snapshot here; ``snapshot`` is for the ``Connections`` protocol.)"""
        conn = self.get()
        if self._local.depth:
            yield conn
            return
        conn.execute("BEGIN")
        self._local.depth = 1
        try:
            yield conn
        finally:
            with contextlib.suppress(Exception):
                conn.execute("COMMIT")
            self._local.depth = 0

    def _begin(self, conn: Any) -> None:
        deadline = time.monotonic() + max(self.busy_timeout_ms / 1000, 1.0) * 2
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except self.module.OperationalError as exc:
                if not is_locked_error(exc) or time.monotonic() > deadline:
                    raise locked_error(self.path, exc) from exc
                time.sleep(random.uniform(0.005, 0.05))

    def _commit(self, conn: Any) -> None:
        deadline = time.monotonic() + max(self.busy_timeout_ms / 1000, 1.0)
        while True:
            try:
                conn.execute("COMMIT")
                return
            except self.module.OperationalError as exc:
                if not is_locked_error(exc) or time.monotonic() > deadline:
                    with contextlib.suppress(Exception):
                        conn.execute("ROLLBACK")
                    raise locked_error(self.path, exc) from exc
                time.sleep(random.uniform(0.005, 0.05))


def locked_error(path: Path, exc: BaseException) -> StorageError:
    if is_locked_error(exc):
        return DatabaseLocked(
            f"{path} stayed locked by another writer beyond the busy timeout - retry, or raise "
            "AGENTBASE_STORAGE__BUSY_TIMEOUT_MS", path=str(path))
    return StorageError(f"SQLite error on {path}: {exc}", path=str(path))
