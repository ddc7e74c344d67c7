"""BM25's N and average length on PostgreSQL are counted again once the change log moved by 1% of the rows.

Counting a 1M-row table reads all of it; before, every write made the next ``find`` count it again.
"""

from __future__ import annotations

import pytest

from agentbase_kernel import Kernel
from agentbase_kernel.config import StorageConfig
from agentbase_kernel.records import Scope
from agentbase_kernel.store import open_store
from agentbase_kernel.store.base import EntryFilter

pytestmark = pytest.mark.postgres


def _score(store) -> float:  # type: ignore[no-untyped-def]
    return store.fts_search(["garden"], EntryFilter(scope=Scope(user_id="u")), 1)[0][1]


def test_a_write_within_one_percent_keeps_the_counts_and_more_writes_recount(postgres_url: str, hash_embedder) -> None:  # type: ignore[no-untyped-def]
    with Kernel(postgres_url, embedder=hash_embedder, ner="regex") as kernel:
        kernel.add_memories([{"text": f"item {i} {'garden' if i % 4 == 0 else 'orchard'}", "user_id": "u"}
                             for i in range(200)])
        store = open_store(postgres_url, StorageConfig())
        fresh = open_store(postgres_url, StorageConfig(fts_cache=False))
        try:
            before = _score(store)
            kernel.add_memories([{"text": "item a orchard", "user_id": "u"}])  # 1 of 200: within 1%
            assert _score(store) == before  # N still 200 ...
            assert _score(fresh) != before  # ... where a count now gives 201
            kernel.add_memories([{"text": f"item b{i} orchard", "user_id": "u"} for i in range(3)])
            assert _score(store) == _score(fresh)  # 4 writes: past 1%, counted again
        finally:
            store.close()
            fresh.close()


def test_a_small_scope_is_counted_again_after_any_write(postgres_url: str, hash_embedder) -> None:  # type: ignore[no-untyped-def]
    with Kernel(postgres_url, embedder=hash_embedder, ner="regex") as kernel:
        kernel.add_memories([{"text": f"item {i} {'garden' if i % 4 == 0 else 'orchard'}", "user_id": "u"}
                             for i in range(40)])
        store = open_store(postgres_url, StorageConfig())
        fresh = open_store(postgres_url, StorageConfig(fts_cache=False))
        try:
            _score(store)
            kernel.add_memories([{"text": "item a orchard", "user_id": "u"}])
            assert _score(store) == _score(fresh)
        finally:
            store.close()
            fresh.close()


def test_a_count_is_fresh_within_one_percent_of_the_rows_it_counted() -> None:
    from agentbase_kernel.store.postgres.planner import count_is_fresh

    assert count_is_fresh(100, 110, 1_000) and not count_is_fresh(100, 111, 1_000)
    assert count_is_fresh(7, 7, 40) and not count_is_fresh(7, 8, 40)  # under 100 rows: any change
