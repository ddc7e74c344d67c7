"""Raw rows in and out, for the portable export format (``agentbase_kernel/portable/``).

Export reads every table the filter reaches in keyset-paged queries from one read snapshot, so a
file of any size streams in constant memory. Records are the same from every backend - times as
fixed-width ISO text, JSON fields as data, vectors as little-endian float32 bytes - so a file
exported from one imports into the other. Import writes those rows back keeping ids, times,
history, links and vectors; what a row points to is checked first, so a record whose target was
filtered out or deduplicated away is skipped instead of breaking a foreign key.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...errors import InvalidArgument
from ...records import Scope
from .. import rows
from ..base import EntryFilter
from ..vectors import decode
from .core import mapped
from .entities import EntitiesMixin
from .traces import TRACE_COLS, TracesMixin

__all__ = ["PortableMixin"]

# free text columns (PostgreSQL stores them escaped) and JSON columns among the exported fields
_TEXTS = frozenset({"l0_abstract", "l1_overview", "l2_full", "search_text", "search_context", "old_value",
                    "new_value", "content"})
_JSON = frozenset({*rows.JSON_ENTRY_FIELDS, "payload"})



class PortableMixin(EntitiesMixin, TracesMixin):
    """``export_records`` / ``import_record`` / ``restore_times`` of the ``Store`` protocol."""

    @abstractmethod
    def _vector_param(self, vector: np.ndarray) -> Any:
        """A parameter for the ``embeddings.vector`` column."""

    @abstractmethod
    def _vector_bytes(self, value: Any) -> bytes:
        """An ``embeddings.vector`` column as read, as little-endian float32 bytes."""

    @abstractmethod
    def _export_error(self, exc: BaseException) -> BaseException | None:
        """The kernel's exception for a driver error met while exporting (``None``: not a driver error)."""

    def _vectors_added(self, conn: Any, dim: int, count: int) -> None:
        """``count`` vectors of ``dim`` dimensions were written (a backend that indexes them checks its index)."""

    def _out(self, rec: dict[str, Any]) -> dict[str, Any]:
        """A row's fields as the export format has them: times as ISO text, JSON as data, texts as given."""
        d = self.dialect
        return {k: (d.iso(v) if k in rows.TIME_FIELDS else d.data(v) if k in _JSON and v is not None
                    else d.text_out(v) if k in _TEXTS else v) for k, v in rec.items()}

    def _in(self, rec: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
        """``names`` of an exported record as parameters (times checked, texts as stored); JSON stays data."""
        d = self.dialect
        values = {k: rec.get(k) for k in names}
        return {k: (d.time(rows.export_time(v, k)) if k in rows.TIME_FIELDS
                    else d.text(v) if k in _TEXTS and isinstance(v, str) else v) for k, v in values.items()}

    # -- export ----------------------------------------------------------------------------------
    def _session_where(self, scope: Scope, alias: str = "s") -> tuple[str, list[Any]]:
        clauses, args = [], []
        for col in ("user_id", "agent_id", "project_id"):
            value = getattr(scope, col)
            if value is not None:
                clauses.append(f"{alias}.{col} = ?")
                args.append(value)
        if scope.session_id is not None:
            clauses.append(f"{alias}.id = ?")
            args.append(scope.session_id)
        return (" AND ".join(clauses) or self.dialect.true), args

    def _pages(self, conn: Any, sql: str, args: list[Any], start: Any = 0) -> Iterator[Any]:
        """Rows of ``sql`` (whose first column is the key and which has ``key > ?`` as its first
        parameter and ``LIMIT ?`` as its last), page by page."""
        last = start
        while True:
            page = conn.execute(sql, [last, *args, rows.PAGE]).fetchall()
            yield from page
            if len(page) < rows.PAGE:
                return
            last = page[-1][0]

    def export_records(self, flt: EntryFilter, *, vectors: bool = False,
                       traces: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row the filter reaches as ``(kind, fields)``, in an order that imports cleanly."""
        where, wargs = self.where_sql(flt, "e")
        swhere, sargs = self._session_where(flt.scope, "s")
        everything = flt.scope.is_empty and not flt.metadata
        try:
            with self.conns.read(snapshot=True) as conn:
                yield from self._export_entities(conn, where, wargs)
                yield from self._export_entries(conn, where, wargs)
                if everything:
                    for row in self._pages(conn, "SELECT h.seq, h.entry_id, " + ", ".join(f"h.{c}" for c in rows.HISTORY_FIELDS)
                                           + " FROM entry_history h WHERE h.seq > ? AND NOT EXISTS "
                                           "(SELECT 1 FROM entries x WHERE x.id = h.entry_id) ORDER BY h.seq LIMIT ?", []):
                        yield "history", self._out({"entry_id": row[1], **dict(zip(rows.HISTORY_FIELDS, row[2:]))})
                if vectors:
                    for h, vec in self._pages(conn, "SELECT v.content_hash, v.vector FROM embeddings v "
                                              "WHERE v.content_hash > ? AND EXISTS (SELECT 1 FROM entries e WHERE "
                                              f"e.content_hash = v.content_hash AND {where}) "
                                              "ORDER BY v.content_hash LIMIT ?", wargs, start=""):
                        yield "vector", {"content_hash": h, "vector": self._vector_bytes(vec)}
                order = self.dialect.row_order
                for row in self._pages(conn, f"SELECT s.{order}, " + ", ".join(f"s.{c}" for c in rows.SESSION_FIELDS)
                                       + f" FROM sessions s WHERE s.{order} > ? AND {swhere} ORDER BY s.{order} LIMIT ?",
                                       sargs):
                    yield "session", self._out(dict(zip(rows.SESSION_FIELDS, row[1:])))
                for row in self._pages(conn, "SELECT m.rid, " + ", ".join(f"m.{c}" for c in rows.MESSAGE_FIELDS)
                                       + " FROM messages m JOIN sessions s ON s.id = m.session_id "
                                       f"WHERE m.rid > ? AND {swhere} ORDER BY m.rid LIMIT ?", sargs):
                    yield "message", self._out(dict(zip(rows.MESSAGE_FIELDS, row[1:])))
                dwhere, _ = self.where_sql(flt, "d")
                yield from self._export_links(conn, where, wargs, dwhere, swhere, sargs)
                if traces:
                    yield from self._export_traces(conn, flt.scope)
        except Exception as exc:
            error = self._export_error(exc)
            if error is None:
                raise
            raise error from exc

    def _export_entities(self, conn: Any, where: str, wargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        sql = ("SELECT n.id, n.norm, n.label, n.text FROM entities n WHERE n.id > ? AND EXISTS (SELECT 1 FROM "
               f"entity_entries ee JOIN entries e ON e.id = ee.entry_id WHERE ee.entity_id = n.id AND {where}) "
               "ORDER BY n.id LIMIT ?")
        for _, norm, label, text in self._pages(conn, sql, wargs):
            yield "entity", {"norm": norm, "label": label, "text": text}

    def _export_entries(self, conn: Any, where: str, wargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        d = self.dialect
        cols = ", ".join(f"e.{c}" for c in rows.ENTRY_FIELDS)
        sql = (f"SELECT e.rid, {cols}, e.dedup_key = e.content_hash FROM entries e WHERE e.rid > ? AND {where} "
               "ORDER BY e.rid LIMIT ?")
        last = 0
        while True:
            page = conn.execute(sql, [last, *wargs, rows.PAGE]).fetchall()
            if not page:
                return
            last = page[-1][0]
            ids = [r[1] for r in page]
            history: dict[str, list[dict[str, Any]]] = {}
            for h in self.select_in(conn, f"SELECT entry_id, {', '.join(rows.HISTORY_FIELDS)} FROM entry_history "
                                          "WHERE {in} ORDER BY seq", "entry_id", ids):
                history.setdefault(h[0], []).append(self._out(dict(zip(rows.HISTORY_FIELDS, h[1:]))))
            entities: dict[str, list[list[str]]] = {}
            for entry_id, norm, label in self.select_in(
                    conn, "SELECT ee.entry_id, n.norm, n.label FROM entity_entries ee JOIN entities n ON n.id = ee.entity_id "
                    f"WHERE {{in}} ORDER BY {d.binary_order('n.norm')}, {d.binary_order('n.label')}", "ee.entry_id", ids):
                entities.setdefault(entry_id, []).append([norm, label])
            links: dict[str, list[list[Any]]] = {}
            for entry_id, an, al, bn, bl, at in self.select_in(
                    conn, "SELECT l.entry_id, a.norm, a.label, b.norm, b.label, l.observed_at FROM entity_links l "
                    "JOIN entities a ON a.id = l.a JOIN entities b ON b.id = l.b WHERE {in}", "l.entry_id", ids):
                pair = sorted([[an, al], [bn, bl]])
                links.setdefault(entry_id, []).append([*pair, d.iso(at)])
            for row in page:
                rec = self._out(dict(zip(rows.ENTRY_FIELDS, row[1:-1])))
                yield "entry", rows.export_entry_record(rec, row[-1], history, entities, links)
            if len(page) < rows.PAGE:
                return

    def _export_links(self, conn: Any, where: str, wargs: list[Any], dwhere: str, swhere: str,
                      sargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        o = self.dialect.row_order
        for row in self._pages(conn, f"SELECT se.{o}, se.session_id, se.entry_id, se.relation FROM session_entries se "
                               "JOIN sessions s ON s.id = se.session_id JOIN entries e ON e.id = se.entry_id "
                               f"WHERE se.{o} > ? AND {swhere} AND {where} ORDER BY se.{o} LIMIT ?",
                               [*sargs, *wargs]):
            yield "session_entry", {"session_id": row[1], "entry_id": row[2], "relation": row[3]}
        for row in self._pages(conn, f"SELECT es.{o}, es.entry_id, es.message_id FROM entry_sources es "
                               "JOIN entries e ON e.id = es.entry_id JOIN messages m ON m.id = es.message_id "
                               "JOIN sessions s ON s.id = m.session_id "
                               f"WHERE es.{o} > ? AND {where} AND {swhere} ORDER BY es.{o} LIMIT ?",
                               [*wargs, *sargs]):
            yield "entry_source", {"entry_id": row[1], "message_id": row[2]}
        for row in self._pages(conn, f"SELECT l.{o}, l.src, l.dst, l.relation, l.created_at FROM entry_links l "
                               "JOIN entries e ON e.id = l.src JOIN entries d ON d.id = l.dst "
                               f"WHERE l.{o} > ? AND {where} AND {dwhere} ORDER BY l.{o} LIMIT ?",
                               [*wargs, *wargs]):
            yield "entry_link", {"src": row[1], "dst": row[2], "relation": row[3], "created_at": self.dialect.iso(row[4])}

    def _export_traces(self, conn: Any, scope: Scope) -> Iterator[tuple[str, dict[str, Any]]]:
        where, args = self._trace_where(scope)
        o = self.dialect.row_order
        for row in self._pages(conn, f"SELECT {o}, {TRACE_COLS} FROM retrieval_traces WHERE {o} > ? AND {where} "
                               f"ORDER BY {o} LIMIT ?", args):
            yield "trace", self._trace(conn, row[1:])

    # -- import ----------------------------------------------------------------------------------
    @mapped
    def import_record(self, kind: str, fields: dict[str, Any]) -> str:
        """Write one exported row keeping its ids and times: ``"inserted"``, ``"updated"`` or ``"skipped"``."""
        handler = getattr(self, f"_import_{kind}", None)
        if handler is None:
            raise InvalidArgument(f"Unknown record type {kind!r}")
        current = self.conns.current
        if current is not None and self.conns.in_write:
            # inside the caller's transaction (``Kernel.import_``): a failure rolls all of it back,
            # so a savepoint per record (two more statements each) would buy nothing
            return str(handler(current, fields))
        with self.conns.write() as conn:
            return str(handler(conn, fields))

    def _update_if_newer(self, conn: Any, table: str, values: dict[str, Any]) -> str:
        """Overwrite the row of ``table`` with ``values["id"]`` when ``values`` were updated later:
        ``"updated"``, ``"skipped"`` (ours is as new or newer), or ``"missing"`` (no such row)."""
        existing = conn.execute(f"SELECT updated_at FROM {table} WHERE id = ?", (values["id"],)).fetchone()
        if existing is None:
            return "missing"
        if values["updated_at"] <= existing[0]:
            return "skipped"
        sets = {k: v for k, v in values.items() if k != "id"}
        conn.execute(f"UPDATE {table} SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                     [*sets.values(), values["id"]])
        return "updated"

    def _import_entity(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT INTO entities (norm, label, text) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                           (rec["norm"], rec["label"], rec["text"]))
        return "inserted" if cur.rowcount else "skipped"

    def _import_entry(self, conn: Any, rec: dict[str, Any]) -> str:
        values = self._in(rec, rows.ENTRY_FIELDS)
        rows.complete_import_entry(values, rec, self.dialect.json)
        outcome = self._update_if_newer(conn, "entries", values)
        if outcome == "skipped":
            return outcome
        if outcome == "updated":
            conn.execute("DELETE FROM entity_entries WHERE entry_id = ?", (values["id"],))
            conn.execute("DELETE FROM entity_links WHERE entry_id = ?", (values["id"],))
        else:
            cols = ", ".join(values)
            cur = conn.execute(f"INSERT INTO entries ({cols}) VALUES ({', '.join('?' * len(values))}) "
                               "ON CONFLICT (scope_key, dedup_key) WHERE invalid_at IS NULL DO NOTHING",
                               list(values.values()))
            if cur.rowcount == 0:  # the same live text in the same scope under another id: keep that one
                return "skipped"
            outcome = "inserted"
            self._rows_written(1)
        for event in rec.get("history") or ():
            self._insert_history(conn, values["id"], event)
        for norm, label in rec.get("entities") or ():
            conn.execute("INSERT INTO entity_entries (entity_id, entry_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                         (self._entity_id(conn, norm, label), values["id"]))
        for a, b, observed_at in rec.get("entity_links") or ():
            ids = sorted([self._entity_id(conn, *a), self._entity_id(conn, *b)])
            conn.execute("INSERT INTO entity_links (a, b, entry_id, observed_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT DO NOTHING",
                         (*ids, values["id"], self.dialect.time(rows.export_time(observed_at, "observed_at"))))
        return outcome

    def _insert_history(self, conn: Any, entry_id: str, event: dict[str, Any]) -> bool:
        e = self._in(event, ("id", "event", "old_value", "new_value", "created_at", "actor", "role"))
        cur = conn.execute("INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, "
                           "role) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                           (e["id"], entry_id, e["event"], e["old_value"], e["new_value"], e["created_at"], e["actor"],
                            e["role"]))
        return bool(cur.rowcount)

    def _import_history(self, conn: Any, rec: dict[str, Any]) -> str:
        return "inserted" if self._insert_history(conn, rec["entry_id"], rec) else "skipped"

    def _import_vector(self, conn: Any, rec: dict[str, Any]) -> str:
        raw = rec["vector"]
        vector = decode(bytes(raw)) if isinstance(raw, (bytes, bytearray, memoryview)) else np.asarray(raw, "<f4")
        cur = conn.execute("INSERT INTO embeddings (content_hash, vector) VALUES (?, ?) ON CONFLICT DO NOTHING",
                           (rec["content_hash"], self._vector_param(vector)))
        if not cur.rowcount:
            return "skipped"
        self._vectors_added(conn, int(vector.size), 1)
        return "inserted"

    def _entry_or_none(self, conn: Any, entry_id: str | None) -> str | None:
        if entry_id is None:
            return None
        return entry_id if conn.execute("SELECT 1 FROM entries WHERE id = ?", (entry_id,)).fetchone() else None

    def _import_session(self, conn: Any, rec: dict[str, Any]) -> str:
        values = self._in(rec, rows.SESSION_FIELDS)
        values["metadata"] = self.dialect.json(values["metadata"] or {})
        values["summary_entry_id"] = self._entry_or_none(conn, values["summary_entry_id"])
        outcome = self._update_if_newer(conn, "sessions", values)
        if outcome != "missing":
            return outcome
        conn.execute(f"INSERT INTO sessions ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                     list(values.values()))
        return "inserted"

    def _import_message(self, conn: Any, rec: dict[str, Any]) -> str:
        d = self.dialect
        if conn.execute("SELECT 1 FROM messages WHERE id = ?", (rec["id"],)).fetchone():
            return "skipped"
        if not conn.execute(f"SELECT 1 FROM sessions WHERE id = ?{d.for_update}", (rec["session_id"],)).fetchone():
            raise InvalidArgument(f"Message {rec['id']!r} belongs to session {rec['session_id']!r}, which is not "
                                  "in the file before it")
        seq = rec["seq"]
        if conn.execute("SELECT 1 FROM messages WHERE session_id = ? AND seq = ?", (rec["session_id"], seq)).fetchone():
            seq = conn.execute("SELECT max(seq) + 1 FROM messages WHERE session_id = ?", (rec["session_id"],)).fetchone()[0]
        conn.execute("INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, "
                     "created_at, entry_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (rec["id"], rec["session_id"], seq, rec["role"], d.text(rec["content"]), rec.get("name"),
                      d.json(rec.get("metadata") or {}), None if rec.get("payload") is None else d.json(rec["payload"]),
                      rec.get("status") or "active", d.time(rows.export_time(rec["created_at"], "created_at")),
                      self._entry_or_none(conn, rec.get("entry_id"))))
        return "inserted"

    def _import_session_entry(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT INTO session_entries (session_id, entry_id, relation) SELECT ?, ?, ? "
                           "WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?) AND EXISTS (SELECT 1 FROM entries "
                           "WHERE id = ?) ON CONFLICT DO NOTHING",
                           (rec["session_id"], rec["entry_id"], rec.get("relation") or "turn",
                            rec["session_id"], rec["entry_id"]))
        return "inserted" if cur.rowcount else "skipped"

    def _import_entry_source(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT INTO entry_sources (entry_id, message_id) SELECT ?, ? "
                           "WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?) AND EXISTS (SELECT 1 FROM messages "
                           "WHERE id = ?) ON CONFLICT DO NOTHING",
                           (rec["entry_id"], rec["message_id"], rec["entry_id"], rec["message_id"]))
        return "inserted" if cur.rowcount else "skipped"

    def _import_entry_link(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) SELECT ?, ?, ?, ? "
                           "WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?) AND EXISTS (SELECT 1 FROM entries "
                           "WHERE id = ?) ON CONFLICT DO NOTHING",
                           (rec["src"], rec["dst"], rec["relation"],
                            self.dialect.time(rows.export_time(rec["created_at"], "created_at")), rec["src"], rec["dst"]))
        return "inserted" if cur.rowcount else "skipped"

    def _import_trace(self, conn: Any, rec: dict[str, Any]) -> str:
        steps = [(s["name"], float(s["ms"]), int(s["candidates"]), s.get("params") or {}) for s in rec.get("steps") or ()]
        inserted = self._insert_trace(conn, rec["id"], rec["query"], rec.get("scope") or {}, rec.get("intents") or [],
                                      rec.get("degrade_reason"), rec.get("result_ids") or [],
                                      float(rec.get("total_ms") or 0.0),
                                      self.dialect.time(rows.export_time(rec["created_at"], "created_at")), steps)
        return "inserted" if inserted else "skipped"

    @mapped
    def restore_times(self, table: str, row_id: str, *, created_at: str | None = None,
                      updated_at: str | None = None, history: list[dict[str, Any]] | None = None) -> None:
        """Set an entry's or session's times after it was written through ingest; ``history``
        replaces the entry's events (those ingest wrote now are not the source's)."""
        if table not in ("entries", "sessions"):
            raise InvalidArgument(f"restore_times takes 'entries' or 'sessions', got {table!r}")
        with self.conns.write() as conn:
            sets = {k: self.dialect.time(rows.export_time(v, k)) for k, v in (("created_at", created_at), ("updated_at", updated_at))
                    if v}
            if sets:
                conn.execute(f"UPDATE {table} SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                             [*sets.values(), row_id])
            if history is not None and table == "entries":
                conn.execute("DELETE FROM entry_history WHERE entry_id = ?", (row_id,))
                for event in history:
                    self._insert_history(conn, row_id, event)
