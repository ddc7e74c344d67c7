"""The scaling curve: ingest rate, search latency per leg and file size at 10k / 100k / 1M memories.

One size per process. Memories come from ``benchmarks.synthetic`` (seeded), all in one user scope
(the worst case: every search sees every memory), and go in through ``Kernel.add_memories`` in
batches of ``batch`` items (one transaction each). Vectors come from the deterministic
``ProjectionEmbedder`` (384 dims, like MiniLM): the real model at 1M on 2 cores would take hours,
and the curve measures the store and the search, not the model. NER is the kernel's regex stage
for the same reason (spaCy's rate is in the LoCoMo speed table).

Search is timed per leg and end to end. ``find`` runs on the kernel's store; the store-level legs run
on a second ``SqliteStore`` of the same file opened without sqlite-vec, so neither warms the other's
caches (each query's terms would otherwise be cached by the leg timed just before ``find``):

* ``fts``: ``store.fts_search`` (30 rows), with the FTS statistics cache (warm only for terms that
  earlier queries used); ``fts (no cache)``: the same with the cache off (every count and ranking run);
* ``vector index (sqlite-vec)`` / ``vector index (numpy)``: ``store.vector_search`` on the in-RAM
  per-scope index, in the kernel's store (sqlite-vec loaded) and in the store without the extension;
* ``vector scan (sqlite-vec)`` / ``vector scan (numpy)``: the same search without the index
  (``use_index=False``): ``vec_distance_cosine`` over the scope in SQL, or every BLOB read per query
  (~1.5 GB a query at 1M, so timed on a subset);
* ``vector numpy (RAM)``: one matrix-vector product over vectors already in memory -- the floor;
* ``find``: ``Kernel.find(top_k=10)`` with the default configuration (every leg, fusion, rerank, trace).

Above ``storage.vector_shortlist_above`` memories (50k) the index ranks a 1-bit shortlist exactly
instead of every row: the row records how much of the exact top 10 and top 60 (the ``vector numpy
(RAM)`` ranking) the index's answer keeps.

The row also records the index's build time (the first search of a fresh store) and size, and the
mean per-step milliseconds of ``find``'s trace.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import synthetic
from .common import SEED, ProjectionEmbedder, bar, peak_rss_bytes, percentiles, tree_bytes

LEGS = ("fts", "fts (no cache)", "vector index (sqlite-vec)", "vector index (numpy)", "vector scan (sqlite-vec)",
        "vector scan (numpy)", "vector numpy (RAM)", "find")


def queries_for(size: int, requested: int | None) -> int:
    if requested:
        return requested
    return 200 if size <= 10_000 else 100 if size <= 100_000 else 30


def fts_input(tokenize: Any, query: str) -> Any:
    """What ``store.fts_search`` takes for a query: a term list (b18ac51 on) or a MATCH string (before)."""
    from agentbase_kernel.store.sqlite import SqliteStore

    normalized = tokenize.normalize(query)
    if "terms" in inspect.signature(SqliteStore.fts_search).parameters:
        return tokenize.query_terms(normalized)
    return tokenize.fts_query(normalized)


def run_size(size: int, workdir: Path, *, n_queries: int | None = None, batch: int = 2000, progress: bool = True,
             seed: int = SEED) -> dict[str, Any]:
    """Build a ``size``-memory file and time ingest and search; returns one row of the curve."""
    from agentbase_kernel import Config, Kernel
    from agentbase_kernel.store import EntryFilter, SqliteStore
    from agentbase_kernel.records import Scope
    from agentbase_kernel.text import tokenize

    embedder = ProjectionEmbedder()
    path = workdir / f"scale-{size}.db"
    config = Config()
    pbar = bar(size, f"ingest {size:,}", progress)
    ingest_s = 0.0
    with Kernel(path, embedder=embedder, ner="regex", config=config) as kernel:
        info = kernel.info()
        items = synthetic.memories(size, seed)
        while True:
            chunk = [item for _, item in zip(range(batch), items)]
            if not chunk:
                break
            t0 = time.perf_counter()
            kernel.add_memories(chunk)
            ingest_s += time.perf_counter() - t0
            pbar.update(len(chunk))
        pbar.close()
    size_bytes = tree_bytes(path)

    qs = synthetic.queries(queries_for(size, n_queries), seed + 1)
    timings: dict[str, list[float]] = {leg: [] for leg in LEGS}
    steps: dict[str, list[float]] = {}
    with Kernel(path, embedder=embedder, ner="regex", config=config) as kernel:
        store = kernel.store
        legs_store = SqliteStore(path, use_vec=False)
        legs_store.open()
        flt = EntryFilter(scope=Scope("u0"))
        qvecs = embedder.embed_batch(qs)
        t0 = time.perf_counter()
        legs_store.vector_search(qvecs[0], flt, 30)  # builds the scope's index from the file
        index_build_ms = (time.perf_counter() - t0) * 1000
        index_bytes = sum(i.nbytes for i in legs_store._vindex.values())
        with store.conns.read() as conn:
            rows = conn.execute("SELECT e.rid, v.vector FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                                "WHERE e.user_id = ? ORDER BY e.rid", ("u0",)).fetchall()
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
        matrix_rids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        kept: dict[int, list[float]] = {10: [], 60: []}
        del rows
        # the scans read the whole scope per query (~1.5 GB a query at 1M for numpy): timed on a subset
        scan_every = 1 if size <= 10_000 else 4 if size <= 100_000 else 10
        t0 = time.perf_counter()
        kernel.find(qs[0], top_k=10, user_id="u0")  # builds the kernel store's index
        first_find_ms = (time.perf_counter() - t0) * 1000
        pbar = bar(len(qs), f"search {size:,}", progress)
        for i, (q, qv) in enumerate(zip(qs, qvecs)):
            t0 = time.perf_counter()
            result = kernel.find(q, top_k=10, user_id="u0")
            timings["find"].append((time.perf_counter() - t0) * 1000)
            for step in result.trace.steps:
                steps.setdefault(step.name, []).append(step.ms)
            fts_arg = fts_input(tokenize, q)
            if fts_arg:
                legs_store.fts_cache = False
                t0 = time.perf_counter()
                legs_store.fts_search(fts_arg, flt, 30)
                timings["fts (no cache)"].append((time.perf_counter() - t0) * 1000)
                legs_store.fts_cache = True
                t0 = time.perf_counter()
                legs_store.fts_search(fts_arg, flt, 30)
                timings["fts"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            store.vector_search(qv, flt, 30)
            timings["vector index (sqlite-vec)"].append((time.perf_counter() - t0) * 1000)
            exact_order = np.argsort(-(matrix @ qv), kind="stable")
            answer = [rid for rid, _ in store.vector_search(qv, flt, 60)]
            for k in kept:
                kept[k].append(len(set(answer[:k]) & set(matrix_rids[exact_order[:k]].tolist())) / k)
            t0 = time.perf_counter()
            legs_store.vector_search(qv, flt, 30)
            timings["vector index (numpy)"].append((time.perf_counter() - t0) * 1000)
            if i % scan_every == 0:
                t0 = time.perf_counter()
                store.vector_search(qv, flt, 30, use_index=False)
                timings["vector scan (sqlite-vec)"].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                legs_store.vector_search(qv, flt, 30, use_index=False)
                timings["vector scan (numpy)"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            sims = matrix @ qv
            np.argpartition(-sims, min(30, len(sims) - 1))[:30]
            timings["vector numpy (RAM)"].append((time.perf_counter() - t0) * 1000)
            pbar.update(1)
        pbar.close()
        legs_store.close()
    return {"size": size, "ingest_s": round(ingest_s, 2), "ingest_per_s": round(size / ingest_s, 1),
            "bytes": size_bytes, "bytes_per_memory": round(size_bytes / size, 1), "queries": len(qs),
            "batch": batch, "search": {leg: percentiles(ms) | {"n": len(ms)} for leg, ms in timings.items()},
            "vector_index": {"build_ms": round(index_build_ms, 1), "bytes": index_bytes,
                             "first_find_ms": round(first_find_ms, 1),
                             "shortlist_above": config.storage.vector_shortlist_above,
                             "exact_top10_kept": round(float(np.mean(kept[10])), 4),
                             "exact_top60_kept": round(float(np.mean(kept[60])), 4)},
            "find_steps_mean_ms": {name: round(sum(ms) / len(ms), 3) for name, ms in steps.items()},
            "peak_rss": peak_rss_bytes(), "engine": f"vectors={info['vector_backend']}, ner={info['ner_stage']}, "
                                                    f"embedder={embedder.name}"}
