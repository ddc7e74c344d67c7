"""Skills, entity-targeted recall and the Markdown mirror (docs/skills.md, docs/markdown.md)."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentbase_kernel import FindResult, Skill

from ..database import open_kernel
from ..options import AgentbaseCommand, AgentbaseGroup, database_options, json_option, scope_from, scope_options
from ..output import echo_fields, echo_json, hit_row, one_line, table

__all__ = ["COMMANDS", "echo_skill_warnings"]


def echo_skill_warnings(result: FindResult) -> None:
    """The warnings of stale or drifted skills among a result's hits, on stderr."""
    for warning in result.skill_warnings:
        click.echo(f"warning: {warning.message}", err=True)


def _skill_row(skill: Skill) -> tuple[str, ...]:
    return (skill.name, f"v{skill.version}", skill.status, f"{skill.health:.2f}", skill.id,
            skill.warning.message if skill.warning else one_line(skill.text, 60))


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


# -- skills ---------------------------------------------------------------------------------------
@click.group(cls=AgentbaseGroup)
def skills() -> None:
    """Skills as governed records: versions, promotion, verification and health (docs/skills.md)."""


@skills.command("list")
@scope_options
@click.option("--all-versions", is_flag=True, help="Every version, not only the current one of each skill.")
@json_option
@database_options()
@click.pass_context
def list_skills(ctx: click.Context, all_versions: bool, as_json: bool, **scope: Any) -> None:
    """Skills of a scope: name, version, status, health, id, and the warning of a stale or drifted one."""
    with open_kernel(ctx, models=False) as kernel:
        found = kernel.list_skills(**scope_from(scope), all_versions=all_versions)
    if as_json:
        echo_json(found)
        return
    table(_skill_row(s) for s in found)
    if not found:
        click.echo("(no skills)", err=True)


@skills.command()
@click.argument("name")
@click.option("--version", type=click.IntRange(1), help="This version instead of the current one.")
@scope_options
@json_option
@database_options()
@click.pass_context
def show(ctx: click.Context, name: str, version: int | None, as_json: bool, **scope: Any) -> None:
    """One skill: its text, version, author, when it was used and verified, its health and warning."""
    with open_kernel(ctx, models=False) as kernel:
        skill = kernel.get_skill(name, version=version, **scope_from(scope))
    if as_json:
        echo_json(skill)
        return
    echo_fields([("name", skill.name), ("version", skill.version), ("status", skill.status), ("id", skill.id),
                 ("authored_by", skill.authored_by), ("created_at", skill.created_at),
                 ("verified_at", skill.verified_at), ("last_used_at", skill.last_used_at),
                 ("health", f"{skill.health:.2f}"), ("warning", skill.warning.message if skill.warning else None),
                 ("text", skill.text)])


@skills.command()
@click.argument("name")
@click.argument("text")
@click.option("--authored-by", metavar="WHO", help="Who wrote it (default: the acting agent).")
@click.option("--category", help="A category for the skill's entry.")
@scope_options
@json_option
@database_options()
@click.pass_context
def add(ctx: click.Context, name: str, text: str, authored_by: str | None, category: str | None, as_json: bool,
        **scope: Any) -> None:
    """Store version 1 of skill NAME with TEXT ("-" reads stdin) and print its id."""
    with open_kernel(ctx, models=True) as kernel:
        skill = kernel.add_skill(name, _text(text), authored_by=authored_by, category=category, **scope_from(scope))
    echo_json(skill) if as_json else click.echo(skill.id)


@skills.command()
@click.argument("name")
@click.argument("text")
@click.option("--authored-by", metavar="WHO", help="Who wrote this version.")
@click.option("--promote", is_flag=True, help="Make the new version current at once (default: it waits for `promote`).")
@scope_options
@json_option
@database_options()
@click.pass_context
def update(ctx: click.Context, name: str, text: str, authored_by: str | None, promote: bool, as_json: bool,
           **scope: Any) -> None:
    """Write a new version of skill NAME (the old one is kept) and print its id."""
    with open_kernel(ctx, models=True) as kernel:
        skill = kernel.update_skill(name, _text(text), authored_by=authored_by, promote=promote, **scope_from(scope))
    echo_json(skill) if as_json else click.echo(f"{skill.id}\tv{skill.version}\t{skill.status}")


@skills.command()
@click.argument("name")
@click.option("--version", type=click.IntRange(1), help="The version to promote (default: the newest waiting one).")
@click.option("--actor", metavar="NAME", help="Who promotes it (recorded in the audit log).")
@scope_options
@json_option
@database_options()
@click.pass_context
def promote(ctx: click.Context, name: str, version: int | None, actor: str | None, as_json: bool,
            **scope: Any) -> None:
    """Make a waiting version of skill NAME the current one; the one it replaces is kept, superseded."""
    with open_kernel(ctx, models=False) as kernel:
        skill = kernel.promote_skill(name, version=version, actor=actor, **scope_from(scope))
    echo_json(skill) if as_json else click.echo(f"{skill.id}\tv{skill.version}\t{skill.status}")


@skills.command()
@click.argument("name")
@click.option("--actor", metavar="NAME", help="Who checked it (recorded in the audit log).")
@scope_options
@json_option
@database_options()
@click.pass_context
def verify(ctx: click.Context, name: str, actor: str | None, as_json: bool, **scope: Any) -> None:
    """Record that a person checked skill NAME: its health is full again, earlier drift cleared."""
    with open_kernel(ctx, models=False) as kernel:
        skill = kernel.verify_skill(name, actor=actor, **scope_from(scope))
    echo_json(skill) if as_json else click.echo(f"{skill.name}\tv{skill.version}\thealth {skill.health:.2f}")


# -- entity-targeted recall -------------------------------------------------------------------------
@click.command(cls=AgentbaseCommand)
@click.argument("names", nargs=-1, required=True, metavar="ENTITY...")
@click.option("--top-k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many results.")
@click.option("--budget-tokens", type=click.IntRange(1), help="Keep the results within about this many tokens.")
@scope_options
@json_option
@database_options()
@click.pass_context
def entities(ctx: click.Context, names: tuple[str, ...], top_k: int, budget_tokens: int | None, as_json: bool,
             **scope: Any) -> None:
    """Memories and skills linked to file paths, table names, URLs or ids, best first (before an action)."""
    with open_kernel(ctx, models=False) as kernel:
        result = kernel.retrieve_by_entities(list(names), top_k=top_k, budget_tokens=budget_tokens,
                                             **scope_from(scope))
    if as_json:
        echo_json({"hits": list(result), "skill_warnings": [w.message for w in result.skill_warnings]})
        return
    table(hit_row(hit) for hit in result)
    echo_skill_warnings(result)
    if not len(result):
        click.echo("(nothing linked to these)", err=True)


# -- the Markdown mirror ----------------------------------------------------------------------------
@click.group(cls=AgentbaseGroup)
def markdown() -> None:
    """A Markdown mirror of the database: files a person reads and edits, synced back (docs/markdown.md)."""


@markdown.command("export")
@click.argument("directory", type=click.Path(file_okay=False))
@scope_options
@click.option("--force", is_flag=True, help="Overwrite a mirror whose edits were not synced back (they are lost).")
@json_option
@database_options()
@click.pass_context
def markdown_export(ctx: click.Context, directory: str, force: bool, as_json: bool, **scope: Any) -> None:
    """Write one Markdown file per memory (a folder per scope) and one per session into DIRECTORY."""
    with open_kernel(ctx, models=False) as kernel:
        summary = kernel.export_markdown(directory, force=force, **scope_from(scope))
    echo_json(summary) if as_json else \
        click.echo(f"{summary['memories']} memories and {summary['sessions']} sessions written to {directory}")


@markdown.command("sync")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@json_option
@database_options()
@click.pass_context
def markdown_sync(ctx: click.Context, directory: str, as_json: bool) -> None:
    """Bring edits, new files and deletions in DIRECTORY back into the database (as human_edited).

    A memory changed both in its file and in the database is a conflict: listed, nothing overwritten.
    """
    with open_kernel(ctx, models=True) as kernel:
        report = kernel.sync_markdown(directory)
    if as_json:
        echo_json(report)
        return
    click.echo(f"added {len(report['added'])}, updated {len(report['updated'])}, deleted {len(report['deleted'])}, "
               f"conflicts {len(report['conflicts'])}")
    for conflict in report["conflicts"]:
        click.echo(f"conflict: {conflict['path']} ({conflict['id']}): {conflict['reason']}", err=True)
    for ignored in report["ignored"]:
        click.echo(f"ignored: {ignored['path']}: {', '.join(ignored['fields'])} cannot be edited", err=True)


COMMANDS = [skills, entities, markdown]
