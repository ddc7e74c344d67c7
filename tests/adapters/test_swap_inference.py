"""Swap paths that send no extra fields still rank as conversations, and read their own writes by meaning.

The simplest user code sends a bare string per turn: Mem0 ``add(text, user_id=)``, a LangGraph ``put`` of
``{"text": ...}``, ``remember(text, who=)``. Pinned here: such writes get neighbour context, their stream is
cut into sessions at pauses (by the time they are stamped with), the speaker is read from a ``Name:``
prefix, and a search right after the writes either ranks them by their vectors too or says it is degraded.
Real SQLite files, the real MiniLM where vectors matter, no mocks of the kernel.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from agentbase_adapters.mem0 import Mem0Adapter
from agentbase_adapters.minimal import MinimalAdapter
from agentbase_kernel import AgentBase, Config, Embedder, Kernel, get_embedder, speaker_prefix

QUESTION = "What does the green flag on your wall mean?"
ANSWER = "It stands for freedom, my grandmother gave it to me."
OTHERS = ["I baked sourdough bread this morning", "My cousin is visiting from Ohio next week",
          "The printer at work jammed again", "We watched a documentary about whales"]


def _fts_only_mem0(path) -> Mem0Adapter:
    return Mem0Adapter(AgentBase(path, embedder=None, ner="regex"), owns_db=True)


# -- neighbours and speakers without fields ------------------------------------------------------

def test_a_bare_string_mem0_add_gets_neighbour_context(db_location):
    """``add(text, user_id=)`` per turn, no run_id, no name: the reply is found through the question it answers."""
    m = _fts_only_mem0(db_location)
    try:
        for text in OTHERS:
            m.add(f"Caroline: {text}", user_id="u")
        m.add(f"Caroline: {QUESTION}", user_id="u")
        reply = m.add(f"Melanie: {ANSWER}", user_id="u")["results"][0]["id"]
        found = [r["memory"] for r in m.search("green flag on the wall", filters={"user_id": "u"}, top_k=5)["results"]]
        assert found[:2] == [f"Caroline: {QUESTION}", f"Melanie: {ANSWER}"]
        # the name the text opens with is who said it: its actor, searchable as a speaker
        assert m.db.sync.get(reply).actor == "Melanie"
    finally:
        m.close()


def test_speaker_is_read_from_a_name_prefix_when_no_field_names_one():
    assert speaker_prefix("Caroline: I went to the support group") == "Caroline"
    assert speaker_prefix("(1:56 pm on 8 May, 2023) Maya Okafor: hi there") == "Maya Okafor"
    assert speaker_prefix("elise: lol same") == "elise"
    # a label, a clock, a URL or no colon at all is not a name
    for text in ("Note: buy milk", "Update: I moved", "Team roles: Maya designs", "10:30 standup", "see https://example.org: it", "no name here",
                 "Caroline:no space after the colon"):
        assert speaker_prefix(text) is None, text


def test_minimal_remember_takes_the_speaker_and_role_from_the_text(db_location):
    mem = MinimalAdapter(db_location, embedder=None, ner="regex")
    try:
        said = mem.remember("Maya: I moved to Lisbon in May", who="u")
        replied = mem.remember("Assistant: Lisbon is lovely in spring.", who="u")
        note = mem.remember("Note: renew the passport", who="u")
        named = mem.remember("Maya: the rent is due", who="u", speaker="Maya Okafor")  # a field wins
        kernel = mem.db.sync
        assert (kernel.get(said).actor, kernel.get(said).role) == ("Maya", "user")
        assert (kernel.get(replied).actor, kernel.get(replied).role) == ("Assistant", "assistant")
        assert kernel.get(note).actor is None
        assert kernel.get(named).actor == "Maya Okafor"
        # "What did Maya say" finds her by name, though only the text carries it
        assert mem.recall("What did Maya say about moving", who="u", top_k=1)[0].id == said
    finally:
        mem.close()


def test_langgraph_bare_text_with_a_name_prefix_is_a_stream(db_location):
    pytest.importorskip("langgraph")
    from agentbase_adapters.langgraph import AgentBaseStore

    db = AgentBase(db_location, embedder=None, ner="regex")
    store = AgentBaseStore(db, index_fields=["text"])
    try:
        for i, text in enumerate(OTHERS):
            store.put(("memories", "u"), f"o{i}", {"text": f"Caroline: {text}"})
        store.put(("memories", "u"), "q", {"text": f"Caroline: {QUESTION}"})
        store.put(("memories", "u"), "a", {"text": f"Melanie: {ANSWER}"})
        keys = [item.key for item in store.search(("memories", "u"), query="green flag on the wall", limit=5)]
        assert keys[:2] == ["q", "a"]
        assert store.get(("memories", "u"), "a").value == {"text": f"Melanie: {ANSWER}"}
    finally:
        db.sync.close()


def test_a_pause_between_stamped_writes_starts_a_new_stream_session(db_location):
    """Days apart by their stamps: the second write is no neighbour of the first, as in a new session."""
    m = _fts_only_mem0(db_location)
    try:
        m.add(f"(1:56 pm on 8 May, 2023) Caroline: {QUESTION}", user_id="u")
        m.add(f"(1:57 pm on 8 May, 2023) Melanie: {ANSWER}", user_id="u")
        later = m.add("(10:00 am on 20 May, 2023) Melanie: I signed up for a pottery class", user_id="u")
        found = [r["id"] for r in m.search("grandmother freedom", filters={"user_id": "u"}, top_k=5)["results"]]
        assert later["results"][0]["id"] not in found
        # the first two are one stream session and the third another, in the user's scope
        sessions = m.db.sync.list_sessions(user_id="u")
        streams = [s for s in sessions if "stream" in s.metadata]
        assert len(streams) == 2
        assert sorted(m.db.sync.count_messages(s.id) for s in streams) == [1, 2]
    finally:
        m.close()


def test_writes_without_a_stamp_are_one_stream_session_while_they_keep_coming(db_location):
    m = _fts_only_mem0(db_location)
    try:
        for text in (QUESTION, ANSWER, *OTHERS):
            m.add(text, user_id="u")
        streams = [s for s in m.db.sync.list_sessions(user_id="u") if "stream" in s.metadata]
        assert len(streams) == 1 and m.db.sync.count_messages(streams[0].id) == 2 + len(OTHERS)
    finally:
        m.close()


# -- read-your-writes for vectors ----------------------------------------------------------------

class _HeldBackground(Embedder):
    """The real MiniLM; the background embedder's calls wait until the test releases them."""

    def __init__(self) -> None:
        self.inner = get_embedder("minilm")
        self.name, self.dim = self.inner.name, self.inner.dim
        self.release = threading.Event()

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if threading.current_thread().name == "agentbase-embed":
            self.release.wait(timeout=120)
        return self.inner.embed_batch(texts)


PETS = "I adore my two felines, Luna and Oscar"


def _deferred_kernel(path, **ingest) -> tuple[Kernel, _HeldBackground]:
    embedder = _HeldBackground()
    config = Config().with_(ingest={"defer_embedding": True, **ingest})
    return Kernel(path, embedder=embedder, ner="regex", config=config).initialize(), embedder


def test_a_search_right_after_writes_ranks_the_new_texts_by_their_vectors(db_location):
    kernel, embedder = _deferred_kernel(db_location)
    try:
        for text in OTHERS:
            kernel.add_memory(text, user_id="u", stream="s")
        pets = kernel.add_memory(PETS, user_id="u", stream="s").entry.id
        kernel.add_memory("someone else's cat photo", user_id="v", stream="s")
        assert kernel.ingestor.pending > 0  # the background embedder has not stored a vector yet
        # no word in common with the query: only a vector can find it
        found = kernel.find("pet cats", user_id="u", top_k=3)
        assert found.degrade_reason is None
        assert found[0].id == pets and "vector" in found[0].matched_by
        # only the searched scope was embedded ahead of the queue
        assert kernel.stats()["vectors"] == len(OTHERS) + 1
    finally:
        embedder.release.set()
        kernel.close()


def test_a_search_that_cannot_embed_the_backlog_says_it_is_degraded(db_location):
    kernel, embedder = _deferred_kernel(db_location, find_embeds_at_most=2)
    try:
        for text in (*OTHERS, PETS):
            kernel.add_memory(text, user_id="u", stream="s")
        found = kernel.find("pet cats", user_id="u", top_k=3)
        assert found.degrade_reason is not None and "3 memories" in found.degrade_reason
        embedder.release.set()
        assert kernel.wait_embedded(timeout=120)
        found = kernel.find("pet cats", user_id="u", top_k=3)
        assert found.degrade_reason is None and "vector" in found[0].matched_by
    finally:
        embedder.release.set()
        kernel.close()
