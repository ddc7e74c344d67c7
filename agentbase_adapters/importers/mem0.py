"""Mem0 OSS -> agentbase: every memory of a Mem0 store, with its scope, metadata, times and history.

Reads the store named by the same config dict (or JSON file) the user passes to
``Memory.from_config``, through Mem0's own vector-store classes (so any provider Mem0 supports is
read the way Mem0 reads it: local Qdrant, FAISS, Chroma ...), and the history SQLite database
read-only. No LLM and no embedder are built: the texts are re-embedded by agentbase.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentbase_kernel import InvalidArgument

from .._require import require
from ._records import header, iso_time

__all__ = ["mem0_records"]

_CORE = {"data", "hash", "created_at", "updated_at", "id", "text_lemmatized", "attributed_to", "user_id", "agent_id",
         "run_id", "actor_id", "role", "expiration_date"}
_ALL = 2**31 - 1


def read_config(config: dict[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    """The config dict, from a dict or a JSON file (no Mem0 needed)."""
    if not isinstance(config, dict):
        path = Path(config)
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidArgument(f"Cannot read the Mem0 config {path}: {exc}") from None
        if not isinstance(config, dict):
            raise InvalidArgument(f"{path} must hold a JSON object (the dict passed to Memory.from_config)")
    return config


def _config(config: dict[str, Any] | str | os.PathLike[str]) -> Any:
    config = read_config(config)
    require("mem0", extra="mem0")
    from mem0.configs.base import MemoryConfig
    from pydantic import ValidationError

    try:
        return MemoryConfig(**config)
    except ValidationError as exc:
        raise InvalidArgument(f"Not a valid Mem0 config: {exc}") from None


def _history(path: str) -> dict[str, list[dict[str, Any]]]:
    """Every history row by memory id (Mem0 keeps one small table; read-only, never created)."""
    if path == ":memory:" or not Path(path).is_file():
        return {}
    conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'").fetchone()
        if not has:
            return {}
        rows = conn.execute("SELECT id, memory_id, old_memory, new_memory, event, created_at, updated_at, actor_id, "
                            "role FROM history ORDER BY created_at, updated_at").fetchall()
    finally:
        conn.close()
    out: dict[str, list[dict[str, Any]]] = {}
    for hid, mid, old, new, event, created, updated, actor, role in rows:
        if event not in ("ADD", "UPDATE", "DELETE"):
            continue
        out.setdefault(mid, []).append({"id": hid, "event": event, "old_value": old, "new_value": new,
                                        "created_at": iso_time(updated if event != "ADD" and updated else created),
                                        "actor": actor, "role": role})
    return out


def _points(config: Any) -> list[Any]:
    from mem0.utils.factory import VectorStoreFactory

    store = VectorStoreFactory.create(config.vector_store.provider, config.vector_store.config)
    listed = store.list(filters={}, top_k=_ALL)
    if isinstance(listed, (list, tuple)) and listed and isinstance(listed[0], (list, tuple)):
        listed = listed[0]
    points = list(listed or [])
    close = getattr(getattr(store, "client", None), "close", None)
    if callable(close):
        close()
    return points


def _expiry(value: Any) -> str | None:
    """Mem0 hides a memory after its expiration day; the Mem0 adapter stores that as the next midnight."""
    if not value:
        return None
    from datetime import date

    from ..mem0._args import expires_at

    try:
        day = date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
    return iso_time(expires_at(day))


def mem0_records(config: dict[str, Any] | str | os.PathLike[str], *, user_id: str | None = None
                 ) -> Iterator[dict[str, Any]]:
    """Header, then one ``memory`` record per Mem0 memory and one ``history`` record per event of a
    deleted memory. ``user_id`` is given to memories that have no user, agent or run id."""
    cfg = _config(config)
    history = _history(cfg.history_db_path)
    yield header("mem0")
    seen: set[str] = set()
    for point in sorted(_points(cfg), key=lambda p: ((p.payload or {}).get("created_at") or "", str(p.id))):
        payload = dict(point.payload or {})
        mid = str(point.id)
        seen.add(mid)
        scope = {"user_id": payload.get("user_id"), "agent_id": payload.get("agent_id"),
                 "session_id": payload.get("run_id")}
        if not any(scope.values()):
            if user_id is None:
                raise InvalidArgument(f"Mem0 memory {mid} has no user_id, agent_id or run_id - pass user_id= "
                                      "(--user-id) to give it one")
            scope["user_id"] = user_id
        role = payload.get("role") or payload.get("attributed_to")
        yield {"type": "memory", "id": mid, "text": str(payload.get("data", "")), **scope,
               "metadata": {k: v for k, v in payload.items() if k not in _CORE},
               "role": role if role in ("user", "assistant") else "user", "actor": payload.get("actor_id"),
               "created_at": iso_time(payload.get("created_at")),
               "updated_at": iso_time(payload.get("updated_at") or payload.get("created_at")),
               "expires_at": _expiry(payload.get("expiration_date")),
               "history": history.get(mid) or None}
    for mid, events in history.items():
        if mid in seen:
            continue
        for event in events:  # a deleted memory: its events stay readable through history()
            yield {"type": "history", "entry_id": mid, **event}
