"""The in-memory store's state: one dict per table of the SQL backends, and what every role shares.

Rows are plain dicts keyed by the SQL column names; times are kept as the fixed-width ISO text the
SQL backends store (``store.base.iso``), so that text order is time order here too and an export
reads the same. JSON columns hold Python data, copied on the way in and out, so no caller can
change a stored row through an object it was handed.
"""

from __future__ import annotations

import copy
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...records import Entry, Message, Scope, Session
from ..base import iso, parse_iso, utcnow
from ..rows import entry_from_row, message_from_row, scope_key, session_from_row

__all__ = ["ENTRY_COLUMNS", "MemoryBase", "Tables"]

#: the columns an ``Entry`` is read from, in ``rows.entry_from_row``'s order
ENTRY_COLUMNS = ("rid", "id", "context_type", "category", "l0_abstract", "l1_overview", "l2_full", "tags", "user_id",
                 "agent_id", "project_id", "session_id", "role", "actor", "confidence", "content_hash", "metadata",
                 "event_dates", "flags", "created_at", "updated_at", "valid_from", "invalid_at", "expires_at",
                 "superseded_by", "importance", "archived_at", "trust", "source", "written_by")
_SESSION_COLUMNS = ("id", "user_id", "agent_id", "project_id", "metadata", "created_at", "updated_at", "committed_at",
                    "summary_entry_id")
_MESSAGE_COLUMNS = ("id", "session_id", "seq", "role", "content", "name", "metadata", "payload", "status",
                    "created_at", "entry_id")


@dataclass
class Tables:
    """Every table, as the SQL schema has them. Insertion order is row order (``rid`` / rowid)."""

    meta: dict[str, str] = field(default_factory=dict)
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> row
    rids: dict[int, str] = field(default_factory=dict)  # rid -> id
    history: list[dict[str, Any]] = field(default_factory=list)  # entry_history, by seq
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # content hash -> float32 vector
    entities: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (norm, label) -> row
    entity_entries: dict[tuple[int, str], None] = field(default_factory=dict)  # (entity id, entry id)
    entity_links: dict[tuple[int, int, str], str] = field(default_factory=dict)  # (a, b, entry id) -> observed_at
    entry_links: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (src, dst, relation) -> created_at
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> row (with its rid)
    session_entries: dict[tuple[str, str], str] = field(default_factory=dict)  # (session id, entry id) -> relation
    entry_sources: dict[tuple[str, str], None] = field(default_factory=dict)  # (entry id, message id)
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    access: dict[str, tuple[int, str]] = field(default_factory=dict)  # entry id -> (count, last ISO time)
    audit: list[dict[str, Any]] = field(default_factory=list)
    capacity: dict[str, int] = field(default_factory=dict)  # scope key -> max items
    policies: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (agent, scope key) -> row
    policy_list: list[dict[str, Any]] | None = None  # what policies() returns until a policy changes
    conflicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> row (its scope a Scope)
    effects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (outcome id, entry id) -> row
    confidence: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # entry id -> alpha, beta, conf
    zones: dict[str, dict[str, Any]] = field(default_factory=dict)
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    skill_versions: dict[str, dict[str, Any]] = field(default_factory=dict)  # entry id -> row
    drift: list[dict[str, Any]] = field(default_factory=list)  # entity_drift, by seq
    counters: dict[str, int] = field(default_factory=lambda: {"rid": 0, "history": 0, "message": 0, "entity": 0,
                                                              "audit": 0})

    def next(self, name: str) -> int:
        self.counters[name] += 1
        return self.counters[name]


def now() -> str:
    return iso(utcnow())


class MemoryBase:
    """The state, the lock and the helpers every role of ``MemoryStore`` shares.

    One re-entrant lock serialises every call, so each method is one atomic step; ``transaction()``
    holds it for the whole block and snapshots the tables, restoring them if the block raises
    (nested blocks are savepoints). Methods check everything before they change anything.
    """

    def __init__(self) -> None:
        self.tables = Tables()
        self._lock = threading.RLock()
        self._local = threading.local()

    # -- Transactional ---------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            saved = copy.deepcopy(self.tables)
            self._local.depth = getattr(self._local, "depth", 0) + 1
            try:
                yield
            except BaseException:
                self.tables = saved
                raise
            finally:
                self._local.depth -= 1

    @property
    def in_transaction(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    # -- rows in and out ---------------------------------------------------------------------------
    def _entry(self, row: dict[str, Any]) -> Entry:
        return entry_from_row(tuple(row[c] for c in ENTRY_COLUMNS), data=copy.deepcopy, when=parse_iso)

    def _session(self, row: dict[str, Any]) -> Session:
        return session_from_row(tuple(row[c] for c in _SESSION_COLUMNS), data=copy.deepcopy, when=parse_iso)

    def _message(self, row: dict[str, Any]) -> Message:
        return message_from_row(tuple(row[c] for c in _MESSAGE_COLUMNS), data=copy.deepcopy, when=parse_iso)

    def _scope_key(self, row: dict[str, Any]) -> str:
        return scope_key(Scope(row["user_id"], row["agent_id"], row["project_id"], row["session_id"]))

    def _add_history(self, entry_id: str, event: str, old: str | None, new: str | None, actor: str | None,
                     role: str | None, at: str | None = None, event_id: str | None = None) -> None:
        self.tables.history.append({"seq": self.tables.next("history"), "id": event_id or str(uuid.uuid4()),
                                    "entry_id": entry_id, "event": event, "old_value": old, "new_value": new,
                                    "created_at": at or now(), "actor": actor, "role": role})

    # -- the audit log's automatic rows (the SQL backends' triggers) ---------------------------------
    def _audit_on(self) -> bool:
        return self.tables.meta.get("audit_enabled", "1") == "1"

    def _append_audit_row(self, kind: str, actor: str | None, scope: Scope, entry_ids: list[str],
                          detail: dict[str, Any], at: str | None = None, state: dict[str, Any] | None = None) -> None:
        self.tables.audit.append({"seq": self.tables.next("audit"), "at": at or now(), "kind": kind, "actor": actor,
                                  "scope": scope, "entry_ids": list(entry_ids), "detail": copy.deepcopy(detail),
                                  "state": copy.deepcopy(state)})
        limit = self.tables.meta.get("audit_max_rows")
        if limit is not None:
            newest = self.tables.audit[-1]["seq"]
            kept = [r for r in self.tables.audit if r["seq"] > newest - int(limit)]
            if len(kept) < len(self.tables.audit):
                self.tables.meta["audit_pruned"] = "1"  # replay needs the whole log
            self.tables.audit = kept

    @staticmethod
    def _state(row: dict[str, Any]) -> dict[str, Any]:
        """An entry row as its audit rows keep it (the SQL backends' ``state``): what replay writes back."""
        out = {k: v for k, v in row.items() if k not in ("rid", "dedup_key", "scope_level")}
        out["dedup"] = row.get("dedup_key") == row.get("content_hash")
        return out

    def _row_scope(self, row: dict[str, Any]) -> Scope:
        return Scope(row["user_id"], row["agent_id"], row["project_id"], row["session_id"])

    def _audit_insert(self, row: dict[str, Any]) -> None:
        if self._audit_on():
            self._append_audit_row("write", row["actor"], self._row_scope(row), [row["id"]],
                                   {"role": row["role"], "category": row["category"]}, state=self._state(row))

    def _audit_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """What a changed entry row adds to the log: an archive, restore, supersede or update (its
        actor is the latest ARCHIVE / RESTORE event's, written just before the change)."""
        if not self._audit_on():
            return
        if old["archived_at"] is None and new["archived_at"] is not None:
            kind = "archive"
        elif old["archived_at"] is not None and new["archived_at"] is None:
            kind = "restore"
        elif old["invalid_at"] is None and new["invalid_at"] is not None:
            kind = "supersede"
        else:
            kind = "update"
        actor, detail = None, {}
        if kind in ("archive", "restore"):
            event = next((h for h in reversed(self.tables.history) if h["entry_id"] == new["id"]
                          and h["event"] in ("ARCHIVE", "RESTORE")), None)
            if event is not None:
                actor = event["actor"]
                if kind == "archive":
                    detail = {"reason": event["new_value"]}
        self._append_audit_row(kind, actor, self._row_scope(new), [new["id"]], detail, state=self._state(new))

    def _set_archived(self, entry_ids: list[str], *, archived: bool, reason: str, actor: str | None) -> list[str]:
        """Archive (or restore) the ids not already so: an ARCHIVE / RESTORE event, then the change."""
        at = now()
        changed = []
        for entry_id in dict.fromkeys(entry_ids):
            row = self.tables.entries.get(entry_id)
            if row is None or (row["archived_at"] is None) != archived:
                continue
            self._add_history(entry_id, "ARCHIVE" if archived else "RESTORE", row["l2_full"], reason, actor,
                              row["role"], at)
            self._change(entry_id, archived_at=at if archived else None)
            changed.append(entry_id)
        return changed

    def _change(self, entry_id: str, **columns: Any) -> None:
        """Set columns of one entry row, audited as the SQL triggers do."""
        row = self.tables.entries[entry_id]
        old = dict(row)
        row.update(columns)
        self._audit_update(old, row)
