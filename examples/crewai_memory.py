"""CrewAI: a crew's unified Memory stored in agentbase (one line changes).

Runs offline: a scripted CrewAI LLM plays the agent (and the memory analysis CrewAI asks an LLM for);
the embeddings are agentbase's own local model, so no API key is needed at all. The second kickoff's
agent is given what the first one learned, and it is an ordinary memory of Alice.

    python examples/crewai_memory.py          # in an environment with agentbase-memory[crewai]
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

for flag in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CREWAI_DISABLE_VERSION_CHECK"):
    os.environ.setdefault(flag, "true")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.memory.unified_memory import Memory

from agentbase_adapters.crewai import AgentBaseStorage
from agentbase_kernel import AgentBase


class ScriptedLLM(BaseLLM):
    """Answers a task with the next scripted line; answers CrewAI's memory extraction with that line as the memory."""

    answers: list[str] = []
    prompts: list[str] = []

    def __init__(self, answers: list[str]) -> None:
        super().__init__(model="scripted")
        self.answers, self.prompts = list(answers), []

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        text = messages if isinstance(messages, str) else "\n".join(str(m.get("content", "")) for m in messages)
        self.prompts.append(text)
        if "suggested_scope" in text:  # CrewAI asking where a new memory belongs
            return json.dumps({"suggested_scope": "/people/alice", "categories": ["preferences"], "importance": 0.7,
                               "extracted_metadata": {"entities": ["Alice"], "dates": [], "topics": ["tea"]}})
        if '"memories"' in text:  # CrewAI asking which memories a task's result holds
            return json.dumps({"memories": [text.split("Final Answer:", 1)[-1].strip().splitlines()[0]]})
        return f"Thought: I can answer.\nFinal Answer: {self.answers.pop(0) if self.answers else 'done'}"


def kickoff(memory: Memory, question: str, answer: str) -> ScriptedLLM:
    llm = ScriptedLLM([answer])
    agent = Agent(role="assistant", goal="help Alice", backstory="Alice's assistant.", llm=llm)
    Crew(agents=[agent], tasks=[Task(description=question, expected_output="an answer", agent=agent)],
         memory=memory).kickoff()
    memory.drain_writes()
    return llm


def main() -> None:
    path = os.environ.get("AGENTBASE_PATH") or os.path.join(tempfile.mkdtemp(), "memory.db")
    db = AgentBase(path)
    storage = AgentBaseStorage(db, user_id="alice")
    memory = Memory(storage=storage, embedder=storage.embedder, llm=ScriptedLLM([]))  # before: Memory()

    kickoff(memory, "What does Alice like to drink?", "Alice's favourite tea is oolong.")
    later = kickoff(memory, "Which tea should I buy for Alice?", "Oolong.")
    print("second kickoff was told:", [line.strip() for p in later.prompts for line in p.splitlines()
                                       if "favourite tea" in line][0])
    hit = db.sync.find("what does alice drink", user_id="alice")[0]
    print(f"kernel: [{hit.entry.source}] {hit.content}")
    memory.close()
    db.sync.close()


if __name__ == "__main__":
    main()
