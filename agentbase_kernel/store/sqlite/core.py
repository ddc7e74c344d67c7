"""What every part of ``SqliteStore`` shares: error mapping, row decoding, the filter -> SQL step."""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from ...errors import InvalidArgument, StorageError
from ...records import Entry
from ..base import EntryFilter, iso, parse_iso, utcnow
from ..filters import parse_metadata_filter
from ..rows import entry_from_row, scope_key
from .connection import Connections, is_locked_error, locked_error
from .filters import compile_metadata_filter

__all__ = ["ENTRY_COLS", "SqliteCore", "check_filter_value", "dumps", "loads", "mapped", "scope_key", "select_in"]

F = TypeVar("F", bound=Callable[..., Any])

ENTRY_COLS = (
    "rid, id, context_type, category, l0_abstract, l1_overview, l2_full, tags, user_id, agent_id, "
    "project_id, session_id, role, actor, confidence, content_hash, metadata, event_dates, flags, "
    "created_at, updated_at, valid_from, invalid_at, expires_at, superseded_by, importance, archived_at, "
    "trust, source, written_by"
)


def mapped(fn: F) -> F:
    """Translate the sqlite errors a caller can act on; keep the cause."""

    @functools.wraps(fn)
    def wrapper(self: SqliteCore, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except UnicodeEncodeError as exc:  # a lone surrogate in any bound string (issue 9)
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

    return wrapper  # type: ignore[return-value]


def select_in(conn: Any, sql: str, values: Iterable[Any], chunk: int = 500) -> list[Any]:
    """Rows of ``sql`` whose ``{marks}`` placeholder is filled with each chunk of distinct values."""
    distinct = list(dict.fromkeys(values))
    rows: list[Any] = []
    for i in range(0, len(distinct), chunk):
        part = distinct[i : i + chunk]
        rows.extend(conn.execute(sql.format(marks=",".join("?" * len(part))), part))
    return rows


def loads(text: str) -> Any:
    """``json.loads``, with the empty list and object (most tags, flags and dates) read for free."""
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


def check_filter_value(name: str, value: Any) -> None:
    """A filter compares with one stored value: a list or an object here is a caller's mistake."""
    if not isinstance(value, (str, int, float, bytes)):
        raise InvalidArgument(f"The {name} filter takes a string, got {type(value).__name__}: {value!r:.80}")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class SqliteCore:
    """The state and helpers every part of the store shares; ``SqliteStore.__init__`` sets them."""

    path: Path
    conns: Connections
    _module: ModuleType

    def where_sql(self, flt: EntryFilter, alias: str = "e", now: str | None = None) -> tuple[str, list[Any]]:
        a = alias
        clauses: list[str] = []
        args: list[Any] = []
        equal = {col: getattr(flt.scope, col) for col in ("user_id", "agent_id", "project_id", "session_id")}
        equal.update(context_type=flt.context_type, category=flt.category, role=flt.role)
        for col, value in equal.items():
            if value is not None:
                check_filter_value(col, value)
                clauses.append(f"{a}.{col} = ?")
                args.append(value)
        for tag in flt.tags or ():
            clauses.append(f"EXISTS (SELECT 1 FROM json_each({a}.tags) WHERE value = ?)")
            args.append(tag)
        now = now or iso(utcnow())
        if flt.as_of is not None:
            at = iso(flt.as_of)
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
            args.append(iso(flt.since))
        if flt.until is not None:
            clauses.append(f"{a}.created_at <= ?")
            args.append(iso(flt.until))
        if flt.date_window is not None:
            start, end = flt.date_window
            clauses.append(f"{a}.date_max >= ? AND {a}.date_min <= ?")
            args.extend([start.isoformat(), end.isoformat()])
        if flt.metadata:
            sql, margs = compile_metadata_filter(parse_metadata_filter(flt.metadata), f"{a}.metadata")
            clauses.append(sql)
            args.extend(margs)
        if flt.min_trust is not None:
            clauses.append(f"{a}.trust >= ?")
            args.append(flt.min_trust)
        if flt.text_contains is not None:
            clauses.append(f"instr({a}.l2_full, ?) > 0")
            args.append(flt.text_contains)
        for scope in flt.exclude_scopes:  # a scope this reader may not see (lifecycle/permissions.py)
            fields = scope.as_dict()
            clauses.append("NOT (" + " AND ".join(f"{a}.{col} IS ?" for col in fields) + ")")
            args.extend(fields.values())
        return (" AND ".join(clauses) or "1"), args

    def _entry(self, row: Any) -> Entry:
        return entry_from_row(row, data=loads, when=parse_iso)

    def _history(self, conn: Any, entry_id: str, event: str, old: str | None, new: str | None,
                 actor: str | None, role: str | None, at: str | None = None) -> None:
        conn.execute(
            "INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, role) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (str(uuid.uuid4()), entry_id, event, old, new, at or iso(utcnow()), actor, role))

    def _changes_seq(self, conn: Any) -> int:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM entry_changes").fetchone()[0])
