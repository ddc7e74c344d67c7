"""Raw rows in and out, for the portable export format (``agentbase_kernel/portable/``).

The same records as the SQLite store's (``store/sqlite/portable.py``): times as fixed-width ISO
text, JSON fields as data, vectors as little-endian float32 bytes, so a file exported from one
backend imports into the other. Export pages through one REPEATABLE READ snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from ...errors import InvalidArgument
from ...records import Scope
from ..base import EntryFilter, iso, parse_iso
from ..rows import (
    ENTRY_FIELDS,
    HISTORY_FIELDS,
    MESSAGE_FIELDS,
    PAGE,
    SESSION_FIELDS,
    TIME_FIELDS,
    complete_import_entry,
    export_entry_record,
)
from ..vectors import decode, encode
from .core import jsonb, mapped, storage_error, text_in, text_out
from .planner import PlannerStatsMixin
from .search import as_array

__all__ = ["PortableMixin"]

_OURS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")



def _when(value: Any, name: str) -> datetime | None:
    """A time from an export (ISO 8601 text, read as UTC without an offset) for a ``timestamptz``."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be an ISO 8601 string, got {value!r:.80}")
    try:
        parsed = parse_iso(value)
    except ValueError:
        raise InvalidArgument(f"{name} is not an ISO 8601 time: {value!r:.80}") from None
    assert parsed is not None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=__import__("datetime").timezone.utc)


_TEXTS = frozenset({"l0_abstract", "l1_overview", "l2_full", "search_text", "search_context", "old_value",
                    "new_value", "content"})


def _out(rec: dict[str, Any]) -> dict[str, Any]:
    """Times as our ISO text and texts with their NULs back, as the SQLite store exports them."""
    return {k: (iso(v) if isinstance(v, datetime) else text_out(v) if k in _TEXTS else v) for k, v in rec.items()}


def _in(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: (text_in(v) if k in _TEXTS and isinstance(v, str) else v) for k, v in rec.items()}


class PortableMixin(PlannerStatsMixin):
    """``export_records`` / ``import_record`` / ``restore_times`` of the ``Store`` protocol."""

    # -- export ----------------------------------------------------------------------------------
    def _session_where(self, scope: Scope, alias: str = "s") -> tuple[str, list[Any]]:
        clauses, args = [], []
        for col in ("user_id", "agent_id", "project_id"):
            value = getattr(scope, col)
            if value is not None:
                clauses.append(f"{alias}.{col} = %s")
                args.append(value)
        if scope.session_id is not None:
            clauses.append(f"{alias}.id = %s")
            args.append(scope.session_id)
        return (" AND ".join(clauses) or "TRUE"), args

    def _pages(self, conn: Any, sql: str, args: list[Any], start: Any = 0) -> Iterator[Any]:
        """Rows of ``sql`` (whose first column is the key, with ``key > %s`` as its first parameter
        and ``LIMIT %s`` as its last), page by page."""
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
            with self.conns.read(snapshot=True) as conn:
                yield from self._export_entities(conn, where, wargs)
                yield from self._export_entries(conn, where, wargs)
                if everything:
                    for row in self._pages(conn, "SELECT h.seq, h.entry_id, " + ", ".join(f"h.{c}" for c in HISTORY_FIELDS)
                                           + " FROM entry_history h WHERE h.seq > %s AND NOT EXISTS "
                                           "(SELECT 1 FROM entries x WHERE x.id = h.entry_id) ORDER BY h.seq LIMIT %s", []):
                        yield "history", _out({"entry_id": row[1], **dict(zip(HISTORY_FIELDS, row[2:]))})
                if vectors:
                    for h, vec in self._pages(conn, "SELECT v.content_hash, v.vector FROM embeddings v "
                                              "WHERE v.content_hash > %s AND EXISTS (SELECT 1 FROM entries e WHERE "
                                              f"e.content_hash = v.content_hash AND {where}) "
                                              "ORDER BY v.content_hash LIMIT %s", wargs, start=""):
                        yield "vector", {"content_hash": h, "vector": encode(as_array(vec))}
                for row in self._pages(conn, "SELECT s.rid, " + ", ".join(f"s.{c}" for c in SESSION_FIELDS)
                                       + f" FROM sessions s WHERE s.rid > %s AND {swhere} ORDER BY s.rid LIMIT %s",
                                       sargs):
                    yield "session", _out(dict(zip(SESSION_FIELDS, row[1:])))
                for row in self._pages(conn, "SELECT m.rid, " + ", ".join(f"m.{c}" for c in MESSAGE_FIELDS)
                                       + " FROM messages m JOIN sessions s ON s.id = m.session_id "
                                       f"WHERE m.rid > %s AND {swhere} ORDER BY m.rid LIMIT %s", sargs):
                    yield "message", _out(dict(zip(MESSAGE_FIELDS, row[1:])))
                dwhere, _ = self.where_sql(flt, "d")
                yield from self._export_links(conn, where, wargs, dwhere, swhere, sargs)
                if traces:
                    yield from self._export_traces(conn, flt.scope)
        except psycopg.Error as exc:
            raise storage_error(self.conns.shown, exc) from exc

    def _export_entities(self, conn: Any, where: str, wargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        sql = ("SELECT n.id, n.norm, n.label, n.text FROM entities n WHERE n.id > %s AND EXISTS (SELECT 1 FROM "
               f"entity_entries ee JOIN entries e ON e.id = ee.entry_id WHERE ee.entity_id = n.id AND {where}) "
               "ORDER BY n.id LIMIT %s")
        for _, norm, label, text in self._pages(conn, sql, wargs):
            yield "entity", {"norm": norm, "label": label, "text": text}

    def _export_entries(self, conn: Any, where: str, wargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        cols = ", ".join(f"e.{c}" for c in ENTRY_FIELDS)
        sql = (f"SELECT e.rid, {cols}, e.dedup_key = e.content_hash FROM entries e WHERE e.rid > %s AND {where} "
               "ORDER BY e.rid LIMIT %s")
        last = 0
        while True:
            rows = conn.execute(sql, [last, *wargs, PAGE]).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            ids = [r[1] for r in rows]
            history: dict[str, list[dict[str, Any]]] = {}
            for h in conn.execute(f"SELECT entry_id, {', '.join(HISTORY_FIELDS)} FROM entry_history "
                                  "WHERE entry_id = ANY(%s) ORDER BY seq", (ids,)):
                history.setdefault(h[0], []).append(_out(dict(zip(HISTORY_FIELDS, h[1:]))))
            entities: dict[str, list[list[str]]] = {}
            for entry_id, norm, label in conn.execute(
                    "SELECT ee.entry_id, n.norm, n.label FROM entity_entries ee JOIN entities n ON n.id = ee.entity_id "
                    "WHERE ee.entry_id = ANY(%s) ORDER BY n.norm COLLATE \"C\", n.label COLLATE \"C\"", (ids,)):
                entities.setdefault(entry_id, []).append([norm, label])
            links: dict[str, list[list[Any]]] = {}
            for entry_id, an, al, bn, bl, at in conn.execute(
                    "SELECT l.entry_id, a.norm, a.label, b.norm, b.label, l.observed_at FROM entity_links l "
                    "JOIN entities a ON a.id = l.a JOIN entities b ON b.id = l.b WHERE l.entry_id = ANY(%s)", (ids,)):
                pair = sorted([[an, al], [bn, bl]])
                links.setdefault(entry_id, []).append([*pair, iso(at)])
            for row in rows:
                rec = _out(dict(zip(ENTRY_FIELDS, row[1:-1])))
                yield "entry", export_entry_record(rec, row[-1], history, entities, links)
            if len(rows) < PAGE:
                return

    def _export_links(self, conn: Any, where: str, wargs: list[Any], dwhere: str, swhere: str,
                      sargs: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        for row in self._pages(conn, "SELECT se.rid, se.session_id, se.entry_id, se.relation FROM session_entries se "
                               "JOIN sessions s ON s.id = se.session_id JOIN entries e ON e.id = se.entry_id "
                               f"WHERE se.rid > %s AND {swhere} AND {where} ORDER BY se.rid LIMIT %s",
                               [*sargs, *wargs]):
            yield "session_entry", {"session_id": row[1], "entry_id": row[2], "relation": row[3]}
        for row in self._pages(conn, "SELECT es.rid, es.entry_id, es.message_id FROM entry_sources es "
                               "JOIN entries e ON e.id = es.entry_id JOIN messages m ON m.id = es.message_id "
                               "JOIN sessions s ON s.id = m.session_id "
                               f"WHERE es.rid > %s AND {where} AND {swhere} ORDER BY es.rid LIMIT %s",
                               [*wargs, *sargs]):
            yield "entry_source", {"entry_id": row[1], "message_id": row[2]}
        for row in self._pages(conn, "SELECT l.rid, l.src, l.dst, l.relation, l.created_at FROM entry_links l "
                               "JOIN entries e ON e.id = l.src JOIN entries d ON d.id = l.dst "
                               f"WHERE l.rid > %s AND {where} AND {dwhere} ORDER BY l.rid LIMIT %s",
                               [*wargs, *wargs]):
            yield "entry_link", {"src": row[1], "dst": row[2], "relation": row[3], "created_at": iso(row[4])}

    def _export_traces(self, conn: Any, scope: Scope) -> Iterator[tuple[str, dict[str, Any]]]:
        wanted = {k: v for k, v in scope.as_dict().items() if v is not None}
        cols = "id, query, scope, intents, degrade_reason, result_ids, total_ms, created_at"
        for row in self._pages(conn, f"SELECT rid, {cols} FROM retrieval_traces WHERE rid > %s AND scope @> %s "
                               "ORDER BY rid LIMIT %s", [jsonb(wanted)]):
            steps = [{"name": s[0], "ms": s[1], "candidates": s[2], "params": s[3]} for s in conn.execute(
                "SELECT name, ms, candidates, params FROM trace_steps WHERE trace_id = %s ORDER BY idx", (row[1],))]
            yield "trace", {"id": row[1], "query": text_out(row[2]), "scope": row[3], "intents": row[4],
                            "degrade_reason": row[5], "result_ids": row[6], "total_ms": row[7],
                            "created_at": iso(row[8]), "steps": steps}

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
            # so a savepoint per record would buy nothing
            return str(handler(current, fields))
        with self.conns.write() as conn:
            return str(handler(conn, fields))

    def _import_entity(self, conn: Any, rec: dict[str, Any]) -> str:
        row = conn.execute("INSERT INTO entities (norm, label, text) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING "
                           "RETURNING id", (rec["norm"], rec["label"], rec["text"])).fetchone()
        return "inserted" if row else "skipped"

    def _entity_id(self, conn: Any, norm: str, label: str) -> int:
        conn.execute("INSERT INTO entities (norm, label, text) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                     (norm, label, norm))
        return int(conn.execute("SELECT id FROM entities WHERE norm = %s AND label = %s", (norm, label)).fetchone()[0])

    def _import_entry(self, conn: Any, rec: dict[str, Any]) -> str:
        values: dict[str, Any] = _in({name: rec.get(name) for name in ENTRY_FIELDS})
        for name in TIME_FIELDS:
            if name in values:
                values[name] = _when(values[name], name)
        complete_import_entry(values, rec, jsonb)
        existing = conn.execute("SELECT updated_at FROM entries WHERE id = %s", (values["id"],)).fetchone()
        if existing is not None:
            if values["updated_at"] <= existing[0]:
                return "skipped"
            sets = {k: v for k, v in values.items() if k != "id"}
            conn.execute(f"UPDATE entries SET {', '.join(f'{k} = %s' for k in sets)} WHERE id = %s",
                         [*sets.values(), values["id"]])
            conn.execute("DELETE FROM entity_entries WHERE entry_id = %s", (values["id"],))
            conn.execute("DELETE FROM entity_links WHERE entry_id = %s", (values["id"],))
            outcome = "updated"
        else:
            cols = ", ".join(values)
            row = conn.execute(f"INSERT INTO entries ({cols}) VALUES ({', '.join(['%s'] * len(values))}) "
                               "ON CONFLICT (scope_key, dedup_key) WHERE invalid_at IS NULL DO NOTHING RETURNING rid",
                               list(values.values())).fetchone()
            if row is None:  # the same live text in the same scope under another id: keep that one
                return "skipped"
            outcome = "inserted"
            self._note_written(1)
        for event in rec.get("history") or ():
            self._insert_history(conn, values["id"], event)
        for norm, label in rec.get("entities") or ():
            conn.execute("INSERT INTO entity_entries (entity_id, entry_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                         (self._entity_id(conn, norm, label), values["id"]))
        for a, b, observed_at in rec.get("entity_links") or ():
            ids = sorted([self._entity_id(conn, *a), self._entity_id(conn, *b)])
            conn.execute("INSERT INTO entity_links (a, b, entry_id, observed_at) VALUES (%s, %s, %s, %s) "
                         "ON CONFLICT DO NOTHING", (*ids, values["id"], _when(observed_at, "observed_at")))
        return outcome

    def _insert_history(self, conn: Any, entry_id: str, event: dict[str, Any]) -> bool:
        row = conn.execute("INSERT INTO entry_history (id, entry_id, event, old_value, new_value, created_at, actor, "
                           "role) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING seq",
                           (event["id"], entry_id, event["event"], text_in(event.get("old_value")),
                            text_in(event.get("new_value")),
                            _when(event["created_at"], "created_at"), event.get("actor"), event.get("role"))).fetchone()
        return row is not None

    def _import_history(self, conn: Any, rec: dict[str, Any]) -> str:
        return "inserted" if self._insert_history(conn, rec["entry_id"], rec) else "skipped"

    def _import_vector(self, conn: Any, rec: dict[str, Any]) -> str:
        raw = rec["vector"]
        vector = decode(bytes(raw)) if isinstance(raw, (bytes, bytearray, memoryview)) else np.asarray(raw, "<f4")
        row = conn.execute("INSERT INTO embeddings (content_hash, vector) VALUES (%s, %s) ON CONFLICT DO NOTHING "
                           "RETURNING content_hash", (rec["content_hash"], np.asarray(vector, dtype=np.float32))).fetchone()
        if row is not None:
            self._ensure_index(conn, int(vector.size), 1)  # type: ignore[attr-defined]
        return "inserted" if row else "skipped"

    def _entry_or_none(self, conn: Any, entry_id: str | None) -> str | None:
        if entry_id is None:
            return None
        return entry_id if conn.execute("SELECT 1 FROM entries WHERE id = %s", (entry_id,)).fetchone() else None

    def _import_session(self, conn: Any, rec: dict[str, Any]) -> str:
        values: dict[str, Any] = {name: rec.get(name) for name in SESSION_FIELDS}
        for name in ("created_at", "updated_at", "committed_at"):
            values[name] = _when(values[name], name)
        values["metadata"] = jsonb(values["metadata"] or {})
        values["summary_entry_id"] = self._entry_or_none(conn, values["summary_entry_id"])
        existing = conn.execute("SELECT updated_at FROM sessions WHERE id = %s", (values["id"],)).fetchone()
        if existing is not None:
            if values["updated_at"] <= existing[0]:
                return "skipped"
            sets = {k: v for k, v in values.items() if k != "id"}
            conn.execute(f"UPDATE sessions SET {', '.join(f'{k} = %s' for k in sets)} WHERE id = %s",
                         [*sets.values(), values["id"]])
            return "updated"
        conn.execute(f"INSERT INTO sessions ({', '.join(values)}) VALUES ({', '.join(['%s'] * len(values))})",
                     list(values.values()))
        return "inserted"

    def _import_message(self, conn: Any, rec: dict[str, Any]) -> str:
        if conn.execute("SELECT 1 FROM messages WHERE id = %s", (rec["id"],)).fetchone():
            return "skipped"
        if not conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (rec["session_id"],)).fetchone():
            raise InvalidArgument(f"Message {rec['id']!r} belongs to session {rec['session_id']!r}, which is not "
                                  "in the file before it")
        seq = rec["seq"]
        if conn.execute("SELECT 1 FROM messages WHERE session_id = %s AND seq = %s", (rec["session_id"], seq)).fetchone():
            seq = conn.execute("SELECT max(seq) + 1 FROM messages WHERE session_id = %s", (rec["session_id"],)).fetchone()[0]
        conn.execute("INSERT INTO messages (id, session_id, seq, role, content, name, metadata, payload, status, "
                     "created_at, entry_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                     (rec["id"], rec["session_id"], seq, rec["role"], text_in(rec["content"]), rec.get("name"),
                      jsonb(rec.get("metadata") or {}), None if rec.get("payload") is None else jsonb(rec["payload"]),
                      rec.get("status") or "active", _when(rec["created_at"], "created_at"),
                      self._entry_or_none(conn, rec.get("entry_id"))))
        return "inserted"

    def _import_session_entry(self, conn: Any, rec: dict[str, Any]) -> str:
        row = conn.execute("INSERT INTO session_entries (session_id, entry_id, relation) SELECT %s, %s, %s "
                           "WHERE EXISTS (SELECT 1 FROM sessions WHERE id = %s) AND EXISTS (SELECT 1 FROM entries "
                           "WHERE id = %s) ON CONFLICT DO NOTHING RETURNING rid",
                           (rec["session_id"], rec["entry_id"], rec.get("relation") or "turn",
                            rec["session_id"], rec["entry_id"])).fetchone()
        return "inserted" if row else "skipped"

    def _import_entry_source(self, conn: Any, rec: dict[str, Any]) -> str:
        row = conn.execute("INSERT INTO entry_sources (entry_id, message_id) SELECT %s, %s "
                           "WHERE EXISTS (SELECT 1 FROM entries WHERE id = %s) AND EXISTS (SELECT 1 FROM messages "
                           "WHERE id = %s) ON CONFLICT DO NOTHING RETURNING rid",
                           (rec["entry_id"], rec["message_id"], rec["entry_id"], rec["message_id"])).fetchone()
        return "inserted" if row else "skipped"

    def _import_entry_link(self, conn: Any, rec: dict[str, Any]) -> str:
        row = conn.execute("INSERT INTO entry_links (src, dst, relation, created_at) SELECT %s, %s, %s, %s "
                           "WHERE EXISTS (SELECT 1 FROM entries WHERE id = %s) AND EXISTS (SELECT 1 FROM entries "
                           "WHERE id = %s) ON CONFLICT DO NOTHING RETURNING rid",
                           (rec["src"], rec["dst"], rec["relation"], _when(rec["created_at"], "created_at"),
                            rec["src"], rec["dst"])).fetchone()
        return "inserted" if row else "skipped"

    def _import_trace(self, conn: Any, rec: dict[str, Any]) -> str:
        row = conn.execute(
            "INSERT INTO retrieval_traces (id, query, scope, intents, degrade_reason, result_ids, total_ms, "
            "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING rid",
            (rec["id"], text_in(rec["query"]), jsonb(rec.get("scope") or {}), jsonb(rec.get("intents") or []),
             rec.get("degrade_reason"), jsonb(rec.get("result_ids") or []), float(rec.get("total_ms") or 0.0),
             _when(rec["created_at"], "created_at"))).fetchone()
        if row is None:
            return "skipped"
        steps = [(rec["id"], i, s["name"], float(s["ms"]), int(s["candidates"]), jsonb(s.get("params") or {}))
                 for i, s in enumerate(rec.get("steps") or ())]
        if steps:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO trace_steps (trace_id, idx, name, ms, candidates, params) "
                                "VALUES (%s, %s, %s, %s, %s, %s)", steps)
        return "inserted"

    @mapped
    def restore_times(self, table: str, row_id: str, *, created_at: str | None = None,
                      updated_at: str | None = None, history: list[dict[str, Any]] | None = None) -> None:
        """Set an entry's or session's times after it was written through ingest; ``history``
        replaces the entry's events (those ingest wrote now are not the source's)."""
        if table not in ("entries", "sessions"):
            raise InvalidArgument(f"restore_times takes 'entries' or 'sessions', got {table!r}")
        with self.conns.write() as conn:
            sets = {k: _when(v, k) for k, v in (("created_at", created_at), ("updated_at", updated_at)) if v}
            if sets:
                conn.execute(f"UPDATE {table} SET {', '.join(f'{k} = %s' for k in sets)} WHERE id = %s",
                             [*sets.values(), row_id])
            if history is not None and table == "entries":
                conn.execute("DELETE FROM entry_history WHERE entry_id = %s", (row_id,))
                for event in history:
                    self._insert_history(conn, row_id, event)
