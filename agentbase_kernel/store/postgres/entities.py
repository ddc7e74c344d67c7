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
        ``replace``, the entry's earlier entities go first (its text changed).

        Inside a caller's transaction (a bulk ``add_memories``) the rows wait for its commit and go
        in with every other entry's in one statement: nothing reads them back meanwhile (``mapped``
        writes them first for any call that might), and they commit or roll back with the entries.
        """
        deferred = self.conns.deferring and not replace
        with self.conns.write() as conn:
            if replace:
                conn.execute("DELETE FROM entity_entries WHERE entry_id = %s", (entry_id,))
                conn.execute("DELETE FROM entity_links WHERE entry_id = %s", (entry_id,))
            if not entities:
                return
            items = [(entry_id, norm, label, text, _aware(observed_at)) for norm, label, text in set(entities)]
            if deferred:
                self.conns.defer("entities", self._write_entities).extend(items)
            else:
                self._write_entities(conn, items)

    def _write_entities(self, conn: Any, items: list[tuple[str, str, str, str, datetime]]) -> None:
        """``(entry id, norm, label, text, observed at)`` rows: the entities made where missing, each
        tied to its entries and linked to those it co-occurs with - in one statement (one round trip:
        most of a write's cost on a busy server) unless it cannot see one of them. An entity another
        writer committed while the statement ran is skipped by ``ON CONFLICT`` yet invisible to the
        statement's snapshot; then the ids are read again and the ties made per entry (what the
        statement did make stays: every insert is ``ON CONFLICT DO NOTHING``)."""
        # entities made in a fixed order, so two writers sharing some never wait on each other in a cycle
        items = sorted(items, key=lambda i: (i[1], i[2], i[3], i[0]))
        entry_ids, norms, labels, texts, seen = (list(col) for col in zip(*items))
        wanted = len(set(zip(norms, labels)))
        found = conn.execute(
            "WITH input AS (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[]) "
            "WITH ORDINALITY AS i(entry_id, norm, label, text, at, n)), "
            "made AS (INSERT INTO entities (norm, label, text) SELECT norm, label, text FROM input ORDER BY n "
            "ON CONFLICT (norm, label) DO NOTHING RETURNING id, norm, label), "
            "ids AS (SELECT id, norm, label FROM made UNION SELECT x.id, x.norm, x.label FROM entities x "
            "WHERE (x.norm, x.label) IN (SELECT norm, label FROM input)), "
            "ties AS (SELECT DISTINCT i.entry_id, ids.id, i.at FROM input i JOIN ids ON ids.norm = i.norm AND ids.label = i.label), "
            "tied AS (INSERT INTO entity_entries (entity_id, entry_id) SELECT id, entry_id FROM ties ON CONFLICT DO NOTHING), "
            "linked AS (INSERT INTO entity_links (a, b, entry_id, observed_at) SELECT a.id, b.id, a.entry_id, a.at "
            "FROM ties a JOIN ties b ON b.entry_id = a.entry_id AND a.id < b.id ON CONFLICT DO NOTHING) "
            "SELECT count(*) FROM ids", (entry_ids, norms, labels, texts, seen)).fetchone()[0]
        if int(found) == wanted:
            return
        ids = dict(zip(zip(norms, labels), self._entity_ids(conn, [(n, lab, t) for _, n, lab, t, _ in items])))
        by_entry: dict[str, tuple[list[int], datetime]] = {}
        for entry_id, norm, label, _text, at in items:
            by_entry.setdefault(entry_id, ([], at))[0].append(ids[(norm, label)])
        for entry_id, (entity_ids, at) in by_entry.items():
            self._link_entities(conn, entry_id, entity_ids, at)

    def _link_entities(self, conn: Any, entry_id: str, ids: list[int], observed_at: datetime) -> None:
        unique = sorted(set(ids))
        conn.execute("INSERT INTO entity_entries (entity_id, entry_id) SELECT unnest(%s::bigint[]), %s "
                     "ON CONFLICT DO NOTHING", (unique, entry_id))
        pairs = [(a, b) for i, a in enumerate(unique) for b in unique[i + 1 :]]
        if pairs:
            conn.execute("INSERT INTO entity_links (a, b, entry_id, observed_at) "
                         "SELECT unnest(%s::bigint[]), unnest(%s::bigint[]), %s, %s ON CONFLICT DO NOTHING",
                         ([a for a, _ in pairs], [b for _, b in pairs], entry_id, observed_at))

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
