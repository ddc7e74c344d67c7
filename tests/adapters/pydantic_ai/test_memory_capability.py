"""The harness's ``Memory`` capability on a real Pydantic AI agent, driven offline by ``FunctionModel``.

The same agent code runs on the capability's default store (``InMemoryStore``) and on ours; what the
model sees and what the tools return must be the same. Then the store dies mid-run: with the
harness's default ``injection_errors='ignore'`` no turn breaks, and the circuit breaker stops asking.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness import Memory
from pydantic_ai_harness.memory import InMemoryStore

from agentbase_adapters._failopen import FailOpen, StoreUnavailable
from agentbase_adapters.pydantic_ai import AgentBaseMemoryStore
from agentbase_kernel import AgentBase


def _prompt(messages: list[ModelMessage]) -> str:
    """Everything the user side said this run, memory snapshots included."""
    parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)]
    return "\n".join(c if isinstance(c, str) else " ".join(getattr(x, "content", str(x)) for x in c)
                     for c in (p.content for p in parts))


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls the memory tool a prompt names (``tool:<name> <json args>``), then reports what it saw."""
    last = messages[-1]
    returned = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart(json.dumps(returned[0].content, sort_keys=True, default=str))])
    said = _prompt([last])
    if said.startswith("tool:"):
        said = said.splitlines()[0]
        name, _, args = said[len("tool:"):].partition(" ")
        return ModelResponse(parts=[ToolCallPart(name, json.loads(args))])
    return ModelResponse(parts=[TextPart("saw: " + _prompt(messages))])


TURNS = [
    'tool:write_memory {"content": "- Alice drinks green tea\\n"}',
    'tool:write_memory {"content": "Flights: LIS on Friday\\n", "file": "travel.md"}',
    "what do you know?",
    'tool:write_memory {"content": "- Alice drinks oolong\\n", "old_text": "- Alice drinks green tea\\n"}',
    'tool:search_memory {"query": "friday flights"}',
    'tool:read_memory {"file": "travel.md"}',
    'tool:delete_memory {"file": "travel.md"}',
    'tool:delete_memory {"file": "travel.md"}',
    'tool:read_memory {"file": "missing.md"}',
    "and now?",
]


def _normalise(text: str) -> str:
    """Tool results carry opaque versions and scores: keep their shape, not their spelling."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict):
        if "version" in value:
            value["version"] = "<v>" if value["version"] else None
        for match in value.get("matches", []):
            match["score"] = "<score>"
    return json.dumps(value, sort_keys=True)


async def _conversation(store: Any) -> list[str]:
    agent = Agent(FunctionModel(scripted_model), deps_type=str,
                  capabilities=[Memory(store, namespace=lambda ctx: ctx.deps)])
    said = []
    for turn in TURNS:
        result = await agent.run(turn, deps="alice")
        said.append(_normalise(result.output))
    return said


async def test_the_same_agent_code_sees_the_same_thing_on_the_default_store_and_on_ours(db: AgentBase):
    default = await _conversation(InMemoryStore())
    ours = await _conversation(AgentBaseMemoryStore(db))
    assert ours == default, "\n".join(default)
    assert "Alice drinks green tea" in default[2] and "travel.md" in default[2]
    assert "oolong" in default[-1] and "travel.md" not in default[-1]
    assert json.loads(default[4])["matches"][0]["file"] == "travel.md"


async def test_what_the_agent_noted_is_a_memory_of_that_user(db: AgentBase):
    await _conversation(AgentBaseMemoryStore(db))
    [note] = db.sync.list(user_id="alice")
    assert (note.text, note.agent_id, note.source) == ("- Alice drinks oolong\n", "main", "pydantic-ai")
    assert db.sync.find("what does alice drink", user_id="alice")[0].id == note.id
    assert len(db.sync.find("what does alice drink", user_id="bob")) == 0


def _turn_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("ok: " + ("tea" if "green tea" in _prompt(messages) else "no memory"))])


async def test_a_store_killed_mid_run_never_breaks_a_turn(tmp_path, hash_embedder, caplog):
    """Injection is optional to the harness: the dead store costs the memory block, never the turn."""
    db = AgentBase(tmp_path / "dies.db", embedder=hash_embedder, ner="regex")
    guard = FailOpen(threshold=3, cooldown=3600, name="pydantic-ai")
    store = AgentBaseMemoryStore(db, guard=guard)
    await store.write("alice/main/MEMORY.md", "- Alice drinks green tea\n", expected_version=None)
    agent = Agent(FunctionModel(_turn_model), deps_type=str, capabilities=[Memory(store, namespace=lambda c: c.deps)])
    outputs, errors = [], 0
    for turn in range(30):
        if turn == 10:
            db.sync.close()  # the store goes away mid-run
        try:
            outputs.append((await agent.run(f"turn {turn}", deps="alice", message_history=[])).output)
        except Exception:  # counting what reaches the agent's caller
            errors += 1
    assert errors == 0
    assert outputs[:10] == ["ok: tea"] * 10 and outputs[10:] == ["ok: no memory"] * 20
    assert guard.breaker.state == "open" and guard.stats.trips == 1
    # each injection reads the store a few times: after 3 failures nothing more was sent
    assert guard.stats.failed == 3 and guard.stats.refused > 0 and guard.stats.sent_while_open == 0


async def test_injection_errors_raise_still_raises(tmp_path, hash_embedder):
    db = AgentBase(tmp_path / "dies.db", embedder=hash_embedder, ner="regex")
    store = AgentBaseMemoryStore(db)
    db.sync.close()
    agent = Agent(FunctionModel(_turn_model), capabilities=[Memory(store, injection_errors="raise")])
    with pytest.raises(StoreUnavailable):
        await agent.run("hello")
