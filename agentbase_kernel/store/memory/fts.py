"""Full-text ranking for the in-memory store: a plain BM25 over the project's own tokenizer.

Each entry has two fields, its own words (``search_text``) and the words around it
(``search_context``, weighted 0.7), as the SQL backends index them. A query term scores each entry
of the filter by BM25's term-frequency part (k1 = 1.2, b = 0.75, field lengths over the field's
average in the whole store) times the term's IDF within the filter (``store.base.bm25_idf``), and
the terms' scores add up. Terms are matched as ``text.tokenize.words`` splits them, without
stemming: a word matches itself only (the SQL backends' stemmers are theirs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from ...text.tokenize import words
from ..base import bm25_idf

__all__ = ["K1", "B", "WEIGHTS", "bm25_rank"]

K1 = 1.2
B = 0.75
#: the entry's own words, then its context
WEIGHTS = (1.0, 0.7)


@lru_cache(maxsize=65_536)
def tokens(text: str) -> tuple[str, ...]:
    return tuple(words(text))


def _count(haystack: Sequence[str], needle: Sequence[str]) -> int:
    """How often ``needle`` (a word, or the words of a term that splits in several) occurs in order."""
    n = len(needle)
    if n == 1:
        return haystack.count(needle[0])
    return sum(1 for i in range(len(haystack) - n + 1) if tuple(haystack[i : i + n]) == tuple(needle))


def bm25_rank(terms: Iterable[str], docs: dict[int, tuple[str, str]], every_doc: Iterable[tuple[str, str]],
              k: int, per_term: int) -> list[tuple[int, float]]:
    """``(rid, score)`` best first (ties by rid) of ``docs`` (rid -> (text, context), the entries the
    filter passes); ``every_doc`` gives the average field lengths. Each term counts with its best
    ``per_term`` entries only, as the SQL backends' per-term rankings do."""
    fields = {rid: (tokens(text), tokens(context)) for rid, (text, context) in docs.items()}
    lengths = [(len(tokens(text)), len(tokens(context))) for text, context in every_doc]
    average = [sum(length[i] for length in lengths) / len(lengths) if lengths else 0.0 for i in range(2)]
    n_scope = len(docs) or 1
    scores: dict[int, float] = {}
    for term in terms:
        needle = tokens(term)
        if not needle:
            continue
        parts: list[tuple[float, int]] = []
        for rid, columns in fields.items():
            part = 0.0
            for weight, column, avg in zip(WEIGHTS, columns, average):
                tf = _count(column, needle)
                if tf:
                    norm = 1 - B + B * (len(column) / avg if avg else 1.0)
                    part += weight * tf * (K1 + 1) / (tf + K1 * norm)
            if part:
                parts.append((-part, rid))
        if not parts:
            continue
        idf = bm25_idf(n_scope, len(parts))
        for neg, rid in sorted(parts)[:per_term]:
            scores[rid] = scores.get(rid, 0.0) + -neg * idf
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
