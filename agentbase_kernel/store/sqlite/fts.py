"""Full-text search: BM25 with the IDF of the caller's scope, and its statistics cache.

FTS statistics (documents in the filter, per-term document frequencies and ranked rows) are
cached per process and dropped whenever the ``entry_changes`` log moves or an entry expires.
Entries carry their FTS5 text (``search_text``, ``search_context``); triggers keep ``entries_fts``
in step inside the same transaction, so the index can never drift from the rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import EntryFilter, bm25_idf, iso, utcnow
from ..sql import SqlCore, mapped

__all__ = ["FtsMixin"]

# BM25 column weights: the entry's own words, then its context (neighbouring turns), a little
# lower so that a turn that says the word itself ranks first (docs/retrieval.md)
_FTS_WEIGHTS = "1.0, 0.7"
_FTS_CACHE_ITEMS = 20_000


class FtsMixin(SqlCore):
    """``fts_search`` over ``entries_fts``, and ``rebuild_fts``."""

    _fts_now: str

    def _fts_stats(self, conn: Any, now: str) -> dict[Any, Any]:
        """The FTS cache of this snapshot: a new one if the log moved or an entry expired since.

        Each cache belongs to one ``entry_changes`` seq, so a thread only ever stores into it what
        it computed from a snapshot at that seq; searches fill it without holding the lock.
        """
        if not self.fts_cache or self.conns.in_write:
            return {}  # uncached: inside a write, the rows read may still roll back
        with self._cache_lock:
            seq = self._changes_seq(conn)
            stale = seq != self._fts_seq or len(self._fts) > _FTS_CACHE_ITEMS
            if not stale and self._fts_now < now:
                stale = conn.execute("SELECT 1 FROM entries WHERE expires_at > ? AND expires_at <= ? LIMIT 1",
                                     (self._fts_now, now)).fetchone() is not None
            if stale:
                self._fts, self._fts_seq, self._fts_now = {}, seq, now
            else:
                self._fts_now = max(self._fts_now, now)
            return self._fts

    @mapped
    def fts_search(self, terms: list[str], flt: EntryFilter, k: int, *, per_term: int = 400) -> list[tuple[int, float]]:
        """``(entry rid, score)`` best first: BM25 with the IDF of the caller's scope.

        One FTS5 index serves every tenant, so its IDF is global: a speaker's name that is in
        every other turn of one user's history is rare across all users and would dominate.
        Each term is ranked on its own (``bm25()`` of a one-term query is idf x tf-part), its
        global IDF divided out and the IDF within the filtered scope put back, then summed.
        Counts and each term's ranked rows are cached until the data changes (``_fts_stats``).
        """
        if not terms:
            return []
        now = iso(utcnow())
        where, args = self.where_sql(flt, now=now)
        # the filter without the clock: the cache is emptied when an entry expires
        fkey = (where, tuple(None if a is now else a for a in args))
        parts: list[tuple[np.ndarray, np.ndarray]] = []  # each term's rids and score contributions, in order
        with self.conns.read() as conn:
            cache = self._fts_stats(conn, now)
            if "totals" not in cache:
                cache["totals"] = (conn.execute("SELECT count(*) FROM entries_fts_docsize").fetchone()[0] or 1,
                                   conn.execute("SELECT count(*) FROM entries").fetchone()[0])
            if ("n_scope", fkey) not in cache:
                cache["n_scope", fkey] = conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args).fetchone()[0]
            (n_global, n_entries), n_filter = cache["totals"], cache["n_scope", fkey]
            n_scope = n_filter or 1
            # a filter that every entry passes needs no join (nor a second count) per term
            everything = n_filter == n_entries
            for term in terms:
                match = '"' + term.replace('"', '""') + '"'
                if ("df", match) not in cache:
                    cache["df", match] = conn.execute(
                        "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (match,)).fetchone()[0]
                df_global = cache["df", match]
                if not df_global:
                    continue
                key = ("rank", match, fkey, per_term)
                if key not in cache:
                    rows, df_scope = self._rank_term(conn, match, where, args, per_term, everything, df_global)
                    cache[key] = (np.array([r[0] for r in rows], dtype=np.int64),
                                  np.array([r[1] for r in rows], dtype=np.float64), df_scope)
                rids, bm25, df_scope = cache[key]
                if not len(rids):
                    continue
                idf_global = bm25_idf(n_global, df_global)
                idf_scope = bm25_idf(n_scope, df_scope)
                parts.append((rids, (-bm25) / idf_global * idf_scope))
        return _best(parts, k)

    def _rank_term(self, conn: Any, match: str, where: str, args: list[Any], per_term: int, everything: bool,
                   df_global: int) -> tuple[list[tuple[int, float]], int]:
        """One term's best ``per_term`` rows in the filter by ``bm25()``, and its document count there."""
        if everything:
            rows = conn.execute(f"SELECT rowid, bm25(entries_fts, {_FTS_WEIGHTS}) FROM entries_fts WHERE entries_fts MATCH ? "
                                "ORDER BY 2, rowid LIMIT ?", (match, per_term)).fetchall()
            return rows, df_global
        # CROSS JOIN keeps FTS5 as the outer loop: with the scope index outside, SQLite probed
        # the FTS index once per scope row (docs/retrieval.md has the timings)
        rows = conn.execute(
            f"SELECT e.rid, bm25(entries_fts, {_FTS_WEIGHTS}) FROM entries_fts CROSS JOIN entries e ON e.rid = entries_fts.rowid "
            f"WHERE entries_fts MATCH ? AND {where} ORDER BY 2, e.rid LIMIT ?", [match, *args, per_term]).fetchall()
        df_scope = len(rows) if len(rows) < per_term else conn.execute(
            f"SELECT count(*) FROM entries_fts CROSS JOIN entries e ON e.rid = entries_fts.rowid "
            f"WHERE entries_fts MATCH ? AND {where}", [match, *args]).fetchone()[0]
        return rows, df_scope

    @mapped
    def rebuild_fts(self) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('rebuild')")


def _best(parts: list[tuple[np.ndarray, np.ndarray]], k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(rid, summed score)``, ties by rid, of each term's ``(rids, scores)``.

    Each rid's sum is taken in term order starting from 0.0, as a running ``dict`` sum would, so the
    scores are the same floats; numpy only saves the Python loop and sort over every row.
    """
    if not parts:
        return []
    if len(parts) == 1:
        rids, scores = parts[0][0], parts[0][1] + 0.0
    else:
        rids, inverse = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
        scores = np.zeros(len(rids), dtype=np.float64)
        at = 0
        for term_rids, contribution in parts:  # a term's rids are distinct: one addition per rid and term
            scores[inverse[at : at + len(term_rids)]] += contribution
            at += len(term_rids)
    order = np.lexsort((rids, -scores))[:k]
    return list(zip(rids[order].tolist(), scores[order].tolist()))
