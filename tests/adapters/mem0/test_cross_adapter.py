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
