"""Checking what callers pass to the kernel: ids, scopes, times, limits, metadata, tags, items.

Every public ``Kernel`` method checks its arguments here before touching the store, so a bad
value is an ``InvalidArgument`` / ``ScopeError`` that says what to pass, never a database error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import date, datetime, timezone
from typing import Any

from .errors import InvalidArgument, ScopeError
from .records import ContextType, Scope, Session
from .rules.importance import check_importance
from .rules.trust import check_trust
from .store.filters import CheckedFilter, check_metadata_filter

__all__ = ["MAX_JSON_DEPTH", "check_id", "confidence", "count", "entity_names", "entry_id", "ids", "json_value", "limit", "memory_item",
           "message_item", "metadata", "metadata_filter", "optional_str", "require_scope", "scope_of", "speaker", "tags",
           "validate_text", "when"]


def validate_text(text: Any, what: str = "text") -> str:
    """A text to store: a str with something in it, valid Unicode; checked here, once, for ingest."""
    if not isinstance(text, str):
        raise InvalidArgument(f"{what} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise InvalidArgument(f"{what} is empty - pass some text to store")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{what} contains lone surrogate code points and is not valid Unicode - "
                              "decode it with errors='replace' first") from None
    return text


def check_id(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ScopeError(f"{name} must be a str, got {type(value).__name__}")
    if not value or "\x00" in value or len(value) > 512:
        raise ScopeError(f"{name} must be a non-empty string without NUL bytes, at most 512 characters; got {value!r:.80}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ScopeError(f"{name} is not valid Unicode (lone surrogates)") from None
    return value


def scope_of(user_id: Any = None, agent_id: Any = None, project_id: Any = None, session_id: Any = None) -> Scope:
    return Scope(check_id("user_id", user_id), check_id("agent_id", agent_id),
                 check_id("project_id", project_id), check_id("session_id", session_id))


# Stored times stay a day inside what ``datetime`` holds, so that shifting one to UTC, adding a
# day to an expiry or stepping a week back from a reference time never overflows.
EARLIEST = datetime(1, 1, 3, tzinfo=timezone.utc)
LATEST = datetime(9999, 12, 29, tzinfo=timezone.utc)


def when(value: Any, name: str) -> datetime | None:
    if value is None:
        return None
    parsed: datetime | None = None
    if isinstance(value, datetime):
        parsed = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    elif isinstance(value, str):
        from .text.dates import parse_datetime

        parsed = parse_datetime(value)
    if parsed is None:
        raise InvalidArgument(f"{name} must be a datetime, a date or an ISO date string, got {value!r:.80}", param=name)
    try:
        utc = parsed.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        raise InvalidArgument(f"{name} {value!r:.80} is outside the years 1-9999 a stored time can hold", param=name)
    return parsed


def limit(value: Any, name: str = "limit") -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidArgument(f"{name} must be a non-negative int or None, got {value!r}")
    return value


def count(value: Any, name: str = "limit") -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidArgument(f"{name} must be a non-negative int, got {value!r}")
    return value


MAX_JSON_DEPTH = 64


def json_value(value: Any, name: str) -> None:
    """``InvalidArgument`` unless ``value`` is JSON a database can store portably and read back.

    No NaN / Infinity (not JSON: SQLite's json functions and PostgreSQL's jsonb reject them), no
    cycles, string keys only, at most ``MAX_JSON_DEPTH`` levels (deeper data would hit Python's
    recursion limit in the encoder). Other objects are stored as their ``str()``, as before.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > MAX_JSON_DEPTH:
                raise InvalidArgument(f"{name} nests deeper than {MAX_JSON_DEPTH} levels - flatten it")
            if id(item) in seen:
                raise InvalidArgument(f"{name} contains a reference to itself - pass plain JSON data")
            seen.add(id(item))
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise InvalidArgument(f"{name} keys must be strings, got {key!r:.80}")
                    stack.append((sub, depth + 1))
            else:
                stack.extend((sub, depth + 1) for sub in item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise InvalidArgument(f"{name} holds {item}, which is not JSON - pass a finite number or a string")
    try:
        json.dumps(value, ensure_ascii=False, default=str, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise InvalidArgument(f"{name} is not JSON-serialisable: {exc}") from None


def metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidArgument(f"metadata must be a dict, got {type(value).__name__}")
    json_value(value, "metadata")
    return dict(value)


def metadata_filter(value: Any) -> CheckedFilter | None:
    """A metadata filter (operators and all, docs/kernel-api.md), checked before any query runs; the
    mapping carries its parsed tree to the store (``EntryFilter.metadata_tree``)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidArgument(f"metadata must be a dict, got {type(value).__name__}")
    return check_metadata_filter(value)


def text_needle(value: Any) -> str | None:
    """A ``text_contains`` substring: a non-empty str (valid Unicode), or ``None`` for no such filter."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidArgument(f"text_contains must be a non-empty str, got {value!r:.80}", param="text_contains")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument("text_contains is not valid Unicode (lone surrogates)", param="text_contains") from None
    return value


def tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise InvalidArgument(f"tags must be a list of strings, got {type(value).__name__}")
    items = list(value)
    if not all(isinstance(t, str) for t in items):
        raise InvalidArgument("tags must be a list of strings")
    return items


def ids(value: Any, name: str) -> list[str]:
    """A list of ids (message ids, entry ids), each a non-empty str."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise InvalidArgument(f"{name} must be a list of ids, got {type(value).__name__}")
    items = list(value)
    for item in items:
        if not isinstance(item, str) or not item:
            raise InvalidArgument(f"{name} must hold non-empty str ids, got {item!r:.80}")
    return items


def memory_item(text: Any, **kw: Any) -> dict[str, Any]:
    scope = scope_of(kw.get("user_id"), kw.get("agent_id"), kw.get("project_id"), kw.get("session_id"))
    context_type = kw.get("context_type", "memory")
    try:
        context_type = ContextType(getattr(context_type, "value", context_type)).value
    except ValueError:
        raise InvalidArgument(f"context_type must be one of memory, resource, skill; got {context_type!r}") from None
    role, category = optional_str(kw.get("role", "user"), "role"), optional_str(kw.get("category"), "category")
    entry_id = kw.get("entry_id")
    if entry_id is not None:
        check_id("entry_id", entry_id)
    return {
        "text": validate_text(text), **scope.as_dict(), "category": category, "tags": tags(kw.get("tags")),
        "metadata": metadata(kw.get("metadata")), "role": role, "actor": optional_str(kw.get("actor"), "actor"),
        "context_type": context_type, "confidence": confidence(kw.get("confidence", 1.0)),
        "created_at": when(kw.get("created_at"), "created_at"),
        "valid_from": when(kw.get("valid_from"), "valid_from"),
        "expires_at": when(kw.get("expires_at"), "expires_at"), "infer": bool(kw.get("infer", False)),
        "entry_id": entry_id, "dedup": bool(kw.get("dedup", True)),
        # write streams and deferred vectors (ingest/streams.py, Ingestor.add_many)
        "stream": check_id("stream", kw.get("stream")), "speaker": speaker(kw.get("speaker")),
        "split_stream": bool(kw.get("split_stream", True)),
        "defer_embedding": None if kw.get("defer_embedding") is None else bool(kw["defer_embedding"]),
        "trust": check_trust(kw.get("trust")),  # None: the role's default (rules/trust.py)
        "importance": check_importance(kw.get("importance")),
    }


def confidence(value: Any) -> float:
    """A finite number in [0, 1]."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
        raise InvalidArgument(f"confidence must be a number in [0, 1], got {value!r}")
    return float(value)


def optional_str(value: Any, name: str) -> str | None:
    """``None`` or a str that is valid Unicode (what a text column can store and read back)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be a str or None, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{name} is not valid Unicode (lone surrogates)") from None
    return value


def speaker(value: Any) -> str | None:
    """Who said a memory: searchable with its text (``None`` for none)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"speaker must be a str, got {type(value).__name__}")
    return value.replace("\x00", " ")[:200]


def entity_names(entities: Any, param: str = "entities", *, allow_empty: bool = False) -> list[str]:
    """A list of entity names (file paths, table names, URLs, ids): each a non-empty str, without duplicates."""
    if isinstance(entities, (str, bytes)) or not isinstance(entities, (list, tuple, set, frozenset)):
        raise InvalidArgument(f"{param} must be a list of str (file paths, table names, URLs, ids), "
                              f"got {type(entities).__name__}", param=param)
    names: list[str] = []
    for name in entities:
        if not isinstance(name, str) or not name.strip():
            raise InvalidArgument(f"each of {param} must be a non-empty str, got {name!r}", param=param)
        if len(name) > 1024:
            raise InvalidArgument(f"an entity name is at most 1024 characters, got {len(name)}", param=param)
        if name.strip() not in names:
            names.append(name.strip())
    if not names and not allow_empty:
        raise InvalidArgument(f"{param} must name at least one entity", param=param)
    return names


def message_item(item: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise InvalidArgument(f"each message must be a dict with 'role' and 'content', got {type(item).__name__}")
    role = item.get("role")
    if not isinstance(role, str) or not role:
        raise InvalidArgument(f"message role must be a non-empty str, got {role!r}")
    content = item.get("content", "")
    if not isinstance(content, str):
        raise InvalidArgument(f"message content must be a str, got {type(content).__name__}")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument("message content contains lone surrogates and is not valid Unicode") from None
    status = item.get("status", "active")
    if status not in ("active", "archived"):
        raise InvalidArgument(f"status must be 'active' or 'archived', got {status!r}")
    message_id = item.get("message_id") or item.get("id")
    if message_id is not None:
        check_id("message_id", message_id)
    name = item.get("name")
    if name is not None and not isinstance(name, str):
        raise InvalidArgument(f"message name must be a str or None, got {type(name).__name__}")
    if item.get("payload") is not None:
        json_value(item["payload"], "payload")
    return {"role": role, "content": content, "name": name, "metadata": metadata(item.get("metadata")),
            "payload": item.get("payload"), "status": status, "id": message_id,
            "created_at": when(item.get("created_at"), "created_at"), "ingest": item.get("ingest", True)}


def entry_id(entry_id: Any) -> str:
    if not isinstance(entry_id, str) or not entry_id:
        raise InvalidArgument(f"entry_id must be a non-empty str, got {entry_id!r:.80}")
    return entry_id


def require_scope(session: Session, scope: Scope) -> None:
    for name in ("user_id", "agent_id", "project_id"):
        wanted = getattr(scope, name)
        if wanted is not None and getattr(session.scope, name) != wanted:
            raise ScopeError(f"Session {session.id!r} belongs to another {name} - use a different session id")
