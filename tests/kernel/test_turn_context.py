"""Turns are indexed with their neighbours, and fused by score (docs/retrieval.md)."""

from dataclasses import replace
from datetime import datetime, timezone

import numpy as np
import pytest

from agentbase_kernel import Config
from agentbase_kernel.errors import InvalidArgument
from agentbase_kernel.records import Scope
from agentbase_kernel.store import EntryFilter


def _fts_only(kernel):
    return replace(kernel.config.retrieval, vectors=False, co_retrieval=False)


def _texts(result):
    return [h.entry.l2_full for h in result]


def test_a_reply_is_found_by_the_words_of_the_turn_it_answers(kernel):
    kernel.add_messages("s", [
        {"role": "user", "content": "What does your new tattoo mean?", "name": "Ann"},
        {"role": "assistant", "content": "It stands for freedom and being real.", "name": "Bo"},
    ], user_id="u")
    result = kernel.find("tattoo", user_id="u", config=_fts_only(kernel))
    assert "It stands for freedom and being real." in _texts(result)
    # what is stored and shown is still the turn's own text
    reply = next(h for h in result if h.entry.actor == "Bo")
    assert reply.entry.l2_full == "It stands for freedom and being real."


def test_a_question_is_found_by_the_answer_that_came_in_a_later_call(kernel):
    kernel.add_messages("s", [{"role": "user", "content": "Which city did you move to?"}], user_id="u")
    assert kernel.find("Lisbon", user_id="u", config=_fts_only(kernel)).hits == []
    kernel.add_messages("s", [{"role": "assistant", "content": "Lisbon, last spring."}], user_id="u")
    assert set(_texts(kernel.find("Lisbon", user_id="u", config=_fts_only(kernel)))) == {
        "Which city did you move to?", "Lisbon, last spring."}
    # the earlier entry's content and history are untouched
    question = kernel.list(user_id="u", category="turn")
    assert sorted(e.l2_full for e in question) == ["Lisbon, last spring.", "Which city did you move to?"]


def test_system_messages_are_not_context(kernel):
    kernel.add_messages("s", [
        {"role": "system", "content": "You are a pirate assistant"},
        {"role": "user", "content": "Hello there"},
    ], user_id="u")
    assert kernel.find("pirate", user_id="u", config=_fts_only(kernel)).hits == []


def test_inserting_at_a_position_gives_the_new_turn_its_neighbours_only(kernel):
    kernel.add_messages("s", [{"role": "user", "content": "first turn about otters"},
                              {"role": "user", "content": "third turn about badgers"}], user_id="u")
    kernel.add_messages("s", [{"role": "user", "content": "second turn"}], position=1, user_id="u")
    found = _texts(kernel.find("otters", user_id="u", config=_fts_only(kernel)))
    assert "second turn" in found
    assert [m.content for m in kernel.list_messages("s")] == [
        "first turn about otters", "second turn", "third turn about badgers"]


def test_neighbour_hashes_come_from_the_session_order(kernel):
    kernel.add_messages("s", [{"role": "user", "content": t} for t in ("one", "two", "three")], user_id="u")
    store = kernel._store
    flt = EntryFilter(scope=Scope(user_id="u"))
    entries = {e.l2_full: e for e in kernel.list(user_id="u", category="turn")}
    rids = {rid: e.l2_full for rid, e in store.entries_by_rid(range(1, 50)).items() if e.l2_full in entries}
    around = store.neighbour_turn_hashes(list(rids))
    by_text = {rids[rid]: pair for rid, pair in around.items()}
    assert by_text["one"] == (None, entries["two"].content_hash)
    assert by_text["two"] == (entries["one"].content_hash, entries["three"].content_hash)
    assert by_text["three"] == (entries["two"].content_hash, None)
    assert store.count_entries(flt) >= 3


def test_score_fusion_gives_keyword_hits_their_cosine(kernel):
    kernel.add_memory("the quarterly budget review is on friday", user_id="u")
    kernel.add_memory("lunch with the design team", user_id="u")
    result = kernel.find("budget review", user_id="u")
    assert result[0].entry.l2_full.startswith("the quarterly budget")
    assert all(h.similarity is not None for h in result)
    assert 0.0 < result[0].score <= 1.0
    assert "fuse_scores" in [s.name for s in result.trace.steps]


def test_rrf_fusion_is_still_available(kernel):
    kernel.add_memory("the quarterly budget review is on friday", user_id="u")
    cfg = replace(kernel.config.retrieval, fusion="rrf")
    result = kernel.find("budget review", user_id="u", config=cfg)
    assert result[0].entry.l2_full.startswith("the quarterly budget")
    assert "fuse_rrf" in [s.name for s in result.trace.steps]


def test_unknown_fusion_is_refused():
    with pytest.raises(InvalidArgument, match="fusion"):
        Config().with_(retrieval={"fusion": "borda"})


def test_a_turn_said_inside_the_question_window_is_marked(kernel):
    said = datetime(2023, 1, 23, 14, 0, tzinfo=timezone.utc)
    kernel.add_messages("s", [{"role": "user", "content": "I finished my screenplay", "created_at": said}],
                        user_id="u")
    result = kernel.find("What did I finish on 23 January, 2023?", user_id="u",
                         reference_time=datetime(2023, 3, 1, tzinfo=timezone.utc))
    assert "date_said" in result[0].matched_by
    off = kernel.find("What did I finish on 23 January, 2023?", user_id="u",
                      reference_time=datetime(2023, 3, 1, tzinfo=timezone.utc),
                      config=replace(kernel.config.retrieval, date_said_boost=1.0))
    assert "date_said" not in off[0].matched_by


def test_context_cosine_uses_the_neighbours_vectors(kernel):
    kernel.add_messages("s", [
        {"role": "user", "content": "how is your garden doing"},
        {"role": "assistant", "content": "the tomatoes are finally red"},
    ], user_id="u")
    # the fused score itself (calibrated_scores off): the best turn's is its share of the best possible
    own = kernel.find("garden", user_id="u", config=replace(kernel.config.retrieval, context_vector_weight=0.0,
                                                              fts=False, co_retrieval=False, calibrated_scores=False))
    ctx = kernel.find("garden", user_id="u", config=replace(kernel.config.retrieval, fts=False, co_retrieval=False,
                                                              calibrated_scores=False))
    own_scores = {h.entry.l2_full: h.score for h in own}
    ctx_scores = {h.entry.l2_full: h.score for h in ctx}
    # the reply shares no word with "garden": only its neighbour's vector lifts it
    assert ctx_scores["the tomatoes are finally red"] > own_scores.get("the tomatoes are finally red", 0.0)
    assert np.isclose(ctx_scores["how is your garden doing"], 1.0)


def test_a_turn_that_says_the_word_itself_ranks_above_its_neighbour(kernel):
    kernel.add_messages("s", [{"role": "user", "content": "I really like pizza"},
                              {"role": "user", "content": "I hate broccoli"}], user_id="u")
    turns = {"I really like pizza", "I hate broccoli"}
    for cfg in (_fts_only(kernel), replace(kernel.config.retrieval, co_retrieval=False)):
        found = [t for t in _texts(kernel.find("broccoli", user_id="u", config=cfg)) if t in turns]
        assert found == ["I hate broccoli", "I really like pizza"]
        found = [t for t in _texts(kernel.find("pizza", user_id="u", config=cfg)) if t in turns]
        assert found == ["I really like pizza", "I hate broccoli"]


def test_the_speaker_named_in_the_query_ranks_first_without_running_ner(kernel):
    kernel.add_messages("s", [{"role": "user", "content": "I went hiking on Sunday", "name": "Ann"},
                              {"role": "user", "content": "I went hiking on Sunday too", "name": "Bo"}], user_id="u")
    result = kernel.find("When did Bo's hike happen?", user_id="u")
    assert result[0].entry.actor == "Bo" and "ner_speaker" in result[0].matched_by
    assert all("ner_speaker" not in h.matched_by for h in result if h.entry.actor == "Ann")
    # a name inside another word is not a mention
    assert all("ner_speaker" not in h.matched_by for h in kernel.find("Bob went hiking", user_id="u"))
