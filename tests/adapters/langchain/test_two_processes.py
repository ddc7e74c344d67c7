"""LangChain and LangGraph write to one database file from two processes at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from agentbase_adapters.langchain import AgentBaseChatMessageHistory
from agentbase_adapters.langgraph import AgentBaseStore
from agentbase_kernel import AgentBase
from tests.adapters.langchain import _workers

N = 25


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_langchain_and_langgraph_write_concurrently(db_path: Path, hash_embedder: object) -> None:
    # create the file first so both children only open it
    AgentBase(db_path, embedder=hash_embedder, ner="regex").sync.initialize().close()
    ctx = multiprocessing.get_context("spawn")
    workers = [
        ctx.Process(target=_workers.write_chat_history, args=(str(db_path), "carol", N)),
        ctx.Process(target=_workers.write_store_items, args=(str(db_path), "dave", N)),
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0]

    with AgentBase(db_path, embedder=hash_embedder, ner="regex") as db:
        messages = AgentBaseChatMessageHistory("chat-carol", db=db, user_id="carol").messages
        assert [m.content for m in messages[::2]] == [f"carol question number {i}" for i in range(N)]
        assert [m.content for m in messages[1::2]] == [f"answer number {i}" for i in range(N)]

        store = AgentBaseStore(db)
        items = store.search(("memories", "dave"), limit=100)
        assert sorted(i.key for i in items) == sorted(f"item-{i}" for i in range(N))
        assert store.search(("memories", "carol")) == []

        # nothing crossed scopes
        assert {e.user_id for e in db.sync.list(session_id="chat-carol", limit=None)} == {"carol"}
        assert {e.user_id for e in db.sync.list(metadata={"lg_store": "langgraph"}, limit=None)} == {"dave"}
        assert not any("dave" in h.content for h in db.sync.find("dave remembers fact", user_id="carol", top_k=50))
        assert not any("carol" in h.content for h in db.sync.find("carol question", user_id="dave", top_k=50))
