"""``SqlStore``: every part of the ``Store`` protocol written once in SQL, for a backend to complete.

A backend subclasses it with its connections (``conns``), its ``dialect``, the error mapping
(``_call``), and what really differs between engines: opening and migrating, full-text search
(``fts_search``, ``rebuild_fts``), vector search and storage (``vector_search``, ``vectors_for``,
``put_vectors``), ``verify`` and ``bulk_load``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import EmbeddingMismatch
from ..base import NO_EMBEDDER
from .archive import ArchiveMixin
from .audit import AuditMixin
from .core import mapped
from .governance import GovernanceMixin
from .portable import PortableMixin
from .replay import ReplayMixin
from .sessions import SessionsMixin
from .skills import SkillsMixin

__all__ = ["SqlStore"]


class SqlStore(SessionsMixin, PortableMixin, AuditMixin, ArchiveMixin, GovernanceMixin, SkillsMixin, ReplayMixin):
    """The backend-neutral part of a SQL store: entries and history, sessions and messages,
    entities, traces, archive, governance, audit, export and import, skill versions and entity drift;
    outcomes, approval zones, proposals and the audit log's replay.

    Usage::

        class MyStore(SqlStore):  # conns, dialect, _call, and one engine's search and migrations
            ...
    """

    #: how the errors of ``check_embedder`` tell the caller to start afresh
    _elsewhere = "pass a new path"

    def _lock_meta(self, conn: Any) -> None:
        """Keep other writers of ``meta`` out until this write commits (SQLite's one write lock already does)."""

    @mapped
    def check_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later.

        ``"none"`` (writes made without an embedder) is recorded only where nothing is recorded yet,
        and a real embedder named later replaces it: the texts written before then have no vectors
        until ``rebuild``, and ``verify`` says so.
        """
        with self.conns.write() as conn:
            self._lock_meta(conn)
            rows = dict(conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim')").fetchall())
            if name == NO_EMBEDDER or not rows or rows.get("embedding_model") == NO_EMBEDDER:
                if name != NO_EMBEDDER or not rows:
                    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?) "
                                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                     [("embedding_model", name), ("embedding_dim", str(dim))])
                return
        if int(rows["embedding_dim"]) != dim:
            raise EmbeddingMismatch(
                f"Embedding dimension {dim} does not match this store ({rows['embedding_dim']}, model "
                f"{rows['embedding_model']!r}) - open it with the embedder that created it, or {self._elsewhere}",
                path=str(self.path))
        if rows["embedding_model"] != name:
            raise EmbeddingMismatch(
                f"Embedder {name!r} differs from the one that wrote this store ({rows['embedding_model']!r}) - "
                f"open it with that embedder, or {self._elsewhere}", path=str(self.path))

    @mapped
    def meta(self) -> dict[str, str]:
        with self.conns.read() as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    @mapped
    def stats(self) -> dict[str, int]:
        """Row counts: every entry (expired and superseded too), the live ones, sessions, messages, vectors."""
        with self.conns.read() as conn:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM entries WHERE invalid_at IS NULL), "
                "(SELECT count(*) FROM sessions), (SELECT count(*) FROM messages), "
                "(SELECT count(*) FROM embeddings)").fetchone()
        return dict(zip(("entries", "entries_valid", "sessions", "messages", "vectors"), map(int, row)))

    @mapped
    def missing_vectors(self, hashes: Iterable[str]) -> set[str]:
        wanted = set(hashes)
        with self.conns.read() as conn:
            have = {r[0] for r in self.select_in(conn, "SELECT content_hash FROM embeddings WHERE {in}",
                                                 "content_hash", wanted)}
        return wanted - have

    @mapped
    def hashes_without_vector(self) -> list[tuple[str, str]]:
        """``(content_hash, text)`` of every stored text that has no vector yet."""
        with self.conns.read() as conn:
            return [(r[0], self.dialect.text_out(r[1]) or "") for r in conn.execute(
                "SELECT e.content_hash, min(e.l2_full) FROM entries e LEFT JOIN embeddings v "
                "ON v.content_hash = e.content_hash WHERE v.content_hash IS NULL GROUP BY e.content_hash")]
