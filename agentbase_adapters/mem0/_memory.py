"""Mem0's ``Memory`` / ``AsyncMemory`` API over an ``AgentBase``: written once over the sync kernel.

Class tree::

    Mem0Adapter            Mem0's sync API over an existing AgentBase (``db.sync``)
    └── Memory             owns its AgentBase, built from Mem0's config dict (the one-line swap)
    AsyncMem0Adapter       the async twin: each call runs Mem0Adapter's in a worker thread
    └── AsyncMemory
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from agentbase_kernel import AgentBase, FindResult, InvalidArgument, Kernel, NotFoundError, in_thread

from ._args import (
    content,
    expiration,
    expires_at,
    logger,
    messages_of,
    read_scope,
    require_scope,
    scope_of,
    search_query,
    strip_identity,
    timestamp,
)
from ._config import config_dict, open_db
from ._errors import MemoryNotFound, validation_error
from ._filters import to_kernel_filter
from ._records import add_row, from_record, history_row, iso, payload_of, to_record, transcript

__all__ = ["AsyncMem0Adapter", "AsyncMemory", "Mem0Adapter", "Memory"]

_PROCEDURAL = "procedural_memory"
_UNSET: Any = object()

Summarise = Callable[[list[dict[str, Any]]], str]
"""Turns a conversation (led by a system prompt) into procedural memory text: the optional LLM hook."""


class _Project:
    def update(self, *args: Any, **kwargs: Any) -> None:
        raise InvalidArgument("Project settings are a Mem0 Platform feature - they do not exist in open-source Mem0 or agentbase")


class _AsyncProject:
    async def update(self, *args: Any, **kwargs: Any) -> None:
        _Project().update()


def _llm_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [*messages, {"role": "user", "content": "Create procedural memory of the above conversation."}]


class Mem0Adapter:
    """Mem0's ``Memory`` API (add, search, get_all, update, delete, history...) over an ``AgentBase``.

        m = Mem0Adapter(AgentBase("memory.db"))
        m.add("I like pizza", user_id="alice")
        m.search("food preferences", user_id="alice")["results"]
    """

    def __init__(self, db: AgentBase, *, config: Mapping[str, Any] | None = None, owns_db: bool = False,
                 defer_embedding: bool | None = True) -> None:
        if not isinstance(db, AgentBase):
            raise TypeError(f"expected an agentbase_kernel.AgentBase, got {type(db).__name__}")
        self.db = db.view(source="mem0")  # entries record the path that wrote them (Entry.source)
        # add() returns once a memory is stored and FTS-searchable; its vector follows from a
        # background thread (flush() / close() wait for it). None: the kernel's ingest.defer_embedding.
        self.defer_embedding = defer_embedding
        self.config: dict[str, Any] = dict(config or {})
        self.custom_instructions: str | None = self.config.get("custom_instructions")
        self.api_version: str = self.config.get("version", "v1.1")
        # Stored for the optional LLM hook only. agentbase never builds a client from it: set
        # ``self.llm`` to an object with ``generate_response(messages)`` to enable the hook.
        self.llm_config: dict[str, Any] | None = self.config.get("llm")
        self.llm: Any = None
        self._owns_db = owns_db

    @property
    def _kernel(self) -> Kernel:
        return self.db.sync

    # -- add

    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        """Store memories from a string, a message dict or a list of messages.

        Args:
            messages: ``"text"``, ``{"role", "content", "name"?}`` or a list of those.
            user_id: Scope (at least one of user_id, agent_id, run_id is required).
            agent_id: Scope.
            run_id: Scope; stored as the kernel's ``session_id``.
            metadata: Flat custom metadata; identity keys in it are dropped with a warning.
            timestamp: When it happened (unix time, ISO string or datetime).
            expiration_date: ``YYYY-MM-DD``; hidden from search/get_all after that day.
            infer: True runs agentbase's zero-LLM fact extraction; False stores one memory per
                non-system message.
            memory_type: ``"procedural_memory"`` (with ``agent_id``) stores the conversation as a skill.
            prompt: Only used by the optional LLM hook (``self.llm``).

        Returns:
            ``{"results": [{"id", "memory", "event", ...}]}``.

        Raises:
            ValidationError: No scope id, a bad ``memory_type`` or a bad ``messages`` type.
            ValueError: A malformed id, date or empty text.
        """
        summarise = None
        if self.llm is not None:
            summarise = self._summarise_with_hook
        return self._add(
            messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata, when=timestamp,
            expiration_date=expiration_date, infer=infer, memory_type=memory_type, prompt=prompt,
            summarise=summarise, strict=True,
        )

    def _summarise_with_hook(self, messages: list[dict[str, Any]]) -> str:
        return str(self.llm.generate_response(messages=_llm_messages(messages)))

    def _add(
        self,
        messages: Any,
        *,
        user_id: Any,
        agent_id: Any,
        run_id: Any,
        metadata: Mapping[str, Any] | None,
        when: Any,
        expiration_date: Any,
        infer: bool,
        memory_type: str | None,
        prompt: str | None,
        summarise: Summarise | None,
        strict: bool,
    ) -> dict[str, Any]:
        """``add`` for both classes; ``strict=False`` raises what Mem0's ``AsyncMemory`` raises."""
        created_at = timestamp(when)
        expires = expiration(expiration_date)
        meta = strip_identity(metadata, {}, "add()")
        scope = scope_of(user_id, agent_id, run_id)
        require_scope(scope, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        if memory_type is not None and memory_type != _PROCEDURAL:
            problem = f"Invalid memory_type {memory_type!r}: pass {_PROCEDURAL!r} for procedural memory, or leave it out"
            if not strict:  # Mem0's AsyncMemory raises a plain ValueError here, Memory a ValidationError
                raise InvalidArgument(problem)
            raise validation_error(problem, "VALIDATION_002", details={"provided_type": memory_type})
        msgs = messages_of(messages)
        kernel = self._kernel

        if memory_type == _PROCEDURAL and "agent_id" in scope:
            if summarise is not None:
                system = prompt or "Summarise the agent's execution history above as step-by-step procedural memory."
                summary = summarise([{"role": "system", "content": system}, *msgs])
            else:
                summary = transcript(msgs)
            if not summary or not summary.strip():
                raise InvalidArgument("Nothing to store as procedural memory: the messages have no text")
            record = to_record(
                summary, scope=scope, metadata={**meta, "memory_type": _PROCEDURAL}, role=None,
                expires=expires, created_at=created_at, context_type="skill",
            )
            added = kernel.add_memory(record.pop("text"), **record)
            return {"results": [{"id": added.entry.id, "memory": added.entry.text, "event": "ADD"}]}

        items: list[dict[str, Any]] = []
        sources: list[dict[str, Any]] = []
        for message in msgs:
            text = content(message)
            if text is None:
                logger.warning("add(): skipped a message without role and text content: %r", message)
                continue
            if message["role"] == "system":
                continue
            # one stream per scope (the run, else the user/agent): messages added one call at a
            # time are indexed and ranked as the conversation they are (kernel ``add_memory(stream=)``)
            items.append({**to_record(
                text, scope=scope, metadata=meta, role=message["role"], actor=message.get("name") or None,
                expires=expires, created_at=created_at, infer=infer,
            ), "stream": "mem0", "speaker": message.get("name") or None, "defer_embedding": self.defer_embedding})
            sources.append(message)
        if not items:
            return {"results": []}
        rows: list[dict[str, Any]] = []
        for result, message in zip(kernel.add_memories(items), sources):
            if not infer:
                rows.append(add_row(result, message))
                continue
            # infer=True reports what was stored, like Mem0: duplicates (NOOP) and facts merged
            # into a near-duplicate (MERGE) are left out. Facts inherit the message's expires_at.
            rows.extend(add_row(stored, None) for stored in (result, *result.facts) if stored.event == "ADD")
        return {"results": rows}

    # -- reads

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory with this id, or ``None`` (as in Mem0) if there is none."""
        if not isinstance(memory_id, str) or not memory_id:
            return None
        try:
            return from_record(self._kernel.get(memory_id))
        except NotFoundError:
            return None

    def get_all(
        self, /, *, filters: dict[str, Any] | None = None, top_k: int | None = None, show_expired: bool = False, **kwargs: Any
    ) -> dict[str, Any]:
        """Memories of a scope, oldest first: ``{"results": [...]}`` (at most ``top_k``, default 20).

        ``user_id=``/``agent_id=``/``run_id=``/``limit=`` (Mem0 1.x style) are accepted too.

        Raises:
            ValueError: No scope id, a bad ``top_k`` or an unknown filter operator.
        """
        scope, rest, size = read_scope("get_all", filters, top_k, kwargs)
        if size == 0:
            return {"results": []}
        entries = self._kernel.list(**scope, metadata=to_kernel_filter(rest) or None, include_expired=show_expired,
                                    limit=size)
        return {"results": [from_record(entry, with_score=False) for entry in entries]}

    def search(
        self,
        /,
        query: str,
        *,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        threshold: float | None = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Memories of a scope ranked for ``query``, best first: ``{"results": [{..., "score"}]}``.

        Args:
            query: What to look for.
            top_k: At most this many results (default 20); ``limit=`` also works.
            filters: Scope ids plus Mem0 metadata filters (``eq, ne, gt, gte, lt, lte, in, nin,
                contains, icontains, "*", AND/OR/NOT``).
            threshold: Drop results scoring below this (in [0, 1]); None keeps all.
            rerank: Accepted for compatibility; the kernel always ranks its own way.
            explain: Add ``score_details`` (which retrieval legs matched).
            reference_date: Resolve relative dates in the query against this date.
            show_expired: Include memories past their expiration date.

        Raises:
            ValueError: Empty query, no scope id, a bad ``threshold``/``top_k`` or filter.
        """
        text = search_query(query, threshold)
        scope, rest, size = read_scope("search", filters, top_k, kwargs)
        if size == 0:
            return {"results": []}
        # find ranks at most Kernel.max_top_k hits; a larger top_k gets that many
        hits: FindResult = self._kernel.find(
            text, top_k=min(size, self._kernel.max_top_k), **scope, metadata=to_kernel_filter(rest) or None,
            include_expired=show_expired, reference_time=timestamp(reference_date, "reference_date"),
        )
        rows = []
        for hit in hits:
            # Mem0's threshold gates cosine similarity; ours also keeps what keyword search ranked well,
            # and a hit with no vector (none was compared) is not gated
            relevance = max(hit.score, hit.similarity if hit.similarity is not None else 0.0)
            if threshold is not None and hit.similarity is not None and relevance < threshold:
                continue
            row = from_record(hit.entry, score=hit.score)
            if explain:
                row["score_details"] = {"matched_by": list(hit.matched_by), "level": hit.level, "score": hit.score}
            rows.append(row)
            if len(rows) == size:
                break
        return {"results": rows}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """ADD/UPDATE/DELETE rows of a memory, oldest first; ``[]`` for an unknown id."""
        if not isinstance(memory_id, str) or not memory_id:
            return []
        events = self._kernel.history(memory_id)
        created = next((iso(e.created_at) for e in events if e.event == "ADD"), None)
        return [history_row(event, created) for event in events]

    # -- writes

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, str]:
        """Change a memory's text, merge metadata into it, or set/clear (``None``) its expiration.

        Raises:
            MemoryNotFound: No memory with this id (a ``ValueError``, as in Mem0).
            ValueError: Nothing to change.
        """
        if data is not None:
            logger.warning("update(): `data` is deprecated in Mem0 2.x - pass the new text as `text`")
            if text is None:
                text = data
        if text is None and metadata is None and expiration_date is _UNSET:
            raise InvalidArgument("Nothing to update: pass at least one of text, metadata or expiration_date")
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise InvalidArgument("update() text must be a non-empty string")
        try:
            entry = self._kernel.get(memory_id)
        except NotFoundError as exc:
            raise MemoryNotFound(memory_id, f"Memory with id {memory_id} not found. Please provide a valid 'memory_id'") from exc
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = text
        if metadata is not None:
            changes["metadata"] = {**entry.metadata, **strip_identity(metadata, payload_of(entry), "update()")}
        if expiration_date is not _UNSET:
            changes["expires_at"] = expires_at(expiration(expiration_date))
        # Mem0's history rows carry the memory's actor, not the caller's.
        self._kernel.update(memory_id, **changes, actor=entry.actor)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        """Delete one memory. Raises ``MemoryNotFound`` (a ``ValueError``) if there is none."""
        try:
            entry = self._kernel.get(memory_id)
            self._kernel.delete(memory_id, actor=entry.actor)
        except NotFoundError as exc:
            raise MemoryNotFound(memory_id, f"Memory with id {memory_id} not found") from exc
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict[str, str]:
        """Delete every memory of a scope. Raises ``ValueError`` without a scope id (use ``reset()``).

        A memory an approval zone protects (or a human-approved one) stays: it gets a delete proposal
        for a person, as ``delete`` does; the answer is Mem0's either way."""
        scope = scope_of(user_id, agent_id, run_id)
        if not scope:
            raise InvalidArgument(
                "At least one filter is required to delete all memories. "
                "If you want to delete all memories, use the `reset()` method."
            )
        self._kernel.delete_all(**scope)
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Wipe every memory, session and history row of the database file.

        Raises ``PermissionDenied`` (a ``PermissionError``) while an approval zone exists: the wipe
        would delete what it protects; a person removes the zones first (``unprotect``)."""
        self._kernel.reset()

    def chat(self, query: str) -> Any:
        """Not part of open-source Mem0 either (it raises ``NotImplementedError`` there too)."""
        raise NotImplementedError("chat() is not implemented in open-source Mem0 or agentbase - call search() and your own LLM")

    @property
    def project(self) -> _Project:
        """Mem0 Platform project settings; ``update()`` raises ``ValueError`` as in open-source Mem0."""
        return _Project()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every memory added so far is vector-searchable too (it is FTS-searchable at once).

        Returns ``False`` if ``timeout`` (seconds) ran out first.
        """
        return self._kernel.wait_embedded(timeout)

    def close(self) -> None:
        """Wait for pending vectors, then close the database if this object opened it; safe to call twice."""
        if self._owns_db:
            self.db.sync.close()
        elif not self.db.sync.closed:
            self._kernel.wait_embedded()

    def __enter__(self) -> Mem0Adapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMem0Adapter:
    """Mem0's ``AsyncMemory`` API over an ``AgentBase``: each call runs ``Mem0Adapter``'s in a worker thread.

        m = AsyncMem0Adapter(AgentBase("memory.db"))
        await m.add("I like pizza", user_id="alice")
        (await m.search("food preferences", user_id="alice"))["results"]
    """

    def __init__(self, db: AgentBase, *, config: Mapping[str, Any] | None = None, owns_db: bool = False,
                 defer_embedding: bool | None = True) -> None:
        self._sync = Mem0Adapter(db, config=config, owns_db=owns_db, defer_embedding=defer_embedding)

    @property
    def db(self) -> AgentBase:
        return self._sync.db

    @property
    def config(self) -> dict[str, Any]:
        return self._sync.config

    @property
    def custom_instructions(self) -> str | None:
        return self._sync.custom_instructions

    @property
    def api_version(self) -> str:
        return self._sync.api_version

    @property
    def llm_config(self) -> dict[str, Any] | None:
        return self._sync.llm_config

    @property
    def llm(self) -> Any:
        """The optional LLM hook (an object with ``generate_response(messages)``), as on ``Memory``."""
        return self._sync.llm

    @llm.setter
    def llm(self, value: Any) -> None:
        self._sync.llm = value

    async def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        llm: Any = None,
    ) -> dict[str, Any]:
        """Async ``Mem0Adapter.add``; ``llm`` (a LangChain chat model) only summarises procedural memory."""
        summarise: Summarise | None = None
        if llm is not None:
            def summarise(messages: list[dict[str, Any]]) -> str:
                reply = llm.invoke(_llm_messages(messages))
                return str(getattr(reply, "content", reply))
        elif self.llm is not None:
            summarise = self._sync._summarise_with_hook
        return await asyncio.to_thread(
            self._sync._add, messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata,
            when=timestamp, expiration_date=expiration_date, infer=infer, memory_type=memory_type, prompt=prompt,
            summarise=summarise, strict=False,
        )

    get = in_thread(Mem0Adapter.get)
    get_all = in_thread(Mem0Adapter.get_all)
    search = in_thread(Mem0Adapter.search)
    update = in_thread(Mem0Adapter.update)
    delete = in_thread(Mem0Adapter.delete)
    delete_all = in_thread(Mem0Adapter.delete_all)
    history = in_thread(Mem0Adapter.history)
    reset = in_thread(Mem0Adapter.reset)
    flush = in_thread(Mem0Adapter.flush)

    async def chat(self, query: str) -> Any:
        """Not part of open-source Mem0 either (it raises ``NotImplementedError`` there too)."""
        raise NotImplementedError("chat() is not implemented in open-source Mem0 or agentbase - call search() and your own LLM")

    @property
    def project(self) -> _AsyncProject:
        """Mem0 Platform project settings; ``await update()`` raises ``ValueError``."""
        return _AsyncProject()

    def close(self) -> None:
        """Close the database if this object opened it (sync, as in Mem0); safe to call twice."""
        self._sync.close()

    async def __aenter__(self) -> AsyncMem0Adapter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._sync._owns_db:
            await self.db.close()
        elif not self.db.sync.closed:
            await self.db.wait_embedded()


class Memory(Mem0Adapter):
    """Drop-in for ``mem0.Memory``: same methods and result shapes, one database, no LLM, no network.

        m = Memory()                      # or Memory.from_config({"vector_store": {...}, ...})
        m.add("I like pizza", user_id="alice")
        m.search("food preferences", filters={"user_id": "alice"})
    """

    def __init__(self, config: Any = None) -> None:
        conf = config_dict(config)
        super().__init__(open_db(conf), config=conf, owns_db=True)

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        """Build from Mem0's config dict (``vector_store``, ``embedder``, ``llm``, ``history_db_path``...).

        Raises:
            ValueError: A section has the wrong shape or an embedder provider agentbase cannot run.
        """
        if not isinstance(config_dict, Mapping):
            raise InvalidArgument(f"from_config() takes a dict, not {type(config_dict).__name__}")
        return cls(config_dict)


class AsyncMemory(AsyncMem0Adapter):
    """Drop-in for ``mem0.AsyncMemory``: Mem0's async API over one database, no LLM, no network.

        m = AsyncMemory()
        await m.add("I like pizza", user_id="alice")
        await m.search("food preferences", filters={"user_id": "alice"})
    """

    def __init__(self, config: Any = None) -> None:
        conf = config_dict(config)
        super().__init__(open_db(conf), config=conf, owns_db=True)

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> AsyncMemory:
        """Build from Mem0's config dict; see ``Memory.from_config``."""
        if not isinstance(config_dict, Mapping):
            raise InvalidArgument(f"from_config() takes a dict, not {type(config_dict).__name__}")
        return cls(config_dict)
