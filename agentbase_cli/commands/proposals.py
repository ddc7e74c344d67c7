"""Proposals from the command line: ``agentbase proposals list|show|approve|reject`` and approval
zones ``agentbase proposals protect|zones`` (docs/governance.md). The CLI is a person's tool: what it
approves is written with origin ``human_approved``."""

from __future__ import annotations

from typing import Any

import click

from ..database import open_kernel
from ..options import AgentbaseGroup, database_options, json_option, scope_from, scope_options
from ..output import echo_json, one_line, table

__all__ = ["COMMANDS"]

_STATUS = click.Choice(["pending", "approved", "rejected", "all"])


@click.group(cls=AgentbaseGroup)
def proposals() -> None:
    """Writes waiting for a person: agents' writes into an approval zone become proposals."""


@proposals.command("list")
@scope_options
@click.option("--status", type=_STATUS, default="pending", show_default=True, help="Which proposals to list.")
@click.option("--limit", type=click.IntRange(0), default=100, show_default=True, help="At most this many (0: all).")
@json_option
@database_options()
@click.pass_context
def list_(ctx: click.Context, status: str, limit: int, as_json: bool, **scope: Any) -> None:
    """List proposals, oldest first: id, status, op, scope, proposer, text."""
    with open_kernel(ctx, models=False) as kernel:
        found = kernel.list_proposals(**scope_from(scope), status=None if status == "all" else status,
                                      limit=limit or None)
    if as_json:
        echo_json(found)
        return
    table((p.id, p.status, p.op, ", ".join(f"{k}={v}" for k, v in p.scope.as_dict().items()) or "(global)",
           p.proposer, one_line(p.text or f"(delete {p.entry_id})", 80)) for p in found)


@proposals.command()
@click.argument("proposal_id", metavar="PROPOSAL_ID")
@json_option
@database_options()
@click.pass_context
def show(ctx: click.Context, proposal_id: str, as_json: bool) -> None:
    """Show one proposal with the diff against the current value."""
    with open_kernel(ctx, models=False) as kernel:
        p = kernel.get_proposal(proposal_id)
    if as_json:
        echo_json({**{k: v for k, v in vars(p).items()}, "diff": p.diff})
        return
    for name, value in (("id", p.id), ("status", p.status), ("op", p.op), ("scope", p.scope.as_dict()),
                        ("entry", p.entry_id), ("proposer", p.proposer), ("source", p.source), ("reason", p.reason),
                        ("created", p.created_at), ("decided", p.decided_at), ("decided by", p.decided_by),
                        ("decision", p.decision_reason), ("written", p.result_entry_id)):
        if value not in (None, {}):
            click.echo(f"{name}: {value}")
    click.echo(p.diff or "(no change to show)")


@proposals.command()
@click.argument("proposal_id", metavar="PROPOSAL_ID")
@click.option("--reviewer", metavar="NAME", help="Who approves (recorded on the proposal and in the audit log).")
@click.option("--reason", metavar="TEXT", help="Why (optional).")
@json_option
@database_options()
@click.pass_context
def approve(ctx: click.Context, proposal_id: str, reviewer: str | None, reason: str | None, as_json: bool) -> None:
    """Approve a proposal: it is written as a person's memory (origin human_approved, trust 1.0)."""
    with open_kernel(ctx, models=True) as kernel:
        done = kernel.approve(proposal_id, reviewer=reviewer, reason=reason)
    echo_json(done) if as_json else click.echo(f"Approved {done.id}: wrote {done.result_entry_id}")


@proposals.command()
@click.argument("proposal_id", metavar="PROPOSAL_ID")
@click.option("--reason", required=True, metavar="TEXT", help="Why it is turned down (kept on the proposal).")
@click.option("--reviewer", metavar="NAME", help="Who rejects (recorded on the proposal and in the audit log).")
@json_option
@database_options()
@click.pass_context
def reject(ctx: click.Context, proposal_id: str, reason: str, reviewer: str | None, as_json: bool) -> None:
    """Reject a proposal, saying why; nothing is written."""
    with open_kernel(ctx, models=False) as kernel:
        done = kernel.reject(proposal_id, reason=reason, reviewer=reviewer)
    echo_json(done) if as_json else click.echo(f"Rejected {done.id}")


@proposals.command()
@scope_options
@click.option("--key-prefix", metavar="PREFIX", help="Only writes whose metadata key (or entry id) starts so.")
@click.option("--category", metavar="NAME", help="Only writes of this category.")
@json_option
@database_options()
@click.pass_context
def protect(ctx: click.Context, key_prefix: str | None, category: str | None, as_json: bool, **scope: Any) -> None:
    """Mark a scope human-approved: agents' writes there become proposals."""
    chosen = scope_from(scope)
    if not chosen:
        raise click.UsageError("Give the scope to protect: --user-id, --agent-id, --project-id or --session-id.")
    with open_kernel(ctx, models=False) as kernel:
        zone = kernel.protect(**chosen, key_prefix=key_prefix, category=category)
    echo_json(zone) if as_json else click.echo(zone.id)


@proposals.command()
@json_option
@database_options()
@click.pass_context
def zones(ctx: click.Context, as_json: bool) -> None:
    """List the approval zones: id, scope, key prefix, category."""
    with open_kernel(ctx, models=False) as kernel:
        found = kernel.zones()
    if as_json:
        echo_json(found)
        return
    table((z.id, ", ".join(f"{k}={v}" for k, v in z.scope.as_dict().items()), z.key_prefix, z.category)
          for z in found)


COMMANDS = [proposals]
