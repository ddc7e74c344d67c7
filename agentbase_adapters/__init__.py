"""Drop-in adapters over one agentbase database. Importing this package imports no framework.

Each name loads its module on first use; a missing framework raises ``MissingDependency``
naming the extra to install:

| name | module | extra |
| --- | --- | --- |
| ``MinimalAdapter`` | ``agentbase_adapters.minimal`` | (none) |
| ``Memory``, ``AsyncMemory``, ``Mem0Adapter``, ``AsyncMem0Adapter`` | ``agentbase_adapters.mem0`` | ``mem0`` (optional: only for Mem0's exception types) |
| ``AgentBaseChatMessageHistory``, ``LangChainMemoryAdapter`` | ``agentbase_adapters.langchain`` | ``langchain`` |
| ``AgentBaseStore`` | ``agentbase_adapters.langgraph`` | ``langgraph`` |
| ``AgentBaseChatStore``, ``AgentBaseAsyncChatStore`` | ``agentbase_adapters.llamaindex`` | ``llamaindex`` |
| ``OpenAIAssistantAdapter``, ``create_app``, ``serve`` | ``agentbase_adapters.openai`` | ``openai`` |
| ``AgentBaseMemory`` (Claude Agent SDK hooks and tools), ``AgentBaseSessionStore`` | ``agentbase_adapters.claude`` | ``claude`` |

Hermes Agent's memory provider is ``agentbase_adapters.hermes.AgentBaseMemoryProvider`` (extra ``hermes``); it is
not re-exported here, as hermes-agent does not install beside ``[all]`` (see pyproject.toml).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "AgentBaseMemory": "claude",
    "AgentBaseSessionStore": "claude",
    "AgentBaseAsyncChatStore": "llamaindex",
    "AgentBaseChatMessageHistory": "langchain",
    "AgentBaseChatStore": "llamaindex",
    "AgentBaseStore": "langgraph",
    "AsyncMem0Adapter": "mem0",
    "AsyncMemory": "mem0",
    "LangChainMemoryAdapter": "langchain",
    "Mem0Adapter": "mem0",
    "Memory": "mem0",
    "MinimalAdapter": "minimal",
    "OpenAIAssistantAdapter": "openai",
    "create_app": "openai",
    "serve": "openai",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
