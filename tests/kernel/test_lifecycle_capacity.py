"""Capacity and archival: over the cap the lowest-scoring entries are archived -
out of find/list/count, kept in history and the audit log, restorable, never deleted - also with
writers in several threads and processes on one file."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import UTC, datetime, timedelta

import pytest

from agentbase_kernel import AgentBase, Kernel
from agentbase_kernel.config import Config
from agentbase_kernel.errors import EntryNotFound, InvalidArgument, ScopeError


def _capped(path, embedder, cap=3, **lifecycle):
    return Kernel(path, embedder=embedder, ner="regex",
                  config=Config().with_(lifecycle={"max_items_per_scope": cap, **lifecycle}))


def test_over_capacity_the_lowest_scoring_are_archived_not_deleted(db_path, hash_embedder):
    old = datetime.now(UTC) - timedelta(days=120)
    with _capped(db_path, hash_embedder) as k:
        keep = k.add_memory("my blood type is O negative", user_id="u", importance=1.0, created_at=old).entry
        k.add_memory("other user's note", user_id="v")
        notes = [k.add_memory(f"note number {i}", user_id="u", importance=0.3, created_at=old + timedelta(days=i))
                 for i in range(4)]
        live = k.list(user_id="u")
        assert len(live) == k.count(user_id="u") == 3
        # the important old one stays; of the equal notes the oldest go first
        assert [e.id for e in live] == [keep.id, notes[2].id, notes[3].id]
        archived = k.list(user_id="u", archived=True)
        assert [e.id for e in archived] == [notes[0].id, notes[1].id]
        assert all(e.archived_at is not None for e in archived)
        assert k.count(user_id="u", archived=None) == 5
        assert k.stats()["entries"] == 6  # nothing deleted
        found = {h.id for h in k.find("note number 0", user_id="u", top_k=20)}
        assert notes[2].id in found and not found & {notes[0].id, notes[1].id}
        gone = k.get(notes[0].id)  # still readable by id
        assert gone.archived_at is not None and gone.l2_full == "note number 0"
        assert [h.event for h in k.history(notes[0].id)] == ["ADD", "ARCHIVE"]
        assert k.history(notes[0].id)[-1].new_value == "capacity"
        audit = k.audit(user_id="u", kinds="archive")
        assert sorted(i for e in audit for i in e.entry_ids) == sorted([notes[0].id, notes[1].id])
        assert all(e.detail == {"reason": "capacity"} for e in audit)
        assert k.capacity(user_id="u") == {"max_items": 3, "live": 3}
        assert k.capacity(user_id="v") == {"max_items": 3, "live": 1}


def test_restore_brings_it_back_and_keeps_the_cap(db_path, hash_embedder):
    with _capped(db_path, hash_embedder, cap=2) as k:
        a = k.add_memory("alpha memory", user_id="u", importance=0.2).entry
        b = k.add_memory("beta memory", user_id="u", importance=0.9).entry
        c = k.add_memory("gamma memory", user_id="u", importance=0.8).entry
        assert k.get(a.id).archived_at is not None
        restored = k.restore(a.id, user_id="u", actor="ops")
        assert restored.archived_at is None
        assert a.id in {h.id for h in k.find("alpha", user_id="u")}
        # the scope stays at its cap: the lowest other entry went instead
        assert {e.id for e in k.list(user_id="u")} == {a.id, b.id}
        assert k.get(c.id).archived_at is not None
        assert [e.kind for e in k.audit(user_id="u", kinds=["archive", "restore"])][:2] == ["archive", "restore"]
        assert k.audit(user_id="u", kinds="restore")[0].actor == "ops"
        assert [h.event for h in k.history(a.id)] == ["ADD", "ARCHIVE", "RESTORE"]
        with pytest.raises(EntryNotFound):
            k.restore(a.id, user_id="someone-else")


def test_writing_an_archived_text_again_restores_it(db_path, hash_embedder):
    with _capped(db_path, hash_embedder, cap=1) as k:
        first = k.add_memory("I drink oat milk", user_id="u", importance=0.1).entry
        k.add_memory("I drink black coffee", user_id="u", importance=0.9)
        assert k.get(first.id).archived_at is not None
        again = k.add_memory("I drink oat milk", user_id="u", importance=0.1)
        assert again.event == "NOOP" and again.id == first.id
        # said again: back in search, and the cap holds by archiving the other one
        assert [e.id for e in k.list(user_id="u")] == [first.id]


def test_per_scope_capacity_overrides_the_default(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:  # no default cap
        ids = [k.add_memory(f"item {i}", user_id="u", importance=i / 10).id for i in range(5)]
        k.add_memory("item in another scope", user_id="u", session_id="s1")
        assert k.capacity(user_id="u") == {"max_items": 0, "live": 5}
        archived = k.set_capacity(2, user_id="u")
        assert sorted(archived) == sorted(ids[:3])  # the least important
        assert k.count(user_id="u", session_id="s1") == 1  # another exact scope is not counted
        k.add_memory("item 5", user_id="u", importance=0.9)
        assert k.capacity(user_id="u")["live"] == 2
        assert k.set_capacity(None, user_id="u") == []
        assert k.capacity(user_id="u")["max_items"] == 0
        with pytest.raises(ScopeError):
            k.set_capacity(3)
        with pytest.raises(InvalidArgument):
            k.set_capacity(-1, user_id="u")


def test_session_turns_are_capped_per_session_scope(db_path, hash_embedder):
    with _capped(db_path, hash_embedder, cap=3) as k:
        k.add_messages("s1", [{"role": "user", "content": f"turn {i} about hiking"} for i in range(6)], user_id="u")
        assert k.capacity(user_id="u", session_id="s1")["live"] == 3
        assert k.count(user_id="u", session_id="s1", archived=True) == 3
        assert k.count_messages("s1") == 6  # messages stay: only their memories are archived


def test_manual_archive_and_list_filters(kernel):
    e = kernel.add_memory("temporary thought", user_id="u").entry
    kernel.archive(e.id, user_id="u", actor="me")
    kernel.archive(e.id)  # again: nothing changes
    assert kernel.list(user_id="u") == []
    assert [x.id for x in kernel.list(user_id="u", archived=True)] == [e.id]
    assert [x.id for x in kernel.list(user_id="u", archived=None)] == [e.id]
    assert [h.event for h in kernel.history(e.id)] == ["ADD", "ARCHIVE"]
    with pytest.raises(InvalidArgument):
        kernel.list(user_id="u", archived="yes")
    assert kernel.delete_all(user_id="u") == 1  # delete_all also removes archived entries


def test_concurrent_threads_never_leave_the_scope_over_its_cap(db_path, hash_embedder):
    cap, n_threads, per_thread = 5, 4, 8
    with _capped(db_path, hash_embedder, cap=cap) as k:
        errors: list[BaseException] = []

        def writer(t: int) -> None:
            try:
                for i in range(per_thread):
                    k.add_memory(f"thread {t} write {i}", user_id="u", dedup=False)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(t,)) for t in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert k.capacity(user_id="u")["live"] == cap
        assert k.count(user_id="u", archived=None) == n_threads * per_thread  # nothing lost
        archived = k.list(user_id="u", archived=True, limit=None)
        assert len(archived) == n_threads * per_thread - cap
        assert {h.event for e in archived for h in k.history(e.id)} == {"ADD", "ARCHIVE"}


def _process_writes(path: str, worker: int, n: int) -> None:
    from tests.conftest import HashEmbedder

    with _capped(path, HashEmbedder(), cap=4) as k:
        for i in range(n):
            k.add_memory(f"process {worker} write {i}", user_id="u")


def test_concurrent_processes_never_leave_the_scope_over_its_cap(db_path, hash_embedder):
    with _capped(db_path, hash_embedder, cap=4) as k:
        k.initialize()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writes, args=(str(db_path), w, 10)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    with _capped(db_path, hash_embedder, cap=4) as k:
        assert k.capacity(user_id="u")["live"] == 4
        assert k.count(user_id="u", archived=None) == 30
        assert k.stats()["entries"] == 30
        assert len(k.audit(user_id="u", kinds="archive", limit=None)) == 26


async def test_async_twins(db_path, hash_embedder):
    async with AgentBase(db_path, embedder=hash_embedder, ner="regex") as db:
        a = await db.add_memory("first", user_id="u", importance=0.1)
        await db.add_memory("second", user_id="u", importance=0.9)
        assert await db.set_capacity(1, user_id="u") == [a.id]
        assert (await db.capacity(user_id="u")) == {"max_items": 1, "live": 1}
        assert (await db.restore(a.id)).archived_at is None
        assert (await db.archive(a.id)).archived_at is not None


def test_accessed_entries_are_kept_over_unused_ones(db_path, hash_embedder):
    when = datetime.now(UTC) - timedelta(days=10)
    with _capped(db_path, hash_embedder, cap=2) as k:
        used = k.add_memory("the wifi password is on the fridge", user_id="u", importance=0.5, created_at=when).entry
        unused = k.add_memory("the plumber came on Tuesday", user_id="u", importance=0.5, created_at=when).entry
        for _ in range(3):
            k.find("wifi password", user_id="u", top_k=1)
        k.flush_lifecycle()
        k.add_memory("the bins go out on Monday", user_id="u", importance=0.5, created_at=when)
        assert k.get(unused.id).archived_at is not None  # same importance and age: the unused one goes
        assert k.get(used.id).archived_at is None
