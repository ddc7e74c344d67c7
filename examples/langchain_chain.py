"""LangChain chat history and chat memory kept in agentbase: one line changes, one SQLite file.

Runs offline: LangChain's FakeListChatModel stands in for a real model, and the database lives in a
temp dir. Swap the fake for any chat model and the temp path for your own file.

    python examples/langchain_chain.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import warnings
from pathlib import Path

from langchain_core.language_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from agentbase_adapters.langchain import AgentBaseChatMessageHistory, LangChainMemoryAdapter
from agentbase_kernel import AgentBase

# LangChain deprecates its own memory classes (RunnableWithMessageHistory, ConversationChain)
# in favour of LangGraph; the warnings are LangChain's, the example still shows the drop-in.
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"langchain.*")
warnings.filterwarnings("ignore", message=r".*deprecated.*")


def runnable_with_history(db: AgentBase) -> None:
    # Before: get_session_history=lambda sid: InMemoryChatMessageHistory(); after: agentbase.
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a travel assistant."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    chain = RunnableWithMessageHistory(
        prompt | FakeListChatModel(responses=["Lisbon in May is lovely.", "Try the grilled sardines."]),
        lambda session_id: AgentBaseChatMessageHistory(session_id, db=db, user_id="alice"),
        input_messages_key="question",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": "alice-trip"}}
    chain.invoke({"question": "I'm going to Lisbon in May and I love seafood."}, config=config)
    asyncio.run(chain.ainvoke({"question": "What should I eat there?"}, config=config))
    history = AgentBaseChatMessageHistory("alice-trip", db=db, user_id="alice")
    print(f"RunnableWithMessageHistory: {len(history.messages)} messages in session 'alice-trip'")


def conversation_chain(db: AgentBase) -> None:
    # Before: memory=ConversationBufferMemory(); after: recent turns + alice's long-term memories.
    from langchain_classic.chains import ConversationChain

    db.sync.add_memory("Alice is allergic to peanuts", user_id="alice")
    memory = LangChainMemoryAdapter(db, owner_id="alice", session_id="alice-dinner")
    chain = ConversationChain(llm=FakeListChatModel(responses=["Noted!", "Avoid satay: it has peanuts."]), memory=memory)
    chain.invoke({"input": "Book me a table for dinner tonight."})
    print("ConversationChain prompt history for the next turn:")
    print("  " + memory.load_memory_variables({"input": "Any dish with peanuts I should avoid?"})["history"].replace("\n", "\n  "))


def recall(db: AgentBase) -> None:
    # Every turn is an agentbase memory of alice's scope, whichever LangChain class wrote it.
    for query in ("where is alice travelling", "food allergy"):
        print(f"find({query!r}):")
        for hit in db.sync.find(query, user_id="alice", top_k=2):
            print(f"  {hit.score:.3f}  {hit.content}")


def main(path: Path) -> None:
    with AgentBase(path) as db:
        runnable_with_history(db)
        conversation_chain(db)
        recall(db)
    with AgentBase(path) as db:  # a new process would see the same: the file is the memory
        first = AgentBaseChatMessageHistory("alice-trip", db=db, user_id="alice").messages[0]
        print(f"reopened: first message was {first.content!r}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "memory.db")
