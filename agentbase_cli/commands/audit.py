"""The audit log: ``agentbase audit`` (who wrote, updated, superseded, deleted or read which entries)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from agentbase_kernel import AgentBaseError

from ..database import Settings, open_kernel
from ..errors import from_agentbase_error
from ..options import AgentbaseCommand, AgentbaseGroup, database_options, json_option, scope_from, scope_options
from ..output import echo_json, one_line, table
from ..progress import ticker

__all__ = ["COMMANDS"]

WHEN = click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"])


class _AuditGroup(AgentbaseGroup):
    """``audit`` lists the log itself (its errors mapped as a command's) and holds ``audit replay``."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AgentBaseError as exc:
            raise from_agentbase_error(exc, "audit", any(ctx.params.get(k) for k in ("user_id", "agent_id",
                                                                                      "project_id", "session_id"))) \
                from None


@click.group(cls=_AuditGroup, invoke_without_command=True)
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
    `agentbase audit replay TARGET` rebuilds the governed state in another database from it.
    """
    if ctx.invoked_subcommand is not None:
        return
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


@audit.command(cls=AgentbaseCommand)
@click.argument("target", metavar="TARGET")
@click.option("--from", "from_sequence", type=click.IntRange(0), default=0, show_default=True, metavar="N",
              help="Replay the rows after sequence N (0: all, into an empty TARGET).")
@json_option
@database_options()
@click.pass_context
def replay(ctx: click.Context, target: str, from_sequence: int, as_json: bool) -> None:
    """Replay the audit log in sequence order into TARGET (a new file or a postgresql:// URL): entries,
    deletions, policies, outcomes and confidence, approval zones and proposals come back as they were."""
    with open_kernel(ctx, models=True) as kernel, ticker("replaying", quiet=ctx.ensure_object(Settings).quiet):
        summary = kernel.audit_replay(target, from_sequence=from_sequence)
    if as_json:
        echo_json(summary)
        return
    click.echo(f"Replayed {summary['applied']} audit rows into {target} (passed over {summary['passed']}); "
               f"last sequence {summary['last_sequence']}")


COMMANDS = [audit]
