"""deepagents: the agent's /memories/ files kept in agentbase (one line changes).

Runs offline: a scripted fake chat model calls deepagents' file tools the way a model would. The
memory file outlives the conversation (a second thread reads it) and is an ordinary memory of Alice.

    python examples/deepagents_memories.py
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import Any

from deepagents import create_deep_agent
from deepagents.backends import CompositeBackend, StateBackend
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from agentbase_adapters.deepagents import AgentBaseBackend
from agentbase_kernel import AgentBase


class ScriptedModel(GenericFakeChatModel):
    """Plays back the given messages; accepts the tools the agent binds."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def script(*steps: tuple[str, dict[str, Any]] | str) -> Iterator[AIMessage]:
    for i, step in enumerate(steps):
        if isinstance(step, str):
            yield AIMessage(content=step)
        else:
            yield AIMessage(content="", tool_calls=[{"name": step[0], "args": step[1], "id": f"call_{i}"}])


def main() -> None:
    path = os.environ.get("AGENTBASE_PATH") or os.path.join(tempfile.mkdtemp(), "memory.db")
    db = AgentBase(path)
    # before: routes={"/memories/": StoreBackend(namespace=lambda rt: ("alice",))}
    backend = CompositeBackend(default=StateBackend(), routes={"/memories/": AgentBaseBackend(db, user_id="alice")})

    first = ScriptedModel(messages=script(
        ("write_file", {"file_path": "/memories/preferences.md", "content": "- vegetarian\n- window seats\n"}),
        "I'll remember that."))
    create_deep_agent(model=first, backend=backend).invoke({"messages": [{"role": "user", "content": "I'm vegetarian"}]})

    later = ScriptedModel(messages=script(("grep", {"pattern": "vegetarian", "path": "/memories", "output_mode": "content"}),
                                          "You're vegetarian, so: mushroom risotto."))
    result = create_deep_agent(model=later, backend=backend).invoke(
        {"messages": [{"role": "user", "content": "What should I cook?"}]})
    print("grep in a new conversation:", [m.content for m in result["messages"] if isinstance(m, ToolMessage)][0])
    print("agent:", result["messages"][-1].content)

    hit = db.sync.find("what does alice eat", user_id="alice")[0]
    print(f"kernel: [{hit.entry.source}] {hit.entry.metadata['file_path']}: {hit.content.splitlines()[0]}")
    db.sync.close()


if __name__ == "__main__":
    main()
