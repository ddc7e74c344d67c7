"""What every part of the SQL core shares: the connections and the dialect, the call wrapper, the
filter -> SQL step, row decoding and history events."""

from __future__ import annotations

import functools
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from ...errors import InvalidArgument
from ...records import Entry
from ..base import EntryFilter
from ..rows import entry_from_row
from .dialect import Dialect
from .gate import CallGate

__all__ = ["ENTRY_COLS", "SqlCore", "Transactions", "check_filter_value", "mapped"]

F = TypeVar("F", bound=Callable[..., Any])

ENTRY_COLS = (
    "rid, id, context_type, category, l0_abstract, l1_overview, l2_full, tags, user_id, agent_id, "
    "project_id, session_id, role, actor, confidence, content_hash, metadata, event_dates, flags, "
    "created_at, updated_at, valid_from, invalid_at, expires_at, superseded_by, importance, archived_at, "
    "trust, source, written_by"
)


class Transactions(Protocol):
    """A backend's connections: per-thread transactions that nest (``store/sqlite/connection.py``,
    ``store/postgres/connection.py``). Each connection's ``execute`` takes ``?`` placeholders."""

    @property
    def in_write(self) -> bool:
        """True inside this thread's write transaction: what it reads may still roll back."""

    @property
    def current(self) -> Any | None:
        """This thread's connection while it is inside a transaction."""

    def read(self, *, snapshot: bool = False) -> AbstractContextManager[Any]: ...

    def write(self) -> AbstractContextManager[Any]: ...


def mapped(fn: F) -> F:
    """A store method run through its backend's ``_call``: driver errors become the kernel's, with
    the cause kept (and on PostgreSQL a call that lost its connection runs again). It passes the
    store's ``CallGate`` first: refused once ``close()`` has started, waited for by ``close()``."""

    @functools.wraps(fn)
    def wrapper(self: SqlCore, *args: Any, **kwargs: Any) -> Any:
        with self._gate.call():
            return self._call(fn, args, kwargs)

    return wrapper  # type: ignore[return-value]


def check_filter_value(name: str, value: Any) -> None:
    """A filter compares with one stored value: a list or an object here is a caller's mistake."""
    if not isinstance(value, (str, int, float, bytes)):
        raise InvalidArgument(f"The {name} filter takes a string, got {type(value).__name__}: {value!r:.80}")


class SqlCore(ABC):
    """The state and helpers every part of the SQL store shares; the backend's store sets them."""

    conns: Transactions
    dialect: Dialect
    #: where the data lives, as errors show it (a file path, a URL without its password)
    path: Any
    # each backend's search keeps statistics per process (``fts_cache``), under one lock, in a
    # cache that belongs to one ``entry_changes`` seq
    fts_cache: bool
    _cache_lock: threading.RLock
    _fts: dict[Any, Any]
    _fts_seq: int
    #: the calls running on other threads, which ``close()`` shuts out and waits for (``gate.py``)
    _gate: CallGate

    @abstractmethod
    def _call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``fn(self, *args, **kwargs)`` with the backend's error mapping (``mapped``)."""

    def _rows_written(self, rows: int) -> None:  # noqa: B027 - a hook; most backends count nothing
        """``rows`` entries were inserted (a backend that keeps planner statistics counts them)."""

    def where_sql(self, flt: EntryFilter, alias: str = "e", now: Any = None) -> tuple[str, list[Any]]:
        """``(condition, args)``: the rows of ``entries`` (as ``alias``) that ``flt`` lets through at ``now``
        (the dialect's current time unless given)."""
        d = self.dialect
        a = alias
        clauses: list[str] = []
        args: list[Any] = []
        equal = {col: getattr(flt.scope, col) for col in ("user_id", "agent_id", "project_id", "session_id")}
        equal.update(context_type=flt.context_type, category=flt.category, role=flt.role)
        for col, value in equal.items():
            if value is not None:
                check_filter_value(col, value)
                clauses.append(f"{a}.{col} = ?")
                args.append(d.key(value))
        if flt.tags:
            sql, targs = d.has_tags(a, flt.tags)
            clauses.append(sql)
            args.extend(targs)
        now = now or d.now()
        if flt.as_of is not None:
            at = d.time(flt.as_of)
            clauses.append(f"coalesce({a}.valid_from, {a}.created_at) <= ? AND ({a}.invalid_at IS NULL OR {a}.invalid_at > ?)")
            args.extend([at, at])
        elif not flt.include_invalid:
            clauses.append(f"{a}.invalid_at IS NULL")
        if not flt.include_expired:
            clauses.append(f"({a}.expires_at IS NULL OR {a}.expires_at > ?)")
            args.append(now)
        if flt.archived is not None:
            clauses.append(f"{a}.archived_at IS {'NOT ' if flt.archived else ''}NULL")
        if flt.since is not None:
            clauses.append(f"{a}.created_at >= ?")
            args.append(d.time(flt.since))
        if flt.until is not None:
            clauses.append(f"{a}.created_at <= ?")
            args.append(d.time(flt.until))
        if flt.date_window is not None:
            start, end = flt.date_window
            clauses.append(f"{a}.date_max >= ? AND {a}.date_min <= ?")
            args.extend([start.isoformat(), end.isoformat()])
        tree = flt.metadata_tree
        if tree is not None:
            sql, margs = d.metadata(tree, f"{a}.metadata")
            clauses.append(sql)
            args.extend(margs)
        if flt.min_trust is not None:
            clauses.append(f"{a}.trust >= ?")
            args.append(flt.min_trust)
        if flt.min_confidence is not None:
            clauses.append(f"{a}.confidence >= ?")
            args.append(flt.min_confidence)
        if flt.text_contains is not None:
            clauses.append(d.holds(f"{a}.l2_full"))
            args.append(d.text(flt.text_contains))
        if flt.sources is not None:
            if not flt.sources:
                clauses.append(f"NOT {d.true}")
            else:
                sql, sargs = d.any_of(f"{a}.source", sorted(flt.sources))
                clauses.append(sql)
                args.extend(sargs)
        if flt.exclude_ids:
            sql, xargs = d.none_of(f"{a}.id", sorted(flt.exclude_ids))
            clauses.append(sql)
            args.extend(xargs)
        for scope in flt.exclude_scopes:  # a scope this reader may not see (lifecycle/permissions.py)
            fields = scope.as_dict()
            if not fields:
                clauses.append(f"NOT {d.true}")
                continue
            clauses.append("NOT (" + " AND ".join(d.same(f"{a}.{col}") for col in fields) + ")")
            args.extend(fields.values())
        return (" AND ".join(clauses) or d.true), args

    def select_in(self, conn: Any, sql: str, column: str, values: Iterable[Any], *before: Any,
                  cast: str = "", size: int | None = None) -> list[Any]:
        """Rows of ``sql`` whose ``{in}`` is filled with "``column`` is one of the distinct ``values``"
        (in pieces the dialect can bind), after the parameters ``before``."""
        rows: list[Any] = []
        for part in self.dialect.chunks(list(dict.fromkeys(values)), size):
            cond, args = self.dialect.any_of(column, part, cast)
            rows.extend(conn.execute(sql.replace("{in}", cond), [*before, *args]).fetchall())
        return rows

    def _entry(self, row: Any) -> Entry:
        d = self.dialect
        return entry_from_row(row, data=d.data, when=d.when, text=d.required_text)

    def _history(self, conn: Any, entry_id: str, event: str, old: str | None, new: str | None,
                 actor: str | None, role: str | None, at: Any = None) -> None:
        """One ``entry_history`` event (``old``, ``new`` as the caller has them; ``at`` a time parameter)."""
        d = self.dialect
        conn.execute(
            "INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, role) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (str(uuid.uuid4()), entry_id, event, d.text(old), d.text(new), at or d.now(), actor, role))

    def _changes_seq(self, conn: Any) -> int:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM entry_changes").fetchone()[0])
