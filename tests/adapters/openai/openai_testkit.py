"""Test helpers for the OpenAI adapter: the strict wire checker and client builders.

(Not named ``conftest``: test modules import these names directly.)
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai
from openai.types.beta import Thread, ThreadDeleted
from openai.types.beta.threads import Message, MessageDeleted, Run
from openai.types.conversations import (
    Conversation,
    ConversationDeletedResource,
    ConversationItem,
    ConversationItemList,
)
from pydantic import TypeAdapter
from starlette.testclient import TestClient

ASSISTANTS_DEPRECATED = "ignore:The Assistants API is deprecated:DeprecationWarning"
SDK_TYPES: dict[str, Any] = {
    "thread": Thread,
    "thread.deleted": ThreadDeleted,
    "thread.message": Message,
    "thread.message.deleted": MessageDeleted,
    "thread.run": Run,
    "conversation": Conversation,
    "conversation.deleted": ConversationDeletedResource,
}
ITEM = TypeAdapter(ConversationItem)
ERROR_KEYS = {"message", "type", "param", "code"}


def check_body(method: str, path: str, status: int, body: Any) -> None:
    """Assert one response body is what OpenAI sends, with the SDK's types in strict mode."""
    if status >= 400:
        assert set(body) == {"error"}, body
        assert set(body["error"]) == ERROR_KEYS, body
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
        assert isinstance(body["error"]["type"], str)
        return
    kind = body.get("object")
    if kind == "list":
        ids = [entry["id"] for entry in body["data"]]
        assert body["first_id"] == (ids[0] if ids else None)
        assert body["last_id"] == (ids[-1] if ids else None)
        assert isinstance(body["has_more"], bool)
        if "/conversations/" in path and ids:
            ConversationItemList.model_validate(body, strict=True)
        else:
            for entry in body["data"]:
                check_body(method, path, status, entry)
        return
    if kind is None and "/items" in path:
        ITEM.validate_python(body, strict=True)
        return
    assert kind in SDK_TYPES, f"unexpected object {kind!r}"
    SDK_TYPES[kind].model_validate(body, strict=True)


class WireChecker:
    """ASGI middleware for tests: records every response and checks its body (``check_body``)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.checked = 0
        self.problems: list[str] = []
        self.requests: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status, chunks = 0, []

        async def capture(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, capture)
        where = f"{scope['method']} {scope['path']}"
        self.requests.append(f"{where}?{scope['query_string'].decode()}")
        try:
            check_body(scope["method"], scope["path"], status, json.loads(b"".join(chunks)))
        except Exception as exc:  # reported by the fixture, with every other problem
            self.problems.append(f"{where} -> {status}: {type(exc).__name__}: {exc}")
        else:
            self.checked += 1


def reply_with_context(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
    """A deterministic responder: echoes the last message and says how much context it got."""
    return f"You said: {messages[-1]['content']} ({len(context)} memories)"


def sync_client(app: Any, *, api_key: str = "sk-test") -> tuple[openai.OpenAI, TestClient]:
    # TestClient is an httpx.Client whose transport runs the ASGI app in-process.
    http = TestClient(app, base_url="http://agentbase.test", client=("127.0.0.1", 50000))
    client = openai.OpenAI(
        api_key=api_key, base_url="http://agentbase.test/v1", max_retries=0, http_client=http
    )
    return client, http


def has_prefix(value: str, prefix: str) -> bool:
    return re.fullmatch(rf"{prefix}_[0-9a-f]{{24,48}}", value) is not None
