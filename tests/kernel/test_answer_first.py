"""``answer_first``: a request for a recommendation that finds the user's old question first puts the turn
next to it (the options offered) first (docs/retrieval.md, "Answer before question")."""

from datetime import UTC, datetime

import pytest

from agentbase_kernel.config import RetrievalConfig

OFF = RetrievalConfig(answer_first=False)
JAN, FEB, MAR = (datetime(2024, m, 10, 9, 0, tzinfo=UTC) for m in (1, 2, 3))


def _session(kernel, sid, when, turns):
    kernel.add_messages(sid, [{"role": role, "content": text, "name": "Maya" if role == "user" else "Assistant",
                               "created_at": when} for role, text in turns], user_id="maya")


@pytest.fixture
def cat(real_db):
    kernel = real_db.sync
    _session(kernel, "s1", JAN, [
        ("user", "What are some good options for feeding my cat?"),
        ("assistant", "You could try three things: 1) raw food, 2) wet food from cans, 3) dry kibble from the store."),
        ("user", "I'll go with the wet food, she hates kibble."),
    ])
    _session(kernel, "s2", FEB, [("user", "My sister is visiting Lisbon in March."),
                                 ("assistant", "Lisbon in spring is lovely; try the tram 28.")])
    _session(kernel, "s3", MAR, [("user", "I bought new running shoes today."),
                                 ("assistant", "Great, remember to break them in slowly.")])
    return kernel


def _texts(result):
    return [h.entry.l2_full for h in result]


def test_the_options_offered_come_before_the_question_that_asked_for_them(cat):
    question = "Can you recommend a good diet for my cat?"
    off = _texts(cat.find(question, user_id="maya", config=OFF, reinforce=False))
    assert off[0].startswith("What are some good options") and off[1].startswith("You could try")  # precondition

    result = cat.find(question, user_id="maya", reinforce=False)
    assert _texts(result)[:2] == [off[1], off[0]]
    assert "answer_first" in result[0].matched_by
    assert [s.name for s in result.trace.steps].count("answer_first") == 1
    scores = [h.score for h in result]
    assert scores == sorted(scores, reverse=True)  # the answer takes the question's score: a re-sort keeps the order


def test_a_question_that_asks_for_no_recommendation_keeps_the_order(cat):
    question = "What did I ask about my cat's food?"
    assert _texts(cat.find(question, user_id="maya", reinforce=False)) == _texts(
        cat.find(question, user_id="maya", config=OFF, reinforce=False))


def test_a_runner_up_from_another_exchange_is_not_moved(real_db):
    kernel = real_db.sync
    _session(kernel, "s1", JAN, [("user", "What are some good options for feeding my cat?")])
    _session(kernel, "s2", FEB, [("user", "My vet says cats need taurine.")])
    question = "Can you recommend good options for feeding my cat?"
    off = _texts(kernel.find(question, user_id="maya", config=OFF, reinforce=False))
    assert off[0].startswith("What are some good options")  # precondition: the question leads
    assert _texts(kernel.find(question, user_id="maya", reinforce=False)) == off
