"""One file, three doors: what Mem0's ``Memory`` writes, the kernel and the Minimal API read, and back."""

from __future__ import annotations

from agentbase_adapters.mem0 import Memory
from agentbase_adapters.minimal import MinimalAdapter
from agentbase_kernel import AgentBase


def test_memory_writes_kernel_and_minimal_read_the_same_file(tmp_path, hash_embedder):
    path = tmp_path / "shared.db"
    config = {"vector_store": {"provider": "qdrant", "config": {"path": str(path)}},
              "embedder": {"provider": "agentbase", "config": {"embedder": hash_embedder}}}
    with Memory.from_config(config) as m:
        [pizza] = m.add("I like pizza", user_id="alice", metadata={"topic": "food"}, infer=False)["results"]
        [trip] = m.add("We fly to Lisbon on Friday", user_id="alice", run_id="trip-1", infer=False)["results"]
        m.update(pizza["id"], "I love pizza")
        mem0_view = m.get(pizza["id"])

    with AgentBase(path, embedder=hash_embedder, ner="regex") as db:
        kernel = db.sync
        entry = kernel.get(pizza["id"])
        assert (entry.text, entry.user_id, entry.metadata, entry.content_hash) == (
            "I love pizza", "alice", {"topic": "food"}, mem0_view["hash"])
        assert entry.created_at.isoformat() == mem0_view["created_at"]
        assert [e.id for e in kernel.list(session_id="trip-1")] == [trip["id"]]
        assert [h.event for h in kernel.history(pizza["id"])] == ["ADD", "UPDATE"]
        assert kernel.find("pizza", user_id="alice")[0].id == pizza["id"]

        minimal = MinimalAdapter(db)
        assert [h.id for h in minimal.recall("pizza", who="alice", top_k=1)] == [pizza["id"]]
        note = minimal.remember("Alice's passport expires in May", who="alice", tags=["travel"], source="minimal")

    with Memory.from_config(config) as m:
        rows = {r["id"]: r for r in m.get_all(filters={"user_id": "alice"})["results"]}
        assert set(rows) == {pizza["id"], trip["id"], note}
        assert rows[note]["metadata"] == {"source": "minimal"} and rows[note]["role"] == "user"
        assert rows[trip["id"]]["run_id"] == "trip-1"
        assert m.search("passport", filters={"user_id": "alice"})["results"][0]["id"] == note
        assert MinimalAdapter(m.db).forget(note) == 1
        assert m.get(note) is None
        assert [h["event"] for h in m.history(note)] == ["ADD", "DELETE"]


def test_harness_memory_files_are_found_by_mem0_mcp_and_the_dashboard(tmp_path, hash_embedder):
    """What agents note through the harness adapters is a memory of its user: the Mem0 swap, the MCP
    server and the dashboard find it in that user's scope, and never in another's."""
    import asyncio

    from starlette.testclient import TestClient

    from agentbase_adapters.deepagents import AgentBaseBackend
    from agentbase_adapters.pydantic_ai import AgentBaseMemoryStore
    from agentbase_adapters.web import create_app
    from agentbase_kernel import Kernel
    from tests.adapters.mcp.conftest import McpClient, launch

    path = tmp_path / "harness.db"
    notes = {"pydantic-ai": "Alice is allergic to peanuts", "deepagents": "Alice is allergic to penicillin"}
    with AgentBase(path, embedder=hash_embedder, ner="regex") as db:
        notebook = AgentBaseMemoryStore(db)

        async def write() -> None:
            await notebook.write("alice/main/MEMORY.md", f"- {notes['pydantic-ai']}\n", expected_version=None)
            await notebook.write("bob/main/MEMORY.md", "- Bob is allergic to shellfish\n", expected_version=None)

        asyncio.run(write())
        assert AgentBaseBackend(db, user_id="alice").write("/allergies.md", notes["deepagents"] + "\n").error is None
        assert AgentBaseBackend(db, user_id="bob").write("/allergies.md", "Bob is allergic to cats\n").error is None
        db.sync.wait_embedded()

    config = {"vector_store": {"provider": "qdrant", "config": {"path": str(path)}},
              "embedder": {"provider": "agentbase", "config": {"embedder": hash_embedder}}}
    with Memory.from_config(config) as m:
        alice = m.search("what is alice allergic to", filters={"user_id": "alice"})["results"]
        assert all(note in " ".join(r["memory"] for r in alice) for note in notes.values())
        assert "shellfish" not in " ".join(r["memory"] for r in alice)
        assert {r["memory"].strip("- \n") for r in m.get_all(filters={"user_id": "bob"})["results"]} == {
            "Bob is allergic to shellfish", "Bob is allergic to cats"}

    client = McpClient(launch(path, "--user-id", "alice"))
    try:
        found = client.ok("search_memories", {"query": "allergic"})["results"]
    finally:
        client.close()
    assert all(note in " ".join(r["content"] for r in found) for note in notes.values())
    assert "shellfish" not in " ".join(r["content"] for r in found)

    with Kernel(path, embedder=hash_embedder, ner="regex", create=False) as kernel:
        web = TestClient(create_app(kernel, cache_seconds=0), base_url="http://127.0.0.1:8080",
                         client=("127.0.0.1", 40000))
        page = web.get("/memories?q=allergic&user_id=alice").text
        assert all(note in page for note in notes.values()) and "shellfish" not in page
        for source in notes:
            [entry] = kernel.list(user_id="alice", metadata={"file_store": source})
            assert entry.source == source and notes[source] in web.get(f"/memories/{entry.id}").text
