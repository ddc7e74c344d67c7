"""Sleep-time consolidation: after every N writes to a scope, consolidate it on a background thread.

``lifecycle.consolidate_every_writes`` (0: off). Writes only count and, at the Nth, queue the
scope - no work on the write path. One daemon thread (``agentbase-consolidate``) runs the queued
scopes one at a time through ``Kernel.consolidate`` with the ``lifecycle.consolidate_*`` settings;
a failure is logged and the scope is tried again after its next N writes. ``close`` stops the
thread after the scope it is on.
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
    """Counts writes per scope; runs ``job(scope)`` in the background every ``every`` writes."""

    def __init__(self, every: int, job: Callable[[Scope], object]) -> None:
        self.every = every
        self._job = job
        self._lock = threading.Lock()
        self._counts: dict[Scope, int] = {}
        self._queue: queue.Queue[Scope | None] = queue.Queue()
        self._queued: set[Scope] = set()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.runs = 0

    def wrote(self, scopes: Iterable[Scope]) -> None:
        """Count one write to each scope; queue the ones that reached ``every``."""
        if self.every <= 0:
            return
        with self._lock:
            if self._stopped:
                return
            for scope in scopes:
                n = self._counts.get(scope, 0) + 1
                if n < self.every:
                    self._counts[scope] = n
                    continue
                self._counts[scope] = 0
                if scope not in self._queued:
                    self._queued.add(scope)
                    self._queue.put(scope)
            if self._queued and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="agentbase-consolidate", daemon=True)
                self._thread.start()

    def idle(self, timeout: float | None = None) -> bool:
        """Block until every queued scope has been consolidated (``False`` if ``timeout`` ran out)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                if not self._queued:
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def _run(self) -> None:
        while True:
            scope = self._queue.get()
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
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join()
