"""Connections to one PostgreSQL database: a psycopg pool, per-thread transactions that nest,
and which driver errors mean "the connection is gone" (and may be retried).

A thread that opens a transaction keeps its connection until the outermost block ends, so every
store call inside it (``Store.transaction()``, or one method calling another) runs on that
connection; nested blocks are savepoints. Reads outside a transaction borrow a connection for one
REPEATABLE READ snapshot.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from ...errors import StorageError
from .url import redact_url

__all__ = ["PgConnections", "is_connection_lost", "is_retryable"]

# SQLSTATEs that mean the session is gone: class 08 (connection exception) and the server
# shutting down or starting up
_LOST = ("57P01", "57P02", "57P03")
# a whole transaction may be run again after these
_CONFLICT = ("40001", "40P01")


def is_connection_lost(exc: BaseException) -> bool:
    if isinstance(exc, (PoolTimeout, PoolClosed)):
        return False
    if isinstance(exc, psycopg.InterfaceError):
        return "closed" in str(exc).lower()
    if isinstance(exc, psycopg.OperationalError):
        state = exc.sqlstate
        return state is None or state.startswith("08") or state in _LOST
    return False


def is_retryable(exc: BaseException) -> bool:
    """A transaction that failed this way wrote nothing and may run again as a whole."""
    state = getattr(exc, "sqlstate", None)
    return is_connection_lost(exc) or state in _CONFLICT


class PgConnections:
    """A connection pool and this thread's open transaction, if any.

    Usage::

        conns = PgConnections("postgresql://localhost/agentbase")
        conns.open(configure=lambda conn: None)
        with conns.write() as conn:
            conn.execute("INSERT ...")
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10, timeout_s: float = 30.0) -> None:
        self.url = url
        self.shown = redact_url(url)
        self.min_size = min_size
        self.max_size = max_size
        self.timeout_s = timeout_s
        self.pool: ConnectionPool | None = None
        self._local = threading.local()

    def connect(self) -> psycopg.Connection[Any]:
        """One connection outside the pool (migrations), failing fast with the server's reason."""
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, int(self.timeout_s)))
        except psycopg.Error as exc:
            raise StorageError(f"Cannot connect to {self.shown}: {str(exc).strip()} - check the URL, and that the "
                               "server runs and accepts this user", path=self.shown) from exc

    def open(self, configure: Callable[[psycopg.Connection[Any]], None]) -> None:
        self.pool = ConnectionPool(self.url, min_size=self.min_size, max_size=self.max_size,
                                   kwargs={"autocommit": True}, configure=configure, open=False,
                                   timeout=self.timeout_s, check=ConnectionPool.check_connection,
                                   name="agentbase")
        self.pool.open(wait=False)

    def close(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.close(timeout=5)
        self._local = threading.local()

    # -- transactions ----------------------------------------------------------------------------
    @property
    def current(self) -> psycopg.Connection[Any] | None:
        """This thread's connection while it is inside a transaction."""
        return getattr(self._local, "conn", None)

    @property
    def in_write(self) -> bool:
        """True inside this thread's write transaction: what it reads may still roll back."""
        return bool(getattr(self._local, "writing", False))

    @contextlib.contextmanager
    def _borrow(self) -> Iterator[psycopg.Connection[Any]]:
        if self.pool is None:
            raise StorageError(f"The store on {self.shown} is closed", path=self.shown)
        try:
            cm = self.pool.connection(timeout=self.timeout_s)
            conn = cm.__enter__()
        except PoolTimeout as exc:
            raise StorageError(f"No connection to {self.shown} within {self.timeout_s:.0f} s: the server is down "
                               f"or all {self.max_size} pooled connections are busy", path=self.shown) from exc
        except PoolClosed as exc:
            raise StorageError(f"The store on {self.shown} is closed", path=self.shown) from exc
        try:
            yield conn
        except BaseException as exc:
            with contextlib.suppress(Exception):
                cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        else:
            cm.__exit__(None, None, None)

    @contextlib.contextmanager
    def write(self) -> Iterator[psycopg.Connection[Any]]:
        """A write transaction; nested calls become savepoints, so a failing inner block rolls back only itself."""
        conn = self.current
        if conn is not None:
            with conn.transaction():
                yield conn
            return
        with self._borrow() as conn:
            self._local.conn, self._local.writing = conn, True
            try:
                with conn.transaction():
                    yield conn
            finally:
                self._local.conn, self._local.writing = None, False

    @contextlib.contextmanager
    def read(self) -> Iterator[psycopg.Connection[Any]]:
        """A consistent read snapshot, or the enclosing transaction."""
        conn = self.current
        if conn is not None:
            yield conn
            return
        with self._borrow() as conn:
            self._local.conn = conn
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                try:
                    yield conn
                finally:
                    with contextlib.suppress(Exception):
                        conn.execute("COMMIT")
            finally:
                self._local.conn = None
