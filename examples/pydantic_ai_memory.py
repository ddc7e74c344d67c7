"""Pydantic AI harness: the ``Memory`` capability's notebook in agentbase (one line changes).

Runs offline: ``FunctionModel`` stands in for the LLM and calls the harness's memory tools the way a
model would. What the agent notes about Alice is then an ordinary memory of Alice's scope.

    python examples/pydantic_ai_memory.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness import Memory

from agentbase_adapters.pydantic_ai import AgentBaseMemoryStore
from agentbase_kernel import AgentBase


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Notes what the user asks it to remember; otherwise answers from the injected <memory> block."""
    last = messages[-1]
    if any(isinstance(p, ToolReturnPart) for p in last.parts):
        return ModelResponse(parts=[TextPart("Noted.")])
    prompt = " ".join(str(getattr(p, "content", "")) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
    if "remember" in prompt.lower().split("<memory>")[0] and len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("write_memory", {"content": "- Alice is vegetarian\n"})])
    return ModelResponse(parts=[TextPart("From memory: vegetarian." if "vegetarian" in prompt else "I don't know.")])


async def main() -> None:
    path = os.environ.get("AGENTBASE_PATH") or os.path.join(tempfile.mkdtemp(), "memory.db")
    db = AgentBase(path)
    # before: Memory(InMemoryStore(), namespace=...)
    memory = Memory(AgentBaseMemoryStore(db), namespace=lambda ctx: ctx.deps)
    agent = Agent(FunctionModel(model), deps_type=str, capabilities=[memory])

    print("turn 1:", (await agent.run("Please remember that I am vegetarian.", deps="alice")).output)
    print("turn 2:", (await agent.run("What should I cook tonight?", deps="alice")).output)

    # the same notebook, seen through the kernel: a memory in Alice's scope, written by "pydantic-ai"
    hit = db.sync.find("what does alice eat", user_id="alice")[0]
    print(f"kernel: [{hit.entry.source}] {hit.entry.metadata['file_path']}: {hit.content.strip()}")
    db.sync.close()


if __name__ == "__main__":
    asyncio.run(main())
