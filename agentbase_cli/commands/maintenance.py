"""The file itself: init, info, stats, verify, rebuild."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from agentbase_kernel import Kernel

from ..database import (
    DEFAULT_FILE,
    POINTER_FILE,
    Settings,
    current_target,
    is_server,
    open_kernel,
    shown,
    write_pointer,
)
from ..errors import CliError, ExitCode
from ..options import (
    AgentbaseCommand,
    database_options,
    json_option,
    scope_from,
    scope_options,
)
from ..output import echo_fields, echo_json
from ..progress import bar

__all__ = ["COMMANDS"]

ROLES = ("user", "assistant", "system", "tool", "developer", "function")


def _settings(ctx: click.Context) -> Settings:
    return ctx.ensure_object(Settings)


@click.command(cls=AgentbaseCommand)
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help=f"Keep the database at DIR/{DEFAULT_FILE} (DIR is created) and write ./{POINTER_FILE} so "
                   "every agentbase command run in this folder uses it.")
@json_option
@database_options()
@click.pass_context
def init(ctx: click.Context, data_dir: Path | None, as_json: bool) -> None:
    """Create a database (and record its embedder in it); an existing one is left as it is."""
    settings = _settings(ctx)
    if data_dir is not None:
        if settings.db is not None and settings.db_source == "--db":
            raise click.UsageError("Give either --data-dir or --db, not both.")
        data_dir.mkdir(parents=True, exist_ok=True)
        settings.db, settings.db_source = data_dir / DEFAULT_FILE, "--data-dir"
    target = current_target(ctx)
    if is_server(target.path):
        with open_kernel(ctx, models=True, ner=False, create=True) as kernel:
            info = kernel.info()
        if as_json:
            echo_json({"path": shown(target.path), "created": None, "pointer": None, "embedder": info["embedder"],
                       "dim": info["dim"], "schema_version": info["schema_version"]})
            return
        embedder = f"{info['embedder']} ({info['dim']} dim)" if info["embedder"] else "none (text search only)"
        click.echo(f"Ready {shown(target.path)} - embedder {embedder}, schema {info['schema_version']}")
        return
    path = Path(target.path)
    existed = path.exists()
    if not path.parent.is_dir():
        raise CliError(f"The folder {path.parent} does not exist. Create it with: mkdir -p "
                       f"{path.parent} (or use agentbase init --data-dir {path.parent})",
                       ExitCode.NOT_FOUND)
    with open_kernel(ctx, models=True, ner=False, create=True) as kernel:
        info = kernel.info()
    pointer = None
    if data_dir is not None:
        pointer = write_pointer(Path.cwd(), path, embedder=settings.embedder, ner=settings.ner)
    if as_json:
        echo_json({"path": str(target.path), "created": not existed, "pointer": pointer and str(pointer),
                   "embedder": info["embedder"], "dim": info["dim"], "schema_version": info["schema_version"]})
        return
    verb = "Found existing" if existed else "Created"
    embedder = f"{info['embedder']} ({info['dim']} dim)" if info["embedder"] else "none (text search only)"
    click.echo(f"{verb} {target.path} - embedder {embedder}, schema {info['schema_version']}")
    if pointer is not None:
        click.echo(f"Wrote {pointer}: agentbase commands run in {pointer.parent} (or below) use this database.")
        if os.environ.get("AGENTBASE_PATH"):
            click.echo("Note: $AGENTBASE_PATH is set and comes first; unset it to use this database here.", err=True)


@click.command(cls=AgentbaseCommand)
@click.option("--models", is_flag=True,
              help="Also load the embedder and spaCy and report which ones run (takes seconds).")
@json_option
@database_options()
@click.pass_context
def info(ctx: click.Context, models: bool, as_json: bool) -> None:
    """What the file is: path, schema, vector backend, how many entries and sessions."""
    target = current_target(ctx)
    with open_kernel(ctx, models=models) as kernel:
        report: dict[str, Any] = {"path": shown(target.path), "path_from": target.source}
        report |= {k: v for k, v in kernel.info().items() if k not in ("path", "path_from")}
        if not models:
            # a kernel opened without models reports none; say what would run instead of "None"
            report.pop("ner_stage", None)
            if report.get("embedder") is None:
                report.pop("dim", None)
                report["embedder"] = f"{target.embedder} (not loaded: add --models)"
        report["entries"] = kernel.count(include_expired=True, include_invalid=True)
        report["sessions"] = len(kernel.list_sessions(limit=None))
    if not is_server(target.path):
        report["file_bytes"] = Path(target.path).stat().st_size
    echo_json(report) if as_json else echo_fields(list(report.items()))


@click.command(cls=AgentbaseCommand)
@scope_options
@json_option
@database_options()
@click.pass_context
def stats(ctx: click.Context, as_json: bool, **scope: Any) -> None:
    """Counts: entries (current, expired, superseded), by type and role; sessions and messages; outcomes
    recorded, the confidence distribution and the proposals waiting for a person."""
    chosen = scope_from(scope)
    every = {"include_expired": True, "include_invalid": True, **chosen}
    with open_kernel(ctx, models=False) as kernel:
        total = kernel.count(**every)
        current = kernel.count(**chosen)
        unexpired = kernel.count(include_expired=True, **chosen)
        by_type = {t: kernel.count(context_type=t, **every) for t in ("memory", "resource", "skill")}
        by_role = {r: kernel.count(role=r, **every) for r in ROLES}
        by_role = {r: n for r, n in by_role.items() if n}
        if total - sum(by_role.values()):
            by_role["other"] = total - sum(by_role.values())
        owner = {k: v for k, v in chosen.items() if k != "session_id"}
        sessions = kernel.list_sessions(limit=None, **owner)
        if "session_id" in chosen:
            sessions = [s for s in sessions if s.id == chosen["session_id"]]
        messages = sum(kernel.count_messages(s.id) for s in sessions)
        learned = kernel.outcome_stats(**chosen)
        pending = len(kernel.list_proposals(**chosen, limit=None))
    report = {"entries": total, "current": current, "expired": unexpired - current, "superseded": total - unexpired,
              "by_type": by_type, "by_role": by_role, "sessions": len(sessions), "messages": messages,
              "outcomes": learned["by_type"] or learned["outcomes"],
              "confidence": {f"{n / 10:.1f}+": count for n, count in enumerate(learned["confidence_buckets"]) if count},
              "proposals pending": pending}
    if as_json:
        echo_json({**report, "most_helped": learned["most_helped"], "most_harmed": learned["most_harmed"]})
        return
    flat = [(k, ", ".join(f"{n} {v}" for n, v in value.items()) if isinstance(value, dict) else value)
            for k, value in report.items()]
    echo_fields(flat)


@click.command(cls=AgentbaseCommand)
@click.option("--vectors", is_flag=True,
              help="Also check that every text has its vector (loads the embedder: takes seconds).")
@json_option
@database_options()
@click.pass_context
def verify(ctx: click.Context, vectors: bool, as_json: bool) -> None:
    """Check the file: SQLite integrity, the full-text index, (with --vectors) the vectors. Exit 4 on a problem."""
    with open_kernel(ctx, models=vectors, ner=False) as kernel:
        report = kernel.verify()
    if not vectors:
        report["texts_without_vector"] = None  # not checked: the kernel counts them only with an embedder
    report["vectors_checked"] = vectors
    if as_json:
        echo_json(report)
    else:
        echo_fields([(k, "not checked (add --vectors)" if v is None else v) for k, v in report.items()])
    if not report["ok"]:
        raise CliError("The file has problems (see above). Repair it with: agentbase rebuild", ExitCode.CHECK_FAILED)


def _rebuild(kernel: Kernel, quiet: bool) -> dict[str, Any]:
    # the full-text index is rebuilt first (seconds at most); the bar counts the texts embedded after it
    with bar("rebuilding: embedding texts without a vector", quiet=quiet, unit="text") as progress:
        return kernel.rebuild(progress=progress)


@click.command(cls=AgentbaseCommand)
@click.option("--from-markdown", "from_markdown", type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="First write the memories and sessions of a Markdown mirror into the database (ids and times "
                   "kept; `agentbase markdown export`), creating the file if needed.")
@json_option
@database_options()
@click.pass_context
def rebuild(ctx: click.Context, from_markdown: str | None, as_json: bool) -> None:
    """Rebuild the full-text index and embed every text that has no vector; then verify. Exit 4 if still unhealthy.

    With --from-markdown DIR the database is first filled from the mirror's files.
    """
    if from_markdown is not None:
        with open_kernel(ctx, models=True, create=True) as kernel:
            imported = kernel.rebuild_from_markdown(from_markdown)
        if not _settings(ctx).quiet:
            counts = imported["by_type"]
            click.echo(f"from {from_markdown}: " + ", ".join(
                f"{kind} {sum(c.values())}" for kind, c in sorted(counts.items())), err=True)
    with open_kernel(ctx, models=True, ner=False) as kernel:
        report = _rebuild(kernel, _settings(ctx).quiet)
    echo_json(report) if as_json else echo_fields(list(report.items()))
    if not report["ok"]:
        raise CliError("The file is still unhealthy after the rebuild (see above): keep a copy and check "
                       "`agentbase verify --vectors --json`.", ExitCode.CHECK_FAILED)


COMMANDS = [init, info, stats, verify, rebuild]
