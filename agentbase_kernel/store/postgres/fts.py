"""Full text on PostgreSQL: BM25 over the ``tsvector`` a trigger keeps, and its statistics cache.

The same BM25 as the SQLite store (FTS5's k1 = 1.2, b = 0.75, column weights 1.0 / 0.7, the IDF
of the filtered scope, the average length of every entry), computed in SQL from the ``tsvector``
and the per-entry term counts (``fts_tf``, ``fts_len``) the trigger stores (``migrations.py``).
What differs is the tokenizer: PostgreSQL's parser and the snowball English stemmer instead of
FTS5's unicode61 + porter (docs/postgres.md).

As on SQLite, each term's ranked rows and document count in a filter are cached per process until
the ``entry_changes`` log moves or an entry expires (the filter's size and the average length until
it moves by 1% of them: counting a large table reads all of it), so one ``find`` (which asks for
each query word alone, then the whole query, then its key phrases) ranks each term once. Checking the cache is one round trip; a term's parse (a pure function of
its text) is kept for the process.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import EntryFilter, bm25_idf, utcnow
from ..sql import mapped
from .bm25 import part_from_entries
from .common_terms import CommonTermsMixin
from .planner import PlannerStatsMixin, count_is_fresh

__all__ = ["FtsMixin"]

_CACHE_ITEMS = 20_000
_PARSED_ITEMS = 50_000


class FtsMixin(CommonTermsMixin, PlannerStatsMixin):
    """``fts_search`` and ``rebuild_fts``."""

    _fts_totals: dict[Any, tuple[Any, ...]]
    _fts_now: datetime | None
    _parsed: dict[str, tuple[str, list[str]]]

    def _fts_stats(self, conn: Any, now: datetime) -> dict[Any, Any]:
        """The cache of this snapshot: a new one when the change log moved or an entry expired since
        the last search (one statement asks both). Inside a write, none: what it reads may roll back."""
        if not self.fts_cache or self.conns.in_write:
            return {}
        with self._cache_lock:
            last = self._fts_now or now
        seq, expired = conn.execute(
            "SELECT (SELECT coalesce(max(seq), 0) FROM entry_changes), "
            "EXISTS (SELECT 1 FROM entries WHERE expires_at > ? AND expires_at <= ?)", (last, now)).fetchone()
        with self._cache_lock:
            if expired:
                self._fts_totals = {}
            if seq != self._fts_seq or expired or len(self._fts) > _CACHE_ITEMS:
                self._fts, self._fts_seq, self._fts_now = {}, int(seq), now
            elif self._fts_now is None or self._fts_now < now:
                self._fts_now = now
            return self._fts

    def _parse(self, conn: Any, terms: list[str]) -> dict[str, tuple[str, list[str]]]:
        """Each term's ``tsquery`` (a phrase for several words) and lexemes, parsed by the server once."""
        with self._cache_lock:
            known = {t: self._parsed[t] for t in terms if t in self._parsed}
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        if missing:
            rows = conn.execute(
                "SELECT t.term, phraseto_tsquery('agentbase_english', agentbase_fold(t.term))::text, "
                "array(SELECT lexeme FROM unnest(to_tsvector('agentbase_english', agentbase_fold(t.term)))) "
                "FROM unnest(?::text[]) AS t(term)", (missing,)).fetchall()
            parsed = {term: (query, list(lexemes)) for term, query, lexemes in rows}
            with self._cache_lock:
                if len(self._parsed) > _PARSED_ITEMS:
                    self._parsed.clear()
                self._parsed.update(parsed)
            known |= parsed
        return known

    def _totals(self, conn: Any, cache: dict[Any, Any], where: str, args: list[Any], fkey: Any) -> tuple[int, float]:
        """The filter's entry count (BM25's N) and every entry's average length (avgdl).

        Both are kept across writes while ``count_is_fresh`` (planner.py); an entry expiring counts
        them again (``_fts_stats``)."""
        if "avgdl" in cache and ("n", fkey) in cache:
            return cache["n", fkey], cache["avgdl"]
        keep = self.fts_cache and not self.conns.in_write
        with self._cache_lock:
            seq = self._fts_seq
            whole = self._fts_totals.get("all") if keep else None
            scope = self._fts_totals.get(fkey) if keep else None
        if whole is None or not count_is_fresh(whole[0], seq, whole[1]):
            n_all, total = conn.execute("SELECT count(*), coalesce(sum(fts_len), 0) FROM entries").fetchone()
            whole = (seq, int(n_all), (float(total) / n_all) if n_all and total else 1.0)
        if scope is None or not count_is_fresh(scope[0], seq, scope[1]):
            scope = (seq, int(conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args).fetchone()[0]))
        if keep:
            with self._cache_lock:
                if len(self._fts_totals) > _CACHE_ITEMS:
                    self._fts_totals.clear()
                self._fts_totals["all"], self._fts_totals[fkey] = whole, scope
        cache["avgdl"], cache["n", fkey] = whole[2], scope[1]
        return scope[1], whole[2]

    @mapped
    def fts_search(self, terms: list[str], flt: EntryFilter, k: int, *, per_term: int = 400) -> list[tuple[int, float]]:
        """``(entry rid, score)`` best first: BM25 with the IDF of the caller's scope (as ``SqliteStore``);
        words common in a large scope are ranked as ``common_terms.py`` says."""
        if not terms:
            return []
        now = utcnow()
        where, args = self.where_sql(flt, now=now)
        # the filter without the clock: the cache is emptied when an entry expires
        fkey = (where, tuple(None if a is now else repr(a) for a in args))
        with self.conns.read() as conn:
            self._fresh_statistics(conn)
            cache = self._fts_stats(conn, now)
            parsed = self._parse(conn, terms)
            wanted = list(dict.fromkeys((q, tuple(lx)) for q, lx in (parsed[t] for t in terms) if lx))
            if not wanted:
                return []
            n_scope, avgdl = self._totals(conn, cache, where, args, fkey)
            shares = self._lexeme_shares(conn)
            common = {query: rows for query, lexemes in wanted
                      if (rows := self._common_rows(lexemes, shares, n_scope)) is not None}
            keys = {query: ("recent" if query in common else "rank", query, fkey, per_term) for query, _ in wanted}
            todo = [(query, lexemes) for query, lexemes in wanted if query not in common and keys[query] not in cache]
            if todo:
                for query, ranked_df in self._rank_terms(conn, todo, where, args, avgdl, per_term).items():
                    cache[keys[query]] = ranked_df
            for query, lexemes in wanted:
                if query in common and keys[query] not in cache:
                    newest = self._rank_recent(conn, cache, query, lexemes, where, args, avgdl, per_term,
                                               common[query])
                    cache[keys[query]] = (newest, common[query])
            # a common word's part on every row the rarer words found, as exact ranking would give it
            found = sorted({rid for query, _ in wanted if query not in common for rid, _ in cache[keys[query]][0]})
            on = {query: cache.setdefault(("on", query, fkey), {}) for query in common}
            missing = sorted({rid for query in common for rid in found if rid not in on[query]})
            if missing:
                lacking = [(query, lexemes) for query, lexemes in wanted if query in common]
                for query, parts in self._parts_on(conn, lacking, missing, where, args, avgdl).items():
                    on[query].update(parts)
        scores: dict[int, float] = {}
        for query, _ in wanted:
            rows, df = cache[keys[query]]
            parts = dict(rows)
            if query in on:
                parts.update((rid, on[query][rid]) for rid in found if on[query][rid] > 0)
            if not parts:
                continue
            idf = bm25_idf(n_scope or 1, df)
            for rid, part in parts.items():
                scores[rid] = scores.get(rid, 0.0) + part * idf
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:k]

    def _rank_terms(self, conn: Any, terms: list[tuple[str, tuple[str, ...]]], where: str, args: list[Any],
                    avgdl: float, per_term: int) -> dict[str, tuple[list[tuple[int, float]], int]]:
        """Each term's best ``per_term`` rows in the filter by its BM25 part (tf and length, before
        the IDF) and its document count there, for every term in one statement.

        The GIN index finds a term's rows; the stored term counts (``fts_tf``) give its frequency
        without unnesting each row's ``tsvector``."""
        parts: list[str] = []
        params: list[Any] = []
        for i, (query, lexemes) in enumerate(terms):
            part, part_params = part_from_entries(lexemes, avgdl)
            parts.append(
                f"(SELECT {i} AS term, rid, part, count(*) OVER () AS df FROM (SELECT e.rid, {part} "
                f"WHERE e.fts @@ ?::tsquery AND {where}) x WHERE part > 0 ORDER BY part DESC, rid LIMIT ?)")
            params += [*part_params, query, *args, per_term]
        out: dict[str, tuple[list[tuple[int, float]], int]] = {query: ([], 0) for query, _ in terms}
        # never prepared: a generic plan cannot see how common each word is (psycopg prepares a
        # statement on its fifth run)
        for term, rid, part, df in conn.execute(" UNION ALL ".join(parts), params, prepare=False).fetchall():
            rows, _ = out[terms[term][0]]
            rows.append((int(rid), float(part)))
            out[terms[term][0]] = (rows, int(df))
        return out

    @mapped
    def rebuild_fts(self) -> None:
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET search_text = search_text")
