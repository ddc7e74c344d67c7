"""A question asked in other words: the reply read with its question, and the cosine's quota (docs/retrieval.md)."""

from dataclasses import replace

import pytest

SNACKS = "A handful of nuts, roasted chickpeas, Greek yogurt, or an apple with peanut butter."
EXCHANGES = [
    [{"role": "user", "content": "I'm starving at 4 pm every day at work. What can I snack on?", "name": "Ravi"},
     {"role": "assistant", "content": SNACKS, "name": "Assistant"}],
    [{"role": "user", "content": "Morning walk done, 25 minutes after breakfast.", "name": "Ravi"},
     {"role": "assistant", "content": "Excellent. Walking after meals steadies your sugar.", "name": "Assistant"}],
    [{"role": "user", "content": "The office is moving to the fourth floor next week.", "name": "Ravi"},
     {"role": "assistant", "content": "A change of scenery can help the afternoons.", "name": "Assistant"}],
]
QUESTION = "What can I munch on mid-afternoon at the office?"


@pytest.fixture
def snacks(real_db):
    kernel = real_db.sync
    for n, turns in enumerate(EXCHANGES):
        kernel.add_messages(f"s{n}", turns, user_id="u")
    return kernel


def _rank(result, text):
    return next(i for i, h in enumerate(result.hits) if h.entry.l2_full == text)


def test_a_reply_is_scored_with_the_question_it_answers(snacks):
    cfg = snacks.config.retrieval
    assert cfg.reply_question_cosine > 0
    lifted = snacks.find(QUESTION, user_id="u", top_k=6)
    plain = snacks.find(QUESTION, user_id="u", top_k=6, config=replace(cfg, reply_question_cosine=0.0))
    reply = lifted.hits[_rank(lifted, SNACKS)]
    assert "answers_question" in reply.matched_by
    assert reply.score > plain.hits[_rank(plain, SNACKS)].score
    assert _rank(lifted, SNACKS) <= _rank(plain, SNACKS)
    assert all("answers_question" not in h.matched_by for h in plain.hits)
    # a question about the asker: the reply to their own question ranks up with their turns
    assert "self_boost" in reply.matched_by
    unboosted = snacks.find(QUESTION, user_id="u", top_k=6, config=replace(cfg, self_boost_replies=False))
    assert "self_boost" not in unboosted.hits[_rank(unboosted, SNACKS)].matched_by


def test_a_reply_to_a_statement_is_not_lifted(snacks):
    result = snacks.find("How long was my walk after breakfast?", user_id="u", top_k=6)
    after_walk = next(h for h in result.hits if h.entry.l2_full.startswith("Excellent."))
    assert "answers_question" not in after_walk.matched_by


def test_dense_quota_places_the_nearest_turns_in_the_head(kernel):
    """BM25 leads with a rare word; the quota makes room for the turn the cosine ranks first."""
    for n in range(8):
        kernel.add_messages(f"k{n}", [{"role": "user", "content": f"the garden fence paint job {n}"}], user_id="u")
    kernel.add_messages("v", [{"role": "user", "content": "gate"}], user_id="u")
    # the cosine's clear favourite: all its words are the query's, but they are the common ones
    kernel.add_messages("w", [{"role": "user", "content": "garden fence paint"}], user_id="u")
    # keyword-led fusion, so the cosine's favourite is not first on its own
    cfg = replace(kernel.config.retrieval, co_retrieval=False, score_vector_weight=0.1, unseen_vector_shift=0.0,
                  missed_words=False, dense_quota=1, dense_quota_missed=0.0, dense_quota_self_only=False)
    query = "garden fence paint gate"
    off = [h.entry.id for h in kernel.find(query, user_id="u", top_k=20, config=replace(cfg, dense_quota=0))]
    nearest = kernel.find(query, user_id="u", top_k=1, config=replace(cfg, fts=False, dense_quota=0)).hits[0].entry.id
    depth = off.index(nearest)
    assert depth >= 1
    on = kernel.find(query, user_id="u", top_k=depth + 2, config=replace(cfg, dense_quota_depth=depth))
    ids = [h.entry.id for h in on.hits]
    # placed at the end of the head; the hits it passed keep their order
    assert ids[:depth] == off[:depth - 1] + [nearest]
    assert "dense_quota" in on.hits[depth - 1].matched_by
    assert [h.score for h in on.hits] == sorted((h.score for h in on.hits), reverse=True)
    step = next(s for s in on.trace.steps if s.name == "dense_quota")
    assert step.params["placed"] == [nearest]


def test_dense_quota_waits_for_the_keyword_matches_to_lack_words(kernel):
    for n in range(4):
        kernel.add_messages(f"k{n}", [{"role": "user", "content": f"the garden fence number {n} needs paint"}],
                            user_id="u")
    cfg = replace(kernel.config.retrieval, dense_quota=2, dense_quota_missed=0.5)
    covered = kernel.find("should I paint my garden fence", user_id="u", config=cfg)
    assert "dense_quota" not in [s.name for s in covered.trace.steps]
    lacking = kernel.find("should I paint my garden gate blue or grey", user_id="u", config=cfg)
    assert next(s for s in lacking.trace.steps if s.name == "dense_quota").params["lacked_share"] >= 0.5


def test_dense_quota_is_for_questions_about_the_asker(kernel):
    """A question about a named person is anchored by the name; only one about the asker gets the quota."""
    for n in range(4):
        kernel.add_messages(f"k{n}", [{"role": "user", "content": f"the garden fence number {n} needs paint"}],
                            user_id="u")
    cfg = kernel.config.retrieval
    assert cfg.dense_quota > 0 and cfg.dense_quota_self_only
    theirs = kernel.find("which colour will Maria choose for the garden gate", user_id="u")
    assert "dense_quota" not in [s.name for s in theirs.trace.steps]
    mine = kernel.find("which colour should I choose for my garden gate", user_id="u")
    assert "dense_quota" in [s.name for s in mine.trace.steps]
