"""``kernel.governance``: who may read and write which scope, what contradicts what, and the
audit log - one part of the kernel facade (docs/lifecycle.md). ``Kernel.grant`` / ``conflicts`` ...
are these methods under the same names.

Usage::

    kernel.governance.grant("bot-a", project_id="p1", read=True, write=True)
    for conflict in kernel.governance.conflicts(user_id="alice"):
        kernel.governance.resolve(conflict.id, keep=conflict.entry_ids[1])
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import arguments as check
from .errors import InvalidArgument, ScopeError
from .lifecycle.audit import AuditEvent, check_kinds
from .records import Scope
from .rules.conflicts import Conflict
from .rules.permissions import Policy, policy_of
from .threads import in_thread

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["AsyncGovernance", "Governance"]


class Governance:
    """Policies, conflicts and the audit log of one kernel's file (a view's agent is the one
    judged). ``kernel.governance``."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    def grant(self, agent: str, *, user_id: str | None = None, agent_id: str | None = None,
              project_id: str | None = None, session_id: str | None = None, read: bool = True,
              write: bool = False) -> Policy:
        """Let ``agent`` read (and/or write) the scope; the scope becomes protected, so agents
        without a grant on it lose access. Replaces ``agent``'s earlier policy on the same scope.

        Usage::

            kernel.governance.grant("bot-a", project_id="p1", read=True, write=True)
            kernel.governance.grant("bot-b", project_id="p1", read=True)        # b may read, not write

        Raises:
            PermissionDenied: called by a kernel acting as an agent (only the owner manages policies).
            ScopeError: no scope keyword given.
        """
        scope = self._policy_scope("grant", user_id, agent_id, project_id, session_id)
        grantee = check.check_id("agent", agent)
        if grantee is None:
            raise InvalidArgument("grant needs the agent id it applies to", param="agent")
        if not isinstance(read, bool) or not isinstance(write, bool):
            raise InvalidArgument("read and write must be bools")
        store = self._kernel._ready()
        store.set_policy(grantee, scope, read=read, write=write)
        if self._kernel.config.lifecycle.audit:
            store.append_audit("policy", actor=self._kernel.agent, scope=scope,
                               detail={"op": "grant", "agent": grantee, "read": read, "write": write})
        return next(p for p in self.policies(agent=grantee) if p.scope == scope)

    def revoke(self, agent: str, *, user_id: str | None = None, agent_id: str | None = None,
               project_id: str | None = None, session_id: str | None = None) -> bool:
        """Remove ``agent``'s policy on exactly this scope; ``False`` if it had none. A scope whose
        last policy goes is open again."""
        scope = self._policy_scope("revoke", user_id, agent_id, project_id, session_id)
        agent = check.check_id("agent", agent) or ""
        store = self._kernel._ready()
        removed = store.delete_policy(agent, scope)
        if removed and self._kernel.config.lifecycle.audit:
            store.append_audit("policy", actor=self._kernel.agent, scope=scope, detail={"op": "revoke", "agent": agent})
        return removed

    def policies(self, *, agent: str | None = None, user_id: str | None = None, agent_id: str | None = None,
                 project_id: str | None = None, session_id: str | None = None) -> builtins.list[Policy]:
        """The scope policies in the file: ``agent``'s only, if given; each given scope id must equal
        the policy scope's."""
        agent = check.check_id("agent", agent)
        wanted = check.scope_of(user_id, agent_id, project_id, session_id).as_dict()
        return [policy_of(r) for r in self._kernel._ready().policies() if (agent is None or r["agent"] == agent)
                and all(getattr(r["scope"], k) == v for k, v in wanted.items())]

    def _policy_scope(self, operation: str, *ids: str | None) -> Scope:
        scope = check.scope_of(*ids)
        if self._kernel.agent is not None:
            self._kernel._gate.deny("write", scope, operation, None)
        if scope.is_empty:
            raise ScopeError(f"{operation} needs at least one of user_id, agent_id, project_id, session_id")
        return scope

    def conflicts(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                  session_id: str | None = None, include_closed: bool = False) -> builtins.list[Conflict]:
        """Contradicting facts of a scope kept side by side, oldest first: open ones (both still
        current), or every one with ``include_closed``. Each given scope id must match."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        hidden = self._kernel._gate.check("read", scope, "conflicts")
        rows = self._kernel._ready().list_conflicts(scope, include_closed=bool(include_closed))
        return [Conflict.from_row(r) for r in rows
                if not any(all(getattr(r["scope"], f) == v for f, v in p.as_dict().items()) for p in hidden)]

    def resolve(self, conflict_id: str, *, keep: str, user_id: str | None = None, agent_id: str | None = None,
                project_id: str | None = None, session_id: str | None = None, actor: str | None = None) -> Conflict:
        """Settle a conflict: ``keep`` stays current, the other entry is superseded by it (its
        ``history`` gets a ``RESOLVE`` event saying why). Scope keywords, if given, must match.

        Raises:
            InvalidArgument: unknown or already closed conflict, or ``keep`` not one of its entries.
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        conflict_id = check.check_id("conflict_id", conflict_id) or ""
        keep = check.entry_id(keep)
        store = self._kernel._ready()
        found = store.list_conflicts(scope, include_closed=True, conflict_id=conflict_id)
        if not found:
            raise InvalidArgument(f"No conflict with id {conflict_id!r} in this scope", param="conflict_id")
        if self._kernel.agent is not None:
            self._kernel._gate.check("write", found[0]["scope"], "resolve", exact=True, entry_ids=found[0]["entry_ids"])
        with store.transaction():
            row = store.resolve_conflict(conflict_id, keep, actor=actor or self._kernel.agent)
            if self._kernel.config.lifecycle.audit:
                store.append_audit("resolve", actor=actor or self._kernel.agent, scope=row["scope"], entry_ids=row["entry_ids"],
                                   detail={"conflict_id": conflict_id, "kept": keep, "reason": row["reason"]})
        return Conflict.from_row(row)

    def audit(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
              session_id: str | None = None, since: datetime | None = None, until: datetime | None = None,
              kinds: Sequence[str] | str | None = None, limit: int | None = 100) -> builtins.list[AuditEvent]:
        """The audit log of a scope, newest first: who wrote, updated, superseded, deleted (and, with
        ``lifecycle.audit_reads``, read) which entries, and when.

        Each given scope id must match the row's. Write rows are made by the change's own transaction
        (a rolled-back write leaves none); read rows are written with the reinforcement flush.
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        hidden = self._kernel._gate.check("read", scope, "audit")
        size = check.limit(limit)
        rows = self._kernel._ready().audit_rows(scope, since=check.when(since, "since"), until=check.when(until, "until"),
                                        kinds=check_kinds(kinds), limit=None if hidden else size)
        if hidden:  # rows of scopes this agent may not read are left out
            rows = [r for r in rows if not any(all(getattr(r["scope"], f) == v for f, v in p.as_dict().items())
                                               for p in hidden)][:size]
        return [AuditEvent(**row) for row in rows]

    def audit_replay(self, target: Kernel | str | os.PathLike[str], *, from_sequence: int = 0,
                     progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Replay this database's audit log, in sequence order, into ``target`` (a kernel, or a path or
        ``postgresql://`` URL opened with this kernel's embedder): it rebuilds the governed state -
        entries as each change left them, deletions, policies, outcomes and confidence, approval zones
        and proposals - then the target's full-text index and vectors. ``from_sequence=0`` needs an
        empty target; a later sequence continues a replay that stopped there (``last_sequence``).

        Returns ``{"applied", "passed", "last_sequence", "by_kind"}``.

        Raises:
            IncompleteAuditLog: the log was pruned (``lifecycle.audit_max_rows``), switched off, or
                holds rows from before replay was possible.
            InvalidArgument: a bad ``from_sequence``, or a non-empty target for ``from_sequence=0``.
            PermissionDenied: called by an agent (the log covers every scope).
        """
        from .kernel import Kernel
        from .lifecycle.replay import replay_log

        k = self._kernel
        k._gate.check("read", Scope(), "audit_replay", whole=True)
        if isinstance(target, Kernel):
            opened, own = target, False
        else:
            opened, own = Kernel(target, embedder=k.embedder, ner=k._ner_spec, config=k.config), True
        try:
            store = opened._ready()
            if store is k._ready():
                raise InvalidArgument("audit_replay needs another database than the one replayed", param="target")
            if from_sequence == 0 and (store.stats()["entries"] or store.zones() or store.policies()
                                       or store.list_proposals(Scope(), limit=1)):
                raise InvalidArgument("audit_replay from sequence 0 needs an empty target database", param="target")
            summary = replay_log(k._ready(), store, from_sequence=from_sequence, progress=progress)
            opened.rebuild()
            return summary
        finally:
            if own:
                opened.close()


class AsyncGovernance:
    """``Governance`` for async code: each method runs in a worker thread (``db.governance``)."""

    def __init__(self, governance: Governance) -> None:
        self._sync = governance

    grant = in_thread(Governance.grant)
    revoke = in_thread(Governance.revoke)
    policies = in_thread(Governance.policies)
    conflicts = in_thread(Governance.conflicts)
    resolve = in_thread(Governance.resolve)
    audit = in_thread(Governance.audit)
    audit_replay = in_thread(Governance.audit_replay)
