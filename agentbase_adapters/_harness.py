"""What the agent-harness adapters (Hermes, Claude Agent SDK, ...) share besides fail-open: opening the
store they were given, and rendering kernel records for a model's tool result.

The fail-open machinery itself is ``agentbase_adapters._failopen``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from agentbase_kernel import AgentBase, Entry, Hit

__all__ = ["entry_row", "hit_row", "open_store", "positive_int", "rows", "seconds"]


def open_store(db: AgentBase | str | os.PathLike[str] | None, *, source: str,
               options: dict[str, Any]) -> tuple[AgentBase, bool]:
    """``(view, owned)``: an ``AgentBase`` view stamping ``source`` on what it writes, and whether this
    adapter opened it (and so closes it). Nothing is connected yet: the first call opens the file or
    the PostgreSQL pool, so a store that is down fails that call (fail-open), not construction.

    Raises:
        TypeError: ``options`` given together with an already open ``AgentBase``.
    """
    if isinstance(db, AgentBase):
        if options:
            raise TypeError(f"options {sorted(options)} only apply when the adapter opens the store itself")
        return db.view(source=source), False
    return AgentBase(db, **options).view(source=source), True


def hit_row(hit: Hit) -> dict[str, Any]:
    """A search hit as a model reads it in a tool result."""
    return {**entry_row(hit.entry), "score": round(float(hit.score), 4)}


def entry_row(entry: Entry) -> dict[str, Any]:
    """An entry as a model reads it in a tool result: id, text, category and when."""
    row: dict[str, Any] = {"id": entry.id, "memory": entry.l2_full}
    if entry.category:
        row["category"] = entry.category
    if entry.created_at is not None:
        row["created_at"] = entry.created_at.isoformat()
    return row


def rows(items: Iterable[Hit | Entry]) -> list[dict[str, Any]]:
    return [hit_row(i) if isinstance(i, Hit) else entry_row(i) for i in items]


def positive_int(value: Any, name: str, *, maximum: int | None = None) -> int:
    """``value`` as a positive int (a JSON number or numeric string from a model), else ``ValueError``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive integer, not {value!r}") from None
    if number != value and not (isinstance(value, str) and value.strip().isdigit()):
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    if number < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return min(number, maximum) if maximum else number


def seconds(value: Any, name: str) -> float:
    """``value`` as a number of seconds >= 0, else ``ValueError``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number of seconds >= 0, not {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of seconds >= 0, not {value!r}") from None
    if not number >= 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, not {value!r}")
    return number
