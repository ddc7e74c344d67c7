"""export_memories: the scope's export records, never another scope's, with an honest limit."""

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
        bob = k.add_memory(BOB_SECRET, user_id="bob").id
        k.add_messages("bob-chat", [{"role": "user", "content": "Bob met Quillon at Zephyrgym"}], user_id="bob")
        alice = [k.add_memory(f"Alice note number {i} about tea", user_id="alice").id for i in range(5)]
        k.update(alice[0], user_id="alice", text="Alice note number 0 about green tea")
        k.add_messages("alice-chat", [{"role": "user", "content": "Alice asked about oolong"}], user_id="alice")
    return path, bob, alice


@pytest.fixture(scope="module")
def alice_client(shared):
    client = McpClient(launch(shared[0], "--user-id", "alice"))
    yield client
    client.close()


def test_export_holds_the_scopes_memories_with_ids_and_history_and_nothing_of_bob(shared, alice_client):
    path, bob, alice = shared
    out = alice_client.ok("export_memories")
    assert out["truncated"] is False and out["count"] == len(out["records"])
    header = out["header"]
    assert header["format"] == "agentbase-export" and header["filters"] == {"user_id": "alice"}
    assert header["vectors"] is False
    types = {r["type"] for r in out["records"]}
    assert "vector" not in types and {"entry", "session", "message"} <= types
    entries = {r["id"]: r for r in out["records"] if r["type"] == "entry"}
    assert set(alice) <= set(entries)
    assert all(e["user_id"] == "alice" for e in entries.values())
    assert [h["event"] for h in entries[alice[0]]["history"]] == ["ADD", "UPDATE"]
    assert entries[alice[0]]["l2_full"] == "Alice note number 0 about green tea"
    sessions = [r["id"] for r in out["records"] if r["type"] == "session"]
    assert sessions == ["alice-chat"]
    text = json.dumps(out)
    assert bob not in text and "4417" not in text and "Quillon" not in text and "bob" not in text.lower()


def test_limit_truncates_honestly(shared, alice_client):
    full = alice_client.ok("export_memories", {"limit": 1000})
    assert full["truncated"] is False
    n = len(full["records"])
    exact = alice_client.ok("export_memories", {"limit": n})
    assert exact["truncated"] is False
    # the trailer's digest covers the header, whose exported_at differs between the two exports
    assert exact["records"][:-1] == full["records"][:-1]
    assert exact["records"][-1]["type"] == full["records"][-1]["type"] == "trailer"
    assert exact["records"][-1]["records"] == full["records"][-1]["records"]
    short = alice_client.ok("export_memories", {"limit": 2})
    assert short["truncated"] is True and short["count"] == 2 and short["records"] == full["records"][:2]
    assert short["header"]["format"] == "agentbase-export"


def test_schema_refuses_unknown_and_scope_arguments_and_bad_limits(alice_client):
    tool = next(t for t in alice_client.tools() if t.name == "export_memories")
    assert tool.input_schema["additionalProperties"] is False and tool.annotations.read_only_hint is True
    for key in ("user_id", "agent_id", "path", "traces"):
        message = alice_client.fails("export_memories", {key: "bob"})
        assert message.startswith(f"Invalid arguments for export_memories: unexpected argument(s) '{key}'"), message
    assert alice_client.fails("export_memories", {"limit": 1001})
    assert alice_client.fails("export_memories", {"limit": 0})


def test_vectors_on_request(alice_client):
    out = alice_client.ok("export_memories", {"vectors": True, "limit": 1000})
    assert out["header"]["vectors"] is True and any(r["type"] == "vector" for r in out["records"])


def test_multi_tenant_exports_only_the_named_user(shared):
    path, bob, alice = shared
    client = McpClient(launch(path, "--multi-tenant"))
    try:
        assert "user_id is required" in client.fails("export_memories", {})
        out = client.ok("export_memories", {"user_id": "bob"})
        ids = {r["id"] for r in out["records"] if r["type"] == "entry"}
        assert bob in ids and not ids & set(alice)
        assert "Alice" not in json.dumps(out)
    finally:
        client.close()
