"""``AgentBaseSessionStore``: the Claude Agent SDK's ``SessionStore`` (transcript mirroring) on agentbase sessions.

    SessionStore call           agentbase
    --------------------------  ----------------------------------------------------------------------------
    append(key, entries)        one kernel session per key (project = the key's project_key); each entry a
                                message whose payload is the entry verbatim; user/assistant text is ingested,
                                so transcripts are memories the other adapters find; an entry's ``uuid`` is
                                its idempotency key; the main transcript's summary is folded into the
                                session's metadata with the SDK's own ``fold_session_summary``
    load(key)                   the payloads in order, or None for a key never written
    list_sessions(project)      the project's main transcripts, mtime = the session's last write (epoch ms)
    list_session_summaries      the folded summaries, stamped with that same mtime
    delete(key)                 the session (its messages and their memories); a main key takes its subkeys
    list_subkeys(key)           the subpaths written under a session

Every call runs the sync kernel on a worker thread. Summaries are folded under a lock of this process: two
processes appending to the same session at once may lose a fold (the entries themselves are never lost).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from typing import Any
from urllib.parse import quote

from .._harness import open_store
from .._require import require

require("claude_agent_sdk", extra="claude")

from claude_agent_sdk import (  # noqa: E402
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    fold_session_summary,
)

from agentbase_kernel import AgentBase, MessageNotFound, Session, SessionNotFound  # noqa: E402

__all__ = ["AgentBaseSessionStore"]

_PREFIX = "claude-transcript"
_SUMMARY = "claude_summary"


def _session_id(project_key: str, session_id: str, subpath: str | None = None) -> str:
    parts = [project_key, session_id] + ([subpath] if subpath else [])
    return "/".join([_PREFIX, *(quote(part, safe="") for part in parts)])


def _text(entry: SessionStoreEntry) -> str:
    """The words of a user or assistant transcript entry (``message.content`` as a string or text blocks)."""
    message = entry.get("message") if isinstance(entry, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                         and isinstance(b.get("text"), str))
    return ""


def _mtime(session: Session) -> int:
    stamp = session.updated_at or session.created_at
    return int(stamp.timestamp() * 1000) if stamp else 0


class AgentBaseSessionStore(SessionStore):
    """Mirror Claude Code transcripts into agentbase, and resume from them.

        store = AgentBaseSessionStore("memory.db", user_id="alice")
        options = ClaudeAgentOptions(session_store=store)      # was: session_store=InMemorySessionStore()

    Args:
        db: An ``AgentBase`` (left open), a file path or a ``postgresql://`` URL.
        user_id: Whose sessions and memories these are.
        ingest: Make user and assistant text memories (``False``: store the transcript only).
        **options: ``AgentBase`` options when ``db`` is a path.
    """

    def __init__(self, db: AgentBase | str | os.PathLike[str] | None = None, *, user_id: str = "claude-user",
                 ingest: bool = True, **options: Any) -> None:
        if not isinstance(user_id, str) or not user_id.strip():
            raise ValueError(f"user_id must be a non-empty string, not {user_id!r}")
        self.db, self._owns_db = open_store(db, source="claude", options=options)
        self.user_id = user_id
        self.ingest = ingest
        self._fold = threading.Lock()

    # -- sync bodies (run on a worker thread) -----------------------------------------------------
    def _find(self, sid: str) -> Session | None:
        try:
            return self.db.sync.get_session(sid, user_id=self.user_id)
        except SessionNotFound:
            return None

    def _append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        if not entries:
            return
        kernel = self.db.sync
        subpath = key.get("subpath")
        sid = _session_id(key["project_key"], key["session_id"], subpath)
        kernel.create_session(sid, user_id=self.user_id, project_id=key["project_key"],
                              metadata={"claude_project": key["project_key"], "claude_session": key["session_id"],
                                        "claude_subpath": subpath})
        messages = []
        for entry in entries:
            uuid = entry.get("uuid") if isinstance(entry, dict) else None
            message_id = None
            if isinstance(uuid, str) and uuid:
                message_id = "ct_" + hashlib.sha1(f"{sid}\x00{uuid}".encode()).hexdigest()
                try:
                    kernel.get_message(sid, message_id)
                    continue  # already mirrored: the SDK retries a batch that may have landed
                except MessageNotFound:
                    pass
            role = entry.get("type") if entry.get("type") in ("user", "assistant") else "system"
            text = _text(entry) if role != "system" else ""
            messages.append({"role": role, "content": text, "payload": entry, "message_id": message_id,
                             "ingest": bool(self.ingest and text.strip()),
                             "metadata": {"claude_uuid": uuid} if message_id else None})
        with self._fold:
            if messages:
                kernel.add_messages(sid, messages, user_id=self.user_id, project_id=key["project_key"])
            if subpath is None:  # a subagent's transcript must not change the main session's summary
                session = kernel.get_session(sid)
                folded = fold_session_summary(session.metadata.get(_SUMMARY), key, entries)
                kernel.update_session(sid, metadata_patch={_SUMMARY: dict(folded)})

    def _load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        sid = _session_id(key["project_key"], key["session_id"], key.get("subpath"))
        if self._find(sid) is None:
            return None
        return [m.payload for m in self.db.sync.list_messages(sid)]

    def _sessions(self, project_key: str) -> list[Session]:
        return [s for s in self.db.sync.list_sessions(user_id=self.user_id, project_id=project_key, limit=None)
                if s.id.startswith(_PREFIX + "/") and s.metadata.get("claude_project") == project_key]

    def _list(self, project_key: str) -> list[SessionStoreListEntry]:
        return [{"session_id": s.metadata["claude_session"], "mtime": _mtime(s)}
                for s in self._sessions(project_key) if s.metadata.get("claude_subpath") is None]

    def _summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        out: list[SessionSummaryEntry] = []
        for s in self._sessions(project_key):
            summary = s.metadata.get(_SUMMARY)
            if s.metadata.get("claude_subpath") is None and isinstance(summary, dict):
                out.append({**summary, "mtime": _mtime(s)})  # type: ignore[typeddict-item]
        return out

    def _delete(self, key: SessionKey) -> None:
        subpath = key.get("subpath")
        doomed = [_session_id(key["project_key"], key["session_id"], subpath)]
        if subpath is None:
            doomed += [s.id for s in self._sessions(key["project_key"])
                       if s.metadata.get("claude_session") == key["session_id"] and s.metadata.get("claude_subpath")]
        for sid in doomed:
            if self._find(sid) is not None:
                self.db.sync.delete_session(sid)

    def _subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        return [s.metadata["claude_subpath"] for s in self._sessions(key["project_key"])
                if s.metadata.get("claude_session") == key["session_id"] and s.metadata.get("claude_subpath")]

    # -- SessionStore --------------------------------------------------------------------------------
    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        await asyncio.to_thread(self._append, key, entries)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        return await asyncio.to_thread(self._load, key)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        return await asyncio.to_thread(self._list, project_key)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        return await asyncio.to_thread(self._summaries, project_key)

    async def delete(self, key: SessionKey) -> None:
        await asyncio.to_thread(self._delete, key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        return await asyncio.to_thread(self._subkeys, key)

    def close(self) -> None:
        """Close the store if this object opened it; safe to call twice."""
        if self._owns_db and not self.db.sync.closed:
            self.db.sync.close()
