"""record_outcome: what a session retrieved has its confidence moved by the Beta rule, reversibly,
with audit rows and history events; min_confidence filters; stats show it. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from agentbase_kernel import AgentBase, InvalidArgument, Kernel, PermissionDenied, Scope


@pytest.fixture(params=["sqlite", "postgres"])
def k(request, tmp_path, hash_embedder):
    location = tmp_path / "m.db" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    kernel = Kernel(location, embedder=hash_embedder, ner="regex")
    kernel.initialize()
    yield kernel
    kernel.close()


def _seed(k: Kernel) -> tuple[str, str]:
    tea = k.add_memory("Alice drinks green tea every morning", user_id="alice").entry.id
    deploy = k.add_memory("Deploys run on Fridays after lunch", user_id="alice").entry.id
    return tea, deploy


def test_a_failure_lowers_the_confidence_of_what_the_session_retrieved(k):
    tea = k.add_memory("Alice drinks green tea every morning", user_id="alice", session_id="s1").entry.id
    deploy = k.add_memory("Deploys run on Fridays after lunch", user_id="alice", session_id="s1").entry.id
    found = k.find("green tea", user_id="alice", session_id="s1", top_k=1)
    assert [h.id for h in found] == [tea]
    outcome = k.record_outcome("s1", "failure", user_id="alice")
    assert outcome.entry_ids == [tea] and outcome.value == 0.0 and len(outcome.trace_ids) == 1
    # Beta(4, 0) from confidence 1.0, one failure: 4 / 5
    assert k.get(tea).confidence == pytest.approx(0.8)
    assert k.get(deploy).confidence == 1.0
    event = k.history(tea)[-1]
    assert (event.event, event.old_value, event.new_value) == ("OUTCOME", "1", "0.8")
    assert [a.kind for a in k.audit(user_id="alice", kinds="outcome")] == ["outcome"]
    # the next outcome of the session only judges what was retrieved since
    assert k.record_outcome("s1", "success", user_id="alice").entry_ids == []


def test_a_find_over_the_users_memories_is_judged_by_its_trace_id(k):
    tea, deploy = _seed(k)
    result = k.find("Fridays deploys", user_id="alice", top_k=1)
    outcome = k.record_outcome("s7", "success", trace_ids=[result.trace.id], user_id="alice")
    assert outcome.entry_ids == [deploy] and outcome.trace_ids == [result.trace.id]
    with pytest.raises(InvalidArgument, match="No retrieval trace"):
        k.record_outcome("s7", "success", trace_ids=["nope"], user_id="alice")


def test_the_rule_is_bounded_and_reverting_restores_the_value(k):
    tea, _ = _seed(k)
    k.update(tea, confidence=0.5)
    values = []
    for _ in range(30):
        values.append(k.record_outcome("s1", "success", entry_ids=[tea]).effects[0]["confidence_after"])
    assert all(0.5 < v < 1.0 for v in values) and values == sorted(values)
    steps = [b - a for a, b in zip([0.5, *values], values)]
    assert max(steps) <= 1 / (4 + 1) + 1e-9
    last = k.record_outcome("s1", "failure", entry_ids=[tea])
    before = last.effects[0]["confidence_before"]
    reverted = k.revert_outcome(last.id, actor="dana")
    assert reverted.reverted_at is not None and k.get(tea).confidence == pytest.approx(before)
    with pytest.raises(InvalidArgument, match="already reverted"):
        k.revert_outcome(last.id)
    assert "reverted" in (k.history(tea)[-1].reason or "")


def test_a_confidence_set_by_hand_is_respected_by_the_next_outcome(k):
    tea, _ = _seed(k)
    k.record_outcome("s1", "failure", entry_ids=[tea])
    k.update(tea, confidence=0.3)
    after = k.record_outcome("s1", "success", entry_ids=[tea]).effects[0]
    assert after["confidence_before"] == pytest.approx(0.3) and 0.3 < after["confidence_after"] < 0.5


def test_min_confidence_filters_find_and_list(k):
    tea, deploy = _seed(k)
    k.record_outcome("s1", "failure", entry_ids=[tea])
    assert [e.id for e in k.list(user_id="alice", min_confidence=0.9)] == [deploy]
    assert tea not in [h.id for h in k.find("green tea", user_id="alice", min_confidence=0.9)]
    assert tea in [h.id for h in k.find("green tea", user_id="alice")]
    with pytest.raises(InvalidArgument):
        k.find("tea", user_id="alice", min_confidence=2)


def test_stats_show_outcomes_distribution_and_most_helped_and_harmed(k):
    tea, deploy = _seed(k)
    k.record_outcome("s1", "failure", entry_ids=[tea])
    k.record_outcome("s2", "success", entry_ids=[deploy])
    k.record_outcome("s2", "partial", entry_ids=[deploy])
    stats = k.stats()["outcomes"]
    assert stats["outcomes"] == 3 and stats["by_type"] == {"failure": 1, "success": 1, "partial": 1}
    assert sum(stats["confidence_buckets"]) == 2 and stats["confidence_buckets"][8] == 1
    assert [r["entry_id"] for r in stats["most_helped"]] == [deploy]
    assert [r["entry_id"] for r in stats["most_harmed"]] == [tea]
    assert k.outcome_stats(session_id="s2")["outcomes"] == 2
    assert [o.session_id for o in k.list_outcomes(user_id=None, session_id="s1")] == ["s1"]


@pytest.mark.parametrize("call, message", [
    (lambda k: k.record_outcome("", "success"), "session_id"),
    (lambda k: k.record_outcome("s1", "meh"), "no default value"),
    (lambda k: k.record_outcome("s1", "success", 1.5), "value"),
    (lambda k: k.record_outcome("s1", "success", weight=0), "weight"),
    (lambda k: k.record_outcome("s1", "success", entry_ids=["nope"]), "No entry"),
    (lambda k: k.record_outcome("s1", "success", entry_ids="abc"), "entry_ids"),
    (lambda k: k.revert_outcome("out_missing"), "No outcome"),
], ids=["no-session", "unknown-label", "value-range", "zero-weight", "missing-entry", "ids-str", "unknown-outcome"])
def test_bad_input_is_an_invalid_argument(k, call, message):
    with pytest.raises(InvalidArgument, match=message):
        call(k)


def test_an_agent_needs_write_access_to_move_confidence(k):
    tea, _ = _seed(k)
    k.grant("reader", user_id="alice", read=True, write=False)
    with pytest.raises(PermissionDenied):
        k.view(agent="reader").record_outcome("s1", "failure", entry_ids=[tea])
    assert k.get(tea).confidence == 1.0


def test_async_and_scope_handles(tmp_path, hash_embedder):
    async def run():
        async with AgentBase(tmp_path / "a.db", embedder=hash_embedder, ner="regex") as db:
            s = db.scope(user_id="bob", session_id="s9")
            r = await s.add_memory("Bob likes cycling to work")
            await s.find("cycling")
            outcome = await s.record_outcome("success", value=True)
            assert outcome.entry_ids == [r.entry.id] and outcome.scope == Scope(user_id="bob")
            assert (await db.outcomes.outcome_stats())["outcomes"] == 1
            assert (await s.outcome_stats())["outcomes"] == 1
            await db.revert_outcome(outcome.id)
            return (await db.get(r.entry.id)).confidence

    assert asyncio.run(run()) == 1.0
