"""Result and entry records: small dataclasses that compare with ``==``.

Timestamps are timezone-aware UTC ``datetime`` objects; ids are strings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, overload

__all__ = [
    "AddResult",
    "ContextType",
    "Entry",
    "FindResult",
    "HistoryEvent",
    "Hit",
    "Message",
    "Outcome",
    "Proposal",
    "Provenance",
    "Scope",
    "ScopeLevel",
    "Session",
    "Skill",
    "SkillWarning",
    "Trace",
    "TraceStep",
    "Zone",
]


class ContextType(str, Enum):
    """What kind of context an entry holds."""

    MEMORY = "memory"
    RESOURCE = "resource"
    SKILL = "skill"


class ScopeLevel(str, Enum):
    """The narrowest scope an entry belongs to (derived from its ids)."""

    GLOBAL = "global"
    PROJECT = "project"
    AGENT = "agent"
    SESSION = "session"


@dataclass(frozen=True)
class Scope:
    """Who an entry belongs to. ``None`` fields are unconstrained when filtering.

    Usage::

        Scope(user_id="alice")                 # everything of alice
        Scope(user_id="alice", session_id="s") # one of her sessions
    """

    user_id: str | None = None
    agent_id: str | None = None
    project_id: str | None = None
    session_id: str | None = None

    @property
    def level(self) -> ScopeLevel:
        if self.session_id is not None:
            return ScopeLevel.SESSION
        if self.agent_id is not None:
            return ScopeLevel.AGENT
        if self.project_id is not None:
            return ScopeLevel.PROJECT
        return ScopeLevel.GLOBAL

    @property
    def is_empty(self) -> bool:
        return not any((self.user_id, self.agent_id, self.project_id, self.session_id))

    def as_dict(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class Entry:
    """One stored piece of context, with its three tiers of detail."""

    id: str
    l2_full: str
    l0_abstract: str
    l1_overview: str
    context_type: ContextType = ContextType.MEMORY
    category: str | None = None
    tags: list[str] = field(default_factory=list)
    scope: Scope = field(default_factory=Scope)
    role: str | None = None
    actor: str | None = None
    confidence: float = 1.0
    content_hash: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    invalid_at: datetime | None = None
    expires_at: datetime | None = None
    event_dates: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    superseded_by: str | None = None
    # reinforcement (docs/lifecycle.md): how often ``find`` returned this entry, and when last
    access_count: int = 0
    last_accessed_at: datetime | None = None
    # how much the entry matters in [0, 1] (the caller's, or rule-based at
    # ingest: rules/importance.py), and when capacity or consolidation archived it (None: live)
    importance: float = 0.5
    archived_at: datetime | None = None
    # provenance and trust (rules/trust.py): how far to believe it, which path and agent wrote it
    trust: float = 1.0
    source: str | None = None
    written_by: str | None = None
    # ids of the open conflicts this entry is part of (rules/conflicts.py); filled on read
    conflicts: list[str] = field(default_factory=list)

    @property
    def scope_level(self) -> ScopeLevel:
        return self.scope.level

    @property
    def user_id(self) -> str | None:
        return self.scope.user_id

    @property
    def agent_id(self) -> str | None:
        return self.scope.agent_id

    @property
    def project_id(self) -> str | None:
        return self.scope.project_id

    @property
    def session_id(self) -> str | None:
        return self.scope.session_id

    @property
    def text(self) -> str:
        return self.l2_full


@dataclass
class AddResult:
    """What one ``add_memory`` did: ``event`` is ADD, NOOP (exact duplicate) or MERGE (near duplicate)."""

    entry: Entry
    event: str
    facts: list[AddResult] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # conflicts opened instead of superseding
    # the proposal this write became instead (event PROPOSED: the scope is an approval zone)
    proposal_id: str | None = None

    @property
    def id(self) -> str:
        return self.entry.id


@dataclass
class HistoryEvent:
    """One ADD / UPDATE / DELETE event of an entry (``CONFLICT`` / ``RESOLVE`` from conflicts, with ``reason``)."""

    id: str
    entry_id: str
    event: str
    old_value: str | None
    new_value: str | None
    created_at: datetime
    actor: str | None = None
    role: str | None = None
    reason: str | None = None


@dataclass
class Session:
    """A conversation: an ordered list of messages in one scope."""

    id: str
    scope: Scope
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    committed_at: datetime | None = None
    summary_entry_id: str | None = None


@dataclass
class Message:
    """One turn of a session. ``seq`` orders turns; timestamps never do."""

    id: str
    session_id: str
    seq: int
    role: str
    content: str
    name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    payload: Any = None
    status: str = "active"
    created_at: datetime | None = None
    entry_id: str | None = None


@dataclass
class Provenance:
    """Where a result came from: the source message and what the caller stored with it."""

    message_id: str
    session_id: str
    role: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Hit:
    """One retrieval result."""

    entry: Entry
    score: float
    matched_by: list[str] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)
    level: str = "L2"
    similarity: float | None = None  # cosine similarity to the query, when the vector leg saw it

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def content(self) -> str:
        """The text at the loaded level (L0, L1 or L2)."""
        if self.level == "L0":
            return self.entry.l0_abstract
        if self.level == "L1":
            return self.entry.l1_overview
        return self.entry.l2_full


@dataclass
class SkillWarning:
    """Why a skill in a result should not be trusted blindly: its ``health`` is below the threshold
    or an entity it names has drifted. ``message`` is the sentence to show a person."""

    entry_id: str
    name: str
    health: float
    message: str
    reasons: list[str] = field(default_factory=list)
    drift: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        return self.message


@dataclass
class Skill:
    """One version of a named skill (an entry of context type ``skill``) with its health.

    ``status`` is ``current`` (the promoted version, found by search), ``candidate`` (a newer
    version waiting for ``promote_skill``) or ``retired``. ``health`` in [0, 1] halves every
    ``lifecycle.skill_half_life_days`` since the skill was last used or verified, and drops with
    open conflicts, a waiting candidate and entity drift (docs/skills.md).
    """

    name: str
    version: int
    entry: Entry
    status: str = "current"
    authored_by: str | None = None
    created_at: datetime | None = None
    verified_at: datetime | None = None
    last_used_at: datetime | None = None
    health: float = 1.0
    warning: SkillWarning | None = None

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def text(self) -> str:
        return self.entry.l2_full


@dataclass
class TraceStep:
    """One pipeline step: how long it took, how many candidates it saw, with which parameters."""

    name: str
    ms: float
    candidates: int
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Trace:
    """The record of one ``find`` call."""

    id: str
    query: str
    steps: list[TraceStep] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    degrade_reason: str | None = None
    # ids of the returned entries that are in an open conflict (rules/conflicts.py; not stored)
    conflicts: list[str] = field(default_factory=list)


class FindResult(Sequence[Hit]):
    """The hits of one ``find`` call, best first, with the trace of how they were found."""

    def __init__(self, hits: list[Hit], trace: Trace, skill_warnings: list[SkillWarning] | None = None) -> None:
        self.hits = hits
        self.trace = trace
        #: one per skill among the hits whose health is below ``lifecycle.skill_health_threshold``
        #: or that names a drifted entity (docs/skills.md)
        self.skill_warnings: list[SkillWarning] = skill_warnings or []

    @property
    def degrade_reason(self) -> str | None:
        return self.trace.degrade_reason

    @overload
    def __getitem__(self, index: int) -> Hit: ...
    @overload
    def __getitem__(self, index: slice) -> list[Hit]: ...
    def __getitem__(self, index: int | slice) -> Hit | list[Hit]:
        return self.hits[index]

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __repr__(self) -> str:
        return f"FindResult({len(self.hits)} hits, degrade_reason={self.degrade_reason!r})"


@dataclass
class Outcome:
    """What happened after a session's retrievals, and how it moved each entry's confidence.

    ``effects`` holds one dict per entry: ``entry_id``, ``success`` / ``failure`` (the counts it
    added), ``confidence_before`` / ``confidence_after``."""

    id: str
    session_id: str | None
    scope: Scope
    outcome_type: str
    value: float
    weight: float = 1.0
    actor: str | None = None
    trace_ids: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    effects: list[dict[str, Any]] = field(default_factory=list)
    created_at: datetime | None = None
    reverted_at: datetime | None = None

    @property
    def entry_ids(self) -> list[str]:
        return [e["entry_id"] for e in self.effects]


@dataclass
class Zone:
    """A scope (optionally one key prefix or category of it) whose writes need a person's approval."""

    id: str
    scope: Scope
    key_prefix: str | None = None
    category: str | None = None
    actor: str | None = None
    created_at: datetime | None = None


@dataclass
class Proposal:
    """A write waiting for a person: add a memory, change one's text, or delete one.

    ``text`` is the proposed text (``None`` for a delete), ``current_text`` the entry's text when it
    was proposed; ``diff`` shows one against the other."""

    id: str
    status: str
    op: str
    scope: Scope
    text: str | None = None
    entry_id: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    current_text: str | None = None
    proposer: str | None = None
    source: str | None = None
    reason: str | None = None
    zone_id: str | None = None
    created_at: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    decision_reason: str | None = None
    result_entry_id: str | None = None

    @property
    def diff(self) -> str:
        """A unified diff of the current value against the proposed one (empty lines for none)."""
        import difflib

        old = (self.current_text or "").splitlines()
        new = (self.text or "").splitlines()
        return "\n".join(difflib.unified_diff(old, new, "current", "proposed", lineterm=""))
