"""A scripted CrewAI LLM (``BaseLLM``): agents get a ReAct final answer, memory analysis gets valid JSON.

CrewAI ships no fake model; this one answers the three kinds of calls a crew with memory makes offline:
the agent's task (``Final Answer: ...``), memory extraction (``{"memories": [...]}``) and the save /
query analyses, recognised by the ``response_model`` CrewAI asks for or by its prompt.
"""

from __future__ import annotations

import json
from typing import Any

from crewai.llms.base_llm import BaseLLM
from crewai.memory.analyze import ConsolidationPlan, ExtractedMemories, MemoryAnalysis, QueryAnalysis


class ScriptedLLM(BaseLLM):
    answers: list[str] = []
    seen: list[str] = []

    def __init__(self, answers: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(model="scripted", **kwargs)
        self.answers = list(answers or [])
        self.seen = []

    def supports_function_calling(self) -> bool:
        return False

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 8192

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> str:
        text = messages if isinstance(messages, str) else "\n".join(str(m.get("content", "")) for m in messages)
        self.seen.append(text)
        lowered = text.lower()
        if response_model is MemoryAnalysis or "suggested_scope" in lowered:
            return json.dumps({"suggested_scope": "/", "categories": ["notes"], "importance": 0.5,
                               "extracted_metadata": {"entities": [], "dates": [], "topics": []}})
        if response_model is QueryAnalysis or "recall_queries" in lowered:
            return json.dumps({"keywords": [], "suggested_scopes": [], "complexity": "simple", "recall_queries": [],
                               "time_filter": None})
        if response_model is ConsolidationPlan or "insert_new" in lowered:
            return json.dumps({"actions": [], "insert_new": True, "insert_reason": "new"})
        if response_model is ExtractedMemories or "extract" in lowered and "memories" in lowered:
            result = text.split("Result:", 1)[-1] if "Result:" in text else text[-200:]
            result = result.split("Final Answer:", 1)[-1].strip().splitlines()[0]
            return json.dumps({"memories": [result]})
        answer = self.answers.pop(0) if self.answers else "done"
        return f"Thought: I know the answer.\nFinal Answer: {answer}"
