"""An OpenAI Agents SDK (``openai-agents``) ``Session`` over agentbase sessions.

``agents.memory.Session`` is a runtime-checkable Protocol, so this class implements it
structurally (as the SDK asks third-party sessions to) and never imports ``agents`` at run time.
Items are kernel messages of the session ``session_id``, each Responses input item kept verbatim
in the message payload, so the same history is readable as an OpenAI conversation
(``/v1/conversations/{id}/items``) or a thread, and its messages are ingested into the scope.
Tested with openai-agents 0.24.0 (``pip install openai-agents``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentbase_adapters.openai._translate import from_record, to_record
from agentbase_kernel import AgentBase

if TYPE_CHECKING:
    from agents.memory import SessionSettings

__all__ = ["AgentBaseSession"]


class AgentBaseSession:
    """An openai-agents ``Session`` whose items are the messages of one agentbase session.

    Usage::

        session = AgentBaseSession("conv_support_42", AgentBase("memory.db"), user_id="alice")
        result = await Runner.run(agent, "Hello", session=session)
        history = await session.get_items()

    Args:
        session_id: The kernel session id (also a conversation / thread id for the HTTP app).
        db: The database; every call awaits the kernel's async methods.
        user_id: Scope of the session (set when it is first written).
        agent_id: Scope of the session.
        project_id: Scope of the session.
        session_settings: ``agents.memory.SessionSettings``; its ``limit`` is the default of ``get_items``.

    Raises:
        ScopeError: On the first write, if the session already exists with another scope.
    """

    def __init__(
        self,
        session_id: str,
        db: AgentBase,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        project_id: str | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.db = db.view(source="openai")  # entries record the path that wrote them (Entry.source)
        self.session_settings = session_settings
        self._scope: dict[str, Any] = {"user_id": user_id, "agent_id": agent_id, "project_id": project_id}
        self._created = False

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The history, oldest first; with ``limit`` only the latest ``limit`` items (0 -> none,
        a negative limit -> all, as ``agents.SQLiteSession`` does)."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is None or limit < 0:
            records = await self.db.list_messages(self.session_id)
        elif limit == 0:
            return []
        else:
            records = (await self.db.list_messages(self.session_id, order="desc", limit=limit))[::-1]
        return [from_record(record, shape="input") for record in records]

    async def add_items(self, items: list[Any]) -> None:
        """Append items in one transaction; message items are ingested into the session's scope."""
        if not items:
            return
        records = [to_record(item, shape="input", param=f"items[{i}]") for i, item in enumerate(items)]
        if not self._created:
            await self.db.create_session(self.session_id, **self._scope)
            self._created = True
        await self.db.add_messages(self.session_id, records)

    async def pop_item(self) -> Any | None:
        """Remove and return the newest item (and the memory made from it); ``None`` if empty."""
        newest = await self.db.list_messages(self.session_id, order="desc", limit=1)
        if not newest:
            return None
        await self.db.delete_message(self.session_id, newest[0].id)
        return from_record(newest[0], shape="input")

    async def clear_session(self) -> None:
        """Delete every item (and the memories made from them); the session and its scope stay."""
        await self.db.clear_session(self.session_id)
