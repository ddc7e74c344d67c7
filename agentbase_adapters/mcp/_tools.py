"""The memory tools: for each, a JSON schema, a one-line description and one kernel call.

Every tool is ``async run(db, scope, args) -> dict``; ``scope`` comes from ``Tenancy.split`` and
is passed to every kernel call, so a tool cannot read or change memories outside it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from agentbase_kernel import AgentBase, InvalidArgument, ScopeError

from ._records import entry_json, event_json, hit_json, message_json, session_json
from ._tenancy import ID_SCHEMA, NamedScope, Scope

__all__ = ["LIMITS", "TOOLS", "ToolSpec"]

# What one call may carry: a memory is a note, not a document; a model that needs more calls again.
LIMITS = {"text": 20_000, "query": 2_000, "messages": 100, "top_k": 100, "page": 200, "metadata_bytes": 16_384,
          "tags": 32, "tag": 128, "filter_bytes": 8_192, "export": 1_000}

Run = Callable[[AgentBase, Scope, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool as listed to clients: name, description, own properties, and what it runs."""

    name: str
    description: str
    properties: dict[str, Any]
    required: list[str]
    run: Run
    read_only: bool = False
    destructive: bool = False
    scoped_by_tenancy: bool = True  # False: the tool names its scope itself (delete_all_memories)


TOOLS: dict[str, ToolSpec] = {}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str] | None = None, *,
          read_only: bool = False, destructive: bool = False, scoped_by_tenancy: bool = True) -> Callable[[Run], Run]:
    def register(run: Run) -> Run:
        TOOLS[name] = ToolSpec(name, description, properties, required or [], run, read_only, destructive,
                               scoped_by_tenancy)
        return run

    return register


# -- shared schema pieces ----------------------------------------------------------------------
_TEXT = {"type": "string", "minLength": 1, "maxLength": LIMITS["text"]}
_MEMORY_ID = {**ID_SCHEMA, "description": "A memory id, as returned by add_memory, search_memories or list_memories."}
_SESSION_ID = {**ID_SCHEMA, "description": "A conversation id of your choosing, e.g. 'chat-2026-12-01'."}
_METADATA = {"type": "object", "maxProperties": 64,
             "description": "JSON key/values stored with the memory, usable in filters later."}
_TAGS = {"type": "array", "maxItems": LIMITS["tags"], "items": {"type": "string", "minLength": 1,
                                                                "maxLength": LIMITS["tag"]}}
_CATEGORY = {"type": "string", "minLength": 1, "maxLength": 128,
             "description": "A label such as 'preference', 'fact', 'task'."}
_WHEN = {"type": "string", "maxLength": 64, "description": "ISO date or date-time, e.g. 2026-11-30 or 2026-11-30T09:00Z."}
_FILTERS = {
    "type": "object", "maxProperties": 32,
    "description": ("Metadata filter: {key: value} for equality, or {key: {op: operand}} with op one of eq ne gt gte "
                    "lt lte in nin contains icontains exists startswith; dotted keys reach nested values; combine "
                    "with {\"AND\": [...]}, {\"OR\": [...]}, {\"NOT\": {...}}."),
}
_SELECT = {
    "filters": _FILTERS,
    "category": {**_CATEGORY, "description": "Only memories with this category."},
    "tags": {**_TAGS, "description": "Only memories carrying all of these tags."},
    "since": {**_WHEN, "description": "Only memories created at or after this time (ISO)."},
    "until": {**_WHEN, "description": "Only memories created at or before this time (ISO)."},
    "session_id": {**ID_SCHEMA, "description": "Only memories made from this conversation."},
}


def _selection(args: dict[str, Any]) -> dict[str, Any]:
    """The kernel keywords of the shared filter arguments."""
    filters = args.get("filters")
    if filters is not None and len(json.dumps(filters, default=str)) > LIMITS["filter_bytes"]:
        raise InvalidArgument(f"filters is larger than {LIMITS['filter_bytes']} bytes of JSON")
    return {"metadata": filters, "category": args.get("category"), "tags": args.get("tags"),
            "since": args.get("since"), "until": args.get("until"), "session_id": args.get("session_id")}


def _check_metadata(metadata: Any) -> Any:
    if metadata is not None and len(json.dumps(metadata, default=str).encode("utf-8", "replace")) > LIMITS["metadata_bytes"]:
        raise InvalidArgument(f"metadata is larger than {LIMITS['metadata_bytes']} bytes of JSON")
    return metadata


async def _owned(db: AgentBase, scope: Scope, memory_id: str) -> Any:
    """The entry if it is in ``scope``; ``EntryNotFound`` (the same message as a missing id) otherwise."""
    return await db.get(memory_id, **scope)


# -- memories ----------------------------------------------------------------------------------
_ROLE = {"type": "string", "enum": ["user", "assistant", "system", "tool"]}


@_tool("add_memory",
       "Store something worth remembering about the user or task: pass text (one memory) or messages "
       "(conversation turns, each stored); extract=true also stores short facts found in it.",
       {"text": {**_TEXT, "description": "The memory, in plain words, e.g. 'Prefers answers in French'."},
        "messages": {"type": "array", "minItems": 1, "maxItems": LIMITS["messages"],
                     "description": "Conversation turns to remember, oldest first.",
                     "items": {"type": "object", "required": ["role", "content"], "additionalProperties": False,
                               "properties": {"role": _ROLE, "content": _TEXT,
                                              "name": {"type": "string", "maxLength": 128}}}},
        "extract": {"type": "boolean", "default": False,
                    "description": "Also extract facts (rule-based, no LLM); the text itself is always kept."},
        "metadata": _METADATA, "tags": _TAGS, "category": _CATEGORY,
        "expires_at": {**_WHEN, "description": "Forget this memory after this time (ISO)."}})
async def add_memory(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    text, messages = args.get("text"), args.get("messages")
    if (text is None) == (messages is None):
        raise InvalidArgument("Pass either text or messages, not both or neither")
    common = {**scope, "metadata": _check_metadata(args.get("metadata")), "tags": args.get("tags"),
              "category": args.get("category"), "infer": bool(args.get("extract", False)),
              "expires_at": args.get("expires_at")}
    if messages is None:
        results = [await db.add_memory(cast(str, text), **common)]  # messages is None: text is not
    else:
        results = await db.add_memories([{"text": m["content"], "role": m["role"], "actor": m.get("name"), **common}
                                         for m in messages])
    return {"results": [{"id": r.id, "event": r.event, "text": r.entry.l2_full,
                         **({"proposal_id": r.proposal_id} if r.proposal_id else {}), **_facts(r)} for r in results]}


def _facts(result: Any) -> dict[str, Any]:
    """The facts extracted beside the memory (a fact equal to the memory itself is the memory)."""
    facts = [{"id": f.id, "text": f.entry.l2_full} for f in result.facts if f.id != result.id]
    return {"facts": facts} if facts else {}


@_tool("search_memories",
       "Find memories relevant to a question or topic (keyword + semantic search), best first, with why each matched.",
       {"query": {"type": "string", "minLength": 1, "maxLength": LIMITS["query"],
                  "description": "What to look for, in natural language."},
        "top_k": {"type": "integer", "minimum": 1, "maximum": LIMITS["top_k"], "default": 10},
        **_SELECT,
        "as_of": {**_WHEN, "description": "Search what was true at this time: facts superseded later still count."},
        "min_score": {"type": "number", "minimum": 0, "maximum": 1,
                      "description": ("Leave out results scoring below this (scores are calibrated relevance in "
                                      "[0, 1], comparable across queries), e.g. 0.3.")}},
       ["query"], read_only=True)
async def search_memories(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    found = await db.find(args["query"], top_k=args.get("top_k", 10), as_of=args.get("as_of"),
                          min_score=args.get("min_score"), **scope, **_selection(args))
    out: dict[str, Any] = {"results": [hit_json(h) for h in found], "trace_id": found.trace.id}
    if found.degrade_reason:
        out["degraded"] = found.degrade_reason
    if found.skill_warnings:
        out["skill_warnings"] = [w.message for w in found.skill_warnings]
    return out


@_tool("recall_for_entities",
       "Before acting on files, tables, URLs or ids: the memories and skills linked to them (what happened the "
       "last times they were touched), best first, within a token budget; stale skills come with warnings.",
       {"entities": {"type": "array", "minItems": 1, "maxItems": 32,
                     "items": {"type": "string", "minLength": 1, "maxLength": 1024},
                     "description": "File paths, table names, URLs or ids, e.g. ['src/app/db.py', 'orders']."},
        "top_k": {"type": "integer", "minimum": 1, "maximum": LIMITS["top_k"], "default": 10},
        "budget_tokens": {"type": "integer", "minimum": 1, "maximum": 100_000,
                          "description": "Keep the results within about this many tokens."}},
       ["entities"], read_only=True)
async def recall_for_entities(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    found = await db.retrieve_by_entities(args["entities"], top_k=args.get("top_k", 10),
                                          budget_tokens=args.get("budget_tokens"), **scope)
    out: dict[str, Any] = {"results": [hit_json(h) for h in found]}
    if found.skill_warnings:
        out["skill_warnings"] = [w.message for w in found.skill_warnings]
    return out


@_tool("list_skills",
       "List the named skills (how-tos) stored for this scope: version, author, health in [0, 1] and a warning "
       "when a skill is stale or names something since deprecated or renamed.",
       {}, read_only=True)
async def list_skills(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    return {"skills": [{"name": s.name, "version": s.version, "id": s.id, "text": s.text, "health": s.health,
                        **({"authored_by": s.authored_by} if s.authored_by else {}),
                        **({"warning": s.warning.message} if s.warning else {})}
                       for s in await db.list_skills(**scope)]}


# -- governance: proposals and outcomes (an agent proposes and reports; a person approves) ---------
_OP = {"type": "string", "enum": ["add", "update", "delete"], "default": "add",
       "description": "add a memory (text), change one's text (memory_id and text) or delete one (memory_id)."}
_PROPOSAL_STATUS = {"type": "string", "enum": ["pending", "approved", "rejected", "all"], "default": "pending"}


def _proposal_json(p: Any) -> dict[str, Any]:
    return {"id": p.id, "status": p.status, "op": p.op, "text": p.text, "memory_id": p.entry_id,
            "current_text": p.current_text, "proposer": p.proposer, "reason": p.reason,
            "created_at": p.created_at.isoformat() if p.created_at else None,
            **({"decision_reason": p.decision_reason} if p.decision_reason else {}),
            **({"written_memory_id": p.result_entry_id} if p.result_entry_id else {})}


@_tool("propose_memory",
       "Propose a memory change for a person to approve (a protected scope turns add_memory into this too): "
       "nothing is written until they approve it; you cannot approve it yourself.",
       {"op": _OP, "text": {**_TEXT, "description": "The memory to add, or the corrected text."},
        "memory_id": {**_MEMORY_ID, "description": "The memory to change or delete."},
        "reason": {"type": "string", "minLength": 1, "maxLength": 2_000,
                   "description": "Why, for the person who decides."},
        "metadata": _METADATA, "tags": _TAGS, "category": _CATEGORY})
async def propose_memory(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    proposal = await db.propose(args.get("text"), op=args.get("op", "add"), entry_id=args.get("memory_id"),
                                reason=args.get("reason"), metadata=_check_metadata(args.get("metadata")),
                                tags=args.get("tags") or (), category=args.get("category"), **scope)
    return _proposal_json(proposal)


@_tool("list_proposals", "List the memory changes proposed in this scope (pending ones unless status says otherwise).",
       {"status": _PROPOSAL_STATUS,
        "limit": {"type": "integer", "minimum": 1, "maximum": LIMITS["page"], "default": 50}}, read_only=True)
async def list_proposals(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    status = args.get("status", "pending")
    found = await db.list_proposals(status=None if status == "all" else status, limit=args.get("limit", 50), **scope)
    return {"proposals": [_proposal_json(p) for p in found]}


@_tool("record_outcome",
       "Report how a conversation's task went: the memories search_memories returned in it (or used_memory_ids) "
       "gain confidence on success and lose it on failure.",
       {"session_id": {**_SESSION_ID, "description": "The conversation whose searches are judged."},
        "outcome": {"type": "string", "enum": ["success", "partial", "failure"]},
        "used_memory_ids": {"type": "array", "minItems": 1, "maxItems": LIMITS["top_k"], "items": _MEMORY_ID,
                       "description": "Only these memories (the ones actually used)."}},
       ["session_id", "outcome"])
async def record_outcome(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    for memory_id in args.get("used_memory_ids") or ():
        await _owned(db, scope, memory_id)
    outcome = await db.record_outcome(args["session_id"], args["outcome"], entry_ids=args.get("used_memory_ids"),
                                      **scope)
    return {"outcome_id": outcome.id, "memories": [{"id": e["entry_id"], "confidence": e["confidence_after"]}
                                                   for e in outcome.effects]}


@_tool("get_memory", "Read one memory by id, with its metadata, tags and timestamps.",
       {"memory_id": _MEMORY_ID}, ["memory_id"], read_only=True)
async def get_memory(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    return entry_json(await _owned(db, scope, args["memory_id"]))


@_tool("list_memories", "List stored memories page by page (newest first by default), optionally filtered.",
       {"limit": {"type": "integer", "minimum": 1, "maximum": LIMITS["page"], "default": 50},
        "offset": {"type": "integer", "minimum": 0, "maximum": 2**31, "default": 0,
                   "description": "Skip this many (use next_offset from the previous page)."},
        "order": {"type": "string", "enum": ["newest", "oldest"], "default": "newest"},
        **_SELECT}, read_only=True)
async def list_memories(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    limit, offset = args.get("limit", 50), args.get("offset", 0)
    selection = {**scope, **_selection(args)}
    entries = await db.list(limit=limit, offset=offset, order="desc" if args.get("order", "newest") == "newest" else "asc",
                            **selection)
    total = await db.count(**selection)
    return {"memories": [entry_json(e) for e in entries], "total": total, "offset": offset,
            "next_offset": offset + len(entries) if offset + len(entries) < total else None}


@_tool("update_memory", "Correct a memory in place: new text, metadata, tags, category or expiry (history is kept).",
       {"memory_id": _MEMORY_ID, "text": {**_TEXT, "description": "The corrected memory text."},
        "metadata": {**_METADATA, "description": "Replaces the memory's metadata."},
        "tags": {**_TAGS, "description": "Replaces the memory's tags."}, "category": _CATEGORY,
        "expires_at": {**_WHEN, "description": "Forget this memory after this time (ISO)."}},
       ["memory_id"])
async def update_memory(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    changes = {k: args[k] for k in ("text", "metadata", "tags", "category", "expires_at") if k in args}
    if not changes:
        raise InvalidArgument("Nothing to update - pass text, metadata, tags, category or expires_at")
    _check_metadata(changes.get("metadata"))
    return entry_json(await db.update(args["memory_id"], **scope, **changes))


@_tool("delete_memory", "Delete one memory by id (it stops appearing in search; its history records the deletion).",
       {"memory_id": _MEMORY_ID}, ["memory_id"], destructive=True)
async def delete_memory(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    entry = await db.delete(args["memory_id"], **scope)
    return {"deleted": entry.id, "text": entry.l2_full}


@_tool("delete_all_memories",
       "Delete every memory of a scope you name explicitly (all of a user's, an agent's or one conversation's); "
       "cannot be undone. Memories a person protects are not deleted: each waits on a delete proposal "
       "for a person to approve ('proposed' lists the scope's pending ones).",
       {"scope": {"type": "object", "minProperties": 1, "additionalProperties": False,
                  "description": "Exactly whose memories to delete, e.g. {\"user_id\": \"alice\"}.",
                  "properties": {"user_id": ID_SCHEMA, "agent_id": ID_SCHEMA, "session_id": ID_SCHEMA}}},
       ["scope"], destructive=True, scoped_by_tenancy=False)
async def delete_all_memories(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    named: NamedScope = args["scope"]
    if scope:  # single-tenant: the named scope must be this server's own (a session narrows it)
        mismatch = {k: v for k, v in named.items() if k != "session_id" and scope.get(k) != v}
        missing = [k for k in scope if k not in named]
        if mismatch or missing:
            raise ScopeError(f"This server serves {' and '.join(f'{k}={v!r}' for k, v in scope.items())}; "
                             "name exactly that scope (optionally with a session_id) to delete its memories")
    elif "user_id" not in named:
        raise ScopeError("A multi-tenant server deletes only within one user: scope.user_id is required")
    deleted = await db.delete_all(**named)
    # what stays for a person to approve: the scope's pending delete proposals (this call's and earlier ones)
    proposed = [p.id for p in await db.list_proposals(**named, status="pending", limit=None) if p.op == "delete"]
    return {"deleted": deleted, "proposed": proposed, "scope": named}


@_tool("memory_history", "Show how one memory changed over time (added, updated, deleted), oldest first.",
       {"memory_id": _MEMORY_ID}, ["memory_id"], read_only=True)
async def memory_history(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    await _owned(db, scope, args["memory_id"])  # the kernel's history() takes no scope
    return {"memory_id": args["memory_id"], "events": [event_json(e) for e in await db.history(args["memory_id"])]}


# -- conversations -----------------------------------------------------------------------------
@_tool("add_message",
       "Append one conversation turn to a session (created on first use); remember=true also makes it searchable.",
       {"session_id": _SESSION_ID, "role": _ROLE, "content": _TEXT,
        "name": {"type": "string", "maxLength": 128, "description": "The speaker's name, if known."},
        "remember": {"type": "boolean", "default": True}},
       ["session_id", "role", "content"])
async def add_message(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    message = await db.add_message(args["session_id"], args["role"], args["content"], name=args.get("name"),
                                   ingest=bool(args.get("remember", True)), **scope)
    return {"session_id": args["session_id"], "message": message_json(message)}


@_tool("get_session", "Read a conversation: its latest messages in order, and how many there are in all.",
       {"session_id": _SESSION_ID, "last": {"type": "integer", "minimum": 1, "maximum": LIMITS["page"], "default": 50,
                                            "description": "How many of the latest messages to return."}},
       ["session_id"], read_only=True)
async def get_session(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    session = await db.get_session(args["session_id"], **scope)
    latest = await db.list_messages(session.id, limit=args.get("last", 50), order="desc")
    return {"session": session_json(session), "messages": [message_json(m) for m in reversed(latest)],
            "total": await db.count_messages(session.id)}


@_tool("list_sessions", "List conversations (session ids) stored for this scope, oldest first.",
       {"limit": {"type": "integer", "minimum": 1, "maximum": LIMITS["page"], "default": 50},
        "offset": {"type": "integer", "minimum": 0, "maximum": 2**31, "default": 0}}, read_only=True)
async def list_sessions(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    sessions = await db.list_sessions(**scope, limit=args.get("limit", 50), offset=args.get("offset", 0))
    return {"sessions": [session_json(s) for s in sessions]}


# -- entities and stats ------------------------------------------------------------------------
def _entity_norm(name: str) -> str:
    return " ".join(name.split()).casefold()


@_tool("list_entities", "List the people, places and things mentioned in memories, most mentioned first.",
       {"limit": {"type": "integer", "minimum": 1, "maximum": LIMITS["page"], "default": 50}}, read_only=True)
async def list_entities(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    graph = await db.entity_graph(**scope, limit=args.get("limit", 50))
    return {"entities": [{"name": n["text"], "label": n["label"], "mentions": n["entries"]}
                         for n in graph["nodes"] if n["entries"]]}


@_tool("entity_graph",
       "Show what an entity (e.g. a person's name) is connected to: co-mentioned entities and the memories linking them.",
       {"entity": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The entity's name."},
        "limit": {"type": "integer", "minimum": 1, "maximum": LIMITS["page"], "default": 50}},
       ["entity"], read_only=True)
async def entity_graph(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    graph = await db.entity_graph(entity=_entity_norm(args["entity"]), **scope, limit=args.get("limit", 50))
    names = {n["id"]: n["text"] for n in graph["nodes"]}
    links: dict[tuple[str, str], dict[str, Any]] = {}
    for edge in graph["edges"]:
        a, b = names.get(edge["a"]), names.get(edge["b"])
        if a is None or b is None:
            continue
        link = links.setdefault((a, b), {"a": a, "b": b, "memory_ids": []})
        if edge["entry_id"] not in link["memory_ids"]:
            link["memory_ids"].append(edge["entry_id"])
    return {"entity": args["entity"],
            "nodes": [{"name": n["text"], "label": n["label"], **({"mentions": n["entries"]} if n["entries"] else {})}
                      for n in graph["nodes"]],
            "links": list(links.values())}


@_tool("memory_stats", "Summarise what is stored: how many memories and conversations, by kind, oldest and newest.",
       {}, read_only=True)
async def memory_stats(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    live = await db.count(**scope)
    newest = await db.list(**scope, limit=1, order="desc")
    oldest = await db.list(**scope, limit=1, order="asc")
    info = await db.info()
    graph = await db.entity_graph(**scope, limit=5)
    return {
        "scope": scope, "memories": live,
        "including_expired_and_superseded": await db.count(**scope, include_expired=True, include_invalid=True),
        "by_kind": {kind: await db.count(**scope, context_type=kind) for kind in ("memory", "resource", "skill")},
        "conversation_turns": await db.count(**scope, category="turn"),
        "sessions": len(await db.list_sessions(**scope, limit=None)),
        "oldest": oldest[0].created_at.isoformat() if oldest and oldest[0].created_at else None,
        "newest": newest[0].created_at.isoformat() if newest and newest[0].created_at else None,
        "top_entities": [{"name": n["text"], "mentions": n["entries"]} for n in graph["nodes"] if n["entries"]],
        "embedder": info["embedder"], "vector_backend": info["vector_backend"],
    }


# -- export ------------------------------------------------------------------------------------
class _Full(Exception):
    """Raised by ``_Collector`` once it holds one record more than asked: stops the export early."""


class _Collector:
    """A text stream for ``AgentBase.export``: keeps the header and up to ``limit`` + 1 records."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.header: dict[str, Any] | None = None
        self.records: list[dict[str, Any]] = []

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            if self.header is None and record.get("type") == "header":
                self.header = record
            else:
                self.records.append(record)
                if len(self.records) > self.limit:
                    raise _Full
        return len(text)


@_tool("export_memories",
       "Export this scope's memories (with history) and conversations as agentbase export records "
       "(docs/export-format.md), to save or read.",
       {"limit": {"type": "integer", "minimum": 1, "maximum": LIMITS["export"], "default": 200,
                  "description": "At most this many records after the header; truncated=true says there were more."},
        "vectors": {"type": "boolean", "default": False, "description": "Also include the embedding vectors."}},
       read_only=True)
async def export_memories(db: AgentBase, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    if not scope:  # never the whole file: every server call has a scope (see Tenancy)
        raise ScopeError("export_memories needs a scope")
    limit = args.get("limit", 200)
    out = _Collector(limit)
    truncated = False
    try:
        await db.export(out, **scope, vectors=bool(args.get("vectors", False)), traces=False)
    except _Full:
        truncated = True
    records = out.records[:limit]
    return {"header": out.header, "records": records, "count": len(records), "truncated": truncated}
