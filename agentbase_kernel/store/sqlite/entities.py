"""Named entities of entries and their co-occurrence graph."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import EntryFilter, iso
from .core import SqliteCore, mapped

__all__ = ["EntitiesMixin"]


class EntitiesMixin(SqliteCore):
    """``entities``, ``entity_entries`` and ``entity_links``."""

    @mapped
    def add_entities(self, entry_id: str, entities: list[tuple[str, str, str]], observed_at: datetime, *,
                     replace: bool = False) -> None:
        """Store ``(norm, label, text)`` entities for an entry and link those that co-occur; with
        ``replace``, the entry's earlier entities go first (its text changed)."""
        with self.conns.write() as conn:
            if replace:
                conn.execute("DELETE FROM entity_entries WHERE entry_id = ?", (entry_id,))
                conn.execute("DELETE FROM entity_links WHERE entry_id = ?", (entry_id,))
            if not entities:
                return
            ids = []
            for norm, label, text in entities:
                conn.execute("INSERT OR IGNORE INTO entities (norm, label, text) VALUES (?, ?, ?)", (norm, label, text))
                eid = conn.execute("SELECT id FROM entities WHERE norm = ? AND label = ?", (norm, label)).fetchone()[0]
                ids.append(eid)
                conn.execute("INSERT OR IGNORE INTO entity_entries (entity_id, entry_id) VALUES (?, ?)", (eid, entry_id))
            at = iso(observed_at)
            unique = sorted(set(ids))
            for i, a in enumerate(unique):
                for b in unique[i + 1 :]:
                    conn.execute("INSERT OR IGNORE INTO entity_links (a, b, entry_id, observed_at) VALUES (?, ?, ?, ?)",
                                 (a, b, entry_id, at))

    @mapped
    def entity_graph(self, flt: EntryFilter, entity: str | None = None, limit: int = 200) -> dict[str, Any]:
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            node_rows = conn.execute(
                f"SELECT n.id, n.norm, n.label, n.text, count(*) FROM entities n JOIN entity_entries x ON x.entity_id = n.id "
                f"JOIN entries e ON e.id = x.entry_id WHERE {where} "
                + ("AND n.norm = ? " if entity else "")
                + "GROUP BY n.id ORDER BY count(*) DESC LIMIT ?",
                [*args, *([entity] if entity else []), limit]).fetchall()
            ids = [r[0] for r in node_rows]
            edges: list[dict[str, Any]] = []
            if ids:
                marks = ",".join("?" * len(ids))
                for a, b, entry_id, at in conn.execute(
                        f"SELECT l.a, l.b, l.entry_id, l.observed_at FROM entity_links l JOIN entries e ON e.id = l.entry_id "
                        f"WHERE (l.a IN ({marks}) OR l.b IN ({marks})) AND {where}", [*ids, *ids, *args]):
                    edges.append({"a": a, "b": b, "entry_id": entry_id, "observed_at": at})
                extra = {e["a"] for e in edges} | {e["b"] for e in edges}
                missing = list(extra - set(ids))
                if missing:
                    node_rows += conn.execute(
                        f"SELECT id, norm, label, text, 0 FROM entities WHERE id IN ({','.join('?' * len(missing))})",
                        missing).fetchall()
        nodes = [{"id": r[0], "norm": r[1], "label": r[2], "text": r[3], "entries": r[4]} for r in node_rows]
        return {"nodes": nodes, "edges": edges}
