"""Single-tenant isolation: a server started for alice cannot read or change bob's memories.

Bob's data is written by a kernel on the same file; then every tool is tried against bob's ids,
session and entities, and with scope arguments naming bob. Bob's rows must be byte-for-byte the
same afterwards, and nothing of bob's may appear in any result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentbase_kernel import Kernel
from tests.conftest import HashEmbedder

from .conftest import McpClient, launch

BOB_SECRET = "Bob's locker code is 4417 at Zephyrgym"


@pytest.fixture(scope="module")
def shared(make_db_location):
    path: Path | str = make_db_location("shared.db")
    with Kernel(path, embedder=HashEmbedder(), ner="regex") as k:
        bob = {"memory": k.add_memory(BOB_SECRET, user_id="bob", metadata={"kind": "secret"}).id}
        k.add_messages("bob-chat", [{"role": "user", "content": "Bob met Quillon at Zephyrgym"}], user_id="bob")
        bob["turn"] = k.list_messages("bob-chat")[0].entry_id
        k.add_memory("Alice likes Zephyrgym too", user_id="alice")
    return path, bob


def bob_state(path: Path | str) -> str:
    with Kernel(path, embedder=HashEmbedder(), ner="regex") as k:
        entries = k.list(user_id="bob", limit=None, include_expired=True, include_invalid=True)
        return json.dumps({"entries": [(e.id, e.l2_full, e.metadata, e.tags, str(e.updated_at)) for e in entries],
                           "history": [[(h.event, h.new_value) for h in k.history(e.id)] for e in entries],
                           "messages": [(m.id, m.content) for m in k.list_messages("bob-chat")],
                           "session": str(k.get_session("bob-chat"))}, default=str)


@pytest.fixture(scope="module")
def alice_client(shared):
    path, _ = shared
    client = McpClient(launch(path, "--user-id", "alice"))
    yield client
    client.close()


def test_no_tool_reaches_bobs_memories(shared, alice_client):
    path, bob = shared
    before = bob_state(path)
    a = alice_client
    not_found = "No entry with id {!r} in this scope"
    for memory_id in (bob["memory"], bob["turn"]):
        assert a.fails("get_memory", {"memory_id": memory_id}) == not_found.format(memory_id)
        assert a.fails("memory_history", {"memory_id": memory_id}) == not_found.format(memory_id)
        assert a.fails("update_memory", {"memory_id": memory_id, "text": "hacked"}) == not_found.format(memory_id)
        assert a.fails("update_memory", {"memory_id": memory_id, "metadata": {"x": 1}}) == not_found.format(memory_id)
        assert a.fails("delete_memory", {"memory_id": memory_id}) == not_found.format(memory_id)
    assert a.fails("get_session", {"session_id": "bob-chat"}) == "No session with id 'bob-chat' in this scope"
    assert a.fails("add_message", {"session_id": "bob-chat", "role": "user", "content": "injected"})
    for name, args in [("delete_all_memories", {"scope": {"user_id": "bob"}}),
                       ("delete_all_memories", {"scope": {"user_id": "alice", "agent_id": "x"}}),
                       ("delete_all_memories", {"scope": {"session_id": "bob-chat"}}),
                       ("delete_all_memories", {"scope": {"user_id": "bob", "session_id": "bob-chat"}})]:
        assert a.fails(name, args)

    # scope arguments are refused by every tool's schema
    samples = {"add_memory": {"text": "x"}, "search_memories": {"query": "locker"}, "get_memory": {"memory_id": bob["memory"]},
               "list_memories": {}, "update_memory": {"memory_id": bob["memory"], "text": "x"},
               "delete_memory": {"memory_id": bob["memory"]}, "memory_history": {"memory_id": bob["memory"]},
               "add_message": {"session_id": "bob-chat", "role": "user", "content": "x"},
               "get_session": {"session_id": "bob-chat"}, "list_sessions": {}, "list_entities": {},
               "entity_graph": {"entity": "Quillon"}, "memory_stats": {}, "export_memories": {}}
    for name, args in samples.items():
        for key in ("user_id", "agent_id", "project_id"):
            message = a.fails(name, {**args, key: "bob"})
            assert message.startswith(f"Invalid arguments for {name}: unexpected argument(s) '{key}'"), message

    # reads see only alice
    results = json.dumps([a.ok("search_memories", {"query": q, "top_k": 100})
                          for q in ("locker code", "Quillon Zephyrgym", "Bob", "4417")])
    assert "4417" not in results and "Quillon" not in results and bob["memory"] not in results
    listed = json.dumps(a.ok("list_memories", {"limit": 200}))
    assert "4417" not in listed and "Quillon" not in listed
    assert a.ok("list_memories", {"session_id": "bob-chat"})["memories"] == []
    assert a.ok("search_memories", {"query": "Quillon", "session_id": "bob-chat"})["results"] == []
    assert a.ok("search_memories", {"query": "locker", "filters": {"kind": "secret"}})["results"] == []
    assert "bob-chat" not in json.dumps(a.ok("list_sessions"))
    entities = json.dumps(a.ok("list_entities", {"limit": 200}))
    assert "Quillon" not in entities
    assert a.ok("entity_graph", {"entity": "Quillon"})["nodes"] == []
    assert "Quillon" not in json.dumps(a.ok("entity_graph", {"entity": "Zephyrgym"}))
    stats = a.ok("memory_stats")
    assert stats["memories"] == 1 and stats["sessions"] == 0
    recent = a.run(a.client.read_resource, "agentbase://memories/recent").contents[0].text
    assert "4417" not in recent and "Quillon" not in recent

    # alice may wipe her own scope; bob's is untouched by everything above
    assert a.ok("delete_all_memories", {"scope": {"user_id": "alice"}})["deleted"] == 1
    assert bob_state(path) == before


def test_multi_tenant_requires_the_scope_on_every_call(shared, tmp_path):
    path, bob = shared
    client = McpClient(launch(path, "--multi-tenant"))
    try:
        tools = {t.name: t for t in client.tools()}
        for name, tool in tools.items():
            required = tool.input_schema["required"]
            assert "user_id" in required or name == "delete_all_memories"
        assert client.fails("search_memories", {"query": "locker"}) == \
            "Invalid arguments for search_memories: user_id is required"
        assert "scope.user_id is required" in client.fails("delete_all_memories", {"scope": {"agent_id": "x"}})
        found = client.ok("search_memories", {"query": "locker code", "user_id": "bob"})["results"]
        assert found[0]["id"] == bob["memory"]
        assert client.fails("get_memory", {"memory_id": bob["memory"], "user_id": "carol"})
        templates = client.run(client.client.list_resource_templates).resource_templates
        assert [t.uri_template for t in templates] == ["agentbase://users/{user_id}/memories/recent"]
        text = client.run(client.client.read_resource, "agentbase://users/bob/memories/recent").contents[0].text
        assert "4417" in text
    finally:
        client.close()
