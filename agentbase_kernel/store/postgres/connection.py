"""Connections to one PostgreSQL database: a small pool, per-thread transactions that nest, and
which driver errors mean "the connection is gone" (and may be retried).

A thread that opens a transaction keeps its connection until the outermost block ends, so every
store call inside it (``Store.transaction()``, or one method calling another) runs on that
connection; nested blocks are savepoints. Reads outside a transaction borrow a connection for one
REPEATABLE READ snapshot.

The pool is ours rather than psycopg-pool's: when the server drops connections or restarts,
psycopg-pool reconnects in the background with an exponential backoff, and a caller could wait its
whole timeout for a connection the server would have given at once (seen in
tests/postgres/test_concurrency_faults.py). Here a caller that finds no usable idle connection
connects itself, so it either gets one now or our error saying why.
"""

from __future__ import annotations

import contextlib
import functools
import re
import select
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import psycopg
from psycopg.abc import Params, Query
from psycopg.pq import TransactionStatus

from ...errors import StorageError
from .url import redact_url

__all__ = ["ConnectionPool", "PgConnection", "PgConnections", "format_placeholders", "is_connection_lost", "is_retryable"]

# SQLSTATEs that mean the session is gone: class 08 (connection exception) and the server
# shutting down or starting up
_LOST = ("57P01", "57P02", "57P03")
# a whole transaction may be run again after these
_CONFLICT = ("40001", "40P01")


# a quoted string or identifier (passed over), or a character psycopg's query syntax gives a meaning
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[?%]")


@functools.lru_cache(maxsize=4096)
def format_placeholders(query: str) -> str:
    """``query`` with sqlite3's placeholders in psycopg's style: each ``?`` outside quotes becomes
    ``%s``, each ``%`` ``%%``. (So no statement here uses PostgreSQL's ``?`` jsonb operators.)"""
    def convert(match: re.Match[str]) -> str:
        token = match.group(0)
        return "%s" if token == "?" else token.replace("%", "%%")

    return _TOKENS.sub(convert, query)


class QmarkCursor(psycopg.Cursor[Any]):
    """A cursor whose statements take ``?`` placeholders, as sqlite3's do: the SQL core
    (``store/sql/``) writes each statement once for both backends."""

    def execute(self, query: Query, params: Params | None = None, *, prepare: bool | None = None,
                binary: bool | None = None) -> QmarkCursor:
        if params is not None and isinstance(query, str):
            query = format_placeholders(query)
        super().execute(cast(Any, query), params, prepare=prepare, binary=binary)
        return self

    def executemany(self, query: Query, params_seq: Iterable[Params], *, returning: bool = False) -> None:
        super().executemany(format_placeholders(query) if isinstance(query, str) else query, params_seq,
                            returning=returning)


class PgConnection(psycopg.Connection[Any]):
    """A connection whose statements take ``?`` placeholders (``QmarkCursor``), with sqlite3's
    ``executemany`` (pipelined: one round trip for the batch)."""

    def executemany(self, query: str, params_seq: Iterable[Params]) -> None:
        with self.cursor() as cur:
            cur.executemany(query, params_seq)


def _connect(url: str, timeout_s: float) -> PgConnection:
    return PgConnection.connect(url, autocommit=True, connect_timeout=max(1, int(timeout_s)), cursor_factory=QmarkCursor)


def is_connection_lost(exc: BaseException) -> bool:
    if isinstance(exc, psycopg.OperationalError):
        state = exc.sqlstate
        return state is None or state.startswith("08") or state in _LOST
    if isinstance(exc, psycopg.InterfaceError):
        return "closed" in str(exc).lower()
    return False


def is_retryable(exc: BaseException) -> bool:
    """A transaction that failed this way wrote nothing and may run again as a whole."""
    state = getattr(exc, "sqlstate", None)
    return is_connection_lost(exc) or state in _CONFLICT


class ConnectionPool:
    """Up to ``max_size`` autocommit connections, reused last-in first-out."""

    def __init__(self, url: str, *, max_size: int, timeout_s: float, shown: str,
                 configure: Callable[[PgConnection], None]) -> None:
        self.url = url
        self.max_size = max_size
        self.timeout_s = timeout_s
        self.shown = shown
        self.configure = configure
        self._idle: list[PgConnection] = []
        self._count = 0  # idle and lent
        self._cond = threading.Condition()
        self._closed = False

    def get(self) -> PgConnection:
        deadline = time.monotonic() + self.timeout_s
        with self._cond:
            while True:
                if self._closed:
                    raise StorageError(f"The store on {self.shown} is closed", path=self.shown)
                while self._idle:
                    conn = self._idle.pop()
                    if _usable(conn):
                        return conn
                    self._count -= 1
                    with contextlib.suppress(Exception):
                        conn.close()
                if self._count < self.max_size:
                    self._count += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise StorageError(f"All {self.max_size} connections to {self.shown} stayed busy for "
                                       f"{self.timeout_s:.0f} s - raise AGENTBASE_STORAGE__BUSY_TIMEOUT_MS or use "
                                       "fewer threads", path=self.shown)
                self._cond.wait(remaining)
        try:
            conn = _connect(self.url, max(2.0, self.timeout_s))
            self.configure(conn)
            return conn
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def put(self, conn: PgConnection) -> None:
        keep = not self._closed and _usable(conn)
        with self._cond:
            if keep and not self._closed:
                self._idle.append(conn)
            else:
                self._count -= 1
            self._cond.notify()
        if not keep:
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for conn in idle:
            with contextlib.suppress(Exception):
                conn.close()


def _usable(conn: PgConnection) -> bool:
    """Open, outside a transaction, and not told by the server that its session ended (a server
    that terminates an idle session sends an error and closes the socket: it turns readable)."""
    if conn.closed or conn.broken or conn.info.transaction_status != TransactionStatus.IDLE:
        return False
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


class PgConnections:
    """A connection pool and this thread's open transaction, if any.

    Usage::

        conns = PgConnections("postgresql://localhost/agentbase")
        conns.open(configure=lambda conn: None)
        with conns.write() as conn:
            conn.execute("INSERT ...")
    """

    def __init__(self, url: str, *, max_size: int = 10, timeout_s: float = 30.0) -> None:
        self.url = url
        self.shown = redact_url(url)
        self.max_size = max_size
        self.timeout_s = timeout_s
        self.pool: ConnectionPool | None = None
        self._local = threading.local()

    def connect(self) -> PgConnection:
        """One connection outside the pool (migrations), failing fast with the server's reason."""
        try:
            return _connect(self.url, self.timeout_s)
        except psycopg.Error as exc:
            raise StorageError(f"Cannot connect to {self.shown}: {str(exc).strip()} - check the URL, and that the "
                               "server runs and accepts this user", path=self.shown) from exc

    def open(self, configure: Callable[[PgConnection], None]) -> None:
        self.pool = ConnectionPool(self.url, max_size=self.max_size, timeout_s=self.timeout_s, shown=self.shown,
                                   configure=configure)

    def close(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.close()
        self._local = threading.local()

    # -- transactions ----------------------------------------------------------------------------
    @property
    def current(self) -> PgConnection | None:
        """This thread's connection while it is inside a transaction."""
        return getattr(self._local, "conn", None)

    @property
    def deferring(self) -> bool:
        """True inside this thread's write transaction opened by an earlier call: a write whose result
        nobody reads (say entities of an entry) may wait for ``flush_pending`` and go with others."""
        return self.in_write and getattr(self._local, "pending", None) is not None

    def defer(self, name: str, flush: Callable[[PgConnection, list[Any]], None]) -> list[Any]:
        """The list of ``name``'s deferred items in this thread's transaction, run through
        ``flush(conn, items)`` before it commits (or when ``flush_pending`` is called sooner)."""
        pending: dict[str, tuple[Callable[..., None], list[Any]]] = self._local.pending
        return pending.setdefault(name, (flush, []))[1]

    @property
    def has_pending(self) -> bool:
        return bool(getattr(self._local, "pending", None))

    def flush_pending(self) -> None:
        """Write what this thread's transaction deferred, on its connection (a no-op when nothing is)."""
        pending = getattr(self._local, "pending", None)
        conn = self.current
        while pending and conn is not None:
            _name, (flush, items) = pending.popitem()
            flush(conn, items)

    @property
    def in_write(self) -> bool:
        """True inside this thread's write transaction: what it reads may still roll back."""
        return bool(getattr(self._local, "writing", False))

    @contextlib.contextmanager
    def _borrow(self) -> Iterator[PgConnection]:
        pool = self.pool
        if pool is None:
            raise StorageError(f"The store on {self.shown} is closed", path=self.shown)
        conn = pool.get()
        try:
            yield conn
        finally:
            pool.put(conn)

    @contextlib.contextmanager
    def write(self, *, savepoint: bool = False) -> Iterator[PgConnection]:
        """A write transaction, or a part of this thread's open one.

        A part is a savepoint only when asked (``Store.transaction()`` nested in another): each costs
        two round trips, and a store method inside a transaction either completes or fails the
        whole transaction anyway (PostgreSQL aborts it on any error), so nothing is half written.
        """
        conn = self.current
        if conn is not None and self.in_write:
            if savepoint:  # what it defers is written inside it, so that its rollback takes it too
                self.flush_pending()
                try:
                    with conn.transaction():
                        yield conn
                        self.flush_pending()
                except BaseException:
                    if getattr(self._local, "pending", None):
                        self._local.pending = {}
                    raise
            else:
                yield conn
            return
        if conn is not None:  # a write inside a plain read: a transaction on the read's connection
            self._local.writing = True
            try:
                with conn.transaction():
                    yield conn
            finally:
                self._local.writing = False
            return
        with self._borrow() as conn:
            self._local.conn, self._local.writing, self._local.pending = conn, True, {}
            try:
                with conn.transaction():
                    yield conn
                    self.flush_pending()  # deferred writes go in before the commit, or roll back with it
            finally:
                self._local.conn, self._local.writing, self._local.pending = None, False, None

    @contextlib.contextmanager
    def read(self, *, snapshot: bool = False) -> Iterator[PgConnection]:
        """A connection for reads (each statement sees the latest commits), or with ``snapshot`` one
        REPEATABLE READ transaction whose statements all see the same data (export); inside this
        thread's transaction, that transaction."""
        conn = self.current
        if conn is not None:
            yield conn
            return
        with self._borrow() as conn:
            self._local.conn = conn
            try:
                if not snapshot:
                    yield conn
                    return
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                try:
                    yield conn
                finally:
                    with contextlib.suppress(Exception):
                        conn.execute("COMMIT")
            finally:
                self._local.conn = None
