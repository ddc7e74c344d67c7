"""What the learned ranker reads: per candidate and per question, numbers the pipeline already has.

No model call and no new store read beyond what fusion needs (each candidate's stored vector and
its session neighbours' hashes, the per-word rows the keyword leg cached). ``collect`` returns the
raw signals; ``retrieve/features.py`` turns them into the ranker's feature matrix, so the training
script (``python -m benchmarks train-ranker``) and ``find`` compute features with the same code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..text.changes import about_someone_else, announces_change, only_asks
from ..text.intent import asks_for_recommendation
from .query import Query

if TYPE_CHECKING:
    from .pipeline import Retriever
    from .steps import Candidate, Search

__all__ = ["CANDIDATE_SIGNALS", "QUERY_SIGNALS", "Signals", "collect", "query_signals"]

CANDIDATE_SIGNALS: tuple[str, ...] = (
    "bm25",  # BM25 with the scope's own IDF (0: not among the keyword leg's rows)
    "fts_rank", "vec_rank",  # rank in each leg (-1: not fetched by it)
    "cos_own", "cos_ctx",  # cosine of the entry's vector, and of its vector summed with its session neighbours'
    "cos_prev", "cos_next",  # cosine of the turn just before / after it
    "cos_reply",  # an assistant reply: the cosine of the user's question it answers (0 otherwise)
    "bm25_prev", "bm25_next",  # BM25 of the neighbouring turns when they are candidates
    "role_user", "role_assistant", "fact",
    "speaker_named",  # the question names who said it
    "entity_named",  # the question names an entity the entry mentions (other than its speaker)
    "coverage", "coverage_idf",  # share of the question's words the entry holds (plain, rare words weighted)
    "date_event", "date_said",  # an event date in, or said within, the question's date window
    "created",  # days since the epoch (NaN: unknown)
    "change", "asks", "third_person",  # announces a change; only asks; a sentence about someone else
    "words",  # length in words
    "later_sim", "earlier_sim",  # centred cosine to the closest later / earlier statement of its speaker
)
QUERY_SIGNALS: tuple[str, ...] = (
    "n_terms", "unseen_share", "lacked_share", "about_self", "asks_current", "has_window", "second_person",
    "q_when", "q_where", "q_who", "q_how_many", "q_why", "q_recommend", "q_yes_no", "q_words",
)

_COL = {name: i for i, name in enumerate(CANDIDATE_SIGNALS)}
# the statements the speaker-topic comparison reads: the best this many by a plain fusion
_TOPIC_POOL = 30
_HEAD = 2000  # change words and person read the head of a long text only
_SECOND = re.compile(r"\b(?:you|you're|you've|your|yours|yourself)\b", re.IGNORECASE)
_WHEN = re.compile(r"\b(?:when|what (?:time|date|day|year|month)|which (?:day|year|month)|how long|date)\b", re.I)
_WHERE = re.compile(r"\bwhere\b", re.I)
_WHO = re.compile(r"\b(?:who|whom|whose)\b", re.I)
_HOW_MANY = re.compile(r"\bhow (?:many|much|often)\b", re.I)
_WHY = re.compile(r"\bwhy\b", re.I)
_YES_NO = re.compile(r"^\W*(?:is|are|am|was|were|do|does|did|can|could|would|should|will|have|has|had)\b", re.I)


@dataclass
class Signals:
    """The raw signals of one query's candidates: ``values[i]`` is ``rids[i]``'s row (``CANDIDATE_SIGNALS``)."""

    rids: list[int]
    values: np.ndarray
    query: np.ndarray  # QUERY_SIGNALS
    # the row of the turn just before / after each candidate in its session, when it is a candidate (-1: not)
    neighbours: np.ndarray | None = None

    def column(self, name: str) -> np.ndarray:
        return self.values[:, _COL[name]]


def query_signals(q: Query, unseen: int, lacked_share: float) -> np.ndarray:
    """The question's own signals (form, person, tense, date), independent of the candidates."""
    text = q.text
    n_terms = len(q.worded)
    return np.array([
        n_terms, unseen / n_terms if n_terms else 0.0, lacked_share, q.about_self, q.asks_current,
        q.window is not None, bool(_SECOND.search(text)), bool(_WHEN.search(text)), bool(_WHERE.search(text)),
        bool(_WHO.search(text)), bool(_HOW_MANY.search(text)), bool(_WHY.search(text)),
        asks_for_recommendation(text), bool(_YES_NO.search(text)), len(text.split()),
    ], dtype=np.float64)


def collect(r: Retriever, q: Query, s: Search, lacked_share: float) -> Signals:
    """Every candidate's signals, read from what the recall legs and the store already hold."""
    from ..text.ner import normalize_entity
    from .steps import _overlaps

    cands: list[Candidate] = [c for c in s.cands.values() if c.entry is not None]
    n = len(cands)
    values = np.zeros((n, len(CANDIDATE_SIGNALS)), dtype=np.float64)
    qsig = query_signals(q, len(s.unseen), lacked_share)
    if not n:
        return Signals([], values, qsig, np.zeros((0, 2), dtype=np.intp))
    rids = [c.rid for c in cands]
    col = values.T  # col[_COL[name]] is a writable view of one signal
    fts_rank = {rid: i for i, rid in enumerate(s.legs.get("fts", []))}
    vec_rank = {rid: i for i, rid in enumerate(s.legs.get("vector", []))}
    col[_COL["bm25"]] = [s.bm25.get(rid, 0.0) for rid in rids]
    col[_COL["fts_rank"]] = [fts_rank.get(rid, -1) for rid in rids]
    col[_COL["vec_rank"]] = [vec_rank.get(rid, -1) for rid in rids]

    # cosines: own, neighbours', in context, and a reply read with the question it answers
    own_hash = [c.entry.content_hash for c in cands]  # type: ignore[union-attr]
    around = r.store.neighbour_turn_hashes(rids)
    pairs = [around.get(rid, (None, None)) for rid in rids]
    vectors = s.vectors.get({*own_hash, *(h for pair in pairs for h in pair if h)})
    by_hash = {c.entry.content_hash: c for c in cands}  # type: ignore[union-attr]
    row_of = {h: i for i, h in enumerate(own_hash)}
    neighbours = np.array([[row_of.get(p, -1) if p else -1, row_of.get(x, -1) if x else -1] for p, x in pairs],
                          dtype=np.intp).reshape(n, 2)
    qvec = q.vector
    dim = len(qvec) if qvec is not None else 0
    own = np.zeros((n, dim), dtype=np.float32)
    prev = np.zeros((n, dim), dtype=np.float32)
    nxt = np.zeros((n, dim), dtype=np.float32)
    has_own = np.zeros(n, dtype=bool)
    if qvec is not None:
        for i, h in enumerate(own_hash):
            if h in vectors:
                own[i] = vectors[h]
                has_own[i] = True
            p, x = pairs[i]
            if p and p in vectors:
                prev[i] = vectors[p]
            if x and x in vectors:
                nxt[i] = vectors[x]
        col[_COL["cos_own"]] = own @ qvec
        col[_COL["cos_prev"]] = prev @ qvec
        col[_COL["cos_next"]] = nxt @ qvec
        summed = own + prev + nxt
        norms = np.linalg.norm(summed, axis=1)
        col[_COL["cos_ctx"]] = (summed @ qvec) / np.where(norms > 0, norms, 1.0)
    flt_text = q.text.casefold()
    named: dict[str, bool] = {}

    def in_query(norm: str) -> bool:
        if norm not in named:
            named[norm] = len(norm) > 1 and re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", flt_text) is not None
        return named[norm]

    worded = q.worded
    weights = {t: math.log(1.0 + q.cfg.term_rows / (1.0 + len(s.holding.get(t, ())))) for t in worded}
    total_weight = sum(weights.values()) or 1.0
    window = q.window
    for i, c in enumerate(cands):
        e = c.entry
        assert e is not None
        p, x = pairs[i]
        before = by_hash.get(p) if p else None
        after = by_hash.get(x) if x else None
        row = values[i]
        if before is not None:
            row[_COL["bm25_prev"]] = s.bm25.get(before.rid, 0.0)
            if (qvec is not None and e.role == "assistant" and before.entry is not None
                    and before.entry.role == "user" and "?" in before.entry.l2_full):
                row[_COL["cos_reply"]] = row[_COL["cos_prev"]]
        if after is not None:
            row[_COL["bm25_next"]] = s.bm25.get(after.rid, 0.0)
        row[_COL["role_user"]] = e.role == "user"
        row[_COL["role_assistant"]] = e.role == "assistant"
        row[_COL["fact"]] = e.metadata.get("derived") == "fact"
        speaker = normalize_entity(e.actor) if e.actor else ""
        row[_COL["speaker_named"]] = bool(speaker) and in_query(speaker)
        row[_COL["entity_named"]] = any(t.startswith("ner_") and t[4:] != speaker and in_query(t[4:]) for t in e.tags)
        if worded:
            held = [t for t in worded if c.rid in s.holding.get(t, ())]
            row[_COL["coverage"]] = len(held) / len(worded)
            row[_COL["coverage_idf"]] = sum(weights[t] for t in held) / total_weight
        if window is not None:
            start, end = window
            row[_COL["date_event"]] = bool(e.event_dates) and any(_overlaps(d, start, end) for d in e.event_dates)
            said = e.valid_from or e.created_at
            row[_COL["date_said"]] = said is not None and start <= said.date() <= end
        when = e.valid_from or e.created_at
        row[_COL["created"]] = when.timestamp() / 86400 if when is not None else math.nan
        head = e.l2_full[:_HEAD]
        row[_COL["change"]] = announces_change(head) is not None
        row[_COL["asks"]] = only_asks(e.l2_full)
        row[_COL["third_person"]] = about_someone_else(head)
        row[_COL["words"]] = e.l2_full.count(" ") + 1
    if qvec is not None:
        _speaker_topics(cands, values, own, has_own)
    return Signals(rids, values, qsig, neighbours)


def _speaker_topics(cands: list[Candidate], values: np.ndarray, own: np.ndarray, has_own: np.ndarray) -> None:
    """``later_sim`` / ``earlier_sim``: how close the nearest later / earlier statement of the same speaker is.

    Among the best ``_TOPIC_POOL`` candidates by a plain fusion (half BM25, half context cosine,
    each out of its best), the cosine after taking out what every candidate shares (their mean
    vector: the speaker's name, the conversation's style). A statement with a close later one by
    its speaker may have been superseded; the newest of a topic may be the current value. The
    ranker learns when that matters (questions about now) from the question's own signals.
    """
    bm25 = values[:, _COL["bm25"]]
    ctx = values[:, _COL["cos_ctx"]]
    prior = 0.5 * bm25 / (bm25.max() or 1.0) + 0.5 * np.maximum(ctx, 0) / (max(ctx.max(), 0) or 1.0)
    pool = [i for i in np.argsort(-prior, kind="stable")[:_TOPIC_POOL] if has_own[i]]
    if len(pool) < 2:
        return
    mean = own[has_own].mean(axis=0)
    centred = own[pool] - mean
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    centred = centred / np.where(norms > 0, norms, 1.0)
    sims = centred @ centred.T
    when = values[pool, _COL["created"]]
    actors = [cands[i].entry.actor if cands[i].entry is not None else None for i in pool]
    for a, i in enumerate(pool):
        later = earlier = 0.0
        for b in range(len(pool)):
            if a == b or actors[a] != actors[b] or not when[a] == when[a] or not when[b] == when[b]:
                continue
            if when[b] > when[a]:
                later = max(later, float(sims[a, b]))
            elif when[b] < when[a]:
                earlier = max(earlier, float(sims[a, b]))
        values[i, _COL["later_sim"]] = later
        values[i, _COL["earlier_sim"]] = earlier
