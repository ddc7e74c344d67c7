"""Ingest does its model work in batches: each new text embedded once, in length-sorted batches."""

from __future__ import annotations

import numpy as np

from agentbase_kernel import Kernel
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


def test_each_new_text_embedded_once_in_sorted_batches_of_eight(tmp_path):
    embedder = RecordingEmbedder()
    with Kernel(tmp_path / "b.db", embedder=embedder, ner="regex") as k:
        k.add_messages("s1", _turns(20), user_id="u")
        texts = [t for batch in embedder.batches for t in batch]
        stored = {e.l2_full for e in k.list(user_id="u", limit=None)}
        assert sorted(texts) == sorted(stored)  # turns and facts, each once
        assert all(len(b) <= 8 for b in embedder.batches)
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
        stored = k.store.vectors_for(e.content_hash for e in k.list(user_id="u", limit=None))
        by_text = {e.l2_full: stored[e.content_hash] for e in k.list(user_id="u", limit=None)}
    one_batch = minilm.embed_batch(texts)
    for text, vector in zip(texts, one_batch):
        assert float(np.dot(by_text[text], vector)) > 0.9999
