"""Words common in a large scope (store/postgres/common_terms.py): candidates from their newest rows,
their part added on the rarer words' rows exactly, and exact ranking below the threshold.

The threshold is lowered to 30 rows so that a few hundred memories show what a million do.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from agentbase_kernel import Kernel
from agentbase_kernel.config import StorageConfig
from agentbase_kernel.records import Scope
from agentbase_kernel.store import open_store
from agentbase_kernel.store.base import EntryFilter

pytestmark = pytest.mark.postgres

COMMON_ROWS = 30


def _texts() -> list[tuple[str, str]]:
    """300 memories of user ``big``: "garden" in every third one, short in the older half (exact BM25
    prefers them) and long in the newer; "zephyr" in three old ones. 20 of user ``small`` likewise."""
    out = []
    for i in range(300):
        words = "garden" if i % 3 == 0 else "orchard"
        filler = "" if i < 150 else " with many more words about the weather the guests and the long afternoon"
        rare = " zephyr" if i in (12, 42, 72) else ""
        out.append(("big", f"note {i} {words}{rare}{filler}"))
    out += [("small", f"entry {i} {'garden' if i % 3 == 0 else 'orchard'}{' x' * (i % 5)}") for i in range(20)]
    return out


@pytest.fixture
def url(postgres_url: str, hash_embedder: object) -> str:
    with Kernel(postgres_url, embedder=hash_embedder, ner="regex") as kernel:
        kernel.add_memories([{"text": text, "user_id": user} for user, text in _texts()])
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("ANALYZE entries")
    return postgres_url


@pytest.fixture
def stores(url: str) -> Iterator[tuple[object, object]]:
    """The same database with the threshold lowered, and ranked exactly (threshold out of reach)."""
    common = open_store(url, StorageConfig(fts_common_rows=COMMON_ROWS))
    exact = open_store(url, StorageConfig(fts_common_rows=10**9))
    try:
        yield common, exact
    finally:
        common.close()
        exact.close()


def _texts_of(store, rids: list[int]) -> list[str]:  # type: ignore[no-untyped-def]
    entries = store.entries_by_rid(rids)
    return [entries[rid].text for rid in rids]


def test_a_common_word_alone_takes_its_rows_from_the_newest(stores) -> None:  # type: ignore[no-untyped-def]
    common, exact = stores
    flt = EntryFilter(scope=Scope(user_id="big"))
    exact_top = _texts_of(exact, [rid for rid, _ in exact.fts_search(["garden"], flt, 10, per_term=20)])
    common_top = _texts_of(common, [rid for rid, _ in common.fts_search(["garden"], flt, 10, per_term=20)])
    assert all("garden" in text and "weather" not in text for text in exact_top)  # exact BM25: the short, old rows
    assert len(common_top) == 10
    assert all("garden" in text and int(text.split()[1]) >= 150 for text in common_top)


def test_rows_found_by_a_rare_word_get_the_common_words_part_as_exact_ranking_gives_it(stores) -> None:  # type: ignore[no-untyped-def]
    common, exact = stores
    flt = EntryFilter(scope=Scope(user_id="big"))
    got = common.fts_search(["garden", "zephyr"], flt, 3, per_term=20)
    want = exact.fts_search(["garden", "zephyr"], flt, 3, per_term=400)
    # rows 12, 42 and 72 hold both words; their scores match exact ranking (the statistics saw every row,
    # so the estimated document count of "garden" is its count)
    assert _texts_of(common, [rid for rid, _ in got]) == _texts_of(exact, [rid for rid, _ in want])
    assert {int(t.split()[1]) for t in _texts_of(common, [rid for rid, _ in got])} == {12, 42, 72}
    assert [score for _, score in got] == pytest.approx([score for _, score in want])


def test_a_scope_where_the_word_is_not_common_is_ranked_exactly(stores) -> None:  # type: ignore[no-untyped-def]
    common, exact = stores
    flt = EntryFilter(scope=Scope(user_id="small"))  # "garden" in 7 rows here: under the threshold
    assert common.fts_search(["garden"], flt, 10, per_term=5) == exact.fts_search(["garden"], flt, 10, per_term=5)


def test_find_puts_the_row_with_both_words_first(url: str, hash_embedder: object) -> None:
    from agentbase_kernel import Config

    config = Config().with_(storage={"fts_common_rows": COMMON_ROWS})
    with Kernel(url, embedder=hash_embedder, ner="regex", config=config) as kernel:
        hits = kernel.find("zephyr garden", user_id="big", top_k=3).hits
    assert {int(h.entry.text.split()[1]) for h in hits} == {12, 42, 72}


def test_without_statistics_every_word_is_ranked_exactly(postgres_url: str, hash_embedder: object) -> None:
    with Kernel(postgres_url, embedder=hash_embedder, ner="regex") as kernel:
        with psycopg.connect(postgres_url, autocommit=True) as conn:  # no ANALYZE: no most-common words
            conn.execute("ALTER TABLE entries SET (autovacuum_enabled = false)")
        kernel.add_memories([{"text": text, "user_id": user} for user, text in _texts()[:100]])
    common = open_store(postgres_url, StorageConfig(fts_common_rows=COMMON_ROWS))
    exact = open_store(postgres_url, StorageConfig(fts_common_rows=10**9))
    try:
        flt = EntryFilter(scope=Scope(user_id="big"))
        assert common.fts_search(["garden"], flt, 10, per_term=20) == exact.fts_search(["garden"], flt, 10, per_term=20)
    finally:
        common.close()
        exact.close()


def test_the_planner_settings_of_a_window_do_not_outlive_it(stores) -> None:  # type: ignore[no-untyped-def]
    common, _ = stores
    common.fts_search(["garden"], EntryFilter(scope=Scope(user_id="big")), 10, per_term=20)
    with common.conns.read() as conn:
        assert conn.execute("SELECT current_setting('enable_indexscan'), current_setting('cpu_operator_cost')"
                            ).fetchone() == ("on", "0.0025")
