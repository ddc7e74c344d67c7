"""Named entities of entries and their co-occurrence graph."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ..base import EntryFilter, key_matches
from .core import SqlCore, mapped

__all__ = ["EntitiesMixin", "like_suffixes"]


def like_suffixes(key: str) -> list[str]:
    """LIKE patterns (escape ``\\``) for the norms that end with ``/key`` or ``.key``."""
    escaped = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return [f"%/{escaped}", f"%.{escaped}"]


class EntitiesMixin(SqlCore):
    """``entities``, ``entity_entries`` and ``entity_links``."""

    def _entity_id(self, conn: Any, norm: str, label: str, text: str | None = None) -> int:
        """The id of entity ``(norm, label)``, made (with ``text``, else ``norm``) when missing."""
        conn.execute("INSERT INTO entities (norm, label, text) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                     (norm, label, norm if text is None else text))
        return int(conn.execute("SELECT id FROM entities WHERE norm = ? AND label = ?", (norm, label)).fetchone()[0])

    def _link_entities(self, conn: Any, entry_id: str, ids: list[int], observed_at: Any) -> None:
        """Tie an entry to its entities and link each pair of them (``observed_at`` a time parameter)."""
        unique = sorted(set(ids))
        conn.executemany("INSERT INTO entity_entries (entity_id, entry_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                         [(eid, entry_id) for eid in unique])
        conn.executemany("INSERT INTO entity_links (a, b, entry_id, observed_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT DO NOTHING",
                         [(a, b, entry_id, observed_at) for i, a in enumerate(unique) for b in unique[i + 1 :]])

    def _entities_can_wait(self) -> bool:
        """Whether the entity rows of this call may wait for the commit of the caller's transaction."""
        return False

    @mapped
    def add_entities(self, entry_id: str, entities: list[tuple[str, str, str]], observed_at: datetime, *,
                     replace: bool = False) -> None:
        """Store ``(norm, label, text)`` entities for an entry and link those that co-occur; with
        ``replace``, the entry's earlier entities go first (its text changed)."""
        wait = not replace and self._entities_can_wait()
        with self.conns.write() as conn:
            if replace:
                conn.execute("DELETE FROM entity_entries WHERE entry_id = ?", (entry_id,))
                conn.execute("DELETE FROM entity_links WHERE entry_id = ?", (entry_id,))
            if entities:
                self._put_entities(conn, entry_id, entities, self.dialect.time(observed_at), wait=wait)

    def _put_entities(self, conn: Any, entry_id: str, entities: list[tuple[str, str, str]], observed_at: Any, *,
                      wait: bool) -> None:
        """Make the entities where missing, tie them to the entry and link each pair."""
        ids = [self._entity_id(conn, norm, label, text) for norm, label, text in entities]
        self._link_entities(conn, entry_id, ids, observed_at)

    @mapped
    def entity_graph(self, flt: EntryFilter, entity: str | None = None, limit: int = 200) -> dict[str, Any]:
        d = self.dialect
        where, args = self.where_sql(flt)
        with self.conns.read() as conn:
            node_rows = conn.execute(
                f"SELECT n.id, n.norm, n.label, n.text, count(*) FROM entities n JOIN entity_entries x ON x.entity_id = n.id "
                f"JOIN entries e ON e.id = x.entry_id WHERE {where} "
                + ("AND n.norm = ? " if entity else "")
                + "GROUP BY n.id ORDER BY count(*) DESC, n.id LIMIT ?",
                [*args, *([entity] if entity else []), limit]).fetchall()
            ids = [r[0] for r in node_rows]
            edges: list[dict[str, Any]] = []
            if ids:
                in_a, a_args = d.any_of("l.a", ids)
                in_b, b_args = d.any_of("l.b", ids)
                for a, b, entry_id, at in conn.execute(
                        "SELECT l.a, l.b, l.entry_id, l.observed_at FROM entity_links l JOIN entries e ON e.id = l.entry_id "
                        f"WHERE ({in_a} OR {in_b}) AND {where}", [*a_args, *b_args, *args]):
                    edges.append({"a": a, "b": b, "entry_id": entry_id, "observed_at": d.iso(at)})
                extra = {e["a"] for e in edges} | {e["b"] for e in edges}
                node_rows += self.select_in(conn, "SELECT id, norm, label, text, 0 FROM entities WHERE {in}", "id",
                                            sorted(extra - set(ids)))
        nodes = [{"id": r[0], "norm": r[1], "label": r[2], "text": r[3], "entries": r[4]} for r in node_rows]
        return {"nodes": nodes, "edges": edges}

    @mapped
    def entity_matches(self, keys: Sequence[str], flt: EntryFilter, limit: int = 200) -> dict[str, list[str]]:
        keys = list(dict.fromkeys(k for k in keys if k))
        if not keys or limit <= 0:
            return {}
        where, args = self.where_sql(flt)
        names: list[str] = []
        name_args: list[Any] = []
        for key in keys:
            names.append("n.norm = ?")
            name_args.append(key)
            for pattern in like_suffixes(key):
                names.append("n.norm LIKE ? ESCAPE '\\'")
                name_args.append(pattern)
        out: dict[str, list[str]] = {}
        with self.conns.read() as conn:
            rows = conn.execute(
                "SELECT x.entry_id, n.norm FROM entities n JOIN entity_entries x ON x.entity_id = n.id "
                f"JOIN entries e ON e.id = x.entry_id WHERE ({' OR '.join(names)}) AND {where} "
                "ORDER BY e.rid DESC", [*name_args, *args]).fetchall()
        for entry_id, norm in rows:
            if entry_id not in out and len(out) >= limit:
                continue
            matched = out.setdefault(entry_id, [])
            matched.extend(k for k in key_matches(norm, keys) if k not in matched)
        return out

    @mapped
    def entities_of(self, entry_ids: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        with self.conns.read() as conn:
            for entry_id, norm in self.select_in(
                    conn, "SELECT x.entry_id, n.norm FROM entity_entries x JOIN entities n ON n.id = x.entity_id "
                          "WHERE {in} ORDER BY n.id", "x.entry_id", entry_ids):
                out.setdefault(entry_id, []).append(norm)
        return out
