"""SIGKILL a writer in the middle of bulk ingest, again and again: the file must survive every time.

After each kill: the file opens, ``PRAGMA integrity_check`` is ok, ``verify()`` says FTS and vectors
agree with the entries, every write the child saw return is there, and the batch in flight is
either all there or not at all. Default run: 6 kills; ``benchmarks/stress.py``: 100.
Also ``verify()`` / ``rebuild()`` and the ``agentbase verify|rebuild`` CLI on a damaged FTS index.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

from agentbase_kernel import AgentBase

from . import workers
from ._inputs import TALLY, raw_connect

KILLS = int(os.environ.get("AGENTBASE_RELIABILITY_KILLS", "6"))
BATCH = 20


def _wait_ready(ack: Path, proc, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ack.exists() and ack.read_text(encoding="utf-8").startswith("ready"):
            return
        assert proc.is_alive(), "the writer died before it was killed"
        time.sleep(0.05)
    raise AssertionError("the writer never became ready")


def kill_and_check(path: Path, ack: Path, kind: str, start: int, rng: random.Random, embedder) -> int:
    """One round: start a writer, SIGKILL it at a random moment, check the file; returns acked writes."""
    ack.write_text("", encoding="utf-8")
    proc = multiprocessing.get_context("spawn").Process(
        target=workers.ingest_until_killed, args=(str(path), str(ack), kind, BATCH, start))
    proc.start()
    try:
        _wait_ready(ack, proc)
        time.sleep(rng.uniform(0.0, 1.5))
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.join(30)
    assert proc.exitcode == -signal.SIGKILL
    acked = [line for line in ack.read_text(encoding="utf-8").splitlines()[1:] if line]

    conn = raw_connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        column = "l2_full FROM entries" if kind == "memories" else "content FROM messages"
        stored = {t for (t,) in conn.execute(f"SELECT {column} WHERE {column.split()[0]} LIKE 'crash test %'")}
    finally:
        conn.close()
    missing = [t for t in acked if t not in stored]
    assert missing == [], f"{len(missing)} acknowledged writes lost, e.g. {missing[:2]}"
    # the batch in flight is one transaction: all of it or none of it
    mine = {t for t in stored if f"crash test {kind} item " in t and int(t.split("marker c")[1]) >= start}
    assert len(mine - set(acked)) in (0, BATCH), sorted(mine - set(acked))[:3]
    with AgentBase(path, embedder=embedder, ner="regex") as db:
        report = db.sync.verify()
    assert report["ok"], report
    return len(acked)


def test_sigkill_during_bulk_ingest_loses_nothing_acknowledged(tmp_path, hash_embedder):
    rng = random.Random(int(os.environ.get("AGENTBASE_RELIABILITY_SEED", "9")))
    path, ack = tmp_path / "crash.db", tmp_path / "ack.txt"
    acked = 0
    for round_ in range(KILLS):
        acked += kill_and_check(path, ack, ("memories", "messages")[round_ % 2], round_ * 1_000_000, rng, hash_embedder)
        TALLY["kills_survived"] += 1
    TALLY["acked_writes_checked"] += acked
    assert acked > 0


# -- verify / rebuild, in the API and on the command line ------------------------------------------


def _damage_fts(path: Path | str, n: int = 2) -> None:
    """Drop ``n`` rows from the FTS index behind the kernel's back, as a crashed tool might."""
    if isinstance(path, str) and "://" in path:  # AGENTBASE_TEST_BACKEND=postgres: empty their tsvector
        import psycopg

        with psycopg.connect(path) as pg:
            pg.execute("UPDATE entries SET fts = ''::tsvector WHERE rid IN "
                       "(SELECT rid FROM entries ORDER BY rid LIMIT %s)", (n,))
        return
    conn = raw_connect(path)
    try:
        rids = [r for (r,) in conn.execute("SELECT rid FROM entries ORDER BY rid LIMIT ?", (n,))]
        for rid in rids:
            conn.execute("DELETE FROM entries_fts WHERE rowid = ?", (rid,))
        conn.commit()
    finally:
        conn.close()


def test_verify_detects_and_rebuild_repairs_a_damaged_fts_index(kernel):
    added = [kernel.add_memory(f"Alice keeps note number {i} about kayaks", user_id="alice") for i in range(5)]
    assert kernel.verify()["ok"]
    _damage_fts(kernel.path)
    report = kernel.verify()
    assert not report["ok"] and report["fts_rows"] == report["entries"] - 2
    assert report["fts_ok"] is False
    report = kernel.rebuild()
    assert report["ok"] and report["fts_rows"] == report["entries"]
    found = {h.id for h in kernel.find("kayaks", user_id="alice", top_k=10)}
    assert {a.id for a in added} <= found


def test_rebuild_embeds_texts_that_lost_their_vector(kernel):
    kernel.add_memory("Bob waters the ferns on Sundays", user_id="bob")
    if isinstance(kernel.path, str):  # AGENTBASE_TEST_BACKEND=postgres
        import psycopg

        with psycopg.connect(kernel.path) as pg:
            pg.execute("DELETE FROM embeddings")
    else:
        conn = raw_connect(kernel.path)
        conn.execute("DELETE FROM embeddings")
        conn.commit()
        conn.close()
    assert kernel.verify()["texts_without_vector"] == 1
    assert kernel.rebuild()["ok"]
