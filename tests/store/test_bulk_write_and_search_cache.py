"""What the faster write and search paths must keep: entities written with their transaction (and
only with it), several turns' neighbours asked at once, and a full-text cache that never answers
from stale rows - on both backends; then PostgreSQL's own parts (the entity race fallback and the
planner statistics after a bulk write), read back with plain SQL."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from agentbase_kernel import Scope
from agentbase_kernel.store import EntryFilter, Store, open_store
from agentbase_kernel.store.base import utcnow

from .test_contract import T0, row


class Boom(Exception):
    pass


def _graph_norms(store: Store, scope: Scope) -> set[str]:
    return {n["norm"] for n in store.entity_graph(EntryFilter(scope=scope))["nodes"]}


def test_entities_of_a_transaction_are_read_inside_it_and_kept_after_it(store: Store) -> None:
    with store.transaction():
        first, _ = store.insert_entry(row("Ann met Bob in Oslo", user_id="u"))
        store.add_entities(first.id, [("ann", "PERSON", "Ann"), ("bob", "PERSON", "Bob"), ("oslo", "GPE", "Oslo")], T0)
        second, _ = store.insert_entry(row("Bob likes Oslo", user_id="u"))
        store.add_entities(second.id, [("bob", "PERSON", "Bob"), ("oslo", "GPE", "Oslo"), ("bob", "PERSON", "BOB")], T0)
        # read back before the commit
        assert _graph_norms(store, Scope(user_id="u")) == {"ann", "bob", "oslo"}
        third, _ = store.insert_entry(row("Cy went home", user_id="u"))
        store.add_entities(third.id, [("cy", "PERSON", "Cy")], T0)
    graph = store.entity_graph(EntryFilter(scope=Scope(user_id="u")))
    counts = {n["norm"]: n["entries"] for n in graph["nodes"]}
    assert counts == {"ann": 1, "bob": 2, "oslo": 2, "cy": 1}
    norm_of = {n["id"]: n["norm"] for n in graph["nodes"]}
    pairs = {(e["entry_id"], *sorted((norm_of[e["a"]], norm_of[e["b"]]))) for e in graph["edges"]}
    assert pairs == {(first.id, "ann", "bob"), (first.id, "ann", "oslo"), (first.id, "bob", "oslo"),
                     (second.id, "bob", "oslo")}


def test_a_rolled_back_inner_transaction_takes_its_entities_with_it(store: Store) -> None:
    with store.transaction():
        kept, _ = store.insert_entry(row("Dee is here", user_id="u"))
        store.add_entities(kept.id, [("dee", "PERSON", "Dee")], T0)
        with pytest.raises(Boom):
            with store.transaction():
                gone, _ = store.insert_entry(row("Eve is gone", user_id="u"))
                store.add_entities(gone.id, [("eve", "PERSON", "Eve")], T0)
                raise Boom
    assert store.get_entries([kept.id, gone.id]).keys() == {kept.id}
    assert _graph_norms(store, Scope(user_id="u")) == {"dee"}


def test_a_failed_transaction_writes_none_of_its_entities(store: Store) -> None:
    with pytest.raises(Boom):
        with store.transaction():
            entry, _ = store.insert_entry(row("Fay was here", user_id="u"))
            store.add_entities(entry.id, [("fay", "PERSON", "Fay")], T0)
            raise Boom
    assert store.count_entries(EntryFilter()) == 0
    assert store.entity_graph(EntryFilter())["nodes"] == []


def test_deleting_an_entry_whose_entities_wait_for_the_commit(store: Store) -> None:
    with store.transaction():
        entry, _ = store.insert_entry(row("Gus left", user_id="u"))
        store.add_entities(entry.id, [("gus", "PERSON", "Gus")], T0)
        store.delete_entry(entry.id, Scope(user_id="u"))
    assert store.count_entries(EntryFilter()) == 0
    assert _graph_norms(store, Scope(user_id="u")) == set()


def test_neighbours_of_several_turns_at_once(store: Store) -> None:
    store.ensure_session("s", Scope(user_id="u"), None)
    turns = []
    for text in ("one", "two", "three", "four", "five"):
        message = store.insert_message("s", {"role": "user", "content": text})
        entry, _ = store.insert_entry(row(text, user_id="u", session_id="s"))
        store.attach_entry(message.id, entry.id, "s")
        turns.append(entry)
    loose, _ = store.insert_entry(row("not a turn", user_id="u"))
    near = store.session_neighbours([turns[0].id, loose.id, turns[2].id], 1, EntryFilter())
    assert near == {turns[0].id: [turns[1].id], turns[2].id: [turns[1].id, turns[3].id]}
    assert list(near) == [turns[0].id, turns[2].id]
    # the filter applies to the neighbours
    assert store.session_neighbours([turns[2].id], 2, EntryFilter(scope=Scope(user_id="nobody"))) == {turns[2].id: []}


def _reopen(store: Store) -> Store:
    return open_store(store.path)  # type: ignore[attr-defined]


def test_full_text_sees_another_writers_rows_and_drops_expired_ones(store: Store) -> None:
    scope = EntryFilter(scope=Scope(user_id="u"))
    a, _ = store.insert_entry(row("the red kite flew", user_id="u"))
    first = store.fts_search(["kite"], scope, 10)
    other = _reopen(store)
    try:
        b, _ = other.insert_entry(row("a green kite and a red kite", user_id="u"))
    finally:
        other.close()
    again = store.fts_search(["kite"], scope, 10)
    assert len(first) == 1 and len(again) == 2
    found = store.entries_by_rid([r for r, _ in again])
    assert {e.id for e in found.values()} == {a.id, b.id}
    assert found[again[0][0]].id == b.id  # two hits in fewer words ranks first
    # an entry that expires leaves the cached answer without any write
    soon, _ = store.insert_entry(row("a kite for a moment", user_id="u", expires_at=utcnow() + timedelta(seconds=1.5)))
    assert len(store.fts_search(["kite"], scope, 10)) == 3
    time.sleep(1.6)
    assert {e.id for e in store.entries_by_rid([r for r, _ in store.fts_search(["kite"], scope, 10)]).values()} == {
        a.id, b.id}
    assert soon.id not in {e.id for e in store.entries_by_rid([r for r, _ in store.fts_search(["kite"], scope, 10)]).values()}


def test_full_text_inside_a_transaction_sees_its_own_rows(store: Store) -> None:
    scope = EntryFilter(scope=Scope(user_id="u"))
    store.insert_entry(row("blue kite", user_id="u"))
    assert len(store.fts_search(["kite"], scope, 10)) == 1
    with pytest.raises(Boom):
        with store.transaction():
            store.insert_entry(row("kite kite", user_id="u"))
            assert len(store.fts_search(["kite"], scope, 10)) == 2
            raise Boom
    assert len(store.fts_search(["kite"], scope, 10)) == 1


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
