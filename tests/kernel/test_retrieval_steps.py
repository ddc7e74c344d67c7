"""Each step of ``find`` on its own: a real store, one ``Query`` analysed once, the steps before it run first."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from agentbase_kernel import InvalidArgument
from agentbase_kernel.config import ExperimentalRetrieval
from agentbase_kernel.records import Scope
from agentbase_kernel.retrieve import steps
from agentbase_kernel.retrieve.query import MAX_TOP_K, parse_query
from agentbase_kernel.retrieve.steps import STEPS, Search, VectorCache
from agentbase_kernel.store.base import EntryFilter

MAY = datetime(2024, 5, 20, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def garden(kernel):
    """Two sessions of a user and an assistant, dated a month apart."""
    kernel.add_messages("s1", [
        {"role": "user", "content": "I planted tomatoes and basil in the back garden.", "name": "Noor",
         "created_at": datetime(2024, 4, 2, tzinfo=timezone.utc)},
        {"role": "assistant", "content": "Water the basil every morning while it is young.", "name": "Assistant",
         "created_at": datetime(2024, 4, 2, tzinfo=timezone.utc)},
        {"role": "user", "content": "What soil should the tomatoes get?", "name": "Noor",
         "created_at": datetime(2024, 4, 2, tzinfo=timezone.utc)},
        {"role": "assistant", "content": "A loose loam with compost mixed in.", "name": "Assistant",
         "created_at": datetime(2024, 4, 2, tzinfo=timezone.utc)},
    ], user_id="u")
    kernel.add_messages("s2", [
        {"role": "user", "content": "The garden moved to raised beds by the fence.", "name": "Noor",
         "created_at": datetime(2024, 5, 10, tzinfo=timezone.utc)},
        {"role": "assistant", "content": "Raised beds drain well, so check them after hot days.", "name": "Assistant",
         "created_at": datetime(2024, 5, 10, tzinfo=timezone.utc)},
    ], user_id="u")
    return kernel


def _query(kernel, text, *, top_k=10, strategy="auto", token_budget=None, **changes):
    cfg = replace(kernel.config.retrieval, **changes)
    return parse_query(text, top_k=top_k, flt=EntryFilter(scope=Scope(user_id="u")), reference_time=MAY,
                       token_budget=token_budget, strategy=strategy, cfg=cfg)


def _run_until(kernel, q, last):
    """Run the pipeline up to (not including) the step named ``last``; returns the search state."""
    r = kernel.retriever
    s = Search(vectors=VectorCache(r.store))
    for name, step in STEPS:
        if name == last:
            return r, s
        step(r, q, s)
    raise AssertionError(f"no step named {last}")


def _text(c):
    return c.entry.l2_full


def test_every_step_has_a_test_here():
    tested = {name.removeprefix("test_").split("__")[0] for name in globals() if name.startswith("test_")}
    assert {name for name, _ in STEPS} <= tested


def test_the_query_is_analysed_once(kernel):
    q = _query(kernel, "  Which city do I live in now?  ")
    assert q.text == "Which city do I live in now?"
    assert q.terms and "city" in q.terms and q.about_self and q.asks_current
    assert q.top_k == q.want == 10
    assert _query(kernel, "What did you suggest in May 2024?").worded == ["suggest"]
    assert not _query(kernel, "What did you suggest?").about_self
    assert _query(kernel, "x", top_k=MAX_TOP_K + 5).top_k == MAX_TOP_K
    with pytest.raises(InvalidArgument, match="strategy must be"):
        _query(kernel, "x", strategy="deep")


def test_normalise(garden):
    q = _query(garden, "  Tomato SOIL?  ")
    r, s = _run_until(garden, q, "normalise")
    assert steps.normalise(r, q, s).params == {"normalized": q.normalized}


def test_intent(garden):
    q = _query(garden, "What did I plant in April 2024?")
    r, s = _run_until(garden, q, "intent")
    done = steps.intent(r, q, s)
    assert q.window is not None and q.window[0].isoformat() == "2024-04-01" and "temporal" in q.intents
    assert done.params["window"] == ["2024-04-01", "2024-04-30"]
    many = _query(garden, "How many plants did I put in?", top_k=5, experimental=ExperimentalRetrieval(intents=True))
    steps.intent(r, many, s)
    assert "aggregation" in many.intents and many.want > many.top_k


def test_decompose(garden):
    q = _query(garden, "tomato soil and basil water")
    r, s = _run_until(garden, q, "decompose")
    steps.decompose(r, q, s)
    assert q.subqueries == [q.normalized]
    split = _query(garden, "tomato soil and basil water", experimental=ExperimentalRetrieval(decompose=True))
    steps.decompose(r, split, s)
    assert split.subqueries[0] == split.normalized and len(split.subqueries) > 1


def test_recall_fts(garden):
    q = _query(garden, "what soil for tomatoes zucchini")
    r, s = _run_until(garden, q, "recall_fts")
    done = steps.recall_fts(r, q, s)
    best = r.store.entries_by_rid(s.legs["fts"][:1])
    assert "loam" in next(iter(best.values())).l2_full or "soil" in next(iter(best.values())).l2_full
    assert s.unseen == ["zucchini"] and done.params["unseen_terms"] == ["zucchini"]
    assert s.holding["tomatoes"] and s.fetch >= q.cfg.fusion_pool
    off = _query(garden, "soil", fts=False)
    _, s_off = _run_until(garden, off, "recall_fts")
    assert steps.recall_fts(r, off, s_off) is None and "fts" not in s_off.legs


def test_recall_vector(garden):
    q = _query(garden, "raised beds by the fence")
    r, s = _run_until(garden, q, "recall_vector")
    done = steps.recall_vector(r, q, s)
    assert q.vector is not None and s.legs["vector"] and done.candidates == len(s.legs["vector"])
    assert set(s.similarity) == set(s.legs["vector"])
    off = _query(garden, "raised beds", vectors=False)
    _, s_off = _run_until(garden, off, "recall_vector")
    assert steps.recall_vector(r, off, s_off) is None
    assert s_off.degrade == "vectors disabled in config: FTS + NER only" and off.vector is None


def test_candidates(garden):
    q = _query(garden, "basil water")
    r, s = _run_until(garden, q, "candidates")
    assert steps.candidates(r, q, s) is None
    assert s.cands and all(c.entry is not None for c in s.cands.values())
    both = [c for c in s.cands.values() if {"fts", "vector"} <= set(c.legs)]
    assert both and all(c.fused > 0 for c in both)


def test_fuse_scores(garden):
    q = _query(garden, "basil water every morning")
    r, s = _run_until(garden, q, "fuse_scores")
    done = steps.fuse_scores(r, q, s)
    fused = sorted((c.fused for c in s.cands.values()), reverse=True)
    assert 0 < fused[0] <= 1.0 and done.params["vector_weight"] == q.cfg.score_vector_weight
    other = _query(garden, "basil xylophone quokka")
    _, s2 = _run_until(garden, other, "fuse_scores")
    assert steps.fuse_scores(r, other, s2).params["vector_weight"] > q.cfg.score_vector_weight
    assert steps.fuse_scores(r, _query(garden, "basil", fusion="rrf"), s2) is None


def test_fuse_rrf(garden):
    q = _query(garden, "basil water", fusion="rrf")
    r, s = _run_until(garden, q, "fuse_rrf")
    done = steps.fuse_rrf(r, q, s)
    assert done.params["k"] == q.cfg.rrf_k and done.candidates == len(s.cands)
    assert steps.fuse_rrf(r, _query(garden, "basil"), s) is None


def test_ner_boost(garden):
    q = _query(garden, "What did Noor plant?")
    r, s = _run_until(garden, q, "ner_boost")
    steps.ner_boost(r, q, s)
    noor = [c for c in s.cands.values() if c.entry.actor == "Noor"]
    assert noor and all("ner_speaker" in c.matched_by and c.boost == q.cfg.ner_speaker for c in noor)
    assert all("ner_speaker" not in c.matched_by for c in s.cands.values() if c.entry.actor != "Noor")


def test_intent_strategies(garden):
    q = _query(garden, "what happened to the garden in May 2024")
    r, s = _run_until(garden, q, "intent_strategies")
    assert steps.intent_strategies(r, q, s) is not None
    said_in_may = [c for c in s.cands.values() if c.entry.created_at.month == 5]
    assert said_in_may and all("date_said" in c.matched_by for c in said_in_may)
    assert steps.intent_strategies(r, _query(garden, "garden"), s) is None


def test_self_boost(garden):
    q = _query(garden, "what did I plant in my garden")
    r, s = _run_until(garden, q, "self_boost")
    steps.self_boost(r, q, s)
    assert all(c.boost >= q.cfg.self_boost for c in s.cands.values() if c.entry.role == "user")
    yours = _query(garden, "what did you tell me about basil")
    _, s2 = _run_until(garden, yours, "self_boost")
    assert steps.self_boost(r, yours, s2) is None


def test_order(garden):
    q = _query(garden, "raised beds drain")
    r, s = _run_until(garden, q, "order")
    steps.order(r, q, s)
    scores = [c.fused * c.boost for c in s.ordered]
    assert scores == sorted(scores, reverse=True) and len(s.ordered) == len(s.cands)


def test_learned_rank(garden):
    q = _query(garden, "which soil for the tomatoes?", experimental=ExperimentalRetrieval(ranker=True))
    r, s = _run_until(garden, q, "learned_rank")
    done = steps.learned_rank(r, q, s)
    assert done is not None and done.params["trees"] > 0
    finals = [c.final for c in s.ordered]
    assert finals == sorted(finals, reverse=True) and all(0.0 <= f <= 1.0 for f in finals)
    assert all("ranker" in c.matched_by for c in s.ordered)
    # the boosts and reorderings after it stand aside; without the switch the step does not run
    assert steps.latest_first(r, q, s) is None and steps.co_retrieval(r, q, s) is None
    assert steps.learned_rank(r, _query(garden, "which soil for the tomatoes?"), s) is None


def test_latest_first(garden):
    q = _query(garden, "Where is my garden now?")
    r, s = _run_until(garden, q, "latest_first")
    done = steps.latest_first(r, q, s)
    assert done is not None and "ranked_above" in done.params
    assert steps.latest_first(r, _query(garden, "Where was the garden before?"), s) is None


def test_co_retrieval(garden):
    q = _query(garden, "loam compost", co_retrieval_seeds=1)
    r, s = _run_until(garden, q, "co_retrieval")
    before = {c.entry.id for c in s.ordered}
    steps.co_retrieval(r, q, s)
    pulled = [c for c in s.ordered if "co_retrieval" in c.matched_by]
    assert pulled and before <= {c.entry.id for c in s.ordered}
    assert steps.co_retrieval(r, _query(garden, "loam", co_retrieval=False), s) is None


def test_rerank(garden):
    q = _query(garden, "basil", calibrated_scores=False)
    r, s = _run_until(garden, q, "rerank")
    steps.rerank(r, q, s)
    assert all(c.final == min(1.0, c.fused * c.boost) for c in s.ordered)
    calibrated = _query(garden, "basil")
    _, s1 = _run_until(garden, calibrated, "rerank")
    assert steps.rerank(r, calibrated, s1).params == {"enabled": False, "calibrated": True}
    assert [c.rid for c in s1.ordered] == [c.rid for c in s.ordered]  # calibration never reorders
    assert all(0.0 < c.final < 1.0 for c in s1.ordered)
    assert [c.final for c in s1.ordered] == sorted((c.final for c in s1.ordered), reverse=True)
    heuristic = _query(garden, "basil", experimental=ExperimentalRetrieval(rerank=True))
    _, s2 = _run_until(garden, heuristic, "rerank")
    assert steps.rerank(r, heuristic, s2).params == {"enabled": True}
    finals = [c.final for c in s2.ordered]
    assert finals == sorted(finals, reverse=True)


def test_rank_term(garden):
    q = _query(garden, "basil")
    r, s = _run_until(garden, q, "rank_term")
    kept = list(s.ordered)
    steps.rank_term(r, q, s)
    assert s.ordered == kept  # not installed: the order stands
    calls = []

    def reverse(ordered, reference, scores):
        calls.append(scores)
        return list(reversed(ordered))

    r.rank_term = reverse
    try:
        steps.rank_term(r, q, s)
    finally:
        r.rank_term = None
    assert s.ordered == kept[::-1] and calls and len(calls[0]) == len(kept)


def test_spread_sessions(garden):
    q = _query(garden, "every garden bed and basil", experimental=ExperimentalRetrieval(intents=True))
    r, s = _run_until(garden, q, "spread_sessions")
    assert "multi_session" in q.intents
    steps.spread_sessions(r, q, s)
    first_two = {c.entry.session_id for c in s.ordered[:2]}
    assert len(first_two) == 2


def test_dense_quota(garden):
    q = _query(garden, "my xylophone quokka garden", top_k=3)
    r, s = _run_until(garden, q, "dense_quota")
    done = steps.dense_quota(r, q, s)
    assert done.params["lacked_share"] >= q.cfg.dense_quota_missed
    head = {c.rid for c in s.ordered[:3]}
    assert set(done.params["placed"]) <= {c.entry.id for c in s.ordered[:3]}
    assert head & set(s.legs["vector"][:1])  # the cosine's favourite is in the head
    assert steps.dense_quota(r, _query(garden, "their xylophone quokka garden"), s) is None  # not about the asker
    assert steps.dense_quota(r, _query(garden, "garden", dense_quota=0), s) is None


def test_answer_first(garden):
    q = _query(garden, "Can you recommend a soil for the tomatoes?")
    r, s = _run_until(garden, q, "answer_first")
    question = next(c for c in s.ordered if _text(c).startswith("What soil"))
    answer = next(c for c in s.ordered if _text(c).startswith("A loose loam"))
    other = next(c for c in s.ordered if _text(c).startswith("Raised beds"))
    rest = [c for c in s.ordered if c not in (question, answer)]

    s.ordered = [question, answer, *rest]
    done = steps.answer_first(r, q, s)
    assert [_text(c) for c in s.ordered[:2]] == [_text(answer), _text(question)]
    assert done.params == {"question": question.entry.id, "answer": answer.entry.id}
    assert answer.final >= question.final

    s.ordered = [question, answer, *rest]
    assert steps.answer_first(r, _query(garden, "What soil did I ask about?"), s) is None  # asks for no advice
    s.ordered = [question, other, *[c for c in rest if c is not other]]
    assert steps.answer_first(r, q, s) is None  # the runner-up is from another exchange
    s.ordered = [question, answer, *rest]
    assert steps.answer_first(r, _query(garden, "Can you recommend a soil?", answer_first=False), s) is None


def test_hits(garden):
    q = _query(garden, "basil", top_k=2)
    r, s = _run_until(garden, q, "hits")
    steps.hits(r, q, s)
    assert [h.entry.id for h in s.hits] == [c.entry.id for c in s.ordered[:2]]
    assert all(h.score == round(c.final, 6) for h, c in zip(s.hits, s.ordered))


def test_llm_rerank(garden):
    q = _query(garden, "basil")
    r, s = _run_until(garden, q, "llm_rerank")
    assert steps.llm_rerank(r, q, s) is None
    r.reranker = lambda text, found: list(reversed(found))
    try:
        before = [h.id for h in s.hits]
        assert steps.llm_rerank(r, q, s).candidates == len(before)
        assert [h.id for h in s.hits] == before[::-1]
    finally:
        r.reranker = None


def test_hierarchical(garden):
    q = _query(garden, "garden beds", top_k=2, strategy="hierarchical")
    r, s = _run_until(garden, q, "hierarchical")
    done = steps.hierarchical(r, q, s)
    assert done.params == {"l0_keep": 6, "l1_keep": 4} and len(s.hits) <= 2
    assert steps.hierarchical(r, _query(garden, "garden"), s) is None


def test_level_budget(garden):
    q = _query(garden, "garden", top_k=25)
    r, s = _run_until(garden, q, "level_budget")
    assert steps.level_budget(r, q, s).params["level"] == "L0"
    tight = _query(garden, "garden", token_budget=5)
    _, s2 = _run_until(garden, tight, "level_budget")
    steps.level_budget(r, tight, s2)
    assert len(s2.hits) == 1


def test_vectors_are_read_once_per_find(garden):
    store = garden.retriever.store
    cache = VectorCache(store)
    hashes = [e.content_hash for e in garden.list(user_id="u")]
    first = cache.get(hashes)
    assert set(first) == set(hashes) and cache.asked == set(hashes)
    reads = []

    class Counting:
        def vectors_for(self, wanted):
            reads.append(set(wanted))
            return store.vectors_for(wanted)

    cache.store = Counting()
    assert cache.get(hashes[:2]).keys() == {hashes[0], hashes[1]} and reads == []
