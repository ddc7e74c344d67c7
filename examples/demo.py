"""The main demo: all five adapters write to one database file, and each finds what the others wrote.

Run it with `make demo`. It uses `$AGENTBASE_PATH` or a fresh file in a temporary folder, the
bundled MiniLM embedder and the spaCy pipeline, with no network and no LLM.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from datetime import UTC, datetime
from pathlib import Path

warnings.filterwarnings("ignore", category=DeprecationWarning)  # Assistants + LangChain memory are deprecated upstream
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from agentbase_kernel import AgentBase


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(2, 70 - len(title)))


class Writers:
    """Which adapter wrote each entry, from the ids and session ids each adapter handed back.

    LangGraph records itself as the entry's actor; the other adapters do not yet, so the demo
    remembers what each one returned.
    """

    def __init__(self) -> None:
        self.by_entry: dict[str, str] = {}
        self.by_session: dict[str, str] = {}

    def label(self, entry) -> str:
        if entry.id in self.by_entry:
            return self.by_entry[entry.id]
        if entry.session_id in self.by_session:
            return self.by_session[entry.session_id]
        return "LangGraph" if entry.actor == "langgraph" else "kernel"


def main() -> None:
    path = Path(os.environ.get("AGENTBASE_PATH") or Path(tempfile.mkdtemp()) / "demo.db")
    db = AgentBase(path)
    info = db.sync.info()
    print(f"one database file: {info['path']}")
    print(f"vectors: {info['vector_backend']}   NER: {info['ner_stage']}   embedder: {info['embedder']}")

    writers = Writers()

    section("Minimal: remember / recall")
    from agentbase_adapters.minimal import MinimalAdapter

    minimal = MinimalAdapter(db)
    for text, who in (("Alice prefers window seats on long flights", "alice"), ("Bob is allergic to peanuts", "bob")):
        entry_id = minimal.remember(text, who=who, tags=["travel"] if who == "alice" else ())
        writers.by_entry[entry_id] = "Minimal"
        print(f"  remember({text!r}, who={who!r}) -> {entry_id}")
    print(f"  recall('seat preference', who='alice') -> {minimal.recall('seat preference', who='alice')[0].content!r}")

    section("Mem0: Memory.add (zero-LLM fact extraction)")
    from agentbase_adapters.mem0 import Mem0Adapter

    mem0 = Mem0Adapter(db)
    added = mem0.add([{"role": "user", "content": "I love sci-fi movies and I live in Lisbon"}], user_id="alice")
    for item in added["results"]:
        writers.by_entry[item["id"]] = "Mem0"
        print(f"  {item['event']}: {item['memory']}")

    section("LangChain: chat history of a session")
    from langchain_core.messages import AIMessage, HumanMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    history = AgentBaseChatMessageHistory("alice-chat", db=db, user_id="alice")
    writers.by_session["alice-chat"] = "LangChain"
    history.add_messages([HumanMessage("I'm planning a trip to Japan in April"),
                          AIMessage("Kyoto is lovely in April, the cherry blossoms peak then.")])
    print(f"  {len(history.messages)} messages stored")

    section("LangGraph: store put")
    from agentbase_adapters.langgraph import AgentBaseStore

    store = AgentBaseStore(db)
    store.put(("memories", "alice"), "diet", {"text": "Alice is vegetarian"})
    item = store.get(("memories", "alice"), "diet")
    print(f"  put(('memories', 'alice'), 'diet', ...) -> get: {item.value if item else None}")

    section("LlamaIndex: chat store")
    from llama_index.core.llms import ChatMessage

    from agentbase_adapters.llamaindex import AgentBaseChatStore

    chat_store = AgentBaseChatStore(db, user_id="alice")
    writers.by_session["alice-llama"] = "LlamaIndex"
    chat_store.add_message("alice-llama", ChatMessage(role="user", content="Remind me to renew my passport"))
    print(f"  get_messages('alice-llama') -> {[m.content for m in chat_store.get_messages('alice-llama')]}")
    summary = db.sync.commit_session("alice-llama")  # the rule-based session summary, no LLM
    print(f"  session summary: {summary.l2_full}")

    section("OpenAI threads: in-process adapter")
    from agentbase_adapters.openai import OpenAIAssistantAdapter

    oa = OpenAIAssistantAdapter(db)
    thread = oa.create_thread(metadata={"user_id": "alice", "agent_id": "travel-bot"})
    writers.by_session[thread["id"]] = "OpenAI"
    oa.create_message(thread_id=thread["id"], role="user", content="Book me a hotel near Kyoto station")
    listed = oa.list_messages(thread_id=thread["id"])["data"]
    print(f"  thread {thread['id']}: {len(listed)} message(s), first: {listed[0]['content'][0]['text']['value']!r}")

    section("One file: every row of alice's scope, labelled with the adapter that wrote it")
    rows = db.sync.list(user_id="alice", limit=None)
    for entry in rows:
        print(f"  [{writers.label(entry):<10}] {entry.l2_full}")
    missing = {"Minimal", "Mem0", "LangChain", "LangGraph", "LlamaIndex", "OpenAI"} - {writers.label(e) for e in rows}
    print(f"  adapters without a row: {sorted(missing) or 'none'}")

    section("Every adapter finds what the others wrote (alice's scope only)")
    query = "what do we know about alice's trip and preferences?"
    for hit in minimal.recall(query, who="alice", top_k=6):
        print(f"  {hit.score:.3f}  [{writers.label(hit.entry):<10}] {hit.entry.l2_full}")
    found = mem0.search("where does she live?", filters={"user_id": "alice"}, top_k=2)["results"]
    print(f"  mem0.search -> {[r['memory'] for r in found]}")
    items = store.search(("memories", "alice"), query="food")
    print(f"  langgraph.search -> {[i.value for i in items]}")
    context = oa.retrieve_context(thread_id=thread["id"], query="hotel")
    print(f"  openai.retrieve_context -> {len(context['data']) if isinstance(context, dict) else len(context)} hits")
    peanuts = [h.entry.l2_full for h in minimal.recall("peanuts allergy", who="alice")]
    print(f"  bob's peanut allergy is not in alice's scope: {not any('peanut' in t for t in peanuts)}")

    section("Temporal reasoning, zero LLM")
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    db.sync.add_message("support", "user", "I went to the LGBTQ support group yesterday", created_at=when)
    hit = db.sync.find("when did I go to the support group?", reference_time=when)[0]
    print(f"  {hit.entry.l2_full!r} -> resolved date {hit.entry.event_dates}")
    db.sync.close()


if __name__ == "__main__":
    main()
