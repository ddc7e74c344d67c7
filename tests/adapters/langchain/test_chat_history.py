"""AgentBaseChatMessageHistory against LangChain's own reference and runnables.

Differential tests run the same user code on ``InMemoryChatMessageHistory`` (the reference
implementation) and on ours and compare; the rest drive the adapter through
``RunnableWithMessageHistory`` with LangChain's fake chat models and read back through the kernel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.language_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from agentbase_adapters.langchain import AgentBaseChatMessageHistory
from agentbase_kernel import AgentBase
from agentbase_kernel.errors import InvalidArgument, ScopeError

pytestmark = pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")

HistoryFactory = Callable[[str], BaseChatMessageHistory]


def every_message_type() -> list[BaseMessage]:
    """One of each message type, with the fields that are easiest to lose on a round trip."""
    return [
        SystemMessage("You are terse.", id="sys-1"),
        HumanMessage(
            "What's the weather in Paris?",
            id="h-1",
            name="alice",
            additional_kwargs={"locale": "fr-FR", "nested": {"a": [1, 2]}},
        ),
        AIMessage(
            "",
            id="ai-1",
            tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call-1"}],
            invalid_tool_calls=[{"name": "bad", "args": "{oops", "id": "call-2", "error": "bad json"}],
            usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13},
            response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
        ),
        ToolMessage("18°C and sunny", tool_call_id="call-1", name="get_weather", artifact={"raw": 18}, status="success"),
        AIMessage([{"type": "text", "text": "It is 18°C "}, {"type": "text", "text": "and sunny."}], id="ai-2"),
        FunctionMessage("42", name="answer"),
        ChatMessage("Looks fine to me.", role="critic"),
        AIMessageChunk("streamed answer", id="chunk-1"),
        HumanMessage("多谢! 🌞"),
    ]


@pytest.fixture(params=["in_memory", "agentbase"])
def make_history(request: pytest.FixtureRequest, db: AgentBase) -> HistoryFactory:
    """A factory of empty histories: LangChain's reference one, or ours on the ``db`` file."""
    if request.param == "in_memory":
        stores: dict[str, InMemoryChatMessageHistory] = {}
        return lambda sid: stores.setdefault(sid, InMemoryChatMessageHistory())
    return lambda sid: AgentBaseChatMessageHistory(sid, db=db, user_id="alice")


# -- the BaseChatMessageHistory contract, run on both implementations --------------------------


def test_messages_is_a_list_in_insertion_order(make_history: HistoryFactory) -> None:
    history = make_history("s1")
    history.add_messages([HumanMessage("one"), AIMessage("two")])
    history.add_message(HumanMessage("three"))
    history.add_user_message("four")
    history.add_ai_message("five")

    messages = history.messages
    assert type(messages) is list
    assert [m.content for m in messages] == ["one", "two", "three", "four", "five"]
    assert [m.type for m in messages] == ["human", "ai", "human", "human", "ai"]


def test_every_message_type_round_trips_exactly(make_history: HistoryFactory) -> None:
    history = make_history("s1")
    history.add_messages(every_message_type())
    assert history.messages == every_message_type()


def test_clear_empties_one_session_only(make_history: HistoryFactory) -> None:
    first, second = make_history("s1"), make_history("s2")
    first.add_messages([HumanMessage("a"), AIMessage("b")])
    second.add_messages([HumanMessage("c")])
    first.clear()
    assert first.messages == []
    assert make_history("s1").messages == []
    assert [m.content for m in second.messages] == ["c"]
    first.add_user_message("again")
    assert [m.content for m in first.messages] == ["again"]


async def test_async_twins(make_history: HistoryFactory) -> None:
    history = make_history("s1")
    await history.aadd_messages([HumanMessage("a"), AIMessage("b")])
    assert await history.aget_messages() == history.messages
    assert [m.content for m in await history.aget_messages()] == ["a", "b"]
    await history.aclear()
    assert await history.aget_messages() == []


def test_str_is_the_buffer_string(make_history: HistoryFactory) -> None:
    history = make_history("s1")
    history.add_messages([HumanMessage("hi"), AIMessage("hello")])
    assert str(history) == "Human: hi\nAI: hello"


# -- our class specifically ------------------------------------------------------------------


def test_is_a_real_subclass_with_its_own_async_io() -> None:
    assert issubclass(AgentBaseChatMessageHistory, BaseChatMessageHistory)
    assert AgentBaseChatMessageHistory.add_messages is not BaseChatMessageHistory.add_messages
    for name in ("aget_messages", "aadd_messages", "aclear"):
        ours = getattr(AgentBaseChatMessageHistory, name)
        assert ours is not getattr(BaseChatMessageHistory, name), name
        assert asyncio.iscoroutinefunction(ours), name


def test_messages_is_a_fresh_list_on_each_read(db: AgentBase) -> None:
    # InMemoryChatMessageHistory hands out its own list; ours reads the file each time.
    history = AgentBaseChatMessageHistory("s1", db=db, user_id="alice")
    history.add_messages([HumanMessage("one"), AIMessage("two")])
    history.messages.clear()
    assert len(history.messages) == 2


def test_messages_are_kernel_messages_with_payload_and_plain_text(db: AgentBase) -> None:
    history = AgentBaseChatMessageHistory("s1", db=db, user_id="alice")
    history.add_messages(every_message_type()[:4])

    stored = db.sync.list_messages("s1")
    assert [m.role for m in stored] == ["system", "user", "assistant", "tool"]
    assert [m.content for m in stored] == [
        "You are terse.",
        "What's the weather in Paris?",
        "[tool call] get_weather({'city': 'Paris'})",
        "18°C and sunny",
    ]
    assert stored[1].name == "alice"
    assert stored[1].payload["type"] == "human"
    assert stored[1].payload["data"]["additional_kwargs"] == {"locale": "fr-FR", "nested": {"a": [1, 2]}}
    assert stored[3].metadata["tool_call_id"] == "call-1"
    assert db.sync.get_session("s1", user_id="alice").scope.user_id == "alice"


def test_add_messages_is_all_or_nothing(db: AgentBase) -> None:
    history = AgentBaseChatMessageHistory("s1", db=db, user_id="alice")
    history.add_messages([HumanMessage("kept")])
    batch = [HumanMessage("first of batch"), AIMessage("lone surrogate \ud800 is not Unicode")]
    with pytest.raises(InvalidArgument, match="lone surrogates"):
        history.add_messages(batch)
    assert [m.content for m in history.messages] == ["kept"]
    assert db.sync.count_messages("s1") == 1


def test_turns_are_memories_of_the_session_scope_only(db: AgentBase) -> None:
    alice = AgentBaseChatMessageHistory("s-alice", db=db, user_id="alice")
    bob = AgentBaseChatMessageHistory("s-bob", db=db, user_id="bob")
    alice.add_messages([HumanMessage("My favourite drink is rooibos tea"), AIMessage("Noted: rooibos.")])
    bob.add_messages([HumanMessage("I only drink espresso"), AIMessage("Espresso it is.")])

    alice_hits = db.sync.find("favourite drink rooibos", user_id="alice")
    assert any("rooibos" in h.content for h in alice_hits)
    assert all(h.entry.user_id == "alice" for h in alice_hits)
    bob_hits = db.sync.find("favourite drink rooibos", user_id="bob")
    assert all("rooibos" not in h.content for h in bob_hits)
    assert all(h.entry.user_id == "bob" for h in bob_hits)
    assert {e.user_id for e in db.sync.list(session_id="s-alice")} == {"alice"}


def test_ingest_false_stores_messages_without_memories(db: AgentBase) -> None:
    history = AgentBaseChatMessageHistory("s1", db=db, user_id="alice", ingest=False)
    history.add_messages([HumanMessage("My favourite drink is rooibos tea")])
    assert [m.content for m in history.messages] == ["My favourite drink is rooibos tea"]
    assert db.sync.count(user_id="alice") == 0


def test_a_session_of_another_scope_is_refused(db: AgentBase) -> None:
    AgentBaseChatMessageHistory("s1", db=db, user_id="alice").add_user_message("private")
    with pytest.raises(ScopeError):
        AgentBaseChatMessageHistory("s1", db=db, user_id="bob")


def test_reads_messages_written_by_other_adapters(db: AgentBase) -> None:
    db.sync.create_session("shared", user_id="alice")
    db.sync.add_message("shared", "user", "hello from the kernel", ingest=False)
    db.sync.add_message("shared", "assistant", "hi!", ingest=False)
    db.sync.add_message("shared", "tool", "42", metadata={"tool_call_id": "c9"}, ingest=False)
    db.sync.add_message("shared", "system", "be brief", ingest=False)

    messages = AgentBaseChatMessageHistory("shared", db=db, user_id="alice").messages
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, ToolMessage, SystemMessage]
    assert [m.content for m in messages] == ["hello from the kernel", "hi!", "42", "be brief"]
    assert isinstance(messages[2], ToolMessage) and messages[2].tool_call_id == "c9"
    assert all(m.id for m in messages)


def test_messages_survive_reopening_the_file(db: AgentBase, db_path: Path, hash_embedder: Any) -> None:
    AgentBaseChatMessageHistory("s1", db=db, user_id="alice").add_messages(every_message_type())
    db.sync.close()
    with AgentBase(db_path, embedder=hash_embedder, ner="regex") as reopened:
        assert AgentBaseChatMessageHistory("s1", db=reopened, user_id="alice").messages == every_message_type()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(min_size=1).filter(lambda t: t.strip()), min_size=1, max_size=4))
def test_any_text_round_trips(db: AgentBase, texts: list[str]) -> None:
    history = AgentBaseChatMessageHistory(f"h-{abs(hash(tuple(texts)))}", db=db, user_id="alice", ingest=False)
    history.clear()
    sent = [HumanMessage(t) if i % 2 == 0 else AIMessage(t) for i, t in enumerate(texts)]
    history.add_messages(sent)
    assert history.messages == sent


# -- RunnableWithMessageHistory, driven by LangChain's fake chat models -------------------------


def _chain(get_history: HistoryFactory, responses: list[str]) -> RunnableWithMessageHistory:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are helpful."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    return RunnableWithMessageHistory(
        prompt | FakeListChatModel(responses=responses),
        get_history,
        input_messages_key="question",
        history_messages_key="history",
    )


def _contents(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in messages]


async def test_runnable_with_message_history_invoke_ainvoke_stream_astream(make_history: HistoryFactory) -> None:
    chain = _chain(make_history, ["answer one", "answer two", "answer three"])
    config = {"configurable": {"session_id": "conv"}}

    assert chain.invoke({"question": "first?"}, config=config).content == "answer one"
    assert (await chain.ainvoke({"question": "second?"}, config=config)).content == "answer two"
    streamed = "".join(chunk.content for chunk in chain.stream({"question": "third?"}, config=config))
    assert streamed == "answer three"
    astreamed = "".join([chunk.content async for chunk in chain.astream({"question": "fourth?"}, config=config)])
    assert astreamed == "answer one"  # FakeListChatModel cycles through its responses

    assert _contents(make_history("conv").messages) == [
        ("human", "first?"),
        ("ai", "answer one"),
        ("human", "second?"),
        ("ai", "answer two"),
        ("human", "third?"),
        ("AIMessageChunk", "answer three"),
        ("human", "fourth?"),
        ("AIMessageChunk", "answer one"),
    ]


def test_runnable_with_message_history_without_keys(make_history: HistoryFactory) -> None:
    model = GenericFakeChatModel(messages=iter(["hello", "again"]))
    chain = RunnableWithMessageHistory(model, make_history)
    config = {"configurable": {"session_id": "bare"}}
    chain.invoke("hi", config=config)
    chain.invoke([HumanMessage("and you?")], config=config)
    assert _contents(make_history("bare").messages) == [
        ("human", "hi"),
        ("ai", "hello"),
        ("human", "and you?"),
        ("ai", "again"),
    ]


def test_the_model_sees_the_stored_history(db: AgentBase) -> None:
    seen: list[list[BaseMessage]] = []

    class Recorder(FakeListChatModel):
        def _call(self, messages: list[BaseMessage], *args: object, **kwargs: object) -> str:
            seen.append(list(messages))
            return super()._call(messages, *args, **kwargs)

    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    chain = RunnableWithMessageHistory(
        prompt | Recorder(responses=["Nice to meet you, Ada."]),
        lambda sid: AgentBaseChatMessageHistory(sid, db=db, user_id="ada"),
        input_messages_key="question",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": "intro"}}
    chain.invoke({"question": "I'm Ada."}, config=config)
    chain.invoke({"question": "Who am I?"}, config=config)
    assert _contents(seen[1]) == [("human", "I'm Ada."), ("ai", "Nice to meet you, Ada."), ("human", "Who am I?")]
