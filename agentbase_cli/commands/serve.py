"""Servers over the file: ``serve-openai`` (OpenAI threads/conversations wire format), ``mcp`` (Model
Context Protocol, for Claude Desktop, Cursor, ...) and ``web`` (the browser dashboard).

Each server lives in ``agentbase_adapters``; it is imported only when its command runs, so a
missing extra is reported by name (``pip install 'agentbase-memory[openai]'``) instead of
breaking every other command.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import click

from agentbase_adapters._require import require_extra

from ..database import Target, current_target, exists, missing_database, shown
from ..options import AgentbaseCommand, database_options

__all__ = ["COMMANDS"]


def load_callable(spec: str) -> Any:
    """``package.module:function`` -> the function (for ``--responder``)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise click.BadParameter(f"use MODULE:FUNCTION, got {spec!r}", param_hint="--responder")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise click.BadParameter(f"cannot load {spec!r}: {exc}", param_hint="--responder") from None
    if not callable(found):
        raise click.BadParameter(f"{spec!r} is not callable", param_hint="--responder")
    return found


@click.command("serve-openai", cls=AgentbaseCommand)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The interface to listen on. Beyond loopback it needs --api-key (or --allow-remote).")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="The TCP port.")
@click.option("--api-key", metavar="KEY", help="The bearer key clients must send (OpenAI(api_key=KEY)); visible in "
              "the process list: prefer --api-key-file or $AGENTBASE_API_KEY. Without a key only loopback clients "
              "are answered.")
@click.option("--api-key-file", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="FILE",
              help="Read the key from the first line of FILE (keeps it out of the process list).")
@click.option("--allow-remote", is_flag=True, help="Listen beyond loopback without a key (anyone who can reach "
              "the port can read and write every memory).")
@click.option("--body-limit", type=click.IntRange(1), metavar="BYTES",
              help="Largest request body in bytes; bigger requests get 413. Default: 4 MiB.")
@click.option("--responder", metavar="MODULE:FUNCTION",
              help="The function that answers runs: responder(messages, context) -> reply text. "
                   "Without it, threads and messages work and runs are refused.")
@click.option("--user-id", metavar="ID", help="Serve this user's threads only: threads it makes are this user's, "
              "any other thread or conversation is a 404. Without a scope, only the threads made through this server.")
@click.option("--agent-id", metavar="ID", help="Serve this agent's threads only (with --user-id: both).")
@click.option("--project-id", metavar="ID", help="Serve this project's threads only.")
@click.option("--keys", "keys_file", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="FILE",
              help='Several keys, each with its own scope: a JSON file {"KEY": {"user_id": "alice"}, ...} (chmod 600). '
                   "Instead of --api-key and --user-id / --agent-id / --project-id.")
@database_options()
@click.pass_context
def serve_openai(ctx: click.Context, host: str, port: int, api_key: str | None, api_key_file: Path | None,
                 allow_remote: bool, body_limit: int | None, responder: str | None, user_id: str | None,
                 agent_id: str | None, project_id: str | None, keys_file: Path | None) -> None:
    """Serve OpenAI's threads / conversations API on the database until Ctrl-C; the real openai client talks to it.

    A key reaches one scope: --user-id / --agent-id / --project-id for the server's key, or --keys
    for several keys; a thread outside it is a 404 (docs/server-security.md, "Scopes").
    """
    require_extra("openai")
    from agentbase_adapters.openai import serve

    target = existing_target(ctx)
    respond = load_callable(responder) if responder else None
    limits = {"body_limit": body_limit} if body_limit is not None else {}  # else the server's own default
    serve(target.path, host=host, port=port, api_key=api_key, api_key_file=api_key_file, embedder=target.embedder,
          ner=target.ner, responder=respond, allow_remote=allow_remote, user_id=user_id, agent_id=agent_id,
          project_id=project_id, key_scopes_file=keys_file, **limits)


def existing_target(ctx: click.Context) -> Target:
    """The database to serve; servers would create a missing file, the command asks for ``init`` instead."""
    target = current_target(ctx)
    if not exists(target.path):
        raise missing_database(target)
    return target


def _api_key(api_key: str | None, api_key_file: Path | None) -> str | None:
    from agentbase_adapters._http_guard import (
        resolve_api_key,  # flag > file > $AGENTBASE_API_KEY
    )

    return resolve_api_key(api_key, api_key_file)


KEY_HELP = ("The bearer key HTTP clients must send; visible in the process list: prefer --api-key-file or "
            "$AGENTBASE_API_KEY. Without a key only loopback clients are answered.")
KEY_FILE_HELP = "Read the key from the first line of FILE (keeps it out of the process list)."


@click.command(cls=AgentbaseCommand)
@click.option("--user-id", metavar="ID", envvar="AGENTBASE_USER_ID",
              help="Serve this user's memories (also $AGENTBASE_USER_ID). With neither --user-id nor --agent-id "
                   "nor --multi-tenant: the user \"default\".")
@click.option("--agent-id", metavar="ID", envvar="AGENTBASE_AGENT_ID",
              help="Serve this agent's memories (also $AGENTBASE_AGENT_ID).")
@click.option("--multi-tenant", is_flag=True, help="Take the scope from each tool call's user_id / agent_id instead.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: what MCP clients launch (stdout is the protocol channel); http: streamable HTTP at /mcp.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The interface for --transport http; beyond loopback it needs a key.")
@click.option("--port", type=click.IntRange(1, 65535), help="The TCP port for --transport http (default 8766).")
@click.option("--api-key", metavar="KEY", help=KEY_HELP)
@click.option("--api-key-file", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="FILE",
              help=KEY_FILE_HELP)
@database_options()
@click.pass_context
def mcp(ctx: click.Context, user_id: str | None, agent_id: str | None, multi_tenant: bool, transport: str, host: str,
        port: int | None, api_key: str | None, api_key_file: Path | None) -> None:
    """Serve the database to MCP clients (Claude Desktop, Cursor, ...): memory tools, no LLM, no API key.

    In a client's MCP config: {"command": "agentbase", "args": ["--db", "/path/memory.db", "mcp", "--user-id", "me"]}
    """
    require_extra("mcp")
    from agentbase_adapters.mcp import serve

    target = existing_target(ctx)
    ports = {"port": port} if port is not None else {}
    serve(target.path, user_id=user_id, agent_id=agent_id, multi_tenant=multi_tenant, transport=transport,
          host=host, api_key=_api_key(api_key, api_key_file), embedder=target.embedder, ner=target.ner, **ports)


@click.command(cls=AgentbaseCommand)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The interface to listen on; beyond loopback it needs a key.")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True, help="The TCP port.")
@click.option("--allow-edit", is_flag=True, help="Allow editing and deleting memories from the browser "
              "(read-only without it).")
@click.option("--api-key", metavar="KEY", help=KEY_HELP)
@click.option("--api-key-file", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="FILE",
              help=KEY_FILE_HELP)
@database_options()
@click.pass_context
def web(ctx: click.Context, host: str, port: int, allow_edit: bool, api_key: str | None,
        api_key_file: Path | None) -> None:
    """Browse the database in a web browser (a dashboard on http://HOST:PORT/) until Ctrl-C."""
    require_extra("web")
    from agentbase_adapters._http_guard import check_bind
    from agentbase_adapters.web import serve

    target = existing_target(ctx)
    key = _api_key(api_key, api_key_file)
    check_bind(host, key)  # refuse a public interface without a key before saying we serve
    click.echo(f"agentbase dashboard for {shown(target.path)} on http://{host}:{port}/ (Ctrl-C stops it)", err=True)
    serve(target.path, port=port, host=host, allow_edit=allow_edit, api_key=key, embedder=target.embedder)


COMMANDS = [serve_openai, mcp, web]
