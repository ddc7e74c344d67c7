"""Many processes on one PostgreSQL database, connections dropped mid-write, the server restarting under load.

The writers are the reliability suite's (tests/reliability/workers.py: every adapter in turn, plus racing
inserts of shared facts); the rows are then read back with plain SQL, not through our store. The default
run is 4 writers x 70 writes like the SQLite suite; ``AGENTBASE_RELIABILITY_WRITERS=8
AGENTBASE_RELIABILITY_WRITES=1000`` gives the issue's 8 x 1,000 (figures in docs/postgres.md).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentbase_kernel import AgentBase
from tests.conftest import HashEmbedder
from tests.reliability import workers

from . import _workers

pytestmark = pytest.mark.postgres

WRITERS = int(os.environ.get("AGENTBASE_RELIABILITY_WRITERS", "4"))
WRITES = int(os.environ.get("AGENTBASE_RELIABILITY_WRITES", "70"))
SHARED = 10


def _rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def _count(url: str, sql: str) -> int:
    """A count, or 0 while the writers have not created the tables yet."""
    import psycopg

    try:
        return int(_rows(url, sql)[0][0])
    except psycopg.errors.UndefinedTable:
        return 0


def half_written(url: str) -> list[str]:
    """Entries missing a part every complete write has: its ADD history event, its search vector, its embedding."""
    rows = _rows(url, """
        SELECT e.id,
               NOT EXISTS (SELECT 1 FROM entry_history h WHERE h.entry_id = e.id AND h.event = 'ADD') AS no_history,
               e.fts = ''::tsvector AS no_fts,
               NOT EXISTS (SELECT 1 FROM embeddings v WHERE v.content_hash = e.content_hash) AS no_vector
        FROM entries e""")
    return [f"{entry_id}: history={not a} fts={not b} vector={not c}" for entry_id, a, b, c in rows if a or b or c]


def test_writers_through_every_adapter_and_readers_on_one_database(postgres_url):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(WRITERS + 2) as pool:
        w = [pool.apply_async(workers.write_mixed, (postgres_url, i, WRITES, SHARED)) for i in range(WRITERS)]
        r = [pool.apply_async(workers.read_loop, (postgres_url, 5.0)) for _ in range(2)]
        wrote = [x.get(timeout=3600) for x in w]
        read = [x.get(timeout=3600) for x in r]
    errors = [e for res in wrote + read for e in res["errors"]]
    assert errors == [], errors[:5]
    assert sum(res["reads"] for res in read) > 0

    entries = Counter(t for (t,) in _rows(postgres_url, "SELECT l2_full FROM entries WHERE invalid_at IS NULL"))
    messages = Counter(t for (t,) in _rows(postgres_url, "SELECT content FROM messages"))
    written = [t for res in wrote for t in res["written"]]
    assert len(written) == WRITERS * WRITES
    missing = [t for t in written if entries[t] == 0]
    doubled = [t for t in written if entries[t] > 1]
    assert missing == [] and doubled == [], (missing[:3], doubled[:3])
    via_messages = [t for t in written if any(a in t for a in ("via langchain", "via llamaindex", "via openai"))]
    assert via_messages and all(messages[t] == 1 for t in via_messages)
    shared = [t for t in entries if t.startswith("shared fact number ")]
    assert len(shared) == SHARED and all(entries[t] == 1 for t in shared)
    assert half_written(postgres_url) == []
    with AgentBase(postgres_url, embedder=HashEmbedder(), ner="regex") as db:
        report = db.sync.verify()
    assert report["ok"], report


def _under_faults(url: str, disturb: Any, flags: Path, writers: int = 2) -> tuple[list[dict[str, Any]], int]:
    """Run ``writers`` processes; once each has written, call ``disturb()``, let them write in calm for a
    while, then stop them. Returns their reports and what ``disturb`` returned."""
    ctx = multiprocessing.get_context("spawn")
    dbname = url.rsplit("/", 1)[1]
    with ctx.Pool(writers) as pool:
        jobs = [pool.apply_async(_workers.write_through_faults, (url, i, str(flags))) for i in range(writers)]
        deadline = time.monotonic() + 300  # the children import the frameworks first: slow on a loaded machine
        while _count(url, "SELECT count(DISTINCT user_id) FROM entries") < writers:
            assert time.monotonic() < deadline, "the writers never started"
            assert not any(job.ready() for job in jobs), [job.get() for job in jobs if job.ready()]
            time.sleep(0.2)
        disturbed = disturb(dbname)
        (flags / "calm").touch()
        calm_deadline = time.monotonic() + 120
        while time.monotonic() < calm_deadline and _count(
                url, "SELECT count(*) FROM entries WHERE created_at > now() - interval '2 seconds'") < 2 * writers:
            time.sleep(0.5)
        time.sleep(1.0)
        (flags / "stop").touch()
        return [job.get(timeout=600) for job in jobs], disturbed


def _check_outcomes(url: str, reports: list[dict[str, Any]]) -> None:
    raw = [r for rep in reports for r in rep["raised"] if r.startswith(("RAW", "close"))]
    assert raw == [], raw[:3]
    names = {name for rep in reports for name in rep["raised"]}
    assert names <= {"StorageError", "DatabaseLocked", "ClosedError"}, names
    stored = Counter(t for (t,) in _rows(url, "SELECT l2_full FROM entries"))
    acked = [t for rep in reports for t in rep["acked"]]
    assert acked, "no write succeeded at all"
    assert [t for t in acked if stored[t] != 1] == []  # every returned write is there, once
    failed = [t for rep in reports for t in rep["failed"]]
    assert [t for t in failed if stored[t] > 1] == []  # a failed write is absent or there once, never twice
    assert half_written(url) == []  # and nothing is there in part


def test_a_connection_dropped_mid_write_is_retried_or_fails_with_our_error(postgres_server, postgres_url, tmp_path):
    def drop_connections(dbname: str) -> int:
        ended = 0
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            ended += postgres_server.terminate_backends(dbname)
            time.sleep(0.1)
        return ended

    reports, ended = _under_faults(postgres_url, drop_connections, tmp_path)
    assert ended > 0, "no backend was terminated: the test did not exercise the fault"
    _check_outcomes(postgres_url, reports)
    assert all(rep["late_ok"] > 0 for rep in reports), "a writer did not recover after its connections were dropped"


def test_the_server_restarting_under_load(postgres_server, postgres_url, tmp_path):
    def restart_twice(dbname: str) -> int:
        for _ in range(2):
            postgres_server.restart()
            time.sleep(1.5)
        return 2

    reports, _ = _under_faults(postgres_url, restart_twice, tmp_path)
    _check_outcomes(postgres_url, reports)
    assert all(rep["late_ok"] > 0 for rep in reports), "a writer did not recover after the restart"
