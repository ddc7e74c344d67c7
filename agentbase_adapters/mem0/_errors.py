"""Mem0's exceptions, mirrored: ours, and mem0's own classes too whenever mem0 is loaded.

Exception tree::

    InvalidArgument (ValueError)
    └── ValidationError          + mem0.exceptions.ValidationError (a mem0 MemoryError),
                                   when mem0 is loaded at raise time
    EntryNotFound (KeyError)
    └── MemoryNotFound           + ValueError, which open-source Mem0 raises for a missing id

Importing mem0 takes seconds (it loads Qdrant and its LLM clients) and mem0 is optional, so it
is never imported here. Code can only write ``except mem0.exceptions.ValidationError`` once mem0
is imported, so the class is chosen when the error is raised: a subclass of ours and mem0's when
``mem0.exceptions`` is loaded, else ours.
"""

from __future__ import annotations

import sys
from typing import Any

from agentbase_kernel import AgentBaseError, EntryNotFound, InvalidArgument

__all__ = ["MemoryNotFound", "ValidationError", "validation_error"]


class ValidationError(InvalidArgument):
    """Input that Mem0 rejects with ``mem0.exceptions.ValidationError`` (same ``error_code``)."""

    def __init__(
        self,
        message: str,
        error_code: str,
        details: dict[str, Any] | None = None,
        suggestion: str | None = None,
        debug_info: dict[str, Any] | None = None,
    ) -> None:
        Exception.__init__(self, message)
        self.message = message
        self.error_code = error_code
        self.details = details or {}
        self.suggestion = suggestion
        self.debug_info = debug_info or {}


class MemoryNotFound(EntryNotFound, ValueError):
    """No memory with this id: a ``ValueError`` as in Mem0, and our ``EntryNotFound``."""

    def __init__(self, memory_id: str, message: str) -> None:
        AgentBaseError.__init__(self, message)
        self.entry_id = memory_id


_with_mem0s: dict[type, type[ValidationError]] = {}


def validation_error(message: str, error_code: str, **extra: Any) -> ValidationError:
    """Our ``ValidationError``; also an instance of mem0's when ``mem0.exceptions`` is loaded."""
    cls = ValidationError
    theirs = getattr(sys.modules.get("mem0.exceptions"), "ValidationError", None)
    if isinstance(theirs, type) and issubclass(theirs, Exception):
        if theirs not in _with_mem0s:
            _with_mem0s[theirs] = type("ValidationError", (ValidationError, theirs), {"__module__": __name__})
        cls = _with_mem0s[theirs]
    return cls(message, error_code, **extra)
