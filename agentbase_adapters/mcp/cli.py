"""``agentbase-mcp``: serve one agentbase file to MCP clients over stdio or streamable HTTP.

The database is chosen as by every other command: ``--db PATH``, else ``$AGENTBASE_PATH``, else the
``.agentbase`` pointer that ``agentbase init --data-dir`` wrote here or in a parent folder, else ``./agentbase.db``; the scope from ``--user-id`` / ``--agent-id`` or ``$AGENTBASE_USER_ID`` /
``$AGENTBASE_AGENT_ID`` (``user_id="default"`` when neither is given).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from typing import Any, Literal

from agentbase_kernel import AgentBase, AgentBaseError, InvalidArgument

from .._http_guard import resolve_api_key
from .._require import require, require_extra
from ._stdio import run_stdio
from ._tenancy import Tenancy
from .server import create_server

__all__ = ["DEFAULT_PORT", "DEFAULT_USER", "main", "serve"]

log = logging.getLogger("agentbase.mcp")

DEFAULT_PORT = 8766
DEFAULT_USER = "default"


def serve(db_path: str | os.PathLike[str] | None = None, *, user_id: str | None = None, agent_id: str | None = None,
          multi_tenant: bool = False, transport: Literal["stdio", "http"] = "stdio", host: str = "127.0.0.1",
          port: int = DEFAULT_PORT, api_key: str | None = None, embedder: Any = "auto", ner: str | None = "auto") -> None:
    """Serve the file at ``db_path`` to MCP clients until the client hangs up (stdio) or Ctrl-C (http).

    Args:
        db_path: The agentbase file (created if missing); ``None``: ``$AGENTBASE_PATH``, the ``.agentbase`` pointer, ``./agentbase.db`` (``locate_database``).
        user_id: The user whose memories every call reads and writes (single-tenant).
        agent_id: The agent whose memories every call reads and writes (single-tenant; with or without a user).
        multi_tenant: Take the scope from each call's ``user_id`` / ``agent_id`` arguments instead.
        transport: ``"stdio"`` (what Claude Desktop and Cursor launch) or ``"http"`` (streamable HTTP at ``/mcp``).
        host: The interface for ``http``; loopback unless an ``api_key`` is set.
        port: The TCP port for ``http``.
        api_key: The bearer key HTTP clients must send.
        embedder: Passed to ``AgentBase`` (``"auto"``, ``"none"``, ``"minilm"``, an ``Embedder``, ...).
        ner: Passed to ``AgentBase`` (``"auto"``, ``"regex"``, ``None``).

    Raises:
        InvalidArgument: The scope options contradict each other.
        MissingDependency: The ``mcp`` extra is not installed (checked first).
    """
    require_extra("mcp")
    if not multi_tenant and not user_id and not agent_id:
        user_id = DEFAULT_USER
    tenancy = Tenancy(user_id=user_id, agent_id=agent_id, multi=multi_tenant)
    if transport not in ("stdio", "http"):
        raise ValueError(f"transport must be 'stdio' or 'http', got {transport!r}")
    if transport == "http":
        from ._http import check_host

        check_host(host, api_key)
    anyio = require("anyio", extra="mcp")
    db = AgentBase(db_path, embedder=embedder, ner=ner)
    server = create_server(db, tenancy)
    # Loading spaCy and the embedder takes seconds (15 s on a busy machine); the client's handshake
    # should not wait for it. The first tool call waits instead (the kernel opens under a lock), and a
    # file that cannot be opened is reported by every call as a tool error, in the model's view.
    warm_up = threading.Thread(target=_open, args=(db,), name="agentbase-mcp-open", daemon=True)
    warm_up.start()
    try:
        if transport == "stdio":
            anyio.run(run_stdio, server)
        else:
            from ._http import run_http

            run_http(server, host=host, port=port, api_key=api_key)
    finally:
        warm_up.join()
        db.sync.close()


def _open(db: AgentBase) -> None:
    try:
        db.sync.initialize()
    except AgentBaseError as exc:
        log.error("cannot open %s: %s", db.path, exc)


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    p = argparse.ArgumentParser(prog="agentbase-mcp", description="Serve an agentbase file as the memory of MCP clients.")
    p.add_argument("--db", default=env("AGENTBASE_PATH"), help="the database file (default $AGENTBASE_PATH, "
                   "else the .agentbase pointer of this folder or a parent, else ./agentbase.db)")
    p.add_argument("--user-id", default=env("AGENTBASE_USER_ID"), help="serve this user's memories ($AGENTBASE_USER_ID)")
    p.add_argument("--agent-id", default=env("AGENTBASE_AGENT_ID"), help="serve this agent's memories ($AGENTBASE_AGENT_ID)")
    p.add_argument("--multi-tenant", action="store_true",
                   help="every tool call names its user_id (no --user-id/--agent-id)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: interface to listen on (loopback unless --api-key)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"http: port (default {DEFAULT_PORT})")
    p.add_argument("--api-key", help="http: bearer key clients must send (visible in the process list: "
                   "prefer --api-key-file or $AGENTBASE_API_KEY)")
    p.add_argument("--api-key-file", help="http: a file whose first line is the key")
    p.add_argument("--embedder", default="auto", help="auto, none, minilm, minilm-int8, ... (default auto)")
    return p


def main(argv: list[str] | None = None) -> int:
    """The ``agentbase-mcp`` command. Logs go to stderr: stdout is the MCP channel."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="agentbase-mcp: %(message)s")
    try:
        require_extra("mcp")
        api_key = resolve_api_key(args.api_key, args.api_key_file) if args.transport == "http" else None
        serve(args.db, user_id=args.user_id, agent_id=args.agent_id, multi_tenant=args.multi_tenant,
              transport=args.transport, host=args.host, port=args.port, api_key=api_key, embedder=args.embedder)
    except (InvalidArgument, ValueError) as exc:  # exit codes as the agentbase command's (docs/cli.md)
        print(f"agentbase-mcp: {exc}", file=sys.stderr)
        return 2
    except AgentBaseError as exc:  # a missing extra, a file that cannot be used
        print(f"agentbase-mcp: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
