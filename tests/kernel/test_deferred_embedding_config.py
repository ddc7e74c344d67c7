"""``ingest.defer_embedding`` through the public kernel API (the mechanism: test_ingest_batching.py)."""

import pytest

from agentbase_kernel import AgentBase, Config, Kernel


def _config():
    return Config().with_(ingest={"defer_embedding": True})


def test_deferred_writes_get_their_vectors_and_verify_counts_the_backlog(tmp_path, hash_embedder):
    with Kernel(tmp_path / "m.db", embedder=hash_embedder, ner="regex", config=_config()) as kernel:
        kernel.add_messages("s", [{"role": "user", "content": f"turn number {i} about kites"} for i in range(40)],
                            user_id="u")
        # FTS finds them at once, whatever the embedder has reached
        assert len(kernel.find("kites", user_id="u", top_k=50)) >= 40
        report = kernel.verify()
        assert report["ok"] and report["embedding_pending"] >= 0
        assert kernel.wait_embedded(timeout=60)
        report = kernel.verify()
        assert report == report | {"ok": True, "texts_without_vector": 0, "embedding_pending": 0}


def test_close_waits_for_the_backlog(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    kernel = Kernel(path, embedder=hash_embedder, ner="regex", config=_config())
    kernel.add_messages("s", [{"role": "user", "content": f"note {i} on gliders"} for i in range(30)], user_id="u")
    kernel.close()
    with Kernel(path, embedder=hash_embedder, ner="regex") as reopened:
        assert reopened.verify()["texts_without_vector"] == 0


def test_without_deferral_wait_embedded_returns_at_once(kernel):
    kernel.add_memory("hello", user_id="u")
    assert kernel.wait_embedded(timeout=0.01)
    assert kernel.verify()["embedding_pending"] == 0


@pytest.mark.asyncio
async def test_async_facade(tmp_path, hash_embedder):
    db = AgentBase(tmp_path / "a.db", embedder=hash_embedder, ner="regex", config=_config())
    await db.add_messages("s", [{"role": "user", "content": "a kite in the wind"}], user_id="u")
    assert await db.wait_embedded(timeout=60)
    assert (await db.verify())["texts_without_vector"] == 0
    await db.close()


def test_env_switch(monkeypatch):
    monkeypatch.setenv("AGENTBASE_INGEST__DEFER_EMBEDDING", "true")
    assert Config.load().ingest.defer_embedding is True
