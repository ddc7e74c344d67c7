"""Governance on PostgreSQL: permission policies, conflicts, and audit rows the kernel writes itself
(as ``store/sqlite/governance.py``; migration 6).

Policies live in the database (``scope_policies``) so every process enforces the same rules; each
process keeps them parsed until ``meta.policy_version`` (bumped by every change) moves.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from ...errors import InvalidArgument
from ...records import Entry, Scope
from ..base import utcnow
from .core import PgCore, jsonb, mapped, scope_key, text_out

__all__ = ["GovernanceMixin"]

# an open conflict stops being one when either side is no longer current: it then lists as "superseded"
_STATUS = ("CASE WHEN c.status = 'resolved' THEN 'resolved' "
           "WHEN a.invalid_at IS NULL AND b.invalid_at IS NULL THEN 'open' ELSE 'superseded' END")
_CONFLICT_COLS = (f"c.id, {_STATUS}, c.reason, c.subject_key, c.user_id, c.agent_id, c.project_id, c.session_id, "
                  "c.entry_a, c.entry_b, c.kept, c.actor, c.created_at, c.resolved_at, a.l2_full, b.l2_full")


class GovernanceMixin(PgCore):
    """``scope_policies``, ``conflicts`` and kernel-written ``audit_log`` rows."""

    _policy_cache: tuple[str, list[dict[str, Any]]] | None = None

    @property
    def in_transaction(self) -> bool:
        """True inside this thread's write transaction (whose writes may still roll back)."""
        return self.conns.in_write

    @mapped
    def append_audit(self, kind: str, *, actor: str | None, scope: Scope, entry_ids: Sequence[str] = (),
                     detail: dict[str, Any] | None = None) -> None:
        """One audit row in its own short write (skipped when the database's audit switch is off)."""
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail) "
                "SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s WHERE agentbase_audit_on()",
                (utcnow(), kind, actor, scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 jsonb(list(entry_ids)), jsonb(detail or {})))

    # -- permission policies ---------------------------------------------------------------------
    @mapped
    def policies(self) -> list[dict[str, Any]]:
        """Every policy row: ``agent``, ``scope``, ``read``, ``write``, ``created_at`` (do not mutate);
        the same list while ``meta.policy_version`` stays (callers key caches on it)."""
        with self.conns.read() as conn:
            found = conn.execute("SELECT value FROM meta WHERE key = 'policy_version'").fetchone()
            version = found[0] if found else "0"
            cached = self._policy_cache
            if cached is not None and cached[0] == version:
                return cached[1]
            rows = conn.execute("SELECT agent, user_id, agent_id, project_id, session_id, can_read, can_write, "
                                "created_at FROM scope_policies ORDER BY agent COLLATE \"C\", scope_key COLLATE \"C\"").fetchall()
        parsed = [{"agent": r[0], "scope": Scope(*r[1:5]), "read": bool(r[5]), "write": bool(r[6]),
                   "created_at": r[7]} for r in rows]
        if not self.conns.in_write:  # a write transaction's rows may still roll back
            self._policy_cache = (version, parsed)
        return parsed

    def _bump_policy_version(self, conn: Any) -> None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('policy_version', '1') ON CONFLICT (key) "
                     "DO UPDATE SET value = (meta.value::bigint + 1)::text")

    @mapped
    def set_policy(self, agent: str, scope: Scope, *, read: bool, write: bool) -> None:
        with self.conns.write() as conn:
            self._bump_policy_version(conn)
            conn.execute(
                "INSERT INTO scope_policies (agent, scope_key, user_id, agent_id, project_id, session_id, can_read, "
                "can_write, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (agent, scope_key) "
                "DO UPDATE SET can_read = excluded.can_read, can_write = excluded.can_write",
                (agent, scope_key(scope), scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 bool(read), bool(write), utcnow()))

    @mapped
    def delete_policy(self, agent: str, scope: Scope) -> bool:
        with self.conns.write() as conn:
            self._bump_policy_version(conn)
            cur = conn.execute("DELETE FROM scope_policies WHERE agent = %s AND scope_key = %s",
                               (agent, scope_key(scope)))
            return cur.rowcount > 0

    # -- conflicts -------------------------------------------------------------------------------
    @mapped
    def add_conflict(self, old: Entry, new: Entry, reason: str, subject_key: str | None) -> str:
        """Record that ``new`` contradicts ``old`` and ingest kept both; returns the conflict id."""
        conflict_id = f"conf_{uuid.uuid4().hex}"
        scope = old.scope
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO conflicts (id, scope_key, user_id, agent_id, project_id, session_id, subject_key, "
                "entry_a, entry_b, reason, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (conflict_id, scope_key(scope), scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 subject_key, old.id, new.id, reason, utcnow()))
        return conflict_id

    @mapped
    def list_conflicts(self, scope: Scope, *, include_closed: bool = False, entry_ids: Iterable[str] | None = None,
                       conflict_id: str | None = None) -> list[dict[str, Any]]:
        """Conflicts whose scope has each given id (open ones unless ``include_closed``), oldest first;
        ``entry_ids`` keeps those involving any of them."""
        fields = scope.as_dict()
        clauses = [f"c.{name} = %s" for name in fields]
        args: list[Any] = list(fields.values())
        if conflict_id is not None:
            clauses.append("c.id = %s")
            args.append(conflict_id)
        if not include_closed:
            clauses.append("c.status = 'open' AND a.invalid_at IS NULL AND b.invalid_at IS NULL")
        if entry_ids is not None:
            ids = list(dict.fromkeys(entry_ids))
            clauses.append("(c.entry_a = ANY(%s) OR c.entry_b = ANY(%s))")
            args.extend([ids, ids])
        sql = (f"SELECT {_CONFLICT_COLS} FROM conflicts c JOIN entries a ON a.id = c.entry_a "
               f"JOIN entries b ON b.id = c.entry_b WHERE {' AND '.join(clauses) or 'TRUE'} "
               "ORDER BY c.created_at, c.id")
        with self.conns.read() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [{"id": r[0], "status": r[1], "reason": r[2], "subject_key": r[3], "scope": Scope(*r[4:8]),
                 "entry_ids": [r[8], r[9]], "kept": r[10], "actor": r[11], "created_at": r[12],
                 "resolved_at": r[13], "texts": [text_out(r[14]), text_out(r[15])]} for r in rows]

    @mapped
    def resolve_conflict(self, conflict_id: str, keep: str, *, actor: str | None) -> dict[str, Any]:
        """Keep ``keep``, supersede the other side by it, close the conflict; one transaction."""
        with self.conns.write() as conn:
            conn.execute("SELECT 1 FROM conflicts WHERE id = %s FOR UPDATE", (conflict_id,))
            found = self.list_conflicts(Scope(), include_closed=True, conflict_id=conflict_id)
            if not found:
                raise InvalidArgument(f"No conflict with id {conflict_id!r}", param="conflict_id")
            conflict = found[0]
            if conflict["status"] != "open":
                raise InvalidArgument(f"Conflict {conflict_id!r} is already {conflict['status']}",
                                      param="conflict_id", code="conflict_closed")
            if keep not in conflict["entry_ids"]:
                raise InvalidArgument(f"keep must be one of the conflict's entries {conflict['entry_ids']}, "
                                      f"got {keep!r}", param="keep")
            loser = next(e for e in conflict["entry_ids"] if e != keep)
            now = utcnow()
            conn.execute("UPDATE entries SET invalid_at = %s, superseded_by = %s, updated_at = %s WHERE id = %s",
                         (now, keep, now, loser))
            conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) VALUES (%s, %s, 'supersedes', %s) "
                         "ON CONFLICT DO NOTHING", (keep, loser, now))
            conn.execute("UPDATE conflicts SET status = 'resolved', kept = %s, actor = %s, resolved_at = %s "
                         "WHERE id = %s", (keep, actor, now, conflict_id))
            return {**conflict, "status": "resolved", "kept": keep, "actor": actor, "resolved_at": now}
