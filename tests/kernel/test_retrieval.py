"""The retrieval pipeline, step by step, on small real data."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from agentbase_kernel import InvalidArgument
from agentbase_kernel.config import ExperimentalRetrieval

MAY8 = datetime(2023, 5, 8, 12, 0, tzinfo=timezone.utc)


def _intents_on(kernel):
    """Keyword intents are off by default (they cost 2.2 points on LoCoMo); these tests switch them on."""
    return replace(kernel.config.retrieval, experimental=ExperimentalRetrieval(intents=True))


def _steps(result):
    return [s.name for s in result.trace.steps]


def test_trace_is_returned_and_persisted(kernel):
    kernel.add_memory("I like hiking in the Alps", user_id="u")
    result = kernel.find("hiking", user_id="u")
    assert _steps(result)[:4] == ["normalise", "intent", "decompose", "recall_fts"]
    assert "recall_vector" in _steps(result) and "fuse_scores" in _steps(result)
    stored = kernel.trace_session(user_id="u")
    assert stored[0]["id"] == result.trace.id
    rrf = kernel.find("hiking", user_id="u", config=replace(kernel.config.retrieval, fusion="rrf"))
    assert "fuse_rrf" in _steps(rrf) and "fuse_scores" not in _steps(rrf)
    assert stored[0]["result_ids"] == [h.id for h in result]
    assert [s["name"] for s in stored[0]["steps"]] == _steps(result)
    assert kernel.trace_session(user_id="other") == []


def test_vectors_off_degrades_with_reason(kernel):
    kernel.add_memory("I like hiking in the Alps", user_id="u")
    cfg = replace(kernel.config.retrieval, vectors=False)
    result = kernel.find("hiking", user_id="u", config=cfg)
    assert result.degrade_reason == "vectors disabled in config: FTS + NER only"
    assert "recall_vector" not in _steps(result)
    assert result[0].matched_by == ["fts"]


@pytest.mark.parametrize("query", ['"', "*", "NEAR(", "-", ":", "^", "((", "AND", "OR NOT", "a:b^c*", "🙂"])
def test_fts_syntax_is_inert(kernel, query):
    kernel.add_memory("plain text memory", user_id="u")
    kernel.find(query, user_id="u")


@pytest.mark.parametrize(("query", "top_k", "message"), [
    pytest.param("", 5, "query is empty - pass the text to search for", id="empty"),
    pytest.param("  \n", 5, "query is empty - pass the text to search for", id="blank"),
    pytest.param(5, 5, "query must be a str, got int", id="not-str"),
    pytest.param("x", -1, "top_k must be a non-negative int, got -1", id="negative"),
    pytest.param("x", "3", "top_k must be a non-negative int, got '3'", id="str-top-k"),
])
def test_bad_queries(kernel, query, top_k, message):
    with pytest.raises(InvalidArgument) as info:
        kernel.find(query, top_k=top_k)
    assert str(info.value) == message


def test_huge_top_k_is_capped(kernel):
    kernel.add_memory("one memory", user_id="u")
    assert len(kernel.find("memory", user_id="u", top_k=10**9)) == 1


def test_ner_boost_reorders_but_never_adds(kernel):
    a = kernel.add_memory("We talked about the weather in general terms", user_id="u").id
    b = kernel.add_memory("Berlin weather talk with Markus", user_id="u").id
    base = replace(kernel.config.retrieval, vectors=False, co_retrieval=False,
                   experimental=ExperimentalRetrieval(ner_mentions=True))
    plain = kernel.find("weather Markus", user_id="u", config=replace(base, ner_boost=False))
    boosted = kernel.find("weather Markus", user_id="u", config=base)
    assert {h.id for h in plain} == {h.id for h in boosted}
    assert boosted[0].id == b
    assert any(m.startswith("ner_") for m in boosted[0].matched_by)
    assert a in {h.id for h in boosted}


def test_speaker_boost_prefers_what_the_named_person_said(kernel):
    kernel.create_session("s", user_id="u")
    kernel.add_messages("s", [
        {"role": "user", "name": "Melanie", "content": "Caroline, I went camping at the lake"},
        {"role": "user", "name": "Caroline", "content": "I went camping in the mountains"},
    ])
    cfg = replace(kernel.config.retrieval, vectors=False, co_retrieval=False)
    result = kernel.find("Where did Caroline go camping?", user_id="u", config=cfg)
    assert result[0].entry.actor == "Caroline"
    assert "ner_speaker" in result[0].matched_by


def test_temporal_window_prefers_dated_entries(kernel):
    kernel.create_session("s", user_id="u")
    kernel.add_message("s", "user", "I went to the concert last week", created_at=MAY8)
    kernel.add_message("s", "user", "I went to the concert again", created_at=MAY8 + timedelta(days=60))
    result = kernel.find("which concert did I go to in May 2023?", user_id="u", reference_time=MAY8)
    assert "temporal" in result.trace.intents
    assert result[0].entry.l2_full == "I went to the concert last week"
    assert "date_window" in result[0].matched_by


def test_knowledge_update_surfaces_the_successor(kernel):
    kernel.add_memory("I live in Paris", user_id="u", infer=True)
    kernel.add_memory("I moved to Berlin", user_id="u", infer=True)
    result = kernel.find("where do I live now?", user_id="u", config=_intents_on(kernel))
    assert "knowledge_update" in result.trace.intents
    texts = [h.entry.l2_full for h in result]
    assert "User lives in Paris" not in texts
    assert any("Berlin" in t for t in texts[:2])


def test_preference_intent_boosts_user_preferences(kernel):
    kernel.add_memory("The assistant suggested green tea", user_id="u", role="assistant")
    kernel.add_memory("I love green tea", user_id="u", infer=True)
    result = kernel.find("what drink would you recommend?", user_id="u", config=_intents_on(kernel))
    assert "preference" in result.trace.intents
    assert result[0].entry.role == "user"


def test_aggregation_raises_top_k(kernel):
    kernel.add_memories([{"text": f"I bought book number {i}", "user_id": "u"} for i in range(40)])
    result = kernel.find("how many books did I buy?", user_id="u", top_k=10, config=_intents_on(kernel))
    assert len(kernel.find("how many books did I buy?", user_id="u", top_k=10)) == 10
    assert "aggregation" in result.trace.intents
    assert len(result) == 40


def test_multi_session_spreads_results(kernel):
    for s in range(3):
        kernel.create_session(f"s{s}", user_id="u")
        kernel.add_messages(f"s{s}", [{"role": "user", "content": f"trip note {i} for trip {s}"} for i in range(6)])
    result = kernel.find("list all the trip notes", user_id="u", top_k=3, config=_intents_on(kernel))
    assert "multi_session" in result.trace.intents
    assert len({h.entry.session_id for h in result}) == 3


def test_co_retrieval_pulls_neighbouring_turns(kernel):
    kernel.create_session("s", user_id="u")
    kernel.add_messages("s", [
        {"role": "user", "content": "Guess what I adopted yesterday"},
        {"role": "assistant", "content": "Tell me!"},
        {"role": "user", "content": "A tiny kitten called Pixel"},
    ])
    cfg = replace(kernel.config.retrieval, vectors=False)
    result = kernel.find("kitten Pixel", user_id="u", config=cfg)
    assert result[0].entry.l2_full == "A tiny kitten called Pixel"
    # the turn just before is indexed with its neighbours, so FTS finds it; two turns back,
    # only co-retrieval brings the question in
    by_text = {h.entry.l2_full: h for h in result}
    assert "fts" in by_text["Tell me!"].matched_by
    pulled = [h for h in result if "co_retrieval" in h.matched_by]
    assert [h.entry.l2_full for h in pulled] == ["Guess what I adopted yesterday"]
    off = kernel.find("kitten Pixel", user_id="u", config=replace(cfg, co_retrieval=False))
    assert all("co_retrieval" not in h.matched_by for h in off)


def test_token_budget_and_levels(kernel):
    for i in range(10):
        kernel.add_memory(f"memory {i} " + "word " * 400, user_id="u")
    full = kernel.find("memory word", user_id="u", top_k=10)
    small = kernel.find("memory word", user_id="u", top_k=10, token_budget=2000)
    assert len(small) < len(full)
    assert all(h.level == "L2" for h in small)
    tiny = kernel.find("memory word", user_id="u", top_k=10, token_budget=300)
    assert tiny and all(h.level == "L0" and h.content == h.entry.l0_abstract for h in tiny)
    assert any(s.name == "level_budget" for s in tiny.trace.steps)


def test_hierarchical_strategy(kernel):
    for i in range(12):
        kernel.add_memory(f"Project {i} status: the deployment pipeline is green", user_id="u")
    result = kernel.find("deployment pipeline status", user_id="u", top_k=4, strategy="hierarchical")
    assert len(result) == 4
    assert "hierarchical" in _steps(result)
    with pytest.raises(InvalidArgument):
        kernel.find("x", strategy="magic")


def test_filters_and_time_travel(kernel):
    kernel.add_memory("python tip one", user_id="u", category="tip", tags=["py"])
    kernel.add_memory("python doc", user_id="u", category="doc", context_type="resource")
    assert [h.entry.category for h in kernel.find("python", user_id="u", category="tip")] == ["tip"]
    assert [h.entry.l2_full for h in kernel.find("python", user_id="u", context_type="resource")] == ["python doc"]
    assert [h.entry.l2_full for h in kernel.find("python", user_id="u", tags=["py"])] == ["python tip one"]
    first = kernel.add_memory("I live in Paris", user_id="u", infer=True).facts[0]
    kernel.add_memory("I moved to Berlin", user_id="u", infer=True)
    before = kernel.get(first.id).invalid_at - timedelta(microseconds=1)
    past = kernel.find("where does the user live", user_id="u", as_of=before)
    assert first.id in {h.id for h in past}


def test_llm_hooks_are_opt_in(tmp_path, hash_embedder):
    from agentbase_kernel import Kernel

    calls = []

    def rerank(query, hits):
        calls.append(query)
        return list(reversed(hits))

    with Kernel(tmp_path / "h.db", embedder=hash_embedder, ner="regex", reranker=rerank,
                decomposer=lambda q: calls.append("decompose") or ["alpha"]) as k:
        k.add_memory("alpha one", user_id="u")
        k.add_memory("beta two", user_id="u")
        result = k.find("beta", user_id="u")
        assert calls == ["decompose", "beta"]
        assert "llm_rerank" in _steps(result)


def test_every_hit_carries_provenance(kernel):
    kernel.create_session("s", user_id="u")
    m = kernel.add_message("s", "user", "My favourite colour is teal", metadata={"dia_id": "D1:1"})
    for hit in kernel.find("favourite colour", user_id="u"):
        assert hit.provenance and hit.provenance[0].message_id == m.id
        assert hit.provenance[0].metadata == {"dia_id": "D1:1"}


def test_real_model_paraphrase(real_db):
    k = real_db.sync
    k.add_memory("I adore Italian cuisine, especially fresh pasta", user_id="u")
    k.add_memory("My car needs new tyres before winter", user_id="u")
    result = k.find("what food does the user enjoy?", user_id="u")
    assert result[0].entry.l2_full.startswith("I adore Italian cuisine")
    assert result.degrade_reason is None
