"""How PostgreSQL spells what the SQL core asks: ``timestamptz`` (aware datetimes), ``jsonb``
(containment with ``@>``), ``boolean``, one array per ``= ANY(?)``, and texts escaped so they
never hold NUL (``escape.py``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from psycopg.types.json import Jsonb

from ...errors import StorageError
from ..base import iso, parse_iso, utcnow
from ..filters import MetadataFilter
from ..sql.dialect import Dialect
from .escape import escape_json, needs_json_escape, text_in, text_out
from .filters import compile_metadata_filter

__all__ = ["PostgresDialect", "aware", "jsonb"]


def aware(value: datetime) -> datetime:
    """``value`` with UTC as its zone when it has none."""
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


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


def _required_text(value: str | None, column: str) -> str:
    """A ``NOT NULL`` text column as read (``text_out``); NULL there means the schema is not this store's."""
    out = text_out(value)
    if out is None:
        raise StorageError(f"PostgreSQL returned NULL for the NOT NULL column {column}")
    return out


class PostgresDialect(Dialect):
    """The SQL core's engine-specific pieces on PostgreSQL."""

    for_update = " FOR UPDATE"
    json = staticmethod(jsonb)
    text = staticmethod(text_in)
    text_out = staticmethod(text_out)
    required_text = staticmethod(_required_text)
    now = staticmethod(utcnow)

    def time(self, value: datetime | str | None) -> datetime | None:
        if value is None:
            return None
        return aware(value) if isinstance(value, datetime) else aware(parse_iso(value))  # type: ignore[arg-type]

    def key(self, value: Any) -> str:
        return value if isinstance(value, str) else str(value)

    def iso(self, value: Any) -> str | None:
        return iso(value) if isinstance(value, datetime) else value

    def any_of(self, column: str, values: Sequence[Any], cast: str = "") -> tuple[str, list[Any]]:
        return f"{column} = ANY(?{f'::{cast}[]' if cast else ''})", [list(values)]

    def none_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"NOT ({column} = ANY(?))", [list(values)]

    def has_tags(self, alias: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        return f"{alias}.tags @> ?", [jsonb(list(tags))]

    def same(self, column: str) -> str:
        return f"{column} IS NOT DISTINCT FROM ?"

    def binary_order(self, column: str) -> str:
        return f'{column} COLLATE "C"'

    def json_text(self, column: str, key: str) -> str:
        return f"({column} ->> '{key}')"

    def metadata(self, tree: MetadataFilter, column: str) -> tuple[str, list[Any]]:
        return compile_metadata_filter(tree, column)
