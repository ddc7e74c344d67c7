"""``SessionStore`` in memory: sessions, their messages by ``seq``, and links to entries."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable
from typing import Any

from ...errors import MessageNotFound, SessionNotFound
from ...records import Message, Scope, Session
from ..base import iso, utcnow
from ..protocol import MessageRow
from .search import SearchMixin
from .tables import now

__all__ = ["SessionsMixin"]


class SessionsMixin(SearchMixin):
    """Sessions and messages; deleting messages deletes the entries only they produced."""

    def ensure_session(self, session_id: str, scope: Scope, metadata: dict[str, Any] | None) -> tuple[Session, bool]:
        with self._lock:
            row = self.tables.sessions.get(session_id)
            if row is not None:
                return self._session(row), False
            at = now()
            row = {"id": session_id, "user_id": scope.user_id, "agent_id": scope.agent_id,
                   "project_id": scope.project_id, "metadata": copy.deepcopy(metadata or {}), "created_at": at,
                   "updated_at": at, "committed_at": None, "summary_entry_id": None}
            self.tables.sessions[session_id] = row
            return self._session(row), True

    def find_session(self, session_id: str) -> Session | None:
        with self._lock:
            row = self.tables.sessions.get(session_id)
            return self._session(row) if row is not None else None

    def list_sessions(self, scope: Scope, limit: int | None, offset: int) -> list[Session]:
        wanted = {k: v for k, v in scope.as_dict().items() if k != "session_id"}
        with self._lock:
            rows = [r for r in self.tables.sessions.values() if all(r[k] == v for k, v in wanted.items())]
            rows = rows[offset:] if limit is None else rows[offset : offset + limit]
            return [self._session(r) for r in rows]

    def update_session(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       committed: bool = False, summary_entry_id: str | None = None) -> Session:
        with self._lock:
            row = self.tables.sessions.get(session_id)
            if row is None:
                raise SessionNotFound(session_id)
            row["updated_at"] = now()
            if metadata is not None:
                row["metadata"] = copy.deepcopy(metadata)
            if committed:
                row["committed_at"] = now()
            if summary_entry_id is not None:
                row["summary_entry_id"] = summary_entry_id
            return self._session(row)

    def delete_session(self, session_id: str) -> None:
        with self._lock:
            self._drop_messages(self._session_messages(session_id))
            self.tables.sessions.pop(session_id, None)
            self.tables.session_entries = {k: v for k, v in self.tables.session_entries.items() if k[0] != session_id}

    # -- messages ------------------------------------------------------------------------------
    def insert_message(self, session_id: str, row: MessageRow, position: int | None = None) -> Message:
        with self._lock:
            seqs = [m["seq"] for m in self._session_messages(session_id)]
            if position is None:
                seq = (seqs[-1] + 1) if seqs else 1
            else:
                if position < 0:
                    position = max(0, len(seqs) + position)
                if position >= len(seqs):
                    seq = (seqs[-1] + 1) if seqs else 1
                else:
                    seq = seqs[position]
                    for m in self.tables.messages.values():
                        if m["session_id"] == session_id and m["seq"] >= seq:
                            m["seq"] += 1
            message_id = row.get("id") or f"msg_{uuid.uuid4().hex}"
            self.tables.messages[message_id] = {
                "id": message_id, "rid": self.tables.next("message"), "session_id": session_id, "seq": seq,
                "role": row["role"], "content": row["content"], "name": row.get("name"),
                "metadata": copy.deepcopy(row.get("metadata") or {}), "payload": copy.deepcopy(row.get("payload")),
                "status": row.get("status", "active"), "created_at": iso(row.get("created_at") or utcnow()),
                "entry_id": None}
            if session_id in self.tables.sessions:
                self.tables.sessions[session_id]["updated_at"] = now()
            return self._message(self.tables.messages[message_id])

    def attach_entry(self, message_id: str, entry_id: str, session_id: str, relation: str = "turn") -> None:
        with self._lock:
            if message_id in self.tables.messages:
                self.tables.messages[message_id]["entry_id"] = entry_id
            self.link_source(entry_id, message_id)
            self.link_session(session_id, entry_id, relation)

    def link_source(self, entry_id: str, message_id: str) -> None:
        with self._lock:
            if entry_id in self.tables.entries and message_id in self.tables.messages:
                self.tables.entry_sources.setdefault((entry_id, message_id), None)

    def link_session(self, session_id: str, entry_id: str, relation: str) -> None:
        with self._lock:
            if session_id in self.tables.sessions and entry_id in self.tables.entries:
                self.tables.session_entries.setdefault((session_id, entry_id), relation)

    def _find_message(self, session_id: str, message_id: str) -> dict[str, Any]:
        row = self.tables.messages.get(message_id)
        if row is None or row["session_id"] != session_id:
            raise MessageNotFound(message_id, session_id)
        return row

    def get_message(self, session_id: str, message_id: str) -> Message:
        with self._lock:
            return self._message(self._find_message(session_id, message_id))

    def message_sessions(self, message_ids: Iterable[str]) -> dict[str, str]:
        with self._lock:
            return {mid: row["session_id"] for mid in message_ids if (row := self.tables.messages.get(mid)) is not None}

    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> list[Message]:
        desc = order == "desc"
        with self._lock:
            rows = [m for m in self._session_messages(session_id) if status is None or m["status"] == status]
            for cursor, is_after in ((after, True), (before, False)):
                if cursor is None:
                    continue
                at = self._find_message(session_id, cursor)["seq"]
                forward = is_after != desc  # "after" in a newest-first listing is older
                rows = [m for m in rows if (m["seq"] > at if forward else m["seq"] < at)]
            if desc:
                rows.reverse()
            rows = rows[offset:] if limit is None else rows[offset : offset + limit]
            return [self._message(m) for m in rows]

    def count_messages(self, session_id: str, status: str | None = None) -> int:
        with self._lock:
            return sum(1 for m in self.tables.messages.values()
                       if m["session_id"] == session_id and (status is None or m["status"] == status))

    def update_message(self, session_id: str, message_id: str, changes: dict[str, Any]) -> Message:
        with self._lock:
            row = self._find_message(session_id, message_id)
            row.update({k: copy.deepcopy(v) for k, v in changes.items()})
            return self._message(row)

    def delete_message(self, session_id: str, message_id: str) -> Message:
        with self._lock:
            message = self.get_message(session_id, message_id)
            self._drop_messages([self.tables.messages[message_id]])
            return message

    def delete_messages(self, session_id: str, status: str | None = None) -> int:
        with self._lock:
            rows = [m for m in self._session_messages(session_id) if status is None or m["status"] == status]
            self._drop_messages(rows)
            return len(rows)

    def _drop_messages(self, messages: list[dict[str, Any]]) -> None:
        """Delete messages and the entries that only they produced (their turns and facts)."""
        t = self.tables
        ids = {m["id"] for m in messages}
        derived = {entry_id for entry_id, mid in t.entry_sources if mid in ids}
        derived |= {m["entry_id"] for m in messages if m["entry_id"]}
        for message_id in ids:
            del t.messages[message_id]
        t.entry_sources = {k: v for k, v in t.entry_sources.items() if k[1] not in ids}
        still_used = {entry_id for entry_id, _ in t.entry_sources} | {m["entry_id"] for m in t.messages.values()}
        self._delete_rows([e for e in t.entries if e in derived and e not in still_used], None)
