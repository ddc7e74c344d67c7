"""The ``agentbase`` click group: global options, the command list, and the exit code.

A new command is a click command in a module of ``agentbase_cli.commands`` listed in its
``COMMANDS``; add the module to ``COMMAND_MODULES`` below. Build it with ``AgentbaseCommand``
(via ``@click.command(cls=AgentbaseCommand)``), ``database_options()`` and ``open_kernel`` so it
picks the database and maps errors like every other command (see docs/cli.md).
"""

from __future__ import annotations

import importlib

import click

from agentbase_kernel import __version__

from .database import Settings
from .options import AgentbaseGroup, database_options

__all__ = ["COMMAND_MODULES", "cli", "run"]

COMMAND_MODULES = ("maintenance", "entries", "sessions", "serve", "transfer", "lifecycle", "audit", "governed",
                   "proposals", "outcomes")


@click.group(cls=AgentbaseGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="agentbase", message="%(prog)s %(version)s",
                      help="Print the version and exit.")
@database_options(envvars=True)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Agent memory on a SQLite file or PostgreSQL: create it, add, search, inspect, check and serve it.

    Start with `agentbase init`, then `agentbase add "..."` and `agentbase find "..."`.
    Exit codes: 0 ok, 1 not found, 2 usage, 3 agentbase error, 4 check failed (docs/cli.md).
    """
    ctx.ensure_object(Settings)


for _name in COMMAND_MODULES:
    for _command in importlib.import_module(f"{__package__}.commands.{_name}").COMMANDS:
        cli.add_command(_command)


def run(argv: list[str] | None = None) -> int:
    """Run ``agentbase`` on ``argv``; returns the exit code instead of exiting."""
    try:
        cli.main(args=argv, prog_name="agentbase", standalone_mode=True)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0
