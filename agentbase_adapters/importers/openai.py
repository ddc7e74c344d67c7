"""OpenAI threads and conversations (JSON, as the API lists them) -> agentbase sessions.

Accepted: a thread or conversation object with its messages / items inlined (``"messages"`` or
``"items"``: a list, or the API's ``{"object": "list", "data": [...]}`` page), a bare list page of
thread messages (the session is their ``thread_id``), or a JSON array / JSON Lines of these. The API
lists newest first by default: messages are put in time order (``created_at``); conversation items
carry no time, so a page is read newest first unless it says ``"order": "asc"``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentbase_kernel import InvalidArgument

from ._records import chat_message, header, iso_time, session, text_of

__all__ = ["openai_json_records"]

_KEEP = ("assistant_id", "run_id", "attachments", "status", "type")


def _documents(file: Path) -> list[Any]:
    text = file.read_text(encoding="utf-8")
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    docs = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                docs.append(json.loads(line))
            except ValueError as exc:
                raise InvalidArgument(f"{file} line {n}: not JSON ({exc})") from None
    return docs


def _page(value: Any) -> tuple[list[dict[str, Any]], str | None]:
    """The items of a list page (or a plain list) and its declared order, if any."""
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        return value["data"], value.get("order")
    if isinstance(value, list):
        return value, None
    raise InvalidArgument(f"Expected a list of messages or a list page, got {type(value).__name__}")


def _ordered(items: list[dict[str, Any]], order: str | None) -> list[dict[str, Any]]:
    """Oldest first: by ``created_at`` when the items have it, else by the page's order (desc by default)."""
    if order != "asc":
        items = list(reversed(items))
    if all(isinstance(i.get("created_at"), (int, float)) for i in items):
        items = sorted(items, key=lambda i: i["created_at"])  # stable: equal seconds keep page order
    return items


def _conversation(sid: str, doc: dict[str, Any], items: list[dict[str, Any]],
                  user_id: str | None) -> Iterator[dict[str, Any]]:
    """A session kept as the OpenAI adapter keeps one: its public metadata (and tool resources)
    under ``metadata["openai"]``, its scope from ``--user-id`` or the metadata's ``user_id`` / ``agent_id``."""
    raw_meta = doc.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    state: dict[str, Any] = {"metadata": meta}
    if doc.get("tool_resources"):
        state["tool_resources"] = doc["tool_resources"]
    created = doc.get("created_at")
    messages = [i for i in items if i.get("type", "message") == "message" and "role" in i]
    times = [iso_time(m.get("created_at")) for m in messages]
    yield session(sid, user_id=user_id or meta.get("user_id"), agent_id=meta.get("agent_id"),
                  metadata={"openai": state}, times=[iso_time(created), *times])
    for item, at in zip(messages, times):
        extra = {k: item[k] for k in _KEEP if item.get(k) not in (None, [], "")}
        if isinstance(item.get("metadata"), dict) and item["metadata"]:
            extra["metadata"] = item["metadata"]
        yield chat_message(sid, message_id=item.get("id"), role=str(item["role"]), content=text_of(item.get("content")),
                           created_at=at or iso_time(created), metadata={"openai": extra} if extra else {})


def _walk(doc: Any, user_id: str | None) -> Iterator[dict[str, Any]]:
    if isinstance(doc, list):
        for part in doc:
            yield from _walk(part, user_id)
        return
    if not isinstance(doc, dict):
        raise InvalidArgument(f"Expected a thread, a conversation or a list page, got {type(doc).__name__}")
    kind = doc.get("object")
    if kind in ("thread", "conversation"):
        raw = doc.get("messages") if kind == "thread" else doc.get("items", doc.get("messages"))
        if raw is None:
            raise InvalidArgument(f"{kind} {doc.get('id')!r} has no {'messages' if kind == 'thread' else 'items'} - "
                                  "inline the list the API returned for it")
        items, order = _page(raw)
        yield from _conversation(str(doc["id"]), doc, _ordered(items, order), user_id)
        return
    if kind == "list" or "data" in doc:
        items, order = _page(doc)
        by_thread: dict[str, list[dict[str, Any]]] = {}
        for item in items:
            tid = item.get("thread_id") or item.get("conversation_id")
            if not tid:
                raise InvalidArgument("A bare list page needs messages with thread_id; wrap conversation items as "
                                      '{"object": "conversation", "id": ..., "items": <page>}')
            by_thread.setdefault(str(tid), []).append(item)
        for tid, part in by_thread.items():
            yield from _conversation(tid, {}, _ordered(part, order), user_id)
        return
    raise InvalidArgument(f"Unrecognised OpenAI object {kind!r} - expected a thread, a conversation or a list page")


def openai_json_records(path: str | os.PathLike[str], *, user_id: str | None = None) -> Iterator[dict[str, Any]]:
    """Records of an OpenAI threads / conversations JSON (or JSON Lines) file."""
    file = Path(path)
    if not file.is_file():
        raise InvalidArgument(f"{file} is not a file")
    docs = _documents(file)
    yield header("openai-json")
    for doc in docs:
        yield from _walk(doc, user_id)
