"""Conflicts: contradicting facts the rules cannot order are kept and flagged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentbase_kernel import InvalidArgument

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def _fact(result):
    (fact,) = result.facts
    return fact.entry


def test_a_later_equally_trusted_fact_still_supersedes(kernel):
    old = _fact(kernel.add_memory("I live in Paris", user_id="u", infer=True, created_at=T0))
    new = kernel.add_memory("I live in Berlin", user_id="u", infer=True, created_at=T0 + timedelta(days=1))
    assert new.superseded == [old.id] and new.conflicts == []
    assert kernel.conflicts(user_id="u") == []


@pytest.mark.parametrize("case", ["same_time", "lower_trust", "different_writers"])
def test_unorderable_facts_are_both_kept_and_flagged(kernel, case):
    first = {"created_at": T0}
    second = {"created_at": T0 if case == "same_time" else T0 + timedelta(days=1)}
    writer_a = kernel.view(agent="bot-a") if case == "different_writers" else kernel
    writer_b = kernel.view(agent="bot-b") if case == "different_writers" else kernel
    if case == "lower_trust":
        second["trust"] = 0.4
    a = _fact(writer_a.add_memory("I live in Paris", user_id="u", infer=True, **first))
    result = writer_b.add_memory("I live in Berlin", user_id="u", infer=True, **second)
    b = _fact(result)
    assert result.superseded == [] and len(result.conflicts) == 1
    (conflict,) = kernel.conflicts(user_id="u")
    assert (conflict.id, conflict.reason, conflict.status) == (result.conflicts[0], case, "open")
    assert conflict.entry_ids == [a.id, b.id] and conflict.texts == ["User lives in Paris", "User lives in Berlin"]
    assert conflict.subject_key and conflict.scope.user_id == "u"
    live = {e.id for e in kernel.list(user_id="u")}
    assert {a.id, b.id} <= live  # both current
    assert kernel.get(a.id).conflicts == [conflict.id] and kernel.get(b.id).conflicts == [conflict.id]
    hits = kernel.find("where does the user live", user_id="u")
    flagged = {h.id for h in hits if h.entry.conflicts}
    assert flagged == {a.id, b.id}
    assert set(hits.trace.conflicts) == {a.id, b.id}
    assert kernel.conflicts(user_id="other") == []


def test_resolve_supersedes_the_other_side_and_history_says_why(kernel):
    a = _fact(kernel.add_memory("I live in Paris", user_id="u", infer=True, created_at=T0))
    result = kernel.add_memory("I live in Berlin", user_id="u", infer=True, created_at=T0)
    b = _fact(result)
    (cid,) = result.conflicts
    with pytest.raises(InvalidArgument, match="keep must be one of"):
        kernel.resolve(cid, keep=kernel.add_memory("unrelated", user_id="u").id)
    with pytest.raises(InvalidArgument, match="No conflict"):
        kernel.resolve(cid, keep=a.id, user_id="someone-else")
    settled = kernel.resolve(cid, keep=a.id, actor="alice")
    assert (settled.status, settled.kept, settled.actor) == ("resolved", a.id, "alice")
    loser = kernel.get(b.id)
    assert loser.invalid_at is not None and loser.superseded_by == a.id and loser.conflicts == []
    assert kernel.get(a.id).invalid_at is None and kernel.get(a.id).conflicts == []
    assert kernel.conflicts(user_id="u") == []
    assert [c.status for c in kernel.conflicts(user_id="u", include_closed=True)] == ["resolved"]
    events = kernel.history(b.id)
    assert [e.event for e in events] == ["ADD", "CONFLICT", "RESOLVE"]
    resolve = events[-1]
    assert (resolve.old_value, resolve.new_value, resolve.actor) == ("User lives in Berlin", "User lives in Paris",
                                                                      "alice")
    assert cid in resolve.reason and "same_time" in resolve.reason
    audit = kernel.audit(user_id="u", kinds="resolve")[0]
    assert audit.actor == "alice" and set(audit.entry_ids) == {a.id, b.id} and audit.detail["kept"] == a.id
    with pytest.raises(InvalidArgument, match="already resolved"):
        kernel.resolve(cid, keep=a.id)


def test_a_later_fact_settles_an_open_conflict_by_superseding_both(kernel):
    kernel.add_memory("I live in Paris", user_id="u", infer=True, created_at=T0)
    clash = kernel.add_memory("I live in Berlin", user_id="u", infer=True, created_at=T0)
    later = kernel.add_memory("I live in Tokyo", user_id="u", infer=True, created_at=T0 + timedelta(days=2))
    assert len(later.superseded) == 2
    assert kernel.conflicts(user_id="u") == []
    (closed,) = kernel.conflicts(user_id="u", include_closed=True)
    assert closed.id == clash.conflicts[0] and closed.status == "superseded"


def test_deleting_a_side_drops_the_conflict(kernel):
    kernel.add_memory("I live in Paris", user_id="u", infer=True, created_at=T0)
    clash = kernel.add_memory("I live in Berlin", user_id="u", infer=True, created_at=T0)
    kernel.delete(_fact(clash).id)
    assert kernel.conflicts(user_id="u", include_closed=True) == []


def test_async_resolve(db):
    import asyncio

    async def main():
        await db.add_memory("I live in Paris", user_id="u", infer=True, created_at=T0)
        clash = await db.add_memory("I live in Rome", user_id="u", infer=True, created_at=T0)
        (conflict,) = await db.conflicts(user_id="u")
        done = await db.resolve(conflict.id, keep=clash.facts[0].id, user_id="u")
        assert done.status == "resolved"

    asyncio.run(main())


def test_within_one_session_turn_order_decides_even_at_the_same_time(kernel):
    kernel.add_messages("s", [{"role": "user", "content": "I live in Paris.", "created_at": T0},
                              {"role": "user", "content": "Actually I moved: I live in Chicago now.",
                               "created_at": T0}], user_id="u")
    assert kernel.conflicts(user_id="u") == []
    live = [e.text for e in kernel.list(user_id="u", metadata={"derived": "fact"})]
    assert live == ["User lives in Chicago"]
