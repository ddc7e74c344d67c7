"""The metadata filter language compiled to SQLite SQL (JSON1: ``->``, ``->>``, ``json_each``).

Each condition reads the JSON text ``j`` of the value at its key (SQL NULL when the key is
missing), so that a missing key, a JSON null and each JSON type are told apart; every condition
evaluates to 0 or 1, never NULL, so ``NOT`` is plain negation.
"""

from __future__ import annotations

from typing import Any

from ..filters import All, AnyOf, Cond, MetadataFilter, Not, dumps, join_conditions

__all__ = ["LOWER_FUNCTION", "compile_metadata_filter", "sql_lower"]

# registered on every connection (store/connection.py): Unicode case folding, which SQLite's
# lower() does only for ASCII
LOWER_FUNCTION = "agentbase_lower"

_SCALAR = "('integer','real','true','false','text')"


def sql_lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def compile_metadata_filter(flt: MetadataFilter, column: str) -> tuple[str, list[Any]]:
    """``(sql, args)``: a 0/1 expression over the JSON text in ``column``."""
    if isinstance(flt, All):
        parts = [compile_metadata_filter(f, column) for f in flt.items]
        return join_conditions(parts, " AND ", "1")
    if isinstance(flt, AnyOf):
        parts = [compile_metadata_filter(f, column) for f in flt.items]
        return join_conditions(parts, " OR ", "0")
    if isinstance(flt, Not):
        sql, args = compile_metadata_filter(AnyOf(flt.items), column)
        return f"(NOT {sql})", args
    if "." not in flt.key and _plain(flt.key):
        fast = _fast_condition(flt, column, f'$."{flt.key}"')
        if fast is not None:
            return fast
    node_sql, node_args = _node(column, flt.key)
    cond_sql, cond_args = _condition(flt)
    # placeholders in text order: the condition, then the node
    return f"(SELECT coalesce({cond_sql}, 0) FROM (SELECT {node_sql} AS j))", [*cond_args, *node_args]


def _plain(segment: str) -> bool:
    """Spellable inside a quoted JSON path label (SQLite has no escapes there)."""
    return not any(ch in '"\\' or ch < " " for ch in segment)


def _path(column: str, segments: list[str]) -> tuple[str, list[Any]]:
    """The JSON text at ``segments`` below ``column``, or NULL."""
    if all(_plain(s) for s in segments):
        return f"({column} -> ?)", ["$" + "".join(f'."{s}"' for s in segments)]
    sql: str = column
    args: list[Any] = []
    for segment in segments:  # one json_each step per key: any characters, at a little more cost
        sql = (f"(SELECT CASE WHEN type IN ('true','false','null') THEN type WHEN type IN ('array','object') "
               f"THEN value ELSE json_quote(value) END FROM json_each({sql}) WHERE key = ?)")
        args = [*args, segment]
    return sql, args


def _node(column: str, key: str) -> tuple[str, list[Any]]:
    literal = _path(column, [key])
    if "." not in key:
        return literal
    nested = _path(column, key.split("."))
    return f"coalesce({literal[0]}, {nested[0]})", [*literal[1], *nested[1]]


# an ``in`` list this long or shorter is bound value by value; a longer one goes as one JSON array
_INLINE_IN = 64


def _fast_condition(cond: Cond, column: str, path: str) -> tuple[str, list[Any]] | None:
    """The common conditions on a top-level key, read in place (about 4x cheaper than the general
    form); ``None`` for the rest. The cheap comparison comes first so SQLite can stop there."""
    value, kind = f"({column} ->> ?)", f"json_type({column}, ?)"
    op, x = cond.op, cond.operand
    if op in ("in", "nin"):
        if len(x) > _INLINE_IN or any(isinstance(v, (list, dict)) for v in x):
            return None
        scalars = [v for v in x if v is not None]
        parts: list[str] = []
        args: list[Any] = []
        if scalars:
            parts.append(f"({value} IN ({', '.join('?' * len(scalars))}) AND {kind} IN {_SCALAR})")
            args += [path, *scalars, path]
        if len(scalars) < len(x):
            parts.append(f"{kind} = 'null'")
            args.append(path)
        sql = f"coalesce({' OR '.join(parts) or '0'}, 0)"
        return (sql if op == "in" else f"(NOT {sql})"), args
    if op in ("gt", "gte", "lt", "lte"):
        sign = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
        types = "('text')" if isinstance(x, str) else "('integer','real')"
        return f"coalesce({value} {sign} ? AND {kind} IN {types}, 0)", [path, x, path]
    if op == "exists":
        return (f"({kind} IS NOT NULL)" if x else f"({kind} IS NULL)"), [path]
    if op == "startswith":
        return f"coalesce(instr({value}, ?) = 1 AND {kind} = 'text', 0)", [path, x, path]
    if op == "icontains":
        return f"coalesce(instr({LOWER_FUNCTION}({value}), ?) > 0 AND {kind} = 'text', 0)", [path, x.lower(), path]
    return None


def _equal(t: str, v: str, ot: str, ov: str) -> str:
    """Two JSON values given as (type, SQL value): JSON equality, numbers and booleans as in Python."""
    return (f"(({t} = 'null' AND {ot} = 'null') OR ({t} IN {_SCALAR} AND {ot} IN {_SCALAR} AND {v} = {ov}) "
            f"OR ({t} IN ('array','object') AND {ot} = {t} AND {v} = {ov}))")


_T, _V = "json_type(j)", "(j ->> '$')"


def _condition(cond: Cond) -> tuple[str, list[Any]]:
    op, x = cond.op, cond.operand
    if op in ("in", "nin"):
        sql = f"EXISTS (SELECT 1 FROM json_each(?) o WHERE {_equal(_T, _V, 'o.type', 'o.value')})"
        return (sql if op == "in" else f"NOT {sql}"), [dumps(x)]
    if op in ("gt", "gte", "lt", "lte"):
        sign = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
        types = "('text')" if isinstance(x, str) else "('integer','real')"
        return f"({_T} IN {types} AND {_V} {sign} ?)", [x]
    if op == "exists":
        return ("j IS NOT NULL" if x else "j IS NULL"), []
    if op == "startswith":
        return f"({_T} = 'text' AND instr({_V}, ?) = 1)", [x]
    if op == "icontains":
        return f"({_T} = 'text' AND instr({LOWER_FUNCTION}({_V}), ?) > 0)", [x.lower()]
    # contains: a substring of a string, or an element of a list
    member = (f"({_T} = 'array' AND EXISTS (SELECT 1 FROM json_each(j) e, json_each(?) o "
              f"WHERE {_equal('e.type', 'e.value', 'o.type', 'o.value')}))")
    if isinstance(x, str):
        return f"(({_T} = 'text' AND instr({_V}, ?) > 0) OR {member})", [x, dumps([x])]
    return member, [dumps([x])]
