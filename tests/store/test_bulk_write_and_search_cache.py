"""PostgreSQL's own parts of the faster write and search paths (the entity race fallback and the
planner statistics after a bulk write), read back with plain SQL. What every backend must keep
(entities written with their transaction, several turns' neighbours at once, a full-text cache
that never answers from stale rows) is in the contract suite, ``agentbase_kernel.testing``."""

from __future__ import annotations

import threading
import time

from agentbase_kernel import Scope
from agentbase_kernel.store import EntryFilter, open_store
from agentbase_kernel.testing import T0, row

# -- PostgreSQL only -----------------------------------------------------------------------------------


def _pg(url: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


def test_an_entity_another_writer_commits_meanwhile_is_still_tied(postgres_url: str) -> None:
    """The one-statement path cannot see an entity committed while it waited on it (ON CONFLICT skips
    it, its snapshot predates it): the ties must still be made, through the fallback."""
    import psycopg

    store = open_store(postgres_url)
    try:
        entry, _ = store.insert_entry(row("Hal met Ivy", user_id="u"))
        other = psycopg.connect(postgres_url)
        other.execute("INSERT INTO entities (norm, label, text) VALUES ('hal', 'PERSON', 'Hal')")  # not committed
        done = threading.Event()
        errors: list[BaseException] = []

        def add() -> None:
            try:
                store.add_entities(entry.id, [("hal", "PERSON", "Hal"), ("ivy", "PERSON", "Ivy")], T0)
            except BaseException as exc:  # reported below
                errors.append(exc)
            done.set()

        worker = threading.Thread(target=add)
        worker.start()
        time.sleep(0.5)
        assert not done.is_set()  # waiting on the other writer's uncommitted 'hal'
        other.commit()
        other.close()
        worker.join(10)
        assert done.is_set() and not errors
    finally:
        store.close()
    tied = _pg(postgres_url, "SELECT n.norm FROM entity_entries x JOIN entities n ON n.id = x.entity_id "
                             "WHERE x.entry_id = %s ORDER BY 1", (entry.id,))
    assert tied == [("hal",), ("ivy",)]
    assert _pg(postgres_url, "SELECT count(*) FROM entity_links WHERE entry_id = %s", (entry.id,)) == [(1,)]
    assert _pg(postgres_url, "SELECT count(*) FROM entities") == [(2,)]


def test_a_bulk_write_refreshes_the_planner_statistics_before_the_next_search(postgres_url: str) -> None:
    store = open_store(postgres_url)
    try:
        with store.transaction():
            for i in range(1100):
                store.insert_entry(row(f"note {i} about kites", user_id="u"))
        assert _pg(postgres_url, "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'entries'") == [(None,)]
        assert len(store.fts_search(["kites"], EntryFilter(scope=Scope(user_id="u")), 5)) == 5
        (analysed,), = _pg(postgres_url, "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'entries'")
        assert analysed is not None
        assert _pg(postgres_url, "SELECT reltuples FROM pg_class WHERE relname = 'entries'") == [(1100.0,)]
    finally:
        store.close()
