"""LangChainMemoryAdapter against langchain-classic's ConversationBufferMemory and ConversationChain."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_classic.base_memory import BaseMemory
from langchain_classic.chains import ConversationChain
from langchain_classic.memory import ConversationBufferMemory
from langchain_classic.memory.chat_memory import BaseChatMemory
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agentbase_adapters.langchain import AgentBaseChatMessageHistory, LangChainMemoryAdapter, trim_start
from agentbase_kernel import AgentBase

pytestmark = pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")

TURNS = [
    ({"input": "Hi, I'm Ada."}, {"response": "Hello Ada!"}),
    ({"input": "I'm planning a trip to Lisbon."}, {"response": "Lisbon is lovely in May."}),
]


def reference_memory(**kwargs: Any) -> ConversationBufferMemory:
    return ConversationBufferMemory(**kwargs)


@pytest.fixture
def memory(db: AgentBase) -> LangChainMemoryAdapter:
    return LangChainMemoryAdapter(db, owner_id="ada", session_id="chat-1")


def test_is_a_real_base_chat_memory(memory: LangChainMemoryAdapter) -> None:
    assert isinstance(memory, BaseChatMemory) and isinstance(memory, BaseMemory)
    assert isinstance(memory.chat_memory, AgentBaseChatMessageHistory)
    assert memory.memory_variables == ["history"]
    assert LangChainMemoryAdapter(memory.db, owner_id="ada", memory_key="chat").memory_variables == ["chat"]


@pytest.mark.parametrize("return_messages", [False, True], ids=["string", "messages"])
def test_without_long_term_memories_it_matches_conversation_buffer_memory(
    db: AgentBase, return_messages: bool
) -> None:
    ours = LangChainMemoryAdapter(db, owner_id="ada", session_id="chat-1", return_messages=return_messages)
    reference = reference_memory(return_messages=return_messages)
    for inputs, outputs in TURNS:
        ours.save_context(inputs, outputs)
        reference.save_context(inputs, outputs)
    question = {"input": "What's the weather like?"}
    assert ours.load_memory_variables(question) == reference.load_memory_variables(question)


def test_long_term_memories_of_the_owner_come_with_the_turns(db: AgentBase, memory: LangChainMemoryAdapter) -> None:
    db.sync.add_memory("Ada is allergic to peanuts", user_id="ada")
    db.sync.add_memory("Bob is allergic to peanuts and shellfish", user_id="bob")
    for inputs, outputs in TURNS:
        memory.save_context(inputs, outputs)

    history = memory.load_memory_variables({"input": "Any peanuts allergy I should mention?"})["history"]
    memories, buffer = history.split("\n\n", 1)
    assert memories.startswith("Relevant memories:\n- ")
    assert "- Ada is allergic to peanuts" in memories.splitlines()
    assert "Bob" not in history
    assert buffer == (
        "Human: Hi, I'm Ada.\nAI: Hello Ada!\n"
        "Human: I'm planning a trip to Lisbon.\nAI: Lisbon is lovely in May."
    )


def test_long_term_memories_as_messages(db: AgentBase) -> None:
    db.sync.add_memory("Ada is allergic to peanuts", user_id="ada")
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="chat-1", return_messages=True)
    memory.save_context(*TURNS[0])
    messages = memory.load_memory_variables({"input": "peanuts allergy?"})["history"]
    assert isinstance(messages[0], SystemMessage)
    assert "- Ada is allergic to peanuts" in messages[0].content.splitlines()
    assert [(m.type, m.content) for m in messages[1:]] == [("human", "Hi, I'm Ada."), ("ai", "Hello Ada!")]


def test_turns_trimmed_out_of_the_window_come_back_as_memories(db: AgentBase) -> None:
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="chat-1", max_token_limit=30)
    memory.save_context({"input": "My passport number ends in 7731."}, {"response": "Saved."})
    for i in range(6):
        memory.save_context({"input": f"filler question {i}"}, {"response": f"filler answer {i}"})
    history = memory.load_memory_variables({"input": "what does my passport number end in?"})["history"]
    window = history.split("\n\n")[-1]
    assert "7731" not in window
    assert "7731" in history


def test_turns_in_the_window_are_not_repeated_as_memories(memory: LangChainMemoryAdapter) -> None:
    memory.save_context({"input": "My passport number ends in 7731."}, {"response": "Saved."})
    history = memory.load_memory_variables({"input": "passport number 7731"})["history"]
    assert history.count("7731") == 1


async def test_async_twins_match_the_sync_methods(db: AgentBase) -> None:
    db.sync.add_memory("Ada is allergic to peanuts", user_id="ada")
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="chat-1")
    for inputs, outputs in TURNS:
        await memory.asave_context(inputs, outputs)
    question = {"input": "peanuts allergy?"}
    assert await memory.aload_memory_variables(question) == memory.load_memory_variables(question)
    assert db.sync.count_messages("chat-1") == 4
    await memory.aclear()
    assert db.sync.count_messages("chat-1") == 0
    assert "Human:" not in (await memory.aload_memory_variables({"input": "hello"}))["history"]


def test_memories_written_by_langgraph_are_recalled(db: AgentBase) -> None:
    from agentbase_adapters.langgraph import AgentBaseStore

    store = AgentBaseStore(db)
    store.put(("memories", "ada"), "diet", {"text": "Ada is vegetarian"})
    store.put(("memories", "bob"), "diet", {"text": "Bob is vegan"})
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="dinner")
    history = memory.load_memory_variables({"input": "Suggest a vegetarian or vegan dinner"})["history"]
    assert "- Ada is vegetarian" in history.splitlines()
    assert "Bob" not in history


def test_save_context_goes_through_ingest(db: AgentBase, memory: LangChainMemoryAdapter) -> None:
    memory.save_context({"input": "I moved to Porto last year."}, {"response": "How do you like it?"})
    stored = db.sync.list_messages("chat-1")
    assert [(m.role, m.content) for m in stored] == [("user", "I moved to Porto last year."), ("assistant", "How do you like it?")]
    assert all(m.entry_id for m in stored)
    assert any("Porto" in h.content for h in db.sync.find("where does Ada live, Porto?", user_id="ada"))
    assert not any("Porto" in h.content for h in db.sync.find("Porto", user_id="someone-else"))


def test_clear_forgets_the_session_but_not_other_memories(db: AgentBase, memory: LangChainMemoryAdapter) -> None:
    db.sync.add_memory("Ada is allergic to peanuts", user_id="ada")
    memory.save_context(*TURNS[0])
    memory.clear()
    assert memory.chat_memory.messages == []
    assert db.sync.count(user_id="ada", session_id="chat-1") == 0
    assert [e.text for e in db.sync.list(user_id="ada")] == ["Ada is allergic to peanuts"]


# -- LangChain's input / output key rules (langchain_classic.memory.utils) ------------------------


def _error(call: Any) -> str:
    with pytest.raises(ValueError) as info:
        call()
    return str(info.value)


def test_input_key_rules_match_langchain(memory: LangChainMemoryAdapter) -> None:
    reference = reference_memory()
    two_inputs = {"input": "a", "other": "b"}
    outputs = {"response": "x"}
    assert _error(lambda: memory.save_context(two_inputs, outputs)).startswith("One input key expected got [")
    assert _error(lambda: reference.save_context(two_inputs, outputs)).startswith("One input key expected got [")
    assert _error(lambda: memory.load_memory_variables(two_inputs)).startswith("One input key expected got [")
    # memory variables and "stop" do not count as inputs
    memory.save_context({"input": "a", "history": "ignored", "stop": ["\n"]}, outputs)
    memory.input_key = "other"
    memory.save_context(two_inputs, outputs)
    assert [m.content for m in memory.chat_memory.messages] == ["a", "x", "b", "x"]


def test_output_key_rules_match_langchain(memory: LangChainMemoryAdapter) -> None:
    reference = reference_memory()
    ambiguous = {"a": "1", "b": "2"}
    assert _error(lambda: memory.save_context({"input": "q"}, ambiguous)) == _error(
        lambda: reference.save_context({"input": "q"}, ambiguous)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        memory.save_context({"input": "q"}, {"output": "o", "extra": "e"})
    assert any("default 'output' key is being used" in str(w.message) for w in caught)
    memory.output_key = "extra"
    memory.save_context({"input": "q2"}, {"output": "o", "extra": "e"})
    assert [m.content for m in memory.chat_memory.messages] == ["q", "o", "q2", "e"]


def test_constructor_errors(db: AgentBase) -> None:
    with pytest.raises(TypeError, match="owner_id"):
        LangChainMemoryAdapter(db)
    with pytest.raises(TypeError, match="session_id"):
        LangChainMemoryAdapter(db, owner_id="ada", chat_memory=AgentBaseChatMessageHistory("x", db=db))


# -- ConversationChain, driven by FakeListChatModel ------------------------------------------------


class PromptRecorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.prompts.append("\n".join(m.text for m in messages[0]))


async def test_conversation_chain_sync_and_async(db: AgentBase) -> None:
    db.sync.add_memory("Ada prefers window seats on planes", user_id="ada")
    recorder = PromptRecorder()
    chain = ConversationChain(
        llm=FakeListChatModel(responses=["Hello Ada!", "A window seat, as usual."], callbacks=[recorder]),
        memory=LangChainMemoryAdapter(db, owner_id="ada", session_id="trip"),
    )
    assert chain.invoke({"input": "Hi, I'm Ada."})["response"] == "Hello Ada!"
    result = await chain.ainvoke({"input": "Which seat should I book on the plane?"})
    assert result["response"] == "A window seat, as usual."

    second_prompt = recorder.prompts[1]
    assert "Human: Hi, I'm Ada.\nAI: Hello Ada!" in second_prompt
    assert "- Ada prefers window seats on planes" in second_prompt
    assert [(m.role, m.content) for m in db.sync.list_messages("trip")] == [
        ("user", "Hi, I'm Ada."),
        ("assistant", "Hello Ada!"),
        ("user", "Which seat should I book on the plane?"),
        ("assistant", "A window seat, as usual."),
    ]


def test_conversation_chain_with_return_messages(db: AgentBase) -> None:
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{input}")])
    chain = ConversationChain(
        llm=FakeListChatModel(responses=["one", "two"]),
        prompt=prompt,
        memory=LangChainMemoryAdapter(db, owner_id="ada", session_id="msgs", return_messages=True),
    )
    chain.invoke({"input": "first"})
    chain.invoke({"input": "second"})
    assert [m.content for m in AgentBaseChatMessageHistory("msgs", db=db, user_id="ada").messages] == [
        "first",
        "one",
        "second",
        "two",
    ]


# -- trimming never separates a tool call from its result ------------------------------------------


def _conversation(shape: list[int]) -> list[BaseMessage]:
    """Build a conversation: 0 = human turn, 1 = plain AI turn, n >= 2 = AI calling n-1 tools + results."""
    messages: list[BaseMessage] = []
    for i, kind in enumerate(shape):
        if kind == 0:
            messages.append(HumanMessage(f"question {i} " * (i % 3 + 1)))
        elif kind == 1:
            messages.append(AIMessage(f"answer {i}"))
        else:
            calls = [{"name": "tool", "args": {"n": j}, "id": f"c{i}-{j}"} for j in range(kind - 1)]
            messages.append(AIMessage("", tool_calls=calls))
            messages.extend(ToolMessage(f"result {i}-{j}", tool_call_id=f"c{i}-{j}") for j in range(kind - 1))
    return messages


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=12), budget=st.integers(0, 200))
def test_trim_keeps_tool_calls_with_their_results(shape: list[int], budget: int) -> None:
    messages = _conversation(shape)
    window = messages[trim_start(messages, budget) :]
    answered = {m.tool_call_id for m in window if isinstance(m, ToolMessage)}
    called = {c["id"] for m in window if isinstance(m, AIMessage) for c in m.tool_calls}
    assert answered == called
    assert trim_start(messages, None) == 0


def test_trim_drops_whole_tool_exchanges(db: AgentBase) -> None:
    history = AgentBaseChatMessageHistory("tools", db=db, user_id="ada")
    history.add_messages(_conversation([0, 3, 1, 0, 1]))
    messages = history.messages  # H, AI calling 2 tools, Tool, Tool, AI, H, AI
    starts = {trim_start(messages, budget) for budget in range(0, 200)}
    assert starts == {0, 1, 4, 5, 6, 7}
    start = trim_start(messages, 40)
    assert start == 4
    memory = LangChainMemoryAdapter(db, owner_id="ada", session_id="tools", max_token_limit=40, return_messages=True)
    window = [m for m in memory.load_memory_variables({"input": "x"})["history"] if not isinstance(m, SystemMessage)]
    assert window == messages[start:]
