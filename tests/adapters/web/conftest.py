"""One real file written through several adapters, shared by the dashboard tests.

Minimal, Mem0's ``Memory`` (swap), the LangGraph store, the LlamaIndex chat store and kernel
sessions all write to it; a few ``find`` calls leave retrieval traces.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentbase_kernel import AgentBase, Kernel
from tests.conftest import HashEmbedder

DAY0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)  # a Monday


def _populate(path: Path | str, embedder: HashEmbedder) -> dict[str, str]:
    from langgraph.store.base import PutOp  # noqa: F401  (the extra must be there)
    from llama_index.core.llms import ChatMessage

    from agentbase_adapters.langgraph import AgentBaseStore
    from agentbase_adapters.llamaindex import AgentBaseChatStore
    from agentbase_adapters.mem0 import Memory
    from agentbase_adapters.minimal import MinimalAdapter

    ids: dict[str, str] = {}
    # Mem0's config for the database: a file for qdrant's path, a URL for pgvector's connection string
    store = ({"provider": "pgvector", "config": {"connection_string": path}} if isinstance(path, str)
             else {"provider": "qdrant", "config": {"path": str(path)}})
    config = {"vector_store": store, "embedder": {"provider": "agentbase", "config": {"embedder": embedder}}}
    with Memory.from_config(config) as m:
        [pizza] = m.add("Alice likes pizza from Naples", user_id="alice", infer=False,
                        metadata={"topic": "food"})["results"]
        [gone] = m.add("Alice's old phone number is 555-0100", user_id="alice", infer=False)["results"]
        m.update(pizza["id"], "Alice loves pizza from Naples")
        m.delete(gone["id"])
        ids["mem0"], ids["deleted"] = pizza["id"], gone["id"]

    with AgentBase(path, embedder=embedder, ner="regex") as db:
        k = db.sync
        minimal = MinimalAdapter(db)
        ids["minimal"] = minimal.remember("Alice prefers window seats on flights to Berlin", who="alice",
                                          tags=["travel"], source="minimal")
        store = AgentBaseStore(db)
        store.put(("memories", "alice"), "drink", {"text": "Alice drinks green tea with Bob"})
        chat = AgentBaseChatStore(db, user_id="alice")
        chat.set_messages("llama-chat", [ChatMessage(role="user", content="I am planning a trip to Lisbon with Carol"),
                                         ChatMessage(role="assistant", content="Lisbon is lovely in May.")])
        for day in range(40):
            when = DAY0 + timedelta(days=day * 3, hours=day % 9)
            k.add_memory(f"Note {day}: Bob reviewed the budget with Carol in Paris", user_id="bob",
                         category=("plan", "fact", "preference")[day % 3], tags=[("work", "home")[day % 2]],
                         context_type=("memory", "memory", "resource", "skill")[day % 4], created_at=when,
                         actor="importer")
        k.add_memory("I live in Paris", user_id="alice", infer=True)
        k.add_memory("I live in Berlin now", user_id="alice", infer=True)
        k.add_messages("trip-chat", [
            {"role": "user", "content": "We fly to Rome with Dave on Friday", "name": "alice"},
            {"role": "assistant", "content": "Shall I book the hotel near the Colosseum?"},
            {"role": "user", "content": "Yes, and I prefer a quiet room", "name": "alice"}], user_id="alice")
        k.commit_session("trip-chat")
        # ids are free-form strings: the dashboard's links must survive '/', '?', '#' and spaces
        k.add_memory("Odd ids work too", user_id="carol", entry_id="notes/2026?a#b")
        k.add_messages("team/alpha #1?", [{"role": "user", "content": "Hello from a slashed session"}],
                       user_id="carol")
        for query, scope in (("pizza", {"user_id": "alice"}), ("budget Carol", {"user_id": "bob"}),
                             ("where does Alice live", {})):
            k.find(query, **scope)
        # governance: an approval zone with two proposals from an agent; outcomes moved confidence
        k.protect(project_id="handbook")
        bot = k.view(agent="bot")
        ids["proposal_keep"] = bot.add_memory("Deploys run on Fridays", project_id="handbook").proposal_id or ""
        ids["proposal_drop"] = bot.add_memory("Deploys never run", project_id="handbook").proposal_id or ""
        k.record_outcome("s-review", "failure", entry_ids=[ids["minimal"]])
        k.record_outcome("s-review", "success", entry_ids=[ids["mem0"]])
    return ids


@pytest.fixture(scope="session")
def dashboard_file(make_db_location: Any) -> tuple[Path | str, dict[str, str]]:
    path = make_db_location("dashboard.db")
    ids = _populate(path, HashEmbedder())
    return path, ids


@pytest.fixture
def kernel(dashboard_file):
    path, _ = dashboard_file
    with Kernel(path, embedder=HashEmbedder(), ner="regex", create=False) as k:
        yield k
