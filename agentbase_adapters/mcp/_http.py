"""Streamable HTTP for the MCP server, behind the shared loopback guard (``_http_guard``).

The guard answers before the SDK sees a request: wrong Host (DNS rebinding), remote clients
without a key, a missing or wrong bearer key, cross-origin writes, non-JSON bodies, bodies over
``BODY_LIMIT``. The SDK's own Host/Origin check stays on for loopback too.
"""

from __future__ import annotations

from typing import Any

from .._http_guard import HttpGuard, check_bind
from .._require import require

__all__ = ["BODY_LIMIT", "check_host", "guarded_app", "run_http"]

BODY_LIMIT = 1 << 20  # a tool call is a few KB; the largest one we accept (20k-char text x 100 messages) fits


def check_host(host: str, api_key: str | None) -> None:
    """Refuse to listen beyond loopback without an API key (``InvalidArgument``)."""
    check_bind(host, api_key)


def guarded_app(server: Any, *, host: str, api_key: str | None) -> Any:
    """The ASGI app serving ``server`` at ``/mcp``, wrapped in ``HttpGuard``."""
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host, max_request_body_size=BODY_LIMIT)
    return HttpGuard(app, api_key=api_key, body_limit=BODY_LIMIT)


def run_http(server: Any, *, host: str, port: int, api_key: str | None) -> None:
    """Serve until interrupted."""
    uvicorn = require("uvicorn", extra="mcp")
    uvicorn.run(guarded_app(server, host=host, api_key=api_key), host=host, port=port, log_level="warning")
