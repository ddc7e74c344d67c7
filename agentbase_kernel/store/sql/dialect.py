"""``Dialect``: how one SQL engine spells what the SQL core (``store/sql/``) asks of it.

The core writes every statement with ``?`` placeholders (a driver that wants another style
converts them: ``store/postgres/connection.py``) and asks the dialect for the rest:

* values in and out: JSON, times, booleans, texts (PostgreSQL cannot store NUL) as the columns hold them;
* SQL pieces that differ: the literal true, "equal to any of these values", JSON containment of tags,
  NULL-safe equality, paging, row locks, the larger of two values, byte-order sorting, one JSON field
  as text, and the metadata filter language compiled for the engine.

Each backend has one: ``store/sqlite/dialect.py``, ``store/postgres/dialect.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from ..filters import MetadataFilter

__all__ = ["Dialect"]


class Dialect(ABC):
    """The engine-specific pieces of the SQL core; subclasses fill in what their engine spells differently.

    Usage::

        where = f"{dialect.same('e.user_id')} AND {dialect.true}"
        sql, args = dialect.any_of("id", ["a", "b"])
    """

    #: the always-true condition
    true = "TRUE"
    #: the insertion-ordered row number of ``sessions``, ``session_entries``, ``entry_sources``,
    #: ``entry_links`` and ``retrieval_traces`` (``entries`` and ``messages`` have ``rid`` everywhere)
    row_order = "rid"
    #: appended to a SELECT whose rows the transaction goes on to change
    for_update = ""
    #: how many values one ``any_of`` binds at most (``None``: any number, as one array)
    max_values: int | None = None

    # -- values in -------------------------------------------------------------------------------
    @abstractmethod
    def json(self, value: Any) -> Any:
        """A parameter for a JSON column."""

    @abstractmethod
    def time(self, value: datetime | str | None) -> Any:
        """A parameter for a time column, from a ``datetime`` or an ISO 8601 string (``None`` stays)."""

    @abstractmethod
    def now(self) -> Any:
        """The current time as a time parameter (what ``where`` compares expiry with)."""

    def text(self, value: str | None) -> Any:
        """A parameter for a free text column (entry texts, message contents, history values)."""
        return value

    def key(self, value: Any) -> Any:
        """A parameter compared with a scope or label column (``check_filter_value`` let it through)."""
        return value

    def flag(self, value: bool) -> Any:
        """A parameter for a boolean column."""
        return value

    # -- values out ------------------------------------------------------------------------------
    def data(self, value: Any) -> Any:
        """A JSON column as read, as Python data."""
        return value

    def when(self, value: Any) -> datetime | None:
        """A time column as read, as a ``datetime``."""
        return value  # type: ignore[no-any-return]

    @abstractmethod
    def iso(self, value: Any) -> str | None:
        """A time column as read, as fixed-width ISO text (``store.base.iso``): what exports hold."""

    def text_out(self, value: Any) -> str | None:
        """A free text column as read."""
        return value  # type: ignore[no-any-return]

    def required_text(self, value: Any, column: str) -> str:
        """A ``NOT NULL`` free text column as read (``column`` names it in an error)."""
        return value  # type: ignore[no-any-return]

    # -- SQL pieces ------------------------------------------------------------------------------
    @abstractmethod
    def any_of(self, column: str, values: Sequence[Any], cast: str = "") -> tuple[str, list[Any]]:
        """``column`` equal to one of ``values`` (at most ``max_values`` of them); ``cast`` names the
        values' SQL type where the engine needs it (``"bigint"``)."""

    @abstractmethod
    def none_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` equal to none of ``values``, however many (bound as one parameter)."""

    def chunks(self, values: Sequence[Any], size: int | None = None) -> Iterator[list[Any]]:
        """``values`` in pieces ``any_of`` can bind: all at once where the engine takes an array, else
        ``size`` (or ``max_values``) at a time; none when empty."""
        if not values:
            return
        step = len(values) if self.max_values is None else (size or self.max_values)
        for i in range(0, len(values), step):
            yield list(values[i : i + step])

    @abstractmethod
    def has_tags(self, alias: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        """Row ``alias`` has every one of ``tags`` in its ``tags`` JSON array."""

    @abstractmethod
    def same(self, column: str) -> str:
        """``column`` equal to one parameter, NULL equal to NULL."""

    def page(self, limit: int | None, offset: int) -> tuple[str, list[Any]]:
        """``LIMIT`` / ``OFFSET`` for a ``limit`` (``None``: all rows) and an ``offset``."""
        sql, args = "", []
        if limit is not None:
            sql, args = " LIMIT ?", [limit]
        if offset:
            sql, args = sql + " OFFSET ?", [*args, offset]
        return sql, args

    def holds(self, column: str) -> str:
        """The text in ``column`` holds one parameter as an exact (case-sensitive) substring."""
        return f"strpos({column}, ?) > 0"

    def greatest(self, a: str, b: str) -> str:
        """The larger of two values, either of which may be NULL."""
        return f"greatest({a}, {b})"

    def binary_order(self, column: str) -> str:
        """``column`` for ``ORDER BY`` in code point order."""
        return column

    @abstractmethod
    def json_text(self, column: str, key: str) -> str:
        """The string at top-level ``key`` of the JSON object in ``column`` (``key`` is a literal name)."""

    @abstractmethod
    def metadata(self, tree: MetadataFilter, column: str) -> tuple[str, list[Any]]:
        """The metadata filter ``tree`` (``store/filters.py``) as a condition on the JSON in ``column``."""
