"""Sessions, their messages, and the links from messages and sessions to the entries they made."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any

from ...errors import MessageNotFound, SessionNotFound
from ...records import Message, Provenance, Scope, Session
from ..base import EntryFilter, iso, parse_iso, utcnow
from ..protocol import MessageRow
from ..rows import message_from_row, session_from_row
from .core import dumps, mapped, select_in
from .entries import EntriesMixin

__all__ = ["SessionsMixin"]


class SessionsMixin(EntriesMixin):
    """``sessions``, ``messages``, ``entry_sources`` and ``session_entries``."""

    def _session(self, row: Any) -> Session:
        return session_from_row(row, data=json.loads, when=parse_iso)

    _SESSION_COLS = "id, user_id, agent_id, project_id, metadata, created_at, updated_at, committed_at, summary_entry_id"

    @mapped
    def ensure_session(self, session_id: str, scope: Scope, metadata: dict[str, Any] | None) -> tuple[Session, bool]:
        with self.conns.write() as conn:
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is not None:
                return self._session(row), False
            now = iso(utcnow())
            conn.execute(
                "INSERT INTO sessions (id, user_id, agent_id, project_id, metadata, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, scope.user_id, scope.agent_id, scope.project_id, dumps(metadata or {}), now, now))
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            return self._session(row), True

    @mapped
    def find_session(self, session_id: str) -> Session | None:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return self._session(row) if row else None

    @mapped
    def list_sessions(self, scope: Scope, limit: int | None, offset: int) -> list[Session]:
        clauses, args = [], []
        for col in ("user_id", "agent_id", "project_id"):
            value = getattr(scope, col)
            if value is not None:
                clauses.append(f"{col} = ?")
                args.append(value)
        sql = f"SELECT {self._SESSION_COLS} FROM sessions WHERE {' AND '.join(clauses) or '1'} ORDER BY rowid"
        sql += " LIMIT ? OFFSET ?"
        args.extend([-1 if limit is None else limit, offset])
        with self.conns.read() as conn:
            return [self._session(r) for r in conn.execute(sql, args)]

    @mapped
    def update_session(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       committed: bool = False, summary_entry_id: str | None = None) -> Session:
        with self.conns.write() as conn:
            sets, args = ["updated_at = ?"], [iso(utcnow())]
            if metadata is not None:
                sets.append("metadata = ?")
                args.append(dumps(metadata))
            if committed:
                sets.append("committed_at = ?")
                args.append(iso(utcnow()))
            if summary_entry_id is not None:
                sets.append("summary_entry_id = ?")
                args.append(summary_entry_id)
            cur = conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", [*args, session_id])
            if cur.rowcount == 0:
                raise SessionNotFound(session_id)
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            return self._session(row)

    @mapped
    def delete_session(self, session_id: str) -> None:
        with self.conns.write() as conn:
            self._delete_messages(conn, session_id, None)
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    _MSG_COLS = "id, session_id, seq, role, content, name, metadata, payload, status, created_at, entry_id"

    def _message(self, row: Any) -> Message:
        return message_from_row(row, data=json.loads, when=parse_iso)

    @mapped
    def insert_message(self, session_id: str, row: MessageRow, position: int | None = None) -> Message:
        with self.conns.write() as conn:
            if position is None:
                seq = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?",
                                   (session_id,)).fetchone()[0]
            else:
                seqs = [r[0] for r in conn.execute(
                    "SELECT seq FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))]
                if position < 0:
                    position = max(0, len(seqs) + position)
                if position >= len(seqs):
                    seq = (seqs[-1] + 1) if seqs else 1
                else:
                    seq = seqs[position]
                    # shift in two steps so UNIQUE (session_id, seq) never sees a clash
                    conn.execute("UPDATE messages SET seq = -(seq + 1) WHERE session_id = ? AND seq >= ?",
                                 (session_id, seq))
                    conn.execute("UPDATE messages SET seq = -seq WHERE session_id = ? AND seq < 0", (session_id,))
            message_id = row.get("id") or f"msg_{uuid.uuid4().hex}"
            conn.execute(
                "INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (message_id, session_id, seq, row["role"], row["content"], row.get("name"),
                 dumps(row.get("metadata") or {}),
                 None if row.get("payload") is None else dumps(row["payload"]),
                 row.get("status", "active"), iso(row.get("created_at") or utcnow())))
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (iso(utcnow()), session_id))
            return self.get_message(session_id, message_id)

    @mapped
    def attach_entry(self, message_id: str, entry_id: str, session_id: str, relation: str = "turn") -> None:
        """Link a message's turn entry: message.entry_id, provenance and the session link."""
        with self.conns.write() as conn:
            conn.execute("UPDATE messages SET entry_id = ? WHERE id = ?", (entry_id, message_id))
            conn.execute("INSERT OR IGNORE INTO entry_sources (entry_id, message_id) VALUES (?, ?)", (entry_id, message_id))
            conn.execute("INSERT OR IGNORE INTO session_entries (session_id, entry_id, relation) VALUES (?, ?, ?)",
                         (session_id, entry_id, relation))

    @mapped
    def link_source(self, entry_id: str, message_id: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT OR IGNORE INTO entry_sources (entry_id, message_id) VALUES (?, ?)", (entry_id, message_id))

    @mapped
    def link_session(self, session_id: str, entry_id: str, relation: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT OR IGNORE INTO session_entries (session_id, entry_id, relation) VALUES (?, ?, ?)",
                         (session_id, entry_id, relation))

    @mapped
    def get_message(self, session_id: str, message_id: str) -> Message:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {self._MSG_COLS} FROM messages WHERE id = ? AND session_id = ?",
                               (message_id, session_id)).fetchone()
        if row is None:
            raise MessageNotFound(message_id, session_id)
        return self._message(row)

    @mapped
    def message_sessions(self, message_ids: Iterable[str]) -> dict[str, str]:
        """The session of each of these message ids that exists: ``{message_id: session_id}``."""
        with self.conns.read() as conn:
            return dict(select_in(conn, "SELECT id, session_id FROM messages WHERE id IN ({marks})", message_ids))

    @mapped
    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> list[Message]:
        clauses, args = ["session_id = ?"], [session_id]
        if status is not None:
            clauses.append("status = ?")
            args.append(status)
        desc = order == "desc"
        with self.conns.read() as conn:
            for cursor, is_after in ((after, True), (before, False)):
                if cursor is None:
                    continue
                row = conn.execute("SELECT seq FROM messages WHERE id = ? AND session_id = ?",
                                   (cursor, session_id)).fetchone()
                if row is None:
                    raise MessageNotFound(cursor, session_id)
                forward = is_after != desc
                clauses.append("seq > ?" if forward else "seq < ?")
                args.append(row[0])
            sql = (f"SELECT {self._MSG_COLS} FROM messages WHERE {' AND '.join(clauses)} "
                   f"ORDER BY seq {'DESC' if desc else 'ASC'} LIMIT ? OFFSET ?")
            rows = conn.execute(sql, [*args, -1 if limit is None else limit, offset]).fetchall()
        return [self._message(r) for r in rows]

    @mapped
    def count_messages(self, session_id: str, status: str | None = None) -> int:
        sql, args = "SELECT count(*) FROM messages WHERE session_id = ?", [session_id]
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        with self.conns.read() as conn:
            return int(conn.execute(sql, args).fetchone()[0])

    @mapped
    def update_message(self, session_id: str, message_id: str, changes: dict[str, Any]) -> Message:
        with self.conns.write() as conn:
            self.get_message(session_id, message_id)
            sets, args = [], []
            for key, value in changes.items():
                sets.append(f"{key} = ?")
                args.append(dumps(value) if key in ("metadata", "payload") else value)
            if sets:
                conn.execute(f"UPDATE messages SET {', '.join(sets)} WHERE id = ?", [*args, message_id])
            return self.get_message(session_id, message_id)

    @mapped
    def delete_message(self, session_id: str, message_id: str) -> Message:
        with self.conns.write() as conn:
            message = self.get_message(session_id, message_id)
            self._drop_messages(conn, [message])
            return message

    @mapped
    def delete_messages(self, session_id: str, status: str | None = None) -> int:
        with self.conns.write() as conn:
            return self._delete_messages(conn, session_id, status)

    def _delete_messages(self, conn: Any, session_id: str, status: str | None) -> int:
        messages = self.list_messages(session_id, status=status)
        self._drop_messages(conn, messages)
        return len(messages)

    def _drop_messages(self, conn: Any, messages: list[Message]) -> None:
        """Delete messages and the entries that only they produced (turns and facts)."""
        if not messages:
            return
        ids = [m.id for m in messages]
        derived: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            derived.update(r[0] for r in conn.execute(
                f"SELECT entry_id FROM entry_sources WHERE message_id IN ({','.join('?' * len(chunk))})", chunk))
            derived.update(m.entry_id for m in messages[i : i + 500] if m.entry_id)
            conn.execute(f"DELETE FROM messages WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        orphans = [eid for eid in derived if conn.execute(
            "SELECT 1 FROM entry_sources WHERE entry_id = ? UNION ALL SELECT 1 FROM messages WHERE entry_id = ? LIMIT 1",
            (eid, eid)).fetchone() is None]
        existing = list(self.get_entries(orphans).values())
        self._delete_rows(conn, existing, None)

    @mapped
    def provenance(self, entry_ids: Iterable[str]) -> dict[str, list[Provenance]]:
        ids = list(dict.fromkeys(entry_ids))
        out: dict[str, list[Provenance]] = {i: [] for i in ids}
        with self.conns.read() as conn:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                for entry_id, mid, sid, role, meta in conn.execute(
                        "SELECT s.entry_id, m.id, m.session_id, m.role, m.metadata FROM entry_sources s "
                        f"JOIN messages m ON m.id = s.message_id WHERE s.entry_id IN ({','.join('?' * len(chunk))}) "
                        "ORDER BY m.rid", chunk):
                    out[entry_id].append(Provenance(mid, sid, role, json.loads(meta)))
        return out

    @mapped
    def neighbour_turn_hashes(self, rids: Iterable[int]) -> dict[int, tuple[str | None, str | None]]:
        """For each turn entry (by rid), the content hashes of the turns just before and after it."""
        def near(alias: str, op: str, agg: str) -> str:
            return (f"LEFT JOIN messages {alias}m ON {alias}m.session_id = m.session_id AND {alias}m.seq = "
                    f"(SELECT {agg}(seq) FROM messages WHERE session_id = m.session_id AND seq {op} m.seq) "
                    f"LEFT JOIN entries {alias}e ON {alias}e.id = {alias}m.entry_id ")

        with self.conns.read() as conn:
            rows = select_in(
                conn,
                "SELECT e.rid, pe.content_hash, ne.content_hash FROM entries e JOIN messages m ON m.entry_id = e.id "
                + near("p", "<", "max") + near("n", ">", "min") + "WHERE e.rid IN ({marks})", rids)
        return {int(rid): (prev, nxt) for rid, prev, nxt in rows if prev or nxt}

    @mapped
    def append_search_context(self, entry_id: str, text: str) -> None:
        """Add words to an entry's FTS context column (a reply that came after it); its content is unchanged."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET search_context = search_context || ? WHERE id = ?", (text, entry_id))

    @mapped
    def session_neighbours(self, entry_ids: list[str], window: int, flt: EntryFilter) -> dict[str, list[str]]:
        """For each turn entry, the turn entries within ``window`` turns of it in its session."""
        where, args = self.where_sql(flt)
        out: dict[str, list[str]] = {}
        with self.conns.read() as conn:
            for entry_id in entry_ids:
                row = conn.execute("SELECT session_id, seq FROM messages WHERE entry_id = ? ORDER BY rid LIMIT 1",
                                   (entry_id,)).fetchone()
                if row is None:
                    continue
                rows = conn.execute(
                    f"SELECT DISTINCT e.id FROM messages m JOIN entries e ON e.id = m.entry_id "
                    f"WHERE m.session_id = ? AND m.seq BETWEEN ? AND ? AND e.id != ? AND {where} ORDER BY m.seq",
                    [row[0], row[1] - window, row[1] + window, entry_id, *args]).fetchall()
                out[entry_id] = [r[0] for r in rows]
        return out

    @mapped
    def session_linked(self, session_id: str, flt: EntryFilter, relation: str | None = None) -> list[str]:
        where, args = self.where_sql(flt)
        sql = (f"SELECT e.id FROM session_entries s JOIN entries e ON e.id = s.entry_id "
               f"WHERE s.session_id = ? AND {where}")
        params = [session_id, *args]
        if relation:
            sql += " AND s.relation = ?"
            params.append(relation)
        with self.conns.read() as conn:
            return [r[0] for r in conn.execute(sql + " ORDER BY e.rid", params)]
