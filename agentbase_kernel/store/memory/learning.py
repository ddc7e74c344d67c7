"""Outcomes and confidence, approval zones and proposals, and the audit log's replay, in memory
(the SQL core's ``outcomes.py``, ``zones.py`` and ``replay.py``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...errors import InvalidArgument
from ...records import Scope
from ..base import iso, parse_iso
from ..rows import ENTRY_FIELDS, complete_import_entry, export_time
from ..sql.outcomes import confidence_buckets
from .portable import PortableMixin

__all__ = ["LearningMixin"]


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return iso(value) if isinstance(value, datetime) else export_time(value, "time")


def _scoped(scope: Scope, wanted: dict[str, str]) -> bool:
    return all(getattr(scope, k) == v for k, v in wanted.items())


class LearningMixin(PortableMixin):
    """``outcomes``, ``outcome_effects``, ``entry_confidence``, ``approval_zones``, ``proposals``."""

    # -- outcomes --------------------------------------------------------------------------------
    def confidence_counts(self, entry_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        with self._lock:
            t = self.tables
            return {i: {"confidence": float(t.entries[i]["confidence"]), "counts": t.confidence.get(i)}
                    for i in dict.fromkeys(entry_ids) if i in t.entries}

    def _set_confidence(self, changes: Sequence[dict[str, Any]]) -> None:
        for c in changes:
            if c["entry_id"] not in self.tables.entries:
                continue
            self.tables.confidence[c["entry_id"]] = (c["alpha"], c["beta"], c["confidence"])
            if self.tables.entries[c["entry_id"]]["confidence"] != c["confidence"]:
                self._change(c["entry_id"], confidence=c["confidence"])

    def save_outcome(self, outcome: dict[str, Any], effects: Sequence[dict[str, Any]]) -> None:
        with self._lock:
            scope: Scope = outcome["scope"]
            row = {**copy.deepcopy({k: v for k, v in outcome.items() if k != "scope"}), "scope": scope,
                   "created_at": _iso(outcome["created_at"]), "reverted_at": _iso(outcome.get("reverted_at"))}
            self.tables.outcomes[outcome["id"]] = row
            for e in effects:
                if e["entry_id"] in self.tables.entries:
                    self.tables.effects[(outcome["id"], e["entry_id"])] = {
                        k: e[k] for k in ("entry_id", "success", "failure", "confidence_before", "confidence_after")}
            self._set_confidence([{"entry_id": e["entry_id"], "alpha": e["alpha"], "beta": e["beta"],
                                   "confidence": e["confidence_after"]} for e in effects])
            if self._audit_on():
                record = {**{k: v for k, v in row.items() if k != "scope"}, "scope": scope.as_dict()}
                self._append_audit_row("outcome", outcome["actor"], Scope(scope.user_id, scope.agent_id,
                                                                          scope.project_id, outcome["session_id"]),
                                       [e["entry_id"] for e in effects],
                                       {"outcome": record, "effects": copy.deepcopy(list(effects))})

    def revert_outcome(self, outcome_id: str, at: Any, changes: Sequence[dict[str, Any]], *,
                       actor: str | None) -> None:
        with self._lock:
            row = self.tables.outcomes.get(outcome_id)
            if row is not None:
                row["reverted_at"] = _iso(at)
            self._set_confidence(changes)
            if self._audit_on():
                scope = Scope() if row is None else Scope(row["scope"].user_id, row["scope"].agent_id,
                                                          row["scope"].project_id, row["session_id"])
                self._append_audit_row("outcome_revert", actor, scope, [c["entry_id"] for c in changes],
                                       {"outcome_id": outcome_id, "at": _iso(at), "changes": copy.deepcopy(list(changes))})

    def _outcome_row(self, row: dict[str, Any]) -> dict[str, Any]:
        effects = sorted((dict(v) for (oid, _), v in self.tables.effects.items() if oid == row["id"]),
                         key=lambda e: e["entry_id"])
        return {**copy.deepcopy({k: v for k, v in row.items() if k != "scope"}), "scope": row["scope"],
                "created_at": parse_iso(row["created_at"]), "reverted_at": parse_iso(row["reverted_at"]),
                "effects": effects}

    def list_outcomes(self, scope: Scope, *, outcome_id: str | None = None, include_reverted: bool = True,
                      limit: int | None = 100) -> list[dict[str, Any]]:
        wanted = scope.as_dict()
        session = wanted.pop("session_id", None)
        with self._lock:
            rows = [r for r in self.tables.outcomes.values()
                    if _scoped(r["scope"], wanted) and (session is None or r["session_id"] == session)
                    and (outcome_id is None or r["id"] == outcome_id)
                    and (include_reverted or r["reverted_at"] is None)]
            rows.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
            return [self._outcome_row(r) for r in (rows if limit is None else rows[:limit])]

    def outcome_effects(self, entry_ids: Iterable[str]) -> list[dict[str, Any]]:
        wanted = set(entry_ids)
        with self._lock:
            out = []
            for (oid, eid), e in self.tables.effects.items():
                if eid not in wanted:
                    continue
                o = self.tables.outcomes[oid]
                out.append({**e, "outcome_id": oid, "outcome_type": o["outcome_type"], "value": o["value"],
                            "actor": o["actor"], "created_at": parse_iso(o["created_at"]),
                            "reverted_at": parse_iso(o["reverted_at"])})
            return sorted(out, key=lambda r: (r["created_at"], r["outcome_id"]))

    def outcome_stats(self, scope: Scope, *, top: int = 5) -> dict[str, Any]:
        wanted = scope.as_dict()
        session = wanted.pop("session_id", None)
        with self._lock:
            live = [o for o in self.tables.outcomes.values()
                    if _scoped(o["scope"], wanted) and (session is None or o["session_id"] == session)]
            by_type: dict[str, int] = {}
            for o in live:
                if o["reverted_at"] is None:
                    by_type[o["outcome_type"]] = by_type.get(o["outcome_type"], 0) + 1
            counted = {o["id"] for o in live if o["reverted_at"] is None}
            net: dict[str, list[float]] = {}
            for (oid, eid), e in self.tables.effects.items():
                if oid in counted and eid in self.tables.entries:
                    s = net.setdefault(eid, [0.0, 0.0])
                    s[0] += e["success"]
                    s[1] += e["failure"]
            entries = [r for r in self.tables.entries.values() if r["invalid_at"] is None
                       and all(r[k] == v for k, v in scope.as_dict().items())]
            ranked = [{"entry_id": eid, "net": s - f, "success": s, "failure": f,
                       "confidence": float(self.tables.entries[eid]["confidence"]),
                       "text": self.tables.entries[eid]["l2_full"]} for eid, (s, f) in net.items()]
        helped = sorted((r for r in ranked if r["net"] > 0), key=lambda r: (-r["net"], r["entry_id"]))[:top]
        harmed = sorted((r for r in ranked if r["net"] < 0), key=lambda r: (r["net"], r["entry_id"]))[:top]
        return {"outcomes": sum(by_type.values()), "reverted": len(live) - len(counted), "by_type": by_type,
                "confidence_buckets": confidence_buckets(r["confidence"] for r in entries),
                "entries_with_outcomes": len(ranked), "most_helped": helped, "most_harmed": harmed}

    # -- zones and proposals ----------------------------------------------------------------------
    @staticmethod
    def _record(rec: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in rec.items() if k != "scope"}
        out.update(rec["scope"].as_dict())
        for k in ("created_at", "decided_at"):
            if k in out:
                out[k] = _iso(out[k])
        return copy.deepcopy(out)

    def set_zone(self, zone: dict[str, Any]) -> None:
        with self._lock:
            old = self.tables.zones.get(zone["id"])
            row = {"id": zone["id"], "scope": zone["scope"], "key_prefix": zone.get("key_prefix"),
                   "category": zone.get("category"), "actor": zone.get("actor"),
                   "created_at": old["created_at"] if old else _iso(zone["created_at"])}
            self.tables.zones[zone["id"]] = row
            if self._audit_on():
                self._append_audit_row("zone", zone.get("actor"), zone["scope"], [],
                                       {"op": "protect", "zone": self._record(row)})

    def delete_zone(self, zone_id: str, *, actor: str | None) -> bool:
        with self._lock:
            row = self.tables.zones.pop(zone_id, None)
            if row is None:
                return False
            if self._audit_on():
                self._append_audit_row("zone", actor, row["scope"], [], {"op": "unprotect", "zone_id": zone_id})
            return True

    def zones(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = sorted(self.tables.zones.values(), key=lambda z: (z["created_at"], z["id"]))
            return [{**dict(z), "created_at": parse_iso(z["created_at"])} for z in rows]

    def save_proposal(self, proposal: dict[str, Any], *, kind: str = "propose", actor: str | None = None) -> None:
        with self._lock:
            row = {**copy.deepcopy({k: v for k, v in proposal.items() if k != "scope"}), "scope": proposal["scope"],
                   "fields": copy.deepcopy(proposal.get("fields") or {}),
                   "created_at": _iso(proposal["created_at"]), "decided_at": _iso(proposal.get("decided_at"))}
            self.tables.proposals[proposal["id"]] = row
            if self._audit_on():
                ids = [i for i in (proposal.get("entry_id"), proposal.get("result_entry_id")) if i]
                self._append_audit_row("proposal", actor if actor is not None else proposal.get("proposer"),
                                       proposal["scope"], list(dict.fromkeys(ids)),
                                       {"op": kind, "proposal": self._record(row)})

    def _proposal_out(self, row: dict[str, Any]) -> dict[str, Any]:
        return {**copy.deepcopy({k: v for k, v in row.items() if k != "scope"}), "scope": row["scope"],
                "created_at": parse_iso(row["created_at"]), "decided_at": parse_iso(row["decided_at"])}

    def get_proposal(self, proposal_id: str) -> dict[str, Any]:
        with self._lock:
            row = self.tables.proposals.get(proposal_id)
            if row is None:
                raise InvalidArgument(f"No proposal with id {proposal_id!r}", param="proposal_id")
            return self._proposal_out(row)

    def list_proposals(self, scope: Scope, *, status: str | None = None, limit: int | None = 100,
                       offset: int = 0) -> list[dict[str, Any]]:
        wanted = scope.as_dict()
        with self._lock:
            rows = sorted((r for r in self.tables.proposals.values()
                           if _scoped(r["scope"], wanted) and (status is None or r["status"] == status)),
                          key=lambda r: (r["created_at"], r["id"]))[offset:]
            return [self._proposal_out(r) for r in (rows if limit is None else rows[:limit])]

    # -- replay ----------------------------------------------------------------------------------
    def audit_log(self, from_sequence: int = 0, limit: int = 500) -> list[dict[str, Any]]:
        with self._lock:
            rows = [r for r in self.tables.audit if r["seq"] > from_sequence][:limit]
            return [{**copy.deepcopy(r), "at": parse_iso(r["at"]),
                     "scope": (r["scope"].user_id, r["scope"].agent_id, r["scope"].project_id, r["scope"].session_id)}
                    for r in rows]

    def replay_entry(self, state: dict[str, Any]) -> None:
        with self._lock:
            rec = {k: (_iso(v) if k in ("created_at", "updated_at", "valid_from", "invalid_at", "expires_at",
                                         "archived_at") else v) for k, v in copy.deepcopy(state).items()}
            values: dict[str, Any] = {name: rec.get(name) for name in ENTRY_FIELDS}
            complete_import_entry(values, {**rec, "dedup": bool(rec.get("dedup", True))}, copy.deepcopy)
            values.pop("scope_key")
            t = self.tables
            if values["id"] in t.entries:
                self._change(values["id"], **{k: v for k, v in values.items() if k != "id"})
            else:
                rid = t.next("rid")
                t.entries[values["id"]] = {**values, "rid": rid}
                t.rids[rid] = values["id"]
                self._audit_insert(t.entries[values["id"]])

    def replay_delete(self, entry_id: str, *, actor: str | None = None) -> bool:
        with self._lock:
            if entry_id not in self.tables.entries:
                return False
            self._delete_rows([entry_id], actor)
            return True
