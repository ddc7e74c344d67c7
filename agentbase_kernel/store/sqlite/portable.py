"""Raw rows in and out, for the portable export format (``agentbase_kernel/portable/``).

Export reads every table the filter reaches in keyset-paged queries from one read snapshot, so a
file of any size streams in constant memory. Import writes those rows back keeping ids, times,
history, links and vectors; what a row points to is checked first, so a record whose target was
filtered out or deduplicated away is skipped instead of breaking a foreign key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ...errors import InvalidArgument
from ...records import Scope
from ..base import EntryFilter, iso, parse_iso
from ..rows import (
    ENTRY_FIELDS,
    HISTORY_FIELDS,
    JSON_ENTRY_FIELDS,
    MESSAGE_FIELDS,
    PAGE,
    SESSION_FIELDS,
    TIME_FIELDS,
    complete_import_entry,
    export_entry_record,
)
from .core import SqliteCore, dumps, loads, mapped

__all__ = ["PortableMixin"]

_OURS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")



def _time(value: Any, name: str) -> str | None:
    """Our fixed-width UTC text, from any ISO 8601 string with an offset (or none, read as UTC)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be an ISO 8601 string, got {value!r:.80}")
    if _OURS.fullmatch(value):  # already in our form (every agentbase export): skip the round trip
        return value
    try:
        return iso(parse_iso(value))
    except ValueError:
        raise InvalidArgument(f"{name} is not an ISO 8601 time: {value!r:.80}") from None


def _times(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: (_time(v, k) if k in TIME_FIELDS else v) for k, v in fields.items()}


class PortableMixin(SqliteCore):
    """``export_records`` / ``import_record`` / ``restore_times`` of the ``Store`` protocol."""

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
        return (" AND ".join(clauses) or "1"), args

    def _pages(self, conn: Any, sql: str, args: list[Any], start: Any = 0) -> Iterator[Any]:
        """Rows of ``sql`` (whose first column is the key and which has ``key > ?`` as its first
        parameter and ``LIMIT ?`` as its last), page by page."""
        last = start
        while True:
            rows = conn.execute(sql, [last, *args, PAGE]).fetchall()
            yield from rows
            if len(rows) < PAGE:
                return
            last = rows[-1][0]

    def export_records(self, flt: EntryFilter, *, vectors: bool = False,
                       traces: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row the filter reaches as ``(kind, fields)``, in an order that imports cleanly."""
        where, wargs = self.where_sql(flt, "e")
        swhere, sargs = self._session_where(flt.scope, "s")
        everything = flt.scope.is_empty and not flt.metadata
        try:
            with self.conns.read() as conn:
                yield from self._export_entities(conn, where, wargs)
                yield from self._export_entries(conn, where, wargs)
                if everything:
                    for row in self._pages(conn, "SELECT h.seq, h.entry_id, " + ", ".join(f"h.{c}" for c in HISTORY_FIELDS)
                                           + " FROM entry_history h WHERE h.seq > ? AND NOT EXISTS "
                                           "(SELECT 1 FROM entries x WHERE x.id = h.entry_id) ORDER BY h.seq LIMIT ?", []):
                        yield "history", {"entry_id": row[1], **dict(zip(HISTORY_FIELDS, row[2:]))}
                if vectors:
                    for h, blob in self._pages(conn, "SELECT v.content_hash, v.vector FROM embeddings v "
                                               "WHERE v.content_hash > ? AND EXISTS (SELECT 1 FROM entries e WHERE "
                                               f"e.content_hash = v.content_hash AND {where}) "
                                               "ORDER BY v.content_hash LIMIT ?", wargs, start=""):
                        yield "vector", {"content_hash": h, "vector": bytes(blob)}
                for row in self._pages(conn, "SELECT s.rowid, " + ", ".join(f"s.{c}" for c in SESSION_FIELDS)
                                       + f" FROM sessions s WHERE s.rowid > ? AND {swhere} ORDER BY s.rowid LIMIT ?",
                                       sargs):
                    rec = dict(zip(SESSION_FIELDS, row[1:]))
                    rec["metadata"] = loads(rec["metadata"])
                    yield "session", rec
                for row in self._pages(conn, "SELECT m.rid, " + ", ".join(f"m.{c}" for c in MESSAGE_FIELDS)
                                       + " FROM messages m JOIN sessions s ON s.id = m.session_id "
                                       f"WHERE m.rid > ? AND {swhere} ORDER BY m.rid LIMIT ?", sargs):
                    rec = dict(zip(MESSAGE_FIELDS, row[1:]))
                    rec["metadata"] = loads(rec["metadata"])
                    rec["payload"] = None if rec["payload"] is None else json.loads(rec["payload"])
                    yield "message", rec
                dwhere, _ = self.where_sql(flt, "d")
                yield from self._export_links(conn, where, wargs, dwhere, swhere, sargs)
                if traces:
                    yield from self._export_traces(conn, flt.scope)
        except self._module.Error as exc:
            raise InvalidArgument(f"Export failed reading {self.path}: {exc}") from exc

    def _export_entities(self, conn: Any, where: str, wargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        sql = ("SELECT n.id, n.norm, n.label, n.text FROM entities n WHERE n.id > ? AND EXISTS (SELECT 1 FROM "
               f"entity_entries ee JOIN entries e ON e.id = ee.entry_id WHERE ee.entity_id = n.id AND {where}) "
               "ORDER BY n.id LIMIT ?")
        for _, norm, label, text in self._pages(conn, sql, wargs):
            yield "entity", {"norm": norm, "label": label, "text": text}

    def _export_entries(self, conn: Any, where: str, wargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        cols = ", ".join(f"e.{c}" for c in ENTRY_FIELDS)
        sql = f"SELECT e.rid, {cols}, e.dedup_key = e.content_hash FROM entries e WHERE e.rid > ? AND {where} ORDER BY e.rid LIMIT ?"
        last = 0
        while True:
            rows = conn.execute(sql, [last, *wargs, PAGE]).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            ids = [r[1] for r in rows]
            marks = ",".join("?" * len(ids))
            history: dict[str, list[dict[str, Any]]] = {}
            for h in conn.execute(f"SELECT entry_id, {', '.join(HISTORY_FIELDS)} FROM entry_history "
                                  f"WHERE entry_id IN ({marks}) ORDER BY seq", ids):
                history.setdefault(h[0], []).append(dict(zip(HISTORY_FIELDS, h[1:])))
            entities: dict[str, list[list[str]]] = {}
            for entry_id, norm, label in conn.execute(
                    "SELECT ee.entry_id, n.norm, n.label FROM entity_entries ee JOIN entities n ON n.id = ee.entity_id "
                    f"WHERE ee.entry_id IN ({marks}) ORDER BY n.norm, n.label", ids):
                entities.setdefault(entry_id, []).append([norm, label])
            links: dict[str, list[list[Any]]] = {}
            for entry_id, an, al, bn, bl, at in conn.execute(
                    "SELECT l.entry_id, a.norm, a.label, b.norm, b.label, l.observed_at FROM entity_links l "
                    "JOIN entities a ON a.id = l.a JOIN entities b ON b.id = l.b "
                    f"WHERE l.entry_id IN ({marks})", ids):
                pair = sorted([[an, al], [bn, bl]])
                links.setdefault(entry_id, []).append([*pair, at])
            for row in rows:
                rec = dict(zip(ENTRY_FIELDS, row[1:-1]))
                for name in JSON_ENTRY_FIELDS:
                    rec[name] = loads(rec[name])
                yield "entry", export_entry_record(rec, row[-1], history, entities, links)
            if len(rows) < PAGE:
                return

    def _export_links(self, conn: Any, where: str, wargs: list[Any], dwhere: str, swhere: str,
                      sargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        for row in self._pages(conn, "SELECT se.rowid, se.session_id, se.entry_id, se.relation FROM session_entries se "
                               "JOIN sessions s ON s.id = se.session_id JOIN entries e ON e.id = se.entry_id "
                               f"WHERE se.rowid > ? AND {swhere} AND {where} ORDER BY se.rowid LIMIT ?",
                               [*sargs, *wargs]):
            yield "session_entry", {"session_id": row[1], "entry_id": row[2], "relation": row[3]}
        for row in self._pages(conn, "SELECT es.rowid, es.entry_id, es.message_id FROM entry_sources es "
                               "JOIN entries e ON e.id = es.entry_id JOIN messages m ON m.id = es.message_id "
                               "JOIN sessions s ON s.id = m.session_id "
                               f"WHERE es.rowid > ? AND {where} AND {swhere} ORDER BY es.rowid LIMIT ?",
                               [*wargs, *sargs]):
            yield "entry_source", {"entry_id": row[1], "message_id": row[2]}
        for row in self._pages(conn, "SELECT l.rowid, l.src, l.dst, l.relation, l.created_at FROM entry_links l "
                               "JOIN entries e ON e.id = l.src JOIN entries d ON d.id = l.dst "
                               f"WHERE l.rowid > ? AND {where} AND {dwhere} ORDER BY l.rowid LIMIT ?",
                               [*wargs, *wargs]):
            yield "entry_link", {"src": row[1], "dst": row[2], "relation": row[3], "created_at": row[4]}

    def _export_traces(self, conn: Any, scope: Scope) -> Iterator[tuple[str, dict[str, Any]]]:
        wanted = scope.as_dict()
        cols = "id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at"
        for row in self._pages(conn, f"SELECT rowid, {cols} FROM retrieval_traces WHERE rowid > ? "
                               "ORDER BY rowid LIMIT ?", []):
            stored = json.loads(row[3])
            if any(stored.get(k) != v for k, v in wanted.items()):
                continue
            steps = [{"name": s[0], "ms": s[1], "candidates": s[2], "params": json.loads(s[3])} for s in conn.execute(
                "SELECT name, ms, candidates, params FROM trace_steps WHERE trace_id = ? ORDER BY idx", (row[1],))]
            yield "trace", {"id": row[1], "query": row[2], "scope": stored, "intents": json.loads(row[4]),
                            "degrade_reason": row[5], "result_ids": json.loads(row[6]), "total_ms": row[7],
                            "created_at": row[8], "steps": steps}

    # -- import ----------------------------------------------------------------------------------
    @mapped
    def import_record(self, kind: str, fields: dict[str, Any]) -> str:
        """Write one exported row keeping its ids and times: ``"inserted"``, ``"updated"`` or ``"skipped"``."""
        handler = getattr(self, f"_import_{kind}", None)
        if handler is None:
            raise InvalidArgument(f"Unknown record type {kind!r}")
        if self.conns.in_write:
            # inside the caller's transaction (``Kernel.import_``): a failure rolls all of it back,
            # so a savepoint per record (two more statements each) would buy nothing
            return str(handler(self.conns.get(), fields))
        with self.conns.write() as conn:
            return str(handler(conn, fields))

    def _import_entity(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT OR IGNORE INTO entities (norm, label, text) VALUES (?, ?, ?)",
                           (rec["norm"], rec["label"], rec["text"]))
        return "inserted" if cur.rowcount else "skipped"

    def _entity_id(self, conn: Any, norm: str, label: str) -> int:
        conn.execute("INSERT OR IGNORE INTO entities (norm, label, text) VALUES (?, ?, ?)", (norm, label, norm))
        return int(conn.execute("SELECT id FROM entities WHERE norm = ? AND label = ?", (norm, label)).fetchone()[0])

    def _import_entry(self, conn: Any, rec: dict[str, Any]) -> str:
        rec = _times(rec)
        values = {name: rec.get(name) for name in ENTRY_FIELDS}
        complete_import_entry(values, rec, dumps)
        existing = conn.execute("SELECT updated_at FROM entries WHERE id = ?", (values["id"],)).fetchone()
        if existing is not None:
            if values["updated_at"] <= existing[0]:
                return "skipped"
            sets = {k: v for k, v in values.items() if k != "id"}
            conn.execute(f"UPDATE entries SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                         [*sets.values(), values["id"]])
            conn.execute("DELETE FROM entity_entries WHERE entry_id = ?", (values["id"],))
            conn.execute("DELETE FROM entity_links WHERE entry_id = ?", (values["id"],))
            outcome = "updated"
        else:
            cols = ", ".join(values)
            cur = conn.execute(f"INSERT INTO entries ({cols}) VALUES ({', '.join('?' * len(values))}) "
                               "ON CONFLICT (scope_key, dedup_key) WHERE invalid_at IS NULL DO NOTHING",
                               list(values.values()))
            if cur.rowcount == 0:  # the same live text in the same scope under another id: keep that one
                return "skipped"
            outcome = "inserted"
        for event in rec.get("history") or ():
            self._insert_history(conn, values["id"], _times(event))  # type: ignore[arg-type]  # checked by the format
        for norm, label in rec.get("entities") or ():
            conn.execute("INSERT OR IGNORE INTO entity_entries (entity_id, entry_id) VALUES (?, ?)",
                         (self._entity_id(conn, norm, label), values["id"]))
        for a, b, observed_at in rec.get("entity_links") or ():
            ids = sorted([self._entity_id(conn, *a), self._entity_id(conn, *b)])
            conn.execute("INSERT OR IGNORE INTO entity_links (a, b, entry_id, observed_at) VALUES (?, ?, ?, ?)",
                         (*ids, values["id"], _time(observed_at, "observed_at")))
        return outcome

    def _insert_history(self, conn: Any, entry_id: str, event: dict[str, Any]) -> bool:
        cur = conn.execute("INSERT OR IGNORE INTO entry_history (id, entry_id, event, old_value, new_value, created_at, "
                           "actor, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (event["id"], entry_id, event["event"], event.get("old_value"), event.get("new_value"),
                            event["created_at"], event.get("actor"), event.get("role")))
        return bool(cur.rowcount)

    def _import_history(self, conn: Any, rec: dict[str, Any]) -> str:
        return "inserted" if self._insert_history(conn, rec["entry_id"], _times(rec)) else "skipped"

    def _import_vector(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT OR IGNORE INTO embeddings (content_hash, vector) VALUES (?, ?)",
                           (rec["content_hash"], rec["vector"]))
        return "inserted" if cur.rowcount else "skipped"

    def _entry_or_none(self, conn: Any, entry_id: str | None) -> str | None:
        if entry_id is None:
            return None
        return entry_id if conn.execute("SELECT 1 FROM entries WHERE id = ?", (entry_id,)).fetchone() else None

    def _import_session(self, conn: Any, rec: dict[str, Any]) -> str:
        rec = _times(rec)
        values = {name: rec.get(name) for name in SESSION_FIELDS}
        values["metadata"] = dumps(values["metadata"] or {})
        values["summary_entry_id"] = self._entry_or_none(conn, values["summary_entry_id"])
        existing = conn.execute("SELECT updated_at FROM sessions WHERE id = ?", (values["id"],)).fetchone()
        if existing is not None:
            if values["updated_at"] <= existing[0]:
                return "skipped"
            sets = {k: v for k, v in values.items() if k != "id"}
            conn.execute(f"UPDATE sessions SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                         [*sets.values(), values["id"]])
            return "updated"
        conn.execute(f"INSERT INTO sessions ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                     list(values.values()))
        return "inserted"

    def _import_message(self, conn: Any, rec: dict[str, Any]) -> str:
        rec = _times(rec)
        if conn.execute("SELECT 1 FROM messages WHERE id = ?", (rec["id"],)).fetchone():
            return "skipped"
        if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (rec["session_id"],)).fetchone():
            raise InvalidArgument(f"Message {rec['id']!r} belongs to session {rec['session_id']!r}, which is not "
                                  "in the file before it")
        seq = rec["seq"]
        if conn.execute("SELECT 1 FROM messages WHERE session_id = ? AND seq = ?", (rec["session_id"], seq)).fetchone():
            seq = conn.execute("SELECT max(seq) + 1 FROM messages WHERE session_id = ?", (rec["session_id"],)).fetchone()[0]
        conn.execute("INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, "
                     "created_at, entry_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (rec["id"], rec["session_id"], seq, rec["role"], rec["content"], rec.get("name"),
                      dumps(rec.get("metadata") or {}), None if rec.get("payload") is None else dumps(rec["payload"]),
                      rec.get("status") or "active", rec["created_at"], self._entry_or_none(conn, rec.get("entry_id"))))
        return "inserted"

    def _import_session_entry(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT OR IGNORE INTO session_entries (session_id, entry_id, relation) SELECT ?, ?, ? "
                           "WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?) AND EXISTS (SELECT 1 FROM entries "
                           "WHERE id = ?)", (rec["session_id"], rec["entry_id"], rec.get("relation") or "turn",
                                             rec["session_id"], rec["entry_id"]))
        return "inserted" if cur.rowcount else "skipped"

    def _import_entry_source(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT OR IGNORE INTO entry_sources (entry_id, message_id) SELECT ?, ? "
                           "WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?) AND EXISTS (SELECT 1 FROM messages "
                           "WHERE id = ?)", (rec["entry_id"], rec["message_id"], rec["entry_id"], rec["message_id"]))
        return "inserted" if cur.rowcount else "skipped"

    def _import_entry_link(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute("INSERT OR IGNORE INTO entry_links (src, dst, relation, created_at) SELECT ?, ?, ?, ? "
                           "WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?) AND EXISTS (SELECT 1 FROM entries "
                           "WHERE id = ?)", (rec["src"], rec["dst"], rec["relation"],
                                             _time(rec["created_at"], "created_at"), rec["src"], rec["dst"]))
        return "inserted" if cur.rowcount else "skipped"

    def _import_trace(self, conn: Any, rec: dict[str, Any]) -> str:
        cur = conn.execute(
            "INSERT OR IGNORE INTO retrieval_traces (id, query, scope, intents, degrade_reason, result_ids, total_ms, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (rec["id"], rec["query"], dumps(rec.get("scope") or {}), dumps(rec.get("intents") or []),
             rec.get("degrade_reason"), dumps(rec.get("result_ids") or []), float(rec.get("total_ms") or 0.0),
             _time(rec["created_at"], "created_at")))
        if not cur.rowcount:
            return "skipped"
        conn.executemany("INSERT INTO trace_steps (trace_id, idx, name, ms, candidates, params) VALUES (?, ?, ?, ?, ?, ?)",
                         [(rec["id"], i, s["name"], float(s["ms"]), int(s["candidates"]), dumps(s.get("params") or {}))
                          for i, s in enumerate(rec.get("steps") or ())])
        return "inserted"

    @mapped
    def restore_times(self, table: str, row_id: str, *, created_at: str | None = None,
                      updated_at: str | None = None, history: list[dict[str, Any]] | None = None) -> None:
        """Set an entry's or session's times after it was written through ingest; ``history``
        replaces the entry's events (those ingest wrote now are not the source's)."""
        if table not in ("entries", "sessions"):
            raise InvalidArgument(f"restore_times takes 'entries' or 'sessions', got {table!r}")
        with self.conns.write() as conn:
            sets = {k: _time(v, k) for k, v in (("created_at", created_at), ("updated_at", updated_at)) if v}
            if sets:
                conn.execute(f"UPDATE {table} SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                             [*sets.values(), row_id])
            if history is not None and table == "entries":
                conn.execute("DELETE FROM entry_history WHERE entry_id = ?", (row_id,))
                for event in history:
                    self._insert_history(conn, row_id, _times(event))
