"""Mem0 drop-in: change ``from mem0 import Memory`` to ``from agentbase_adapters.mem0 import Memory``.

Class tree::

    Mem0Adapter            Mem0's sync API over an existing AgentBase
    └── Memory             owns its AgentBase, built from Mem0's config dict (the one-line swap)
    AsyncMem0Adapter       the async twin; awaits the kernel's async methods
    └── AsyncMemory

    ValidationError        InvalidArgument (ValueError); also ``mem0.exceptions.ValidationError``
                           whenever mem0 has been imported
    MemoryNotFound         EntryNotFound (KeyError) and ValueError, which Mem0 raises

Mem0 concepts map onto the kernel like this: a memory is an ``Entry`` (``memory`` = ``l2_full``,
``hash`` = ``content_hash``), ``user_id``/``agent_id`` are the kernel's, ``run_id`` is the
kernel's ``session_id``, a message ``name`` is the entry's ``actor``, ``expiration_date`` is
``expires_at`` (the end of that UTC day), ``memory_type="procedural_memory"`` is a ``skill``
entry. Mem0's filter operators are evaluated here over the kernel's scoped candidates, because
the kernel only filters metadata by exact match. mem0ai itself is never imported; no LLM, no
HTTP client and no telemetry is ever touched.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sys
import uuid
import warnings
from collections.abc import Generator, Mapping
from datetime import date, datetime, time, timedelta, timezone
from os import fspath
from pathlib import Path
from typing import Any, TypeAlias, TypeVar, cast

from agentbase_kernel import AgentBase
from agentbase_kernel.errors import AgentBaseError, EntryNotFound, InvalidArgument, NotFoundError
from agentbase_kernel.records import AddResult, Entry, FindResult, HistoryEvent

__all__ = [
    "AsyncMem0Adapter",
    "AsyncMemory",
    "Mem0Adapter",
    "Memory",
    "MemoryNotFound",
    "ValidationError",
]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_Call: TypeAlias = tuple[str, tuple[Any, ...], dict[str, Any]]
_Op: TypeAlias = Generator[_Call, Any, _T]  # yields kernel calls, receives their results, returns _T
_Result: TypeAlias = dict[str, Any]

_ENTITY_KEYS = ("user_id", "agent_id", "run_id")
_IDENTITY_KEYS = frozenset({*_ENTITY_KEYS, "actor_id"})
_PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role", "attributed_to", "expiration_date")
_PROCEDURAL = "procedural_memory"
_RANGE_OPS = frozenset({"gt", "gte", "lt", "lte"})
_OPERATORS = frozenset({"eq", "ne", "in", "nin", "contains", "icontains"}) | _RANGE_OPS
_LOGICAL = ("AND", "OR", "NOT")
_UNSET: Any = object()
_PAGE = 500
_MAX_FIND = 1000  # the kernel caps find(top_k=...) here


# ----------------------------------------------------------------------------------------------
# Errors


class ValidationError(InvalidArgument):
    """Input that Mem0 rejects with ``mem0.exceptions.ValidationError`` (same ``error_code``)."""

    def __init__(
        self,
        message: str,
        error_code: str,
        details: dict[str, Any] | None = None,
        suggestion: str | None = None,
        debug_info: dict[str, Any] | None = None,
    ) -> None:
        Exception.__init__(self, message)
        self.message = message
        self.error_code = error_code
        self.details = details or {}
        self.suggestion = suggestion
        self.debug_info = debug_info or {}


class MemoryNotFound(EntryNotFound, ValueError):
    """No memory with this id: a ``ValueError`` as in Mem0, and our ``EntryNotFound``."""

    def __init__(self, memory_id: str, message: str) -> None:
        AgentBaseError.__init__(self, message)
        self.entry_id = memory_id


_compat_cache: dict[type, type] = {}


def _validation_error(message: str, error_code: str, **extra: Any) -> ValidationError:
    """Our ``ValidationError``, made a subclass of mem0's own when mem0 is loaded.

    A caller can only write ``except mem0.exceptions.ValidationError`` after importing mem0, so
    checking ``sys.modules`` at raise time is enough, and mem0 stays an optional dependency.
    """
    cls: type[ValidationError] = ValidationError
    mem0_exceptions = sys.modules.get("mem0.exceptions")
    theirs = getattr(mem0_exceptions, "ValidationError", None)
    if isinstance(theirs, type) and issubclass(theirs, Exception):
        if theirs not in _compat_cache:
            _compat_cache[theirs] = type(
                "ValidationError", (ValidationError, theirs), {"__module__": __name__}
            )
        cls = _compat_cache[theirs]
    return cls(message, error_code, **extra)


# ----------------------------------------------------------------------------------------------
# Argument translation (pure functions)


def _entity_id(value: Any, name: str) -> str | None:
    # Mem0 coerces ints to str, trims, and refuses blank ids and ids with inner whitespace.
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        raise InvalidArgument(f"Invalid {name}: cannot be empty or whitespace-only - pass a real id")
    if any(ch.isspace() for ch in text):
        raise InvalidArgument(f"Invalid {name} {text!r}: cannot contain whitespace - pass an id without spaces")
    return text


def _scope(user_id: Any, agent_id: Any, run_id: Any) -> dict[str, str]:
    ids = {
        "user_id": _entity_id(user_id, "user_id"),
        "agent_id": _entity_id(agent_id, "agent_id"),
        "session_id": _entity_id(run_id, "run_id"),
    }
    return {key: value for key, value in ids.items() if value is not None}


def _require_scope(scope: dict[str, str], provided: dict[str, Any]) -> None:
    if not scope:
        raise _validation_error(
            "One of user_id, agent_id or run_id is required to scope a memory",
            "VALIDATION_001",
            details={"provided_ids": provided},
            suggestion="Pass user_id=..., agent_id=... or run_id=...",
        )


def _strip_identity(metadata: Mapping[str, Any] | None, current: Mapping[str, Any], where: str) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidArgument(f"metadata must be a dict, not {type(metadata).__name__}")
    clean: dict[str, Any] = {}
    for key, value in metadata.items():
        if key not in _IDENTITY_KEYS:
            clean[key] = value
        elif value != current.get(key):
            logger.warning("%s: ignored metadata[%r] - the scope is set by user_id/agent_id/run_id only", where, key)
    return clean


def _expiration(value: Any) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError as exc:
            raise InvalidArgument(f"expiration_date {value!r} is not a date - use YYYY-MM-DD") from exc
    raise InvalidArgument(f"expiration_date must be a YYYY-MM-DD string, a date or a datetime, not {type(value).__name__}")


def _expires_at(day: date | None) -> datetime | None:
    # Mem0 hides a memory once its expiration date is in the past: it expires at the end of the day.
    if day is None:
        return None
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=timezone.utc)


def _expiration_date(entry: Entry) -> str | None:
    if entry.expires_at is None:
        return None
    return (entry.expires_at.astimezone(timezone.utc) - timedelta(microseconds=1)).date().isoformat()


def _timestamp(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidArgument("timestamp must be a unix time, an ISO string or a datetime, not a bool")
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise InvalidArgument(f"timestamp {value!r} is not an ISO 8601 date-time") from exc
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(0), tzinfo=timezone.utc)
    raise InvalidArgument(f"timestamp must be a unix time, an ISO string or a datetime, not {type(value).__name__}")


def _messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        return [dict(messages)]
    if isinstance(messages, list):
        return list(messages)
    raise _validation_error(
        f"messages must be a str, a dict or a list of dicts, not {type(messages).__name__}",
        "VALIDATION_003",
        details={"provided_type": type(messages).__name__, "valid_types": ["str", "dict", "list[dict]"]},
        suggestion="Pass a string, a message dict or a list of message dicts",
    )


def _content(message: Any) -> str | None:
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


def _search_args(query: Any, threshold: Any, top_k: Any) -> str:
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise InvalidArgument(f"threshold must be a number in [0, 1], not {threshold!r}")
        if not 0 <= threshold <= 1:
            raise InvalidArgument(f"Invalid threshold {threshold}: it must be between 0 and 1 (inclusive)")
    _top_k(top_k)
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("Invalid query: pass a non-empty string")
    return query.strip()


def _top_k(top_k: Any) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise InvalidArgument(f"top_k must be an integer, not {top_k!r}")
    if top_k < 0:
        raise InvalidArgument(f"Invalid top_k {top_k}: it must be a non-negative integer")
    return top_k


def _read_scope(
    method: str, filters: Mapping[str, Any] | None, top_k: int | None, kwargs: dict[str, Any]
) -> tuple[dict[str, str], dict[str, Any], int]:
    """Both calling styles: 2.x ``filters={"user_id": ...}, top_k=`` and 1.x ``user_id=..., limit=``."""
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidArgument(f"filters must be a dict, not {type(filters).__name__}")
    rest = dict(filters or {})
    limit = kwargs.pop("limit", None)
    for key in _ENTITY_KEYS:
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
    size = _top_k(top_k if top_k is not None else limit if limit is not None else 20)
    scope = _scope(rest.pop("user_id", None), rest.pop("agent_id", None), rest.pop("run_id", None))
    if not scope:
        raise InvalidArgument(
            f"{method}() needs at least one of user_id, agent_id or run_id in filters - e.g. filters={{'user_id': 'u1'}}"
        )
    _check_filters(rest)
    return scope, rest, size


# ----------------------------------------------------------------------------------------------
# Mem0's filter language, evaluated over one memory's payload


def _check_filters(filters: Mapping[str, Any]) -> None:
    for key, value in filters.items():
        if key in _LOGICAL:
            if not isinstance(value, list) or not value:
                raise InvalidArgument(f"{key} needs a non-empty list of filter dicts, got {value!r}")
            for item in value:
                if not isinstance(item, Mapping):
                    raise InvalidArgument(f"{key} items must be filter dicts, got {item!r}")
                _check_filters(item)
        elif isinstance(value, Mapping):
            ops = set(value)
            unknown = ops - _OPERATORS
            if unknown or not ops:
                raise InvalidArgument(
                    f"Unsupported metadata filter operator(s) {sorted(unknown)} for {key!r} - use one of {sorted(_OPERATORS)}"
                )
            if ops & _RANGE_OPS and ops - _RANGE_OPS:
                raise InvalidArgument(
                    f"Cannot mix range operators {sorted(ops & _RANGE_OPS)} with {sorted(ops - _RANGE_OPS)} "
                    f"for {key!r} - combine them with AND"
                )
            for op in ("in", "nin"):
                if op in value and not isinstance(value[op], (list, tuple, set)):
                    raise InvalidArgument(f"{key!r}: {op!r} needs a list, got {value[op]!r}")


def _same(a: Any, b: Any) -> bool:
    # Like Mem0's default store (Qdrant): True is not 1.
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _ordered(a: Any, b: Any) -> tuple[Any, Any] | None:
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a, b
    if isinstance(a, str) and isinstance(b, (str, date)):
        try:
            left = datetime.fromisoformat(a)
            right = b if isinstance(b, datetime) else datetime.fromisoformat(b) if isinstance(b, str) else datetime.combine(b, time(0))
        except ValueError:
            return None
        if left.tzinfo is None:
            left = left.replace(tzinfo=timezone.utc)
        if right.tzinfo is None:
            right = right.replace(tzinfo=timezone.utc)
        return left, right
    return None


def _condition(value: Any, cond: Any) -> bool:
    if not isinstance(cond, Mapping):
        if cond == "*":
            return True  # Mem0's wildcard matches every memory, as its Qdrant store does
        if isinstance(cond, list):
            return any(_same(value, c) for c in cond)
        return _same(value, cond)
    for op, operand in cond.items():
        if op == "eq" and not _same(value, operand):
            return False
        if op == "ne" and (value is None or _same(value, operand)):
            return False
        if op == "in" and not any(_same(value, c) for c in operand):
            return False
        if op == "nin" and (value is None or any(_same(value, c) for c in operand)):
            return False
        if op in ("contains", "icontains"):
            if not isinstance(value, str) or not isinstance(operand, str):
                return False
            if op == "contains" and operand not in value:
                return False
            if op == "icontains" and operand.casefold() not in value.casefold():
                return False
        if op in _RANGE_OPS:
            pair = _ordered(value, operand)
            if pair is None:
                return False
            left, right = pair
            if not {"gt": left > right, "gte": left >= right, "lt": left < right, "lte": left <= right}[op]:
                return False
    return True


def _evaluate(payload: Mapping[str, Any], filters: Mapping[str, Any]) -> bool | None:
    """True/False, or None when the filter constrains nothing.

    Mirrors how Mem0's default store builds a Qdrant filter: a ``"*"`` condition is no condition,
    a sub-filter that ends up empty is dropped from its AND/OR/NOT list, then ``must`` (all),
    ``should`` (at least one, if any) and ``must_not`` (none) apply.
    """
    must: list[bool] = []
    should: list[bool] = []
    must_not: list[bool] = []
    for key, cond in filters.items():
        if key in _LOGICAL:
            bucket = {"AND": must, "OR": should, "NOT": must_not}[key]
            for sub in cond:
                result = _evaluate(payload, sub)
                if result is not None:
                    bucket.append(result)
        elif isinstance(cond, Mapping) or cond != "*":
            must.append(_condition(payload.get(key), cond))
    if not (must or should or must_not):
        return None
    return all(must) and (not should or any(should)) and not any(must_not)


def _matches(payload: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    return _evaluate(payload, filters) is not False


def _exact_metadata(filters: Mapping[str, Any]) -> dict[str, Any] | None:
    """The filters the kernel can apply itself (exact match on custom metadata), else None."""
    if all(
        key not in _LOGICAL and key not in _PROMOTED and key not in ("data", "hash", "created_at", "updated_at")
        and isinstance(value, (str, int)) and not isinstance(value, bool) and value != "*"
        for key, value in filters.items()
    ):
        return dict(filters)
    return None


# ----------------------------------------------------------------------------------------------
# Records


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(timezone.utc).isoformat() if value is not None else None


def _payload(entry: Entry) -> dict[str, Any]:
    """The entry as Mem0 stores a point payload: custom metadata flat, plus the core keys."""
    payload = dict(entry.metadata)
    fact = payload.get("derived") == "fact"  # the kernel marks extracted facts this way
    if fact:
        del payload["derived"]
    payload.update(
        data=entry.text,
        hash=entry.content_hash or hashlib.md5(entry.text.encode()).hexdigest(),
        created_at=_iso(entry.created_at),
        updated_at=_iso(entry.updated_at or entry.created_at),
    )
    promoted = {
        "user_id": entry.user_id,
        "agent_id": entry.agent_id,
        "run_id": entry.session_id,
        "actor_id": entry.actor,
        "role": None if fact else entry.role,
        "attributed_to": entry.role if fact else None,
        "expiration_date": _expiration_date(entry),
    }
    payload.update({key: value for key, value in promoted.items() if value is not None})
    return payload


def _to_record(
    text: str,
    *,
    scope: Mapping[str, str],
    metadata: Mapping[str, Any],
    role: str | None,
    actor: str | None = None,
    expires: date | None = None,
    created_at: datetime | None = None,
    infer: bool = False,
    context_type: str = "memory",
) -> dict[str, Any]:
    """Keyword arguments of ``add_memory`` for one Mem0 memory."""
    return {
        "text": text,
        **scope,
        "metadata": dict(metadata) or None,
        "role": role,
        "actor": actor,
        "expires_at": _expires_at(expires),
        "created_at": created_at,
        "infer": infer,
        "context_type": context_type,
        "entry_id": str(uuid.uuid4()),
    }


def _from_record(entry: Entry, *, score: Any = _UNSET, with_score: bool = True) -> dict[str, Any]:
    """One Mem0 memory dict: ``id, memory, hash, metadata, score, created_at, updated_at`` + promoted keys."""
    payload = _payload(entry)
    item: dict[str, Any] = {
        "id": entry.id,
        "memory": payload["data"],
        "hash": payload["hash"],
        "metadata": None,
        "score": None if score is _UNSET else float(score),
        "created_at": payload["created_at"],
        "updated_at": payload["updated_at"],
    }
    if not with_score:
        del item["score"]
    for key in _PROMOTED:
        if key in payload:
            item[key] = payload[key]
    core = {"data", "hash", "created_at", "updated_at", "id", *_PROMOTED}
    extra = {key: value for key, value in payload.items() if key not in core}
    item["metadata"] = extra or None
    return item


def _history_row(event: HistoryEvent, created_at: str | None) -> dict[str, Any]:
    return {
        "id": event.id,
        "memory_id": event.entry_id,
        "old_memory": event.old_value,
        "new_memory": event.new_value,
        "event": event.event,
        "created_at": created_at or _iso(event.created_at),
        "updated_at": _iso(event.created_at),
        "is_deleted": event.event == "DELETE",
        "actor_id": event.actor,
        "role": event.role,
    }


def _add_row(result: AddResult, message: Mapping[str, Any] | None) -> dict[str, Any]:
    # An exact duplicate is not stored twice: it is reported with the existing id as "NONE" (1.x's word).
    event = {"ADD": "ADD", "NOOP": "NONE"}.get(result.event, result.event)
    row: dict[str, Any] = {"id": result.entry.id, "memory": result.entry.text, "event": event}
    if message is not None:
        row["actor_id"] = message.get("name") or None
        row["role"] = message["role"]
    return row


def _transcript(messages: list[dict[str, Any]]) -> str:
    lines = [f"{m['role']}: {text}" for m in messages if (text := _content(m)) is not None]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Operations, written once as generators of kernel calls, driven sync or async


class _Project:
    def update(self, *args: Any, **kwargs: Any) -> None:
        raise InvalidArgument("Project settings are a Mem0 Platform feature - they do not exist in open-source Mem0 or agentbase")


class _AsyncProject:
    async def update(self, *args: Any, **kwargs: Any) -> None:
        _Project().update()


class _Mem0Base:
    """Mem0's API as generators of kernel calls; the sync and async classes drive them."""

    _async = False

    def __init__(self, db: AgentBase, *, config: Mapping[str, Any] | None = None, owns_db: bool = False) -> None:
        if not isinstance(db, AgentBase):
            raise TypeError(f"expected an agentbase_kernel.AgentBase, got {type(db).__name__}")
        self.db = db
        self.config: dict[str, Any] = dict(config or {})
        self.custom_instructions: str | None = self.config.get("custom_instructions")
        self.api_version: str = self.config.get("version", "v1.1")
        # Stored for the optional LLM hook only. agentbase never builds a client from it: set
        # ``self.llm`` to an object with ``generate_response(messages)`` to enable the hook.
        self.llm_config: dict[str, Any] | None = self.config.get("llm")
        self.llm: Any = None
        self._owns_db = owns_db

    # -- add

    def _op_add(
        self,
        messages: Any,
        *,
        user_id: Any,
        agent_id: Any,
        run_id: Any,
        metadata: Mapping[str, Any] | None,
        timestamp: Any,
        expiration_date: Any,
        infer: bool,
        memory_type: str | None,
        prompt: str | None,
        llm: Any = None,
    ) -> _Op[_Result]:
        created_at = _timestamp(timestamp)
        expires = _expiration(expiration_date)
        meta = _strip_identity(metadata, {}, "add()")
        scope = _scope(user_id, agent_id, run_id)
        _require_scope(scope, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        if memory_type is not None and memory_type != _PROCEDURAL:
            problem = f"Invalid memory_type {memory_type!r}: pass {_PROCEDURAL!r} for procedural memory, or leave it out"
            if self._async:  # Mem0's AsyncMemory raises a plain ValueError here, Memory a ValidationError
                raise InvalidArgument(problem)
            raise _validation_error(problem, "VALIDATION_002", details={"provided_type": memory_type})
        msgs = _messages(messages)

        if memory_type == _PROCEDURAL and "agent_id" in scope:
            if self.llm is not None or llm is not None:
                system = prompt or "Summarise the agent's execution history above as step-by-step procedural memory."
                summary = yield ("_llm", ([{"role": "system", "content": system}, *msgs], llm), {})
            else:
                summary = _transcript(msgs)
            if not summary or not summary.strip():
                raise InvalidArgument("Nothing to store as procedural memory: the messages have no text")
            record = _to_record(
                summary, scope=scope, metadata={**meta, "memory_type": _PROCEDURAL}, role=None,
                expires=expires, created_at=created_at, context_type="skill",
            )
            result: AddResult = yield ("add_memory", (record.pop("text"),), record)
            return {"results": [{"id": result.entry.id, "memory": result.entry.text, "event": "ADD"}]}

        items: list[dict[str, Any]] = []
        sources: list[dict[str, Any]] = []
        for message in msgs:
            text = _content(message)
            if text is None:
                logger.warning("add(): skipped a message without role and text content: %r", message)
                continue
            if message["role"] == "system":
                continue
            name = message.get("name") or None
            items.append(_to_record(
                text, scope=scope, metadata=meta, role=message["role"], actor=name,
                expires=expires, created_at=created_at, infer=infer,
            ))
            sources.append(message)
        if not items:
            return {"results": []}
        results: list[AddResult] = yield ("add_memories", (items,), {})
        rows: list[dict[str, Any]] = []
        for result, message in zip(results, sources):
            if not infer:
                rows.append(_add_row(result, message))
                continue
            # infer=True reports what was stored, like Mem0: duplicates (NOOP) and facts merged
            # into a near-duplicate (MERGE) are left out.
            for stored in (result, *result.facts):
                if stored.event == "ADD":
                    if stored is not result and expires is not None:
                        # the kernel does not pass expires_at on to the facts it extracts
                        yield ("update", (stored.entry.id,), {"expires_at": _expires_at(expires)})
                    rows.append(_add_row(stored, None))
        return {"results": rows}

    # -- reads

    def _op_get(self, memory_id: Any) -> _Op[_Result | None]:
        if not isinstance(memory_id, str) or not memory_id:
            return None
        try:
            entry: Entry = yield ("get", (memory_id,), {})
        except NotFoundError:
            return None
        return _from_record(entry)

    def _op_get_all(self, filters: Mapping[str, Any] | None, top_k: int | None, show_expired: bool, kwargs: dict[str, Any]) -> _Op[_Result]:
        scope, rest, size = _read_scope("get_all", filters, top_k, kwargs)
        if size == 0:
            return {"results": []}
        entries = yield from self._op_scan(scope, rest, size, show_expired)
        return {"results": [_from_record(entry, with_score=False) for entry in entries]}

    def _op_scan(self, scope: dict[str, str], rest: dict[str, Any], size: int, show_expired: bool) -> _Op[list[Entry]]:
        exact = _exact_metadata(rest)
        if exact is not None:
            listed: list[Entry] = yield ("list", (), {**scope, "metadata": exact or None, "include_expired": show_expired, "limit": size})
            return listed
        found: list[Entry] = []
        offset = 0
        while len(found) < size:
            page: list[Entry] = yield ("list", (), {**scope, "include_expired": show_expired, "limit": _PAGE, "offset": offset})
            found.extend(entry for entry in page if _matches(_payload(entry), rest))
            if len(page) < _PAGE:
                break
            offset += _PAGE
        return found[:size]

    def _op_search(
        self, query: Any, top_k: int | None, filters: Mapping[str, Any] | None, threshold: float | None,
        reference_date: Any, show_expired: bool, explain: bool, kwargs: dict[str, Any],
    ) -> _Op[_Result]:
        query = _search_args(query, threshold, top_k if top_k is not None else 20)
        scope, rest, size = _read_scope("search", filters, top_k, kwargs)
        if size == 0:
            return {"results": []}
        reference = _timestamp(reference_date)
        exact = _exact_metadata(rest)
        args = {**scope, "include_expired": show_expired, "reference_time": reference, "metadata": exact or None}
        rest = {} if exact is not None else rest
        fetch = size
        while True:
            found: FindResult = yield ("find", (query,), {**args, "top_k": fetch})
            hits = [hit for hit in found if not rest or _matches(_payload(hit.entry), rest)]
            if len(hits) >= size or len(found) < fetch or fetch >= _MAX_FIND:
                break
            # The kernel cannot filter by Mem0's operators: widen the candidate pool and retry.
            fetch *= 4
        rows = []
        for hit in hits:
            # Mem0's threshold gates cosine similarity; ours also keeps what keyword search ranked well
            relevance = max(hit.score, hit.similarity if hit.similarity is not None else 0.0)
            if threshold is not None and relevance < threshold:
                continue
            row = _from_record(hit.entry, score=hit.score)
            if explain:
                row["score_details"] = {"matched_by": list(hit.matched_by), "level": hit.level, "score": hit.score}
            rows.append(row)
            if len(rows) == size:
                break
        return {"results": rows}

    # -- writes

    def _op_update(self, memory_id: Any, text: str | None, metadata: Mapping[str, Any] | None, expiration_date: Any, data: str | None) -> _Op[dict[str, str]]:
        if data is not None:
            logger.warning("update(): `data` is deprecated in Mem0 2.x - pass the new text as `text`")
            if text is None:
                text = data
        if text is None and metadata is None and expiration_date is _UNSET:
            raise InvalidArgument("Nothing to update: pass at least one of text, metadata or expiration_date")
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise InvalidArgument("update() text must be a non-empty string")
        try:
            entry: Entry = yield ("get", (memory_id,), {})
        except NotFoundError as exc:
            raise MemoryNotFound(memory_id, f"Memory with id {memory_id} not found. Please provide a valid 'memory_id'") from exc
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = text
        if metadata is not None:
            changes["metadata"] = {**entry.metadata, **_strip_identity(metadata, _payload(entry), "update()")}
        if expiration_date is not _UNSET:
            changes["expires_at"] = _expires_at(_expiration(expiration_date))
        # Mem0's history rows carry the memory's actor, not the caller's.
        yield ("update", (memory_id,), {**changes, "actor": entry.actor})
        return {"message": "Memory updated successfully!"}

    def _op_delete(self, memory_id: Any) -> _Op[dict[str, str]]:
        try:
            entry: Entry = yield ("get", (memory_id,), {})
            yield ("delete", (memory_id,), {"actor": entry.actor})
        except NotFoundError as exc:
            raise MemoryNotFound(memory_id, f"Memory with id {memory_id} not found") from exc
        return {"message": "Memory deleted successfully!"}

    def _op_delete_all(self, user_id: Any, agent_id: Any, run_id: Any) -> _Op[dict[str, str]]:
        scope = _scope(user_id, agent_id, run_id)
        if not scope:
            raise InvalidArgument(
                "At least one filter is required to delete all memories. "
                "If you want to delete all memories, use the `reset()` method."
            )
        yield ("delete_all", (), scope)
        return {"message": "Memories deleted successfully!"}

    def _op_history(self, memory_id: Any) -> _Op[list[dict[str, Any]]]:
        if not isinstance(memory_id, str) or not memory_id:
            return []
        events: list[HistoryEvent] = yield ("history", (memory_id,), {})
        created = next((_iso(e.created_at) for e in events if e.event == "ADD"), None)
        return [_history_row(event, created) for event in events]

    def _op_reset(self) -> _Op[None]:
        yield ("reset", (), {})
        return None


def _llm_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [*messages, {"role": "user", "content": "Create procedural memory of the above conversation."}]


class Mem0Adapter(_Mem0Base):
    """Mem0's ``Memory`` API (add, search, get_all, update, delete, history...) over an ``AgentBase``.

        m = Mem0Adapter(AgentBase("memory.db"))
        m.add("I like pizza", user_id="alice")
        m.search("food preferences", user_id="alice")["results"]
    """

    def _run(self, op: _Op[_T]) -> _T:
        kernel = self.db.sync
        try:
            call = next(op)
            while True:
                name, args, kwargs = call
                try:
                    result = self._call_llm(*args) if name == "_llm" else getattr(kernel, name)(*args, **kwargs)
                except Exception as exc:
                    call = op.throw(exc)
                else:
                    call = op.send(result)
        except StopIteration as stop:
            return cast(_T, stop.value)

    def _call_llm(self, messages: list[dict[str, Any]], llm: Any) -> str:
        return str(self.llm.generate_response(messages=_llm_messages(messages)))

    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        """Store memories from a string, a message dict or a list of messages.

        Args:
            messages: ``"text"``, ``{"role", "content", "name"?}`` or a list of those.
            user_id: Scope (at least one of user_id, agent_id, run_id is required).
            agent_id: Scope.
            run_id: Scope; stored as the kernel's ``session_id``.
            metadata: Flat custom metadata; identity keys in it are dropped with a warning.
            timestamp: When it happened (unix time, ISO string or datetime).
            expiration_date: ``YYYY-MM-DD``; hidden from search/get_all after that day.
            infer: True runs agentbase's zero-LLM fact extraction; False stores one memory per
                non-system message.
            memory_type: ``"procedural_memory"`` (with ``agent_id``) stores the conversation as a skill.
            prompt: Only used by the optional LLM hook (``self.llm``).

        Returns:
            ``{"results": [{"id", "memory", "event", ...}]}``.

        Raises:
            ValidationError: No scope id, a bad ``memory_type`` or a bad ``messages`` type.
            ValueError: A malformed id, date or empty text.
        """
        return self._run(self._op_add(
            messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata, timestamp=timestamp,
            expiration_date=expiration_date, infer=infer, memory_type=memory_type, prompt=prompt,
        ))

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory with this id, or ``None`` (as in Mem0) if there is none."""
        return self._run(self._op_get(memory_id))

    def get_all(
        self, *, filters: dict[str, Any] | None = None, top_k: int | None = None, show_expired: bool = False, **kwargs: Any
    ) -> dict[str, Any]:
        """Memories of a scope, oldest first: ``{"results": [...]}`` (at most ``top_k``, default 20).

        ``user_id=``/``agent_id=``/``run_id=``/``limit=`` (Mem0 1.x style) are accepted too.

        Raises:
            ValueError: No scope id, a bad ``top_k`` or an unknown filter operator.
        """
        return self._run(self._op_get_all(filters, top_k, show_expired, kwargs))

    def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        threshold: float | None = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Memories of a scope ranked for ``query``, best first: ``{"results": [{..., "score"}]}``.

        Args:
            query: What to look for.
            top_k: At most this many results (default 20); ``limit=`` also works.
            filters: Scope ids plus Mem0 metadata filters (``eq, ne, gt, gte, lt, lte, in, nin,
                contains, icontains, "*", AND/OR/NOT``).
            threshold: Drop results scoring below this (in [0, 1]); None keeps all.
            rerank: Accepted for compatibility; the kernel always ranks its own way.
            explain: Add ``score_details`` (which retrieval legs matched).
            reference_date: Resolve relative dates in the query against this date.
            show_expired: Include memories past their expiration date.

        Raises:
            ValueError: Empty query, no scope id, a bad ``threshold``/``top_k`` or filter.
        """
        return self._run(self._op_search(query, top_k, filters, threshold, reference_date, show_expired, explain, kwargs))

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, str]:
        """Change a memory's text, merge metadata into it, or set/clear (``None``) its expiration.

        Raises:
            MemoryNotFound: No memory with this id (a ``ValueError``, as in Mem0).
            ValueError: Nothing to change.
        """
        return self._run(self._op_update(memory_id, text, metadata, expiration_date, data))

    def delete(self, memory_id: str) -> dict[str, str]:
        """Delete one memory. Raises ``MemoryNotFound`` (a ``ValueError``) if there is none."""
        return self._run(self._op_delete(memory_id))

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict[str, str]:
        """Delete every memory of a scope. Raises ``ValueError`` without a scope id (use ``reset()``)."""
        return self._run(self._op_delete_all(user_id, agent_id, run_id))

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """ADD/UPDATE/DELETE rows of a memory, oldest first; ``[]`` for an unknown id."""
        return self._run(self._op_history(memory_id))

    def reset(self) -> None:
        """Wipe every memory, session and history row of the database file."""
        self._run(self._op_reset())

    def chat(self, query: str) -> Any:
        """Not part of open-source Mem0 either (it raises ``NotImplementedError`` there too)."""
        raise NotImplementedError("chat() is not implemented in open-source Mem0 or agentbase - call search() and your own LLM")

    @property
    def project(self) -> _Project:
        """Mem0 Platform project settings; ``update()`` raises ``ValueError`` as in open-source Mem0."""
        return _Project()

    def close(self) -> None:
        """Close the database if this object opened it; safe to call twice."""
        if self._owns_db:
            self.db.sync.close()

    def __enter__(self) -> Mem0Adapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMem0Adapter(_Mem0Base):
    """Mem0's ``AsyncMemory`` API over an ``AgentBase``; every call awaits the kernel's async methods.

        m = AsyncMem0Adapter(AgentBase("memory.db"))
        await m.add("I like pizza", user_id="alice")
        (await m.search("food preferences", user_id="alice"))["results"]
    """

    _async = True

    async def _run(self, op: _Op[_T]) -> _T:
        try:
            call = next(op)
            while True:
                name, args, kwargs = call
                try:
                    if name == "_llm":
                        result = await self._call_llm(*args)
                    else:
                        result = await getattr(self.db, name)(*args, **kwargs)
                except Exception as exc:
                    call = op.throw(exc)
                else:
                    call = op.send(result)
        except StopIteration as stop:
            return cast(_T, stop.value)

    async def _call_llm(self, messages: list[dict[str, Any]], llm: Any) -> str:
        if llm is not None:  # a LangChain chat model, as Mem0's AsyncMemory.add(llm=...) takes
            reply = await asyncio.to_thread(llm.invoke, _llm_messages(messages))
            return str(getattr(reply, "content", reply))
        return str(await asyncio.to_thread(self.llm.generate_response, messages=_llm_messages(messages)))

    async def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        llm: Any = None,
    ) -> dict[str, Any]:
        """Async ``Mem0Adapter.add``; ``llm`` (a LangChain chat model) only summarises procedural memory."""
        return await self._run(self._op_add(
            messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata, timestamp=timestamp,
            expiration_date=expiration_date, infer=infer, memory_type=memory_type, prompt=prompt, llm=llm,
        ))

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        """Async ``Mem0Adapter.get``."""
        return await self._run(self._op_get(memory_id))

    async def get_all(
        self, *, filters: dict[str, Any] | None = None, top_k: int | None = None, show_expired: bool = False, **kwargs: Any
    ) -> dict[str, Any]:
        """Async ``Mem0Adapter.get_all``."""
        return await self._run(self._op_get_all(filters, top_k, show_expired, kwargs))

    async def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        threshold: float | None = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Async ``Mem0Adapter.search``."""
        return await self._run(self._op_search(query, top_k, filters, threshold, reference_date, show_expired, explain, kwargs))

    async def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, str]:
        """Async ``Mem0Adapter.update``."""
        return await self._run(self._op_update(memory_id, text, metadata, expiration_date, data))

    async def delete(self, memory_id: str) -> dict[str, str]:
        """Async ``Mem0Adapter.delete``."""
        return await self._run(self._op_delete(memory_id))

    async def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict[str, str]:
        """Async ``Mem0Adapter.delete_all``."""
        return await self._run(self._op_delete_all(user_id, agent_id, run_id))

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Async ``Mem0Adapter.history``."""
        return await self._run(self._op_history(memory_id))

    async def reset(self) -> None:
        """Async ``Mem0Adapter.reset``."""
        await self._run(self._op_reset())

    async def chat(self, query: str) -> Any:
        """Not part of open-source Mem0 either (it raises ``NotImplementedError`` there too)."""
        raise NotImplementedError("chat() is not implemented in open-source Mem0 or agentbase - call search() and your own LLM")

    @property
    def project(self) -> _AsyncProject:
        """Mem0 Platform project settings; ``await update()`` raises ``ValueError``."""
        return _AsyncProject()

    def close(self) -> None:
        """Close the database if this object opened it (sync, as in Mem0); safe to call twice."""
        if self._owns_db:
            self.db.sync.close()

    async def __aenter__(self) -> AsyncMem0Adapter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._owns_db:
            await self.db.close()


# ----------------------------------------------------------------------------------------------
# Mem0's config dict -> AgentBase


_DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_REMOTE_KEYS = ("host", "url", "uri", "api_key", "connection_string", "cluster_url", "endpoint", "client")
_EMBEDDER_URL_KEYS = ("openai_base_url", "ollama_base_url", "lmstudio_base_url", "huggingface_base_url", "base_url")


def _config_dict(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    dump = getattr(config, "model_dump", None)  # a mem0 MemoryConfig
    if callable(dump):
        return dict(dump(exclude_unset=True, warnings=False))
    raise TypeError(f"config must be a dict (Mem0's config shape), not {type(config).__name__}")


def _section(config: Mapping[str, Any], name: str) -> tuple[str | None, dict[str, Any]]:
    section = config.get(name)
    if section is None:
        return None, {}
    if not isinstance(section, Mapping):
        raise InvalidArgument(f"config[{name!r}] must be a dict with 'provider' and 'config', got {section!r}")
    provider = section.get("provider")
    inner = section.get("config") or {}
    if not isinstance(inner, Mapping):
        raise InvalidArgument(f"config[{name!r}]['config'] must be a dict, got {inner!r}")
    return (str(provider) if provider is not None else None), dict(inner)


def _db_path(config: Mapping[str, Any]) -> str | None:
    for key in ("db_path", "path"):
        if config.get(key):
            return str(fspath(config[key]))
    _, store = _section(config, "vector_store")
    for key in ("db_path", "path"):
        if store.get(key):
            path = str(fspath(store[key]))
            if path == ":memory:" or path.endswith(_DB_SUFFIXES):
                return path
            # Mem0's local stores take a directory (Qdrant's default is /tmp/qdrant) and create it.
            Path(path).mkdir(parents=True, exist_ok=True)
            return str(Path(path) / "agentbase.db")
    return None


def _embedder_spec(config: Mapping[str, Any]) -> Any:
    """The kernel embedder spec (``get_embedder`` string) for Mem0's ``embedder`` section."""
    provider, conf = _section(config, "embedder")
    if provider is None:
        return "auto"
    model = conf.get("model")
    url = next((conf[key] for key in _EMBEDDER_URL_KEYS if conf.get(key)), None)
    if provider == "agentbase":  # our own escape hatch: a spec string or an Embedder object
        return conf["embedder"] if "embedder" in conf else conf.get("spec", "auto")
    if provider == "huggingface":
        if url:  # a text-embeddings-inference server speaks the OpenAI embeddings API
            return f"openai:{model or 'tei'}@{url}"
        return f"sentence-transformers:{model}" if model else "minilm"
    if provider == "fastembed":
        return f"fastembed:{model}" if model else "fastembed:BAAI/bge-small-en-v1.5"
    if provider == "openai":
        return f"openai:{model or 'text-embedding-3-small'}@{url or 'https://api.openai.com/v1'}"
    if provider == "ollama":
        base = str(url or "http://localhost:11434").rstrip("/")
        return f"openai:{model or 'nomic-embed-text'}@{base if base.endswith('/v1') else base + '/v1'}"
    if provider == "lmstudio":
        return f"openai:{model}@{url or 'http://localhost:1234/v1'}"
    raise InvalidArgument(
        f"embedder provider {provider!r} is not supported by agentbase - use huggingface, fastembed, openai, "
        "ollama or lmstudio, or {'provider': 'agentbase', 'config': {'spec': 'minilm'}}"
    )


def _embedder(config: Mapping[str, Any]) -> Any:
    """The spec, or an OpenAI-compatible embedder when the section carries a key or a size.

    A spec string has no slot for an API key; Mem0's OpenAI embedder also falls back to
    ``$OPENAI_API_KEY``, so the object is built here from the kernel's own embedder class.
    """
    spec = _embedder_spec(config)
    provider, conf = _section(config, "embedder")
    if not isinstance(spec, str) or not spec.startswith("openai:"):
        return spec
    key = conf.get("api_key") or (os.environ.get("OPENAI_API_KEY") if provider == "openai" else None)
    dims = conf.get("embedding_dims")
    if key is None and dims is None:
        return spec
    from agentbase_kernel.text.embedders import OpenAICompatibleEmbedder

    model, _, base_url = spec[len("openai:"):].partition("@")
    return OpenAICompatibleEmbedder(model, base_url=base_url, api_key=key, dim=int(dims) if dims else None)


def _open(config: Mapping[str, Any]) -> AgentBase:
    provider, store = _section(config, "vector_store")
    if provider is not None and not any(store.get(k) for k in ("path", "db_path")) and any(store.get(k) for k in _REMOTE_KEYS):
        warnings.warn(
            f"vector_store {provider!r} points at a server or a client object; agentbase keeps vectors in its own "
            "SQLite file instead and never contacts it",
            UserWarning,
            stacklevel=3,
        )
    if config.get("reranker"):
        warnings.warn("config['reranker'] is ignored: agentbase ranks with its own zero-LLM reranker", UserWarning, stacklevel=3)
    if config.get("graph_store"):
        warnings.warn("config['graph_store'] is ignored, as open-source Mem0 2.x ignores it", UserWarning, stacklevel=3)
    _section(config, "llm")  # shape check only: the LLM is never called unless self.llm is set
    return AgentBase(_db_path(config), embedder=_embedder(config))


class Memory(Mem0Adapter):
    """Drop-in for ``mem0.Memory``: same methods and result shapes, one SQLite file, no LLM, no network.

        m = Memory()                      # or Memory.from_config({"vector_store": {...}, ...})
        m.add("I like pizza", user_id="alice")
        m.search("food preferences", filters={"user_id": "alice"})
    """

    def __init__(self, config: Any = None) -> None:
        conf = _config_dict(config)
        super().__init__(_open(conf), config=conf, owns_db=True)

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        """Build from Mem0's config dict (``vector_store``, ``embedder``, ``llm``, ``history_db_path``...).

        Raises:
            ValueError: A section has the wrong shape or an embedder provider agentbase cannot run.
        """
        if not isinstance(config_dict, Mapping):
            raise InvalidArgument(f"from_config() takes a dict, not {type(config_dict).__name__}")
        return cls(config_dict)


class AsyncMemory(AsyncMem0Adapter):
    """Drop-in for ``mem0.AsyncMemory``: Mem0's async API over one SQLite file, no LLM, no network.

        m = AsyncMemory()
        await m.add("I like pizza", user_id="alice")
        await m.search("food preferences", filters={"user_id": "alice"})
    """

    def __init__(self, config: Any = None) -> None:
        conf = _config_dict(config)
        super().__init__(_open(conf), config=conf, owns_db=True)

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> AsyncMemory:
        """Build from Mem0's config dict; see ``Memory.from_config``."""
        if not isinstance(config_dict, Mapping):
            raise InvalidArgument(f"from_config() takes a dict, not {type(config_dict).__name__}")
        return cls(config_dict)
