"""LangChain adapters: a chat-message history and a chat memory on one agentbase file.

Class tree::

    langchain_core.chat_history.BaseChatMessageHistory
    └── AgentBaseChatMessageHistory     one session of the file, messages in insertion order
    langchain_classic.memory.chat_memory.BaseChatMemory
    └── LangChainMemoryAdapter          recent turns + long-term memories retrieved for the input

Both only translate: a LangChain message becomes a kernel message whose ``payload`` is
``messages_to_dict([m])[0]`` (so it round-trips exactly) and whose ``content`` is the plain text
(so the ingest pipeline, ``find`` and the other adapters can read it). Both are written over the
sync kernel only: the history's ``a``-twins run its sync methods in a worker thread
(``agentbase_kernel.in_thread``), and the memory keeps LangChain's ``aload_memory_variables``,
which runs ``load_memory_variables`` in an executor. Install with
``pip install 'agentbase-memory[langchain]'``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agentbase_adapters._require import require
from agentbase_kernel import in_thread

require("langchain_core", extra="langchain")
require("langchain_classic", extra="langchain")

from langchain_classic.memory.chat_memory import BaseChatMemory  # noqa: E402
from langchain_classic.memory.utils import get_prompt_input_key  # noqa: E402
from langchain_core.chat_history import BaseChatMessageHistory  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    get_buffer_string,
    messages_from_dict,
    messages_to_dict,
)
from langchain_core.messages.utils import count_tokens_approximately  # noqa: E402
from pydantic import ConfigDict, Field  # noqa: E402

from agentbase_kernel import AgentBase, Entry, InvalidArgument, Message, Prefetch, WrongType  # noqa: E402

__all__ = ["AgentBaseChatMessageHistory", "LangChainMemoryAdapter", "trim_start"]

# LangChain message type -> kernel role. Chunks are stored as what they are chunks of.
_ROLE_OF_TYPE = {
    "human": "user",
    "HumanMessageChunk": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "system": "system",
    "SystemMessageChunk": "system",
    "tool": "tool",
    "ToolMessageChunk": "tool",
    "function": "function",
    "FunctionMessageChunk": "function",
}


def _plain_text(message: BaseMessage) -> str:
    """The text a person would read; tool calls are spelled out so the turn is never blank."""
    text = str(message.text)
    if not text.strip() and isinstance(message, AIMessage) and message.tool_calls:
        calls = ", ".join(f"{c['name']}({c['args']})" for c in message.tool_calls)
        text = f"[tool call] {calls}"
    return text


def _to_record(message: BaseMessage) -> dict[str, Any]:
    """LangChain message -> keyword arguments of the kernel's ``add_message``."""
    if isinstance(message, ChatMessage):
        role = message.role
    else:
        role = _ROLE_OF_TYPE.get(message.type, message.type)
    metadata: dict[str, Any] = {"langchain_type": message.type}
    if isinstance(message, ToolMessage):
        metadata["tool_call_id"] = message.tool_call_id
    return {
        "role": role,
        "content": _plain_text(message),
        "name": message.name,
        "metadata": metadata,
        "payload": messages_to_dict([message])[0],
    }


def _checked_messages(messages: Any) -> list[BaseMessage]:
    """``messages`` as a list of LangChain messages, or ``WrongType`` naming what is not one.

    ``InMemoryChatMessageHistory`` appends whatever it is given and only fails on the next read;
    a history on a file refuses the write instead (``WrongType`` is a ``TypeError``, as LangChain
    raises for a non-iterable).
    """
    if isinstance(messages, (str, bytes, Mapping, BaseMessage)) or not isinstance(messages, Iterable):
        raise WrongType(f"messages must be a sequence of LangChain messages, got {type(messages).__name__}")
    checked = list(messages)
    for message in checked:
        if not isinstance(message, BaseMessage):
            raise WrongType(
                f"messages must hold LangChain messages (HumanMessage, AIMessage, ...), got {type(message).__name__}"
            )
    return checked


def _checked_mapping(value: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WrongType(f"{name} must be a dict, got {type(value).__name__}")
    return value


def _from_record(record: Message) -> BaseMessage:
    """Kernel message -> LangChain message; messages written by other adapters get the closest type."""
    payload = record.payload
    if isinstance(payload, dict) and "type" in payload and "data" in payload:
        return messages_from_dict([payload])[0]
    common: dict[str, Any] = {"content": record.content, "id": record.id}
    if record.name is not None:
        common["name"] = record.name
    if record.role == "user":
        return HumanMessage(**common)
    if record.role == "assistant":
        return AIMessage(**common)
    if record.role == "system":
        return SystemMessage(**common)
    if record.role == "tool":
        return ToolMessage(tool_call_id=str(record.metadata.get("tool_call_id", "")), **common)
    if record.role == "function" and record.name is not None:
        return FunctionMessage(**common)
    return ChatMessage(role=record.role, **common)


class AgentBaseChatMessageHistory(BaseChatMessageHistory):
    """One conversation of an agentbase file, as a LangChain chat-message history.

        history = AgentBaseChatMessageHistory("s1", db=AgentBase("memory.db"), user_id="alice")
        history.add_messages([HumanMessage("hi"), AIMessage("hello")])
        history.messages  # -> [HumanMessage('hi'), AIMessage('hello')]

    The session is created in the given scope on construction; a session id that already belongs
    to another scope raises ``ScopeError``. With ``ingest=True`` (the default) every turn also
    becomes a memory entry of that scope, found by ``db.find`` and the other adapters.
    """

    def __init__(
        self,
        session_id: str,
        *,
        db: AgentBase,
        user_id: str | None = None,
        agent_id: str | None = None,
        project_id: str | None = None,
        ingest: bool = True,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.db = db.view(source="langchain")  # entries record the path that wrote them (Entry.source)
        self.user_id = user_id
        self.agent_id = agent_id
        self.project_id = project_id
        self.ingest = ingest
        db.sync.create_session(session_id, user_id=user_id, agent_id=agent_id, project_id=project_id)

    def _records(self, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        return [{**_to_record(m), "ingest": self.ingest} for m in messages]

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """Every message of the session, in insertion order (a new list on each read)."""
        return self._read_messages()

    def _read_messages(self) -> list[BaseMessage]:
        """``messages`` as a method, for ``aget_messages``."""
        return [_from_record(r) for r in self.db.sync.list_messages(self.session_id)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one transaction.

        Raises:
            WrongType: ``messages`` is not a sequence of LangChain messages (a ``TypeError``).
        """
        self.db.sync.add_messages(self.session_id, self._records(_checked_messages(messages)))

    def clear(self) -> None:
        """Delete every message of the session (and the memories made from them); the session stays."""
        self.db.sync.clear_session(self.session_id)

    aget_messages = in_thread(_read_messages)
    aadd_messages = in_thread(add_messages)
    aclear = in_thread(clear)

    def __repr__(self) -> str:
        return f"AgentBaseChatMessageHistory(session_id={self.session_id!r}, user_id={self.user_id!r})"


def _tool_units(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """Group messages so an AI tool call and the ToolMessages answering it form one unit."""
    units: list[list[BaseMessage]] = []
    open_calls: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id in open_calls and units:
            units[-1].append(message)
            continue
        units.append([message])
        open_calls = (
            {str(c["id"]) for c in message.tool_calls if c.get("id")}
            if isinstance(message, AIMessage)
            else set()
        )
    return units


def trim_start(
    messages: Sequence[BaseMessage],
    max_tokens: int | None,
    token_counter: Callable[[list[BaseMessage]], int] = count_tokens_approximately,
) -> int:
    """Where the longest tail of ``messages`` within ``max_tokens`` starts; never splits a tool call from its result."""
    if max_tokens is None:
        return 0
    start = len(messages)
    used = 0
    for unit in reversed(_tool_units(messages)):
        used += token_counter(unit)
        if used > max_tokens:
            break
        start -= len(unit)
    return start


class LangChainMemoryAdapter(BaseChatMemory):
    """A LangChain chat memory whose history also pulls in the owner's long-term memories.

        memory = LangChainMemoryAdapter(AgentBase("memory.db"), owner_id="alice")
        chain = ConversationChain(llm=llm, memory=memory)
        chain.invoke({"input": "What do I like to drink?"})

    ``load_memory_variables`` returns, under ``memory_key``, the recent turns of ``session_id``
    (trimmed to ``max_token_limit`` if set) plus the per-turn prefetch of the owner's scope
    (``Kernel.prefetch`` for the current input, within ``prefetch_token_budget`` tokens): up to
    ``top_k`` memories relevant to the input, best first, then their profile facts and the
    ``recent_k`` newest memories, leaving out what the window already shows. It is a string (memories first, then the
    ``Human:``/``AI:`` buffer) or, with ``return_messages=True``, a ``SystemMessage`` holding the
    memories followed by the turns. ``save_context`` stores the turn through the ingest pipeline.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    db: AgentBase
    owner_id: str
    agent_id: str | None = None
    session_id: str = Field(default_factory=lambda: f"langchain-{uuid.uuid4().hex}")
    memory_key: str = "history"
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    top_k: int = 5
    recent_k: int = 5
    prefetch_token_budget: int = Field(default=1000, ge=1)
    max_token_limit: int | None = None
    token_counter: Callable[[list[BaseMessage]], int] = count_tokens_approximately
    memories_header: str = "Relevant memories:"

    def __init__(self, db: AgentBase, **kwargs: Any) -> None:
        if "chat_memory" in kwargs:
            raise TypeError(
                "LangChainMemoryAdapter builds its own chat_memory from db and session_id - "
                "pass session_id=... instead of chat_memory=..."
            )
        owner_id = kwargs.get("owner_id")
        if not isinstance(owner_id, str) or not owner_id:
            raise WrongType("LangChainMemoryAdapter needs owner_id=<non-empty str>: the user whose memories it reads")
        session_id = kwargs.pop("session_id", None) or f"langchain-{uuid.uuid4().hex}"
        history = AgentBaseChatMessageHistory(
            session_id, db=db, user_id=owner_id, agent_id=kwargs.get("agent_id")
        )
        # db and session_id are pydantic fields of this class, which mypy reads off BaseChatMemory
        super().__init__(db=db, session_id=session_id, chat_memory=history, **kwargs)  # type: ignore[call-arg]

    @property
    def memory_variables(self) -> list[str]:
        return [self.memory_key]

    def _query(self, inputs: dict[str, Any]) -> str:
        _checked_mapping(inputs, "inputs")
        try:
            key = self.input_key or get_prompt_input_key(inputs, self.memory_variables)
        except ValueError as exc:  # LangChain's "One input key expected got [...]"
            raise InvalidArgument(str(exc), param="inputs") from None
        if key not in inputs:
            raise InvalidArgument(f"inputs has no {key!r} (the memory's input_key)", param="inputs")
        value = inputs[key]
        return value if isinstance(value, str) else str(value)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Store the turn (``inputs``' input, ``outputs``' output) through the ingest pipeline.

        Raises:
            WrongType: ``inputs`` or ``outputs`` is not a dict.
            ValueError: which key holds the input/output is ambiguous, as in LangChain.
        """
        super().save_context(_checked_mapping(inputs, "inputs"), _checked_mapping(outputs, "outputs"))  # type: ignore[arg-type]

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """``save_context``, awaiting the history's async write."""
        await super().asave_context(_checked_mapping(inputs, "inputs"), _checked_mapping(outputs, "outputs"))  # type: ignore[arg-type]

    def _prefetch(self, query: str) -> Prefetch:
        return self.db.sync.prefetch(query, user_id=self.owner_id, agent_id=self.agent_id,
                                     token_budget=self.prefetch_token_budget, relevant_k=self.top_k,
                                     recent_k=self.recent_k)

    def _repeats_window(self, entry: Entry, shown: list[Message]) -> bool:
        """Whether ``entry`` only restates the window: one of its turns, or a fact ingest derived
        from one (stamped with its turn's time, in this session)."""
        if any(r.entry_id == entry.id for r in shown):
            return True
        since = shown[0].created_at if shown else None
        return (since is not None and entry.session_id == self.session_id and entry.created_at is not None
                and entry.metadata.get("derived") == "fact" and entry.created_at >= since)

    def _render(self, records: list[Message], found: Prefetch) -> dict[str, Any]:
        messages = [_from_record(r) for r in records]
        start = trim_start(messages, self.max_token_limit, self.token_counter)
        window = messages[start:]
        shown = records[start:]
        # what answers this input first, then the profile facts, then recent memories: a reader (and a model's
        # attention) takes the head of the block, and a profile that led it pushed the answer out of view
        chosen = [*(h.entry for h in found.relevant), *found.profile, *found.recent]
        memories = list(dict.fromkeys(e.l2_full for e in chosen if not self._repeats_window(e, shown)))
        if self.return_messages:
            prefix: list[BaseMessage] = [SystemMessage(self._memories_block(memories))] if memories else []
            return {self.memory_key: prefix + window}
        parts = [self._memories_block(memories)] if memories else []
        buffer = get_buffer_string(window, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix)
        if buffer:
            parts.append(buffer)
        return {self.memory_key: "\n\n".join(parts)}

    def _memories_block(self, memories: list[str]) -> str:
        return "\n".join([self.memories_header, *(f"- {m}" for m in memories)])

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Recent turns plus the per-turn prefetch (relevant, profile and recent memories) for the current input.

        Raises:
            ValueError: no ``input_key`` and the inputs (minus memory keys and ``stop``) do not
                hold exactly one key, as in LangChain's ``get_prompt_input_key``.
        """
        query = self._query(inputs)
        records = self.db.sync.list_messages(self.session_id)
        return self._render(records, self._prefetch(query))
