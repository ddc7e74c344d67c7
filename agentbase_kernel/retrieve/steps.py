"""The steps of ``find``, in order: each a small function over one query and one search state.

A step reads the :class:`~.query.Query` (analysed once) and the :class:`Search` (what the steps
before it found), changes the search, and returns what its trace entry records: a :class:`Traced`
(the candidates it left and its parameters), or ``None`` when it did not run (no trace entry; its
time counts toward the next step's). ``STEPS`` is the pipeline; ``Retriever.find`` runs it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import ExperimentalRetrieval, RetrievalConfig
from ..errors import EmbedderUnavailable
from ..records import Entry, Hit, Scope
from ..store.protocol import SearchIndex
from ..text import dates as dates_mod
from ..text import intent as intent_mod
from ..text import tokenize
from ..text.changes import only_asks
from .query import Query

if TYPE_CHECKING:
    from .pipeline import Retriever

__all__ = ["STEPS", "Candidate", "Search", "Step", "Traced", "VectorCache"]

# words that imply a preference was acted on (the off-by-default preference intent)
_IMPLICIT = ("bought", "tried", "using", "use ", "buy", "ordered", "started", "love", "enjoy")
_SCOPE_LEVELS = ("session", "agent", "project", "global")


@dataclass
class Candidate:
    """One entry being ranked: ``fused * boost`` is its score until ``final`` is set."""

    rid: int
    fused: float = 0.0
    legs: dict[str, int] = field(default_factory=dict)
    boost: float = 1.0
    matched_by: list[str] = field(default_factory=list)
    entry: Entry | None = None
    final: float = 0.0


class VectorCache:
    """Stored vectors by content hash, each read from the store at most once per ``find``.

    The candidates' own vectors usually sit in the store's in-RAM vector index already (the vector
    leg just searched it): ``note`` says which rows hold which hash, and ``get`` takes those from
    the index of ``scope`` (``indexed_vectors``) before it reads the rest from the file (``vectors_for``).
    """

    def __init__(self, store: SearchIndex, scope: Scope | None = None) -> None:
        self.store = store
        self.scope = scope
        self.known: dict[str, np.ndarray] = {}
        self.asked: set[str] = set()
        self.rows: dict[str, int] = {}  # content hash -> a candidate rid holding it

    def note(self, rows: Iterable[tuple[int, str]]) -> None:
        """``(rid, content hash)`` of entries in the searched scope."""
        for rid, content_hash in rows:
            self.rows.setdefault(content_hash, rid)

    def get(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = set(hashes)
        missing = wanted - self.asked
        indexed = {self.rows[h]: h for h in missing if h in self.rows}
        if indexed and self.scope is not None:
            for rid, vector in self.store.indexed_vectors(self.scope, indexed).items():
                self.known[indexed[rid]] = vector
                self.asked.add(indexed[rid])
            missing -= self.asked
        if missing:
            self.known.update(self.store.vectors_for(missing))
            self.asked |= missing
        return {h: self.known[h] for h in wanted if h in self.known}


@dataclass
class Search:
    """What the steps have found so far for one query."""

    vectors: VectorCache
    fetch: int = 0  # how many rows each recall leg reads
    legs: dict[str, list[int]] = field(default_factory=dict)  # each leg's rids, best first
    bm25: dict[int, float] = field(default_factory=dict)
    holding: dict[str, set[int]] = field(default_factory=dict)  # which rows hold each query word
    unseen: list[str] = field(default_factory=list)  # query words no row of the scope holds
    similarity: dict[int, float] = field(default_factory=dict)  # own cosine to the query
    degrade: str | None = None
    cands: dict[int, Candidate] = field(default_factory=dict)
    lacked_share: float = 0.0  # share of the query's words the best keyword match lacks
    ordered: list[Candidate] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)


@dataclass(frozen=True)
class Traced:
    """A step's trace entry: the candidates it left and its parameters."""

    candidates: int
    params: dict[str, Any]


def traced(candidates: int, **params: Any) -> Traced:
    return Traced(candidates, params)


Step = Callable[["Retriever", Query, Search], "Traced | None"]


# -- query analysis ------------------------------------------------------------------------------
def normalise(r: Retriever, q: Query, s: Search) -> Traced:
    """The question's text, folded (``parse_query`` did the work)."""
    return traced(0, normalized=q.normalized[:200])


def intent(r: Retriever, q: Query, s: Search) -> Traced:
    """Keyword intents (off by default) and the date window a date expression names."""
    cfg = q.cfg
    if cfg.experimental.intents:
        q.intents = intent_mod.detect_intents(q.normalized)
    if cfg.date_window:
        q.window = dates_mod.query_window(q.text, q.reference)
        if q.window is not None:
            q.intents.add("temporal")
    if "aggregation" in q.intents:
        q.want = max(q.top_k, min(cfg.experimental.aggregation_top_k, max(q.top_k, 20) * 6))
    return traced(0, intents=sorted(q.intents),
                  window=[d.isoformat() for d in q.window] if q.window else None)


def decompose(r: Retriever, q: Query, s: Search) -> Traced:
    """Sub-queries (off by default): key phrases, and the caller's own decomposer if given."""
    extra = intent_mod.key_phrases(q.normalized) if q.cfg.experimental.decompose else []
    if r.decomposer is not None:  # the caller's own (e.g. LLM) decomposition is an explicit opt-in
        extra = [*extra, *r.decomposer(q.text)]
    q.subqueries = [q.normalized, *(x for x in dict.fromkeys(extra) if x and x != q.normalized)]
    return traced(len(q.subqueries), subqueries=q.subqueries[:8])


# -- recall ----------------------------------------------------------------------------------------
def recall_fts(r: Retriever, q: Query, s: Search) -> Traced | None:
    """BM25 with the scope's own IDF; the whole question leads, sub-queries add what it missed."""
    cfg = q.cfg
    s.fetch = max(int(math.ceil(q.want * cfg.overfetch)), 30)
    if cfg.fusion == "score":
        s.fetch = max(s.fetch, cfg.fusion_pool)
    if cfg.experimental.ranker:
        s.fetch = max(s.fetch, cfg.experimental.ranker_pool)
    if not cfg.fts:
        return None
    ranked: dict[int, float] = {}
    x = cfg.experimental
    for i, sub in enumerate(q.subqueries[:x.max_subqueries]):
        terms = q.terms if i == 0 else tokenize.query_terms(sub)
        if not terms:
            continue
        if i == 0 and (x.ranker or (cfg.fusion == "score" and (cfg.unseen_vector_shift or cfg.missed_words
                                                                 or cfg.dense_quota))):
            # the per-term rankings are cached, so asking for each term alone costs a lookup
            s.holding = {term: {rid for rid, _ in r.store.fts_search([term], q.flt, cfg.term_rows)}
                         for term in q.worded}
            s.unseen = [term for term in q.worded if not s.holding[term]]
        weight = 1.0 if i == 0 else x.subquery_weight
        for rank, (rid, score) in enumerate(r.store.fts_search(terms, q.flt, s.fetch)):
            ranked[rid] = max(ranked.get(rid, 0.0), weight / (rank + 1))
            s.bm25[rid] = max(s.bm25.get(rid, 0.0), weight * score)
    s.legs["fts"] = sorted(ranked, key=lambda rid: -ranked[rid])
    return traced(len(s.legs["fts"]), fetch=s.fetch, unseen_terms=s.unseen[:20])


def recall_vector(r: Retriever, q: Query, s: Search) -> Traced | None:
    """The nearest entries to the question's embedding; without an embedder, say why in ``degrade``."""
    qvec: np.ndarray | None = None
    if not q.cfg.vectors:
        s.degrade = "vectors disabled in config: FTS + NER only"
    elif r.embedder is None:
        s.degrade = "no embedder configured: FTS + NER only"
    else:
        try:
            qvec = np.asarray(r.embedder.embed_batch([q.text])[0], dtype=np.float32)
        except EmbedderUnavailable as exc:  # a remote embedder fails open (docs/lifecycle.md)
            s.degrade = f"embedder unavailable: {exc.reason}: FTS + NER only"
    if qvec is None:
        return None
    q.vector = qvec if np.any(qvec) else None
    nearest = r.store.vector_search(q.vector, q.flt, s.fetch) if q.vector is not None else []
    s.legs["vector"] = [rid for rid, _ in nearest]
    s.similarity = {rid: 1.0 - dist for rid, dist in nearest}
    return traced(len(nearest), fetch=s.fetch, backend=r.store.vector_backend)


# -- fusion ----------------------------------------------------------------------------------------
def candidates(r: Retriever, q: Query, s: Search) -> None:
    """Every row of either leg, with its entry and its RRF score (which score fusion replaces)."""
    cfg = q.cfg
    weights = {"fts": cfg.fts_weight, "vector": cfg.vector_weight}
    for leg, rids in s.legs.items():
        for rank, rid in enumerate(rids):
            c = s.cands.setdefault(rid, Candidate(rid))
            c.fused += weights[leg] / (cfg.rrf_k + rank + 1)
            c.legs[leg] = rank
            c.matched_by.append(leg)
    entries = r.store.entries_by_rid(s.cands)
    for rid, c in s.cands.items():
        c.entry = entries.get(rid)
    s.cands = {rid: c for rid, c in s.cands.items() if c.entry is not None}
    s.vectors.note((rid, e.content_hash) for rid, e in entries.items())
    if cfg.derived_weight != 1.0:
        for c in s.cands.values():
            if c.entry is not None and c.entry.metadata.get("derived") == "fact":
                c.boost *= cfg.derived_weight
    return None


def fuse_scores(r: Retriever, q: Query, s: Search) -> Traced | None:
    """``(1-a) * bm25 / max + a * cosine / max`` over every candidate; ``a`` grows with unseen words.

    Ranks throw away how far ahead the leader is; scores keep it, and every candidate of either
    leg gets both signals (a keyword hit's cosine is read from its stored vector).
    """
    cfg = q.cfg
    if cfg.fusion != "score":
        return None
    # words the best keyword match lacks count as unseen when it lacks most of them
    lacked = _words_missed(s.bm25, s.holding, cfg) if s.holding else []
    s.lacked_share = len(lacked) / len(s.holding) if s.holding else 0.0
    missed = lacked if cfg.missed_words and s.lacked_share >= cfg.missed_words_share else []
    vector_weight = _vector_weight(cfg, max(len(s.unseen), len(missed)), len(q.worded))
    cosine = cosines(r, q, s) if q.vector is not None and s.cands else {}
    top_bm25 = max(s.bm25.values(), default=0.0) or 1.0
    top_cos = max(cosine.values(), default=0.0)
    # a leg that found nothing (or is off) leaves the whole weight to the other
    a = 0.0 if top_cos <= 0 else vector_weight if s.bm25 else 1.0
    for rid, c in s.cands.items():
        c.fused = (1 - a) * s.bm25.get(rid, 0.0) / top_bm25 + (a * max(cosine.get(rid, 0.0), 0.0) / top_cos if a else 0.0)
    return traced(len(s.cands), vector_weight=round(vector_weight, 3),
                  context_vector_weight=cfg.context_vector_weight, pool=s.fetch, missed_terms=missed[:20])


def fuse_rrf(r: Retriever, q: Query, s: Search) -> Traced | None:
    """Reciprocal rank fusion (``candidates`` computed it): the alternative to score fusion."""
    cfg = q.cfg
    if cfg.fusion != "rrf":
        return None
    return traced(len(s.cands), k=cfg.rrf_k, weights={"fts": cfg.fts_weight, "vector": cfg.vector_weight})


def cosines(r: Retriever, q: Query, s: Search) -> dict[int, float]:
    """Each candidate's cosine to the query: ``(1-c) * own + c * in-context``.

    In context means the sum of the turn's vector and its session neighbours' (the turns just
    before and after it): a reply read with what it answers, no extra model call.
    """
    cfg = q.cfg
    qvec = q.vector
    assert qvec is not None
    c_weight = cfg.context_vector_weight
    own_hash = {rid: c.entry.content_hash for rid, c in s.cands.items() if c.entry is not None}
    replies = cfg.reply_question_cosine
    around = r.store.neighbour_turn_hashes(list(s.cands)) if c_weight or replies else {}
    vectors = s.vectors.get({*own_hash.values(), *(h for pair in around.values() for h in pair if h)})
    rids = [rid for rid, h in own_hash.items() if h in vectors]
    if not rids:
        return {}
    own = np.stack([vectors[own_hash[rid]] for rid in rids])
    own_cos = own @ qvec
    for rid, value in zip(rids, own_cos.tolist()):
        s.similarity.setdefault(rid, value)
    if replies:
        own_cos = _answers_read_with_question(s.cands, rids, own_cos, around, vectors, qvec, replies)
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


# -- boosts ----------------------------------------------------------------------------------------
def ner_boost(r: Retriever, q: Query, s: Search) -> Traced | None:
    """Boost fused results (never add any) whose speaker or entities the query names.

    A match on who said it (the entry's actor) is ``ner_speaker``; tag/text matches are strong
    (tag + text), medium (tag) and weak (text only).
    """
    from ..text.ner import normalize_entity

    cfg = q.cfg
    if not cfg.ner_boost or r.ner is None or not s.cands:
        return None
    if cfg.experimental.ner_mentions:
        norms = {e.norm for e in r.ner.extract(q.text)}
        if not norms:
            return traced(len(s.cands))

        def named(norm: str) -> bool:
            return norm in norms
    else:
        # only the speaker match is on: a name in the query is enough, no NER model run
        norms = set()
        folded = q.text.casefold()
        seen: dict[str, bool] = {}

        def named(norm: str) -> bool:
            if norm not in seen:
                seen[norm] = bool(norm) and re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", folded) is not None
            return seen[norm]
    for c in s.cands.values():
        assert c.entry is not None
        best, how = 1.0, None
        if cfg.ner_speaker != 1.0 and c.entry.actor and named(normalize_entity(c.entry.actor)):
            best, how = cfg.ner_speaker, "ner_speaker"
        if cfg.experimental.ner_mentions:
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
    return traced(len(s.cands))


def intent_strategies(r: Retriever, q: Query, s: Search) -> Traced | None:
    """The date window's boosts, and the keyword intents' (off by default) preference and update boosts."""
    cfg, x = q.cfg, q.cfg.experimental
    intents = q.intents if x.intents else set()
    window = q.window
    if not intents and window is None:
        return None
    for c in s.cands.values():
        e = c.entry
        assert e is not None
        if "preference" in intents:
            if e.role == "user":
                c.boost *= x.intent_preference_user
            if e.category == "preference":
                c.boost *= x.intent_preference_category
            if any(w in e.l2_full.casefold() for w in _IMPLICIT):
                c.boost *= x.intent_preference_implicit
        if window is not None:
            start, end = window
            if e.event_dates and any(_overlaps(d, start, end) for d in e.event_dates):
                c.boost *= cfg.date_event_boost
                c.matched_by.append("date_window")
            said = e.valid_from or e.created_at
            if cfg.date_said_boost != 1.0 and said is not None and start <= said.date() <= end:
                c.boost *= cfg.date_said_boost
                c.matched_by.append("date_said")
        if "knowledge_update" in intents and e.updated_at is not None:
            age = max((q.reference - e.updated_at).total_seconds() / 86400, 0.0)
            c.boost *= 1.0 + x.intent_update_boost * math.exp(-0.693 * age / x.update_half_life_days)
    return traced(len(s.cands), intents=sorted(q.intents))


def self_boost(r: Retriever, q: Query, s: Search) -> Traced | None:
    """A first-person question ("what's my rent?") is about what the user said: their turns rank up,
    and so do the assistant's replies to the user's own questions (the exchange the user started)."""
    cfg = q.cfg
    if cfg.self_boost == 1.0 or not q.about_self:
        return None
    for c in s.cands.values():
        if c.entry is not None and (c.entry.role == "user" or (cfg.self_boost_replies and "answers_question" in c.matched_by)):
            c.boost *= cfg.self_boost
            c.matched_by.append("self_boost")
    return traced(len(s.cands), factor=cfg.self_boost)


def order(r: Retriever, q: Query, s: Search) -> None:
    """The candidates best first by ``fused * boost``."""
    s.ordered = sorted(s.cands.values(), key=lambda c: (-c.fused * c.boost, c.rid))
    return None


def learned_rank(r: Retriever, q: Query, s: Search) -> Traced | None:
    """The learned second stage (``ranker`` on): each candidate's calibrated probability, best first.

    It reads what the legs and fusion found (``signals.py``) and replaces the boosts and the
    reorderings after it: those steps do not run.
    """
    from .features import matrix
    from .ranker import load_ranker
    from .signals import collect

    if not q.cfg.experimental.ranker or not s.cands:
        return None
    ranker = load_ranker()
    sig = collect(r, q, s, s.lacked_share)
    probability = ranker.score(matrix(sig)) if sig.rids else np.zeros(0)
    for rid, p in zip(sig.rids, probability.tolist()):
        c = s.cands[rid]
        c.final = p
        c.matched_by.append("ranker")
    s.ordered = sorted((c for c in s.cands.values() if c.entry is not None), key=lambda c: (-c.final, c.rid))
    return traced(len(s.ordered), trees=len(ranker.value))


# -- reordering ------------------------------------------------------------------------------------
def latest_first(r: Retriever, q: Query, s: Search) -> Traced | None:
    """For a question about how things stand now, a later statement of the same thing ranks first."""
    from .updates import latest_first as reorder

    cfg = q.cfg
    if cfg.experimental.ranker or not cfg.latest_first or not s.ordered or not q.asks_current:
        return None
    asked = slots_of = slots_of_many = None
    if cfg.latest_slots:
        from ..text import slots as slots_mod

        asked = slots_mod.slots_of(q.text)
        if asked is not None:
            slots_of, slots_of_many = slots_mod.slots_of, slots_mod.slots_of_many
    vectors = s.vectors.get({c.entry.content_hash for c in s.ordered if c.entry is not None})
    pairs = reorder(s.ordered, vectors, relevance=cfg.latest_relevance, same_topic=cfg.latest_same_topic,
                    pool=cfg.latest_pool, change_relevance=cfg.latest_change_relevance,
                    about_asker=q.about_self, asked_slots=asked, slots_of=slots_of, slots_of_many=slots_of_many,
                    slot_lift=cfg.latest_slot_lift, slot_over_other=cfg.latest_slot_over_other,
                    slot_change_relevance=cfg.latest_slot_change_relevance)
    s.ordered.sort(key=lambda c: (-c.fused * c.boost, c.rid))
    return traced(len(s.ordered), relevance=cfg.latest_relevance, same_topic=cfg.latest_same_topic,
                  change_relevance=cfg.latest_change_relevance,
                  ranked_above=[{"later": a, "earlier": b, "why": w} for a, b, w in pairs[:20]])


def co_retrieval(r: Retriever, q: Query, s: Search) -> Traced | None:
    """Pull in the neighbouring turns of the best hits, ranked just below the hit that found them."""
    cfg = q.cfg
    if cfg.experimental.ranker or not cfg.co_retrieval or not s.ordered:
        return None
    seeds = [c for c in s.ordered[: cfg.co_retrieval_seeds] if c.entry is not None]
    neighbours = r.store.session_neighbours([c.entry.id for c in seeds if c.entry is not None],
                                            cfg.co_retrieval_window, q.flt)
    have = {c.entry.id: c for c in s.ordered if c.entry is not None}
    scores: dict[str, float] = {}
    for c in seeds:
        assert c.entry is not None
        for eid in neighbours.get(c.entry.id, []):
            scores[eid] = max(scores.get(eid, 0.0), c.fused * c.boost * cfg.co_retrieval_weight)
    missing = [eid for eid in scores if eid not in have]
    entries = r.store.get_entries(missing) if missing else {}
    added: list[Candidate] = []
    for eid, score in scores.items():
        known = have.get(eid)
        if known is not None:
            if score > known.fused * known.boost:
                known.fused = score / known.boost
                known.matched_by.append("co_retrieval")
            continue
        e = entries.get(eid)
        if e is not None:
            added.append(Candidate(rid=-len(added) - 1, fused=score, entry=e, matched_by=["co_retrieval"]))
    s.ordered = s.ordered + added
    s.ordered.sort(key=lambda c: (-c.fused * c.boost, c.rid))
    return traced(len(s.ordered))


def rerank(r: Retriever, q: Query, s: Search) -> Traced:
    """The score callers see: the ranker's probability, the heuristic rerank (off by default), or the
    fused score out of the best possible, calibrated (``calibration.py``) unless ``calibrated_scores`` is off."""
    cfg, x = q.cfg, q.cfg.experimental
    if x.ranker:
        return traced(len(s.ordered), enabled=x.rerank, calibrated="ranker")
    if x.rerank and s.ordered:
        _heuristic_rerank(s.ordered, q.flt.scope, q.reference, q.intents, x)
        s.ordered.sort(key=lambda c: (-c.final, c.rid))
    else:
        # scale so that the best possible candidate scores 1.0: a score in [0, 1] callers can threshold
        best = 1.0 if cfg.fusion == "score" else (cfg.fts_weight + cfg.vector_weight) / (cfg.rrf_k + 1) or 1.0
        for c in s.ordered:
            c.final = min(1.0, c.fused * c.boost / best)
        if cfg.calibrated_scores and s.ordered:
            _calibrate(q, s)
    if x.rerank:
        return traced(len(s.ordered), enabled=True)
    return traced(len(s.ordered), enabled=False, calibrated=cfg.calibrated_scores)


def rank_term(r: Retriever, q: Query, s: Search) -> None:
    """Importance / decay / access (``lifecycle.rank_composite``), when the kernel installed it."""
    if r.rank_term is not None:
        x = q.cfg.experimental
        s.ordered = r.rank_term(s.ordered, q.reference,
                                [c.final if x.rerank or x.ranker else c.fused * c.boost for c in s.ordered])
    return None


def spread_sessions(r: Retriever, q: Query, s: Search) -> None:
    """Round-robin across sessions (the multi-session intent) so one long session cannot crowd out the rest."""
    if "multi_session" not in q.intents:
        return None
    buckets: dict[str | None, list[Candidate]] = {}
    for c in s.ordered:
        buckets.setdefault(c.entry.session_id if c.entry else None, []).append(c)
    out: list[Candidate] = []
    queues = list(buckets.values())
    while queues:
        for queue in queues:
            out.append(queue.pop(0))
        queues = [queue for queue in queues if queue]
    s.ordered = out
    return None


def dense_quota(r: Retriever, q: Query, s: Search) -> Traced | None:
    """A first-person question whose keyword matches lack most of its words keeps the cosine's best few in the head."""
    cfg = q.cfg
    vector_leg = s.legs.get("vector")
    if not (cfg.dense_quota and not cfg.experimental.ranker and vector_leg and s.holding and s.lacked_share >= cfg.dense_quota_missed
            and (not cfg.dense_quota_self_only or q.about_self)):
        return None
    moved = _dense_quota(s.ordered, vector_leg, cfg.dense_quota, min(cfg.dense_quota_depth, q.want),
                         cfg.dense_quota_depth)
    return traced(len(s.ordered), lacked_share=round(s.lacked_share, 3),
                  placed=[c.entry.id for c in moved if c.entry is not None])


def answer_first(r: Retriever, q: Query, s: Search) -> Traced | None:
    """A request for a recommendation that finds first a question the user asked, with the turn next
    to it (the options offered, the pick made) second, puts that turn first: a question states nothing
    to remember, the exchange's other half does (docs/retrieval.md, "Answer before question")."""
    if not q.cfg.answer_first or q.cfg.experimental.ranker or len(s.ordered) < 2:
        return None
    top, runner = s.ordered[0], s.ordered[1]
    if (top.entry is None or runner.entry is None or not intent_mod.asks_for_recommendation(q.text)
            or not only_asks(top.entry.l2_full) or only_asks(runner.entry.l2_full)):
        return None
    before, after = r.store.neighbour_turn_hashes([top.rid]).get(top.rid, (None, None))
    if runner.entry.content_hash not in {before, after} or _names_only(q.text, top.entry.actor, runner.entry.actor):
        return None
    s.ordered[0], s.ordered[1] = runner, top
    runner.final = max(runner.final, top.final)  # the score goes with the place: a re-sort by score keeps the order
    runner.matched_by.append("answer_first")
    return traced(len(s.ordered), question=top.entry.id, answer=runner.entry.id)


# -- hits ------------------------------------------------------------------------------------------
def hits(r: Retriever, q: Query, s: Search) -> None:
    """The best ``want`` candidates as hits."""
    s.hits = [Hit(entry=c.entry, score=round(c.final, 6), matched_by=sorted(set(c.matched_by)),
                  similarity=round(s.similarity[c.rid], 6) if c.rid in s.similarity else None)
              for c in s.ordered[:q.want] if c.entry is not None]
    return None


def llm_rerank(r: Retriever, q: Query, s: Search) -> Traced | None:
    """The caller's own reranker (e.g. an LLM), an explicit opt-in."""
    if r.reranker is None or not s.hits:
        return None
    s.hits = list(r.reranker(q.text, s.hits))
    return traced(len(s.hits))


def hierarchical(r: Retriever, q: Query, s: Search) -> Traced | None:
    """L0 (3x top_k) -> L1 (2x top_k) -> L2: narrow by overlap with ever longer tiers."""
    if q.strategy != "hierarchical":
        return None
    terms = {w for w in tokenize.words(q.normalized) if w not in tokenize.STOPWORDS}

    def overlap(text: str) -> float:
        words = set(tokenize.words(text))
        return len(terms & words) / (len(terms) or 1)

    top_k = q.top_k
    pool = s.hits[: 3 * top_k]
    rank = {h.id: i for i, h in enumerate(pool)}
    pool = sorted(pool, key=lambda h: (-overlap(h.entry.l0_abstract), rank[h.id]))[: 2 * top_k]
    pool = sorted(pool, key=lambda h: (-overlap(h.entry.l1_overview), rank[h.id]))
    s.hits = sorted(pool[:top_k], key=lambda h: rank[h.id])
    return traced(len(s.hits), l0_keep=3 * top_k, l1_keep=2 * top_k)


def level_budget(r: Retriever, q: Query, s: Search) -> Traced:
    """The load level by fixed rules (many results or a small budget: L0 abstracts, else L2), then the token budget."""
    level = "L0" if (q.top_k > 20 or (q.token_budget is not None and q.token_budget < 1000)) else "L2"
    s.hits = s.hits[:q.want]
    for h in s.hits:
        h.level = level
    if q.token_budget is not None:
        s.hits = _trim(s.hits, q.token_budget)
    return traced(len(s.hits), level=level, token_budget=q.token_budget, tokenizer=tokenize.tokenizer_name())


STEPS: tuple[tuple[str, Step], ...] = (
    ("normalise", normalise),
    ("intent", intent),
    ("decompose", decompose),
    ("recall_fts", recall_fts),
    ("recall_vector", recall_vector),
    ("candidates", candidates),
    ("fuse_scores", fuse_scores),
    ("fuse_rrf", fuse_rrf),
    ("ner_boost", ner_boost),
    ("intent_strategies", intent_strategies),
    ("self_boost", self_boost),
    ("order", order),
    ("learned_rank", learned_rank),
    ("latest_first", latest_first),
    ("co_retrieval", co_retrieval),
    ("rerank", rerank),
    ("rank_term", rank_term),
    ("spread_sessions", spread_sessions),
    ("dense_quota", dense_quota),
    ("answer_first", answer_first),
    ("hits", hits),
    ("llm_rerank", llm_rerank),
    ("hierarchical", hierarchical),
    ("level_budget", level_budget),
)


# -- helpers ---------------------------------------------------------------------------------------
def _heuristic_rerank(ordered: list[Candidate], scope: Scope, reference: datetime, intents: set[str],
                      x: ExperimentalRetrieval) -> None:
    top = max((c.fused * c.boost for c in ordered), default=1.0) or 1.0
    half_life = x.update_half_life_days if "knowledge_update" in intents else x.freshness_half_life_days
    for c in ordered:
        e = c.entry
        assert e is not None
        when = e.valid_from or e.created_at or reference
        age = max((reference - when).total_seconds() / 86400, 0.0)
        fresh = math.exp(-0.693 * age / half_life)
        # session 1.0, agent 0.8, project 0.6, global 0.4 with the default step of 0.2
        priority = round(1.0 - x.rerank_scope_step * _SCOPE_LEVELS.index(e.scope_level.value), 6)
        if scope.session_id and e.session_id == scope.session_id:
            priority += x.rerank_same_session
        type_match = 1.0 if ("preference" in intents and e.category == "preference") else 0.0
        c.final = (x.rerank_relevance * (c.fused * c.boost / top) + x.rerank_freshness * fresh
                   + x.rerank_confidence * e.confidence + x.rerank_priority * priority
                   + x.rerank_type_match * type_match)


def _calibrate(q: Query, s: Search) -> None:
    """Each candidate's fused score (``final``, at most 1) as a calibrated probability, in place."""
    from .calibration import load_calibration

    n_terms = len(q.worded)
    scorer = load_calibration().question(
        top_cosine=max(s.similarity.values(), default=0.0), top_bm25=max(s.bm25.values(), default=0.0),
        unseen_share=len(s.unseen) / n_terms if n_terms else 0.0, lacked_share=s.lacked_share)
    for rank, c in enumerate(s.ordered):
        c.final = scorer(c.final, rank)


def _names_only(question: str, speaker: str | None, other: str | None) -> bool:
    """Whether the question names ``speaker`` and not ``other`` (then the named speaker's turn stays first)."""
    def named(who: str | None) -> bool:
        return bool(who) and re.search(rf"(?<!\w){re.escape(str(who))}(?!\w)", question, re.IGNORECASE) is not None

    return named(speaker) and not named(other)


def _trim(found: list[Hit], budget: int) -> list[Hit]:
    """Keep the best hits whose text at their level fits the token budget (at least one)."""
    kept: list[Hit] = []
    used = 0
    for h in found:
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


def _words_missed(bm25: dict[int, float], holding: dict[str, set[int]], cfg: RetrievalConfig) -> list[str]:
    """The query's words that the best-covering of BM25's best memories lacks.

    A word no memory holds is missed by all of them; a word some memory holds, but never one that
    has the others, is missed too ("why did I change how I work after lunch?" finds "lunch" in
    one turn and "work" in others, none says both): the question is asked in other words than the
    memory that answers it.
    """
    best = sorted(bm25, key=lambda rid: (-bm25[rid], rid))[:cfg.missed_words_pool]
    if not best:
        return list(holding)
    covering = max(best, key=lambda rid: sum(rid in rids for rids in holding.values()))
    # a word in more memories than were read is common: it is not the one the question lacks
    return [term for term, rids in holding.items() if covering not in rids and len(rids) < cfg.term_rows]


def _answers_read_with_question(cands: dict[int, Candidate], rids: list[int], own_cos: np.ndarray,
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


def _dense_quota(ordered: list[Candidate], nearest: list[int], quota: int, window: int,
                 depth: int) -> list[Candidate]:
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

