"""The scaling curve: ingest rate, search latency per leg and file size at 10k / 100k / 1M memories.

One size per process. Memories come from ``benchmarks.synthetic`` (seeded), all in one user scope
(the worst case: every search sees every memory), and go in through ``Kernel.add_memories`` in
batches of ``batch`` items (one transaction each). Vectors come from the deterministic
``ProjectionEmbedder`` (384 dims, like MiniLM): the real model at 1M on 2 cores would take hours,
and the curve measures the store and the search, not the model. NER is the kernel's regex stage
for the same reason (spaCy's rate is in the LoCoMo speed table).

Search is timed per leg on the kernel's store (the same calls ``find`` makes) and end to end:

* ``fts``: one FTS5 MATCH of the normalised query (``store.fts_search``, 30 rows);
* ``vector sqlite-vec``: ``store.vector_search`` through sqlite-vec's ``vec_distance_cosine``;
* ``vector numpy (kernel)``: the kernel's fallback when sqlite-vec is missing (reads the blobs per query);
* ``vector numpy (RAM)``: a brute-force matrix product over vectors already in memory -- the floor;
* ``find``: ``Kernel.find(top_k=10)`` with the default configuration (every leg, fusion, rerank, trace).
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import synthetic
from .common import SEED, ProjectionEmbedder, bar, peak_rss_bytes, percentiles, tree_bytes

LEGS = ("fts", "vector sqlite-vec", "vector numpy (kernel)", "vector numpy (RAM)", "find")


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
    from agentbase_kernel.store import EntryFilter
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
    with Kernel(path, embedder=embedder, ner="regex", config=config) as kernel:
        store = kernel.store
        flt = EntryFilter(scope=Scope("u0"))
        qvecs = embedder.embed_batch(qs)
        with store.conns.read() as conn:
            rows = conn.execute("SELECT v.vector FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                                "WHERE e.user_id = ?", ("u0",)).fetchall()
        matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype="<f4").reshape(len(rows), -1)
        del rows
        # the kernel's numpy fallback reads every blob per query (~1.5 GB a query at 1M): timed on a subset
        numpy_every = 1 if size <= 10_000 else 4 if size <= 100_000 else 10
        kernel.find(qs[0], top_k=10, user_id="u0")  # warm caches and the query path once
        pbar = bar(len(qs), f"search {size:,}", progress)
        for i, (q, qv) in enumerate(zip(qs, qvecs)):
            fts_arg = fts_input(tokenize, q)
            if fts_arg:
                t0 = time.perf_counter()
                store.fts_search(fts_arg, flt, 30)
                timings["fts"].append((time.perf_counter() - t0) * 1000)
            if store.vec_enabled:
                t0 = time.perf_counter()
                store.vector_search(qv, flt, 30)
                timings["vector sqlite-vec"].append((time.perf_counter() - t0) * 1000)
            if i % numpy_every == 0:
                t0 = time.perf_counter()
                store.vector_search(qv, flt, 30, force_numpy=True)
                timings["vector numpy (kernel)"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            sims = matrix @ qv
            np.argpartition(-sims, min(30, len(sims) - 1))[:30]
            timings["vector numpy (RAM)"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            kernel.find(q, top_k=10, user_id="u0")
            timings["find"].append((time.perf_counter() - t0) * 1000)
            pbar.update(1)
        pbar.close()
    return {"size": size, "ingest_s": round(ingest_s, 2), "ingest_per_s": round(size / ingest_s, 1),
            "bytes": size_bytes, "bytes_per_memory": round(size_bytes / size, 1), "queries": len(qs),
            "batch": batch, "search": {leg: percentiles(ms) | {"n": len(ms)} for leg, ms in timings.items()},
            "peak_rss": peak_rss_bytes(), "engine": f"vectors={info['vector_backend']}, ner={info['ner_stage']}, "
                                                    f"embedder={embedder.name}"}
