"""``SkillStore`` in memory: skill versions and entity drift marks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...errors import InvalidArgument
from ...records import Scope
from ..base import iso, key_matches, parse_iso
from ..rows import scope_key
from .tables import MemoryBase

__all__ = ["SkillsMixin"]


class SkillsMixin(MemoryBase):
    """The versions of each named skill, and what later memories said about entities."""

    def add_skill_version(self, entry_id: str, scope: Scope, name: str, version: int, *, authored_by: str | None,
                          status: str, created_at: datetime) -> None:
        with self._lock:
            key = scope_key(scope)
            if status not in ("current", "candidate", "retired") or entry_id not in self.tables.entries or any(
                    r["scope_key"] == key and r["name"] == name and r["version"] == version
                    for r in self.tables.skill_versions.values()) or entry_id in self.tables.skill_versions:
                raise InvalidArgument(f"Rejected by the database: skill version {name!r} v{version} of {entry_id!r}")
            self.tables.skill_versions[entry_id] = {
                "entry_id": entry_id, "scope_key": key, "scope": scope, "name": name, "version": version,
                "authored_by": authored_by, "status": status, "created_at": iso(created_at), "verified_at": None}

    def skill_versions(self, scope: Scope | None = None, *, name: str | None = None,
                       entry_ids: Iterable[str] | None = None, exact: bool = False) -> list[dict[str, Any]]:
        wanted = None if entry_ids is None else set(entry_ids)
        with self._lock:
            rows = [r for r in self.tables.skill_versions.values()
                    if (scope is None or (r["scope_key"] == scope_key(scope) if exact else
                                          all(getattr(r["scope"], f) == v for f, v in scope.as_dict().items())))
                    and (name is None or r["name"] == name) and (wanted is None or r["entry_id"] in wanted)]
            rows.sort(key=lambda r: (r["name"].encode(), r["version"], r["scope_key"].encode()))
            return [{"entry_id": r["entry_id"], "name": r["name"], "version": r["version"],
                     "authored_by": r["authored_by"], "status": r["status"], "created_at": parse_iso(r["created_at"]),
                     "verified_at": parse_iso(r["verified_at"]), "scope": r["scope"]} for r in rows]

    def set_skill_version(self, entry_id: str, *, status: str | None = None,
                          verified_at: datetime | None = None) -> None:
        with self._lock:
            row = self.tables.skill_versions.get(entry_id)
            if row is None:
                return
            if status is not None:
                if status not in ("current", "candidate", "retired"):
                    raise InvalidArgument(f"Rejected by the database: skill status {status!r}")
                row["status"] = status
            if verified_at is not None:
                row["verified_at"] = iso(verified_at)

    def add_drift(self, entry_id: str, scope: Scope, marks: Sequence[tuple[str, str, str | None]],
                  at: datetime) -> None:
        with self._lock:
            if entry_id not in self.tables.entries or any(k not in ("deprecated", "renamed") for _, k, _ in marks):
                raise InvalidArgument(f"Rejected by the database: drift marks of {entry_id!r}")
            for entity, kind, replacement in marks:
                self.tables.drift.append({"entity": entity, "kind": kind, "replacement": replacement,
                                          "entry_id": entry_id, "scope": scope, "created_at": iso(at)})

    def drift_marks(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        keys = [k for k in dict.fromkeys(keys) if k]
        with self._lock:
            out = []
            for mark in self.tables.drift:
                entry = self.tables.entries.get(mark["entry_id"])
                if entry is None or entry["invalid_at"] is not None or entry["archived_at"] is not None:
                    continue
                if key_matches(mark["entity"], keys) or any(key_matches(k, [mark["entity"]]) for k in keys):
                    out.append({**mark, "created_at": parse_iso(mark["created_at"]), "text": entry["l2_full"]})
            return out
