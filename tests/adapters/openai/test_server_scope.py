"""The OpenAI-wire server serves one scope per key: threads, conversations and sessions outside it
are 404 - never readable, writable or deletable - whatever adapter or user wrote them.

* ``create_app(db, user_id=..., agent_id=...)`` (``serve-openai --user-id/--agent-id``): one scope
  for the server; threads it makes get that scope, a thread asked for another is a 403;
* ``create_app(db, key_scopes={key: {"user_id": ...}})`` (``--keys FILE``): each key its own scope;
* with neither, the server reaches only the threads and conversations made through it, never a
  session another adapter (LangChain, LlamaIndex, the kernel, ...) wrote in the same file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.testclient import TestClient

from agentbase_adapters.openai import OpenAIAssistantAdapter, create_app, load_key_scopes
from agentbase_kernel import AgentBase, InvalidArgument

BASE = "http://127.0.0.1:8000"


def _client(app: Any, key: str | None = None) -> TestClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return TestClient(app, base_url=BASE, client=("127.0.0.1", 50000), headers=headers)


def _reach(http: TestClient, session_id: str) -> dict[str, int]:
    """The status of every call a client can make on one thread / conversation id."""
    sid = session_id
    return {
        "get thread": http.get(f"/v1/threads/{sid}").status_code,
        "list messages": http.get(f"/v1/threads/{sid}/messages").status_code,
        "add message": http.post(f"/v1/threads/{sid}/messages", json={"role": "user", "content": "HACKED"}).status_code,
        "modify thread": http.post(f"/v1/threads/{sid}", json={"metadata": {"k": "v"}}).status_code,
        "list runs": http.get(f"/v1/threads/{sid}/runs").status_code,
        "get conversation": http.get(f"/v1/conversations/{sid}").status_code,
        "list items": http.get(f"/v1/conversations/{sid}/items").status_code,
        "add items": http.post(f"/v1/conversations/{sid}/items", json={"items": [
            {"type": "message", "role": "user", "content": "HACKED"}]}).status_code,
        "update conversation": http.post(f"/v1/conversations/{sid}", json={"metadata": {"k": "v"}}).status_code,
        "delete": http.delete(f"/v1/threads/{sid}").status_code,
    }


def _untouched(db: AgentBase, session_id: str, texts: list[str]) -> None:
    kernel = db.sync
    assert [m.content for m in kernel.list_messages(session_id)] == texts
    assert "k" not in (kernel.get_session(session_id).metadata.get("openai") or {}).get("metadata", {})


@pytest.fixture
def others(db: AgentBase) -> dict[str, str]:
    """Sessions the server did not make: bob's LangChain chat, alice's kernel session, and bob's OpenAI thread."""
    kernel = db.sync
    kernel.create_session("chat-1", user_id="bob")
    kernel.add_message("chat-1", "human", "Bob's private plan")
    kernel.create_session("alice-notes", user_id="alice")
    kernel.add_message("alice-notes", "human", "Alice's note")
    bobs = OpenAIAssistantAdapter(db).create_thread(metadata={"user_id": "bob"},
                                                    messages=[{"role": "user", "content": "Bob's thread"}])
    return {"langchain": "chat-1", "alice": "alice-notes", "bob-thread": bobs["id"]}


def test_an_unscoped_server_reaches_only_its_own_threads(db: AgentBase, others: dict[str, str]) -> None:
    http = _client(create_app(db))
    assert set(_reach(http, "chat-1").values()) == {404}
    _untouched(db, "chat-1", ["Bob's private plan"])
    own = http.post("/v1/threads", json={"metadata": {"user_id": "carol"}}).json()["id"]
    assert http.post(f"/v1/threads/{own}/messages", json={"role": "user", "content": "hi"}).status_code == 200
    assert http.get(f"/v1/threads/{others['bob-thread']}/messages").status_code == 200  # made on this wire format


def test_a_scoped_server_is_404_outside_its_scope(db: AgentBase, others: dict[str, str]) -> None:
    http = _client(create_app(db, user_id="alice"))
    for sid, texts in (("chat-1", ["Bob's private plan"]), (others["bob-thread"], ["Bob's thread"])):
        statuses = _reach(http, sid)
        assert set(statuses.values()) == {404}, statuses
        _untouched(db, sid, texts)
    # inside the scope: alice's session from another adapter reads as a thread
    page = http.get("/v1/threads/alice-notes/messages", params={"order": "asc"}).json()
    assert [m["content"][0]["text"]["value"] for m in page["data"]] == ["Alice's note"]
    made = http.post("/v1/threads", json={}).json()
    assert db.sync.get_session(made["id"]).scope.user_id == "alice"
    refused = http.post("/v1/threads", json={"metadata": {"user_id": "bob"}})
    assert refused.status_code == 403 and refused.json()["error"]["type"] == "permission_error"
    assert http.post("/v1/conversations", json={"metadata": {"user_id": "bob"}}).status_code == 403
    assert http.post("/v1/threads", json={"metadata": {"user_id": "alice"}}).status_code == 200


def test_each_key_reaches_its_own_scope(db: AgentBase, others: dict[str, str]) -> None:
    app = create_app(db, key_scopes={"sk-alice-0001": {"user_id": "alice"}, "sk-bob-00002": {"user_id": "bob"}})
    alice, bob = _client(app, "sk-alice-0001"), _client(app, "sk-bob-00002")
    mine = alice.post("/v1/threads", json={}).json()["id"]
    alice.post(f"/v1/threads/{mine}/messages", json={"role": "user", "content": "Alice's secret"})
    statuses = _reach(bob, mine)
    assert set(statuses.values()) == {404}, statuses
    assert alice.get(f"/v1/threads/{mine}").status_code == 200
    assert bob.get("/v1/threads/chat-1/messages").status_code == 200 and alice.get("/v1/threads/chat-1").status_code == 404
    assert _client(app, "sk-nobody").get(f"/v1/threads/{mine}").status_code == 401


def test_the_sdk_sees_another_scopes_thread_as_not_found(db: AgentBase, others: dict[str, str]) -> None:
    http = _client(create_app(db, user_id="alice", api_key="sk-test-key"), "sk-test-key")
    client = openai.OpenAI(api_key="sk-test-key", base_url=f"{BASE}/v1", http_client=http, max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.beta.threads.messages.list(others["bob-thread"])
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.list("chat-1")


def test_the_in_process_adapter_takes_a_scope_too(db: AgentBase, others: dict[str, str]) -> None:
    from agentbase_kernel import SessionNotFound

    alice = OpenAIAssistantAdapter(db, user_id="alice")
    with pytest.raises(SessionNotFound):
        alice.list_messages("chat-1")
    with pytest.raises(SessionNotFound):
        alice.delete_thread(others["bob-thread"])
    assert alice.retrieve_thread("alice-notes")["id"] == "alice-notes"


def test_key_scopes_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"sk-alice-0001": {"user_id": "alice"}, "sk-bot-000002": {"agent_id": "bot"}}))
    assert load_key_scopes(path) == {"sk-alice-0001": {"user_id": "alice"}, "sk-bot-000002": {"agent_id": "bot"}}
    for bad, why in [({"sk-alice-0001": {}}, "at least one of"), ({"sk-alice-0001": {"user": "x"}}, "unknown"),
                     ({"key with space": {"user_id": "a"}}, "spaces or non-ASCII"), ({}, "no keys"),
                     ([1], "an object"), ({"sk-alice-0001": {"user_id": "a\x00"}}, "NUL")]:
        path.write_text(json.dumps(bad))
        with pytest.raises(InvalidArgument, match=why):
            load_key_scopes(path)
    with pytest.raises(InvalidArgument, match="either"):
        create_app(AgentBase.__new__(AgentBase), api_key="k", key_scopes={"sk-alice-0001": {"user_id": "a"}})
