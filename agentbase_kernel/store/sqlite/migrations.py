"""Numbered forward migrations, applied on open, each in its own transaction.

The schema version is ``PRAGMA user_version``. A file whose version is newer than
``SCHEMA_VERSION`` was written by a newer agentbase and is refused untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def m001_core(conn: Any) -> None:
    _run_script(conn,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE entries (
            rid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            context_type TEXT NOT NULL DEFAULT 'memory'
                CHECK (context_type IN ('memory', 'resource', 'skill')),
            category TEXT,
            l0_abstract TEXT NOT NULL CHECK (length(l0_abstract) <= 50),
            l1_overview TEXT NOT NULL CHECK (length(l1_overview) <= 300),
            l2_full TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            scope_level TEXT NOT NULL CHECK (scope_level IN ('global', 'project', 'agent', 'session')),
            user_id TEXT,
            agent_id TEXT,
            project_id TEXT,
            session_id TEXT,
            scope_key TEXT NOT NULL,
            role TEXT,
            actor TEXT,
            confidence REAL NOT NULL DEFAULT 1.0,
            content_hash TEXT NOT NULL,
            dedup_key TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            event_dates TEXT NOT NULL DEFAULT '[]',
            date_min TEXT,
            date_max TEXT,
            flags TEXT NOT NULL DEFAULT '[]',
            subject_key TEXT,
            search_text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            valid_from TEXT,
            invalid_at TEXT,
            expires_at TEXT,
            superseded_by TEXT
        );
        -- exact duplicates in one scope are one entry, across processes too
        -- dedup_key is the content hash, or hash + id for callers that keep duplicates (dedup=False)
        CREATE UNIQUE INDEX entries_dedup ON entries (scope_key, dedup_key) WHERE invalid_at IS NULL;
        CREATE INDEX entries_user ON entries (user_id, rid);
        CREATE INDEX entries_agent ON entries (agent_id, rid);
        CREATE INDEX entries_session ON entries (session_id, rid);
        CREATE INDEX entries_subject ON entries (scope_key, subject_key) WHERE subject_key IS NOT NULL;
        CREATE INDEX entries_hash ON entries (content_hash);

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

        -- one vector per distinct text: embedding is done once per content hash
        CREATE TABLE embeddings (
            content_hash TEXT PRIMARY KEY,
            vector BLOB NOT NULL
        );

        CREATE TABLE entry_history (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            entry_id TEXT NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE')),
            old_value TEXT,
            new_value TEXT,
            created_at TEXT NOT NULL,
            actor TEXT,
            role TEXT
        );
        CREATE INDEX entry_history_entry ON entry_history (entry_id, seq);

        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            user_id TEXT,
            agent_id TEXT,
            project_id TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            committed_at TEXT,
            summary_entry_id TEXT REFERENCES entries (id) ON DELETE SET NULL
        );
        CREATE INDEX sessions_user ON sessions (user_id);

        CREATE TABLE messages (
            rid INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            name TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            payload TEXT,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
            created_at TEXT NOT NULL,
            entry_id TEXT REFERENCES entries (id) ON DELETE SET NULL,
            UNIQUE (session_id, seq)
        );
        CREATE INDEX messages_entry ON messages (entry_id);

        CREATE TABLE session_entries (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            relation TEXT NOT NULL DEFAULT 'turn',
            PRIMARY KEY (session_id, entry_id)
        );
        CREATE INDEX session_entries_entry ON session_entries (entry_id);

        CREATE TABLE entry_sources (
            entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
            PRIMARY KEY (entry_id, message_id)
        );
        CREATE INDEX entry_sources_message ON entry_sources (message_id);

        CREATE TABLE entry_links (
            src TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            dst TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            relation TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (src, dst, relation)
        );
        CREATE INDEX entry_links_dst ON entry_links (dst);

        CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            norm TEXT NOT NULL,
            label TEXT NOT NULL,
            text TEXT NOT NULL,
            UNIQUE (norm, label)
        );
        CREATE TABLE entity_entries (
            entity_id INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
            entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            PRIMARY KEY (entity_id, entry_id)
        );
        CREATE INDEX entity_entries_entry ON entity_entries (entry_id);
        CREATE TABLE entity_links (
            a INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
            b INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
            entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            observed_at TEXT NOT NULL,
            PRIMARY KEY (a, b, entry_id)
        );

        CREATE TABLE retrieval_traces (
            id TEXT PRIMARY KEY,
            query TEXT NOT NULL,
            scope TEXT NOT NULL,
            intents TEXT NOT NULL,
            degrade_reason TEXT,
            result_ids TEXT NOT NULL,
            total_ms REAL NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE trace_steps (
            trace_id TEXT NOT NULL REFERENCES retrieval_traces (id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            name TEXT NOT NULL,
            ms REAL NOT NULL,
            candidates INTEGER NOT NULL,
            params TEXT NOT NULL,
            PRIMARY KEY (trace_id, idx)
        );
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


def m006_lifecycle(conn: Any) -> None:
    """Reinforcement counters (a side table, so bumping them never touches ``entries``, its FTS
    index or the search caches) and the audit log, fed by triggers in the writing transaction.
    Idempotent: a file whose version was set back re-runs it harmlessly."""
    _run_script(conn,
        f"""
        CREATE TABLE IF NOT EXISTS entry_access (
            entry_id TEXT PRIMARY KEY REFERENCES entries(id) ON DELETE CASCADE,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at TEXT
        );

        CREATE TABLE IF NOT EXISTS audit_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,
            actor TEXT,
            user_id TEXT,
            agent_id TEXT,
            project_id TEXT,
            session_id TEXT,
            entry_ids TEXT NOT NULL DEFAULT '[]',
            detail TEXT NOT NULL DEFAULT '{{}}'
        );
        CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log(at);

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
    _run_script(conn,
        """
        -- capacity's per-write count of a scope's live entries, index-only
        CREATE INDEX IF NOT EXISTS entries_archived ON entries (scope_key, archived_at, invalid_at, expires_at);
        -- BM25's per-filter count stays index-only (m003) with the archived filter every read now has
        DROP INDEX IF EXISTS entries_user_live;
        CREATE INDEX entries_user_live ON entries (user_id, invalid_at, archived_at, expires_at);

        CREATE TABLE IF NOT EXISTS scope_capacity (
            scope_key TEXT PRIMARY KEY,
            max_items INTEGER NOT NULL CHECK (max_items >= 0)
        );

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
        CREATE TRIGGER audit_history_update AFTER INSERT ON entry_history
            WHEN new.event = 'UPDATE' AND {_AUDIT_ON} BEGIN
            UPDATE audit_log SET actor = new.actor
            WHERE seq = (SELECT max(seq) FROM audit_log WHERE kind = 'update'
                         AND entry_ids = json_array(new.entry_id));
        END;
        CREATE TRIGGER audit_entries_ad AFTER DELETE ON entries WHEN {_AUDIT_ON} BEGIN
            INSERT INTO audit_log (at, kind, actor, user_id, agent_id, project_id, session_id, entry_ids)
            VALUES ({_NOW}, 'delete',
                    (SELECT actor FROM entry_history WHERE entry_id = old.id AND event = 'DELETE'
                     ORDER BY seq DESC LIMIT 1),
                    old.user_id, old.agent_id, old.project_id, old.session_id, json_array(old.id));
        END;
        """
    )


def m008_governance(conn: Any) -> None:
    """Provenance and trust on every entry, per-scope permission policies, and conflicts (issue 22
    items 5, 6, 8; ``store/sqlite/governance.py``, docs/lifecycle.md).

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
    _run_script(conn,
        """
        CREATE TABLE IF NOT EXISTS scope_policies (
            agent TEXT NOT NULL,
            scope_key TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            project_id TEXT,
            session_id TEXT,
            can_read INTEGER NOT NULL,
            can_write INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (agent, scope_key)
        );

        CREATE TABLE IF NOT EXISTS conflicts (
            id TEXT PRIMARY KEY,
            scope_key TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            project_id TEXT,
            session_id TEXT,
            subject_key TEXT,
            entry_a TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            entry_b TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            reason TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
            kept TEXT,
            actor TEXT,
            created_at TEXT NOT NULL,
            resolved_at TEXT
        );
        CREATE INDEX IF NOT EXISTS conflicts_a ON conflicts (entry_a);
        CREATE INDEX IF NOT EXISTS conflicts_b ON conflicts (entry_b);
        CREATE INDEX IF NOT EXISTS conflicts_open ON conflicts (status, scope_key);
        """
    )
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


MIGRATIONS: list[Callable[[Any], None]] = [m001_core, m002_entry_changes, m003_live_count_index,
                                           m004_search_context, m005_injective_scope_keys,
                                           m006_lifecycle, m007_importance_archive, m008_governance]
SCHEMA_VERSION = len(MIGRATIONS)
