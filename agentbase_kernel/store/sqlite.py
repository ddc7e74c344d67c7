"""``SqliteStore``: every SQL statement of agentbase, on one SQLite file.

Entries carry their FTS5 text (``search_text``); triggers keep ``entries_fts`` in step inside the
same transaction, so the index can never drift from the rows. Raw ``sqlite3`` errors are mapped
to our exception tree at this boundary.

Searches use two per-process caches, both checked against the ``entry_changes`` log (migration 2)
inside the search's own read snapshot, so writes by this process and by others are seen at once:

* ``VectorIndex`` per scope (the filter's user/agent/project/session): the scope's vectors in RAM,
  refreshed row by row from the log. Other filter terms are checked in SQL on the nearest rows
  (over-fetching), or, when too few pass, by ranking only the rows SQL says pass: always exact.
* FTS statistics (documents in the filter, per-term document frequencies and ranked rows), dropped
  whenever the log moves or an entry expires.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..errors import (
    EmbeddingMismatch,
    EntryNotFound,
    InvalidArgument,
    MessageNotFound,
    SchemaTooNew,
    SessionNotFound,
    StorageError,
)
from ..records import ContextType, Entry, HistoryEvent, Message, Provenance, Scope, Session, Trace
from .base import EntryFilter, iso, parse_iso, utcnow
from .connection import Connections, is_locked_error
from .filters import parse_metadata_filter
from .migrations import MIGRATIONS, SCHEMA_VERSION
from .sqlite_filters import compile_metadata_filter
from .vectors import VectorIndex, decode, encode, nearest, top_k_cosine

__all__ = ["SqliteStore"]

F = TypeVar("F", bound=Callable[..., Any])

_ENTRY_COLS = (
    "rid, id, context_type, category, l0_abstract, l1_overview, l2_full, tags, user_id, agent_id, "
    "project_id, session_id, role, actor, confidence, content_hash, metadata, event_dates, flags, "
    "created_at, updated_at, valid_from, invalid_at, expires_at, superseded_by"
)


def scope_key(scope: Scope) -> str:
    return "\x1f".join(v or "" for v in (scope.user_id, scope.agent_id, scope.project_id, scope.session_id))


def _mapped(fn: F) -> F:
    """Translate the sqlite errors a caller can act on; keep the cause."""

    @functools.wraps(fn)
    def wrapper(self: SqliteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except UnicodeEncodeError as exc:  # a lone surrogate in any bound string (issue 9)
            raise InvalidArgument(f"{exc.object[:80]!r} contains lone surrogate code points and is not valid "
                                  "Unicode - decode it with errors='replace' first") from exc
        except OverflowError as exc:  # a Python int beyond SQLite's 64 bits
            raise InvalidArgument(f"A number is too large for the database ({exc}) - pass it as a string") from exc
        except self._module.Error as exc:
            from .connection import _locked

            if is_locked_error(exc):
                raise _locked(self.path, exc) from exc
            if isinstance(exc, self._module.IntegrityError) or "binding parameter" in str(exc):
                raise InvalidArgument(f"Rejected by the database: {exc}") from exc
            raise StorageError(f"SQLite error on {self.path}: {exc}", path=str(self.path)) from exc

    return wrapper  # type: ignore[return-value]


def _select_in(conn: Any, sql: str, values: Iterable[Any], chunk: int = 500) -> list[Any]:
    """Rows of ``sql`` whose ``{marks}`` placeholder is filled with each chunk of distinct values."""
    distinct = list(dict.fromkeys(values))
    rows: list[Any] = []
    for i in range(0, len(distinct), chunk):
        part = distinct[i : i + chunk]
        rows.extend(conn.execute(sql.format(marks=",".join("?" * len(part))), part))
    return rows


# BM25 column weights: the entry's own words, then its context (neighbouring turns). 0.7 for the
# context: LoCoMo dev hit@10 0.871 vs 0.868 at 1.0, and a turn that says the word itself ranks first
_FTS_WEIGHTS = "1.0, 0.7"


def _idf(n: int, df: int) -> float:
    """FTS5's BM25 IDF, floored like FTS5 does so that very common terms still count a little."""
    return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)


# 2 GiB: one scope of 1M memories at 384 dims (1.5 GB) fits; least recently searched scopes go first
_VECTOR_CACHE_BYTES = 2 << 30
# a scope with more vectors is searched through a 1-bit shortlist, then exactly (store/vectors.py)
_VECTOR_SHORTLIST_ABOVE = 50_000
_FTS_CACHE_ITEMS = 20_000
# nearest rows checked against a filter in SQL before asking SQL for every row that passes it
_OVERFETCH_MAX = 4096


def _loads(text: str) -> Any:
    """``json.loads``, with the empty list and object (most tags, flags and dates) read for free."""
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


def _check_filter_value(name: str, value: Any) -> None:
    """A filter compares with one stored value: a list or an object here is a caller's mistake."""
    if not isinstance(value, (str, int, float, bytes)):
        raise InvalidArgument(f"The {name} filter takes a string, got {type(value).__name__}: {value!r:.80}")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class SqliteStore:
    """All persistence for one database file.

    Usage::

        store = SqliteStore(Path("memory.db"))
        store.open()
        store.get_entry("id", Scope(user_id="alice"))
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000, synchronous: str = "NORMAL",
                 use_vec: bool = True, create: bool = True, vector_cache_bytes: int = _VECTOR_CACHE_BYTES,
                 fts_cache: bool = True, vector_shortlist_above: int = _VECTOR_SHORTLIST_ABOVE) -> None:
        self.path = path
        self.create = create
        self.conns = Connections(path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous,
                                 use_vec=use_vec)
        self._module = self.conns.module
        self.vector_cache_bytes = vector_cache_bytes
        self.vector_shortlist_above = vector_shortlist_above
        self.fts_cache = fts_cache
        self._cache_lock = threading.RLock()
        self._vindex: OrderedDict[tuple[str | None, ...], VectorIndex] = OrderedDict()
        self._fts: dict[Any, Any] = {}
        self._fts_seq = -1
        self._fts_now = ""

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def vec_enabled(self) -> bool:
        return bool(self.conns.vec_loaded)

    def open(self) -> None:
        if str(self.path) != ":memory:" and not self.path.exists():
            if not self.create:
                raise StorageError(f"{self.path} does not exist - pass create=True to make it",
                                   path=str(self.path))
            if self.path.parent and not self.path.parent.exists():
                raise StorageError(f"The folder {self.path.parent} does not exist - create it first",
                                   path=str(self.path))
        try:
            conn = self.conns.get()
            # check before touching anything: a newer file must stay byte-for-byte as it was
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.path} has schema version {version}, newer than this agentbase knows "
                    f"({SCHEMA_VERSION}) - upgrade agentbase to open it; the file was not modified",
                    path=str(self.path))
            if str(self.path) != ":memory:" and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            self._migrate()
        except self._module.DatabaseError as exc:
            self.conns.close()
            raise StorageError(f"{self.path} is not a usable SQLite database: {exc}",
                               path=str(self.path)) from exc
        except BaseException:
            self.conns.close()
            raise

    def _migrate(self) -> None:
        conn = self.conns.get()
        while True:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                return
            with self.conns.write() as wconn:
                # another process may have migrated while we waited for the lock
                current = wconn.execute("PRAGMA user_version").fetchone()[0]
                if current != version:
                    continue
                MIGRATIONS[version](wconn)
                wconn.execute(f"PRAGMA user_version = {version + 1}")

    def close(self) -> None:
        self.conns.close()
        with self._cache_lock:
            self._vindex.clear()
            self._fts = {}

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several store calls into one atomic write."""
        try:
            with self.conns.write():
                yield
        except self._module.Error as exc:
            if is_locked_error(exc):
                from .connection import _locked

                raise _locked(self.path, exc) from exc
            raise StorageError(f"SQLite error on {self.path}: {exc}", path=str(self.path)) from exc

    @_mapped
    def schema_version(self) -> int:
        return int(self.conns.get().execute("PRAGMA user_version").fetchone()[0])

    @_mapped
    def journal_mode(self) -> str:
        return str(self.conns.get().execute("PRAGMA journal_mode").fetchone()[0])

    # -- meta / embedder identity -----------------------------------------------------------------
    @_mapped
    def check_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later."""
        with self.conns.write() as conn:
            rows = dict(conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim')").fetchall())
            if not rows:
                conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)",
                                 [("embedding_model", name), ("embedding_dim", str(dim))])
                return
        if int(rows["embedding_dim"]) != dim:
            raise EmbeddingMismatch(
                f"Embedding dimension {dim} does not match this store ({rows['embedding_dim']}, model "
                f"{rows['embedding_model']!r}) - open it with the embedder that created it, or pass a new path",
                path=str(self.path))
        if rows["embedding_model"] != name:
            raise EmbeddingMismatch(
                f"Embedder {name!r} differs from the one that wrote this store ({rows['embedding_model']!r}) - "
                "open it with that embedder, or pass a new path", path=str(self.path))

    @_mapped
    def meta(self) -> dict[str, str]:
        with self.conns.read() as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    # -- filters -----------------------------------------------------------------------------------
    def _where(self, flt: EntryFilter, alias: str = "e", now: str | None = None) -> tuple[str, list[Any]]:
        a = alias
        clauses: list[str] = []
        args: list[Any] = []
        equal = {col: getattr(flt.scope, col) for col in ("user_id", "agent_id", "project_id", "session_id")}
        equal.update(context_type=flt.context_type, category=flt.category, role=flt.role)
        for col, value in equal.items():
            if value is not None:
                _check_filter_value(col, value)
                clauses.append(f"{a}.{col} = ?")
                args.append(value)
        for tag in flt.tags or ():
            clauses.append(f"EXISTS (SELECT 1 FROM json_each({a}.tags) WHERE value = ?)")
            args.append(tag)
        now = now or iso(utcnow())
        if flt.as_of is not None:
            at = iso(flt.as_of)
            clauses.append(f"coalesce({a}.valid_from, {a}.created_at) <= ? AND ({a}.invalid_at IS NULL OR {a}.invalid_at > ?)")
            args.extend([at, at])
        elif not flt.include_invalid:
            clauses.append(f"{a}.invalid_at IS NULL")
        if not flt.include_expired:
            clauses.append(f"({a}.expires_at IS NULL OR {a}.expires_at > ?)")
            args.append(now)
        if flt.since is not None:
            clauses.append(f"{a}.created_at >= ?")
            args.append(iso(flt.since))
        if flt.until is not None:
            clauses.append(f"{a}.created_at <= ?")
            args.append(iso(flt.until))
        if flt.date_window is not None:
            start, end = flt.date_window
            clauses.append(f"{a}.date_max >= ? AND {a}.date_min <= ?")
            args.extend([start.isoformat(), end.isoformat()])
        if flt.metadata:
            sql, margs = compile_metadata_filter(parse_metadata_filter(flt.metadata), f"{a}.metadata")
            clauses.append(sql)
            args.extend(margs)
        return (" AND ".join(clauses) or "1"), args

    # -- entries -----------------------------------------------------------------------------------
    def _entry(self, row: Any) -> Entry:
        (rid, id_, ctype, category, l0, l1, l2, tags, user_id, agent_id, project_id, session_id, role,
         actor, confidence, chash, metadata, event_dates, flags, created, updated, valid_from,
         invalid_at, expires_at, superseded_by) = row
        return Entry(
            id=id_, l2_full=l2, l0_abstract=l0, l1_overview=l1, context_type=ContextType(ctype),
            category=category, tags=_loads(tags),
            scope=Scope(user_id=user_id, agent_id=agent_id, project_id=project_id, session_id=session_id),
            role=role, actor=actor, confidence=confidence, content_hash=chash,
            metadata=_loads(metadata), created_at=parse_iso(created), updated_at=parse_iso(updated),
            valid_from=parse_iso(valid_from), invalid_at=parse_iso(invalid_at),
            expires_at=parse_iso(expires_at), event_dates=_loads(event_dates),
            flags=_loads(flags), superseded_by=superseded_by,
        )

    @_mapped
    def insert_entry(self, row: dict[str, Any], *, history: bool = True) -> tuple[Entry, bool]:
        """Insert, or return the live exact duplicate of the same scope: ``(entry, inserted)``."""
        scope = Scope(row.get("user_id"), row.get("agent_id"), row.get("project_id"), row.get("session_id"))
        now = iso(row.get("created_at") or utcnow())
        entry_id = row.get("id") or str(uuid.uuid4())
        values = {
            "id": entry_id,
            "context_type": row.get("context_type", "memory"),
            "category": row.get("category"),
            "l0_abstract": row["l0_abstract"],
            "l1_overview": row["l1_overview"],
            "l2_full": row["l2_full"],
            "tags": _dumps(list(row.get("tags") or [])),
            "scope_level": scope.level.value,
            "user_id": scope.user_id, "agent_id": scope.agent_id,
            "project_id": scope.project_id, "session_id": scope.session_id,
            "scope_key": scope_key(scope),
            "role": row.get("role"), "actor": row.get("actor"),
            "confidence": float(row.get("confidence", 1.0)),
            "content_hash": row["content_hash"],
            "dedup_key": row["content_hash"] if row.get("dedup", True) else f"{row['content_hash']}:{entry_id}",
            "metadata": _dumps(row.get("metadata") or {}),
            "event_dates": _dumps(list(row.get("event_dates") or [])),
            "date_min": row.get("date_min"), "date_max": row.get("date_max"),
            "flags": _dumps(list(row.get("flags") or [])),
            "subject_key": row.get("subject_key"),
            "search_text": row["search_text"], "search_context": row.get("search_context") or "",
            "created_at": now, "updated_at": now,
            "valid_from": iso(row.get("valid_from")),
            "invalid_at": None,
            "expires_at": iso(row.get("expires_at")),
        }
        cols = ", ".join(values)
        marks = ", ".join("?" * len(values))
        with self.conns.write() as conn:
            cur = conn.execute(
                f"INSERT INTO entries ({cols}) VALUES ({marks}) "
                "ON CONFLICT (scope_key, dedup_key) WHERE invalid_at IS NULL DO NOTHING",
                list(values.values()))
            if cur.rowcount == 0:
                existing = conn.execute(
                    f"SELECT {_ENTRY_COLS} FROM entries WHERE scope_key = ? AND dedup_key = ? "
                    "AND invalid_at IS NULL", (values["scope_key"], values["dedup_key"])).fetchone()
                if existing is None:  # the id itself collided
                    raise InvalidArgument(f"An entry with id {values['id']!r} already exists")
                return self._entry(existing), False
            if history:
                self._history(conn, values["id"], "ADD", None, values["l2_full"], row.get("actor"), row.get("role"), now)
            entry = conn.execute(f"SELECT {_ENTRY_COLS} FROM entries WHERE id = ?", (values["id"],)).fetchone()
            return self._entry(entry), True

    def _history(self, conn: Any, entry_id: str, event: str, old: str | None, new: str | None,
                 actor: str | None, role: str | None, at: str | None = None) -> None:
        conn.execute(
            "INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, role) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (str(uuid.uuid4()), entry_id, event, old, new, at or iso(utcnow()), actor, role))

    @_mapped
    def get_entry(self, entry_id: str, scope: Scope | None = None) -> Entry:
        flt = EntryFilter(scope=scope or Scope(), include_expired=True, include_invalid=True)
        where, args = self._where(flt)
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {_ENTRY_COLS} FROM entries e WHERE e.id = ? AND {where}",
                               [entry_id, *args]).fetchone()
        if row is None:
            raise EntryNotFound(entry_id)
        return self._entry(row)

    @_mapped
    def get_entries(self, entry_ids: Iterable[str]) -> dict[str, Entry]:
        with self.conns.read() as conn:
            rows = _select_in(conn, f"SELECT {_ENTRY_COLS} FROM entries WHERE id IN ({{marks}})", entry_ids)
            return {row[1]: self._entry(row) for row in rows}

    @_mapped
    def entries_by_rid(self, rids: Iterable[int]) -> dict[int, Entry]:
        with self.conns.read() as conn:
            rows = _select_in(conn, f"SELECT {_ENTRY_COLS} FROM entries WHERE rid IN ({{marks}})", rids)
            return {row[0]: self._entry(row) for row in rows}

    @_mapped
    def update_entry(self, entry_id: str, scope: Scope, changes: dict[str, Any], *,
                     actor: str | None = None) -> Entry:
        """Apply column changes; an UPDATE history event when ``l2_full`` changes."""
        with self.conns.write() as conn:
            old = self.get_entry(entry_id, scope)
            sets: dict[str, Any] = {}
            for key, value in changes.items():
                if key in ("tags", "metadata", "flags", "event_dates"):
                    sets[key] = _dumps(value)
                elif key in ("expires_at", "invalid_at", "valid_from"):
                    sets[key] = iso(value)
                else:
                    sets[key] = value
            now = iso(utcnow())
            sets["updated_at"] = now
            if "content_hash" in sets and sets["content_hash"] != old.content_hash:
                keeps_duplicates = conn.execute("SELECT dedup_key != content_hash FROM entries WHERE id = ?",
                                                (entry_id,)).fetchone()[0]
                sets["dedup_key"] = (f"{sets['content_hash']}:{entry_id}" if keeps_duplicates
                                     else sets["content_hash"])
                clash = conn.execute(
                    "SELECT id FROM entries WHERE scope_key = ? AND dedup_key = ? AND invalid_at IS NULL AND id != ?",
                    (scope_key(old.scope), sets["dedup_key"], entry_id)).fetchone()
                if clash:
                    from ..errors import DuplicateEntry

                    raise DuplicateEntry(
                        f"Entry {clash[0]!r} of the same scope already has this text - update or delete that one",
                        existing_id=clash[0])
            assignments = ", ".join(f"{k} = ?" for k in sets)
            conn.execute(f"UPDATE entries SET {assignments} WHERE id = ?", [*sets.values(), entry_id])
            if "l2_full" in changes and changes["l2_full"] != old.l2_full:
                self._history(conn, entry_id, "UPDATE", old.l2_full, changes["l2_full"], actor, old.role, now)
            return self.get_entry(entry_id)

    @_mapped
    def reinforce(self, entry_id: str, confidence: float) -> None:
        """Raise confidence; ``updated_at`` stays, since the content did not change."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET confidence = ? WHERE id = ?", (confidence, entry_id))

    @_mapped
    def delete_entry(self, entry_id: str, scope: Scope, *, actor: str | None = None) -> Entry:
        with self.conns.write() as conn:
            entry = self.get_entry(entry_id, scope)
            self._delete_rows(conn, [entry], actor)
            return entry

    def _delete_rows(self, conn: Any, entries: list[Entry], actor: str | None) -> None:
        now = iso(utcnow())
        for entry in entries:
            self._history(conn, entry.id, "DELETE", entry.l2_full, None, actor, entry.role, now)
        ids = [e.id for e in entries]
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            conn.execute(f"DELETE FROM entries WHERE id IN ({','.join('?' * len(chunk))})", chunk)

    @_mapped
    def delete_entries(self, flt: EntryFilter, *, actor: str | None = None) -> int:
        with self.conns.write() as conn:
            entries = self.list_entries(flt, limit=None)
            self._delete_rows(conn, entries, actor)
            return len(entries)

    @_mapped
    def list_entries(self, flt: EntryFilter, *, limit: int | None = 100, offset: int = 0,
                     order: str = "asc") -> list[Entry]:
        where, args = self._where(flt)
        direction = "DESC" if order == "desc" else "ASC"
        sql = f"SELECT {_ENTRY_COLS} FROM entries e WHERE {where} ORDER BY e.rid {direction}"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args = [*args, limit, offset]
        elif offset:
            sql += " LIMIT -1 OFFSET ?"
            args = [*args, offset]
        with self.conns.read() as conn:
            return [self._entry(r) for r in conn.execute(sql, args)]

    @_mapped
    def count_entries(self, flt: EntryFilter) -> int:
        where, args = self._where(flt)
        with self.conns.read() as conn:
            return int(conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args).fetchone()[0])

    @_mapped
    def history(self, entry_id: str) -> list[HistoryEvent]:
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT id, entry_id, event, old_value, new_value, created_at, actor, role FROM entry_history "
                "WHERE entry_id = ? ORDER BY seq", (entry_id,)).fetchall()
        return [HistoryEvent(r[0], r[1], r[2], r[3], r[4], parse_iso(r[5]), r[6], r[7]) for r in rows]  # type: ignore[arg-type]

    @_mapped
    def live_subject_entries(self, scope: Scope, subject_key: str, exclude_id: str) -> list[Entry]:
        with self.conns.read() as conn:
            rows = conn.execute(
                f"SELECT {_ENTRY_COLS} FROM entries WHERE scope_key = ? AND subject_key = ? "
                "AND invalid_at IS NULL AND id != ?", (scope_key(scope), subject_key, exclude_id)).fetchall()
        return [self._entry(r) for r in rows]

    @_mapped
    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        """Mark ``old_id`` invalid from ``at`` and link it to its successor; never deletes."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET invalid_at = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
                         (iso(at), new_id, iso(utcnow()), old_id))
            conn.execute("INSERT OR IGNORE INTO entry_links (src, dst, relation, created_at) VALUES (?, ?, 'supersedes', ?)",
                         (new_id, old_id, iso(utcnow())))

    @_mapped
    def link_entries(self, src: str, dst: str, relation: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT OR IGNORE INTO entry_links (src, dst, relation, created_at) VALUES (?, ?, ?, ?)",
                         (src, dst, relation, iso(utcnow())))

    @_mapped
    def reset(self) -> None:
        with self.conns.write() as conn:
            for table in ("trace_steps", "retrieval_traces", "entity_links", "entity_entries", "entities",
                          "entry_links", "entry_sources", "session_entries", "messages", "sessions",
                          "entry_history", "entries", "embeddings"):
                conn.execute(f"DELETE FROM {table}")

    # -- vectors -----------------------------------------------------------------------------------
    @_mapped
    def missing_vectors(self, hashes: Iterable[str]) -> set[str]:
        wanted = set(hashes)
        with self.conns.read() as conn:
            have = {r[0] for r in _select_in(conn, "SELECT content_hash FROM embeddings WHERE content_hash IN ({marks})",
                                             wanted)}
        return wanted - have

    @_mapped
    def vectors_for(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        with self.conns.read() as conn:
            rows = _select_in(conn, "SELECT content_hash, vector FROM embeddings WHERE content_hash IN ({marks})", hashes)
            return {h: decode(blob) for h, blob in rows}

    @_mapped
    def put_vectors(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        with self.conns.write() as conn:
            conn.executemany("INSERT OR IGNORE INTO embeddings (content_hash, vector) VALUES (?, ?)",
                             [(h, encode(v)) for h, v in items])

    @_mapped
    def vector_search(self, query: np.ndarray, flt: EntryFilter, k: int, *, force_numpy: bool = False,
                      use_index: bool = True) -> list[tuple[int, float]]:
        """``(entry rid, cosine distance)`` nearest first, ties by rid, within the filter.

        Searches the scope's in-RAM ``VectorIndex`` (both backends), or with ``use_index=False``
        (and inside a write transaction, whose rows may still roll back) scans the file: through
        sqlite-vec, or numpy with ``force_numpy=True`` or without the extension. Same results either way.

        Raises:
            InvalidArgument: the query's dimension is not the stored vectors'.
        """
        if k <= 0:
            return []
        where, args = self._where(flt)
        if use_index and self.vector_cache_bytes > 0 and not self.conns.in_write:
            with self._cache_lock, self.conns.read() as conn:
                index = self._vector_index(conn, flt.scope)
                if index is not None:
                    return self._index_search(conn, index, query, where, args, k)
        blob = encode(query)
        with self.conns.read() as conn:
            if self.vec_enabled and not force_numpy:
                rows = conn.execute(
                    f"SELECT e.rid, vec_distance_cosine(v.vector, ?) AS d FROM entries e "
                    f"JOIN embeddings v ON v.content_hash = e.content_hash WHERE {where} "
                    "ORDER BY d, e.rid LIMIT ?", [blob, *args, k]).fetchall()
                # zero vectors have no direction: sqlite-vec gives NULL, and we leave them out
                return [(int(r[0]), float(r[1])) for r in rows if r[1] is not None]
            rows = conn.execute(
                f"SELECT e.rid, v.vector FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                f"WHERE {where}", args).fetchall()
        try:
            return top_k_cosine(query, [r[0] for r in rows], [r[1] for r in rows], k)
        except ValueError as exc:
            raise InvalidArgument(f"The query vector ({np.asarray(query).size} dims) does not match the "
                                  f"stored vectors: {exc}") from exc

    def _changes_seq(self, conn: Any) -> int:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM entry_changes").fetchone()[0])

    def _scope_where(self, scope: Scope) -> tuple[str, list[Any]]:
        return self._where(EntryFilter(scope=scope, include_expired=True, include_invalid=True))

    def _vector_index(self, conn: Any, scope: Scope) -> VectorIndex | None:
        """The scope's index, brought up to date with the change log; ``None`` if it is over budget."""
        key = (scope.user_id, scope.agent_id, scope.project_id, scope.session_id)
        seq = self._changes_seq(conn)
        index = self._vindex.get(key)
        if index is not None and index.seq != seq and not self._refresh(conn, index, scope, seq):
            del self._vindex[key]
            index = None
        if index is None:
            where, args = self._scope_where(scope)
            count = conn.execute(f"SELECT count(*) FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                                 f"WHERE {where}", args).fetchone()[0]
            first = conn.execute(f"SELECT length(v.vector) FROM entries e JOIN embeddings v "
                                 f"ON v.content_hash = e.content_hash WHERE {where} LIMIT 1", args).fetchone()
            dim = (first[0] // 4) if first else 0
            if count * (dim * 4 + 12) > self.vector_cache_bytes:
                return None
            rows = conn.execute(f"SELECT e.rid, v.vector FROM entries e JOIN embeddings v "
                                f"ON v.content_hash = e.content_hash WHERE {where} ORDER BY e.rid", args)
            try:
                index = VectorIndex.build(rows, count=count, dim=dim, seq=seq,
                                          shortlist_above=self.vector_shortlist_above)
            except ValueError as exc:
                raise StorageError(f"{self.path} holds vectors of different sizes ({exc}) - "
                                   "re-embed it with one embedder", path=str(self.path)) from exc
            self._vindex[key] = index
            total = sum(i.nbytes for i in self._vindex.values())
            while total > self.vector_cache_bytes and len(self._vindex) > 1:
                _, evicted = self._vindex.popitem(last=False)
                total -= evicted.nbytes
        self._vindex.move_to_end(key)
        return index

    def _refresh(self, conn: Any, index: VectorIndex, scope: Scope, seq: int) -> bool:
        """Apply the logged changes past ``index.seq``; False when a rebuild is the better way."""
        low = conn.execute("SELECT min(seq) FROM entry_changes").fetchone()[0]
        if low is None or low > index.seq + 1 or seq < index.seq:
            return False  # the log was pruned past this index (or the file was replaced)
        changed = [r[0] for r in conn.execute("SELECT DISTINCT rid FROM entry_changes WHERE seq > ?", (index.seq,))]
        if len(changed) > max(4096, index.live // 8):
            return False
        where, args = self._scope_where(scope)
        rows: list[tuple[int, bytes]] = []
        for i in range(0, len(changed), 500):
            part = changed[i : i + 500]
            rows.extend(conn.execute(
                f"SELECT e.rid, v.vector FROM entries e JOIN embeddings v ON v.content_hash = e.content_hash "
                f"WHERE e.rid IN ({','.join('?' * len(part))}) AND {where}", [*part, *args]))
        present = {r[0] for r in rows}
        try:
            index.apply([r for r in changed if r not in present], sorted(rows))
        except ValueError:
            return False
        index.seq = seq
        return True

    def _index_search(self, conn: Any, index: VectorIndex, query: np.ndarray, where: str, args: list[Any],
                      k: int) -> list[tuple[int, float]]:
        dim = index.matrix.shape[1]
        if np.asarray(query).shape != (dim,) and index.size:
            raise InvalidArgument(f"The query vector has {np.asarray(query).size} dims, this store's vectors "
                                  f"have {dim} - embed the query with the store's embedder")
        if not index.size:
            return []
        rids = index.rids[: index.size]
        # the filter is checked on the nearest rows, in (distance, rid) order, 2k, 16k, ... at a time;
        # an exact search computes the distances once for every round
        passing: dict[int, bool] = {}
        full: np.ndarray | None = None
        n = max(2 * k, k + 32)
        while True:
            if full is None and index.shortlist_size(n) is None:
                full = index.distances(query)
                if full is None:
                    return []
            found = index.nearest(query, n, dist=full)
            if found is None:
                return []
            order, dist = found
            found_rids = [int(r) for r in rids[order]]
            fresh = [r for r in found_rids if r not in passing]
            ok = self._rids_passing(conn, fresh, where, args)
            passing.update((r, r in ok) for r in fresh)
            out = [(r, float(d)) for r, d in zip(found_rids, dist.tolist()) if passing[r]]
            if len(out) >= k or len(order) < n:
                return out[:k]
            if n >= _OVERFETCH_MAX:
                break
            n *= 8
        # a selective filter: rank only the rows SQL says pass, exactly
        allowed = np.fromiter((r[0] for r in conn.execute(f"SELECT e.rid FROM entries e WHERE {where}", args)),
                              dtype=np.int64)
        if full is None:
            full = index.distances(query)
            if full is None:
                return []
        full = np.where(np.isin(rids, allowed), full, np.inf)
        return [(int(rids[i]), float(full[i])) for i in nearest(full, rids, k)]

    def _rids_passing(self, conn: Any, rids: list[int], where: str, args: list[Any]) -> set[int]:
        out: set[int] = set()
        for i in range(0, len(rids), 500):
            part = rids[i : i + 500]
            out.update(r[0] for r in conn.execute(
                f"SELECT e.rid FROM entries e NOT INDEXED WHERE e.rid IN ({','.join('?' * len(part))}) AND {where}", [*part, *args]))
        return out

    # -- full text ---------------------------------------------------------------------------------
    def _fts_stats(self, conn: Any, now: str) -> dict[Any, Any]:
        """The FTS cache of this snapshot: a new one if the log moved or an entry expired since.

        Each cache belongs to one ``entry_changes`` seq, so a thread only ever stores into it what
        it computed from a snapshot at that seq; searches fill it without holding the lock.
        """
        if not self.fts_cache or self.conns.in_write:
            return {}  # uncached: inside a write, the rows read may still roll back
        with self._cache_lock:
            seq = self._changes_seq(conn)
            stale = seq != self._fts_seq or len(self._fts) > _FTS_CACHE_ITEMS
            if not stale and self._fts_now < now:
                stale = conn.execute("SELECT 1 FROM entries WHERE expires_at > ? AND expires_at <= ? LIMIT 1",
                                     (self._fts_now, now)).fetchone() is not None
            if stale:
                self._fts, self._fts_seq, self._fts_now = {}, seq, now
            else:
                self._fts_now = max(self._fts_now, now)
            return self._fts

    @_mapped
    def fts_search(self, terms: list[str], flt: EntryFilter, k: int, *, per_term: int = 400) -> list[tuple[int, float]]:
        """``(entry rid, score)`` best first: BM25 with the IDF of the caller's scope.

        One FTS5 index serves every tenant, so its IDF is global: a speaker's name that is in
        every other turn of one user's history is rare across all users and would dominate.
        Each term is ranked on its own (``bm25()`` of a one-term query is idf x tf-part), its
        global IDF divided out and the IDF within the filtered scope put back, then summed.
        Counts and each term's ranked rows are cached until the data changes (``_fts_stats``).
        """
        if not terms:
            return []
        now = iso(utcnow())
        where, args = self._where(flt, now=now)
        # the filter without the clock: the cache is emptied when an entry expires
        fkey = (where, tuple(None if a is now else a for a in args))
        scores: dict[int, float] = {}
        with self.conns.read() as conn:
            cache = self._fts_stats(conn, now)
            if "totals" not in cache:
                cache["totals"] = (conn.execute("SELECT count(*) FROM entries_fts_docsize").fetchone()[0] or 1,
                                   conn.execute("SELECT count(*) FROM entries").fetchone()[0])
            if ("n_scope", fkey) not in cache:
                cache["n_scope", fkey] = conn.execute(f"SELECT count(*) FROM entries e WHERE {where}", args).fetchone()[0]
            (n_global, n_entries), n_filter = cache["totals"], cache["n_scope", fkey]
            n_scope = n_filter or 1
            # a filter that every entry passes needs no join (nor a second count) per term
            everything = n_filter == n_entries
            for term in terms:
                match = '"' + term.replace('"', '""') + '"'
                if ("df", match) not in cache:
                    cache["df", match] = conn.execute(
                        "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (match,)).fetchone()[0]
                df_global = cache["df", match]
                if not df_global:
                    continue
                key = ("rank", match, fkey, per_term)
                if key not in cache:
                    cache[key] = self._rank_term(conn, match, where, args, per_term, everything, df_global)
                rows, df_scope = cache[key]
                if not rows:
                    continue
                idf_global = _idf(n_global, df_global)
                idf_scope = _idf(n_scope, df_scope)
                for rid, bm25 in rows:
                    scores[rid] = scores.get(rid, 0.0) + (-bm25) / idf_global * idf_scope
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:k]

    def _rank_term(self, conn: Any, match: str, where: str, args: list[Any], per_term: int, everything: bool,
                   df_global: int) -> tuple[list[tuple[int, float]], int]:
        """One term's best ``per_term`` rows in the filter by ``bm25()``, and its document count there."""
        if everything:
            rows = conn.execute(f"SELECT rowid, bm25(entries_fts, {_FTS_WEIGHTS}) FROM entries_fts WHERE entries_fts MATCH ? "
                                "ORDER BY 2, rowid LIMIT ?", (match, per_term)).fetchall()
            return rows, df_global
        # CROSS JOIN keeps FTS5 as the outer loop: with the scope index outside, SQLite probed
        # the FTS index once per scope row (5-7 s per term at 100k entries, 10 ms this way)
        rows = conn.execute(
            f"SELECT e.rid, bm25(entries_fts, {_FTS_WEIGHTS}) FROM entries_fts CROSS JOIN entries e ON e.rid = entries_fts.rowid "
            f"WHERE entries_fts MATCH ? AND {where} ORDER BY 2, e.rid LIMIT ?", [match, *args, per_term]).fetchall()
        df_scope = len(rows) if len(rows) < per_term else conn.execute(
            f"SELECT count(*) FROM entries_fts CROSS JOIN entries e ON e.rid = entries_fts.rowid "
            f"WHERE entries_fts MATCH ? AND {where}", [match, *args]).fetchone()[0]
        return rows, df_scope

    # -- sessions ----------------------------------------------------------------------------------
    def _session(self, row: Any) -> Session:
        return Session(id=row[0], scope=Scope(row[1], row[2], row[3]), metadata=json.loads(row[4]),
                       created_at=parse_iso(row[5]), updated_at=parse_iso(row[6]),
                       committed_at=parse_iso(row[7]), summary_entry_id=row[8])

    _SESSION_COLS = "id, user_id, agent_id, project_id, metadata, created_at, updated_at, committed_at, summary_entry_id"

    @_mapped
    def ensure_session(self, session_id: str, scope: Scope, metadata: dict[str, Any] | None) -> tuple[Session, bool]:
        with self.conns.write() as conn:
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is not None:
                return self._session(row), False
            now = iso(utcnow())
            conn.execute(
                "INSERT INTO sessions (id, user_id, agent_id, project_id, metadata, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, scope.user_id, scope.agent_id, scope.project_id, _dumps(metadata or {}), now, now))
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            return self._session(row), True

    @_mapped
    def find_session(self, session_id: str) -> Session | None:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return self._session(row) if row else None

    @_mapped
    def list_sessions(self, scope: Scope, limit: int | None, offset: int) -> list[Session]:
        clauses, args = [], []
        for col in ("user_id", "agent_id", "project_id"):
            value = getattr(scope, col)
            if value is not None:
                clauses.append(f"{col} = ?")
                args.append(value)
        sql = f"SELECT {self._SESSION_COLS} FROM sessions WHERE {' AND '.join(clauses) or '1'} ORDER BY rowid"
        sql += " LIMIT ? OFFSET ?"
        args.extend([-1 if limit is None else limit, offset])
        with self.conns.read() as conn:
            return [self._session(r) for r in conn.execute(sql, args)]

    @_mapped
    def update_session(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       committed: bool = False, summary_entry_id: str | None = None) -> Session:
        with self.conns.write() as conn:
            sets, args = ["updated_at = ?"], [iso(utcnow())]
            if metadata is not None:
                sets.append("metadata = ?")
                args.append(_dumps(metadata))
            if committed:
                sets.append("committed_at = ?")
                args.append(iso(utcnow()))
            if summary_entry_id is not None:
                sets.append("summary_entry_id = ?")
                args.append(summary_entry_id)
            cur = conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", [*args, session_id])
            if cur.rowcount == 0:
                raise SessionNotFound(session_id)
            row = conn.execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
            return self._session(row)

    @_mapped
    def delete_session(self, session_id: str) -> None:
        with self.conns.write() as conn:
            self._delete_messages(conn, session_id, None)
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    # -- messages ----------------------------------------------------------------------------------
    _MSG_COLS = "id, session_id, seq, role, content, name, metadata, payload, status, created_at, entry_id"

    def _message(self, row: Any) -> Message:
        return Message(id=row[0], session_id=row[1], seq=row[2], role=row[3], content=row[4], name=row[5],
                       metadata=json.loads(row[6]), payload=json.loads(row[7]) if row[7] is not None else None,
                       status=row[8], created_at=parse_iso(row[9]), entry_id=row[10])

    @_mapped
    def insert_message(self, session_id: str, row: dict[str, Any], position: int | None = None) -> Message:
        with self.conns.write() as conn:
            if position is None:
                seq = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?",
                                   (session_id,)).fetchone()[0]
            else:
                seqs = [r[0] for r in conn.execute(
                    "SELECT seq FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))]
                if position < 0:
                    position = max(0, len(seqs) + position)
                if position >= len(seqs):
                    seq = (seqs[-1] + 1) if seqs else 1
                else:
                    seq = seqs[position]
                    # shift in two steps so UNIQUE (session_id, seq) never sees a clash
                    conn.execute("UPDATE messages SET seq = -(seq + 1) WHERE session_id = ? AND seq >= ?",
                                 (session_id, seq))
                    conn.execute("UPDATE messages SET seq = -seq WHERE session_id = ? AND seq < 0", (session_id,))
            message_id = row.get("id") or f"msg_{uuid.uuid4().hex}"
            conn.execute(
                "INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (message_id, session_id, seq, row["role"], row["content"], row.get("name"),
                 _dumps(row.get("metadata") or {}),
                 None if row.get("payload") is None else _dumps(row["payload"]),
                 row.get("status", "active"), iso(row.get("created_at") or utcnow())))
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (iso(utcnow()), session_id))
            return self.get_message(session_id, message_id)

    @_mapped
    def attach_entry(self, message_id: str, entry_id: str, session_id: str, relation: str = "turn") -> None:
        """Link a message's turn entry: message.entry_id, provenance and the session link."""
        with self.conns.write() as conn:
            conn.execute("UPDATE messages SET entry_id = ? WHERE id = ?", (entry_id, message_id))
            conn.execute("INSERT OR IGNORE INTO entry_sources (entry_id, message_id) VALUES (?, ?)", (entry_id, message_id))
            conn.execute("INSERT OR IGNORE INTO session_entries (session_id, entry_id, relation) VALUES (?, ?, ?)",
                         (session_id, entry_id, relation))

    @_mapped
    def link_source(self, entry_id: str, message_id: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT OR IGNORE INTO entry_sources (entry_id, message_id) VALUES (?, ?)", (entry_id, message_id))

    @_mapped
    def link_session(self, session_id: str, entry_id: str, relation: str) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT OR IGNORE INTO session_entries (session_id, entry_id, relation) VALUES (?, ?, ?)",
                         (session_id, entry_id, relation))

    @_mapped
    def get_message(self, session_id: str, message_id: str) -> Message:
        with self.conns.read() as conn:
            row = conn.execute(f"SELECT {self._MSG_COLS} FROM messages WHERE id = ? AND session_id = ?",
                               (message_id, session_id)).fetchone()
        if row is None:
            raise MessageNotFound(message_id, session_id)
        return self._message(row)

    @_mapped
    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> list[Message]:
        clauses, args = ["session_id = ?"], [session_id]
        if status is not None:
            clauses.append("status = ?")
            args.append(status)
        desc = order == "desc"
        with self.conns.read() as conn:
            for cursor, is_after in ((after, True), (before, False)):
                if cursor is None:
                    continue
                row = conn.execute("SELECT seq FROM messages WHERE id = ? AND session_id = ?",
                                   (cursor, session_id)).fetchone()
                if row is None:
                    raise MessageNotFound(cursor, session_id)
                forward = is_after != desc
                clauses.append("seq > ?" if forward else "seq < ?")
                args.append(row[0])
            sql = (f"SELECT {self._MSG_COLS} FROM messages WHERE {' AND '.join(clauses)} "
                   f"ORDER BY seq {'DESC' if desc else 'ASC'} LIMIT ? OFFSET ?")
            rows = conn.execute(sql, [*args, -1 if limit is None else limit, offset]).fetchall()
        return [self._message(r) for r in rows]

    @_mapped
    def count_messages(self, session_id: str, status: str | None = None) -> int:
        sql, args = "SELECT count(*) FROM messages WHERE session_id = ?", [session_id]
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        with self.conns.read() as conn:
            return int(conn.execute(sql, args).fetchone()[0])

    @_mapped
    def update_message(self, session_id: str, message_id: str, changes: dict[str, Any]) -> Message:
        with self.conns.write() as conn:
            self.get_message(session_id, message_id)
            sets, args = [], []
            for key, value in changes.items():
                sets.append(f"{key} = ?")
                args.append(_dumps(value) if key in ("metadata", "payload") else value)
            if sets:
                conn.execute(f"UPDATE messages SET {', '.join(sets)} WHERE id = ?", [*args, message_id])
            return self.get_message(session_id, message_id)

    @_mapped
    def delete_message(self, session_id: str, message_id: str) -> Message:
        with self.conns.write() as conn:
            message = self.get_message(session_id, message_id)
            self._drop_messages(conn, [message])
            return message

    @_mapped
    def delete_messages(self, session_id: str, status: str | None = None) -> int:
        with self.conns.write() as conn:
            return self._delete_messages(conn, session_id, status)

    def _delete_messages(self, conn: Any, session_id: str, status: str | None) -> int:
        messages = self.list_messages(session_id, status=status)
        self._drop_messages(conn, messages)
        return len(messages)

    def _drop_messages(self, conn: Any, messages: list[Message]) -> None:
        """Delete messages and the entries that only they produced (turns and facts)."""
        if not messages:
            return
        ids = [m.id for m in messages]
        derived: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            derived.update(r[0] for r in conn.execute(
                f"SELECT entry_id FROM entry_sources WHERE message_id IN ({','.join('?' * len(chunk))})", chunk))
            derived.update(m.entry_id for m in messages[i : i + 500] if m.entry_id)
            conn.execute(f"DELETE FROM messages WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        orphans = [eid for eid in derived if conn.execute(
            "SELECT 1 FROM entry_sources WHERE entry_id = ? UNION ALL SELECT 1 FROM messages WHERE entry_id = ? LIMIT 1",
            (eid, eid)).fetchone() is None]
        existing = list(self.get_entries(orphans).values())
        self._delete_rows(conn, existing, None)

    @_mapped
    def provenance(self, entry_ids: Iterable[str]) -> dict[str, list[Provenance]]:
        ids = list(dict.fromkeys(entry_ids))
        out: dict[str, list[Provenance]] = {i: [] for i in ids}
        with self.conns.read() as conn:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                for entry_id, mid, sid, role, meta in conn.execute(
                        "SELECT s.entry_id, m.id, m.session_id, m.role, m.metadata FROM entry_sources s "
                        f"JOIN messages m ON m.id = s.message_id WHERE s.entry_id IN ({','.join('?' * len(chunk))}) "
                        "ORDER BY m.rid", chunk):
                    out[entry_id].append(Provenance(mid, sid, role, json.loads(meta)))
        return out

    @_mapped
    def neighbour_turn_hashes(self, rids: Iterable[int]) -> dict[int, tuple[str | None, str | None]]:
        """For each turn entry (by rid), the content hashes of the turns just before and after it."""
        def near(alias: str, op: str, agg: str) -> str:
            return (f"LEFT JOIN messages {alias}m ON {alias}m.session_id = m.session_id AND {alias}m.seq = "
                    f"(SELECT {agg}(seq) FROM messages WHERE session_id = m.session_id AND seq {op} m.seq) "
                    f"LEFT JOIN entries {alias}e ON {alias}e.id = {alias}m.entry_id ")

        with self.conns.read() as conn:
            rows = _select_in(
                conn,
                "SELECT e.rid, pe.content_hash, ne.content_hash FROM entries e JOIN messages m ON m.entry_id = e.id "
                + near("p", "<", "max") + near("n", ">", "min") + "WHERE e.rid IN ({marks})", rids)
        return {int(rid): (prev, nxt) for rid, prev, nxt in rows if prev or nxt}

    @_mapped
    def append_search_context(self, entry_id: str, text: str) -> None:
        """Add words to an entry's FTS context column (a reply that came after it); its content is unchanged."""
        with self.conns.write() as conn:
            conn.execute("UPDATE entries SET search_context = search_context || ? WHERE id = ?", (text, entry_id))

    @_mapped
    def session_neighbours(self, entry_ids: list[str], window: int, flt: EntryFilter) -> dict[str, list[str]]:
        """For each turn entry, the turn entries within ``window`` turns of it in its session."""
        where, args = self._where(flt)
        out: dict[str, list[str]] = {}
        with self.conns.read() as conn:
            for entry_id in entry_ids:
                row = conn.execute("SELECT session_id, seq FROM messages WHERE entry_id = ? ORDER BY rid LIMIT 1",
                                   (entry_id,)).fetchone()
                if row is None:
                    continue
                rows = conn.execute(
                    f"SELECT DISTINCT e.id FROM messages m JOIN entries e ON e.id = m.entry_id "
                    f"WHERE m.session_id = ? AND m.seq BETWEEN ? AND ? AND e.id != ? AND {where} ORDER BY m.seq",
                    [row[0], row[1] - window, row[1] + window, entry_id, *args]).fetchall()
                out[entry_id] = [r[0] for r in rows]
        return out

    @_mapped
    def session_linked(self, session_id: str, flt: EntryFilter, relation: str | None = None) -> list[str]:
        where, args = self._where(flt)
        sql = (f"SELECT e.id FROM session_entries s JOIN entries e ON e.id = s.entry_id "
               f"WHERE s.session_id = ? AND {where}")
        params = [session_id, *args]
        if relation:
            sql += " AND s.relation = ?"
            params.append(relation)
        with self.conns.read() as conn:
            return [r[0] for r in conn.execute(sql + " ORDER BY e.rid", params)]

    # -- entities ----------------------------------------------------------------------------------
    @_mapped
    def add_entities(self, entry_id: str, entities: list[tuple[str, str, str]], observed_at: datetime) -> None:
        """Store ``(norm, label, text)`` entities for an entry and link those that co-occur."""
        if not entities:
            return
        with self.conns.write() as conn:
            ids = []
            for norm, label, text in entities:
                conn.execute("INSERT OR IGNORE INTO entities (norm, label, text) VALUES (?, ?, ?)", (norm, label, text))
                eid = conn.execute("SELECT id FROM entities WHERE norm = ? AND label = ?", (norm, label)).fetchone()[0]
                ids.append(eid)
                conn.execute("INSERT OR IGNORE INTO entity_entries (entity_id, entry_id) VALUES (?, ?)", (eid, entry_id))
            at = iso(observed_at)
            unique = sorted(set(ids))
            for i, a in enumerate(unique):
                for b in unique[i + 1 :]:
                    conn.execute("INSERT OR IGNORE INTO entity_links (a, b, entry_id, observed_at) VALUES (?, ?, ?, ?)",
                                 (a, b, entry_id, at))

    @_mapped
    def entity_graph(self, flt: EntryFilter, entity: str | None = None, limit: int = 200) -> dict[str, Any]:
        where, args = self._where(flt)
        with self.conns.read() as conn:
            node_rows = conn.execute(
                f"SELECT n.id, n.norm, n.label, n.text, count(*) FROM entities n JOIN entity_entries x ON x.entity_id = n.id "
                f"JOIN entries e ON e.id = x.entry_id WHERE {where} "
                + ("AND n.norm = ? " if entity else "")
                + "GROUP BY n.id ORDER BY count(*) DESC LIMIT ?",
                [*args, *([entity] if entity else []), limit]).fetchall()
            ids = [r[0] for r in node_rows]
            edges: list[dict[str, Any]] = []
            if ids:
                marks = ",".join("?" * len(ids))
                for a, b, entry_id, at in conn.execute(
                        f"SELECT l.a, l.b, l.entry_id, l.observed_at FROM entity_links l JOIN entries e ON e.id = l.entry_id "
                        f"WHERE (l.a IN ({marks}) OR l.b IN ({marks})) AND {where}", [*ids, *ids, *args]):
                    edges.append({"a": a, "b": b, "entry_id": entry_id, "observed_at": at})
                extra = {e["a"] for e in edges} | {e["b"] for e in edges}
                missing = list(extra - set(ids))
                if missing:
                    node_rows += conn.execute(
                        f"SELECT id, norm, label, text, 0 FROM entities WHERE id IN ({','.join('?' * len(missing))})",
                        missing).fetchall()
        nodes = [{"id": r[0], "norm": r[1], "label": r[2], "text": r[3], "entries": r[4]} for r in node_rows]
        return {"nodes": nodes, "edges": edges}

    # -- traces ------------------------------------------------------------------------------------
    @_mapped
    def save_trace(self, trace: Trace, scope: Scope, result_ids: list[str], total_ms: float) -> None:
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO retrieval_traces (id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (trace.id, trace.query, _dumps(scope.as_dict()), _dumps(trace.intents), trace.degrade_reason,
                 _dumps(result_ids), total_ms, iso(utcnow())))
            conn.executemany(
                "INSERT INTO trace_steps (trace_id, idx, name, ms, candidates, params) VALUES (?, ?, ?, ?, ?, ?)",
                [(trace.id, i, s.name, s.ms, s.candidates, _dumps(s.params)) for i, s in enumerate(trace.steps)])

    @_mapped
    def load_traces(self, scope: Scope, limit: int = 20) -> list[dict[str, Any]]:
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at "
                "FROM retrieval_traces ORDER BY created_at DESC LIMIT ?", (max(limit * 20, limit),)).fetchall()
            out = []
            wanted = scope.as_dict()
            for r in rows:
                stored = json.loads(r[2])
                if any(stored.get(k) != v for k, v in wanted.items()):
                    continue
                steps = [{"name": s[0], "ms": s[1], "candidates": s[2], "params": json.loads(s[3])} for s in conn.execute(
                    "SELECT name, ms, candidates, params FROM trace_steps WHERE trace_id = ? ORDER BY idx", (r[0],))]
                out.append({"id": r[0], "query": r[1], "scope": stored, "intents": json.loads(r[3]),
                            "degrade_reason": r[4], "result_ids": json.loads(r[5]), "total_ms": r[6],
                            "created_at": r[7], "steps": steps})
                if len(out) >= limit:
                    break
        return out

    # -- verification ------------------------------------------------------------------------------
    @_mapped
    def verify(self) -> dict[str, Any]:
        """Check the file: SQLite integrity, FTS in step with entries, vectors for every text."""
        with self.conns.read() as conn:
            # A connection that outlived writes made by this process's other connections can hold a
            # stale FTS5 structure: its integrity_check then says "malformed inverted index" on a
            # healthy file (issue 9). A fresh connection of the same library sees the file as it is.
            fresh = self._module.connect(str(self.path), timeout=self.conns.busy_timeout_ms / 1000)
            try:
                integrity = fresh.execute("PRAGMA integrity_check").fetchone()[0]
            finally:
                fresh.close()
            fk = conn.execute("PRAGMA foreign_key_check").fetchall()
            try:
                conn.execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)")
                fts_ok = True
            except self._module.Error:
                fts_ok = False
            n_entries = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
            n_fts = conn.execute("SELECT count(*) FROM entries_fts_docsize").fetchone()[0]
            missing_vec = conn.execute(
                "SELECT count(DISTINCT e.content_hash) FROM entries e LEFT JOIN embeddings v "
                "ON v.content_hash = e.content_hash WHERE v.content_hash IS NULL").fetchone()[0]
        return {"integrity": integrity, "foreign_keys": len(fk), "fts_ok": bool(fts_ok and n_fts == n_entries),
                "entries": n_entries, "fts_rows": n_fts, "texts_without_vector": missing_vec,
                "ok": integrity == "ok" and not fk and fts_ok and n_fts == n_entries}

    @_mapped
    def rebuild_fts(self) -> None:
        with self.conns.write() as conn:
            conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('rebuild')")

    @_mapped
    def hashes_without_vector(self) -> list[tuple[str, str]]:
        with self.conns.read() as conn:
            return [(r[0], r[1]) for r in conn.execute(
                "SELECT e.content_hash, min(e.l2_full) FROM entries e LEFT JOIN embeddings v "
                "ON v.content_hash = e.content_hash WHERE v.content_hash IS NULL GROUP BY e.content_hash")]
