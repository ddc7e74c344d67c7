"""One-command migration into agentbase from Mem0 OSS, LangChain, LlamaIndex and OpenAI data.

Each importer reads its source with the source's own library (or its documented table / JSON
shape) and yields portable records (docs/export-format.md): ``memory`` records for Mem0, and
``session`` + ``chat_message`` records for conversations. ``Kernel.import_`` ingests them like
API writes - so texts are analysed, embedded and indexed as turns - and then restores the source's
ids, times and history, all in one transaction (a failure leaves the database as it was, and a
second run skips what the first imported).

Usage::

    from agentbase_kernel import Kernel
    from agentbase_adapters.importers import import_from

    with Kernel("memory.db") as k:
        summary = import_from(k, "mem0", "mem0-config.json")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from agentbase_kernel import InvalidArgument

from .langchain import chat_history_records, langchain_file_records, langchain_sql_records
from .llamaindex import llamaindex_json_records, llamaindex_sql_records
from .mem0 import mem0_records
from .openai import openai_json_records

__all__ = ["SOURCES", "chat_history_records", "import_from", "langchain_file_records", "langchain_sql_records",
           "llamaindex_json_records", "llamaindex_sql_records", "mem0_records", "openai_json_records", "source_embedder",
           "source_records"]

#: ``--from`` name -> (reader, does it take ``table=``)
SOURCES: dict[str, tuple[Callable[..., Iterator[dict[str, Any]]], bool]] = {
    "mem0": (mem0_records, False),
    "langchain-sql": (langchain_sql_records, True),
    "langchain-file": (langchain_file_records, False),
    "llamaindex-json": (llamaindex_json_records, False),
    "llamaindex-sql": (llamaindex_sql_records, True),
    "openai-json": (openai_json_records, False),
}


def source_records(source: str, location: Any, *, table: str | None = None,
                   user_id: str | None = None) -> Iterator[dict[str, Any]]:
    """The portable records of one source (``SOURCES``) at ``location`` (a path, URL or config)."""
    if source not in SOURCES:
        raise InvalidArgument(f"Unknown source {source!r} - one of: {', '.join(SOURCES)}")
    reader, takes_table = SOURCES[source]
    options: dict[str, Any] = {"user_id": user_id}
    if table is not None:
        if not takes_table:
            raise InvalidArgument(f"--table applies to langchain-sql and llamaindex-sql, not {source}")
        options["table"] = table
    return reader(location, **options)


def import_from(kernel: Any, source: str, location: Any, *, table: str | None = None, user_id: str | None = None,
                dry_run: bool = False, progress: Callable[[int, int], None] | None = None,
                embed_progress: Callable[[int, int], None] | None = None,
                on_conflict: str = "fail") -> dict[str, Any]:
    """Import one source into ``kernel`` (a ``Kernel``); returns ``Kernel.import_``'s summary.

    ``user_id`` is the user of data that names none. A session or memory id already in another
    scope is a conflict (``on_conflict``: ``"fail"``, ``"skip"`` or ``"rekey"``, as for ``Kernel.import_``).
    ``progress(done, total)`` counts records read (the total is unknown: 0); ``embed_progress`` the
    texts embedded after them.
    """
    records = source_records(source, location, table=table, user_id=user_id)
    if progress is not None:
        records = _counted(records, progress)
    summary: dict[str, Any] = kernel.import_(records, dry_run=dry_run, embed_progress=embed_progress,
                                             on_conflict=on_conflict)
    return summary


def _counted(records: Iterator[dict[str, Any]], progress: Callable[[int, int], None]) -> Iterator[dict[str, Any]]:
    for n, record in enumerate(records, 1):
        yield record
        progress(n, 0)


def source_embedder(source: str, location: Any) -> str | None:
    """The embedder spec the source itself names, for a database created to receive it; ``None``: no opinion.

    A Mem0 config names its embedder: the new file gets what ``Memory.from_config`` on that config
    would open it with, so the migrated application finds the file it expects. Chat histories name none.
    """
    if source != "mem0":
        return None
    from ..mem0._config import embedder_spec
    from .mem0 import read_config

    spec = embedder_spec(read_config(location))
    return spec if isinstance(spec, str) else None
