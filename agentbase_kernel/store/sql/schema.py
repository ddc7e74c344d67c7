"""The tables both backends share, written once as DDL over each engine's type names.

Each backend's numbered migrations (``store/sqlite/migrations.py``, ``store/postgres/migrations.py``)
run these statements with its ``SchemaTypes`` at the step where its schema first had them, and add
what is its own (SQLite's FTS5 table and triggers; PostgreSQL's ``tsvector`` columns, GIN indexes
and functions). Rendered with a backend's names, each statement is the one that backend's migration
always ran, so the schema of a new database is the same as before and old files migrate as before.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["AUDIT_TABLES", "CAPACITY_TABLE", "CORE_TABLES", "GOVERNANCE_TABLES", "OUTCOME_ZONE_TABLES", "SKILL_TABLES",
           "SchemaTypes", "statements"]


@dataclass(frozen=True)
class SchemaTypes:
    """An engine's spelling of each kind of column (and of the few clauses that differ)."""

    text: str
    time: str
    json: str
    real: str
    int: str
    bigint: str
    flag: str
    vector: str
    #: an integer primary key that numbers rows in insertion order
    rowid: str
    #: the same, never reusing a number
    serial: str
    #: a ``rid`` column line for link tables where the engine has no implicit row number ("" where it has)
    rid: str
    #: extra ``entries`` column lines (the engine's full-text columns)
    entry_extras: str
    #: the character count function
    length: str


CORE_TABLES = """
CREATE TABLE meta (key {text} PRIMARY KEY, value {text} NOT NULL);

CREATE TABLE entries (
    rid {rowid},
    id {text} NOT NULL UNIQUE,
    context_type {text} NOT NULL DEFAULT 'memory' CHECK (context_type IN ('memory', 'resource', 'skill')),
    category {text},
    l0_abstract {text} NOT NULL CHECK ({length}(l0_abstract) <= 50),
    l1_overview {text} NOT NULL CHECK ({length}(l1_overview) <= 300),
    l2_full {text} NOT NULL,
    tags {json} NOT NULL DEFAULT '[]',
    scope_level {text} NOT NULL CHECK (scope_level IN ('global', 'project', 'agent', 'session')),
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    scope_key {text} NOT NULL,
    role {text},
    actor {text},
    confidence {real} NOT NULL DEFAULT 1.0,
    content_hash {text} NOT NULL,
    dedup_key {text} NOT NULL,
    metadata {json} NOT NULL DEFAULT '{{}}',
    event_dates {json} NOT NULL DEFAULT '[]',
    date_min {text},
    date_max {text},
    flags {json} NOT NULL DEFAULT '[]',
    subject_key {text},
    search_text {text} NOT NULL,{entry_extras}
    created_at {time} NOT NULL,
    updated_at {time} NOT NULL,
    valid_from {time},
    invalid_at {time},
    expires_at {time},
    superseded_by {text}
);
-- exact duplicates in one scope are one entry, across processes too; dedup_key is the content
-- hash, or hash + id for callers that keep duplicates (dedup=False)
CREATE UNIQUE INDEX entries_dedup ON entries (scope_key, dedup_key) WHERE invalid_at IS NULL;
CREATE INDEX entries_user ON entries (user_id, rid);
CREATE INDEX entries_agent ON entries (agent_id, rid);
CREATE INDEX entries_session ON entries (session_id, rid);
CREATE INDEX entries_subject ON entries (scope_key, subject_key) WHERE subject_key IS NOT NULL;
CREATE INDEX entries_hash ON entries (content_hash);

-- one vector per distinct text: embedding is done once per content hash
CREATE TABLE embeddings (
    content_hash {text} PRIMARY KEY,
    vector {vector} NOT NULL
);

CREATE TABLE entry_history (
    seq {serial},
    id {text} NOT NULL UNIQUE,
    entry_id {text} NOT NULL,
    event {text} NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE')),
    old_value {text},
    new_value {text},
    created_at {time} NOT NULL,
    actor {text},
    role {text}
);
CREATE INDEX entry_history_entry ON entry_history (entry_id, seq);

CREATE TABLE sessions (
    {rid}id {text} PRIMARY KEY,
    user_id {text},
    agent_id {text},
    project_id {text},
    metadata {json} NOT NULL DEFAULT '{{}}',
    created_at {time} NOT NULL,
    updated_at {time} NOT NULL,
    committed_at {time},
    summary_entry_id {text} REFERENCES entries (id) ON DELETE SET NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE messages (
    rid {serial},
    id {text} NOT NULL UNIQUE,
    session_id {text} NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq {int} NOT NULL,
    role {text} NOT NULL,
    content {text} NOT NULL,
    name {text},
    metadata {json} NOT NULL DEFAULT '{{}}',
    payload {json},
    status {text} NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at {time} NOT NULL,
    entry_id {text} REFERENCES entries (id) ON DELETE SET NULL,
    UNIQUE (session_id, seq)
);
CREATE INDEX messages_entry ON messages (entry_id);

CREATE TABLE session_entries (
    {rid}session_id {text} NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    entry_id {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    relation {text} NOT NULL DEFAULT 'turn',
    PRIMARY KEY (session_id, entry_id)
);
CREATE INDEX session_entries_entry ON session_entries (entry_id);

CREATE TABLE entry_sources (
    {rid}entry_id {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    message_id {text} NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    PRIMARY KEY (entry_id, message_id)
);
CREATE INDEX entry_sources_message ON entry_sources (message_id);

CREATE TABLE entry_links (
    {rid}src {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    dst {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    relation {text} NOT NULL,
    created_at {time} NOT NULL,
    PRIMARY KEY (src, dst, relation)
);
CREATE INDEX entry_links_dst ON entry_links (dst);

CREATE TABLE entities (
    id {rowid},
    norm {text} NOT NULL,
    label {text} NOT NULL,
    text {text} NOT NULL,
    UNIQUE (norm, label)
);
CREATE TABLE entity_entries (
    entity_id {bigint} NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    entry_id {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, entry_id)
);
CREATE INDEX entity_entries_entry ON entity_entries (entry_id);
CREATE TABLE entity_links (
    a {bigint} NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    b {bigint} NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    entry_id {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    observed_at {time} NOT NULL,
    PRIMARY KEY (a, b, entry_id)
);

CREATE TABLE retrieval_traces (
    {rid}id {text} PRIMARY KEY,
    query {text} NOT NULL,
    scope {json} NOT NULL,
    intents {json} NOT NULL,
    degrade_reason {text},
    result_ids {json} NOT NULL,
    total_ms {real} NOT NULL,
    created_at {time} NOT NULL
);
CREATE TABLE trace_steps (
    trace_id {text} NOT NULL REFERENCES retrieval_traces (id) ON DELETE CASCADE,
    idx {int} NOT NULL,
    name {text} NOT NULL,
    ms {real} NOT NULL,
    candidates {int} NOT NULL,
    params {json} NOT NULL,
    PRIMARY KEY (trace_id, idx)
);
"""

# reinforcement counters (a side table, so bumping them never touches ``entries``) and the audit
# log; each backend feeds the log from triggers of its own
AUDIT_TABLES = """
CREATE TABLE IF NOT EXISTS entry_access (
    entry_id {text} PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    access_count {bigint} NOT NULL DEFAULT 0,
    last_accessed_at {time}
);

CREATE TABLE IF NOT EXISTS audit_log (
    seq {serial},
    at {time} NOT NULL,
    kind {text} NOT NULL,
    actor {text},
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    entry_ids {json} NOT NULL DEFAULT '[]',
    detail {json} NOT NULL DEFAULT '{{}}'
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at);
"""

CAPACITY_TABLE = """
CREATE TABLE IF NOT EXISTS scope_capacity (
    scope_key {text} PRIMARY KEY,
    max_items {int} NOT NULL CHECK (max_items >= 0)
);
"""

# per-scope permission policies and conflicts between two live facts
GOVERNANCE_TABLES = """
CREATE TABLE IF NOT EXISTS scope_policies (
    agent {text} NOT NULL,
    scope_key {text} NOT NULL,
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    can_read {flag} NOT NULL,
    can_write {flag} NOT NULL,
    created_at {time} NOT NULL,
    PRIMARY KEY (agent, scope_key)
);

CREATE TABLE IF NOT EXISTS conflicts (
    id {text} PRIMARY KEY,
    scope_key {text} NOT NULL,
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    subject_key {text},
    entry_a {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    entry_b {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    reason {text} NOT NULL,
    status {text} NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    kept {text},
    actor {text},
    created_at {time} NOT NULL,
    resolved_at {time}
);
CREATE INDEX IF NOT EXISTS conflicts_a ON conflicts (entry_a);
CREATE INDEX IF NOT EXISTS conflicts_b ON conflicts (entry_b);
CREATE INDEX IF NOT EXISTS conflicts_open ON conflicts (status, scope_key);
"""

# outcomes and the confidence they moved (rules/outcomes.py), approval zones and the proposals
# made in them (rules/zones.py)
OUTCOME_ZONE_TABLES = """
CREATE TABLE IF NOT EXISTS outcomes (
    {rid}id {text} PRIMARY KEY,
    session_id {text},
    user_id {text},
    agent_id {text},
    project_id {text},
    outcome_type {text} NOT NULL,
    value {real} NOT NULL,
    weight {real} NOT NULL,
    actor {text},
    trace_ids {json} NOT NULL DEFAULT '[]',
    detail {json} NOT NULL DEFAULT '{{}}',
    created_at {time} NOT NULL,
    reverted_at {time}
);
CREATE INDEX IF NOT EXISTS outcomes_session ON outcomes (session_id);

CREATE TABLE IF NOT EXISTS outcome_effects (
    {rid}outcome_id {text} NOT NULL REFERENCES outcomes (id) ON DELETE CASCADE,
    entry_id {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    success {real} NOT NULL,
    failure {real} NOT NULL,
    confidence_before {real} NOT NULL,
    confidence_after {real} NOT NULL,
    PRIMARY KEY (outcome_id, entry_id)
);
CREATE INDEX IF NOT EXISTS outcome_effects_entry ON outcome_effects (entry_id);

-- the Beta counts behind an entry's confidence, and the confidence they last gave it
CREATE TABLE IF NOT EXISTS entry_confidence (
    entry_id {text} PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    alpha {real} NOT NULL,
    beta {real} NOT NULL,
    confidence {real} NOT NULL
);

CREATE TABLE IF NOT EXISTS approval_zones (
    {rid}id {text} PRIMARY KEY,
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    key_prefix {text},
    category {text},
    actor {text},
    created_at {time} NOT NULL
);

CREATE TABLE IF NOT EXISTS proposals (
    {rid}id {text} PRIMARY KEY,
    status {text} NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    op {text} NOT NULL CHECK (op IN ('add', 'update', 'delete')),
    zone_id {text},
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    entry_id {text},
    text {text},
    fields {json} NOT NULL DEFAULT '{{}}',
    current_text {text},
    proposer {text},
    source {text},
    reason {text},
    created_at {time} NOT NULL,
    decided_at {time},
    decided_by {text},
    decision_reason {text},
    result_entry_id {text}
);
CREATE INDEX IF NOT EXISTS proposals_status ON proposals (status, created_at);
"""

# skills as governed records: each version of a named skill is an entry (context_type 'skill');
# ``current`` is the promoted one, ``candidate`` a newer version waiting for promotion (archived,
# out of search), ``retired`` an older one (superseded). Entity drift: a memory saying an entity is
# deprecated or renamed, read by the skills that name it.
SKILL_TABLES = """
CREATE TABLE IF NOT EXISTS skill_versions (
    entry_id {text} PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    scope_key {text} NOT NULL,
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    name {text} NOT NULL,
    version {int} NOT NULL,
    authored_by {text},
    status {text} NOT NULL CHECK (status IN ('current', 'candidate', 'retired')),
    created_at {time} NOT NULL,
    verified_at {time},
    UNIQUE (scope_key, name, version)
);

CREATE TABLE IF NOT EXISTS entity_drift (
    seq {serial},
    entity {text} NOT NULL,
    kind {text} NOT NULL CHECK (kind IN ('deprecated', 'renamed')),
    replacement {text},
    entry_id {text} NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    user_id {text},
    agent_id {text},
    project_id {text},
    session_id {text},
    created_at {time} NOT NULL
);
CREATE INDEX IF NOT EXISTS entity_drift_entity ON entity_drift (entity);
CREATE INDEX IF NOT EXISTS entity_drift_entry ON entity_drift (entry_id);
"""


def statements(template: str, types: SchemaTypes) -> list[str]:
    """The statements of ``template`` in ``types``' spelling, one each (comments dropped)."""
    script = "\n".join(line for line in template.format(**asdict(types)).splitlines()
                       if not line.lstrip().startswith("--"))
    return [s.strip() for s in script.split(";") if s.strip()]
