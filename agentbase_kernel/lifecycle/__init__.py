"""The memory lifecycle, as services above the store and below the kernel (docs/lifecycle.md).

Reinforcement (``reinforce``), the audit log's records (``audit``), per-turn prefetch
(``prefetch``), capacity (``capacity``), consolidation and its schedule (``consolidate``,
``schedule``), the permission gate (``gate``) and the composite rank hook (``composite``). Each is
handed the store role or the callable it uses; none imports the kernel. The pure rules they apply
are in ``rules/``.
"""

from .audit import AUDIT_KINDS, AuditEvent
from .prefetch import Prefetch
from .reinforce import Reinforcer

__all__ = ["AUDIT_KINDS", "AuditEvent", "Prefetch", "Reinforcer"]
