"""A later statement outranks an earlier one when the question asks how things stand now.

Plain turns, not only extracted facts: "I live in Boston" ... "we moved to Denver last month".
The earlier turn is never removed: it stays in the results below the later one, ``as_of`` before
the update makes it the answer again, and the trace names the step that reordered them.
"""

from dataclasses import replace
from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np
import pytest

from agentbase_kernel.retrieve.updates import latest_first
from agentbase_kernel.text.changes import about_someone_else, announces_change, only_asks
from agentbase_kernel.text.intent import asks_about_self, asks_current

JAN = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
MAR = datetime(2024, 3, 2, 18, 0, tzinfo=UTC)
MAY = datetime(2024, 5, 20, 19, 30, tzinfo=UTC)


def _session(kernel, sid, when, turns):
    kernel.add_messages(sid, [{"role": role, "content": text, "name": "Maya" if role == "user" else "Assistant",
                               "created_at": when} for role, text in turns], user_id="maya")


@pytest.fixture
def moved(real_db):
    kernel = real_db.sync
    _session(kernel, "s1", JAN, [
        ("user", "Hi! I live in Boston and work as a product designer. Can you help me plan the year?"),
        ("assistant", "Of course. Let's start with your monthly goals and a budget."),
        ("user", "My manager Ana wants a written plan before anything ships."),
        ("assistant", "A one-page plan with rollback steps usually works well for that."),
    ])
    _session(kernel, "s2", MAR, [
        ("user", "I started pottery classes on Thursday evenings, it's so calming."),
        ("assistant", "That sounds lovely. Keep an eye on the kiln schedule for firing."),
        ("user", "Office news: Ana left for a job at a bank, Raj is my manager now."),
        ("assistant", "Ask Raj in your first one-to-one what a great quarter looks like."),
    ])
    _session(kernel, "s3", MAY, [
        ("user", "Hello from Denver! We moved last month and the apartment is in Capitol Hill."),
        ("assistant", "Congratulations on the move! Want me to update your plan for Denver?"),
    ])
    return kernel


def _first_user_turn(result):
    return next(h for h in result if h.entry.role == "user")


def test_the_later_city_ranks_first_and_the_trace_says_why(moved):
    result = moved.find("Where do I live now?", user_id="maya", reference_time=MAY)
    top = _first_user_turn(result)
    assert "Denver" in top.entry.l2_full
    texts = [h.entry.l2_full for h in result]
    boston = next(i for i, t in enumerate(texts) if "Boston" in t)
    denver = next(i for i, t in enumerate(texts) if "Denver" in t and "moved" in t)
    assert denver < boston  # the earlier value is still there, below
    step = next(s for s in result.trace.steps if s.name == "latest_first")
    assert step.params["ranked_above"], "the trace lists the pair it reordered"
    assert "latest_first" in top.matched_by
    assert "superseded_later" in result.hits[boston].matched_by


def test_without_the_step_the_earlier_city_led(moved):
    """The step is what makes the difference: the older turn says 'live', the newer one does not."""
    config = replace(moved.config.retrieval, latest_first=False)
    result = moved.find("Where do I live now?", user_id="maya", reference_time=MAY, config=config)
    assert "Boston" in _first_user_turn(result).entry.l2_full


def test_as_of_before_the_move_answers_with_the_earlier_city(moved):
    result = moved.find("Where do I live now?", user_id="maya", as_of=MAR, reference_time=MAR)
    assert "Boston" in _first_user_turn(result).entry.l2_full
    assert not any("Denver" in h.entry.l2_full for h in result)


def test_the_earlier_turn_keeps_its_history(moved):
    boston = next(e for e in moved.list(user_id="maya", category="turn") if "Boston" in e.l2_full)
    assert [event.event for event in moved.history(boston.id)] == ["ADD"]
    assert moved.get(boston.id).l2_full == boston.l2_full


def test_a_manager_who_left_is_outranked_by_the_new_one(moved):
    result = moved.find("Who is my manager?", user_id="maya", reference_time=MAY)
    assert "Raj is my manager now" in _first_user_turn(result).entry.l2_full
    texts = [h.entry.l2_full for h in result]
    assert any("Ana wants a written plan" in t for t in texts)


def test_a_question_about_the_past_is_not_reordered(moved):
    result = moved.find("Where did I live before the move?", user_id="maya", reference_time=MAY)
    assert "latest_first" not in [s.name for s in result.trace.steps]


@pytest.mark.parametrize(("question", "now"), [
    ("Who is my manager now?", True),
    ("Which days do I train these days?", True),
    ("How much had we saved at last count?", True),
    ("What is Caroline's job now?", True),
    ("What activities does Melanie partake in?", False),
    ("Who was my manager in 2023?", False),
    ("Where did I live before Denver?", False),
    ("When did Melanie paint a sunrise?", False),
])
def test_asks_current(question, now):
    assert asks_current(question) is now


@pytest.mark.parametrize(("question", "own"), [
    ("What's my monthly rent?", True),
    ("Where do we live?", True),
    ("What did you recommend for my knee?", False),
    ("What did Caroline say about the parade?", False),
])
def test_asks_about_self(question, own):
    assert asks_about_self(question) is own


def test_unseen_query_words_shift_weight_to_the_cosine(kernel):
    """Words the memories never use cannot be weighed by BM25: the cosine's share grows, and the trace says so."""
    kernel.add_messages("s", [{"role": "user", "content": "We moved to Denver and the apartment is lovely"}],
                        user_id="u")
    seen = kernel.find("apartment in Denver", user_id="u")
    unseen = kernel.find("which city is home", user_id="u")
    weight = {name: next(s for s in r.trace.steps if s.name == "fuse_scores").params["vector_weight"]
              for name, r in (("seen", seen), ("unseen", unseen))}
    cfg = kernel.config.retrieval
    assert weight["seen"] == cfg.score_vector_weight
    assert weight["unseen"] == cfg.score_vector_max
    fts = next(s for s in unseen.trace.steps if s.name == "recall_fts")
    assert set(fts.params["unseen_terms"]) == {"city", "home"}


def test_a_first_person_question_ranks_the_users_turns_up(kernel):
    kernel.add_messages("s", [
        {"role": "user", "content": "my knee hurts after running"},
        {"role": "assistant", "content": "knee pain after running often means too much mileage"},
    ], user_id="u")
    mine = kernel.find("what did I say about my knee", user_id="u")
    assert mine.hits[0].entry.role == "user" and "self_boost" in mine.hits[0].matched_by
    yours = kernel.find("what did you say about the knee", user_id="u")
    assert "self_boost" not in [s.name for s in yours.trace.steps]


def test_date_words_are_not_counted_as_unseen(kernel):
    """ "in July 2023" is matched as a date window, not as words a memory must contain."""
    kernel.add_messages("s", [{"role": "user", "content": "We moved to Denver and the apartment is lovely"}],
                        user_id="u")
    result = kernel.find("the apartment in Denver in July 2023", user_id="u")
    fts = next(s for s in result.trace.steps if s.name == "recall_fts")
    assert fts.params["unseen_terms"] == []
    fuse = next(s for s in result.trace.steps if s.name == "fuse_scores")
    assert fuse.params["vector_weight"] == kernel.config.retrieval.score_vector_weight


def test_words_no_single_memory_shares_shift_weight_to_the_cosine(kernel):
    """Each query word is in some memory, but the best keyword match lacks most of them: they count as unseen."""
    # one session each: a turn's neighbours are indexed with it, and these must not share words
    for n, said in enumerate(["We moved to Denver and the apartment is lovely", "The city council meets on Tuesdays",
                              "My home office needs a new lamp", "Tuesday feels endless at the office"]):
        kernel.add_messages(f"s{n}", [{"role": "user", "content": said}], user_id="u")
    cfg = kernel.config.retrieval

    def fused(result):
        return next(s for s in result.trace.steps if s.name == "fuse_scores").params

    scattered = fused(kernel.find("which city feels like home", user_id="u"))
    assert scattered["vector_weight"] > cfg.score_vector_weight
    assert len(scattered["missed_terms"]) >= 2
    # switched off, only "like" (in no memory at all) counts
    alone = fused(kernel.find("which city feels like home", user_id="u", config=replace(cfg, missed_words=False)))
    assert alone["missed_terms"] == [] and cfg.score_vector_weight < alone["vector_weight"] < scattered["vector_weight"]
    together = fused(kernel.find("new lamp for the home office", user_id="u"))
    assert together["vector_weight"] == cfg.score_vector_weight and together["missed_terms"] == []


@pytest.fixture
def switched(real_db):
    kernel = real_db.sync
    _session(kernel, "s1", JAN, [
        ("user", "My doctor put me on a blood pressure medication, lisinopril, at a dose of 10 milligrams once a day."),
        ("assistant", "A simple paper log works well: date, time, both numbers, and how you felt."),
    ])
    _session(kernel, "s2", MAR, [
        ("user", "My blood pressure readings were high all week, around 150 over 95."),
        ("assistant", "Keep logging them and bring the log to your next appointment."),
    ])
    _session(kernel, "s3", MAY, [
        ("user", "I called the clinic. They switched me to amlodipine, 5 milligrams, starting today."),
        ("assistant", "Noted. Ankle swelling is a common side effect, so mention it if you see any."),
        ("user", "Should I take my blood pressure medication in the morning or at night?"),
    ])
    return kernel


def test_a_switch_outranks_the_old_dose_and_the_trace_names_the_change(switched):
    result = switched.find("What blood pressure medication dose is my doctor giving me now?", user_id="maya",
                           reference_time=MAY)
    texts = [h.entry.l2_full for h in result]
    new = next(i for i, t in enumerate(texts) if "amlodipine" in t)
    old = next(i for i, t in enumerate(texts) if "lisinopril" in t)
    assert new < old
    step = next(s for s in result.trace.steps if s.name == "latest_first")
    pair = next(p for p in step.params["ranked_above"] if p["later"] == result.hits[new].entry.id)
    assert pair == {"later": result.hits[new].entry.id, "earlier": result.hits[old].entry.id, "why": "change:switched"}
    # the later question about the same medication states nothing: it is never lifted
    asked = next(h.entry.id for h in result if h.entry.l2_full.startswith("Should I take"))
    assert all(p["later"] != asked for p in step.params["ranked_above"])


def _cand(name, score, when, vector, said):
    entry = SimpleNamespace(id=name, content_hash=name, created_at=when, actor="Derek", l2_full=said)
    return SimpleNamespace(entry=entry, fused=score, boost=1.0, matched_by=[])


def _scored(cands):
    return [c.entry.id for c in sorted(cands, key=lambda c: -c.fused * c.boost)]


def _candidates(later_score, later_text):
    topic, other = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    cands = [
        _cand("old", 1.0, JAN, topic + 0.1 * other, "He started me on lisinopril, 10 milligrams."),
        _cand("elsewhere", 0.95, MAR, other, "The garden needs weeding this weekend."),
        _cand("later", later_score, MAY, topic, later_text),
        _cand("filler", 0.3, MAR, -topic, "Pottery class was fun."),
    ]
    return cands, {c.entry.content_hash: v for c, v in zip(cands, (topic + 0.1 * other, other, topic, -topic))}


@pytest.mark.parametrize(("later_score", "later_text", "lifted", "why"), [
    # relevant enough on its own: lifted, whatever it says
    (0.8, "Amlodipine 5 mg from today.", True, "same_topic"),
    # less relevant: lifted only because it announces a change
    (0.65, "They switched me to amlodipine, 5 mg.", True, "change:switched"),
    (0.65, "Amlodipine 5 mg from today.", False, None),
    # below the change floor too
    (0.5, "They switched me to amlodipine, 5 mg.", False, None),
    # a question states no value, however relevant
    (0.9, "Should I switch to amlodipine?", False, None),
])
def test_latest_first_lifts_a_later_statement_by_relevance_or_an_announced_change(later_score, later_text, lifted,
                                                                                   why):
    cands, vectors = _candidates(later_score, later_text)
    pairs = latest_first(_scored_cands(cands), vectors, relevance=0.7, same_topic=0.1, pool=30, change_relevance=0.6)
    assert (_scored(cands)[0] == "later") is lifted
    assert pairs == ([("later", "old", why)] if lifted else [])


@pytest.mark.parametrize(("later_text", "about_asker", "lifted"), [
    # a friend's value does not replace the asker's own
    ("Joanne says it's cheaper there. She spends $600 a month.", True, False),
    # unless it reports a change made to the asker's ("She increased it")
    ("She increased it to 20 mg.", True, True),
    # a question about someone else (the dog, a colleague) takes their statements as they are
    ("Joanne says it's cheaper there. She spends $600 a month.", False, True),
    ("She told me I'm on 20 mg now.", True, True),
])
def test_a_statement_about_someone_else_does_not_replace_the_askers_value(later_text, about_asker, lifted):
    cands, vectors = _candidates(0.8, later_text)
    latest_first(_scored_cands(cands), vectors, relevance=0.7, same_topic=0.1, pool=30, change_relevance=0.6,
                 about_asker=about_asker)
    assert (_scored(cands)[0] == "later") is lifted


def test_without_a_lower_floor_for_changes_the_switch_stays_below():
    cands, vectors = _candidates(0.65, "They switched me to amlodipine, 5 mg.")
    assert latest_first(_scored_cands(cands), vectors, relevance=0.7, same_topic=0.1, pool=30) == []
    assert _scored(cands)[0] == "old"


def _scored_cands(cands):
    return sorted(cands, key=lambda c: -c.fused * c.boost)


@pytest.mark.parametrize(("text", "word"), [
    ("I called. They switched me to amlodipine, 5 mg.", "switched"),
    ("(8:05 am on 22 October, 2024) Sofia: they offered Lakeside Hall instead, so we said yes.", "instead"),
    ("We moved to Denver last month.", "moved"),
    ("I don't drink coffee anymore.", "anymore"),
    ("My score went up to 725. What rate should I expect?", "went up"),
    ("Should I change my goal?", None),
    ("Nia is smiling now, and we got a new car seat.", None),
])
def test_announces_change(text, word):
    assert announces_change(text) == word


@pytest.mark.parametrize(("text", "other"), [
    ("Joanne says groceries are cheaper there. She spends $600 a month.", True),
    ("His doctor put him on losartan.", True),
    ("She increased my metformin, so I take 1000 mg now.", False),
    ("We moved last week.", False),
])
def test_about_someone_else(text, other):
    assert about_someone_else(text) is other


@pytest.mark.parametrize(("text", "asks"), [
    ("Any first project ideas?", True),
    ("What rate should I expect? My score went up to 725.", False),
    ("We moved last week.", False),
])
def test_only_asks(text, asks):
    assert only_asks(text) is asks
