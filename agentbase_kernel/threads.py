"""One way to be async: a class written once over blocking code gets its async twin by reference.

An async class holds its sync twin in ``self._sync`` and declares each method as
``name = in_thread(SyncClass.name)``; the call runs in a worker thread (``asyncio.to_thread``), so
it never blocks the event loop. Where a framework puts the async twins on the same class
(LangGraph's ``abatch``) there is no ``_sync`` and the method runs on ``self``. The method object
is referenced, not its name, so type checkers and readers follow the call. ``AgentBase`` runs
``Kernel`` this way, and every async adapter runs its sync adapter the same way.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["in_thread", "on_calling_loop"]

_R = TypeVar("_R")
_P = ParamSpec("_P")

_calling_loop: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar("agentbase_calling_loop", default=None)


def in_thread(method: Callable[Concatenate[Any, _P], _R]) -> Callable[Concatenate[Any, _P], Coroutine[Any, Any, _R]]:
    """The async twin of ``method``: awaits ``method(self._sync, ...)`` (or ``method(self, ...)``
    when there is no ``_sync``) in a worker thread, with the same parameters.

    Usage::

        class AsyncMemory:
            search = in_thread(Memory.search)   # async def search(self, query, ...) -> Memory.search's type
    """

    @functools.wraps(method)
    async def run(self: Any, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        token = _calling_loop.set(asyncio.get_running_loop())
        try:
            return await asyncio.to_thread(method, getattr(self, "_sync", self), *args, **kwargs)
        finally:
            _calling_loop.reset(token)

    return run


def on_calling_loop(awaitable: Awaitable[_R]) -> _R:
    """Block the worker thread of an ``in_thread`` call until ``awaitable`` has run on the event
    loop that awaited the call: an ``async def`` callback (an OpenAI responder) must run on the
    loop its clients were made on, and that loop is free while the call waits for its thread.

    Raises:
        RuntimeError: Not called from code that an ``in_thread`` method runs.
    """
    loop = _calling_loop.get()
    if loop is None:
        raise RuntimeError("on_calling_loop() only works inside a method run by in_thread()")

    async def wait() -> _R:
        return await awaitable

    return asyncio.run_coroutine_threadsafe(wait(), loop).result()
