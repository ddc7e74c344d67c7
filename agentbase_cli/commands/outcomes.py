"""Outcomes from the command line: ``agentbase outcomes record|list|revert`` (docs/governance.md)."""

from __future__ import annotations

from typing import Any

import click

from ..database import open_kernel
from ..options import AgentbaseGroup, database_options, json_option
from ..output import echo_json, table

__all__ = ["COMMANDS"]


def _owner_options(fn: Any) -> Any:
    for key, who in (("project_id", "project"), ("agent_id", "agent"), ("user_id", "user")):
        fn = click.option(f"--{key.replace('_', '-')}", key, metavar="ID", help=f"The {who} the session belongs to.")(fn)
    return fn


@click.group(cls=AgentbaseGroup)
def outcomes() -> None:
    """How sessions went: outcomes move the confidence of the memories they retrieved."""


@outcomes.command()
@click.argument("session_id", metavar="SESSION_ID")
@click.argument("outcome_type", metavar="TYPE")
@click.option("--value", type=click.FloatRange(0, 1), help="How well it went in [0, 1] (default: TYPE's, e.g. success 1).")
@click.option("--entry", "entries", multiple=True, metavar="ID", help="Judge exactly this memory (repeatable).")
@click.option("--top-k", type=click.IntRange(1), help="Only the first K results of each of the session's searches.")
@click.option("--actor", metavar="NAME", help="Who reports it (kept on the outcome and in the audit log).")
@_owner_options
@json_option
@database_options()
@click.pass_context
def record(ctx: click.Context, session_id: str, outcome_type: str, value: float | None, entries: tuple[str, ...],
           top_k: int | None, actor: str | None, as_json: bool, **owner: Any) -> None:
    """Record an outcome of SESSION_ID (success, partial, failure ...) and print each memory's new confidence."""
    with open_kernel(ctx, models=False) as kernel:
        outcome = kernel.record_outcome(session_id, outcome_type, value, entry_ids=list(entries) or None,
                                        top_k=top_k, actor=actor, **owner)
    if as_json:
        echo_json(outcome)
        return
    click.echo(outcome.id)
    table((e["entry_id"], f"{e['confidence_before']:.3f}", f"{e['confidence_after']:.3f}") for e in outcome.effects)


@outcomes.command("list")
@click.option("--session-id", metavar="ID", help="Only this session's outcomes.")
@_owner_options
@click.option("--limit", type=click.IntRange(0), default=100, show_default=True, help="At most this many (0: all).")
@json_option
@database_options()
@click.pass_context
def list_(ctx: click.Context, session_id: str | None, limit: int, as_json: bool, **owner: Any) -> None:
    """List outcomes, newest first: id, time, session, type, value, memories judged, reverted."""
    with open_kernel(ctx, models=False) as kernel:
        found = kernel.list_outcomes(session_id=session_id, limit=limit or None, **owner)
    if as_json:
        echo_json(found)
        return
    table((o.id, o.created_at.isoformat(timespec="seconds") if o.created_at else None, o.session_id, o.outcome_type,
           f"{o.value:g}", len(o.effects), "reverted" if o.reverted_at else None) for o in found)


@outcomes.command()
@click.argument("outcome_id", metavar="OUTCOME_ID")
@click.option("--actor", metavar="NAME", help="Who reverts it (kept in the audit log).")
@json_option
@database_options()
@click.pass_context
def revert(ctx: click.Context, outcome_id: str, actor: str | None, as_json: bool) -> None:
    """Take an outcome back: the memories' confidence returns to what it was."""
    with open_kernel(ctx, models=False) as kernel:
        outcome = kernel.revert_outcome(outcome_id, actor=actor)
    echo_json(outcome) if as_json else click.echo(f"Reverted {outcome.id}")


COMMANDS = [outcomes]
