"""The adapter's OpenAI JSON -> the openai SDK's own typed objects (needs the ``openai`` extra)."""

from __future__ import annotations

from typing import Any

from agentbase_adapters._require import require

__all__ = ["to_sdk"]


def to_sdk(obj: dict[str, Any]) -> Any:
    """Turn an OpenAI JSON object from the adapter into the openai SDK's own typed object.

    ``thread`` -> ``Thread``, ``thread.message`` -> ``Message``, ``thread.run`` -> ``Run``,
    ``conversation`` -> ``Conversation``, the ``*.deleted`` markers, a conversation item ->
    ``ConversationItem``; a list of items -> ``ConversationItemList``, a list of anything else ->
    the same list dict with its ``data`` typed. Validation is strict (``strict=True``).

    Raises:
        MissingDependency: The openai SDK is not installed (``pip install 'agentbase-memory[openai]'``).
        ValueError: ``obj`` is not an object this adapter returns.
    """
    require("openai", extra="openai")
    from openai.types.beta import Thread, ThreadDeleted
    from openai.types.beta.threads import Message as SDKMessage
    from openai.types.beta.threads import MessageDeleted, Run
    from openai.types.conversations import (
        Conversation,
        ConversationDeletedResource,
        ConversationItem,
        ConversationItemList,
    )
    from pydantic import TypeAdapter

    types: dict[str, Any] = {
        "thread": Thread,
        "thread.deleted": ThreadDeleted,
        "thread.message": SDKMessage,
        "thread.message.deleted": MessageDeleted,
        "thread.run": Run,
        "conversation": Conversation,
        "conversation.deleted": ConversationDeletedResource,
    }
    kind = obj.get("object")
    if kind == "list":
        data = obj.get("data") or []
        if data and all("object" not in entry for entry in data):
            return ConversationItemList.model_validate(obj, strict=True)
        return {**obj, "data": [to_sdk(entry) for entry in data]}
    if kind in types:
        return types[kind].model_validate(obj, strict=True)
    if kind is None and "type" in obj:
        return TypeAdapter(ConversationItem).validate_python(obj, strict=True)
    raise ValueError(f"Not an OpenAI object this adapter returns: object={kind!r}")
