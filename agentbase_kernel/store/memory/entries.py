"""``EntryStore`` and ``VectorStore`` in memory: entries with exact dedup, history, links, entities."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ...errors import DuplicateEntry, EmbeddingMismatch, EntryNotFound, InvalidArgument
from ...records import Entry, HistoryEvent, Scope
from ..base import NO_EMBEDDER, EntryFilter, iso, key_matches, parse_iso, utcnow
from ..protocol import EntryRow
from ..rows import new_entry_values, scope_key
from .match import passes, prepare
from .tables import MemoryBase, now

__all__ = ["EntriesMixin"]

_JSON = ("tags", "metadata", "flags", "event_dates")
_TIMES = ("expires_at", "invalid_at", "valid_from")


class EntriesMixin(MemoryBase):
    """Entries, their history and links, their entities; vectors by content hash."""

    # -- reading -------------------------------------------------------------------------------
    def _rows(self, flt: EntryFilter) -> list[dict[str, Any]]:
        """The entries rows ``flt`` passes, in rid order."""
        metadata = prepare(flt)
        at = now()
        return [row for row in self.tables.entries.values() if passes(row, flt, at, metadata)]

    def _live_duplicate(self, key: str, dedup_key: str, exclude: str | None = None) -> dict[str, Any] | None:
        """The live row of ``(scope_key, dedup_key)`` - the pair the SQL backends keep unique."""
        return next((row for row in self.tables.entries.values()
                     if row["dedup_key"] == dedup_key and row["invalid_at"] is None and row["id"] != exclude
                     and self._scope_key(row) == key), None)

    def get_entry(self, entry_id: str, scope: Scope | None = None) -> Entry:
        with self._lock:
            row = self.tables.entries.get(entry_id)
            if row is None or not passes(row, EntryFilter(scope=scope or Scope(), include_expired=True,
                                                          include_invalid=True, archived=None), now(), None):
                raise EntryNotFound(entry_id)
            return self._entry(row)

    def get_entries(self, entry_ids: Iterable[str]) -> dict[str, Entry]:
        with self._lock:
            return {i: self._entry(self.tables.entries[i]) for i in dict.fromkeys(entry_ids) if i in self.tables.entries}

    def live_duplicates(self, keys: Iterable[tuple[Scope, str]]) -> dict[tuple[Scope, str], Entry]:
        with self._lock:
            out = {}
            for scope, content_hash in dict.fromkeys(keys):
                row = self._live_duplicate(scope_key(scope), content_hash)
                if row is not None:
                    out[scope, content_hash] = self._entry(row)
            return out

    def list_entries(self, flt: EntryFilter, *, limit: int | None = 100, offset: int = 0,
                     order: str = "asc") -> list[Entry]:
        with self._lock:
            rows = self._rows(flt)
            if order == "desc":
                rows.reverse()
            rows = rows[offset:] if limit is None else rows[offset : offset + limit]
            return [self._entry(r) for r in rows]

    def count_entries(self, flt: EntryFilter) -> int:
        with self._lock:
            return len(self._rows(flt))

    def history(self, entry_id: str) -> list[HistoryEvent]:
        with self._lock:
            return [HistoryEvent(h["id"], h["entry_id"], h["event"], h["old_value"], h["new_value"],
                                 parse_iso(h["created_at"]), h["actor"], h["role"])  # type: ignore[arg-type]
                    for h in self.tables.history if h["entry_id"] == entry_id]

    def live_subject_entries(self, scope: Scope, subject_key: str, exclude_id: str) -> list[Entry]:
        key = scope_key(scope)
        with self._lock:
            return [self._entry(r) for r in self.tables.entries.values()
                    if self._scope_key(r) == key and r["subject_key"] == subject_key and r["invalid_at"] is None
                    and r["id"] != exclude_id]

    # -- writing -------------------------------------------------------------------------------
    def insert_entry(self, row: EntryRow, *, history: bool = True) -> tuple[Entry, bool]:
        at = iso(row.get("created_at") or utcnow())
        entry_id = row.get("id") or str(uuid.uuid4())
        values = new_entry_values(row, entry_id, at, json_value=copy.deepcopy, when=iso)
        with self._lock:
            existing = self._live_duplicate(values["scope_key"], values["dedup_key"])
            if existing is not None:
                if existing["archived_at"] is not None:  # said again: back in search
                    self._set_archived([existing["id"]], archived=False, reason="written again", actor=row.get("actor"))
                return self._entry(existing), False
            if entry_id in self.tables.entries:
                raise InvalidArgument(f"An entry with id {entry_id!r} already exists")
            self._put_row(values)
            if history:
                self._add_history(entry_id, "ADD", None, row["l2_full"], row.get("actor"), row.get("role"), at)
            return self._entry(self.tables.entries[entry_id]), True

    def _put_row(self, values: dict[str, Any]) -> None:
        """A new entries row: a rid, and the columns no ingest row carries."""
        rid = self.tables.next("rid")
        stored = {**values, "rid": rid, "superseded_by": None, "archived_at": None}
        stored.pop("scope_key")
        self.tables.entries[values["id"]] = stored
        self.tables.rids[rid] = values["id"]
        self._audit_insert(stored)

    def update_entry(self, entry_id: str, scope: Scope, changes: dict[str, Any], *,
                     actor: str | None = None) -> Entry:
        with self._lock:
            old = self.get_entry(entry_id, scope)
            row = self.tables.entries[entry_id]
            sets: dict[str, Any] = {}
            for key, value in changes.items():
                sets[key] = copy.deepcopy(value) if key in _JSON else iso(value) if key in _TIMES else value
            at = now()
            sets["updated_at"] = at
            if "content_hash" in sets and sets["content_hash"] != old.content_hash:
                keeps_duplicates = row["dedup_key"] != row["content_hash"]
                sets["dedup_key"] = f"{sets['content_hash']}:{entry_id}" if keeps_duplicates else sets["content_hash"]
                clash = self._live_duplicate(self._scope_key(row), sets["dedup_key"], exclude=entry_id)
                if clash is not None:
                    raise DuplicateEntry(
                        f"Entry {clash['id']!r} of the same scope already has this text - update or delete that one",
                        existing_id=clash["id"])
            self._change(entry_id, **sets)
            if "l2_full" in changes and changes["l2_full"] != old.l2_full:
                self._add_history(entry_id, "UPDATE", old.l2_full, changes["l2_full"], actor, old.role, at)
                self._name_update_actor(entry_id, actor)
            return self._entry(row)

    def _name_update_actor(self, entry_id: str, actor: str | None) -> None:
        """The update's audit row gets the actor its history event names (written after the change)."""
        for audit in reversed(self.tables.audit):
            if audit["kind"] == "update" and audit["entry_ids"] == [entry_id]:
                audit["actor"] = actor
                return

    def reinforce(self, entry_id: str, confidence: float) -> None:
        with self._lock:
            if entry_id in self.tables.entries:
                self._change(entry_id, confidence=confidence)

    def delete_entry(self, entry_id: str, scope: Scope, *, actor: str | None = None) -> Entry:
        with self._lock:
            entry = self.get_entry(entry_id, scope)
            self._delete_rows([entry_id], actor)
            return entry

    def delete_entries(self, flt: EntryFilter, *, actor: str | None = None) -> int:
        with self._lock:
            ids = [r["id"] for r in self._rows(flt)]
            self._delete_rows(ids, actor)
            return len(ids)

    def _delete_rows(self, entry_ids: list[str], actor: str | None) -> None:
        """Delete entries with a DELETE event each; what points at them goes too (the SQL backends'
        ``ON DELETE CASCADE``), what only names them forgets them (``SET NULL``)."""
        at = now()
        t = self.tables
        for entry_id in entry_ids:
            row = t.entries.pop(entry_id)
            del t.rids[row["rid"]]
            self._add_history(entry_id, "DELETE", row["l2_full"], None, actor, row["role"], at)
            if self._audit_on():
                self._append_audit_row("delete", actor, self._row_scope(row), [entry_id], {})
        gone = set(entry_ids)
        t.entity_entries = {k: v for k, v in t.entity_entries.items() if k[1] not in gone}
        t.entity_links = {k: v for k, v in t.entity_links.items() if k[2] not in gone}
        t.entry_links = {k: v for k, v in t.entry_links.items() if k[0] not in gone and k[1] not in gone}
        t.effects = {k: v for k, v in t.effects.items() if k[1] not in gone}
        t.confidence = {k: v for k, v in t.confidence.items() if k not in gone}
        t.session_entries = {k: v for k, v in t.session_entries.items() if k[1] not in gone}
        t.entry_sources = {k: v for k, v in t.entry_sources.items() if k[0] not in gone}
        t.conflicts = {k: c for k, c in t.conflicts.items() if c["entry_a"] not in gone and c["entry_b"] not in gone}
        t.skill_versions = {k: v for k, v in t.skill_versions.items() if k not in gone}
        t.drift = [m for m in t.drift if m["entry_id"] not in gone]
        for entry_id in gone:
            t.access.pop(entry_id, None)
        for session in t.sessions.values():
            if session["summary_entry_id"] in gone:
                session["summary_entry_id"] = None
        for message in t.messages.values():
            if message["entry_id"] in gone:
                message["entry_id"] = None

    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        with self._lock:
            if old_id in self.tables.entries:
                self._change(old_id, invalid_at=iso(at), superseded_by=new_id, updated_at=now())
            self.link_entries(new_id, old_id, "supersedes")

    def link_entries(self, src: str, dst: str, relation: str) -> None:
        with self._lock:
            if src in self.tables.entries and dst in self.tables.entries:
                self.tables.entry_links.setdefault((src, dst, relation), now())

    def append_search_context(self, entry_id: str, text: str) -> None:
        with self._lock:
            row = self.tables.entries.get(entry_id)
            if row is not None:
                self._change(entry_id, search_context=row["search_context"] + text)

    # -- entities ------------------------------------------------------------------------------
    def _entity_id(self, norm: str, label: str, text: str) -> int:
        found = self.tables.entities.get((norm, label))
        if found is None:
            found = {"id": self.tables.next("entity"), "norm": norm, "label": label, "text": text}
            self.tables.entities[norm, label] = found
        return int(found["id"])

    def add_entities(self, entry_id: str, entities: list[tuple[str, str, str]], observed_at: datetime, *,
                     replace: bool = False) -> None:
        with self._lock:
            t = self.tables
            if replace:
                t.entity_entries = {k: v for k, v in t.entity_entries.items() if k[1] != entry_id}
                t.entity_links = {k: v for k, v in t.entity_links.items() if k[2] != entry_id}
            if not entities or entry_id not in t.entries:
                return
            ids = []
            for norm, label, text in entities:
                eid = self._entity_id(norm, label, text)
                ids.append(eid)
                t.entity_entries.setdefault((eid, entry_id), None)
            unique = sorted(set(ids))
            for i, a in enumerate(unique):
                for b in unique[i + 1 :]:
                    t.entity_links.setdefault((a, b, entry_id), iso(observed_at))

    def entity_graph(self, flt: EntryFilter, entity: str | None = None, limit: int = 200) -> dict[str, Any]:
        with self._lock:
            visible = {r["id"] for r in self._rows(flt)}
            by_id = {e["id"]: e for e in self.tables.entities.values()}
            counts: dict[int, int] = {}
            for eid, entry_id in self.tables.entity_entries:
                if entry_id in visible and (entity is None or by_id[eid]["norm"] == entity):
                    counts[eid] = counts.get(eid, 0) + 1
            chosen = sorted(counts, key=lambda eid: (-counts[eid], eid))[:limit]
            nodes = [{**by_id[eid], "entries": counts[eid]} for eid in chosen]
            seen = set(chosen)
            edges: list[dict[str, Any]] = [{"a": a, "b": b, "entry_id": entry_id, "observed_at": at}
                     for (a, b, entry_id), at in self.tables.entity_links.items()
                     if entry_id in visible and (a in seen or b in seen)]
            for edge in edges:
                for eid in (edge["a"], edge["b"]):
                    if eid in seen:
                        continue
                    seen.add(eid)
                    nodes.append({**by_id[eid], "entries": 0})
            return {"nodes": nodes, "edges": edges}

    def entity_matches(self, keys: Sequence[str], flt: EntryFilter, limit: int = 200) -> dict[str, list[str]]:
        keys = list(dict.fromkeys(k for k in keys if k))
        if not keys or limit <= 0:
            return {}
        with self._lock:
            rows = self._rows(flt)
            rid = {r["id"]: r["rid"] for r in rows}
            by_id = {e["id"]: e for e in self.tables.entities.values()}
            pairs = [(entry_id, by_id[eid]["norm"]) for eid, entry_id in self.tables.entity_entries if entry_id in rid]
        out: dict[str, list[str]] = {}
        for entry_id, norm in sorted(pairs, key=lambda p: -rid[p[0]]):
            names = key_matches(norm, keys)
            if not names or (entry_id not in out and len(out) >= limit):
                continue
            matched = out.setdefault(entry_id, [])
            matched.extend(k for k in names if k not in matched)
        return out

    def entities_of(self, entry_ids: Iterable[str]) -> dict[str, list[str]]:
        wanted = set(entry_ids)
        with self._lock:
            by_id = {e["id"]: e for e in self.tables.entities.values()}
            out: dict[str, list[str]] = {}
            for eid, entry_id in sorted(self.tables.entity_entries):
                if entry_id in wanted:
                    out.setdefault(entry_id, []).append(by_id[eid]["norm"])
        return out

    # -- vectors (VectorStore) -----------------------------------------------------------------------
    def check_embedder(self, name: str, dim: int) -> None:
        with self._lock:
            meta = self.tables.meta
            recorded = {k: meta[k] for k in ("embedding_model", "embedding_dim") if k in meta}
            if name == NO_EMBEDDER or not recorded or recorded.get("embedding_model") == NO_EMBEDDER:
                if name != NO_EMBEDDER or not recorded:
                    meta.update(embedding_model=name, embedding_dim=str(dim))
                return
        if int(recorded["embedding_dim"]) != dim:
            raise EmbeddingMismatch(
                f"Embedding dimension {dim} does not match this store ({recorded['embedding_dim']}, model "
                f"{recorded['embedding_model']!r}) - open it with the embedder that created it, or pass a new path")
        if recorded["embedding_model"] != name:
            raise EmbeddingMismatch(
                f"Embedder {name!r} differs from the one that wrote this store ({recorded['embedding_model']!r}) - "
                "open it with that embedder, or pass a new path")

    def missing_vectors(self, hashes: Iterable[str]) -> set[str]:
        with self._lock:
            return {h for h in hashes if h not in self.tables.vectors}

    def vectors_for(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return {h: self.tables.vectors[h].copy() for h in dict.fromkeys(hashes) if h in self.tables.vectors}

    def put_vectors(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            for content_hash, vector in items:
                self.tables.vectors.setdefault(content_hash, np.asarray(vector, dtype="<f4").copy())

    def hashes_without_vector(self) -> list[tuple[str, str]]:
        with self._lock:
            texts: dict[str, str] = {}
            for row in self.tables.entries.values():
                h = row["content_hash"]
                if h not in self.tables.vectors and (h not in texts or row["l2_full"] < texts[h]):
                    texts[h] = row["l2_full"]
            return sorted(texts.items())
