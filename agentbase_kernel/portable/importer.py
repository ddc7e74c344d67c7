"""Read an agentbase export file (or records from an importer) into a kernel.

The whole import is one write transaction: a bad line (named by its number) rolls everything back,
so a file is imported completely or not at all, and running it again is safe (records whose ids are
already there in the same scope are skipped, or updated when the file's ``updated_at`` is newer).
Every record is checked like an API write (``checks.py``); a record naming a row of another scope
is a conflict (``ownership.py``); a file must end with its trailer, and match it.

Exported rows (``entry``, ``session``, ``message`` ...) are written as they are, ids and times kept.
Records from other products (``memory``, ``chat_message``) go through ingest like an API write
(analysed, embedded, indexed as turns), then get their source's times and history back.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any, Protocol

from ..errors import EmbedderUnavailable, IncompleteExport, InvalidArgument
from ..records import AddResult, Entry, Message
from ..store.protocol import EntryStore, Maintenance, PortableStore, SessionStore, VectorStore
from .checks import check_record
from .format import LineDigest, check_header, decode_line, decode_record
from .ownership import Claims

__all__ = ["Backfill", "ImportStore", "Writes", "import_records", "read_records"]


class ImportStore(PortableStore, EntryStore, SessionStore, VectorStore, Maintenance, Protocol):
    """What an import reads and writes directly: exported rows, what is already there, vectors."""


class Writes(Protocol):
    """The write paths records from other products take, as an API call would (the kernel's)."""

    def add_memories(self, items: Iterable[dict[str, Any]]) -> list[AddResult]: ...

    def update(self, entry_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None) -> Entry: ...

    def add_messages(self, session_id: str, messages: Sequence[dict[str, Any]]) -> list[Message]: ...

    def transaction(self) -> AbstractContextManager[Any]: ...


class Backfill(Protocol):
    """Vectors for the texts that came without a usable one (the ingestor's)."""

    def embed_missing(self, items: Sequence[tuple[str, str]], *,
                      progress: Callable[[int, int], None] | None = None) -> int: ...

    def resume(self) -> bool: ...

BATCH = 256
_MEMORY_KEYS = ("user_id", "agent_id", "project_id", "session_id", "category", "tags", "metadata", "role", "actor",
                "context_type", "confidence", "created_at", "valid_from", "expires_at", "trust")

def _lines(source: Any, progress: Callable[[int, int], None] | None
           ) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """``(where, object, line)`` for each record of a path, a text stream or an iterable of dicts
    (``line`` is the text read, ``None`` for a dict)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise InvalidArgument(f"{path} is not a file")
        total = 0
        if progress is not None:  # progress in records: count the lines first (a fast pass over the bytes)
            with open(path, "rb") as fh:
                total = sum(1 for line in fh if line.strip())
        with open(path, "rb") as fh:
            yield from _stream(io.TextIOWrapper(fh, encoding="utf-8", newline=""), progress, total, fh)
        return
    if hasattr(source, "read"):
        yield from _stream(source, progress, 0, None)
        return
    if isinstance(source, (bytes, dict)) or not isinstance(source, Iterable):
        raise InvalidArgument(f"source must be a path, a text stream or an iterable of dicts, got {type(source).__name__}")
    for n, obj in enumerate(source, 1):
        if not isinstance(obj, dict):
            raise InvalidArgument(f"record {n}: expected a dict, got {type(obj).__name__}")
        yield f"record {n}", obj, None


def _stream(text: IO[str], progress: Callable[[int, int], None] | None, total: int,
            raw: Any) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    lineno = 0
    while True:
        try:
            line = text.readline()
        except UnicodeDecodeError as exc:
            raise InvalidArgument(f"line {lineno + 1}: not valid UTF-8 ({exc.reason})") from None
        if not line:
            return
        lineno += 1
        if line.strip():
            yield f"line {lineno}", decode_line(line, lineno), line
            if progress is not None and lineno % 50 == 0:
                progress(lineno, max(total, lineno) if total else 0)


class _Ending:
    """The trailer check of one read: counts and digests the lines, then compares at the end."""

    def __init__(self, head: dict[str, Any], from_text: bool, allow_truncated: bool) -> None:
        self.version = head.get("format_version", 1)
        self.from_text = from_text
        self.allow_truncated = allow_truncated
        self.digest = LineDigest()
        self.counts: dict[str, int] = {}
        self.trailer: dict[str, Any] | None = None
        self.warnings: list[str] = []

    def problem(self, message: str) -> None:
        if not self.allow_truncated:
            raise IncompleteExport(f"{message}. Nothing was imported; to import what the file holds anyway, "
                                   "pass allow_truncated=True (--allow-truncated)")
        self.warnings.append(f"{message}; imported anyway (allow_truncated)")

    def close(self, where: str, obj: dict[str, Any]) -> None:
        """The trailer at ``where``: compare it with what was read."""
        records, sha = obj.get("records"), obj.get("sha256")
        if not (isinstance(records, dict) and all(isinstance(v, int) for v in records.values())
                and isinstance(sha, (str, type(None)))):
            raise InvalidArgument(f"{where}: the trailer needs records {{type: count}} and sha256")
        self.trailer = obj
        if {k: v for k, v in records.items() if v} != self.counts:
            self.problem(f"{where}: the file does not match its trailer (records {_counted(self.counts)}, the "
                         f"trailer says {_counted(records)}): it was cut or edited")
        elif self.from_text and sha is not None and sha != self.digest.hexdigest():
            self.problem(f"{where}: the file's lines do not match the trailer's SHA-256: it was edited or damaged")

    def end(self) -> None:
        """End of input: a format-2 file must have had its trailer."""
        if self.trailer is not None or not self.from_text:
            return
        if self.version < 2:
            self.warnings.append("this file is format 1 (written before exports ended with a trailer): whether it "
                                 "is complete cannot be checked")
            return
        self.problem("the file ends without its trailer line: it was cut short (a copy or download that stopped), "
                     "so records after the cut are missing")


def _counted(counts: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v) or "none"


def read_records(source: Any, progress: Callable[[int, int], None] | None = None, *, allow_truncated: bool = False,
                 warnings: list[str] | None = None) -> tuple[dict[str, Any], Iterator[tuple[str, str, dict[str, Any]]]]:
    """The header and an iterator of ``(where, kind, fields)``; every record is checked on the way
    (its types, then its values as an API write's), and the file's end against its trailer.

    ``warnings`` collects what was accepted but is worth saying (a format-1 file has no trailer)."""
    items = _lines(source, progress)
    first = next(items, None)
    if first is None:
        raise InvalidArgument("The file is empty - an agentbase export starts with its header line")
    head = check_header(first[1], first[0])
    dim = head["embedder"]["dim"] if head.get("embedder") else None
    ending = _Ending(head, first[2] is not None, allow_truncated)
    if first[2] is not None:
        ending.digest.add(first[2])

    def records() -> Iterator[tuple[str, str, dict[str, Any]]]:
        for where, obj, line in items:
            if ending.trailer is not None:
                raise InvalidArgument(f"{where}: a record after the trailer - the trailer must be the last line")
            if obj.get("type") == "trailer":
                ending.close(where, obj)
                continue
            kind, fields = decode_record(obj, where, dim)
            check_record(kind, fields, where)
            ending.counts[kind] = ending.counts.get(kind, 0) + 1
            if line is not None:
                ending.digest.add(line)
            yield where, kind, fields
        ending.end()
        if warnings is not None:
            warnings.extend(ending.warnings)

    return head, records()


class _Importer:
    """One import run: the counters, the vector decision and the batches of source records."""

    def __init__(self, writes: Writes, store: ImportStore, embedder: Any, head: dict[str, Any], claims: Claims) -> None:
        self.writes = writes
        self.store = store
        self.embedder = embedder
        self.claims = claims
        self.counts: dict[str, dict[str, int]] = {}
        self.keep_vectors = self._vectors_usable(head.get("embedder"))
        self.vectors_dropped = 0
        self.memories: list[tuple[str, dict[str, Any]]] = []
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self.session_times: dict[str, str] = {}

    def _vectors_usable(self, emb: dict[str, Any] | None) -> bool:
        """Keep the file's vectors when they come from the embedder this database uses."""
        if emb is None:
            return False
        mine = self.embedder
        if mine is not None:
            return (str(mine.name), int(mine.dim)) == (emb["name"], emb["dim"])
        recorded = self.store.meta()
        if recorded.get("embedding_model"):
            return (recorded["embedding_model"], int(recorded["embedding_dim"])) == (emb["name"], emb["dim"])
        self.store.check_embedder(emb["name"], emb["dim"])  # this file's vectors define the database's model
        return True

    def count(self, kind: str, outcome: str, n: int = 1) -> None:
        bucket = self.counts.setdefault(kind, {"inserted": 0, "updated": 0, "skipped": 0})
        bucket[outcome] += n

    def add(self, where: str, kind: str, fields: dict[str, Any]) -> None:
        if kind != "chat_message" and self.messages:
            self.flush_messages()
        if kind != "memory" and self.memories:
            self.flush_memories()
        if kind == "memory":
            self.memories.append((where, fields))
            if len(self.memories) >= BATCH:
                self.flush_memories()
            return
        if kind == "chat_message":
            if self.messages and self.messages[0][1]["session_id"] != fields["session_id"]:
                self.flush_messages()
            self.messages.append((where, fields))
            if len(self.messages) >= BATCH:
                self.flush_messages()
            return
        if kind == "vector" and not self.keep_vectors:
            self.vectors_dropped += 1
            return
        rec = self._claimed(where, kind, self.claims.force(kind, fields))
        if rec is None:
            self.count(kind, "skipped")
            return
        try:
            outcome = self.store.import_record(kind, rec)
        except InvalidArgument as exc:
            raise InvalidArgument(f"{where}: {exc}") from exc
        if kind == "entry":
            self.claims.entry_written(rec, self._existed, outcome)
        if kind == "session" and outcome != "skipped":
            self.session_times[rec["id"]] = rec["updated_at"]
        self.count(kind, outcome)

    _existed = False

    def _claimed(self, where: str, kind: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        """The record as ownership allows it (renamed, pointers dropped), or ``None`` to leave it out."""
        claims = self.claims
        if kind == "entry":
            claimed = claims.entry(where, fields)
            if claimed is None:
                return None
            rec, self._existed = claimed
            return rec
        if kind == "session":
            return claims.session(where, fields)
        if kind == "message":
            return claims.message(where, fields)
        if kind == "history":
            return claims.history(where, fields)
        if kind in ("session_entry", "entry_source", "entry_link"):
            return claims.link(where, kind, fields)
        if kind == "vector":
            return fields if claims.vector(fields) else None
        return fields  # entities (shared by name) and traces (their own ids) name no row of a scope

    def flush_memories(self) -> None:
        batch, self.memories = self.memories, []
        ids = [f["id"] for _, f in batch if f.get("id")]
        existing = self.store.get_entries(ids) if ids else {}
        new: list[tuple[str, dict[str, Any]]] = []
        for where, source in batch:
            claimed = self.claims.memory(where, self.claims.force("memory", source),
                                         existing.get(source.get("id") or ""))
            if claimed is None:
                self.count("memory", "skipped")
                continue
            fields, old = claimed
            if old is None:
                new.append((where, fields))
                continue
            self.claims.entries.add(old.id)
            incoming = fields.get("updated_at") or fields.get("created_at")
            if incoming is None or _later_or_equal(old.updated_at, incoming):
                self.count("memory", "skipped")
                continue
            with self._at(where):
                self.writes.update(old.id, text=fields["text"], metadata=fields.get("metadata") or {})
                self.store.restore_times("entries", old.id, updated_at=incoming, history=fields.get("history"))
            self.count("memory", "updated")
        if not new:
            return
        items = []
        for _, fields in new:
            item = {k: fields[k] for k in _MEMORY_KEYS if fields.get(k) is not None}
            items.append({"text": fields["text"], "entry_id": fields.get("id"), **item})
        with self._at(new[0][0] if len(new) == 1 else f"{new[0][0]}..{new[-1][0]}"):
            results = self.writes.add_memories(items)
        for (where, fields), result in zip(new, results):
            if result.event == "NOOP":
                self.count("memory", "skipped")
                continue
            self.claims.entries.add(result.entry.id)
            with self._at(where):
                self.store.restore_times("entries", result.entry.id, created_at=fields.get("created_at"),
                                         updated_at=fields.get("updated_at") or fields.get("created_at"),
                                         history=fields.get("history"))
            self.count("memory", "inserted")

    def flush_messages(self) -> None:
        batch, self.messages = self.messages, []
        span = f"{batch[0][0]}..{batch[-1][0]}" if len(batch) > 1 else batch[0][0]
        sid = self.claims.chat_session(span, batch[0][1]["session_id"])
        if sid is None:
            self.count("chat_message", "skipped", len(batch))
            return
        kept = self.claims.chat_message_ids(span, sid, [fields for _, fields in batch])
        here = set(self.store.message_sessions(f["id"] for f in kept if f.get("id")))
        fresh = []
        for fields in kept:
            if fields.get("id") in here:  # already in this session: a re-import
                continue
            fresh.append({"role": fields["role"], "content": fields["content"], "name": fields.get("name"),
                          "metadata": fields.get("metadata") or {}, "created_at": fields.get("created_at"),
                          "message_id": fields.get("id"), "payload": fields.get("payload"),
                          "status": fields.get("status") or "active"})
        self.count("chat_message", "skipped", len(batch) - len(fresh))
        if not fresh:
            return
        with self._at(f"{batch[0][0]}..{batch[-1][0]}"):
            self.writes.add_messages(sid, fresh)
        self.count("chat_message", "inserted", len(fresh))
        if sid in self.session_times:
            self.store.restore_times("sessions", sid, updated_at=self.session_times[sid])

    class _at:
        """Prefix an ``InvalidArgument`` raised while writing with the record's place in the file."""

        def __init__(self, where: str) -> None:
            self.where = where

        def __enter__(self) -> None:
            return None

        def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
            if isinstance(exc, InvalidArgument) and not str(exc).startswith(("line ", "record ")):
                raise InvalidArgument(f"{self.where}: {exc}") from exc

    def finish(self) -> None:
        if self.memories:
            self.flush_memories()
        if self.messages:
            self.flush_messages()


def _later_or_equal(stored: Any, incoming: str) -> bool:
    from ..store import iso, parse_iso

    try:
        return (iso(stored) or "") >= (iso(parse_iso(incoming)) or "")
    except ValueError:
        raise InvalidArgument(f"updated_at is not an ISO 8601 time: {incoming!r:.80}") from None


def import_records(writes: Writes, store: ImportStore, source: Any, *, embedder: Any, backfill: Backfill,
                   dry_run: bool = False, progress: Callable[[int, int], None] | None = None,
                   embed_progress: Callable[[int, int], None] | None = None, on_conflict: str = "fail",
                   scope: dict[str, str] | None = None, allow_truncated: bool = False) -> dict[str, Any]:
    """Import ``source`` (a path, a text stream, or header + record dicts): exported rows straight
    into ``store``, other products' records through ``writes``; texts without a usable vector get
    one from ``backfill`` (the database's ``embedder``). ``progress(done, total)`` counts records
    (total: the file's lines, 0 for a stream); ``embed_progress(done, total)`` the texts embedded after.

    ``scope`` (``user_id`` / ``agent_id`` / ``project_id``) replaces every record's own; a record
    whose id is in another scope is a conflict, handled by ``on_conflict`` (``ownership.py``).

    Returns ``{"records": n, "by_type": {type: {"inserted", "updated", "skipped"}}, "vectors_dropped",
    "reembedded", "conflicts": [...], "conflicts_total": n, "warnings": [...], "dry_run"}``; with
    ``dry_run`` every record is read and checked, nothing written, and ``by_type`` holds counts of
    what the file contains.
    """
    claims = Claims(store, on_conflict=on_conflict, forced=scope)  # checks on_conflict first
    warnings: list[str] = []
    head, records = read_records(source, progress, allow_truncated=allow_truncated, warnings=warnings)
    if dry_run:
        seen: dict[str, int] = {}
        for _, kind, _ in records:
            seen[kind] = seen.get(kind, 0) + 1
        return {"records": sum(seen.values()), "by_type": seen, "header": head, "warnings": warnings,
                "dry_run": True}
    run: _Importer | None = None
    n = 0
    with writes.transaction():
        run = _Importer(writes, store, embedder, head, claims)
        for where, kind, fields in records:
            run.add(where, kind, fields)
            n += 1
        run.finish()
        if progress is not None:
            progress(n, n)
        # texts that came without a usable vector get one from this database's embedder
        queued = False
        try:
            reembedded = backfill.embed_missing(store.hashes_without_vector(), progress=embed_progress)
        except EmbedderUnavailable:  # a remote embedder fails open: the import lands, vectors are backfilled
            reembedded, queued = 0, True
    if queued:
        backfill.resume()  # the background embedder takes the backlog once the embedder is back
    return {"records": n, "by_type": run.counts, "vectors_dropped": run.vectors_dropped,
            "reembedded": reembedded, "header": head, **claims.report(), "warnings": warnings, "dry_run": False}
