"""Archival and per-scope capacity.

An archived entry keeps its row, vector, entities and links; ``archived_at`` takes it out of
default reads and every search leg (``EntryFilter.archived``, applied by ``where_sql``). Each
archive and restore writes an ARCHIVE / RESTORE history event first, then updates the row: the
audit trigger reads the event for the actor and the reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from ...records import Entry, Scope
from ..rows import scope_key
from .core import ENTRY_COLS, SqlCore, mapped

__all__ = ["ArchiveMixin", "set_archived"]

# live in the sense of capacity: in default reads and search
_LIVE = "e.archived_at IS NULL AND e.invalid_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > ?)"


def set_archived(core: SqlCore, conn: Any, entry_ids: Sequence[str], *, archived: bool, reason: str,
                 actor: str | None) -> list[str]:
    """Archive (or restore) the ids not already so, inside the caller's write transaction."""
    d = core.dialect
    state = "IS NULL" if archived else "IS NOT NULL"
    rows = core.select_in(conn, f"SELECT id, l2_full, role FROM entries WHERE archived_at {state} AND {{in}} "
                                f"ORDER BY rid{d.for_update}", "id", entry_ids)
    now = d.now()
    event = "ARCHIVE" if archived else "RESTORE"
    for entry_id, text, role in rows:
        # the stored text, written back as it is
        conn.execute("INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, role) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (str(uuid.uuid4()), entry_id, event, text, d.text(reason), now, actor, role))
        conn.execute("UPDATE entries SET archived_at = ? WHERE id = ?", (now if archived else None, entry_id))
    return [r[0] for r in rows]


class ArchiveMixin(SqlCore):
    """``entries.archived_at`` and the ``scope_capacity`` table."""

    @mapped
    def archive_entries(self, entry_ids: Sequence[str], *, reason: str, actor: str | None = None) -> list[str]:
        with self.conns.write() as conn:
            return set_archived(self, conn, entry_ids, archived=True, reason=reason, actor=actor)

    @mapped
    def restore_entries(self, entry_ids: Sequence[str], *, actor: str | None = None) -> list[str]:
        with self.conns.write() as conn:
            return set_archived(self, conn, entry_ids, archived=False, reason="restored", actor=actor)

    @mapped
    def scope_size(self, scope: Scope) -> int:
        with self.conns.read() as conn:
            return int(conn.execute(f"SELECT count(*) FROM entries e WHERE e.scope_key = ? AND {_LIVE}",
                                    (scope_key(scope), self.dialect.now())).fetchone()[0])

    @mapped
    def scope_entries(self, scope: Scope) -> list[Entry]:
        cols = ", ".join(f"e.{c.strip()}" for c in ENTRY_COLS.split(","))
        with self.conns.read() as conn:
            rows = conn.execute(
                f"SELECT {cols}, a.access_count, a.last_accessed_at FROM entries e "
                f"LEFT JOIN entry_access a ON a.entry_id = e.id WHERE e.scope_key = ? AND {_LIVE} ORDER BY e.rid",
                (scope_key(scope), self.dialect.now())).fetchall()
        out = []
        for row in rows:
            entry = self._entry(row[:-2])
            entry.access_count, entry.last_accessed_at = int(row[-2] or 0), self.dialect.when(row[-1])
            out.append(entry)
        return out

    @mapped
    def scope_capacity(self, scope: Scope) -> int | None:
        with self.conns.read() as conn:
            row = conn.execute("SELECT max_items FROM scope_capacity WHERE scope_key = ?",
                               (scope_key(scope),)).fetchone()
        return None if row is None else int(row[0])

    @mapped
    def set_scope_capacity(self, scope: Scope, max_items: int | None) -> None:
        with self.conns.write() as conn:
            if max_items is None:
                conn.execute("DELETE FROM scope_capacity WHERE scope_key = ?", (scope_key(scope),))
            else:
                conn.execute("INSERT INTO scope_capacity (scope_key, max_items) VALUES (?, ?) "
                             "ON CONFLICT (scope_key) DO UPDATE SET max_items = excluded.max_items",
                             (scope_key(scope), int(max_items)))
