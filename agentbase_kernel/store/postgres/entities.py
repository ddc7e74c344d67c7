"""Named entities of entries and their co-occurrence graph."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import EntryFilter, iso
from .core import PgCore, _aware, mapped

__all__ = ["EntitiesMixin"]


class EntitiesMixin(PgCore):
    """``entities``, ``entity_entries`` and ``entity_links``."""

    def _entity_ids(self, conn: Any, entities: list[tuple[str, str, str]]) -> list[int]:
        """Ids of ``(norm, label, text)`` entities, made where missing (racing writers agree on one
        row), in two statements whatever their number."""
        norms, labels, texts = (list(col) for col in zip(*entities))
        conn.execute("INSERT INTO entities (norm, label, text) SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]) "
                     "ON CONFLICT (norm, label) DO NOTHING", (norms, labels, texts))
        found = {(n, lab): int(i) for i, n, lab in conn.execute(
            "SELECT id, norm, label FROM entities WHERE norm = ANY(%s)", (list(set(norms)),))}
        return [found[(n, lab)] for n, lab in zip(norms, labels)]

    @mapped
    def add_entities(self, entry_id: str, entities: list[tuple[str, str, str]], observed_at: datetime, *,
                     replace: bool = False) -> None:
        """Store ``(norm, label, text)`` entities for an entry and link those that co-occur; with
        ``replace``, the entry's earlier entities go first (its text changed)."""
        with self.conns.write() as conn:
            if replace:
                conn.execute("DELETE FROM entity_entries WHERE entry_id = %s", (entry_id,))
                conn.execute("DELETE FROM entity_links WHERE entry_id = %s", (entry_id,))
            if not entities:
                return
            # a fixed order of inserts, so two writers sharing entities never wait on each other in a cycle
            ids = self._entity_ids(conn, sorted(entities))
            unique = sorted(set(ids))
            conn.execute("INSERT INTO entity_entries (entity_id, entry_id) SELECT unnest(%s::bigint[]), %s "
                         "ON CONFLICT DO NOTHING", (unique, entry_id))
            pairs = [(a, b) for i, a in enumerate(unique) for b in unique[i + 1 :]]
            if pairs:
                conn.execute("INSERT INTO entity_links (a, b, entry_id, observed_at) "
                             "SELECT unnest(%s::bigint[]), unnest(%s::bigint[]), %s, %s ON CONFLICT DO NOTHING",
                             ([a for a, _ in pairs], [b for _, b in pairs], entry_id, _aware(observed_at)))

    @mapped
    def entity_graph(self, flt: EntryFilter, entity: str | None = None, limit: int = 200) -> dict[str, Any]:
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            node_rows = conn.execute(
                f"SELECT n.id, n.norm, n.label, n.text, count(*) FROM entities n JOIN entity_entries x ON x.entity_id = n.id "
                f"JOIN entries e ON e.id = x.entry_id WHERE {where} "
                + ("AND n.norm = %s " if entity else "")
                + "GROUP BY n.id ORDER BY count(*) DESC, n.id LIMIT %s",
                [*args, *([entity] if entity else []), limit]).fetchall()
            ids = [r[0] for r in node_rows]
            edges: list[dict[str, Any]] = []
            if ids:
                for a, b, entry_id, at in conn.execute(
                        "SELECT l.a, l.b, l.entry_id, l.observed_at FROM entity_links l JOIN entries e ON e.id = l.entry_id "
                        f"WHERE (l.a = ANY(%s) OR l.b = ANY(%s)) AND {where}", [ids, ids, *args]):
                    edges.append({"a": a, "b": b, "entry_id": entry_id, "observed_at": iso(at)})
                extra = {e["a"] for e in edges} | {e["b"] for e in edges}
                missing = list(extra - set(ids))
                if missing:
                    node_rows += conn.execute("SELECT id, norm, label, text, 0 FROM entities WHERE id = ANY(%s)",
                                              (missing,)).fetchall()
        nodes = [{"id": r[0], "norm": r[1], "label": r[2], "text": r[3], "entries": r[4]} for r in node_rows]
        return {"nodes": nodes, "edges": edges}
