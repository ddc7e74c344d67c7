"""Memory lifecycle from the command line: consolidate a scope (docs/lifecycle.md)."""

from __future__ import annotations

from typing import Any

import click

from ..database import Settings, open_kernel
from ..options import AgentbaseCommand, database_options, json_option, scope_from, scope_options
from ..output import echo_json, one_line
from ..progress import ticker

__all__ = ["COMMANDS"]


@click.command(cls=AgentbaseCommand)
@scope_options
@click.option("--older-than", "older_than", type=click.FloatRange(min=0), metavar="DAYS",
              help="Fold memories created more than DAYS ago [default: lifecycle.consolidate_older_than_days].")
@click.option("--max-importance", type=click.FloatRange(0, 1), metavar="X",
              help="Only memories with importance <= X [default: lifecycle.consolidate_max_importance].")
@click.option("--min-items", type=click.IntRange(min=2), metavar="N",
              help="Do nothing unless at least N memories qualify [default: lifecycle.consolidate_min_items].")
@click.option("--actor", metavar="NAME", help="Who runs it (recorded in history and the audit log).")
@json_option
@database_options()
@click.pass_context
def consolidate(ctx: click.Context, older_than: float | None, max_importance: float | None,
                min_items: int | None, actor: str | None, as_json: bool, **scope: Any) -> None:
    """Fold a scope's older, low-importance memories into one summary memory.

    The sources are archived (out of search, kept in history, `restore`-able from the API) and
    linked from the summary. Running it again finds nothing more to fold.
    """
    chosen = scope_from(scope)
    if not chosen:
        raise click.UsageError("Give the scope to consolidate: --user-id, --agent-id, --project-id or --session-id.")
    # one transaction (select, summarise, archive): elapsed time on stderr, not a count
    with open_kernel(ctx, models=True) as kernel, ticker("consolidating", quiet=ctx.ensure_object(Settings).quiet):
        result = kernel.consolidate(user_id=chosen.get("user_id"), agent_id=chosen.get("agent_id"),
                                    project_id=chosen.get("project_id"), session_id=chosen.get("session_id"),
                                    older_than=older_than, max_importance=max_importance, min_items=min_items,
                                    actor=actor)
    if as_json:
        echo_json({"summary": result.summary, "sources": result.sources})
        return
    if result.summary is None:
        click.echo("Nothing to consolidate: too few older, low-importance memories in this scope.")
        return
    click.echo(f"Folded {len(result.sources)} memories into {result.summary.id}: "
               f"{one_line(result.summary.l2_full, 80)}")


COMMANDS = [consolidate]
