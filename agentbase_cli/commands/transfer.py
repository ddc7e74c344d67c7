"""Moving memories in and out: ``export`` and ``import`` (agentbase files and other products' data).

The format is docs/export-format.md; the importers are ``agentbase_adapters.importers`` (imported
only when ``--from`` names one, so a plain ``import FILE`` needs no framework installed).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from agentbase_kernel import InvalidArgument, Kernel, get_embedder

from ..database import Settings, Target, current_target, exists, is_server, open_kernel, shown
from ..errors import CliError, ExitCode
from ..options import (
    AgentbaseCommand,
    database_options,
    json_option,
    metadata_option,
    parse_metadata,
    scope_from,
    scope_options,
)
from ..output import echo_json
from ..output import table as print_table
from ..progress import bar, phase_bar

__all__ = ["COMMANDS"]

SOURCES = ("agentbase", "mem0", "langchain-sql", "langchain-file", "llamaindex-json", "llamaindex-sql", "openai-json")
WITH_TABLE = ("langchain-sql", "llamaindex-sql")


def _quiet(ctx: click.Context) -> bool:
    return ctx.ensure_object(Settings).quiet


@click.command(cls=AgentbaseCommand)
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the export here (replaced only once complete). Default: stdout.")
@scope_options
@metadata_option("Only entries whose metadata matches (JSON filter or KEY=VALUE; repeatable).")
@click.option("--vectors/--no-vectors", default=True, show_default=True,
              help="Include the embeddings (base64 float32); without them the importing side embeds the texts again.")
@click.option("--traces", is_flag=True, help="Include retrieval traces.")
@json_option
@database_options()
@click.pass_context
def export(ctx: click.Context, /, out: Path | None, metadata: tuple[str, ...], vectors: bool, traces: bool,
           as_json: bool, **scope: Any) -> None:
    """Write the database (or one scope of it) as an agentbase export: JSON Lines, streamed.

    Entries with their history, sessions, messages, links, entities and vectors; the format is
    documented in docs/export-format.md. `agentbase import FILE` reads it back.
    """
    to_stdout = out is None or str(out) == "-"
    with open_kernel(ctx, models=False) as kernel, \
            bar("exporting", quiet=_quiet(ctx), unit="entry") as progress:
        target: Any = sys.stdout if to_stdout else out
        counts = kernel.export(target, **scope_from(scope), metadata=parse_metadata(metadata), vectors=vectors,
                               traces=traces, progress=progress)
    summary = {"out": "-" if to_stdout else str(out), "records": counts}
    if as_json and not to_stdout:
        echo_json(summary)
        return
    # the file went to stdout: the summary must not mix with it
    err = to_stdout
    if not _quiet(ctx) or not err:
        click.echo(f"Exported {counts.get('entry', 0)} entries, {counts.get('session', 0)} sessions, "
                   f"{counts.get('message', 0)} messages ({sum(counts.values())} records) to "
                   f"{'stdout' if to_stdout else out}.", err=err)


def _summary_rows(summary: dict[str, Any]) -> list[tuple[Any, ...]]:
    if summary["dry_run"]:
        return [("type", "records"), *sorted(summary["by_type"].items())]
    rows: list[tuple[Any, ...]] = [("type", "inserted", "updated", "skipped")]
    for kind, c in sorted(summary["by_type"].items()):
        rows.append((kind, c["inserted"], c["updated"], c["skipped"]))
    return rows


@click.command("import", cls=AgentbaseCommand)
@click.argument("source", metavar="FILE|CONFIG|URL")
@click.option("--from", "kind", type=click.Choice(SOURCES), default="agentbase", show_default=True,
              help="What SOURCE is: an agentbase export (FILE, - for stdin); mem0 (the JSON config passed to "
                   "Memory.from_config); langchain-sql (SQLAlchemy URL of SQLChatMessageHistory, with --table); "
                   "langchain-file (a FileChatMessageHistory file); llamaindex-json (a SimpleChatStore persist "
                   "file); llamaindex-sql (URL of a SQLAlchemyChatStore, with --table); openai-json (threads / "
                   "conversations with their messages, as the API lists them).")
@click.option("--table", metavar="NAME",
              help="The table of --from langchain-sql (default message_store) or llamaindex-sql (default chat_store).")
@click.option("--user-id", metavar="ID",
              help="An agentbase export: import every record as this user's (the file's users are replaced, "
                   "never merged). Other sources: the user for data that names none (chat histories, unscoped "
                   "Mem0 memories).")
@click.option("--agent-id", metavar="ID", help="An agentbase export: import every record as this agent's.")
@click.option("--project-id", metavar="ID", help="An agentbase export: import every record into this project.")
@click.option("--on-conflict", type=click.Choice(["fail", "skip", "rekey"]), default="fail", show_default=True,
              help="A record whose id is already in another scope (an import never takes over another user's "
                   "row, session or link): fail and write nothing, skip it, or import it under a new id.")
@click.option("--allow-truncated", is_flag=True,
              help="Import a file that ends before its trailer or does not match it (cut short or edited).")
@click.option("--dry-run", is_flag=True, help="Read and check everything, print the counts, write nothing.")
@json_option
@database_options()
@click.pass_context
def import_(ctx: click.Context, source: str, kind: str, table: str | None, user_id: str | None,
            agent_id: str | None, project_id: str | None, on_conflict: str, allow_truncated: bool, dry_run: bool,
            as_json: bool) -> None:
    """Import an agentbase export, or memories and conversations from Mem0, LangChain, LlamaIndex or OpenAI.

    One transaction: a bad record (named by its line) leaves the database untouched. Ids and times
    are kept, so importing the same data again skips what is already there. An id already in another
    scope is a conflict (--on-conflict). A database that does not exist yet is created, with the
    embedder of the export (or the one a Mem0 config names).
    """
    if table is not None and kind not in WITH_TABLE:
        raise click.UsageError(f"--table applies to --from {' / '.join(WITH_TABLE)}, not --from {kind}.")
    if kind != "agentbase" and (agent_id is not None or project_id is not None or allow_truncated):
        raise click.UsageError("--agent-id, --project-id and --allow-truncated apply to agentbase exports, "
                               f"not --from {kind}.")
    quiet = _quiet(ctx)
    target = current_target(ctx)
    stream: Any = (_Replay(sys.stdin) if source == "-" else Path(source)) if kind == "agentbase" else None
    created: dict[str, Any] | None = None
    embedder: str | None = None
    if not exists(target.path):
        # a migration's target: created with the embedder of what comes in (an explicit --embedder wins)
        embedder, why = _new_file_embedder(ctx, kind, source, stream)
        created = {"path": shown(target.path), "embedder": embedder, "from": why}
    # ingesting conversations and re-embedding need the models; a dry run only reads
    with _import_kernel(ctx, target, dry_run=dry_run, create=created is not None, embedder=embedder,
                        ner=(kind != "agentbase" and not dry_run)) as kernel:
        if created is not None and not dry_run:
            info = kernel.info()
            created["embedder"] = info["embedder"]
            created["dim"] = info["dim"]
        if kind == "agentbase":
            with bar("importing", quiet=quiet, unit="record") as progress, \
                    phase_bar("embedding texts without a vector", quiet=quiet, unit="text") as embedding:
                summary = kernel.import_(stream, dry_run=dry_run, progress=progress, embed_progress=embedding,
                                         on_conflict=on_conflict, user_id=user_id, agent_id=agent_id,
                                         project_id=project_id, allow_truncated=allow_truncated)
        else:
            from agentbase_adapters.importers import import_from

            with bar(f"importing from {kind}", quiet=quiet, unit="record") as progress, \
                    phase_bar("embedding texts without a vector", quiet=quiet, unit="text") as embedding:
                summary = import_from(kernel, kind, source, table=table, user_id=user_id, dry_run=dry_run,
                                      progress=lambda done, total: progress(done, total or None),  # type: ignore[arg-type]
                                      embed_progress=embedding, on_conflict=on_conflict)
    if as_json:
        echo_json({**{k: v for k, v in summary.items() if k != "header"}, "created": created})
        return
    if created is not None:
        model = (f"embedder {created['embedder']} ({created['dim']} dim)" if created.get("dim")
                 else f"embedder {created['embedder'] or 'none (text search only)'}")
        verb = "Would create" if dry_run else "Created"
        click.echo(f"{verb} {created['path']} - {model}, {created['from']}.")
    table_rows = _summary_rows(summary)
    print_table(table_rows)
    for warning in summary.get("warnings") or ():
        click.echo(f"Warning: {warning}.", err=True)
    if dry_run:
        click.echo(f"Dry run: {summary['records']} records read and checked, nothing written.")
        return
    written = sum(c["inserted"] + c["updated"] for c in summary["by_type"].values())
    skipped = sum(c["skipped"] for c in summary["by_type"].values())
    line = f"Imported {summary['records']} records: {written} written, {skipped} already there."
    if summary.get("vectors_dropped"):
        line += f" {summary['vectors_dropped']} vectors from another embedder dropped;"
    if summary.get("reembedded"):
        line += f" {summary['reembedded']} texts embedded."
    click.echo(line)
    if summary.get("conflicts_total"):
        click.echo(f"{summary['conflicts_total']} records named rows of another scope ({on_conflict}):")
        for c in summary["conflicts"]:
            moved = f" -> {c['new_id']}" if c.get("new_id") else ""
            click.echo(f"  {c['where']}: {c['type']} {c['id']} {c['reason']}: {c['action']}{moved}")
        if summary["conflicts_total"] > len(summary["conflicts"]):
            click.echo(f"  ... and {summary['conflicts_total'] - len(summary['conflicts'])} more (--json lists the first "
                       f"{len(summary['conflicts'])})")


class _Replay:
    """A text stream whose first line was already read (to see the export's header) and is read again."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._first: str | None = None
        self._peeked = False

    def peek(self) -> str:
        if not self._peeked:
            self._first, self._peeked = self._stream.readline(), True
        return self._first or ""

    def readline(self) -> str:
        if self._peeked and self._first is not None:
            line, self._first = self._first, None
            return line
        self._peeked = True
        return str(self._stream.readline())

    def read(self, size: int = -1) -> str:
        head, self._first = (self._first or "") if self._peeked else "", None
        self._peeked = True
        return head + str(self._stream.read(size))


def _export_header(stream: Any) -> dict[str, Any] | None:
    """The export's header line, or None when it cannot be read (import then reports the file's problem)."""
    try:
        if isinstance(stream, _Replay):
            line = stream.peek()
        else:
            with open(stream, encoding="utf-8") as fh:
                line = fh.readline()
        head = json.loads(line)
    except (OSError, ValueError, RecursionError):
        return None
    return head if isinstance(head, dict) and head.get("type") == "header" else None


def _new_file_embedder(ctx: click.Context, kind: str, source: str, stream: Any) -> tuple[str, str]:
    """``(spec, why)``: the embedder a database created by this import gets, and where it came from."""
    settings = ctx.ensure_object(Settings)
    if settings.embedder:
        return settings.embedder, "as --embedder says"
    if kind == "agentbase":
        head = _export_header(stream)
        recorded = head.get("embedder") if head is not None else None
        if head is not None and (recorded is None or (isinstance(recorded, dict) and (
                str(recorded.get("name")).casefold() == "none" or not recorded.get("dim")))):
            return "none", "as the export was written (without an embedder)"
        if isinstance(recorded, dict) and isinstance(recorded.get("name"), str):
            try:
                get_embedder(recorded["name"])
            except (InvalidArgument, ImportError, OSError):
                return "auto", (f"the export's {recorded['name']} cannot run here: its texts are embedded again "
                                "with the default")
            return recorded["name"], "the export's embedder (its vectors are kept)"
        return current_target(ctx).embedder, "the default embedder"
    from agentbase_adapters.importers import source_embedder

    spec = source_embedder(kind, source)
    if spec is not None:
        return spec, f"the embedder the {kind} config names"
    return current_target(ctx).embedder, "the default embedder"


@contextmanager
def _import_kernel(ctx: click.Context, target: Target, *, dry_run: bool, create: bool, embedder: str | None,
                   ner: bool) -> Iterator[Kernel]:
    """The database to import into; a dry run into a file that does not exist yet checks against a scratch file."""
    if create and dry_run:
        with tempfile.TemporaryDirectory(prefix="agentbase-dry-run-") as folder, \
                Kernel(Path(folder) / "check.db", embedder=None, ner=None, source="cli") as kernel:
            yield kernel
        return
    if create and not is_server(target.path) and not Path(target.path).parent.is_dir():
        raise CliError(f"The folder {Path(target.path).parent} does not exist. Create it with: mkdir -p "
                       f"{Path(target.path).parent}", ExitCode.NOT_FOUND)
    with open_kernel(ctx, models=not dry_run, ner=ner, create=create, embedder=embedder) as kernel:
        yield kernel


COMMANDS = [export, import_]
