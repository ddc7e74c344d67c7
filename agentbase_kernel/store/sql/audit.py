"""Reinforcement counters and the audit log (docs/lifecycle.md).

Writes, updates and deletes of entries are audited by triggers (each backend's migrations), so every
path that changes ``entries`` - ingest, update, delete, import - records itself in its own
transaction. This part reads the log, applies its size and switch, records reads, and bumps access counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...records import Scope
from .core import SqlCore, mapped

__all__ = ["AuditMixin"]

_AUDIT_COLUMNS = "seq, at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail"


class AuditMixin(SqlCore):
    """``entry_access`` and ``audit_log``."""

    @mapped
    def bump_access(self, counts: dict[str, tuple[int, str]],
                    reads: Sequence[dict[str, Any]] = ()) -> None:
        """Add ``count`` accesses at ``last`` (ISO) per entry id, and append read audit rows, in one
        short write. Ids deleted meanwhile are skipped."""
        if not counts and not reads:
            return
        d = self.dialect
        with self.conns.write() as conn:
            if counts:
                # sorted: two processes bumping the same ids lock them in one order
                last_seen = d.greatest("entry_access.last_accessed_at", "excluded.last_accessed_at")
                conn.executemany(
                    "INSERT INTO entry_access (entry_id, access_count, last_accessed_at) "
                    "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?) "
                    "ON CONFLICT (entry_id) DO UPDATE SET access_count = entry_access.access_count + "
                    f"excluded.access_count, last_accessed_at = {last_seen}",
                    [(eid, n, d.time(last), eid) for eid, (n, last) in sorted(counts.items())])
            if reads:
                conn.executemany(
                    "INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, "
                    "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(d.time(r["at"]), r.get("kind", "read"), r.get("actor"), r["scope"].user_id, r["scope"].agent_id,
                      r["scope"].project_id, r["scope"].session_id, d.json(list(r["entry_ids"])),
                      d.json(r.get("detail") or {})) for r in reads])

    @mapped
    def access_stats(self, entry_ids: Iterable[str]) -> dict[str, tuple[int, datetime | None]]:
        """``{id: (access_count, last_accessed_at)}`` for the ids that were ever accessed."""
        with self.conns.read() as conn:
            rows = self.select_in(conn, "SELECT entry_id, access_count, last_accessed_at FROM entry_access WHERE {in}",
                                  "entry_id", entry_ids)
        return {r[0]: (int(r[1]), self.dialect.when(r[2])) for r in rows}

    @mapped
    def configure_audit(self, enabled: bool, max_rows: int) -> None:
        """Record the audit switch and size in the database (the triggers read them); prune to size now."""
        want = {"audit_enabled": "1" if enabled else "0", "audit_max_rows": str(int(max_rows))}
        with self.conns.read() as conn:
            have = dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                                     "('audit_enabled', 'audit_max_rows')").fetchall())
        if have == want:
            return
        with self.conns.write() as conn:
            # a log that was off, or pruned, no longer holds every change: replay says so
            marks = [("audit_was_off", "1")] if not enabled else []
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?) "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value", [*want.items(), *marks])
            gone = conn.execute("DELETE FROM audit_log WHERE seq <= (SELECT max(seq) FROM audit_log) - ?",
                                (int(max_rows),)).rowcount
            if gone:
                conn.execute("INSERT INTO meta (key, value) VALUES ('audit_pruned', '1') "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value")

    @mapped
    def audit_rows(self, scope: Scope, *, since: datetime | None = None, until: datetime | None = None,
                   kinds: Sequence[str] | None = None, limit: int | None = 100) -> list[dict[str, Any]]:
        """Audit rows of a scope (each given scope id must match), newest first."""
        d = self.dialect
        clauses: list[str] = []
        args: list[Any] = []
        for name, value in scope.as_dict().items():
            clauses.append(f"{name} = ?")
            args.append(value)
        if since is not None:
            clauses.append("at >= ?")
            args.append(d.time(since))
        if until is not None:
            clauses.append("at < ?")
            args.append(d.time(until))
        if kinds:
            cond, kind_args = d.any_of("kind", list(kinds))
            clauses.append(cond)
            args.extend(kind_args)
        page, page_args = d.page(limit, 0)
        sql = f"SELECT {_AUDIT_COLUMNS} FROM audit_log WHERE {' AND '.join(clauses) or d.true} ORDER BY seq DESC{page}"
        with self.conns.read() as conn:
            rows = conn.execute(sql, [*args, *page_args]).fetchall()
        return [{"seq": r[0], "at": d.when(r[1]), "kind": r[2], "actor": r[3],
                 "scope": Scope(user_id=r[4], agent_id=r[5], project_id=r[6], session_id=r[7]),
                 "entry_ids": d.data(r[8]), "detail": d.data(r[9])} for r in rows]
