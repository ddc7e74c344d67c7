"""JSON-shaped hostile values for tool arguments, built on the reliability suite's generators.

``tests/reliability/_inputs.py`` holds Python values (``object()``, ``bytes``, NaN) that cannot
travel in a JSON-RPC message; these are the ones an MCP client can actually send.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.reliability._inputs import ALL_STRINGS, hostile

FILTER_OPS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains", "exists", "startswith",
              "bogus", "$where", "", "AND", "OR", "NOT"]
JSON_WRONG: list[Any] = [None, 0, -1, 1.5, True, False, 10**30, -(10**30), 2**63, [], {}, ["list"], {"a": 1},
                         "", "x" * 30_000]

# The SDK's client sends str through pydantic's JSON encoder, which refuses lone surrogates; the raw
# stdio test sends those as \ud800 escapes instead.
_encodable = hostile.filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s))
scalar = st.one_of(_encodable, st.sampled_from(JSON_WRONG), st.integers(-(2**70), 2**70),
                   st.floats(allow_nan=False, allow_infinity=False))
json_value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(_encodable, inner, max_size=3)),
                          max_leaves=6)
filter_value = st.recursive(
    st.one_of(scalar, st.dictionaries(st.sampled_from(FILTER_OPS), json_value, min_size=1, max_size=2)),
    lambda inner: st.one_of(st.dictionaries(st.one_of(st.sampled_from(FILTER_OPS), _encodable), inner, max_size=3),
                            st.lists(inner, max_size=3)),
    max_leaves=8)


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments for a tool: its own property names (and some strangers) with hostile values."""
    names = list(schema.get("properties", {}))
    keys = st.one_of(st.sampled_from(names), _encodable, st.sampled_from(["user_id", "agent_id", "__proto__"])) \
        if names else st.one_of(_encodable, st.sampled_from(["user_id", "agent_id"]))
    values = st.one_of(json_value, st.sampled_from(ALL_STRINGS).filter(
        lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)))
    plain = st.dictionaries(keys, values, max_size=len(names) + 1)
    if "filters" in names:
        return st.one_of(plain, st.builds(lambda base, f: {**base, "filters": f}, plain, filter_value))
    return plain
