"""Sessions, their messages, and the links from messages and sessions to the entries they made."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from ...errors import InvalidArgument, MessageNotFound, SessionNotFound
from ...records import Message, Provenance, Scope, Session
from ..base import EntryFilter, utcnow
from ..protocol import MessageRow
from ..rows import message_from_row, session_from_row
from .core import mapped
from .entries import EntriesMixin

__all__ = ["MSG_COLS", "SESSION_COLS", "SessionsMixin"]

SESSION_COLS = "id, user_id, agent_id, project_id, metadata, created_at, updated_at, committed_at, summary_entry_id"
MSG_COLS = "id, session_id, seq, role, content, name, metadata, payload, status, created_at, entry_id"
_MESSAGE_COLUMNS = frozenset({"role", "content", "name", "metadata", "payload", "status", "created_at", "entry_id"})


class SessionsMixin(EntriesMixin):
    """``sessions``, ``messages``, ``entry_sources`` and ``session_entries``."""

    def _session(self, row: Any) -> Session:
        return session_from_row(row, data=self.dialect.data, when=self.dialect.when)

    def _message(self, row: Any) -> Message:
        d = self.dialect
        return message_from_row(row, data=d.data, when=d.when, text=d.required_text)

    @mapped
    def ensure_session(self, session_id: str, scope: Scope, metadata: dict[str, Any] | None) -> tuple[Session, bool]:
        d = self.dialect
        with self.conns.write() as conn:
            now = d.now()
            # racing writers of one session agree on one row
            created = conn.execute(
                "INSERT INTO sessions (id, user_id, agent_id, project_id, metadata, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (session_id, scope.user_id, scope.agent_id, scope.project_id, d.json(metadata or {}), now, now))
            row = conn.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            return self._session(row), created.rowcount > 0

    @mapped
    def find_session(self, session_id: str) -> Session | None:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return self._session(row) if row else None

    @mapped
    def list_sessions(self, scope: Scope, limit: int | None, offset: int) -> list[Session]:
        d = self.dialect
        clauses: list[str] = []
        args: list[Any] = []
        for col in ("user_id", "agent_id", "project_id"):
            value = getattr(scope, col)
            if value is not None:
                clauses.append(f"{col} = ?")
                args.append(value)
        page, page_args = d.page(limit, offset)
        sql = f"SELECT {SESSION_COLS} FROM sessions WHERE {' AND '.join(clauses) or d.true} ORDER BY {d.row_order}{page}"
        with self.conns.read() as conn:
            return [self._session(r) for r in conn.execute(sql, [*args, *page_args])]

    @mapped
    def update_session(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       committed: bool = False, summary_entry_id: str | None = None) -> Session:
        d = self.dialect
        with self.conns.write() as conn:
            sets: list[str] = ["updated_at = ?"]
            args: list[Any] = [d.now()]
            if metadata is not None:
                sets.append("metadata = ?")
                args.append(d.json(metadata))
            if committed:
                sets.append("committed_at = ?")
                args.append(d.now())
            if summary_entry_id is not None:
                sets.append("summary_entry_id = ?")
                args.append(summary_entry_id)
            cur = conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", [*args, session_id])
            if cur.rowcount == 0:
                raise SessionNotFound(session_id)
            row = conn.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            return self._session(row)

    @mapped
    def delete_session(self, session_id: str) -> None:
        with self.conns.write() as conn:
            self._delete_messages(conn, session_id, None)
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def _message_values(self, row: MessageRow) -> tuple[Any, ...]:
        """``role, content, name, metadata, payload, status, created_at`` of a new message, as parameters."""
        d = self.dialect
        return (row["role"], d.text(row["content"]), row.get("name"), d.json(row.get("metadata") or {}),
                None if row.get("payload") is None else d.json(row["payload"]), row.get("status", "active"),
                d.time(row.get("created_at") or utcnow()))

    def _message_seq(self, conn: Any, session_id: str, position: int) -> int:
        """The ``seq`` a message inserted at ``position`` takes; the later messages move up one."""
        seqs = [r[0] for r in conn.execute("SELECT seq FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))]
        if position < 0:
            position = max(0, len(seqs) + position)
        if position >= len(seqs):
            return int(seqs[-1] + 1) if seqs else 1
        seq = int(seqs[position])
        # shift in two steps so UNIQUE (session_id, seq) never sees a clash
        conn.execute("UPDATE messages SET seq = -(seq + 1) WHERE session_id = ? AND seq >= ?", (session_id, seq))
        conn.execute("UPDATE messages SET seq = -seq WHERE session_id = ? AND seq < 0", (session_id,))
        return seq

    @mapped
    def insert_message(self, session_id: str, row: MessageRow, position: int | None = None) -> Message:
        with self.conns.write() as conn:
            if position is None:
                seq = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?",
                                   (session_id,)).fetchone()[0]
            else:
                seq = self._message_seq(conn, session_id, position)
            message_id = row.get("id") or f"msg_{uuid.uuid4().hex}"
            conn.execute(
                "INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (message_id, session_id, seq, *self._message_values(row)))
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (self.dialect.now(), session_id))
            return self.get_message(session_id, message_id)

    @mapped
    def attach_entry(self, message_id: str, entry_id: str, session_id: str, relation: str = "turn") -> None:
        """Link a message's turn entry: message.entry_id, provenance and the session link."""
        with self.conns.write() as conn:
            conn.execute("UPDATE messages SET entry_id = ? WHERE id = ?", (entry_id, message_id))
            self._link(conn, entry_id, message_id, session_id, relation)

    def _link(self, conn: Any, entry_id: str, message_id: str | None, session_id: str | None, relation: str) -> None:
        if message_id is not None:
            conn.execute("INSERT INTO entry_sources (entry_id, message_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                         (entry_id, message_id))
        if session_id is not None:
            conn.execute("INSERT INTO session_entries (session_id, entry_id, relation) VALUES (?, ?, ?) "
                         "ON CONFLICT DO NOTHING", (session_id, entry_id, relation))

    @mapped
    def link_source(self, entry_id: str, message_id: str) -> None:
        with self.conns.write() as conn:
            self._link(conn, entry_id, message_id, None, "")

    @mapped
    def link_session(self, session_id: str, entry_id: str, relation: str) -> None:
        with self.conns.write() as conn:
            self._link(conn, entry_id, None, session_id, relation)

    @mapped
    def get_message(self, session_id: str, message_id: str) -> Message:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {MSG_COLS} FROM messages WHERE id = ? AND session_id = ?",
                               (message_id, session_id)).fetchone()
        if row is None:
            raise MessageNotFound(message_id, session_id)
        return self._message(row)

    @mapped
    def message_sessions(self, message_ids: Iterable[str]) -> dict[str, str]:
        """The session of each of these message ids that exists: ``{message_id: session_id}``."""
        with self.conns.read() as conn:
            return dict(self.select_in(conn, "SELECT id, session_id FROM messages WHERE {in}", "id", message_ids))

    @mapped
    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> list[Message]:
        clauses: list[str] = ["session_id = ?"]
        args: list[Any] = [session_id]
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
            page, page_args = self.dialect.page(limit, offset)
            sql = f"SELECT {MSG_COLS} FROM messages WHERE {' AND '.join(clauses)} ORDER BY seq {'DESC' if desc else 'ASC'}"
            rows = conn.execute(sql + page, [*args, *page_args]).fetchall()
        return [self._message(r) for r in rows]

    @mapped
    def count_messages(self, session_id: str, status: str | None = None) -> int:
        sql = "SELECT count(*) FROM messages WHERE session_id = ?"
        args: list[Any] = [session_id]
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        with self.conns.read() as conn:
            return int(conn.execute(sql, args).fetchone()[0])

    @mapped
    def update_message(self, session_id: str, message_id: str, changes: dict[str, Any]) -> Message:
        d = self.dialect
        with self.conns.write() as conn:
            self.get_message(session_id, message_id)
            sets: list[str] = []
            args: list[Any] = []
            for key, value in changes.items():
                if key not in _MESSAGE_COLUMNS:
                    raise InvalidArgument(f"A message has no field {key!r}")
                sets.append(f"{key} = ?")
                if key in ("metadata", "payload"):
                    args.append(None if value is None and key == "payload" else d.json(value))
                elif key == "content":
                    args.append(d.text(value))
                elif key == "created_at" and value is not None:
                    args.append(d.time(value))
                else:
                    args.append(value)
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
        d = self.dialect
        ids = [m.id for m in messages]
        derived = {r[0] for r in self.select_in(conn, "SELECT entry_id FROM entry_sources WHERE {in}", "message_id", ids)}
        derived.update(m.entry_id for m in messages if m.entry_id)
        for part in d.chunks(ids):
            cond, args = d.any_of("id", part)
            conn.execute(f"DELETE FROM messages WHERE {cond}", args)
        kept = {r[0] for r in self.select_in(conn, "SELECT entry_id FROM entry_sources WHERE {in}", "entry_id", derived)}
        kept.update(r[0] for r in self.select_in(conn, "SELECT entry_id FROM messages WHERE {in}", "entry_id", derived))
        orphans = [eid for eid in derived if eid not in kept]
        self._delete_rows(conn, list(self.get_entries(orphans).values()), None)

    @mapped
    def provenance(self, entry_ids: Iterable[str]) -> dict[str, list[Provenance]]:
        ids = list(dict.fromkeys(entry_ids))
        out: dict[str, list[Provenance]] = {i: [] for i in ids}
        with self.conns.read() as conn:
            rows = self.select_in(conn, "SELECT s.entry_id, m.id, m.session_id, m.role, m.metadata FROM entry_sources s "
                                        "JOIN messages m ON m.id = s.message_id WHERE {in} ORDER BY m.rid", "s.entry_id", ids)
        for entry_id, mid, sid, role, meta in rows:
            out[entry_id].append(Provenance(mid, sid, role, self.dialect.data(meta)))
        return out

    @mapped
    def neighbour_turn_hashes(self, rids: Iterable[int]) -> dict[int, tuple[str | None, str | None]]:
        """For each turn entry (by rid), the content hashes of the turns just before and after it."""
        def near(alias: str, op: str, agg: str) -> str:
            return (f"LEFT JOIN messages {alias}m ON {alias}m.session_id = m.session_id AND {alias}m.seq = "
                    f"(SELECT {agg}(seq) FROM messages WHERE session_id = m.session_id AND seq {op} m.seq) "
                    f"LEFT JOIN entries {alias}e ON {alias}e.id = {alias}m.entry_id ")

        with self.conns.read() as conn:
            rows = self.select_in(
                conn, "SELECT e.rid, pe.content_hash, ne.content_hash FROM entries e JOIN messages m ON m.entry_id = e.id "
                + near("p", "<", "max") + near("n", ">", "min") + "WHERE {in}", "e.rid", (int(r) for r in rids),
                cast="bigint")
        return {int(rid): (prev, nxt) for rid, prev, nxt in rows if prev or nxt}

    @mapped
    def append_search_context(self, entry_id: str, text: str) -> None:
        """Add words to an entry's FTS context (a reply that came after it); its content is unchanged."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET search_context = search_context || ? WHERE id = ?",
                         (self.dialect.text(text), entry_id))

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
