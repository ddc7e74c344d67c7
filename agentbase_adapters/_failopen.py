"""Fail-open store calls for agent-harness adapters: a slow or broken agentbase never breaks a turn.

A harness (Hermes, the Claude Agent SDK, deepagents, CrewAI, Pydantic AI) treats memory as optional:
when the store is down, slow or locked, the agent must carry on without it. Everything an adapter
sends to the store on the agent's path goes through one ``FailOpen`` guard::

    CircuitBreaker        closed --N store failures--> open --cooldown--> half-open
                          half-open: one trial call; it succeeds -> closed, it fails -> open again
    FailOpen              one breaker, a small read pool and one serial writer
    ├── call / acall      run now (optionally with a bounded wait); StoreUnavailable when refused,
    │                     failed or too slow; the caller's own mistakes propagate unchanged
    ├── quietly / aquietly  the same, but every error is logged and swallowed: a fallback comes back
    └── write             queued for the writer thread, in order; retried across an outage
    Prefetcher            one background computation per key, taken with a bounded wait

A store failure is anything but a caller error (``InvalidArgument``, ``NotFoundError``,
``PermissionDenied`` - the store answered, the request was wrong) - ``StorageError``,
``ClosedError``, a lost PostgreSQL connection, an ``OSError``, a timeout. Caller errors never count
against the store. While the breaker is open no request is sent at all (``GuardStats.refused``
counts what was held back); after ``cooldown`` seconds exactly one trial goes through.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agentbase_kernel import InvalidArgument, NotFoundError, PermissionDenied

__all__ = ["CALLER_ERRORS", "CircuitBreaker", "FailOpen", "GuardStats", "Prefetcher", "StoreUnavailable"]

_T = TypeVar("_T")

CALLER_ERRORS: tuple[type[BaseException], ...] = (InvalidArgument, NotFoundError, PermissionDenied)
"""Errors that say the request was wrong, not that the store is down: they never trip the breaker."""

_log = logging.getLogger("agentbase_adapters.failopen")


class StoreUnavailable(Exception):
    """The store was not asked (breaker open), failed, or did not answer within the wait.

    Attributes:
        reason: ``"open"``, ``"failed"`` or ``"timeout"``.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class GuardStats:
    """What a guard did, for logs, tests and the fail-open figures.

    ``sent`` counts requests that reached the store (trials included), ``refused`` those held back
    while the breaker was open, ``sent_while_open`` the requests sent when the breaker was not
    closed (only half-open trials: one per cooldown).
    """

    sent: int = 0
    succeeded: int = 0
    failed: int = 0
    timed_out: int = 0
    refused: int = 0
    trials: int = 0
    sent_while_open: int = 0
    trips: int = 0
    writes_queued: int = 0
    writes_done: int = 0
    writes_dropped: int = 0
    swallowed: int = 0


class CircuitBreaker:
    """Stop calling a failing store for a while, then let one trial call find out whether it is back.

        breaker = CircuitBreaker(threshold=5, cooldown=30)
        if breaker.allow(): ...call...; breaker.success()  # or breaker.failure()

    Thread-safe. ``clock`` is injectable so tests can step time instead of sleeping.
    """

    def __init__(self, *, threshold: int = 5, cooldown: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, stats: GuardStats | None = None) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise ValueError(f"threshold must be a positive int, not {threshold!r}")
        if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)) or cooldown < 0:
            raise ValueError(f"cooldown must be a number of seconds >= 0, not {cooldown!r}")
        self.threshold = threshold
        self.cooldown = float(cooldown)
        self.stats = stats if stats is not None else GuardStats()
        self._clock = clock
        self._lock = threading.Lock()
        self._state = "closed"
        self._failures = 0
        self._opened_at = 0.0

    @property
    def state(self) -> str:
        """``"closed"``, ``"open"`` or ``"half_open"`` (an open breaker whose cooldown ran out reads half-open)."""
        with self._lock:
            if self._state == "open" and self._clock() >= self._opened_at + self.cooldown:
                return "half_open"
            return self._state

    def retry_in(self) -> float:
        """Seconds until an open breaker lets its trial through (0 when it would now)."""
        with self._lock:
            if self._state != "open":
                return 0.0
            return max(0.0, self._opened_at + self.cooldown - self._clock())

    def allow(self) -> bool:
        """May a request be sent now? Counts the refusal when not; an allowed half-open call is the trial."""
        with self._lock:
            if self._state == "closed":
                return True
            if self._state == "open" and self._clock() >= self._opened_at + self.cooldown:
                self._state = "half_open"  # this caller carries the one trial
                self.stats.trials += 1
                self.stats.sent_while_open += 1
                return True
            self.stats.refused += 1
            return False

    def success(self) -> None:
        """The store answered: close the breaker and forget earlier failures."""
        with self._lock:
            if self._state != "closed":
                _log.warning("agentbase store is back: circuit breaker closed")
            self._state = "closed"
            self._failures = 0

    def failure(self) -> None:
        """The store failed: a failed trial re-opens the breaker, the N-th failure in a row opens it."""
        with self._lock:
            self._failures += 1
            if self._state == "half_open" or (self._state == "closed" and self._failures >= self.threshold):
                self._state = "open"
                self._opened_at = self._clock()
                self.stats.trips += 1
                _log.warning("agentbase store failed %d time(s) in a row: circuit breaker open, no requests "
                             "for %.1f s", self._failures, self.cooldown)


class _Settle:
    """Records one call's outcome exactly once: a waiter that gave up and the late worker must not both count."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = False

    def claim(self) -> bool:
        with self._lock:
            if self.done:
                return False
            self.done = True
            return True


class FailOpen:
    """Run store calls so that no store failure reaches the agent.

        guard = FailOpen(threshold=5, cooldown=30)
        hits = guard.quietly(db.sync.find, "query", user_id="alice", fallback=None, timeout=1.0)
        guard.write(db.sync.add_memory, "the turn", user_id="alice")   # returns at once

    Args:
        threshold: Store failures in a row that open the breaker.
        cooldown: Seconds the breaker stays open before one trial call.
        name: Shown in log lines (e.g. ``"hermes"``).
        logger: Where failures are logged (default ``agentbase_adapters.failopen``).
        max_pending_writes: Writes kept while the store is down; beyond it the oldest is dropped (counted).
        clock: Injectable monotonic clock for tests.
    """

    def __init__(self, *, threshold: int = 5, cooldown: float = 30.0, name: str = "agentbase",
                 logger: logging.Logger | None = None, max_pending_writes: int = 1000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(max_pending_writes, bool) or not isinstance(max_pending_writes, int) or max_pending_writes < 1:
            raise ValueError(f"max_pending_writes must be a positive int, not {max_pending_writes!r}")
        self.stats = GuardStats()
        self.breaker = CircuitBreaker(threshold=threshold, cooldown=cooldown, clock=clock, stats=self.stats)
        self.name = name
        self.log = logger or _log
        self._reads = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"{name}-read")
        self._writes: collections.deque[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = \
            collections.deque()
        self._max_pending = max_pending_writes
        self._cond = threading.Condition()
        self._busy = False
        self._closed = False
        self._writer: threading.Thread | None = None

    # -- one call --------------------------------------------------------------------------------
    def _run(self, settle: _Settle, fn: Callable[..., _T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> _T:
        """Call ``fn`` (already allowed by the breaker) and record the outcome unless a waiter already did."""
        try:
            result = fn(*args, **kwargs)
        except CALLER_ERRORS:
            if settle.claim():
                self.stats.succeeded += 1
                self.breaker.success()  # the store answered
            raise
        except Exception as exc:
            if settle.claim():
                self.stats.failed += 1
                self.breaker.failure()
                self.log.warning("%s: agentbase store call %s failed: %s: %s", self.name,
                                 getattr(fn, "__name__", "call"), type(exc).__name__, exc)
            raise StoreUnavailable(f"agentbase store failed: {type(exc).__name__}: {exc}", reason="failed") from exc
        if settle.claim():
            self.stats.succeeded += 1
            self.breaker.success()
        return result

    def _admit(self) -> None:
        if not self.breaker.allow():
            raise StoreUnavailable(f"agentbase store paused after failures (retry in {self.breaker.retry_in():.1f} s)",
                                   reason="open")
        self.stats.sent += 1

    def _timed_out(self, settle: _Settle, fn: Callable[..., Any], timeout: float) -> StoreUnavailable:
        if settle.claim():
            self.stats.timed_out += 1
            self.breaker.failure()
            self.log.warning("%s: agentbase store call %s took longer than %.2f s - going on without it",
                             self.name, getattr(fn, "__name__", "call"), timeout)
        return StoreUnavailable(f"agentbase store did not answer within {timeout} s", reason="timeout")

    def call(self, fn: Callable[..., _T], /, *args: Any, timeout: float | None = None, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` through the breaker; with ``timeout``, on a worker thread, waited for at most that long.

        Raises:
            StoreUnavailable: The breaker is open, the store failed, or it did not answer in time.
            InvalidArgument, NotFoundError, PermissionDenied: The request itself was wrong (the store is fine).
        """
        self._admit()
        settle = _Settle()
        if timeout is None:
            return self._run(settle, fn, args, kwargs)
        future = self._reads.submit(self._run, settle, fn, args, kwargs)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            raise self._timed_out(settle, fn, timeout) from None

    async def acall(self, fn: Callable[..., _T], /, *args: Any, timeout: float | None = None, **kwargs: Any) -> _T:
        """``call`` for async code: ``fn`` (a sync store call) runs on a worker thread, the loop stays free."""
        self._admit()
        settle = _Settle()
        future = self._reads.submit(self._run, settle, fn, args, kwargs)
        if not await _finished(future, timeout):
            raise self._timed_out(settle, fn, timeout or 0.0)
        return future.result()

    def quietly(self, fn: Callable[..., _T], /, *args: Any, fallback: Any = None, timeout: float | None = None,
                **kwargs: Any) -> Any:
        """``call``, but every error (the caller's included) is logged and swallowed: ``fallback`` comes back."""
        try:
            return self.call(fn, *args, timeout=timeout, **kwargs)
        except Exception as exc:
            self._swallow(fn, exc)
            return fallback

    async def aquietly(self, fn: Callable[..., _T], /, *args: Any, fallback: Any = None,
                       timeout: float | None = None, **kwargs: Any) -> Any:
        """``quietly`` for async code."""
        try:
            return await self.acall(fn, *args, timeout=timeout, **kwargs)
        except Exception as exc:
            self._swallow(fn, exc)
            return fallback

    def _swallow(self, fn: Callable[..., Any], exc: Exception) -> None:
        self.stats.swallowed += 1
        if isinstance(exc, StoreUnavailable):
            self.log.debug("%s: %s skipped: %s", self.name, getattr(fn, "__name__", "call"), exc)
        else:
            self.log.warning("%s: %s rejected: %s: %s", self.name, getattr(fn, "__name__", "call"),
                             type(exc).__name__, exc)

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[_T] | None:
        """Start ``fn`` on a worker thread through the breaker; ``None`` when the breaker refused it.

        The future's exception is ``StoreUnavailable`` or a caller error, never a raw store error.
        """
        try:
            self._admit()
        except StoreUnavailable:
            return None
        return self._reads.submit(self._run, _Settle(), fn, args, kwargs)

    # -- writes ----------------------------------------------------------------------------------
    def write(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        """Queue a store write and return at once; writes run one at a time, in the order queued.

        While the store is down the writer waits for the breaker's trial and retries the write
        (kernel writes are idempotent: the same text in the same scope is a no-op), so an outage
        delays writes instead of losing them - up to ``max_pending_writes``, beyond which the oldest
        queued write is dropped (``stats.writes_dropped``). A caller error drops that write (logged).
        """
        with self._cond:
            if self._closed:
                self.stats.writes_dropped += 1
                self.log.warning("%s: write after close dropped", self.name)
                return
            if len(self._writes) >= self._max_pending:
                self._writes.popleft()
                self.stats.writes_dropped += 1
                self.log.warning("%s: %d writes waiting for the store - dropped the oldest", self.name,
                                 self._max_pending)
            self._writes.append((fn, args, kwargs))
            self.stats.writes_queued += 1
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name=f"{self.name}-writer", daemon=True)
                self._writer.start()
            self._cond.notify_all()

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not self._writes and not self._closed:
                    self._cond.wait()
                if not self._writes:
                    return
                item = self._writes[0]
                self._busy = True
            done = self._write_once(*item)
            with self._cond:
                if done and self._writes and self._writes[0] is item:
                    self._writes.popleft()
                self._busy = False
                self._cond.notify_all()
                if not done:  # the breaker is open: sleep until its trial (or close), looking again now and then
                    self._cond.wait(timeout=min(max(self.breaker.retry_in(), 0.01), 0.25))
                    if self._closed:
                        return

    def _write_once(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """One attempt; ``True`` when the write is finished with (stored, or dropped as a caller error)."""
        try:
            self.call(fn, *args, **kwargs)
        except StoreUnavailable:
            return False
        except Exception as exc:
            self.stats.writes_dropped += 1
            self._swallow(fn, exc)
            return True
        self.stats.writes_done += 1
        return True

    def pending_writes(self) -> int:
        """Writes queued or running."""
        with self._cond:
            return len(self._writes)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued write has run; ``False`` when ``timeout`` ran out first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._writes or self._busy:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(timeout=left if left is not None else 0.1)
        return True

    def close(self, timeout: float = 5.0) -> int:
        """Give queued writes up to ``timeout`` seconds, then stop; returns how many writes were abandoned."""
        self.flush(timeout)
        with self._cond:
            self._closed = True
            abandoned = len(self._writes)
            self.stats.writes_dropped += abandoned
            self._writes.clear()
            self._cond.notify_all()
        if abandoned:
            self.log.warning("%s: %d writes abandoned at close (the store stayed unavailable)", self.name, abandoned)
        self._reads.shutdown(wait=False, cancel_futures=True)
        return abandoned


async def _finished(future: concurrent.futures.Future[Any], timeout: float | None) -> bool:
    """Wait for a worker thread's future without blocking the loop; ``False`` when ``timeout`` ran out.

    Not ``asyncio.wrap_future``: a late result must not be handed to a loop that may be closed by then.
    """
    loop = asyncio.get_running_loop()
    event = asyncio.Event()

    def wake(_: concurrent.futures.Future[Any]) -> None:
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # the loop is gone: nobody waits any more
            pass

    future.add_done_callback(wake)
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        return future.done()
    return True


class Prefetcher(Generic[_T]):
    """Compute a value per key on a background thread; take it later with a bounded wait.

        prefetch = Prefetcher(guard, lambda query: db.sync.prefetch(query, user_id="alice"), wait=1.0)
        prefetch.start("what should I cook?")          # at the start of the turn
        context = prefetch.take("what should I cook?")  # None when the store is slow, down or paused

    A result is handed out once. At most ``keep`` keys are remembered (the oldest are forgotten).
    """

    def __init__(self, guard: FailOpen, compute: Callable[[Any], _T], *, wait: float = 2.0, keep: int = 16) -> None:
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
            raise ValueError(f"wait must be a number of seconds >= 0, not {wait!r}")
        self.guard = guard
        self.compute = compute
        self.wait = float(wait)
        self._keep = keep
        self._lock = threading.Lock()
        self._jobs: collections.OrderedDict[Hashable, tuple[concurrent.futures.Future[_T], _Settle, float]] = \
            collections.OrderedDict()

    def start(self, key: Hashable) -> None:
        """Begin computing ``key`` unless it is already computing or computed (and not yet taken)."""
        with self._lock:
            if key in self._jobs:
                return
            try:
                self.guard._admit()
            except StoreUnavailable:
                return
            settle = _Settle()
            future = self.guard._reads.submit(self.guard._run, settle, self.compute, (key,), {})
            self._jobs[key] = (future, settle, time.monotonic())
            while len(self._jobs) > self._keep:
                self._jobs.popitem(last=False)

    def _job(self, key: Hashable) -> tuple[concurrent.futures.Future[_T], _Settle, float] | None:
        self.start(key)
        with self._lock:
            return self._jobs.get(key)

    def _settle(self, key: Hashable, job: tuple[concurrent.futures.Future[_T], _Settle, float],
                wait: float) -> _T | None:
        """Hand out a finished value; an unfinished one is given up on - a store this slow counts as failing."""
        future, settle, _ = job
        with self._lock:
            if self._jobs.get(key) is job:
                del self._jobs[key]
        if not future.done():
            self.guard._timed_out(settle, self.compute, wait)
            return None
        try:
            return future.result(timeout=0)
        except Exception as exc:
            self.guard._swallow(self.compute, exc)
            return None

    def take(self, key: Hashable, wait: float | None = None) -> _T | None:
        """The value for ``key``, waiting at most ``wait`` (default ``self.wait``) seconds after it was started;
        ``None`` when it is not there by then (the turn goes on without it)."""
        job = self._job(key)
        if job is None:
            return None
        wait = self.wait if wait is None else wait
        concurrent.futures.wait([job[0]], timeout=max(0.0, job[2] + wait - time.monotonic()))
        return self._settle(key, job, wait)

    async def atake(self, key: Hashable, wait: float | None = None) -> _T | None:
        """``take`` for async code: the loop stays free while it waits."""
        job = self._job(key)
        if job is None:
            return None
        wait = self.wait if wait is None else wait
        await _finished(job[0], max(0.0, job[2] + wait - time.monotonic()))
        return self._settle(key, job, wait)
