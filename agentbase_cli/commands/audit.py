"""The audit log: ``agentbase audit`` (who wrote, updated, superseded, deleted or read which entries)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from ..database import open_kernel
from ..options import AgentbaseCommand, database_options, json_option, scope_from, scope_options
from ..output import echo_json, one_line, table

__all__ = ["COMMANDS"]

WHEN = click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"])


@click.command(cls=AgentbaseCommand)
@scope_options
@click.option("--since", type=WHEN, help="Only events at or after this time (YYYY-MM-DD[THH:MM:SS], UTC).")
@click.option("--until", type=WHEN, help="Only events before this time (YYYY-MM-DD[THH:MM:SS], UTC).")
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only this kind: write, update, supersede, delete, read; repeatable.")
@click.option("--limit", type=click.IntRange(0), default=100, show_default=True, help="At most this many (0: all).")
@json_option
@database_options()
@click.pass_context
def audit(ctx: click.Context, /, since: datetime | None, until: datetime | None, kinds: tuple[str, ...], limit: int,
          as_json: bool, **scope: Any) -> None:
    """Print the audit log, newest first: seq, time, kind, actor, scope, entry ids, detail.

    Each scope option given must match the event's; with none, the whole file's log.
    """
    with open_kernel(ctx, models=False) as kernel:
        events = kernel.audit(**scope_from(scope), since=since, until=until, kinds=list(kinds) or None,
                              limit=limit or None)
    if as_json:
        echo_json(events)
        return
    table((e.seq, e.at.isoformat(timespec="seconds"), e.kind, e.actor,
           ", ".join(f"{k}={v}" for k, v in e.scope.as_dict().items()) or "(global)",
           ",".join(e.entry_ids), one_line(json.dumps(e.detail, ensure_ascii=False, default=str), 80) if e.detail else None)
          for e in events)


COMMANDS = [audit]
