"""The audit log's public record and its argument checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import InvalidArgument
from ..records import Scope

__all__ = ["AUDIT_KINDS", "AuditEvent", "check_kinds"]

#: what the log records: entry writes (ingest, import), updates, supersessions, deletes, archivals
#: and restores (capacity, consolidation, ``archive`` / ``restore``), reads (``lifecycle.audit_reads``),
#: permission denials, policy changes, conflict resolutions and skill changes (add, update, promote, verify);
#: outcomes (and their reverts), approval zones and proposals (propose, approve, reject)
AUDIT_KINDS = ("write", "update", "supersede", "delete", "archive", "restore", "read", "denied", "policy", "resolve",
               "skill", "outcome", "outcome_revert", "zone", "proposal")


@dataclass
class AuditEvent:
    """One audited change (or read) of entries, as ``Kernel.audit`` returns it."""

    seq: int
    at: datetime
    kind: str
    actor: str | None
    scope: Scope
    entry_ids: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


def check_kinds(kinds: Any) -> list[str] | None:
    if kinds is None:
        return None
    names: list[str] = [kinds] if isinstance(kinds, str) else list(kinds)
    unknown = [k for k in names if k not in AUDIT_KINDS]
    if unknown:
        raise InvalidArgument(f"Unknown audit kinds {unknown!r}; known: {list(AUDIT_KINDS)}")
    return names
