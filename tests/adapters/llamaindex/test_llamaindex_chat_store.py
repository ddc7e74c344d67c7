"""AgentBaseChatStore against LlamaIndex's BaseChatStore contract (llama-index-core 0.14.25).

The first block ports ``llama-index-core/tests/storage/chat_store/test_simple_chat_store.py``
(run-llama/llama_index) and runs each case against the reference ``SimpleChatStore`` and ours.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.storage.chat_store import BaseChatStore, SimpleChatStore

from agentbase_adapters.llamaindex import AgentBaseChatStore
from agentbase_kernel import AgentBase
from agentbase_kernel.errors import ScopeError

LLAMA_INDEX_CORE = "0.14.25"


def msg(content: str, role: str = "user") -> ChatMessage:
    return ChatMessage(role=role, content=content)


@pytest.fixture(params=["simple", "agentbase"])
def chat_store(request: pytest.FixtureRequest, db: AgentBase) -> BaseChatStore:
    """An EMPTY chat store: the reference implementation, then ours."""
    if request.param == "simple":
        return SimpleChatStore()
    return AgentBaseChatStore(db)


@pytest.fixture
def ours(db: AgentBase) -> AgentBaseChatStore:
    return AgentBaseChatStore(db)


def test_installed_release_is_the_pinned_one() -> None:
    # The reference behaviours asserted below (IndexError cases) are those of this release.
    assert version("llama-index-core") == LLAMA_INDEX_CORE


# --- port of test_simple_chat_store.py -------------------------------------------------------


def test_add_messages(chat_store: BaseChatStore) -> None:
    chat_store.add_message("user1", msg("hello"))
    chat_store.add_message("user1", msg("world"))
    chat_store.add_message("user2", msg("hello"))
    chat_store.add_message("user2", msg("world"))

    assert chat_store.get_messages("user1") == [msg("hello"), msg("world")]
    assert chat_store.get_messages("user2") == [msg("hello"), msg("world")]
    assert chat_store.get_keys() == ["user1", "user2"]

    chat_store.add_message("user1", msg("hello"), idx=0)  # type: ignore[call-arg]
    assert chat_store.get_messages("user1") == [msg("hello"), msg("hello"), msg("world")]


def test_delete_chat_messages(chat_store: BaseChatStore) -> None:
    for key in ("user1", "user2"):
        chat_store.add_message(key, msg("hello"))
        chat_store.add_message(key, msg("world"))

    chat_store.delete_messages("user1")

    assert chat_store.get_messages("user1") == []
    assert chat_store.get_messages("user2") == [msg("hello"), msg("world")]


def test_delete_chat_message(chat_store: BaseChatStore) -> None:
    chat_store.add_message("user1", msg("hello"))
    chat_store.add_message("user1", msg("world"))

    chat_store.delete_last_message("user1")

    assert chat_store.get_messages("user1") == [msg("hello")]


def test_delete_chat_message_idx(chat_store: BaseChatStore) -> None:
    chat_store.add_message("user1", msg("hello"))
    chat_store.add_message("user1", msg("world"))

    chat_store.delete_message("user1", 0)

    assert chat_store.get_messages("user1") == [msg("world")]


# The two newer upstream cases (commit 0e407453): ours returns None, 0.14.25's SimpleChatStore raises.


def test_delete_chat_message_out_of_bounds(ours: AgentBaseChatStore) -> None:
    ours.add_message("user1", msg("hello"))

    assert ours.delete_message("user1", -2) is None
    assert ours.get_messages("user1") == [msg("hello")]


def test_delete_last_chat_message_from_empty_history(ours: AgentBaseChatStore) -> None:
    ours.add_message("user1", msg("hello"))

    assert ours.delete_last_message("user1") == msg("hello")
    assert ours.delete_last_message("user1") is None


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.delete_message("user1", -2), id="negative-index"),
        pytest.param(lambda s: (s.delete_last_message("user1"), s.delete_last_message("user1")), id="empty-delete-last"),
    ],
)
def test_reference_still_raises_on_pinned_release(call: Callable[[SimpleChatStore], Any]) -> None:
    store = SimpleChatStore()
    store.add_message("user1", msg("hello"))
    with pytest.raises(IndexError):
        call(store)


def test_persist_non_ascii_without_persist_call(db_location: Path | str) -> None:
    # Upstream persists to JSON; ours is durable as soon as add_message returns.
    path = db_location
    with AgentBase(path, embedder=None) as first:
        AgentBaseChatStore(first).add_message("user1", msg("ハロー héllo"))
    with AgentBase(path, embedder=None) as second:
        assert AgentBaseChatStore(second).get_messages("user1") == [msg("ハロー héllo")]


# --- SimpleChatStore semantics, shared ---------------------------------------------------------


def test_missing_key(chat_store: BaseChatStore) -> None:
    assert chat_store.get_messages("nobody") == []
    assert chat_store.delete_messages("nobody") is None
    assert chat_store.delete_message("nobody", 0) is None
    assert chat_store.delete_last_message("nobody") is None
    assert chat_store.get_keys() == []


def test_delete_messages_returns_history_and_drops_key(chat_store: BaseChatStore) -> None:
    chat_store.add_message("k", msg("a"))
    chat_store.add_message("k", msg("b", "assistant"))

    assert chat_store.delete_messages("k") == [msg("a"), msg("b", "assistant")]
    assert chat_store.get_keys() == []
    assert chat_store.delete_messages("k") is None


def test_key_survives_its_last_message(chat_store: BaseChatStore) -> None:
    chat_store.add_message("k", msg("a"))
    assert chat_store.delete_message("k", 0) == msg("a")
    assert chat_store.get_keys() == ["k"]
    assert chat_store.get_messages("k") == []


def test_set_messages_replaces(chat_store: BaseChatStore) -> None:
    chat_store.add_message("k", msg("old"))
    chat_store.set_messages("k", [msg("new1"), msg("new2", "assistant")])
    assert chat_store.get_messages("k") == [msg("new1"), msg("new2", "assistant")]


def test_set_messages_empty_creates_key(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", [])
    assert chat_store.get_keys() == ["k"]
    assert chat_store.get_messages("k") == []


@pytest.mark.parametrize("idx", [0, 1, 2, 3, 10, -1, -2, -10], ids=lambda i: f"idx={i}")
def test_add_message_idx_matches_list_insert(chat_store: BaseChatStore, idx: int) -> None:
    for text in ("a", "b", "c"):
        chat_store.add_message("k", msg(text))
    chat_store.add_message("k", msg("X"), idx=idx)  # type: ignore[call-arg]

    expected = ["a", "b", "c"]
    expected.insert(idx, "X")
    assert [m.content for m in chat_store.get_messages("k")] == expected


@pytest.mark.parametrize("idx", [0, 1, 2, -1, -2, -3], ids=lambda i: f"idx={i}")
def test_delete_message_in_range_matches_list_pop(chat_store: BaseChatStore, idx: int) -> None:
    for text in ("a", "b", "c"):
        chat_store.add_message("k", msg(text))
    expected = ["a", "b", "c"]
    popped = expected.pop(idx)

    assert chat_store.delete_message("k", idx) == msg(popped)
    assert [m.content for m in chat_store.get_messages("k")] == expected


def test_delete_message_past_end_is_none(chat_store: BaseChatStore) -> None:
    chat_store.add_message("k", msg("a"))
    assert chat_store.delete_message("k", 1) is None
    assert chat_store.get_messages("k") == [msg("a")]


# --- async twins ------------------------------------------------------------------------------


async def test_async_twins(chat_store: BaseChatStore) -> None:
    await chat_store.async_add_message("k", msg("a"))
    await chat_store.async_add_message("k", msg("b"))
    await chat_store.async_add_message("k", msg("c"))
    assert await chat_store.aget_messages("k") == [msg("a"), msg("b"), msg("c")]
    assert await chat_store.aget_keys() == ["k"]

    assert await chat_store.adelete_message("k", 0) == msg("a")
    assert await chat_store.adelete_last_message("k") == msg("c")
    assert await chat_store.aget_messages("k") == [msg("b")]

    await chat_store.aset_messages("k", [msg("x"), msg("y")])
    assert await chat_store.adelete_messages("k") == [msg("x"), msg("y")]
    assert await chat_store.aget_messages("k") == []
    assert await chat_store.adelete_messages("k") is None
    assert await chat_store.adelete_message("k", 0) is None
    assert await chat_store.adelete_last_message("k") is None


async def test_async_add_message_idx_inserts(ours: AgentBaseChatStore) -> None:
    # SimpleChatStore's async_add_message has no idx; ours mirrors the sync signature.
    await ours.async_add_message("k", msg("a"))
    await ours.async_add_message("k", msg("c"))
    await ours.async_add_message("k", msg("b"), idx=1)
    await ours.async_add_message("k", msg("z"), idx=-1)
    assert [m.content for m in await ours.aget_messages("k")] == ["a", "b", "z", "c"]


async def test_async_edge_cases_return_none(ours: AgentBaseChatStore) -> None:
    await ours.async_add_message("k", msg("a"))
    assert await ours.adelete_message("k", 5) is None
    assert await ours.adelete_message("k", -2) is None
    assert await ours.adelete_last_message("k") == msg("a")
    assert await ours.adelete_last_message("k") is None


def test_async_twins_are_overridden() -> None:
    # The brief: async twins await the kernel instead of BaseChatStore's to_thread defaults.
    for name in ("aset_messages", "aget_messages", "async_add_message", "adelete_messages",
                 "adelete_message", "adelete_last_message", "aget_keys"):
        assert getattr(AgentBaseChatStore, name) is not getattr(BaseChatStore, name), name


# --- messages round-trip ----------------------------------------------------------------------


ROUND_TRIP = [
    pytest.param(ChatMessage(role="system", content="be brief"), id="system"),
    pytest.param(ChatMessage(role="assistant", content="hi", additional_kwargs={"k": [1, {"x": None}]}), id="kwargs"),
    pytest.param(
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="add", tool_kwargs={"a": 1})]),
        id="tool-call-no-text",
    ),
    pytest.param(
        ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "c1", "name": "add"}), id="tool-result"
    ),
    pytest.param(
        ChatMessage(role="user", blocks=[TextBlock(text="look"), ImageBlock(url="https://example.com/cat.png")]),
        id="text-and-image",
    ),
    pytest.param(ChatMessage(role="user", content="émoji 🚀 and 中文"), id="unicode"),
]


@pytest.mark.parametrize("message", ROUND_TRIP)
def test_round_trip(ours: AgentBaseChatStore, message: ChatMessage) -> None:
    ours.add_message("k", message)
    assert ours.get_messages("k") == [message]


@pytest.mark.parametrize("message", ROUND_TRIP)
def test_round_trip_matches_reference(message: ChatMessage, ours: AgentBaseChatStore) -> None:
    reference = SimpleChatStore()
    reference.add_message("k", message)
    ours.add_message("k", message)
    assert ours.get_messages("k") == reference.get_messages("k")


def test_kernel_message_holds_payload_and_text(ours: AgentBaseChatStore, db: AgentBase) -> None:
    ours.add_message("k", ChatMessage(role="assistant", content="the answer"))
    [record] = db.sync.list_messages("k")
    assert record.role == "assistant"
    assert record.content == "the answer"
    assert record.payload == ChatMessage(role="assistant", content="the answer").model_dump(mode="json")


def test_message_from_another_adapter_reads_as_text(ours: AgentBaseChatStore, db: AgentBase) -> None:
    db.sync.add_message("k", "assistant", "written by another adapter", payload={"type": "ai", "data": {}})
    db.sync.add_message("k", "user", "no payload at all")
    db.sync.add_message("k", "tool", "42", name="calc", metadata={"tool_call_id": "call_1"})
    db.sync.add_message("k", "critic", "an unknown role")
    assert ours.get_messages("k") == [
        ChatMessage(role="assistant", content="written by another adapter"),
        ChatMessage(role="user", content="no payload at all"),
        ChatMessage(role="tool", content="42", additional_kwargs={"name": "calc", "tool_call_id": "call_1"}),
        ChatMessage(role="user", content="an unknown role"),
    ]


# --- pydantic surface -------------------------------------------------------------------------


def test_class_name_and_to_dict(db: AgentBase) -> None:
    store = AgentBaseChatStore(db, user_id="alice")
    assert AgentBaseChatStore.class_name() == "AgentBaseChatStore"
    assert store.to_dict() == {"user_id": "alice", "agent_id": None, "project_id": None,
                               "class_name": "AgentBaseChatStore"}
    assert store.db is db


def test_rejects_non_agentbase() -> None:
    with pytest.raises(TypeError, match=r"AgentBaseChatStore\(\) needs an agentbase_kernel.AgentBase, got str"):
        AgentBaseChatStore("memory.db")  # type: ignore[arg-type]


def test_rejects_non_string_scope(db: AgentBase) -> None:
    with pytest.raises(ValueError, match="user_id"):
        AgentBaseChatStore(db, user_id=42)


def test_undeclared_attribute_is_refused_like_any_pydantic_store(db: AgentBase) -> None:
    store = AgentBaseChatStore(db)
    with pytest.raises(ValueError, match="has no field"):
        store.path = "x"  # type: ignore[attr-defined]


# --- scope ------------------------------------------------------------------------------------


def test_scoped_store_creates_sessions_in_scope(db: AgentBase) -> None:
    AgentBaseChatStore(db, user_id="alice", agent_id="bot").add_message("k", msg("hi"))
    session = db.sync.get_session("k")
    assert (session.scope.user_id, session.scope.agent_id) == ("alice", "bot")


def test_other_scope_reads_as_missing(db: AgentBase) -> None:
    alice = AgentBaseChatStore(db, user_id="alice")
    bob = AgentBaseChatStore(db, user_id="bob")
    alice.add_message("k", msg("secret"))

    assert bob.get_keys() == []
    assert bob.get_messages("k") == []
    assert bob.delete_message("k", 0) is None
    assert bob.delete_last_message("k") is None
    assert bob.delete_messages("k") is None
    assert alice.get_messages("k") == [msg("secret")]


def test_other_scope_refuses_writes(db: AgentBase) -> None:
    AgentBaseChatStore(db, user_id="alice").add_message("k", msg("secret"))
    bob = AgentBaseChatStore(db, user_id="bob")
    with pytest.raises(ScopeError):
        bob.add_message("k", msg("intrusion"))
    with pytest.raises(ScopeError):
        bob.set_messages("k", [msg("overwrite")])
    assert AgentBaseChatStore(db, user_id="alice").get_messages("k") == [msg("secret")]


async def test_other_scope_async(db: AgentBase) -> None:
    await AgentBaseChatStore(db, user_id="alice").async_add_message("k", msg("secret"))
    bob = AgentBaseChatStore(db, user_id="bob")
    assert await bob.aget_messages("k") == []
    assert await bob.aget_keys() == []
    assert await bob.adelete_messages("k") is None
    with pytest.raises(ScopeError):
        await bob.async_add_message("k", msg("intrusion"))


def test_unscoped_store_sees_every_key(db: AgentBase) -> None:
    AgentBaseChatStore(db, user_id="alice").add_message("a", msg("1"))
    AgentBaseChatStore(db, user_id="bob").add_message("b", msg("2"))
    assert AgentBaseChatStore(db).get_keys() == ["a", "b"]


# --- differential property test ---------------------------------------------------------------

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(["k1", "k2"]), st.text(min_size=1, max_size=8).filter(str.strip)),
        st.tuples(st.just("insert"), st.sampled_from(["k1", "k2"]), st.integers(-4, 4)),
        st.tuples(st.just("delete"), st.sampled_from(["k1", "k2", "k3"]), st.integers(0, 4)),
        st.tuples(st.just("delete_last"), st.sampled_from(["k1", "k2", "k3"]), st.none()),
        st.tuples(st.just("delete_all"), st.sampled_from(["k1", "k2", "k3"]), st.none()),
        st.tuples(st.just("set"), st.sampled_from(["k1", "k2"]), st.integers(0, 2)),
    ),
    max_size=12,
)


def _apply(store: BaseChatStore, op: str, key: str, arg: Any) -> Any:
    if op == "add":
        return store.add_message(key, msg(arg))
    if op == "insert":
        return store.add_message(key, msg(f"ins{arg}"), idx=arg)  # type: ignore[call-arg]
    if op == "delete":
        return store.delete_message(key, arg)
    if op == "delete_last":
        if not store.get_messages(key) and key in store.get_keys():
            return "skip: 0.14.25 raises IndexError here"
        return store.delete_last_message(key)
    if op == "delete_all":
        return store.delete_messages(key)
    return store.set_messages(key, [msg(f"set{i}") for i in range(arg)])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_same_results_as_simple_chat_store(db: AgentBase, ops: list[tuple[str, str, Any]]) -> None:
    # One db serves every example: a fresh user and fresh session ids keep the examples apart.
    prefix = uuid.uuid4().hex
    reference, ours = SimpleChatStore(), AgentBaseChatStore(db, user_id=prefix)
    for op, key, arg in ops:
        assert _apply(ours, op, f"{prefix}{key}", arg) == _apply(reference, op, key, arg), (op, key, arg)
    for key in ("k1", "k2", "k3"):
        assert ours.get_messages(f"{prefix}{key}") == reference.get_messages(key)
    assert ours.get_keys() == [f"{prefix}{k}" for k in reference.get_keys()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(st.tuples(st.sampled_from(list(MessageRole)), st.text(max_size=60)), max_size=4))
def test_any_text_and_role_round_trips(db: AgentBase, turns: list[tuple[MessageRole, str]]) -> None:
    store, key = AgentBaseChatStore(db), uuid.uuid4().hex
    messages = [ChatMessage(role=role, content=text) for role, text in turns]
    store.set_messages(key, messages)
    store.add_message(key, ChatMessage(role="user", content="tail"))
    assert store.get_messages(key) == [*messages, msg("tail")]
