"""The metadata filter language, parsed and checked once, for every backend to compile.

A filter is a mapping. Each key is a metadata key (``"a.b"`` reaches into nested objects; a
top-level key spelled ``"a.b"`` wins when present) or a logical key: ``"AND"`` / ``"OR"`` take a
list of filters, ``"NOT"`` a filter or a list of them (none may match). Each value is either a
plain JSON value (equality) or a mapping of operators, ANDed::

    {"source": "chat", "n": {"gte": 2, "lt": 10}, "OR": [{"tag": {"in": ["a", "b"]}}, {"pinned": True}]}

The full contract, with the semantics of each operator, is in ``docs/kernel-api.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import InvalidArgument

__all__ = ["MAX_FILTER_DEPTH", "OPERATORS", "All", "AnyOf", "CheckedFilter", "Cond", "MetadataFilter", "Not",
           "check_metadata_filter", "join_conditions", "parse_metadata_filter"]

MAX_FILTER_DEPTH = 32
OPERATORS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains",
                       "exists", "startswith"})
_LOGICAL = ("AND", "OR", "NOT")
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Cond:
    """One test of the value at ``key``. ``eq``/``ne`` arrive as ``in``/``nin`` of one value."""

    key: str
    op: str
    operand: Any


@dataclass(frozen=True)
class All:
    items: tuple[MetadataFilter, ...]


@dataclass(frozen=True)
class AnyOf:
    items: tuple[MetadataFilter, ...]


@dataclass(frozen=True)
class Not:
    """None of ``items`` matches."""

    items: tuple[MetadataFilter, ...]


MetadataFilter: TypeAlias = Cond | All | AnyOf | Not


def parse_metadata_filter(value: Any) -> MetadataFilter:
    """The checked tree of a filter mapping; ``InvalidArgument`` saying what to pass otherwise."""
    return _parse(value, 1, "metadata")


class CheckedFilter(dict[str, Any]):
    """A filter mapping that carries its checked tree, so that a filter checked where it comes in
    is compiled by the store without being parsed again (``EntryFilter.metadata_tree``).

    Usage::

        flt = check_metadata_filter({"source": "chat"})
        flt.tree  # Cond(key='source', op='in', operand=['chat'])
    """

    def __init__(self, mapping: Mapping[str, Any], tree: MetadataFilter) -> None:
        super().__init__(mapping)
        self.tree = tree


def check_metadata_filter(value: Any) -> CheckedFilter:
    """``value`` checked (``parse_metadata_filter``), as a mapping that keeps its tree."""
    return CheckedFilter(value, parse_metadata_filter(value))


def _parse(value: Any, depth: int, where: str) -> MetadataFilter:
    if depth > MAX_FILTER_DEPTH:
        raise InvalidArgument(f"The metadata filter nests deeper than {MAX_FILTER_DEPTH} levels - flatten it")
    if not isinstance(value, Mapping):
        raise InvalidArgument(f"{where} must be a dict such as {{'key': 'value'}} or {{'key': {{'gt': 1}}}}, "
                              f"got {type(value).__name__}")
    items: list[MetadataFilter] = []
    for key, sub in value.items():
        if not isinstance(key, str):
            raise InvalidArgument(f"Metadata filter keys must be strings, got {key!r:.80}")
        if key in ("AND", "OR"):
            if not isinstance(sub, (list, tuple)):
                raise InvalidArgument(f"{key} takes a list of filters, e.g. {{'{key}': [{{'a': 1}}, {{'b': 2}}]}}; "
                                      f"got {type(sub).__name__}")
            parts = tuple(_parse(s, depth + 1, f"each filter in {key}") for s in sub)
            items.append(All(parts) if key == "AND" else AnyOf(parts))
        elif key == "NOT":
            subs = sub if isinstance(sub, (list, tuple)) else [sub]
            items.append(Not(tuple(_parse(s, depth + 1, "NOT") for s in subs)))
        else:
            items.extend(_conditions(key, sub, depth + 1))
    return items[0] if len(items) == 1 else All(tuple(items))


def _conditions(key: str, value: Any, depth: int) -> list[MetadataFilter]:
    if isinstance(value, Mapping) and value:
        ops = [k for k in value if isinstance(k, str) and k in OPERATORS]
        dollar = [k for k in value if isinstance(k, str) and k[:1] == "$" and k[1:] in OPERATORS]
        if dollar:
            raise InvalidArgument(f"Operators are written without '$': {{'{key}': {{'{dollar[0][1:]}': ...}}}}")
        if ops and len(ops) == len(value):
            return [_condition(key, op, operand, depth + 1) for op, operand in value.items()]
        if ops:
            raise InvalidArgument(
                f"The filter on {key!r} mixes operators ({', '.join(ops)}) with other keys: use only operators "
                f"({', '.join(sorted(OPERATORS))}), or {{'eq': {{...}}}} to match a dict exactly")
    return [Cond(key, "in", [_json(value, depth, key)])]


def _condition(key: str, op: str, operand: Any, depth: int) -> Cond:
    if op in ("eq", "ne"):
        return Cond(key, "in" if op == "eq" else "nin", [_json(operand, depth, key)])
    if op in ("in", "nin"):
        if not isinstance(operand, (list, tuple)):
            raise InvalidArgument(f"'{op}' takes a list of values, e.g. {{'{key}': {{'{op}': ['a', 'b']}}}}; "
                                  f"got {type(operand).__name__}")
        return Cond(key, op, [_json(v, depth + 1, key) for v in operand])
    if op in ("gt", "gte", "lt", "lte"):
        if isinstance(operand, str) or (isinstance(operand, (int, float)) and not isinstance(operand, bool)):
            return Cond(key, op, _json(operand, depth, key))
        raise InvalidArgument(f"'{op}' compares with a number or a string, got {type(operand).__name__} "
                              f"on {key!r}")
    if op in ("icontains", "startswith"):
        if not isinstance(operand, str):
            raise InvalidArgument(f"'{op}' takes a string, got {type(operand).__name__} on {key!r}")
        return Cond(key, op, _json(operand, depth, key))
    if op == "exists":
        if not isinstance(operand, bool):
            raise InvalidArgument(f"'exists' takes True or False, got {operand!r:.80} on {key!r}")
        return Cond(key, op, operand)
    return Cond(key, op, _json(operand, depth, key))  # contains: a substring or a list element


def _json(value: Any, depth: int, key: str) -> Any:
    """``value`` as plain JSON data (tuples become lists), or ``InvalidArgument``."""
    if depth > MAX_FILTER_DEPTH:
        raise InvalidArgument(f"The metadata filter nests deeper than {MAX_FILTER_DEPTH} levels - flatten it")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgument(f"The filter on {key!r} has a string with lone surrogates, which is not valid "
                                  "Unicode - decode it with errors='replace' first") from None
        return value
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise InvalidArgument(f"The number {value} in the filter on {key!r} is too large for the database "
                                  "- pass it as a string")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument(f"The filter on {key!r} compares with {value}, which is not JSON - pass a finite number")
        return value
    if isinstance(value, (list, tuple)):
        return [_json(v, depth + 1, key) for v in value]
    if isinstance(value, Mapping):
        for k in value:
            if not isinstance(k, str):
                raise InvalidArgument(f"Object keys in the filter on {key!r} must be strings, got {k!r:.80}")
        return {k: _json(v, depth + 1, key) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        raise InvalidArgument(f"A set is not JSON (filter on {key!r}): pass a list, e.g. {{'in': [...]}}")
    if isinstance(value, (bytes, bytearray)):
        raise InvalidArgument(f"Bytes are not JSON (filter on {key!r}): decode them to a string")
    raise InvalidArgument(f"The filter on {key!r} compares with a {type(value).__name__}, which is not a JSON "
                          "value - pass a string, number, bool, None, list or dict")


def join_conditions(parts: list[tuple[str, list[Any]]], sep: str, empty: str) -> tuple[str, list[Any]]:
    """Compiled conditions ``(sql, args)`` joined by ``sep`` (``" AND "``, ``" OR "``); ``empty`` when none."""
    if not parts:
        return empty, []
    args: list[Any] = []
    for _, a in parts:
        args.extend(a)
    return "(" + sep.join(sql for sql, _ in parts) + ")", args


def dumps(value: Any) -> str:
    """Compact JSON, as the store writes metadata (so texts compare equal when the data does)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
