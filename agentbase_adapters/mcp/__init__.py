"""agentbase as the memory of any MCP client (Claude Desktop, Cursor, agents built on MCP).

::

    agentbase-mcp --db memory.db --user-id alice          # stdio, what desktop clients launch
    agentbase-mcp --transport http --port 8766            # streamable HTTP on loopback

    create_server(db, Tenancy(...))   server.py   the SDK's low-level Server with our tools
    serve(...) / main()               cli.py      open the file, pick the transport, run
    Tenancy                           _tenancy.py single-tenant (fixed scope) or multi-tenant

Names load lazily; the server needs ``pip install 'agentbase-memory[mcp]'`` (the official ``mcp`` SDK).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentbase_adapters.mcp._tenancy import Tenancy
    from agentbase_adapters.mcp.cli import main, serve
    from agentbase_adapters.mcp.server import create_server

__all__ = ["Tenancy", "create_server", "main", "serve"]

_MODULES = {"Tenancy": "_tenancy", "create_server": "server", "main": "cli", "serve": "cli"}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
