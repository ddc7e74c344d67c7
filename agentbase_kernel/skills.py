"""``kernel.skills``: skills as governed records - named, versioned, authored, verified, with a
health score (docs/skills.md). ``Kernel.add_skill`` / ``update_skill`` ... are these methods.

Each version of a skill is an entry of context type ``skill`` in one scope. ``update`` writes a new
version and keeps the old one: the new one waits (archived, out of search) until ``promote``, unless
``promote=True``; promoting supersedes the old version, which stays readable (``versions``).

Usage::

    kernel.skills.add("analytics-schema", "Daily numbers come from analytics.events_v1", project_id="shop")
    kernel.skills.update("analytics-schema", "Daily numbers come from events_v2", project_id="shop")
    kernel.skills.promote("analytics-schema", project_id="shop")
    kernel.skills.verify("analytics-schema", project_id="shop", actor="ann")
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import arguments as check
from .errors import InvalidArgument, SkillNotFound
from .records import Entry, Scope, Skill
from .store.base import iso, utcnow
from .threads import in_thread

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["AsyncSkills", "Skills"]

_MAX_NAME = 200


def _name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        raise InvalidArgument(f"a skill name must be a non-empty str of at most {_MAX_NAME} characters, "
                              f"got {name!r:.80}", param="name")
    return name.strip()


class Skills:
    """The skills of one kernel's file (a view's agent must be allowed to write the scope). ``kernel.skills``."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    # -- reading -------------------------------------------------------------------------------------
    def _rows(self, scope: Scope, name: str) -> list[dict[str, Any]]:
        rows = self._kernel._ready().skill_versions(scope, name=name, exact=True)
        if not rows:
            raise SkillNotFound(name)
        return rows

    def _skills(self, rows: list[dict[str, Any]]) -> builtins.list[Skill]:
        k = self._kernel
        entries = k._ready().get_entries([r["entry_id"] for r in rows])
        found = k._with_access([entries[r["entry_id"]] for r in rows if r["entry_id"] in entries])
        return k._skill_judge().skills(found, utcnow())

    def _version(self, scope: Scope, name: str, version: int | None) -> Skill:
        rows = self._rows(scope, name)
        if version is not None:
            chosen = [r for r in rows if r["version"] == version]
        else:
            chosen = [r for r in rows if r["status"] == "current"] or rows[-1:]
        if not chosen:
            raise SkillNotFound(name, version)
        return self._skills(chosen)[0]

    def _current(self, scope: Scope, name: str) -> Skill:
        return self._version(scope, name, None)

    def get(self, name: str, *, version: int | None = None, user_id: str | None = None, agent_id: str | None = None,
            project_id: str | None = None, session_id: str | None = None) -> Skill:
        """The current version of skill ``name`` in exactly this scope (or ``version``), with its health.

        Raises:
            SkillNotFound: no such skill (or version) in the scope.
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        name = _name(name)
        self._kernel._gate.check("read", scope, "get_skill", exact=True)
        if version is not None:
            check.count(version, "version")
        return self._version(scope, name, version)

    def versions(self, name: str, *, user_id: str | None = None, agent_id: str | None = None,
                 project_id: str | None = None, session_id: str | None = None) -> builtins.list[Skill]:
        """Every version of skill ``name`` in exactly this scope, oldest first."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        name = _name(name)
        self._kernel._gate.check("read", scope, "skill_versions", exact=True)
        return self._skills(self._rows(scope, name))

    def list(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
             session_id: str | None = None, all_versions: bool = False) -> builtins.list[Skill]:
        """The current version of each skill whose scope has each given id (every version with
        ``all_versions``), by name, with health and warnings."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        hidden = self._kernel._gate.check("read", scope, "list_skills")
        rows = [r for r in self._kernel._ready().skill_versions(scope) if all_versions or r["status"] == "current"]
        rows = [r for r in rows if not any(all(getattr(r["scope"], f) == v for f, v in p.as_dict().items())
                                           for p in hidden)]
        return self._skills(rows)

    # -- writing -------------------------------------------------------------------------------------
    def _audit(self, op: str, scope: Scope, entry_ids: Sequence[str], detail: dict[str, Any],
               actor: str | None) -> None:
        if self._kernel.config.lifecycle.audit:
            self._kernel._ready().append_audit("skill", actor=actor or self._kernel.agent, scope=scope,
                                               entry_ids=list(entry_ids), detail={"op": op, **detail})

    def _write_version(self, scope: Scope, name: str, version: int, text: str, *, authored_by: str | None,
                       status: str, like: Entry | None, category: str | None, tags: Sequence[str],
                       metadata: dict[str, Any] | None, created_at: datetime | None) -> Entry:
        k = self._kernel
        item = check.memory_item(
            text, **scope.as_dict(), context_type="skill", actor=authored_by, created_at=created_at,
            category=category if category is not None else (like.category if like else None),
            tags=tags or ([t for t in like.tags if not t.startswith("ner_")] if like else ()),
            metadata=metadata if metadata is not None else (like.metadata if like else None))
        k._check_items([item], "add_skill")
        with k._writing():
            result = k.ingestor.add_many([item])[0]
        if result.event == "NOOP":
            raise InvalidArgument(f"skill {name!r} already has a version with this text ({result.id}) - "
                                  "change the text, or promote / verify that version", param="text")
        store = k._ready()
        store.add_skill_version(result.id, scope, name, version, authored_by=authored_by, status=status,
                                created_at=result.entry.created_at or utcnow())
        return result.entry

    def add(self, name: str, text: str, *, user_id: str | None = None, agent_id: str | None = None,
            project_id: str | None = None, session_id: str | None = None, authored_by: str | None = None,
            category: str | None = None, tags: Sequence[str] = (), metadata: dict[str, Any] | None = None,
            created_at: datetime | None = None) -> Skill:
        """Write version 1 of skill ``name`` in this scope (through ingest, as any memory).

        Raises:
            InvalidArgument: a bad name or text, or a skill of that name already in the scope
                (``update_skill`` adds a version).
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        name = _name(name)
        authored_by = check.optional_str(authored_by, "authored_by") or self._kernel.agent
        store = self._kernel._ready()
        with store.transaction():
            if store.skill_versions(scope, name=name, exact=True):
                raise InvalidArgument(f"skill {name!r} already exists in this scope - update_skill adds a version",
                                      param="name")
            entry = self._write_version(scope, name, 1, text, authored_by=authored_by, status="current", like=None,
                                        category=category, tags=tags, metadata=metadata, created_at=created_at)
            self._audit("add", scope, [entry.id], {"name": name, "version": 1, "authored_by": authored_by,
                                                   "created_at": iso(entry.created_at)}, authored_by)
        return self._current(scope, name)

    def update(self, name: str, text: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None, authored_by: str | None = None,
               promote: bool = False, category: str | None = None, tags: Sequence[str] = (),
               metadata: dict[str, Any] | None = None, created_at: datetime | None = None) -> Skill:
        """Write a new version of skill ``name``; the old one is kept. Unless ``promote``, the new
        version is a candidate (out of search) until ``promote_skill``, and the current one's health
        drops while it waits. Category, tags and metadata default to the current version's.

        Raises:
            SkillNotFound: no skill of that name in the scope.
            InvalidArgument: the text of an existing version, or bad arguments.
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        name = _name(name)
        authored_by = check.optional_str(authored_by, "authored_by") or self._kernel.agent
        if not isinstance(promote, bool):
            raise InvalidArgument(f"promote must be a bool, got {promote!r}", param="promote")
        store = self._kernel._ready()
        with store.transaction():
            rows = self._rows(scope, name)
            current = next((r for r in rows if r["status"] == "current"), rows[-1])
            like = store.get_entry(current["entry_id"])
            version = max(r["version"] for r in rows) + 1
            entry = self._write_version(scope, name, version, text, authored_by=authored_by, status="candidate",
                                        like=like, category=category, tags=tags, metadata=metadata,
                                        created_at=created_at)
            store.archive_entries([entry.id], reason="skill candidate", actor=authored_by)
            self._audit("update", scope, [entry.id], {"name": name, "version": version, "authored_by": authored_by,
                                                      "created_at": iso(entry.created_at)}, authored_by)
            if promote:
                self._promote(scope, name, version, actor=authored_by)
        return self._version(scope, name, version)

    def _promote(self, scope: Scope, name: str, version: int | None, *, actor: str | None) -> int:
        store = self._kernel._ready()
        rows = self._rows(scope, name)
        if version is None:
            waiting = [r for r in rows if r["status"] == "candidate"]
            if not waiting:
                raise InvalidArgument(f"skill {name!r} has no version waiting to be promoted", param="version")
            chosen = waiting[-1]
        else:
            found = [r for r in rows if r["version"] == version]
            if not found:
                raise SkillNotFound(name, version)
            chosen = found[0]
        if chosen["status"] == "current":
            return int(chosen["version"])
        now = utcnow()
        store.restore_entries([chosen["entry_id"]], actor=actor)
        for row in rows:
            if row["status"] == "current":
                store.supersede(row["entry_id"], chosen["entry_id"], now)
                store.set_skill_version(row["entry_id"], status="retired")
        store.set_skill_version(chosen["entry_id"], status="current")
        self._audit("promote", scope, [chosen["entry_id"]], {"name": name, "version": chosen["version"]}, actor)
        return int(chosen["version"])

    def promote(self, name: str, *, version: int | None = None, user_id: str | None = None,
                agent_id: str | None = None, project_id: str | None = None, session_id: str | None = None,
                actor: str | None = None) -> Skill:
        """Make ``version`` (default: the newest candidate) the current version of skill ``name``: it
        enters search, and the version it replaces is superseded (kept, readable with ``versions``).

        Raises:
            SkillNotFound: no such skill or version in the scope.
            InvalidArgument: nothing waiting to be promoted.
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        name = _name(name)
        if version is not None:
            check.count(version, "version")
        self._kernel._gate.check("write", scope, "promote_skill", exact=True)
        actor = check.optional_str(actor, "actor")
        store = self._kernel._ready()
        with store.transaction():
            promoted = self._promote(scope, name, version, actor=actor)
        return self._version(scope, name, promoted)

    def verify(self, name: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Skill:
        """A person checked the current version of skill ``name``: its health is full again and
        the drift seen before now is cleared."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        name = _name(name)
        self._kernel._gate.check("write", scope, "verify_skill", exact=True)
        actor = check.optional_str(actor, "actor")
        store = self._kernel._ready()
        with store.transaction():
            rows = self._rows(scope, name)
            current = next((r for r in rows if r["status"] == "current"), rows[-1])
            store.set_skill_version(current["entry_id"], verified_at=utcnow())
            self._audit("verify", scope, [current["entry_id"]], {"name": name, "version": current["version"]}, actor)
        return self._current(scope, name)


class AsyncSkills:
    """``Skills`` for async code: each method runs in a worker thread (``db.skills``)."""

    def __init__(self, skills: Skills) -> None:
        self._sync = skills

    get = in_thread(Skills.get)
    versions = in_thread(Skills.versions)
    list = in_thread(Skills.list)
    add = in_thread(Skills.add)
    update = in_thread(Skills.update)
    promote = in_thread(Skills.promote)
    verify = in_thread(Skills.verify)
