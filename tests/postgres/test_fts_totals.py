"""BM25's N and average length on PostgreSQL are counted again once the change log moved by 1% of the rows.

Counting a 1M-row table reads all of it; before, every write made the next ``find`` count it again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agentbase_kernel import Kernel
from agentbase_kernel.config import StorageConfig
from agentbase_kernel.records import Scope
from agentbase_kernel.store import open_store
from agentbase_kernel.store.base import EntryFilter

pytestmark = pytest.mark.postgres


def _score(store) -> float:  # type: ignore[no-untyped-def]
    return store.fts_search(["garden"], EntryFilter(scope=Scope(user_id="u")), 1)[0][1]


@contextmanager
def _loaded(url: str, embedder: object, rows: int) -> Iterator[tuple[Kernel, object, object]]:
    """``rows`` memories of user ``u`` ("garden" in every fourth), the kernel that wrote them, and two
    stores on them: one caching as usual and one counting afresh for every search."""
    with Kernel(url, embedder=embedder, ner="regex") as kernel:
        kernel.add_memories([{"text": f"item {i} {'garden' if i % 4 == 0 else 'orchard'}", "user_id": "u"}
                             for i in range(rows)])
        store = open_store(url, StorageConfig())
        fresh = open_store(url, StorageConfig(fts_cache=False))
        try:
            yield kernel, store, fresh
        finally:
            store.close()
            fresh.close()


def test_a_write_within_one_percent_keeps_the_counts_and_more_writes_recount(postgres_url: str, hash_embedder) -> None:  # type: ignore[no-untyped-def]
    with _loaded(postgres_url, hash_embedder, 200) as (kernel, store, fresh):
        before = _score(store)
        kernel.add_memories([{"text": "item a orchard", "user_id": "u"}])  # 1 of 200: within 1%
        assert _score(store) == before  # N still 200 ...
        assert _score(fresh) != before  # ... where a count now gives 201
        kernel.add_memories([{"text": f"item b{i} orchard", "user_id": "u"} for i in range(3)])
        assert _score(store) == _score(fresh)  # 4 writes: past 1%, counted again


def test_a_small_scope_is_counted_again_after_any_write(postgres_url: str, hash_embedder) -> None:  # type: ignore[no-untyped-def]
    with _loaded(postgres_url, hash_embedder, 40) as (kernel, store, fresh):
        _score(store)
        kernel.add_memories([{"text": "item a orchard", "user_id": "u"}])
        assert _score(store) == _score(fresh)


def test_a_count_is_fresh_within_one_percent_of_the_rows_it_counted() -> None:
    from agentbase_kernel.store.postgres.planner import count_is_fresh

    assert count_is_fresh(100, 110, 1_000) and not count_is_fresh(100, 111, 1_000)
    assert count_is_fresh(7, 7, 40) and not count_is_fresh(7, 8, 40)  # under 100 rows: any change
