"""The ``agentbase`` command: inspect, check, repair and serve a database file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .errors import AgentBaseError

__all__ = ["main"]


def _kernel(args: argparse.Namespace) -> Any:
    from .kernel import Kernel

    embedder = "none" if getattr(args, "no_embed", False) else "auto"
    return Kernel(args.db, embedder=embedder, create=getattr(args, "create", False))


def _cmd_info(args: argparse.Namespace) -> int:
    with _kernel(args) as k:
        print(json.dumps(k.info() | {"entries": k.count(include_expired=True, include_invalid=True)}, indent=2))
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    with _kernel(args) as k:
        report = k.verify()
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


def _cmd_rebuild(args: argparse.Namespace) -> int:
    with _kernel(args) as k:
        report = k.rebuild()
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


def _cmd_find(args: argparse.Namespace) -> int:
    with _kernel(args) as k:
        result = k.find(args.query, top_k=args.top_k, user_id=args.user_id)
        for hit in result:
            print(f"{hit.score:.4f}\t{hit.id}\t{hit.entry.l2_full}")
        if result.degrade_reason:
            print(f"(degraded: {result.degrade_reason})", file=sys.stderr)
    return 0


def _cmd_serve_openai(args: argparse.Namespace) -> int:
    from agentbase_adapters.openai import serve

    serve(args.db, host=args.host, port=args.port, api_key=args.api_key)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentbase", description="Agent memory on one SQLite file.")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, fn: Any, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--db", default=None, help="database file (default: $AGENTBASE_PATH or ./agentbase.db)")
        p.set_defaults(fn=fn)
        return p

    command("info", _cmd_info, "what the file holds and runs with")
    command("verify", _cmd_verify, "check integrity, FTS and vectors; exit 1 on a problem")
    command("rebuild", _cmd_rebuild, "rebuild the FTS index and missing vectors from the entries")
    p = command("find", _cmd_find, "search the memories")
    p.add_argument("query")
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--user-id")
    p = command("serve-openai", _cmd_serve_openai, "serve OpenAI's threads/conversations API on this file")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--api-key", default=None, help="require this bearer key (needed to listen beyond loopback)")
    args = parser.parse_args(argv)
    try:
        return int(args.fn(args))
    except AgentBaseError as exc:
        print(f"agentbase: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
