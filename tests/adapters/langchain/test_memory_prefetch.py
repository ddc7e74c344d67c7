"""LangChainMemoryAdapter fills its memories with Kernel.prefetch: relevant memories, profile facts, recent memories."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_classic.chains import ConversationChain
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from pydantic import ValidationError

from agentbase_adapters.langchain import LangChainMemoryAdapter
from agentbase_kernel import AgentBase

pytestmark = pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")


class PromptRecorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.prompts.append("\n".join(m.text for m in messages[0]))


def _bullets(history: str) -> list[str]:
    block = history.split("\n\n", 1)[0]
    assert block.startswith("Relevant memories:\n")
    return [line[2:] for line in block.splitlines()[1:]]


def test_profile_facts_come_even_when_the_input_does_not_mention_them(db: AgentBase) -> None:
    db.sync.add_memory("Ada prefers window seats", user_id="ada", category="preference")
    db.sync.add_memory("Bob prefers aisle seats", user_id="bob", category="preference")
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="new-chat")
    history = memory.load_memory_variables({"input": "hello there"})["history"]
    assert _bullets(history) == ["Ada prefers window seats"]


def test_what_answers_the_input_comes_before_the_profile(db: AgentBase) -> None:
    for food in ("olives", "capers", "anchovies"):
        db.sync.add_memory(f"Ada dislikes {food}", user_id="ada", category="preference")
    db.sync.add_memory("The plumber comes on Friday at nine", user_id="ada")
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="s")
    memories = _bullets(memory.load_memory_variables({"input": "when does the plumber come?"})["history"])
    assert memories[0] == "The plumber comes on Friday at nine"
    assert {"Ada dislikes olives", "Ada dislikes capers", "Ada dislikes anchovies"} <= set(memories[1:])


def test_recent_memories_of_other_sessions_come_with_the_window(db: AgentBase) -> None:
    earlier = LangChainMemoryAdapter(db, owner_id="ada", session_id="monday")
    earlier.save_context({"input": "The plumber comes on Friday."}, {"response": "Noted."})
    today = LangChainMemoryAdapter(db, owner_id="ada", session_id="tuesday")
    today.save_context({"input": "Good morning"}, {"response": "Morning!"})
    history = today.load_memory_variables({"input": "what should I cook tonight?"})["history"]
    memories = _bullets(history)
    assert "The plumber comes on Friday." in memories
    assert "Good morning" not in memories  # this session's turn is in the window, not repeated
    assert history.endswith("Human: Good morning\nAI: Morning!")


def test_the_token_budget_bounds_the_memories(db: AgentBase) -> None:
    for i in range(30):
        db.sync.add_memory(f"Ada likes hobby number {i} very much indeed", user_id="ada", category="preference")
    wide = LangChainMemoryAdapter(db, owner_id="ada", session_id="s", prefetch_token_budget=2000)
    narrow = LangChainMemoryAdapter(db, owner_id="ada", session_id="s", prefetch_token_budget=60)
    many = _bullets(wide.load_memory_variables({"input": "hobby"})["history"])
    few = _bullets(narrow.load_memory_variables({"input": "hobby"})["history"])
    assert 0 < len(few) < len(many)
    assert set(few) <= set(many)
    with pytest.raises(ValidationError):
        LangChainMemoryAdapter(db, owner_id="ada", prefetch_token_budget=0)


def test_prefetch_reaches_the_prompt_of_a_conversation_chain(db: AgentBase) -> None:
    db.sync.add_memory("Ada is vegetarian", user_id="ada", category="preference")
    recorder = PromptRecorder()
    chain = ConversationChain(
        llm=FakeListChatModel(responses=["Hi!", "How about a mushroom risotto?"], callbacks=[recorder]),
        memory=LangChainMemoryAdapter(db, owner_id="ada", session_id="dinner"),
    )
    chain.invoke({"input": "Hello"})
    chain.invoke({"input": "Any idea for tonight?"})
    assert "- Ada is vegetarian" in recorder.prompts[0]
    assert "- Ada is vegetarian" in recorder.prompts[1]
    assert "Human: Hello\nAI: Hi!" in recorder.prompts[1]


def test_as_messages_the_memories_lead_in_the_system_message(db: AgentBase) -> None:
    db.sync.add_memory("Ada is vegetarian", user_id="ada", category="preference")
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="m", return_messages=True)
    memory.save_context({"input": "Hi"}, {"response": "Hello"})
    messages = memory.load_memory_variables({"input": "dinner?"})["history"]
    assert isinstance(messages[0], SystemMessage)
    assert messages[0].content == "Relevant memories:\n- Ada is vegetarian"
    assert [(m.type, m.content) for m in messages[1:]] == [("human", "Hi"), ("ai", "Hello")]
