"""Two processes run LlamaIndex on one database file at once: nothing is lost, nothing crosses scopes."""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage

from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore, AgentBaseChatStore
from agentbase_kernel import AgentBase

TURNS = 12


def _worker(path: str, user: str, start: Any) -> None:
    """One process: a ChatMemoryBuffer engine, a Memory, and writes to a session both share."""
    from llama_index.core.chat_engine import SimpleChatEngine
    from llama_index.core.llms import MockLLM
    from llama_index.core.memory import ChatMemoryBuffer, Memory

    with AgentBase(path, embedder=None, ner=None) as db:
        store = AgentBaseChatStore(db, user_id=user)
        memory = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key=f"{user}-chat")
        engine = SimpleChatEngine.from_defaults(llm=MockLLM(max_tokens=1), memory=memory)
        mem = Memory.from_defaults(session_id=f"{user}-mem", chat_store=AgentBaseAsyncChatStore(db, user_id=user))
        shared = AgentBaseChatStore(db)
        start.wait(timeout=60)
        for i in range(TURNS):
            engine.chat(f"{user} says {i}")
            mem.put(ChatMessage(role="user", content=f"{user} remembers {i}"))
            shared.add_message("shared", ChatMessage(role="user", content=f"{user} shares {i}"))
        asyncio.run(engine.achat(f"{user} says async"))


def test_two_processes_write_one_file(db_location: Path | str) -> None:
    path = str(db_location)  # not created yet: both processes also race to migrate it
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_worker, args=(path, user, start)) for user in ("alice", "bob")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]

    with AgentBase(path, embedder=None, ner=None) as db:
        for user, other in (("alice", "bob"), ("bob", "alice")):
            store = AgentBaseChatStore(db, user_id=user)
            history = store.get_messages(f"{user}-chat")
            expected = [f"{user} says {i}" for i in range(TURNS)] + [f"{user} says async"]
            assert [m.content for m in history[::2]] == expected
            assert [m.role.value for m in history[1::2]] == ["assistant"] * (TURNS + 1)

            memory = asyncio.run(AgentBaseAsyncChatStore(db, user_id=user).get_messages(f"{user}-mem", status=None))
            assert [m.content for m in memory] == [f"{user} remembers {i}" for i in range(TURNS)]

            assert sorted(store.get_keys()) == [f"{user}-chat", f"{user}-mem"]
            assert store.get_messages(f"{other}-chat") == []
            for entry in db.sync.list(user_id=user, limit=1000):
                assert other not in entry.text

        shared = [m.content for m in AgentBaseChatStore(db).get_messages("shared")]
        assert len(shared) == 2 * TURNS
        for user in ("alice", "bob"):
            assert [t for t in shared if t.startswith(user)] == [f"{user} shares {i}" for i in range(TURNS)]
