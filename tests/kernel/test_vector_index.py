"""The in-RAM search caches: the per-scope ``VectorIndex`` and the FTS statistics.

Each cached answer is compared with the uncached scan on the same file: the same rids in the same
order, for random filters, after our own writes, after another process's writes, and after the
clock expires an entry.
"""

from __future__ import annotations

import math
import multiprocessing
import random
import time
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from agentbase_kernel import InvalidArgument, Kernel
from agentbase_kernel.records import Scope
from agentbase_kernel.store import EntryFilter, SqliteStore
from agentbase_kernel.store.vectors import VectorIndex, encode, nearest, top_k_cosine
from agentbase_kernel.text import tokenize

# SqliteStore's own caches; PostgreSQL searches with pgvector's HNSW and a GIN index instead (tests/store)
pytestmark = pytest.mark.sqlite_only("the SQLite store's in-RAM vector index and FTS cache")

WORDS = "tea coffee jazz rock python rust garden paris tokyo budget dinner trip red blue green gold".split()
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _fill(kernel, n: int = 240, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    ids = []
    for i in range(n):
        text = " ".join(rng.sample(WORDS, 4)) + f" note {i % 37}"
        ids.append(kernel.add_memory(
            text, user_id=rng.choice(["u1", "u1", "u2"]), agent_id=rng.choice([None, "a1"]),
            category=rng.choice([None, "food", "music"]), tags=rng.sample(["x", "y", "z"], rng.randrange(3)),
            metadata={"n": i % 5}, role=rng.choice(["user", "assistant"]), created_at=T0 + timedelta(days=i),
            dedup=False).entry.id)
    return ids


def _random_filter(rng: random.Random) -> EntryFilter:
    return EntryFilter(
        scope=Scope(user_id=rng.choice([None, "u1", "u2"]), agent_id=rng.choice([None, None, "a1"])),
        category=rng.choice([None, None, "food", "music"]), tags=rng.choice([None, None, ("x",), ("x", "z")]),
        role=rng.choice([None, None, "assistant"]), metadata=rng.choice([None, None, {"n": 3}]),
        since=rng.choice([None, T0 + timedelta(days=rng.randrange(240))]),
        until=rng.choice([None, None, T0 + timedelta(days=rng.randrange(240))]),
        include_invalid=rng.random() < 0.2, include_expired=rng.random() < 0.2,
        as_of=rng.choice([None, None, None, T0 + timedelta(days=100)]))


def _query(kernel, text: str) -> np.ndarray:
    return kernel.embedder.embed_batch([text])[0]


def _assert_same(kernel, q, flt, k):
    store = kernel._store
    indexed = store.vector_search(q, flt, k)
    numpy_scan = store.vector_search(q, flt, k, use_index=False, force_numpy=True)
    assert [r for r, _ in indexed] == [r for r, _ in numpy_scan]
    assert np.allclose([d for _, d in indexed], [d for _, d in numpy_scan], atol=1e-6)
    vec_scan = store.vector_search(q, flt, k, use_index=False)
    assert np.allclose([d for _, d in indexed], [d for _, d in vec_scan], atol=1e-5)
    return indexed


def test_index_matches_both_scans_for_random_filters(kernel):
    assert kernel._store.vec_enabled
    _fill(kernel)
    rng = random.Random(1)
    nonempty = 0
    for _ in range(80):
        flt = _random_filter(rng)
        q = _query(kernel, " ".join(rng.sample(WORDS, 3)))
        nonempty += bool(_assert_same(kernel, q, flt, rng.choice([1, 5, 30])))
    assert nonempty > 40


def test_selective_filter_falls_back_to_the_rows_sql_allows(kernel, monkeypatch):
    _fill(kernel)
    monkeypatch.setattr(kernel._store, "overfetch_max", 8)  # any filter passing < k of the 8 nearest falls back
    rng = random.Random(2)
    for _ in range(30):
        flt = _random_filter(rng)
        _assert_same(kernel, _query(kernel, " ".join(rng.sample(WORDS, 3))), flt, 30)


def test_ties_break_by_rid(kernel):
    for i in range(12):
        kernel.add_memory("same words here", user_id="u", dedup=False, metadata={"i": i})
    flt = EntryFilter(scope=Scope(user_id="u"))
    hits = _assert_same(kernel, _query(kernel, "same words"), flt, 5)
    assert [r for r, _ in hits] == sorted(r for r, _ in hits)
    assert len({d for _, d in hits}) == 1


def test_index_follows_our_writes(kernel):
    ids = _fill(kernel, 60)
    flt = EntryFilter(scope=Scope(user_id="u1"))
    q = _query(kernel, "tea coffee jazz")
    _assert_same(kernel, q, flt, 10)  # built
    assert kernel._store.cache_stats()["vector_indexes"]
    new = kernel.add_memory("tea coffee jazz only", user_id="u1").entry.id
    hits = _assert_same(kernel, q, flt, 10)
    assert kernel.get(new).id in {e.id for e in kernel._store.entries_by_rid([r for r, _ in hits]).values()}
    for entry_id in ids[:20]:
        try:
            kernel.delete(entry_id, user_id="u1")
        except KeyError:
            pass
    kernel.update(ids[30], user_id=kernel.get(ids[30]).scope.user_id, text="tea coffee jazz rewritten")
    _assert_same(kernel, q, flt, 10)
    kernel.delete(new, user_id="u1")
    hits = _assert_same(kernel, q, flt, 30)
    rids = kernel._store.entries_by_rid([r for r, _ in hits])
    assert new not in {e.id for e in rids.values()}


def test_reused_rid_gets_its_new_vector(kernel):
    kernel.add_memory("garden paris red", user_id="u")
    last = kernel.add_memory("tokyo budget dinner", user_id="u").entry.id
    flt = EntryFilter(scope=Scope(user_id="u"))
    q = _query(kernel, "jazz rock python")
    _assert_same(kernel, q, flt, 5)
    old_rid = kernel._store.conns.get().execute("SELECT rid FROM entries WHERE id = ?", (last,)).fetchone()[0]
    kernel.delete(last, user_id="u")
    kernel.add_memory("jazz rock python", user_id="u")  # SQLite hands out the deleted max rid again
    hits = _assert_same(kernel, q, flt, 5)
    assert hits[0][0] == old_rid and hits[0][1] < 1e-5


def _other_process_writes(path: str) -> None:
    from tests.conftest import HashEmbedder

    with Kernel(path, embedder=HashEmbedder(), ner="regex") as k:
        k.add_memory("jazz rock python from another process", user_id="u1")
        for e in k.list(user_id="u1", limit=5):
            k.delete(e.id, user_id="u1")


def test_index_follows_another_process(kernel, db_path):
    _fill(kernel, 60)
    flt = EntryFilter(scope=Scope(user_id="u1"))
    q = _query(kernel, "jazz rock python another process")
    before = _assert_same(kernel, q, flt, 10)
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=_other_process_writes, args=(str(db_path),))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    after = _assert_same(kernel, q, flt, 10)
    assert after != before
    top = kernel._store.entries_by_rid([after[0][0]])[after[0][0]]
    assert top.l2_full == "jazz rock python from another process"


def test_pruned_log_rebuilds_the_index(kernel):
    _fill(kernel, 40)
    flt = EntryFilter(scope=Scope(user_id="u1"))
    q = _query(kernel, "gold green blue")
    _assert_same(kernel, q, flt, 10)
    kernel.add_memory("gold green blue", user_id="u1")
    with kernel._store.conns.write() as conn:  # what the prune trigger does 100,000 changes later
        conn.execute("DELETE FROM entry_changes")
    kernel.add_memory("gold green blue again", user_id="u1")
    hits = _assert_same(kernel, q, flt, 10)
    texts = {e.l2_full for e in kernel._store.entries_by_rid([r for r, _ in hits]).values()}
    assert {"gold green blue", "gold green blue again"} <= texts


def test_write_transaction_reads_its_own_rows_and_rollback_leaves_the_index_right(kernel):
    _fill(kernel, 40)
    store = kernel._store
    flt = EntryFilter(scope=Scope(user_id="u1"))
    q = _query(kernel, "jazz python rust")
    _assert_same(kernel, q, flt, 10)
    with pytest.raises(RuntimeError, match="boom"):
        with store.transaction():
            kernel.add_memory("jazz python rust", user_id="u1")
            inside = store.vector_search(q, flt, 1)
            assert inside[0][1] < 1e-5  # the uncommitted row is found (scan inside a write)
            raise RuntimeError("boom")
    kernel.add_memory("something else entirely", user_id="u1")  # reuses the rolled-back log seq
    hits = _assert_same(kernel, q, flt, 10)
    assert hits[0][1] > 1e-5


def test_memory_budget_and_eviction(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        _fill(k, 60)
    store = SqliteStore(db_path, vector_cache_bytes=0)
    store.open()
    try:
        q = hash_embedder.embed_batch(["tea"])[0]
        assert store.vector_search(q, EntryFilter(scope=Scope("u1")), 5)
        assert not store.cache_stats()["vector_indexes"]  # no budget: scans
        one_scope = 45 * (64 * 4 + 12)
        store.vector_cache_bytes = one_scope
        for user in ("u1", "u2", "u1"):
            flt = EntryFilter(scope=Scope(user))
            assert store.vector_search(q, flt, 5) == store.vector_search(q, flt, 5, use_index=False)
        cached = store.cache_stats()
        assert cached["vector_index_bytes"] <= one_scope or cached["vector_indexes"] == 1
    finally:
        store.close()
    assert not store.cache_stats()["vector_indexes"]


def test_bad_queries(kernel):
    _fill(kernel, 10)
    flt = EntryFilter(scope=Scope("u1"))
    assert kernel._store.vector_search(np.zeros(64, dtype=np.float32), flt, 5) == []
    assert kernel._store.vector_search(_query(kernel, "tea"), flt, 0) == []
    with pytest.raises(InvalidArgument, match="has 3 dims, this store's vectors have 64"):
        kernel._store.vector_search(np.ones(3, dtype=np.float32), flt, 5)
    with pytest.raises(InvalidArgument, match="does not match the stored vectors"):
        kernel._store.vector_search(np.ones(3, dtype=np.float32), flt, 5, use_index=False, force_numpy=True)


def test_numpy_only_store_uses_the_same_index(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        _fill(k, 80)
        q = _query(k, "paris tokyo trip")
        flt = EntryFilter(scope=Scope("u1"), category="food")
        expected = k._store.vector_search(q, flt, 10, use_index=False)
    store = SqliteStore(db_path, use_vec=False)
    store.open()
    try:
        assert not store.vec_enabled
        got = store.vector_search(q, flt, 10)
        assert [r for r, _ in got] == [r for r, _ in expected]
        assert store.cache_stats()["vector_indexes"]
    finally:
        store.close()


# -- VectorIndex itself ----------------------------------------------------------------------------
def _blob(v) -> bytes:
    return encode(np.asarray(v, dtype=np.float32))


def test_vector_index_apply_and_compact():
    rng = np.random.default_rng(0)
    vecs = {rid: rng.standard_normal(8).astype(np.float32) for rid in range(1, 3001)}
    index = VectorIndex.build(((r, _blob(v)) for r, v in vecs.items()), count=len(vecs), dim=8)
    removed = list(range(1, 3001, 2))
    for r in removed:
        del vecs[r]
    vecs[5000] = rng.standard_normal(8).astype(np.float32)
    vecs[1] = rng.standard_normal(8).astype(np.float32)  # comes back in the middle
    index.apply(removed, [(5000, _blob(vecs[5000])), (1, _blob(vecs[1]))])
    assert index.live == len(vecs)
    assert index.dead == 0 and index.size == len(vecs)  # half dead: compacted
    q = rng.standard_normal(8).astype(np.float32)
    ids = sorted(vecs)
    assert index.search(q, 50) == top_k_cosine(q, ids, [_blob(vecs[i]) for i in ids], 50)


def test_vector_index_rejects_another_dimension():
    index = VectorIndex.build([(1, _blob([1, 0, 0]))], count=1, dim=3)
    with pytest.raises(ValueError, match="4 dims in a 3-dim index"):
        index.apply([], [(2, _blob([1, 0, 0, 0]))])


def test_nearest_keeps_every_tie_at_the_cut():
    dist = np.array([0.5, 0.1, 0.1, 0.1, np.inf, 0.1])
    ids = np.array([10, 9, 4, 7, 1, 2])
    assert list(ids[nearest(dist, ids, 3)]) == [2, 4, 7]
    assert list(ids[nearest(dist, ids, 10)]) == [2, 4, 7, 9, 10]


# -- FTS statistics cache --------------------------------------------------------------------------
def _reference_fts(store, terms, flt, k, per_term=400):
    """The uncached algorithm, statement for statement (join and counts for every term)."""
    where, args = store.where_sql(flt)
    scores: dict[int, float] = {}
    conn = store.conns.get()
    n_global = conn.execute("SELECT count(*) FROM entries_fts_docsize").fetchone()[0] or 1
    n_scope = conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args).fetchone()[0] or 1
    for term in terms:
        match = '"' + term.replace('"', '""') + '"'
        df_global = conn.execute("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (match,)).fetchone()[0]
        if not df_global:
            continue
        rows = conn.execute(
            f"SELECT e.rid, bm25(entries_fts) FROM entries_fts CROSS JOIN entries e ON e.rid = entries_fts.rowid "
            f"WHERE entries_fts MATCH ? AND {where} ORDER BY 2, e.rid LIMIT ?", [match, *args, per_term]).fetchall()
        if not rows:
            continue
        df_scope = len(rows) if len(rows) < per_term else conn.execute(
            f"SELECT count(*) FROM entries_fts CROSS JOIN entries e ON e.rid = entries_fts.rowid "
            f"WHERE entries_fts MATCH ? AND {where}", [match, *args]).fetchone()[0]
        idf_g = max(math.log((n_global - df_global + 0.5) / (df_global + 0.5)), 1e-6)
        idf_s = max(math.log((n_scope - df_scope + 0.5) / (df_scope + 0.5)), 1e-6)
        for rid, bm25 in rows:
            scores[rid] = scores.get(rid, 0.0) + (-bm25) / idf_g * idf_s
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def _check_fts(kernel, rng, rounds=40, per_term=400):
    for _ in range(rounds):
        flt = _random_filter(rng)
        terms = tokenize.query_terms(" ".join(rng.sample(WORDS, rng.randrange(1, 4))))
        for _ in range(2):  # the second call answers from the cache
            got = kernel._store.fts_search(terms, flt, 20, per_term=per_term)
            assert got == _reference_fts(kernel._store, terms, flt, 20, per_term)


def test_fts_matches_the_uncached_algorithm(kernel):
    _fill(kernel)
    _check_fts(kernel, random.Random(3))
    _check_fts(kernel, random.Random(4), per_term=7)  # truncated term lists: counted in a second query


def test_fts_without_a_join_when_the_filter_covers_everything(kernel):
    _fill(kernel, 50)
    flt = EntryFilter()
    for terms in (["tea"], ["jazz", "note"], ["nothing"]):
        for per_term in (400, 3):
            assert kernel._store.fts_search(terms, flt, 10, per_term=per_term) == \
                _reference_fts(kernel._store, terms, flt, 10, per_term)
    assert kernel._store.cache_stats()["fts_rankings"]


def test_fts_cache_follows_writes_and_other_processes(kernel, db_path):
    _fill(kernel, 60)
    rng = random.Random(5)
    _check_fts(kernel, rng, rounds=10)
    kernel.add_memory("jazz jazz jazz", user_id="u1")
    _check_fts(kernel, rng, rounds=10)
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=_other_process_writes, args=(str(db_path),))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    _check_fts(kernel, rng, rounds=10)


def test_fts_cache_drops_an_entry_when_it_expires(kernel):
    kernel.add_memory("ephemeral jazz", user_id="u")
    short = kernel.add_memory("jazz that expires", user_id="u",
                              expires_at=datetime.now(timezone.utc) + timedelta(seconds=1.5)).entry.id
    flt = EntryFilter(scope=Scope("u"))
    first = kernel._store.fts_search(["jazz"], flt, 10)
    assert len(first) == 2
    assert first == _reference_fts(kernel._store, ["jazz"], flt, 10)
    time.sleep(1.6)
    after = kernel._store.fts_search(["jazz"], flt, 10)
    assert len(after) == 1 and after == _reference_fts(kernel._store, ["jazz"], flt, 10)
    assert short not in {e.id for e in kernel._store.entries_by_rid([r for r, _ in after]).values()}


def test_threads_share_the_caches(kernel):
    import threading

    _fill(kernel, 120)
    rng = random.Random(6)
    cases = []
    for _ in range(30):
        flt = _random_filter(rng)
        terms = tokenize.query_terms(" ".join(rng.sample(WORDS, 3)))
        q = _query(kernel, " ".join(terms))
        cases.append((flt, terms, q, _reference_fts(kernel._store, terms, flt, 10),
                      kernel._store.vector_search(q, flt, 10, use_index=False, force_numpy=True)))
    cached = kernel._store.cache_stats()
    assert not cached["fts_items"] and not cached["vector_indexes"]  # the threads start cold
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        order = list(range(len(cases)))
        random.Random(seed).shuffle(order)
        try:
            for i in order:
                flt, terms, q, fts_expected, vec_expected = cases[i]
                assert kernel._store.fts_search(terms, flt, 10) == fts_expected
                assert [r for r, _ in kernel._store.vector_search(q, flt, 10)] == [r for r, _ in vec_expected]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_split_product_gives_the_same_distances(monkeypatch, threads):
    from agentbase_kernel.store import vectors

    monkeypatch.setattr(vectors, "SEARCH_THREADS", threads)
    monkeypatch.setattr(vectors, "_SPLIT_ROWS", 100)
    rng = np.random.default_rng(threads)
    matrix = rng.standard_normal((1001, 24)).astype(np.float32)
    q = rng.standard_normal(24).astype(np.float32)
    assert np.array_equal(vectors._matvec(matrix, q), matrix @ q)
    index = VectorIndex.build(((i, _blob(v)) for i, v in enumerate(matrix)), count=len(matrix), dim=24)
    blobs = [_blob(v) for v in matrix]
    assert index.search(q, 40) == top_k_cosine(q, list(range(len(matrix))), blobs, 40)


# -- the 1-bit shortlist of big scopes -------------------------------------------------------------
def _clustered(n: int, dim: int, seed: int) -> np.ndarray:
    """Unit vectors like a sentence model's: a few directions carry most of the variance, plus a
    shared offset (on isotropic noise no 1-bit code keeps neighbours, and no text model makes it)."""
    basis = np.random.default_rng(0).standard_normal((12, dim))
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, 12)) @ basis + 0.5 + 0.5 * rng.standard_normal((n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _shortlisted(matrix: np.ndarray, monkeypatch, share: float = 0.1) -> VectorIndex:
    from agentbase_kernel.store import vectors

    monkeypatch.setattr(vectors, "SHORTLIST_SHARE", share)
    monkeypatch.setattr(vectors, "SHORTLIST_MIN", 1)
    monkeypatch.setattr(vectors, "SHORTLIST_PER_RESULT", 1)
    return VectorIndex.build(((i + 1, _blob(v)) for i, v in enumerate(matrix)), count=len(matrix),
                             dim=matrix.shape[1], shortlist_above=1000)


def test_shortlist_ranks_exactly_and_keeps_the_nearest(monkeypatch):
    matrix = _clustered(6000, 64, 1)
    index = _shortlisted(matrix, monkeypatch)
    exact = VectorIndex.build(((i + 1, _blob(v)) for i, v in enumerate(matrix)), count=len(matrix), dim=64)
    queries = _clustered(50, 64, 2)
    overlap = []
    for q in queries:
        got = index.search(q, 20)
        want = exact.search(q, 20)
        assert index.codes is not None  # this search went through the shortlist
        # every distance returned is the exact one, in (distance, rid) order
        for rid, dist in got:
            assert dist == pytest.approx(1 - float(matrix[rid - 1] @ q), abs=1e-6)
        assert got == sorted(got, key=lambda rd: (rd[1], rd[0]))
        overlap.append(len({r for r, _ in got} & {r for r, _ in want}) / 20)
        # the codes are of unit vectors: a query's length changes nothing
        assert [r for r, _ in index.search(q * 100, 20)] == [r for r, _ in got]
    assert np.mean(overlap) >= 0.95, overlap  # a random list of the same length keeps ~0.1


def test_shortlist_is_exact_when_it_would_cover_half_the_scope(monkeypatch):
    matrix = _clustered(3000, 32, 3)
    index = _shortlisted(matrix, monkeypatch, share=0.6)
    q = _clustered(1, 32, 4)[0]
    ids = list(range(1, len(matrix) + 1))
    assert index.search(q, 30) == top_k_cosine(q, ids, [_blob(v) for v in matrix], 30)
    assert index.codes is None  # never needed


def test_shortlist_follows_removals_and_new_rows(monkeypatch):
    matrix = _clustered(4000, 32, 5)
    index = _shortlisted(matrix, monkeypatch)
    q = matrix[10].copy()
    assert index.search(q, 1)[0][0] == 11  # builds the codes
    assert index.search(np.zeros(32, dtype=np.float32), 5) == []  # a zero query has no direction
    index.apply([11], [])
    assert 11 not in {r for r, _ in index.search(q, 50)}
    # a new row equal to the query, and a changed row turned into it: both found first
    index.apply([], [(9000, _blob(q)), (500, _blob(q))])
    assert {r for r, _ in index.search(q, 2)} == {500, 9000}
    index.apply([], [(50, _blob(q))])  # a rid below the largest: the codes shift with the rows
    assert {r for r, _ in index.search(q, 3)} == {50, 500, 9000}
    index.apply(list(range(1000, 4001)), [])  # most rows gone: compacted, codes with them
    assert index.dead == 0 and len(index.codes) == index.size
    assert {r for r, _ in index.search(q, 3)} == {50, 500, 9000}


def test_store_shortlists_big_scopes_and_still_applies_filters(tmp_path, monkeypatch, hash_embedder):
    from agentbase_kernel import Config
    from agentbase_kernel.store import vectors

    monkeypatch.setattr(vectors, "SHORTLIST_MIN", 8)
    monkeypatch.setattr(vectors, "SHORTLIST_PER_RESULT", 1)
    monkeypatch.setattr(vectors, "SHORTLIST_SHARE", 0.2)
    config = Config().with_(storage={"vector_shortlist_above": 50})
    with Kernel(tmp_path / "s.db", embedder=hash_embedder, ner="regex", config=config) as kernel:
        assert kernel._store.vector_shortlist_above == 50
        _fill(kernel, 300)
        rng = random.Random(9)
        for _ in range(30):
            flt = _random_filter(rng)
            q = _query(kernel, " ".join(rng.sample(WORDS, 3)))
            got = kernel._store.vector_search(q, flt, 10)
            scan = kernel._store.vector_search(q, flt, 10, use_index=False, force_numpy=True)
            # what the shortlist returns passes the filter, with exact distances, nearest first
            passing = {r for r, _ in kernel._store.vector_search(q, flt, 1000, use_index=False, force_numpy=True)}
            assert {r for r, _ in got} <= passing
            assert [d for _, d in got] == sorted(d for _, d in got)
            exact = dict(kernel._store.vector_search(q, flt, 1000, use_index=False, force_numpy=True))
            assert all(d == pytest.approx(exact[r], abs=1e-6) for r, d in got)
            assert len(got) == min(10, len(scan))
        assert kernel._store.cache_stats()["shortlisted_indexes"]


def test_find_takes_the_candidates_vectors_from_the_index_and_ranks_the_same(kernel, monkeypatch):
    """Fusion reads each candidate's vector from the scope's in-RAM index instead of the file: the
    same float32 values, so every ranking, score and similarity is the same as reading the file."""
    _fill(kernel)
    rng = random.Random(3)
    for s in range(6):  # session turns: their neighbours' vectors count in context cosines
        kernel.add_messages(f"s{s}", [{"role": rng.choice(["user", "assistant"]),
                                       "content": " ".join(rng.sample(WORDS, 4)) + "?" * (t % 2)}
                                      for t in range(8)], user_id="u1")
    kernel.wait_embedded()
    store = kernel._store
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(25)]
    read: list[str] = []
    vectors_for = store.vectors_for

    def counted(hashes):
        hashes = list(hashes)
        read.extend(hashes)
        return vectors_for(hashes)

    monkeypatch.setattr(store, "vectors_for", counted)

    def run() -> list[list[tuple[str, float, float | None, list[str]]]]:
        return [[(h.id, h.score, h.similarity, h.matched_by)
                 for h in kernel.find(q, top_k=15, user_id=u, reinforce=False, config=kernel.config.retrieval)]
                for q in queries for u in ("u1", "u2")]

    with_index = run()
    from_index = len(read)
    read.clear()
    monkeypatch.setattr(store, "indexed_vectors", lambda scope, rids: {})  # a store that holds no vectors
    from_file = run()
    assert with_index == from_file and sum(map(len, with_index)) > 300
    assert from_index < len(read) / 3  # only neighbours' vectors still come from the file


def test_indexed_vectors_uses_only_an_index_a_search_built(kernel):
    _fill(kernel, 60)
    store = kernel._store
    scope = Scope(user_id="u1")
    rids = [r for r, _ in store.fts_search(["tea"], EntryFilter(scope=scope), 10)]
    assert rids and store.indexed_vectors(scope, rids) == {}
    assert not store.cache_stats()["vector_indexes"]  # asking builds no index
    store.vector_search(_query(kernel, "tea"), EntryFilter(scope=scope), 5)
    held = store.indexed_vectors(scope, rids)
    by_rid = store.entries_by_rid(rids)
    stored = store.vectors_for(e.content_hash for e in by_rid.values())
    assert set(held) == set(rids)
    assert all(np.array_equal(v, stored[by_rid[r].content_hash]) for r, v in held.items())
