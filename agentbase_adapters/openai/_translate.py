"""OpenAI messages and conversation items <-> kernel messages.

A thread message keeps its OpenAI content blocks in ``message.payload`` (``object:
"thread.message"``); a conversation item is kept verbatim (``object: "conversation.item"``).
Messages other adapters wrote come back as plain text messages with their role.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from agentbase_kernel import Message

from ._wire import check_choice, check_metadata, epoch, invalid, json_type, new_id

__all__ = ["CHAT_ROLES", "Shape", "from_record", "stored_payload", "to_record"]

Shape = Literal["thread", "item", "input"]
"""``thread``: a thread message; ``item``: a conversation item; ``input``: an Agents SDK input item."""

def _thread_blocks(content: Any, *, param: str) -> tuple[list[dict[str, Any]], str]:
    """Content given to ``messages.create`` -> (OpenAI content blocks, the plain text)."""
    if content is None:
        raise invalid(
            f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
        )
    if isinstance(content, str):
        parts: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list | tuple):
        parts = list(content)
    else:
        raise invalid(
            f"Invalid type for '{param}': expected a string or an array of content parts, "
            f"but got {json_type(content)} instead.",
            param=param,
            code="invalid_type",
        )
    blocks: list[dict[str, Any]] = []
    texts: list[str] = []
    for index, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        where = f"{param}[{index}]"
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": {"value": part["text"], "annotations": []}})
            texts.append(part["text"])
        elif kind in ("image_url", "image_file") and isinstance(part.get(kind), dict):
            blocks.append({"type": kind, kind: dict(part[kind])})
        else:
            raise invalid(
                f"Invalid '{where}': expected a content part of type 'text', 'image_url' or "
                f"'image_file', but got {part!r}.",
                param=where,
                code="invalid_value",
            )
    text = "\n".join(texts)
    if not text.strip() and len(blocks) == len(texts):
        raise invalid("Message content must be non-empty.", param=param, code="empty_content")
    return blocks, text


def _item_text(item: Mapping[str, Any]) -> str:
    """The words of a conversation item, which is what the kernel stores and searches."""
    kind = item.get("type", "message")
    if kind == "message":
        content = item.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(
            str(part.get("text") or part.get("refusal") or "")
            for part in content or []
            if isinstance(part, dict)
        ).strip()
    if kind == "function_call":
        return f"{item.get('name')}({item.get('arguments', '')})"
    if kind == "function_call_output":
        output = item.get("output")
        if isinstance(output, str):
            return output
        return _item_text({"type": "message", "content": output})
    if kind == "reasoning":
        return _item_text({"type": "message", "content": item.get("summary")})
    return json.dumps(dict(item), sort_keys=True, default=str)


def _check_item(item: Any, *, param: str) -> dict[str, Any]:
    """Check one Responses input item (an easy message, a message, or any typed item)."""
    if not isinstance(item, dict):
        raise invalid(
            f"Invalid type for '{param}': expected an object, but got {json_type(item)} instead.",
            param=param,
            code="invalid_type",
        )
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise invalid(
            f"Missing required parameter: '{param}.type'.",
            param=f"{param}.type",
            code="missing_required_parameter",
        )
    if kind == "message":
        check_choice(item.get("role"), ("user", "assistant", "system", "developer"), param=f"{param}.role")
        if not isinstance(item.get("content"), str | list):
            raise invalid(
                f"Invalid type for '{param}.content': expected a string or an array of content "
                f"parts, but got {json_type(item.get('content'))} instead.",
                param=f"{param}.content",
                code="invalid_type",
            )
    return dict(item)


def to_record(obj: Mapping[str, Any], *, shape: Shape, param: str = "content") -> dict[str, Any]:
    """An OpenAI message or item -> the keyword arguments of the kernel's ``add_message``.

    ``shape="thread"``: ``obj`` is a ``messages.create`` body (``role``, ``content``,
    ``attachments``, ``metadata``, and for run replies ``assistant_id`` / ``run_id``).
    ``shape="item"`` / ``"input"``: ``obj`` is a Responses input item, stored verbatim.
    """
    if shape == "thread":
        blocks, text = _thread_blocks(obj.get("content"), param=param)
        payload = {
            "object": "thread.message",
            "role": obj["role"],
            "content": blocks,
            "attachments": list(obj.get("attachments") or []),
            "assistant_id": obj.get("assistant_id"),
            "run_id": obj.get("run_id"),
        }
        return {
            "message_id": new_id("msg"),
            "role": obj["role"],
            "content": text,
            "metadata": check_metadata(obj.get("metadata"), param=_sibling(param, "metadata")),
            "payload": payload,
            "ingest": bool(text.strip()),
        }
    if not isinstance(obj, Mapping):
        raise invalid(f"Invalid type for '{param}': expected an object, but got {json_type(obj)}.",
                      param=param, code="invalid_type")
    item = _check_item(dict(obj), param=param)
    kind = item.get("type", "message")
    text = _item_text(item)
    role = item.get("role") if kind == "message" else ("tool" if kind.endswith("_output") else "assistant")
    return {
        "message_id": new_id("msg" if kind == "message" else "item"),
        "role": role,
        "content": text,
        "payload": {"object": "conversation.item", "item": item},
        # Only what people said is memory; tool plumbing is kept but not ingested.
        "ingest": kind == "message" and bool(text.strip()),
    }


def _sibling(param: str, name: str) -> str:
    """``messages[2].content`` -> ``messages[2].metadata``; ``content`` -> ``metadata``."""
    head, _, _ = param.rpartition(".")
    return f"{head}.{name}" if head else name


CHAT_ROLES = {"ai": "assistant", "human": "user"}


def _thread_role(role: str) -> str:
    return "assistant" if role in ("assistant", "ai") else "user"


def _item_role(role: str) -> str:
    roles = {"ai": "assistant", "human": "user"}
    role = roles.get(role, role)
    known = ("user", "assistant", "system", "developer", "tool", "critic", "discriminator")
    return role if role in known else "unknown"


def _parts(role: str, content: Any) -> list[dict[str, Any]]:
    """Responses content parts for a message: ``output_text`` for the assistant, else ``input_text``."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"):
            if role == "assistant":
                parts.append({"type": "output_text", "text": part.get("text", ""), "annotations": []})
            else:
                parts.append({"type": "input_text", "text": part.get("text", "")})
        elif isinstance(part, dict):
            parts.append(dict(part))
    return parts


def stored_payload(record: Message) -> tuple[str | None, dict[str, Any]]:
    """Which of our payloads a kernel message carries: ``("thread.message", payload)``,
    ``("conversation.item", item)`` or ``(None, {})`` for messages other adapters wrote."""
    payload = record.payload
    if isinstance(payload, dict):
        if payload.get("object") == "thread.message":
            return "thread.message", payload
        if payload.get("object") == "conversation.item" and isinstance(payload.get("item"), dict):
            return "conversation.item", payload["item"]
    return None, {}


def from_record(record: Message, *, shape: Shape) -> dict[str, Any]:
    """A kernel message -> an OpenAI thread message, conversation item or agents input item.

    Messages that another adapter wrote (LangChain, LlamaIndex, Mem0, ...) come back as text
    messages with their role, so every session of the file reads as a thread.
    """
    kind, stored = stored_payload(record)
    if shape == "thread":
        if kind == "thread.message":
            role, blocks = stored["role"], stored["content"]
        else:
            role = _thread_role(record.role)
            blocks = [{"type": "text", "text": {"value": record.content, "annotations": []}}]
        created = epoch(record.created_at)
        return {
            "id": record.id,
            "object": "thread.message",
            "created_at": created,
            "thread_id": record.session_id,
            "role": role,
            "content": blocks,
            "assistant_id": stored.get("assistant_id"),
            "run_id": stored.get("run_id"),
            "attachments": stored.get("attachments", []),
            "metadata": dict(record.metadata or {}),
            "status": "completed",
            "completed_at": created,
            "incomplete_at": None,
            "incomplete_details": None,
        }
    if kind == "conversation.item":
        item = dict(stored)
    elif kind == "thread.message":
        texts = [b["text"]["value"] for b in stored["content"] if b.get("type") == "text"]
        item = {"type": "message", "role": stored["role"], "content": "\n".join(texts)}
    else:
        item = {"type": "message", "role": _item_role(record.role), "content": record.content}
    if shape == "input":
        if kind != "conversation.item" and item["role"] not in ("user", "assistant", "system", "developer"):
            item["role"] = "user"
        return item
    if item.get("type", "message") == "message":
        role = item["role"]
        return {
            "id": record.id,
            "type": "message",
            "role": role,
            "status": item.get("status") or "completed",
            "content": _parts(role, item.get("content")),
        }
    return {**item, "id": record.id, "status": item.get("status") or "completed"}

