"""Fresh planner statistics after a bulk write, before the next search.

PostgreSQL plans a search from its table statistics. Right after a bulk load they still describe
the table as it was (empty, or a tenth of its size), and the planner scans a whole scope instead
of using the full-text index: 150 ms instead of 1.5 ms per term at 10k memories (docs/postgres.md).
Autovacuum refreshes them within a minute or so; a store that wrote many rows does it itself, once,
before its next search.
"""

from __future__ import annotations

import math
from typing import Any

from ..sql import SqlCore

__all__ = ["PlannerStatsMixin", "count_is_fresh"]

# rows written since the last ANALYZE, at least this many and this share of the table
_MIN_ROWS = 1000
_SHARE = 0.1


# a count of rows is taken again once the change log has moved by this share of it
COUNT_DRIFT = 0.01


def count_is_fresh(counted_at: int, seq: int, rows: int) -> bool:
    """Whether ``rows``, counted when the change log stood at ``counted_at``, may still be used at ``seq``:
    counting a 1M-row scope reads all of it, and a count 1% off moves an IDF or the exact-or-HNSW choice
    by about as much; below 100 rows any change counts again."""
    return seq - counted_at <= COUNT_DRIFT * rows


class PlannerStatsMixin(SqlCore):
    _rows_unanalysed: int
    _rows_analysed: float
    _shares_at: float

    def _rows_written(self, rows: int) -> None:
        with self._cache_lock:
            self._rows_unanalysed += rows

    def _fresh_statistics(self, conn: Any) -> None:
        """``ANALYZE`` the searched tables when this process wrote enough rows since it last did
        (outside a transaction only: a write's rows may still roll back); the common words'
        shares (common_terms.py) are read again after it."""
        if self.conns.in_write:
            return
        with self._cache_lock:
            due = self._rows_unanalysed >= max(_MIN_ROWS, _SHARE * self._rows_analysed)
            if due:
                self._rows_unanalysed = 0
        if not due:
            return
        conn.execute("ANALYZE entries, embeddings")
        rows = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'entries'::regclass").fetchone()[0]
        with self._cache_lock:
            self._rows_analysed = max(float(rows or 0), 0.0)
            self._shares_at = -math.inf
