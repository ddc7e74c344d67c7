"""Metadata filter operators, evaluated by the store in SQL, checked against a pure-Python reference.

The reference below is the contract of docs/kernel-api.md written as plainly as possible; the
property test runs random metadata and random filters through ``Kernel.list`` on a real file and
asks for the same ids.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbase_kernel import InvalidArgument, Kernel

_MISSING = object()


# -- the reference -------------------------------------------------------------------------------


def _resolve(meta: dict[str, Any], key: str) -> Any:
    if key in meta:
        return meta[key]
    if "." not in key:
        return _MISSING
    node: Any = meta
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _json_eq(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return type(a) is type(b) and _dumps(a) == _dumps(b)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return a == b  # numbers and booleans, as Python compares them


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_OPS = {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains", "exists", "startswith"}


def _op(v: Any, op: str, x: Any) -> bool:
    present = v is not _MISSING
    if op == "exists":
        return present == x
    if op == "ne":
        return not (present and _json_eq(v, x))
    if op == "nin":
        return not (present and any(_json_eq(v, y) for y in x))
    if not present:
        return False
    if op == "eq":
        return _json_eq(v, x)
    if op == "in":
        return any(_json_eq(v, y) for y in x)
    if op in ("gt", "gte", "lt", "lte"):
        if isinstance(x, str) and isinstance(v, str) or _number(x) and _number(v):
            return {"gt": v > x, "gte": v >= x, "lt": v < x, "lte": v <= x}[op]
        return False
    if op == "contains":
        return (isinstance(x, str) and isinstance(v, str) and x in v) or (
            isinstance(v, list) and any(_json_eq(e, x) for e in v))
    if op == "icontains":
        return isinstance(v, str) and x.lower() in v.lower()
    if op == "startswith":
        return isinstance(v, str) and v.startswith(x)
    raise AssertionError(op)


def reference(meta: dict[str, Any], flt: dict[str, Any]) -> bool:
    for key, value in flt.items():
        if key == "AND":
            ok = all(reference(meta, f) for f in value)
        elif key == "OR":
            ok = any(reference(meta, f) for f in value)
        elif key == "NOT":
            ok = not any(reference(meta, f) for f in (value if isinstance(value, list) else [value]))
        elif isinstance(value, dict) and value and set(value) <= _OPS:
            ok = all(_op(_resolve(meta, key), op, x) for op, x in value.items())
        else:
            ok = _op(_resolve(meta, key), "eq", value)
        if not ok:
            return False
    return True


# -- random data -------------------------------------------------------------------------------

KEYS = ["a", "b", "a.b", "c", 'q"k', "x\\y", "n"]
STRINGS = ["", "a", "ab", "Ab", "b", "é", "É", "1", "ß", "x y"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.5, -0.5]),
                    st.sampled_from(STRINGS))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)), max_leaves=6)
metadata = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4)
filter_keys = st.sampled_from(KEYS + ["a.b.c", "b.a"])
comparable = st.one_of(st.integers(-3, 3), st.sampled_from([1.0, 2.5, -0.5]), st.sampled_from(STRINGS))
operators = st.one_of(
    st.tuples(st.sampled_from(["eq", "ne", "contains"]), json_values),
    st.tuples(st.sampled_from(["in", "nin"]), st.lists(json_values, max_size=3)),
    st.tuples(st.sampled_from(["gt", "gte", "lt", "lte"]), comparable),
    st.tuples(st.sampled_from(["icontains", "startswith", "contains"]), st.sampled_from(STRINGS)),
    st.tuples(st.just("exists"), st.booleans()),
)
conditions = st.one_of(
    json_values.filter(lambda v: not (isinstance(v, dict) and v and set(v) & _OPS)),
    st.lists(operators, min_size=1, max_size=2).map(dict),
)
leaf_filters = st.dictionaries(filter_keys, conditions, min_size=1, max_size=2)
filters = st.recursive(leaf_filters, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda fs: {"AND": fs}),
    st.lists(inner, max_size=3).map(lambda fs: {"OR": fs}),
    st.one_of(inner, st.lists(inner, max_size=2)).map(lambda f: {"NOT": f}),
    st.tuples(leaf_filters, inner).map(lambda p: {**p[0], "OR": [p[1]]}),
), max_leaves=5)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    with Kernel(tmp_path_factory.mktemp("filters") / "m.db", embedder=None, ner=None) as k:
        yield k


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(metas=st.lists(metadata, min_size=1, max_size=6), flt=filters)
def test_sql_matches_the_reference(shared, metas, flt):
    user = uuid.uuid4().hex
    ids = [shared.add_memory(f"row {i}", user_id=user, metadata=m, dedup=False).id for i, m in enumerate(metas)]
    want = [i for i, m in zip(ids, metas) if reference(m, flt)]
    assert [e.id for e in shared.list(user_id=user, metadata=flt, limit=None)] == want
    assert shared.count(user_id=user, metadata=flt) == len(want)


# -- each operator, spelled out --------------------------------------------------------------------


@pytest.fixture
def people(kernel):
    rows = [
        {"name": "Ann", "age": 31, "tags": ["vip", "beta"], "addr": {"city": "Paris"}, "score": 2.5},
        {"name": "bob", "age": 17, "tags": ["beta"], "addr": {"city": "Berlin"}, "note": None},
        {"name": "Zoë", "age": "unknown", "addr.city": "Rome"},
        {},
    ]
    ids = [kernel.add_memory(f"person {i}", user_id="u", metadata=m).id for i, m in enumerate(rows)]
    return kernel, ids


@pytest.mark.parametrize(("flt", "want"), [
    ({"name": "Ann"}, [0]),
    ({"age": {"gte": 18}}, [0]),
    ({"age": {"lt": 18}}, [1]),
    ({"age": {"gt": "a"}}, [2]),  # strings compare with strings only
    ({"age": {"ne": 31}}, [1, 2, 3]),  # a missing key matches ne
    ({"name": {"in": ["Ann", "bob"]}}, [0, 1]),
    ({"name": {"nin": ["Ann"]}}, [1, 2, 3]),
    ({"tags": {"contains": "vip"}}, [0]),
    ({"name": {"contains": "o"}}, [1, 2]),
    ({"name": {"icontains": "ZO"}}, [2]),
    ({"name": {"icontains": "zoË"}}, [2]),  # Unicode case folding, not ASCII only
    ({"name": {"startswith": "A"}}, [0]),
    ({"note": {"exists": True}}, [1]),
    ({"note": None}, [1]),
    ({"note": {"exists": False}}, [0, 2, 3]),
    ({"addr.city": "Paris"}, [0]),
    ({"addr.city": "Rome"}, [2]),  # a top-level key spelled with a dot wins
    ({"addr": {"city": "Berlin"}}, [1]),  # a plain dict is JSON equality
    ({"tags": ["beta"]}, [1]),
    ({"OR": [{"name": "Ann"}, {"age": {"lt": 18}}]}, [0, 1]),
    ({"AND": [{"age": {"gt": 10}}, {"age": {"lt": 40}}]}, [0, 1]),
    ({"NOT": {"name": "Ann"}}, [1, 2, 3]),
    ({"NOT": [{"name": "Ann"}, {"name": "bob"}]}, [2, 3]),
    ({"age": {"gt": 10, "lt": 20}}, [1]),
    ({"score": {"gt": 2}}, [0]),
    ({"OR": []}, []),
    ({"AND": []}, [0, 1, 2, 3]),
])
def test_operators(people, flt, want):
    kernel, ids = people
    assert [e.id for e in kernel.list(user_id="u", metadata=flt)] == [ids[i] for i in want]
    assert kernel.count(user_id="u", metadata=flt) == len(want)
    assert sorted(h.id for h in kernel.find("person", user_id="u", metadata=flt, top_k=10)) == sorted(
        ids[i] for i in want)


def test_delete_all_takes_a_filter(people):
    kernel, ids = people
    assert kernel.delete_all(user_id="u", metadata={"age": {"lt": 18}}) == 1
    assert [e.id for e in kernel.list(user_id="u")] == [ids[0], ids[2], ids[3]]


@pytest.mark.parametrize(("flt", "message"), [
    ({"a": {"in": "x"}}, "'in' takes a list"),
    ({"a": {"in": {"x"}}}, "'in' takes a list"),
    ({"a": {"eq": {"x"}}}, "A set is not JSON"),
    ({"a": {"gt": [1]}}, "compares with a number or a string"),
    ({"a": {"gt": True}}, "compares with a number or a string"),
    ({"a": {"exists": "yes"}}, "'exists' takes True or False"),
    ({"a": {"icontains": 3}}, "'icontains' takes a string"),
    ({"a": {"eq": 1, "colour": "red"}}, "mixes operators"),
    ({"a": {"$in": [1]}}, "without '\\$'"),
    ({"OR": {"a": 1}}, "OR takes a list of filters"),
    ({"OR": [1]}, "each filter in OR must be a dict"),
    ({"a": float("nan")}, "not JSON"),
    ({"a": 10**30}, "too large"),
    ({"a": b"x"}, "Bytes are not JSON"),
    ({"a": object()}, "not a JSON value"),
    ({1: "x"}, "keys must be strings"),
])
def test_bad_filters_say_what_to_pass(people, flt, message):
    kernel, _ = people
    for call in (lambda: kernel.list(user_id="u", metadata=flt), lambda: kernel.count(user_id="u", metadata=flt),
                 lambda: kernel.find("person", user_id="u", metadata=flt),
                 lambda: kernel.delete_all(user_id="u", metadata=flt)):
        with pytest.raises(InvalidArgument, match=message):
            call()
    assert kernel.count(user_id="u") == 4


def test_nesting_deeper_than_32_is_refused(people):
    kernel, _ = people
    flt: dict[str, Any] = {"a": 1}
    for _ in range(40):
        flt = {"NOT": flt}
    with pytest.raises(InvalidArgument, match="deeper than 32"):
        kernel.list(user_id="u", metadata=flt)


def test_find_caps_top_k_and_list_pages_past_it(kernel):
    kernel.add_memories([{"text": f"note number {i}", "user_id": "u", "metadata": {"i": i}, "dedup": False}
                         for i in range(kernel.max_top_k + 5)])
    assert len(kernel.find("note", user_id="u", top_k=kernel.max_top_k + 5)) <= kernel.max_top_k
    pages = [kernel.list(user_id="u", metadata={"i": {"gte": 0}}, limit=400, offset=o) for o in range(0, 1200, 400)]
    assert sum(len(p) for p in pages) == kernel.max_top_k + 5
    assert len({e.id for p in pages for e in p}) == kernel.max_top_k + 5
