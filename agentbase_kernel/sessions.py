"""``kernel.sessions``: sessions and their messages, one part of the kernel facade.

A session is an ordered conversation (messages by ``seq``) in a scope; each message ingested
becomes a memory in the session's scope, indexed with its neighbouring turns. ``Kernel``'s
``create_session`` / ``add_messages`` ... are these methods under their older names.

Usage::

    kernel.sessions.create("s1", user_id="alice")
    kernel.sessions.add_messages("s1", [{"role": "user", "content": "I moved to Lisbon"}])
    kernel.sessions.commit("s1")                     # the rule-based summary entry
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import arguments as check
from .errors import InvalidArgument, ScopeError, SessionNotFound
from .records import Entry, Message, Scope, Session
from .store import MessageRow
from .store.base import utcnow
from .telemetry import traced
from .text.targets import entity_keys, entity_label
from .threads import in_thread

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["AsyncSessions", "Sessions"]

_UNSET: Any = object()


class Sessions:
    """The sessions of one kernel (or view: its agent's permissions apply). ``kernel.sessions``."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    def create(self, session_id: str | None = None, *, user_id: str | None = None,
                       agent_id: str | None = None, project_id: str | None = None,
                       metadata: dict[str, Any] | None = None) -> Session:
        """Create a session, or return the existing one with this id (its scope must agree)."""
        sid = check.check_id("session_id", session_id) or f"sess_{uuid.uuid4().hex}"
        scope = check.scope_of(user_id, agent_id, project_id)
        self._kernel._check_session("write", sid, "create_session", scope)
        session, created = self._kernel._ready().ensure_session(sid, scope, check.metadata(metadata))
        if not created:
            for field_name in ("user_id", "agent_id", "project_id"):
                wanted = getattr(scope, field_name)
                if wanted is not None and getattr(session.scope, field_name) != wanted:
                    raise ScopeError(f"Session {sid!r} belongs to another {field_name} - use a different session id")
        return session

    def get(self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                    project_id: str | None = None) -> Session:
        scope = check.scope_of(user_id, agent_id, project_id)
        session = self._kernel._ready().find_session(check.check_id("session_id", session_id) or "")
        if session is None or any(getattr(scope, f) is not None and getattr(session.scope, f) != getattr(scope, f)
                                  for f in ("user_id", "agent_id", "project_id")):
            raise SessionNotFound(session_id)
        if self._kernel.agent is not None:
            self._kernel._gate.check("read", Scope(session.scope.user_id, session.scope.agent_id, session.scope.project_id,
                                           session.id), "get_session", exact=True)
        return session

    def list(self, *, user_id: str | None = None, agent_id: str | None = None,
                      project_id: str | None = None, limit: int | None = 100, offset: int = 0) -> builtins.list[Session]:
        scope = check.scope_of(user_id, agent_id, project_id)
        hidden = self._kernel._gate.check("read", scope, "list_sessions")
        if not hidden:
            return self._kernel._ready().list_sessions(scope, check.limit(limit), check.limit(offset, "offset") or 0)
        # leave out the sessions of scopes this agent may not read, then page
        visible = [s for s in self._kernel._ready().list_sessions(scope, None, 0)
                   if not any(all(getattr(Scope(s.scope.user_id, s.scope.agent_id, s.scope.project_id, s.id), f) == v
                                  for f, v in p.as_dict().items()) for p in hidden)]
        start = check.limit(offset, "offset") or 0
        size = check.limit(limit)
        return visible[start:] if size is None else visible[start:start + size]

    def update(self, session_id: str, *, metadata: dict[str, Any] | None = None,
                       metadata_patch: dict[str, Any] | None = None) -> Session:
        """Replace the session's metadata, or merge ``metadata_patch`` into it (``None`` values
        remove keys) inside one write transaction, so concurrent patches from several processes
        never lose each other's keys."""
        if (metadata is None) == (metadata_patch is None):
            raise InvalidArgument("Pass either metadata= or metadata_patch=, not both or neither")
        store = self._kernel._ready()
        self._kernel._check_session("write", self.get(session_id).id, "update_session")
        with store.transaction():
            session = self.get(session_id)
            if metadata_patch is not None:
                merged = dict(session.metadata)
                for key, value in check.metadata(metadata_patch).items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                metadata = merged
            return store.update_session(session_id, metadata=check.metadata(metadata))

    def delete(self, session_id: str) -> None:
        """Delete a session, its messages and the turn entries made from them."""
        self.get(session_id)
        self._kernel._check_session("write", session_id, "delete_session")
        self._kernel._ready().delete_session(session_id)

    def add_message(self, session_id: str, role: str, content: str, *, name: str | None = None,
                    metadata: dict[str, Any] | None = None, payload: Any = None, created_at: Any = None,
                    message_id: str | None = None, status: str = "active", position: int | None = None,
                    ingest: bool = True, user_id: str | None = None, agent_id: str | None = None,
                    project_id: str | None = None, touched_entities: Sequence[str] | None = None) -> Message:
        """Append (or insert at ``position``) one turn; with ``ingest`` it also becomes a memory.

        Scope keywords and ``touched_entities`` work as in ``add_messages``."""
        return self.add_messages(session_id, [{
            "role": role, "content": content, "name": name, "metadata": metadata, "payload": payload,
            "created_at": created_at, "message_id": message_id, "status": status, "ingest": ingest}],
            position=position, user_id=user_id, agent_id=agent_id, project_id=project_id,
            touched_entities=touched_entities)[0]

    @traced("add_messages")
    def add_messages(self, session_id: str, messages: Sequence[dict[str, Any]], *,
                     position: int | None = None, progress: Callable[[int, int], None] | None = None,
                     user_id: str | None = None, agent_id: str | None = None,
                     project_id: str | None = None,
                     touched_entities: Sequence[str] | None = None) -> builtins.list[Message]:
        """Append many turns in one transaction; each ingested turn becomes a memory in the session's scope.

        ``position`` follows ``list.insert`` (negative counts from the end, past the end appends).
        Scope keywords create a missing session in that scope, and must match an existing one
        (checked in the same transaction), else ``ScopeError``.

        ``touched_entities`` closes a turn that acted on files, tables, URLs or ids: each message
        records them (``metadata["touched_entities"]``) and its memory is linked to them, so the next
        ``retrieve_by_entities`` for any of them finds what happened in this turn.
        """
        sid = check.check_id("session_id", session_id)
        if sid is None:
            raise ScopeError("session_id is required")
        if position is not None and (not isinstance(position, int) or isinstance(position, bool)):
            raise InvalidArgument(f"position must be an int, got {position!r}")
        scope = check.scope_of(user_id, agent_id, project_id)
        if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Iterable):
            raise InvalidArgument(f"messages must be a list of dicts, got {type(messages).__name__}")
        items = [check.message_item(m) for m in messages]
        touched = [] if touched_entities is None else check.entity_names(touched_entities, "touched_entities",
                                                                          allow_empty=True)
        if touched:
            for item in items:
                item["metadata"] = {**item["metadata"], "touched_entities": touched}
        self._kernel._check_session("write", sid, "add_messages", scope)
        store = self._kernel._ready()
        with self._kernel._writing(), store.transaction():
            session, _ = store.ensure_session(sid, scope, None)
            check.require_scope(session, scope)
            written = Scope(**session.scope.as_dict(), session_id=sid)
            stored: builtins.list[Message] = []
            for i, item in enumerate(items):
                pos = None if position is None else position + i
                stored.append(store.insert_message(sid, cast(MessageRow, item), pos))
            turns = [m for m, item in zip(stored, items) if item["ingest"]]
            self._kernel.ingestor.add_turns(session, stored, turns, appended=position is None, progress=progress)
            ids = [m.id for m in stored]
            if touched:
                linked = [(entity_keys(n)[0][0], entity_label(n), n) for n in touched]
                for message in turns:
                    entry_id = store.get_message(sid, message.id).entry_id
                    if entry_id is not None:
                        store.add_entities(entry_id, linked, utcnow())
        if turns:
            self._kernel._after_write({written})
        return [store.get_message(sid, mid) for mid in ids]

    def list_messages(self, session_id: str, *, status: str | None = None, limit: int | None = None,
                      offset: int = 0, order: str = "asc", after: str | None = None,
                      before: str | None = None) -> builtins.list[Message]:
        """Messages by sequence. Unknown session -> ``[]``."""
        if order not in ("asc", "desc"):
            raise InvalidArgument(f"order must be 'asc' or 'desc', got {order!r}")
        if status not in (None, "active", "archived"):
            raise InvalidArgument(f"status must be 'active', 'archived' or None, got {status!r}")
        self._kernel._check_session("read", check.check_id("session_id", session_id) or "", "list_messages")
        return self._kernel._ready().list_messages(check.check_id("session_id", session_id) or "", status=status,
                                           limit=check.limit(limit), offset=check.limit(offset, "offset") or 0, order=order,
                                           after=after, before=before)

    def get_message(self, session_id: str, message_id: str) -> Message:
        self._kernel._check_session("read", check.check_id("session_id", session_id) or "", "get_message")
        return self._kernel._ready().get_message(check.check_id("session_id", session_id) or "", check.check_id("message_id", message_id) or "")

    def update_message(self, session_id: str, message_id: str, *, metadata: Any = _UNSET,
                       status: Any = _UNSET, payload: Any = _UNSET) -> Message:
        changes: dict[str, Any] = {}
        if metadata is not _UNSET:
            changes["metadata"] = check.metadata(metadata)
        if status is not _UNSET:
            if status not in ("active", "archived"):
                raise InvalidArgument(f"status must be 'active' or 'archived', got {status!r}")
            changes["status"] = status
        if payload is not _UNSET:
            if payload is not None:
                check.json_value(payload, "payload")
            changes["payload"] = payload
        self._kernel._check_session("write", session_id, "update_message")
        return self._kernel._ready().update_message(session_id, message_id, changes)

    def delete_message(self, session_id: str, message_id: str) -> Message:
        """Delete one message and the entries only it produced."""
        self._kernel._check_session("write", session_id, "delete_message")
        return self._kernel._ready().delete_message(session_id, message_id)

    def update_messages(self, session_id: str, message_ids: Sequence[str], *, status: str) -> builtins.list[Message]:
        """Set the status of several messages in one transaction (e.g. archive the oldest n)."""
        if status not in ("active", "archived"):
            raise InvalidArgument(f"status must be 'active' or 'archived', got {status!r}")
        self._kernel._check_session("write", session_id, "update_messages")
        store = self._kernel._ready()
        with store.transaction():
            return [store.update_message(session_id, mid, {"status": status}) for mid in check.ids(message_ids, "message_ids")]

    def delete_messages(self, session_id: str, message_ids: Sequence[str]) -> builtins.list[Message]:
        """Delete several messages (and the entries only they produced) in one transaction."""
        self._kernel._check_session("write", session_id, "delete_messages")
        store = self._kernel._ready()
        with store.transaction():
            return [store.delete_message(session_id, mid) for mid in check.ids(message_ids, "message_ids")]

    def set_messages(self, session_id: str, messages: Sequence[dict[str, Any]], *, user_id: str | None = None,
                     agent_id: str | None = None, project_id: str | None = None) -> builtins.list[Message]:
        """Replace every message of the session in one transaction (scope keywords as in ``add_messages``)."""
        self._kernel._check_session("write", session_id, "set_messages", check.scope_of(user_id, agent_id, project_id))
        store = self._kernel._ready()
        with store.transaction():
            store.delete_messages(session_id)
            return self.add_messages(session_id, messages, user_id=user_id, agent_id=agent_id,
                                     project_id=project_id)

    def clear(self, session_id: str, *, status: str | None = None) -> int:
        """Delete the session's messages (optionally of one status) and their turn entries."""
        self._kernel._check_session("write", session_id, "clear_session")
        return self._kernel._ready().delete_messages(session_id, status)

    def count_messages(self, session_id: str, *, status: str | None = None) -> int:
        self._kernel._check_session("read", session_id, "count_messages")
        return self._kernel._ready().count_messages(session_id, status)

    @traced("commit_session")
    def commit(self, session_id: str) -> Entry:
        """Write the rule-based session summary and link every entry the session produced."""
        session = self.get(session_id)
        self._kernel._check_session("write", session.id, "commit_session")
        with self._kernel._writing():
            return self._kernel.ingestor.commit_session(session, self._kernel._ready().list_messages(session_id))


class AsyncSessions:
    """``Sessions`` for async code: each method runs in a worker thread (``db.sessions``)."""

    def __init__(self, sessions: Sessions) -> None:
        self._sync = sessions

    create = in_thread(Sessions.create)
    get = in_thread(Sessions.get)
    list = in_thread(Sessions.list)
    update = in_thread(Sessions.update)
    delete = in_thread(Sessions.delete)
    add_message = in_thread(Sessions.add_message)
    add_messages = in_thread(Sessions.add_messages)
    list_messages = in_thread(Sessions.list_messages)
    get_message = in_thread(Sessions.get_message)
    update_message = in_thread(Sessions.update_message)
    delete_message = in_thread(Sessions.delete_message)
    update_messages = in_thread(Sessions.update_messages)
    delete_messages = in_thread(Sessions.delete_messages)
    set_messages = in_thread(Sessions.set_messages)
    clear = in_thread(Sessions.clear)
    count_messages = in_thread(Sessions.count_messages)
    commit = in_thread(Sessions.commit)
