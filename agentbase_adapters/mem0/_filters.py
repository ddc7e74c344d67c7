"""Mem0's filter language -> the kernel's metadata filter (evaluated by the store, in SQL).

Mem0 (with its default Qdrant store) filters a memory's payload with ``eq ne gt gte lt lte in
nin contains icontains``, a ``"*"`` wildcard, list shorthand for ``in`` and AND / OR / NOT. The
kernel's operators (docs/kernel-api.md) differ in three ways that the translation makes up for:

* Qdrant keeps ``True`` and ``1`` apart, the kernel's equality does not; a number is matched as
  the range ``gte v, lte v`` (a bool never matches a range) and a bool as "equal and not that number";
* ``ne`` / ``nin`` never match a missing key or a null in Mem0; here they also need the key;
* ``contains`` is a substring test on strings only (``startswith: ""`` requires a string).

A ``"*"`` condition is no condition, and a sub-filter left empty by it is dropped from its
AND / OR / NOT list, as Mem0's Qdrant filter builder does.

Mem0's payload also holds keys that are entry fields here, which the kernel's metadata filter does
not reach (docs/compat/mem0.md): ``actor_id`` is kept in the metadata of the memories this adapter
writes, so it filters like any key; a plain ``role`` and ``created_at`` ranges become the kernel's
``role=`` / ``since=`` / ``until=``; a filter on the other fields raises ``InvalidArgument``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta, timezone
from typing import Any

from agentbase_kernel import InvalidArgument

__all__ = ["check_filters", "field_arguments", "to_kernel_filter"]

_RANGE_OPS = frozenset({"gt", "gte", "lt", "lte"})
_OPERATORS = frozenset({"eq", "ne", "in", "nin", "contains", "icontains"}) | _RANGE_OPS
_LOGICAL = ("AND", "OR", "NOT")
_FIELDS = frozenset({"user_id", "agent_id", "run_id", "role", "attributed_to", "expiration_date", "created_at",
                     "updated_at", "data", "hash"})

Filter = dict[str, Any]


def check_filters(filters: Mapping[str, Any]) -> None:
    """Raise ``InvalidArgument`` for a filter shape Mem0 refuses."""
    for key, value in filters.items():
        if key in _LOGICAL:
            if not isinstance(value, list) or not value:
                raise InvalidArgument(f"{key} needs a non-empty list of filter dicts, got {value!r}")
            for item in value:
                if not isinstance(item, Mapping):
                    raise InvalidArgument(f"{key} items must be filter dicts, got {item!r}")
                check_filters(item)
        elif isinstance(value, Mapping):
            ops = set(value)
            unknown = ops - _OPERATORS
            if unknown or not ops:
                raise InvalidArgument(
                    f"Unsupported metadata filter operator(s) {sorted(unknown)} for {key!r} - use one of {sorted(_OPERATORS)}"
                )
            if ops & _RANGE_OPS and ops - _RANGE_OPS:
                raise InvalidArgument(
                    f"Cannot mix range operators {sorted(ops & _RANGE_OPS)} with {sorted(ops - _RANGE_OPS)} "
                    f"for {key!r} - combine them with AND"
                )
            for op in ("in", "nin"):
                if op in value and not isinstance(value[op], (list, tuple, set)):
                    raise InvalidArgument(f"{key!r}: {op!r} needs a list, got {value[op]!r}")


def field_arguments(filters: dict[str, Any]) -> dict[str, Any]:
    """Take the conditions on entry fields out of ``filters``: the kernel keywords that apply them.

    Raises:
        InvalidArgument: A condition on a field that only a plain ``role`` or a ``created_at``
            range can express here.
    """
    arguments: dict[str, Any] = {}
    role = filters.get("role")
    if isinstance(role, str) and role != "*":
        arguments["role"] = filters.pop("role")
    created = filters.get("created_at")
    if isinstance(created, Mapping) and created and set(created) <= _RANGE_OPS:
        for op, operand in filters.pop("created_at").items():
            when = _instant(operand)
            if op in ("gt", "gte"):
                arguments["since"] = when + timedelta(microseconds=1) if op == "gt" else when
            else:
                arguments["until"] = when - timedelta(microseconds=1) if op == "lt" else when
    _refuse_fields(filters)
    return arguments


def _refuse_fields(filters: Mapping[str, Any]) -> None:
    for key, value in filters.items():
        if key in _LOGICAL:
            for item in value:
                _refuse_fields(item)
        elif key in _FIELDS and value != "*":
            raise InvalidArgument(
                f"agentbase's Mem0 adapter cannot filter on {key!r} this way - it is an entry field, not metadata; "
                "use a plain role='...', a created_at range ({'gte': ..., 'lte': ...}) or custom metadata keys"
            )


def _instant(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidArgument(f"created_at filter {value!r} is not an ISO 8601 date-time") from None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, datetime.min.time(), tzinfo=timezone.utc)
    raise InvalidArgument(f"created_at filter needs an ISO date-time, got {value!r}")


def to_kernel_filter(filters: Mapping[str, Any]) -> Filter:
    """The kernel metadata filter that selects what Mem0's ``filters`` select (``{}``: everything).

    ``filters`` has been through ``check_filters``.
    """
    parts: list[Filter] = []
    for key, cond in filters.items():
        if key in _LOGICAL:
            subs = [sub for sub in (to_kernel_filter(item) for item in cond) if sub]
            if subs:
                parts.append({key: subs})
        elif isinstance(cond, Mapping):
            parts.extend(_condition(key, op, operand) for op, operand in cond.items())
        elif cond != "*":
            parts.append(_one_of(key, cond) if isinstance(cond, list) else _equal(key, cond))
    if len(parts) == 1:
        return parts[0]
    return {"AND": parts} if parts else {}


def _condition(key: str, op: str, operand: Any) -> Filter:
    if op == "eq":
        return _equal(key, operand)
    if op == "ne":
        return _present(key, {"NOT": [_equal(key, operand)]})
    if op == "in":
        return _one_of(key, list(operand))
    if op == "nin":
        return _present(key, {"NOT": [_one_of(key, list(operand))]})
    if op == "contains":
        if not isinstance(operand, str):
            return _nothing(key)
        return {key: {"contains": operand, "startswith": ""}}
    if op == "icontains":
        return {key: {"icontains": operand}} if isinstance(operand, str) else _nothing(key)
    # gt gte lt lte: numbers compare as numbers, ISO dates as text
    if isinstance(operand, date):
        operand = operand.isoformat()
    if isinstance(operand, bool) or not isinstance(operand, (int, float, str)):
        return _nothing(key)
    return {key: {op: operand}}


def _equal(key: str, value: Any) -> Filter:
    """Equality that keeps bools and numbers apart; ``None`` matches a missing key too."""
    if value is None:
        return {"OR": [{key: None}, {key: {"exists": False}}]}
    if isinstance(value, bool):
        return {key: value, "NOT": [{key: {"gte": int(value), "lte": int(value)}}]}
    if isinstance(value, (int, float)):
        return {key: {"gte": value, "lte": value}}
    return {key: value}


def _one_of(key: str, values: list[Any]) -> Filter:
    if not values:
        return _nothing(key)
    return {"OR": [_equal(key, value) for value in values]}


def _present(key: str, condition: Filter) -> Filter:
    """``condition``, on a key that is there and not null (Mem0's ``ne`` / ``nin`` skip those)."""
    return {key: {"exists": True}, "AND": [{"NOT": [{key: None}]}, condition]}


def _nothing(key: str) -> Filter:
    return {"OR": []}
