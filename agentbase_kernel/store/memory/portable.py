"""``PortableStore`` in memory: every row a filter reaches as export records, and those records back
in with their ids and times (docs/export-format.md). The order of records is the SQL backends'."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...errors import InvalidArgument
from ...records import Scope
from ..base import EntryFilter
from ..rows import (
    ENTRY_FIELDS,
    HISTORY_FIELDS,
    MESSAGE_FIELDS,
    SESSION_FIELDS,
    TIME_FIELDS,
    complete_import_entry,
    export_entry_record,
    export_time,
)
from ..vectors import encode
from .governance import GovernanceMixin
from .skills import SkillsMixin
from .tables import now

__all__ = ["PortableMixin"]



def _times(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: (export_time(v, k) if k in TIME_FIELDS else v) for k, v in fields.items()}


class PortableMixin(GovernanceMixin, SkillsMixin):
    """``export_records``, ``import_record``, ``restore_times``."""

    # -- export --------------------------------------------------------------------------------
    def _session_in(self, session: dict[str, Any], scope: Scope) -> bool:
        return all(session[c] == getattr(scope, c) for c in ("user_id", "agent_id", "project_id")
                   if getattr(scope, c) is not None) and scope.session_id in (None, session["id"])

    def export_records(self, flt: EntryFilter, *, vectors: bool = False,
                       traces: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """Read under the lock, from one consistent state; yielded after."""
        with self._lock:
            records = list(self._export(flt, vectors, traces))
        yield from records

    def _export(self, flt: EntryFilter, vectors: bool, traces: bool) -> Iterator[tuple[str, dict[str, Any]]]:
        t = self.tables
        rows = self._rows(flt)
        reached = {r["id"] for r in rows}
        by_id = {e["id"]: e for e in t.entities.values()}
        used = sorted({eid for eid, entry_id in t.entity_entries if entry_id in reached})
        for eid in used:
            yield "entity", {k: by_id[eid][k] for k in ("norm", "label", "text")}
        for row in rows:
            yield "entry", self._entry_record(row, by_id)
        if flt.scope.is_empty and not flt.metadata:
            for h in t.history:
                if h["entry_id"] not in t.entries:
                    yield "history", {"entry_id": h["entry_id"], **{f: h[f] for f in HISTORY_FIELDS}}
        if vectors:
            for content_hash in sorted({r["content_hash"] for r in rows} & t.vectors.keys()):
                yield "vector", {"content_hash": content_hash, "vector": encode(t.vectors[content_hash])}
        sessions = [s for s in t.sessions.values() if self._session_in(s, flt.scope)]
        for session in sessions:
            yield "session", {f: copy.deepcopy(session[f]) for f in SESSION_FIELDS}
        chosen = {s["id"] for s in sessions}
        for message in t.messages.values():
            if message["session_id"] in chosen:
                yield "message", {f: copy.deepcopy(message[f]) for f in MESSAGE_FIELDS}
        for (session_id, entry_id), relation in t.session_entries.items():
            if session_id in chosen and entry_id in reached:
                yield "session_entry", {"session_id": session_id, "entry_id": entry_id, "relation": relation}
        for entry_id, message_id in t.entry_sources:
            if entry_id in reached and t.messages[message_id]["session_id"] in chosen:
                yield "entry_source", {"entry_id": entry_id, "message_id": message_id}
        for (src, dst, relation), created_at in t.entry_links.items():
            if src in reached and dst in reached:
                yield "entry_link", {"src": src, "dst": dst, "relation": relation, "created_at": created_at}
        if traces:
            wanted = flt.scope.as_dict()
            for trace in t.traces.values():
                if all(trace["scope"].get(k) == v for k, v in wanted.items()):
                    yield "trace", copy.deepcopy(trace)

    def _entry_record(self, row: dict[str, Any], entities: dict[int, dict[str, Any]]) -> dict[str, Any]:
        t = self.tables
        history = {row["id"]: [{f: h[f] for f in HISTORY_FIELDS} for h in t.history if h["entry_id"] == row["id"]]}
        names = {row["id"]: sorted([entities[eid]["norm"], entities[eid]["label"]]
                                   for eid, entry_id in t.entity_entries if entry_id == row["id"])}
        links: dict[str, list[list[Any]]] = {row["id"]: [
            [*sorted([[entities[a]["norm"], entities[a]["label"]], [entities[b]["norm"], entities[b]["label"]]]), at]
            for (a, b, entry_id), at in t.entity_links.items() if entry_id == row["id"]]}
        rec = {f: copy.deepcopy(row[f]) for f in ENTRY_FIELDS}
        return export_entry_record(rec, row["dedup_key"] == row["content_hash"], history, names, links)

    # -- import --------------------------------------------------------------------------------
    def import_record(self, kind: str, fields: dict[str, Any]) -> str:
        handler = getattr(self, f"_import_{kind}", None)
        if handler is None:
            raise InvalidArgument(f"Unknown record type {kind!r}")
        with self._lock:
            return str(handler(fields))

    def _import_entity(self, rec: dict[str, Any]) -> str:
        if (rec["norm"], rec["label"]) in self.tables.entities:
            return "skipped"
        self._entity_id(rec["norm"], rec["label"], rec["text"])
        return "inserted"

    def _import_entry(self, rec: dict[str, Any]) -> str:
        rec = _times(rec)
        values: dict[str, Any] = {name: rec.get(name) for name in ENTRY_FIELDS}
        complete_import_entry(values, rec, copy.deepcopy)
        key: str = values.pop("scope_key")
        entry_id: str = values["id"]
        t = self.tables
        existing = t.entries.get(entry_id)
        if existing is not None:
            if values["updated_at"] <= existing["updated_at"]:
                return "skipped"
            self._change(entry_id, **{k: v for k, v in values.items() if k != "id"})
            t.entity_entries = {k: v for k, v in t.entity_entries.items() if k[1] != entry_id}
            t.entity_links = {k: v for k, v in t.entity_links.items() if k[2] != entry_id}
            outcome = "updated"
        else:
            if values["invalid_at"] is None and self._live_duplicate(key, values["dedup_key"]) is not None:
                return "skipped"  # the same live text in the same scope under another id: keep that one
            rid = t.next("rid")
            t.entries[entry_id] = {**values, "rid": rid}
            t.rids[rid] = entry_id
            self._audit_insert(t.entries[entry_id])
            outcome = "inserted"
        for event in rec.get("history") or ():
            self._insert_history(entry_id, _times(event))
        for norm, label in rec.get("entities") or ():
            t.entity_entries.setdefault((self._entity_id(norm, label, norm), entry_id), None)
        for a, b, observed_at in rec.get("entity_links") or ():
            pair = sorted([self._entity_id(a[0], a[1], a[0]), self._entity_id(b[0], b[1], b[0])])
            t.entity_links.setdefault((pair[0], pair[1], entry_id), export_time(observed_at, "observed_at") or now())
        return outcome

    def _insert_history(self, entry_id: str, event: dict[str, Any]) -> bool:
        if any(h["id"] == event["id"] for h in self.tables.history):
            return False
        self._add_history(entry_id, event["event"], event.get("old_value"), event.get("new_value"), event.get("actor"),
                          event.get("role"), at=event["created_at"], event_id=event["id"])
        return True

    def _import_history(self, rec: dict[str, Any]) -> str:
        return "inserted" if self._insert_history(rec["entry_id"], _times(rec)) else "skipped"

    def _import_vector(self, rec: dict[str, Any]) -> str:
        if rec["content_hash"] in self.tables.vectors:
            return "skipped"
        self.tables.vectors[rec["content_hash"]] = np.frombuffer(bytes(rec["vector"]), dtype="<f4").copy()
        return "inserted"

    def _import_session(self, rec: dict[str, Any]) -> str:
        rec = _times(rec)
        values: dict[str, Any] = {name: copy.deepcopy(rec.get(name)) for name in SESSION_FIELDS}
        values["metadata"] = values["metadata"] or {}
        if values["summary_entry_id"] not in self.tables.entries:
            values["summary_entry_id"] = None
        existing = self.tables.sessions.get(values["id"])
        if existing is not None:
            if values["updated_at"] <= existing["updated_at"]:
                return "skipped"
            existing.update(values)
            return "updated"
        self.tables.sessions[values["id"]] = values
        return "inserted"

    def _import_message(self, rec: dict[str, Any]) -> str:
        rec = _times(rec)
        t = self.tables
        if rec["id"] in t.messages:
            return "skipped"
        if rec["session_id"] not in t.sessions:
            raise InvalidArgument(f"Message {rec['id']!r} belongs to session {rec['session_id']!r}, which is not "
                                  "in the file before it")
        seqs = {m["seq"] for m in t.messages.values() if m["session_id"] == rec["session_id"]}
        seq = rec["seq"] if rec["seq"] not in seqs else max(seqs) + 1
        entry_id = rec.get("entry_id")
        t.messages[rec["id"]] = {
            "id": rec["id"], "rid": t.next("message"), "session_id": rec["session_id"], "seq": seq, "role": rec["role"],
            "content": rec["content"], "name": rec.get("name"), "metadata": copy.deepcopy(rec.get("metadata") or {}),
            "payload": copy.deepcopy(rec.get("payload")), "status": rec.get("status") or "active",
            "created_at": rec["created_at"], "entry_id": entry_id if entry_id in t.entries else None}
        return "inserted"

    def _import_session_entry(self, rec: dict[str, Any]) -> str:
        key = (rec["session_id"], rec["entry_id"])
        if key in self.tables.session_entries or rec["session_id"] not in self.tables.sessions \
                or rec["entry_id"] not in self.tables.entries:
            return "skipped"
        self.tables.session_entries[key] = rec.get("relation") or "turn"
        return "inserted"

    def _import_entry_source(self, rec: dict[str, Any]) -> str:
        key = (rec["entry_id"], rec["message_id"])
        if key in self.tables.entry_sources or rec["entry_id"] not in self.tables.entries \
                or rec["message_id"] not in self.tables.messages:
            return "skipped"
        self.tables.entry_sources[key] = None
        return "inserted"

    def _import_entry_link(self, rec: dict[str, Any]) -> str:
        key = (rec["src"], rec["dst"], rec["relation"])
        if key in self.tables.entry_links or rec["src"] not in self.tables.entries \
                or rec["dst"] not in self.tables.entries:
            return "skipped"
        self.tables.entry_links[key] = export_time(rec["created_at"], "created_at") or now()
        return "inserted"

    def _import_trace(self, rec: dict[str, Any]) -> str:
        if rec["id"] in self.tables.traces:
            return "skipped"
        self.tables.traces[rec["id"]] = {
            "id": rec["id"], "query": rec["query"], "scope": copy.deepcopy(rec.get("scope") or {}),
            "intents": list(rec.get("intents") or []), "degrade_reason": rec.get("degrade_reason"),
            "result_ids": list(rec.get("result_ids") or []), "total_ms": float(rec.get("total_ms") or 0.0),
            "created_at": export_time(rec["created_at"], "created_at"),
            "steps": [{"name": s["name"], "ms": float(s["ms"]), "candidates": int(s["candidates"]),
                       "params": copy.deepcopy(s.get("params") or {})} for s in rec.get("steps") or ()]}
        return "inserted"

    def restore_times(self, table: str, row_id: str, *, created_at: str | None = None,
                      updated_at: str | None = None, history: list[dict[str, Any]] | None = None) -> None:
        if table not in ("entries", "sessions"):
            raise InvalidArgument(f"restore_times takes 'entries' or 'sessions', got {table!r}")
        with self._lock:
            sets = {k: export_time(v, k) for k, v in (("created_at", created_at), ("updated_at", updated_at)) if v}
            if table == "entries" and row_id in self.tables.entries:
                if sets:
                    self._change(row_id, **sets)
                if history is not None:
                    self.tables.history = [h for h in self.tables.history if h["entry_id"] != row_id]
                    for event in history:
                        self._insert_history(row_id, _times(event))
            elif table == "sessions" and row_id in self.tables.sessions:
                self.tables.sessions[row_id].update(sets)
