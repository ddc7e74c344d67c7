"""agentbase: memory for AI agents on a SQLite file (or a PostgreSQL database).

Usage::

    from agentbase_kernel import AgentBase
    db = AgentBase("memory.db")
    await db.add_memory("User prefers Python 3.12", user_id="alice")
"""

from importlib import metadata as _metadata

from .config import POINTER_FILE, Config, DatabaseChoice, locate_database
from .errors import (
    AgentBaseError,
    ClosedError,
    DatabaseLocked,
    DuplicateEntry,
    EmbedderUnavailable,
    EmbeddingMismatch,
    EntryNotFound,
    ImportConflict,
    IncompleteAuditLog,
    IncompleteExport,
    IntegrityError,
    InvalidArgument,
    MessageNotFound,
    MissingDependency,
    NoEmbedderWarning,
    NotFoundError,
    PermissionDenied,
    SchemaTooNew,
    ScopeError,
    SessionNotFound,
    SkillNotFound,
    StorageError,
    WrongType,
)
from .governance import AsyncGovernance, Governance
from .ingest.streams import speaker_prefix
from .kernel import AgentBase, Kernel
from .lifecycle import AuditEvent, Prefetch
from .outcomes import AsyncOutcomes, Outcomes
from .proposals import AsyncProposals, Proposals
from .records import (
    AddResult,
    ContextType,
    Entry,
    FindResult,
    HistoryEvent,
    Hit,
    Message,
    Outcome,
    Proposal,
    Provenance,
    Scope,
    ScopeLevel,
    Session,
    Skill,
    SkillWarning,
    Trace,
    TraceStep,
    Zone,
)
from .rules.conflicts import Conflict
from .rules.permissions import Policy
from .scoped import AsyncScopedMemory, ScopedMemory
from .sessions import AsyncSessions, Sessions
from .skills import AsyncSkills, Skills
from .store.postgres.url import is_postgres_url, redact_url
from .text.embedders import Embedder, OpenAICompatibleEmbedder, get_embedder
from .threads import in_thread, on_calling_loop

try:  # one source of truth: the version in pyproject.toml, as installed
    __version__ = _metadata.version("agentbase-memory")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AddResult",
    "AgentBase",
    "AgentBaseError",
    "AsyncGovernance",
    "AsyncOutcomes",
    "AsyncProposals",
    "AsyncScopedMemory",
    "AsyncSessions",
    "AsyncSkills",
    "AuditEvent",
    "ClosedError",
    "Config",
    "Conflict",
    "ContextType",
    "DatabaseChoice",
    "DatabaseLocked",
    "DuplicateEntry",
    "Embedder",
    "EmbedderUnavailable",
    "EmbeddingMismatch",
    "Entry",
    "EntryNotFound",
    "FindResult",
    "Governance",
    "HistoryEvent",
    "Hit",
    "ImportConflict",
    "IncompleteAuditLog",
    "IncompleteExport",
    "IntegrityError",
    "InvalidArgument",
    "Kernel",
    "Message",
    "MessageNotFound",
    "MissingDependency",
    "NoEmbedderWarning",
    "NotFoundError",
    "OpenAICompatibleEmbedder",
    "Outcome",
    "Outcomes",
    "POINTER_FILE",
    "PermissionDenied",
    "Policy",
    "Prefetch",
    "Proposal",
    "Proposals",
    "Provenance",
    "SchemaTooNew",
    "Scope",
    "ScopeError",
    "ScopeLevel",
    "ScopedMemory",
    "Session",
    "SessionNotFound",
    "Sessions",
    "Skill",
    "SkillNotFound",
    "SkillWarning",
    "Skills",
    "StorageError",
    "Trace",
    "TraceStep",
    "WrongType",
    "Zone",
    "get_embedder",
    "in_thread",
    "is_postgres_url",
    "locate_database",
    "on_calling_loop",
    "redact_url",
    "speaker_prefix",
]
