"""Retrieval traces: what each search did, step by step, for ``trace_session``."""

from __future__ import annotations

import json
from typing import Any

from ...records import Scope, Trace
from ..base import iso, utcnow
from .core import SqliteCore, dumps, mapped

__all__ = ["TracesMixin"]


class TracesMixin(SqliteCore):
    """``retrieval_traces`` and ``trace_steps``."""

    @mapped
    def save_trace(self, trace: Trace, scope: Scope, result_ids: list[str], total_ms: float) -> None:
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO retrieval_traces (id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (trace.id, trace.query, dumps(scope.as_dict()), dumps(trace.intents), trace.degrade_reason,
                 dumps(result_ids), total_ms, iso(utcnow())))
            conn.executemany(
                "INSERT INTO trace_steps (trace_id, idx, name, ms, candidates, params) VALUES (?, ?, ?, ?, ?, ?)",
                [(trace.id, i, s.name, s.ms, s.candidates, dumps(s.params)) for i, s in enumerate(trace.steps)])

    @mapped
    def load_traces(self, scope: Scope, limit: int = 20) -> list[dict[str, Any]]:
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at "
                "FROM retrieval_traces ORDER BY created_at DESC LIMIT ?", (max(limit * 20, limit),)).fetchall()
            out = []
            wanted = scope.as_dict()
            for r in rows:
                stored = json.loads(r[2])
                if any(stored.get(k) != v for k, v in wanted.items()):
                    continue
                steps = [{"name": s[0], "ms": s[1], "candidates": s[2], "params": json.loads(s[3])} for s in conn.execute(
                    "SELECT name, ms, candidates, params FROM trace_steps WHERE trace_id = ? ORDER BY idx", (r[0],))]
                out.append({"id": r[0], "query": r[1], "scope": stored, "intents": json.loads(r[3]),
                            "degrade_reason": r[4], "result_ids": json.loads(r[5]), "total_ms": r[6],
                            "created_at": r[7], "steps": steps})
                if len(out) >= limit:
                    break
        return out
