"""Random multi-user, multi-agent, multi-session workloads through a random mix of adapters.

Every text carries its owner's token (``tok-u1``); every read path of every adapter, asked in one
user's scope, must return only that user's texts, and every scoped write path (delete, delete_all,
clear, forget) must leave the other users' rows exactly as they were. Peers shipped the opposite
(mem0#3928: ``delete_all(user_id=...)`` wiped every user).
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentbase_kernel import AgentBase
from agentbase_kernel.errors import NotFoundError

from ._inputs import SETTINGS, TALLY, raw_connect

USERS = ("u1", "u2", "u3")
AGENTS = ("a1", "a2")
WRITERS = ("kernel", "kernel_messages", "mem0", "minimal", "langgraph", "langchain", "llamaindex", "openai")
WORDS = ("Alice", "Paris", "pizza", "kayak", "Monday", "secret", "password", "Berlin", "tea", "meeting")
# the same words for everybody, so FTS, vectors and the NER boost all see the other users' entries
QUERIES = ("secret password", "Alice Paris pizza", "kayak Monday meeting", "what does Alice like?",
           "tea in Berlin", "tok-u1 tok-u2 tok-u3")
TOKEN = re.compile(r"tok-(u\d)")

write = st.tuples(st.sampled_from(WRITERS), st.sampled_from(USERS), st.sampled_from(AGENTS),
                  st.integers(0, 1), st.lists(st.sampled_from(WORDS), min_size=2, max_size=5))


def _owners(text: str) -> set[str]:
    return set(TOKEN.findall(text))


class World:
    """One file and every adapter on it; ``write`` stores a text in the given scope."""

    def __init__(self, path: Path, embedder) -> None:
        from agentbase_adapters.langgraph import AgentBaseStore
        from agentbase_adapters.mem0 import Mem0Adapter
        from agentbase_adapters.minimal import MinimalAdapter
        from agentbase_adapters.openai import OpenAIAssistantAdapter

        self.db = AgentBase(path, embedder=embedder, ner="regex")
        self.k = self.db.sync
        self.mem0, self.minimal, self.graph = Mem0Adapter(self.db), MinimalAdapter(self.db), AgentBaseStore(self.db)
        self.oa = OpenAIAssistantAdapter(self.db)
        self.threads: dict[tuple[str, str], str] = {}
        self.n = 0

    def sid(self, user: str, agent: str, s: int) -> str:
        return f"sess-{user}-{agent}-{s}"

    def write(self, how: str, user: str, agent: str, s: int, words: list[str]) -> None:
        from langchain_core.messages import AIMessage, HumanMessage
        from llama_index.core.base.llms.types import ChatMessage

        from agentbase_adapters.langchain import AgentBaseChatMessageHistory
        from agentbase_adapters.llamaindex import AgentBaseChatStore

        self.n += 1
        text = f"{' '.join(words)} tok-{user} n{self.n}"
        sid = self.sid(user, agent, s)
        if how == "kernel":
            self.k.add_memory(text, user_id=user, agent_id=agent, session_id=sid)
        elif how == "kernel_messages":
            self.k.create_session(sid, user_id=user, agent_id=agent)
            self.k.add_messages(sid, [{"role": "user", "content": text}, {"role": "assistant", "content": f"ok tok-{user}"}])
        elif how == "mem0":
            self.mem0.add(text, user_id=user, agent_id=agent, run_id=sid, infer=False)
        elif how == "minimal":
            self.minimal.remember(text, who=user)
        elif how == "langgraph":
            self.graph.put(("memories", user), f"k{self.n}", {"text": text})
        elif how == "langchain":
            AgentBaseChatMessageHistory(sid, db=self.db, user_id=user, agent_id=agent).add_messages(
                [HumanMessage(text), AIMessage(f"noted tok-{user}")])
        elif how == "llamaindex":
            AgentBaseChatStore(self.db, user_id=user, agent_id=agent).add_message(sid, ChatMessage(role="user", content=text))
        else:
            key = (user, agent)
            if key not in self.threads:
                self.threads[key] = self.oa.create_thread(metadata={"user_id": user, "agent_id": agent})["id"]
            self.oa.create_message(self.threads[key], role="user", content=text)

    def rows_of(self, user: str) -> list[tuple]:
        conn = raw_connect(self.k.path)
        try:
            return sorted(conn.execute(
                "SELECT id, l2_full, coalesce(invalid_at, ''), updated_at FROM entries WHERE user_id = ?", (user,)))
        finally:
            conn.close()

    def messages_of(self, user: str) -> list[tuple]:
        conn = raw_connect(self.k.path)
        try:
            return sorted(conn.execute("SELECT m.id, m.content FROM messages m JOIN sessions s ON s.id = m.session_id "
                                       "WHERE s.user_id = ?", (user,)))
        finally:
            conn.close()


def _assert_only(user: str, texts, where: str) -> None:
    for text in texts:
        TALLY["isolation_reads_checked"] += 1
        leaked = _owners(text) - {user}
        assert not leaked, f"{where} in scope {user} returned {sorted(leaked)}'s text: {text!r}"


def check_reads(w: World, user: str, queries: list[str]) -> None:
    """Every read path in ``user``'s scope returns only ``user``'s texts."""
    from agentbase_adapters.langchain import LangChainMemoryAdapter
    from agentbase_adapters.llamaindex import AgentBaseChatStore

    k = w.k
    for q in queries:
        for kwargs in ({"user_id": user}, {"user_id": user, "agent_id": "a1"},
                       {"user_id": user, "session_id": w.sid(user, "a1", 0)}):
            hits = k.find(q, top_k=50, **kwargs)
            assert all(h.entry.user_id == user for h in hits), "find leaked"
            _assert_only(user, [h.entry.l2_full for h in hits], f"find {kwargs}")
            for h in hits:  # session co-retrieval and provenance stay in scope too
                assert all(k.get_session(p.session_id).scope.user_id == user for p in h.provenance)
        _assert_only(user, [r["memory"] for r in w.mem0.search(q, user_id=user, top_k=50, threshold=None)["results"]], "mem0.search")
        _assert_only(user, [h.content for h in w.minimal.recall(q, who=user, top_k=50)], "minimal.recall")
        _assert_only(user, [str(i.value) for i in w.graph.search(("memories", user), query=q, limit=50)], "langgraph.search")
        memory = LangChainMemoryAdapter(w.db, owner_id=user, agent_id="a1", session_id=w.sid(user, "a1", 0), top_k=50)
        _assert_only(user, [memory.load_memory_variables({"input": q})["history"]], "langchain memory")
        if (user, "a1") in w.threads:
            _assert_only(user, [c["content"] if isinstance(c.get("content"), str) else str(c)
                                for c in w.oa.retrieve_context(w.threads[(user, "a1")], query=q, top_k=20)], "openai context")
    _assert_only(user, [e.l2_full for e in k.list(user_id=user, limit=None, include_invalid=True, include_expired=True)], "list")
    _assert_only(user, [r["memory"] for r in w.mem0.get_all(user_id=user, top_k=1000)["results"]], "mem0.get_all")
    _assert_only(user, [str(i.value) for i in w.graph.search(("memories", user), limit=1000)], "langgraph list")
    store = AgentBaseChatStore(w.db, user_id=user)
    for key in store.get_keys():
        assert k.get_session(key).scope.user_id == user, f"llamaindex get_keys leaked {key}"
    others = [u for u in USERS if u != user]
    for other in others:
        for agent in AGENTS:
            for s in (0, 1):
                assert store.get_messages(w.sid(other, agent, s)) == [], "llamaindex read another user's chat"
        for entry_id, *_ in w.rows_of(other)[:5]:
            TALLY["isolation_reads_checked"] += 1
            for call in (lambda: k.get(entry_id, user_id=user), lambda: k.update(entry_id, user_id=user, text="hijacked"),  # noqa: B023 - called at once
                         lambda: k.delete(entry_id, user_id=user)):  # noqa: B023
                with pytest.raises(NotFoundError):
                    call()


def scoped_wipe(w: World, how: str, user: str) -> None:
    from agentbase_adapters.langchain import AgentBaseChatMessageHistory
    from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore, AgentBaseChatStore

    other = next(u for u in USERS if u != user)
    if how == "kernel.delete_all":
        w.k.delete_all(user_id=user)
    elif how == "kernel.delete_all(agent)":
        w.k.delete_all(user_id=user, agent_id="a1")
    elif how == "mem0.delete_all":
        w.mem0.delete_all(user_id=user)
    elif how == "minimal.forget":
        w.minimal.forget(who=user)
    elif how == "langchain.clear":
        AgentBaseChatMessageHistory(w.sid(user, "a1", 0), db=w.db, user_id=user, agent_id="a1").clear()
    elif how == "llamaindex.delete_messages(other key)":
        # a scoped store asked to delete another user's chat must not touch it
        AgentBaseChatStore(w.db, user_id=user).delete_messages(w.sid(other, "a1", 0))
        asyncio.run(AgentBaseAsyncChatStore(w.db, user_id=user).delete_messages(w.sid(other, "a2", 1)))
    elif how == "langgraph.delete":
        for item in w.graph.search(("memories", user), limit=1000):
            w.graph.delete(("memories", user), item.key)
    else:
        for entry in w.k.list(user_id=user, limit=None):
            w.mem0.delete(entry.id)


WIPES = ("kernel.delete_all", "kernel.delete_all(agent)", "mem0.delete_all", "minimal.forget", "langchain.clear",
         "llamaindex.delete_messages(other key)", "langgraph.delete", "mem0.delete each")


@SETTINGS
@given(writes=st.lists(write, min_size=6, max_size=24), wipe=st.sampled_from(WIPES), victim=st.sampled_from(USERS),
       queries=st.lists(st.sampled_from(QUERIES), min_size=1, max_size=2, unique=True))
def test_no_read_path_leaks_and_no_scoped_write_touches_another_scope(hash_embedder, writes, wipe, victim, queries):
    with tempfile.TemporaryDirectory() as tmp:
        w = World(Path(tmp) / "iso.db", hash_embedder)
        try:
            for op in writes:
                w.write(*op)
            TALLY["isolation_writes"] += len(writes)
            for user in USERS:
                check_reads(w, user, queries)
            others = [u for u in USERS if u != victim]
            before = {u: (w.rows_of(u), w.messages_of(u)) for u in others}
            scoped_wipe(w, wipe, victim)
            TALLY["isolation_wipes"] += 1
            after = {u: (w.rows_of(u), w.messages_of(u)) for u in others}
            assert after == before, f"{wipe} of {victim} changed another user's rows"
            check_reads(w, victim, queries[:1])
            report = w.k.verify()
            assert report["ok"], report
        finally:
            w.k.close()
