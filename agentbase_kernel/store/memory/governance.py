"""``RetentionStore`` and ``GovernanceStore`` in memory: access counts, archival, capacity; the
audit log, scope policies and conflicts."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...records import Entry, Scope
from ..base import iso, parse_iso
from ..rows import conflict_loser, scope_key
from .sessions import SessionsMixin
from .tables import now

__all__ = ["GovernanceMixin"]


class GovernanceMixin(SessionsMixin):
    """What a scope keeps, who may read and write it, and what contradicts what."""

    # -- RetentionStore ------------------------------------------------------------------------
    def bump_access(self, counts: dict[str, tuple[int, str]], reads: Sequence[dict[str, Any]] = ()) -> None:
        with self._lock:
            for entry_id, (n, last) in counts.items():
                if entry_id not in self.tables.entries:
                    continue  # deleted meanwhile
                had, seen = self.tables.access.get(entry_id, (0, ""))
                self.tables.access[entry_id] = (had + n, max(seen, last))
            for r in reads:
                self._append_audit_row(r.get("kind", "read"), r.get("actor"), r["scope"], list(r["entry_ids"]),
                                       r.get("detail") or {}, at=r["at"])

    def access_stats(self, entry_ids: Iterable[str]) -> dict[str, tuple[int, datetime | None]]:
        with self._lock:
            return {i: (n, parse_iso(last)) for i in dict.fromkeys(entry_ids)
                    if i in self.tables.access for n, last in [self.tables.access[i]]}

    def archive_entries(self, entry_ids: Sequence[str], *, reason: str, actor: str | None = None) -> list[str]:
        with self._lock:
            return self._set_archived(list(entry_ids), archived=True, reason=reason, actor=actor)

    def restore_entries(self, entry_ids: Sequence[str], *, actor: str | None = None) -> list[str]:
        with self._lock:
            return self._set_archived(list(entry_ids), archived=False, reason="restored", actor=actor)

    def _live_in(self, scope: Scope) -> list[dict[str, Any]]:
        """Live in the sense of capacity: exactly this scope, not archived, superseded or expired."""
        key, at = scope_key(scope), now()
        return [r for r in self.tables.entries.values()
                if self._scope_key(r) == key and r["archived_at"] is None and r["invalid_at"] is None
                and (r["expires_at"] is None or r["expires_at"] > at)]

    def scope_size(self, scope: Scope) -> int:
        with self._lock:
            return len(self._live_in(scope))

    def scope_entries(self, scope: Scope) -> list[Entry]:
        with self._lock:
            out = []
            for row in self._live_in(scope):
                entry = self._entry(row)
                count, last = self.tables.access.get(row["id"], (0, None))
                entry.access_count, entry.last_accessed_at = count, parse_iso(last)
                out.append(entry)
            return out

    def scope_capacity(self, scope: Scope) -> int | None:
        with self._lock:
            return self.tables.capacity.get(scope_key(scope))

    def set_scope_capacity(self, scope: Scope, max_items: int | None) -> None:
        with self._lock:
            if max_items is None:
                self.tables.capacity.pop(scope_key(scope), None)
            else:
                self.tables.capacity[scope_key(scope)] = int(max_items)

    # -- GovernanceStore: the audit log --------------------------------------------------------------
    def configure_audit(self, enabled: bool, max_rows: int) -> None:
        with self._lock:
            self.tables.meta.update(audit_enabled="1" if enabled else "0", audit_max_rows=str(int(max_rows)))
            if not enabled:
                self.tables.meta["audit_was_off"] = "1"
            if self.tables.audit:
                newest = self.tables.audit[-1]["seq"]
                kept = [r for r in self.tables.audit if r["seq"] > newest - int(max_rows)]
                if len(kept) < len(self.tables.audit):
                    self.tables.meta["audit_pruned"] = "1"
                self.tables.audit = kept

    def append_audit(self, kind: str, *, actor: str | None, scope: Scope, entry_ids: Sequence[str] = (),
                     detail: dict[str, Any] | None = None) -> None:
        with self._lock:
            if self._audit_on():
                self._append_audit_row(kind, actor, scope, list(entry_ids), json.loads(json.dumps(detail or {},
                                                                                              default=str)))

    def audit_rows(self, scope: Scope, *, since: datetime | None = None, until: datetime | None = None,
                   kinds: Sequence[str] | None = None, limit: int | None = 100) -> list[dict[str, Any]]:
        wanted = scope.as_dict()
        with self._lock:
            rows = [r for r in reversed(self.tables.audit)
                    if all(getattr(r["scope"], k) == v for k, v in wanted.items())
                    and (since is None or r["at"] >= iso(since)) and (until is None or r["at"] < iso(until))
                    and (not kinds or r["kind"] in kinds)]
            rows = rows if limit is None else rows[:limit]
            return [{**copy.deepcopy({k: v for k, v in r.items() if k != "state"}), "at": parse_iso(r["at"])}
                    for r in rows]

    # -- scope policies ------------------------------------------------------------------------
    def policies(self) -> list[dict[str, Any]]:
        """The same list object while nothing changed (callers key their caches on it)."""
        with self._lock:
            if self.tables.policy_list is None:
                rows = sorted(self.tables.policies.items(), key=lambda kv: kv[0])
                self.tables.policy_list = [{**row, "created_at": parse_iso(row["created_at"])} for _, row in rows]
            return self.tables.policy_list

    def set_policy(self, agent: str, scope: Scope, *, read: bool, write: bool) -> None:
        with self._lock:
            key = (agent, scope_key(scope))
            old = self.tables.policies.get(key)
            self.tables.policies[key] = {"agent": agent, "scope": scope, "read": bool(read), "write": bool(write),
                                         "created_at": old["created_at"] if old else now()}
            self.tables.policy_list = None

    def delete_policy(self, agent: str, scope: Scope) -> bool:
        with self._lock:
            self.tables.policy_list = None
            return self.tables.policies.pop((agent, scope_key(scope)), None) is not None

    # -- conflicts -----------------------------------------------------------------------------
    def add_conflict(self, old: Entry, new: Entry, reason: str, subject_key: str | None) -> str:
        conflict_id = f"conf_{uuid.uuid4().hex}"
        with self._lock:
            self.tables.conflicts[conflict_id] = {
                "id": conflict_id, "scope": old.scope, "subject_key": subject_key, "entry_a": old.id,
                "entry_b": new.id, "reason": reason, "created_at": now(), "status": "open", "kept": None,
                "actor": None, "resolved_at": None}
        return conflict_id

    def _conflict(self, c: dict[str, Any]) -> dict[str, Any]:
        a, b = self.tables.entries[c["entry_a"]], self.tables.entries[c["entry_b"]]
        status = ("resolved" if c["status"] == "resolved"
                  else "open" if a["invalid_at"] is None and b["invalid_at"] is None else "superseded")
        return {"id": c["id"], "status": status, "reason": c["reason"], "subject_key": c["subject_key"],
                "scope": c["scope"], "entry_ids": [c["entry_a"], c["entry_b"]], "kept": c["kept"], "actor": c["actor"],
                "created_at": parse_iso(c["created_at"]), "resolved_at": parse_iso(c["resolved_at"]),
                "texts": [a["l2_full"], b["l2_full"]]}

    def list_conflicts(self, scope: Scope, *, include_closed: bool = False, entry_ids: Iterable[str] | None = None,
                       conflict_id: str | None = None) -> list[dict[str, Any]]:
        wanted = scope.as_dict()
        involved = None if entry_ids is None else set(entry_ids)
        with self._lock:
            rows = [self._conflict(c) for c in sorted(self.tables.conflicts.values(),
                                                      key=lambda c: (c["created_at"], c["id"]))
                    if all(getattr(c["scope"], k) == v for k, v in wanted.items())
                    and (conflict_id is None or c["id"] == conflict_id)
                    and (involved is None or c["entry_a"] in involved or c["entry_b"] in involved)]
            return [r for r in rows if include_closed or r["status"] == "open"]

    def resolve_conflict(self, conflict_id: str, keep: str, *, actor: str | None) -> dict[str, Any]:
        with self._lock:
            found = self.list_conflicts(Scope(), include_closed=True, conflict_id=conflict_id)
            conflict, loser = conflict_loser(found, conflict_id, keep)
            at = now()
            self._change(loser, invalid_at=at, superseded_by=keep, updated_at=at)
            self.tables.entry_links.setdefault((keep, loser, "supersedes"), at)
            self.tables.conflicts[conflict_id].update(status="resolved", kept=keep, actor=actor, resolved_at=at)
            return {**conflict, "status": "resolved", "kept": keep, "actor": actor, "resolved_at": parse_iso(at)}
