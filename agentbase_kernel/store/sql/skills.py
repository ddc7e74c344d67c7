"""Skill versions and entity drift marks (docs/skills.md).

``skill_versions`` names each version of a skill (an entry of context type ``skill``): its name and
number in its scope, who wrote it, whether it is the ``current`` one, a ``candidate`` waiting for
promotion or ``retired``, and when a person last verified it. ``entity_drift`` keeps what later
memories said about an entity (deprecated, renamed to ...), which a skill naming it reads as drift.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...records import Scope
from ..base import key_matches
from ..rows import scope_key
from .core import SqlCore, mapped
from .entities import like_suffixes

__all__ = ["SkillsMixin"]

_SKILL_COLS = ("entry_id, name, version, authored_by, status, created_at, verified_at, "
               "user_id, agent_id, project_id, session_id")


class SkillsMixin(SqlCore):
    """``skill_versions`` and ``entity_drift``."""

    def _skill(self, r: Any) -> dict[str, Any]:
        d = self.dialect
        return {"entry_id": r[0], "name": r[1], "version": int(r[2]), "authored_by": r[3], "status": r[4],
                "created_at": d.when(r[5]), "verified_at": d.when(r[6]), "scope": Scope(*r[7:11])}

    @mapped
    def add_skill_version(self, entry_id: str, scope: Scope, name: str, version: int, *, authored_by: str | None,
                          status: str, created_at: datetime) -> None:
        d = self.dialect
        with self.conns.write() as conn:
            conn.execute(
                "INSERT INTO skill_versions (entry_id, scope_key, user_id, agent_id, project_id, session_id, name, "
                "version, authored_by, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry_id, scope_key(scope), scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
                 name, version, authored_by, status, d.time(created_at)))

    @mapped
    def skill_versions(self, scope: Scope | None = None, *, name: str | None = None,
                       entry_ids: Iterable[str] | None = None, exact: bool = False) -> list[dict[str, Any]]:
        d = self.dialect
        clauses: list[str] = []
        args: list[Any] = []
        if scope is not None and exact:
            clauses.append("scope_key = ?")
            args.append(scope_key(scope))
        elif scope is not None:
            for col, value in scope.as_dict().items():
                clauses.append(f"{col} = ?")
                args.append(d.key(value))
        if name is not None:
            clauses.append("name = ?")
            args.append(d.key(name))
        sql = (f"SELECT {_SKILL_COLS} FROM skill_versions WHERE {' AND '.join(clauses) or d.true}"
               " AND {in} ORDER BY " + f"{d.binary_order('name')}, version, {d.binary_order('scope_key')}")
        with self.conns.read() as conn:
            if entry_ids is None:
                rows = conn.execute(sql.replace(" AND {in}", ""), args).fetchall()
            else:
                rows = self.select_in(conn, sql, "entry_id", entry_ids, *args)
        found = [self._skill(r) for r in rows]
        if entry_ids is not None:
            found.sort(key=lambda s: (s["name"].encode(), s["version"], scope_key(s["scope"]).encode()))
        return found

    @mapped
    def set_skill_version(self, entry_id: str, *, status: str | None = None,
                          verified_at: datetime | None = None) -> None:
        d = self.dialect
        sets, args = [], []
        if status is not None:
            sets.append("status = ?")
            args.append(status)
        if verified_at is not None:
            sets.append("verified_at = ?")
            args.append(d.time(verified_at))
        if not sets:
            return
        with self.conns.write() as conn:
            conn.execute(f"UPDATE skill_versions SET {', '.join(sets)} WHERE entry_id = ?", [*args, entry_id])

    @mapped
    def add_drift(self, entry_id: str, scope: Scope, marks: Sequence[tuple[str, str, str | None]],
                  at: datetime) -> None:
        d = self.dialect
        with self.conns.write() as conn:
            conn.executemany(
                "INSERT INTO entity_drift (entity, kind, replacement, entry_id, user_id, agent_id, project_id, "
                "session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(entity, kind, replacement, entry_id, scope.user_id, scope.agent_id, scope.project_id,
                  scope.session_id, d.time(at)) for entity, kind, replacement in marks])

    @mapped
    def drift_marks(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        keys = list(dict.fromkeys(k for k in keys if k))
        if not keys:
            return []
        d = self.dialect
        names, args = [], []
        for key in keys:
            names.append("f.entity = ?")
            args.append(key)
            for pattern in like_suffixes(key):
                names.append("f.entity LIKE ? ESCAPE '\\'")
                args.append(pattern)
            names.append("? LIKE '%/' || f.entity OR ? LIKE '%.' || f.entity")  # a key longer than the entity
            args.extend([key, key])
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT f.entity, f.kind, f.replacement, f.entry_id, f.user_id, f.agent_id, f.project_id, "
                "f.session_id, f.created_at, e.l2_full FROM entity_drift f JOIN entries e ON e.id = f.entry_id "
                f"WHERE ({' OR '.join(names)}) AND e.invalid_at IS NULL AND e.archived_at IS NULL "
                "ORDER BY f.seq", args).fetchall()
        return [{"entity": r[0], "kind": r[1], "replacement": r[2], "entry_id": r[3], "scope": Scope(*r[4:8]),
                 "created_at": d.when(r[8]), "text": r[9]}
                for r in rows if key_matches(r[0], keys) or any(key_matches(k, [r[0]]) for k in keys)]
