"""Very common words on PostgreSQL: candidates from their newest rows, scores on the rarer words' rows.

Ranking a word over every row of the scope that holds it reads each of those rows (its term count
and length live in the heap): a common word in a 1M-row scope is 25,000-55,000 page reads, hundreds
of milliseconds (docs/postgres.md). As Lucene's CommonTermsQuery does, a word the planner's
statistics put in more than ``fts_common_rows`` rows of the filtered scope does not pick rows from the
whole scope: its own candidates are its newest ``per_term`` matching rows, ranked by BM25 among
themselves, and it adds its part to every row the query's rarer words found, as exact ranking would.
Its document count (for the IDF) is the statistics' share times the scope's size. Below that size
ranking is exact, as on SQLite; every scope of the development sets is.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ..sql import SqlCore
from .bm25 import part_from_entries

__all__ = ["CommonTermsMixin"]

# the planner's statistics are re-read at most this often (ANALYZE refreshes them; planner.py)
_SHARES_TTL_S = 60.0
# a common word's window of newest rows is sized for this many times ``per_term`` expected matches,
# then widened this many times over until it holds ``per_term`` (the statistics are an estimate)
_WINDOW_SLACK = 1.5
_WIDEN = 4
# the planner's cost of one operator while a window is ranked (its default is 0.0025)
_TEXT_MATCH_COST = 0.05


class CommonTermsMixin(SqlCore):
    fts_common_rows: int
    _shares: dict[str, float]
    _shares_at: float

    def _lexeme_shares(self, conn: Any) -> dict[str, float]:
        """Each frequent lexeme's share of the ``entries`` rows, from ``ANALYZE``'s most-common-element
        statistics of the ``tsvector`` (a sample of 30,000 rows): empty before the first ``ANALYZE``."""
        with self._cache_lock:
            if time.monotonic() - self._shares_at < _SHARES_TTL_S:
                return self._shares
        row = conn.execute(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = 'entries' AND attname = 'fts'").fetchone()
        shares = dict(zip(row[0], row[1])) if row and row[0] else {}
        with self._cache_lock:
            self._shares, self._shares_at = shares, time.monotonic()
        return shares

    def _common_rows(self, lexemes: tuple[str, ...], shares: dict[str, float], n_scope: int) -> int | None:
        """The estimated rows of the scope holding the term when that is over ``fts_common_rows``,
        else None (ranked exactly). A phrase's share is its words' shares multiplied, as if they were
        independent: adjacent words are rarer still, and a window sized too small is widened."""
        share = math.prod(shares.get(lexeme, 0.0) for lexeme in lexemes) if lexemes else 0.0
        rows = int(round(share * n_scope))
        return rows if rows > self.fts_common_rows else None

    def _rank_recent(self, conn: Any, cache: dict[Any, Any], query: str, lexemes: tuple[str, ...], where: str,
                     args: list[Any], avgdl: float, per_term: int, rows: int) -> list[tuple[int, float]]:
        """The term's best ``per_term`` rows by BM25 part among its newest ``per_term`` or so matching
        rows of the filter: a window of the newest rids sized from its estimated ``rows``, widened
        until it holds enough (or spans the table)."""
        if "rids" not in cache:
            cache["rids"] = conn.execute("SELECT min(rid), max(rid) FROM entries").fetchone()
        low, high = cache["rids"]
        if high is None:
            return []
        span = high - low + 1
        width = max(per_term, math.ceil(span * min(1.0, _WINDOW_SLACK * per_term / max(rows, 1))))
        part, params = part_from_entries(lexemes, avgdl)
        while True:
            floor = high - width
            # PostgreSQL costs a row's text match like an addition and would walk the window's rows
            # in order, testing each; with that priced closer to what it is and bitmaps only, the
            # plan intersects the full-text index with the window's (BitmapAnd) and reads only the
            # rows holding the word, or for a very common word tests the window (docs/postgres.md)
            with conn.transaction():
                conn.execute(f"SET LOCAL cpu_operator_cost = {_TEXT_MATCH_COST}; SET LOCAL enable_indexscan = off")
                found = conn.execute(
                    f"SELECT rid, part, count(*) OVER () FROM (SELECT e.rid, {part} "
                    f"WHERE e.rid > ? AND e.fts @@ ?::tsquery AND {where}) x WHERE part > 0 "
                    "ORDER BY part DESC, rid LIMIT ?", [*params, floor, query, *args, per_term], prepare=False).fetchall()
                # back, for the rest of a caller's transaction
                conn.execute("SET LOCAL cpu_operator_cost TO DEFAULT; SET LOCAL enable_indexscan TO DEFAULT")
            if (found and found[0][2] >= per_term) or floor < low:
                return [(int(rid), float(p)) for rid, p, _ in found]
            width *= _WIDEN

    def _parts_on(self, conn: Any, terms: list[tuple[str, tuple[str, ...]]], rids: list[int], where: str,
                  args: list[Any], avgdl: float) -> dict[str, dict[int, float]]:
        """Each term's BM25 part on each of ``rids`` (0.0 where the row lacks it), in one statement."""
        out: dict[str, dict[int, float]] = {query: dict.fromkeys(rids, 0.0) for query, _ in terms}
        if not rids or not terms:
            return out
        parts: list[str] = []
        params: list[Any] = []
        for i, (query, lexemes) in enumerate(terms):
            part, part_params = part_from_entries(lexemes, avgdl)
            parts.append(f"(SELECT {i} AS term, e.rid, {part} WHERE e.rid = ANY(?) AND e.fts @@ ?::tsquery AND {where})")
            params += [*part_params, rids, query, *args]
        for term, rid, value in conn.execute(" UNION ALL ".join(parts), params, prepare=False).fetchall():
            if value > 0:
                out[terms[term][0]][int(rid)] = float(value)
        return out
