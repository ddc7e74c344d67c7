"""Several processes writing through every adapter at once, with readers, on one file.

Peers lost writes or raised "database is locked" here (mem0#7196, mem0#4892). The default run is
4 writers x 70 writes + 2 readers; ``benchmarks/stress.py`` runs 8 x 1,000.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from pathlib import Path

from agentbase_kernel import AgentBase

from . import workers
from ._inputs import TALLY, raw_connect

WRITERS = int(os.environ.get("AGENTBASE_RELIABILITY_WRITERS", "4"))
WRITES = int(os.environ.get("AGENTBASE_RELIABILITY_WRITES", "70"))  # 10 rounds of the 7 adapters
READERS = 2
SHARED = 10


def _stored(path: Path | str) -> tuple[Counter, Counter]:
    """Live entry texts and message texts, read outside the kernel (the SQLite file is integrity-checked too)."""
    if isinstance(path, str) and "://" in path:  # AGENTBASE_TEST_BACKEND=postgres
        import psycopg

        with psycopg.connect(path) as pg:
            entries = Counter(t for (t,) in pg.execute("SELECT l2_full FROM entries WHERE invalid_at IS NULL"))
            messages = Counter(t for (t,) in pg.execute("SELECT content FROM messages"))
        return entries, messages
    conn = raw_connect(path)
    try:
        entries = Counter(t for (t,) in conn.execute("SELECT l2_full FROM entries WHERE invalid_at IS NULL"))
        messages = Counter(t for (t,) in conn.execute("SELECT content FROM messages"))
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()
    assert integrity == "ok"
    return entries, messages


def run_workload(path: Path | str, writers: int, writes: int, readers: int, shared: int, read_seconds: float = 5.0) -> dict:
    """Run the writers and readers in spawned processes and check the file; returns the figures."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(writers + readers) as pool:
        w = [pool.apply_async(workers.write_mixed, (str(path), i, writes, shared)) for i in range(writers)]
        r = [pool.apply_async(workers.read_loop, (str(path), read_seconds)) for _ in range(readers)]
        wrote = [x.get(timeout=1800) for x in w]
        read = [x.get(timeout=1800) for x in r]
    errors = [e for res in wrote + read for e in res["errors"]]
    assert errors == [], errors[:5]

    entries, messages = _stored(path)
    written = [t for res in wrote for t in res["written"]]
    assert len(written) == writers * writes
    missing = [t for t in written if entries[t] == 0]
    doubled = [t for t in written if entries[t] > 1]
    assert missing == [] and doubled == [], (missing[:3], doubled[:3])
    via_messages = [t for t in written if any(a in t for a in ("via langchain", "via llamaindex", "via openai"))]
    assert all(messages[t] == 1 for t in via_messages)
    shared_texts = [t for t in entries if t.startswith("shared fact number ")]
    assert len(shared_texts) == shared and all(entries[t] == 1 for t in shared_texts)
    with AgentBase(path, embedder=workers_embedder(), ner="regex") as db:
        report = db.sync.verify()
    assert report["ok"], report
    return {"writes": len(written), "reads": sum(res["reads"] for res in read), "shared_races": writers * shared}


def workers_embedder():
    from tests.conftest import HashEmbedder

    return HashEmbedder()


def test_writers_through_every_adapter_and_readers_on_one_file(db_location):
    figures = run_workload(db_location, WRITERS, WRITES, READERS, SHARED)
    TALLY["writes_checked"] += figures["writes"]
    TALLY["concurrent_reads"] += figures["reads"]
    assert figures["reads"] > 0
