"""Conflicts: two current facts about one subject that the rules cannot order.

Ingest supersedes an older fact by a newer one on the same subject (``subject_key``, e.g. where
the user lives). That is right when the newer fact is later and at least as trustworthy. When it
is not clear, both are kept, flagged and listed until someone settles it (``Kernel.resolve``):

- ``same_time``: both say they hold from the same moment - neither is newer (within one session
  the turn order decides: "seq orders turns; timestamps never do");
- ``lower_trust``: the newer one is less trusted than the one it would replace (a tool's output
  overriding what the user said);
- ``different_writers``: two agents wrote into the same scope and disagree - a newer write by
  another agent is not evidence that the first was wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..records import Entry, Scope

__all__ = ["CONFLICT_REASONS", "Conflict", "conflict_reason"]

CONFLICT_REASONS = ("same_time", "lower_trust", "different_writers")


@dataclass
class Conflict:
    """Two entries of one scope that contradict each other (``Kernel.conflicts``).

    ``status``: ``open`` (both current), ``resolved`` (``kept`` won, by ``actor``) or ``superseded``
    (a later fact replaced a side before anyone resolved it).
    """

    id: str
    status: str
    reason: str
    scope: Scope
    entry_ids: list[str]
    texts: list[str] = field(default_factory=list)
    subject_key: str | None = None
    kept: str | None = None
    actor: str | None = None
    created_at: datetime | None = None
    resolved_at: datetime | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Conflict:
        return cls(**row)


def _since(entry: Entry) -> datetime | None:
    return entry.valid_from or entry.created_at


def conflict_reason(old: Entry, new: Entry) -> str | None:
    """Why ``new`` may not simply supersede ``old`` (``None``: it may)."""
    if old.l2_full == new.l2_full:
        return None
    same_session = old.session_id is not None and old.session_id == new.session_id
    if _since(old) is not None and _since(old) == _since(new) and not same_session:
        return "same_time"
    if new.trust < old.trust:
        return "lower_trust"
    if old.written_by and new.written_by and old.written_by != new.written_by:
        return "different_writers"
    return None
