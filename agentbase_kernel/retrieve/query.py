"""The question as every step of ``find`` sees it: checked, normalised and analysed once."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timezone

import numpy as np

from ..config import RetrievalConfig
from ..errors import InvalidArgument
from ..store.base import EntryFilter, utcnow
from ..text import dates as dates_mod
from ..text import intent as intent_mod
from ..text import tokenize

__all__ = ["MAX_TOP_K", "Query", "parse_query"]

# find() returns at most this many hits (documented in docs/kernel-api.md); list() pages past it
MAX_TOP_K = 1000
# a query is a cue, not a document: only its head is analysed and searched (a 10 MB query must not hang find)
_QUERY_CHARS = 10_000
_STRATEGIES = ("auto", "hierarchical", "flat")


@dataclass
class Query:
    """One ``find`` call's question and options; later steps fill ``intents`` to ``vector``.

    Usage::

        q = parse_query("where do I live now?", top_k=5, flt=EntryFilter(), reference_time=None,
                        token_budget=None, strategy="auto", cfg=RetrievalConfig())
        q.terms, q.about_self, q.asks_current
    """

    text: str  # stripped, at most _QUERY_CHARS
    normalized: str
    top_k: int
    flt: EntryFilter
    reference: datetime
    cfg: RetrievalConfig
    strategy: str
    token_budget: int | None
    terms: list[str]  # the keyword leg's terms for the whole question
    worded: list[str]  # those terms that are not dates (a date is matched as a window, not as a word)
    about_self: bool  # first person only: "what's my rent?"
    asks_current: bool  # how things stand now: "where do I live now?"
    want: int = 0  # hits to return (more than top_k for aggregation questions)
    intents: set[str] = field(default_factory=set)
    window: tuple[date, date] | None = None
    subqueries: list[str] = field(default_factory=list)
    vector: np.ndarray | None = None  # the query's embedding (None: no vector leg)


def parse_query(query: object, *, top_k: object, flt: EntryFilter, reference_time: datetime | None,
                token_budget: int | None, strategy: str, cfg: RetrievalConfig) -> Query:
    """Check the arguments and analyse the question once (``InvalidArgument`` for bad input)."""
    if not isinstance(query, str):
        raise InvalidArgument(f"query must be a str, got {type(query).__name__}")
    text = query.strip()[:_QUERY_CHARS]
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
        raise InvalidArgument(f"top_k must be a non-negative int, got {top_k!r}")
    if strategy not in _STRATEGIES:
        raise InvalidArgument(f"strategy must be 'auto', 'hierarchical' or 'flat', got {strategy!r}")
    normalized = tokenize.normalize(text)
    if not normalized:
        raise InvalidArgument("query is empty - pass the text to search for")
    reference = reference_time or utcnow()
    if reference.tzinfo is None:
        reference = reference.replace(tzinfo=timezone.utc)
    terms = tokenize.query_terms(normalized)
    top_k = min(top_k, MAX_TOP_K)
    return Query(text=text, normalized=normalized, top_k=top_k, want=top_k, flt=flt, reference=reference,
                 cfg=cfg, strategy=strategy, token_budget=token_budget, terms=terms,
                 worded=[t for t in terms if not dates_mod.is_date_word(t)],
                 about_self=intent_mod.asks_about_self(text), asks_current=intent_mod.asks_current(text))
