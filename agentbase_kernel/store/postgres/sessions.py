"""Sessions, their messages, and the links from messages and sessions to the entries they made."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from ...errors import MessageNotFound, SessionNotFound
from ...records import Message, Provenance, Scope, Session
from ..base import EntryFilter, utcnow
from ..protocol import MessageRow
from ..rows import message_from_row, session_from_row
from .core import _aware, fetch_one, jsonb, mapped, text_in, text_out_required
from .entries import EntriesMixin

__all__ = ["SessionsMixin"]

_SESSION_COLS = "id, user_id, agent_id, project_id, metadata, created_at, updated_at, committed_at, summary_entry_id"
_MSG_COLS = "id, session_id, seq, role, content, name, metadata, payload, status, created_at, entry_id"


class SessionsMixin(EntriesMixin):
    """``sessions``, ``messages``, ``entry_sources`` and ``session_entries``."""

    def _session(self, row: Any) -> Session:
        return session_from_row(row)

    def _message(self, row: Any) -> Message:
        return message_from_row(row, text=text_out_required)

    @mapped
    def ensure_session(self, session_id: str, scope: Scope, metadata: dict[str, Any] | None) -> tuple[Session, bool]:
        with self.conns.write() as conn:
            now = utcnow()
            row = conn.execute(
                "INSERT INTO sessions (id, user_id, agent_id, project_id, metadata, created_at, updated_at) "
                f"VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING {_SESSION_COLS}",
                (session_id, scope.user_id, scope.agent_id, scope.project_id, jsonb(metadata or {}), now, now)).fetchone()
            if row is not None:
                return self._session(row), True
            row = conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = %s", (session_id,)).fetchone()
            return self._session(row), False

    @mapped
    def find_session(self, session_id: str) -> Session | None:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = %s", (session_id,)).fetchone()
        return self._session(row) if row else None

    @mapped
    def list_sessions(self, scope: Scope, limit: int | None, offset: int) -> list[Session]:
        clauses, args = [], []
        for col in ("user_id", "agent_id", "project_id"):
            value = getattr(scope, col)
            if value is not None:
                clauses.append(f"{col} = %s")
                args.append(value)
        sql = f"SELECT {_SESSION_COLS} FROM sessions WHERE {' AND '.join(clauses) or 'TRUE'} ORDER BY rid"
        if limit is not None:
            sql += " LIMIT %s"
            args.append(limit)
        sql += " OFFSET %s"
        args.append(offset)
        with self.conns.read() as conn:
            return [self._session(r) for r in conn.execute(sql, args)]

    @mapped
    def update_session(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       committed: bool = False, summary_entry_id: str | None = None) -> Session:
        with self.conns.write() as conn:
            sets: list[str] = ["updated_at = %s"]
            args: list[Any] = [utcnow()]
            if metadata is not None:
                sets.append("metadata = %s")
                args.append(jsonb(metadata))
            if committed:
                sets.append("committed_at = %s")
                args.append(utcnow())
            if summary_entry_id is not None:
                sets.append("summary_entry_id = %s")
                args.append(summary_entry_id)
            row = conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = %s RETURNING {_SESSION_COLS}",
                               [*args, session_id]).fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            return self._session(row)

    @mapped
    def delete_session(self, session_id: str) -> None:
        with self.conns.write() as conn:
            self._delete_messages(conn, session_id, None)
            conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,))

    @mapped
    def insert_message(self, session_id: str, row: MessageRow, position: int | None = None) -> Message:
        with self.conns.write() as conn:
            # the session row's lock orders concurrent appends to one session (seq stays unique)
            conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (session_id,))
            message_id = row.get("id") or f"msg_{uuid.uuid4().hex}"
            created = row.get("created_at")
            values = (row["role"], text_in(row["content"]), row.get("name"), jsonb(row.get("metadata") or {}),
                      None if row.get("payload") is None else jsonb(row["payload"]), row.get("status", "active"),
                      _aware(created) if created else utcnow())
            if position is None:  # an append: the next seq, the row and the session's time in one statement
                inserted = conn.execute(
                    "WITH ins AS (INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, "
                    "status, created_at) SELECT %s, %s, coalesce(max(seq), 0) + 1, %s, %s, %s, %s, %s, %s, %s "
                    f"FROM messages WHERE session_id = %s RETURNING {_MSG_COLS}), "
                    "touched AS (UPDATE sessions SET updated_at = %s WHERE id = %s) SELECT * FROM ins",
                    (message_id, session_id, *values, session_id, utcnow(), session_id)).fetchone()
                return self._message(inserted)
            seqs = [r[0] for r in conn.execute(
                "SELECT seq FROM messages WHERE session_id = %s ORDER BY seq", (session_id,))]
            if position < 0:
                position = max(0, len(seqs) + position)
            if position >= len(seqs):
                seq = (seqs[-1] + 1) if seqs else 1
            else:
                seq = seqs[position]
                # shift in two steps so UNIQUE (session_id, seq) never sees a clash
                conn.execute("UPDATE messages SET seq = -(seq + 1) WHERE session_id = %s AND seq >= %s",
                             (session_id, seq))
                conn.execute("UPDATE messages SET seq = -seq WHERE session_id = %s AND seq < 0", (session_id,))
            inserted = conn.execute(
                "INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, created_at) "
                f"VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_MSG_COLS}",
                (message_id, session_id, seq, *values)).fetchone()
            conn.execute("UPDATE sessions SET updated_at = %s WHERE id = %s", (utcnow(), session_id))
            return self._message(inserted)

    @mapped
    def attach_entry(self, message_id: str, entry_id: str, session_id: str, relation: str = "turn") -> None:
        """Link a message's turn entry: message.entry_id, provenance and the session link (one
        statement: one round trip per turn of a chat's ingest)."""
        with self.conns.write() as conn:
            conn.execute("WITH turn AS (UPDATE messages SET entry_id = %s WHERE id = %s), "
                         "source AS (INSERT INTO entry_sources (entry_id, message_id) VALUES (%s, %s) ON CONFLICT DO NOTHING) "
                         "INSERT INTO session_entries (session_id, entry_id, relation) VALUES (%s, %s, %s) "
                         "ON CONFLICT DO NOTHING", (entry_id, message_id, entry_id, message_id, session_id, entry_id, relation))

    @mapped
    def link_source(self, entry_id: str, message_id: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT INTO entry_sources (entry_id, message_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                         (entry_id, message_id))

    @mapped
    def link_session(self, session_id: str, entry_id: str, relation: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT INTO session_entries (session_id, entry_id, relation) VALUES (%s, %s, %s) "
                         "ON CONFLICT DO NOTHING", (session_id, entry_id, relation))

    @mapped
    def get_message(self, session_id: str, message_id: str) -> Message:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {_MSG_COLS} FROM messages WHERE id = %s AND session_id = %s",
                               (message_id, session_id)).fetchone()
        if row is None:
            raise MessageNotFound(message_id, session_id)
        return self._message(row)

    @mapped
    def message_sessions(self, message_ids: Iterable[str]) -> dict[str, str]:
        """The session of each of these message ids that exists: ``{message_id: session_id}``."""
        ids = list(dict.fromkeys(message_ids))
        if not ids:
            return {}
        with self.conns.read() as conn:
            return dict(conn.execute("SELECT id, session_id FROM messages WHERE id = ANY(%s)", (ids,)).fetchall())

    @mapped
    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> list[Message]:
        clauses: list[str] = ["session_id = %s"]
        args: list[Any] = [session_id]
        if status is not None:
            clauses.append("status = %s")
            args.append(status)
        desc = order == "desc"
        with self.conns.read() as conn:
            for cursor, is_after in ((after, True), (before, False)):
                if cursor is None:
                    continue
                row = conn.execute("SELECT seq FROM messages WHERE id = %s AND session_id = %s",
                                   (cursor, session_id)).fetchone()
                if row is None:
                    raise MessageNotFound(cursor, session_id)
                forward = is_after != desc
                clauses.append("seq > %s" if forward else "seq < %s")
                args.append(row[0])
            sql = f"SELECT {_MSG_COLS} FROM messages WHERE {' AND '.join(clauses)} ORDER BY seq {'DESC' if desc else 'ASC'}"
            if limit is not None:
                sql += " LIMIT %s"
                args.append(limit)
            sql += " OFFSET %s"
            args.append(offset)
            rows = conn.execute(sql, args).fetchall()
        return [self._message(r) for r in rows]

    @mapped
    def count_messages(self, session_id: str, status: str | None = None) -> int:
        sql = "SELECT count(*) FROM messages WHERE session_id = %s"
        args: list[Any] = [session_id]
        if status is not None:
            sql += " AND status = %s"
            args.append(status)
        with self.conns.read() as conn:
            return int(fetch_one(conn.execute(sql, args), "count_messages")[0])

    _MESSAGE_COLUMNS = frozenset({"role", "content", "name", "metadata", "payload", "status", "created_at", "entry_id"})

    @mapped
    def update_message(self, session_id: str, message_id: str, changes: dict[str, Any]) -> Message:
        with self.conns.write() as conn:
            self.get_message(session_id, message_id)
            sets: list[str] = []
            args: list[Any] = []
            for key, value in changes.items():
                if key not in self._MESSAGE_COLUMNS:
                    from ...errors import InvalidArgument

                    raise InvalidArgument(f"A message has no field {key!r}")
                sets.append(f"{key} = %s")
                if key in ("metadata", "payload"):
                    args.append(None if value is None and key == "payload" else jsonb(value))
                elif key == "content":
                    args.append(text_in(value))
                elif key == "created_at" and value is not None:
                    args.append(_aware(value))
                else:
                    args.append(value)
            if sets:
                conn.execute(f"UPDATE messages SET {', '.join(sets)} WHERE id = %s", [*args, message_id])
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
        derived = {r[0] for r in conn.execute("SELECT entry_id FROM entry_sources WHERE message_id = ANY(%s)", (ids,))}
        derived.update(m.entry_id for m in messages if m.entry_id)
        conn.execute("DELETE FROM messages WHERE id = ANY(%s)", (ids,))
        if not derived:
            return
        kept = {r[0] for r in conn.execute(
            "SELECT entry_id FROM entry_sources WHERE entry_id = ANY(%s) "
            "UNION SELECT entry_id FROM messages WHERE entry_id = ANY(%s)", (list(derived), list(derived)))}
        orphans = [eid for eid in derived if eid not in kept]
        existing = list(self.get_entries(orphans).values())
        self._delete_rows(conn, existing, None)

    @mapped
    def provenance(self, entry_ids: Iterable[str]) -> dict[str, list[Provenance]]:
        ids = list(dict.fromkeys(entry_ids))
        out: dict[str, list[Provenance]] = {i: [] for i in ids}
        if not ids:
            return out
        with self.conns.read() as conn:
            for entry_id, mid, sid, role, meta in conn.execute(
                    "SELECT s.entry_id, m.id, m.session_id, m.role, m.metadata FROM entry_sources s "
                    "JOIN messages m ON m.id = s.message_id WHERE s.entry_id = ANY(%s) ORDER BY m.rid", (ids,)):
                out[entry_id].append(Provenance(mid, sid, role, meta))
        return out

    @mapped
    def neighbour_turn_hashes(self, rids: Iterable[int]) -> dict[int, tuple[str | None, str | None]]:
        """For each turn entry (by rid), the content hashes of the turns just before and after it."""
        wanted = list(dict.fromkeys(int(r) for r in rids))
        if not wanted:
            return {}

        def near(alias: str, op: str, agg: str) -> str:
            return (f"LEFT JOIN messages {alias}m ON {alias}m.session_id = m.session_id AND {alias}m.seq = "
                    f"(SELECT {agg}(seq) FROM messages WHERE session_id = m.session_id AND seq {op} m.seq) "
                    f"LEFT JOIN entries {alias}e ON {alias}e.id = {alias}m.entry_id ")

        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT e.rid, pe.content_hash, ne.content_hash FROM entries e JOIN messages m ON m.entry_id = e.id "
                + near("p", "<", "max") + near("n", ">", "min") + "WHERE e.rid = ANY(%s::bigint[])", (wanted,)).fetchall()
        return {int(rid): (prev, nxt) for rid, prev, nxt in rows if prev or nxt}

    @mapped
    def append_search_context(self, entry_id: str, text: str) -> None:
        """Add words to an entry's FTS context (a reply that came after it); its content is unchanged."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET search_context = search_context || %s WHERE id = %s",
                         (text_in(text), entry_id))

    @mapped
    def session_neighbours(self, entry_ids: list[str], window: int, flt: EntryFilter) -> dict[str, list[str]]:
        """For each turn entry, the turn entries within ``window`` turns of it in its session (one
        statement for all of them: a ``find`` asks for its best candidates at once)."""
        if not entry_ids:
            return {}
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            rows = conn.execute(
                "WITH anchor AS (SELECT x.id, a.session_id, a.seq FROM unnest(%s::text[]) AS x(id) CROSS JOIN LATERAL "
                "(SELECT session_id, seq FROM messages WHERE entry_id = x.id ORDER BY rid LIMIT 1) a) "
                "SELECT an.id, n.id FROM anchor an LEFT JOIN LATERAL (SELECT e.id, min(m.seq) AS seq "
                "FROM messages m JOIN entries e ON e.id = m.entry_id WHERE m.session_id = an.session_id "
                f"AND m.seq BETWEEN an.seq - %s AND an.seq + %s AND e.id != an.id AND {where} GROUP BY e.id) n ON TRUE "
                "ORDER BY an.id, n.seq", [list(entry_ids), window, window, *args]).fetchall()
        found: dict[str, list[str]] = {}
        for anchor, neighbour in rows:
            near = found.setdefault(anchor, [])
            if neighbour is not None:
                near.append(neighbour)
        return {entry_id: found[entry_id] for entry_id in dict.fromkeys(entry_ids) if entry_id in found}

    @mapped
    def session_linked(self, session_id: str, flt: EntryFilter, relation: str | None = None) -> list[str]:
        where, args = self.where_sql(flt)
        sql = (f"SELECT e.id FROM session_entries s JOIN entries e ON e.id = s.entry_id "
               f"WHERE s.session_id = %s AND {where}")
        params = [session_id, *args]
        if relation:
            sql += " AND s.relation = %s"
            params.append(relation)
        with self.conns.read() as conn:
            return [r[0] for r in conn.execute(sql + " ORDER BY e.rid", params)]
