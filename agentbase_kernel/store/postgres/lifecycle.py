"""Memory lifecycle on PostgreSQL: reinforcement counters and the audit log.

Writes, updates and deletes of entries are audited by triggers (migration 3, the plpgsql twins of
SQLite's m006), so every path that changes ``entries`` records itself in its own transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...records import Scope
from ..base import parse_iso
from .core import PgCore, _aware, jsonb, mapped

__all__ = ["LifecycleMixin"]

_AUDIT_COLUMNS = "seq, at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail"


def _time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return None if value is None else _aware(value)
    return parse_iso(str(value))


class LifecycleMixin(PgCore):
    """``entry_access`` and ``audit_log``."""

    @mapped
    def bump_access(self, counts: dict[str, tuple[int, str]],
                    reads: Sequence[dict[str, Any]] = ()) -> None:
        """Add ``count`` accesses at ``last`` (ISO) per entry id, and append read audit rows, in one
        short write. Ids deleted meanwhile are skipped."""
        if not counts and not reads:
            return
        with self.conns.write() as conn, conn.cursor() as cur:
            if counts:
                # sorted: two processes bumping the same ids lock them in one order
                cur.executemany(
                    "INSERT INTO entry_access (entry_id, access_count, last_accessed_at) "
                    "SELECT %(id)s, %(n)s, %(last)s WHERE EXISTS (SELECT 1 FROM entries WHERE id = %(id)s) "
                    "ON CONFLICT (entry_id) DO UPDATE SET access_count = entry_access.access_count + excluded.access_count, "
                    "last_accessed_at = greatest(entry_access.last_accessed_at, excluded.last_accessed_at)",
                    [{"id": eid, "n": n, "last": _time(last)} for eid, (n, last) in sorted(counts.items())])
            if reads:
                cur.executemany(
                    "INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, "
                    "detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(_time(r["at"]), r.get("kind", "read"), r.get("actor"), r["scope"].user_id, r["scope"].agent_id, r["scope"].project_id,
                      r["scope"].session_id, jsonb(list(r["entry_ids"])), jsonb(r.get("detail") or {}))
                     for r in reads])

    @mapped
    def access_stats(self, entry_ids: Iterable[str]) -> dict[str, tuple[int, datetime | None]]:
        """``{id: (access_count, last_accessed_at)}`` for the ids that were ever accessed."""
        ids = list(dict.fromkeys(entry_ids))
        if not ids:
            return {}
        with self.conns.read() as conn:
            rows = conn.execute("SELECT entry_id, access_count, last_accessed_at FROM entry_access "
                                "WHERE entry_id = ANY(%s)", (ids,)).fetchall()
        return {r[0]: (int(r[1]), r[2]) for r in rows}

    @mapped
    def configure_audit(self, enabled: bool, max_rows: int) -> None:
        """Record the audit switch and size in the database (the triggers read them); prune to size now."""
        want = {"audit_enabled": "1" if enabled else "0", "audit_max_rows": str(int(max_rows))}
        with self.conns.read() as conn:
            have = dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                                     "('audit_enabled', 'audit_max_rows')").fetchall())
        if have == want:
            return
        with self.conns.write() as conn, conn.cursor() as cur:
            cur.executemany("INSERT INTO meta (key, value) VALUES (%s, %s) "
                            "ON CONFLICT (key) DO UPDATE SET value = excluded.value", list(want.items()))
            cur.execute("DELETE FROM audit_log WHERE seq <= (SELECT max(seq) FROM audit_log) - %s", (int(max_rows),))

    @mapped
    def audit_rows(self, scope: Scope, *, since: datetime | None = None, until: datetime | None = None,
                   kinds: Sequence[str] | None = None, limit: int | None = 100) -> list[dict[str, Any]]:
        """Audit rows of a scope (each given scope id must match), newest first."""
        clauses: list[str] = []
        args: list[Any] = []
        for name, value in scope.as_dict().items():
            if value is not None:
                clauses.append(f"{name} = %s")
                args.append(value)
        if since is not None:
            clauses.append("at >= %s")
            args.append(_aware(since))
        if until is not None:
            clauses.append("at < %s")
            args.append(_aware(until))
        if kinds:
            clauses.append("kind = ANY(%s)")
            args.append(list(kinds))
        sql = f"SELECT {_AUDIT_COLUMNS} FROM audit_log WHERE {' AND '.join(clauses) or 'TRUE'} ORDER BY seq DESC"
        if limit is not None:
            sql += " LIMIT %s"
            args.append(limit)
        with self.conns.read() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [{"seq": r[0], "at": r[1], "kind": r[2], "actor": r[3],
                 "scope": Scope(user_id=r[4], agent_id=r[5], project_id=r[6], session_id=r[7]),
                 "entry_ids": r[8], "detail": r[9]} for r in rows]
