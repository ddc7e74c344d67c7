"""Audit log: writes, updates, deletes (and optional reads), same transaction, bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentbase_kernel import Kernel
from agentbase_kernel.config import Config
from agentbase_kernel.errors import DuplicateEntry, InvalidArgument


def _kernel(path, embedder, **lifecycle):
    return Kernel(path, embedder=embedder, ner="regex", config=Config().with_(lifecycle=lifecycle))


def test_write_update_delete_are_audited_with_actor_scope_and_ids(kernel):
    start = datetime.now(UTC) - timedelta(seconds=1)
    a = kernel.add_memory("I like green tea", user_id="alice", agent_id="bot", actor="alice")
    kernel.add_memory("Bob's note", user_id="bob")
    kernel.update(a.id, text="I like black tea", actor="support-agent")
    kernel.delete(a.id, actor="cleaner")
    events = kernel.audit(user_id="alice")
    assert [e.kind for e in events] == ["delete", "update", "write"]  # newest first
    assert all(e.entry_ids == [a.id] for e in events)
    assert [e.actor for e in events] == ["cleaner", "support-agent", "alice"]
    assert all(e.scope.user_id == "alice" and e.scope.agent_id == "bot" for e in events)
    assert all(e.at >= start for e in events)
    assert [e.kind for e in kernel.audit(user_id="bob")] == ["write"]
    assert kernel.audit(user_id="alice", kinds=["write"])[0].entry_ids == [a.id]
    assert kernel.audit(user_id="alice", kinds="delete")[0].actor == "cleaner"
    assert kernel.audit(user_id="alice", since=datetime.now(UTC) + timedelta(hours=1)) == []
    assert len(kernel.audit(user_id="alice", limit=1)) == 1
    assert len(kernel.audit()) == 4  # no scope: the whole file


def test_rolled_back_write_leaves_no_audit_row(kernel):
    with pytest.raises(RuntimeError), kernel.transaction():
        kernel.add_memory("this will roll back", user_id="u")
        raise RuntimeError("boom")
    assert kernel.audit(user_id="u") == []
    kernel.add_memory("first", user_id="u")
    second = kernel.add_memory("second", user_id="u")
    with pytest.raises(DuplicateEntry):
        kernel.update(second.id, text="first", user_id="u")  # clashes with the other entry: nothing kept
    assert [e.kind for e in kernel.audit(user_id="u")] == ["write", "write"]


def test_supersession_is_audited(kernel):
    first = kernel.add_memory("I live in Paris", user_id="u", infer=True)
    fact_id = first.facts[0].id
    second = kernel.add_memory("I moved to Berlin", user_id="u", infer=True)
    assert second.superseded == [fact_id]
    supersede = kernel.audit(user_id="u", kinds=["supersede"])
    assert [e.entry_ids for e in supersede] == [[fact_id]]
    written = {i for e in kernel.audit(user_id="u", kinds=["write"]) for i in e.entry_ids}
    assert {first.id, fact_id, second.id, *(f.id for f in second.facts)} <= written


def test_log_is_pruned_to_its_size(db_path, hash_embedder):
    with _kernel(db_path, hash_embedder, audit_max_rows=5) as k:
        ids = [k.add_memory(f"memory number {i}", user_id="u").id for i in range(12)]
        events = k.audit(user_id="u", limit=None)
        assert len(events) == 5
        assert [e.entry_ids[0] for e in events] == ids[::-1][:5]  # the newest stay
    with _kernel(db_path, hash_embedder, audit_max_rows=2) as k:  # a smaller size prunes on open
        assert len(k.audit(limit=None)) == 2


def test_a_bulk_write_longer_than_the_log_keeps_its_newest_rows(db_path, hash_embedder):
    """PostgreSQL prunes once per transaction, at its commit (migration m008): the result is the same."""
    with _kernel(db_path, hash_embedder, audit_max_rows=7) as k:
        results = k.add_memories([{"text": f"bulk memory {i}", "user_id": "u"} for i in range(30)])
        events = k.audit(user_id="u", limit=None)
        assert [e.entry_ids[0] for e in events] == [r.entry.id for r in results][::-1][:7]
        k.add_memory("one more", user_id="u")
        assert len(k.audit(user_id="u", limit=None)) == 7


def test_audit_off_records_nothing(db_path, hash_embedder):
    with _kernel(db_path, hash_embedder, audit=False) as k:
        k.add_memory("quiet", user_id="u")
        assert k.audit(user_id="u") == []


def test_reads_are_audited_when_asked(db_path, hash_embedder):
    with _kernel(db_path, hash_embedder, audit_reads=True) as k:
        e = k.add_memory("I like green tea", user_id="u")
        k.find("green tea", user_id="u", reinforce=False)  # audit of reads does not need reinforcement
        k.flush_lifecycle()
        reads = k.audit(user_id="u", kinds=["read"])
        assert len(reads) == 1 and reads[0].entry_ids == [e.id] and reads[0].detail["query"] == "green tea"
        assert k.get(e.id).access_count == 0
    with _kernel(db_path, hash_embedder) as k:  # default: reads are not logged
        k.find("green tea", user_id="u")
        k.flush_lifecycle()
        assert len(k.audit(user_id="u", kinds=["read"])) == 1


def test_bad_arguments(kernel):
    with pytest.raises(InvalidArgument):
        kernel.audit(kinds=["erase"])
    with pytest.raises(InvalidArgument):
        kernel.audit(limit=-1)
    with pytest.raises(InvalidArgument):
        kernel.audit(since="not a date")
    with pytest.raises(InvalidArgument):
        Config().with_(lifecycle={"audit_max_rows": 0})


async def test_async_twin(db):
    r = await db.add_memory("hello", user_id="u")
    assert [e.entry_ids for e in await db.audit(user_id="u")] == [[r.id]]
