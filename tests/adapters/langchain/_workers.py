"""Process entry points for the two-writers test (spawned processes import this module by name)."""

from __future__ import annotations

from pathlib import Path


def _open(path: str):
    from agentbase_kernel import AgentBase
    from tests.conftest import HashEmbedder

    return AgentBase(path if "://" in path else Path(path), embedder=HashEmbedder(), ner="regex")  # a Postgres URL stays a string


def write_chat_history(path: str, user_id: str, n: int) -> None:
    """LangChain: ``n`` human/AI turns, one ``add_messages`` call each, into ``<user_id>``'s session."""
    from langchain_core.messages import AIMessage, HumanMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    db = _open(path)
    try:
        history = AgentBaseChatMessageHistory(f"chat-{user_id}", db=db, user_id=user_id)
        for i in range(n):
            history.add_messages([HumanMessage(f"{user_id} question number {i}"), AIMessage(f"answer number {i}")])
    finally:
        db.sync.close()


def write_store_items(path: str, user_id: str, n: int) -> None:
    """LangGraph: ``n`` puts into ``("memories", <user_id>)``."""
    from agentbase_adapters.langgraph import AgentBaseStore

    db = _open(path)
    try:
        store = AgentBaseStore(db)
        for i in range(n):
            store.put(("memories", user_id), f"item-{i}", {"text": f"{user_id} remembers fact number {i}"})
    finally:
        db.sync.close()
