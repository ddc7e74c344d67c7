"""Kernel records -> the JSON objects a model reads in tool results (one function per record)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentbase_kernel import Entry, HistoryEvent, Hit, Message, Session

__all__ = ["entry_json", "event_json", "hit_json", "message_json", "session_json"]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _compact(fields: dict[str, Any]) -> dict[str, Any]:
    """Drop empty fields: every token a tool result spends is a token of the model's context."""
    return {k: v for k, v in fields.items() if v not in (None, [], {})}


def entry_json(entry: Entry) -> dict[str, Any]:
    return {"id": entry.id, "text": entry.l2_full, **_compact({
        "category": entry.category, "tags": [t for t in entry.tags if not t.startswith("ner_")],
        "entities": [t[4:] for t in entry.tags if t.startswith("ner_")], "metadata": entry.metadata,
        "role": entry.role, "context_type": entry.context_type.value,
        "user_id": entry.user_id, "agent_id": entry.agent_id, "session_id": entry.session_id,
        "created_at": _iso(entry.created_at), "updated_at": _iso(entry.updated_at),
        "expires_at": _iso(entry.expires_at), "invalid_at": _iso(entry.invalid_at),
        "superseded_by": entry.superseded_by})}


def hit_json(hit: Hit) -> dict[str, Any]:
    entry = hit.entry
    return {"id": hit.id, "content": hit.content, "score": round(hit.score, 4), "matched_by": list(hit.matched_by),
            **_compact({
                "provenance": [_compact({"message_id": p.message_id, "session_id": p.session_id, "role": p.role})
                               for p in hit.provenance],
                "category": entry.category, "tags": [t for t in entry.tags if not t.startswith("ner_")],
                "metadata": entry.metadata, "role": entry.role, "session_id": entry.session_id,
                "created_at": _iso(entry.created_at)})}


def event_json(event: HistoryEvent) -> dict[str, Any]:
    return {"event": event.event, "created_at": _iso(event.created_at), **_compact({
        "old_value": event.old_value, "new_value": event.new_value, "actor": event.actor, "role": event.role})}


def message_json(message: Message) -> dict[str, Any]:
    return {"id": message.id, "role": message.role, "content": message.content, **_compact({
        "name": message.name, "metadata": message.metadata, "created_at": _iso(message.created_at),
        "memory_id": message.entry_id, "status": None if message.status == "active" else message.status})}


def session_json(session: Session) -> dict[str, Any]:
    return {"id": session.id, **_compact({
        "user_id": session.scope.user_id, "agent_id": session.scope.agent_id, "metadata": session.metadata,
        "created_at": _iso(session.created_at), "updated_at": _iso(session.updated_at),
        "summary_memory_id": session.summary_entry_id})}
