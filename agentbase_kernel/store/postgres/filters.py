"""The metadata filter language (``store/filters.py``) compiled to PostgreSQL SQL on ``jsonb``.

Each condition reads the value ``j`` at its key (SQL NULL when the key is missing, JSON ``null``
when it holds null), so a missing key, a null and each JSON type are told apart as on SQLite;
every condition is ``coalesce``d to a boolean, never NULL, so ``NOT`` is plain negation.
Numbers and booleans compare as in Python (``True == 1``), strings byte by byte (``COLLATE "C"``,
SQLite's order). A string equality on a top-level key also asks ``metadata @> {...}``, which the
GIN index on ``metadata`` answers. Keys and strings are compared escaped, as they are stored (``escape.py``
says why that keeps each operator exact for values holding NUL).
"""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from ..filters import All, AnyOf, Cond, MetadataFilter, Not, dumps, join_conditions
from .escape import escape_json, text_in

__all__ = ["compile_metadata_filter"]


def _jsonb(value: Any) -> Jsonb:
    return Jsonb(escape_json(value), dumps=dumps)


def compile_metadata_filter(flt: MetadataFilter, column: str) -> tuple[str, list[Any]]:
    """``(sql, args)``: a boolean expression over the ``jsonb`` in ``column``."""
    if isinstance(flt, All):
        return join_conditions([compile_metadata_filter(f, column) for f in flt.items], " AND ", "TRUE")
    if isinstance(flt, AnyOf):
        return join_conditions([compile_metadata_filter(f, column) for f in flt.items], " OR ", "FALSE")
    if isinstance(flt, Not):
        sql, args = compile_metadata_filter(AnyOf(flt.items), column)
        return f"(NOT {sql})", args
    node, node_args = _node(column, flt.key)
    sql, args = _condition(flt, node, node_args)
    if flt.op == "in" and len(flt.operand) == 1 and isinstance(flt.operand[0], str) and "." not in flt.key:
        # the GIN index narrows the rows; the exact test still decides
        return f"({column} @> ? AND {sql})", [_jsonb({flt.key: flt.operand[0]}), *args]
    return sql, args


def _node(column: str, key: str) -> tuple[str, list[Any]]:
    """The ``jsonb`` at ``key``: a top-level key spelled with dots wins, else the nested path."""
    if "." not in key:
        return f"({column} -> ?)", [text_in(key)]
    return f"coalesce({column} -> ?, {column} #> ?)", [text_in(key), [text_in(k) for k in key.split(".")]]


def _equal(node: str, node_args: list[Any], value: Any) -> tuple[str, list[Any]]:
    """``node`` equals the JSON ``value`` (numbers and booleans as in Python)."""
    if value is None:
        return f"jsonb_typeof({node}) = 'null'", list(node_args)
    if isinstance(value, (bool, int, float)):
        return f"agentbase_num({node}) = ?", [*node_args, int(value) if isinstance(value, bool) else value]
    if isinstance(value, str):
        return f"({node} = ?)", [*node_args, _jsonb(value)]
    return f"({node} = ?)", [*node_args, _jsonb(value)]


def _condition(cond: Cond, node: str, node_args: list[Any]) -> tuple[str, list[Any]]:
    op, x = cond.op, cond.operand
    text = f"({node} #>> '{{}}')"
    is_text = f"jsonb_typeof({node}) = 'string'"
    if op in ("in", "nin"):
        if not x:
            return ("FALSE" if op == "in" else "TRUE"), []
        parts = [_equal(node, node_args, v) for v in x]
        sql, args = join_conditions(parts, " OR ", "FALSE")
        sql = f"coalesce({sql}, FALSE)"
        return (sql if op == "in" else f"(NOT {sql})"), args
    if op in ("gt", "gte", "lt", "lte"):
        sign = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
        if isinstance(x, str):
            return (f"coalesce({is_text} AND {text} COLLATE \"C\" {sign} ? COLLATE \"C\", FALSE)",
                    [*node_args, *node_args, text_in(x)])
        return (f"coalesce(jsonb_typeof({node}) = 'number' AND ({text})::numeric {sign} ?, FALSE)",
                [*node_args, *node_args, x])
    if op == "exists":
        return (f"({node} IS NOT NULL)" if x else f"({node} IS NULL)"), list(node_args)
    if op == "startswith":
        return f"coalesce({is_text} AND starts_with({text}, ?), FALSE)", [*node_args, *node_args, text_in(x)]
    if op == "icontains":
        return (f"coalesce({is_text} AND strpos(lower({text}), ?) > 0, FALSE)",
                [*node_args, *node_args, text_in(x.lower())])
    # contains: a substring of a string, or an element of a list
    member = f"(jsonb_typeof({node}) = 'array' AND {node} @> ?)"
    if isinstance(x, str):
        return (f"coalesce(({is_text} AND strpos({text}, ?) > 0) OR {member}, FALSE)",
                [*node_args, *node_args, text_in(x), *node_args, *node_args, _jsonb([x])])
    return f"coalesce({member}, FALSE)", [*node_args, *node_args, _jsonb([x])]
