"""OpenAIAssistantAdapter in-process: OpenAI's JSON shapes, the kernel mapping, scope, runs, errors."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.beta import Thread
from openai.types.beta.threads import Message, Run
from openai.types.conversations import Conversation, ConversationItemList

from agentbase_adapters.openai import (
    AsyncOpenAIAssistantAdapter,
    OpenAIAssistantAdapter,
    to_sdk,
)
from agentbase_kernel import AgentBase
from agentbase_kernel.errors import (
    InvalidArgument,
    MessageNotFound,
    NotFoundError,
    SessionNotFound,
)

from .openai_testkit import has_prefix, reply_with_context


@pytest.fixture
def oa(db: AgentBase) -> OpenAIAssistantAdapter:
    return OpenAIAssistantAdapter(db, responder=reply_with_context)


def texts(page: dict[str, Any]) -> list[str]:
    return [m["content"][0]["text"]["value"] for m in page["data"]]


# -- threads


def test_create_thread_returns_openai_thread_json(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread(metadata={"agent_id": "my-agent"})
    Thread.model_validate(thread, strict=True)
    assert has_prefix(thread["id"], "thread")
    assert thread["object"] == "thread"
    assert isinstance(thread["created_at"], int)
    assert thread["metadata"] == {"agent_id": "my-agent"}
    assert thread["tool_resources"] == {}


def test_thread_is_a_kernel_session_scoped_by_its_metadata(oa: OpenAIAssistantAdapter, db: AgentBase) -> None:
    thread = oa.create_thread(metadata={"user_id": "alice", "agent_id": "my-agent", "topic": "tea"})
    session = db.sync.get_session(thread["id"])
    assert (session.scope.user_id, session.scope.agent_id) == ("alice", "my-agent")
    assert oa.retrieve_thread(thread["id"]) == thread


def test_create_thread_with_messages_adds_them_in_order(oa: OpenAIAssistantAdapter, db: AgentBase) -> None:
    thread = oa.create_thread(
        messages=[{"role": "user", "content": "first"}, {"role": "assistant", "content": "second"}]
    )
    assert texts(oa.list_messages(thread["id"], order="asc")) == ["first", "second"]
    assert [m.role for m in db.sync.list_messages(thread["id"])] == ["user", "assistant"]


def test_modify_thread_replaces_metadata_and_keeps_scope_keys(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread(metadata={"user_id": "alice", "topic": "tea"})
    updated = oa.modify_thread(thread["id"], metadata={"topic": "coffee"})
    assert updated["metadata"] == {"topic": "coffee", "user_id": "alice"}
    assert oa.retrieve_thread(thread["id"])["metadata"] == updated["metadata"]


def test_modify_thread_cannot_move_it_to_another_scope(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread(metadata={"user_id": "alice"})
    with pytest.raises(InvalidArgument) as excinfo:
        oa.modify_thread(thread["id"], metadata={"user_id": "bob"})
    assert excinfo.value.param == "metadata.user_id"  # type: ignore[attr-defined]
    assert "fixed when it is created (it is 'alice')" in str(excinfo.value)


def test_delete_thread_removes_session_messages_and_memories(
    oa: OpenAIAssistantAdapter, db: AgentBase
) -> None:
    thread = oa.create_thread(metadata={"user_id": "alice"})
    oa.create_message(thread["id"], role="user", content="I keep bees in Lyon")
    assert db.sync.find("bees Lyon", session_id=thread["id"])
    assert oa.delete_thread(thread["id"]) == {"id": thread["id"], "object": "thread.deleted", "deleted": True}
    with pytest.raises(SessionNotFound):
        oa.retrieve_thread(thread["id"])
    assert list(db.sync.find("bees Lyon", user_id="alice")) == []


def test_missing_thread_raises_session_not_found(oa: OpenAIAssistantAdapter) -> None:
    for call in (
        lambda: oa.retrieve_thread("thread_missing"),
        lambda: oa.modify_thread("thread_missing", metadata={}),
        lambda: oa.delete_thread("thread_missing"),
        lambda: oa.list_messages("thread_missing"),
        lambda: oa.create_message("thread_missing", role="user", content="x"),
        lambda: oa.retrieve_message("thread_missing", "msg_missing"),
    ):
        with pytest.raises(SessionNotFound) as excinfo:
            call()
        assert excinfo.value.session_id == "thread_missing"


# -- messages


def test_create_message_returns_openai_message_json(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread()
    message = oa.create_message(thread_id=thread["id"], role="user", content="Hello", metadata={"k": "v"})
    Message.model_validate(message, strict=True)
    assert has_prefix(message["id"], "msg")
    assert message["content"] == [{"type": "text", "text": {"value": "Hello", "annotations": []}}]
    assert (message["thread_id"], message["role"], message["status"]) == (thread["id"], "user", "completed")
    assert message["metadata"] == {"k": "v"}
    assert oa.retrieve_message(thread["id"], message["id"]) == message


def test_message_is_a_kernel_turn_with_the_openai_object_as_payload(
    oa: OpenAIAssistantAdapter, db: AgentBase
) -> None:
    thread = oa.create_thread(metadata={"user_id": "alice"})
    message = oa.create_message(thread["id"], role="user", content="Hello", metadata={"k": "v"})
    record = db.sync.get_message(thread["id"], message["id"])
    assert (record.role, record.content, record.metadata) == ("user", "Hello", {"k": "v"})
    assert record.payload["object"] == "thread.message"
    assert record.payload["content"] == message["content"]
    assert record.entry_id is not None  # it went through ingest


def test_content_parts_keep_images_and_join_text(oa: OpenAIAssistantAdapter, db: AgentBase) -> None:
    thread = oa.create_thread()
    parts = [
        {"type": "text", "text": "Look at this"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}},
        {"type": "text", "text": "and this"},
    ]
    message = oa.create_message(thread["id"], role="user", content=parts)
    Message.model_validate(message, strict=True)
    assert [block["type"] for block in message["content"]] == ["text", "image_url", "text"]
    assert db.sync.get_message(thread["id"], message["id"]).content == "Look at this\nand this"


def test_image_only_message_is_stored_but_not_ingested(oa: OpenAIAssistantAdapter, db: AgentBase) -> None:
    thread = oa.create_thread()
    image = {"type": "image_file", "image_file": {"file_id": "file_123"}}
    message = oa.create_message(thread["id"], role="user", content=[image])
    Message.model_validate(message, strict=True)
    assert message["content"] == [image]
    record = db.sync.get_message(thread["id"], message["id"])
    assert (record.content, record.entry_id) == ("", None)


@pytest.mark.parametrize(
    ("kwargs", "param", "message"),
    [
        pytest.param(
            {"role": "system", "content": "x"},
            "role",
            "Invalid value: 'system'. Supported values are: 'user' and 'assistant'.",
            id="role",
        ),
        pytest.param(
            {"role": "user", "content": ""}, "content", "Message content must be non-empty.", id="empty"
        ),
        pytest.param(
            {"role": "user", "content": 42},
            "content",
            "Invalid type for 'content': expected a string or an array of content parts, but got an integer instead.",
            id="type",
        ),
        pytest.param(
            {"role": "user", "content": [{"type": "audio"}]},
            "content[0]",
            "Invalid 'content[0]': expected a content part of type 'text', 'image_url' or 'image_file', but got {'type': 'audio'}.",
            id="part",
        ),
        pytest.param(
            {"role": "user", "content": "x", "metadata": {"n": 1}},
            "metadata.n",
            "Invalid type for 'metadata.n': expected a string, but got an integer instead.",
            id="metadata",
        ),
    ],
)
def test_bad_message_raises_invalid_argument(
    oa: OpenAIAssistantAdapter, kwargs: dict[str, Any], param: str, message: str
) -> None:
    thread = oa.create_thread()
    with pytest.raises(InvalidArgument) as excinfo:
        oa.create_message(thread["id"], **kwargs)
    assert str(excinfo.value) == message
    assert excinfo.value.param == param  # type: ignore[attr-defined]


def test_modify_and_delete_message(oa: OpenAIAssistantAdapter, db: AgentBase) -> None:
    thread = oa.create_thread()
    message = oa.create_message(thread["id"], role="user", content="Hello")
    assert oa.modify_message(thread["id"], message["id"], metadata={"seen": "yes"})["metadata"] == {
        "seen": "yes"
    }
    assert oa.retrieve_message(thread["id"], message["id"])["metadata"] == {"seen": "yes"}
    deleted = oa.delete_message(thread["id"], message["id"])
    assert deleted == {"id": message["id"], "object": "thread.message.deleted", "deleted": True}
    with pytest.raises(MessageNotFound):
        oa.retrieve_message(thread["id"], message["id"])
    assert db.sync.count_messages(thread["id"]) == 0


def test_message_of_another_thread_is_not_found(oa: OpenAIAssistantAdapter) -> None:
    one, two = oa.create_thread(), oa.create_thread()
    message = oa.create_message(one["id"], role="user", content="Hello")
    with pytest.raises(MessageNotFound):
        oa.retrieve_message(two["id"], message["id"])


def test_list_messages_pages_with_cursors(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread()
    ids = [oa.create_message(thread["id"], role="user", content=f"m{i}")["id"] for i in range(7)]
    first = oa.list_messages(thread["id"], limit=3, order="asc")
    assert [m["id"] for m in first["data"]] == ids[:3]
    assert (first["first_id"], first["last_id"], first["has_more"]) == (ids[0], ids[2], True)
    second = oa.list_messages(thread["id"], limit=3, order="asc", after=first["last_id"])
    assert [m["id"] for m in second["data"]] == ids[3:6]
    last = oa.list_messages(thread["id"], limit=3, order="asc", after=second["last_id"])
    assert ([m["id"] for m in last["data"]], last["has_more"]) == (ids[6:], False)
    newest = oa.list_messages(thread["id"], limit=2)  # OpenAI's default order is desc
    assert [m["id"] for m in newest["data"]] == [ids[6], ids[5]]
    older = oa.list_messages(thread["id"], order="desc", before=ids[2])
    assert [m["id"] for m in older["data"]] == [ids[6], ids[5], ids[4], ids[3]]


def test_list_messages_empty_thread(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread()
    assert oa.list_messages(thread["id"]) == {
        "object": "list",
        "data": [],
        "first_id": None,
        "last_id": None,
        "has_more": False,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"limit": 0},
            "Invalid 'limit': integer below minimum value. Expected a value >= 1, but got 0 instead.",
            id="limit-0",
        ),
        pytest.param(
            {"limit": 101},
            "Invalid 'limit': integer above maximum value. Expected a value <= 100, but got 101 instead.",
            id="limit-101",
        ),
        pytest.param(
            {"order": "up"}, "Invalid value: 'up'. Supported values are: 'asc' and 'desc'.", id="order"
        ),
        pytest.param(
            {"after": "msg_nope"},
            "Invalid 'after': no message with id 'msg_nope' in this thread.",
            id="cursor",
        ),
    ],
)
def test_bad_list_arguments(oa: OpenAIAssistantAdapter, kwargs: dict[str, Any], message: str) -> None:
    thread = oa.create_thread()
    with pytest.raises(InvalidArgument) as excinfo:
        oa.list_messages(thread["id"], **kwargs)
    assert str(excinfo.value) == message


# -- scope and retrieval


def test_thread_messages_are_findable_in_its_scope_and_nowhere_else(
    oa: OpenAIAssistantAdapter, db: AgentBase
) -> None:
    mine = oa.create_thread(metadata={"user_id": "alice", "agent_id": "helper"})
    other = oa.create_thread(metadata={"user_id": "bob", "agent_id": "helper"})
    sibling = oa.create_thread(metadata={"user_id": "alice", "agent_id": "helper"})
    said = oa.create_message(mine["id"], role="user", content="My cat Ziggy loves salmon")
    oa.create_message(other["id"], role="user", content="I walk my dog every morning")
    oa.create_message(sibling["id"], role="user", content="Meeting notes for Tuesday")

    def found(**scope: str) -> set[str]:
        return {p.message_id for hit in db.sync.find("Ziggy salmon cat", **scope) for p in hit.provenance}

    assert said["id"] in found(session_id=mine["id"])
    assert said["id"] in found(user_id="alice", agent_id="helper", session_id=mine["id"])
    assert said["id"] in found(user_id="alice")
    assert said["id"] not in found(user_id="bob")
    assert said["id"] not in found(session_id=other["id"])
    assert said["id"] not in found(session_id=sibling["id"])
    assert said["id"] not in found(agent_id="someone-else")
    context = oa.retrieve_context(thread_id=mine["id"], query="Ziggy salmon")
    assert any(said["id"] in c["message_ids"] for c in context)
    assert not any(
        said["id"] in c["message_ids"] for c in oa.retrieve_context(other["id"], query="Ziggy salmon")
    )
    assert not any(
        said["id"] in c["message_ids"] for c in oa.retrieve_context(sibling["id"], query="Ziggy salmon")
    )


def test_retrieve_context_shape(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread(metadata={"user_id": "alice"})
    oa.create_message(thread["id"], role="user", content="I prefer green tea to coffee")
    context = oa.retrieve_context(thread_id=thread["id"], query="user preferences tea")
    assert context, "the turn should be found"
    assert set(context[0]) == {"id", "content", "score", "role", "message_ids", "created_at"}
    assert "green tea" in context[0]["content"]
    with pytest.raises(InvalidArgument):
        oa.retrieve_context(thread["id"], query="   ")


def test_sessions_of_other_adapters_read_as_threads(oa: OpenAIAssistantAdapter, db: AgentBase) -> None:
    db.sync.create_session("lc-session", user_id="carol")
    db.sync.add_message("lc-session", "human", "hi from langchain")
    db.sync.add_message("lc-session", "ai", "hello back")
    thread = oa.retrieve_thread("lc-session")
    assert thread["metadata"] == {"user_id": "carol"}
    page = oa.list_messages("lc-session", order="asc")
    for message in page["data"]:
        Message.model_validate(message, strict=True)
    assert [m["role"] for m in page["data"]] == ["user", "assistant"]
    assert texts(page) == ["hi from langchain", "hello back"]


# -- runs


def test_run_with_responder_stores_reply_and_completes(db: AgentBase) -> None:
    seen: list[tuple[list[dict[str, str]], list[dict[str, Any]]]] = []

    def responder(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
        seen.append((messages, context))
        return "Noted: green tea."

    oa = OpenAIAssistantAdapter(db, responder=responder)
    thread = oa.create_thread(metadata={"user_id": "alice"})
    oa.create_message(thread["id"], role="user", content="I prefer green tea")
    run = oa.create_run(thread["id"], assistant_id="asst_1", instructions="Be brief.", metadata={"try": "1"})
    Run.model_validate(run, strict=True)
    assert has_prefix(run["id"], "run")
    assert (run["status"], run["thread_id"], run["assistant_id"], run["metadata"]) == (
        "completed",
        thread["id"],
        "asst_1",
        {"try": "1"},
    )
    messages, context = seen[0]
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I prefer green tea"},
    ]
    assert any("green tea" in c["content"] for c in context)
    newest = oa.list_messages(thread["id"], limit=1)["data"][0]
    assert (newest["role"], newest["run_id"], newest["assistant_id"]) == ("assistant", run["id"], "asst_1")
    assert texts({"data": [newest]}) == ["Noted: green tea."]
    assert oa.retrieve_run(thread["id"], run["id"]) == run
    assert oa.list_runs(thread["id"])["data"] == [run]
    assert oa.list_messages(thread["id"], run_id=run["id"])["data"] == [newest]


def test_run_without_responder_says_runs_need_one(db: AgentBase) -> None:
    oa = OpenAIAssistantAdapter(db)
    thread = oa.create_thread()
    with pytest.raises(InvalidArgument) as excinfo:
        oa.create_run(thread["id"], assistant_id="asst_1")
    assert str(excinfo.value) == (
        "Runs need a responder: this agentbase server stores threads but bundles no model. "
        "Pass responder=fn (fn(messages, context) -> reply text) to create_app(), serve() "
        "or OpenAIAssistantAdapter()."
    )


def test_failing_responder_fails_the_run(db: AgentBase) -> None:
    def responder(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
        raise RuntimeError("model offline")

    oa = OpenAIAssistantAdapter(db, responder=responder)
    thread = oa.create_thread(messages=[{"role": "user", "content": "hi"}])
    run = oa.create_run(thread["id"], assistant_id="asst_1")
    Run.model_validate(run, strict=True)
    assert run["status"] == "failed"
    assert run["last_error"] == {
        "code": "server_error",
        "message": "The responder failed: RuntimeError: model offline",
    }
    assert len(oa.list_messages(thread["id"])["data"]) == 1


def test_missing_run_and_cancel(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread(messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(NotFoundError) as missing:
        oa.retrieve_run(thread["id"], "run_nope")
    assert str(missing.value) == "No run found with id 'run_nope'."
    run = oa.create_run(thread["id"], assistant_id="asst_1")
    with pytest.raises(InvalidArgument) as cancel:
        oa.cancel_run(thread["id"], run["id"])
    assert str(cancel.value) == "Cannot cancel run with status 'completed'."


def test_runs_page_in_both_orders(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread(messages=[{"role": "user", "content": "hi"}])
    ids = [oa.create_run(thread["id"], assistant_id="asst_1")["id"] for _ in range(3)]
    assert [r["id"] for r in oa.list_runs(thread["id"], order="asc")["data"]] == ids
    page = oa.list_runs(thread["id"], limit=2)
    assert ([r["id"] for r in page["data"]], page["has_more"]) == ([ids[2], ids[1]], True)
    assert [r["id"] for r in oa.list_runs(thread["id"], after=page["last_id"])["data"]] == [ids[0]]


def test_async_responder_needs_the_async_adapter(db: AgentBase) -> None:
    async def responder(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
        return "x"

    with pytest.raises(TypeError, match="An async responder needs AsyncOpenAIAssistantAdapter"):
        OpenAIAssistantAdapter(db, responder=responder)


async def test_async_adapter_runs_with_async_responder(db: AgentBase) -> None:
    async def responder(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
        return f"async reply to {messages[-1]['content']}"

    oa = AsyncOpenAIAssistantAdapter(db, responder=responder)
    thread = await oa.create_thread(metadata={"user_id": "alice"})
    await oa.create_message(thread["id"], role="user", content="ping")
    run = await oa.create_run(thread["id"], assistant_id="asst_1")
    assert run["status"] == "completed"
    newest = (await oa.list_messages(thread["id"], limit=1))["data"][0]
    assert newest["content"][0]["text"]["value"] == "async reply to ping"


# -- conversations


def test_conversation_items_round_trip(oa: OpenAIAssistantAdapter, db: AgentBase) -> None:
    conversation = oa.create_conversation(
        items=[
            {"role": "user", "content": "hi there"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
        ],
        metadata={"user_id": "dave"},
    )
    Conversation.model_validate(conversation, strict=True)
    assert has_prefix(conversation["id"], "conv")
    assert db.sync.get_session(conversation["id"]).scope.user_id == "dave"
    page = oa.list_items(conversation["id"], order="asc")
    ConversationItemList.model_validate(page, strict=True)
    assert [(i["role"], i["content"]) for i in page["data"]] == [
        ("user", [{"type": "input_text", "text": "hi there"}]),
        ("assistant", [{"type": "output_text", "text": "hello", "annotations": []}]),
    ]
    added = oa.create_items(
        conversation["id"],
        items=[
            {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "42"},
        ],
    )
    ConversationItemList.model_validate(added, strict=True)
    assert [i["type"] for i in added["data"]] == ["function_call", "function_call_output"]
    item = oa.retrieve_item(conversation["id"], added["data"][1]["id"])
    to_sdk(item)
    assert item["output"] == "42"
    assert oa.delete_item(conversation["id"], item["id"]) == oa.retrieve_conversation(conversation["id"])
    with pytest.raises(MessageNotFound):
        oa.retrieve_item(conversation["id"], item["id"])
    assert oa.delete_conversation(conversation["id"]) == {
        "id": conversation["id"],
        "object": "conversation.deleted",
        "deleted": True,
    }


def test_conversation_limits(oa: OpenAIAssistantAdapter) -> None:
    with pytest.raises(
        InvalidArgument, match="Expected an array with maximum length 20, but got an array with length 21"
    ):
        oa.create_conversation(items=[{"role": "user", "content": f"m{i}"} for i in range(21)])
    conversation = oa.create_conversation()
    with pytest.raises(InvalidArgument, match="empty array"):
        oa.create_items(conversation["id"], items=[])


def test_to_sdk_returns_typed_objects(oa: OpenAIAssistantAdapter) -> None:
    thread = oa.create_thread(metadata={"a": "b"})
    typed = to_sdk(thread)
    assert isinstance(typed, Thread) and typed.metadata == {"a": "b"}
    message = to_sdk(oa.create_message(thread["id"], role="user", content="Hello"))
    assert isinstance(message, Message) and message.content[0].text.value == "Hello"  # type: ignore[union-attr]
    page = to_sdk(oa.list_messages(thread["id"]))
    assert isinstance(page["data"][0], Message)
    with pytest.raises(ValueError, match="Not an OpenAI object"):
        to_sdk({"object": "nonsense"})
