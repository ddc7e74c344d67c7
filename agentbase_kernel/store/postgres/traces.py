"""Retrieval traces: what each search did, step by step, for ``trace_session``."""

from __future__ import annotations

from typing import Any

from ...records import Scope, Trace
from ..base import iso, utcnow
from .core import PgCore, jsonb, mapped, text_in, text_out

__all__ = ["TracesMixin"]


class TracesMixin(PgCore):
    """``retrieval_traces`` and ``trace_steps``."""

    @mapped
    def save_trace(self, trace: Trace, scope: Scope, result_ids: list[str], total_ms: float) -> None:
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO retrieval_traces (id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (trace.id, text_in(trace.query), jsonb(scope.as_dict()), jsonb(trace.intents), trace.degrade_reason,
                 jsonb(result_ids), total_ms, utcnow()))
            if trace.steps:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO trace_steps (trace_id, idx, name, ms, candidates, params) VALUES (%s, %s, %s, %s, %s, %s)",
                        [(trace.id, i, s.name, s.ms, s.candidates, jsonb(s.params)) for i, s in enumerate(trace.steps)])

    @mapped
    def load_traces(self, scope: Scope, limit: int = 20) -> list[dict[str, Any]]:
        wanted = {k: v for k, v in scope.as_dict().items() if v is not None}
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at "
                "FROM retrieval_traces WHERE scope @> %s ORDER BY created_at DESC, rid DESC LIMIT %s",
                (jsonb(wanted), limit)).fetchall()
            out = []
            for r in rows:
                steps = [{"name": s[0], "ms": s[1], "candidates": s[2], "params": s[3]} for s in conn.execute(
                    "SELECT name, ms, candidates, params FROM trace_steps WHERE trace_id = %s ORDER BY idx", (r[0],))]
                out.append({"id": r[0], "query": text_out(r[1]), "scope": r[2], "intents": r[3], "degrade_reason": r[4],
                            "result_ids": r[5], "total_ms": r[6], "created_at": iso(r[7]), "steps": steps})
        return out
