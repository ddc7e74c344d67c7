"""Backend-neutral row shaping shared by every store (the SQL core ``store/sql/`` and the in-memory
``store/memory/``): the portable format's field lists and times, an imported entry's derived fields,
a stored ``entries`` row turned into an :class:`Entry`, and the checks of a conflict's resolution.

No SQL here: each backend converts values to and from its own column types (text times and JSON
text in SQLite, ``timestamptz`` and ``jsonb`` in PostgreSQL) and passes those converters in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ..errors import InvalidArgument
from ..records import ContextType, Entry, Message, Scope, Session
from ..rules.importance import rule_importance
from .base import default_trust, iso, parse_iso

__all__ = ["ENTRY_FIELDS", "HISTORY_FIELDS", "JSON_ENTRY_FIELDS", "MESSAGE_FIELDS", "PAGE", "SESSION_FIELDS",
           "TIME_FIELDS", "complete_import_entry", "conflict_loser", "entry_from_row", "export_entry_record",
           "export_time", "message_from_row", "new_entry_values", "scope_key", "session_from_row"]

PAGE = 500

ENTRY_FIELDS = (
    "id", "context_type", "category", "l0_abstract", "l1_overview", "l2_full", "tags", "scope_level",
    "user_id", "agent_id", "project_id", "session_id", "role", "actor", "confidence", "content_hash",
    "metadata", "event_dates", "date_min", "date_max", "flags", "subject_key", "search_text",
    "search_context", "created_at", "updated_at", "valid_from", "invalid_at", "expires_at", "superseded_by",
    "importance", "archived_at",
    "trust", "source", "written_by",
)
JSON_ENTRY_FIELDS = ("tags", "metadata", "event_dates", "flags")
TIME_FIELDS = ("created_at", "updated_at", "valid_from", "invalid_at", "expires_at", "committed_at", "observed_at",
               "archived_at")
HISTORY_FIELDS = ("id", "event", "old_value", "new_value", "created_at", "actor", "role")
SESSION_FIELDS = ("id", "user_id", "agent_id", "project_id", "metadata", "created_at", "updated_at", "committed_at",
                  "summary_entry_id")
MESSAGE_FIELDS = ("id", "session_id", "seq", "role", "content", "name", "metadata", "payload", "status",
                  "created_at", "entry_id")


_OURS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")


def export_time(value: Any, name: str) -> str | None:
    """An exported time as our fixed-width UTC text, from any ISO 8601 string with an offset (or
    none, read as UTC); ``InvalidArgument`` naming ``name`` for anything else."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be an ISO 8601 string, got {value!r:.80}")
    if _OURS.fullmatch(value):  # already in our form (every agentbase export): skip the round trip
        return value
    try:
        return iso(parse_iso(value))
    except ValueError:
        raise InvalidArgument(f"{name} is not an ISO 8601 time: {value!r:.80}") from None


def conflict_loser(found: list[dict[str, Any]], conflict_id: str, keep: str) -> tuple[dict[str, Any], str]:
    """``(conflict, the side not kept)`` of a resolution (``found``: ``list_conflicts`` of its id);
    ``InvalidArgument`` for an unknown or closed conflict or a ``keep`` not in it."""
    if not found:
        raise InvalidArgument(f"No conflict with id {conflict_id!r}", param="conflict_id")
    conflict = found[0]
    if conflict["status"] != "open":
        raise InvalidArgument(f"Conflict {conflict_id!r} is already {conflict['status']}",
                              param="conflict_id", code="conflict_closed")
    if keep not in conflict["entry_ids"]:
        raise InvalidArgument(f"keep must be one of the conflict's entries {conflict['entry_ids']}, "
                              f"got {keep!r}", param="keep")
    return conflict, next(e for e in conflict["entry_ids"] if e != keep)


def scope_key(scope: Scope) -> str:
    """One text per scope, and a different text for every different scope (a JSON array of the ids).

    Dedup and supersession are unique per ``(scope_key, ...)``; joining the ids with a separator let
    ``("a\\x1fb", "c")`` and ``("a", "b\\x1fc")`` share a key. Both backends store
    the same key, so an export moves between them.
    """
    return json.dumps([scope.user_id, scope.agent_id, scope.project_id, scope.session_id],
                      ensure_ascii=False, separators=(",", ":"))


def complete_import_entry(values: dict[str, Any], rec: dict[str, Any],
                          json_value: Callable[[Any], Any]) -> dict[str, Any]:
    """Fill an imported entry's derived columns in ``values`` (times already in the backend's form).

    JSON fields get their empty default and go through ``json_value`` (the backend's JSON column
    value); scope level and key, the dedup key, and what an older export lacks (importance by the
    ingest rule, trust by role, source ``import``) are set here. Returns ``values``.
    """
    for name in JSON_ENTRY_FIELDS:
        values[name] = json_value(values[name] if values[name] is not None else ({} if name == "metadata" else []))
    scope = Scope(values["user_id"], values["agent_id"], values["project_id"], values["session_id"])
    values["scope_level"] = scope.level.value
    values["scope_key"] = scope_key(scope)
    values["dedup_key"] = (values["content_hash"] if rec.get("dedup", True)
                           else f"{values['content_hash']}:{values['id']}")
    values["search_context"] = values["search_context"] or ""
    values["confidence"] = 1.0 if values["confidence"] is None else values["confidence"]
    if values["importance"] is None:  # an export made before importance existed: the ingest rule
        values["importance"] = rule_importance(
            category=values["category"], role=values["role"],
            derived=(rec.get("metadata") or {}).get("derived") == "fact", entities=len(rec.get("entities") or ()))
    # provenance (rules/trust.py): an export keeps its trust; older ones get their role's
    if values["trust"] is None:
        values["trust"] = default_trust(values["role"])
    values["source"] = values["source"] or "import"
    return values


def export_entry_record(rec: dict[str, Any], dedup: Any, history: Mapping[str, list[Any]],
                        entities: Mapping[str, list[Any]], links: Mapping[str, list[list[Any]]]) -> dict[str, Any]:
    """An exported entry record: its columns (``rec``, already as data) with its dedup flag, history
    events, entities and entity links (sorted, so both backends write the same file)."""
    rec["dedup"] = bool(dedup)
    rec["history"] = history.get(rec["id"], [])
    rec["entities"] = entities.get(rec["id"], [])
    rec["entity_links"] = sorted(links.get(rec["id"], []))
    return rec


def _same(value: Any) -> Any:
    return value


def new_entry_values(row: Mapping[str, Any], entry_id: str, now: Any, *, json_value: Callable[[Any], Any],
                     when: Callable[[Any], Any], text: Callable[[Any], Any] = _same) -> dict[str, Any]:
    """The ``entries`` columns of a new entry from an ingest row, in the order both backends insert them.

    ``now`` is the creation time in the backend's form; ``json_value``, ``when`` and ``text`` make a
    JSON, time and text column value for the backend.
    """
    scope = Scope(row.get("user_id"), row.get("agent_id"), row.get("project_id"), row.get("session_id"))
    return {
        "id": entry_id,
        "context_type": row.get("context_type", "memory"),
        "category": row.get("category"),
        "l0_abstract": text(row["l0_abstract"]),
        "l1_overview": text(row["l1_overview"]),
        "l2_full": text(row["l2_full"]),
        "tags": json_value(list(row.get("tags") or [])),
        "scope_level": scope.level.value,
        "user_id": scope.user_id, "agent_id": scope.agent_id,
        "project_id": scope.project_id, "session_id": scope.session_id,
        "scope_key": scope_key(scope),
        "role": row.get("role"), "actor": row.get("actor"),
        "confidence": float(row.get("confidence", 1.0)),
        "content_hash": row["content_hash"],
        "dedup_key": row["content_hash"] if row.get("dedup", True) else f"{row['content_hash']}:{entry_id}",
        "metadata": json_value(row.get("metadata") or {}),
        "event_dates": json_value(list(row.get("event_dates") or [])),
        "date_min": row.get("date_min"), "date_max": row.get("date_max"),
        "flags": json_value(list(row.get("flags") or [])),
        "subject_key": row.get("subject_key"), "importance": row.get("importance"),
        "search_text": text(row["search_text"]), "search_context": text(row.get("search_context") or ""),
        "created_at": now, "updated_at": now,
        "valid_from": when(row.get("valid_from")),
        "invalid_at": None,
        "expires_at": when(row.get("expires_at")),
        "trust": float(row.get("trust", 1.0)), "source": row.get("source"), "written_by": row.get("written_by"),
    }


def _text(value: Any, column: str) -> Any:
    return value


def _strings(value: Any) -> list[str]:
    """A stored list of strings as such: anything else an older import stored unchecked is left out."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _unit(value: Any, default: float) -> float:
    """A stored number in [0, 1]; a non-finite or out-of-range one (never written by the API) reads as ``default``."""
    return float(value) if isinstance(value, (int, float)) and 0 <= value <= 1 else default


_CONTEXT_TYPES: dict[Any, ContextType] = {t.value: t for t in ContextType}
_SCOPES: dict[tuple[str | None, ...], Scope] = {}  # a search reads many rows of one scope: one frozen Scope each


def _scope_of(user_id: str | None, agent_id: str | None, project_id: str | None, session_id: str | None) -> Scope:
    key = (user_id, agent_id, project_id, session_id)
    scope = _SCOPES.get(key)
    if scope is None:
        if len(_SCOPES) >= 4096:
            _SCOPES.clear()
        scope = _SCOPES[key] = Scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id)
    return scope


def entry_from_row(row: Any, *, data: Callable[[Any], Any] = _same,
                   when: Callable[[Any], datetime | None] = _same,
                   text: Callable[[Any, str], str] = _text) -> Entry:
    """An :class:`Entry` from the ``entries`` columns every backend selects, in that order.

    ``data`` reads a JSON column, ``when`` a time column and ``text`` a NOT NULL text column (with
    its name for the error), each in the backend's stored form. Values the API never writes (tags
    that are not strings, metadata that is not an object, importance of Infinity - stored by an
    import before imports were checked) are read as the nearest valid value, so no reader breaks.
    """
    (_rid, id_, ctype, category, l0, l1, l2, tags, user_id, agent_id, project_id, session_id, role,
     actor, confidence, chash, metadata, event_dates, flags, created, updated, valid_from,
     invalid_at, expires_at, superseded_by, importance, archived_at, trust, source, written_by) = row
    stored_trust = _unit(trust, -1.0)  # -1: none valid, the role's default (looked up only then)
    return Entry(
        id=id_, l2_full=text(l2, "entries.l2_full"), l0_abstract=text(l0, "entries.l0_abstract"),
        l1_overview=text(l1, "entries.l1_overview"), context_type=_CONTEXT_TYPES.get(ctype) or ContextType(ctype),
        category=category, tags=_strings(data(tags)),
        scope=_scope_of(user_id, agent_id, project_id, session_id),
        role=role, actor=actor, confidence=_unit(confidence, 1.0), content_hash=chash,
        metadata=meta if isinstance(meta := data(metadata), dict) else {}, created_at=when(created),
        updated_at=when(updated), valid_from=when(valid_from), invalid_at=when(invalid_at),
        expires_at=when(expires_at), event_dates=_strings(data(event_dates)),
        flags=_strings(data(flags)), superseded_by=superseded_by,
        importance=_unit(importance, 0.5), archived_at=when(archived_at),
        trust=stored_trust if stored_trust >= 0 else default_trust(role), source=source, written_by=written_by,
    )


def session_from_row(row: Any, *, data: Callable[[Any], Any] = _same,
                     when: Callable[[Any], datetime | None] = _same) -> Session:
    """A :class:`Session` from ``id, user_id, agent_id, project_id, metadata, created_at, updated_at,
    committed_at, summary_entry_id`` (``data`` reads the JSON column, ``when`` a time column)."""
    return Session(id=row[0], scope=Scope(row[1], row[2], row[3]), metadata=data(row[4]),
                   created_at=when(row[5]), updated_at=when(row[6]),
                   committed_at=when(row[7]), summary_entry_id=row[8])


def message_from_row(row: Any, *, data: Callable[[Any], Any] = _same,
                     when: Callable[[Any], datetime | None] = _same,
                     text: Callable[[Any, str], str] = _text) -> Message:
    """A :class:`Message` from ``id, session_id, seq, role, content, name, metadata, payload, status,
    created_at, entry_id`` (converters as for :func:`entry_from_row`)."""
    return Message(id=row[0], session_id=row[1], seq=row[2], role=row[3], content=text(row[4], "messages.content"),
                   name=row[5], metadata=data(row[6]), payload=None if row[7] is None else data(row[7]),
                   status=row[8], created_at=when(row[9]), entry_id=row[10])
