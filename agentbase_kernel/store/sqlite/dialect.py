"""How SQLite spells what the SQL core asks: times as fixed-width ISO text, JSON as compact text
(read back with ``json.loads``), booleans as 0 / 1, ``IN (?, ...)`` lists of at most 500 values."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ..base import iso, parse_iso, utcnow
from ..filters import MetadataFilter
from ..sql.dialect import Dialect
from .filters import compile_metadata_filter

__all__ = ["SqliteDialect", "dumps", "loads"]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


# what json.loads runs, without its two layers of Python around it (typeshed does not list the attribute)
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def loads(value: Any) -> Any:
    """``json.loads``, with the empty list and object (most tags, flags and dates) read for free and
    the compact list or object ``dumps`` writes handed straight to the C scanner (a search decodes
    a few hundred of them); anything else, or anything the scanner stops short on, goes through
    ``json.loads`` itself (same values, same errors)."""
    if value == "[]":
        return []
    if value == "{}":
        return {}
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            obj, end = _scan(value, 0)
        except (StopIteration, ValueError):
            return json.loads(value)
        if end == len(value):
            return obj
    return json.loads(value)


class SqliteDialect(Dialect):
    """The SQL core's engine-specific pieces on SQLite."""

    true = "1"
    row_order = "rowid"
    # chunks of ``IN`` lists: older SQLite builds bind at most 999 parameters per statement
    max_values = 500
    json = staticmethod(dumps)
    data = staticmethod(loads)
    when = staticmethod(parse_iso)

    def time(self, value: datetime | str | None) -> str | None:
        return value if value is None or isinstance(value, str) else iso(value)

    def now(self) -> str:
        return iso(utcnow())

    def flag(self, value: bool) -> int:
        return int(value)

    def iso(self, value: Any) -> str | None:
        return value  # type: ignore[no-any-return]  # stored as that text

    def any_of(self, column: str, values: Sequence[Any], cast: str = "") -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(values))})", list(values)

    def none_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} NOT IN (SELECT value FROM json_each(?))", [json.dumps(list(values))]

    def has_tags(self, alias: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        return " AND ".join([f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)"] * len(tags)), list(tags)

    def same(self, column: str) -> str:
        return f"{column} IS ?"

    def page(self, limit: int | None, offset: int) -> tuple[str, list[Any]]:
        if limit is None and offset:
            return " LIMIT -1 OFFSET ?", [offset]
        return super().page(limit, offset)

    def holds(self, column: str) -> str:
        return f"instr({column}, ?) > 0"

    def greatest(self, a: str, b: str) -> str:
        # SQLite's two-argument max() is NULL when either is
        return f"max(coalesce({a}, ''), {b})"

    def json_text(self, column: str, key: str) -> str:
        return f"({column} ->> '$.{key}')"

    def metadata(self, tree: MetadataFilter, column: str) -> tuple[str, list[Any]]:
        return compile_metadata_filter(tree, column)
