"""The retrieval pipeline behind ``find``: zero LLM calls, every step timed into a trace.

    query -> normalise -> intents + date window -> decomposition -> recall legs (FTS5 BM25,
    vectors) -> fusion (score fusion by default, or RRF) -> NER boost -> intent strategies
    -> first-person boost -> latest first -> session co-retrieval -> heuristic rerank -> dense quota
    -> answer first -> level + token budget -> trace

The question is analysed once (``query.py``); each step is a function in ``steps.py`` over that
query and one search state, and records its own trace entry. Each can be switched off in
``RetrievalConfig``; docs/retrieval.md has what each one is worth.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..config import RetrievalConfig
from ..records import FindResult, Hit, Trace, TraceStep
from ..store.base import EntryFilter
from ..store.protocol import SearchIndex
from .query import MAX_TOP_K, parse_query
from .steps import STEPS, Search, Step, VectorCache

__all__ = ["MAX_TOP_K", "Retriever"]

Reranker = Callable[[str, list[Hit]], list[Hit]]
Decomposer = Callable[[str], list[str]]


class Retriever:
    """Runs ``find``. Owned by the kernel; adapters call ``AgentBase.find``.

    Usage::

        retriever = Retriever(store, config=RetrievalConfig(), ner=None, embedder=None)
        result = retriever.find("python preferences", top_k=5, flt=EntryFilter(scope=Scope(user_id="u")))
    """

    steps: tuple[tuple[str, Step], ...] = STEPS

    def __init__(self, store: SearchIndex, *, config: RetrievalConfig, ner: Any, embedder: Any,
                 reranker: Reranker | None = None, decomposer: Decomposer | None = None) -> None:
        self.store = store
        self.config = config
        self.ner = ner
        self.embedder = embedder
        self.reranker = reranker
        self.decomposer = decomposer
        self.rank_term: Callable[[list[Any], datetime, list[float]], list[Any]] | None = None  # lifecycle/composite.py

    def find(self, query: str, *, top_k: int, flt: EntryFilter, reference_time: datetime | None = None,
             token_budget: int | None = None, strategy: str = "auto",
             config: RetrievalConfig | None = None) -> FindResult:
        cfg = config or self.config
        q = parse_query(query, top_k=top_k, flt=flt, reference_time=reference_time, token_budget=token_budget,
                        strategy=strategy, cfg=cfg)
        trace = Trace(id=str(uuid.uuid4()), query=q.text)
        s = Search(vectors=VectorCache(self.store, flt.scope))
        t_start = t = time.perf_counter()
        for name, step in self.steps:
            done = step(self, q, s)
            if done is not None:
                now = time.perf_counter()
                trace.steps.append(TraceStep(name, round((now - t) * 1000, 3), done.candidates, done.params))
                t = now
        trace.intents = sorted(q.intents)
        trace.degrade_reason = s.degrade
        provenance = self.store.provenance([h.id for h in s.hits])
        for h in s.hits:
            h.provenance = provenance.get(h.id, [])
        total_ms = (time.perf_counter() - t_start) * 1000
        if cfg.record_traces:
            self.store.save_trace(trace, flt.scope, [h.id for h in s.hits], total_ms)
        return FindResult(s.hits, trace)
