"""LlamaIndex adapters: chat stores that keep every chat key as an agentbase session.

Two LlamaIndex interfaces hold chat history, and each gets one class::

    llama_index.core.storage.chat_store.BaseChatStore        (ChatMemoryBuffer, agents)
    └── AgentBaseChatStore
    llama_index.core.storage.chat_store.base_db.AsyncDBChatStore   (the newer Memory)
    └── AgentBaseAsyncChatStore

A chat key is an agentbase session id; a ``ChatMessage`` is a kernel message whose ``payload`` is
``message.model_dump(mode="json")`` and whose ``content`` is its text, so the turn is ingested
into the session's scope and is findable through ``AgentBase.find`` like any other memory.
Both are written over the sync kernel (``db.sync``); every async method runs its sync twin in a
worker thread (``agentbase_kernel.in_thread``). Needs ``pip install 'agentbase-memory[llamaindex]'``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentbase_adapters._require import require
from agentbase_kernel import AgentBase, InvalidArgument, Message, SessionNotFound, WrongType, in_thread

require("llama_index.core", extra="llamaindex")

from llama_index.core.base.llms.types import ChatMessage, MessageRole  # noqa: E402
from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr  # noqa: E402
from llama_index.core.storage.chat_store.base import BaseChatStore  # noqa: E402
from llama_index.core.storage.chat_store.base_db import (  # noqa: E402
    AsyncDBChatStore,
    MessageStatus,
)

__all__ = ["AgentBaseAsyncChatStore", "AgentBaseChatStore"]

_PAYLOAD_KEYS = frozenset({"role", "blocks"})


def _to_record(message: ChatMessage) -> dict[str, Any]:
    """Translate a ``ChatMessage`` into the keyword arguments of the kernel's ``add_message``."""
    if not isinstance(message, ChatMessage):  # SimpleChatStore fails later, with an AttributeError
        raise WrongType(f"message must be a llama_index ChatMessage, got {type(message).__name__}")
    name = message.additional_kwargs.get("name")
    return {
        "role": MessageRole(message.role).value,
        "content": message.content or "",
        "name": name if isinstance(name, str) else None,
        "payload": message.model_dump(mode="json"),
    }


def _records(messages: Any, **extra: Any) -> list[dict[str, Any]]:
    """Every message of ``messages`` as ``add_message`` keywords, checked before anything is written."""
    if isinstance(messages, (str, bytes, Mapping, ChatMessage)) or not isinstance(messages, Iterable):
        raise WrongType(f"messages must be a list of ChatMessage, got {type(messages).__name__}")
    return [{**_to_record(m), **extra} for m in messages]


def _check_key(key: object) -> str:
    """A chat key is a str (``SimpleChatStore`` keys a dict with it: a list is a ``TypeError`` there)."""
    if not isinstance(key, str):
        raise WrongType(f"key must be a str, got {type(key).__name__}")
    return key


def _from_record(record: Message) -> ChatMessage:
    """Rebuild the ``ChatMessage`` a kernel message was made from.

    Messages written by another adapter (LangChain, OpenAI threads, ...) carry no LlamaIndex
    payload; they come back as a text ``ChatMessage`` with their role, which is what a
    LlamaIndex engine needs to continue that conversation.
    """
    payload = record.payload
    if isinstance(payload, dict) and _PAYLOAD_KEYS <= payload.keys():
        return ChatMessage.model_validate(payload)
    try:
        role = MessageRole(record.role)
    except ValueError:
        role = MessageRole.USER
    extra: dict[str, Any] = {}
    if record.name is not None:
        extra["name"] = record.name
    if isinstance(record.metadata.get("tool_call_id"), str):
        extra["tool_call_id"] = record.metadata["tool_call_id"]
    return ChatMessage(role=role, content=record.content, additional_kwargs=extra)


def _scope_kwargs(user_id: str | None, agent_id: str | None, project_id: str | None) -> dict[str, Any]:
    scope = {"user_id": user_id, "agent_id": agent_id, "project_id": project_id}
    return {k: v for k, v in scope.items() if v is not None}


def _status(status: MessageStatus | str | None) -> str | None:
    if status is None:
        return None
    try:
        return MessageStatus(status).value
    except (ValueError, TypeError):
        raise InvalidArgument(f"{status!r:.80} is not a valid MessageStatus - pass one of "
                              f"{[s.value for s in MessageStatus]} or None", param="status") from None


def _check_db(db: Any, cls_name: str) -> AgentBase:
    if not isinstance(db, AgentBase):
        raise WrongType(
            f"{cls_name}() needs an agentbase_kernel.AgentBase, got {type(db).__name__} - "
            f"open one with AgentBase('memory.db') and pass it in"
        )
    return db


def _check_idx(idx: object) -> None:
    """Reject a bad position before anything is written (the session row included)."""
    if idx is not None and (not isinstance(idx, int) or isinstance(idx, bool)):
        raise WrongType(f"idx must be an int or None, got {idx!r:.80}")


def _pick(records: Sequence[Message], idx: int) -> Message | None:
    """``records[idx]``, or ``None`` when the index is out of range in either direction."""
    if -len(records) <= idx < len(records):
        return records[idx]
    return None


class _ScopedStore(BaseModel):
    """Scope plumbing shared by both stores: every key lives in the store's user/agent/project scope."""

    user_id: str | None = Field(default=None, description="Sessions are created in this user's scope.")
    agent_id: str | None = Field(default=None, description="Sessions are created in this agent's scope.")
    project_id: str | None = Field(default=None, description="Sessions are created in this project's scope.")

    _db: AgentBase = PrivateAttr()
    _given: AgentBase = PrivateAttr()  # the db as passed in; _db is its view writing as source "llamaindex"

    def __init__(self, db: AgentBase, **data: Any) -> None:
        """Wrap ``db``; the keyword fields ``user_id``, ``agent_id``, ``project_id`` set the scope.

        Raises:
            TypeError: ``db`` is not an ``AgentBase``.
        """
        super().__init__(**data)
        self._given = _check_db(db, type(self).__name__)
        self._db = self._given.view(source="llamaindex")

    @property
    def db(self) -> AgentBase:
        """The ``AgentBase`` this store writes to."""
        return self._given

    def _scope(self) -> dict[str, Any]:
        return _scope_kwargs(self.user_id, self.agent_id, self.project_id)

    def _exists(self, key: str) -> bool:
        _check_key(key)
        try:
            self._db.sync.get_session(key, **self._scope())
        except SessionNotFound:
            return False
        return True

    def _visible(self, key: str) -> bool:
        # An unscoped store sees every session; the kernel answers [] for unknown ones itself.
        _check_key(key)
        return not self._scope() or self._exists(key)

    def _session_ids(self) -> list[str]:
        return [s.id for s in self._db.sync.list_sessions(**self._scope(), limit=None)]

class AgentBaseChatStore(_ScopedStore, BaseChatStore):
    """A LlamaIndex ``BaseChatStore`` whose keys are agentbase sessions in one database.

    Usage::

        store = AgentBaseChatStore(AgentBase("memory.db"), user_id="alice")
        memory = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="chat-1")
        SimpleChatEngine.from_defaults(llm=llm, memory=memory).chat("Hello")

    It behaves like ``SimpleChatStore`` (a missing key reads as ``[]`` and deletes as ``None``;
    ``add_message(idx=...)`` inserts) and is durable without ``persist()``. Out-of-range
    indexes and an empty history give ``None`` where 0.14.25's ``SimpleChatStore`` raises
    ``IndexError``. A key of another scope raises ``ScopeError`` on write and reads as missing.
    """

    @classmethod
    def class_name(cls) -> str:
        """Name written into ``to_dict()``."""
        return "AgentBaseChatStore"

    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        """Replace the history of ``key`` with ``messages`` in one transaction."""
        self._db.sync.set_messages(_check_key(key), _records(messages), **self._scope())

    def get_messages(self, key: str) -> list[ChatMessage]:
        """The history of ``key``, oldest first; ``[]`` for a missing key."""
        if not self._visible(key):
            return []
        return [_from_record(r) for r in self._db.sync.list_messages(key)]

    def add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        """Append ``message`` to ``key``, or insert it before position ``idx`` (``list.insert`` rules)."""
        # The kernel's position= follows list.insert (negative from the end, past the end appends).
        _check_idx(idx)
        # the scope goes with the write: a missing session is created in it, in the same transaction
        self._db.sync.add_message(_check_key(key), **_to_record(message), position=idx, **self._scope())

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        """Delete ``key`` and its history and return the history; ``None`` for a missing key."""
        if not self._exists(key):
            return None
        removed = [_from_record(r) for r in self._db.sync.list_messages(key)]
        self._db.sync.delete_session(key)
        return removed

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Delete and return the message at ``idx``; ``None`` for a missing key or an out-of-range index."""
        if idx is None:
            raise WrongType("idx must be an int, got None")
        _check_idx(idx)
        if not self._visible(key):
            return None
        record = _pick(self._db.sync.list_messages(key), idx)
        if record is None:
            return None
        return _from_record(self._db.sync.delete_message(key, record.id))

    def delete_last_message(self, key: str) -> ChatMessage | None:
        """Delete and return the newest message; ``None`` for a missing key or an empty history."""
        return self.delete_message(key, -1)

    def get_keys(self) -> list[str]:
        """Every session id of this store's scope, oldest first (empty sessions included)."""
        return self._session_ids()

    aset_messages = in_thread(set_messages)
    aget_messages = in_thread(get_messages)
    async_add_message = in_thread(add_message)
    adelete_messages = in_thread(delete_messages)
    adelete_message = in_thread(delete_message)
    adelete_last_message = in_thread(delete_last_message)
    aget_keys = in_thread(get_keys)


class AgentBaseAsyncChatStore(_ScopedStore, AsyncDBChatStore):
    """A LlamaIndex ``AsyncDBChatStore`` that keeps ``Memory``'s queue and archive in agentbase.

    Usage::

        store = AgentBaseAsyncChatStore(AgentBase("memory.db"), user_id="alice")
        memory = Memory.from_defaults(session_id="chat-1", chat_store=store)
        SimpleChatEngine.from_defaults(llm=llm, memory=memory).chat("Hello")

    ``MessageStatus`` maps to the kernel message ``status`` ("active" / "archived"), so archived
    turns stay in the session and in recall. ``delete_message(key, idx)`` takes a 0-based position
    in the active queue (``SQLAlchemyChatStore`` takes its own integer row id there).
    """

    @classmethod
    def class_name(cls) -> str:
        """Name written into ``to_dict()``."""
        return "AgentBaseAsyncChatStore"

    def _get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        """Messages of ``key`` with ``status`` (``None``: every status), oldest first, paged by ``limit``/``offset``."""
        if not self._visible(key):
            return []
        records = self._db.sync.list_messages(key, status=_status(status), limit=limit, offset=offset or 0)
        return [_from_record(r) for r in records]

    def _count_messages(self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE) -> int:
        """How many messages of ``key`` have ``status`` (``None``: every status)."""
        if not self._visible(key):
            return 0
        return self._db.sync.count_messages(key, status=_status(status))

    def _add_message(self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE) -> None:
        """Append ``message`` to ``key`` with ``status``."""
        self._db.sync.add_message(_check_key(key), **_to_record(message), status=_status(status) or "active",
                                  **self._scope())

    def _add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Append ``messages`` to ``key`` with ``status``, in one transaction."""
        value = _status(status) or "active"
        self._db.sync.add_messages(_check_key(key), _records(messages, status=value), **self._scope())

    def _set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Replace every message of ``key`` (all statuses) with ``messages``, in one transaction."""
        value = _status(status) or "active"
        self._db.sync.set_messages(_check_key(key), _records(messages, status=value), **self._scope())

    def _delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Delete and return the active message at position ``idx``; ``None`` if there is none."""
        if idx is None:
            raise WrongType("idx must be an int, got None")
        _check_idx(idx)
        if not self._visible(key):
            return None
        record = _pick(self._db.sync.list_messages(key, status="active"), idx)
        if record is None:
            return None
        return _from_record(self._db.sync.delete_message(key, record.id))

    def _delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        """Delete the messages of ``key`` with ``status``; ``None`` deletes the whole session."""
        if not self._exists(key):
            return
        if status is None:
            self._db.sync.delete_session(key)
            return
        self._db.sync.clear_session(key, status=_status(status))

    def _delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Delete and return the ``n`` oldest active messages of ``key``."""
        records = self._oldest_active(key, n)
        self._db.sync.delete_messages(key, [r.id for r in records])
        return [_from_record(r) for r in records]

    def _archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Mark the ``n`` oldest active messages of ``key`` archived and return them."""
        records = self._oldest_active(key, n)
        if records:
            self._db.sync.update_messages(key, [r.id for r in records], status="archived")
        return [_from_record(r) for r in records]

    def _get_keys(self) -> list[str]:
        """Session ids of this store's scope that hold at least one message."""
        return [key for key in self._session_ids() if self._db.sync.count_messages(key)]

    def _oldest_active(self, key: str, n: int) -> list[Message]:
        if not isinstance(n, int) or isinstance(n, bool):
            raise WrongType(f"n must be an int >= 0, got {n!r:.80}")
        if n < 0:
            raise InvalidArgument(f"n must be an int >= 0, got {n!r:.80}")
        if n == 0 or not self._visible(key):
            return []
        return self._db.sync.list_messages(key, status="active", limit=n)

    get_messages = in_thread(_get_messages)
    count_messages = in_thread(_count_messages)
    add_message = in_thread(_add_message)
    add_messages = in_thread(_add_messages)
    set_messages = in_thread(_set_messages)
    delete_message = in_thread(_delete_message)
    delete_messages = in_thread(_delete_messages)
    delete_oldest_messages = in_thread(_delete_oldest_messages)
    archive_oldest_messages = in_thread(_archive_oldest_messages)
    get_keys = in_thread(_get_keys)
