"""Every adapter stamps its name on what it writes (``Entry.source``), on one shared file."""

from __future__ import annotations

from agentbase_kernel import AgentBase


def test_each_adapter_records_its_source(db: AgentBase) -> None:
    from langchain_core.messages import HumanMessage
    from langgraph.store.base import PutOp
    from llama_index.core.llms import ChatMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory
    from agentbase_adapters.langgraph import AgentBaseStore
    from agentbase_adapters.llamaindex import AgentBaseChatStore
    from agentbase_adapters.mem0 import Mem0Adapter
    from agentbase_adapters.minimal import MinimalAdapter

    MinimalAdapter(db).remember("minimal: I like green tea", who="u1")
    Mem0Adapter(db).add("mem0: I like black coffee", user_id="u2", infer=False)
    AgentBaseChatMessageHistory("lc", db=db, user_id="u3").add_messages([HumanMessage("langchain: hello there")])
    AgentBaseChatStore(db, user_id="u4").add_message("li", ChatMessage(role="user", content="llamaindex: hi"))
    AgentBaseStore(db).batch([PutOp(("u5", "memories"), "k1", {"text": "langgraph: a fact"})])
    db.sync.add_memory("kernel: direct", user_id="u6")
    db.sync.wait_embedded()
    sources = {e.text.split(":")[0]: e.source for e in db.sync.list(limit=None) if ":" in e.text}
    assert sources == {"minimal": "minimal", "mem0": "mem0", "langchain": "langchain", "llamaindex": "llamaindex",
                       "langgraph": "langgraph", "kernel": "kernel"}
    # the adapters' views share the file: nothing was opened twice, and the db stays the caller's
    assert AgentBaseChatStore(db, user_id="u4").db is db
