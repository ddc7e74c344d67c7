"""A scope policy's denial reaches the real openai SDK as its PermissionDeniedError (HTTP 403)."""

from __future__ import annotations

import openai
import pytest

from agentbase_adapters.openai import create_app
from agentbase_kernel import AgentBase

from .openai_testkit import WireChecker, sync_client


def test_denied_conversation_is_a_403(db: AgentBase) -> None:
    owner_sdk, owner_http = sync_client(WireChecker(create_app(db)))
    with owner_http:
        conversation = owner_sdk.conversations.create(items=[{"role": "user", "content": "the launch is Friday"}])
    db.sync.grant("agent-a", session_id=conversation.id, read=True, write=True)
    intruder_sdk, intruder_http = sync_client(WireChecker(create_app(db.as_agent("agent-c"))))
    with intruder_http, pytest.raises(openai.PermissionDeniedError, match="may not read"):
        intruder_sdk.conversations.items.list(conversation.id)
    allowed_sdk, allowed_http = sync_client(WireChecker(create_app(db.as_agent("agent-a"))))
    with allowed_http:
        items = allowed_sdk.conversations.items.list(conversation.id)
    assert [item.content[0].text for item in items.data] == ["the launch is Friday"]
    assert db.sync.audit(kinds="denied")[0].actor == "agent-c"
