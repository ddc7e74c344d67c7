"""``kernel.proposals``: approval zones, and the proposals agents' writes there become (the rule:
``rules/zones.py``; docs/governance.md). ``Kernel.protect`` / ``propose`` / ``approve`` ... are these
methods under the same names.

Usage::

    kernel.protect(project_id="handbook")                        # writes there need a person
    bot = kernel.view(agent="bot")
    result = bot.add_memory("Deploys run on Fridays", project_id="handbook")   # event "PROPOSED"
    kernel.approve(result.proposal_id, reviewer="dana")          # now an entry, origin human_approved
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from . import arguments as check
from .errors import InvalidArgument, PermissionDenied, ScopeError
from .records import AddResult, Entry, Proposal, Scope, Zone
from .rules.trust import Writer, writing_as
from .rules.zones import HUMAN_ORIGINS, HUMAN_SOURCES, is_human_approved, zone_for
from .store.base import EntryFilter, utcnow
from .threads import in_thread

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["PROPOSAL_STATUSES", "AsyncProposals", "Proposals", "describe_zone"]

PROPOSAL_STATUSES = ("pending", "approved", "rejected")
#: what an approved write is stamped with (``Entry.source``): its origin
APPROVED = "human_approved"
# the fields of a proposed memory that approval passes to ingest
_ITEM_FIELDS = ("category", "tags", "metadata", "role", "actor", "context_type", "expires_at", "importance",
                "entry_id", "speaker", "infer")


def _zone(row: dict[str, Any]) -> Zone:
    return Zone(id=row["id"], scope=row["scope"], key_prefix=row.get("key_prefix"), category=row.get("category"),
                actor=row.get("actor"), created_at=row.get("created_at"))


def _proposal(row: dict[str, Any]) -> Proposal:
    fields: dict[str, Any] = {k: row.get(k) for k in (
        "id", "status", "op", "scope", "text", "entry_id", "fields", "current_text", "proposer", "source", "reason",
        "zone_id", "created_at", "decided_at", "decided_by", "decision_reason", "result_entry_id")}
    fields["fields"] = fields["fields"] or {}
    return Proposal(**fields)


def describe_zone(zone: Zone) -> str:
    """A zone as an error message names it: ``zone_... (user_id='u', category='policy')``."""
    parts = [f"{k}={v!r}" for k, v in zone.scope.as_dict().items()]
    parts += [f"{k}={v!r}" for k, v in (("key_prefix", zone.key_prefix), ("category", zone.category)) if v is not None]
    return f"{zone.id} ({', '.join(parts)})"


def _holds(zones: builtins.list[dict[str, Any]], entry: Entry) -> tuple[bool, dict[str, Any] | None]:
    """Whether an agent's change of ``entry`` needs a person (it is in a zone, or human-approved),
    and the zone that holds it."""
    zone = zone_for(zones, {**entry.scope.as_dict(), "category": entry.category, "metadata": entry.metadata,
                            "entry_id": entry.id})
    return zone is not None or is_human_approved(entry), zone


def _may_cover(zone_scope: Scope, scope: Scope) -> bool:
    """A zone of ``zone_scope`` may hold entries of ``scope``: no id set in both differs."""
    here = scope.as_dict()
    return all(here.get(k, v) == v for k, v in zone_scope.as_dict().items())


def _plain(value: Any) -> Any:
    """A proposed field as JSON keeps it (times as ISO text)."""
    return value.isoformat() if hasattr(value, "isoformat") else value


class Proposals:
    """Approval zones and proposals on one kernel's database (``kernel.proposals``)."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    # -- who is writing --------------------------------------------------------------------------
    @property
    def _human(self) -> bool:
        """Writes by this kernel land in a zone: a person's path (CLI, dashboard, ``source="human"``)."""
        k = self._kernel
        return k.agent is None and k.source in HUMAN_SOURCES

    def _reviewer(self, operation: str) -> None:
        k = self._kernel
        if k.agent is not None or k.source not in HUMAN_SOURCES | {"kernel"}:
            who = f"agent {k.agent!r}" if k.agent is not None else f"the {k.source!r} path"
            raise PermissionDenied(f"{operation} is a person's decision: {who} may propose, not {operation} - "
                                   "use the CLI (agentbase proposals), the dashboard or the owner's kernel")

    # -- zones -----------------------------------------------------------------------------------
    def protect(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                session_id: str | None = None, key_prefix: str | None = None, category: str | None = None,
                actor: str | None = None) -> Zone:
        """Mark a scope (narrowed to a ``key_prefix`` of ``metadata["key"]`` / ``entry_id``, or a
        ``category``, if given) as human-approved: agents' writes there become proposals.

        Raises:
            ScopeError: no scope keyword given.
            PermissionDenied: called by an agent (only the owner marks zones).
        """
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        if scope.is_empty:
            raise ScopeError("protect needs at least one of user_id, agent_id, project_id, session_id")
        self._reviewer("protect")
        key_prefix = check.optional_str(key_prefix, "key_prefix")
        category = check.optional_str(category, "category")
        for zone in self.zones():
            if zone.scope == scope and zone.key_prefix == key_prefix and zone.category == category:
                return zone
        row = {"id": f"zone_{uuid.uuid4().hex}", "scope": scope, "key_prefix": key_prefix, "category": category,
               "actor": actor, "created_at": utcnow()}
        self._kernel._ready().set_zone(row)
        return _zone(row)

    def unprotect(self, zone_id: str, *, actor: str | None = None) -> bool:
        """Remove a zone (``False`` if there was none); its pending proposals stay to be decided."""
        self._reviewer("unprotect")
        return self._kernel._ready().delete_zone(check.check_id("zone_id", zone_id) or "", actor=actor)

    def zones(self) -> builtins.list[Zone]:
        """Every approval zone, oldest first."""
        return [_zone(r) for r in self._kernel._ready().zones()]

    # -- the write path ----------------------------------------------------------------------------
    def intercept(self, items: builtins.list[dict[str, Any]]) -> dict[int, AddResult]:
        """The writes among ``items`` (checked memory items) that a zone turns into proposals: their
        index -> the ``PROPOSED`` result. A person's writes are never intercepted."""
        if self._human:
            return {}
        zones = self._kernel._ready().zones()
        out: dict[int, AddResult] = {}
        for n, item in enumerate(items):
            zone = zone_for(zones, item)
            if zone is None:
                continue
            proposal = self._store(op="add", scope=Scope(item.get("user_id"), item.get("agent_id"),
                                                         item.get("project_id"), item.get("session_id")),
                                   text=item["text"], entry_id=None, current=None, zone_id=zone["id"],
                                   fields={k: _plain(item[k]) for k in _ITEM_FIELDS if item.get(k) not in (None, [], {})},
                                   reason=None, proposer=None)
            preview = Entry(id=proposal.id, l2_full=item["text"], l0_abstract=item["text"][:50],
                            l1_overview=item["text"][:300], scope=proposal.scope, category=item.get("category"),
                            tags=list(item.get("tags") or []), metadata=dict(item.get("metadata") or {}),
                            source=self._kernel.source, written_by=self._kernel.agent)
            out[n] = AddResult(entry=preview, event="PROPOSED", proposal_id=proposal.id)
        return out

    def guard(self, entry: Entry, op: str, *, text: str | None = None, fields: dict[str, Any] | None = None,
              actor: str | None = None) -> Proposal | None:
        """An agent's change (``update`` / ``delete``) of an entry in a zone, or of a human-approved
        entry: the proposal it becomes (``None``: the change may go ahead)."""
        if self._human:
            return None
        held, zone = _holds(self._kernel._ready().zones(), entry)
        if not held:
            return None
        return self._store(op=op, scope=entry.scope, text=text, entry_id=entry.id, current=entry.l2_full,
                           zone_id=zone["id"] if zone else None, fields=fields or {}, reason=None, proposer=actor)

    def guard_deletes(self, flt: EntryFilter, *, actor: str | None = None) -> builtins.list[Proposal]:
        """A bulk delete of the entries ``flt`` lets through (``delete_all``): each one ``guard``
        would hold (in a zone, or human-approved) is added to ``flt.exclude_ids``, so the delete
        leaves it, and gets a ``delete`` proposal unless one is already pending (a repeated bulk
        delete does not pile up the same request). Returns the new proposals. Call inside the
        delete's transaction.

        A person's kernel holds nothing, and with no zone that could cover the scope only the
        human-approved entries are read (one statement, usually empty): no per-entry work then."""
        if self._human:
            return []
        store = self._kernel._ready()
        zones = [z for z in store.zones() if _may_cover(z["scope"], flt.scope)]
        candidates = store.list_entries(flt if zones else replace(flt, sources=tuple(sorted(HUMAN_ORIGINS))),
                                        limit=None)
        held = []
        for entry in candidates:
            holds, zone = _holds(zones, entry)
            if holds:
                held.append((entry, zone))
        if not held:
            return []
        flt.exclude_ids = flt.exclude_ids | {entry.id for entry, _ in held}
        pending = {r["entry_id"] for r in store.list_proposals(flt.scope, status="pending", limit=None)
                   if r["op"] == "delete"}
        return [self._store(op="delete", scope=entry.scope, text=None, entry_id=entry.id, current=entry.l2_full,
                            zone_id=zone["id"] if zone else None, fields={}, reason=None, proposer=actor)
                for entry, zone in held if entry.id not in pending]

    def _store(self, *, op: str, scope: Scope, text: str | None, entry_id: str | None, current: str | None,
               zone_id: str | None, fields: dict[str, Any], reason: str | None, proposer: str | None) -> Proposal:
        k = self._kernel
        row = {"id": f"prop_{uuid.uuid4().hex}", "status": "pending", "op": op, "zone_id": zone_id, "scope": scope,
               "entry_id": entry_id, "text": text, "fields": fields, "current_text": current,
               "proposer": proposer or k.agent or k.source, "source": k.source, "reason": reason,
               "created_at": utcnow(), "decided_at": None, "decided_by": None, "decision_reason": None,
               "result_entry_id": None}
        k._ready().save_proposal(row, kind="propose")
        return _proposal(row)

    # -- proposals ---------------------------------------------------------------------------------
    def propose(self, text: str | None = None, *, user_id: str | None = None, agent_id: str | None = None,
                project_id: str | None = None, session_id: str | None = None, op: str = "add",
                entry_id: str | None = None, category: str | None = None, tags: Sequence[str] = (),
                metadata: dict[str, Any] | None = None, reason: str | None = None,
                proposer: str | None = None) -> Proposal:
        """Propose a write for a person to approve: ``add`` a memory (``text``), ``update`` an entry's
        text (``entry_id`` and ``text``) or ``delete`` one (``entry_id``). Works in any scope.

        Raises:
            InvalidArgument: a missing text or entry id, an unknown ``op``, an entry that does not exist.
            PermissionDenied: this kernel's agent may not write the scope.
        """
        k = self._kernel
        if op not in ("add", "update", "delete"):
            raise InvalidArgument(f"op must be 'add', 'update' or 'delete', got {op!r}", param="op")
        reason = check.optional_str(reason, "reason")
        proposer = check.optional_str(proposer, "proposer")
        if op == "add":
            item = check.memory_item(text, user_id=user_id, agent_id=agent_id, project_id=project_id,
                                     session_id=session_id, category=category, tags=tags, metadata=metadata)
            scope = check.scope_of(user_id, agent_id, project_id, session_id)
            k._check_items([item], "propose")
            zone = zone_for(k._ready().zones(), item)
            return self._store(op="add", scope=scope, text=item["text"], entry_id=None, current=None,
                               zone_id=zone["id"] if zone else None,
                               fields={f: _plain(item[f]) for f in _ITEM_FIELDS if item.get(f) not in (None, [], {})},
                               reason=reason, proposer=proposer)
        if entry_id is None:
            raise InvalidArgument(f"a proposal to {op} needs the entry_id", param="entry_id")
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        entry = k._ready().get_entry(check.entry_id(entry_id), scope)
        if k.agent is not None:
            k._check_entry("write", entry, "propose")
        new_text = None
        if op == "update":
            new_text = check.validate_text(text)
        elif text is not None:
            raise InvalidArgument("a proposal to delete takes no text", param="text")
        zone = zone_for(k._ready().zones(), {**entry.scope.as_dict(), "category": entry.category,
                                             "metadata": entry.metadata, "entry_id": entry.id})
        return self._store(op=op, scope=entry.scope, text=new_text, entry_id=entry.id, current=entry.l2_full,
                           zone_id=zone["id"] if zone else None, fields={}, reason=reason, proposer=proposer)

    def get_proposal(self, proposal_id: str) -> Proposal:
        """One proposal; ``InvalidArgument`` when there is none (or it is outside what this agent may read)."""
        k = self._kernel
        row = k._ready().get_proposal(check.check_id("proposal_id", proposal_id) or "")
        if k.agent is not None:
            k._gate.check("read", row["scope"], "get_proposal", exact=True)
        return _proposal(row)

    def list_proposals(self, *, user_id: str | None = None, agent_id: str | None = None,
                       project_id: str | None = None, session_id: str | None = None,
                       status: str | None = "pending", limit: int | None = 100,
                       offset: int = 0) -> builtins.list[Proposal]:
        """Proposals oldest first (``pending`` ones unless ``status`` says otherwise; ``None``: all).
        Each given scope id must match the proposal's."""
        if status is not None and status not in PROPOSAL_STATUSES:
            raise InvalidArgument(f"status must be one of {list(PROPOSAL_STATUSES)} or None, got {status!r}",
                                  param="status")
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        hidden = self._kernel._gate.check("read", scope, "list_proposals")
        rows = self._kernel._ready().list_proposals(scope, status=status, limit=check.limit(limit),
                                                    offset=check.limit(offset, "offset") or 0)
        return [_proposal(r) for r in rows
                if not any(all(getattr(r["scope"], f) == v for f, v in p.as_dict().items()) for p in hidden)]

    def _pending(self, proposal_id: str) -> dict[str, Any]:
        row = self._kernel._ready().get_proposal(check.check_id("proposal_id", proposal_id) or "")
        if row["status"] != "pending":
            raise InvalidArgument(f"Proposal {row['id']!r} was already {row['status']}", param="proposal_id")
        return row

    def approve(self, proposal_id: str, *, reviewer: str | None = None, reason: str | None = None) -> Proposal:
        """Carry a proposal out through the normal write path, as a person's: the entry gets origin
        (``source``) ``human_approved`` and trust 1.0. ``result_entry_id`` names the entry written.

        Raises:
            InvalidArgument: unknown or already decided proposal; an update or delete whose entry is gone.
            PermissionDenied: called by an agent, or through an agent's path (MCP, an adapter).
        """
        self._reviewer("approve")
        reviewer = check.optional_str(reviewer, "reviewer")
        reason = check.optional_str(reason, "reason")
        k = self._kernel
        store = k._ready()
        with store.transaction(), writing_as(Writer(APPROVED, None)):
            row = self._pending(proposal_id)
            result_id = self._carry_out(row, reviewer)
            row.update(status="approved", decided_at=utcnow(), decided_by=reviewer, decision_reason=reason,
                       result_entry_id=result_id)
            store.save_proposal(row, kind="approve", actor=reviewer)
        return _proposal(row)

    def _carry_out(self, row: dict[str, Any], reviewer: str | None) -> str | None:
        k = self._kernel
        store = k._ready()
        scope: Scope = row["scope"]
        if row["op"] == "add":
            fields = dict(row["fields"] or {})
            item = check.memory_item(row["text"], **scope.as_dict(), **fields, trust=1.0)
            result = k._wrote(k.ingestor.add_many([item]))[0]
            entry = result.entry
            if entry.source != APPROVED or entry.trust != 1.0:  # an exact duplicate was there: it is approved now
                store.update_entry(entry.id, Scope(), {"source": APPROVED, "trust": 1.0}, actor=reviewer)
            return entry.id
        current = store.get_entry(row["entry_id"])
        if row["op"] == "delete":
            store.delete_entry(current.id, Scope(), actor=reviewer)
            return current.id
        updated = k.ingestor.update(current, current.scope, {}, text=row["text"], actor=reviewer)
        store.update_entry(updated.id, Scope(), {"source": APPROVED, "trust": 1.0}, actor=reviewer)
        return updated.id

    def reject(self, proposal_id: str, *, reason: str, reviewer: str | None = None) -> Proposal:
        """Turn a proposal down, saying why; nothing is written.

        Raises:
            InvalidArgument: unknown or already decided proposal, or no reason.
            PermissionDenied: called by an agent, or through an agent's path.
        """
        self._reviewer("reject")
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidArgument("reject needs a reason (a non-empty str)", param="reason")
        reviewer = check.optional_str(reviewer, "reviewer")
        store = self._kernel._ready()
        with store.transaction():
            row = self._pending(proposal_id)
            row.update(status="rejected", decided_at=utcnow(), decided_by=reviewer, decision_reason=reason.strip())
            store.save_proposal(row, kind="reject", actor=reviewer)
        return _proposal(row)


class AsyncProposals:
    """``Proposals`` for async code: each method runs in a worker thread (``db.proposals``)."""

    def __init__(self, proposals: Proposals) -> None:
        self._sync = proposals

    protect = in_thread(Proposals.protect)
    unprotect = in_thread(Proposals.unprotect)
    zones = in_thread(Proposals.zones)
    propose = in_thread(Proposals.propose)
    get_proposal = in_thread(Proposals.get_proposal)
    list_proposals = in_thread(Proposals.list_proposals)
    approve = in_thread(Proposals.approve)
    reject = in_thread(Proposals.reject)
