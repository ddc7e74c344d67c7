"""Conversations: ``agentbase session create | add-message | commit | show | list``."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..database import open_kernel
from ..options import (
    AgentbaseGroup,
    database_options,
    json_option,
    metadata_option,
    parse_metadata,
)
from ..output import echo_fields, echo_json, entry_lines, one_line, session_row, table

__all__ = ["COMMANDS"]


def _owner_options(fn: Any) -> Any:
    for key, who in reversed((("user-id", "user"), ("agent-id", "agent"), ("project-id", "project"))):
        fn = click.option(f"--{key}", metavar="ID", help=f"The {who} the session belongs to.")(fn)
    return fn


def _owner(params: dict[str, Any]) -> dict[str, str]:
    return {k: params[k] for k in ("user_id", "agent_id", "project_id") if params.get(k) is not None}


@click.group(cls=AgentbaseGroup)
def session() -> None:
    """Conversations: ordered messages whose turns also become searchable memories."""


@session.command()
@click.option("--session-id", metavar="ID", help="Use this id (default: a new sess_... id). An existing id is reused.")
@_owner_options
@metadata_option("Session metadata: a JSON object or KEY=VALUE items.")
@json_option
@database_options()
@click.pass_context
def create(ctx: click.Context, session_id: str | None, metadata: tuple[str, ...], as_json: bool,
           **owner: Any) -> None:
    """Create a session and print its id."""
    with open_kernel(ctx, models=False) as kernel:
        created = kernel.create_session(session_id, metadata=parse_metadata(metadata), **_owner(owner))
    echo_json(created) if as_json else click.echo(created.id)


@session.command("add-message")
@click.argument("session_id", metavar="SESSION_ID")
@click.option("--role", required=True, help="Who speaks: user, assistant, system, tool, ...")
@click.option("--content", required=True, help="The message text (\"-\" reads stdin).")
@click.option("--name", help="The speaker's name (e.g. Alice), kept as the memory's actor.")
@click.option("--no-ingest", is_flag=True, help="Keep the message in the session only: no memory is made of it.")
@_owner_options
@metadata_option("Message metadata: a JSON object or KEY=VALUE items.")
@json_option
@database_options()
@click.pass_context
def add_message(ctx: click.Context, session_id: str, role: str, content: str, name: str | None, no_ingest: bool,
                metadata: tuple[str, ...], as_json: bool, **owner: Any) -> None:
    """Append one message to SESSION_ID (created if new) and print the message id."""
    text = sys.stdin.read() if content == "-" else content
    with open_kernel(ctx, models=not no_ingest) as kernel:
        message = kernel.add_message(session_id, role, text, name=name, metadata=parse_metadata(metadata),
                                     ingest=not no_ingest, **_owner(owner))
    echo_json(message) if as_json else click.echo(message.id)


@session.command()
@click.argument("session_id", metavar="SESSION_ID")
@json_option
@database_options()
@click.pass_context
def commit(ctx: click.Context, session_id: str, as_json: bool) -> None:
    """Write the session's summary (rule-based, no LLM) as a memory and print it."""
    with open_kernel(ctx, models=True) as kernel:
        summary = kernel.commit_session(session_id)
    if as_json:
        echo_json(summary)
    else:
        echo_fields(entry_lines(summary)[:2])


@session.command()
@click.argument("session_id", metavar="SESSION_ID")
@click.option("--limit", type=click.IntRange(0), default=0, help="Show at most this many messages (0: all).")
@json_option
@database_options()
@click.pass_context
def show(ctx: click.Context, session_id: str, limit: int, as_json: bool) -> None:
    """Show a session and its messages, in order."""
    with open_kernel(ctx, models=False) as kernel:
        found = kernel.get_session(session_id)
        messages = kernel.list_messages(session_id, limit=limit or None)
    if as_json:
        echo_json({"session": found, "messages": messages})
        return
    fields: list[tuple[str, Any]] = [("id", found.id), ("scope", session_row(found)[1]),
                                     ("created_at", session_row(found)[2]), ("messages", len(messages)),
                                     ("committed_at", found.committed_at and found.committed_at.isoformat(timespec="seconds")),
                                     ("summary_entry", found.summary_entry_id)]
    echo_fields([(k, v) for k, v in fields if v is not None])
    if messages:
        click.echo()
        table((m.seq, m.name or m.role, m.id, one_line(m.content)) for m in messages)


@session.command("list")
@_owner_options
@click.option("--limit", type=click.IntRange(0), default=100, show_default=True, help="At most this many (0: all).")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True, help="Skip this many first.")
@json_option
@database_options()
@click.pass_context
def list_(ctx: click.Context, limit: int, offset: int, as_json: bool, **owner: Any) -> None:
    """List sessions: id, scope and creation time."""
    with open_kernel(ctx, models=False) as kernel:
        sessions = kernel.list_sessions(limit=limit or None, offset=offset, **_owner(owner))
    echo_json(sessions) if as_json else table(session_row(s) for s in sessions)


COMMANDS = [session]
