"""OpenAI threads and conversations over agentbase: an in-process adapter and a wire-compatible server.

::

    OpenAIAssistantAdapter / AsyncOpenAIAssistantAdapter   adapter.py  (no framework needed)
    create_app / serve                                     app.py      (starlette, uvicorn)
    AgentBaseSession                                       agents_session.py (openai-agents ``Session``)
    to_sdk                                                 adapter.py  (JSON -> the openai SDK's types)

Names load lazily, so importing this package imports neither the openai SDK nor Starlette.
Needs ``pip install 'agentbase-memory[openai]'`` for the server and the SDK types.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentbase_adapters.openai.adapter import (
        AsyncOpenAIAssistantAdapter,
        OpenAIAssistantAdapter,
        Responder,
        to_sdk,
    )
    from agentbase_adapters.openai.agents_session import AgentBaseSession
    from agentbase_adapters.openai.app import create_app, load_key_scopes, serve

__all__ = [
    "AgentBaseSession",
    "AsyncOpenAIAssistantAdapter",
    "OpenAIAssistantAdapter",
    "Responder",
    "create_app",
    "load_key_scopes",
    "serve",
    "to_sdk",
]

_MODULES = {
    "AgentBaseSession": "agents_session",
    "AsyncOpenAIAssistantAdapter": "adapter",
    "OpenAIAssistantAdapter": "adapter",
    "Responder": "adapter",
    "create_app": "app",
    "load_key_scopes": "app",
    "serve": "app",
    "to_sdk": "adapter",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
