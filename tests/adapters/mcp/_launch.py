"""Start the MCP server in a subprocess with the deterministic test embedder and regex NER.

``python -m tests.adapters.mcp._launch <agentbase-mcp options>``: the same options and the same
``serve()`` as the real command, only the models swapped for fast stand-ins.
"""

from __future__ import annotations

import sys

from agentbase_adapters._http_guard import resolve_api_key
from agentbase_adapters.mcp import serve
from agentbase_adapters.mcp.cli import _parser
from tests.conftest import HashEmbedder


def run(argv: list[str]) -> None:
    args = _parser().parse_args(argv)
    serve(args.db, user_id=args.user_id, agent_id=args.agent_id, multi_tenant=args.multi_tenant,
          transport=args.transport, host=args.host, port=args.port,
          api_key=resolve_api_key(args.api_key, args.api_key_file) if args.transport == "http" else None,
          embedder=HashEmbedder(), ner="regex")


if __name__ == "__main__":
    run(sys.argv[1:])
