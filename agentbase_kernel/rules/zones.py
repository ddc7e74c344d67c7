"""Approval zones: which writes need a person's approval, and whose writes count as a person's.

A zone is a scope (each id it sets must match the write's), optionally narrowed to a key prefix
(the ``key`` in the write's metadata, or its ``entry_id``) or a category. A write into a zone lands
only when it comes from a person: approving a proposal (``origin`` ``human_approved``), the CLI and
the dashboard (sources ``cli``, ``dashboard``), a Markdown file a person edited (``human_edited``),
or a kernel opened with ``source="human"``. Every other write there - an agent view, an adapter, the
MCP server, a plain kernel - becomes a proposal.

Entries with a human origin are *human-approved*: an agent-inferred write that would supersede one
(a newer fact on the same subject) never does; the two are kept side by side as a flagged conflict.
"""

from __future__ import annotations

from typing import Any

from ..records import Entry, Scope

__all__ = ["HUMAN_ORIGINS", "HUMAN_SOURCES", "is_human_approved", "zone_for"]

#: the sources of entries a person wrote or approved
HUMAN_ORIGINS = frozenset({"human", "human_approved", "human_edited"})
#: the write paths a person drives (their writes land in a zone)
HUMAN_SOURCES = HUMAN_ORIGINS | {"cli", "dashboard"}


def is_human_approved(entry: Entry) -> bool:
    return (entry.source or "") in HUMAN_ORIGINS


def _covers(zone: dict[str, Any], scope: Scope, category: str | None, key: str | None) -> bool:
    if any(getattr(scope, k) != v for k, v in zone["scope"].as_dict().items()):
        return False
    if zone.get("category") is not None and category != zone["category"]:
        return False
    return zone.get("key_prefix") is None or (key is not None and key.startswith(zone["key_prefix"]))


def zone_for(zones: list[dict[str, Any]], item: dict[str, Any]) -> dict[str, Any] | None:
    """The first zone covering a write ``item`` (its scope ids, ``category``, ``metadata["key"]`` or
    ``entry_id``), or ``None``."""
    if not zones:
        return None
    scope = Scope(item.get("user_id"), item.get("agent_id"), item.get("project_id"), item.get("session_id"))
    key = (item.get("metadata") or {}).get("key")
    key = key if isinstance(key, str) else item.get("entry_id")
    return next((z for z in zones if _covers(z, scope, item.get("category"), key)), None)
