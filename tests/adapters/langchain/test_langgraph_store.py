"""AgentBaseStore: LangGraph's own store checks run on InMemoryStore and on ours, then ours alone.

The differential tests are behaviours ported from LangGraph's ``libs/checkpoint/tests/test_store.py``
(list_namespaces basics, wildcards, pagination, max_depth, namespace validation, filters, batching),
parametrized over ``[InMemoryStore(), AgentBaseStore(db)]`` so the reference proves each expectation.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from agentbase_adapters.langgraph import AgentBaseStore, user_namespace_rule
from agentbase_kernel import AgentBase


@pytest.fixture(params=["in_memory", "agentbase"])
def store(request: pytest.FixtureRequest, db: AgentBase) -> BaseStore:
    return InMemoryStore() if request.param == "in_memory" else AgentBaseStore(db)


def _fill(store: BaseStore, namespaces: list[tuple[str, ...]]) -> None:
    for i, ns in enumerate(namespaces):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})


# -- list_namespaces (ported from LangGraph's test_store.py) ----------------------------------------

BASIC = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param({"prefix": ("a", "b")}, [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")], id="prefix"),
        pytest.param({"suffix": ("f",)}, [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")], id="suffix"),
        pytest.param({"prefix": ("a",), "suffix": ("f",)}, [("a", "b", "f"), ("a", "c", "f")], id="prefix-and-suffix"),
        pytest.param({"prefix": ("a", "b"), "max_depth": 3}, [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")], id="max-depth"),
        pytest.param({"prefix": ("a", "b"), "limit": 2}, [("a", "b", "c"), ("a", "b", "d", "e")], id="limit"),
        pytest.param({"prefix": ("a", "b"), "offset": 2}, [("a", "b", "d", "i"), ("a", "b", "f")], id="offset"),
        pytest.param({"prefix": ("a", "*", "f")}, [("a", "b", "f"), ("a", "c", "f")], id="prefix-wildcard"),
        pytest.param({"suffix": ("*", "f")}, [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")], id="suffix-wildcard"),
        pytest.param({"prefix": ("nonexistent",)}, [], id="no-match"),
        pytest.param({"prefix": ("users", "123")}, [("users", "123")], id="exact"),
        pytest.param({"max_depth": 1}, [("a",), ("admin",), ("b",), ("users",)], id="depth-1"),
    ],
)
def test_list_namespaces(store: BaseStore, kwargs: dict[str, Any], expected: list[tuple[str, ...]]) -> None:
    _fill(store, BASIC)
    assert store.list_namespaces(**kwargs) == expected


def test_list_namespaces_with_wildcards(store: BaseStore) -> None:
    _fill(
        store,
        [("users", "123"), ("users", "456"), ("users", "789", "settings"), ("admin", "users", "789"),
         ("guests", "123"), ("guests", "456", "preferences")],
    )
    assert store.list_namespaces(prefix=("users", "*")) == [("users", "123"), ("users", "456"), ("users", "789", "settings")]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []


def test_list_namespaces_pagination(store: BaseStore) -> None:
    _fill(store, [("namespace", f"sub_{i:02d}") for i in range(20)])
    for offset in (0, 5, 15):
        expected = [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]
        assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == expected


def test_list_namespaces_max_depth_and_no_conditions(store: BaseStore) -> None:
    namespaces = [("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "b", "f"), ("a", "g"), ("h", "i", "j", "k")]
    _fill(store, namespaces)
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "g"), ("h", "i")]
    assert store.list_namespaces() == sorted(namespaces)


def test_list_namespaces_empty_store(store: BaseStore) -> None:
    assert store.list_namespaces() == []


def test_a_namespace_disappears_with_its_last_item(db: AgentBase) -> None:
    # InMemoryStore keeps listing an emptied namespace (its dict key stays); ours, like
    # LangGraph's SQL stores, derives namespaces from the items that exist.
    store = AgentBaseStore(db)
    store.put(("x", "y"), "k", {"v": 1})
    store.delete(("x", "y"), "k")
    assert store.list_namespaces() == []


async def test_invalid_namespaces_are_refused(store: BaseStore) -> None:
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            await store.aput(bad, "foo", doc)
    # "langgraph" is only reserved as the root label
    await store.aput(("foo", "langgraph", "foo"), "bar", doc)
    assert (await store.aget(("foo", "langgraph", "foo"), "bar")).value == doc  # type: ignore[union-attr]
    assert (await store.asearch(("foo", "langgraph", "foo")))[0].value == doc
    await store.adelete(("foo", "langgraph", "foo"), "bar")
    assert await store.aget(("foo", "langgraph", "foo"), "bar") is None
    # going past the public put API, as LangGraph's own tests do
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    assert store.get(("langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None


# -- get / put / delete / search ----------------------------------------------------------------------


def test_put_get_update_delete(store: BaseStore) -> None:
    ns = ("docs", "u1")
    assert store.get(ns, "missing") is None
    store.put(ns, "k", {"text": "first", "n": 1})
    item = store.get(ns, "k")
    assert isinstance(item, Item) and not isinstance(item, SearchItem)
    assert (item.namespace, item.key, item.value) == (ns, "k", {"text": "first", "n": 1})
    assert item.created_at.tzinfo is not None and item.created_at <= item.updated_at
    time.sleep(0.01)
    store.put(ns, "k", {"text": "second"})
    updated = store.get(ns, "k")
    assert updated is not None and updated.value == {"text": "second"}
    assert updated.updated_at > item.updated_at
    assert store.get(("docs",), "k") is None and store.get(("docs", "u1", "x"), "k") is None
    store.delete(ns, "k")
    assert store.get(ns, "k") is None
    store.delete(ns, "k")  # deleting a missing key is not an error


def test_same_value_under_two_keys_and_namespaces(store: BaseStore) -> None:
    value = {"text": "I like green tea"}
    store.put(("memories", "u1"), "a", value)
    store.put(("memories", "u1"), "b", value)
    store.put(("memories", "u1", "sub"), "a", value)
    store.put(("other",), "a", value)
    assert len(store.search(("memories", "u1"))) == 3
    store.put(("memories", "u1"), "b", {"text": "I like black tea"})
    store.put(("memories", "u1"), "b", value)
    store.delete(("memories", "u1"), "a")
    assert store.get(("memories", "u1"), "a") is None
    for ns, key in [(("memories", "u1"), "b"), (("memories", "u1", "sub"), "a"), (("other",), "a")]:
        assert store.get(ns, key).value == value  # type: ignore[union-attr]


def test_values_round_trip(store: BaseStore) -> None:
    value = {"text": "déjà vu 🌀", "n": 3, "f": 1.5, "ok": True, "none": None, "list": [1, "two", {"3": 3}], "nested": {"a": {"b": []}}}
    store.put(("t",), "k", value)
    assert store.get(("t",), "k").value == value  # type: ignore[union-attr]
    store.put(("t",), "empty", {})
    assert store.get(("t",), "empty").value == {}  # type: ignore[union-attr]


def test_search_namespace_prefix_limit_offset_and_order(store: BaseStore) -> None:
    for i in range(7):
        store.put(("docs", "a" if i % 2 else "b"), f"k{i}", {"i": i})
    store.put(("other",), "x", {"i": 99})
    everything = store.search(("docs",), limit=100)
    assert all(isinstance(r, SearchItem) and r.score is None for r in everything)
    assert [(r.namespace, r.key) for r in everything] == [
        (("docs", "b"), "k0"), (("docs", "b"), "k2"), (("docs", "b"), "k4"), (("docs", "b"), "k6"),
        (("docs", "a"), "k1"), (("docs", "a"), "k3"), (("docs", "a"), "k5"),
    ]
    assert [r.key for r in store.search(("docs",))] == [r.key for r in everything]
    assert [r.key for r in store.search(("docs",), limit=3, offset=2)] == ["k4", "k6", "k1"]
    assert [r.key for r in store.search(("docs", "a"))] == ["k1", "k3", "k5"]
    assert len(store.search(())) == 8


def test_search_pages_namespace_by_namespace_after_deletes(store: BaseStore) -> None:
    # namespace "a" keeps its place after its first item is gone and a later one is added
    store.put(("d", "a"), "a0", {"i": 0})
    store.put(("d", "b"), "b0", {"i": 1})
    store.put(("d", "a"), "a1", {"i": 2})
    store.put(("d", "c"), "c0", {"i": 3})
    store.delete(("d", "a"), "a0")
    store.put(("d", "a"), "a2", {"i": 4})
    store.put(("d", "b"), "b1", {"i": 5})
    everything = [r.key for r in store.search(("d",), limit=100)]
    assert everything == ["a1", "a2", "b0", "b1", "c0"]
    pages = [[r.key for r in store.search(("d",), limit=2, offset=o)] for o in range(0, 6, 2)]
    assert pages == [["a1", "a2"], ["b0", "b1"], ["c0"]]
    assert [r.key for r in store.search(("d",), limit=2, offset=1)] == ["a2", "b0"]
    assert [r.key for r in store.search(("d",), filter={"i": {"$gte": 3}})] == ["a2", "b1", "c0"]


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        pytest.param({"color": "red"}, ["doc1", "doc2"], id="exact"),
        pytest.param({"score": {"$gt": 3.2}}, ["doc1", "doc3", "doc4"], id="gt"),
        pytest.param({"score": {"$gte": 4.0}, "color": "green"}, ["doc3"], id="gte-and-exact"),
        pytest.param({"score": {"$lt": 3.5}}, ["doc2"], id="lt"),
        pytest.param({"score": {"$lte": 3.5}}, ["doc2", "doc4"], id="lte"),
        pytest.param({"color": {"$ne": "red"}}, ["doc3", "doc4"], id="ne"),
        pytest.param({"color": {"$eq": "blue"}}, ["doc4"], id="eq"),
        pytest.param({"meta": {"shape": "round"}}, ["doc1", "doc3"], id="nested"),
        pytest.param({"tags": ["fruit", "red"]}, ["doc1"], id="list"),
        pytest.param({"missing": "x"}, [], id="missing-field"),
    ],
)
def test_search_filters(store: BaseStore, flt: dict[str, Any], expected: list[str]) -> None:
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5, "meta": {"shape": "round"}, "tags": ["fruit", "red"]}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0, "meta": {"shape": "boxy"}}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0, "meta": {"shape": "round"}}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    assert [r.key for r in store.search(("test",), filter=flt)] == expected


def test_search_with_an_unknown_operator_raises(store: BaseStore) -> None:
    store.put(("test",), "k", {"n": 1})
    with pytest.raises(ValueError, match=r"Unsupported operator: \$in"):
        store.search(("test",), filter={"n": {"$in": [1]}})


def test_batch_reads_see_the_state_before_the_puts(store: BaseStore) -> None:
    store.put(("b",), "k", {"v": "old"})
    results = store.batch(
        [
            PutOp(("b",), "k", {"v": "new"}),
            GetOp(("b",), "k"),
            PutOp(("b",), "k2", {"v": "first"}),
            PutOp(("b",), "k2", {"v": "last"}),
            SearchOp(("b",)),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),)),
            PutOp(("b",), "gone", None),
        ]
    )
    assert results[0] is None and results[2] is None and results[3] is None and results[6] is None
    assert results[1].value == {"v": "old"}  # type: ignore[union-attr]
    assert [r.value for r in results[4]] == [{"v": "old"}]  # type: ignore[union-attr]
    assert results[5] == [("b",)]
    assert store.get(("b",), "k").value == {"v": "new"}  # type: ignore[union-attr]
    assert store.get(("b",), "k2").value == {"v": "last"}  # type: ignore[union-attr]


def test_batch_refuses_unknown_ops(store: BaseStore) -> None:
    with pytest.raises(ValueError, match="Unknown operation type"):
        store.batch(["not an op"])  # type: ignore[list-item]


async def test_async_api_matches_sync(store: BaseStore) -> None:
    await asyncio.gather(*(store.aput(("a", str(i % 2)), f"k{i}", {"i": i}) for i in range(6)))
    assert (await store.aget(("a", "0"), "k2")).value == {"i": 2}  # type: ignore[union-attr]
    assert sorted(r.key for r in await store.asearch(("a",), filter={"i": {"$gte": 3}})) == ["k3", "k4", "k5"]
    assert await store.alist_namespaces(prefix=("a",)) == [("a", "0"), ("a", "1")]
    await store.adelete(("a", "0"), "k0")
    assert await store.aget(("a", "0"), "k0") is None
    results = await store.abatch([GetOp(("a", "1"), "k1"), PutOp(("a", "1"), "k1", None), GetOp(("a", "1"), "k1")])
    assert results[0].value == {"i": 1} and results[2].value == {"i": 1}  # type: ignore[union-attr]
    assert store.get(("a", "1"), "k1") is None


@pytest.mark.parametrize("query", ["", None], ids=["empty", "none"])
def test_search_with_no_query_lists_everything(store: BaseStore, query: str | None) -> None:
    store.put(("test",), "doc1", {"text": "test document"})
    assert [r.key for r in store.search(("test",), query=query)] == ["doc1"]


# -- ours only: the query goes to the kernel's hybrid retrieval --------------------------------------


@pytest.fixture
def ours(db: AgentBase) -> AgentBaseStore:
    return AgentBaseStore(db)


def test_query_is_answered_by_hybrid_retrieval(ours: AgentBaseStore) -> None:
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        ours.put(("test",), key, value)
    results = ours.search(("test",), query="apple", filter={"color": "red"})
    assert [r.key for r in results] == ["doc1", "doc2"]
    assert isinstance(results[0].score, float)
    results = ours.search(("test",), query="car", filter={"color": "red"})
    assert [r.key for r in results] == ["doc2", "doc1"]
    results = ours.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert [r.key for r in results] == ["doc3"]
    top = ours.search(("test",), query="blue car", limit=1)
    assert [r.key for r in top] == ["doc4"]


def test_query_pagination_and_special_text(ours: AgentBaseStore) -> None:
    for i in range(5):
        ours.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = ours.search(("test",), query="test", limit=2)
    page2 = ours.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == len(page2) == 2 and not {r.key for r in page1} & {r.key for r in page2}
    assert len(ours.search(("test",), query="test", limit=10)) == 5
    for query in ["test " * 100, "test!@#$%^&*()", "   ", 'AND OR NOT "unbalanced *']:
        assert len(ours.search(("test",), query=query)) == 5


def test_index_choices(ours: AgentBaseStore, db: AgentBase) -> None:
    ns = ("memories", "u1")
    ours.put(ns, "plain", {"text": "zany zebra Xerxes", "kind": "note"})
    ours.put(ns, "fields", {"title": "Quarterly report", "body": "revenue grew", "id": 7}, index=["title"])
    ours.put(ns, "hidden", {"text": "zany zebra Xerxes hidden twin"}, index=False)
    by_key = {e.metadata["lg_key"]: e for e in db.sync.list(user_id="u1")}
    assert by_key["plain"].text == "zany zebra Xerxes\nnote"
    assert by_key["fields"].text == "Quarterly report"
    assert by_key["hidden"].metadata["lg_indexed"] is False
    results = ours.search(ns, query="zany zebra Xerxes")
    assert results[0].key == "plain" and results[0].score is not None
    assert results[-1].key == "hidden" and results[-1].score is None
    assert ours.search(ns, query="zany zebra Xerxes", limit=1)[0].key == "plain"


def test_items_written_before_namespace_order_still_list_grouped(ours: AgentBaseStore, db: AgentBase) -> None:
    for ns, key in [(("d", "a"), "a0"), (("d", "b"), "b0"), (("d", "a"), "a1")]:
        ours.put(ns, key, {"k": key})
    [old] = db.sync.list(metadata={"lg_key": "a0"})
    db.sync.update(old.id, metadata={k: v for k, v in old.metadata.items() if k != "lg_ns_order"})
    assert [r.key for r in ours.search(("d",))] == ["a0", "a1", "b0"]
    assert [r.key for r in ours.search(("d",), offset=1, limit=1)] == ["a1"]


def test_index_fields_option(db: AgentBase) -> None:
    store = AgentBaseStore(db, index_fields=["summary"])
    store.put(("docs",), "d", {"summary": "short summary", "body": "long body text"})
    assert [e.text for e in db.sync.list()] == ["short summary"]


def test_namespaces_map_onto_user_scopes(ours: AgentBaseStore, db: AgentBase) -> None:
    ours.put(("memories", "alice"), "drink", {"text": "Alice drinks rooibos tea every morning"})
    ours.put(("memories", "bob"), "drink", {"text": "Bob drinks espresso every morning"})
    ours.put(("shared", "tips"), "t1", {"text": "Tea tastes better with fresh water"})
    assert user_namespace_rule(("memories", "alice", "x")) == {"user_id": "alice"}
    assert user_namespace_rule(("shared", "tips")) == {}

    alice = db.sync.find("what does she drink in the morning", user_id="alice")
    assert any("rooibos" in h.content for h in alice)
    assert all(h.entry.user_id == "alice" for h in alice)
    assert not any("espresso" in h.content for h in alice)
    assert [e.user_id for e in db.sync.list(metadata={"lg_key": "t1"})] == [None]
    # and searching one user's namespace never returns the other's
    assert [r.value["text"] for r in ours.search(("memories", "alice"), query="espresso morning")] == [
        "Alice drinks rooibos tea every morning"
    ]


def test_items_survive_reopening_the_file(db: AgentBase, db_path: Any, hash_embedder: Any) -> None:
    AgentBaseStore(db).put(("memories", "u1"), "k", {"text": "kept on disk", "n": [1, 2]})
    before = AgentBaseStore(db).get(("memories", "u1"), "k")
    db.sync.close()
    with AgentBase(db_path, embedder=hash_embedder, ner="regex") as reopened:
        store = AgentBaseStore(reopened)
        assert store.get(("memories", "u1"), "k") == before
        assert store.list_namespaces() == [("memories", "u1")]


def test_custom_scope_rule(db: AgentBase) -> None:
    store = AgentBaseStore(db, scope_rule=lambda ns: {"user_id": ns[0], "agent_id": ns[1]} if len(ns) > 1 else {})
    store.put(("carol", "planner"), "k", {"text": "Carol plans trips in spring"})
    (entry,) = db.sync.list(user_id="carol", agent_id="planner")
    assert entry.text == "Carol plans trips in spring"


def test_does_not_touch_entries_written_by_other_adapters(ours: AgentBaseStore, db: AgentBase) -> None:
    foreign = db.sync.add_memory("Alice drinks rooibos tea", user_id="alice").entry
    ours.put(("memories", "alice"), "drink", {"text": "Alice drinks rooibos tea"})
    assert ours.get(("memories", "alice"), "drink").value == {"text": "Alice drinks rooibos tea"}  # type: ignore[union-attr]
    assert db.sync.get(foreign.id).metadata == foreign.metadata
    assert [r.key for r in ours.search(("memories",))] == ["drink"]
    ours.delete(("memories", "alice"), "drink")
    assert db.sync.get(foreign.id).text == "Alice drinks rooibos tea"
    assert ours.search(("memories",)) == []


def test_ttl_expires_and_refreshes(db: AgentBase) -> None:
    store = AgentBaseStore(db, ttl={"refresh_on_read": True})
    assert store.supports_ttl
    store.put(("t",), "short", {"v": 1}, ttl=0.002)  # minutes: 120 ms
    store.put(("t",), "long", {"v": 2}, ttl=60)
    store.put(("t",), "forever", {"v": 3})
    (long_entry,) = db.sync.list(metadata={"lg_key": "long"})
    assert long_entry.expires_at is not None
    assert 59 * 60 < (long_entry.expires_at - datetime.now(timezone.utc)).total_seconds() <= 60 * 60
    time.sleep(0.2)
    assert store.get(("t",), "short") is None
    assert sorted(r.key for r in store.search(("t",))) == ["forever", "long"]
    assert store.list_namespaces() == [("t",)]

    before = db.sync.get(long_entry.id).expires_at
    time.sleep(0.01)
    store.get(("t",), "long", refresh_ttl=False)
    assert db.sync.get(long_entry.id).expires_at == before
    store.get(("t",), "long")
    assert db.sync.get(long_entry.id).expires_at > before  # type: ignore[operator]


def test_ttl_config_default_and_no_refresh_on_read(db: AgentBase) -> None:
    store = AgentBaseStore(db, ttl={"default_ttl": 30, "refresh_on_read": False})
    store.put(("t",), "k", {"v": 1})
    store.put(("t",), "never", {"v": 2}, ttl=None)
    (entry,) = db.sync.list(metadata={"lg_key": "k"})
    assert entry.expires_at is not None and entry.metadata["lg_ttl"] == 30
    assert db.sync.list(metadata={"lg_key": "never"})[0].expires_at is None
    time.sleep(0.01)
    store.get(("t",), "k")
    store.search(("t",))
    assert db.sync.get(entry.id).expires_at == entry.expires_at
    store.get(("t",), "k", refresh_ttl=True)
    assert db.sync.get(entry.id).expires_at > entry.expires_at  # type: ignore[operator]


async def test_ttl_on_the_async_path(db: AgentBase) -> None:
    store = AgentBaseStore(db)
    await store.aput(("t",), "short", {"v": 1}, ttl=0.002)
    assert (await store.aget(("t",), "short")) is not None
    await asyncio.sleep(0.2)
    assert (await store.aget(("t",), "short")) is None


def test_in_memory_store_refuses_ttl_ours_supports_it(db: AgentBase) -> None:
    with pytest.raises(NotImplementedError):
        InMemoryStore().put(("t",), "k", {"v": 1}, ttl=5)
    AgentBaseStore(db).put(("t",), "k", {"v": 1}, ttl=5)


# -- inside a compiled LangGraph graph ------------------------------------------------------------------


class State(TypedDict):
    user: str
    fact: str
    recalled: list[str]


def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
    store.put(("memories", state["user"]), f"fact-{len(state['fact'])}", {"text": state["fact"]})
    return {}


def recall(state: State, runtime: Runtime) -> dict[str, Any]:
    assert runtime.store is not None
    items = runtime.store.search(("memories", state["user"]), query=state["fact"])
    return {"recalled": [i.value["text"] for i in items]}


async def arecall(state: State, runtime: Runtime) -> dict[str, Any]:
    assert runtime.store is not None
    items = await runtime.store.asearch(("memories", state["user"]), query=state["fact"])
    return {"recalled": [i.value["text"] for i in items]}


def _graph(recall_node: Any, store: BaseStore) -> Any:
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall_node)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store)


@pytest.mark.parametrize("backend", ["in_memory", "agentbase"])
async def test_inside_a_compiled_graph(db: AgentBase, backend: str) -> None:
    store: BaseStore = InMemoryStore() if backend == "in_memory" else AgentBaseStore(db)
    out = _graph(recall, store).invoke({"user": "dana", "fact": "Dana keeps bees", "recalled": []})
    assert out["recalled"] == ["Dana keeps bees"]
    out = await _graph(arecall, store).ainvoke({"user": "dana", "fact": "Dana grows lavender for the bees", "recalled": []})
    assert sorted(out["recalled"]) == ["Dana grows lavender for the bees", "Dana keeps bees"]
    assert [r.value["text"] for r in store.search(("memories", "eve"))] == []
    if backend == "agentbase":
        assert {e.text for e in db.sync.list(user_id="dana")} == {"Dana keeps bees", "Dana grows lavender for the bees"}
