"""AgentBaseAsyncChatStore against LlamaIndex's AsyncDBChatStore contract (llama-index-core 0.14.25).

Ports the store-level cases of ``llama-index-core/tests/storage/chat_store/test_sql.py`` (run against
the reference ``SQLAlchemyChatStore`` and ours) and ``tests/memory/test_memory_custom_chat_store.py``
(``Memory`` driving our store) from run-llama/llama_index.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import Memory
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore
from agentbase_kernel import AgentBase
from agentbase_kernel.errors import InvalidArgument, ScopeError

ACTIVE, ARCHIVED = MessageStatus.ACTIVE, MessageStatus.ARCHIVED


def msg(content: str, role: str = "user") -> ChatMessage:
    return ChatMessage(role=role, content=content)


def contents(messages: list[ChatMessage]) -> list[str | None]:
    return [m.content for m in messages]


@pytest.fixture(params=["sqlalchemy", "agentbase"])
async def chat_store(request: pytest.FixtureRequest, db: AgentBase) -> AsyncIterator[AsyncDBChatStore]:
    """An EMPTY store: the reference SQLAlchemyChatStore (in-memory aiosqlite), then ours."""
    if request.param == "agentbase":
        yield AgentBaseAsyncChatStore(db)
        return
    reference = SQLAlchemyChatStore(table_name="test_messages", async_database_uri="sqlite+aiosqlite:///:memory:")
    yield reference
    if reference._async_engine is not None:  # else aiosqlite warns about an unclosed connection
        await reference._async_engine.dispose()


@pytest.fixture
def ours(db: AgentBase) -> AgentBaseAsyncChatStore:
    return AgentBaseAsyncChatStore(db)


# --- port of test_sql.py (store contract; delete_message by row id is SQL-specific) ----------


async def test_add_get_messages(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_message("user1", msg("hello"))
    await chat_store.add_message("user1", msg("world", "assistant"))

    messages = await chat_store.get_messages("user1")
    assert [(m.role, m.content) for m in messages] == [("user", "hello"), ("assistant", "world")]
    assert await chat_store.get_messages("nonexistent") == []


async def test_add_messages_batch(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("batch_user", [msg("hello"), msg("world", "assistant"), msg("how are you?")])
    assert contents(await chat_store.get_messages("batch_user")) == ["hello", "world", "how are you?"]


async def test_count_messages(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("count_user", [msg("m1"), msg("m2", "assistant"), msg("m3")])
    assert await chat_store.count_messages("count_user") == 3
    assert await chat_store.count_messages("nonexistent") == 0


async def test_set_messages(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_message("replace_user", msg("initial"))
    await chat_store.set_messages("replace_user", [msg("replaced1"), msg("replaced2", "assistant")])
    assert contents(await chat_store.get_messages("replace_user")) == ["replaced1", "replaced2"]


async def test_delete_messages(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_message("delete_all_user1", msg("user1_message"))
    await chat_store.add_message("delete_all_user2", msg("user2_message"))

    await chat_store.delete_messages("delete_all_user1")

    assert await chat_store.get_messages("delete_all_user1") == []
    assert len(await chat_store.get_messages("delete_all_user2")) == 1


async def test_delete_oldest_messages(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("oldest_test", [msg("oldest"), msg("middle", "assistant"), msg("newest")])

    deleted = await chat_store.delete_oldest_messages("oldest_test", 1)

    assert contents(deleted) == ["oldest"]
    assert contents(await chat_store.get_messages("oldest_test")) == ["middle", "newest"]


async def test_archive_oldest_messages(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("archive_test", [msg("oldest"), msg("middle", "assistant"), msg("newest")])

    archived = await chat_store.archive_oldest_messages("archive_test", 1)

    assert contents(archived) == ["oldest"]
    assert contents(await chat_store.get_messages("archive_test", status=ACTIVE)) == ["middle", "newest"]
    assert contents(await chat_store.get_messages("archive_test", status=ARCHIVED)) == ["oldest"]


async def test_get_messages_with_limit_offset(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("pagination_test", [msg(f"message{i}") for i in range(1, 6)])

    assert contents(await chat_store.get_messages("pagination_test", limit=2)) == ["message1", "message2"]
    assert contents(await chat_store.get_messages("pagination_test", offset=2)) == ["message3", "message4", "message5"]
    assert contents(await chat_store.get_messages("pagination_test", limit=2, offset=1)) == ["message2", "message3"]


async def test_get_keys(chat_store: AsyncDBChatStore) -> None:
    for i in (1, 2, 3):
        await chat_store.add_message(f"keys_user{i}", msg(f"user{i}_message"))
    assert set(await chat_store.get_keys()) == {"keys_user1", "keys_user2", "keys_user3"}


# --- more of the shared contract: statuses -----------------------------------------------------


async def test_status_none_means_every_status(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("k", [msg("a"), msg("b"), msg("c")])
    await chat_store.archive_oldest_messages("k", 2)

    assert contents(await chat_store.get_messages("k", status=None)) == ["a", "b", "c"]
    assert await chat_store.count_messages("k", status=None) == 3
    assert await chat_store.count_messages("k", status=ARCHIVED) == 2
    assert await chat_store.count_messages("k") == 1


async def test_add_with_archived_status(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_message("k", msg("old"), status=ARCHIVED)
    await chat_store.add_messages("k", [msg("older1"), msg("older2")], status=ARCHIVED)
    await chat_store.add_message("k", msg("live"))

    assert contents(await chat_store.get_messages("k")) == ["live"]
    assert contents(await chat_store.get_messages("k", status=ARCHIVED)) == ["old", "older1", "older2"]


async def test_set_messages_replaces_every_status(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("k", [msg("a"), msg("b")])
    await chat_store.archive_oldest_messages("k", 1)

    await chat_store.set_messages("k", [msg("x")], status=ARCHIVED)

    assert contents(await chat_store.get_messages("k", status=None)) == ["x"]
    assert contents(await chat_store.get_messages("k", status=ARCHIVED)) == ["x"]


async def test_delete_messages_by_status(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("k", [msg("a"), msg("b"), msg("c")])
    await chat_store.archive_oldest_messages("k", 2)

    await chat_store.delete_messages("k", status=ARCHIVED)

    assert contents(await chat_store.get_messages("k", status=None)) == ["c"]


async def test_archive_and_delete_oldest_skip_archived(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_messages("k", [msg("a"), msg("b"), msg("c"), msg("d")])
    assert contents(await chat_store.archive_oldest_messages("k", 1)) == ["a"]
    assert contents(await chat_store.archive_oldest_messages("k", 1)) == ["b"]
    assert contents(await chat_store.delete_oldest_messages("k", 1)) == ["c"]
    assert contents(await chat_store.get_messages("k", status=None)) == ["a", "b", "d"]


async def test_oldest_on_missing_key_or_more_than_exist(chat_store: AsyncDBChatStore) -> None:
    assert await chat_store.archive_oldest_messages("missing", 3) == []
    assert await chat_store.delete_oldest_messages("missing", 3) == []
    await chat_store.add_message("k", msg("only"))
    assert contents(await chat_store.archive_oldest_messages("k", 5)) == ["only"]
    assert await chat_store.archive_oldest_messages("k", 0) == []


async def test_key_disappears_after_delete_messages(chat_store: AsyncDBChatStore) -> None:
    await chat_store.add_message("k", msg("a"))
    await chat_store.delete_messages("k")
    assert await chat_store.get_keys() == []
    await chat_store.delete_messages("k")  # a missing key is a no-op


async def test_round_trip_equals_reference(chat_store: AsyncDBChatStore) -> None:
    original = ChatMessage(role="tool", content="42", additional_kwargs={"tool_call_id": "c1", "name": "calc"})
    await chat_store.add_message("k", original)
    assert await chat_store.get_messages("k") == [original]


# --- ours only --------------------------------------------------------------------------------


async def test_delete_message_by_active_position(ours: AgentBaseAsyncChatStore) -> None:
    await ours.add_messages("k", [msg("a"), msg("b"), msg("c"), msg("d")])
    await ours.archive_oldest_messages("k", 1)

    assert await ours.delete_message("k", 1) == msg("c")
    assert await ours.delete_message("k", 5) is None
    assert await ours.delete_message("k", -1) == msg("d")
    assert await ours.delete_message("missing", 0) is None
    assert contents(await ours.get_messages("k", status=None)) == ["a", "b"]


async def test_negative_n_is_refused(ours: AgentBaseAsyncChatStore) -> None:
    await ours.add_message("k", msg("a"))
    with pytest.raises(InvalidArgument, match="n must be an int >= 0, got -1"):
        await ours.archive_oldest_messages("k", -1)
    with pytest.raises(InvalidArgument, match="n must be an int >= 0, got -1"):
        await ours.delete_oldest_messages("k", -1)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        pytest.param({"limit": -1}, "limit must be a non-negative int or None, got -1", id="negative-limit"),
        pytest.param({"offset": -1}, "offset must be a non-negative int or None, got -1", id="negative-offset"),
    ],
)
async def test_negative_paging_is_refused(ours: AgentBaseAsyncChatStore, kwargs: dict[str, int], error: str) -> None:
    # SQLAlchemyChatStore sends these to SQLite, where LIMIT -1 means "no limit"; ours says what is wrong.
    await ours.add_message("k", msg("a"))
    with pytest.raises(InvalidArgument) as excinfo:
        await ours.get_messages("k", **kwargs)  # type: ignore[arg-type]
    assert str(excinfo.value) == error


async def test_status_maps_to_kernel_status(ours: AgentBaseAsyncChatStore, db: AgentBase) -> None:
    await ours.add_messages("k", [msg("a"), msg("b")])
    await ours.archive_oldest_messages("k", 1)
    assert [(m.content, m.status) for m in db.sync.list_messages("k")] == [("a", "archived"), ("b", "active")]


async def test_status_accepts_plain_strings(ours: AgentBaseAsyncChatStore) -> None:
    await ours.add_message("k", msg("a"), status="archived")  # type: ignore[arg-type]
    assert contents(await ours.get_messages("k", status="archived")) == ["a"]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'frozen' is not a valid MessageStatus"):
        await ours.get_messages("k", status="frozen")  # type: ignore[arg-type]


async def test_get_keys_skips_empty_sessions(ours: AgentBaseAsyncChatStore, db: AgentBase) -> None:
    db.sync.create_session("empty")
    await ours.add_message("full", msg("a"))
    assert await ours.get_keys() == ["full"]


async def test_scoped_store_stays_in_its_scope(db: AgentBase) -> None:
    alice = AgentBaseAsyncChatStore(db, user_id="alice")
    bob = AgentBaseAsyncChatStore(db, user_id="bob")
    await alice.add_messages("k", [msg("a1"), msg("a2")])

    assert db.sync.get_session("k").scope.user_id == "alice"
    assert await bob.get_messages("k", status=None) == []
    assert await bob.count_messages("k") == 0
    assert await bob.get_keys() == []
    assert await bob.archive_oldest_messages("k", 1) == []
    assert await bob.delete_oldest_messages("k", 1) == []
    assert await bob.delete_message("k", 0) is None
    await bob.delete_messages("k")
    with pytest.raises(ScopeError):
        await bob.add_message("k", msg("intrusion"))
    with pytest.raises(ScopeError):
        await bob.set_messages("k", [])
    assert contents(await alice.get_messages("k")) == ["a1", "a2"]


def test_class_name_and_dump(db: AgentBase) -> None:
    store = AgentBaseAsyncChatStore(db, agent_id="bot")
    assert AgentBaseAsyncChatStore.class_name() == "AgentBaseAsyncChatStore"
    assert store.model_dump() == {"user_id": None, "agent_id": "bot", "project_id": None}


def test_rejects_non_agentbase() -> None:
    with pytest.raises(TypeError, match=r"AgentBaseAsyncChatStore\(\) needs an agentbase_kernel.AgentBase, got NoneType"):
        AgentBaseAsyncChatStore(None)  # type: ignore[arg-type]


# --- port of test_memory_custom_chat_store.py (Memory drives our store) ----------------------


async def test_memory_accepts_custom_chat_store(ours: AgentBaseAsyncChatStore, db: AgentBase) -> None:
    memory = Memory(token_limit=1000, session_id="test_user", sql_store=ours)

    await memory.aput_messages([msg("Message 1"), msg("Response 1", "assistant")])

    assert contents(await memory.aget()) == ["Message 1", "Response 1"]
    assert memory.sql_store is ours
    assert db.sync.count_messages("test_user", status="active") == 2


async def test_from_defaults_with_custom_chat_store(ours: AgentBaseAsyncChatStore) -> None:
    memory = Memory.from_defaults(
        session_id="test_user", token_limit=1000, chat_history=[msg("Seeded")], chat_store=ours
    )
    assert memory.sql_store is ours
    assert contents(await memory.aget()) == ["Seeded"]


async def test_waterfall_archives_into_custom_chat_store(ours: AgentBaseAsyncChatStore, db: AgentBase) -> None:
    memory = Memory(
        token_limit=1000, token_flush_size=700, chat_history_token_ratio=0.9, session_id="test_user", sql_store=ours
    )

    await memory.aput_messages([msg("x " * 500), msg("y " * 500, "assistant"), msg("z " * 500)])

    messages = await memory.aget()
    assert len(messages) == 1
    assert "z " in (messages[0].content or "")
    assert db.sync.count_messages("test_user", status="archived") == 2


class StaggeredArchiveStore(AgentBaseAsyncChatStore):
    """Delays concurrent archive calls so two ``_manage_queue`` runs interleave (see upstream docstring)."""

    armed: bool = False
    calls: int = 0

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        if self.armed:
            self.calls += 1
            await asyncio.sleep(0.05 if self.calls == 1 else 0.3)
        return await super().archive_oldest_messages(key, n)


def _seed_messages() -> list[ChatMessage]:
    return [msg(f"seed{i} " + "word " * 12) for i in range(6)]


@pytest.mark.xfail(
    strict=True,
    reason="llama-index-core 0.14.25's Memory has no lock around _manage_queue; upstream added one later",
)
async def test_concurrent_aput_does_not_over_archive(db: AgentBase) -> None:
    sequential = AgentBaseAsyncChatStore(db, user_id="sequential")
    await sequential.add_messages("race_seq", _seed_messages())
    seq_memory = Memory(
        token_limit=60, token_flush_size=40, chat_history_token_ratio=1.0, session_id="race_seq", sql_store=sequential
    )
    await seq_memory.aput(msg("newA " + "word " * 12))
    await seq_memory.aput(msg("newB " + "word " * 12))
    expected_active = [m.content for m in await sequential.get_messages("race_seq")]
    assert len(expected_active) < 8

    gated = StaggeredArchiveStore(db, user_id="gated")
    await gated.add_messages("race_gated", _seed_messages())
    gated.armed = True
    memory = Memory(
        token_limit=60, token_flush_size=40, chat_history_token_ratio=1.0, session_id="race_gated", sql_store=gated
    )
    await asyncio.gather(
        memory.aput(msg("newA " + "word " * 12)),
        memory.aput(msg("newB " + "word " * 12)),
    )
    gated.armed = False

    assert [m.content for m in await gated.get_messages("race_gated")] == expected_active


def test_sync_put_works_across_event_loops(ours: AgentBaseAsyncChatStore) -> None:
    memory = Memory(token_limit=1000, session_id="loop_user", sql_store=ours)

    memory.put(msg("one"))
    memory.put(msg("two"))

    assert contents(memory.get_all()) == ["one", "two"]
