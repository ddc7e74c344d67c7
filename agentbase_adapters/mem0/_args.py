"""Mem0's call arguments -> the kernel's: scope ids, dates, messages, ``top_k`` and both calling styles.

Pure functions; a bad argument raises ``InvalidArgument`` (a ``ValueError``, as Mem0 raises) or
Mem0's ``ValidationError`` where Mem0 raises that.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

from agentbase_kernel import InvalidArgument

from ._errors import validation_error
from ._filters import check_filters, field_arguments

logger = logging.getLogger("agentbase_adapters.mem0")

ENTITY_KEYS = ("user_id", "agent_id", "run_id")
IDENTITY_KEYS = frozenset({*ENTITY_KEYS, "actor_id"})

def entity_id(value: Any, name: str) -> str | None:
    # Mem0 coerces ints to str, trims, and refuses blank ids and ids with inner whitespace.
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        raise InvalidArgument(f"Invalid {name}: cannot be empty or whitespace-only - pass a real id")
    if any(ch.isspace() for ch in text):
        raise InvalidArgument(f"Invalid {name} {text!r}: cannot contain whitespace - pass an id without spaces")
    return text


def scope_of(user_id: Any, agent_id: Any, run_id: Any) -> dict[str, Any]:
    ids = {
        "user_id": entity_id(user_id, "user_id"),
        "agent_id": entity_id(agent_id, "agent_id"),
        "session_id": entity_id(run_id, "run_id"),
    }
    return {key: value for key, value in ids.items() if value is not None}


def require_scope(scope: dict[str, Any], provided: dict[str, Any]) -> None:
    if not scope:
        raise validation_error(
            "One of user_id, agent_id or run_id is required to scope a memory",
            "VALIDATION_001",
            details={"provided_ids": provided},
            suggestion="Pass user_id=..., agent_id=... or run_id=...",
        )


def strip_identity(metadata: Mapping[str, Any] | None, current: Mapping[str, Any], where: str) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidArgument(f"metadata must be a dict, not {type(metadata).__name__}")
    clean: dict[str, Any] = {}
    for key, value in metadata.items():
        if key not in IDENTITY_KEYS:
            clean[key] = value
        elif value != current.get(key):
            logger.warning("%s: ignored metadata[%r] - the scope is set by user_id/agent_id/run_id only", where, key)
    return clean


def expiration(value: Any) -> date | None:
    if value is None:
        return None
    day: date | None = None
    if isinstance(value, datetime):
        day = value.date()
    elif isinstance(value, date):
        day = value
    elif isinstance(value, str):
        try:
            day = date.fromisoformat(value)
        except ValueError as exc:
            raise InvalidArgument(f"expiration_date {_shown(value)} is not a date - use YYYY-MM-DD") from exc
    else:
        raise InvalidArgument(f"expiration_date must be a YYYY-MM-DD string, a date or a datetime, not {type(value).__name__}")
    if not _EARLIEST.date() <= day < _LATEST.date():
        raise InvalidArgument(f"expiration_date {_shown(value)} is outside the years 1-9999 a stored date can hold")
    return day


def expires_at(day: date | None) -> datetime | None:
    # Mem0 hides a memory once its expiration date is in the past: it expires at the end of the day.
    if day is None:
        return None
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=timezone.utc)


def timestamp(value: Any, name: str = "timestamp") -> datetime | None:
    """A unix time, ISO string, date or datetime as an aware UTC datetime; anything else is Mem0's ``ValidationError``.

    Numbers past what a datetime holds (``1e20``, ``inf``, ``nan``, ``10**400``) are refused here,
    never left to surface as ``OverflowError`` from ``datetime``.
    """
    if value is None:
        return None
    when: Any = value
    if isinstance(value, bool):
        when = None
    elif isinstance(value, (int, float)):
        try:
            when = datetime.fromtimestamp(value, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            when = None
    elif isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            when = None
    elif isinstance(value, date) and not isinstance(value, datetime):
        when = datetime.combine(value, time(0), tzinfo=timezone.utc)
    if isinstance(when, datetime):
        when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        if not _storable(when):
            when = None
    if not isinstance(when, datetime):
        raise validation_error(
            f"Invalid {name} {_shown(value)}: pass a unix time, an ISO 8601 string or a datetime between years 1 and 9999",
            "VALIDATION_004",
            details={"provided_type": type(value).__name__, "parameter": name},
            suggestion=f"Pass {name}=int(time.time()) or {name}=datetime.now(timezone.utc)",
        )
    return when


# what the kernel stores: a day inside datetime's range, so UTC shifts and day arithmetic never overflow
_EARLIEST = datetime(1, 1, 3, tzinfo=timezone.utc)
_LATEST = datetime(9999, 12, 29, tzinfo=timezone.utc)


def _storable(when: datetime) -> bool:
    try:
        return _EARLIEST <= when.astimezone(timezone.utc) <= _LATEST
    except (OverflowError, ValueError):
        return False


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not replace our error with its own
        return f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def messages_of(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        return [dict(messages)]
    if isinstance(messages, list):
        return list(messages)
    raise validation_error(
        f"messages must be a str, a dict or a list of dicts, not {type(messages).__name__}",
        "VALIDATION_003",
        details={"provided_type": type(messages).__name__, "valid_types": ["str", "dict", "list[dict]"]},
        suggestion="Pass a string, a message dict or a list of message dicts",
    )


def content(message: Any) -> str | None:
    if not isinstance(message, Mapping) or message.get("role") is None:
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        texts = [part.get("text") for part in content if isinstance(part, Mapping) and part.get("type") == "text"]
        joined = "\n".join(t for t in texts if isinstance(t, str))
        return joined or None
    return None


def search_query(query: Any, threshold: Any) -> str:
    """The query, trimmed, and the threshold checked (``top_k`` is ``read_scope``'s, checked once there)."""
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise InvalidArgument(f"threshold must be a number in [0, 1], not {threshold!r}")
        if not 0 <= threshold <= 1:
            raise InvalidArgument(f"Invalid threshold {threshold}: it must be between 0 and 1 (inclusive)")
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("Invalid query: pass a non-empty string")
    return query.strip()


def check_top_k(top_k: Any) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise InvalidArgument(f"top_k must be an integer, not {top_k!r}")
    if top_k < 0:
        raise InvalidArgument(f"Invalid top_k {top_k}: it must be a non-negative integer")
    return top_k


def read_scope(
    method: str, filters: Mapping[str, Any] | None, top_k: int | None, kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Both calling styles: 2.x ``filters={"user_id": ...}, top_k=`` and 1.x ``user_id=..., limit=``.

    Returns ``(kernel keywords: scope and entry-field conditions, Mem0 metadata filters, top_k)``.
    """
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidArgument(f"filters must be a dict, not {type(filters).__name__}")
    rest = dict(filters or {})
    limit = kwargs.pop("limit", None)
    for key in ENTITY_KEYS:
        if key in kwargs:
            value = kwargs.pop(key)
            if value is None:
                continue
            if key in rest and rest[key] != value:
                raise InvalidArgument(f"{method}() got {key}={value!r} and filters[{key!r}]={rest[key]!r} - pass it once")
            rest[key] = value
    if kwargs:
        logger.warning("%s(): ignored unsupported arguments %s", method, sorted(kwargs))
    if limit is not None and top_k is not None and limit != top_k:
        raise InvalidArgument(f"{method}() got top_k={top_k} and limit={limit} - use top_k only")
    size = check_top_k(top_k if top_k is not None else limit if limit is not None else 20)
    scope = scope_of(rest.pop("user_id", None), rest.pop("agent_id", None), rest.pop("run_id", None))
    if not scope:
        raise InvalidArgument(
            f"{method}() needs at least one of user_id, agent_id or run_id in filters - e.g. filters={{'user_id': 'u1'}}"
        )
    check_filters(rest)
    return {**scope, **field_arguments(rest)}, rest, size
