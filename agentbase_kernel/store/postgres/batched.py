"""Calls done in one statement on PostgreSQL where the SQL core takes several.

On a server each round trip is most of a small write's cost (SQLite, in the process, has none), so
these write with data-modifying ``WITH`` clauses, ``unnest`` arrays and ``LATERAL`` joins: an entry
with its ADD event, a message appended with its sequence number, a turn's three links, a bulk
write's entities deferred to its commit, and a ``find``'s session neighbours.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from ...records import Entry, Message
from ..base import EntryFilter
from ..protocol import EntryRow, MessageRow
from ..sql import ENTRY_COLS, mapped
from ..sql.entities import EntitiesMixin
from ..sql.sessions import MSG_COLS, SessionsMixin
from .connection import PgConnections

__all__ = ["BatchedMixin"]


class BatchedMixin(SessionsMixin, EntitiesMixin):
    """One-statement versions of ``insert_entry``, ``insert_message``, ``attach_entry``, the entity
    rows of ``add_entities``, and ``session_neighbours``."""

    conns: PgConnections

    @mapped
    def insert_entry(self, row: EntryRow, *, history: bool = True) -> tuple[Entry, bool]:
        """Insert, or return the live exact duplicate of the same scope: ``(entry, inserted)``.

        ``ON CONFLICT DO NOTHING`` makes racing writers of one text agree on one row: the loser
        waits for the winner's commit and then reads its row.
        """
        entry_id, now, values = self._new_entry(row)
        cols = ", ".join(values)
        marks = ", ".join("?" * len(values))
        insert = f"INSERT INTO entries ({cols}) VALUES ({marks}) ON CONFLICT DO NOTHING RETURNING {ENTRY_COLS}"
        with self.conns.write() as conn:
            if history:  # the entry and its ADD event in one round trip
                inserted = conn.execute(
                    f"WITH ins AS ({insert}), event AS (INSERT INTO entry_history (id, entry_id, event, old_value, "
                    "new_value, created_at, actor, role) SELECT ?, id, 'ADD', NULL, ?, ?, ?, ? FROM ins) "
                    "SELECT * FROM ins",
                    [*values.values(), str(uuid.uuid4()), values["l2_full"], now, row.get("actor"),
                     row.get("role")]).fetchone()
            else:
                inserted = conn.execute(insert, list(values.values())).fetchone()
            if inserted is None:
                return self._live_duplicate(conn, values, row.get("actor")), False
            self._rows_written(1)
            return self._entry(inserted), True

    @mapped
    def insert_message(self, session_id: str, row: MessageRow, position: int | None = None) -> Message:
        with self.conns.write() as conn:
            # the session row's lock orders concurrent appends to one session (seq stays unique)
            conn.execute("SELECT 1 FROM sessions WHERE id = ? FOR UPDATE", (session_id,))
            message_id = row.get("id") or f"msg_{uuid.uuid4().hex}"
            values = self._message_values(row)
            if position is None:  # an append: the next seq, the row and the session's time in one statement
                inserted = conn.execute(
                    "WITH ins AS (INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, "
                    "status, created_at) SELECT ?, ?, coalesce(max(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ? "
                    f"FROM messages WHERE session_id = ? RETURNING {MSG_COLS}), "
                    "touched AS (UPDATE sessions SET updated_at = ? WHERE id = ?) SELECT * FROM ins",
                    (message_id, session_id, *values, session_id, self.dialect.now(), session_id)).fetchone()
                return self._message(inserted)
            seq = self._message_seq(conn, session_id, position)
            inserted = conn.execute(
                "INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, created_at) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {MSG_COLS}",
                (message_id, session_id, seq, *values)).fetchone()
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (self.dialect.now(), session_id))
            return self._message(inserted)

    @mapped
    def attach_entry(self, message_id: str, entry_id: str, session_id: str, relation: str = "turn") -> None:
        """Link a message's turn entry: message.entry_id, provenance and the session link (one
        statement: one round trip per turn of a chat's ingest)."""
        with self.conns.write() as conn:
            conn.execute("WITH turn AS (UPDATE messages SET entry_id = ? WHERE id = ?), "
                         "source AS (INSERT INTO entry_sources (entry_id, message_id) VALUES (?, ?) ON CONFLICT DO NOTHING) "
                         "INSERT INTO session_entries (session_id, entry_id, relation) VALUES (?, ?, ?) "
                         "ON CONFLICT DO NOTHING", (entry_id, message_id, entry_id, message_id, session_id, entry_id, relation))

    # -- entities ----------------------------------------------------------------------------------
    def _entity_ids(self, conn: Any, entities: list[tuple[str, str, str]]) -> list[int]:
        """Ids of ``(norm, label, text)`` entities, made where missing (racing writers agree on one
        row), in two statements whatever their number."""
        norms, labels, texts = (list(col) for col in zip(*entities))
        conn.execute("INSERT INTO entities (norm, label, text) SELECT * FROM unnest(?::text[], ?::text[], ?::text[]) "
                     "ON CONFLICT (norm, label) DO NOTHING", (norms, labels, texts))
        found = {(n, lab): int(i) for i, n, lab in conn.execute(
            "SELECT id, norm, label FROM entities WHERE norm = ANY(?)", (list(set(norms)),))}
        return [found[(n, lab)] for n, lab in zip(norms, labels)]

    def _entities_can_wait(self) -> bool:
        """Inside a caller's transaction (a bulk ``add_memories``) the rows wait for its commit and go
        in with every other entry's in one statement: nothing reads them back meanwhile (``errors.py``
        writes them first for any call that might), and they commit or roll back with the entries."""
        return self.conns.deferring

    def _put_entities(self, conn: Any, entry_id: str, entities: list[tuple[str, str, str]], observed_at: Any, *,
                      wait: bool) -> None:
        items = [(entry_id, norm, label, text, observed_at) for norm, label, text in set(entities)]
        if wait:
            self.conns.defer("entities", self._write_entities).extend(items)
        else:
            self._write_entities(conn, items)

    def _write_entities(self, conn: Any, items: list[tuple[str, str, str, str, datetime]]) -> None:
        """``(entry id, norm, label, text, observed at)`` rows: the entities made where missing, each
        tied to its entries and linked to those it co-occurs with - in one statement unless it cannot
        see one of them. An entity another writer committed while the statement ran is skipped by
        ``ON CONFLICT`` yet invisible to the statement's snapshot; then the ids are read again and the
        ties made per entry (what the statement did make stays: every insert is ``ON CONFLICT DO NOTHING``)."""
        # entities made in a fixed order, so two writers sharing some never wait on each other in a cycle
        items = sorted(items, key=lambda i: (i[1], i[2], i[3], i[0]))
        entry_ids, norms, labels, texts, seen = (list(col) for col in zip(*items))
        wanted = len(set(zip(norms, labels)))
        found = conn.execute(
            "WITH input AS (SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[]) "
            "WITH ORDINALITY AS i(entry_id, norm, label, text, at, n)), "
            "made AS (INSERT INTO entities (norm, label, text) SELECT norm, label, text FROM input ORDER BY n "
            "ON CONFLICT (norm, label) DO NOTHING RETURNING id, norm, label), "
            "ids AS (SELECT id, norm, label FROM made UNION SELECT x.id, x.norm, x.label FROM entities x "
            "WHERE (x.norm, x.label) IN (SELECT norm, label FROM input)), "
            "ties AS (SELECT DISTINCT i.entry_id, ids.id, i.at FROM input i JOIN ids ON ids.norm = i.norm AND ids.label = i.label), "
            "tied AS (INSERT INTO entity_entries (entity_id, entry_id) SELECT id, entry_id FROM ties ON CONFLICT DO NOTHING), "
            "linked AS (INSERT INTO entity_links (a, b, entry_id, observed_at) SELECT a.id, b.id, a.entry_id, a.at "
            "FROM ties a JOIN ties b ON b.entry_id = a.entry_id AND a.id < b.id ON CONFLICT DO NOTHING) "
            "SELECT count(*) FROM ids", (entry_ids, norms, labels, texts, seen)).fetchone()[0]
        if int(found) == wanted:
            return
        ids = dict(zip(zip(norms, labels), self._entity_ids(conn, [(n, lab, t) for _, n, lab, t, _ in items])))
        by_entry: dict[str, tuple[list[int], datetime]] = {}
        for entry_id, norm, label, _text, at in items:
            by_entry.setdefault(entry_id, ([], at))[0].append(ids[(norm, label)])
        for entry_id, (entity_ids, at) in by_entry.items():
            self._link_entities(conn, entry_id, entity_ids, at)

    # -- reads ---------------------------------------------------------------------------------
    @mapped
    def session_neighbours(self, entry_ids: list[str], window: int, flt: EntryFilter) -> dict[str, list[str]]:
        """For each turn entry, the turn entries within ``window`` turns of it in its session (one
        statement for all of them: a ``find`` asks for its best candidates at once)."""
        if not entry_ids:
            return {}
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            rows = conn.execute(
                "WITH anchor AS (SELECT x.id, a.session_id, a.seq FROM unnest(?::text[]) AS x(id) CROSS JOIN LATERAL "
                "(SELECT session_id, seq FROM messages WHERE entry_id = x.id ORDER BY rid LIMIT 1) a) "
                "SELECT an.id, n.id FROM anchor an LEFT JOIN LATERAL (SELECT e.id, min(m.seq) AS seq "
                "FROM messages m JOIN entries e ON e.id = m.entry_id WHERE m.session_id = an.session_id "
                f"AND m.seq BETWEEN an.seq - ? AND an.seq + ? AND e.id != an.id AND {where} GROUP BY e.id) n ON TRUE "
                "ORDER BY an.id, n.seq", [list(entry_ids), window, window, *args]).fetchall()
        found: dict[str, list[str]] = {}
        for anchor, neighbour in rows:
            near = found.setdefault(anchor, [])
            if neighbour is not None:
                near.append(neighbour)
        return {entry_id: found[entry_id] for entry_id in dict.fromkeys(entry_ids) if entry_id in found}
