"""Run as a script by test_no_network.py: guard every socket, then drive every adapter with defaults.

The guard is installed before anything of ours (or any framework) is imported. A connect to a
non-loopback address raises ``ConnectionRefusedError`` and is recorded, even if the caller swallows
it (telemetry clients usually do). Prints one JSON line: the blocked attempts and the calls made.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys

BLOCKED: list[str] = []
ALLOWED: list[str] = []


def _host(address) -> str:
    return str(address[0]) if isinstance(address, tuple) else str(address)


def _is_loopback(host: str) -> bool:
    if host in ("localhost", "") or host.startswith("/"):  # AF_UNIX paths are local too
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guard(name, original):
    def guarded(*args, **kwargs):
        address = args[1] if name != "create_connection" else args[0]
        host = _host(address)
        if not _is_loopback(host):
            BLOCKED.append(f"{name} {host}")
            raise ConnectionRefusedError(f"network blocked by test: {name} to {host}")
        ALLOWED.append(f"{name} {host}")
        return original(*args, **kwargs)

    return guarded


socket.socket.connect = _guard("connect", socket.socket.connect)
socket.socket.connect_ex = _guard("connect_ex", socket.socket.connect_ex)
socket.create_connection = _guard("create_connection", socket.create_connection)


def workout(path: str) -> list[str]:
    import asyncio

    from langchain_core.messages import AIMessage, HumanMessage
    from llama_index.core.base.llms.types import ChatMessage
    from starlette.testclient import TestClient

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory, LangChainMemoryAdapter
    from agentbase_adapters.langgraph import AgentBaseStore
    from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore, AgentBaseChatStore
    from agentbase_adapters.mem0 import Memory
    from agentbase_adapters.minimal import MinimalAdapter
    from agentbase_adapters.openai import AgentBaseSession, OpenAIAssistantAdapter, create_app
    from agentbase_kernel import AgentBase

    done = []
    db = AgentBase(path)  # every default: embedder="auto", ner="auto"
    k = db.sync
    k.add_memory("Alice moved to Lisbon in May and loves surfing", user_id="alice", infer=True)
    k.add_messages("s1", [{"role": "user", "content": "I work at Acme as a nurse"},
                          {"role": "assistant", "content": "Noted!"}])
    k.find("where does Alice live?", user_id="alice")
    k.commit_session("s1")
    done.append("kernel")
    m = Memory()  # Mem0's one-line swap with its default config
    r = m.add("I am vegetarian", user_id="bob")
    m.search("food", user_id="bob")
    m.get_all(user_id="bob")
    m.update(r["results"][0]["id"], "I am vegan")
    m.history(r["results"][0]["id"])
    m.delete_all(user_id="bob")
    m.close()
    done.append("mem0")
    mini = MinimalAdapter(db)
    mini.forget(mini.remember("Carol likes jazz", who="carol"))
    mini.recall("music", who="carol")
    done.append("minimal")
    h = AgentBaseChatMessageHistory("lc1", db=db, user_id="dave")
    h.add_messages([HumanMessage("I ride a bike"), AIMessage("Nice")])
    lcm = LangChainMemoryAdapter(db, owner_id="dave")
    lcm.save_context({"input": "my bike is red"}, {"output": "ok"})
    lcm.load_memory_variables({"input": "what colour is my bike?"})
    done.append("langchain")
    store = AgentBaseStore(db)
    store.put(("memories", "erin"), "k", {"text": "Erin drinks oolong"})
    store.search(("memories", "erin"), query="tea")
    done.append("langgraph")
    chats = AgentBaseChatStore(db, user_id="fay")
    chats.add_message("c1", ChatMessage(role="user", content="hello"))
    chats.get_messages("c1")
    asyncio.run(AgentBaseAsyncChatStore(db).add_message("c2", ChatMessage(role="user", content="hi")))
    done.append("llamaindex")
    oa = OpenAIAssistantAdapter(db)
    t = oa.create_thread(metadata={"user_id": "gus"})
    oa.create_message(t["id"], role="user", content="I like chess")
    oa.retrieve_context(t["id"], query="games")
    with TestClient(create_app(db), base_url="http://agentbase.test", client=("127.0.0.1", 50000)) as http:
        assert http.post("/v1/threads", json={}).status_code == 200
    session = AgentBaseSession("agents-1", db=db)
    asyncio.run(session.add_items([{"role": "user", "content": "remember my locker is 42"}]))
    asyncio.run(session.get_items())
    done.append("openai")
    k.close()
    return done


if __name__ == "__main__":
    # the guard itself: loopback passes, anything else is refused and recorded
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    socket.create_connection(listener.getsockname(), timeout=5).close()
    listener.close()
    try:
        socket.create_connection(("203.0.113.7", 443), timeout=1)
    except ConnectionRefusedError:
        pass
    probe = list(BLOCKED)
    BLOCKED.clear()
    done = workout(sys.argv[1])
    print(json.dumps({"blocked": BLOCKED, "probe": probe, "allowed": ALLOWED, "done": done}))
