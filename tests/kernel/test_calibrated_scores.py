"""Scores are calibrated probabilities: comparable across questions, and a threshold drops what is irrelevant.

docs/retrieval.md ("Calibrated scores", "Learned ranker") has the reliability tables on the dev sets.
"""

from dataclasses import replace

import numpy as np
import pytest

from agentbase_kernel.config import ExperimentalRetrieval
from agentbase_kernel.errors import InvalidArgument
from agentbase_kernel.retrieve.calibration import load_calibration
from agentbase_kernel.retrieve.features import FEATURES
from agentbase_kernel.retrieve.ranker import load_ranker

MEMORIES = [
    "I prefer window seats on long flights",
    "Alice is vegetarian and cooks a lot of lentils",
    "Alice is planning a trip to Japan in April to see Kyoto",
    "My sister works as a nurse in Leeds",
    "I started learning the cello last winter",
]


@pytest.fixture
def alice(real_db):
    kernel = real_db.sync
    kernel.add_memories([{"text": t, "user_id": "alice"} for t in MEMORIES])
    kernel.wait_embedded()
    return kernel


def test_calibrated_score_rises_with_every_relevance_signal():
    cal = load_calibration()
    base = {"top_cosine": 0.45, "top_bm25": 4.0, "unseen_share": 0.2, "lacked_share": 0.3}
    scorer = cal.question(**base)
    fused = [scorer(f, 0) for f in np.linspace(0.0, 1.0, 21)]
    assert all(b > a for a, b in zip(fused, fused[1:]))
    placed = [scorer(0.8, rank) for rank in range(20)]
    assert all(b <= a for a, b in zip(placed, placed[1:]))
    for signal, low, high, rises in (("top_cosine", 0.1, 0.8, True), ("top_bm25", 0.0, 12.0, True),
                                     ("unseen_share", 0.0, 1.0, False), ("lacked_share", 0.0, 1.0, False)):
        weak = cal.question(**(base | {signal: low}))(0.8, 0)
        strong = cal.question(**(base | {signal: high}))(0.8, 0)
        assert (strong >= weak) if rises else (strong <= weak), signal
        assert 0.0 <= min(weak, strong) <= max(weak, strong) <= 1.0


def test_ranker_score_never_falls_as_a_match_signal_rises():
    ranker = load_ranker()
    rng = np.random.default_rng(7)
    X = rng.uniform(0.0, 1.0, size=(200, len(FEATURES)))
    before = ranker.score(X)
    assert ((before >= 0) & (before <= 1)).all()
    for name, sign in (("bm25_norm", 1), ("cos_own", 1), ("cos_ctx", 1), ("coverage_idf", 1), ("vec_rank_log", -1),
                       ("fts_rank_log", -1)):
        moved = X.copy()
        moved[:, FEATURES.index(name)] += sign * 0.5
        assert (ranker.score(moved) >= before - 1e-12).all(), name


def test_an_unrelated_question_does_not_score_like_a_match(alice):
    cars = alice.find("cars", user_id="alice", reinforce=False)
    trip = alice.find("when is Alice going to Japan?", user_id="alice", reinforce=False)
    assert cars.hits and trip.hits  # the ranking still returns its best guesses
    assert cars.hits[0].score < 0.5  # not 1.0 for whatever ranks first
    assert "Japan" in trip.hits[0].entry.l2_full
    assert trip.hits[0].score > cars.hits[0].score
    scores = [h.score for h in trip.hits]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)


def test_min_score_drops_irrelevant_results(alice):
    cars = alice.find("cars", user_id="alice", reinforce=False)
    trip = alice.find("when is Alice going to Japan?", user_id="alice", reinforce=False)
    cut = (cars.hits[0].score + trip.hits[0].score) / 2
    assert alice.find("cars", user_id="alice", min_score=cut, reinforce=False).hits == []
    kept = alice.find("when is Alice going to Japan?", user_id="alice", min_score=cut, reinforce=False)
    assert kept.hits and "Japan" in kept.hits[0].entry.l2_full
    assert all(h.score >= cut for h in kept.hits)
    assert len(alice.find("cars", user_id="alice", min_score=0.0, reinforce=False)) == len(cars)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "0.3", True])
def test_min_score_outside_0_1_is_refused(kernel, bad):
    kernel.add_memory("tea with oat milk", user_id="u")
    with pytest.raises(InvalidArgument, match="min_score"):
        kernel.find("tea", user_id="u", min_score=bad)


async def test_async_find_takes_min_score(db):
    await db.add_memory("tea with oat milk", user_id="u")
    assert await db.find("tea", user_id="u", min_score=1.0) is not None
    found = await db.find("tea", user_id="u", min_score=0.0)
    assert [h.entry.l2_full for h in found] == ["tea with oat milk"]


def test_uncalibrated_scores_keep_the_old_scale(alice):
    cfg = replace(alice.config.retrieval, calibrated_scores=False)
    old = alice.find("cars", user_id="alice", config=cfg, reinforce=False)
    new = alice.find("cars", user_id="alice", reinforce=False)
    assert old.hits[0].score == pytest.approx(1.0, abs=0.05)
    assert [h.id for h in old.hits] == [h.id for h in new.hits]  # calibration never reorders


def test_the_learned_ranker_is_deterministic_and_scores_in_0_1(alice):
    cfg = replace(alice.config.retrieval, experimental=ExperimentalRetrieval(ranker=True))
    first = alice.find("when is Alice going to Japan?", user_id="alice", config=cfg, reinforce=False)
    again = alice.find("when is Alice going to Japan?", user_id="alice", config=cfg, reinforce=False)
    assert [(h.id, h.score) for h in first.hits] == [(h.id, h.score) for h in again.hits]
    assert "Japan" in first.hits[0].entry.l2_full
    assert all("ranker" in h.matched_by and 0.0 <= h.score <= 1.0 for h in first.hits)
    assert [h.score for h in first.hits] == sorted((h.score for h in first.hits), reverse=True)
    assert "learned_rank" in [s.name for s in first.trace.steps]
    cars = alice.find("cars", user_id="alice", config=cfg, reinforce=False)
    assert cars.hits[0].score < first.hits[0].score
