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
  ``lg_*`` keys (and each namespace label as ``lg_ns<i>``), so a namespace prefix and a ``filter``
  on the value are kernel metadata filters, evaluated in SQL; ``search(query=...)`` asks the
  kernel's ``find`` for ``offset + limit`` hits.

The store is written once over the sync kernel (``db.sync``); ``abatch`` runs ``batch`` in a
worker thread (``agentbase_kernel.in_thread``).

Install with ``pip install 'agentbase-memory[langgraph]'``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
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

from agentbase_kernel import AgentBase, Entry, InvalidArgument, Kernel, WrongType, in_thread, speaker_prefix  # noqa: E402

__all__ = ["AgentBaseStore", "ScopeRule", "user_namespace_rule"]

ScopeRule = Callable[[tuple[str, ...]], Mapping[str, str]]
"""namespace -> scope keywords (``user_id`` / ``agent_id`` / ``project_id`` / ``session_id``)."""

_USER_ROOTS = ("memories", "users")
_MARK = {"lg_store": "langgraph"}
# value fields that say who said an item's text (searchable with it, as a session turn's speaker)
_SPEAKER_FIELDS = ("speaker", "name", "author")
# a value's "role" says which side of a conversation said it (LangChain's message types included):
# a first-person question ranks the user's own words up, as for session turns
_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system",
          "tool": "tool"}
_PAGE = 500
_MAX_TTL_MINUTES = 10**9  # about 1,900 years: past that, the expiry is past what a date holds


def user_namespace_rule(namespace: tuple[str, ...]) -> dict[str, str]:
    """The default ``scope_rule``: ``("memories" | "users", "<user_id>", ...)`` -> that user's scope."""
    if len(namespace) >= 2 and namespace[0] in _USER_ROOTS:
        return {"user_id": namespace[1]}
    return {}


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


_OPERATORS = {"$eq": "eq", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}


def _value_filter(flt: Mapping[str, Any], path: str = "lg_value") -> dict[str, Any]:
    """LangGraph's ``filter`` -> the kernel metadata filter on the stored value (``lg_value``).

    As ``InMemoryStore``: a plain value or a list is equality, a dict without ``$`` keys matches a
    nested dict field by field, ``$eq $ne $gt $gte $lt $lte`` compare. The kernel evaluates it in SQL.

    Raises:
        ValueError: An operator LangGraph does not have (``Unsupported operator: $in``).
    """
    out: dict[str, Any] = {}
    for key, condition in flt.items():
        where = f"{path}.{key}"
        if isinstance(condition, Mapping) and any(str(k).startswith("$") for k in condition):
            ops = {}
            for op, operand in condition.items():
                if op not in _OPERATORS:
                    raise InvalidArgument(f"Unsupported operator: {op}", param="filter")
                ops[_OPERATORS[op]] = list(operand) if isinstance(operand, tuple) else operand
            out[where] = ops
        elif isinstance(condition, Mapping):
            out.update(_value_filter(condition, where) if condition else {where: {"exists": True}})
        else:
            out[where] = list(condition) if isinstance(condition, tuple) else condition
    return out


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidArgument(f"Unsupported match type: {condition.match_type}", param="match_conditions")
    return all(p == "*" or n == p for n, p in pairs)


def _count(value: Any, name: str, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    # InMemoryStore fails on any bad count with a TypeError; WrongType is that and our ValueError
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise WrongType(f"{name} must be an int >= 0, got {value!r:.80}", param=name)


def _check_op(op: Any) -> None:
    """Refuse an op whose fields ``InMemoryStore`` would trip over (or silently misuse) before anything runs.

    The namespace labels are LangGraph's own check (``InvalidNamespaceError``, a ``ValueError``);
    a field of the wrong type is ``WrongType`` (a ``TypeError``, as ``InMemoryStore`` raises for a
    ``limit`` that is not an int).
    """
    if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
        raise WrongType(f"Unknown operation type: {type(op)}")  # a ValueError in InMemoryStore: WrongType is both
    for path in ([c.path for c in op.match_conditions or ()] if isinstance(op, ListNamespacesOp) else
                 [op.namespace_prefix] if isinstance(op, SearchOp) else [op.namespace]):
        if isinstance(path, (str, bytes)) or not isinstance(path, Iterable):
            raise WrongType(f"a namespace is a tuple of str, got {type(path).__name__}")
    if isinstance(op, (GetOp, PutOp)) and not isinstance(op.namespace, tuple):  # InMemoryStore: "unhashable type"
        raise WrongType(f"namespace must be a tuple of str, got {type(op.namespace).__name__}")
    validate_op_namespace(op)
    if isinstance(op, (GetOp, PutOp)) and not isinstance(op.key, str):
        raise WrongType(f"key must be a str, got {type(op.key).__name__}")
    if isinstance(op, PutOp):
        if op.value is not None and not isinstance(op.value, Mapping):
            raise WrongType(f"value must be a dict, got {type(op.value).__name__}")
        index = op.index
        if index is not None and index is not False and (
                isinstance(index, (str, bytes)) or not isinstance(index, Iterable)
                or not all(isinstance(path, str) for path in index)):
            raise WrongType(f"index must be False, None or a list of field paths (str), got {index!r:.80}")
        if op.ttl is not None and (isinstance(op.ttl, bool) or not isinstance(op.ttl, (int, float))
                                   or not math.isfinite(op.ttl) or not 0 < op.ttl < _MAX_TTL_MINUTES):
            raise InvalidArgument(f"ttl must be a positive number of minutes, got {op.ttl!r:.80}", param="ttl")
    elif isinstance(op, SearchOp):
        if op.filter is not None and not isinstance(op.filter, Mapping):
            raise WrongType(f"filter must be a dict, got {type(op.filter).__name__}")
        if op.query is not None and not isinstance(op.query, str):
            raise WrongType(f"query must be a str, got {type(op.query).__name__}")
        _count(op.limit, "limit")
        _count(op.offset, "offset")
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix"):
                raise InvalidArgument(f"Unsupported match type: {condition.match_type!r:.80}", param="match_conditions")
        _count(op.max_depth, "max_depth", optional=True)
        _count(op.limit, "limit")
        _count(op.offset, "offset")


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
        defer_embedding: bool | None = True,
    ) -> None:
        self.db = db.view(source="langgraph")  # entries record the path that wrote them (Entry.source)
        # put returns once the item is stored and FTS-searchable; its vector follows from a
        # background thread (flush() waits). None: the kernel's ingest.defer_embedding.
        self.defer_embedding = defer_embedding
        self.scope_rule = scope_rule
        self.index_fields = list(index_fields or ["$"])
        self.ttl_config = ttl

    @property
    def _kernel(self) -> Kernel:
        return self.db.sync

    # -- the two abstract methods -------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``: reads see the state before the batch, then puts apply (the last put of a key wins)."""
        if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
            raise WrongType(f"ops must be an iterable of GetOp, PutOp, SearchOp or ListNamespacesOp, got {type(ops).__name__}")
        ops = list(ops)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            _check_op(op)
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                assert isinstance(op, PutOp)
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
        for op in puts.values():
            self._put(op)
        return results

    abatch = in_thread(batch)

    def _scope(self, namespace: tuple[str, ...]) -> dict[str, Any]:
        return dict(self.scope_rule(tuple(namespace)))

    def _lookup(self, namespace: tuple[str, ...], key: str) -> Entry | None:
        found = self._kernel.list(metadata=_exact_meta(namespace, key), limit=1, **self._scope(namespace))
        return found[0] if found else None

    def _all(self, metadata: dict[str, Any]) -> list[Entry]:
        entries: list[Entry] = []
        while True:
            page = self._kernel.list(metadata=metadata, limit=_PAGE, offset=len(entries))
            entries.extend(page)
            if len(page) < _PAGE:
                return entries

    def _refresh(self, entries: Iterable[Entry], refresh: bool) -> None:
        if not refresh:
            return
        for entry in entries:
            minutes = entry.metadata.get("lg_ttl")
            if minutes is not None:
                self._kernel.update(entry.id, expires_at=datetime.now(timezone.utc) + timedelta(minutes=minutes))

    def _get(self, op: GetOp) -> Item | None:
        entry = self._lookup(tuple(op.namespace), op.key)
        if entry is None:
            return None
        self._refresh([entry], op.refresh_ttl)
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

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        existing = self._lookup(namespace, op.key)
        if op.value is None:
            if existing is not None:
                self._kernel.delete(existing.id)
            return
        record = self._to_record(op)
        order = self._namespace_order(namespace, existing)
        if order is not None:
            record["metadata"]["lg_ns_order"] = order
        if existing is not None:
            self._kernel.update(existing.id, **record)
            return
        text = record.pop("text")
        value = op.value or {}
        speaker = next((value[k] for k in _SPEAKER_FIELDS if isinstance(value.get(k), str) and value[k].strip()), None)
        # items are addressed by (namespace, key), not by text: two keys may hold equal values.
        # Items that say who said them (a speaker field, or a text that opens with "Name: ") are turns:
        # a namespace's turns are one stream, read as a conversation (kernel ``add_memory(stream=)``,
        # which reads the name from the text when there is no field); documents stay unrelated to
        # their neighbours. The vector is added in the background (``flush()`` / ``wait_embedded()``).
        turn = speaker is not None or speaker_prefix(text) is not None
        stream = "lg:" + json.dumps(list(namespace), ensure_ascii=False) if turn else None
        role = _ROLES.get(str(value.get("role", "user")).strip().casefold(), "user")
        # the speaker is the actor too, as on the other paths: "what did Caroline say" ranks her items up,
        # and a later statement supersedes an earlier one of the same speaker only
        self._kernel.add_memory(text, actor=speaker or (None if turn else "langgraph"), dedup=False, role=role,
                                **record, **self._scope(namespace), stream=stream, speaker=speaker,
                                defer_embedding=self.defer_embedding)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        selected = {**_namespace_meta(op.namespace_prefix), **_value_filter(op.filter or {})}
        page: list[tuple[Entry, float | None]]
        if op.query and op.query.strip():
            page = self._ranked(op.query, selected, op.offset + op.limit)[op.offset :]
        else:
            page = [(e, None) for e in self._listed(selected, op.offset, op.limit)]
        self._refresh((e for e, _ in page), op.refresh_ttl)
        return [_from_record(e, score, search=True) for e, score in page]  # type: ignore[misc]

    def _ranked(self, query: str, selected: dict[str, Any], wanted: int) -> list[tuple[Entry, float | None]]:
        """The first ``wanted`` items for ``query``: the kernel's hits, best first, then (as
        ``InMemoryStore`` puts items it cannot score) the other selected items, oldest first."""
        hits = self._kernel.find(query, top_k=min(wanted, self._kernel.max_top_k), metadata={**selected, "lg_indexed": True})
        scored: list[tuple[Entry, float | None]] = [(h.entry, float(h.score)) for h in hits]
        if len(scored) < wanted:
            found = [{"lg_namespace": e.metadata["lg_namespace"], "lg_key": e.metadata["lg_key"]} for e, _ in scored]
            rest = {**selected, "NOT": found} if found else selected
            scored += [(e, None) for e in self._kernel.list(metadata=rest, limit=wanted - len(scored))]
        return scored

    def _namespace_order(self, namespace: tuple[str, ...], existing: Entry | None) -> str | None:
        """Where ``namespace`` sorts among namespaces (``lg_ns_order``): the value its items already
        carry, or a new one after every namespace seen so far (``None`` for a namespace whose items
        predate it)."""
        same = [existing] if existing is not None else self._kernel.list(
            metadata={**_MARK, "lg_namespace": json.dumps(list(namespace))}, limit=1, include_expired=True)
        if same:
            value = same[0].metadata.get("lg_ns_order")
            return value if isinstance(value, str) else None
        return f"{time.time_ns():020d}|{json.dumps(list(namespace))}"

    def _listed(self, selected: dict[str, Any], offset: int, limit: int) -> list[Entry]:
        """Items ``offset .. offset + limit`` of ``InMemoryStore``'s order: namespace by namespace
        (in the order namespaces appeared), each in insertion order: a few SQL queries per namespace
        on the page, none of which loads the items of other namespaces."""
        kernel = self._kernel
        if kernel.count(metadata={**selected, "lg_ns_order": {"exists": False}}):
            return self._grouped_in_memory(selected)[offset : offset + limit]
        page: list[Entry] = []
        last: str | None = None
        while len(page) < limit:
            after = {"lg_ns_order": {"gt": last}} if last is not None else {}
            first = kernel.list(metadata={**selected, **after}, limit=1)
            if not first:
                break
            order = first[0].metadata["lg_ns_order"]
            # the oldest item left need not be in the first namespace left (its first items may be gone)
            while earlier := kernel.list(metadata={**selected, "AND": [after, {"lg_ns_order": {"lt": order}}]}, limit=1):
                order = earlier[0].metadata["lg_ns_order"]
            group = {**selected, "lg_ns_order": order}
            size = kernel.count(metadata=group)
            if offset >= size:
                offset -= size
            else:
                page += kernel.list(metadata=group, offset=offset, limit=limit - len(page))
                offset = 0
            last = order
        return page

    def _grouped_in_memory(self, selected: dict[str, Any]) -> list[Entry]:
        # items written before lg_ns_order existed: read them all and group here
        entries = self._all(selected)
        first_seen: dict[str, int] = {}
        for e in entries:
            first_seen.setdefault(e.metadata["lg_namespace"], len(first_seen))
        return sorted(entries, key=lambda e: first_seen[e.metadata["lg_namespace"]])

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        fixed: dict[str, Any] = dict(_MARK)
        for c in conditions:
            if c.match_type == "prefix":
                fixed.update({f"lg_ns{i}": label for i, label in enumerate(c.path) if label != "*"})
        namespaces = {tuple(json.loads(e.metadata["lg_namespace"])) for e in self._all(fixed)}
        matching = [ns for ns in namespaces if all(_namespace_matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            matching = list({ns[: op.max_depth] for ns in matching})
        return sorted(matching)[op.offset : op.offset + op.limit]

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every item put so far is vector-searchable too (it is FTS-searchable at once).

        Returns ``False`` if ``timeout`` (seconds) ran out first.
        """
        return self._kernel.wait_embedded(timeout)

    def __repr__(self) -> str:
        return f"AgentBaseStore({self.db!r})"
