"""Memory files as kernel entries: one entry per path, its text the file's content.

The harnesses that keep an agent's memory as files (deepagents' backends, the Pydantic AI harness's
``MemoryStore``) address it by path. Each path is one kernel entry:

* its id is derived from the harness, the kernel scope and the path (``file_entry_id``): the same file
  is the same entry across writes, processes and restarts, so its history lists every version;
* its text is the file's content, verbatim, so the kernel's retrieval, the Mem0 swap, the MCP server
  and the dashboard find it in its scope like any other memory. A content that cannot be an entry's
  text (empty or whitespace, or binary) is kept in metadata under a stand-in text naming the file;
* its metadata holds ``file_store`` (which harness), ``file_path``, ``file_dir`` (the parent
  directory, so "the files directly in a directory" is one equality), ``file_name`` and what the
  adapter adds.

Reads by path are a primary-key lookup; listings and greps are metadata and ``text_contains``
filters the store evaluates (``Kernel.list``), so a directory of 10k files is never read whole to
find the few that hold a string.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Mapping
from typing import Any

from agentbase_kernel import AgentBase, Entry, EntryNotFound, Kernel

__all__ = ["MemoryFiles", "file_entry_id"]

Scope = Mapping[str, Any]
"""Kernel scope keywords (``user_id`` / ``agent_id`` / ``project_id``)."""


def file_entry_id(store: str, scope: Scope, path: str) -> str:
    """The stable entry id of ``path`` written by ``store`` in ``scope``."""
    key = json.dumps([store, sorted(scope.items()), path], ensure_ascii=False, separators=(",", ":"))
    return f"file_{hashlib.sha256(key.encode('utf-8')).hexdigest()[:40]}"


def _parent(path: str) -> str:
    return posixpath.dirname(path.rstrip("/")) if "/" in path.rstrip("/") else ""


class MemoryFiles:
    """The files one harness adapter keeps on one agentbase view.

    Args:
        db: The adapter's view (``db.view(source=...)``), so entries record who wrote them.
        store: The ``file_store`` name its entries carry (``"deepagents"``, ``"pydantic-ai"``).
        defer_embedding: Writes return once stored and FTS-searchable; the vector follows in the
            background (``None``: the kernel's ``ingest.defer_embedding``).
    """

    def __init__(self, db: AgentBase, *, store: str, defer_embedding: bool | None = True) -> None:
        self.db = db
        self.store = store
        self.defer_embedding = defer_embedding

    @property
    def kernel(self) -> Kernel:
        return self.db.sync

    # -- one file ------------------------------------------------------------------------------
    def get(self, path: str, scope: Scope) -> Entry | None:
        """The entry of ``path`` in ``scope``, or ``None``."""
        try:
            entry = self.kernel.get(file_entry_id(self.store, scope, path), **scope)
        except EntryNotFound:
            return None
        meta = entry.metadata
        return entry if meta.get("file_store") == self.store and meta.get("file_path") == path else None

    @staticmethod
    def content(entry: Entry) -> str:
        """The file's content (the entry text, or the content kept beside a stand-in text)."""
        kept = entry.metadata.get("file_content")
        return kept if isinstance(kept, str) else entry.l2_full

    def write(self, path: str, content: str, scope: Scope, *, metadata: Mapping[str, Any],
              existing: Entry | None, text: str | None = None) -> Entry:
        """Create or replace ``path`` with ``content``; ``existing`` is its current entry (``get``).

        ``text`` overrides what is indexed (a binary file's description); by default the content
        itself, or a stand-in naming the file when the content is blank.
        """
        if text is None:
            text = content if content.strip() else f"{path} (empty file)"
        meta: dict[str, Any] = {**metadata, "file_store": self.store, "file_path": path, "file_dir": _parent(path),
                                "file_name": posixpath.basename(path.rstrip("/"))}
        if text != content:
            meta["file_content"] = content
        if existing is not None:
            return self.kernel.update(existing.id, text=text, metadata=meta, **scope)
        # files are addressed by path, not by text: two files may hold the same content
        return self.kernel.add_memory(text, entry_id=file_entry_id(self.store, scope, path), dedup=False,
                                      metadata=meta, actor=self.store, defer_embedding=self.defer_embedding,
                                      **scope).entry

    def delete(self, entry: Entry) -> None:
        self.kernel.delete(entry.id, **entry.scope.as_dict())

    # -- many files ----------------------------------------------------------------------------
    def select(self, *, prefix: str | None = None, directory: str | None = None) -> dict[str, Any]:
        """The metadata filter of this store's files whose path starts with ``prefix`` and/or whose
        parent directory is ``directory``."""
        flt: dict[str, Any] = {"file_store": self.store}
        if prefix:
            flt["file_path"] = {"startswith": prefix}
        if directory is not None:
            flt["file_dir"] = directory
        return flt

    def listed(self, scope: Scope, *, prefix: str | None = None, directory: str | None = None,
               contains: str | None = None, limit: int | None = None, order: str = "asc") -> list[Entry]:
        """This store's files in ``scope`` (creation order), filtered by the store.

        ``contains``: only files whose content holds that exact substring (for a file kept under a
        stand-in text, its content in metadata is what is tested).
        """
        flt = self.select(prefix=prefix, directory=directory)
        if not contains:
            return self.kernel.list(metadata=flt, limit=limit, order=order, **scope)
        found = self.kernel.list(metadata={**flt, "file_content": {"exists": False}}, text_contains=contains,
                                 limit=limit, order=order, **scope)
        kept = self.kernel.list(metadata={**flt, "file_content": {"contains": contains}}, limit=limit, order=order,
                                **scope)
        if not kept:
            return found
        known = {e.id for e in found}
        merged = found + [e for e in kept if e.id not in known]
        merged.sort(key=lambda e: (e.created_at is not None and e.created_at.timestamp() or 0.0, e.id),
                    reverse=order == "desc")
        return merged if limit is None else merged[:limit]

    def count(self, scope: Scope, *, directory: str | None = None, prefix: str | None = None) -> int:
        return self.kernel.count(metadata=self.select(prefix=prefix, directory=directory), **scope)
