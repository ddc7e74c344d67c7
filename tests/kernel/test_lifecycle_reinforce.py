"""Reinforcement: find bumps access_count / last_accessed_at, batched off the read path."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import UTC, datetime

import pytest

from agentbase_kernel import Kernel
from agentbase_kernel.config import Config
from agentbase_kernel.errors import InvalidArgument

TEXTS = ["I like green tea in the morning", "My dog Rex loves the park", "We moved to Lisbon in May",
         "Green tea tastes better with lemon", "Rex chased a cat yesterday"]


def _fill(kernel) -> dict[str, str]:
    return {t: kernel.add_memory(t, user_id="u").id for t in TEXTS}


def test_find_bumps_count_and_time_visible_through_get(kernel):
    ids = _fill(kernel)
    before = datetime.now(UTC)
    hits = kernel.find("green tea", user_id="u", top_k=2)
    returned = [h.entry.id for h in hits]
    assert returned
    kernel.flush_lifecycle()
    for eid in ids.values():
        entry = kernel.get(eid)
        if eid in returned:
            assert entry.access_count == 1
            assert entry.last_accessed_at is not None and entry.last_accessed_at >= before.replace(microsecond=0)
        else:
            assert entry.access_count == 0 and entry.last_accessed_at is None
    kernel.find("green tea", user_id="u", top_k=2)
    kernel.find("green tea", user_id="u", top_k=2)
    kernel.flush_lifecycle()
    assert [kernel.get(i).access_count for i in returned] == [3] * len(returned)
    listed = {e.id: e.access_count for e in kernel.list(user_id="u")}
    assert all(listed[i] == 3 for i in returned)


def test_nothing_written_before_flush_and_close_flushes(db_path, hash_embedder):
    cfg = Config().with_(lifecycle={"reinforce_flush_seconds": 3600})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        ids = _fill(k)
        hit = k.find("Rex dog park", user_id="u", top_k=1)[0].entry.id
        with Kernel(db_path, embedder=hash_embedder, ner="regex") as other:
            assert other.get(hit).access_count == 0  # queued, not yet written
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        assert k.get(hit).access_count == 1
        assert sum(k.get(i).access_count for i in ids.values()) == 1


def test_background_thread_flushes_without_a_call(db_path, hash_embedder):
    cfg = Config().with_(lifecycle={"reinforce_flush_seconds": 0.05})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        _fill(k)
        hit = k.find("Lisbon", user_id="u", top_k=1)[0].entry.id
        deadline = threading.Event()
        for _ in range(200):
            if k.get(hit).access_count == 1:
                break
            deadline.wait(0.05)
        assert k.get(hit).access_count == 1


def test_opt_out_per_call_and_in_config(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        _fill(k)
        hit = k.find("Lisbon", user_id="u", top_k=1, reinforce=False)[0].entry.id
        k.flush_lifecycle()
        assert k.get(hit).access_count == 0
        with pytest.raises(InvalidArgument):
            k.find("Lisbon", user_id="u", reinforce="yes")
    cfg = Config().with_(lifecycle={"reinforce": False})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        k.find("Lisbon", user_id="u", top_k=1)
        k.flush_lifecycle()
        assert k.get(hit).access_count == 0
        k.find("Lisbon", user_id="u", top_k=1, reinforce=True)  # per call wins over config
        k.flush_lifecycle()
        assert k.get(hit).access_count == 1


def test_deleted_entry_bump_is_dropped(kernel):
    ids = _fill(kernel)
    hit = kernel.find("Lisbon", user_id="u", top_k=1)[0].entry.id
    kernel.delete(hit)
    assert kernel.flush_lifecycle() == 1  # no foreign-key error, the row is simply skipped
    kernel.add_memory("We moved to Lisbon in May", user_id="u", entry_id=hit)
    assert kernel.get(hit).access_count == 0
    assert len(ids) == len(TEXTS)


def test_threads_finding_and_writing_count_right(db_path, hash_embedder):
    cfg = Config().with_(lifecycle={"reinforce_flush_seconds": 0.01})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        ids = _fill(k)
        target = ids["We moved to Lisbon in May"]
        errors: list[BaseException] = []
        n_threads, n_finds = 4, 25
        returned = [0] * n_threads

        def reader(i: int) -> None:
            try:
                for _ in range(n_finds):
                    returned[i] += any(h.entry.id == target for h in k.find("Lisbon May", user_id="u", top_k=3))
            except BaseException as exc:
                errors.append(exc)

        def writer() -> None:
            try:
                for j in range(40):
                    k.add_memory(f"note number {j} about nothing", user_id="u")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(n_threads)]
        threads += [threading.Thread(target=writer) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        k.flush_lifecycle()
        assert k.get(target).access_count == sum(returned) == n_threads * n_finds


def _process_finds(path: str, n: int) -> None:
    from tests.conftest import HashEmbedder

    with Kernel(path, embedder=HashEmbedder(), ner="regex",
                config=Config().with_(lifecycle={"reinforce_flush_seconds": 0.01})) as k:
        for j in range(n):
            k.find("Lisbon May", user_id="u", top_k=1)
            if j % 5 == 0:
                k.add_memory(f"process note {j} {multiprocessing.current_process().pid}", user_id="u")


def test_processes_finding_and_writing_count_right(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        target = _fill(k)["We moved to Lisbon in May"]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_finds, args=(str(db_path), 20)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]  # a 'database is locked' would have failed a child
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        assert k.get(target).access_count == 60


async def test_async_twin(db):
    result = await db.add_memory("I like green tea", user_id="u")
    await db.find("green tea", user_id="u")
    assert await db.flush_lifecycle() == 1
    assert (await db.get(result.id)).access_count == 1


def test_find_then_get_reads_its_own_queued_reinforcement(db_path, hash_embedder):
    """Read-your-writes: the searching process sees its bumps before the flush, counted once after it."""
    cfg = Config().with_(lifecycle={"reinforce_flush_seconds": 3600})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        ids = _fill(k)
        before = datetime.now(UTC).replace(microsecond=0)
        hit = k.find("Rex dog park", user_id="u", top_k=1)[0].entry.id
        entry = k.get(hit)
        assert entry.access_count == 1
        assert entry.last_accessed_at is not None and entry.last_accessed_at >= before
        assert {e.id: e.access_count for e in k.list(user_id="u")}[hit] == 1
        assert k.view(agent="helper").get(hit).access_count == 1  # a view shares the queue
        k.flush_lifecycle()
        k.find("Rex dog park", user_id="u", top_k=1)
        assert k.get(hit).access_count == 2  # one written, one queued: neither counted twice
        assert sum(k.get(i).access_count for i in ids.values()) == 2
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        assert k.get(hit).access_count == 2


async def test_async_find_then_get_reads_its_own_reinforcement(db_path, hash_embedder):
    from agentbase_kernel import AgentBase

    async with AgentBase(db_path, embedder=hash_embedder, ner="regex") as db:
        entry_id = (await db.add_memory("Rex chased a cat yesterday", user_id="u")).id
        await db.find("Rex cat", user_id="u")
        assert (await db.get(entry_id, user_id="u")).access_count == 1


def test_a_count_read_during_a_flush_is_counted_once(db_path, hash_embedder):
    cfg = Config().with_(lifecycle={"reinforce_flush_seconds": 3600})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        entry_id = k.add_memory("We moved to Lisbon in May", user_id="u").id
        stop = threading.Event()
        seen: list[int] = []

        def read() -> None:
            while not stop.is_set():
                seen.append(k.get(entry_id).access_count)

        reader = threading.Thread(target=read)
        reader.start()
        for _ in range(30):
            k.find("Lisbon", user_id="u", top_k=1)
            k.flush_lifecycle()
        stop.set()
        reader.join()
        assert seen == sorted(seen) and max(seen) <= 30  # never counted twice, never going back
        assert k.get(entry_id).access_count == 30
