"""Closing a store while another thread is inside one of its calls, on SQLite and PostgreSQL.

``close()`` refuses every new call with ``ClosedError`` and waits for the running ones (bounded):
closing a connection under a running statement crashed the interpreter on SQLite. The running call
here is held open by its own argument, a generator that waits for the test to let it go.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentbase_kernel import AgentBaseError, ClosedError
from agentbase_kernel.config import StorageConfig
from agentbase_kernel.store import Store, open_store

WAIT_S = 20  # a bound on waiting for the other threads, never a measured time


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """A fresh SQLite file, or a fresh database on the session's throwaway PostgreSQL server."""
    if request.param == "sqlite":
        return tmp_path / "gate.db"
    url: str = request.getfixturevalue("postgres_url")
    return url


class HeldCall:
    """``store.missing_vectors`` on another thread, held inside the store until ``release()``."""

    def __init__(self, store: Store) -> None:
        self.started, self.released = threading.Event(), threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(store,), daemon=True)
        self.thread.start()
        assert self.started.wait(WAIT_S)

    def _hashes(self) -> Iterator[str]:
        self.started.set()  # the store has taken the call and is reading its argument
        self.released.wait(WAIT_S)
        yield "never-stored"

    def _run(self, store: Store) -> None:
        try:
            self.result = store.missing_vectors(self._hashes())
        except BaseException as exc:  # the test looks at what the call raised
            self.error = exc

    def release(self) -> None:
        self.released.set()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive()


def _refused_once_closing(store: Store) -> None:
    """Calls go on working until ``close()`` (on another thread) has started; then they raise ClosedError."""
    deadline = threading.Event()
    timer = threading.Timer(WAIT_S, deadline.set)
    timer.start()
    try:
        while not deadline.is_set():
            try:
                store.stats()
            except ClosedError:
                return
            deadline.wait(0.01)
        pytest.fail("close() never started refusing calls")
    finally:
        timer.cancel()


def test_close_waits_for_the_running_call_and_refuses_new_ones(location: str | Path) -> None:
    store = open_store(location)
    try:
        held = HeldCall(store)
        closer = threading.Thread(target=store.close, daemon=True)
        closer.start()
        _refused_once_closing(store)
        assert closer.is_alive()  # still waiting for the held call
        held.release()
        closer.join(WAIT_S)
        assert not closer.is_alive()
        assert held.error is None and held.result == {"never-stored"}  # it finished on an open connection
        with pytest.raises(ClosedError, match="has been closed"):
            store.stats()
        with pytest.raises(ClosedError):
            store.missing_vectors(["x"])
    finally:
        store.close()


def test_a_store_opened_again_takes_calls(location: str | Path) -> None:
    store = open_store(location)
    store.close()
    with pytest.raises(ClosedError):
        store.stats()
    store.open()
    try:
        assert store.stats()["entries"] == 0
    finally:
        store.close()


def test_a_call_that_does_not_end_does_not_hang_close(location: str | Path) -> None:
    # the wait is bounded by the busy timeout (SQLite) / the pool's timeout (PostgreSQL, at least 1 s)
    store = open_store(location, StorageConfig(busy_timeout_ms=300))
    held = HeldCall(store)
    store.close()  # returns although the held call is still inside the store
    assert held.thread.is_alive()
    with pytest.raises(ClosedError):
        store.stats()
    held.release()
    # the late call either still read its answer or failed with one of ours; the process lives on
    assert held.error is None or isinstance(held.error, AgentBaseError), repr(held.error)
    store.close()
