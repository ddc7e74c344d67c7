"""A skill's health, and the warning a result carries for a skill that should not be trusted blindly.

health = 0.5 ** (days since last used or verified / ``skill_half_life_days``)
         * 0.75 per open conflict the skill is in
         * 0.8 when a newer version waits for promotion
         * 0.5 when a later memory marks an entity the skill names as deprecated or renamed

A skill below ``skill_health_threshold`` (or with drift) gets a ``SkillWarning`` whose message says
why, e.g. "Skill 'analytics-schema' is stale (health 0.35): last verified 45 days ago".
``verify_skill`` resets the clock and clears drift seen before it (docs/skills.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ..records import ContextType, Entry, Scope, Skill, SkillWarning
from ..store.protocol import EntryStore, SkillStore
from ..text.targets import entity_keys

__all__ = ["CONFLICT_FACTOR", "DRIFT_FACTOR", "PENDING_FACTOR", "SkillJudge", "SkillReader", "skill_name_of"]

CONFLICT_FACTOR = 0.75
PENDING_FACTOR = 0.8
DRIFT_FACTOR = 0.5


class SkillReader(EntryStore, SkillStore, Protocol):
    """What judging a skill reads: its version rows, its entities and the drift marks on them."""


def skill_name_of(entry: Entry) -> str:
    """What a skill written without ``add_skill`` (``add_memory(context_type="skill")``) is called."""
    return entry.l0_abstract or entry.id


def _covers(outer: Scope, inner: Scope) -> bool:
    """Each id ``outer`` sets is ``inner``'s: a memory there speaks about ``inner``'s skills."""
    return all(getattr(inner, f) == v for f, v in outer.as_dict().items())


def _days(now: datetime, then: datetime) -> float:
    return max(0.0, (now - then).total_seconds() / 86400)


def _ago(days: float) -> str:
    n = int(days)
    return "today" if n == 0 else "1 day ago" if n == 1 else f"{n} days ago"


@dataclass
class SkillJudge:
    """Works out the health of skill entries from what the store knows about them."""

    store: SkillReader
    half_life_days: float
    threshold: float
    #: ``{entry_id: (access_count, last_accessed_at)}`` including bumps still queued in this process
    access: Callable[[list[str]], dict[str, tuple[int, datetime | None]]]

    def skills(self, entries: Iterable[Entry], now: datetime) -> list[Skill]:
        """One ``Skill`` per skill entry of ``entries`` (others are left out), in their order."""
        chosen = [e for e in entries if e.context_type == ContextType.SKILL]
        if not chosen:
            return []
        ids = [e.id for e in chosen]
        rows = {r["entry_id"]: r for r in self.store.skill_versions(entry_ids=ids)}
        names = {(r["scope"], r["name"]) for r in rows.values()}
        siblings: dict[tuple[Scope, str], list[dict[str, Any]]] = {}
        for scope, name in names:
            siblings[scope, name] = self.store.skill_versions(scope, name=name, exact=True)
        access = self.access(ids)
        entities = self.store.entities_of(ids)
        keys = sorted({k for norms in entities.values() for norm in norms for k, _ in entity_keys(norm)})
        marks = self.store.drift_marks(keys) if keys else []
        out = []
        for entry in chosen:
            row = rows.get(entry.id)
            name = row["name"] if row else skill_name_of(entry)
            version = row["version"] if row else 1
            created = (row["created_at"] if row else None) or entry.created_at or now
            verified = row["verified_at"] if row else None
            used = access.get(entry.id, (0, None))[1]
            pending = [] if row is None else [r["version"] for r in siblings.get((row["scope"], name), [])
                                              if r["status"] == "candidate" and r["version"] > version]
            since = max(t for t in (created, verified) if t is not None)
            own = {k for norm in entities.get(entry.id, []) for k, _ in entity_keys(norm)}
            drift = [m for m in marks if m["entry_id"] != entry.id and m["created_at"] is not None
                     and m["created_at"] > since and _covers(m["scope"], entry.scope)
                     and any(m["entity"] == k or m["entity"].endswith(("/" + k, "." + k))
                             or k.endswith(("/" + m["entity"], "." + m["entity"])) for k in own)]
            skill = Skill(name=name, version=version, entry=entry, status=row["status"] if row else "current",
                          authored_by=row["authored_by"] if row else entry.written_by, created_at=created,
                          verified_at=verified, last_used_at=used)
            self._judge(skill, now, pending, drift)
            out.append(skill)
        return out

    def _judge(self, skill: Skill, now: datetime, pending: list[int], drift: list[dict[str, Any]]) -> None:
        last = max(t for t in (skill.created_at, skill.verified_at, skill.last_used_at) if t is not None)
        days = _days(now, last)
        decay = 0.5 ** (days / self.half_life_days)
        conflicts = len(skill.entry.conflicts)
        health = decay * CONFLICT_FACTOR ** conflicts * (PENDING_FACTOR if pending else 1.0) \
            * (DRIFT_FACTOR if drift else 1.0)
        skill.health = round(health, 2)
        if skill.health >= self.threshold and not drift:
            return
        reasons = []
        if decay < 0.95:
            if skill.verified_at is not None and skill.verified_at >= last:
                reasons.append(f"last verified {_ago(days)}")
            elif skill.last_used_at is not None and skill.last_used_at >= last:
                reasons.append(f"last used {_ago(days)}, never verified" if skill.verified_at is None
                               else f"last used {_ago(days)}")
            else:
                reasons.append(f"not used or verified since it was written {_ago(days)}")
        if conflicts:
            reasons.append(f"in {conflicts} unresolved conflict{'s' if conflicts > 1 else ''}")
        if pending:
            reasons.append(f"version {max(pending)} is waiting to be promoted")
        for mark in drift:
            reasons.append(f"{mark['entity']} was renamed to {mark['replacement']}" if mark["kind"] == "renamed"
                           and mark["replacement"] else f"{mark['entity']} is marked {mark['kind']}")
        state = "is stale" if decay < self.threshold else "needs review"
        message = f"Skill '{skill.name}' {state} (health {skill.health:.2f}): {'; '.join(reasons)}"
        skill.warning = SkillWarning(entry_id=skill.entry.id, name=skill.name, health=skill.health, message=message,
                                     reasons=reasons, drift=[{k: m[k] for k in ("entity", "kind", "replacement",
                                                                                "entry_id", "text")} for m in drift])
