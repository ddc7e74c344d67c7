"""stdio for the MCP server: the SDK's transport, plus an answer to every frame it cannot parse.

The SDK's stdio transport drops a line it cannot parse (bad JSON, JSON nested deeper than
pydantic's parser allows, a lone-surrogate escape) without a reply, so the client that sent it
waits forever. Here such a line gets the JSON-RPC error it should: ``-32700`` (parse error) or
``-32600`` (not a JSON-RPC message), with the request's id when one can be read from the line.

A request whose ``id`` is neither a string nor an integer (an object, a list, a fraction, a
boolean, null) is worse: the SDK reads it as a notification, which never gets a reply. Lines are
screened before the SDK sees them, and such a request is answered ``-32600`` with id null (what
JSON-RPC 2.0 prescribes when the id cannot be read). stdin is read here for that, so the SDK
leaves fd 0 alone (it still diverts fd 1, which protects the protocol channel).
"""

from __future__ import annotations

import io
import json
import re
import sys
from typing import Any

from .._require import require

__all__ = ["run_stdio"]

_NO_REPLY = object()  # a notification: JSON-RPC never answers one
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
# what a request with an unreadable id becomes: a line the SDK refuses, recognised by _error_reply
_UNREADABLE_ID = "unreadable-id"
_UNREADABLE_LINE = json.dumps({"jsonrpc": "2.0", "agentbase": _UNREADABLE_ID}) + "\n"


async def run_stdio(server: Any) -> None:
    """Serve ``server`` (the SDK's low-level ``Server``) on this process's stdin/stdout until EOF."""
    anyio = require("anyio", extra="mcp")
    stdio = require("mcp.server.stdio", extra="mcp")
    lines = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    async with stdio.stdio_server(stdin=_Screened(lines)) as (sdk_read, write):
        send, receive = anyio.create_memory_object_stream(0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_forward, sdk_read, send, write)
            await server.run(receive, write, server.create_initialization_options())
            tg.cancel_scope.cancel()


class _Screened:
    """stdin's lines, each request whose id JSON-RPC cannot carry swapped for ``_UNREADABLE_LINE``."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines.__aiter__()

    def __aiter__(self) -> _Screened:
        return self

    async def __anext__(self) -> str:
        line: str = await self._lines.__anext__()
        return _UNREADABLE_LINE if _has_unreadable_id(line) else line


def _has_unreadable_id(line: str) -> bool:
    """A JSON object with an ``id`` that is not a str or an int (MCP: "MUST be a string or integer")."""
    if '"id"' not in line:
        return False
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False  # not JSON: the SDK's own parse error answers it
    if not isinstance(message, dict) or "id" not in message:
        return False
    value = message["id"]
    return isinstance(value, bool) or not isinstance(value, (int, str))


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
    if isinstance(raw, dict) and raw.get("agentbase") == _UNREADABLE_ID:
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=INVALID_REQUEST, message="Invalid request: id must be a string or an integer")))
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
