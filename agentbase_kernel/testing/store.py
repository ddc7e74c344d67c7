"""The backend contract: what any ``Store`` must do, as a test class to subclass.

Subclass ``StoreContractTests`` in a test module, give it a ``store`` fixture that yields an
EMPTY, opened store, and pytest runs the whole suite against it (the pattern of langchain's
``langchain_tests`` ``BaseStoreSyncTests``)::

    from agentbase_kernel.testing import StoreContractTests

    class TestMyStore(StoreContractTests):
        @pytest.fixture
        def store(self, tmp_path):
            opened = MyStore(tmp_path / "data")
            opened.open()
            yield opened
            opened.close()

Every test is written against the ``Store`` protocol only; rows are built by hand, as ingest
would build them (``row``). A store that can open a second handle on the same data (another
process's view of one file or server) overrides ``open_again``; the tests that need one skip
otherwise. The SQLite, PostgreSQL and in-memory stores run this suite in ``tests/store/``.
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from ..errors import (
    DuplicateEntry,
    EmbeddingMismatch,
    EntryNotFound,
    InvalidArgument,
    MessageNotFound,
    MissingDependency,
    SessionNotFound,
)
from ..records import Scope
from ..store.base import EntryFilter, utcnow
from ..store.protocol import EntryRow, Store

try:
    import pytest
except ImportError as exc:  # pragma: no cover - the suite is only imported by test code
    raise MissingDependency("agentbase_kernel.testing needs pytest: pip install pytest") from exc

__all__ = ["T0", "StoreContractTests", "ids", "row", "unit"]

#: a fixed creation time for rows that need one
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def row(text: str, **fields: Any) -> EntryRow:
    """An ``EntryRow`` for ``text`` as ingest would build it (md5 content hash), with ``fields`` on top."""
    base: EntryRow = {"l2_full": text, "l0_abstract": text[:50], "l1_overview": text[:300],
                      "content_hash": hashlib.md5(text.encode()).hexdigest(), "search_text": text.lower()}
    base.update(fields)  # type: ignore[typeddict-item]
    return base


def unit(*values: float) -> np.ndarray:
    """A unit-length float32 vector."""
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def ids(entries: list[Any]) -> list[str]:
    return [e.id for e in entries]


class _Boom(Exception):
    pass


def _graph_norms(store: Store, scope: Scope) -> set[str]:
    return {n["norm"] for n in store.entity_graph(EntryFilter(scope=scope))["nodes"]}


class StoreContractTests(ABC):
    """The contract suite: subclass it and provide the ``store`` fixture (module docstring)."""

    @abstractmethod
    @pytest.fixture
    def store(self) -> Store:
        """An opened store that holds nothing yet; closed by the fixture after the test."""

    def open_again(self, store: Store) -> Store | None:
        """A second handle on ``store``'s data (as another process would open it), or ``None``
        when the backend has none: the tests that need another writer then skip."""
        return None

    # -- scopes and dedup -------------------------------------------------------------------------------------------

    def test_scopes_are_isolated(self, store: Store) -> None:
        a, _ = store.insert_entry(row("tea", user_id="alice"))
        b, _ = store.insert_entry(row("tea", user_id="bob"))
        c, _ = store.insert_entry(row("tea", user_id="alice", agent_id="x"))
        assert a.id != b.id != c.id
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="alice")))) == [a.id, c.id]
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="alice", agent_id="x")))) == [c.id]
        assert store.count_entries(EntryFilter()) == 3
        with pytest.raises(EntryNotFound):
            store.get_entry(a.id, Scope(user_id="bob"))
        assert store.get_entry(a.id, Scope(user_id="alice")).id == a.id

    def test_exact_duplicates_in_one_scope_are_one_entry(self, store: Store) -> None:
        first, inserted = store.insert_entry(row("I like tea", user_id="u"))
        again, inserted_again = store.insert_entry(row("I like tea", user_id="u"))
        assert inserted and not inserted_again and again.id == first.id
        kept, kept_inserted = store.insert_entry(row("I like tea", user_id="u", dedup=False))
        assert kept_inserted and kept.id != first.id
        assert store.count_entries(EntryFilter(scope=Scope(user_id="u"))) == 2

    def test_live_duplicates_are_what_an_insert_would_return(self, store: Store) -> None:
        def key(text: str, user: str) -> tuple[Scope, str]:
            return Scope(user_id=user), hashlib.md5(text.encode()).hexdigest()

        tea, _ = store.insert_entry(row("tea", user_id="u"))
        store.insert_entry(row("tea", user_id="v", agent_id="a"))
        store.insert_entry(row("coffee", user_id="u", dedup=False))  # kept apart: no duplicate of anything
        old, _ = store.insert_entry(row("old news", user_id="u"))
        store.supersede(old.id, tea.id, T0)
        archived, _ = store.insert_entry(row("filed away", user_id="u"))
        store.archive_entries([archived.id], reason="test")
        found = store.live_duplicates([key("tea", "u"), key("coffee", "u"), key("old news", "u"), key("tea", "w"),
                                       key("filed away", "u"), key("tea", "u")])
        assert {k: e.id for k, e in found.items()} == {key("tea", "u"): tea.id, key("filed away", "u"): archived.id}
        assert found[key("filed away", "u")].archived_at is not None
        assert store.live_duplicates([]) == {}
        again, inserted = store.insert_entry(row("tea", user_id="u"))
        assert not inserted and again.id == found[key("tea", "u")].id

    def test_an_id_that_exists_is_invalid(self, store: Store) -> None:
        store.insert_entry(row("one", id="fixed"))
        with pytest.raises(InvalidArgument):
            store.insert_entry(row("two", id="fixed"))

    def test_update_to_another_entrys_text_is_a_duplicate(self, store: Store) -> None:
        a, _ = store.insert_entry(row("alpha", user_id="u"))
        b, _ = store.insert_entry(row("beta", user_id="u"))
        with pytest.raises(DuplicateEntry):
            store.update_entry(b.id, Scope(user_id="u"), {"l2_full": "alpha", "content_hash": a.content_hash})

    # -- history, supersession, time --------------------------------------------------------------------------------

    def test_history_records_add_update_delete(self, store: Store) -> None:
        entry, _ = store.insert_entry(row("v1", user_id="u", role="user"))
        updated = store.update_entry(entry.id, Scope(user_id="u"), {"l2_full": "v2", "content_hash": "h2"}, actor="me")
        assert updated.l2_full == "v2" and updated.updated_at is not None
        store.delete_entry(entry.id, Scope(user_id="u"))
        events = store.history(entry.id)
        assert [(e.event, e.old_value, e.new_value) for e in events] == [
            ("ADD", None, "v1"), ("UPDATE", "v1", "v2"), ("DELETE", "v2", None)]
        assert events[1].actor == "me"
        with pytest.raises(EntryNotFound):
            store.get_entry(entry.id)
        assert store.history("no-such-id") == []

    def test_supersession_hides_the_old_fact_but_as_of_sees_it(self, store: Store) -> None:
        scope = Scope(user_id="u")
        old, _ = store.insert_entry(row("lives in Paris", user_id="u", subject_key="user:home", created_at=T0))
        new, _ = store.insert_entry(row("lives in Rome", user_id="u", subject_key="user:home",
                                        created_at=T0 + timedelta(days=10)))
        assert ids(store.live_subject_entries(scope, "user:home", new.id)) == [old.id]
        store.supersede(old.id, new.id, T0 + timedelta(days=10))
        assert store.get_entry(old.id).superseded_by == new.id
        assert ids(store.list_entries(EntryFilter(scope=scope))) == [new.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, include_invalid=True))) == [old.id, new.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, as_of=T0 + timedelta(days=5)))) == [old.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, as_of=T0 + timedelta(days=11)))) == [new.id]
        assert store.live_subject_entries(scope, "user:home", new.id) == []

    def test_expired_entries_are_hidden_unless_asked_for(self, store: Store) -> None:
        gone, _ = store.insert_entry(row("old news", user_id="u", expires_at=T0))
        live, _ = store.insert_entry(row("fresh", user_id="u"))
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="u")))) == [live.id]
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="u"), include_expired=True))) == [gone.id, live.id]

    def test_since_and_until_bound_creation_time(self, store: Store) -> None:
        made = [store.insert_entry(row(f"day {i}", user_id="u", created_at=T0 + timedelta(days=i)))[0] for i in range(4)]
        flt = EntryFilter(scope=Scope(user_id="u"), since=T0 + timedelta(days=1), until=T0 + timedelta(days=2))
        assert ids(store.list_entries(flt)) == [made[1].id, made[2].id]

    # -- filters and paging -----------------------------------------------------------------------------------------

    def test_field_and_metadata_filters(self, store: Store) -> None:
        a, _ = store.insert_entry(row("a", user_id="u", category="pref", tags=["x", "y"], role="user",
                                      metadata={"n": 1, "src": {"app": "chat"}}))
        b, _ = store.insert_entry(row("b", user_id="u", category="fact", tags=["y"], role="assistant",
                                      metadata={"n": 5, "src": {"app": "mail"}}))
        c, _ = store.insert_entry(row("c", user_id="u", metadata={}))
        scope = Scope(user_id="u")
        assert ids(store.list_entries(EntryFilter(scope=scope, category="pref"))) == [a.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, tags=("y",)))) == [a.id, b.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, role="assistant"))) == [b.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, metadata={"n": {"gt": 2}}))) == [b.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, metadata={"src.app": "chat"}))) == [a.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, metadata={"n": {"ne": 1}}))) == [b.id, c.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, metadata={
            "OR": [{"n": 1}, {"NOT": {"n": {"exists": True}}}]}))) == [a.id, c.id]
        assert store.count_entries(EntryFilter(scope=scope, metadata={"n": {"in": [1, 5]}})) == 2
        assert store.delete_entries(EntryFilter(scope=scope, metadata={"n": 5})) == 1
        assert ids(store.list_entries(EntryFilter(scope=scope))) == [a.id, c.id]

    def test_text_contains_is_an_exact_case_sensitive_substring(self, store: Store) -> None:
        a, _ = store.insert_entry(row("TODO: ship the 100% fix_now", user_id="u"))
        b, _ = store.insert_entry(row("todo later\nsecond line with a NUL \x00 here", user_id="u"))
        c, _ = store.insert_entry(row("TODO elsewhere", user_id="v"))
        scope = Scope(user_id="u")
        assert ids(store.list_entries(EntryFilter(scope=scope, text_contains="TODO"))) == [a.id]
        assert ids(store.list_entries(EntryFilter(text_contains="TODO"))) == [a.id, c.id]
        # LIKE wildcards and escapes are plain characters
        assert ids(store.list_entries(EntryFilter(scope=scope, text_contains="100% fix_"))) == [a.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, text_contains="1_0"))) == []
        assert ids(store.list_entries(EntryFilter(scope=scope, text_contains="line with a NUL \x00"))) == [b.id]
        assert ids(store.list_entries(EntryFilter(scope=scope, text_contains="later\nsecond"))) == [b.id]
        assert store.count_entries(EntryFilter(text_contains="e")) == 3

    def test_list_pages_in_order(self, store: Store) -> None:
        made = [store.insert_entry(row(f"n{i}", user_id="u"))[0].id for i in range(7)]
        flt = EntryFilter(scope=Scope(user_id="u"))
        pages = [ids(store.list_entries(flt, limit=3, offset=o)) for o in (0, 3, 6)]
        assert [e for p in pages for e in p] == made
        assert ids(store.list_entries(flt, limit=None, order="desc")) == made[::-1]
        assert ids(store.list_entries(flt, limit=None, offset=5)) == made[5:]

    # -- transactions -----------------------------------------------------------------------------------------------

    def test_a_failed_transaction_writes_nothing(self, store: Store) -> None:
        with pytest.raises(RuntimeError), store.transaction():
            store.insert_entry(row("kept?", user_id="u"))
            store.ensure_session("s", Scope(user_id="u"), None)
            raise RuntimeError("boom")
        assert store.count_entries(EntryFilter()) == 0
        assert store.find_session("s") is None

    # -- sessions and messages --------------------------------------------------------------------------------------

    def test_sessions_and_messages(self, store: Store) -> None:
        session, created = store.ensure_session("s1", Scope(user_id="u"), {"topic": "tea"})
        assert created and session.metadata == {"topic": "tea"} and session.scope.user_id == "u"
        assert store.ensure_session("s1", Scope(user_id="other"), None)[1] is False
        first = store.insert_message("s1", {"role": "user", "content": "hello", "metadata": {"k": 1}})
        last = store.insert_message("s1", {"role": "assistant", "content": "hi", "payload": {"raw": [1]}})
        middle = store.insert_message("s1", {"role": "user", "content": "between"}, position=1)
        listed = store.list_messages("s1")
        assert [m.id for m in listed] == [first.id, middle.id, last.id]
        assert listed[2].payload == {"raw": [1]} and listed[0].metadata == {"k": 1}
        assert [m.id for m in store.list_messages("s1", after=first.id)] == [middle.id, last.id]
        assert [m.id for m in store.list_messages("s1", order="desc", limit=2)] == [last.id, middle.id]
        with pytest.raises(MessageNotFound):
            store.list_messages("s1", after="msg_nope")
        assert store.update_message("s1", first.id, {"status": "archived"}).status == "archived"
        assert store.count_messages("s1") == 3 and store.count_messages("s1", "archived") == 1
        assert store.list_sessions(Scope(user_id="u"), None, 0)[0].id == "s1"
        assert store.update_session("s1", metadata={"topic": "coffee"}, committed=True).committed_at is not None
        with pytest.raises(SessionNotFound):
            store.update_session("nope", metadata={})
        assert store.list_messages("nope") == []

    def test_message_sessions_names_the_session_of_each_known_id(self, store: Store) -> None:
        store.ensure_session("s1", Scope(user_id="u"), None)
        store.ensure_session("s2", Scope(user_id="v"), None)
        one, two = store.insert_message("s1", {"role": "user", "content": "a"}), \
            store.insert_message("s2", {"role": "user", "content": "b"})
        assert store.message_sessions([one.id, two.id, "msg_nope"]) == {one.id: "s1", two.id: "s2"}
        assert store.message_sessions([]) == {}

    def test_deleting_messages_deletes_the_entries_only_they_made(self, store: Store) -> None:
        store.ensure_session("s", Scope(user_id="u"), None)
        m1 = store.insert_message("s", {"role": "user", "content": "I adopted a dog"})
        m2 = store.insert_message("s", {"role": "user", "content": "It is called Rex"})
        turn1, _ = store.insert_entry(row("I adopted a dog", user_id="u", session_id="s"))
        turn2, _ = store.insert_entry(row("It is called Rex", user_id="u", session_id="s"))
        fact, _ = store.insert_entry(row("user has a dog named Rex", user_id="u"))
        store.attach_entry(m1.id, turn1.id, "s")
        store.attach_entry(m2.id, turn2.id, "s")
        store.link_source(fact.id, m1.id)
        store.link_source(fact.id, m2.id)
        assert [p.message_id for p in store.provenance([fact.id])[fact.id]] == [m1.id, m2.id]
        linked = [fields["entry_id"] for kind, fields in store.export_records(EntryFilter())
                  if kind == "session_entry" and fields["session_id"] == "s"]
        assert linked == [turn1.id, turn2.id]
        store.delete_message("s", m1.id)
        assert store.get_entries([turn1.id, turn2.id, fact.id]).keys() == {turn2.id, fact.id}
        store.delete_session("s")
        assert store.get_entries([turn2.id, fact.id]) == {}
        assert store.find_session("s") is None

    def test_neighbour_turns(self, store: Store) -> None:
        store.ensure_session("s", Scope(user_id="u"), None)
        turns = []
        for text in ("what is it", "it is a kite", "nice"):
            message = store.insert_message("s", {"role": "user", "content": text})
            entry, _ = store.insert_entry(row(text, user_id="u", session_id="s"))
            store.attach_entry(message.id, entry.id, "s")
            turns.append(entry)
        middle = store.get_entry(turns[1].id)
        near = store.session_neighbours([middle.id], 1, EntryFilter())
        assert near == {middle.id: [turns[0].id, turns[2].id]}
        by_rid = {e.id: r for r, e in store.entries_by_rid(range(1, 1000)).items()}
        assert store.neighbour_turn_hashes([by_rid[middle.id]]) == {
            by_rid[middle.id]: (turns[0].content_hash, turns[2].content_hash)}

    # -- search -----------------------------------------------------------------------------------------------------

    def test_vectors_and_nearest_search(self, store: Store) -> None:
        east, _ = store.insert_entry(row("east", user_id="u", category="dir"))
        north, _ = store.insert_entry(row("north", user_id="u"))
        other, _ = store.insert_entry(row("east too", user_id="v"))
        assert store.missing_vectors([east.content_hash, north.content_hash]) == {east.content_hash, north.content_hash}
        store.put_vectors([(east.content_hash, unit(1, 0, 0)), (north.content_hash, unit(0, 1, 0)),
                           (other.content_hash, unit(1, 0, 0))])
        assert store.missing_vectors([east.content_hash]) == set()
        assert np.allclose(store.vectors_for([north.content_hash])[north.content_hash], unit(0, 1, 0))
        hits = store.vector_search(unit(1, 0.1, 0), EntryFilter(scope=Scope(user_id="u")), 5)
        by_rid = store.entries_by_rid([r for r, _ in hits])
        assert [by_rid[r].id for r, _ in hits] == [east.id, north.id]
        assert hits[0][1] < hits[1][1]
        only = store.vector_search(unit(0, 1, 0), EntryFilter(scope=Scope(user_id="u"), category="dir"), 5)
        assert [store.entries_by_rid([r])[r].id for r, _ in only] == [east.id]
        assert store.vector_search(unit(1, 0, 0), EntryFilter(scope=Scope(user_id="u")), 0) == []
        with pytest.raises(InvalidArgument):
            store.vector_search(unit(1, 0), EntryFilter(scope=Scope(user_id="u")), 5)
        assert store.hashes_without_vector() == []

    def test_indexed_vectors_are_the_stored_vectors_of_the_scope(self, store: Store) -> None:
        texts = {"east": unit(1, 0, 0), "north": unit(0, 1, 0), "zero": np.zeros(3, dtype=np.float32),
                 "queued": None}
        entries = {}
        for text, vector in texts.items():
            entries[text], _ = store.insert_entry(row(text, user_id="u"))
            if vector is not None:
                store.put_vectors([(entries[text].content_hash, vector)])
        other, _ = store.insert_entry(row("elsewhere", user_id="v"))
        store.put_vectors([(other.content_hash, unit(1, 1, 0))])
        scope = Scope(user_id="u")
        store.vector_search(unit(1, 0, 0), EntryFilter(scope=scope), 5)  # a store may build its index here
        rids = {e.id: r for r, e in store.entries_by_rid(range(1, 1000)).items()}
        held = store.indexed_vectors(scope, [rids[e.id] for e in (*entries.values(), other)] + [999_999])
        stored = store.vectors_for(e.content_hash for e in entries.values())
        by_rid = {rids[e.id]: e for e in entries.values()}
        assert set(held) <= {rids[entries["east"].id], rids[entries["north"].id]}  # never a zero, queued or foreign row
        for rid, vector in held.items():
            assert vector.dtype == np.float32 and np.array_equal(vector, stored[by_rid[rid].content_hash])
        store.update_entry(entries["east"].id, Scope(user_id="u"), {"l2_full": "west", "content_hash": "h-west",
                                                                     "search_text": "west"})
        assert rids[entries["east"].id] not in store.indexed_vectors(scope, [rids[entries["east"].id]])
        store.put_vectors([("h-west", unit(-1, 0, 0))])
        for vector in store.indexed_vectors(scope, [rids[entries["east"].id]]).values():
            assert np.array_equal(vector, unit(-1, 0, 0))
        assert store.indexed_vectors(scope, []) == {}

    def test_full_text_search_ranks_within_the_scope(self, store: Store) -> None:
        tea, _ = store.insert_entry(row("green tea every morning", user_id="u"))
        store.insert_entry(row("coffee at noon", user_id="u"))
        store.insert_entry(row("green tea too", user_id="v"))
        hits = store.fts_search(["tea"], EntryFilter(scope=Scope(user_id="u")), 10)
        assert [store.entries_by_rid([r])[r].id for r, _ in hits] == [tea.id]
        assert store.fts_search([], EntryFilter(), 10) == []

    def test_stats_and_verify(self, store: Store) -> None:
        store.insert_entry(row("one", user_id="u"))
        entry, _ = store.insert_entry(row("two", user_id="u"))
        store.supersede(entry.id, entry.id, T0)
        store.ensure_session("s", Scope(), None)
        store.insert_message("s", {"role": "user", "content": "x"})
        assert store.stats() == {"entries": 2, "entries_valid": 1, "sessions": 1, "messages": 1, "vectors": 0}
        report = store.verify()
        assert report["ok"] and report["entries"] == 2 and report["texts_without_vector"] == 2
        store.reset()
        assert store.stats()["entries"] == 0

    def test_embedder_identity_is_kept(self, store: Store) -> None:
        store.check_embedder("model-a", 8)
        store.check_embedder("model-a", 8)
        with pytest.raises(EmbeddingMismatch):
            store.check_embedder("model-b", 8)
        with pytest.raises(EmbeddingMismatch):
            store.check_embedder("model-a", 16)

    # -- governance: provenance, permissions, conflicts ------------------------------------

    def test_provenance_round_trips_and_filters_by_trust_and_excluded_scopes(self, store: Store) -> None:
        high, _ = store.insert_entry(row("from the user", user_id="u", trust=1.0, source="mem0", written_by="bot"))
        low, _ = store.insert_entry(row("from a tool", user_id="u", project_id="p1", trust=0.5))
        assert (store.get_entry(high.id).trust, store.get_entry(high.id).source, store.get_entry(high.id).written_by) \
            == (1.0, "mem0", "bot")
        assert (low.trust, low.source, low.written_by) == (0.5, None, None)
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="u"), min_trust=0.8))) == [high.id]
        # exclusion matches set ids only; entries with that id unset (NULL) stay
        hidden = EntryFilter(scope=Scope(user_id="u"), exclude_scopes=(Scope(project_id="p1"),))
        assert ids(store.list_entries(hidden)) == [high.id] and store.count_entries(hidden) == 1
        found = store.entries_by_rid([rid for rid, _ in store.fts_search(["from"], hidden, 10)])
        assert [e.id for e in found.values()] == [high.id]

    def test_sources_and_excluded_ids_narrow_reads_and_bulk_deletes(self, store: Store) -> None:
        person, _ = store.insert_entry(row("a person's", user_id="u", source="human"))
        agent, _ = store.insert_entry(row("an agent's", user_id="u", source="mem0"))
        bare, _ = store.insert_entry(row("no source", user_id="u"))
        everything = EntryFilter(scope=Scope(user_id="u"))
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="u"), sources=("human", "cli")))) == [person.id]
        assert store.count_entries(EntryFilter(scope=Scope(user_id="u"), sources=())) == 0
        many = frozenset([person.id, *(f"other-{n}" for n in range(2000))])  # more than one bind's worth
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="u"), exclude_ids=many))) == [agent.id, bare.id]
        assert store.delete_entries(EntryFilter(scope=Scope(user_id="u"), exclude_ids=frozenset([agent.id]))) == 2
        assert ids(store.list_entries(everything)) == [agent.id]

    def test_policies_are_stored_replaced_and_deleted(self, store: Store) -> None:
        assert store.policies() == []
        store.set_policy("a", Scope(project_id="p1"), read=True, write=False)
        store.set_policy("a", Scope(project_id="p1"), read=True, write=True)
        store.set_policy("b", Scope(user_id="u", project_id="p1"), read=False, write=False)
        rows = {(p["agent"], p["scope"], p["read"], p["write"]) for p in store.policies()}
        assert rows == {("a", Scope(project_id="p1"), True, True), ("b", Scope(user_id="u", project_id="p1"), False, False)}
        assert store.delete_policy("a", Scope(project_id="p1")) is True
        assert store.delete_policy("a", Scope(project_id="p1")) is False
        assert [p["agent"] for p in store.policies()] == ["b"]

    def test_conflicts_are_listed_resolved_and_closed(self, store: Store) -> None:
        a, _ = store.insert_entry(row("User lives in Paris", user_id="u", subject_key="user:location"))
        b, _ = store.insert_entry(row("User lives in Berlin", user_id="u", subject_key="user:location"))
        cid = store.add_conflict(a, b, "same_time", "user:location")
        (listed,) = store.list_conflicts(Scope(user_id="u"))
        assert (listed["id"], listed["status"], listed["entry_ids"], listed["reason"]) == (cid, "open", [a.id, b.id],
                                                                                            "same_time")
        assert listed["texts"] == ["User lives in Paris", "User lives in Berlin"]
        assert store.list_conflicts(Scope(user_id="v")) == []
        assert [c["id"] for c in store.list_conflicts(Scope(), entry_ids=[b.id])] == [cid]
        with pytest.raises(InvalidArgument):
            store.resolve_conflict(cid, "not-a-side", actor=None)
        done = store.resolve_conflict(cid, b.id, actor="alice")
        assert (done["status"], done["kept"], done["actor"]) == ("resolved", b.id, "alice")
        lost = store.get_entry(a.id)
        assert lost.invalid_at is not None and lost.superseded_by == b.id
        assert store.list_conflicts(Scope(user_id="u")) == []
        assert [c["status"] for c in store.list_conflicts(Scope(user_id="u"), include_closed=True)] == ["resolved"]
        with pytest.raises(InvalidArgument):
            store.resolve_conflict(cid, b.id, actor=None)

    def test_kernel_written_audit_rows(self, store: Store) -> None:
        store.append_audit("denied", actor="bot", scope=Scope(project_id="p1"), entry_ids=["e1"],
                           detail={"operation": "find"})
        (event,) = store.audit_rows(Scope(project_id="p1"), kinds=["denied"])
        assert (event["actor"], event["entry_ids"], event["detail"]) == ("bot", ["e1"], {"operation": "find"})
        assert store.in_transaction is False
        with store.transaction():
            assert store.in_transaction is True

    def test_importance_is_stored_and_read_back(self, store: Store) -> None:
        entry, _ = store.insert_entry(row("matters", user_id="u", importance=0.9))
        assert entry.importance == 0.9
        assert store.get_entry(entry.id).importance == 0.9
        assert store.update_entry(entry.id, Scope(user_id="u"), {"importance": 0.2}).importance == 0.2

    def test_archived_entries_leave_reads_and_search_but_stay(self, store: Store) -> None:
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

    def test_scope_size_and_entries_are_exact_scope_and_live_only(self, store: Store) -> None:
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

    def test_scope_capacity_is_per_exact_scope(self, store: Store) -> None:
        u, us = Scope(user_id="u"), Scope(user_id="u", session_id="s")
        assert store.scope_capacity(u) is None
        store.set_scope_capacity(u, 5)
        store.set_scope_capacity(u, 7)
        assert store.scope_capacity(u) == 7 and store.scope_capacity(us) is None
        store.set_scope_capacity(u, None)
        assert store.scope_capacity(u) is None

    def test_entities_of_a_transaction_are_read_inside_it_and_kept_after_it(self, store: Store) -> None:
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

    def test_entity_matches_find_entries_by_entity_name_path_file_or_dotted_tail(self, store: Store) -> None:
        a, _ = store.insert_entry(row("edit src/app/db.py with care", user_id="u"))
        store.add_entities(a.id, [("src/app/db.py", "PATH", "src/app/db.py")], T0)
        b, _ = store.insert_entry(row("analytics.events_v1 is old", user_id="u"))
        store.add_entities(b.id, [("analytics.events_v1", "IDENT", "analytics.events_v1")], T0)
        c, _ = store.insert_entry(row("eventsXv1 is not it", user_id="u"))
        store.add_entities(c.id, [("eventsxv1", "IDENT", "eventsXv1")], T0)
        other, _ = store.insert_entry(row("edit src/app/db.py elsewhere", user_id="v"))
        store.add_entities(other.id, [("src/app/db.py", "PATH", "src/app/db.py")], T0)
        u = EntryFilter(scope=Scope(user_id="u"))
        assert store.entity_matches(["src/app/db.py"], u) == {a.id: ["src/app/db.py"]}
        assert store.entity_matches(["db.py", "events_v1"], u) == {b.id: ["events_v1"], a.id: ["db.py"]}
        assert list(store.entity_matches(["db.py", "events_v1"], u, limit=1)) == [b.id]  # newest first
        assert store.entity_matches(["nothing"], u) == {} and store.entity_matches([], u) == {}
        assert store.entities_of([a.id, b.id, "missing"]) == {a.id: ["src/app/db.py"], b.id: ["analytics.events_v1"]}

    def test_skill_versions_are_kept_per_scope_name_and_version(self, store: Store) -> None:
        u, a = Scope(user_id="u"), Scope(user_id="u", agent_id="a")
        v1, _ = store.insert_entry(row("Query events_v1 by day", user_id="u", context_type="skill"))
        v2, _ = store.insert_entry(row("Query events_v2 by day", user_id="u", context_type="skill"))
        other, _ = store.insert_entry(row("Deploy with make", user_id="u", agent_id="a", context_type="skill"))
        store.add_skill_version(v1.id, u, "analytics", 1, authored_by="ann", status="current", created_at=T0)
        store.add_skill_version(v2.id, u, "analytics", 2, authored_by=None, status="candidate",
                                created_at=T0 + timedelta(days=1))
        store.add_skill_version(other.id, a, "deploy", 1, authored_by="bot", status="current", created_at=T0)
        with pytest.raises(InvalidArgument):
            store.add_skill_version(other.id, u, "analytics", 1, authored_by=None, status="current", created_at=T0)
        rows = store.skill_versions(u)
        assert [(r["name"], r["version"], r["status"], r["authored_by"]) for r in rows] == [
            ("analytics", 1, "current", "ann"), ("analytics", 2, "candidate", None), ("deploy", 1, "current", "bot")]
        assert rows[0]["scope"] == u and rows[0]["created_at"] == T0 and rows[0]["verified_at"] is None
        assert [r["entry_id"] for r in store.skill_versions(u, exact=True)] == [v1.id, v2.id]
        assert [r["entry_id"] for r in store.skill_versions(name="deploy")] == [other.id]
        assert [r["entry_id"] for r in store.skill_versions(entry_ids=[v2.id, "missing"])] == [v2.id]
        store.set_skill_version(v2.id, status="current", verified_at=T0 + timedelta(days=2))
        store.set_skill_version(v1.id, status="retired")
        assert [(r["status"], r["verified_at"]) for r in store.skill_versions(u, name="analytics")] == [
            ("retired", None), ("current", T0 + timedelta(days=2))]
        store.delete_entry(v1.id, u)
        assert [r["version"] for r in store.skill_versions(u, name="analytics")] == [2]

    def test_drift_marks_are_found_by_entity_either_way_and_go_with_their_entry(self, store: Store) -> None:
        note, _ = store.insert_entry(row("analytics.events_v1 is deprecated, use events_v2", user_id="u"))
        store.add_drift(note.id, Scope(user_id="u"), [("analytics.events_v1", "deprecated", None),
                                                      ("order_items", "renamed", "line_items")], T0)
        marks = store.drift_marks(["events_v1"])
        assert [(m["entity"], m["kind"], m["replacement"], m["entry_id"]) for m in marks] == [
            ("analytics.events_v1", "deprecated", None, note.id)]
        assert marks[0]["scope"] == Scope(user_id="u") and marks[0]["created_at"] == T0
        assert marks[0]["text"] == "analytics.events_v1 is deprecated, use events_v2"
        assert [m["replacement"] for m in store.drift_marks(["shop.order_items", "nothing"])] == ["line_items"]
        assert store.drift_marks(["events_v2"]) == [] and store.drift_marks([]) == []
        store.archive_entries([note.id], reason="manual")
        assert store.drift_marks(["events_v1"]) == []
        store.restore_entries([note.id])
        store.delete_entry(note.id, Scope(user_id="u"))
        assert store.drift_marks(["events_v1"]) == []

    def test_a_rolled_back_inner_transaction_takes_its_entities_with_it(self, store: Store) -> None:
        with store.transaction():
            kept, _ = store.insert_entry(row("Dee is here", user_id="u"))
            store.add_entities(kept.id, [("dee", "PERSON", "Dee")], T0)
            with pytest.raises(_Boom):
                with store.transaction():
                    gone, _ = store.insert_entry(row("Eve is gone", user_id="u"))
                    store.add_entities(gone.id, [("eve", "PERSON", "Eve")], T0)
                    raise _Boom
        assert store.get_entries([kept.id, gone.id]).keys() == {kept.id}
        assert _graph_norms(store, Scope(user_id="u")) == {"dee"}

    def test_a_failed_transaction_writes_none_of_its_entities(self, store: Store) -> None:
        with pytest.raises(_Boom):
            with store.transaction():
                entry, _ = store.insert_entry(row("Fay was here", user_id="u"))
                store.add_entities(entry.id, [("fay", "PERSON", "Fay")], T0)
                raise _Boom
        assert store.count_entries(EntryFilter()) == 0
        assert store.entity_graph(EntryFilter())["nodes"] == []

    def test_deleting_an_entry_whose_entities_wait_for_the_commit(self, store: Store) -> None:
        with store.transaction():
            entry, _ = store.insert_entry(row("Gus left", user_id="u"))
            store.add_entities(entry.id, [("gus", "PERSON", "Gus")], T0)
            store.delete_entry(entry.id, Scope(user_id="u"))
        assert store.count_entries(EntryFilter()) == 0
        assert _graph_norms(store, Scope(user_id="u")) == set()

    def test_neighbours_of_several_turns_at_once(self, store: Store) -> None:
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

    def test_full_text_sees_another_writers_rows_and_drops_expired_ones(self, store: Store) -> None:
        scope = EntryFilter(scope=Scope(user_id="u"))
        a, _ = store.insert_entry(row("the red kite flew", user_id="u"))
        first = store.fts_search(["kite"], scope, 10)
        other = self.open_again(store)
        if other is None:
            pytest.skip("this store has no second handle on the same data (open_again)")
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

    def test_full_text_inside_a_transaction_sees_its_own_rows(self, store: Store) -> None:
        scope = EntryFilter(scope=Scope(user_id="u"))
        store.insert_entry(row("blue kite", user_id="u"))
        assert len(store.fts_search(["kite"], scope, 10)) == 1
        with pytest.raises(_Boom):
            with store.transaction():
                store.insert_entry(row("kite kite", user_id="u"))
                assert len(store.fts_search(["kite"], scope, 10)) == 2
                raise _Boom
        assert len(store.fts_search(["kite"], scope, 10)) == 1

    # -- outcomes, approval zones, proposals, the audit log's replay ------------------------------

    def _outcome(self, store: Store, outcome_id: str, entry_id: str, *, after: float, alpha: float,
                 beta: float) -> None:
        store.save_outcome(
            {"id": outcome_id, "session_id": "s1", "scope": Scope(user_id="u"), "outcome_type": "failure",
             "value": 0.0, "weight": 1.0, "actor": "bot", "trace_ids": ["t1"], "detail": {"note": "x"},
             "created_at": utcnow()},
            [{"entry_id": entry_id, "success": 0.0, "failure": 1.0, "confidence_before": 1.0,
              "confidence_after": after, "alpha": alpha, "beta": beta}])

    def test_outcomes_move_confidence_and_are_listed_with_their_effects(self, store: Store) -> None:
        a, _ = store.insert_entry(row("tea at noon", user_id="u"))
        assert store.confidence_counts([a.id, "missing"]) == {a.id: {"confidence": 1.0, "counts": None}}
        self._outcome(store, "out_1", a.id, after=0.8, alpha=4.0, beta=1.0)
        assert store.get_entry(a.id).confidence == 0.8
        assert store.confidence_counts([a.id])[a.id]["counts"] == (4.0, 1.0, 0.8)
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="u"), min_confidence=0.9))) == []
        assert ids(store.list_entries(EntryFilter(scope=Scope(user_id="u"), min_confidence=0.8))) == [a.id]
        [listed] = store.list_outcomes(Scope(user_id="u", session_id="s1"))
        assert (listed["id"], listed["outcome_type"], listed["trace_ids"], listed["detail"], listed["reverted_at"]) \
            == ("out_1", "failure", ["t1"], {"note": "x"}, None)
        assert [(e["entry_id"], e["failure"], e["confidence_after"]) for e in listed["effects"]] == [(a.id, 1.0, 0.8)]
        assert store.list_outcomes(Scope(session_id="other")) == []
        assert [e["outcome_id"] for e in store.outcome_effects([a.id])] == ["out_1"]
        stats = store.outcome_stats(Scope(user_id="u"))
        assert (stats["outcomes"], stats["by_type"], stats["confidence_buckets"][8]) == (1, {"failure": 1}, 1)
        assert [r["entry_id"] for r in stats["most_harmed"]] == [a.id] and stats["most_helped"] == []
        kinds = [r["kind"] for r in store.audit_rows(Scope(user_id="u"), kinds=["outcome"])]
        assert kinds == ["outcome"]

    def test_an_outcome_reverted_restores_confidence_and_stops_counting(self, store: Store) -> None:
        a, _ = store.insert_entry(row("tea at noon", user_id="u"))
        self._outcome(store, "out_1", a.id, after=0.8, alpha=4.0, beta=1.0)
        store.revert_outcome("out_1", utcnow(), [{"entry_id": a.id, "alpha": 4.0, "beta": 0.0, "confidence": 1.0}],
                             actor="dana")
        assert store.get_entry(a.id).confidence == 1.0
        assert store.list_outcomes(Scope(), outcome_id="out_1")[0]["reverted_at"] is not None
        assert store.list_outcomes(Scope(), include_reverted=False) == []
        assert store.outcome_stats(Scope())["reverted"] == 1
        store.delete_entry(a.id, Scope())
        assert store.outcome_effects([a.id]) == [] and store.confidence_counts([a.id]) == {}

    def test_zones_and_proposals_are_kept_and_audited(self, store: Store) -> None:
        zone = {"id": "zone_1", "scope": Scope(project_id="hb"), "key_prefix": None, "category": "policy",
                "actor": "dana", "created_at": T0}
        store.set_zone(zone)
        [kept] = store.zones()
        assert (kept["id"], kept["scope"], kept["category"], kept["created_at"]) == ("zone_1", Scope(project_id="hb"),
                                                                                    "policy", T0)
        proposal = {"id": "prop_1", "status": "pending", "op": "add", "zone_id": "zone_1",
                    "scope": Scope(project_id="hb"), "entry_id": None, "text": "Deploys run on Fridays",
                    "fields": {"category": "policy"}, "current_text": None, "proposer": "bot", "source": "mcp",
                    "reason": "seen in chat", "created_at": T0, "decided_at": None, "decided_by": None,
                    "decision_reason": None, "result_entry_id": None}
        store.save_proposal(proposal)
        assert store.get_proposal("prop_1")["text"] == "Deploys run on Fridays"
        assert [p["id"] for p in store.list_proposals(Scope(project_id="hb"), status="pending")] == ["prop_1"]
        store.save_proposal({**proposal, "status": "rejected", "decided_at": T0, "decided_by": "dana",
                             "decision_reason": "not true"}, kind="reject", actor="dana")
        got = store.get_proposal("prop_1")
        assert (got["status"], got["decided_by"], got["decision_reason"], got["fields"]) == (
            "rejected", "dana", "not true", {"category": "policy"})
        assert store.list_proposals(Scope(), status="pending") == []
        with pytest.raises(InvalidArgument):
            store.get_proposal("prop_missing")
        details = [r["detail"]["op"] for r in store.audit_rows(Scope(), kinds=["zone", "proposal"], limit=None)]
        assert details == ["reject", "propose", "protect"]
        assert store.delete_zone("zone_1", actor="dana") and not store.delete_zone("zone_1", actor="dana")
        assert store.zones() == []

    def test_the_audit_log_keeps_each_change_of_an_entry_for_replay(self, store: Store) -> None:
        a, _ = store.insert_entry(row("tea at noon", user_id="u", category="habit", tags=["t"],
                                      metadata={"k": 1}, trust=0.7))
        store.update_entry(a.id, Scope(), {"category": "routine"})
        log = store.audit_log(0)
        assert [r["kind"] for r in log] == ["write", "update"]
        assert log[0]["seq"] < log[1]["seq"]
        assert log[1]["state"]["category"] == "routine" and log[0]["state"]["category"] == "habit"
        assert [r["seq"] for r in store.audit_log(log[0]["seq"])] == [log[1]["seq"]]
        store.reset()
        store.replay_entry(log[0]["state"])
        store.replay_entry(log[1]["state"])
        got = store.get_entry(a.id)
        assert (got.l2_full, got.category, got.tags, got.metadata, got.trust, got.created_at) == (
            "tea at noon", "routine", ["t"], {"k": 1}, 0.7, a.created_at)
        assert store.replay_delete(a.id) and not store.replay_delete(a.id)
