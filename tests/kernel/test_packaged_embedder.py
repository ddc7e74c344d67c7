"""The default embedder: all-MiniLM-L6-v2 from a packaged ONNX file, without torch."""

from __future__ import annotations

import numpy as np
import pytest

from agentbase_kernel import Kernel
from agentbase_kernel.text.embedders import (
    MINILM_NAME,
    OnnxEmbedder,
    PackagedMiniLMEmbedder,
    default_embedder,
    get_embedder,
)

TEXTS = [
    "I moved to Denver last month with my partner",
    "What should I cook for dinner tonight?",
    "Ana left the company, Raj is my manager now",
    "我上周去了北京大学",
    "a much longer message that keeps going " * 40,
    "",
]


@pytest.fixture(scope="module")
def packaged() -> PackagedMiniLMEmbedder:
    return PackagedMiniLMEmbedder()


def test_it_is_the_default_and_carries_the_models_name(packaged):
    assert isinstance(default_embedder(), PackagedMiniLMEmbedder)
    assert isinstance(get_embedder("minilm"), PackagedMiniLMEmbedder)
    assert packaged.name == MINILM_NAME and packaged.dim == 384


def test_vectors_are_the_fp32_models_to_within_rounding(packaged):
    fp32 = OnnxEmbedder().embed_batch(TEXTS)  # exported from the bundled safetensors weights
    cos = (packaged.embed_batch(TEXTS) * fp32).sum(axis=1)
    assert cos.min() > 0.995


def test_a_text_embeds_the_same_alone_or_in_a_batch(packaged):
    batch = packaged.embed_batch(TEXTS)
    alone = np.vstack([packaged.embed_batch([t]) for t in TEXTS])
    assert np.allclose(batch, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(batch[:-1], axis=1), 1.0, atol=1e-5)


def test_a_file_written_with_the_torch_runtime_opens_with_the_packaged_one(tmp_path, packaged):
    path = tmp_path / "m.db"
    with Kernel(path, embedder="minilm-onnx", ner="regex") as kernel:
        kernel.add_memory("Alice moved to Denver", user_id="u")
    with Kernel(path, embedder=packaged, ner="regex") as kernel:
        hits = kernel.find("where does Alice live?", user_id="u").hits
        assert hits and "vector" in hits[0].matched_by
