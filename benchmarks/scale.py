"""The scaling curve: ingest rate, search latency and file size at 10k / 100k / 1M memories.

One size per process. Memories come from ``benchmarks.synthetic`` (seeded), all in one user scope
(the worst case: every search sees every memory) or, with ``scopes=N``, spread over N users as a
multi-tenant table is (searches then see one user's share), and go in through ``Kernel.add_memories`` in
batches of ``batch`` items (one transaction each). Vectors come from the deterministic
``ProjectionEmbedder`` (384 dims, like MiniLM): the real model at 1M on 2 cores would take hours,
and the curve measures the store and the search, not the model. NER is the kernel's regex stage
for the same reason (spaCy's rate is in the dev-set speed table).

Only the kernel's public API is timed (``Kernel.find``), end to end and with one leg switched off
through the retrieval config:

* ``find``: ``Kernel.find(top_k=10)`` with the default configuration (every leg, fusion, rerank, trace);
* ``find, fts only`` / ``find, vectors only``: the same call with ``vectors`` / ``fts`` off;
* ``vector numpy (RAM)``: one matrix-vector product over the same vectors held in a numpy matrix
  by this process -- the floor any vector search pays.

The row also records the first ``find`` of the reopened file (it builds the in-RAM vector index)
and the mean milliseconds of each step of ``find``'s trace.

``backend="postgres"`` runs the same loads on a PostgreSQL database (``url``): ``bytes`` is then
``pg_database_size`` and the row adds ``index_build_s``: the HNSW index built once when the load's
``Kernel.bulk_load()`` block ends (pgvector's advice: load, then index) and a ``REINDEX`` of the
full-text GIN index. Both backends load inside ``bulk_load()`` (on SQLite it defers nothing); after
the searches, ``live_ingest_per_s`` times 1,000 more memories in batches of 100, as writes arrive
once every index exists.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from . import synthetic
from .common import SEED, ProjectionEmbedder, bar, peak_rss_bytes, percentiles, tree_bytes

# memories added after the searches, in batches of 100, to time writes once the indexes exist
LIVE_WRITES = 1000
LEGS = ("find", "find, fts only", "find, vectors only", "vector numpy (RAM)")


def queries_for(size: int, requested: int | None) -> int:
    if requested:
        return requested
    return 200 if size <= 10_000 else 100 if size <= 100_000 else 30


def _pg(url: str, sql: str) -> Any:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else []


def _reindex_seconds(url: str, names: tuple[str, ...]) -> dict[str, float]:
    """Seconds to rebuild each named index over the whole table (the GIN of full text)."""
    out = {}
    for name in names:
        if _pg(url, f"SELECT 1 FROM pg_class WHERE relname = '{name}'"):
            t0 = time.perf_counter()
            _pg(url, f"REINDEX INDEX {name}")
            out[name] = round(time.perf_counter() - t0, 2)
    return out


def run_size(size: int, workdir: Path, *, n_queries: int | None = None, batch: int = 2000, progress: bool = True,
             seed: int = SEED, backend: str = "sqlite", url: str | None = None,
             live_writes: int = LIVE_WRITES, scopes: int = 1) -> dict[str, Any]:
    """Build a ``size``-memory database and time ingest and search; returns one row of the curve."""
    from agentbase_kernel import Config, Kernel

    embedder = ProjectionEmbedder()
    if backend == "postgres" and not url:
        raise ValueError("backend='postgres' needs the database's url")
    path: Path | str = url if backend == "postgres" and url else workdir / f"scale-{size}.db"
    config = Config()
    pbar = bar(size, f"ingest {size:,}", progress)
    ingest_s = 0.0
    index_build: dict[str, float] = {}
    with Kernel(path, embedder=embedder, ner="regex", config=config) as kernel:
        info = kernel.info()
        items = _spread(synthetic.memories(size, seed), scopes)
        with kernel.bulk_load():  # on PostgreSQL: the HNSW index is built once, at the end
            while True:
                chunk = [item for _, item in zip(range(batch), items)]
                if not chunk:
                    break
                t0 = time.perf_counter()
                kernel.add_memories(chunk)
                ingest_s += time.perf_counter() - t0
                pbar.update(len(chunk))
            pbar.close()
            t0 = time.perf_counter()
        if isinstance(path, str) and _pg(path, "SELECT 1 FROM pg_class WHERE relname = 'embeddings_hnsw'"):
            index_build["embeddings_hnsw"] = round(time.perf_counter() - t0, 2)
        stored = kernel.count(user_id="u0")
    if isinstance(path, str):
        _pg(path, "VACUUM ANALYZE")
        size_bytes = int(_pg(path, "SELECT pg_database_size(current_database())")[0][0])
        index_build |= _reindex_seconds(path, ("entries_fts",))
    else:
        size_bytes = tree_bytes(path)

    qs = synthetic.queries(queries_for(size, n_queries), seed + 1)
    with Kernel(path, embedder=embedder, ner="regex", config=config) as kernel:
        timings, steps, first_find_ms = _time_searches(kernel, size, qs, embedder=embedder, config=config,
                                                       scopes=scopes, seed=seed, progress=progress)
        # after the searches (they ran on exactly ``size`` memories): writes once every index exists,
        # in small batches, as an agent's writes arrive after the load
        live = list(_spread(synthetic.memories(live_writes, seed, first=size), scopes, first=size))
        t0 = time.perf_counter()
        for i in range(0, len(live), 100):
            kernel.add_memories(live[i:i + 100])
        live_per_s = len(live) / max(time.perf_counter() - t0, 1e-9)
    row = {"size": size, "scopes": scopes, "stored": stored, "ingest_s": round(ingest_s, 2), "ingest_per_s": round(size / ingest_s, 1),
           "live_writes": live_writes, "live_ingest_per_s": round(live_per_s, 1),
            "bytes": size_bytes, "bytes_per_memory": round(size_bytes / size, 1), "queries": len(qs),
            "batch": batch, "search": {leg: percentiles(ms) | {"n": len(ms)} for leg, ms in timings.items()},
            "vector_index": {"first_find_ms": round(first_find_ms, 1),
                             "shortlist_above": config.storage.vector_shortlist_above},
            "find_steps_mean_ms": {name: round(sum(ms) / len(ms), 3) for name, ms in steps.items()},
            "peak_rss": peak_rss_bytes(), "engine": f"vectors={info['vector_backend']}, ner={info['ner_stage']}, "
                                                    f"embedder={embedder.name}"}
    if isinstance(path, str):
        row |= {"backend": "postgres", "index_build_s": index_build,
                "server": _pg(path, "SHOW server_version")[0][0]}
    return row


def _time_searches(kernel: Any, size: int, qs: list[str], *, embedder: Any, config: Any, scopes: int, seed: int,
                   progress: bool) -> tuple[dict[str, list[float]], dict[str, list[float]], float]:
    """Each leg's milliseconds per query, the ``find`` trace's steps, and the first ``find``'s time."""
    timings: dict[str, list[float]] = {leg: [] for leg in LEGS}
    steps: dict[str, list[float]] = {}
    legs = {"find": None, "find, fts only": config.with_(retrieval={"vectors": False}).retrieval,
            "find, vectors only": config.with_(retrieval={"fts": False}).retrieval}
    # the floor: the same vectors in this process's RAM, embedded here in chunks
    searched = (m for m in _spread(synthetic.memories(size, seed), scopes) if m["user_id"] == "u0")
    matrix = np.vstack([embedder.embed_batch([m["text"] for m in part]) for part in _parts(searched, 10_000)])
    qvecs = embedder.embed_batch(qs)
    t0 = time.perf_counter()
    kernel.find(qs[0], top_k=10, user_id="u0")  # builds the scope's vector index from the file
    first_find_ms = (time.perf_counter() - t0) * 1000
    pbar = bar(len(qs), f"search {size:,}", progress)
    for q, qv in zip(qs, qvecs):
        for leg, retrieval in legs.items():
            t0 = time.perf_counter()
            result = kernel.find(q, top_k=10, user_id="u0", config=retrieval)
            timings[leg].append((time.perf_counter() - t0) * 1000)
            if leg == "find":
                for step in result.trace.steps:
                    steps.setdefault(step.name, []).append(step.ms)
        t0 = time.perf_counter()
        sims = matrix @ qv
        np.argpartition(-sims, min(30, len(sims) - 1))[:30]
        timings["vector numpy (RAM)"].append((time.perf_counter() - t0) * 1000)
        pbar.update(1)
    pbar.close()
    return timings, steps, first_find_ms


def searches_only(size: int, url: str, *, n_queries: int | None = None, seed: int = SEED, scopes: int = 1,
                  progress: bool = True) -> dict[str, Any]:
    """The searches of ``run_size`` again, on a PostgreSQL database an earlier run loaded (and left:
    ``--postgres-url``): to compare code on the same rows, without loading them again."""
    from agentbase_kernel import Config, Kernel

    qs = synthetic.queries(queries_for(size, n_queries), seed + 1)
    embedder, config = ProjectionEmbedder(), Config()
    with Kernel(url, embedder=embedder, ner="regex", config=config) as kernel:
        entries = kernel.count(user_id="u0")
        timings, steps, first_find_ms = _time_searches(kernel, size, qs, embedder=embedder, config=config,
                                                       scopes=scopes, seed=seed, progress=progress)
    return {"size": size, "scopes": scopes, "searches_only": True, "entries_u0": entries, "queries": len(qs),
            "search": {leg: percentiles(ms) | {"n": len(ms)} for leg, ms in timings.items()},
            "first_find_ms": round(first_find_ms, 1),
            "find_steps_mean_ms": {name: round(sum(ms) / len(ms), 3) for name, ms in steps.items()},
            "server": _pg(url, "SHOW server_version")[0][0],
            "shared_buffers": _pg(url, "SHOW shared_buffers")[0][0]}


def _spread(items: Any, scopes: int, first: int = 0) -> Any:
    """Memory ``i`` to user ``u{i mod scopes}``: searches (in ``u0``) see one scope's share of the table."""
    for i, item in enumerate(items, start=first):
        yield item if scopes == 1 else {**item, "user_id": f"u{i % scopes}"}


def _parts(items: Any, n: int) -> Any:
    part: list[Any] = []
    for item in items:
        part.append(item)
        if len(part) == n:
            yield part
            part = []
    if part:
        yield part
