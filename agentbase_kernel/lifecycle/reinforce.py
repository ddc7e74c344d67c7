"""Batched reinforcement: ``find`` queues the ids it returned; a background thread writes them.

``find`` only takes an in-process lock around a dict update - never a database write lock. A
daemon thread flushes the queue every ``reinforce_flush_seconds`` in one short write transaction
(``Store.bump_access``); ``flush()`` and ``close()`` flush at once. Bumps still queued when the
process dies are lost: access counts are a ranking hint, not a ledger. Reads in this process see
the queue too (``with_queued``): ``find`` then ``get`` shows the bump at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from ..records import Scope
from ..store.base import iso, parse_iso, utcnow
from ..store.protocol import RetentionStore

__all__ = ["Reinforcer"]

log = logging.getLogger(__name__)


class Reinforcer:
    """Queue of access bumps (and read audit rows) for one store, flushed off the read path."""

    def __init__(self, store: RetentionStore, *, interval: float) -> None:
        self._store = store
        self._interval = interval
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._counts: dict[str, list[Any]] = {}
        self._reads: list[dict[str, Any]] = []
        self._wake = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def record(self, entry_ids: list[str], *, scope: Scope, bump: bool, audit: bool,
               detail: dict[str, Any] | None = None) -> None:
        """Queue one ``find``'s ids: microseconds, no I/O."""
        if not entry_ids or not (bump or audit):
            return
        now = iso(utcnow())
        with self._lock:
            if bump:
                for eid in entry_ids:
                    slot = self._counts.get(eid)
                    if slot is None:
                        self._counts[eid] = [1, now]
                    else:
                        slot[0] += 1
                        slot[1] = now
            if audit:
                self._reads.append({"at": now, "scope": scope, "entry_ids": list(entry_ids), "detail": detail})
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._run, name="agentbase-reinforce", daemon=True)
                self._thread.start()

    def queue_audit(self, kind: str, *, actor: str | None, scope: Scope, entry_ids: list[str],
                    detail: dict[str, Any]) -> None:
        """Queue one audit row for the next flush (a denial inside a caller's transaction, which
        may roll back: the flush writes it after that transaction ends, either way)."""
        with self._lock:
            self._reads.append({"at": iso(utcnow()), "kind": kind, "actor": actor, "scope": scope,
                                "entry_ids": list(entry_ids), "detail": detail})
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._run, name="agentbase-reinforce", daemon=True)
                self._thread.start()
        self._wake.set()

    @property
    def pending(self) -> int:
        """Entries with queued, unwritten bumps."""
        with self._lock:
            return len(self._counts) + len(self._reads)

    def with_queued(self, entry_ids: Iterable[str],
                    read: Callable[[list[str]], dict[str, tuple[int, datetime | None]]],
                    ) -> dict[str, tuple[int, datetime | None]]:
        """``read(ids)`` (the stored ``(access_count, last_accessed_at)``) plus the bumps still queued.

        Read under the flush lock, so a bump is counted once: either still queued or already written.
        """
        ids = list(entry_ids)
        with self._flush_lock:
            stats = read(ids)
            with self._lock:
                queued = {eid: (slot[0], slot[1]) for eid in ids if (slot := self._counts.get(eid)) is not None}
        for eid, (n, last) in queued.items():
            count, seen = stats.get(eid, (0, None))
            when = parse_iso(last)
            stats[eid] = (count + n, when if seen is None or (when is not None and when > seen) else seen)
        return stats

    def flush(self) -> int:
        """Write what is queued now, in one transaction; returns how many entries were bumped.

        On a write error (the file locked beyond the busy timeout) the batch is put back and the
        error raised to this caller - the background thread logs it and retries later.
        """
        with self._flush_lock:
            with self._lock:
                counts, reads = self._counts, self._reads
                self._counts, self._reads = {}, []
            if not counts and not reads:
                return 0
            try:
                self._store.bump_access({k: (v[0], v[1]) for k, v in counts.items()}, reads)
            except BaseException:
                with self._lock:
                    for eid, (n, last) in counts.items():
                        slot = self._counts.setdefault(eid, [0, last])
                        slot[0] += n
                        slot[1] = max(slot[1], last)
                    self._reads[:0] = reads
                raise
            return len(counts)

    def _run(self) -> None:
        while not self._stopped:
            self._wake.wait(self._interval)
            self._wake.clear()
            try:
                self.flush()
            except Exception as exc:
                log.warning("agentbase: reinforcement flush failed, will retry: %s", exc)

    def close(self) -> None:
        """Stop the thread and write what is left (errors are logged, not raised: close must close)."""
        self._stopped = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.flush()
        except Exception as exc:
            log.warning("agentbase: %d queued reinforcement bumps lost on close: %s", self.pending, exc)
