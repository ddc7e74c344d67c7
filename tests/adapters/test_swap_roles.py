"""A swap-path write says who said it and which side of the conversation, as a session turn does.

``MinimalAdapter.remember(role=...)`` and a LangGraph value's ``"role"`` reach the kernel's role, so a
first-person question ("what do I ...") ranks the user's own words above the assistant's
(the kernel's self boost), instead of every write counting as the user's. Real SQLite files, FTS
only (no model needed for what is pinned here).
"""

from __future__ import annotations

import pytest

from agentbase_adapters.minimal import MinimalAdapter
from agentbase_kernel import AgentBase, InvalidArgument

USER = "I drink my coffee black, no sugar, every morning."
ASSISTANT = "Coffee black with no sugar is a good morning habit; many people drink it that way."
QUESTION = "How do I drink my coffee?"


def test_minimal_role_reaches_the_kernel_and_ranks_the_users_words_first(db_location):
    mem = MinimalAdapter(db_location, embedder=None, ner="regex")
    try:
        assistant_id = mem.remember(ASSISTANT, who="u", speaker="Assistant", role="assistant")
        user_id = mem.remember(USER, who="u", speaker="Maya")
        assert mem.db.sync.get(assistant_id).role == "assistant"
        assert mem.db.sync.get(user_id).role == "user"  # the default
        assert mem.recall(QUESTION, who="u", top_k=2)[0].id == user_id
    finally:
        mem.close()


@pytest.mark.parametrize("role", [5, "", "  "])
def test_minimal_rejects_a_role_that_is_not_a_name(db_location, role):
    mem = MinimalAdapter(db_location, embedder=None, ner="regex")
    try:
        with pytest.raises(InvalidArgument, match="role"):
            mem.remember(USER, who="u", role=role)
        assert mem.db.sync.count() == 0
    finally:
        mem.close()


def test_langgraph_value_role_reaches_the_kernel(db_location):
    pytest.importorskip("langgraph")
    from agentbase_adapters.langgraph import AgentBaseStore

    db = AgentBase(db_location, embedder=None, ner="regex")
    store = AgentBaseStore(db, index_fields=["text"])
    try:
        ns = ("memories", "u")
        store.put(ns, "a", {"text": ASSISTANT, "speaker": "Assistant", "role": "assistant"})
        store.put(ns, "u", {"text": USER, "speaker": "Maya", "role": "human"})  # LangChain's message type
        store.put(ns, "d", {"text": "Team roles: Maya is the designer.", "role": "designer"})  # not a chat role
        roles = {key: db.sync.get(_id(db, ns, key)).role for key in ("a", "u", "d")}
        assert roles == {"a": "assistant", "u": "user", "d": "user"}
        # the speaker is the actor, as on the other paths ("what did Maya say" ranks her items up)
        assert db.sync.get(_id(db, ns, "u")).actor == "Maya"
        assert db.sync.get(_id(db, ns, "d")).actor == "langgraph"  # a document names no speaker
        assert store.get(ns, "a").value["role"] == "assistant"  # the value is returned unchanged
        assert store.search(ns, query=QUESTION, limit=2)[0].key == "u"
    finally:
        db.sync.close()


def _id(db: AgentBase, ns: tuple[str, ...], key: str) -> str:
    """The kernel entry behind a store item, through the kernel's public listing."""
    import json

    found = db.sync.list(metadata={"lg_namespace": json.dumps(list(ns)), "lg_key": key}, limit=1)
    return found[0].id


def test_minimal_session_keyword_makes_its_own_stream(db_location):
    """``remember(session=...)`` splits a who's writes into conversations, as Mem0's ``run_id`` does."""
    mem = MinimalAdapter(db_location, embedder=None, ner="regex")
    try:
        first = mem.remember("What does the green flag on your wall mean?", who="u", speaker="Caroline", session=1)
        other = mem.remember("It stands for freedom, my grandmother gave it to me.", who="u", speaker="Mel", session=2)
        same = mem.remember("It stands for freedom, my grandmother gave it to me!", who="u", speaker="Mel", session=1)
        hits = {h.id: h for h in mem.recall("green flag on the wall", who="u", top_k=5)}
        # the reply in the same session is found through its question; the one in another session is not
        assert same in hits and other not in hits and first in hits
    finally:
        mem.close()
