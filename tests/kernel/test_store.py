"""The file itself: WAL, migrations, persistence, FTS sync, vector backends, many writers."""

from __future__ import annotations

import multiprocessing
import sqlite3

import numpy as np
import pytest

from agentbase_kernel import AgentBase, EmbeddingMismatch, Kernel, SchemaTooNew, StorageError
from agentbase_kernel.records import Scope
from agentbase_kernel.store import EntryFilter
from agentbase_kernel.store.sqlite.migrations import SCHEMA_VERSION


@pytest.mark.sqlite_only("about the SQLite file and its WAL / sqlite-vec")
def test_wal_mode_and_files_on_disk(kernel, db_path):
    kernel.add_memory("hello world", user_id="u")
    assert kernel.info()["journal_mode"] == "wal"
    assert (db_path.parent / (db_path.name + "-wal")).exists()


def test_migrates_an_empty_file(tmp_path, hash_embedder):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with Kernel(path, embedder=hash_embedder, ner="regex") as k:
        assert k.info()["schema_version"] == SCHEMA_VERSION
        k.add_memory("works", user_id="u")
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"entries", "entry_history", "sessions", "messages", "session_entries", "entities",
            "entity_entries", "retrieval_traces", "trace_steps", "embeddings"} <= tables


def test_refuses_a_newer_schema_untouched(tmp_path, hash_embedder):
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.execute("CREATE TABLE future (x)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(SchemaTooNew, match="upgrade agentbase"):
        Kernel(path, embedder=hash_embedder).initialize()
    assert path.read_bytes() == before


def test_not_a_database(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StorageError, match="not a usable SQLite database"):
        Kernel(path, embedder=None).initialize()


def test_persistence_across_reopen(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        entry_id = k.add_memory("persist me please", user_id="u").id
        k.add_message("s1", "user", "first turn")
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        assert k.get(entry_id).l2_full == "persist me please"
        assert [m.content for m in k.list_messages("s1")] == ["first turn"]
        assert [h.id for h in k.find("persist", user_id="u")] == [entry_id]


def test_embedder_mismatch_is_refused(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        k.add_memory("x", user_id="u")

    class Other(type(hash_embedder)):
        name = "other-model"
        dim = 32

    with pytest.raises(EmbeddingMismatch, match="open it with the embedder that created it"):
        Kernel(db_path, embedder=Other()).initialize()


def test_close_twice_and_closed_error(db_path, hash_embedder):
    k = Kernel(db_path, embedder=hash_embedder)
    k.initialize()
    k.close()
    k.close()
    with pytest.raises(RuntimeError, match="has been closed"):
        k.add_memory("x", user_id="u")


def _fts_ok(kernel) -> bool:
    return kernel.verify()["fts_ok"]


def test_fts_stays_in_sync(kernel):
    ids = [kernel.add_memory(f"apple banana {i}", user_id="u").id for i in range(5)]
    kernel.update(ids[0], text="cherry only")
    kernel.delete(ids[1])
    assert _fts_ok(kernel)
    fts_only = kernel.config.with_(retrieval={"vectors": False}).retrieval
    found = {h.id for h in kernel.find("banana", user_id="u", config=fts_only)}
    assert found == set(ids[2:])
    assert [h.id for h in kernel.find("cherry", user_id="u", config=fts_only)] == [ids[0]]
    kernel.delete_all(user_id="u")
    assert _fts_ok(kernel)
    assert len(kernel.find("banana", user_id="u")) == 0


def test_chinese_find(kernel):
    a = kernel.add_memory("我喜欢在北京吃烤鸭", user_id="u").id
    kernel.add_memory("我住在上海，工作很忙", user_id="u")
    hits = kernel.find("北京烤鸭", user_id="u")
    assert hits[0].id == a
    assert "fts" in hits[0].matched_by


@pytest.mark.sqlite_only("about the SQLite file and its WAL / sqlite-vec")
def test_sqlite_vec_and_numpy_agree(kernel):
    assert kernel._store.vec_enabled, "sqlite-vec should load through sqlean here"
    texts = [f"memory about topic {w} and {v}" for w in ("tea", "coffee", "jazz", "rock", "python")
             for v in ("red", "blue", "green", "gold")]
    for t in texts:
        kernel.add_memory(t, user_id="u")
    q = kernel.embedder.embed_batch(["coffee blue things"])[0]
    flt = EntryFilter(scope=Scope(user_id="u"))
    vec = kernel._store.vector_search(q, flt, 10)
    brute = kernel._store.vector_search(q, flt, 10, force_numpy=True)
    assert [r for r, _ in vec] == [r for r, _ in brute]
    assert np.allclose([d for _, d in vec], [d for _, d in brute], atol=1e-5)


def _writer(path: str, worker: int, n: int) -> None:
    from tests.conftest import HashEmbedder

    with Kernel(path, embedder=HashEmbedder(), ner="regex") as k:
        for i in range(n):
            k.add_memory(f"worker {worker} write {i}", user_id=f"w{worker}")


def test_four_processes_250_writes_each(db_path, hash_embedder):
    Kernel(db_path, embedder=hash_embedder).initialize().close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db_path), w, 250)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    with Kernel(db_path, embedder=hash_embedder) as k:
        for w in range(4):
            texts = {e.l2_full for e in k.list(user_id=f"w{w}", limit=None)}
            assert texts == {f"worker {w} write {i}" for i in range(250)}
        assert k.verify()["ok"]


async def test_quick_start_as_written(tmp_path, hash_embedder):
    db = AgentBase(path=str(tmp_path / "my_agent.db"), embedder=hash_embedder)
    await db.initialize()
    await db.add_memory("User prefers Python 3.12", category="preference", tags=["python"])
    results = await db.find("Python preferences", top_k=5)
    lines = [f"{r.entry.context_type.value} {r.entry.l2_full}" for r in results]
    assert lines == ["memory User prefers Python 3.12"]
    await db.close()


def test_sync_inside_running_loop(db):
    import asyncio

    async def main() -> str:
        db.sync.add_memory("called from a loop", user_id="u")
        return db.sync.find("loop", user_id="u")[0].entry.l2_full

    assert asyncio.run(main()) == "called from a loop"


def test_threads_share_one_kernel(kernel):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: kernel.add_memory(f"thread write {i}", user_id="t"), range(200)))
    assert kernel.count(user_id="t") == 200


async def test_memory_database_is_shared_across_threads(hash_embedder):
    db = AgentBase(":memory:", embedder=hash_embedder, ner="regex")
    await db.add_memory("kept in memory", user_id="u")
    assert [e.l2_full for e in await db.list(user_id="u")] == ["kept in memory"]
    await db.close()
