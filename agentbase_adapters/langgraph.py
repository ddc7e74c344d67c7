"""LangGraph adapter: a ``BaseStore`` whose items are agentbase memory entries.

Class tree::

    langgraph.store.base.BaseStore
    └── AgentBaseStore      batch / abatch over GetOp, PutOp, SearchOp, ListNamespacesOp

Mapping (one item = one kernel entry):

* the entry text is the indexed text of the value (the string leaves of the fields named by
  ``index`` / ``index_fields``; the JSON of the value when nothing is indexed), so ``db.find``
  and every other adapter can retrieve it;
* the entry scope comes from the namespace through ``scope_rule``; the default rule puts
  ``("memories", "<user_id>", ...)`` and ``("users", "<user_id>", ...)`` into that user's scope
  and every other namespace into the global (empty) scope;
* the entry metadata holds the exact namespace, key, value, index choice and TTL under
  ``lg_*`` keys, so get / put / search / list_namespaces match exactly through the kernel's
  exact-match ``list(metadata=...)`` filter.

Install with ``pip install 'agentbase[langgraph]'``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from agentbase_adapters._require import require

require("langgraph.store.base", extra="langgraph")

from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    validate_op_namespace,
)

from agentbase_kernel import AgentBase  # noqa: E402
from agentbase_kernel.records import Entry  # noqa: E402

__all__ = ["AgentBaseStore", "ScopeRule", "user_namespace_rule"]

ScopeRule = Callable[[tuple[str, ...]], Mapping[str, str]]
"""namespace -> scope keywords (``user_id`` / ``agent_id`` / ``project_id`` / ``session_id``)."""

_USER_ROOTS = ("memories", "users")
_MARK = {"lg_store": "langgraph"}
_PAGE = 500


def user_namespace_rule(namespace: tuple[str, ...]) -> dict[str, str]:
    """The default ``scope_rule``: ``("memories" | "users", "<user_id>", ...)`` -> that user's scope."""
    if len(namespace) >= 2 and namespace[0] in _USER_ROOTS:
        return {"user_id": namespace[1]}
    return {}


class _Done:
    """An awaitable that is already finished: lets the sync path run the shared coroutine code."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:
        return self.value
        yield  # pragma: no cover  (makes this a generator that never suspends)


def _run_sync(coro: Any) -> Any:
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("AgentBaseStore.batch awaited real I/O on the sync path")  # a bug of ours, not the caller's


def _namespace_meta(namespace: Sequence[str]) -> dict[str, Any]:
    """Metadata keys that select every item whose namespace starts with ``namespace``."""
    return {**_MARK, **{f"lg_ns{i}": label for i, label in enumerate(namespace)}}


def _exact_meta(namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    return {**_MARK, "lg_namespace": json.dumps(list(namespace)), "lg_key": key}


def _string_leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _string_leaves(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _string_leaves(v)]
    return []


def _index_text(value: Mapping[str, Any], fields: Sequence[str]) -> str:
    """The text the kernel indexes for ``value``: "" when the fields hold no text."""
    texts: list[str] = []
    for path in fields:
        if path == "$":
            texts.extend(_string_leaves(value))
        else:
            texts.extend(t for t in get_text_at_path(dict(value), path) if t.strip())
    return "\n".join(texts)


def _matches(value: Any, condition: Any) -> bool:
    """LangGraph's filter semantics: exact / nested-dict / list equality and $eq $ne $gt $gte $lt $lte."""
    if isinstance(condition, Mapping):
        if any(str(k).startswith("$") for k in condition):
            return all(_operator(value, op, operand) for op, operand in condition.items())
        return isinstance(value, Mapping) and all(_matches(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(condition)
            and all(_matches(a, b) for a, b in zip(value, condition, strict=True))
        )
    return bool(value == condition)


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        a, b = float(value), float(operand)
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise ValueError(f"Unsupported operator: {op}")


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in pairs)


def _from_record(entry: Entry, score: float | None = None, *, search: bool = False) -> Item:
    """Kernel entry -> LangGraph ``Item`` (or ``SearchItem`` for search results)."""
    meta = entry.metadata
    namespace = tuple(json.loads(meta["lg_namespace"]))
    assert entry.created_at is not None and entry.updated_at is not None  # the kernel always sets both
    if search:
        return SearchItem(
            namespace=namespace,
            key=meta["lg_key"],
            value=dict(meta["lg_value"]),
            created_at=entry.created_at,
            updated_at=entry.updated_at,
            score=score,
        )
    return Item(
        value=dict(meta["lg_value"]),
        key=meta["lg_key"],
        namespace=namespace,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
    )


class AgentBaseStore(BaseStore):
    """A LangGraph long-term memory store on one agentbase file.

        store = AgentBaseStore(AgentBase("memory.db"))
        store.put(("memories", "alice"), "drink", {"text": "Alice drinks green tea"})
        store.search(("memories", "alice"), query="what does alice drink?")

    ``search(query=...)`` is answered by the kernel's hybrid retrieval (``db.find``); ``filter``,
    ``limit`` and ``offset`` follow ``InMemoryStore``. ``put(ttl=minutes)`` sets the entry's
    expiry; reads refresh it unless ``refresh_ttl=False`` (or ``ttl_config`` says otherwise).
    """

    supports_ttl = True

    def __init__(
        self,
        db: AgentBase,
        *,
        scope_rule: ScopeRule = user_namespace_rule,
        index_fields: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        self.db = db
        self.scope_rule = scope_rule
        self.index_fields = list(index_fields or ["$"])
        self.ttl_config = ttl

    # -- the two abstract methods -------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``: reads see the state before the batch, then puts apply (the last put of a key wins)."""

        def call(name: str, *args: Any, **kwargs: Any) -> Awaitable[Any]:
            return _Done(getattr(self.db.sync, name)(*args, **kwargs))

        return _run_sync(self._batch(list(ops), call))  # type: ignore[no-any-return]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        def call(name: str, *args: Any, **kwargs: Any) -> Awaitable[Any]:
            return getattr(self.db, name)(*args, **kwargs)  # type: ignore[no-any-return]

        return await self._batch(list(ops), call)

    # -- shared by both paths: every kernel call goes through ``call`` ------------------------

    async def _batch(self, ops: list[Op], call: Callable[..., Awaitable[Any]]) -> list[Result]:
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
                raise ValueError(f"Unknown operation type: {type(op)}")
            validate_op_namespace(op)
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op, call))
            elif isinstance(op, SearchOp):
                results.append(await self._search(op, call))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op, call))
            else:
                assert isinstance(op, PutOp)
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
        for op in puts.values():
            await self._put(op, call)
        return results

    def _scope(self, namespace: tuple[str, ...]) -> dict[str, str]:
        return dict(self.scope_rule(tuple(namespace)))

    async def _lookup(self, namespace: tuple[str, ...], key: str, call: Callable[..., Awaitable[Any]]) -> Entry | None:
        found = await call("list", metadata=_exact_meta(namespace, key), limit=1, **self._scope(namespace))
        return found[0] if found else None

    async def _all(self, metadata: dict[str, Any], call: Callable[..., Awaitable[Any]]) -> list[Entry]:
        entries: list[Entry] = []
        while True:
            page = await call("list", metadata=metadata, limit=_PAGE, offset=len(entries))
            entries.extend(page)
            if len(page) < _PAGE:
                return entries

    async def _refresh(self, entries: Iterable[Entry], refresh: bool, call: Callable[..., Awaitable[Any]]) -> None:
        if not refresh:
            return
        for entry in entries:
            minutes = entry.metadata.get("lg_ttl")
            if minutes is not None:
                await call("update", entry.id, expires_at=datetime.now(timezone.utc) + timedelta(minutes=minutes))

    async def _get(self, op: GetOp, call: Callable[..., Awaitable[Any]]) -> Item | None:
        entry = await self._lookup(tuple(op.namespace), op.key, call)
        if entry is None:
            return None
        await self._refresh([entry], op.refresh_ttl, call)
        return _from_record(entry)

    def _to_record(self, op: PutOp) -> dict[str, Any]:
        """PutOp -> keyword arguments shared by the kernel's ``add_memory`` and ``update``."""
        assert op.value is not None
        value = dict(op.value)
        fields = self.index_fields if op.index is None else ([] if op.index is False else list(op.index))
        text = _index_text(value, fields)
        indexed = bool(text.strip())
        if not indexed:
            text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
        expires_at = None
        if op.ttl is not None:
            expires_at = datetime.now(timezone.utc) + timedelta(minutes=op.ttl)
        metadata = {
            **_exact_meta(tuple(op.namespace), op.key),
            **_namespace_meta(op.namespace),
            "lg_depth": len(op.namespace),
            "lg_value": value,
            "lg_indexed": indexed,
            "lg_ttl": op.ttl,
        }
        return {"text": text, "metadata": metadata, "expires_at": expires_at}

    async def _put(self, op: PutOp, call: Callable[..., Awaitable[Any]]) -> None:
        namespace = tuple(op.namespace)
        existing = await self._lookup(namespace, op.key, call)
        if op.value is None:
            if existing is not None:
                await call("delete", existing.id)
            return
        record = self._to_record(op)
        if existing is not None:
            await call("update", existing.id, **record)
            return
        text = record.pop("text")
        # items are addressed by (namespace, key), not by text: two keys may hold equal values
        await call("add_memory", text, actor="langgraph", dedup=False, **record, **self._scope(namespace))

    async def _search(self, op: SearchOp, call: Callable[..., Awaitable[Any]]) -> list[SearchItem]:
        in_prefix = await self._all(_namespace_meta(op.namespace_prefix), call)
        candidates = [e for e in in_prefix if not op.filter or _matches(e.metadata["lg_value"], op.filter)]
        # InMemoryStore lists namespace by namespace, each in insertion order
        first_seen: dict[str, int] = {}
        for e in candidates:
            first_seen.setdefault(e.metadata["lg_namespace"], len(first_seen))
        candidates.sort(key=lambda e: first_seen[e.metadata["lg_namespace"]])
        scored: list[tuple[Entry, float | None]] = [(e, None) for e in candidates]
        if op.query and op.query.strip() and candidates:
            # find ranks every indexed item under the prefix; the value filter is applied to its hits
            hits = await call(
                "find", op.query, top_k=len(in_prefix),
                metadata={**_namespace_meta(op.namespace_prefix), "lg_indexed": True},
            )
            wanted = {e.id: e for e in candidates}
            scored = [(wanted.pop(h.id), float(h.score)) for h in hits if h.id in wanted]
            scored += [(e, None) for e in candidates if e.id in wanted]
        page = scored[op.offset : op.offset + op.limit]
        await self._refresh((e for e, _ in page), op.refresh_ttl, call)
        return [_from_record(e, score, search=True) for e, score in page]  # type: ignore[misc]

    async def _list_namespaces(self, op: ListNamespacesOp, call: Callable[..., Awaitable[Any]]) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        fixed: dict[str, Any] = dict(_MARK)
        for c in conditions:
            if c.match_type == "prefix":
                fixed.update({f"lg_ns{i}": label for i, label in enumerate(c.path) if label != "*"})
        namespaces = {tuple(json.loads(e.metadata["lg_namespace"])) for e in await self._all(fixed, call)}
        matching = [ns for ns in namespaces if all(_namespace_matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            matching = list({ns[: op.max_depth] for ns in matching})
        return sorted(matching)[op.offset : op.offset + op.limit]

    def __repr__(self) -> str:
        return f"AgentBaseStore({self.db!r})"
