"""``Kernel.bulk_load()``: on PostgreSQL the HNSW index is built once when the block ends, not kept up per write.

pgvector updates its graph on every insert once the index exists; a load of many memories is several times
faster when the index is built after it (``store/postgres/search.py``). Searches inside the block rank exactly.
"""

from __future__ import annotations

import psycopg
import pytest

from agentbase_kernel import Config, Kernel

pytestmark = pytest.mark.postgres

SHORTLIST = 50  # a scope above this many vectors is searched through the HNSW index


def _has_index(url: str) -> bool:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT 1 FROM pg_class WHERE relname = 'embeddings_hnsw'").fetchone() is not None


def _items(first: int, n: int) -> list[dict[str, object]]:
    return [{"text": f"note {i}: the garden party for team {i % 7} moved to hall {i}", "user_id": "u"}
            for i in range(first, first + n)]


def _kernel(url: str, embedder: object) -> Kernel:
    return Kernel(url, embedder=embedder, ner="regex", config=Config().with_(storage={"vector_shortlist_above": SHORTLIST}))


def test_the_index_is_built_when_the_block_ends_and_searches_inside_rank_exactly(postgres_url, hash_embedder):
    with _kernel(postgres_url, hash_embedder) as kernel:
        with kernel.bulk_load():
            kernel.add_memories(_items(0, 60))
            with kernel.bulk_load():  # nested: only the outermost block builds
                kernel.add_memories(_items(60, 60))
            assert not _has_index(postgres_url)
            inside = kernel.find("garden party team 3 hall 10", user_id="u", top_k=5)
            assert inside.hits
        assert _has_index(postgres_url)
        after = kernel.find("garden party team 3 hall 10", user_id="u", top_k=5)
        assert [h.entry.id for h in after.hits][:1] == [h.entry.id for h in inside.hits][:1]
        kernel.add_memories(_items(120, 10))  # later writes keep the index up as before
        assert kernel.count(user_id="u") == 130


def test_without_the_block_writes_make_the_index_as_they_go(postgres_url, hash_embedder):
    with _kernel(postgres_url, hash_embedder) as kernel:
        kernel.add_memories(_items(0, 120))
        assert _has_index(postgres_url)


def test_a_failed_load_leaves_what_committed_and_the_next_write_makes_the_index(postgres_url, hash_embedder):
    with _kernel(postgres_url, hash_embedder) as kernel:
        with pytest.raises(RuntimeError, match="stop"):
            with kernel.bulk_load():
                kernel.add_memories(_items(0, 120))
                raise RuntimeError("stop")
        assert not _has_index(postgres_url) and kernel.count(user_id="u") == 120
        kernel.add_memories(_items(120, 1))
        assert _has_index(postgres_url)


def test_an_import_into_postgres_loads_inside_bulk_load_and_leaves_the_index_built(postgres_url, hash_embedder, tmp_path):
    source = tmp_path / "source.db"
    with Kernel(source, embedder=hash_embedder, ner="regex") as kernel:
        with kernel.bulk_load():  # SQLite: nothing to defer, the same call works
            kernel.add_memories(_items(0, 120))
        kernel.export(tmp_path / "all.jsonl")
    with _kernel(postgres_url, hash_embedder) as kernel:
        result = kernel.import_(tmp_path / "all.jsonl")
        assert sum(c["inserted"] for c in result["by_type"].values()) >= 120
        assert _has_index(postgres_url)
        assert kernel.find("garden party hall 7", user_id="u", top_k=3).hits


async def test_the_async_facade_loads_inside_bulk_load_too(postgres_url, hash_embedder):
    from agentbase_kernel import AgentBase

    async with AgentBase(postgres_url, embedder=hash_embedder, ner="regex",
                         config=Config().with_(storage={"vector_shortlist_above": SHORTLIST})) as db:
        async with db.bulk_load():
            await db.add_memories(_items(0, 120))
            assert not _has_index(postgres_url)
        assert _has_index(postgres_url)
        with pytest.raises(ValueError, match="inside"):
            async with db.bulk_load():
                raise ValueError("inside")
