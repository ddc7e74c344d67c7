"""Governance on SQLite: permission policies, conflicts, and audit rows the kernel writes itself
(issue 22 items 6 and 8; migration m008; docs/lifecycle.md).

Policies live in the file (``scope_policies``) so every process opening it enforces the same
rules. A conflict (``conflicts``) pairs two live facts about one subject that ingest would not
order; listing shows it as ``open`` while both entries are still current.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from ...errors import InvalidArgument
from ...records import Entry, Scope
from ..base import iso, parse_iso, utcnow
from .core import SqliteCore, mapped, scope_key

__all__ = ["GovernanceMixin"]

_AUDIT_ON = "coalesce((SELECT value FROM meta WHERE key = 'audit_enabled'), '1') = '1'"
_SCOPE = ("user_id", "agent_id", "project_id", "session_id")
# an open conflict stops being one when either side is no longer current (superseded, expired by
# a newer fact, deleted): it then lists as "superseded"
_STATUS = ("CASE WHEN c.status = 'resolved' THEN 'resolved' "
           "WHEN a.invalid_at IS NULL AND b.invalid_at IS NULL THEN 'open' ELSE 'superseded' END")
_CONFLICT_COLS = (f"c.id, {_STATUS}, c.reason, c.subject_key, c.user_id, c.agent_id, c.project_id, c.session_id, "
                  "c.entry_a, c.entry_b, c.kept, c.actor, c.created_at, c.resolved_at, a.l2_full, b.l2_full")


def _scope_clauses(scope: Scope, alias: str) -> tuple[list[str], list[Any]]:
    fields = scope.as_dict()
    return [f"{alias}.{name} = ?" for name in fields], list(fields.values())


class GovernanceMixin(SqliteCore):
    """``scope_policies``, ``conflicts`` and kernel-written ``audit_log`` rows."""

    # -- audit rows the kernel writes (denials, resolutions, policy changes) -----------------------
    @property
    def in_transaction(self) -> bool:
        """True inside this thread's write transaction (whose writes may still roll back)."""
        return self.conns.in_write

    @mapped
    def append_audit(self, kind: str, *, actor: str | None, scope: Scope, entry_ids: Sequence[str] = (),
                     detail: dict[str, Any] | None = None) -> None:
        """One audit row in its own short write (skipped when the file's audit switch is off)."""
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail) "
                f"SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE {_AUDIT_ON}",
                (iso(utcnow()), kind, actor, scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 json.dumps(list(entry_ids)), json.dumps(detail or {}, default=str)))

    # -- permission policies ---------------------------------------------------------------------
    @mapped
    def policies(self) -> list[dict[str, Any]]:
        """Every policy row: ``agent``, ``scope``, ``read``, ``write``, ``created_at`` (do not mutate).

        Every permission check asks this, so the parsed rows are kept per process and read again only
        when ``meta.policy_version`` (bumped by each change, in any process) moved: one key lookup.
        """
        with self.conns.read() as conn:
            found = conn.execute("SELECT value FROM meta WHERE key = 'policy_version'").fetchone()
            version = found[0] if found else "0"
            cached = self._policy_cache
            if cached is not None and cached[0] == version:
                return cached[1]  # the same list while nothing changed: callers key caches on it
            rows = conn.execute("SELECT agent, user_id, agent_id, project_id, session_id, can_read, can_write, "
                                "created_at FROM scope_policies ORDER BY agent, scope_key").fetchall()
        parsed = [{"agent": r[0], "scope": Scope(*r[1:5]), "read": bool(r[5]), "write": bool(r[6]),
                   "created_at": parse_iso(r[7])} for r in rows]
        if not self.conns.in_write:  # a write transaction's rows may still roll back
            self._policy_cache = (version, parsed)
        return parsed

    _policy_cache: tuple[str, list[dict[str, Any]]] | None = None

    def _bump_policy_version(self, conn: Any) -> None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('policy_version', '1') ON CONFLICT (key) "
                     "DO UPDATE SET value = CAST(value AS INTEGER) + 1")

    @mapped
    def set_policy(self, agent: str, scope: Scope, *, read: bool, write: bool) -> None:
        with self.conns.write() as conn:
            self._bump_policy_version(conn)
            conn.execute(
                "INSERT INTO scope_policies (agent, scope_key, user_id, agent_id, project_id, session_id, can_read, "
                "can_write, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, scope_key) "
                "DO UPDATE SET can_read = excluded.can_read, can_write = excluded.can_write",
                (agent, scope_key(scope), scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 int(read), int(write), iso(utcnow())))

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
                 subject_key, old.id, new.id, reason, iso(utcnow())))
        return conflict_id

    @mapped
    def list_conflicts(self, scope: Scope, *, include_closed: bool = False, entry_ids: Iterable[str] | None = None,
                       conflict_id: str | None = None) -> list[dict[str, Any]]:
        """Conflicts whose scope has each given id (open ones unless ``include_closed``), oldest first;
        ``entry_ids`` keeps those involving any of them."""
        clauses, args = _scope_clauses(scope, "c")
        if conflict_id is not None:
            clauses.append("c.id = ?")
            args.append(conflict_id)
        if not include_closed:
            clauses.append("c.status = 'open' AND a.invalid_at IS NULL AND b.invalid_at IS NULL")
        sql = (f"SELECT {_CONFLICT_COLS} FROM conflicts c JOIN entries a ON a.id = c.entry_a "
               f"JOIN entries b ON b.id = c.entry_b WHERE {' AND '.join(clauses) or '1'}")
        order = " ORDER BY c.created_at, c.id"
        with self.conns.read() as conn:
            if entry_ids is None:
                rows = conn.execute(sql + order, args).fetchall()
            else:
                ids = list(dict.fromkeys(entry_ids))
                rows = []
                for i in range(0, len(ids), 400):
                    part = ids[i : i + 400]
                    marks = ",".join("?" * len(part))
                    rows += conn.execute(sql + f" AND (c.entry_a IN ({marks}) OR c.entry_b IN ({marks}))" + order,
                                         [*args, *part, *part]).fetchall()
                rows = list({r[0]: r for r in rows}.values())  # a pair split across two chunks
        return [{"id": r[0], "status": r[1], "reason": r[2], "subject_key": r[3], "scope": Scope(*r[4:8]),
                 "entry_ids": [r[8], r[9]], "kept": r[10], "actor": r[11], "created_at": parse_iso(r[12]),
                 "resolved_at": parse_iso(r[13]), "texts": [r[14], r[15]]} for r in rows]

    @mapped
    def resolve_conflict(self, conflict_id: str, keep: str, *, actor: str | None) -> dict[str, Any]:
        """Keep ``keep``, supersede the other side by it, close the conflict; one transaction."""
        with self.conns.write() as conn:
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
            now = iso(utcnow())
            conn.execute("UPDATE entries SET invalid_at = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
                         (now, keep, now, loser))
            conn.execute("INSERT OR IGNORE INTO entry_links (src, dst, relation, created_at) "
                         "VALUES (?, ?, 'supersedes', ?)", (keep, loser, now))
            conn.execute("UPDATE conflicts SET status = 'resolved', kept = ?, actor = ?, resolved_at = ? WHERE id = ?",
                         (keep, actor, now, conflict_id))
            return {**conflict, "status": "resolved", "kept": keep, "actor": actor, "resolved_at": parse_iso(now)}
