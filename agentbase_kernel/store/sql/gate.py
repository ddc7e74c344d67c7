"""Closing a store while other threads still call it: new calls are refused, running ones finish.

Closing a connection under a statement another thread is stepping crashes the interpreter on
SQLite, and on PostgreSQL hands the running call a connection the pool has already closed. So
``close()`` first refuses every new call (``ClosedError``), then waits for the running ones, bounded
so that a call that never ends cannot hang ``close()``. Every ``mapped`` store call passes the gate.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from ...errors import ClosedError

__all__ = ["CallGate"]


class CallGate:
    """Counts the store calls running on any thread, and shuts out new ones once closing starts.

    Usage::

        gate = CallGate()
        with gate.call():          # ClosedError once gate.close() has started
            ...
        gate.close(timeout_s=30)   # from now on no call starts; waits for the running ones
        gate.reopen()              # the store was opened again
    """

    def __init__(self) -> None:
        self._running = 0
        self._closing = False
        self._idle = threading.Condition()

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """One store call: refused once the store is closing, counted while it runs."""
        with self._idle:
            if self._closing:  # a call that raced close() past the kernel's own check
                raise ClosedError("Cannot use the database, as it has been closed.")
            self._running += 1
        try:
            yield
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def close(self, timeout_s: float) -> bool:
        """Refuse new calls from now on, then wait up to ``timeout_s`` for the running ones to end.

        Returns:
            True when none is running any more (False: the wait timed out).
        """
        with self._idle:
            self._closing = True
            return self._idle.wait_for(lambda: self._running == 0, timeout=timeout_s)

    def reopen(self) -> None:
        """Let calls in again (the store was opened after a close)."""
        with self._idle:
            self._closing = False
