"""AgentBaseSession against the openai-agents ``Session`` protocol, driven by the real ``Runner``.

Also runs the SDK's own ``OpenAIConversationsSession`` against our app, which shows that the
conversations endpoints are what the Agents SDK expects.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

agents = pytest.importorskip("agents", reason="openai-agents is not installed")

from agents import Agent, RunConfig, Runner  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.memory import OpenAIConversationsSession, Session, SessionSettings  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseOutputMessage, ResponseOutputText  # noqa: E402

from agentbase_adapters.openai import (  # noqa: E402
    AgentBaseSession,
    OpenAIAssistantAdapter,
    create_app,
)
from agentbase_kernel import AgentBase  # noqa: E402
from agentbase_kernel.errors import ScopeError  # noqa: E402

from .openai_testkit import WireChecker  # noqa: E402


class EchoModel(Model):
    """A model that answers with how many input items it was given (no network)."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.inputs.append(input)
        text = f"reply #{len(self.inputs)} after {len(input)} items"
        message = ResponseOutputMessage(
            id=f"msg_model_{len(self.inputs)}",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("these tests do not stream")


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


@pytest.fixture
def session(db: AgentBase) -> AgentBaseSession:
    return AgentBaseSession("conv_agents_1", db, user_id="alice")


def test_implements_the_session_protocol(session: AgentBaseSession) -> None:
    assert isinstance(session, Session)
    for name in ("get_items", "add_items", "pop_item", "clear_session"):
        assert callable(getattr(session, name))


async def test_items_round_trip_verbatim(session: AgentBaseSession) -> None:
    items: list[Any] = [
        user("hi"),
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "hello", "annotations": []}],
            "status": "completed",
            "id": "msg_x",
        },
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
    ]
    await session.add_items(items)
    assert await session.get_items() == items
    assert await session.get_items(limit=2) == items[2:]
    assert await session.get_items(limit=0) == []
    assert await session.get_items(limit=-1) == items


async def test_pop_and_clear(session: AgentBaseSession, db: AgentBase) -> None:
    assert await session.pop_item() is None
    await session.add_items([user("one"), user("two")])
    assert await session.pop_item() == user("two")
    assert await session.get_items() == [user("one")]
    await session.clear_session()
    assert await session.get_items() == []
    assert db.sync.get_session("conv_agents_1").scope.user_id == "alice"


async def test_session_settings_limit_is_the_default(db: AgentBase) -> None:
    session = AgentBaseSession("s-limit", db, session_settings=SessionSettings(limit=1))
    await session.add_items([user("a"), user("b")])
    assert await session.get_items() == [user("b")]
    assert await session.get_items(limit=5) == [user("a"), user("b")]


async def test_items_are_memories_in_the_session_scope(session: AgentBaseSession, db: AgentBase) -> None:
    await session.add_items([user("My favourite mountain is Mont Aiguille")])
    other = AgentBaseSession("conv_agents_2", db, user_id="bob")
    await other.add_items([user("I collect stamps")])
    assert any(
        "Aiguille" in h.content
        for h in await db.find("favourite mountain Aiguille", session_id="conv_agents_1")
    )
    assert not any(
        "Aiguille" in h.content for h in await db.find("favourite mountain Aiguille", user_id="bob")
    )


async def test_scope_conflict_is_a_scope_error(db: AgentBase) -> None:
    db.sync.create_session("taken", user_id="alice")
    with pytest.raises(ScopeError):
        await AgentBaseSession("taken", db, user_id="mallory").add_items([user("x")])


async def test_runner_keeps_history_in_agentbase(session: AgentBaseSession, db: AgentBase) -> None:
    model = EchoModel()
    agent = Agent(name="helper", instructions="Be brief.", model=model)
    config = RunConfig(tracing_disabled=True)
    first = await Runner.run(agent, "Hello", session=session, run_config=config)
    second = await Runner.run(agent, "Again", session=session, run_config=config)
    assert first.final_output == "reply #1 after 1 items"
    assert second.final_output == "reply #2 after 3 items"  # the first turn came back from agentbase
    history = await session.get_items()
    assert [item.get("role") for item in history] == ["user", "assistant", "user", "assistant"]
    # The same history, read as an OpenAI thread through the other adapter.
    page = OpenAIAssistantAdapter(db).list_messages("conv_agents_1", order="asc")
    assert [m["content"][0]["text"]["value"] for m in page["data"]] == [
        "Hello",
        "reply #1 after 1 items",
        "Again",
        "reply #2 after 3 items",
    ]


async def test_sdk_conversations_session_runs_against_our_server(db: AgentBase) -> None:
    wire = WireChecker(create_app(db))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=wire)) as http:
        client = openai.AsyncOpenAI(
            api_key="sk-test", base_url="http://agentbase.test/v1", max_retries=0, http_client=http
        )
        conversation_id = (await client.conversations.create()).id
        remote = OpenAIConversationsSession(conversation_id=conversation_id, openai_client=client)
        await remote.add_items([user("first"), user("second")])
        assert [item["content"][0]["text"] for item in await remote.get_items()] == ["first", "second"]
        popped = await remote.pop_item()
        assert popped is not None and popped["content"][0]["text"] == "second"
        # What the SDK wrote over the wire is readable in-process through AgentBaseSession.
        assert await AgentBaseSession(conversation_id, db).get_items() == [user("first")]
        await remote.clear_session()
    assert wire.problems == [] and wire.checked >= 5
