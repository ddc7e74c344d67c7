"""Sleep-time consolidation: consolidate a scope in the background after N writes to it, or once
this kernel has seen no write for a while.

``lifecycle.consolidate_every_writes`` (0: off) and ``lifecycle.consolidate_idle_seconds`` (0: off).
Writes only count, note the scope and, at the Nth, queue it - no work on the write path. One daemon
thread (``agentbase-consolidate``) runs the queued scopes one at a time through
``Kernel.consolidate`` with the ``lifecycle.consolidate_*`` settings; when the kernel has been idle
for ``consolidate_idle_seconds`` it queues every scope written since. A failure is logged and the
scope is tried again at its next trigger. ``close`` stops the thread after the scope it is on.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable

from ..records import Scope

__all__ = ["ConsolidationSchedule"]

log = logging.getLogger(__name__)


class ConsolidationSchedule:
    """Runs ``job(scope)`` in the background every ``every`` writes to a scope, and for every scope
    written to once ``idle_seconds`` pass without a write."""

    def __init__(self, every: int, job: Callable[[Scope], object], *, idle_seconds: float = 0.0) -> None:
        self.every = every
        self.idle_seconds = idle_seconds
        self._job = job
        self._lock = threading.Lock()
        self._counts: dict[Scope, int] = {}
        self._dirty: set[Scope] = set()  # written since the last idle run
        self._last_write = 0.0
        self._queue: queue.Queue[Scope | None] = queue.Queue()
        self._queued: set[Scope] = set()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.runs = 0

    def wrote(self, scopes: Iterable[Scope]) -> None:
        """Count one write to each scope; queue the ones that reached ``every``."""
        if self.every <= 0 and self.idle_seconds <= 0:
            return
        with self._lock:
            if self._stopped:
                return
            for scope in scopes:
                if self.idle_seconds > 0:
                    self._dirty.add(scope)
                if self.every <= 0:
                    continue
                n = self._counts.get(scope, 0) + 1
                if n < self.every:
                    self._counts[scope] = n
                    continue
                self._counts[scope] = 0
                self._put(scope)
            self._last_write = time.monotonic()
            if (self._queued or self._dirty) and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="agentbase-consolidate", daemon=True)
                self._thread.start()

    def _put(self, scope: Scope) -> None:
        if scope not in self._queued:
            self._queued.add(scope)
            self._queue.put(scope)

    def idle(self, timeout: float | None = None) -> bool:
        """Block until every queued (and every idle-pending) scope has been consolidated (``False``
        if ``timeout`` ran out)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                if not self._queued and not self._dirty:
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def _run(self) -> None:
        poll = min(self.idle_seconds, 0.5) if self.idle_seconds > 0 else None
        while True:
            try:
                scope = self._queue.get(timeout=poll)
            except queue.Empty:
                with self._lock:
                    if self._stopped:
                        return
                    if self._dirty and time.monotonic() - self._last_write >= self.idle_seconds:
                        for dirty in self._dirty:
                            self._put(dirty)
                        self._dirty.clear()
                continue
            if scope is None:
                return
            try:
                self._job(scope)
                self.runs += 1
            except Exception as exc:  # a background maintenance run must not kill the thread
                log.warning("agentbase: background consolidation of %s failed: %s", scope, exc)
            finally:
                with self._lock:
                    self._queued.discard(scope)

    def close(self) -> None:
        with self._lock:
            self._stopped = True
            self._dirty.clear()
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join()
