"""Mem0 drop-in: change ``from mem0 import Memory`` to ``from agentbase_adapters.mem0 import Memory``.

Mem0 concepts map onto the kernel like this: a memory is an ``Entry`` (``memory`` = ``l2_full``,
``hash`` = ``content_hash``), ``user_id``/``agent_id`` are the kernel's, ``run_id`` is the
kernel's ``session_id``, a message ``name`` is the entry's ``actor``, ``expiration_date`` is
``expires_at`` (the end of that UTC day), ``memory_type="procedural_memory"`` is a ``skill``
entry. mem0ai itself is never imported; no LLM, no HTTP client and no telemetry is ever touched.

Modules, one job each::

    _config.py    Mem0's config dict -> an AgentBase (file path, embedder)
    _args.py      call arguments -> kernel keywords (scope ids, dates, messages, both calling styles)
    _filters.py   Mem0's filter language
    _records.py   kernel entries <-> Mem0's memory dicts
    _errors.py    ValidationError / MemoryNotFound, also mem0's own classes when mem0 is loaded
    _memory.py    Mem0Adapter / AsyncMem0Adapter / Memory / AsyncMemory
"""

from __future__ import annotations

from ._config import embedder_spec as _embedder_spec  # noqa: F401  (tests reach the provider table)
from ._errors import MemoryNotFound, ValidationError
from ._memory import AsyncMem0Adapter, AsyncMemory, Mem0Adapter, Memory

__all__ = [
    "AsyncMem0Adapter",
    "AsyncMemory",
    "Mem0Adapter",
    "Memory",
    "MemoryNotFound",
    "ValidationError",
]
