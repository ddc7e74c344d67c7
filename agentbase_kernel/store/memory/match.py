"""Which rows a filter lets through, in plain Python: the meaning the SQL backends compile.

``passes(row, flt, now)`` is ``EntryFilter`` (``store/base.py``) on one entries row;
``matches(metadata, tree)`` is the metadata filter language (``store/filters.py``,
docs/kernel-api.md) on one metadata object. A key missing from the metadata, a JSON ``null``
and each JSON type are told apart; booleans and numbers compare as in Python (``True == 1``),
strings only with strings.
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidArgument
from ..base import EntryFilter, iso
from ..filters import All, AnyOf, Cond, MetadataFilter, Not, dumps

__all__ = ["check_filter_value", "matches", "passes"]

_MISSING = object()
_SCOPE = ("user_id", "agent_id", "project_id", "session_id")


def check_filter_value(name: str, value: Any) -> None:
    """A filter compares with one stored value: a list or an object here is a caller's mistake."""
    if not isinstance(value, (str, int, float, bytes)):
        raise InvalidArgument(f"The {name} filter takes a string, got {type(value).__name__}: {value!r:.80}")


def prepare(flt: EntryFilter) -> MetadataFilter | None:
    """Check the filter's plain values and parse its metadata part, before any row is read."""
    equal = {col: getattr(flt.scope, col) for col in _SCOPE}
    equal.update(context_type=flt.context_type, category=flt.category, role=flt.role)
    for col, value in equal.items():
        if value is not None:
            check_filter_value(col, value)
    return flt.metadata_tree


def passes(row: dict[str, Any], flt: EntryFilter, now: str, metadata: MetadataFilter | None) -> bool:
    """Whether the entries row is one ``flt`` reads (``metadata``: its parsed metadata part)."""
    for col in _SCOPE:
        wanted = getattr(flt.scope, col)
        if wanted is not None and row[col] != wanted:
            return False
    for col in ("context_type", "category", "role"):
        wanted = getattr(flt, col)
        if wanted is not None and row[col] != wanted:
            return False
    if flt.tags and not all(tag in row["tags"] for tag in flt.tags):
        return False
    if flt.as_of is not None:
        at = iso(flt.as_of)
        if (row["valid_from"] or row["created_at"]) > at or (row["invalid_at"] is not None and row["invalid_at"] <= at):
            return False
    elif not flt.include_invalid and row["invalid_at"] is not None:
        return False
    if not flt.include_expired and row["expires_at"] is not None and row["expires_at"] <= now:
        return False
    if flt.archived is not None and (row["archived_at"] is not None) != flt.archived:
        return False
    if flt.since is not None and row["created_at"] < iso(flt.since):
        return False
    if flt.until is not None and row["created_at"] > iso(flt.until):
        return False
    if flt.date_window is not None:
        start, end = (d.isoformat() for d in flt.date_window)
        if row["date_max"] is None or row["date_min"] is None or row["date_max"] < start or row["date_min"] > end:
            return False
    if metadata is not None and not matches(row["metadata"], metadata):
        return False
    if flt.min_confidence is not None and row["confidence"] < flt.min_confidence:
        return False
    if flt.min_trust is not None and row["trust"] < flt.min_trust:
        return False
    if flt.text_contains is not None and flt.text_contains not in row["l2_full"]:
        return False
    if flt.sources is not None and row["source"] not in flt.sources:
        return False
    if row["id"] in flt.exclude_ids:
        return False
    # a scope the reader may not see: every id it sets equal (an unset id on the row never is)
    return not any(all(row[col] == value for col, value in scope.as_dict().items()) for scope in flt.exclude_scopes)


def matches(metadata: dict[str, Any], tree: MetadataFilter) -> bool:
    if isinstance(tree, All):
        return all(matches(metadata, t) for t in tree.items)
    if isinstance(tree, AnyOf):
        return any(matches(metadata, t) for t in tree.items)
    if isinstance(tree, Not):
        return not any(matches(metadata, t) for t in tree.items)
    return _test(_value_at(metadata, tree.key), tree)


def _value_at(metadata: dict[str, Any], key: str) -> Any:
    """The value at ``key``: a top-level key spelled ``"a.b"`` first, else the nested path."""
    if key in metadata:
        return metadata[key]
    if "." not in key:
        return _MISSING
    node: Any = metadata
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    return "array" if isinstance(value, list) else "object"


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: scalars as Python compares them (numbers and booleans together, strings
    with strings), arrays and objects as their compact JSON text."""
    ka, kb = _kind(a), _kind(b)
    if ka in ("array", "object") or kb in ("array", "object"):
        return ka == kb and dumps(a) == dumps(b)
    if ka == "null" or kb == "null":
        return ka == kb
    if (ka == "text") != (kb == "text"):
        return False
    return bool(a == b)


def _test(value: Any, cond: Cond) -> bool:
    op, x = cond.op, cond.operand
    if op == "exists":
        return (value is not _MISSING) is bool(x)
    if value is _MISSING:
        return op == "nin"
    if op in ("in", "nin"):
        found = any(_equal(value, v) for v in x)
        return found if op == "in" else not found
    kind = _kind(value)
    if op in ("gt", "gte", "lt", "lte"):
        if kind != ("text" if isinstance(x, str) else "number"):
            return False
        return bool(value > x if op == "gt" else value >= x if op == "gte" else value < x if op == "lt" else value <= x)
    if op == "startswith":
        return kind == "text" and str(value).startswith(x)
    if op == "icontains":
        return kind == "text" and x.lower() in str(value).lower()
    # contains: a substring of a string, or an element of a list
    if isinstance(x, str) and kind == "text" and x in value:
        return True
    return kind == "array" and any(_equal(item, x) for item in value)
