"""A circuit breaker for a remote embedder: stop calling an endpoint that keeps failing.

States (docs/lifecycle.md, "Fail-open remote embedders")::

    closed ──(failure_threshold failures in a row)──> open
    open ──(cooldown_seconds later, on the next call)──> half_open: one trial call goes out
    half_open ──(the trial succeeds)──> closed
    half_open ──(the trial fails)──> open (a new cool-down)

While open, and while a half-open trial is in flight, ``allow()`` refuses at once: no request
is sent, so a dead endpoint sees at most one request per cool-down however busy the caller is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidArgument

__all__ = ["CLOSED", "HALF_OPEN", "OPEN", "BreakerState", "CircuitBreaker"]

CLOSED = "closed"
OPEN = "open"
HALF_OPEN = "half_open"


@dataclass(frozen=True)
class BreakerState:
    """A snapshot for ``info()`` / ``verify()``."""

    state: str
    consecutive_failures: int
    failure_threshold: int
    cooldown_seconds: float
    retry_in_seconds: float  # until a half-open trial may go out; 0 when closed
    last_error: str | None
    opened_count: int  # how many times it has opened since it was made

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "consecutive_failures": self.consecutive_failures,
                "failure_threshold": self.failure_threshold, "cooldown_seconds": self.cooldown_seconds,
                "retry_in_seconds": round(self.retry_in_seconds, 3), "last_error": self.last_error,
                "opened_count": self.opened_count}


class CircuitBreaker:
    """Counts consecutive failures of one endpoint and decides whether the next call may go out.

    Usage::

        breaker = CircuitBreaker(failure_threshold=3, cooldown_seconds=30)
        if breaker.allow():
            try: call(); breaker.record_success()
            except OSError as exc: breaker.record_failure(exc)

    Thread-safe. ``clock`` is injectable so a test can move time instead of sleeping.
    """

    def __init__(self, *, failure_threshold: int = 3, cooldown_seconds: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not isinstance(failure_threshold, int) or isinstance(failure_threshold, bool) or failure_threshold < 1:
            raise InvalidArgument(f"failure_threshold must be an int >= 1, got {failure_threshold!r}")
        if not isinstance(cooldown_seconds, (int, float)) or isinstance(cooldown_seconds, bool) or cooldown_seconds < 0:
            raise InvalidArgument(f"cooldown_seconds must be a number >= 0, got {cooldown_seconds!r}")
        self.failure_threshold = failure_threshold
        self.cooldown_seconds = float(cooldown_seconds)
        self._clock = clock
        self._lock = threading.Lock()
        self._state = CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._trial_out = False
        self._last_error: str | None = None
        self._opened_count = 0

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half_open`` (an open breaker whose cool-down is over reads ``half_open``)."""
        with self._lock:
            return self._current()

    def _current(self) -> str:
        if self._state == OPEN and self._clock() - self._opened_at >= self.cooldown_seconds:
            self._state = HALF_OPEN
            self._trial_out = False
        return self._state

    def allow(self) -> bool:
        """May a call go out now? In half-open state only one caller gets ``True`` until it reports."""
        with self._lock:
            state = self._current()
            if state == CLOSED:
                return True
            if state == HALF_OPEN and not self._trial_out:
                self._trial_out = True
                return True
            return False

    def record_success(self) -> None:
        with self._lock:
            self._state = CLOSED
            self._failures = 0
            self._trial_out = False
            self._last_error = None

    def record_failure(self, error: BaseException | str | None = None) -> None:
        with self._lock:
            self._failures += 1
            if error is not None:
                self._last_error = error if isinstance(error, str) else _describe(error)
            if self._state == HALF_OPEN or self._failures >= self.failure_threshold:
                if self._state != OPEN:
                    self._opened_count += 1
                self._state = OPEN
                self._opened_at = self._clock()
            self._trial_out = False

    def cancel(self) -> None:
        """A call that ``allow()`` let out ended without a verdict (interrupted): another may go."""
        with self._lock:
            self._trial_out = False

    def retry_in(self) -> float:
        """Seconds until a call may go out (0 when closed or half-open)."""
        with self._lock:
            if self._current() != OPEN:
                return 0.0
            return max(0.0, self.cooldown_seconds - (self._clock() - self._opened_at))

    def snapshot(self) -> BreakerState:
        with self._lock:
            state = self._current()
            retry = max(0.0, self.cooldown_seconds - (self._clock() - self._opened_at)) if state == OPEN else 0.0
            return BreakerState(state=state, consecutive_failures=self._failures,
                                failure_threshold=self.failure_threshold, cooldown_seconds=self.cooldown_seconds,
                                retry_in_seconds=retry, last_error=self._last_error, opened_count=self._opened_count)

    def __repr__(self) -> str:
        snap = self.snapshot()
        return (f"CircuitBreaker(state={snap.state!r}, failures={snap.consecutive_failures}/"
                f"{self.failure_threshold}, cooldown_seconds={self.cooldown_seconds})")


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__
