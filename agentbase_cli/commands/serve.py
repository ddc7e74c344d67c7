"""Servers over the file: ``serve-openai`` (OpenAI threads/conversations wire format).

Each server lives in ``agentbase_adapters``; it is imported only when its command runs, so a
missing extra is reported by name (``pip install 'agentbase-memory[openai]'``) instead of
breaking every other command.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import click

from ..database import current_target, missing_database
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
@click.option("--api-key", metavar="KEY", help="The bearer key clients must send (OpenAI(api_key=KEY)). "
              "Also $AGENTBASE_API_KEY; without any key only loopback clients are answered.")
@click.option("--api-key-file", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="FILE",
              help="Read the key from the first line of FILE (keeps it out of the process list).")
@click.option("--allow-remote", is_flag=True, help="Listen beyond loopback without a key (anyone who can reach "
              "the port can read and write every memory).")
@click.option("--body-limit", type=click.IntRange(1), metavar="BYTES",
              help="Largest request body in bytes; bigger requests get 413. Default: 4 MiB.")
@click.option("--responder", metavar="MODULE:FUNCTION",
              help="The function that answers runs: responder(messages, context) -> reply text. "
                   "Without it, threads and messages work and runs are refused.")
@database_options()
@click.pass_context
def serve_openai(ctx: click.Context, host: str, port: int, api_key: str | None, api_key_file: Path | None,
                 allow_remote: bool, body_limit: int | None, responder: str | None) -> None:
    """Serve OpenAI's threads / conversations API on the database until Ctrl-C; the real openai client talks to it."""
    from agentbase_adapters.openai import serve

    target = current_target(ctx)
    if not target.path.exists():
        raise missing_database(target)
    respond = load_callable(responder) if responder else None
    click.echo(f"Serving {target.path} on http://{host}:{port}/v1 (Ctrl-C stops)", err=True)
    limits = {"body_limit": body_limit} if body_limit is not None else {}  # else the server's own default
    serve(target.path, host=host, port=port, api_key=api_key, api_key_file=api_key_file, embedder=target.embedder,
          responder=respond, allow_remote=allow_remote, **limits)


COMMANDS = [serve_openai]
