"""LangChain and LlamaIndex chat stores -> agentbase: conversations written with the real library,
imported, then read back through our adapters with the same calls, and found by ``find``."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import pytest

from agentbase_adapters.importers import chat_history_records, import_from
from agentbase_kernel import AgentBase, ImportConflict, InvalidArgument
from tests.conftest import HashEmbedder

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:.*sunset.*")


def conversation() -> list:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    return [SystemMessage("You are a travel agent"),
            HumanMessage("I want to fly to Lisbon in May", name="alice"),
            AIMessage("Lisbon in May is lovely. Window or aisle?", tool_calls=[]),
            HumanMessage("Aisle, and I am vegetarian"),
            ToolMessage("booked", tool_call_id="call-1")]


@pytest.fixture
def db(db_location: Path | str):
    db = AgentBase(db_location, embedder=HashEmbedder())
    yield db
    db.sync.close()


def test_langchain_sql_table(db: AgentBase, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import SQLChatMessageHistory
    url = f"sqlite:///{tmp_path / 'chats.db'}"
    written = {}
    for sid, messages in (("trip-1", conversation()), ("trip-2", conversation()[1:3])):
        history = SQLChatMessageHistory(session_id=sid, connection=url, table_name="chat_history")
        history.add_messages(messages)
        written[sid] = history.messages
    summary = import_from(db.sync, "langchain-sql", url, table="chat_history", user_id="alice")
    assert summary["by_type"]["session"]["inserted"] == 2
    assert summary["by_type"]["chat_message"]["inserted"] == 7

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    for sid, theirs in written.items():
        ours = AgentBaseChatMessageHistory(sid, db=db, user_id="alice")
        assert ours.messages == theirs
    hit = db.sync.find("where does alice fly", user_id="alice")[0]
    assert "fly to Lisbon in May" in hit.entry.l2_full and hit.entry.session_id in written
    again = import_from(db.sync, "langchain-sql", url, table="chat_history", user_id="alice")
    assert again["by_type"]["chat_message"] == {"inserted": 0, "updated": 0, "skipped": 7}
    with pytest.raises(InvalidArgument, match="No table 'nope'"):
        import_from(db.sync, "langchain-sql", url, table="nope")


def test_langchain_file_history(db: AgentBase, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import FileChatMessageHistory
    path = tmp_path / "support-42.json"
    history = FileChatMessageHistory(str(path))
    history.add_messages(conversation())
    import_from(db.sync, "langchain-file", path, user_id="bob")

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    assert AgentBaseChatMessageHistory("support-42", db=db, user_id="bob").messages == history.messages
    assert "vegetarian" in db.sync.find("vegetarian", user_id="bob")[0].entry.l2_full
    path.write_text("{broken", encoding="utf-8")
    with pytest.raises(InvalidArgument, match="not a FileChatMessageHistory"):
        import_from(db.sync, "langchain-file", path)


def test_any_chat_message_history_object(db: AgentBase) -> None:
    from langchain_core.chat_history import InMemoryChatMessageHistory

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = InMemoryChatMessageHistory()
    history.add_messages(conversation())
    summary = db.sync.import_(chat_history_records({"mem-1": history}, user_id="carol"))
    assert summary["by_type"]["chat_message"]["inserted"] == 5

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    assert AgentBaseChatMessageHistory("mem-1", db=db, user_id="carol").messages == history.messages


def llama_messages() -> list:
    from llama_index.core.llms import ChatMessage

    return [ChatMessage(role="user", content="Remind me that the dentist is on Tuesday"),
            ChatMessage(role="assistant", content="Noted: dentist on Tuesday."),
            ChatMessage(role="user", content="Also buy oat milk")]


def persist(store, path: Path) -> None:
    """``SimpleChatStore.persist`` as the library writes it. Its own call fails in this environment
    (llama-index-core 0.14.25 + pydantic 2.14: the dict-of-lists serializer passes SerializationInfo
    as an index key), so the file is written message by message with the same model dumps; the
    real ``from_persist_path`` reads it back below."""
    import json

    data = {"store": {key: [m.model_dump(mode="json") for m in store.get_messages(key)] for key in store.get_keys()},
            "class_name": "SimpleChatStore"}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_llamaindex_simple_chat_store_file(db: AgentBase, tmp_path: Path) -> None:
    from llama_index.core.storage.chat_store import SimpleChatStore

    store = SimpleChatStore()
    store.set_messages("dave-chat", llama_messages())
    store.set_messages("other", llama_messages()[:1])
    path = tmp_path / "chat_store.json"
    persist(store, path)
    summary = import_from(db.sync, "llamaindex-json", path, user_id="dave")
    assert summary["by_type"]["chat_message"]["inserted"] == 4

    from agentbase_adapters.llamaindex import AgentBaseChatStore

    ours = AgentBaseChatStore(db, user_id="dave")
    loaded = SimpleChatStore.from_persist_path(str(path))
    assert sorted(ours.get_keys()) == sorted(loaded.get_keys())
    for key in loaded.get_keys():
        assert ours.get_messages(key) == loaded.get_messages(key)
    assert "oat milk" in db.sync.find("oat milk", user_id="dave")[0].entry.l2_full


def test_llamaindex_sqlalchemy_chat_store(db: AgentBase, tmp_path: Path) -> None:
    from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

    url = f"sqlite+aiosqlite:///{tmp_path / 'llama.db'}"

    async def write() -> dict:
        store = SQLAlchemyChatStore(table_name="memory", async_database_uri=url)
        await store.add_messages("erin", llama_messages())
        await store.add_message("erin-2", llama_messages()[2])
        out = {key: await store.get_messages(key) for key in await store.get_keys()}
        await store._async_engine.dispose()
        return out

    written = asyncio.run(write())
    summary = import_from(db.sync, "llamaindex-sql", url, table="memory", user_id="erin")
    assert summary["by_type"]["chat_message"]["inserted"] == 4

    from agentbase_adapters.llamaindex import AgentBaseChatStore

    ours = AgentBaseChatStore(db, user_id="erin")
    for key, theirs in written.items():
        assert ours.get_messages(key) == theirs
    hit = db.sync.find("when is the dentist", user_id="erin")[0]
    assert "dentist" in hit.entry.l2_full and hit.entry.created_at.year >= 2024
    again = import_from(db.sync, "llamaindex-sql", url, table="memory", user_id="erin")
    assert again["by_type"]["chat_message"]["inserted"] == 0
    # the same chats for no user: erin's sessions are hers, so each is a conflict, never a merge
    with pytest.raises(ImportConflict, match="session 'erin' exists in another scope"):
        import_from(db.sync, "llamaindex-sql", url, table="memory")
    skipped = import_from(db.sync, "llamaindex-sql", url, table="memory", on_conflict="skip")
    assert skipped["by_type"]["chat_message"]["inserted"] == 0 and skipped["conflicts_total"] == 2
