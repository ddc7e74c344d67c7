"""The retrieval pipeline behind ``find``: zero LLM calls, every step timed into a trace.

    query -> normalise -> intents + date window -> decomposition -> recall legs (FTS5 BM25,
    vectors) -> fusion (score fusion by default, or RRF) -> NER boost -> intent strategies
    -> first-person boost -> latest first -> session co-retrieval -> heuristic rerank -> dense quota
    -> level + token budget -> trace

Each step can be switched off in ``RetrievalConfig``; the LoCoMo benchmark
(``benchmarks/locomo.py``) measures every step's contribution (docs/retrieval.md).
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ..config import RetrievalConfig
from ..errors import EmbedderUnavailable, InvalidArgument
from ..records import Entry, FindResult, Hit, Scope, Trace, TraceStep
from ..store.base import EntryFilter, utcnow
from ..store.protocol import SearchIndex
from ..text import tokenize

__all__ = ["Retriever"]

# find() returns at most this many hits (documented in docs/kernel-api.md); list() pages past it
MAX_TOP_K = 1000

Reranker = Callable[[str, list[Hit]], list[Hit]]
Decomposer = Callable[[str], list[str]]

_SCOPE_PRIORITY = {"session": 1.0, "agent": 0.8, "project": 0.6, "global": 0.4}
# a query is a cue, not a document: only its head is analysed and searched (a 10 MB query must not
# hang find, issue 9)
_QUERY_CHARS = 10_000
# which memories hold a query word: each word's matching rows, read per term (the store caches them)
_TERM_ROWS = 400
# the keyword leg's best matches whose words are compared with the query's
_COVERAGE_POOL = 10
_IMPLICIT = ("bought", "tried", "using", "use ", "buy", "ordered", "started", "love", "enjoy")


@dataclass
class _Candidate:
    rid: int
    fused: float = 0.0
    legs: dict[str, int] = field(default_factory=dict)
    boost: float = 1.0
    matched_by: list[str] = field(default_factory=list)
    entry: Entry | None = None
    final: float = 0.0


class _Timer:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def step(self, name: str, started: float, candidates: int, **params: Any) -> float:
        now = time.perf_counter()
        self.trace.steps.append(TraceStep(name, round((now - started) * 1000, 3), candidates, params))
        return now


class Retriever:
    """Runs ``find``. Owned by the kernel; adapters call ``AgentBase.find``.

    Usage::

        retriever = Retriever(store, config=RetrievalConfig(), ner=None, embedder=None)
        result = retriever.find("python preferences", top_k=5, flt=EntryFilter(scope=Scope(user_id="u")))
    """

    def __init__(self, store: SearchIndex, *, config: RetrievalConfig, ner: Any, embedder: Any,
                 reranker: Reranker | None = None, decomposer: Decomposer | None = None) -> None:
        self.store = store
        self.config = config
        self.ner = ner
        self.embedder = embedder
        self.reranker = reranker
        self.decomposer = decomposer
        self.rank_term: Callable[[list[Any], datetime, list[float]], list[Any]] | None = None  # lifecycle/rank.py

    def find(self, query: str, *, top_k: int, flt: EntryFilter, reference_time: datetime | None = None,
             token_budget: int | None = None, strategy: str = "auto",
             config: RetrievalConfig | None = None) -> FindResult:
        from ..text import dates as dates_mod
        from ..text import intent as intent_mod

        cfg = config or self.config
        if not isinstance(query, str):
            raise InvalidArgument(f"query must be a str, got {type(query).__name__}")
        query = query.strip()[:_QUERY_CHARS]
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
            raise InvalidArgument(f"top_k must be a non-negative int, got {top_k!r}")
        if strategy not in ("auto", "hierarchical", "flat"):
            raise InvalidArgument(f"strategy must be 'auto', 'hierarchical' or 'flat', got {strategy!r}")
        normalized = tokenize.normalize(query)
        if not normalized:
            raise InvalidArgument("query is empty - pass the text to search for")
        trace = Trace(id=str(uuid.uuid4()), query=query)
        timer = _Timer(trace)
        t_start = t = time.perf_counter()
        reference = reference_time or utcnow()
        if reference.tzinfo is None:
            reference = reference.replace(tzinfo=timezone.utc)
        top_k = min(top_k, MAX_TOP_K)
        t = timer.step("normalise", t, 0, normalized=normalized[:200])

        intents: set[str] = set()
        window = None
        if cfg.intents:
            intents = intent_mod.detect_intents(normalized)
        if cfg.date_window:
            window = dates_mod.query_window(query, reference)
            if window is not None:
                intents.add("temporal")
        trace.intents = sorted(intents)
        want = top_k
        if "aggregation" in intents:
            want = max(top_k, min(cfg.aggregation_top_k, max(top_k, 20) * 6))
        t = timer.step("intent", t, 0, intents=trace.intents,
                       window=[d.isoformat() for d in window] if window else None)

        subqueries = [normalized]
        extra = intent_mod.key_phrases(normalized) if cfg.decompose else []
        if self.decomposer is not None:  # the caller's own (e.g. LLM) decomposition is an explicit opt-in
            extra = [*extra, *self.decomposer(query)]
        subqueries += [s for s in dict.fromkeys(extra) if s and s != normalized]
        t = timer.step("decompose", t, len(subqueries), subqueries=subqueries[:8])

        fetch = max(int(math.ceil(want * cfg.overfetch)), 30)
        if cfg.fusion == "score":
            fetch = max(fetch, cfg.fusion_pool)
        legs: dict[str, list[int]] = {}
        bm25: dict[int, float] = {}
        unseen: list[str] = []
        holding: dict[str, set[int]] = {}
        if cfg.fts:
            ranked: dict[int, float] = {}
            for i, sub in enumerate(subqueries[:6]):
                terms = tokenize.query_terms(sub)
                if not terms:
                    continue
                if i == 0 and cfg.fusion == "score" and (cfg.unseen_vector_shift or cfg.missed_words or cfg.dense_quota):
                    # the per-term rankings are cached, so asking for each term alone costs a lookup;
                    # dates ("in July 2023") are matched as a window, not as words, so they do not count
                    worded = [term for term in terms if not dates_mod.is_date_word(term)]
                    holding = {term: {rid for rid, _ in self.store.fts_search([term], flt, _TERM_ROWS)}
                               for term in worded}
                    unseen = [term for term in worded if not holding[term]]
                # the full query leads; sub-queries only add what it missed
                weight = 1.0 if i == 0 else 0.5
                for rank, (rid, score) in enumerate(self.store.fts_search(terms, flt, fetch)):
                    ranked[rid] = max(ranked.get(rid, 0.0), weight / (rank + 1))
                    bm25[rid] = max(bm25.get(rid, 0.0), weight * score)
            legs["fts"] = sorted(ranked, key=lambda r: -ranked[r])
            t = timer.step("recall_fts", t, len(legs["fts"]), fetch=fetch, unseen_terms=unseen[:20])
        degrade: str | None = None
        similarity: dict[int, float] = {}
        qvec: np.ndarray | None = None
        if not cfg.vectors:
            degrade = "vectors disabled in config: FTS + NER only"
        elif self.embedder is None:
            degrade = "no embedder configured: FTS + NER only"
        else:
            try:
                qvec = np.asarray(self.embedder.embed_batch([query])[0], dtype=np.float32)
            except EmbedderUnavailable as exc:  # a remote embedder fails open (docs/lifecycle.md)
                degrade = f"embedder unavailable: {exc.reason}: FTS + NER only"
        if qvec is not None:
            if not np.any(qvec):
                qvec = None
            nearest = self.store.vector_search(qvec, flt, fetch) if qvec is not None else []
            legs["vector"] = [rid for rid, _ in nearest]
            similarity = {rid: 1.0 - dist for rid, dist in nearest}
            t = timer.step("recall_vector", t, len(nearest), fetch=fetch,
                           backend=self.store.vector_backend)
        trace.degrade_reason = degrade

        weights = {"fts": cfg.fts_weight, "vector": cfg.vector_weight}
        cands: dict[int, _Candidate] = {}
        for leg, rids in legs.items():
            for rank, rid in enumerate(rids):
                c = cands.setdefault(rid, _Candidate(rid))
                c.fused += weights[leg] / (cfg.rrf_k + rank + 1)
                c.legs[leg] = rank
                c.matched_by.append(leg)
        entries = self.store.entries_by_rid(cands)
        for rid, c in cands.items():
            c.entry = entries.get(rid)
        cands = {r: c for r, c in cands.items() if c.entry is not None}
        if cfg.derived_weight != 1.0:
            for c in cands.values():
                if c.entry is not None and c.entry.metadata.get("derived") == "fact":
                    c.boost *= cfg.derived_weight
        lacked_share = 0.0
        if cfg.fusion == "score":
            worded_terms = [term for term in tokenize.query_terms(normalized) if not dates_mod.is_date_word(term)]
            # words the best keyword match lacks count as unseen when it lacks most of them
            lacked = _words_missed(bm25, holding) if holding else []
            lacked_share = len(lacked) / len(holding) if holding else 0.0
            missed = lacked if cfg.missed_words and lacked_share >= cfg.missed_words_share else []
            vector_weight = _vector_weight(cfg, max(len(unseen), len(missed)), len(worded_terms))
            self._score_fusion(cands, bm25, similarity, qvec, cfg, vector_weight)
            t = timer.step("fuse_scores", t, len(cands), vector_weight=round(vector_weight, 3),
                           context_vector_weight=cfg.context_vector_weight, pool=fetch, missed_terms=missed[:20])
        else:
            t = timer.step("fuse_rrf", t, len(cands), k=cfg.rrf_k, weights=weights)

        if cfg.ner_boost and self.ner is not None and cands:
            self._ner_boost(normalized, query, cands, cfg)
            t = timer.step("ner_boost", t, len(cands))

        if (cfg.intents and intents) or window is not None:
            self._intent_strategies(intents if cfg.intents else set(), window, cands, cfg, reference)
            t = timer.step("intent_strategies", t, len(cands), intents=trace.intents)

        if cfg.self_boost != 1.0 and intent_mod.asks_about_self(query):
            self._self_boost(cands, cfg)
            t = timer.step("self_boost", t, len(cands), factor=cfg.self_boost)

        ordered = sorted(cands.values(), key=lambda c: (-c.fused * c.boost, c.rid))
        if cfg.latest_first and ordered and intent_mod.asks_current(query):
            from .updates import latest_first

            asked = slots_of = slots_of_many = None
            if cfg.latest_slots:
                from ..text import slots as slots_mod

                asked = slots_mod.slots_of(query)
                if asked is not None:
                    slots_of, slots_of_many = slots_mod.slots_of, slots_mod.slots_of_many
            pairs = latest_first(ordered, self.store.vectors_for({c.entry.content_hash for c in ordered}),  # type: ignore[union-attr]
                                 relevance=cfg.latest_relevance, same_topic=cfg.latest_same_topic,
                                 pool=cfg.latest_pool, change_relevance=cfg.latest_change_relevance,
                                 about_asker=intent_mod.asks_about_self(query), asked_slots=asked,
                                 slots_of=slots_of, slots_of_many=slots_of_many,
                                 slot_lift=cfg.latest_slot_lift, slot_over_other=cfg.latest_slot_over_other,
                                 slot_change_relevance=cfg.latest_slot_change_relevance)
            ordered.sort(key=lambda c: (-c.fused * c.boost, c.rid))
            t = timer.step("latest_first", t, len(ordered), relevance=cfg.latest_relevance,
                           same_topic=cfg.latest_same_topic, change_relevance=cfg.latest_change_relevance,
                           ranked_above=[{"later": a, "earlier": b, "why": w} for a, b, w in pairs[:20]])
        if cfg.co_retrieval and ordered:
            ordered = self._co_retrieve(ordered, flt, cfg)
            t = timer.step("co_retrieval", t, len(ordered))

        if cfg.rerank and ordered:
            self._rerank(ordered, flt.scope, reference, intents, cfg)
            ordered.sort(key=lambda c: (-c.final, c.rid))
        else:
            # scale so that the best possible candidate scores 1.0: a score in [0, 1] callers can threshold
            best = 1.0 if cfg.fusion == "score" else (cfg.fts_weight + cfg.vector_weight) / (cfg.rrf_k + 1) or 1.0
            for c in ordered:
                c.final = min(1.0, c.fused * c.boost / best)
        t = timer.step("rerank", t, len(ordered), enabled=cfg.rerank)
        if self.rank_term is not None:  # importance / decay / access (lifecycle.rank_composite)
            ordered = self.rank_term(ordered, reference, [c.final if cfg.rerank else c.fused * c.boost for c in ordered])

        if "multi_session" in intents:
            ordered = self._spread_sessions(ordered)

        if (cfg.dense_quota and legs.get("vector") and holding and lacked_share >= cfg.dense_quota_missed
                and (not cfg.dense_quota_self_only or intent_mod.asks_about_self(query))):
            moved = _dense_quota(ordered, legs["vector"], cfg.dense_quota, min(cfg.dense_quota_depth, want),
                                 cfg.dense_quota_depth)
            t = timer.step("dense_quota", t, len(ordered), lacked_share=round(lacked_share, 3),
                           placed=[c.entry.id for c in moved if c.entry is not None])

        hits = [Hit(entry=c.entry, score=round(c.final, 6), matched_by=sorted(set(c.matched_by)),  # type: ignore[arg-type]
                    similarity=round(similarity[c.rid], 6) if c.rid in similarity else None)
                for c in ordered[:want]]
        if self.reranker is not None and hits:
            hits = list(self.reranker(query, hits))
            t = timer.step("llm_rerank", t, len(hits))

        # load level by fixed rules: many results or a small budget -> L0 abstracts; else L2 for the finals
        level = "L0" if (top_k > 20 or (token_budget is not None and token_budget < 1000)) else "L2"
        if strategy == "hierarchical":
            hits = self._hierarchical(normalized, hits, top_k)
            t = timer.step("hierarchical", t, len(hits), l0_keep=3 * top_k, l1_keep=2 * top_k)
        hits = hits[:want]
        for h in hits:
            h.level = level
        if token_budget is not None:
            hits = self._trim(hits, token_budget)
        t = timer.step("level_budget", t, len(hits), level=level, token_budget=token_budget,
                       tokenizer=tokenize.tokenizer_name())

        provenance = self.store.provenance([h.id for h in hits])
        for h in hits:
            h.provenance = provenance.get(h.id, [])
        total_ms = (time.perf_counter() - t_start) * 1000
        if cfg.record_traces:
            self.store.save_trace(trace, flt.scope, [h.id for h in hits], total_ms)
        return FindResult(hits, trace)

    # -- steps -------------------------------------------------------------------------------------
    def _score_fusion(self, cands: dict[int, _Candidate], bm25: dict[int, float], similarity: dict[int, float],
                      qvec: np.ndarray | None, cfg: RetrievalConfig, vector_weight: float) -> None:
        """Fuse by score, not rank: ``(1-a) * bm25 / max + a * cosine / max`` over every candidate.

        Ranks throw away how far ahead the leader is; scores keep it, and every candidate of
        either leg gets both signals (a keyword hit's cosine is read from its stored vector).
        The cosine mixes the entry's own with its context's: the entry's vector plus those of
        the turns around it in its session, a reply read together with what it answers.
        """
        cosine: dict[int, float] = {}
        if qvec is not None and cands:
            cosine = self._cosines(cands, similarity, qvec, cfg)
        top_bm25 = max(bm25.values(), default=0.0) or 1.0
        top_cos = max(cosine.values(), default=0.0)
        # a leg that found nothing (or is off) leaves the whole weight to the other
        a = 0.0 if top_cos <= 0 else vector_weight if bm25 else 1.0
        for rid, c in cands.items():
            c.fused = (1 - a) * bm25.get(rid, 0.0) / top_bm25 + (a * max(cosine.get(rid, 0.0), 0.0) / top_cos if a else 0.0)

    def _cosines(self, cands: dict[int, _Candidate], similarity: dict[int, float], qvec: np.ndarray,
                 cfg: RetrievalConfig) -> dict[int, float]:
        """Each candidate's cosine to the query: ``(1-c) * own + c * in-context``.

        In context means the sum of the turn's vector and its session neighbours' (the turns
        just before and after it): a reply read with what it answers, no extra model call.
        """
        c_weight = cfg.context_vector_weight
        own_hash = {rid: c.entry.content_hash for rid, c in cands.items() if c.entry is not None}
        replies = cfg.reply_question_cosine
        around = self.store.neighbour_turn_hashes(list(cands)) if c_weight or replies else {}
        vectors = self.store.vectors_for({*own_hash.values(), *(h for pair in around.values() for h in pair if h)})
        rids = [rid for rid, h in own_hash.items() if h in vectors]
        if not rids:
            return {}
        own = np.stack([vectors[own_hash[rid]] for rid in rids])
        own_cos = own @ qvec
        for rid, value in zip(rids, own_cos.tolist()):
            similarity.setdefault(rid, value)
        if replies:
            own_cos = _answers_read_with_question(cands, rids, own_cos, around, vectors, qvec, replies)
        if not around:
            return dict(zip(rids, own_cos.tolist()))
        summed = own.copy()
        for i, rid in enumerate(rids):
            for h in around.get(rid, ()):
                if h and h in vectors:
                    summed[i] += vectors[h]
        norms = np.linalg.norm(summed, axis=1)
        ctx_cos = (summed @ qvec) / np.where(norms > 0, norms, 1.0)
        mixed = (1 - c_weight) * own_cos + c_weight * ctx_cos
        return dict(zip(rids, mixed.tolist()))

    def _ner_boost(self, normalized: str, query: str, cands: dict[int, _Candidate], cfg: RetrievalConfig) -> None:
        """Boost fused results (never add any) whose speaker or entities the query names.

        A match on who said it (the entry's actor) is ``ner_speaker``; tag/text matches are
        strong (tag + text), medium (tag) and weak (text only).
        """
        from ..text.ner import normalize_entity

        if cfg.ner_mentions:
            norms = {e.norm for e in self.ner.extract(query)}
            if not norms:
                return
            def named(norm: str) -> bool:
                return norm in norms
        else:
            # only the speaker match is on: a name in the query is enough, no NER model run
            norms = set()
            folded = query.casefold()
            seen: dict[str, bool] = {}

            def named(norm: str) -> bool:
                if norm not in seen:
                    seen[norm] = bool(norm) and re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", folded) is not None
                return seen[norm]
        for c in cands.values():
            assert c.entry is not None
            best, how = 1.0, None
            if cfg.ner_speaker != 1.0 and c.entry.actor and named(normalize_entity(c.entry.actor)):
                best, how = cfg.ner_speaker, "ner_speaker"
            if cfg.ner_mentions:
                tags = set(c.entry.tags)
                text = c.entry.l2_full.casefold()
                for norm in norms:
                    tagged = f"ner_{norm}" in tags
                    in_text = norm in text
                    if tagged and in_text:
                        factor, label = cfg.ner_strong, "ner_strong"
                    elif tagged:
                        factor, label = cfg.ner_medium, "ner_medium"
                    elif in_text:
                        factor, label = cfg.ner_weak, "ner_weak"
                    else:
                        continue
                    if factor > best:
                        best, how = factor, label
            if how:
                c.boost *= best
                c.matched_by.append(how)

    def _self_boost(self, cands: dict[int, _Candidate], cfg: RetrievalConfig) -> None:
        """A first-person question ("what's my rent?") is about what the user said: their turns rank up,
        and so do the assistant's replies to the user's own questions (the exchange the user started)."""
        for c in cands.values():
            if c.entry is not None and (c.entry.role == "user" or (cfg.self_boost_replies and "answers_question" in c.matched_by)):
                c.boost *= cfg.self_boost
                c.matched_by.append("self_boost")

    def _intent_strategies(self, intents: set[str], window: Any, cands: dict[int, _Candidate],
                           cfg: RetrievalConfig, reference: datetime) -> None:
        for c in cands.values():
            e = c.entry
            assert e is not None
            if "preference" in intents:
                if e.role == "user":
                    c.boost *= 1.8
                if e.category == "preference":
                    c.boost *= 2.0
                if any(w in e.l2_full.casefold() for w in _IMPLICIT):
                    c.boost *= 1.3
            if window is not None:
                start, end = window
                if e.event_dates and any(_overlaps(d, start, end) for d in e.event_dates):
                    c.boost *= 1.5
                    c.matched_by.append("date_window")
                said = e.valid_from or e.created_at
                if cfg.date_said_boost != 1.0 and said is not None and start <= said.date() <= end:
                    c.boost *= cfg.date_said_boost
                    c.matched_by.append("date_said")
            if "knowledge_update" in intents and e.updated_at is not None:
                age = max((reference - e.updated_at).total_seconds() / 86400, 0.0)
                c.boost *= 1.0 + 0.5 * math.exp(-0.693 * age / cfg.update_half_life_days)

    def _co_retrieve(self, ordered: list[_Candidate], flt: EntryFilter, cfg: RetrievalConfig) -> list[_Candidate]:
        """Pull in the neighbouring turns of the best hits, ranked just below the hit that found them."""
        seeds = [c for c in ordered[: cfg.co_retrieval_seeds] if c.entry is not None]
        neighbours = self.store.session_neighbours([c.entry.id for c in seeds], cfg.co_retrieval_window, flt)  # type: ignore[union-attr]
        have = {c.entry.id: c for c in ordered if c.entry is not None}
        scores: dict[str, float] = {}
        for c in seeds:
            for eid in neighbours.get(c.entry.id, []):  # type: ignore[union-attr]
                scores[eid] = max(scores.get(eid, 0.0), c.fused * c.boost * cfg.co_retrieval_weight)
        missing = [eid for eid in scores if eid not in have]
        entries = self.store.get_entries(missing) if missing else {}
        added: list[_Candidate] = []
        for eid, score in scores.items():
            known = have.get(eid)
            if known is not None:
                if score > known.fused * known.boost:
                    known.fused = score / known.boost
                    known.matched_by.append("co_retrieval")
                continue
            e = entries.get(eid)
            if e is not None:
                added.append(_Candidate(rid=-len(added) - 1, fused=score, entry=e, matched_by=["co_retrieval"]))
        merged = ordered + added
        merged.sort(key=lambda c: (-c.fused * c.boost, c.rid))
        return merged

    def _rerank(self, ordered: list[_Candidate], scope: Scope, reference: datetime, intents: set[str],
                cfg: RetrievalConfig) -> None:
        top = max((c.fused * c.boost for c in ordered), default=1.0) or 1.0
        half_life = cfg.update_half_life_days if "knowledge_update" in intents else cfg.freshness_half_life_days
        for c in ordered:
            e = c.entry
            assert e is not None
            when = e.valid_from or e.created_at or reference
            age = max((reference - when).total_seconds() / 86400, 0.0)
            fresh = math.exp(-0.693 * age / half_life)
            priority = _SCOPE_PRIORITY[e.scope_level.value]
            if scope.session_id and e.session_id == scope.session_id:
                priority += 0.2
            type_match = 1.0 if ("preference" in intents and e.category == "preference") else 0.0
            c.final = (0.6 * (c.fused * c.boost / top) + 0.15 * fresh + 0.1 * e.confidence
                       + 0.1 * priority + 0.05 * type_match)

    def _spread_sessions(self, ordered: list[_Candidate]) -> list[_Candidate]:
        """Round-robin across sessions so one long session cannot crowd out the rest."""
        buckets: dict[str | None, list[_Candidate]] = {}
        for c in ordered:
            buckets.setdefault(c.entry.session_id if c.entry else None, []).append(c)
        out: list[_Candidate] = []
        queues = list(buckets.values())
        while queues:
            for q in queues:
                out.append(q.pop(0))
            queues = [q for q in queues if q]
        return out

    def _hierarchical(self, normalized: str, hits: list[Hit], top_k: int) -> list[Hit]:
        """L0 (3x top_k) -> L1 (2x top_k) -> L2: narrow by overlap with ever longer tiers."""
        terms = {w for w in tokenize.words(normalized) if w not in tokenize.STOPWORDS}

        def overlap(text: str) -> float:
            words = set(tokenize.words(text))
            return len(terms & words) / (len(terms) or 1)

        pool = hits[: 3 * top_k]
        order = {h.id: i for i, h in enumerate(pool)}
        pool = sorted(pool, key=lambda h: (-overlap(h.entry.l0_abstract), order[h.id]))[: 2 * top_k]
        pool = sorted(pool, key=lambda h: (-overlap(h.entry.l1_overview), order[h.id]))
        return sorted(pool[:top_k], key=lambda h: order[h.id])

    def _trim(self, hits: list[Hit], budget: int) -> list[Hit]:
        """Keep the best hits whose text at their level fits the token budget (at least one)."""
        kept: list[Hit] = []
        used = 0
        for h in hits:
            cost = tokenize.count_tokens(h.content)
            if used + cost > budget and kept:
                break
            kept.append(h)
            used += cost
        return kept


def _vector_weight(cfg: RetrievalConfig, unseen: int, terms: int) -> float:
    """The cosine's share in score fusion for this query.

    BM25 can only weigh words the memories contain. When some of the question's words occur
    nowhere in the scope, it was asked in other words than the memories were written in ("which
    city do I live in?" against "we're officially Austin people now"), and the cosine, which
    sees meaning, not words, gets more of the weight: ``score_vector_weight`` plus
    ``unseen_vector_shift`` times the share of unseen words, at most ``score_vector_max``.
    """
    if not terms or not unseen:
        return cfg.score_vector_weight
    shifted = cfg.score_vector_weight + cfg.unseen_vector_shift * unseen / terms
    return min(max(cfg.score_vector_max, cfg.score_vector_weight), shifted)


def _words_missed(bm25: dict[int, float], holding: dict[str, set[int]]) -> list[str]:
    """The query's words that the best-covering of BM25's best memories lacks.

    A word no memory holds is missed by all of them; a word some memory holds, but never one that
    has the others, is missed too ("why did I change how I work after lunch?" finds "lunch" in
    one turn and "work" in others, none says both): the question is asked in other words than the
    memory that answers it.
    """
    best = sorted(bm25, key=lambda rid: (-bm25[rid], rid))[:_COVERAGE_POOL]
    if not best:
        return list(holding)
    covering = max(best, key=lambda rid: sum(rid in rids for rids in holding.values()))
    # a word in more memories than were read is common: it is not the one the question lacks
    return [term for term, rids in holding.items() if covering not in rids and len(rids) < _TERM_ROWS]


def _answers_read_with_question(cands: dict[int, _Candidate], rids: list[int], own_cos: np.ndarray,
                                 around: dict[int, tuple[str | None, str | None]], vectors: dict[str, Any],
                                 qvec: np.ndarray, factor: float) -> np.ndarray:
    """An assistant's reply to the user's question scores at least ``factor`` times that question's cosine.

    A question is often asked again in the words the user first asked it, while the answer is in
    the reply ("what can I munch on mid-afternoon?" finds "what can I snack on at 4 pm?", not the
    list of snacks that follows it). Only a reply whose previous turn is a user turn with a
    question mark among the candidates counts: one exchange, read as one. A lifted reply is
    labelled ``answers_question``.
    """
    asked = {c.entry.content_hash for c in cands.values()
             if c.entry is not None and c.entry.role == "user" and "?" in c.entry.l2_full}
    out = own_cos.copy()
    for i, rid in enumerate(rids):
        entry = cands[rid].entry
        before = around.get(rid, (None, None))[0]
        if entry is None or entry.role != "assistant" or before not in asked or before not in vectors:
            continue
        lifted = factor * float(vectors[before] @ qvec)
        if lifted > out[i]:
            out[i] = lifted
            cands[rid].matched_by.append("answers_question")
    return out


def _dense_quota(ordered: list[_Candidate], nearest: list[int], quota: int, window: int,
                 depth: int) -> list[_Candidate]:
    """Give the cosine's best few a place in the head of the ranking; returns those it moved.

    When the best keyword matches of a question about the asker ("what does the nonprofit pay
    me?": no name anchors the keywords) lack most of its words, fusion still lets BM25's
    incidental matches (one shared word each) fill the head, and the turn plain vectors rank
    first can end up 11th. The ``quota`` nearest entries are each guaranteed a rank within
    ``depth`` (scaled down for a shorter ``window``), placed at its end in their cosine order;
    the hits they pass keep their order just below. A placed hit's score ties the one above it,
    so a caller re-sorting by score keeps the order.
    """
    slots = quota * window // depth
    if slots <= 0:
        return []
    head = {id(c) for c in ordered[:window]}
    by_rid = {c.rid: c for c in ordered}
    moved = [by_rid[rid] for rid in nearest[:quota] if rid in by_rid and id(by_rid[rid]) not in head][:slots]
    if not moved:
        return []
    placed = {id(c) for c in moved}
    rest = [c for c in ordered if id(c) not in placed]
    at = window - len(moved)
    above = rest[at - 1] if at > 0 else rest[0] if rest else None
    ordered[:] = rest[:at] + moved + rest[at:]
    for c in moved:
        if above is not None:
            c.final = max(c.final, above.final)
        c.matched_by.append("dense_quota")
    return moved


def _overlaps(value: str, start: Any, end: Any) -> bool:
    first, _, last = value.partition("/")
    last = last or first
    return bool(first <= end.isoformat() and last >= start.isoformat())

