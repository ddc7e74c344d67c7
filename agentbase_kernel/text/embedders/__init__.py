"""Text embedders: one abstract method, several backends, nothing downloaded at run time.

Class hierarchy::

    Embedder (ABC)                   name, dim, embed_batch() -> float32 (n, dim), L2-normalised
    ├── OnnxEmbedder                 MiniLM exported from the bundled weights to onnxruntime (~3x faster than
    │   │                            torch; quantized=True: int8, its own name and vectors, ~2x faster again)
    │   └── PackagedMiniLMEmbedder   the default: MiniLM as a packaged ONNX file, no torch needed
    ├── SentenceTransformerEmbedder  a local sentence-transformers folder (fallback: bundled MiniLM on torch)
    ├── FastEmbedEmbedder            fastembed ONNX models already in the cache dir
    └── RemoteEmbedder (remote.py)   HTTP, behind a CircuitBreaker (breaker.py): fails with EmbedderUnavailable
        ├── OpenAICompatibleEmbedder POST {base_url}/embeddings (OpenAI, vLLM, Ollama, LM Studio ...)
        ├── TEIEmbedder              POST {base_url}/embed (text-embeddings-inference)
        └── OllamaEmbedder           POST {base_url}/api/embed

``get_embedder(spec)`` turns a config string into one of these; ``default_embedder()`` is the best
one installed here, or ``None`` (agentbase then runs on full-text search and NER alone, and
``no_embedder_reason`` warns once and says why in ``Kernel.info()``).
"""

from .backends import FastEmbedEmbedder, SentenceTransformerEmbedder
from .base import MINILM_INT8_NAME, MINILM_NAME, Embedder, bundled_minilm_path
from .breaker import CircuitBreaker
from .onnx import OnnxEmbedder
from .packaged import PackagedMiniLMEmbedder
from .registry import default_embedder, get_embedder, no_embedder_reason
from .remote import OllamaEmbedder, OpenAICompatibleEmbedder, RemoteEmbedder, TEIEmbedder

__all__ = [
    "MINILM_INT8_NAME",
    "MINILM_NAME",
    "CircuitBreaker",
    "Embedder",
    "FastEmbedEmbedder",
    "OllamaEmbedder",
    "OnnxEmbedder",
    "OpenAICompatibleEmbedder",
    "PackagedMiniLMEmbedder",
    "RemoteEmbedder",
    "SentenceTransformerEmbedder",
    "TEIEmbedder",
    "bundled_minilm_path",
    "default_embedder",
    "get_embedder",
    "no_embedder_reason",
]
