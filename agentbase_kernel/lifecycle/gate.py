"""The gate: the scope policies (``rules/permissions.py``) enforced for one acting agent.

Each check reads the store's policy table and judges the call by ``rules.permissions.judge``;
a denial is audited (kind ``denied``) and raised as ``PermissionDenied``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..records import Scope
from ..rules.permissions import Verdict, Verdicts, judge, policy_of
from ..store.protocol import GovernanceStore

__all__ = ["Gate"]


class Gate:
    """Enforces the file's policies for one acting agent (``None``: the owner, never restricted).

    Each check reads the policy table (one indexed read of a small table), so a grant or revoke
    by any process applies to the next call everywhere. Denials are audited (kind ``denied``).
    """

    def __init__(self, store: GovernanceStore, agent: str | None, *, audit: bool, queue: Any = None,
                 verdicts: Verdicts | None = None) -> None:
        self.store = store
        self.agent = agent
        self.audit = audit
        self.verdicts = verdicts
        self.queue = queue  # the Reinforcer: writes audit rows once a caller's transaction is over

    def check(self, access: str, scope: Scope, operation: str, *, exact: bool = False, whole: bool = False,
              entry_ids: Sequence[str] = ()) -> tuple[Scope, ...]:
        """The patterns to leave out of this call; ``PermissionDenied`` when it may not run at all.

        ``whole``: the call cannot leave rows out (an export, a reset), so any pattern it would
        reach without access denies it.
        """
        if self.agent is None:
            return ()
        rows = self.store.policies()
        if not rows:
            return ()
        agent = self.agent

        def compute() -> Verdict:
            return judge([policy_of(r) for r in rows], agent, scope, access, exact=exact)

        verdict = (self.verdicts.get(rows, (agent, scope, access, exact), compute) if self.verdicts is not None
                   else compute())
        denied = verdict.denied_by or (verdict.excluded[0] if whole and verdict.excluded else None)
        if denied is not None:
            self.deny(access, scope, operation, denied, entry_ids)
        return verdict.excluded

    def deny(self, access: str, scope: Scope, operation: str, pattern: Scope | None,
             entry_ids: Sequence[str] = ()) -> None:
        """Audit the denial, then raise ``PermissionDenied``."""
        from ..errors import PermissionDenied

        where = ", ".join(f"{k}={v!r}" for k, v in (pattern or scope).as_dict().items()) or "the whole file"
        if self.audit:
            row: dict[str, Any] = {
                "actor": self.agent, "scope": scope, "entry_ids": list(entry_ids),
                "detail": {"operation": operation, "access": access, "policy_scope": (pattern or Scope()).as_dict()}}
            if self.queue is not None and self.store.in_transaction:
                # the PermissionDenied will roll the caller's transaction back, and a row written in it
                self.queue.queue_audit("denied", **row)
            else:
                self.store.append_audit("denied", **row)
        raise PermissionDenied(f"Agent {self.agent!r} may not {access} {where} ({operation})", agent=self.agent,
                               access=access, scope=(pattern or scope).as_dict(), operation=operation)
