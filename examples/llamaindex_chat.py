"""LlamaIndex chat history kept in agentbase: one line changes, everything lands in one SQLite file.

Runs offline: LlamaIndex's MockLLM stands in for a real model, and the database lives in a temp dir.
Swap ``MockLLM()`` for any LlamaIndex LLM and the temp path for your own file.

    python examples/llamaindex_chat.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import ChatMemoryBuffer, Memory

from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore, AgentBaseChatStore
from agentbase_kernel import AgentBase


def chat_memory_buffer(db: AgentBase) -> None:
    # Before: chat_store=SimpleChatStore(); after: our store, durable without persist().
    store = AgentBaseChatStore(db, user_id="alice")
    memory = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="alice-trip")
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(max_tokens=6), memory=memory)
    engine.chat("I'm planning a trip to Lisbon in May and I love seafood.")
    engine.chat("My budget is about 1500 euros.")
    print(f"ChatMemoryBuffer: {len(store.get_messages('alice-trip'))} messages in session 'alice-trip'")


async def newer_memory(db: AgentBase) -> None:
    # The newer Memory keeps its short-term queue and its archive in the same file.
    store = AgentBaseAsyncChatStore(db, user_id="alice")
    memory = Memory.from_defaults(session_id="alice-health", chat_store=store, token_limit=40)
    await memory.aput_messages([
        ChatMessage(role="user", content="I am allergic to peanuts, please remember that."),
        ChatMessage(role="assistant", content="Understood, I will keep peanuts out of any suggestion."),
        ChatMessage(role="user", content="Which restaurants near the Alfama are good for dinner?"),
    ])
    active = await store.count_messages("alice-health")
    archived = await store.count_messages("alice-health", status="archived")  # type: ignore[arg-type]
    print(f"Memory: {active} active, {archived} archived in session 'alice-health'")


def recall(db: AgentBase) -> None:
    # Every turn is an agentbase memory of alice's scope, whichever LlamaIndex class wrote it.
    for query in ("where is alice travelling", "food allergy"):
        hits = db.sync.find(query, user_id="alice", top_k=2)
        print(f"find({query!r}):")
        for hit in hits:
            print(f"  {hit.score:.3f}  {hit.content}")


def main(path: Path, embedder: Any = "auto") -> None:
    with AgentBase(path, embedder=embedder) as db:
        chat_memory_buffer(db)
        asyncio.run(newer_memory(db))
        recall(db)
    with AgentBase(path, embedder=embedder) as db:  # a new process would see the same: nothing to persist()
        history = AgentBaseChatStore(db, user_id="alice").get_messages("alice-trip")
        print(f"reopened: first message was {history[0].content!r}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "memory.db")
