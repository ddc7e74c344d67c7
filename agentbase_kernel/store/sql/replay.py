"""The audit log read in order and applied elsewhere (``lifecycle/replay.py`` drives it).

Each audit row of an entry's change keeps the row as it became (``state``, filled by the backend's
trigger); ``replay_entry`` writes such a state back as it was, ``replay_delete`` removes an entry.
"""

from __future__ import annotations

import json
from typing import Any

from .. import rows
from .core import mapped
from .zones import ZonesMixin

__all__ = ["ReplayMixin"]

_TEXTS = ("l0_abstract", "l1_overview", "l2_full", "search_text", "search_context")


class ReplayMixin(ZonesMixin):
    """``audit_log`` in sequence order, and entry rows written back from it."""

    @mapped
    def audit_log(self, from_sequence: int = 0, limit: int = 500) -> list[dict[str, Any]]:
        """Audit rows with ``seq > from_sequence``, oldest first, each with its ``state`` (``None``
        where the row keeps none)."""
        d = self.dialect
        with self.conns.read() as conn:
            found = conn.execute(
                "SELECT seq, at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail, state "
                "FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?", (int(from_sequence), int(limit))).fetchall()
        return [{"seq": int(r[0]), "at": d.when(r[1]), "kind": r[2], "actor": r[3],
                 "scope": (r[4], r[5], r[6], r[7]), "entry_ids": d.data(r[8]), "detail": d.data(r[9]),
                 "state": None if r[10] is None else d.data(r[10])} for r in found]

    @mapped
    def replay_entry(self, state: dict[str, Any]) -> None:
        """Write an entry row as an audit row's ``state`` holds it: inserted, or every column replaced."""
        d = self.dialect
        rec = dict(state)
        for name in rows.JSON_ENTRY_FIELDS:  # SQLite keeps JSON columns as text inside the state
            if isinstance(rec.get(name), str):
                rec[name] = json.loads(rec[name])
        for name in _TEXTS:
            rec[name] = d.text_out(rec.get(name))
        values = self._in(rec, rows.ENTRY_FIELDS)  # type: ignore[attr-defined]
        rows.complete_import_entry(values, {**rec, "dedup": bool(rec.get("dedup", True))}, d.json)
        with self.conns.write() as conn:
            if conn.execute("SELECT 1 FROM entries WHERE id = ?", (values["id"],)).fetchone():
                sets = {k: v for k, v in values.items() if k != "id"}
                conn.execute(f"UPDATE entries SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                             [*sets.values(), values["id"]])
            else:
                conn.execute(f"INSERT INTO entries ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                             list(values.values()))
                self._rows_written(1)

    @mapped
    def replay_delete(self, entry_id: str, *, actor: str | None = None) -> bool:
        """Delete the entry if it is here (a DELETE history event first); ``False`` if it is not."""
        with self.conns.write() as conn:
            found = conn.execute("SELECT 1 FROM entries WHERE id = ?", (entry_id,)).fetchone()
            if found is None:
                return False
            self._delete_rows(conn, [self.get_entry(entry_id)], actor)  # type: ignore[attr-defined]
            return True
