"""The backend contract for importance, archival and per-scope capacity (issue 22 items 2-4).

Written against the ``Store`` protocol only, like ``test_contract.py``: a new backend (PostgreSQL)
runs the same assertions as SQLite.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from agentbase_kernel import Scope
from agentbase_kernel.store import EntryFilter, Store

from .test_contract import T0, ids, row, unit


def test_importance_is_stored_and_read_back(store: Store) -> None:
    entry, _ = store.insert_entry(row("matters", user_id="u", importance=0.9))
    assert entry.importance == 0.9
    assert store.get_entry(entry.id).importance == 0.9
    assert store.update_entry(entry.id, Scope(user_id="u"), {"importance": 0.2}).importance == 0.2


def test_archived_entries_leave_reads_and_search_but_stay(store: Store) -> None:
    scope = Scope(user_id="u")
    a, _ = store.insert_entry(row("alpha lantern", user_id="u", content_hash="ha"))
    b, _ = store.insert_entry(row("beta lantern", user_id="u", content_hash="hb"))
    store.put_vectors([("ha", unit(1, 0)), ("hb", unit(0.9, 0.1))])
    assert store.archive_entries([a.id, a.id], reason="capacity", actor="ops") == [a.id]
    assert store.archive_entries([a.id], reason="capacity") == []  # already archived
    live = EntryFilter(scope=scope)
    assert ids(store.list_entries(live)) == [b.id]
    assert store.count_entries(live) == 1
    assert ids(store.list_entries(EntryFilter(scope=scope, archived=True))) == [a.id]
    assert store.count_entries(EntryFilter(scope=scope, archived=None)) == 2
    found = {store.entries_by_rid([rid])[rid].id for rid, _ in store.fts_search(["lantern"], live, 10)}
    assert found == {b.id}
    near = {store.entries_by_rid([rid])[rid].id for rid, _ in store.vector_search(np.asarray(unit(1, 0)), live, 5)}
    assert near == {b.id}
    got = store.get_entry(a.id, scope)
    assert got.archived_at is not None
    events = store.history(a.id)
    assert [e.event for e in events] == ["ADD", "ARCHIVE"]
    assert events[-1].actor == "ops" and events[-1].new_value == "capacity"
    assert store.restore_entries([a.id], actor="ops") == [a.id]
    assert store.restore_entries([a.id]) == []
    assert store.get_entry(a.id).archived_at is None
    assert [e.event for e in store.history(a.id)] == ["ADD", "ARCHIVE", "RESTORE"]
    assert {store.entries_by_rid([rid])[rid].id for rid, _ in store.fts_search(["lantern"], live, 10)} == {a.id, b.id}


def test_scope_size_and_entries_are_exact_scope_and_live_only(store: Store) -> None:
    u = Scope(user_id="u")
    a, _ = store.insert_entry(row("one", user_id="u", created_at=T0))
    b, _ = store.insert_entry(row("two", user_id="u", created_at=T0 + timedelta(days=1)))
    store.insert_entry(row("in a session", user_id="u", session_id="s"))
    store.insert_entry(row("expired", user_id="u", expires_at=datetime.now(timezone.utc) - timedelta(days=1)))
    c, _ = store.insert_entry(row("archived", user_id="u"))
    store.archive_entries([c.id], reason="manual")
    store.bump_access({b.id: (3, "2024-05-03T00:00:00.000000+00:00")})
    assert store.scope_size(u) == 2
    entries = store.scope_entries(u)
    assert ids(entries) == [a.id, b.id]
    assert [e.access_count for e in entries] == [0, 3]
    assert store.scope_size(Scope(user_id="u", session_id="s")) == 1


def test_scope_capacity_is_per_exact_scope(store: Store) -> None:
    u, us = Scope(user_id="u"), Scope(user_id="u", session_id="s")
    assert store.scope_capacity(u) is None
    store.set_scope_capacity(u, 5)
    store.set_scope_capacity(u, 7)
    assert store.scope_capacity(u) == 7 and store.scope_capacity(us) is None
    store.set_scope_capacity(u, None)
    assert store.scope_capacity(u) is None
