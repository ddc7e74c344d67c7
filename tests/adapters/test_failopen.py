"""The shared fail-open machinery of the harness adapters (agentbase_adapters/_failopen.py).

The breaker's clock is stepped by hand; the store is a real kernel on a real file (closed to make it
fail) or a callable that blocks on an event (a store that hangs) - never a sleep-and-hope timing.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentbase_adapters._failopen import CircuitBreaker, FailOpen, Prefetcher, StoreUnavailable
from agentbase_kernel import AgentBase, ClosedError, InvalidArgument


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _broken() -> None:
    raise ClosedError("Cannot use the database, as it has been closed.")


def test_breaker_opens_after_threshold_failures_and_refuses():
    clock = Clock()
    breaker = CircuitBreaker(threshold=3, cooldown=10, clock=clock)
    for _ in range(2):
        assert breaker.allow()
        breaker.failure()
    assert breaker.state == "closed"
    assert breaker.allow()
    breaker.failure()
    assert breaker.state == "open"
    assert not breaker.allow() and not breaker.allow()
    assert breaker.stats.refused == 2 and breaker.stats.trips == 1


def test_breaker_half_open_lets_exactly_one_trial_through():
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=10, clock=clock)
    breaker.failure()
    clock.now += 9.9
    assert not breaker.allow()
    clock.now += 0.1
    assert breaker.state == "half_open"
    assert breaker.allow()          # the trial
    assert not breaker.allow()      # nobody else while it runs
    breaker.failure()               # the trial failed: open again, for a new cooldown
    assert breaker.state == "open" and breaker.stats.trips == 2
    clock.now += 10
    assert breaker.allow()
    breaker.success()
    assert breaker.state == "closed" and breaker.allow()
    assert breaker.stats.trials == 2 and breaker.stats.sent_while_open == 2


def test_success_resets_the_failure_count():
    breaker = CircuitBreaker(threshold=2, cooldown=10, clock=Clock())
    breaker.failure()
    breaker.success()
    breaker.failure()
    assert breaker.state == "closed"


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({"threshold": 0}, "threshold must be a positive int, not 0", id="zero-threshold"),
    pytest.param({"threshold": True}, "threshold must be a positive int, not True", id="bool-threshold"),
    pytest.param({"cooldown": -1}, "cooldown must be a number of seconds >= 0, not -1", id="negative-cooldown"),
])
def test_breaker_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError) as excinfo:
        CircuitBreaker(**kwargs)
    assert str(excinfo.value) == message


def test_a_closed_kernel_is_a_store_failure_that_trips_the_breaker(db):
    clock = Clock()
    guard = FailOpen(threshold=2, cooldown=30, clock=clock)
    assert guard.call(db.sync.count, user_id="alice") == 0
    db.sync.close()
    for _ in range(2):
        with pytest.raises(StoreUnavailable) as excinfo:
            guard.call(db.sync.count, user_id="alice")
        assert excinfo.value.reason == "failed"
        assert isinstance(excinfo.value.__cause__, ClosedError)
    with pytest.raises(StoreUnavailable) as excinfo:
        guard.call(db.sync.count, user_id="alice")
    assert excinfo.value.reason == "open"
    assert guard.stats.sent == 3 and guard.stats.refused == 1 and guard.stats.failed == 2


def test_caller_errors_propagate_and_never_trip_the_breaker(db):
    guard = FailOpen(threshold=1, cooldown=30, clock=Clock())
    for _ in range(3):
        with pytest.raises(InvalidArgument):
            guard.call(db.sync.add_memory, "   ", user_id="alice")
    assert guard.breaker.state == "closed"
    assert guard.call(db.sync.count, user_id="alice") == 0


def test_quietly_returns_the_fallback_for_every_error(db):
    guard = FailOpen(threshold=5, cooldown=30, clock=Clock())
    assert guard.quietly(db.sync.add_memory, "", user_id="alice", fallback="none") == "none"
    assert guard.quietly(_broken, fallback=[]) == []
    assert guard.stats.swallowed == 2


def test_a_hung_store_is_waited_for_at_most_the_timeout():
    release = threading.Event()
    guard = FailOpen(threshold=1, cooldown=30, clock=Clock())
    with pytest.raises(StoreUnavailable) as excinfo:
        guard.call(release.wait, 10, timeout=0.05)
    assert excinfo.value.reason == "timeout"
    assert guard.breaker.state == "open" and guard.stats.timed_out == 1
    release.set()
    assert guard.quietly(len, "abc", fallback=-1) == -1      # still paused: not sent
    assert guard.stats.refused == 1


async def test_acall_keeps_the_loop_free_while_the_store_hangs():
    release = threading.Event()
    guard = FailOpen(threshold=5, cooldown=30, clock=Clock())
    ticks = 0

    async def tick():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    ticker = asyncio.create_task(tick())
    assert await guard.aquietly(release.wait, 10, timeout=0.1, fallback="skipped") == "skipped"
    ticker.cancel()
    release.set()
    assert ticks >= 3
    assert await guard.acall(len, "abcd", timeout=5) == 4


def test_writes_run_in_order_and_flush_waits_for_them(db):
    guard = FailOpen(clock=Clock())
    for i in range(5):
        guard.write(db.sync.add_memory, f"turn number {i} about sailing", user_id="alice")
    assert guard.flush(timeout=30)
    texts = [e.l2_full for e in db.sync.list(user_id="alice")]
    assert texts == [f"turn number {i} about sailing" for i in range(5)]
    assert guard.stats.writes_done == 5 and guard.pending_writes() == 0
    guard.close()


def test_writes_wait_out_an_outage_and_land_after_the_trial(tmp_path, hash_embedder):
    clock = Clock()
    path = tmp_path / "store.db"
    guard = FailOpen(threshold=2, cooldown=30, clock=clock)
    down = AgentBase(path, embedder=hash_embedder, ner="regex")
    down.sync.initialize()
    down.sync.close()                     # the store is down
    up = AgentBase(path, embedder=hash_embedder, ner="regex")
    target = {"db": down}

    def add(text: str) -> None:
        target["db"].sync.add_memory(text, user_id="alice")

    guard.write(add, "written during the outage")
    assert not guard.flush(timeout=0.5)   # failing, then paused: the write waits
    assert guard.breaker.state == "open"
    sent = guard.stats.sent
    target["db"] = up                     # the store comes back ...
    clock.now += 30                       # ... and the cooldown ends: one trial, the queued write
    assert guard.flush(timeout=30)
    assert guard.stats.sent == sent + 1 and guard.stats.writes_done == 1
    assert [e.l2_full for e in up.sync.list(user_id="alice")] == ["written during the outage"]
    guard.close()
    up.sync.close()


def test_a_caller_error_drops_that_write_only(db):
    guard = FailOpen(clock=Clock())
    guard.write(db.sync.add_memory, "  ", user_id="alice")
    guard.write(db.sync.add_memory, "kept", user_id="alice")
    assert guard.flush(timeout=30)
    assert [e.l2_full for e in db.sync.list(user_id="alice")] == ["kept"]
    assert guard.stats.writes_dropped == 1 and guard.breaker.state == "closed"
    guard.close()


def test_pending_writes_beyond_the_limit_drop_the_oldest():
    clock = Clock()
    guard = FailOpen(threshold=1, cooldown=3600, max_pending_writes=3, clock=clock)
    guard.write(_broken)
    guard.flush(timeout=0.3)                # the first attempt fails: open for an hour
    for _ in range(5):
        guard.write(_broken)
    assert guard.pending_writes() == 3
    assert guard.stats.writes_dropped == 3
    assert guard.close(timeout=0.1) == 3


def test_prefetch_is_computed_in_the_background_and_handed_out_once(db):
    db.sync.add_memory("Alice keeps bees in her garden", user_id="alice")
    guard = FailOpen(clock=Clock())
    prefetch = Prefetcher(guard, lambda q: db.sync.prefetch(q, user_id="alice").text(), wait=30)
    prefetch.start("bees")
    assert "bees" in prefetch.take("bees")
    assert guard.stats.sent == 1
    prefetch.start("bees")                  # taken: a new start computes again
    assert "bees" in prefetch.take("bees")
    assert guard.stats.sent == 2


def test_a_slow_prefetch_degrades_to_nothing_within_the_wait():
    release = threading.Event()
    guard = FailOpen(threshold=3, cooldown=30, clock=Clock())
    prefetch = Prefetcher(guard, lambda q: release.wait(10) and f"late {q}", wait=0.05)
    assert prefetch.take("q") is None
    assert guard.stats.timed_out == 1
    release.set()


async def test_atake_returns_nothing_when_the_breaker_is_open(db):
    clock = Clock()
    guard = FailOpen(threshold=1, cooldown=30, clock=clock)
    guard.quietly(_broken)
    prefetch = Prefetcher(guard, lambda q: db.sync.prefetch(q, user_id="alice"), wait=5)
    assert await prefetch.atake("anything") is None
    assert guard.stats.refused == 1 and guard.stats.sent == 1
    clock.now += 30
    result = await prefetch.atake("anything")
    assert result is not None and guard.breaker.state == "closed"
