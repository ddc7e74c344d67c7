"""Which attribute of whom a statement fills (spaCy's real parse), and how latest first uses it.

"Which city do I live in now?" asks for the asker's residence: "we moved to Denver" fills it,
"adjust the plan for the new city" does not, "My lab mate Jun defends on May 30" is about Jun.
"""

from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np
import pytest

from agentbase_kernel.retrieve.updates import latest_first
from agentbase_kernel.text import slots

pytestmark = pytest.mark.skipif(not slots.parser_available(), reason="needs spaCy's en_core_web_sm with its parser")

JAN = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
MAR = datetime(2024, 3, 2, 18, 0, tzinfo=UTC)
APR = datetime(2024, 4, 12, 8, 0, tzinfo=UTC)
MAY = datetime(2024, 5, 20, 19, 30, tzinfo=UTC)


@pytest.mark.parametrize(("text", "present", "absent"), [
    # different words for one attribute meet in one relation class
    ("Where do I live now?", {("self", "residence")}, set()),
    ("(8:05 am on 22 October, 2024) Maya: We moved to Denver last month.", {("self", "residence")}, set()),
    ("Who is my manager now?", {("self", "work")}, set()),
    ("How much is my rent at the moment?", {("self", "money")}, set()),
    # the relation, not the words around it: "city" as the object of "for" is a value, not a slot
    ("Adjust the plan for the new city.", set(), {("self", "residence")}),
    # a named person holds what they do
    ("My lab mate Jun defends on May 30.", {("jun", "defend")}, {("self", "defend")}),
    # an object without an owner belongs to the verb's subject
    ("Pavel is changing jobs, he starts in September.", {("pavel", "work")}, {("self", "work")}),
    ("Ana left, Raj is my manager now.", {("ana", "leave"), ("self", "work")}, set()),
    # "my new head baker", misread as a noun and its apposition, still names the baker
    ("When does my new head baker start?", {("self", "baker")}, set()),
    # a state in the past tense is not the current value
    ("The defense was on Friday.", set(), {("self", "defense")}),
    ("The defense is on Friday.", {("self", "defense")}, set()),
    # "the train" is not training
    ("The train sounds like an adventure.", set(), {("self", "exercise")}),
    ("I train on Mondays and Thursdays.", {("self", "exercise")}, set()),
])
def test_slots_of(text, present, absent):
    got = slots.slots_of(text)
    assert present <= got
    assert not absent & got


def test_slots_of_many_keeps_order_and_caches():
    texts = ["We moved to Denver.", "My rent is $1,980.", "We moved to Denver."]
    first = slots.slots_of_many(texts)
    assert first == [slots.slots_of(t) for t in texts]
    assert first[0] == first[2] and ("self", "money") in first[1]


def _cand(name, score, when, said):
    entry = SimpleNamespace(id=name, content_hash=name, created_at=when, actor="Maya", l2_full=said)
    return SimpleNamespace(entry=entry, fused=score, boost=1.0, matched_by=[])


def _order(cands):
    return [c.entry.id for c in sorted(cands, key=lambda c: -c.fused * c.boost)]


def _run(cands, vectors, question, **kw):
    ranked = sorted(cands, key=lambda c: -c.fused * c.boost)
    return latest_first(ranked, vectors, relevance=0.7, same_topic=0.1, pool=30, change_relevance=0.6,
                        about_asker=True, asked_slots=slots.slots_of(question), slots_of=slots.slots_of, **kw)


def _city_cands():
    topic, other = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    cands = [
        _cand("boston", 1.0, JAN, "I live in Boston and work as a designer."),
        _cand("ranking", 0.97, MAR, "Which neighbourhoods should I explore on weekends?"),
        _cand("adjust", 0.9, MAY, "Same monthly list as January, but adjust it for the new city."),
        _cand("austin", 0.85, APR, "The new place is in Mueller, near a big park."),
    ]
    vectors = {"boston": topic, "ranking": other, "adjust": topic + 0.2 * other, "austin": topic - 0.5 * other}
    return cands, vectors


def test_a_later_turn_on_another_attribute_is_not_lifted_and_the_one_that_fills_the_slot_is():
    cands, vectors = _city_cands()
    pairs = _run(cands, vectors, "Which city do I live in now?")
    assert _order(cands)[0] == "austin"
    assert ("austin", "boston", "slot:residence") in pairs
    assert all(later != "adjust" for later, _, _ in pairs)


def test_without_slots_the_nearer_topic_wins():
    cands, vectors = _city_cands()
    ranked = sorted(cands, key=lambda c: -c.fused * c.boost)
    latest_first(ranked, vectors, relevance=0.7, same_topic=0.1, pool=30, change_relevance=0.6, about_asker=True)
    assert _order(cands)[0] == "adjust"


def test_the_slot_lift_passes_an_earlier_turn_on_a_neighbouring_topic():
    cands = [
        _cand("chapter", 1.0, JAN, "Good news on the thesis: the experiment chapter is drafted."),
        _cand("moved", 0.95, MAR, "Update: my defense moved to June 14."),
        _cand("jun", 0.9, MAY, "My lab mate Jun defends on May 30."),
    ]
    # the chapter and the move are not the same topic to the cosine
    vectors = {"chapter": np.array([1.0, 0.0]), "moved": np.array([0.0, 1.0]), "jun": np.array([0.3, 1.0])}
    pairs = _run(cands, vectors, "When is my thesis defense scheduled?")
    assert _order(cands)[0] == "moved"
    assert ("moved", "chapter", "slot:defense") in pairs
    # Jun's defence is Jun's: it fills no slot of the asker, so it does not pass the asker's own date
    assert all(later != "jun" for later, _, _ in pairs)


def test_without_the_slot_lift_the_neighbouring_topic_stays_first():
    cands = [
        _cand("chapter", 1.0, JAN, "Good news on the thesis: the experiment chapter is drafted."),
        _cand("moved", 0.95, MAR, "Update: my defense moved to June 14."),
    ]
    vectors = {"chapter": np.array([1.0, 0.0]), "moved": np.array([0.0, 1.0])}
    _run(cands, vectors, "When is my thesis defense scheduled?", slot_lift=False)
    assert _order(cands)[0] == "chapter"


def _swim_cands(later_score, later_text):
    cands = [
        _cand("thursday", 1.0, JAN, "Schedule change: the centre moved the swim group to Thursdays."),
        _cand("filler", 0.9, MAR, "Dev wants an art class on Tuesdays."),
        _cand("summer", later_score, MAY, later_text),
    ]
    vectors = {"thursday": np.array([1.0, 0.0]), "filler": np.array([0.0, 1.0]), "summer": np.array([1.0, 0.2])}
    return cands, vectors


@pytest.mark.parametrize(("later_score", "later_text", "lifted"), [
    # fills the asked slot and announces a change: lifted from down to half the best score
    (0.55, "Oh and swim is changing again for summer: Saturday mornings.", True),
    # announces a change but fills no asked slot: needs the usual change floor (0.6)
    (0.55, "The bakery changed its owner again.", False),
    # fills the slot but announces nothing: needs the usual floor (0.7)
    (0.55, "Swim is on Saturday mornings in summer.", False),
    (0.45, "Oh and swim is changing again for summer: Saturday mornings.", False),
])
def test_a_change_to_the_asked_slot_is_lifted_from_further_down(later_score, later_text, lifted):
    cands, vectors = _swim_cands(later_score, later_text)
    ranked = sorted(cands, key=lambda c: -c.fused * c.boost)
    latest_first(ranked, vectors, relevance=0.7, same_topic=0.1, pool=30, change_relevance=0.6, about_asker=False,
                 asked_slots=slots.slots_of("When is Anika's swim practice now?"), slots_of=slots.slots_of,
                 slot_change_relevance=0.5)
    assert (_order(cands)[0] == "summer") is lifted


def _commute_cands():
    cands = [
        _cand("train", 0.9, JAN, "Ledgerly is in Manchester, so it's a train, an hour each way."),
        _cand("bus", 0.95, MAR, "Ledgerly opened a small Leeds office, so I go there now, a twenty-minute bus."),
        _cand("month_end", 1.0, MAY, "Month-end used to take nine working days, now it's five."),
    ]
    vectors = {"train": np.array([1.0, 0.0]), "bus": np.array([1.0, 0.3]), "month_end": np.array([0.0, 1.0])}
    return cands, vectors


@pytest.mark.parametrize(("over_other", "first"), [(True, "bus"), (False, "month_end")])
def test_the_asked_attribute_ranks_above_a_later_turn_on_another_one(over_other, first):
    cands, vectors = _commute_cands()
    pairs = _run(cands, vectors, "How do I get to work these days?", slot_over_other=over_other)
    assert _order(cands)[0] == first
    assert ("bus", "month_end", "slot:work") in pairs if over_other else all(e != "month_end" for _, e, _ in pairs)


# a long reply: many sentences about something else than where the asker lives
_FILLER = " ".join(f"Option {i} would also work if the weather holds and the budget allows it." for i in range(16))


def test_a_long_statement_is_read_from_its_opening_sentences():
    stated_first = "We moved to Denver last month. " + _FILLER
    stated_last = _FILLER + " We moved to Denver last month."
    assert len(stated_first) > 2 * slots.READ_CHARS
    assert ("self", "residence") in slots.slots_of(stated_first)
    # what a long text states only far past its opening is not read (the parse stays bounded)
    assert ("self", "residence") not in slots.slots_of(stated_last)
    # cut at a sentence end, never mid-sentence
    assert slots._clean(stated_first).endswith(".")
    assert len(slots._clean(stated_first)) <= slots.READ_CHARS


def test_a_short_statement_is_read_whole():
    text = "(8 May, 2023) Maya: " + "We moved to Denver last month. " * 5 + "My rent is $1,980."
    assert len(text) < slots.READ_CHARS
    assert {("self", "residence"), ("self", "money")} <= slots.slots_of(text)


def test_latest_first_still_lifts_a_slot_stated_at_the_start_of_a_long_turn():
    cands = [
        _cand("boston", 1.0, JAN, "I live in Boston and work as a designer."),
        _cand("denver", 0.8, MAY, "We moved to Denver last month. " + _FILLER),
        _cand("advice", 0.75, APR, _FILLER + " We moved to Denver last month."),
    ]
    vectors = {"boston": np.array([1.0, 0.0]), "denver": np.array([0.0, 1.0]), "advice": np.array([0.1, 1.0])}
    pairs = _run(cands, vectors, "Which city do I live in now?")
    assert _order(cands)[0] == "denver"
    assert ("denver", "boston", "slot:residence") in pairs
    assert all(later != "advice" for later, _, _ in pairs)
