"""Provenance and trust: who wrote an entry, through which path, and how far to believe it.

Every entry records its ``source`` (the adapter or path that wrote it: ``mem0``, ``langchain``,
``langgraph``, ``llamaindex``, ``openai``, ``minimal``, ``mcp``, ``cli``, ``import``, ``kernel``),
``written_by`` (the agent id of the kernel view that wrote it, else the entry's own ``agent_id``),
its ``role`` (user / assistant / tool / system) and a ``trust`` in [0, 1]. Trust defaults from the
role - what the user says about themselves is the most reliable, a tool's output the least - and
the caller may set it. Imports keep the exported value.

The writer is a context variable set by the kernel's write methods (``Kernel.view(source=...)``),
so ingest stamps every row it builds - turns, facts, summaries - without passing it around.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument

__all__ = ["ROLE_TRUST", "SOURCES", "UNKNOWN_ROLE_TRUST", "Writer", "check_trust", "default_trust",
           "stamp", "writing_as"]

#: the trust an entry gets from its role when the caller gives none (the backends use it too, for
#: old files and old exports)
ROLE_TRUST: dict[str, float] = {"user": 1.0, "human": 1.0, "system": 0.9, "assistant": 0.7, "ai": 0.7,
                                "tool": 0.5, "function": 0.5}
#: a role not listed above (a named speaker, a custom role)
UNKNOWN_ROLE_TRUST = 0.7


def default_trust(role: str | None) -> float:
    return ROLE_TRUST.get((role or "").casefold(), UNKNOWN_ROLE_TRUST)


#: the paths that write entries; any other non-empty name is accepted too
SOURCES = ("kernel", "mem0", "langchain", "langgraph", "llamaindex", "openai", "minimal", "mcp", "cli", "import")


@dataclass(frozen=True)
class Writer:
    """Who is writing now: the path (``source``) and the acting agent, if any."""

    source: str = "kernel"
    agent: str | None = None


_WRITER: ContextVar[Writer | None] = ContextVar("agentbase_writer", default=None)


@contextlib.contextmanager
def writing_as(writer: Writer) -> Iterator[None]:
    """Rows built inside are stamped with ``writer`` (the outermost kernel call wins)."""
    if _WRITER.get() is not None:
        yield
        return
    token = _WRITER.set(writer)
    try:
        yield
    finally:
        _WRITER.reset(token)


def check_trust(value: Any) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
        raise InvalidArgument(f"trust must be a number in [0, 1], got {value!r}", param="trust")
    return float(value)


def stamp(item: dict[str, Any]) -> dict[str, Any]:
    """The provenance columns of a row built from ``item``: ``trust``, ``source``, ``written_by``."""
    writer = _WRITER.get() or Writer()
    trust = item.get("trust")
    return {"trust": float(trust) if trust is not None else default_trust(item.get("role", "user")),
            "source": item.get("source") or writer.source,
            "written_by": item.get("written_by") or writer.agent or item.get("agent_id")}
