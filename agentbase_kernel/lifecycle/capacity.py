"""Capacity: a scope keeps at most N live entries; the ones it least wants to keep are archived.

A scope here is one exact combination of ids (``user_id``, ``agent_id``, ``project_id``,
``session_id``), the unit dedup and supersession use. Its capacity is the one set for it
(``Kernel.set_capacity``), else ``lifecycle.max_items_per_scope``; 0 is no limit. After each write
the kernel calls ``enforce`` for the scopes it wrote to: a cheap count first, then - only when over
- one write transaction that counts again and archives the lowest ``keep_score`` entries (oldest
first among equals). Because that count runs under the file's write lock, writers in several
threads or processes never leave a scope above its capacity once their writes have returned.
"""

from __future__ import annotations

from collections.abc import Collection

from ..records import Scope
from ..rules.rank import keep_score
from ..store.base import utcnow
from ..store.protocol import RetentionStore

__all__ = ["effective_capacity", "enforce"]


def effective_capacity(store: RetentionStore, scope: Scope, default: int) -> int:
    """The scope's own capacity, else ``default``; 0 means no limit."""
    own = store.scope_capacity(scope)
    return default if own is None else own


def enforce(store: RetentionStore, scope: Scope, *, default: int, half_life_days: float,
            protect: Collection[str] = (), actor: str | None = None) -> list[str]:
    """Archive what exceeds the scope's capacity; returns the archived ids. ``protect`` ids (what
    the write just stored, an entry just restored) go last: only when the others do not suffice."""
    cap = effective_capacity(store, scope, default)
    if cap <= 0 or store.scope_size(scope) <= cap:
        return []
    with store.transaction():
        cap = effective_capacity(store, scope, default)
        entries = store.scope_entries(scope)
        excess = len(entries) - cap
        if cap <= 0 or excess <= 0:
            return []
        now = utcnow()
        # stable sorts: oldest first among equals
        ranked = sorted(entries, key=lambda e: (e.id in protect, keep_score(e, now, half_life_days)))
        return store.archive_entries([e.id for e in ranked[:excess]], reason="capacity", actor=actor)
