"""Retrieval traces: what each search did, step by step, for ``trace_session``."""

from __future__ import annotations

from typing import Any

from ...records import Scope, Trace
from .core import SqlCore, mapped

__all__ = ["TRACE_COLS", "TracesMixin"]

TRACE_COLS = "id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at"


class TracesMixin(SqlCore):
    """``retrieval_traces`` and ``trace_steps``."""

    def _trace_where(self, scope: Scope) -> tuple[str, list[Any]]:
        """Traces whose recorded scope has each id ``scope`` sets."""
        fields = scope.as_dict()
        clauses = [f"{self.dialect.json_text('scope', name)} = ?" for name in fields]
        return " AND ".join(clauses) or self.dialect.true, list(fields.values())

    def _trace(self, conn: Any, row: Any) -> dict[str, Any]:
        """A trace record from ``TRACE_COLS`` with its steps (times as ISO text)."""
        d = self.dialect
        steps = [{"name": s[0], "ms": s[1], "candidates": s[2], "params": d.data(s[3])} for s in conn.execute(
            "SELECT name, ms, candidates, params FROM trace_steps WHERE trace_id = ? ORDER BY idx", (row[0],))]
        return {"id": row[0], "query": d.text_out(row[1]), "scope": d.data(row[2]), "intents": d.data(row[3]),
                "degrade_reason": row[4], "result_ids": d.data(row[5]), "total_ms": row[6],
                "created_at": d.iso(row[7]), "steps": steps}

    def _insert_trace(self, conn: Any, trace_id: str, query: str, scope: dict[str, Any], intents: Any,
                      degrade_reason: str | None, result_ids: list[str], total_ms: float, created_at: Any,
                      steps: list[tuple[str, float, int, Any]]) -> bool:
        """One trace and its ``(name, ms, candidates, params)`` steps; False (nothing written) if its id is taken."""
        d = self.dialect
        cur = conn.execute(
            "INSERT INTO retrieval_traces (id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (trace_id, d.text(query), d.json(scope), d.json(intents), degrade_reason, d.json(result_ids), total_ms,
             created_at))
        if cur.rowcount == 0:
            return False
        if steps:
            conn.executemany(
                "INSERT INTO trace_steps (trace_id, idx, name, ms, candidates, params) VALUES (?, ?, ?, ?, ?, ?)",
                [(trace_id, i, name, ms, n, d.json(params)) for i, (name, ms, n, params) in enumerate(steps)])
        return True

    @mapped
    def save_trace(self, trace: Trace, scope: Scope, result_ids: list[str], total_ms: float) -> None:
        with self.conns.write() as conn:
            self._insert_trace(conn, trace.id, trace.query, scope.as_dict(), trace.intents, trace.degrade_reason,
                               result_ids, total_ms, self.dialect.now(),
                               [(s.name, s.ms, s.candidates, s.params) for s in trace.steps])

    @mapped
    def load_traces(self, scope: Scope, limit: int = 20) -> list[dict[str, Any]]:
        where, args = self._trace_where(scope)
        with self.conns.read() as conn:
            rows = conn.execute(f"SELECT {TRACE_COLS} FROM retrieval_traces WHERE {where} "
                                f"ORDER BY created_at DESC, {self.dialect.row_order} DESC LIMIT ?",
                                [*args, limit]).fetchall()
            return [self._trace(conn, r) for r in rows]
