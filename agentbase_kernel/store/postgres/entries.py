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
from ..rows import new_entry_values
from .archive import set_archived
from .core import ENTRY_COLS, _aware, fetch_one, jsonb, mapped, scope_key, text_in, text_out
from .planner import PlannerStatsMixin

__all__ = ["EntriesMixin"]


_TEXT_COLUMNS = frozenset({"l0_abstract", "l1_overview", "l2_full", "search_text", "search_context"})


def _when(value: datetime | None) -> datetime | None:
    return None if value is None else _aware(value)


class EntriesMixin(PlannerStatsMixin):
    """The ``entries`` and ``entry_history`` tables (and ``entry_links``)."""

    @mapped
    def insert_entry(self, row: EntryRow, *, history: bool = True) -> tuple[Entry, bool]:
        """Insert, or return the live exact duplicate of the same scope: ``(entry, inserted)``.

        ``ON CONFLICT DO NOTHING`` makes racing writers of one text agree on one row: the loser
        waits for the winner's commit and then reads its row.
        """
        now = _when(row.get("created_at")) or utcnow()
        entry_id = row.get("id") or str(uuid.uuid4())
        values = new_entry_values(row, entry_id, now, json_value=jsonb, when=_when, text=text_in)
        cols = ", ".join(values)
        marks = ", ".join(["%s"] * len(values))
        with self.conns.write() as conn:
            if history:  # the entry and its ADD event in one round trip
                inserted = conn.execute(
                    f"WITH ins AS (INSERT INTO entries ({cols}) VALUES ({marks}) ON CONFLICT DO NOTHING "
                    f"RETURNING {ENTRY_COLS}), event AS (INSERT INTO entry_history (id, entry_id, event, old_value, "
                    "new_value, created_at, actor, role) SELECT %s, id, 'ADD', NULL, %s, %s, %s, %s FROM ins) "
                    "SELECT * FROM ins",
                    [*values.values(), str(uuid.uuid4()), values["l2_full"], now, row.get("actor"),
                     row.get("role")]).fetchone()
            else:
                inserted = conn.execute(
                    f"INSERT INTO entries ({cols}) VALUES ({marks}) ON CONFLICT DO NOTHING RETURNING {ENTRY_COLS}",
                    list(values.values())).fetchone()
            if inserted is None:
                existing = conn.execute(
                    f"SELECT {ENTRY_COLS} FROM entries WHERE scope_key = %s AND dedup_key = %s "
                    "AND invalid_at IS NULL", (values["scope_key"], values["dedup_key"])).fetchone()
                if existing is None:  # the id itself collided
                    raise InvalidArgument(f"An entry with id {values['id']!r} already exists")
                found = self._entry(existing)
                if found.archived_at is not None:  # said again: back in search (lifecycle, archive.py)
                    set_archived(self, conn, [found.id], archived=False, reason="written again",
                                 actor=row.get("actor"))
                    found = self.get_entry(found.id)
                return found, False
            self._note_written(1)
            return self._entry(inserted), True

    @mapped
    def get_entry(self, entry_id: str, scope: Scope | None = None) -> Entry:
        flt = EntryFilter(scope=scope or Scope(), include_expired=True, include_invalid=True, archived=None)
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {ENTRY_COLS} FROM entries e WHERE e.id = %s AND {where}",
                               [entry_id, *args]).fetchone()
        if row is None:
            raise EntryNotFound(entry_id)
        return self._entry(row)

    @mapped
    def get_entries(self, entry_ids: Iterable[str]) -> dict[str, Entry]:
        ids = list(dict.fromkeys(entry_ids))
        if not ids:
            return {}
        with self.conns.read() as conn:
            rows = conn.execute(f"SELECT {ENTRY_COLS} FROM entries WHERE id = ANY(%s)", (ids,)).fetchall()
        return {row[1]: self._entry(row) for row in rows}

    @mapped
    def entries_by_rid(self, rids: Iterable[int]) -> dict[int, Entry]:
        wanted = list(dict.fromkeys(int(r) for r in rids))
        if not wanted:
            return {}
        with self.conns.read() as conn:
            rows = conn.execute(f"SELECT {ENTRY_COLS} FROM entries WHERE rid = ANY(%s::bigint[])", (wanted,)).fetchall()
        return {row[0]: self._entry(row) for row in rows}

    @mapped
    def update_entry(self, entry_id: str, scope: Scope, changes: dict[str, Any], *,
                     actor: str | None = None) -> Entry:
        """Apply column changes; an UPDATE history event when ``l2_full`` changes."""
        with self.conns.write() as conn:
            old = self.get_entry(entry_id, scope)
            sets: dict[str, Any] = {}
            for key, value in changes.items():
                if key in ("tags", "metadata", "flags", "event_dates"):
                    sets[key] = jsonb(value)
                elif key in ("expires_at", "invalid_at", "valid_from", "created_at", "updated_at"):
                    sets[key] = _when(value)
                elif key in _TEXT_COLUMNS:
                    sets[key] = text_in(value)
                else:
                    sets[key] = value
            now = utcnow()
            sets["updated_at"] = now
            if "content_hash" in sets and sets["content_hash"] != old.content_hash:
                keeps_duplicates = fetch_one(conn.execute("SELECT dedup_key != content_hash FROM entries WHERE id = %s",
                                                          (entry_id,)), f"entry {entry_id!r}")[0]
                sets["dedup_key"] = (f"{sets['content_hash']}:{entry_id}" if keeps_duplicates
                                     else sets["content_hash"])
                clash = conn.execute(
                    "SELECT id FROM entries WHERE scope_key = %s AND dedup_key = %s AND invalid_at IS NULL AND id != %s",
                    (scope_key(old.scope), sets["dedup_key"], entry_id)).fetchone()
                if clash:
                    raise DuplicateEntry(
                        f"Entry {clash[0]!r} of the same scope already has this text - update or delete that one",
                        existing_id=clash[0])
            assignments = ", ".join(f"{k} = %s" for k in sets)
            conn.execute(f"UPDATE entries SET {assignments} WHERE id = %s", [*sets.values(), entry_id])
            if "l2_full" in changes and changes["l2_full"] != old.l2_full:
                self._history(conn, entry_id, "UPDATE", old.l2_full, changes["l2_full"], actor, old.role, now)
            return self.get_entry(entry_id)

    @mapped
    def reinforce(self, entry_id: str, confidence: float) -> None:
        """Raise confidence; ``updated_at`` stays, since the content did not change."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET confidence = %s WHERE id = %s", (confidence, entry_id))

    @mapped
    def delete_entry(self, entry_id: str, scope: Scope, *, actor: str | None = None) -> Entry:
        with self.conns.write() as conn:
            entry = self.get_entry(entry_id, scope)
            self._delete_rows(conn, [entry], actor)
            return entry

    def _delete_rows(self, conn: Any, entries: list[Entry], actor: str | None) -> None:
        if not entries:
            return
        ids = [e.id for e in entries]
        # the DELETE events first (the audit trigger reads their actor), all in one statement
        conn.execute("INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, role) "
                     "SELECT gen_random_uuid()::text, x.id, 'DELETE', x.text, NULL, %s, %s, x.role "
                     "FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS x(id, text, role, n) ORDER BY x.n",
                     (utcnow(), actor, ids, [text_in(e.l2_full) for e in entries], [e.role for e in entries]))
        conn.execute("DELETE FROM entries WHERE id = ANY(%s)", (ids,))

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
        sql = f"SELECT {ENTRY_COLS} FROM entries e WHERE {where} ORDER BY e.rid {direction}"
        if limit is not None:
            sql += " LIMIT %s"
            args = [*args, limit]
        if offset:
            sql += " OFFSET %s"
            args = [*args, offset]
        with self.conns.read() as conn:
            return [self._entry(r) for r in conn.execute(sql, args)]

    @mapped
    def count_entries(self, flt: EntryFilter) -> int:
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            return int(fetch_one(conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args), "count_entries")[0])

    @mapped
    def history(self, entry_id: str) -> list[HistoryEvent]:
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT id, entry_id, event, old_value, new_value, created_at, actor, role FROM entry_history "
                "WHERE entry_id = %s ORDER BY seq", (entry_id,)).fetchall()
        return [HistoryEvent(r[0], r[1], r[2], text_out(r[3]), text_out(r[4]), r[5], r[6], r[7]) for r in rows]

    @mapped
    def live_subject_entries(self, scope: Scope, subject_key: str, exclude_id: str) -> list[Entry]:
        with self.conns.read() as conn:
            rows = conn.execute(
                f"SELECT {ENTRY_COLS} FROM entries WHERE scope_key = %s AND subject_key = %s "
                "AND invalid_at IS NULL AND id != %s ORDER BY rid", (scope_key(scope), subject_key, exclude_id)).fetchall()
        return [self._entry(r) for r in rows]

    @mapped
    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        """Mark ``old_id`` invalid from ``at`` and link it to its successor; never deletes."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET invalid_at = %s, superseded_by = %s, updated_at = %s WHERE id = %s",
                         (_aware(at), new_id, utcnow(), old_id))
            conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) VALUES (%s, %s, 'supersedes', %s) "
                         "ON CONFLICT DO NOTHING", (new_id, old_id, utcnow()))

    @mapped
    def link_entries(self, src: str, dst: str, relation: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) VALUES (%s, %s, %s, %s) "
                         "ON CONFLICT DO NOTHING", (src, dst, relation, utcnow()))

    @mapped
    def reset(self) -> None:
        with self.conns.write() as conn:
            for table in ("trace_steps", "retrieval_traces", "entity_links", "entity_entries", "entities",
                          "entry_links", "entry_sources", "session_entries", "messages", "sessions",
                          "entry_history", "entries", "embeddings"):
                conn.execute(f"DELETE FROM {table}")
