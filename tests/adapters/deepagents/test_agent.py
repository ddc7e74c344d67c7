"""A real deep agent (``create_deep_agent``) whose ``/memories/`` route is agentbase, driven offline by a
scripted fake chat model (deepagents' own tests use the same ``GenericFakeChatModel`` with ``bind_tools``).

The same agent runs with ``/memories/`` on deepagents' ``StoreBackend`` over LangGraph's
``InMemoryStore`` (the persistent route its docs show) and on ours: the tool results must match, and
a later conversation must find the memory file. Then the store dies mid-run.
"""

from __future__ import annotations

import re
from typing import Any

from deepagents import create_deep_agent
from deepagents.backends import CompositeBackend, StateBackend, StoreBackend
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from agentbase_adapters._failopen import FailOpen
from agentbase_adapters.deepagents import AgentBaseBackend
from agentbase_kernel import AgentBase
from tests.adapters.deepagents._fake_model import ToolCallingFakeModel
from tests.adapters.deepagents._fake_model import tool_call as _call

CONVERSATIONS = [
    [_call("write_file", file_path="/memories/alice.md", content="# Alice\n- allergic to peanuts\n- TODO: book dentist\n"),
     _call("edit_file", file_path="/memories/alice.md", old_string="TODO: book dentist", new_string="dentist on May 3"),
     _call("write_file", file_path="/scratch.txt", content="temporary notes\n"),
     AIMessage(content="Saved.")],
    [_call("ls", path="/memories"),
     _call("read_file", file_path="/memories/alice.md"),
     _call("grep", pattern="peanuts", path="/memories", output_mode="content"),
     _call("glob", pattern="**/*.md", path="/memories"),
     _call("read_file", file_path="/scratch.txt"),
     _call("edit_file", file_path="/memories/missing.md", old_string="a", new_string="b"),
     AIMessage(content="Alice is allergic to peanuts.")],
]


def _run(memories: Any) -> list[list[str]]:
    """Two conversations (two threads: the in-state scratch file does not carry over, memories do)."""
    out = []
    for thread, script in enumerate(CONVERSATIONS):
        agent = create_deep_agent(model=ToolCallingFakeModel(messages=iter(script)),
                                  backend=CompositeBackend(default=StateBackend(), routes={"/memories/": memories}))
        result = agent.invoke({"messages": [{"role": "user", "content": f"conversation {thread}"}]})
        out.append([re.sub(r"\d{4}-\d\d-\d\dT[\d:.+]+", "<ts>", str(m.content))
                    for m in result["messages"] if isinstance(m, ToolMessage)] + [result["messages"][-1].content])
    return out


def test_the_same_agent_sees_the_same_files_on_store_backend_and_on_ours(db: AgentBase):
    reference = _run(StoreBackend(store=InMemoryStore(), namespace=lambda _rt: ("memories",)))
    ours = _run(AgentBaseBackend(db, user_id="alice"))
    assert ours == reference
    later = reference[1]
    assert "/memories/alice.md" in later[0] and "dentist on May 3" in later[1] and "allergic to peanuts" in later[2]
    assert "scratch.txt" in later[4] and "not found" in later[4]  # the default route kept it in state only


def test_the_memory_file_is_a_memory_of_the_user(db: AgentBase):
    _run(AgentBaseBackend(db, user_id="alice"))
    [entry] = db.sync.list(user_id="alice")
    assert (entry.metadata["file_path"], entry.source) == ("/alice.md", "deepagents")  # the route's own path
    assert db.sync.find("what is alice allergic to", user_id="alice")[0].id == entry.id
    assert db.sync.count(user_id="bob") == 0


def test_a_store_killed_mid_run_never_breaks_a_turn(tmp_path, hash_embedder):
    db = AgentBase(tmp_path / "dies.db", embedder=hash_embedder, ner="regex")
    guard = FailOpen(threshold=3, cooldown=3600)
    memories = AgentBaseBackend(db, user_id="alice", guard=guard)
    turns, errors, answers = 20, 0, []
    for turn in range(turns):
        if turn == 8:
            db.sync.close()  # the store goes away mid-run
        script = [_call("write_file", file_path=f"/memories/t{turn}.md", content=f"turn {turn}\n"),
                  _call("read_file", file_path="/memories/t0.md"), _call("grep", pattern="turn", path="/memories"),
                  AIMessage(content=f"done {turn}")]
        agent = create_deep_agent(model=ToolCallingFakeModel(messages=iter(script)),
                                  backend=CompositeBackend(default=StateBackend(), routes={"/memories/": memories}))
        try:
            result = agent.invoke({"messages": [{"role": "user", "content": f"turn {turn}"}]})
            answers.append(result["messages"][-1].content)
            tools = [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]
            assert all("memory store unavailable" in t for t in tools) == (turn >= 8)
        except Exception:  # counting what reaches the caller of the agent
            errors += 1
    assert errors == 0 and answers == [f"done {t}" for t in range(turns)]
    assert guard.stats.failed == 3 and guard.stats.sent_while_open == 0 and guard.stats.refused == 12 * 3 - 3
