"""Numbered forward migrations, applied on open, each in its own transaction.

The schema version is ``PRAGMA user_version``. A file whose version is newer than
``SCHEMA_VERSION`` was written by a newer agentbase and is refused untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..rows import ENTRY_FIELDS, JSON_ENTRY_FIELDS
from ..sql.schema import (
    AUDIT_TABLES,
    CAPACITY_TABLE,
    CORE_TABLES,
    GOVERNANCE_TABLES,
    OUTCOME_ZONE_TABLES,
    SKILL_TABLES,
    SchemaTypes,
    statements,
)

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]


def _run_script(conn: Any, script: str) -> None:
    """Run statements one by one: ``executescript`` would COMMIT our migration transaction."""
    import sqlite3

    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete statement in migration: {buffer[:80]!r}")


# the shared tables (``store/sql/schema.py``) in SQLite's spelling
_TYPES = SchemaTypes(text="TEXT", time="TEXT", json="TEXT", real="REAL", int="INTEGER", bigint="INTEGER",
                     flag="INTEGER", vector="BLOB", rowid="INTEGER PRIMARY KEY",
                     serial="INTEGER PRIMARY KEY AUTOINCREMENT", rid="", entry_extras="", length="length")


def _run_tables(conn: Any, template: str) -> None:
    for statement in statements(template, _TYPES):
        conn.execute(statement)


def m001_core(conn: Any) -> None:
    _run_tables(conn, CORE_TABLES)
    _run_script(conn,
        """
        CREATE VIRTUAL TABLE entries_fts USING fts5(
            search_text, content='entries', content_rowid='rid',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER entries_fts_ai AFTER INSERT ON entries BEGIN
            INSERT INTO entries_fts (rowid, search_text) VALUES (new.rid, new.search_text);
        END;
        CREATE TRIGGER entries_fts_ad AFTER DELETE ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, search_text) VALUES ('delete', old.rid, old.search_text);
        END;
        CREATE TRIGGER entries_fts_au AFTER UPDATE OF search_text ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, search_text) VALUES ('delete', old.rid, old.search_text);
            INSERT INTO entries_fts (rowid, search_text) VALUES (new.rid, new.search_text);
        END;
        """
    )


def m002_entry_changes(conn: Any) -> None:
    """A log of the entries whose row or vector changed, for the in-RAM indexes of every process.

    ``SqliteStore`` keeps a scope's vectors and FTS statistics in RAM; on each search it reads the log
    past the last ``seq`` it saw and refreshes only those rows, so writes by other processes are seen
    too. The log keeps the last 100,000 changes: an index further behind is rebuilt from the tables.
    Cached counts also depend on the clock (an entry that expires leaves every filtered count):
    ``entries_expires`` finds the entries that expired since the counts were taken.
    """
    _run_script(conn,
        """
        CREATE INDEX entries_expires ON entries (expires_at) WHERE expires_at IS NOT NULL;
        CREATE TABLE entry_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL);
        CREATE TRIGGER entry_changes_ai AFTER INSERT ON entries BEGIN
            INSERT INTO entry_changes (rid) VALUES (new.rid);
        END;
        CREATE TRIGGER entry_changes_ad AFTER DELETE ON entries BEGIN
            INSERT INTO entry_changes (rid) VALUES (old.rid);
        END;
        CREATE TRIGGER entry_changes_au AFTER UPDATE ON entries BEGIN
            INSERT INTO entry_changes (rid) VALUES (old.rid);
        END;
        CREATE TRIGGER entry_changes_vi AFTER INSERT ON embeddings BEGIN
            INSERT INTO entry_changes (rid) SELECT rid FROM entries WHERE content_hash = new.content_hash;
        END;
        CREATE TRIGGER entry_changes_vd AFTER DELETE ON embeddings BEGIN
            INSERT INTO entry_changes (rid) SELECT rid FROM entries WHERE content_hash = old.content_hash;
        END;
        CREATE TRIGGER entry_changes_prune AFTER INSERT ON entry_changes WHEN new.seq % 1024 = 0 BEGIN
            DELETE FROM entry_changes WHERE seq <= new.seq - 100000;
        END;
        """
    )


def m003_live_count_index(conn: Any) -> None:
    """Count a user's live entries from the index alone (BM25 needs that count per filter).

    With ``entries_user`` SQLite read every row for ``invalid_at`` and ``expires_at``: 68 ms at 100k
    entries in one user; 10 ms with this covering index.
    """
    conn.execute("CREATE INDEX entries_user_live ON entries (user_id, invalid_at, expires_at)")


def m004_search_context(conn: Any) -> None:
    """A second FTS column for the words around an entry (a session turn's neighbouring turns).

    BM25 weighs a match there at 0.7 of one in the entry's own words (``SqliteStore.fts_search``),
    so a reply is found by the question it answers, yet a turn that says the word itself ranks
    first. The index is rebuilt from ``entries``; entries written before have no context.
    """
    _run_script(conn,
        """
        ALTER TABLE entries ADD COLUMN search_context TEXT NOT NULL DEFAULT '';
        DROP TRIGGER entries_fts_ai;
        DROP TRIGGER entries_fts_ad;
        DROP TRIGGER entries_fts_au;
        DROP TABLE entries_fts;
        CREATE VIRTUAL TABLE entries_fts USING fts5(
            search_text, search_context, content='entries', content_rowid='rid',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER entries_fts_ai AFTER INSERT ON entries BEGIN
            INSERT INTO entries_fts (rowid, search_text, search_context)
            VALUES (new.rid, new.search_text, new.search_context);
        END;
        CREATE TRIGGER entries_fts_ad AFTER DELETE ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, search_text, search_context)
            VALUES ('delete', old.rid, old.search_text, old.search_context);
        END;
        CREATE TRIGGER entries_fts_au AFTER UPDATE OF search_text, search_context ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, search_text, search_context)
            VALUES ('delete', old.rid, old.search_text, old.search_context);
            INSERT INTO entries_fts (rowid, search_text, search_context)
            VALUES (new.rid, new.search_text, new.search_context);
        END;
        INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
        """
    )


def m005_injective_scope_keys(conn: Any) -> None:
    """Scope keys become JSON arrays of the four ids; metadata holding NaN / Infinity becomes JSON.

    The old key joined the ids with ``\\x1f``, which an id may contain, so two scopes could share
    a key (and a dedup slot). Non-finite floats were written as ``NaN`` / ``Infinity``, which no
    JSON reader (SQLite's json functions, PostgreSQL) accepts: they become null.
    """
    import json
    import math

    def finite(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: finite(v) for k, v in value.items()}
        if isinstance(value, list):
            return [finite(v) for v in value]
        return value

    conn.execute("DROP INDEX IF EXISTS entries_dedup")
    conn.execute("DROP INDEX IF EXISTS entries_subject")
    rows = conn.execute("SELECT rid, user_id, agent_id, project_id, session_id FROM entries").fetchall()
    conn.executemany("UPDATE entries SET scope_key = ? WHERE rid = ?", [
        (json.dumps(list(row[1:]), ensure_ascii=False, separators=(",", ":")), row[0]) for row in rows])
    bad = conn.execute("SELECT rid, metadata FROM entries WHERE metadata != '' AND NOT json_valid(metadata)").fetchall()
    for rid, text in bad:
        try:
            fixed = json.dumps(finite(json.loads(text)), ensure_ascii=False)
        except ValueError:
            continue
        conn.execute("UPDATE entries SET metadata = ? WHERE rid = ?", (fixed, rid))
    _run_script(conn,
        """
        CREATE UNIQUE INDEX entries_dedup ON entries (scope_key, dedup_key) WHERE invalid_at IS NULL;
        CREATE INDEX entries_subject ON entries (scope_key, subject_key) WHERE subject_key IS NOT NULL;
        """
    )


# the time SQL triggers stamp, in the fixed-width format of ``store.base.iso`` (milliseconds)
_NOW = "strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now')"
_AUDIT_ON = "coalesce((SELECT value FROM meta WHERE key = 'audit_enabled'), '1') = '1'"
# the actor of an update and of a delete, read from the history event each writes (m006; m007
# makes them again after rebuilding entry_history)
_AUDIT_HISTORY_AND_DELETE = f"""
        -- update_entry writes its history event (with the actor) after the UPDATE statement
        CREATE TRIGGER IF NOT EXISTS audit_history_update AFTER INSERT ON entry_history
            WHEN new.event = 'UPDATE' AND {_AUDIT_ON} BEGIN
            UPDATE audit_log SET actor = new.actor
            WHERE seq = (SELECT max(seq) FROM audit_log WHERE kind = 'update'
                         AND entry_ids = json_array(new.entry_id));
        END;
        -- deletes write their DELETE history event (with the actor) just before the row goes
        CREATE TRIGGER IF NOT EXISTS audit_entries_ad AFTER DELETE ON entries WHEN {_AUDIT_ON} BEGIN
            INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids)
            VALUES ({_NOW}, 'delete',
                    (SELECT actor FROM entry_history WHERE entry_id = old.id AND event = 'DELETE'
                     ORDER BY seq DESC LIMIT 1),
                    old.user_id, old.agent_id, old.project_id, old.session_id, json_array(old.id));
        END;
"""


def m006_lifecycle(conn: Any) -> None:
    """Reinforcement counters (a side table, so bumping them never touches ``entries``, its FTS
    index or the search caches) and the audit log, fed by triggers in the writing transaction.
    Idempotent: a file whose version was set back re-runs it harmlessly."""
    _run_tables(conn, AUDIT_TABLES)
    _run_script(conn,
        f"""
        CREATE TRIGGER IF NOT EXISTS audit_entries_ai AFTER INSERT ON entries WHEN {_AUDIT_ON} BEGIN
            INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail)
            VALUES ({_NOW}, 'write', new.actor, new.user_id, new.agent_id, new.project_id, new.session_id,
                    json_array(new.id), json_object('role', new.role, 'category', new.category));
        END;
        CREATE TRIGGER IF NOT EXISTS audit_entries_au AFTER UPDATE ON entries WHEN {_AUDIT_ON} BEGIN
            INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids)
            VALUES ({_NOW},
                    CASE WHEN old.invalid_at IS NULL AND new.invalid_at IS NOT NULL THEN 'supersede'
                         ELSE 'update' END,
                    NULL, new.user_id, new.agent_id, new.project_id, new.session_id, json_array(new.id));
        END;
        {_AUDIT_HISTORY_AND_DELETE}
        -- keep at most meta.audit_max_rows rows: the oldest go first
        CREATE TRIGGER IF NOT EXISTS audit_log_prune AFTER INSERT ON audit_log
            WHEN (SELECT value FROM meta WHERE key = 'audit_max_rows') IS NOT NULL BEGIN
            DELETE FROM audit_log
            WHERE seq <= new.seq - (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'audit_max_rows');
        END;
        """
    )


def _add_columns(conn: Any, table: str, columns: dict[str, str]) -> None:
    """``ALTER TABLE ... ADD COLUMN`` for the columns ``table`` lacks: a file whose version was set back
    (a copy restored over a newer schema, or a test building an "old" file from a new one) migrates too."""
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    for name, decl in columns.items():
        if name not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


def m007_importance_archive(conn: Any) -> None:
    """Importance per entry, archival (capacity, consolidation) and per-scope capacities.

    ``entry_history`` is rebuilt to allow ARCHIVE / RESTORE events (SQLite cannot alter a CHECK);
    the audit triggers that read it are recreated, the UPDATE one telling archive and restore from
    other updates. Existing entries get their rule-based importance (``rules/importance.py``)
    from what is stored: category, role, whether ingest derived it as a fact, its entity count.
    """
    from ...rules.importance import rule_importance

    _add_columns(conn, "entries", {"importance": "REAL", "archived_at": "TEXT"})
    _run_tables(conn, CAPACITY_TABLE)
    _run_script(conn,
        """
        -- capacity's per-write count of a scope's live entries, index-only
        CREATE INDEX IF NOT EXISTS entries_archived ON entries (scope_key, archived_at, invalid_at, expires_at);
        -- BM25's per-filter count stays index-only (m003) with the archived filter every read now has
        DROP INDEX IF EXISTS entries_user_live;
        CREATE INDEX entries_user_live ON entries (user_id, invalid_at, archived_at, expires_at);

        DROP TRIGGER IF EXISTS audit_entries_au;
        DROP TRIGGER IF EXISTS audit_entries_ad;
        DROP TRIGGER IF EXISTS audit_history_update;
        """
    )
    # before the audit trigger returns: the backfill is no one's update
    rows = conn.execute(
        "SELECT e.rid, e.category, e.role, e.metadata ->> '$.derived', "
        "(SELECT count(*) FROM entity_entries x WHERE x.entry_id = e.id) FROM entries e").fetchall()
    conn.executemany("UPDATE entries SET importance = ? WHERE rid = ?",
                     [(rule_importance(category=r[1], role=r[2], derived=r[3] == "fact", entities=r[4]), r[0])
                      for r in rows])
    _run_script(conn,
        f"""
        CREATE TABLE entry_history_v7 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            entry_id TEXT NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE', 'ARCHIVE', 'RESTORE')),
            old_value TEXT,
            new_value TEXT,
            created_at TEXT NOT NULL,
            actor TEXT,
            role TEXT
        );
        INSERT INTO entry_history_v7 (seq, id, entry_id, event, old_value, new_value, created_at, actor, role)
            SELECT seq, id, entry_id, event, old_value, new_value, created_at, actor, role FROM entry_history;
        DROP TABLE entry_history;
        ALTER TABLE entry_history_v7 RENAME TO entry_history;
        CREATE INDEX entry_history_entry ON entry_history (entry_id, seq);

        -- archive / restore write their history event (actor, and the reason as new_value) first
        CREATE TRIGGER audit_entries_au AFTER UPDATE ON entries WHEN {_AUDIT_ON} BEGIN
            INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids, detail)
            SELECT {_NOW}, k.kind,
                   CASE WHEN k.kind IN ('archive', 'restore') THEN h.actor END,
                   new.user_id, new.agent_id, new.project_id, new.session_id, json_array(new.id),
                   CASE WHEN k.kind = 'archive' THEN json_object('reason', h.new_value) ELSE '{{}}' END
            FROM (SELECT CASE WHEN old.archived_at IS NULL AND new.archived_at IS NOT NULL THEN 'archive'
                              WHEN old.archived_at IS NOT NULL AND new.archived_at IS NULL THEN 'restore'
                              WHEN old.invalid_at IS NULL AND new.invalid_at IS NOT NULL THEN 'supersede'
                              ELSE 'update' END AS kind) k
            LEFT JOIN (SELECT actor, new_value FROM entry_history WHERE entry_id = new.id
                       AND event IN ('ARCHIVE', 'RESTORE') ORDER BY seq DESC LIMIT 1) h ON 1;
        END;
        {_AUDIT_HISTORY_AND_DELETE}
        """
    )


def m008_governance(conn: Any) -> None:
    """Provenance and trust on every entry, per-scope permission policies, and conflicts
    (``store/sql/governance.py``, docs/lifecycle.md).

    Existing entries get the trust their role implies (``rules/trust.py``); the audit switch is
    off while they are stamped, so the migration writes no audit row per entry. Idempotent: a file
    that already has the columns keeps their values.
    """
    from ..base import ROLE_TRUST, UNKNOWN_ROLE_TRUST

    have = {row[1] for row in conn.execute("PRAGMA table_info(entries)")}
    fresh = "trust" not in have
    for column, decl in (("trust", "REAL NOT NULL DEFAULT 1.0"), ("source", "TEXT"), ("written_by", "TEXT")):
        if column not in have:
            conn.execute(f"ALTER TABLE entries ADD COLUMN {column} {decl}")
    _run_tables(conn, GOVERNANCE_TABLES)
    if not fresh:
        return
    audit = conn.execute("SELECT value FROM meta WHERE key = 'audit_enabled'").fetchone()
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('audit_enabled', '0')")
    cases = " ".join(f"WHEN '{role}' THEN {trust}" for role, trust in ROLE_TRUST.items())
    conn.execute(f"UPDATE entries SET trust = CASE role {cases} ELSE {UNKNOWN_ROLE_TRUST} END")
    if audit is None:
        conn.execute("DELETE FROM meta WHERE key = 'audit_enabled'")
    else:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'audit_enabled'", (audit[0],))


def m009_skills(conn: Any) -> None:
    """Skill versions (name, version, author, status, verification) and entity drift marks
    (``store/sql/skills.py``, docs/skills.md)."""
    _run_tables(conn, SKILL_TABLES)


# an entry row as JSON: what an audit row of a change to it keeps (``state``), so that replaying the
# log rebuilds the row (``store/sql/replay.py``)
_ENTRY_STATE = "json_object(" + ", ".join(
    # a JSON column that is not valid JSON (an old file's NaN) is kept as its text: the write must not fail
    f"'{c}', CASE WHEN json_valid(e.{c}) THEN json(e.{c}) ELSE e.{c} END" if c in JSON_ENTRY_FIELDS
    else f"'{c}', e.{c}" for c in ENTRY_FIELDS
) + ", 'dedup', e.dedup_key = e.content_hash)"


def m010_outcomes_zones_replay(conn: Any) -> None:
    """Outcomes and the Beta counts behind confidence, approval zones and proposals, and the audit
    log made replayable: each row of an entry's change keeps the row as it became (``state``), and a
    pruned log says so (``meta.audit_pruned``: replay needs the whole log)."""
    _add_columns(conn, "audit_log", {"state": "TEXT"})
    _run_tables(conn, OUTCOME_ZONE_TABLES)
    _run_script(conn,
        f"""
        CREATE TRIGGER IF NOT EXISTS audit_log_state AFTER INSERT ON audit_log
            WHEN new.kind IN ('write', 'update', 'supersede', 'archive', 'restore') AND new.state IS NULL BEGIN
            UPDATE audit_log SET state = (SELECT {_ENTRY_STATE} FROM entries e
                                          WHERE e.id = json_extract(new.entry_ids, '$[0]'))
            WHERE seq = new.seq;
        END;
        DROP TRIGGER IF EXISTS audit_log_prune;
        CREATE TRIGGER audit_log_prune AFTER INSERT ON audit_log
            WHEN (SELECT value FROM meta WHERE key = 'audit_max_rows') IS NOT NULL BEGIN
            INSERT INTO meta (key, value)
                SELECT 'audit_pruned', '1' WHERE EXISTS (SELECT 1 FROM audit_log WHERE seq <= new.seq -
                    (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'audit_max_rows'))
                ON CONFLICT (key) DO UPDATE SET value = '1';
            DELETE FROM audit_log
            WHERE seq <= new.seq - (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'audit_max_rows');
        END;
        """
    )


MIGRATIONS: list[Callable[[Any], None]] = [m001_core, m002_entry_changes, m003_live_count_index,
                                           m004_search_context, m005_injective_scope_keys,
                                           m006_lifecycle, m007_importance_archive, m008_governance,
                                           m009_skills, m010_outcomes_zones_replay]
SCHEMA_VERSION = len(MIGRATIONS)
