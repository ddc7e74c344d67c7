"""``Kernel.update`` makes the row that ingest makes for the same text (two copies of that code had drifted)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from agentbase_kernel.store.sqlite.connection import sqlite_module

_DERIVED = "l0_abstract, l1_overview, search_text, search_context, tags, event_dates, date_min, date_max, flags"


def _row(path, entry_id):
    conn = sqlite_module().connect(str(path))
    try:
        return conn.execute(f"SELECT {_DERIVED} FROM entries WHERE id = ?", (entry_id,)).fetchone()
    finally:
        conn.close()


@pytest.mark.sqlite_only("compares the rows as stored in the SQLite file")
def test_an_updated_turn_is_the_row_a_new_turn_with_that_text_gets(kernel):
    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    old = kernel.add_message("s1", "user", "I went hiking near Denver", name="Caroline", created_at=when)
    new = kernel.add_message("s2", "user", "Melanie painted a lake in Oslo", name="Caroline", created_at=when)
    kernel.update(old.entry_id, text="Melanie painted a lake in Oslo")
    assert _row(kernel.path, old.entry_id) == _row(kernel.path, new.entry_id)
    # who said it is searchable, and the undated turn kept its own day for date filters
    row = _row(kernel.path, old.entry_id)
    assert row[2].startswith("Caroline: ") and row[6] == row[7] == "2023-05-08"
    assert [h.id for h in kernel.find("Caroline painted", session_id="s1")] == [old.entry_id]


def test_an_update_replaces_the_entities_of_the_old_text(kernel):
    entry = kernel.add_memory("Alice moved to Paris", user_id="u").id
    kernel.update(entry, text="Bob moved to Berlin", user_id="u")
    names = {n["norm"] for n in kernel.entity_graph(user_id="u")["nodes"]}
    assert "alice" not in names and "paris" not in names
    assert {"bob", "berlin"} <= names
    assert "ner_alice" not in kernel.get(entry).tags


@pytest.mark.sqlite_only("compares the rows as stored in the SQLite file")
def test_an_update_keeps_the_turns_neighbour_context(kernel):
    msgs = kernel.add_messages("s", [{"role": "user", "content": "What does your tattoo mean?"},
                                     {"role": "assistant", "content": "It stands for freedom."}], user_id="u")
    before = _row(kernel.path, msgs[1].entry_id)[3]
    kernel.update(msgs[1].entry_id, text="It stands for courage.")
    assert _row(kernel.path, msgs[1].entry_id)[3] == before and "tattoo" in before
