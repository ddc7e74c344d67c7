"""The ASGI app driven by the real sync ``openai.OpenAI`` client in-process (contracts D.4).

Every body the app sends here is also checked with the SDK's types in strict mode by the
``wire`` fixture (see ``openai_testkit.WireChecker``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.testclient import TestClient

from agentbase_adapters.openai import create_app
from agentbase_kernel import AgentBase

from .openai_testkit import WireChecker, has_prefix, reply_with_context, sync_client


def text_of(message: Any) -> str:
    return message.content[0].text.value


# -- threads


def test_thread_create_retrieve_update_delete(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create(metadata={"user_id": "alice", "agent_id": "my-agent"})
    assert has_prefix(thread.id, "thread")
    assert client.beta.threads.retrieve(thread.id) == thread
    updated = client.beta.threads.update(thread.id, metadata={"topic": "tea", "user_id": "alice"})
    assert updated.metadata == {"topic": "tea", "user_id": "alice", "agent_id": "my-agent"}
    assert client.beta.threads.retrieve(thread.id).metadata == updated.metadata
    deleted = client.beta.threads.delete(thread.id)
    assert (deleted.id, deleted.object, deleted.deleted) == (thread.id, "thread.deleted", True)
    with pytest.raises(openai.NotFoundError):
        client.beta.threads.retrieve(thread.id)


def test_thread_create_with_messages(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create(
        messages=[
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
        ]
    )
    page = client.beta.threads.messages.list(thread.id, order="asc")
    assert [(m.role, text_of(m)) for m in page.data] == [("user", "one"), ("assistant", "two")]


def test_thread_update_tool_resources_only_keeps_metadata(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create(metadata={"a": "1"})
    resources = {"code_interpreter": {"file_ids": ["file_1"]}}
    updated = client.beta.threads.update(thread.id, tool_resources=resources)
    assert updated.metadata == {"a": "1"}
    assert updated.tool_resources is not None and updated.tool_resources.code_interpreter.file_ids == [
        "file_1"
    ]  # type: ignore[union-attr]


# -- messages


def test_message_create_retrieve_update_delete(client: openai.OpenAI, db: AgentBase) -> None:
    thread = client.beta.threads.create()
    message = client.beta.threads.messages.create(
        thread.id, role="user", content="Hello", metadata={"k": "v"}
    )
    assert has_prefix(message.id, "msg") and text_of(message) == "Hello"
    assert client.beta.threads.messages.retrieve(message.id, thread_id=thread.id) == message
    updated = client.beta.threads.messages.update(message.id, thread_id=thread.id, metadata={"k": "w"})
    assert updated.metadata == {"k": "w"}
    assert db.sync.get_message(thread.id, message.id).metadata == {"k": "w"}
    deleted = client.beta.threads.messages.delete(message.id, thread_id=thread.id)
    assert (deleted.id, deleted.object, deleted.deleted) == (message.id, "thread.message.deleted", True)
    with pytest.raises(openai.NotFoundError) as excinfo:
        client.beta.threads.messages.retrieve(message.id, thread_id=thread.id)
    assert excinfo.value.body == {
        "message": f"No message found with id '{message.id}'.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def test_message_with_part_list_content(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create()
    message = client.beta.threads.messages.create(
        thread.id,
        role="user",
        content=[
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    )
    assert [block.type for block in message.content] == ["text", "image_url"]


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_auto_pagination_over_250_messages(
    client: openai.OpenAI, db: AgentBase, wire: Any, order: str
) -> None:
    thread = client.beta.threads.create()
    db.sync.add_messages(
        thread.id, [{"role": "user", "content": f"message {i}", "ingest": False} for i in range(250)]
    )
    seen = [text_of(m) for m in client.beta.threads.messages.list(thread.id, order=order, limit=100)]
    expected = [f"message {i}" for i in range(250)]
    assert seen == (expected if order == "asc" else expected[::-1])
    pages = [r for r in wire.requests if r.startswith(f"GET /v1/threads/{thread.id}/messages")]
    assert len(pages) == 3 and "after=" in pages[1] and "after=" in pages[2]


def test_list_with_before_cursor(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create()
    ids = [client.beta.threads.messages.create(thread.id, role="user", content=f"m{i}").id for i in range(4)]
    page = client.beta.threads.messages.list(thread.id, order="asc", before=ids[2])
    assert [m.id for m in page.data] == ids[:2]
    assert page.has_more is False


# -- errors


def test_404_body_for_missing_thread(client: openai.OpenAI, raw: TestClient) -> None:
    with pytest.raises(openai.NotFoundError) as excinfo:
        client.beta.threads.retrieve("thread_missing")
    assert excinfo.value.status_code == 404
    expected = {
        "message": "No thread found with id 'thread_missing'.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    assert excinfo.value.body == expected
    response = raw.get("/v1/threads/thread_missing/messages")
    assert (response.status_code, response.json()) == (404, {"error": expected})


def test_404_body_for_unknown_route(raw: TestClient) -> None:
    response = raw.get("/v1/assistants")
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "message": "Invalid URL (GET /v1/assistants)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    assert raw.put("/v1/threads").status_code == 405


@pytest.mark.parametrize(
    ("metadata", "param", "code"),
    [
        pytest.param(
            {f"k{i}": "v" for i in range(17)}, "metadata", "object_above_max_properties", id="17-keys"
        ),
        pytest.param({"k" * 65: "v"}, "metadata", "invalid_metadata_key", id="long-key"),
        pytest.param({"k": "v" * 513}, "metadata.k", "string_above_max_length", id="long-value"),
        pytest.param({"k": 1}, "metadata.k", "invalid_type", id="int-value"),
    ],
)
def test_metadata_rules_give_400(
    client: openai.OpenAI, metadata: dict[str, Any], param: str, code: str
) -> None:
    with pytest.raises(openai.BadRequestError) as excinfo:
        client.beta.threads.create(metadata=metadata)
    assert excinfo.value.status_code == 400
    assert (excinfo.value.body["param"], excinfo.value.body["code"]) == (param, code)  # type: ignore[index]


def test_metadata_at_the_limits_is_accepted(client: openai.OpenAI) -> None:
    metadata = {f"{i:02d}" + "k" * 62: "v" * 512 for i in range(16)}
    assert client.beta.threads.create(metadata=metadata).metadata == metadata


def test_400_for_bad_json_and_bad_limit(raw: TestClient) -> None:
    response = raw.post("/v1/threads", content=b"[1, 2", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("We could not parse the JSON body of your request.")
    thread = raw.post("/v1/threads", json={}).json()
    response = raw.get(f"/v1/threads/{thread['id']}/messages", params={"limit": "many"})
    assert (response.status_code, response.json()["error"]["param"]) == (400, "limit")


def test_401_for_wrong_or_missing_key(db: AgentBase) -> None:
    app = create_app(db, api_key="sk-right-key-123")
    good, http = sync_client(app, api_key="sk-right-key-123")
    bad, _ = sync_client(app, api_key="sk-wrong-key-999")
    with http:
        assert good.beta.threads.create().object == "thread"
        with pytest.raises(openai.AuthenticationError) as excinfo:
            bad.beta.threads.create()
        assert excinfo.value.status_code == 401
        assert excinfo.value.body == {
            "message": "Incorrect API key provided: sk-*********-999.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
        response = http.get("/v1/threads/x")
        assert response.status_code == 401
        assert response.json()["error"]["message"].startswith("You didn't provide an API key.")


def test_without_key_only_loopback_clients_are_answered(db: AgentBase) -> None:
    app = create_app(db)
    with TestClient(app, base_url="http://agentbase.test", client=("10.1.2.3", 4000)) as remote:
        response = remote.post("/v1/threads", json={})
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "remote_client_refused"
    with TestClient(
        create_app(db, allow_remote=True), base_url="http://agentbase.test", client=("10.1.2.3", 4000)
    ) as remote:
        assert remote.post("/v1/threads", json={}).status_code == 200


# -- runs


def test_run_with_responder_and_create_and_poll(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create(metadata={"user_id": "alice"})
    client.beta.threads.messages.create(thread.id, role="user", content="I like green tea")
    run = client.beta.threads.runs.create_and_poll(
        thread_id=thread.id, assistant_id="asst_1", instructions="Be kind.", poll_interval_ms=1
    )
    assert has_prefix(run.id, "run") and run.status == "completed" and run.instructions == "Be kind."
    assert client.beta.threads.runs.retrieve(run.id, thread_id=thread.id) == run
    reply = client.beta.threads.messages.list(thread.id, limit=1).data[0]
    assert (reply.role, reply.run_id, reply.assistant_id) == ("assistant", run.id, "asst_1")
    assert text_of(reply).startswith("You said: I like green tea (")
    second = client.beta.threads.runs.create(
        thread.id, assistant_id="asst_1", additional_messages=[{"role": "user", "content": "and honey"}]
    )
    assert second.status == "completed"
    assert [r.id for r in client.beta.threads.runs.list(thread.id)] == [second.id, run.id]
    assert [r.id for r in client.beta.threads.runs.list(thread.id, order="asc", limit=1)] == [
        run.id,
        second.id,
    ]
    updated = client.beta.threads.runs.update(run.id, thread_id=thread.id, metadata={"rated": "5"})
    assert updated.metadata == {"rated": "5"}
    run_messages = client.beta.threads.messages.list(thread.id, run_id=second.id)
    assert [m.role for m in run_messages.data] == ["assistant"]


def test_create_thread_and_run(client: openai.OpenAI) -> None:
    run = client.beta.threads.create_and_run(
        assistant_id="asst_1",
        thread={"messages": [{"role": "user", "content": "hey"}], "metadata": {"user_id": "zed"}},
    )
    assert run.status == "completed"
    thread = client.beta.threads.retrieve(run.thread_id)
    assert thread.metadata == {"user_id": "zed"}
    assert [text_of(m) for m in client.beta.threads.messages.list(thread.id, order="asc")] == [
        "hey",
        "You said: hey (1 memories)",
    ]


@pytest.mark.parametrize("responder", [None])
def test_runs_without_responder_get_a_clear_400(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create()
    with pytest.raises(openai.BadRequestError) as excinfo:
        client.beta.threads.runs.create(thread.id, assistant_id="asst_1")
    assert excinfo.value.body["code"] == "responder_not_configured"  # type: ignore[index]
    assert excinfo.value.body["message"].startswith("Runs need a responder")  # type: ignore[index]


def test_missing_run_is_404_and_cancel_is_400(client: openai.OpenAI) -> None:
    thread = client.beta.threads.create(messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.NotFoundError) as excinfo:
        client.beta.threads.runs.retrieve("run_nope", thread_id=thread.id)
    assert excinfo.value.body["message"] == "No run found with id 'run_nope'."  # type: ignore[index]
    run = client.beta.threads.runs.create(thread.id, assistant_id="asst_1")
    with pytest.raises(openai.BadRequestError) as cancel:
        client.beta.threads.runs.cancel(run.id, thread_id=thread.id)
    assert cancel.value.body["message"] == "Cannot cancel run with status 'completed'."  # type: ignore[index]
    with pytest.raises(openai.BadRequestError, match="Streaming runs are not supported"):
        client.beta.threads.runs.create(thread.id, assistant_id="asst_1", stream=True)


# -- conversations


def test_conversation_crud_and_items(client: openai.OpenAI, db: AgentBase) -> None:
    conversation = client.conversations.create(
        items=[{"role": "user", "content": "hi"}], metadata={"user_id": "erin"}
    )
    assert has_prefix(conversation.id, "conv")
    assert db.sync.get_session(conversation.id).scope.user_id == "erin"
    assert client.conversations.retrieve(conversation.id) == conversation
    assert client.conversations.update(conversation.id, metadata={"topic": "x"}).metadata == {
        "topic": "x",
        "user_id": "erin",
    }
    added = client.conversations.items.create(
        conversation.id,
        items=[
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
            {"role": "user", "content": "bye"},
        ],
    )
    assert added.first_id == added.data[0].id and added.last_id == added.data[1].id
    listed = client.conversations.items.list(conversation.id)  # default order: desc
    assert [item.role for item in listed.data] == ["user", "assistant", "user"]  # type: ignore[union-attr]
    item = client.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id)
    assert item.content[0].text == "hello"  # type: ignore[union-attr]
    after_delete = client.conversations.items.delete(added.data[0].id, conversation_id=conversation.id)
    assert after_delete == client.conversations.retrieve(conversation.id)
    with pytest.raises(openai.NotFoundError) as excinfo:
        client.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id)
    assert excinfo.value.body["message"] == f"No item found with id '{added.data[0].id}'."  # type: ignore[index]
    deleted = client.conversations.delete(conversation.id)
    assert (deleted.id, deleted.deleted, deleted.object) == (conversation.id, True, "conversation.deleted")
    with pytest.raises(openai.NotFoundError, match="No conversation found with id"):
        client.conversations.retrieve(conversation.id)


def test_conversation_items_auto_paginate(client: openai.OpenAI, db: AgentBase) -> None:
    conversation = client.conversations.create()
    db.sync.add_messages(
        conversation.id, [{"role": "user", "content": f"item {i}", "ingest": False} for i in range(45)]
    )
    seen = [
        item.content[0].text
        for item in client.conversations.items.list(conversation.id, limit=20, order="asc")
    ]  # type: ignore[union-attr]
    assert seen == [f"item {i}" for i in range(45)]


def test_thread_and_conversation_share_the_session_store(client: openai.OpenAI) -> None:
    conversation = client.conversations.create(items=[{"role": "user", "content": "written as an item"}])
    page = client.beta.threads.messages.list(conversation.id)
    assert [text_of(m) for m in page.data] == ["written as an item"]


# -- persistence


def test_persistence_across_server_restart(db_location: Path | str, hash_embedder: Any) -> None:
    path = db_location
    first_db = AgentBase(path, embedder=hash_embedder, ner="regex")
    client, http = sync_client(create_app(first_db, responder=reply_with_context))
    with http:
        thread = client.beta.threads.create(metadata={"user_id": "alice"})
        client.beta.threads.messages.create(thread.id, role="user", content="remember the lighthouse")
        run = client.beta.threads.runs.create(thread.id, assistant_id="asst_1")
    first_db.sync.close()

    second_db = AgentBase(path, embedder=hash_embedder, ner="regex")
    client, http = sync_client(create_app(second_db))
    with http:
        assert client.beta.threads.retrieve(thread.id).metadata == {"user_id": "alice"}
        first = client.beta.threads.messages.list(thread.id, order="asc").data[0]
        assert text_of(first) == "remember the lighthouse"
        assert client.beta.threads.runs.retrieve(run.id, thread_id=thread.id).status == "completed"
    assert any("lighthouse" in hit.content for hit in second_db.sync.find("lighthouse", session_id=thread.id))
    second_db.sync.close()


def test_missing_required_parameters_are_named(raw: TestClient) -> None:
    thread = raw.post("/v1/threads", json={}).json()
    for body, param in (({"content": "x"}, "role"), ({"role": "user"}, "content")):
        response = raw.post(f"/v1/threads/{thread['id']}/messages", json=body)
        assert response.status_code == 400
        assert response.json()["error"] == {
            "message": f"Missing required parameter: '{param}'.",
            "type": "invalid_request_error",
            "param": param,
            "code": "missing_required_parameter",
        }
    response = raw.post(f"/v1/threads/{thread['id']}/runs", json={})
    assert response.json()["error"]["message"] == "Missing required parameter: 'assistant_id'."


def test_storage_failure_is_a_500_in_openai_format(db: AgentBase) -> None:
    client, http = sync_client(create_app(db))
    with http:
        thread = client.beta.threads.create()
        db.sync.close()
        with pytest.raises(openai.InternalServerError) as excinfo:
            client.beta.threads.retrieve(thread.id)
    assert excinfo.value.status_code == 500
    assert excinfo.value.body["type"] == "server_error"  # type: ignore[index]
    assert excinfo.value.body["message"].startswith("The server had an error")  # type: ignore[index]


def test_example_assistants_code_runs_against_the_app(db: AgentBase) -> None:
    import importlib.util

    path = Path(__file__).resolve().parents[3] / "examples" / "openai_threads.py"
    spec = importlib.util.spec_from_file_location("openai_threads_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    wire = WireChecker(create_app(db, responder=example.responder))
    client, http = sync_client(wire)
    with http:
        thread_id = example.assistants_code(client)
        reply = client.beta.threads.messages.list(thread_id, limit=1).data[0]
    assert reply.role == "assistant" and text_of(reply).startswith("From what you told me: ")
    assert wire.problems == [] and wire.checked >= 6
