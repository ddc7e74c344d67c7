"""Mem0 OSS -> agentbase: memories written by the real mem0 (local Qdrant, FAISS), imported from the
same config, then read back through our Mem0 adapter with the same calls."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-"))

from agentbase_adapters.importers import import_from
from agentbase_adapters.mem0 import Mem0Adapter
from agentbase_kernel import AgentBase, InvalidArgument
from tests.conftest import HashEmbedder


class HashForMem0:
    """The tests' deterministic embedder with mem0's interface, so both sides rank alike."""

    def __init__(self) -> None:
        self._e = HashEmbedder()

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: list[str], memory_action: str | None = None) -> list[list[float]]:
        return [v.astype(float).tolist() for v in self._e.embed_batch(list(texts))]


def vector_store(kind: str, tmp_path: Path) -> dict[str, Any]:
    if kind == "qdrant":
        return {"provider": "qdrant", "config": {"path": str(tmp_path / "qdrant"), "on_disk": True,
                                                  "collection_name": "mem0", "embedding_model_dims": 64}}
    return {"provider": "faiss", "config": {"path": str(tmp_path / "faiss"), "collection_name": "mem0",
                                             "embedding_model_dims": 64}}


def write_with_mem0(config: dict[str, Any]) -> dict[str, Any]:
    """Fill a real mem0 store (infer=False: no LLM); return what mem0 itself reads back."""
    import mem0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mem0.Memory.from_config(config)
    m.embedding_model = HashForMem0()
    tea = m.add("I like green tea in the morning", user_id="alice", metadata={"source": "chat", "n": 3},
                infer=False)["results"][0]["id"]
    m.add([{"role": "user", "content": "My dog is called Rex"}], user_id="alice", agent_id="helper", run_id="run-7",
          infer=False)
    m.add("Bob prefers aisle seats on flights", user_id="bob", infer=False)
    m.update(tea, "I like jasmine tea in the morning")
    gone = m.add("a temporary note", user_id="alice", infer=False)["results"][0]["id"]
    m.delete(gone)
    seen = {
        "alice": m.get_all(filters={"user_id": "alice"})["results"],
        "bob": m.get_all(filters={"user_id": "bob"})["results"],
        "search": m.search("what tea do I drink", filters={"user_id": "alice"}, top_k=1)["results"],
        "history": m.history(tea),
        "deleted": m.history(gone),
        "tea": tea,
        "gone": gone,
    }
    m.vector_store.client.close() if hasattr(m.vector_store, "client") and hasattr(m.vector_store.client, "close") else None
    return seen


def same_moment(a: str, b: str) -> bool:
    return datetime.fromisoformat(a) == datetime.fromisoformat(b)


@pytest.mark.parametrize("kind", ["qdrant", "faiss"])
def test_mem0_store_imports_with_times_metadata_and_history(kind: str, tmp_path: Path, db_location) -> None:
    if kind == "faiss":
        pytest.importorskip("faiss")
    config = {"vector_store": vector_store(kind, tmp_path),
              "llm": {"provider": "openai", "config": {"api_key": "sk-test"}},
              "embedder": {"provider": "openai", "config": {"api_key": "sk-test", "embedding_dims": 64}},
              "history_db_path": str(tmp_path / "history.db")}
    seen = write_with_mem0(config)
    config_file = tmp_path / "mem0.json"
    config_file.write_text(json.dumps(config), encoding="utf-8")

    db = AgentBase(db_location, embedder=HashEmbedder())
    try:
        summary = import_from(db.sync, "mem0", config_file)
        assert summary["by_type"]["memory"]["inserted"] == 3
        assert summary["by_type"]["history"]["inserted"] == 2  # the deleted memory's ADD and DELETE
        ours = Mem0Adapter(db)
        for user in ("alice", "bob"):
            theirs = {r["id"]: r for r in seen[user]}
            mine = {r["id"]: r for r in ours.get_all(filters={"user_id": user})["results"]}
            assert mine.keys() == theirs.keys()
            for mid, r in theirs.items():
                assert mine[mid]["memory"] == r["memory"]
                assert mine[mid].get("metadata") == r.get("metadata")
                assert same_moment(mine[mid]["created_at"], r["created_at"])
                assert same_moment(mine[mid]["updated_at"], r["updated_at"])
                for key in ("user_id", "agent_id", "run_id", "role"):
                    assert mine[mid].get(key) == r.get(key), key
        hit = ours.search("what tea do I drink", filters={"user_id": "alice"}, top_k=1)["results"][0]
        assert hit["id"] == seen["search"][0]["id"] and hit["memory"] == "I like jasmine tea in the morning"
        for key in ("tea", "gone"):
            theirs_h = seen["history" if key == "tea" else "deleted"]
            mine_h = ours.history(seen[key])
            assert [(h["event"], h["old_memory"], h["new_memory"]) for h in mine_h] == \
                   [(h["event"], h["old_memory"], h["new_memory"]) for h in theirs_h]
        again = import_from(db.sync, "mem0", config_file)
        assert again["by_type"]["memory"] == {"inserted": 0, "updated": 0, "skipped": 3}
        assert db.sync.count(user_id="alice") == 2
    finally:
        db.sync.close()


def test_mem0_dry_run_and_unscoped_memories(tmp_path: Path, db_location) -> None:
    import mem0

    config = {"vector_store": vector_store("qdrant", tmp_path),
              "llm": {"provider": "openai", "config": {"api_key": "sk-test"}},
              "embedder": {"provider": "openai", "config": {"api_key": "sk-test", "embedding_dims": 64}},
              "history_db_path": str(tmp_path / "history.db")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mem0.Memory.from_config(config)
    m.embedding_model = HashForMem0()
    m.add("Carol is vegetarian", user_id="carol", infer=False)
    m.vector_store.client.close()
    db = AgentBase(db_location, embedder=HashEmbedder())
    try:
        dry = import_from(db.sync, "mem0", config, dry_run=True)
        assert dry["by_type"] == {"memory": 1} and db.sync.stats()["entries"] == 0
        with pytest.raises(InvalidArgument, match="Not a valid Mem0 config"):
            import_from(db.sync, "mem0", {"vector_store": {"provider": "qdrant", "config": {"nonsense": 1}}})
    finally:
        db.sync.close()
