"""Pydantic AI harness adapter: a ``MemoryStore`` for the harness's ``Memory`` capability, on agentbase.

    from pydantic_ai_harness import Memory
    from agentbase_adapters.pydantic_ai import AgentBaseMemoryStore

    Memory(AgentBaseMemoryStore("memory.db"), namespace=lambda ctx: ctx.deps.user_id)

Implements every protocol the harness's bundled stores do: ``MemoryStore`` (read / get_operation /
write / delete / list_paths), ``MetadataMemoryStore`` (write_with_metadata) and
``SearchableMemoryStore`` (search), with the upstream rules:

* compare-and-set: a write or delete names the version it read (``None``: "the file must not
  exist"); any other current version raises ``MemoryConflictError``. The check and the write are one
  kernel transaction (SQLite's write lock, PostgreSQL's advisory lock), so concurrent writers in
  other processes are serialized as the upstream SQLite/PostgreSQL stores serialize them;
* idempotency: a mutation with an ``operation`` leaves a receipt in the same transaction; the same
  operation again returns the receipt (``replayed=True``) without applying anything, and the same id
  with another fingerprint raises ``MemoryOperationConflictError``. Receipts are messages of one
  kernel session (``OPERATIONS_SESSION``), never memories, kept like the SQLite store keeps them;
* write metadata: kept with the content in the same step, replaced by every write, gone with a delete.

Each memory file is one kernel entry (``agentbase_adapters._files``): its text is the file, its
scope comes from the path (``namespace_scope``: ``alice/main/MEMORY.md`` -> user ``alice``, agent
``main``), so the Mem0 swap, the MCP server and the dashboard see what the agent noted about a user.
``search`` ranks with the kernel's hybrid retrieval over every file of the scope (not a scan of the
first ``max_files``), matching what the harness's literal search matches (a word of the query in a
file's content or name), within the upstream bounds on results and characters.

Install with ``pip install 'agentbase-memory[pydantic-ai]'``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agentbase_adapters._require import require

require("pydantic_ai_harness.memory", extra="pydantic-ai")

from pydantic_ai_harness.memory import (  # noqa: E402
    MemoryConflictError,
    MemoryFile,
    MemoryMutation,
    MemoryOperation,
    MemoryOperationConflictError,
    MemorySearchMatch,
    MemorySearchResult,
)

from agentbase_adapters._failopen import FailOpen  # noqa: E402
from agentbase_adapters._files import MemoryFiles  # noqa: E402
from agentbase_adapters._harness import open_store  # noqa: E402
from agentbase_kernel import AgentBase, Entry, Kernel, MessageNotFound, SessionNotFound, in_thread  # noqa: E402

__all__ = ["OPERATIONS_SESSION", "AgentBaseMemoryStore", "ScopeRule", "namespace_scope"]

ScopeRule = Callable[[str], Mapping[str, str]]
"""A memory path -> the kernel scope keywords its file is stored in."""

OPERATIONS_SESSION = "pydantic-ai-memory-operations"
"""The kernel session whose messages are the operation receipts (not ingested: never memories)."""

_STORE = "pydantic-ai"
_R = TypeVar("_R")
# what the store answers with when the request is wrong or stale: never a reason to trip the breaker
_ANSWERS = (MemoryConflictError, MemoryOperationConflictError, ValueError, TypeError)
_SEGMENT = re.compile(r"[A-Za-z0-9_.-]{1,200}")
_MAX_METADATA_CHARS = 4_096
_LISTINGS_KEPT = 64  # prefixes whose sorted listing is kept


def namespace_scope(path: str) -> dict[str, str]:
    """The default ``scope_rule``: ``{namespace}/{agent_name}/{file}`` -> ``user_id=namespace``,
    ``agent_id=agent_name``; ``{agent_name}/{file}`` -> ``agent_id`` only; a bare file -> no scope."""
    parts = path.split("/")
    if len(parts) >= 3:
        return {"user_id": "/".join(parts[:-2]), "agent_id": parts[-2]}
    if len(parts) == 2:
        return {"agent_id": parts[0]}
    return {}


def _check_path(path: Any) -> None:
    """The upstream path rule (``ValueError('invalid memory path: ...')``): ``/``-separated segments of
    letters, digits, ``_ . -``, none ``.`` nor holding ``..``."""
    if not isinstance(path, str) or not all(
            _SEGMENT.fullmatch(s) and ".." not in s and s != "." for s in path.split("/")):
        raise ValueError(f"invalid memory path: {path!r}")


def _check_prefix(prefix: Any) -> None:
    if not isinstance(prefix, str):
        raise ValueError(f"invalid memory path: {prefix!r}")
    if prefix:
        _check_path(prefix.removesuffix("/"))


def _positive(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be positive")


def _encode_metadata(metadata: Mapping[str, str] | None) -> dict[str, str] | None:
    """Write metadata as the bundled stores accept it (``TypeError`` / ``ValueError`` otherwise)."""
    if not metadata:
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise TypeError("memory metadata keys and values must be strings")
    if any("\x00" in k or "\x00" in v for k, v in metadata.items()):
        raise ValueError("memory metadata keys and values must not contain NUL characters")
    encoded = json.dumps(dict(metadata), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    if len(encoded) > _MAX_METADATA_CHARS:
        raise ValueError(f"memory metadata is {len(encoded)} characters as JSON; the limit is {_MAX_METADATA_CHARS}")
    return dict(metadata)


def _guarded(impl: Callable[..., _R]) -> Callable[..., _R]:
    """``impl`` through the store's circuit breaker (``self.guard``): a store that keeps failing is not
    asked again until its cooldown ends (``StoreUnavailable`` at once instead of a connect timeout per
    call). A conflict or a bad argument is the store answering, so it passes through uncounted."""

    @functools.wraps(impl)
    def run(self: AgentBaseMemoryStore, /, *args: Any, **kwargs: Any) -> _R:
        def attempt() -> tuple[bool, Any]:
            try:
                return False, impl(self, *args, **kwargs)
            except _ANSWERS as exc:
                return True, exc

        raised, value = self.guard.call(attempt)
        if raised:
            raise value
        return value  # type: ignore[no-any-return]

    return run


def _snippet(content: str, query: str, max_chars: int) -> str:
    """``max_chars`` of ``content`` around the first query term found (the whole head when none is)."""
    lower = content.lower()
    found = [p for p in (lower.find(t) for t in query.lower().split()) if p >= 0]
    center = min(found) if found else 0
    start = max(0, center - max_chars // 3)
    end = min(len(content), start + max_chars)
    start = max(0, end - max_chars)
    snippet = content[start:end]
    if start:
        snippet = f"...{snippet[3:]}" if len(snippet) >= 3 else "." * len(snippet)
    if end < len(content):
        snippet = f"{snippet[:-3]}..." if len(snippet) >= 3 else "." * len(snippet)
    return snippet


class AgentBaseMemoryStore:
    """The Pydantic AI harness's memory files in an agentbase database.

    Args:
        db: An ``AgentBase`` (left open by ``close()``), a path or PostgreSQL URL this store opens,
            or ``None`` for ``$AGENTBASE_PATH`` / ./agentbase.db.
        scope_rule: A path -> kernel scope keywords (default ``namespace_scope``).
        min_similarity: ``search`` also returns files this close in meaning to the query (cosine) that
            share no word with it; ``None`` (default) keeps the harness's literal matching.
        guard: The circuit breaker every store call goes through (default: 5 failures -> 30 s pause ->
            one trial). While it is open, calls raise ``StoreUnavailable`` without touching the store,
            which the harness's ``injection_errors='ignore'`` (its default) turns into "no memory this turn".
        defer_embedding: Writes return once stored and FTS-searchable; vectors follow in the background.
        **options: ``AgentBase`` options when ``db`` is a path.
    """

    def __init__(self, db: AgentBase | str | os.PathLike[str] | None = None, *,
                 scope_rule: ScopeRule = namespace_scope, min_similarity: float | None = None,
                 guard: FailOpen | None = None, defer_embedding: bool | None = True, **options: Any) -> None:
        if min_similarity is not None and (isinstance(min_similarity, bool) or not isinstance(min_similarity, (int, float))
                                           or not -1.0 <= min_similarity <= 1.0):
            raise ValueError(f"min_similarity must be a cosine in [-1, 1] or None, not {min_similarity!r}")
        self.db, self._owns_db = open_store(db, source=_STORE, options=options)
        self.files = MemoryFiles(self.db, store=_STORE, defer_embedding=defer_embedding)
        self.scope_rule = scope_rule
        self.min_similarity = None if min_similarity is None else float(min_similarity)
        self._owns_guard = guard is None
        self.guard = guard if guard is not None else FailOpen(name=_STORE)
        self._lock = threading.Lock()
        self._listed: dict[str, tuple[tuple[int, str | None], list[str]]] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.db!r})"

    @property
    def _kernel(self) -> Kernel:
        return self.db.sync

    def _scope(self, path: str) -> dict[str, Any]:
        return dict(self.scope_rule(path))

    def _file(self, path: str) -> Entry | None:
        return self.files.get(path, self._scope(path))

    # -- receipts ------------------------------------------------------------------------------
    def _receipt(self, operation: MemoryOperation) -> MemoryMutation | None:
        try:
            message = self._kernel.get_message(OPERATIONS_SESSION, f"op_{operation.id}")
        except (MessageNotFound, SessionNotFound):
            return None
        if message.metadata.get("fingerprint") != operation.fingerprint:
            raise MemoryOperationConflictError(f"operation id {operation.id!r} was reused with different arguments")
        return MemoryMutation(version=message.metadata.get("version"), replayed=True,
                              existed=bool(message.metadata.get("existed")))

    def _keep_receipt(self, operation: MemoryOperation, kind: str, path: str, mutation: MemoryMutation) -> None:
        self._kernel.add_message(
            OPERATIONS_SESSION, "tool", f"{kind} {path}", message_id=f"op_{operation.id}", ingest=False,
            metadata={"fingerprint": operation.fingerprint, "version": mutation.version, "existed": mutation.existed,
                      "path": path, "kind": kind})

    # -- MemoryStore ---------------------------------------------------------------------------
    def _read(self, path: str, *, max_chars: int) -> MemoryFile | None:
        _check_path(path)
        _positive(max_chars, "max_chars")
        entry = self._file(path)
        if entry is None:
            return None
        content = self.files.content(entry)
        meta = entry.metadata
        written = meta.get("pai_write_metadata")
        return MemoryFile(content=content[:max_chars], version=str(meta["pai_version"]),
                          operation_id=meta.get("pai_operation_id"), truncated=len(content) > max_chars,
                          metadata=dict(written) if isinstance(written, dict) and written else None)

    def _get_operation(self, operation: MemoryOperation) -> MemoryMutation | None:
        return self._receipt(operation)

    def _write(self, path: str, content: str, *, expected_version: str | None,
               operation: MemoryOperation | None = None) -> MemoryMutation:
        """Create or replace ``path`` if its version equals ``expected_version``, recording no metadata."""
        return self._write_with_metadata(path, content, expected_version=expected_version, metadata=None,
                                         operation=operation)

    def _write_with_metadata(self, path: str, content: str, *, expected_version: str | None,
                             metadata: Mapping[str, str] | None,
                             operation: MemoryOperation | None = None) -> MemoryMutation:
        _check_path(path)
        if not isinstance(content, str):
            raise TypeError(f"memory content must be a str, not {type(content).__name__}")
        written = _encode_metadata(metadata)
        with self._kernel.transaction():
            if operation is not None and (receipt := self._receipt(operation)) is not None:
                return receipt
            current = self._file(path)
            if (None if current is None else current.metadata.get("pai_version")) != expected_version:
                raise MemoryConflictError(f"memory path {path!r} changed before it could be written")
            version = uuid.uuid4().hex
            extra: dict[str, Any] = {"pai_version": version,
                                     "pai_operation_id": operation.id if operation is not None else None}
            if written is not None:
                extra["pai_write_metadata"] = written
            self.files.write(path, content, self._scope(path), metadata=extra, existing=current)
            mutation = MemoryMutation(version=version, replayed=False, existed=current is not None)
            if operation is not None:
                self._keep_receipt(operation, "write", path, mutation)
            return mutation

    def _delete(self, path: str, *, expected_version: str | None,
                operation: MemoryOperation | None = None) -> MemoryMutation:
        _check_path(path)
        with self._kernel.transaction():
            if operation is not None and (receipt := self._receipt(operation)) is not None:
                return receipt
            current = self._file(path)
            if (None if current is None else current.metadata.get("pai_version")) != expected_version:
                raise MemoryConflictError(f"memory path {path!r} changed before it could be deleted")
            if current is not None:
                self.files.delete(current)
            mutation = MemoryMutation(version=None, replayed=False, existed=current is not None)
            if operation is not None:
                self._keep_receipt(operation, "delete", path, mutation)
            return mutation

    def _list_paths(self, prefix: str = "", *, limit: int) -> list[str]:
        _check_prefix(prefix)
        _positive(limit, "limit")
        return self._sorted_paths(prefix)[:limit]

    def _sorted_paths(self, prefix: str) -> list[str]:
        """Every file path under ``prefix``, sorted.

        The capability lists a scope before every run, and listing 10k files takes seconds, so the sorted
        list is kept per prefix for as long as the database's live entries are the same set: their count
        and the newest one, read from the store on every call (cheap: no JSON filter), so another process's
        write is seen. A write to an existing file changes no path; a new file is the newest entry; a
        deleted one lowers the count.
        """
        newest = self._kernel.list(limit=1, order="desc")
        stamp = (self._kernel.count(), newest[0].id if newest else None)
        with self._lock:
            cached = self._listed.get(prefix)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        paths = sorted(e.metadata["file_path"] for e in self.files.listed({}, prefix=prefix or None))
        with self._lock:
            if len(self._listed) >= _LISTINGS_KEPT:
                self._listed.clear()
            self._listed[prefix] = (stamp, paths)
        return paths

    # -- SearchableMemoryStore -----------------------------------------------------------------
    def _search(self, prefix: str, query: str, *, limit: int, max_files: int, max_chars: int,
                max_file_chars: int) -> MemorySearchResult:
        """The files directly in ``prefix`` that match ``query``, best first, each with a snippet around
        the first query term, within the upstream bounds on results and characters.

        Matching follows the harness's "literal text search": a file matches when it shares a word
        with the query, in its content (ranked by the kernel's hybrid retrieval over every file of
        the scope) or in its name (after those). With ``min_similarity`` set, files whose meaning is at
        least that close (cosine of the kernel's vectors) match without a shared word.
        """
        _check_prefix(prefix)
        terms = query.lower().split() if isinstance(query, str) else []
        if not terms or min(limit, max_files, max_chars, max_file_chars) <= 0:
            return MemorySearchResult(matches=[], scanned=0, truncated=False)
        directory = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        scope = self._scope(f"{prefix}_")
        selected = self.files.select(prefix=prefix or None, directory=directory)
        in_scope = self._kernel.count(metadata=selected, **scope)
        found: list[tuple[Entry, float]] = []
        if in_scope:
            floor = self.min_similarity
            for hit in self._kernel.find(query, top_k=min(2 * limit + 1, self._kernel.max_top_k),
                                         metadata=selected, **scope):
                if "fts" in hit.matched_by or (floor is not None and (hit.similarity or 0.0) >= floor):
                    found.append((hit.entry, float(hit.score)))
            if len(found) <= limit:
                named = {**selected, "OR": [{"file_name": {"icontains": t}} for t in dict.fromkeys(terms)]}
                if found:
                    named["NOT"] = [{"file_path": e.metadata["file_path"]} for e, _ in found]
                extra = self._kernel.list(metadata=named, limit=limit + 1 - len(found), **scope)
                found += [(e, 0.0) for e in sorted(extra, key=lambda e: e.metadata["file_path"])]
        matches: list[MemorySearchMatch] = []
        remaining = max_chars
        truncated = len(found) > limit
        for entry, score in found[:limit]:
            path = str(entry.metadata["file_path"])
            content = self.files.content(entry)
            truncated = truncated or len(content) > max_file_chars
            visible = path.removeprefix(prefix)
            available = remaining - len(visible)
            if available <= 0:
                truncated = True
                break
            snippet = _snippet(content[:max_file_chars], query, available)
            matches.append(MemorySearchMatch(path=path, snippet=snippet, score=score))
            remaining -= len(visible) + len(snippet)
        return MemorySearchResult(matches=matches, scanned=min(in_scope, max_files), truncated=truncated)

    read = in_thread(_guarded(_read))
    get_operation = in_thread(_guarded(_get_operation))
    write = in_thread(_guarded(_write))
    write_with_metadata = in_thread(_guarded(_write_with_metadata))
    delete = in_thread(_guarded(_delete))
    list_paths = in_thread(_guarded(_list_paths))
    search = in_thread(_guarded(_search))

    # -- lifecycle -----------------------------------------------------------------------------
    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every file written so far is vector-searchable too (it is FTS-searchable at once)."""
        return self._kernel.wait_embedded(timeout)

    def close(self) -> None:
        """Wait for pending vectors; close the database if this store opened it. Safe twice."""
        if self._owns_guard:
            self.guard.close()
        if self._owns_db:
            self._kernel.close()
        elif not self._kernel.closed:
            self._kernel.wait_embedded()
