"""Memory lifecycle (issue 22): reinforcement, audit, per-turn prefetch. See docs/lifecycle.md."""

from .audit import AUDIT_KINDS, AuditEvent
from .prefetch import Prefetch
from .reinforce import Reinforcer

__all__ = ["AUDIT_KINDS", "AuditEvent", "Prefetch", "Reinforcer"]
