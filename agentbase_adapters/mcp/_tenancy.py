"""Whose memories a tool call may touch: the server's one scope, or a scope named on every call.

A single-tenant server (the default) is started for a user and/or agent and its tools take no
scope arguments: the JSON schemas forbid extra properties, so no call can name another scope.
A ``--multi-tenant`` server adds ``user_id`` (required) and ``agent_id`` to every tool instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict, cast

from agentbase_kernel import InvalidArgument

__all__ = ["ID_SCHEMA", "NamedScope", "Scope", "Tenancy"]


class Scope(TypedDict, total=False):
    """The kernel scope keywords a tool call acts within (from the server, or a multi-tenant call)."""

    user_id: str
    agent_id: str


class NamedScope(Scope, total=False):
    """A scope a tool names itself (delete_all_memories), which may narrow to one conversation."""

    session_id: str

ID_SCHEMA: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 512}


@dataclass(frozen=True)
class Tenancy:
    """The scope rule of one server.

    Usage::

        Tenancy(user_id="alice")            # every call acts as alice
        Tenancy(multi=True)                 # every call names user_id (and optionally agent_id)
    """

    user_id: str | None = None
    agent_id: str | None = None
    multi: bool = False

    def __post_init__(self) -> None:
        if self.multi and (self.user_id or self.agent_id):
            raise InvalidArgument("A multi-tenant server takes its scope from each call - "
                                  "drop user_id/agent_id, or drop multi-tenant")
        if not self.multi and not (self.user_id or self.agent_id):
            raise InvalidArgument("A single-tenant server needs a user_id or an agent_id")

    def describe(self) -> str:
        if self.multi:
            return "the scope named by each call's user_id (and agent_id)"
        return " and ".join(f"{k}={v!r}" for k, v in self.fixed().items())

    def fixed(self) -> Scope:
        """The server's own scope (empty for a multi-tenant server)."""
        return cast(Scope, {k: v for k, v in (("user_id", self.user_id), ("agent_id", self.agent_id)) if v})

    def schema(self, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        """A tool's input schema: its own properties, plus the scope ones on a multi-tenant server."""
        if self.multi:
            properties = {
                "user_id": {**ID_SCHEMA, "description": "Whose memories: the end user's id."},
                "agent_id": {**ID_SCHEMA, "description": "Optional: narrow to one agent's memories."},
                **properties}
            required = ["user_id", *required]
        return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}

    def split(self, arguments: dict[str, Any]) -> tuple[Scope, dict[str, Any]]:
        """``(scope, the tool's own arguments)`` of one validated call."""
        if not self.multi:
            return self.fixed(), arguments
        rest = dict(arguments)
        # the schema made user_id (and agent_id, if given) strings
        scope = cast(Scope, {k: rest.pop(k) for k in ("user_id", "agent_id") if k in rest})
        return scope, rest
