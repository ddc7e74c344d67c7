"""The agentbase exception tree.

Every error the kernel raises on purpose is an ``AgentBaseError``; a raw ``sqlite3`` error never
reaches a caller. Each class also subclasses the builtin that callers already catch::

    AgentBaseError
    ├── NotFoundError (KeyError)
    │   ├── EntryNotFound
    │   ├── SessionNotFound
    │   ├── MessageNotFound
    │   └── SkillNotFound
    ├── InvalidArgument (ValueError)
    │   ├── WrongType (TypeError too)
    │   ├── ScopeError
    │   ├── DuplicateEntry
    │   ├── ImportConflict
    │   ├── IncompleteExport
    │   └── IncompleteAuditLog
    ├── StorageError
    │   ├── DatabaseLocked
    │   ├── SchemaTooNew
    │   ├── EmbeddingMismatch
    │   └── IntegrityError
    ├── ClosedError (RuntimeError)
    ├── EmbedderUnavailable (ConnectionError)
    ├── PermissionDenied (PermissionError)
    └── MissingDependency (ImportError)

    NoEmbedderWarning (UserWarning)     semantic search is off: no embedder could be loaded
"""

from __future__ import annotations

__all__ = [
    "AgentBaseError",
    "ClosedError",
    "DatabaseLocked",
    "DuplicateEntry",
    "EmbedderUnavailable",
    "EmbeddingMismatch",
    "EntryNotFound",
    "ImportConflict",
    "IncompleteAuditLog",
    "IncompleteExport",
    "IntegrityError",
    "InvalidArgument",
    "MessageNotFound",
    "MissingDependency",
    "NoEmbedderWarning",
    "NotFoundError",
    "PermissionDenied",
    "SchemaTooNew",
    "ScopeError",
    "SessionNotFound",
    "SkillNotFound",
    "StorageError",
    "WrongType",
]


class AgentBaseError(Exception):
    """Base class of every error agentbase raises on purpose."""

    def __str__(self) -> str:  # KeyError quotes its message; we never want that
        return str(self.args[0]) if self.args else self.__class__.__name__


class NotFoundError(AgentBaseError, KeyError):
    """Something looked up by id does not exist (or is outside the caller's scope)."""


class EntryNotFound(NotFoundError):
    """No entry with this id in the given scope."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"No entry with id {entry_id!r} in this scope")
        self.entry_id = entry_id


class SessionNotFound(NotFoundError):
    """No session with this id in the given scope."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"No session with id {session_id!r} in this scope")
        self.session_id = session_id


class MessageNotFound(NotFoundError):
    """No message with this id in the session."""

    def __init__(self, message_id: str, session_id: str | None = None) -> None:
        where = f" in session {session_id!r}" if session_id else ""
        super().__init__(f"No message with id {message_id!r}{where}")
        self.message_id = message_id
        self.session_id = session_id


class SkillNotFound(NotFoundError):
    """No skill with this name (or version) in the given scope."""

    def __init__(self, name: str, version: int | None = None) -> None:
        which = f" version {version}" if version is not None else ""
        super().__init__(f"No skill {name!r}{which} in this scope - add_skill creates it; list_skills shows "
                         "the names a scope has")
        self.name = name
        self.version = version


class InvalidArgument(AgentBaseError, ValueError):
    """An argument has the wrong type or value; ``param`` names it when known."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.code = code


class WrongType(InvalidArgument, TypeError):
    """An argument of the wrong type: also a ``TypeError``, which Python and the frameworks raise there."""


class ScopeError(InvalidArgument):
    """A scope is missing where one is required, or a scope id is malformed."""


class DuplicateEntry(InvalidArgument):
    """An update would make an entry identical to another live entry of the same scope."""

    def __init__(self, message: str, *, existing_id: str) -> None:
        super().__init__(message, code="duplicate_entry")
        self.existing_id = existing_id


class IncompleteAuditLog(InvalidArgument):
    """The audit log does not hold every change a replay needs (pruned, switched off, or older rows)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message, code="incomplete_audit_log")
        self.reason = reason


class ImportConflict(InvalidArgument):
    """An imported record names a row (or points at one) of a scope the import may not write into."""

    def __init__(self, message: str, *, kind: str, record_id: str | None, where: str) -> None:
        super().__init__(message, code="import_conflict")
        self.kind = kind
        self.record_id = record_id
        self.where = where


class IncompleteExport(InvalidArgument):
    """An export file ends before its trailer, or does not match it (truncated or edited)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="incomplete_export")


class StorageError(AgentBaseError):
    """The database file cannot be used as asked."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class DatabaseLocked(StorageError):
    """Another writer held the database for longer than the busy timeout allows."""


class SchemaTooNew(StorageError):
    """The file was written by a newer agentbase; it is left untouched."""


class EmbeddingMismatch(StorageError):
    """The embedder does not match the one that wrote this file's vectors."""


class IntegrityError(StorageError):
    """A consistency check of the file failed."""


class ClosedError(AgentBaseError, RuntimeError):
    """The database has been closed."""


class EmbedderUnavailable(AgentBaseError, ConnectionError):
    """A remote embedder failed, timed out, or its circuit breaker is open.

    Writes never raise it (their vectors are queued and backfilled) and ``find`` degrades to
    FTS + NER instead; direct ``embed`` calls and ``rebuild`` do raise it. ``retry_in`` is how many
    seconds until the breaker lets a call through again (0 when it may be tried now).
    """

    def __init__(self, message: str, *, reason: str, retry_in: float = 0.0) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_in = retry_in


class PermissionDenied(AgentBaseError, PermissionError):
    """A scope policy forbids this agent the read or write it asked for (``Kernel.grant``)."""

    def __init__(self, message: str, *, agent: str | None = None, access: str | None = None,
                 scope: dict[str, str] | None = None, operation: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent
        self.access = access
        self.scope = scope or {}
        self.operation = operation


class MissingDependency(AgentBaseError, ImportError):
    """An optional dependency is not installed; the message names the extra."""


class NoEmbedderWarning(UserWarning):
    """``embedder="auto"`` found no embedder: searches use full text and entities only (warned once)."""
