"""The audit log replayed into another database: it rebuilds the governed state (docs/governance.md).

Every audit row has a sequence number that only grows. Rows of an entry's change keep the row as
the change left it (``state``), so replaying them in order rebuilds each entry exactly; policy,
outcome, zone and proposal rows keep their whole record; skill rows name the version they made,
promoted or verified. Reads and denials change nothing and are
passed over; so are conflict resolutions, whose effect on the entries (the side superseded) has
rows of its own. Vectors and entity links are derived: the caller re-derives them afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..errors import IncompleteAuditLog, InvalidArgument
from ..records import Scope
from ..store.base import parse_iso
from ..store.protocol import GovernanceStore, Maintenance, PortableStore, SkillStore

__all__ = ["ENTRY_KINDS", "ReplaySource", "ReplayTarget", "check_complete", "replay_log"]

#: audit kinds whose rows keep an entry's state
ENTRY_KINDS = frozenset({"write", "update", "supersede", "archive", "restore"})
# kinds that change nothing a replay rebuilds
_PASSED = frozenset({"read", "denied", "resolve"})
_PAGE = 500


class ReplaySource(Maintenance, PortableStore, Protocol):
    """What a replay reads: the log (``audit_log``) and the file's marks (``meta``)."""


class ReplayTarget(GovernanceStore, PortableStore, SkillStore, Protocol):
    """What a replay writes: entries back from their state, policies, outcomes, zones, proposals, skill versions."""


def check_complete(source: ReplaySource, from_sequence: int) -> None:
    """``IncompleteAuditLog`` when the log cannot rebuild the state from ``from_sequence`` on."""
    meta = source.meta()
    first = source.audit_log(from_sequence, 1)
    if meta.get("audit_was_off") == "1" and from_sequence == 0:
        raise IncompleteAuditLog("The audit log was switched off at some time (lifecycle.audit = false): changes "
                                 "made then are not in it, so a replay cannot rebuild this database - export and "
                                 "import it instead (agentbase export / import)", reason="audit_off")
    if meta.get("audit_pruned") == "1" and (not first or first[0]["seq"] > from_sequence + 1):
        raise IncompleteAuditLog("The audit log was pruned to lifecycle.audit_max_rows: its oldest rows are gone, "
                                 "so a replay from sequence "
                                 f"{from_sequence} cannot rebuild this database - raise audit_max_rows, or export "
                                 "and import instead", reason="pruned")


def _scope(ids: Any) -> Scope:
    return Scope(*ids) if isinstance(ids, (tuple, list)) else Scope(**(ids or {}))


def _apply(target: ReplayTarget, row: dict[str, Any]) -> bool:
    """Apply one audit row to ``target``; ``False`` when the row changes nothing a replay rebuilds."""
    kind, detail = row["kind"], row["detail"] or {}
    if kind in ENTRY_KINDS:
        if row["state"] is None:
            raise IncompleteAuditLog(f"Audit row {row['seq']} ({kind}) was written before audit rows kept the entry's "
                                     "state (an older agentbase): replay cannot rebuild it - export and import "
                                     "instead", reason="no_state")
        target.replay_entry(row["state"])
    elif kind == "delete":
        for entry_id in row["entry_ids"]:
            target.replay_delete(entry_id, actor=row["actor"])
    elif kind == "policy":
        scope = _scope(row["scope"])
        if detail.get("op") == "grant":
            target.set_policy(detail["agent"], scope, read=bool(detail["read"]), write=bool(detail["write"]))
        else:
            target.delete_policy(detail["agent"], scope)
    elif kind == "outcome":
        outcome = dict(detail["outcome"])
        outcome["scope"] = _scope(outcome.get("scope"))
        target.save_outcome(outcome, detail["effects"])
    elif kind == "outcome_revert":
        target.revert_outcome(detail["outcome_id"], detail["at"], detail["changes"], actor=row["actor"])
    elif kind == "zone":
        if detail.get("op") == "protect":
            zone = dict(detail["zone"])
            zone["scope"] = Scope(*(zone.pop(k, None) for k in ("user_id", "agent_id", "project_id", "session_id")))
            target.set_zone(zone)
        else:
            target.delete_zone(detail["zone_id"], actor=row["actor"])
    elif kind == "proposal":
        proposal = dict(detail["proposal"])
        proposal["scope"] = Scope(*(proposal.pop(k, None) for k in ("user_id", "agent_id", "project_id",
                                                                     "session_id")))
        target.save_proposal(proposal, kind=detail.get("op", "propose"), actor=row["actor"])
    elif kind == "skill":
        _skill(target, row)
    else:
        return False
    return True


def _skill(target: ReplayTarget, row: dict[str, Any]) -> None:
    """A skill version named, promoted or verified (``kernel.skills``); its entry has rows of its own."""
    detail, scope, entry_id = row["detail"] or {}, _scope(row["scope"]), row["entry_ids"][0]
    op = detail.get("op")
    if op in ("add", "update"):
        created = parse_iso(detail.get("created_at")) or row["at"]
        target.add_skill_version(entry_id, scope, detail["name"], int(detail["version"]),
                                 authored_by=detail.get("authored_by", row["actor"]),
                                 status="current" if op == "add" else "candidate", created_at=created)
    elif op == "promote":
        for version in target.skill_versions(scope, name=detail["name"], exact=True):
            if version["status"] == "current" and version["entry_id"] != entry_id:
                target.set_skill_version(version["entry_id"], status="retired")
        target.set_skill_version(entry_id, status="current")
    elif op == "verify":
        target.set_skill_version(entry_id, verified_at=row["at"])


def replay_log(source: ReplaySource, target: ReplayTarget, *, from_sequence: int = 0,
               progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Apply ``source``'s audit rows after ``from_sequence`` to ``target``, in order, in one transaction.

    Returns ``{"applied": n, "passed": n, "last_sequence": seq, "by_kind": {kind: n}}``.
    """
    if not isinstance(from_sequence, int) or isinstance(from_sequence, bool) or from_sequence < 0:
        raise InvalidArgument(f"from_sequence must be an int >= 0, got {from_sequence!r}", param="from_sequence")
    check_complete(source, from_sequence)
    summary: dict[str, Any] = {"applied": 0, "passed": 0, "last_sequence": from_sequence, "by_kind": {}}
    seq = from_sequence
    with target.transaction():
        while True:
            page = source.audit_log(seq, _PAGE)
            for row in page:
                if row["kind"] in _PASSED or not _apply(target, row):
                    summary["passed"] += 1
                else:
                    summary["applied"] += 1
                    summary["by_kind"][row["kind"]] = summary["by_kind"].get(row["kind"], 0) + 1
                seq = row["seq"]
            if progress is not None:
                progress(summary["applied"] + summary["passed"], summary["applied"] + summary["passed"])
            if len(page) < _PAGE:
                break
    summary["last_sequence"] = seq
    return summary
