"""Session turns as memories: which messages are turns, and the neighbouring turns each is indexed with.

A reply often names its topic only in the turn it answers ("What does it mean?" - "It stands
for freedom"), and a question is answered in the next turn: each turn is indexed with its
neighbours (docs/retrieval.md). Stored text and vectors stay the turn's own.
"""

from __future__ import annotations

from typing import Any

from ..records import Message, Session
from ..text import tokenize
from .roles import IngestStore

__all__ = ["CONTEXT_CHARS", "is_turn", "label", "memory_role", "turn_context", "turn_items"]

# how much of a neighbouring turn goes into a turn's context column
CONTEXT_CHARS = 2000


def is_turn(message: Message) -> bool:
    """System prompts and empty messages are not turns: they are neither memories nor context."""
    return message.role != "system" and bool(message.content.strip())


def label(message: Message) -> str:
    text = message.content[:CONTEXT_CHARS]
    return f"{message.name}: {text}" if message.name else text


def memory_role(role: str) -> str:
    """LangChain's message types as chat roles."""
    return {"human": "user", "ai": "assistant"}.get(role, role)


def turn_context(store: IngestStore, session_id: str, stored: list[Message],
                 appended: bool) -> tuple[dict[str, str], dict[str, str]]:
    """The turns around each new message, as ``"name: text"``: ``(before, after)`` by message id.

    When the new messages are appended, the turn they follow gets the first of them as its
    "after" context too (written to the store here).
    """
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    if not stored:
        return before, after
    earlier = store.list_messages(session_id, after=stored[0].id, order="desc", limit=1)
    previous = earlier[0] if earlier else None
    for message in stored:
        if previous is not None and is_turn(previous) and is_turn(message):
            before[message.id] = label(previous)
            after[previous.id] = label(message)
        previous = message
    if appended and earlier and earlier[0].id in after and earlier[0].entry_id:
        store.append_search_context(earlier[0].entry_id, "\n" + tokenize.fts_text(after.pop(earlier[0].id)))
    return before, after


def turn_items(session: Session, turns: list[Message], before: dict[str, str],
               after: dict[str, str]) -> list[dict[str, Any]]:
    """The ingest items of session turns: in the session's scope, with facts, speaker and context."""
    return [{
        "text": m.content, **session.scope.as_dict(), "session_id": session.id, "role": memory_role(m.role),
        "actor": m.name, "speaker": m.name, "metadata": dict(m.metadata), "created_at": m.created_at,
        "infer": True, "context": before.get(m.id), "context_after": after.get(m.id), "category": "turn",
    } for m in turns]
