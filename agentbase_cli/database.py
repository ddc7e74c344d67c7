"""Which database a command uses, and opening it with only the models the command needs.

The file is, first to last: ``--db PATH``, ``$AGENTBASE_PATH``, the ``.agentbase`` file that
``agentbase init --data-dir DIR`` wrote in this folder or a parent, ``./agentbase.db``. ``--db`` and
``$AGENTBASE_PATH`` also take a ``postgresql://`` URL (the PostgreSQL backend, docs/postgres.md).

Loading the embedder and spaCy takes seconds, so commands that only read or delete rows open
the file with neither (``models=False``); commands that write text or search load both.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import click

from agentbase_kernel import (
    POINTER_FILE,
    InvalidArgument,
    Kernel,
    NoEmbedderWarning,
    StorageError,
    is_postgres_url,
    locate_database,
    redact_url,
)

from .errors import CliError, ExitCode

__all__ = ["POINTER_FILE", "Location", "Settings", "Target", "current_target", "exists", "is_server", "missing_database",
           "open_kernel", "resolve", "shown", "write_pointer"]

DEFAULT_FILE = "agentbase.db"

# a file, or a PostgreSQL server's URL (a string: a Path would fold its '//')
Location = Path | str


def is_server(location: Location) -> bool:
    return is_postgres_url(location)


def exists(location: Location) -> bool:
    """Whether the database is there to open: a file on disk; a server is asked when the kernel opens it."""
    return True if is_server(location) else Path(location).exists()


def shown(location: Location) -> str:
    """The location for messages: a URL without its password."""
    return redact_url(str(location)) if is_server(location) else str(location)


@dataclass
class Settings:
    """The global options, as given on the group or on the command (the command's win)."""

    db: Location | None = None
    db_source: str = "--db"
    embedder: str | None = None
    ner: str | None = None
    quiet: bool = False


@dataclass(frozen=True)
class Target:
    """The resolved database and models, and where the path came from (shown by ``info``)."""

    path: Location
    source: str
    embedder: str
    ner: str


def write_pointer(folder: Path, db: Path, *, embedder: str | None, ner: str | None) -> Path:
    """Write ``folder/.agentbase`` naming ``db`` (relative to ``folder`` when it is inside it)."""
    try:
        shown = db.resolve().relative_to(folder.resolve())
    except ValueError:
        shown = db.resolve()
    lines = ["# Written by `agentbase init`: agentbase commands run in this folder (or below it) use this file.",
             f"db = {json.dumps(shown.as_posix())}"]
    for key, value in (("embedder", embedder), ("ner", ner)):
        if value is not None:
            lines.append(f"{key} = {json.dumps(value)}")
    pointer = folder / POINTER_FILE
    pointer.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return pointer


def resolve(settings: Settings) -> Target:
    """The kernel's rule (``locate_database``), with ``--db`` / ``$AGENTBASE_PATH`` as click read them."""
    try:
        choice = locate_database(settings.db)
    except InvalidArgument as exc:  # a broken .agentbase: the file cannot be used as asked
        raise CliError(str(exc)) from None
    source = settings.db_source if settings.db is not None else choice.source
    embedder = settings.embedder or choice.embedder or "auto"
    ner = settings.ner or choice.ner or "auto"
    return Target(path=choice.location, source=source, embedder=embedder, ner=ner)


def missing_database(target: Target) -> CliError:
    """The error for a database file that does not exist, with the command that creates it."""
    if target.source == "--db":
        how = f"agentbase --db {shown(target.path)} init"
    elif target.source.startswith(("default", "$")):
        how = "agentbase init (or agentbase init --data-dir DIR)"
    else:
        how = f"agentbase init (run in {Path(target.source).parent})"
    return CliError(f"No database at {shown(target.path)} (from {target.source}). Create it with: {how}; "
                    "or pick an existing file with: agentbase --db PATH <command>", ExitCode.NOT_FOUND)


def current_target(ctx: click.Context) -> Target:
    """The database and models this command would use."""
    return resolve(ctx.find_object(Settings) or Settings())


@contextmanager
def open_kernel(ctx: click.Context, *, models: bool, ner: bool | None = None,
                create: bool = False, embedder: str | None = None) -> Iterator[Kernel]:
    """The command's ``Kernel``, opened and closed around the block.

    ``models=False`` opens the file with no embedder and no spaCy (fast); such a kernel must
    not be asked to store or search text. ``ner`` (default: as ``models``) loads spaCy apart
    from the embedder. Only ``init`` and ``import`` create a missing file; ``embedder`` overrides
    the target's (``import`` creates the file with the embedder of what it imports).
    """
    target = current_target(ctx)
    if not create and not exists(target.path):
        raise missing_database(target)
    use_ner = models if ner is None else ner
    kernel = Kernel(target.path, embedder=(embedder or target.embedder) if models else None,
                    ner=target.ner if use_ner else None, create=create, source="cli")
    try:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", NoEmbedderWarning)
                kernel.initialize()
            settings = ctx.find_object(Settings)
            for warning in caught:  # as a note of ours, not a Python warning line
                if issubclass(warning.category, NoEmbedderWarning) and not (settings and settings.quiet):
                    click.echo(f"Note: {warning.message}", err=True)
                elif not issubclass(warning.category, NoEmbedderWarning):
                    warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        except StorageError as exc:
            # a server database without agentbase's tables is what a missing file is: say how to create it
            if not create and is_server(target.path) and "holds no agentbase data" in str(exc):
                raise missing_database(target) from exc
            raise
        yield kernel
    finally:
        kernel.close()
