"""What LlamaIndex stores through our adapters is an ordinary agentbase session and memory.

Findable through the kernel in the same scope, never outside it; shared by both stores and
by any other adapter on the same file.
"""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus

from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore, AgentBaseChatStore
from agentbase_kernel import AgentBase


def chat(store: AgentBaseChatStore, key: str, *texts: str) -> None:
    memory = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key=key)
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(max_tokens=2), memory=memory)
    for text in texts:
        engine.chat(text)


def found(db: AgentBase, query: str, **scope: str) -> list[str]:
    return [hit.content for hit in db.sync.find(query, top_k=20, **scope)]


def test_chat_store_turns_are_memories_of_their_scope(db: AgentBase) -> None:
    chat(AgentBaseChatStore(db, user_id="alice"), "alice-chat", "I adore green tea from Kyoto")
    chat(AgentBaseChatStore(db, user_id="bob"), "bob-chat", "My dog is called Rex")

    assert any("green tea" in text for text in found(db, "green tea Kyoto", user_id="alice"))
    assert any("green tea" in text for text in found(db, "green tea Kyoto", session_id="alice-chat"))
    assert not any("green tea" in text for text in found(db, "green tea Kyoto", user_id="bob"))
    assert not any("Rex" in text for text in found(db, "dog called Rex", user_id="alice"))
    for hit in db.sync.find("green tea dog Rex Kyoto", top_k=50, user_id="bob"):
        assert hit.entry.user_id == "bob"


def test_entries_carry_the_session_scope(db: AgentBase) -> None:
    chat(AgentBaseChatStore(db, user_id="alice", agent_id="tutor"), "lesson-1", "Teach me the subjunctive")

    [user_turn, _] = db.sync.list_messages("lesson-1")
    entry = db.sync.get(user_turn.entry_id)
    assert (entry.user_id, entry.agent_id, entry.session_id) == ("alice", "tutor", "lesson-1")
    assert db.sync.list_sessions(user_id="alice") == [db.sync.get_session("lesson-1")]
    assert db.sync.list_sessions(user_id="bob") == []


async def test_memory_queue_and_archive_are_memories_of_their_scope(db: AgentBase) -> None:
    store = AgentBaseAsyncChatStore(db, user_id="carol")
    memory = Memory.from_defaults(session_id="carol-mem", chat_store=store, token_limit=40)
    await memory.aput_messages([
        ChatMessage(role="user", content="My passport number ends in 4471 and expires soon"),
        ChatMessage(role="assistant", content="Noted, I will remind you about the renewal"),
        ChatMessage(role="user", content="Also book a table at Luigi's for Friday"),
    ])
    assert await store.count_messages("carol-mem", status=MessageStatus.ARCHIVED) > 0

    # Archived turns left the short-term queue but stay recallable memories.
    assert any("passport" in t for t in found(db, "passport number renewal", user_id="carol"))
    assert not any("passport" in t for t in found(db, "passport number renewal", user_id="dave"))


def test_both_stores_share_one_session(db: AgentBase) -> None:
    legacy = AgentBaseChatStore(db, user_id="erin")
    chat(legacy, "shared", "hello from ChatMemoryBuffer")

    memory = Memory.from_defaults(session_id="shared", chat_store=AgentBaseAsyncChatStore(db, user_id="erin"))
    memory.put(ChatMessage(role="user", content="hello from Memory"))

    assert [m.content for m in legacy.get_messages("shared")][::2] == ["hello from ChatMemoryBuffer", "hello from Memory"]
    assert [m.content for m in memory.get_all()] == [m.content for m in legacy.get_messages("shared")]


def test_deleting_through_llamaindex_forgets_the_turns(db: AgentBase) -> None:
    store = AgentBaseChatStore(db, user_id="frank")
    chat(store, "temp", "the launch code is pineapple")
    assert any("pineapple" in t for t in found(db, "launch code pineapple", user_id="frank"))

    store.delete_messages("temp")

    assert not any("pineapple" in t for t in found(db, "launch code pineapple", user_id="frank"))
    assert db.sync.list_messages("temp") == []


def test_langchain_and_llamaindex_share_a_conversation(db: AgentBase) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    history = AgentBaseChatMessageHistory("mixed", db=db, user_id="gina")
    history.add_messages([HumanMessage("hi from LangChain"), AIMessage("hello, LangChain user")])
    store = AgentBaseChatStore(db, user_id="gina")
    store.add_message("mixed", ChatMessage(role="user", content="hi from LlamaIndex"))

    assert store.get_messages("mixed") == [
        ChatMessage(role="user", content="hi from LangChain"),
        ChatMessage(role="assistant", content="hello, LangChain user"),
        ChatMessage(role="user", content="hi from LlamaIndex"),
    ]
    assert [(type(m).__name__, m.content) for m in history.messages] == [
        ("HumanMessage", "hi from LangChain"),
        ("AIMessage", "hello, LangChain user"),
        ("HumanMessage", "hi from LlamaIndex"),
    ]
    assert AgentBaseChatStore(db, user_id="hank").get_messages("mixed") == []
