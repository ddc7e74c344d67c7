"""Mem0's filter language: ours (translated to the kernel's SQL filter) against mem0's own Qdrant store.

mem0's ``get_all`` hands ``filters`` to its vector store; with the default store that is
``mem0.vector_stores.qdrant.Qdrant._create_filter`` evaluated by local Qdrant. Ours is
``Mem0Adapter.get_all``, whose filters the store evaluates in SQL. Both sides see the
same payloads and the same generated filter and must select the same memories. ``contains`` /
``icontains`` are left out: Qdrant matches whole words there, we match substrings (compat doc).
"""

from __future__ import annotations

import uuid
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbase_adapters.mem0 import Mem0Adapter
from agentbase_kernel import AgentBase
from tests.conftest import HashEmbedder

KEYS = ["topic", "stars", "lang"]
VALUES = st.one_of(st.sampled_from(["food", "pets", "work", "en"]), st.integers(0, 5))
PAYLOADS: list[dict[str, Any]] = [
    {"topic": "food", "stars": 5, "lang": "en"},
    {"topic": "food", "stars": 3},
    {"topic": "pets", "stars": 1, "lang": "pt"},
    {"topic": "work"},
    {"stars": 0, "lang": "en"},
    {},
    {"topic": "pets", "stars": "5"},
    {"topic": 3, "lang": "en"},
]


# Qdrant refuses a list mixing strings and ints, so lists are homogeneous.
LISTS = st.one_of(st.lists(st.sampled_from(["food", "pets", "work", "en"]), min_size=1, max_size=3),
                  st.lists(st.integers(0, 5), min_size=1, max_size=3))


def _condition() -> st.SearchStrategy[Any]:
    scalar = VALUES
    ranges = st.dictionaries(st.sampled_from(["gt", "gte", "lt", "lte"]), st.integers(0, 5), min_size=1, max_size=2)
    single = st.one_of(
        st.builds(lambda v: {"eq": v}, scalar),
        st.builds(lambda v: {"ne": v}, scalar),
        st.builds(lambda v: {"in": v}, LISTS),
        st.builds(lambda v: {"nin": v}, LISTS),
    )
    return st.one_of(scalar, st.just("*"), LISTS, ranges, single)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(KEYS), _condition(), min_size=1, max_size=2)


def _filters() -> st.SearchStrategy[dict[str, Any]]:
    logical = st.sampled_from(["AND", "OR", "NOT"])
    nested = st.builds(lambda op, subs: {op: subs}, logical, st.lists(_leaf(), min_size=1, max_size=3))
    both = st.builds(lambda a, b: {**a, **b}, _leaf(), nested)
    return st.one_of(_leaf(), nested, both)


@pytest.fixture(scope="module")
def qdrant_store(mem0_offline):
    from mem0.vector_stores.qdrant import Qdrant
    from qdrant_client import QdrantClient

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = Qdrant(collection_name="filters", embedding_model_dims=2, client=QdrantClient(":memory:"))
    ids = [str(uuid.uuid4()) for _ in PAYLOADS]
    store.insert(vectors=[[1.0, 0.0]] * len(PAYLOADS), payloads=[dict(p) for p in PAYLOADS], ids=ids)
    return store, ids


@pytest.fixture(scope="module")
def ours(make_db_location):
    db = AgentBase(make_db_location("memory.db"), embedder=HashEmbedder(), ner="regex")
    memory = Mem0Adapter(db)
    index = {}
    for i, payload in enumerate(PAYLOADS):
        [row] = memory.add(f"memory number {i}", user_id="u", metadata=dict(payload) or None, infer=False)["results"]
        index[row["id"]] = i
    yield memory, index
    db.sync.close()


def _ours_selects(ours: Any, flt: dict[str, Any]) -> set[int]:
    memory, index = ours
    return {index[row["id"]] for row in memory.get_all(filters={"user_id": "u", **flt}, top_k=100)["results"]}


def _mem0_selects(store: Any, flt: dict[str, Any]) -> set[int]:
    listed = store.list(filters=flt, top_k=100)
    rows = listed[0] if listed and isinstance(listed[0], list) else listed
    return {PAYLOADS.index({k: v for k, v in row.payload.items()}) for row in rows}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flt=_filters())
def test_our_filter_evaluation_matches_mem0s_qdrant_store(qdrant_store, ours, flt):
    store, _ = qdrant_store
    assert _ours_selects(ours, flt) == _mem0_selects(store, flt), flt
