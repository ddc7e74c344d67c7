"""Kernel sessions <-> OpenAI threads and conversations.

A thread or conversation is a kernel session with the same id. Its ``metadata`` keys
``user_id`` / ``agent_id`` / ``project_id`` set the session's scope; what only OpenAI knows about it
(its public metadata, tool resources, runs) lives under ``session.metadata["openai"]``, the
adapter's *state*, next to other adapters' keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentbase_kernel import Hit, InvalidArgument, Session

from ._wire import epoch, invalid

__all__ = ["STATE", "check_scope", "context", "conversation", "fixed_scope", "scope_of", "state_of", "thread"]

STATE = "openai"  # the key of session.metadata that holds the adapter's state
_SCOPE_KEYS = ("user_id", "agent_id", "project_id")


def check_scope(**ids: Any) -> dict[str, str]:
    """The scope an adapter (or a server key) is held to: ``user_id`` / ``agent_id`` / ``project_id``
    that are set, each a non-empty str without NUL."""
    scope = {}
    for key, value in ids.items():
        if key not in _SCOPE_KEYS:
            raise InvalidArgument(f"unknown scope key {key!r}: use {', '.join(_SCOPE_KEYS)}")
        if value is None:
            continue
        if not isinstance(value, str) or not value or "\x00" in value:
            raise InvalidArgument(f"{key} must be a non-empty str without NUL, got {value!r:.80}")
        scope[key] = value
    return scope


def scope_of(metadata: Mapping[str, str]) -> dict[str, str]:
    return {key: metadata[key] for key in _SCOPE_KEYS if key in metadata}


def state_of(session: Session) -> dict[str, Any]:
    state = (session.metadata or {}).get(STATE)
    return dict(state) if isinstance(state, dict) else {}


def _public_metadata(session: Session) -> dict[str, str]:
    state = state_of(session)
    if isinstance(state.get("metadata"), dict):
        return dict(state["metadata"])
    # A session another adapter made: its scope is the only metadata it has.
    return {key: str(value) for key, value in session.scope.as_dict().items() if key in _SCOPE_KEYS}


def thread(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "object": "thread",
        "created_at": epoch(session.created_at),
        "metadata": _public_metadata(session),
        "tool_resources": state_of(session).get("tool_resources") or {},
    }


def conversation(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "object": "conversation",
        "created_at": epoch(session.created_at),
        "metadata": _public_metadata(session),
    }


def context(hit: Hit) -> dict[str, Any]:
    return {
        "id": hit.id,
        "content": hit.content,
        "score": hit.score,
        "role": hit.entry.role,
        "message_ids": [p.message_id for p in hit.provenance],
        "created_at": epoch(hit.entry.created_at),
    }


def fixed_scope(session: Session, metadata: dict[str, str], *, param: str) -> dict[str, str]:
    """Keep the scope keys of an update equal to the session's scope (the kernel cannot move a
    session to another scope); an update that omits them keeps them."""
    scope = session.scope.as_dict()
    for key in _SCOPE_KEYS:
        current, wanted = scope.get(key), metadata.get(key)
        if wanted is None and current is not None:
            if len(metadata) >= 16:
                raise invalid(
                    f"Invalid '{param}': '{key}' is this session's scope and counts towards the "
                    "16 keys, so at most 15 other keys fit.",
                    param=param,
                    code="object_above_max_properties",
                )
            metadata[key] = current
        elif wanted is not None and wanted != current:
            raise invalid(
                f"Invalid '{param}.{key}': {key} is the memory scope of this session and is fixed "
                f"when it is created (it is {current!r}); create a new one for another scope.",
                param=f"{param}.{key}",
                code="immutable_scope",
            )
    return metadata


