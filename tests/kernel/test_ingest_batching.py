"""Ingest does its model work in batches (each new text embedded once, length-sorted), or defers it."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import numpy as np
import pytest

from agentbase_kernel import Config, Kernel
from agentbase_kernel.records import Scope
from agentbase_kernel.store import EntryFilter
from tests.conftest import HashEmbedder


class RecordingEmbedder(HashEmbedder):
    """The hash embedder, keeping every batch it was given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return super().embed_batch(texts)


def _turns(n: int) -> list[dict[str, str]]:
    # lengths deliberately out of order, so sorting is visible
    return [{"role": "user", "name": "Caroline",
             "content": f"Turn {i}: I went hiking " + "and hiking " * ((i * 7) % 11)} for i in range(n)]


def test_one_embed_call_per_add_messages_each_new_text_once_shortest_first(tmp_path):
    embedder = RecordingEmbedder()
    with Kernel(tmp_path / "b.db", embedder=embedder, ner="regex") as k:
        k.add_messages("s1", _turns(20), user_id="u")
        texts = [t for batch in embedder.batches for t in batch]
        stored = {e.l2_full for e in k.list(user_id="u", limit=None)}
        assert sorted(texts) == sorted(stored)  # turns and facts, each once
        assert len(embedder.batches) == 1
        lengths = [len(t) for t in texts]
        assert lengths == sorted(lengths)
        assert k.ingestor.texts_embedded == len(texts)
        assert k.verify()["texts_without_vector"] == 0

        embedder.batches.clear()
        k.add_messages("s2", _turns(20), user_id="u")  # same texts, new session: vectors are reused
        assert embedder.batches == []


def test_sorted_batches_give_the_same_vectors_as_one_batch(tmp_path, minilm):
    """Padding differs between batchings; with the real model the vectors still agree to float noise."""
    texts = [t["content"] for t in _turns(20)] + ["Hi!", "What a day. " * 30]
    with Kernel(tmp_path / "m.db", embedder=minilm, ner=None) as k:
        k.add_memories([{"text": t, "user_id": "u"} for t in texts])
        stored = k._store.vectors_for(e.content_hash for e in k.list(user_id="u", limit=None))
        by_text = {e.l2_full: stored[e.content_hash] for e in k.list(user_id="u", limit=None)}
    one_batch = minilm.embed_batch(texts)
    for text, vector in zip(texts, one_batch):
        assert float(np.dot(by_text[text], vector)) > 0.9999


# -- deferred embedding ------------------------------------------------------------------------

_CHAT = [
    "I live in Boston and I work at Google.",
    "My favourite food is sushi.",
    "I love jazz music.",
    "I love jazz music!!",
    "Actually I moved: I live in Chicago now.",
    "Yesterday I went hiking with Melanie near Portland.",
    "My favourite food is ramen.",
]


class GatedEmbedder(RecordingEmbedder):
    """Blocks the background thread's batches until ``gate`` is set; the caller's pass straight through."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if threading.current_thread().name == "agentbase-embed":
            assert self.gate.wait(30)
        return super().embed_batch(texts)


def _ingest(k: Kernel, sessions: int = 2) -> None:
    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    for s in range(sessions):
        k.add_messages(f"s{s}", [{"role": "user", "name": "Caroline", "content": text, "created_at": when}
                                 for text in _CHAT], user_id="u")


def _snapshot(k: Kernel) -> list[tuple]:
    entries = k._store.list_entries(EntryFilter(scope=Scope(user_id="u"), include_invalid=True), limit=None)
    ids = {e.id: n for n, e in enumerate(entries)}  # uuids differ between files; positions do not
    return [(e.l2_full, e.category, e.role, sorted(e.tags), e.event_dates, e.flags, round(e.confidence, 6),
             e.invalid_at is None, ids.get(e.superseded_by)) for e in entries]


def test_deferred_returns_before_vectors_then_catches_up(tmp_path):
    embedder = GatedEmbedder()
    # find() would embed the scope's queued texts itself (read-your-writes): off here, to see the queue
    no_find_embedding = Config().with_(ingest={"find_embeds_at_most": 0})
    with Kernel(tmp_path / "d.db", embedder=embedder, ner="regex", config=no_find_embedding) as k:
        k.ingestor.defer_embedding = True
        k.add_messages("s", [{"role": "user", "content": "I went to Boston with Melanie last week."},
                             {"role": "user", "content": "The sushi place downtown is great."}], user_id="u")
        # returned, searchable by full text and entities, but the turns have no vector yet
        assert k.verify()["texts_without_vector"] >= 2
        assert k.ingestor.pending > 0
        assert "The sushi place downtown is great." in [h.entry.l2_full for h in k.find("sushi", user_id="u")]
        assert "ner_boston" in k.list(user_id="u", limit=None)[0].tags
        assert not k.ingestor.wait_embedded(timeout=0.2)

        embedder.gate.set()
        assert k.ingestor.wait_embedded(timeout=30)
        assert k.ingestor.pending == 0
        assert k.verify()["texts_without_vector"] == 0
        k.ingestor.close()


def test_deferred_stores_what_synchronous_ingest_stores(tmp_path):
    """Same entries, facts, tags, merges and supersessions, and the same vectors once caught up."""
    with Kernel(tmp_path / "sync.db", embedder=HashEmbedder(), ner="regex") as k:
        _ingest(k)
        expected = _snapshot(k)
        expected_vectors = k._store.vectors_for(e.content_hash for e in k.list(user_id="u", limit=None))
    assert any(not live for *_, live, _ in expected) and any(c not in ("turn", None) for _, c, *_ in expected)

    embedder = RecordingEmbedder()
    with Kernel(tmp_path / "deferred.db", embedder=embedder, ner="regex") as k:
        k.ingestor.defer_embedding = True
        _ingest(k)
        assert k.ingestor.wait_embedded(timeout=30)
        assert _snapshot(k) == expected
        vectors = k._store.vectors_for(e.content_hash for e in k.list(user_id="u", limit=None))
        assert vectors.keys() == expected_vectors.keys()
        assert all(np.array_equal(vectors[h], expected_vectors[h]) for h in vectors)
        assert k.verify()["ok"]
        k.ingestor.close()


def test_deferred_with_real_spacy_and_minilm(tmp_path, minilm):
    with Kernel(tmp_path / "sync.db", embedder=minilm, ner="auto") as k:
        _ingest(k, sessions=1)
        expected = _snapshot(k)
    with Kernel(tmp_path / "deferred.db", embedder=minilm, ner="auto") as k:
        assert k.info()["ner_stage"].startswith("spacy:")
        k.ingestor.defer_embedding = True
        _ingest(k, sessions=1)
        assert k.ingestor.wait_embedded(timeout=60)
        assert _snapshot(k) == expected
        assert k.verify()["texts_without_vector"] == 0
        hits = k.find("Where does Caroline live now?", user_id="u")
        assert any("Chicago" in h.entry.l2_full for h in hits)
        k.ingestor.close()


def test_deferred_rolled_back_write_is_dropped_and_close_stops_the_worker(tmp_path):
    embedder = RecordingEmbedder()
    with Kernel(tmp_path / "r.db", embedder=embedder, ner="regex") as k:
        k.ingestor.pending_ttl_s = 0.2
        k.ingestor.defer_embedding = True
        with pytest.raises(RuntimeError), k.transaction():
            k.add_messages("s", [{"role": "user", "content": "this write is rolled back"}], user_id="u")
            raise RuntimeError("abort")
        assert k.ingestor.wait_embedded(timeout=10)
        assert "this write is rolled back" not in [t for b in embedder.batches for t in b]
        assert k.count(user_id="u") == 0

        k.add_messages("s", [{"role": "user", "content": "this one stays"}], user_id="u")
        worker = k.ingestor._worker
        k.ingestor.close(wait=True)
        assert worker is not None and not worker.is_alive()
        assert k.verify()["texts_without_vector"] == 0
        k.ingestor.close()  # twice is fine


def test_deferred_worker_first_embeds_what_an_earlier_run_left(tmp_path):
    path = tmp_path / "left.db"
    with Kernel(path, embedder=None, ner="regex") as k:  # an earlier run without vectors
        k.add_memory("written before any embedder", user_id="u")
    with Kernel(path, embedder=HashEmbedder(), ner="regex") as k:
        # opening may already have embedded it in the background (Ingestor.resume): at most the one text left
        assert k.verify()["texts_without_vector"] <= 1
        k.ingestor.defer_embedding = True
        k.add_memory("written now", user_id="u")
        assert k.ingestor.wait_embedded(timeout=30)
        assert k.verify()["texts_without_vector"] == 0
        k.ingestor.close()
