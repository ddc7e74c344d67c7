"""Outcomes and the confidence they move (``rules/outcomes.py`` holds the rule, this part the rows).

An outcome row says what happened after a session's retrievals; its effects say, per entry, how much
success and failure it counted and the confidence before and after. ``entry_confidence`` keeps each
entry's Beta counts and the confidence they last gave it, and ``entries.confidence`` is the value
every read sees. Each write appends its audit row (``outcome`` / ``outcome_revert``) carrying the
whole record, so that replaying the log rebuilds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...records import Scope
from .core import SqlCore, mapped
from .governance import AUDIT_ON

__all__ = ["OutcomesMixin", "confidence_buckets"]

_OUTCOME_COLS = ("id, session_id, user_id, agent_id, project_id, outcome_type, value, weight, actor, trace_ids, detail, "
                 "created_at, reverted_at")

# an entry's confidence bucket (tenths of [0, 1], 1.0 in the last), counted by the database
_BUCKET = "CASE " + " ".join(f"WHEN e.confidence < {n / 10} THEN {n - 1}" for n in range(1, 10)) + " ELSE 9 END"


def confidence_buckets(values: Iterable[float], bins: int = 10) -> list[int]:
    """How many of ``values`` fall in each of ``bins`` equal parts of [0, 1] (1.0 in the last)."""
    counts = [0] * bins
    for v in values:
        x = float(v)
        if x != x:  # NaN (a row stored unchecked): in no bucket
            continue
        counts[0 if x <= 0 else bins - 1 if x >= 1 else min(bins - 1, int(x * bins))] += 1
    return counts


class OutcomesMixin(SqlCore):
    """``outcomes``, ``outcome_effects`` and ``entry_confidence``."""

    def _audit_row(self, conn: Any, kind: str, actor: str | None, scope: Scope, entry_ids: Sequence[str],
                   detail: dict[str, Any]) -> None:
        """An audit row inside the caller's write (skipped while the audit switch is off)."""
        d = self.dialect
        conn.execute(
            "INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail) "
            f"SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE {AUDIT_ON}",
            (d.now(), kind, actor, scope.user_id, scope.agent_id, scope.project_id, scope.session_id,
             d.json(list(entry_ids)), d.json(detail)))

    @mapped
    def confidence_counts(self, entry_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``{id: {"confidence": current, "counts": (alpha, beta, confidence they gave) | None}}`` for
        the ids that exist."""
        with self.conns.read() as conn:
            rows = self.select_in(conn, "SELECT e.id, e.confidence, c.alpha, c.beta, c.confidence FROM entries e "
                                  "LEFT JOIN entry_confidence c ON c.entry_id = e.id WHERE {in}", "e.id", entry_ids)
        return {r[0]: {"confidence": float(r[1]),
                       "counts": None if r[2] is None else (float(r[2]), float(r[3]), float(r[4]))} for r in rows}

    def _set_confidence(self, conn: Any, changes: Sequence[dict[str, Any]]) -> None:
        """Write each ``{entry_id, alpha, beta, confidence}``: the counts and the entry's confidence."""
        conn.executemany(
            "INSERT INTO entry_confidence (entry_id, alpha, beta, confidence) SELECT ?, ?, ?, ? "
            "WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?) ON CONFLICT (entry_id) DO UPDATE SET "
            "alpha = excluded.alpha, beta = excluded.beta, confidence = excluded.confidence",
            [(c["entry_id"], c["alpha"], c["beta"], c["confidence"], c["entry_id"]) for c in changes])
        for c in changes:
            conn.execute("UPDATE entries SET confidence = ? WHERE id = ? AND confidence <> ?",
                         (c["confidence"], c["entry_id"], c["confidence"]))

    @mapped
    def save_outcome(self, outcome: dict[str, Any], effects: Sequence[dict[str, Any]]) -> None:
        """Store an outcome and its ``effects`` (``entry_id, success, failure, confidence_before,
        confidence_after, alpha, beta``), move each entry's confidence, and audit it, atomically."""
        d = self.dialect
        scope: Scope = outcome["scope"]
        with self.conns.write() as conn:
            conn.execute(
                f"INSERT INTO outcomes ({_OUTCOME_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (outcome["id"], outcome["session_id"], scope.user_id, scope.agent_id, scope.project_id,
                 outcome["outcome_type"], outcome["value"], outcome["weight"], outcome["actor"],
                 d.json(list(outcome["trace_ids"])), d.json(outcome["detail"]), d.time(outcome["created_at"]),
                 d.time(outcome.get("reverted_at"))))
            conn.executemany(
                "INSERT INTO outcome_effects (outcome_id, entry_id, success, failure, confidence_before, "
                "confidence_after) SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM entries WHERE id = ?)",
                [(outcome["id"], e["entry_id"], e["success"], e["failure"], e["confidence_before"],
                  e["confidence_after"], e["entry_id"]) for e in effects])
            self._set_confidence(conn, [{"entry_id": e["entry_id"], "alpha": e["alpha"], "beta": e["beta"],
                                         "confidence": e["confidence_after"]} for e in effects])
            record = {k: v for k, v in outcome.items() if k != "scope"}
            record.update(scope=scope.as_dict(), created_at=d.iso(d.time(outcome["created_at"])))
            self._audit_row(conn, "outcome", outcome["actor"], Scope(scope.user_id, scope.agent_id, scope.project_id,
                                                                     outcome["session_id"]),
                            [e["entry_id"] for e in effects], {"outcome": record, "effects": list(effects)})

    @mapped
    def revert_outcome(self, outcome_id: str, at: Any, changes: Sequence[dict[str, Any]], *,
                       actor: str | None) -> None:
        """Mark the outcome reverted at ``at`` and write the ``changes`` (``entry_id, alpha, beta,
        confidence``) taking its counts back, atomically, with an ``outcome_revert`` audit row."""
        d = self.dialect
        with self.conns.write() as conn:
            found = conn.execute(f"SELECT session_id, user_id, agent_id, project_id FROM outcomes WHERE id = ?"
                                 f"{d.for_update}", (outcome_id,)).fetchone()
            conn.execute("UPDATE outcomes SET reverted_at = ? WHERE id = ?", (d.time(at), outcome_id))
            self._set_confidence(conn, changes)
            scope = Scope(found[1], found[2], found[3], found[0]) if found else Scope()
            self._audit_row(conn, "outcome_revert", actor, scope, [c["entry_id"] for c in changes],
                            {"outcome_id": outcome_id, "at": d.iso(d.time(at)), "changes": list(changes)})

    @mapped
    def list_outcomes(self, scope: Scope, *, outcome_id: str | None = None, include_reverted: bool = True,
                      limit: int | None = 100) -> list[dict[str, Any]]:
        """Outcomes whose scope has each id ``scope`` sets (``session_id`` the outcome's session), newest
        first, each with its ``effects``."""
        d = self.dialect
        clauses, args = [], []
        for name, value in scope.as_dict().items():
            clauses.append(f"{name} = ?")
            args.append(value)
        if outcome_id is not None:
            clauses.append("id = ?")
            args.append(outcome_id)
        if not include_reverted:
            clauses.append("reverted_at IS NULL")
        page, page_args = d.page(limit, 0)
        with self.conns.read() as conn:
            rows = conn.execute(f"SELECT {_OUTCOME_COLS} FROM outcomes WHERE {' AND '.join(clauses) or d.true} "
                                f"ORDER BY created_at DESC, id DESC{page}", [*args, *page_args]).fetchall()
            effects: dict[str, list[dict[str, Any]]] = {}
            for e in self.select_in(conn, "SELECT outcome_id, entry_id, success, failure, confidence_before, "
                                    "confidence_after FROM outcome_effects WHERE {in} ORDER BY entry_id",
                                    "outcome_id", [r[0] for r in rows]):
                effects.setdefault(e[0], []).append({"entry_id": e[1], "success": e[2], "failure": e[3],
                                                     "confidence_before": e[4], "confidence_after": e[5]})
        return [{"id": r[0], "session_id": r[1], "scope": Scope(r[2], r[3], r[4]), "outcome_type": r[5],
                 "value": r[6], "weight": r[7], "actor": r[8], "trace_ids": d.data(r[9]), "detail": d.data(r[10]),
                 "created_at": d.when(r[11]), "reverted_at": d.when(r[12]), "effects": effects.get(r[0], [])}
                for r in rows]

    @mapped
    def outcome_effects(self, entry_ids: Iterable[str]) -> list[dict[str, Any]]:
        """Every effect on the ids, oldest first: ``outcome_id, entry_id, outcome_type, value, success,
        failure, confidence_before, confidence_after, actor, created_at, reverted_at``."""
        d = self.dialect
        with self.conns.read() as conn:
            rows = self.select_in(conn, "SELECT x.outcome_id, x.entry_id, o.outcome_type, o.value, x.success, "
                                  "x.failure, x.confidence_before, x.confidence_after, o.actor, o.created_at, "
                                  "o.reverted_at FROM outcome_effects x JOIN outcomes o ON o.id = x.outcome_id "
                                  "WHERE {in}", "x.entry_id", entry_ids)
        out = [{"outcome_id": r[0], "entry_id": r[1], "outcome_type": r[2], "value": r[3], "success": r[4],
                "failure": r[5], "confidence_before": r[6], "confidence_after": r[7], "actor": r[8],
                "created_at": d.when(r[9]), "reverted_at": d.when(r[10])} for r in rows]
        return sorted(out, key=lambda r: (r["created_at"], r["outcome_id"]))

    @mapped
    def outcome_stats(self, scope: Scope, *, top: int = 5) -> dict[str, Any]:
        """Outcomes recorded (and reverted), per type; the confidence of the scope's live entries in ten
        buckets; the entries with the most net success (``most_helped``) and failure (``most_harmed``)."""
        d = self.dialect
        fields = scope.as_dict()
        o_where = " AND ".join(f"o.{k} = ?" for k in fields if k != "session_id") or d.true
        o_args = [v for k, v in fields.items() if k != "session_id"]
        if "session_id" in fields:
            o_where += " AND o.session_id = ?"
            o_args.append(fields["session_id"])
        e_where = " AND ".join([f"e.{k} = ?" for k in fields] + ["e.invalid_at IS NULL"])
        with self.conns.read() as conn:
            by_type = {r[0]: int(r[1]) for r in conn.execute(
                f"SELECT o.outcome_type, count(*) FROM outcomes o WHERE {o_where} AND o.reverted_at IS NULL "
                "GROUP BY o.outcome_type", o_args).fetchall()}
            reverted = int(conn.execute(f"SELECT count(*) FROM outcomes o WHERE {o_where} AND o.reverted_at IS NOT NULL",
                                        o_args).fetchone()[0])
            buckets = [0] * 10
            for bucket, count in conn.execute(f"SELECT {_BUCKET} AS b, count(*) FROM entries e WHERE {e_where} "
                                              "GROUP BY b", list(fields.values())).fetchall():
                buckets[int(bucket)] = int(count)
            net = conn.execute(
                "SELECT x.entry_id, sum(x.success) - sum(x.failure), sum(x.success), sum(x.failure), "
                "max(e.confidence), max(e.l2_full) FROM outcome_effects x JOIN outcomes o ON o.id = x.outcome_id "
                f"JOIN entries e ON e.id = x.entry_id WHERE {o_where} AND o.reverted_at IS NULL "
                "GROUP BY x.entry_id", o_args).fetchall()
        ranked = [{"entry_id": r[0], "net": float(r[1]), "success": float(r[2]), "failure": float(r[3]),
                   "confidence": float(r[4]), "text": d.text_out(r[5])} for r in net]
        helped = sorted((r for r in ranked if r["net"] > 0), key=lambda r: (-r["net"], r["entry_id"]))[:top]
        harmed = sorted((r for r in ranked if r["net"] < 0), key=lambda r: (r["net"], r["entry_id"]))[:top]
        return {"outcomes": sum(by_type.values()), "reverted": reverted, "by_type": by_type,
                "confidence_buckets": buckets, "entries_with_outcomes": len(ranked),
                "most_helped": helped, "most_harmed": harmed}
