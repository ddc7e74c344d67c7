"""What commands print: JSON for ``--json``, short aligned text for people.

JSON is the records' own fields (``Entry``, ``Session``, ``Message``, ...), datetimes as ISO 8601,
so a script sees what the Python API returns.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import Enum
from typing import Any

import click

from agentbase_kernel import Entry, Hit, Session

__all__ = ["echo_json", "entry_lines", "jsonable", "one_line", "table"]


def jsonable(value: Any) -> Any:
    """``value`` with dataclasses, enums and datetimes turned into JSON types."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or (isinstance(value, Sequence) and not isinstance(value, (str, bytes))):
        return [jsonable(v) for v in value]
    return value


def echo_json(value: Any) -> None:
    click.echo(json.dumps(jsonable(value), ensure_ascii=False, indent=2, default=str))


def one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "-"


def _scope(scope: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in scope.as_dict().items()) or "(global)"


def table(rows: Iterable[Sequence[Any]]) -> None:
    """Tab-separated rows: aligned enough for a terminal, and ``cut -f`` friendly."""
    for row in rows:
        click.echo("\t".join("-" if cell is None else str(cell) for cell in row))


def entry_lines(entry: Entry) -> list[tuple[str, Any]]:
    """The fields of an entry worth reading, in the order people look for them."""
    lines: list[tuple[str, Any]] = [
        ("id", entry.id), ("text", entry.l2_full), ("type", entry.context_type.value),
        ("category", entry.category), ("tags", ", ".join(entry.tags) or None), ("scope", _scope(entry.scope)),
        ("role", entry.role), ("actor", entry.actor), ("confidence", entry.confidence),
        ("created_at", _when(entry.created_at)), ("updated_at", _when(entry.updated_at)),
    ]
    optional = [("metadata", json.dumps(entry.metadata, ensure_ascii=False) if entry.metadata else None),
                ("expires_at", entry.expires_at and _when(entry.expires_at)),
                ("invalid_at", entry.invalid_at and _when(entry.invalid_at)),
                ("superseded_by", entry.superseded_by), ("event_dates", ", ".join(entry.event_dates) or None)]
    return lines + [(k, v) for k, v in optional if v]


def echo_fields(lines: list[tuple[str, Any]]) -> None:
    width = max(len(k) for k, _ in lines) + 2
    for key, value in lines:
        click.echo(f"{key + ':':<{width}}{'-' if value is None else value}")


def hit_row(hit: Hit) -> tuple[str, str, str]:
    return (f"{hit.score:.4f}", hit.id, one_line(hit.content))


def session_row(session: Session) -> tuple[str, str, str]:
    return (session.id, _scope(session.scope), _when(session.created_at))
