"""Kernel entries <-> Mem0's memory dicts (``id, memory, hash, metadata, score, created_at, ...``)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from datetime import date, datetime, timedelta, timezone
from typing import Any

from agentbase_kernel import AddResult, Entry, HistoryEvent

from ._args import content, expires_at

PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role", "attributed_to", "expiration_date")
_UNSET: Any = object()

def expiration_date(entry: Entry) -> str | None:
    if entry.expires_at is None:
        return None
    return (entry.expires_at.astimezone(timezone.utc) - timedelta(microseconds=1)).date().isoformat()



def iso(value: datetime | None) -> str | None:
    return value.astimezone(timezone.utc).isoformat() if value is not None else None


def payload_of(entry: Entry) -> dict[str, Any]:
    """The entry as Mem0 stores a point payload: custom metadata flat, plus the core keys."""
    payload = dict(entry.metadata)
    fact = payload.get("derived") == "fact"  # the kernel marks extracted facts this way
    if fact:
        del payload["derived"]
    payload.update(
        data=entry.text,
        hash=entry.content_hash or hashlib.md5(entry.text.encode()).hexdigest(),
        created_at=iso(entry.created_at),
        updated_at=iso(entry.updated_at or entry.created_at),
    )
    promoted = {
        "user_id": entry.user_id,
        "agent_id": entry.agent_id,
        "run_id": entry.session_id,
        "actor_id": entry.actor,
        "role": None if fact else entry.role,
        "attributed_to": entry.role if fact else None,
        "expiration_date": expiration_date(entry),
    }
    payload.update({key: value for key, value in promoted.items() if value is not None})
    return payload


def to_record(
    text: str,
    *,
    scope: Mapping[str, Any],
    metadata: Mapping[str, Any],
    role: str | None,
    actor: str | None = None,
    expires: date | None = None,
    created_at: datetime | None = None,
    infer: bool = False,
    context_type: str = "memory",
) -> dict[str, Any]:
    """Keyword arguments of ``add_memory`` for one Mem0 memory.

    ``actor_id`` goes into the metadata too, as in Mem0's payload, so filters can reach it.
    """
    return {
        "text": text,
        **scope,
        "metadata": {**metadata, **({"actor_id": actor} if actor else {})} or None,
        "role": role,
        "actor": actor,
        "expires_at": expires_at(expires),
        "created_at": created_at,
        "infer": infer,
        "context_type": context_type,
        "entry_id": str(uuid.uuid4()),
    }


def from_record(entry: Entry, *, score: Any = _UNSET, with_score: bool = True) -> dict[str, Any]:
    """One Mem0 memory dict: ``id, memory, hash, metadata, score, created_at, updated_at`` + promoted keys."""
    payload = payload_of(entry)
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
    for key in PROMOTED:
        if key in payload:
            item[key] = payload[key]
    core = {"data", "hash", "created_at", "updated_at", "id", *PROMOTED}
    extra = {key: value for key, value in payload.items() if key not in core}
    item["metadata"] = extra or None
    return item


def history_row(event: HistoryEvent, created_at: str | None) -> dict[str, Any]:
    return {
        "id": event.id,
        "memory_id": event.entry_id,
        "old_memory": event.old_value,
        "new_memory": event.new_value,
        "event": event.event,
        "created_at": created_at or iso(event.created_at),
        "updated_at": iso(event.created_at),
        "is_deleted": event.event == "DELETE",
        "actor_id": event.actor,
        "role": event.role,
    }


def add_row(result: AddResult, message: Mapping[str, Any] | None) -> dict[str, Any]:
    # An exact duplicate is not stored twice: it is reported with the existing id as "NONE" (1.x's word).
    event = {"ADD": "ADD", "NOOP": "NONE"}.get(result.event, result.event)
    row: dict[str, Any] = {"id": result.entry.id, "memory": result.entry.text, "event": event}
    if message is not None:
        row["actor_id"] = message.get("name") or None
        row["role"] = message["role"]
    return row


def transcript(messages: list[dict[str, Any]]) -> str:
    lines = [f"{m['role']}: {text}" for m in messages if (text := content(m)) is not None]
    return "\n".join(lines)

