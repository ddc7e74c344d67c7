"""The learned ranker's features: each candidate's signals made comparable within and across questions.

Raw BM25 and cosines differ from scope to scope and question to question, so each is also given
relative to the question's best candidate; the question's own signals (its form, person, tense,
date expression, how far the best keyword match leads) are repeated on every row, so the ranker
can learn when to trust which leg without a hand rule. Pure numpy: training and ``find`` share it.
"""

from __future__ import annotations

import numpy as np

from .signals import CANDIDATE_SIGNALS, QUERY_SIGNALS, Signals

__all__ = ["FEATURES", "matrix"]

_PER_CANDIDATE = (
    "bm25_norm", "bm25_log", "fts_rank_log", "vec_rank_log", "cos_own", "cos_ctx", "cos_own_gap", "cos_ctx_gap",
    "cos_prev", "cos_next", "cos_reply", "nb_bm25_norm", "role_user", "role_assistant", "fact", "speaker_named",
    "entity_named", "coverage", "coverage_idf", "date_event", "date_said", "recency", "change", "asks",
    "third_person", "words_log", "later_sim", "earlier_sim", "cos_own_norm", "cos_ctx_norm", "prior",
    "nb_prior_max", "nb_coverage_max", "nb_speaker_named",
)
_PER_QUERY = ("bm25_lead", "cos_lead", "bm25_max_log", "cos_max")
FEATURES: tuple[str, ...] = _PER_CANDIDATE + QUERY_SIGNALS + _PER_QUERY

_C = {name: i for i, name in enumerate(CANDIDATE_SIGNALS)}
_UNFETCHED_RANK = 200.0


def matrix(sig: Signals) -> np.ndarray:
    """The ``(candidates, FEATURES)`` matrix of one question."""
    v = sig.values
    n = v.shape[0]
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if not n:
        return out
    bm25 = v[:, _C["bm25"]]
    own = v[:, _C["cos_own"]]
    ctx = v[:, _C["cos_ctx"]]
    top_bm25 = float(bm25.max())
    scale = top_bm25 or 1.0
    second_bm25 = float(np.partition(bm25, -2)[-2]) if n > 1 else 0.0
    top_ctx = float(ctx.max())
    second_ctx = float(np.partition(ctx, -2)[-2]) if n > 1 else top_ctx
    created = v[:, _C["created"]]
    known = created[~np.isnan(created)]
    span = float(known.max() - known.min()) if known.size else 0.0
    recency = (created - known.min()) / span if span > 0 else np.full(n, 0.5)
    recency = np.where(np.isnan(recency), 0.5, recency)

    def rank_log(name: str) -> np.ndarray:
        rank = v[:, _C[name]]
        return np.log1p(np.where(rank < 0, _UNFETCHED_RANK, rank))

    columns = [
        bm25 / scale, np.log1p(bm25), rank_log("fts_rank"), rank_log("vec_rank"), own, ctx, own - own.max(),
        ctx - top_ctx, v[:, _C["cos_prev"]], v[:, _C["cos_next"]], v[:, _C["cos_reply"]],
        np.maximum(v[:, _C["bm25_prev"]], v[:, _C["bm25_next"]]) / scale,
        v[:, _C["role_user"]], v[:, _C["role_assistant"]], v[:, _C["fact"]], v[:, _C["speaker_named"]],
        v[:, _C["entity_named"]], v[:, _C["coverage"]], v[:, _C["coverage_idf"]], v[:, _C["date_event"]],
        v[:, _C["date_said"]], recency, v[:, _C["change"]], v[:, _C["asks"]], v[:, _C["third_person"]],
        np.log1p(v[:, _C["words"]]), v[:, _C["later_sim"]], v[:, _C["earlier_sim"]],
    ]
    own_norm = own / (float(own.max()) or 1.0)
    ctx_norm = ctx / (top_ctx or 1.0)
    prior = 0.5 * bm25 / scale + 0.25 * np.maximum(own_norm, 0) + 0.25 * np.maximum(ctx_norm, 0)
    coverage = v[:, _C["coverage_idf"]]
    speaker = v[:, _C["speaker_named"]]
    nb_prior = np.zeros(n)
    nb_coverage = np.zeros(n)
    nb_speaker = np.zeros(n)
    if sig.neighbours is not None and len(sig.neighbours):
        for side in (0, 1):
            at_row = sig.neighbours[:, side]
            has = at_row >= 0
            nb_prior[has] = np.maximum(nb_prior[has], prior[at_row[has]])
            nb_coverage[has] = np.maximum(nb_coverage[has], coverage[at_row[has]])
            nb_speaker[has] = np.maximum(nb_speaker[has], speaker[at_row[has]])
    columns += [own_norm, ctx_norm, prior, nb_prior, nb_coverage, nb_speaker]
    for i, column in enumerate(columns):
        out[:, i] = column
    at = len(columns)
    out[:, at:at + len(QUERY_SIGNALS)] = sig.query
    at += len(QUERY_SIGNALS)
    out[:, at:] = [(top_bm25 - second_bm25) / scale, top_ctx - second_ctx, np.log1p(top_bm25), top_ctx]
    return out
