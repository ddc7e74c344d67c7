"""Entries and their history: insert with exact dedup, read, update, delete, supersede, link."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ...errors import DuplicateEntry, EntryNotFound, InvalidArgument
from ...records import Entry, HistoryEvent, Scope
from ..base import EntryFilter, utcnow
from ..protocol import EntryRow
from ..rows import new_entry_values, scope_key
from .archive import set_archived
from .core import ENTRY_COLS, SqlCore, mapped

__all__ = ["EntriesMixin"]

_JSON_COLUMNS = frozenset({"tags", "metadata", "flags", "event_dates"})
_TIME_COLUMNS = frozenset({"expires_at", "invalid_at", "valid_from", "created_at", "updated_at"})
_TEXT_COLUMNS = frozenset({"l0_abstract", "l1_overview", "l2_full", "search_text", "search_context"})
# every table a reset empties, children first
_TABLES = ("outcome_effects", "entry_confidence", "outcomes", "proposals", "trace_steps", "retrieval_traces",
           "entity_links", "entity_entries", "entities", "entry_links",
           "entry_sources", "session_entries", "messages", "sessions", "entry_history", "entries", "embeddings")


class EntriesMixin(SqlCore):
    """The ``entries`` and ``entry_history`` tables (and ``entry_links``)."""

    def _new_entry(self, row: EntryRow) -> tuple[str, Any, dict[str, Any]]:
        """``(id, created_at, columns)`` of a new entry from an ingest row, as parameters."""
        d = self.dialect
        now = d.time(row.get("created_at") or utcnow())
        entry_id = row.get("id") or str(uuid.uuid4())
        return entry_id, now, new_entry_values(row, entry_id, now, json_value=d.json, when=d.time, text=d.text)

    @mapped
    def insert_entry(self, row: EntryRow, *, history: bool = True) -> tuple[Entry, bool]:
        """Insert, or return the live exact duplicate of the same scope: ``(entry, inserted)``."""
        entry_id, now, values = self._new_entry(row)
        cols = ", ".join(values)
        marks = ", ".join("?" * len(values))
        with self.conns.write() as conn:
            cur = conn.execute(
                f"INSERT INTO entries ({cols}) VALUES ({marks}) "
                "ON CONFLICT (scope_key, dedup_key) WHERE invalid_at IS NULL DO NOTHING",
                list(values.values()))
            if cur.rowcount == 0:
                return self._live_duplicate(conn, values, row.get("actor")), False
            if history:
                self._history(conn, entry_id, "ADD", None, row["l2_full"], row.get("actor"), row.get("role"), now)
            self._rows_written(1)
            entry = conn.execute(f"SELECT {ENTRY_COLS} FROM entries WHERE id = ?", (entry_id,)).fetchone()
            return self._entry(entry), True

    def _live_duplicate(self, conn: Any, values: dict[str, Any], actor: str | None) -> Entry:
        """The live entry of the same scope and text that kept ``values`` from being inserted; an
        archived one comes back into search (it was said again)."""
        existing = conn.execute(
            f"SELECT {ENTRY_COLS} FROM entries WHERE scope_key = ? AND dedup_key = ? "
            "AND invalid_at IS NULL", (values["scope_key"], values["dedup_key"])).fetchone()
        if existing is None:  # the id itself collided
            raise InvalidArgument(f"An entry with id {values['id']!r} already exists")
        found = self._entry(existing)
        if found.archived_at is not None:  # said again: back in search (lifecycle, archive.py)
            set_archived(self, conn, [found.id], archived=False, reason="written again", actor=actor)
            found = self.get_entry(found.id)
        return found

    @mapped
    def get_entry(self, entry_id: str, scope: Scope | None = None) -> Entry:
        flt = EntryFilter(scope=scope or Scope(), include_expired=True, include_invalid=True, archived=None)
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {ENTRY_COLS} FROM entries e WHERE e.id = ? AND {where}",
                               [entry_id, *args]).fetchone()
        if row is None:
            raise EntryNotFound(entry_id)
        return self._entry(row)

    @mapped
    def get_entries(self, entry_ids: Iterable[str]) -> dict[str, Entry]:
        with self.conns.read() as conn:
            rows = self.select_in(conn, f"SELECT {ENTRY_COLS} FROM entries WHERE {{in}}", "id", entry_ids)
        return {row[1]: self._entry(row) for row in rows}

    @mapped
    def live_duplicates(self, keys: Iterable[tuple[Scope, str]]) -> dict[tuple[Scope, str], Entry]:
        """One read per scope of the keys: the live rows whose ``dedup_key`` is one of its hashes."""
        by_scope: dict[str, dict[str, tuple[Scope, str]]] = {}
        for scope, content_hash in keys:
            by_scope.setdefault(scope_key(scope), {})[content_hash] = (scope, content_hash)
        found: dict[tuple[Scope, str], Entry] = {}
        with self.conns.read() as conn:
            for key, hashes in by_scope.items():
                rows = self.select_in(conn, f"SELECT {ENTRY_COLS}, dedup_key FROM entries "
                                      "WHERE scope_key = ? AND invalid_at IS NULL AND {in}",
                                      "dedup_key", hashes, key)
                for row in rows:
                    found[hashes[row[-1]]] = self._entry(row[:-1])
        return found

    @mapped
    def entries_by_rid(self, rids: Iterable[int]) -> dict[int, Entry]:
        with self.conns.read() as conn:
            rows = self.select_in(conn, f"SELECT {ENTRY_COLS} FROM entries WHERE {{in}}", "rid",
                                  (int(r) for r in rids), cast="bigint")
        return {row[0]: self._entry(row) for row in rows}

    @mapped
    def update_entry(self, entry_id: str, scope: Scope, changes: dict[str, Any], *,
                     actor: str | None = None) -> Entry:
        """Apply column changes; an UPDATE history event when ``l2_full`` changes."""
        d = self.dialect
        with self.conns.write() as conn:
            old = self.get_entry(entry_id, scope)
            sets: dict[str, Any] = {}
            for key, value in changes.items():
                if key in _JSON_COLUMNS:
                    sets[key] = d.json(value)
                elif key in _TIME_COLUMNS:
                    sets[key] = d.time(value)
                elif key in _TEXT_COLUMNS:
                    sets[key] = d.text(value)
                else:
                    sets[key] = value
            now = d.now()
            sets["updated_at"] = now
            if "content_hash" in sets and sets["content_hash"] != old.content_hash:
                keeps_duplicates = conn.execute("SELECT dedup_key != content_hash FROM entries WHERE id = ?",
                                                (entry_id,)).fetchone()[0]
                sets["dedup_key"] = (f"{sets['content_hash']}:{entry_id}" if keeps_duplicates
                                     else sets["content_hash"])
                clash = conn.execute(
                    "SELECT id FROM entries WHERE scope_key = ? AND dedup_key = ? AND invalid_at IS NULL AND id != ?",
                    (scope_key(old.scope), sets["dedup_key"], entry_id)).fetchone()
                if clash:
                    raise DuplicateEntry(
                        f"Entry {clash[0]!r} of the same scope already has this text - update or delete that one",
                        existing_id=clash[0])
            assignments = ", ".join(f"{k} = ?" for k in sets)
            conn.execute(f"UPDATE entries SET {assignments} WHERE id = ?", [*sets.values(), entry_id])
            if "l2_full" in changes and changes["l2_full"] != old.l2_full:
                self._history(conn, entry_id, "UPDATE", old.l2_full, changes["l2_full"], actor, old.role, now)
            return self.get_entry(entry_id)

    @mapped
    def reinforce(self, entry_id: str, confidence: float) -> None:
        """Raise confidence; ``updated_at`` stays, since the content did not change."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET confidence = ? WHERE id = ?", (confidence, entry_id))

    @mapped
    def delete_entry(self, entry_id: str, scope: Scope, *, actor: str | None = None) -> Entry:
        with self.conns.write() as conn:
            entry = self.get_entry(entry_id, scope)
            self._delete_rows(conn, [entry], actor)
            return entry

    def _delete_rows(self, conn: Any, entries: list[Entry], actor: str | None) -> None:
        """Delete ``entries``, each after its DELETE event (the audit trigger reads its actor there)."""
        if not entries:
            return
        d = self.dialect
        now = d.now()
        conn.executemany(
            "INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, role) "
            "VALUES (?, ?, 'DELETE', ?, NULL, ?, ?, ?)",
            [(str(uuid.uuid4()), e.id, d.text(e.l2_full), now, actor, e.role) for e in entries])
        for part in d.chunks([e.id for e in entries]):
            cond, args = d.any_of("id", part)
            conn.execute(f"DELETE FROM entries WHERE {cond}", args)

    @mapped
    def delete_entries(self, flt: EntryFilter, *, actor: str | None = None) -> int:
        with self.conns.write() as conn:
            entries = self.list_entries(flt, limit=None)
            self._delete_rows(conn, entries, actor)
            return len(entries)

    @mapped
    def list_entries(self, flt: EntryFilter, *, limit: int | None = 100, offset: int = 0,
                     order: str = "asc") -> list[Entry]:
        where, args = self.where_sql(flt)
        direction = "DESC" if order == "desc" else "ASC"
        page, page_args = self.dialect.page(limit, offset)
        sql = f"SELECT {ENTRY_COLS} FROM entries e WHERE {where} ORDER BY e.rid {direction}{page}"
        with self.conns.read() as conn:
            return [self._entry(r) for r in conn.execute(sql, [*args, *page_args])]

    @mapped
    def count_entries(self, flt: EntryFilter) -> int:
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            return int(conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args).fetchone()[0])

    @mapped
    def history(self, entry_id: str) -> list[HistoryEvent]:
        d = self.dialect
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT id, entry_id, event, old_value, new_value, created_at, actor, role FROM entry_history "
                "WHERE entry_id = ? ORDER BY seq", (entry_id,)).fetchall()
        return [HistoryEvent(r[0], r[1], r[2], d.text_out(r[3]), d.text_out(r[4]), d.when(r[5]), r[6], r[7])  # type: ignore[arg-type]
                for r in rows]

    @mapped
    def live_subject_entries(self, scope: Scope, subject_key: str, exclude_id: str) -> list[Entry]:
        with self.conns.read() as conn:
            rows = conn.execute(
                f"SELECT {ENTRY_COLS} FROM entries WHERE scope_key = ? AND subject_key = ? "
                "AND invalid_at IS NULL AND id != ? ORDER BY rid", (scope_key(scope), subject_key, exclude_id)).fetchall()
        return [self._entry(r) for r in rows]

    @mapped
    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        """Mark ``old_id`` invalid from ``at`` and link it to its successor; never deletes."""
        d = self.dialect
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET invalid_at = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
                         (d.time(at), new_id, d.now(), old_id))
            conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) VALUES (?, ?, 'supersedes', ?) "
                         "ON CONFLICT DO NOTHING", (new_id, old_id, d.now()))

    @mapped
    def link_entries(self, src: str, dst: str, relation: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT DO NOTHING", (src, dst, relation, self.dialect.now()))

    @mapped
    def reset(self) -> None:
        with self.conns.write() as conn:
            for table in _TABLES:
                conn.execute(f"DELETE FROM {table}")
