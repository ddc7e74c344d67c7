"""stdio for the MCP server: the SDK's transport, plus an answer to every frame it cannot parse.

The SDK's stdio transport drops a line it cannot parse (bad JSON, JSON nested deeper than
pydantic's parser allows, a lone-surrogate escape) without a reply, so the client that sent it
waits forever. Here such a line gets the JSON-RPC error it should: ``-32700`` (parse error) or
``-32600`` (not a JSON-RPC message), with the request's id when one can be read from the line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._require import require

__all__ = ["run_stdio"]

_NO_REPLY = object()  # a notification: JSON-RPC never answers one
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


async def run_stdio(server: Any) -> None:
    """Serve ``server`` (the SDK's low-level ``Server``) on this process's stdin/stdout until EOF."""
    anyio = require("anyio", extra="mcp")
    stdio = require("mcp.server.stdio", extra="mcp")
    async with stdio.stdio_server() as (sdk_read, write):
        send, receive = anyio.create_memory_object_stream(0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_forward, sdk_read, send, write)
            await server.run(receive, write, server.create_initialization_options())
            tg.cancel_scope.cancel()


async def _forward(sdk_read: Any, send: Any, write: Any) -> None:
    async with send:
        async for item in sdk_read:
            if isinstance(item, Exception):
                reply = _error_reply(item)
                if reply is not None:
                    await write.send(reply)
                continue
            await send.send(item)


def _error_reply(exc: Exception) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

    errors = exc.errors() if hasattr(exc, "errors") else []
    first = errors[0] if errors else {}
    raw = first.get("input")
    request_id = _request_id(raw)
    if request_id is _NO_REPLY:
        return None
    if first.get("type") == "json_invalid":
        code, message = PARSE_ERROR, f"Parse error: {first.get('msg', 'invalid JSON')}"
    else:
        code, message = INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request, notification or response"
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)))


def _request_id(raw: Any) -> Any:
    """The id of the request in ``raw`` (a line, or what it parsed to), ``None`` if unknown."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)  # Python's parser reads what pydantic's refused (deeper nesting, lone surrogates)
        except (ValueError, RecursionError):
            match = _ID.search(raw[:4096])
            if match is None:
                return None
            try:
                return json.loads(match.group(1))
            except ValueError:
                return None
    if isinstance(raw, dict):
        if "id" not in raw:
            return _NO_REPLY if "method" in raw else None
        value = raw["id"]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            return None
        return value
    return None
