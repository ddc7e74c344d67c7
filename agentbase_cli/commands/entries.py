"""Memories one at a time: add, find, get, list, update, delete, history."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

import click

from ..database import Settings, open_kernel
from ..errors import CliError, ExitCode
from ..options import (
    AgentbaseCommand,
    database_options,
    json_option,
    metadata_option,
    parse_metadata,
    scope_from,
    scope_options,
    split_tags,
)
from ..output import echo_fields, echo_json, entry_lines, hit_row, one_line, table

__all__ = ["COMMANDS"]

TYPES = click.Choice(["memory", "resource", "skill"])
DATE = click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"])


def _text(value: str) -> str:
    """``-`` reads the text from stdin (for long or multi-line memories)."""
    return sys.stdin.read() if value == "-" else value


def _note(ctx: click.Context, message: str) -> None:
    settings = ctx.find_object(Settings)
    if not (settings and settings.quiet):
        click.echo(message, err=True)


def _filters(params: dict[str, Any]) -> dict[str, Any]:
    """The kernel filter keywords of ``list`` / ``find`` from their options."""
    out: dict[str, Any] = scope_from(params)
    for option, keyword in (("type", "context_type"), ("category", "category"), ("role", "role"),
                            ("since", "since"), ("until", "until")):
        if params.get(option) is not None:
            out[keyword] = params[option]
    tags = split_tags(params.get("tag") or ())
    if tags:
        out["tags"] = tags
    metadata = parse_metadata(params.get("metadata") or ())
    if metadata is not None:
        out["metadata"] = metadata
    return out


def filter_options(fn: Any) -> Any:
    for option in reversed([
        click.option("--type", type=TYPES, help="Only entries of this type."),
        click.option("--category", help="Only entries in this category (e.g. preference, turn, session_summary)."),
        click.option("--tag", multiple=True, metavar="TAGS",
                     help="Only entries carrying every one of these tags (comma-separated or repeated)."),
        click.option("--role", help="Only entries spoken by this role (user, assistant, system, ...)."),
        click.option("--since", type=DATE, help="Only entries created at or after this time (YYYY-MM-DD is midnight UTC)."),
        click.option("--until", type=DATE, help="Only entries created at or before this time (YYYY-MM-DD is midnight UTC)."),
        metadata_option("Only entries whose metadata matches: a JSON object (operators as in docs/kernel-api.md) "
                        "or KEY=VALUE; repeat to require several."),
    ]):
        fn = option(fn)
    return scope_options(fn)


@click.command(cls=AgentbaseCommand)
@click.argument("text")
@click.option("--type", "context_type", type=TYPES, default="memory", show_default=True,
              help="What the entry is: a memory, a resource (a document) or a skill.")
@click.option("--tags", multiple=True, metavar="TAGS", help="Tags, comma-separated (\"a,b\") or repeated.")
@click.option("--category", help="A category, e.g. preference.")
@metadata_option("Metadata: a JSON object or KEY=VALUE (VALUE read as JSON when it parses); repeatable.")
@scope_options
@click.option("--role", default="user", show_default=True, help="Who said it: user, assistant, system, ...")
@click.option("--confidence", type=click.FloatRange(0, 1), default=1.0, show_default=True,
              help="How sure the source is, from 0 to 1.")
@click.option("--expires-at", type=DATE, help="Hide the entry after this date (YYYY-MM-DD).")
@click.option("--infer/--no-infer", default=False, show_default=True,
              help="Also store the facts found in the text (rule-based, no LLM) as entries of their own.")
@click.option("--id", "entry_id", metavar="ID", help="Use this id instead of a new UUID.")
@json_option
@database_options()
@click.pass_context
def add(ctx: click.Context, text: str, context_type: str, tags: tuple[str, ...], category: str | None,
        metadata: tuple[str, ...], role: str, confidence: float, expires_at: datetime | None, infer: bool,
        entry_id: str | None, as_json: bool, **scope: Any) -> None:
    """Store TEXT as one memory and print its id (TEXT "-" reads stdin).

    An exact duplicate in the same scope stores nothing and prints the id of the entry already there.
    """
    with open_kernel(ctx, models=True) as kernel:
        result = kernel.add_memory(_text(text), context_type=context_type, tags=split_tags(tags), category=category,
                                   metadata=parse_metadata(metadata), role=role, confidence=confidence,
                                   expires_at=expires_at, infer=infer, entry_id=entry_id, **scope_from(scope))
    if as_json:
        echo_json(result)
        return
    click.echo(result.id)
    if result.event == "NOOP":
        _note(ctx, "(the same text is already stored in this scope: nothing added)")
    elif result.event == "MERGE":
        _note(ctx, "(merged into a near-identical entry of this scope)")
    if result.facts:
        _note(ctx, f"(+ {len(result.facts)} fact entries: agentbase list --category fact)")


@click.command(cls=AgentbaseCommand)
@click.argument("query")
@click.option("--top-k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many results.")
@filter_options
@json_option
@database_options()
@click.pass_context
def find(ctx: click.Context, query: str, top_k: int, as_json: bool, **params: Any) -> None:
    """Search the memories for QUERY (words, vectors and entities): score, id and text, best first."""
    with open_kernel(ctx, models=True) as kernel:
        result = kernel.find(query, top_k=top_k, **_filters(params))
    if as_json:
        echo_json({"hits": [hit for hit in result], "degrade_reason": result.degrade_reason,
                   "skill_warnings": [w.message for w in result.skill_warnings]})
        return
    table(hit_row(hit) for hit in result)
    for warning in result.skill_warnings:
        click.echo(f"warning: {warning.message}", err=True)
    if result.degrade_reason:
        _note(ctx, f"(degraded: {result.degrade_reason})")
    if not len(result):
        _note(ctx, "(no matches)")


@click.command(cls=AgentbaseCommand)
@click.argument("entry_id", metavar="ENTRY_ID")
@scope_options
@json_option
@database_options()
@click.pass_context
def get(ctx: click.Context, entry_id: str, as_json: bool, **scope: Any) -> None:
    """Show one entry."""
    with open_kernel(ctx, models=False) as kernel:
        entry = kernel.get(entry_id, **scope_from(scope))
    if as_json:
        echo_json(entry)
    else:
        echo_fields(entry_lines(entry))


@click.command("list", cls=AgentbaseCommand)
@filter_options
@click.option("--limit", type=click.IntRange(0), default=100, show_default=True, help="At most this many (0: all).")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True, help="Skip this many first.")
@click.option("--newest-first", is_flag=True, help="Newest first (default: oldest first).")
@click.option("--include-expired", is_flag=True, help="Also entries past their expiry date.")
@click.option("--include-invalid", is_flag=True, help="Also entries superseded by a newer fact.")
@json_option
@database_options()
@click.pass_context
def list_(ctx: click.Context, limit: int, offset: int, newest_first: bool, include_expired: bool,
          include_invalid: bool, as_json: bool, **params: Any) -> None:
    """List entries: id, creation time and text, oldest first."""
    with open_kernel(ctx, models=False) as kernel:
        entries = kernel.list(**_filters(params), limit=limit or None, offset=offset,
                              order="desc" if newest_first else "asc", include_expired=include_expired,
                              include_invalid=include_invalid)
    if as_json:
        echo_json(entries)
        return
    table((e.id, e.created_at.isoformat(timespec="seconds") if e.created_at else None, one_line(e.l2_full))
          for e in entries)


@click.command(cls=AgentbaseCommand)
@click.argument("entry_id", metavar="ENTRY_ID")
@click.option("--text", help="New text (tags from entities, dates and the vector are derived again).")
@click.option("--tags", multiple=True, metavar="TAGS", help="Replace the tags: comma-separated or repeated.")
@click.option("--category", help="New category.")
@metadata_option("Replace the metadata: a JSON object or KEY=VALUE items.")
@click.option("--confidence", type=click.FloatRange(0, 1), help="New confidence, from 0 to 1.")
@click.option("--expires-at", type=DATE, help="New expiry date (YYYY-MM-DD).")
@scope_options
@json_option
@database_options()
@click.pass_context
def update(ctx: click.Context, entry_id: str, text: str | None, tags: tuple[str, ...], category: str | None,
           metadata: tuple[str, ...], confidence: float | None, expires_at: datetime | None, as_json: bool,
           **scope: Any) -> None:
    """Change an entry in place (its history keeps the old text); prints its id."""
    changes: dict[str, Any] = {}
    if text is not None:
        changes["text"] = _text(text)
    if tags:
        changes["tags"] = split_tags(tags)
    for key, value in (("category", category), ("metadata", parse_metadata(metadata)), ("confidence", confidence),
                       ("expires_at", expires_at)):
        if value is not None:
            changes[key] = value
    if not changes:
        raise click.UsageError("Nothing to change: give at least one of --text, --tags, --category, --metadata, "
                               "--confidence, --expires-at.")
    with open_kernel(ctx, models=text is not None) as kernel:
        entry = kernel.update(entry_id, **changes, **scope_from(scope))
    if as_json:
        echo_json(entry)
    else:
        click.echo(entry.id)


@click.command(cls=AgentbaseCommand)
@click.argument("entry_id", metavar="[ENTRY_ID]", required=False)
@click.option("--all", "delete_all", is_flag=True,
              help="Delete every entry of the scope given by --user-id/--agent-id/--project-id/--session-id.")
@click.option("--yes", is_flag=True, help="Do not ask before --all.")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@database_options()
@click.pass_context
def delete(ctx: click.Context, entry_id: str | None, delete_all: bool, yes: bool, as_json: bool,
           **scope: Any) -> None:
    """Delete one entry (its history stays), or with --all every entry of a scope."""
    chosen = scope_from(scope)
    if delete_all == (entry_id is not None):
        raise click.UsageError("Give either an ENTRY_ID or --all with a scope (e.g. agentbase delete --all --user-id alice).")
    if delete_all:
        if not chosen:
            raise click.UsageError("--all needs a scope: add --user-id, --agent-id, --project-id or --session-id.")
        if not yes:
            if not sys.stdin.isatty():
                raise click.UsageError("--all asks before deleting; add --yes when running without a terminal.")
            what = ", ".join(f"{k}={v}" for k, v in chosen.items())
            click.confirm(f"Delete every entry of {what}?", abort=True, err=True)
        with open_kernel(ctx, models=False) as kernel:
            count = kernel.delete_all(**chosen)
        echo_json({"deleted": count}) if as_json else click.echo(f"deleted {count}")
        return
    assert entry_id is not None
    with open_kernel(ctx, models=False) as kernel:
        entry = kernel.delete(entry_id, **chosen)
    echo_json(entry) if as_json else click.echo(entry.id)


@click.command(cls=AgentbaseCommand)
@click.argument("entry_id", metavar="ENTRY_ID")
@json_option
@database_options()
@click.pass_context
def history(ctx: click.Context, entry_id: str, as_json: bool) -> None:
    """The ADD / UPDATE / DELETE events of an entry, oldest first (also for a deleted entry)."""
    with open_kernel(ctx, models=False) as kernel:
        events = kernel.history(entry_id)
    if not events:
        raise CliError(f"No history for an entry with id {entry_id!r}. See the ids with: agentbase list",
                       ExitCode.NOT_FOUND)
    if as_json:
        echo_json(events)
        return
    table((e.created_at.isoformat(timespec="seconds"), e.event, e.actor or e.role,
           one_line(e.new_value if e.new_value is not None else (e.old_value or ""), 80)) for e in events)


COMMANDS = [add, find, get, list_, update, delete, history]
