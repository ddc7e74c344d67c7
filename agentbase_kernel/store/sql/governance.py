"""Governance: permission policies, conflicts, and audit rows the kernel writes itself (docs/lifecycle.md).

Policies live in the database (``scope_policies``) so every process enforces the same rules; each
process keeps them parsed until ``meta.policy_version`` (bumped by every change) moves. A conflict
(``conflicts``) pairs two live facts about one subject that ingest would not order; listing shows it
as ``open`` while both entries are still current.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from ...records import Entry, Scope
from ..rows import conflict_loser, scope_key
from .core import SqlCore, mapped

__all__ = ["AUDIT_ON", "GovernanceMixin"]

#: true while the database's audit switch is on (``configure_audit``)
AUDIT_ON = "coalesce((SELECT value FROM meta WHERE key = 'audit_enabled'), '1') = '1'"
# an open conflict stops being one when either side is no longer current (superseded, expired by
# a newer fact, deleted): it then lists as "superseded"
_STATUS = ("CASE WHEN c.status = 'resolved' THEN 'resolved' "
           "WHEN a.invalid_at IS NULL AND b.invalid_at IS NULL THEN 'open' ELSE 'superseded' END")
_CONFLICT_COLS = (f"c.id, {_STATUS}, c.reason, c.subject_key, c.user_id, c.agent_id, c.project_id, c.session_id, "
                  "c.entry_a, c.entry_b, c.kept, c.actor, c.created_at, c.resolved_at, a.l2_full, b.l2_full")


class GovernanceMixin(SqlCore):
    """``scope_policies``, ``conflicts`` and kernel-written ``audit_log`` rows."""

    _policy_cache: tuple[str, list[dict[str, Any]]] | None = None

    # -- audit rows the kernel writes (denials, resolutions, policy changes) -----------------------
    @property
    def in_transaction(self) -> bool:
        """True inside this thread's write transaction (whose writes may still roll back)."""
        return self.conns.in_write

    @mapped
    def append_audit(self, kind: str, *, actor: str | None, scope: Scope, entry_ids: Sequence[str] = (),
                     detail: dict[str, Any] | None = None) -> None:
        """One audit row in its own short write (skipped when the database's audit switch is off)."""
        d = self.dialect
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail) "
                f"SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE {AUDIT_ON}",
                (d.now(), kind, actor, scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 d.json(list(entry_ids)), d.json(detail or {})))

    # -- permission policies ---------------------------------------------------------------------
    @mapped
    def policies(self) -> list[dict[str, Any]]:
        """Every policy row: ``agent``, ``scope``, ``read``, ``write``, ``created_at`` (do not mutate).

        Every permission check asks this, so the parsed rows are kept per process and read again only
        when ``meta.policy_version`` (bumped by each change, in any process) moved: one key lookup.
        """
        d = self.dialect
        with self.conns.read() as conn:
            found = conn.execute("SELECT value FROM meta WHERE key = 'policy_version'").fetchone()
            version = found[0] if found else "0"
            cached = self._policy_cache
            if cached is not None and cached[0] == version:
                return cached[1]  # the same list while nothing changed: callers key caches on it
            rows = conn.execute("SELECT agent, user_id, agent_id, project_id, session_id, can_read, can_write, "
                                f"created_at FROM scope_policies ORDER BY {d.binary_order('agent')}, "
                                f"{d.binary_order('scope_key')}").fetchall()
        parsed = [{"agent": r[0], "scope": Scope(*r[1:5]), "read": bool(r[5]), "write": bool(r[6]),
                   "created_at": d.when(r[7])} for r in rows]
        if not self.conns.in_write:  # a write transaction's rows may still roll back
            self._policy_cache = (version, parsed)
        return parsed

    def _bump_policy_version(self, conn: Any) -> None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('policy_version', '1') ON CONFLICT (key) "
                     "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)")

    @mapped
    def set_policy(self, agent: str, scope: Scope, *, read: bool, write: bool) -> None:
        d = self.dialect
        with self.conns.write() as conn:
            self._bump_policy_version(conn)
            conn.execute(
                "INSERT INTO scope_policies (agent, scope_key, user_id, agent_id, project_id, session_id, can_read, "
                "can_write, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, scope_key) "
                "DO UPDATE SET can_read = excluded.can_read, can_write = excluded.can_write",
                (agent, scope_key(scope), scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 d.flag(read), d.flag(write), d.now()))

    @mapped
    def delete_policy(self, agent: str, scope: Scope) -> bool:
        with self.conns.write() as conn:
            self._bump_policy_version(conn)
            return bool(conn.execute("DELETE FROM scope_policies WHERE agent = ? AND scope_key = ?",
                                     (agent, scope_key(scope))).rowcount > 0)

    # -- conflicts -------------------------------------------------------------------------------
    @mapped
    def add_conflict(self, old: Entry, new: Entry, reason: str, subject_key: str | None) -> str:
        """Record that ``new`` contradicts ``old`` and ingest kept both; returns the conflict id."""
        conflict_id = f"conf_{uuid.uuid4().hex}"
        scope = old.scope
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO conflicts (id, scope_key, user_id, agent_id, project_id, session_id, subject_key, "
                "entry_a, entry_b, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conflict_id, scope_key(scope), scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 subject_key, old.id, new.id, reason, self.dialect.now()))
        return conflict_id

    @mapped
    def list_conflicts(self, scope: Scope, *, include_closed: bool = False, entry_ids: Iterable[str] | None = None,
                       conflict_id: str | None = None) -> list[dict[str, Any]]:
        """Conflicts whose scope has each given id (open ones unless ``include_closed``), oldest first;
        ``entry_ids`` keeps those involving any of them."""
        d = self.dialect
        fields = scope.as_dict()
        clauses = [f"c.{name} = ?" for name in fields]
        args: list[Any] = list(fields.values())
        if conflict_id is not None:
            clauses.append("c.id = ?")
            args.append(conflict_id)
        if not include_closed:
            clauses.append("c.status = 'open' AND a.invalid_at IS NULL AND b.invalid_at IS NULL")
        sql = (f"SELECT {_CONFLICT_COLS} FROM conflicts c JOIN entries a ON a.id = c.entry_a "
               f"JOIN entries b ON b.id = c.entry_b WHERE {' AND '.join(clauses) or d.true}")
        order = " ORDER BY c.created_at, c.id"
        with self.conns.read() as conn:
            if entry_ids is None:
                rows = conn.execute(sql + order, args).fetchall()
            else:
                rows = []
                for part in d.chunks(list(dict.fromkeys(entry_ids)), 400):  # each piece binds its ids twice
                    in_a, a_args = d.any_of("c.entry_a", part)
                    in_b, b_args = d.any_of("c.entry_b", part)
                    rows += conn.execute(f"{sql} AND ({in_a} OR {in_b}){order}", [*args, *a_args, *b_args]).fetchall()
                rows = list({r[0]: r for r in rows}.values())  # a pair split across two pieces
        return [{"id": r[0], "status": r[1], "reason": r[2], "subject_key": r[3], "scope": Scope(*r[4:8]),
                 "entry_ids": [r[8], r[9]], "kept": r[10], "actor": r[11], "created_at": d.when(r[12]),
                 "resolved_at": d.when(r[13]), "texts": [d.text_out(r[14]), d.text_out(r[15])]} for r in rows]

    @mapped
    def resolve_conflict(self, conflict_id: str, keep: str, *, actor: str | None) -> dict[str, Any]:
        """Keep ``keep``, supersede the other side by it, close the conflict; one transaction."""
        d = self.dialect
        with self.conns.write() as conn:
            conn.execute(f"SELECT 1 FROM conflicts WHERE id = ?{d.for_update}", (conflict_id,))
            found = self.list_conflicts(Scope(), include_closed=True, conflict_id=conflict_id)
            conflict, loser = conflict_loser(found, conflict_id, keep)
            now = d.now()
            conn.execute("UPDATE entries SET invalid_at = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
                         (now, keep, now, loser))
            conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) VALUES (?, ?, 'supersedes', ?) "
                         "ON CONFLICT DO NOTHING", (keep, loser, now))
            conn.execute("UPDATE conflicts SET status = 'resolved', kept = ?, actor = ?, resolved_at = ? WHERE id = ?",
                         (keep, actor, now, conflict_id))
            return {**conflict, "status": "resolved", "kept": keep, "actor": actor, "resolved_at": d.when(now)}
