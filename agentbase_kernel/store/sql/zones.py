"""Approval zones and proposals (``rules/zones.py`` decides what a zone covers; this part keeps the rows).

A zone marks a scope (and optionally a key prefix or a category) as human-approved; an agent's write
there is stored as a proposal instead of an entry. Every change is audited with the whole record, so
that replaying the log rebuilds zones and proposals.
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidArgument
from ...records import Scope
from .core import mapped
from .outcomes import OutcomesMixin

__all__ = ["PROPOSAL_FIELDS", "ZONE_FIELDS", "ZonesMixin"]

ZONE_FIELDS = ("id", "user_id", "agent_id", "project_id", "session_id", "key_prefix", "category", "actor", "created_at")
PROPOSAL_FIELDS = ("id", "status", "op", "zone_id", "user_id", "agent_id", "project_id", "session_id", "entry_id", "text",
                   "fields", "current_text", "proposer", "source", "reason", "created_at", "decided_at", "decided_by",
                   "decision_reason", "result_entry_id")
_TIMES = ("created_at", "decided_at")
_TEXTS = ("text", "current_text")


class ZonesMixin(OutcomesMixin):
    """``approval_zones`` and ``proposals``."""

    def _zone(self, r: Any) -> dict[str, Any]:
        rec = dict(zip(ZONE_FIELDS, r))
        rec["scope"] = Scope(*(rec.pop(k) for k in ("user_id", "agent_id", "project_id", "session_id")))
        rec["created_at"] = self.dialect.when(rec["created_at"])
        return rec

    def _proposal(self, r: Any) -> dict[str, Any]:
        d = self.dialect
        rec = dict(zip(PROPOSAL_FIELDS, r))
        rec["scope"] = Scope(*(rec.pop(k) for k in ("user_id", "agent_id", "project_id", "session_id")))
        rec["fields"] = d.data(rec["fields"])
        for k in _TIMES:
            rec[k] = d.when(rec[k])
        for k in _TEXTS:
            rec[k] = d.text_out(rec[k])
        return rec

    def _record(self, rec: dict[str, Any]) -> dict[str, Any]:
        """A zone or proposal as its audit row keeps it: scope ids inline, times as ISO text."""
        d = self.dialect
        out = {k: v for k, v in rec.items() if k != "scope"}
        out.update(rec["scope"].as_dict() if isinstance(rec.get("scope"), Scope) else {})
        for k in _TIMES:
            if out.get(k) is not None:
                out[k] = d.iso(d.time(out[k]))
        return out

    # -- zones -----------------------------------------------------------------------------------
    @mapped
    def set_zone(self, zone: dict[str, Any]) -> None:
        """Create (or replace, by id) a zone ``{id, scope, key_prefix, category, actor, created_at}``."""
        d = self.dialect
        scope: Scope = zone["scope"]
        with self.conns.write() as conn:
            conn.execute(
                f"INSERT INTO approval_zones ({', '.join(ZONE_FIELDS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET key_prefix = excluded.key_prefix, category = excluded.category",
                (zone["id"], scope.user_id, scope.agent_id, scope.project_id, scope.session_id, zone.get("key_prefix"),
                 zone.get("category"), zone.get("actor"), d.time(zone["created_at"])))
            self._audit_row(conn, "zone", zone.get("actor"), scope, [], {"op": "protect", "zone": self._record(zone)})

    @mapped
    def delete_zone(self, zone_id: str, *, actor: str | None) -> bool:
        with self.conns.write() as conn:
            found = conn.execute(f"SELECT {', '.join(ZONE_FIELDS)} FROM approval_zones WHERE id = ?",
                                 (zone_id,)).fetchone()
            if found is None:
                return False
            conn.execute("DELETE FROM approval_zones WHERE id = ?", (zone_id,))
            zone = self._zone(found)
            self._audit_row(conn, "zone", actor, zone["scope"], [], {"op": "unprotect", "zone_id": zone_id})
            return True

    @mapped
    def zones(self) -> list[dict[str, Any]]:
        """Every zone: ``{id, scope, key_prefix, category, actor, created_at}``, oldest first."""
        with self.conns.read() as conn:
            rows = conn.execute(f"SELECT {', '.join(ZONE_FIELDS)} FROM approval_zones ORDER BY created_at, id").fetchall()
        return [self._zone(r) for r in rows]

    # -- proposals -------------------------------------------------------------------------------
    @mapped
    def save_proposal(self, proposal: dict[str, Any], *, kind: str = "propose", actor: str | None = None) -> None:
        """Write a proposal (a new one, or all of its fields by id) and audit it as ``kind``."""
        d = self.dialect
        scope: Scope = proposal["scope"]
        values = {k: proposal.get(k) for k in PROPOSAL_FIELDS if k not in ("user_id", "agent_id", "project_id",
                                                                         "session_id")}
        values.update(user_id=scope.user_id, agent_id=scope.agent_id, project_id=scope.project_id,
                      session_id=scope.session_id)
        values["fields"] = d.json(values["fields"] or {})
        for k in _TIMES:
            values[k] = d.time(values[k])
        for k in _TEXTS:
            values[k] = d.text(values[k])
        cols = list(values)
        with self.conns.write() as conn:
            conn.execute(f"INSERT INTO proposals ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                         "ON CONFLICT (id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in cols if c != "id"),
                         list(values.values()))
            entry_ids = [i for i in (proposal.get("entry_id"), proposal.get("result_entry_id")) if i]
            self._audit_row(conn, "proposal", actor if actor is not None else proposal.get("proposer"), scope,
                            list(dict.fromkeys(entry_ids)), {"op": kind, "proposal": self._record(proposal)})

    @mapped
    def get_proposal(self, proposal_id: str) -> dict[str, Any]:
        """The proposal; ``InvalidArgument`` naming the id when there is none."""
        with self.conns.read() as conn:
            found = conn.execute(f"SELECT {', '.join(PROPOSAL_FIELDS)} FROM proposals WHERE id = ?",
                                 (proposal_id,)).fetchone()
        if found is None:
            raise InvalidArgument(f"No proposal with id {proposal_id!r}", param="proposal_id")
        return self._proposal(found)

    @mapped
    def list_proposals(self, scope: Scope, *, status: str | None = None, limit: int | None = 100,
                       offset: int = 0) -> list[dict[str, Any]]:
        """Proposals whose scope has each id ``scope`` sets (of one ``status`` if given), oldest first."""
        d = self.dialect
        clauses, args = [], []
        for name, value in scope.as_dict().items():
            clauses.append(f"{name} = ?")
            args.append(value)
        if status is not None:
            clauses.append("status = ?")
            args.append(status)
        page, page_args = d.page(limit, offset)
        with self.conns.read() as conn:
            rows = conn.execute(f"SELECT {', '.join(PROPOSAL_FIELDS)} FROM proposals WHERE "
                                f"{' AND '.join(clauses) or d.true} ORDER BY created_at, id{page}",
                                [*args, *page_args]).fetchall()
        return [self._proposal(r) for r in rows]
