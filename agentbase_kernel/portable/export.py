"""Write a database (or one scope of it) as an agentbase export file, streaming.

Rows come from ``Store.export_records`` (keyset pages from one read snapshot) and go out one line at
a time, so memory stays flat however large the file is.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from ..errors import InvalidArgument
from ..store.base import EntryFilter
from ..store.protocol import EntryStore, Maintenance, PortableStore
from .format import LineDigest, encode_record, header, trailer

__all__ = ["ExportStore", "export_lines", "write_export"]


class ExportStore(PortableStore, EntryStore, Maintenance, Protocol):
    """What an export reads: the rows, how many entries (for progress), the file's facts."""


def _embedder_of(store: ExportStore, embedder: Any) -> tuple[str, int] | None:
    """The embedder the file's vectors were made with: the kernel's, else the one the file records."""
    if embedder is not None:
        return str(embedder.name), int(embedder.dim)
    recorded = store.meta()
    if recorded.get("embedding_model") and recorded.get("embedding_dim"):
        return recorded["embedding_model"], int(recorded["embedding_dim"])
    return None


def export_lines(store: ExportStore, flt: EntryFilter, *, embedder: Any = None, vectors: bool = True,
                 traces: bool = False, filters: dict[str, Any] | None = None,
                 counts: dict[str, int] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> Iterator[str]:
    """The file's lines (without newlines): the header, every record in import order, the trailer."""
    emb = _embedder_of(store, embedder)
    digest = LineDigest()
    line = encode_record("header", {k: v for k, v in header(
        schema_version=store.schema_version(), embedder=emb, filters=filters or {},
        vectors=vectors, traces=traces).items() if k != "type"})
    digest.add(line)
    yield line
    counts = counts if counts is not None else {}
    total = store.count_entries(flt) if progress is not None else 0
    done = 0
    for kind, fields in store.export_records(flt, vectors=vectors, traces=traces):
        counts[kind] = counts.get(kind, 0) + 1
        line = encode_record(kind, fields)
        digest.add(line)
        yield line
        if kind == "entry" and progress is not None:
            done += 1
            progress(done, total)
    yield encode_record("trailer", {k: v for k, v in trailer(counts, digest.hexdigest()).items() if k != "type"})


def write_export(store: ExportStore, out: str | os.PathLike[str] | IO[str], flt: EntryFilter, **options: Any) -> dict[str, int]:
    """Write the export to a path (replaced only once complete) or an open text stream; returns
    how many records of each type were written."""
    counts: dict[str, int] = {}
    lines = export_lines(store, flt, counts=counts, **options)
    if hasattr(out, "write"):
        for line in lines:
            out.write(line + "\n")
        return counts
    if not isinstance(out, (str, os.PathLike)):
        raise InvalidArgument(f"out must be a path or a text stream, got {type(out).__name__}")
    path = Path(out)
    if not path.parent.exists():
        raise InvalidArgument(f"The folder {path.parent} does not exist - create it first")
    partial = path.with_name(path.name + ".partial")
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as fh:
            for line in lines:
                fh.write(line + "\n")
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return counts
