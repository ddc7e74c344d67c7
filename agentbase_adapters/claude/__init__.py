"""Claude Agent SDK memory: hooks that recall and record, and memory tools on an in-process MCP server.

    from agentbase_adapters.claude import AgentBaseMemory
    options = AgentBaseMemory("memory.db", user_id="alice").attach(ClaudeAgentOptions(...))

Modules, one job each::

    _entities.py   the files a tool call is about (file_path / notebook_path / path / *_path / paths)
    _memory.py     AgentBaseMemory: UserPromptSubmit / PreToolUse / PostToolUse / Stop hooks, the
                   memory_search / memory_remember / memory_forget tools, fail-open through _failopen
    _session_store.py  AgentBaseSessionStore: the SDK's SessionStore (transcript mirroring and resume)

Install with ``pip install 'agentbase-memory[claude]'``.
"""

from __future__ import annotations

from ._entities import tool_entities
from ._memory import ENTITY_KEY, AgentBaseMemory
from ._session_store import AgentBaseSessionStore

__all__ = ["ENTITY_KEY", "AgentBaseMemory", "AgentBaseSessionStore", "tool_entities"]
