"""What every part of ``PostgresStore`` shares: error mapping with retry, row decoding, the filter -> SQL step."""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from ...errors import AgentBaseError, InvalidArgument, StorageError
from ...records import Entry
from ..base import EntryFilter, utcnow
from ..filters import parse_metadata_filter
from ..rows import entry_from_row, scope_key
from .connection import PgConnections, is_connection_lost, is_retryable
from .escape import escape_json, needs_json_escape, text_in, text_out
from .filters import compile_metadata_filter

__all__ = ["ENTRY_COLS", "PgCore", "check_filter_value", "fetch_one", "jsonb", "mapped", "scope_key", "storage_error",
           "text_in", "text_out", "text_out_required"]

F = TypeVar("F", bound=Callable[..., Any])

ENTRY_COLS = (
    "rid, id, context_type, category, l0_abstract, l1_overview, l2_full, tags, user_id, agent_id, "
    "project_id, session_id, role, actor, confidence, content_hash, metadata, event_dates, flags, "
    "created_at, updated_at, valid_from, invalid_at, expires_at, superseded_by, importance, archived_at, "
    "trust, source, written_by"
)

# a whole transaction that failed on a lost connection, a deadlock or a serialization conflict is
# run again this many times (the first retry at once, later ones after a short pause)
RETRIES = 2


def _dumps(value: Any) -> str:
    dumped = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    if needs_json_escape(dumped):  # a NUL (or U+0001/U+0002) somewhere: escaped (escape.py), dumped again
        dumped = json.dumps(escape_json(value), ensure_ascii=False, separators=(",", ":"), default=str,
                            allow_nan=False)
    return dumped


def jsonb(value: Any) -> Jsonb:
    """A parameter for a ``jsonb`` column, written as the SQLite store writes its JSON text (strings escaped
    as ``escape.py`` says, since ``jsonb`` cannot hold NUL)."""
    return Jsonb(value, dumps=_dumps)


def text_out_required(value: str | None, column: str) -> str:
    """A ``NOT NULL`` text column as read (``text_out``); NULL there means the schema is not this store's."""
    out = text_out(value)
    if out is None:
        raise StorageError(f"PostgreSQL returned NULL for the NOT NULL column {column}")
    return out


def fetch_one(cur: psycopg.Cursor[Any], what: str) -> Any:
    """The one row a statement returns (``SELECT count(*)``, a row this transaction has seen): a
    ``StorageError`` if none came back instead of a ``TypeError`` on ``None[0]``."""
    row = cur.fetchone()
    if row is None:
        raise StorageError(f"PostgreSQL returned no row for {what}")
    return row


def check_filter_value(name: str, value: Any) -> None:
    if not isinstance(value, (str, int, float, bytes)):
        raise InvalidArgument(f"The {name} filter takes a string, got {type(value).__name__}: {value!r:.80}")


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


# store calls of a bulk write that neither read nor delete what add_entities defers (entities.py)
_SEES_NO_DEFERRED = frozenset({"insert_entry", "add_entities", "put_vectors", "reinforce", "get_entry", "link_entries",
                               "supersede", "missing_vectors", "vectors_for", "list_entries", "live_subject_entries",
                               "attach_entry", "link_source", "link_session", "add_conflict", "append_search_context",
                               "insert_message", "ensure_session"})


def mapped(fn: F) -> F:
    """Translate driver errors into the kernel's; run a whole call again after a lost connection,
    a deadlock or a serialization conflict when it is not inside a caller's transaction (so the
    retry is the whole transaction, and nothing was half written)."""

    @functools.wraps(fn)
    def wrapper(self: PgCore, *args: Any, **kwargs: Any) -> Any:
        outermost = self.conns.current is None
        # a one-shot iterator (``zip(...)``, a generator) would be empty on the retry: read it once here
        args = tuple(list(a) if isinstance(a, Iterator) else a for a in args)
        kwargs = {k: list(v) if isinstance(v, Iterator) else v for k, v in kwargs.items()}
        attempt = 0
        while True:
            try:
                if not outermost and fn.__name__ not in _SEES_NO_DEFERRED and self.conns.has_pending:
                    self.conns.flush_pending()  # what this call reads or deletes includes the deferred rows
                return fn(self, *args, **kwargs)
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
                raise storage_error(self.conns.shown, exc) from exc

    return wrapper  # type: ignore[return-value]


class PgCore:
    """The state and helpers every part of the store shares; ``PostgresStore.__init__`` sets them."""

    conns: PgConnections

    @property
    def path(self) -> str:
        """The database URL without its password (what errors and ``info()`` show)."""
        return self.conns.shown

    def where_sql(self, flt: EntryFilter, alias: str = "e", now: datetime | None = None) -> tuple[str, list[Any]]:
        a = alias
        clauses: list[str] = []
        args: list[Any] = []
        equal = {col: getattr(flt.scope, col) for col in ("user_id", "agent_id", "project_id", "session_id")}
        equal.update(context_type=flt.context_type, category=flt.category, role=flt.role)
        for col, value in equal.items():
            if value is not None:
                check_filter_value(col, value)
                clauses.append(f"{a}.{col} = %s")
                args.append(value if isinstance(value, str) else str(value))
        if flt.tags:
            clauses.append(f"{a}.tags @> %s")
            args.append(jsonb(list(flt.tags)))
        now = now or utcnow()
        if flt.as_of is not None:
            clauses.append(f"coalesce({a}.valid_from, {a}.created_at) <= %s AND ({a}.invalid_at IS NULL OR {a}.invalid_at > %s)")
            args.extend([_aware(flt.as_of), _aware(flt.as_of)])
        elif not flt.include_invalid:
            clauses.append(f"{a}.invalid_at IS NULL")
        if not flt.include_expired:
            clauses.append(f"({a}.expires_at IS NULL OR {a}.expires_at > %s)")
            args.append(now)
        if flt.archived is not None:
            clauses.append(f"{a}.archived_at IS {'NOT ' if flt.archived else ''}NULL")
        if flt.since is not None:
            clauses.append(f"{a}.created_at >= %s")
            args.append(_aware(flt.since))
        if flt.until is not None:
            clauses.append(f"{a}.created_at <= %s")
            args.append(_aware(flt.until))
        if flt.date_window is not None:
            start, end = flt.date_window
            clauses.append(f"{a}.date_max >= %s AND {a}.date_min <= %s")
            args.extend([start.isoformat(), end.isoformat()])
        if flt.metadata:
            sql, margs = compile_metadata_filter(parse_metadata_filter(flt.metadata), f"{a}.metadata")
            clauses.append(sql)
            args.extend(margs)
        if flt.min_trust is not None:
            clauses.append(f"{a}.trust >= %s")
            args.append(flt.min_trust)
        if flt.text_contains is not None:  # the escaped needle occurs where the needle does (escape.py)
            clauses.append(f"strpos({a}.l2_full, %s) > 0")
            args.append(text_in(flt.text_contains))
        for scope in flt.exclude_scopes:  # a scope this reader may not see (lifecycle/permissions.py)
            fields = scope.as_dict()
            if not fields:
                clauses.append("FALSE")
                continue
            clauses.append("NOT (" + " AND ".join(f"{a}.{col} IS NOT DISTINCT FROM %s" for col in fields) + ")")
            args.extend(fields.values())
        return (" AND ".join(clauses) or "TRUE"), args

    def _entry(self, row: Any) -> Entry:
        return entry_from_row(row, text=text_out_required)

    def _history(self, conn: Any, entry_id: str, event: str, old: str | None, new: str | None,
                 actor: str | None, role: str | None, at: datetime | None = None) -> None:
        conn.execute(
            "INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, role) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (str(uuid.uuid4()), entry_id, event, text_in(old), text_in(new), at or utcnow(), actor, role))

    def _changes_seq(self, conn: Any) -> int:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM entry_changes").fetchone()[0])


def _aware(value: datetime) -> datetime:
    from datetime import timezone

    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
