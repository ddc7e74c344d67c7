"""PostgreSQL's driver errors as the kernel's, and the calls that run again after a lost connection."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg

from ...errors import AgentBaseError, InvalidArgument, StorageError
from .connection import PgConnections, is_connection_lost, is_retryable

__all__ = ["RETRIES", "fetch_one", "run_mapped", "storage_error"]

# a whole transaction that failed on a lost connection, a deadlock or a serialization conflict is
# run again this many times (the first retry at once, later ones after a short pause)
RETRIES = 2

# store calls of a bulk write that neither read nor delete what add_entities defers (batched.py)
_SEES_NO_DEFERRED = frozenset({"insert_entry", "add_entities", "put_vectors", "reinforce", "get_entry", "link_entries",
                               "supersede", "missing_vectors", "vectors_for", "list_entries", "live_subject_entries",
                               "attach_entry", "link_source", "link_session", "add_conflict", "append_search_context",
                               "insert_message", "ensure_session"})


def fetch_one(cur: psycopg.Cursor[Any], what: str) -> Any:
    """The one row a statement returns (``SELECT count(*)``, a row this transaction has seen): a
    ``StorageError`` if none came back instead of a ``TypeError`` on ``None[0]``."""
    row = cur.fetchone()
    if row is None:
        raise StorageError(f"PostgreSQL returned no row for {what}")
    return row


def storage_error(shown: str, exc: BaseException) -> AgentBaseError:
    """The kernel's exception for a driver error: bad data is the caller's, the rest the server's."""
    if isinstance(exc, (psycopg.errors.IntegrityError, psycopg.errors.DataError)):
        return InvalidArgument(f"Rejected by the database: {str(exc).strip()}")
    if isinstance(exc, psycopg.errors.ProgrammingError) and getattr(exc, "sqlstate", None) == "22P05":
        return InvalidArgument(f"Rejected by the database: {str(exc).strip()}")
    if is_connection_lost(exc):
        return StorageError(f"Lost the connection to {shown}: {str(exc).strip()} - nothing of the interrupted "
                            "write was kept; retry when the server is back", path=shown)
    return StorageError(f"PostgreSQL error on {shown}: {str(exc).strip()}", path=shown)


def run_mapped(conns: PgConnections, fn: Callable[..., Any], store: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
    """``fn(store, *args, **kwargs)`` with driver errors translated into the kernel's; run again after
    a lost connection, a deadlock or a serialization conflict when it is not inside a caller's
    transaction (so the retry is the whole transaction, and nothing was half written)."""
    outermost = conns.current is None
    # a one-shot iterator (``zip(...)``, a generator) would be empty on the retry: read it once here
    args = tuple(list(a) if isinstance(a, Iterator) else a for a in args)
    kwargs = {k: list(v) if isinstance(v, Iterator) else v for k, v in kwargs.items()}
    attempt = 0
    while True:
        try:
            if not outermost and fn.__name__ not in _SEES_NO_DEFERRED and conns.has_pending:
                conns.flush_pending()  # what this call reads or deletes includes the deferred rows
            return fn(store, *args, **kwargs)
        except UnicodeEncodeError as exc:
            raise InvalidArgument(f"{exc.object[:80]!r} contains lone surrogate code points and is not valid "
                                  "Unicode - decode it with errors='replace' first") from exc
        except ValueError as exc:
            if isinstance(exc, AgentBaseError):
                raise
            if "NUL" in str(exc) or "0x00" in str(exc):
                raise InvalidArgument(f"PostgreSQL text cannot hold NUL characters: {exc}") from exc
            raise
        except (psycopg.Error, OverflowError) as exc:
            if outermost and attempt < RETRIES and is_retryable(exc):
                attempt += 1
                time.sleep(0 if attempt == 1 else 0.05 * attempt)
                continue
            if isinstance(exc, OverflowError):
                raise InvalidArgument(f"A number is too large for the database ({exc}) - pass it as a string") from exc
            raise storage_error(conns.shown, exc) from exc
