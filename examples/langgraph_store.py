"""A LangGraph graph whose long-term store is agentbase: one line changes, one SQLite file.

Runs offline (no model: the nodes are plain functions), with the database in a temp dir.
Swap the temp path for your own file.

    python examples/langgraph_store.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agentbase_adapters.langchain import AgentBaseChatMessageHistory
from agentbase_adapters.langgraph import AgentBaseStore
from agentbase_kernel import AgentBase


class State(TypedDict):
    user_id: str
    message: str
    recalled: list[str]


def remember(state: State, runtime: Runtime) -> dict[str, Any]:
    # ("memories", <user_id>) lands in that user's agentbase scope (AgentBaseStore's default rule).
    assert runtime.store is not None
    runtime.store.put(("memories", state["user_id"]), str(uuid.uuid4()), {"text": state["message"]})
    return {}


def recall(state: State, runtime: Runtime) -> dict[str, Any]:
    assert runtime.store is not None
    items = runtime.store.search(("memories", state["user_id"]), query=state["message"], limit=3)
    return {"recalled": [item.value["text"] for item in items]}


def build(store: AgentBaseStore) -> Any:
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    # Before: graph.compile(store=InMemoryStore()); after:
    return graph.compile(store=store)


def main(path: Path) -> None:
    with AgentBase(path) as db:
        app = build(AgentBaseStore(db))
        app.invoke({"user_id": "alice", "message": "I keep bees on my balcony", "recalled": []})
        app.invoke({"user_id": "bob", "message": "I collect vintage cameras", "recalled": []})
        out = asyncio.run(app.ainvoke({"user_id": "alice", "message": "Lavender keeps my bees happy", "recalled": []}))
        print(f"graph recalled for alice: {out['recalled']}")

        # The same memories, through the kernel and through LangChain, in alice's scope only.
        AgentBaseChatMessageHistory("alice-chat", db=db, user_id="alice").add_user_message("What flowers do bees like?")
        print("find('bees', user_id='alice'):")
        for hit in db.sync.find("bees", user_id="alice", top_k=3):
            print(f"  {hit.score:.3f}  {hit.content}")
        print(f"bob sees alice's bees: {any('bees' in h.content for h in db.sync.find('bees', user_id='bob'))}")
        print(f"namespaces: {AgentBaseStore(db).list_namespaces()}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "memory.db")
