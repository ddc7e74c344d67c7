"""``OnnxEmbedder``: the bundled MiniLM exported once to ONNX and run on onnxruntime, without torch."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import MissingDependency
from .base import (
    BATCH_THREADS,
    MINILM_INT8_NAME,
    MINILM_NAME,
    MODELS,
    MODELS_LOCK,
    Embedder,
    bundled_minilm_path,
    normalize,
)

__all__ = ["OnnxEmbedder"]

# --- onnxruntime ----------------------------------------------------------------------------

# Bump when the exported graph changes, so that old cache files are not reused.
_EXPORT_VERSION = 1
# Texts are sorted by length and run this many at a time: each run pads only to its neighbours'
# length, and small runs stay in cache. On LoCoMo turns (2-core EPYC, 1 thread), texts per CPU-second
# by run size: 1: 95, 4: 127, 8: 120, 16: 108, 32: 73, 64: 43.
_ONNX_CHUNK = 8


def _default_cache_dir() -> Path:
    """Where agentbase keeps files it derives from installed packages (the exported ONNX model).

    ``$AGENTBASE_CACHE`` if set, else ``$XDG_CACHE_HOME/agentbase``, else ``~/.cache/agentbase``.
    """
    explicit = os.environ.get("AGENTBASE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "agentbase"


def _onnx_file(model_dir: Path, folder: Path, *, quantized: bool = False) -> Path:
    """The cache file for these weights: reinstalling or changing them gives a new name."""
    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    key = f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{_EXPORT_VERSION}"
    name = MINILM_INT8_NAME if quantized else MINILM_NAME
    return folder / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.onnx"


def _write_atomically(target: Path, write: Callable[[str], None]) -> None:
    """Call ``write(scratch_path)``, then rename the scratch file to ``target``.

    A reader never sees half a file, and two processes writing at once each rename a whole file
    into place.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    try:
        write(scratch)
        os.chmod(scratch, 0o644)  # mkstemp makes it 0600
        os.replace(scratch, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)


def _export_onnx(model_dir: Path, target: Path) -> None:
    """Export the bundled MiniLM (transformer + mean pooling) to ``target`` with torch, atomically.

    The graph takes ``input_ids`` and ``attention_mask`` (int64, batch x tokens) and returns the
    mean-pooled, not yet normalised, ``sentence_embedding`` (batch x 384).

    Raises:
        MissingDependency: torch, transformers or onnx is not installed.
    """
    try:
        import onnx  # noqa: F401  # torch's exporter needs it; fail here with the extra's name
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise MissingDependency(
            f"{exc.name or 'torch'} is not installed, and it is needed once to export {MINILM_NAME} "
            "to ONNX - pip install 'agentbase-memory[embed-torch]'"
        ) from None

    class MeanPooled(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    from transformers.utils import logging as hf_logging

    progress_bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # "Loading weights: 100%" on stderr
    try:
        bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    finally:
        if progress_bar:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    module = MeanPooled(bert).eval()
    # a padded example: an all-ones mask could let the tracer drop the mask from the graph
    input_ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
    attention_mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.long)

    def write(scratch: str) -> None:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer and deprecation chatter; the tests check the output
            # the TorchScript exporter: 2 s and one self-contained file (dynamo: 10 s, external data)
            torch.onnx.export(
                module,
                (input_ids, attention_mask),
                scratch,
                input_names=["input_ids", "attention_mask"],
                output_names=["sentence_embedding"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "sentence_embedding": {0: "batch"},
                },
                opset_version=17,
                dynamo=False,
            )

    _write_atomically(target, write)


def _quantize_onnx(source: Path, target: Path) -> None:
    """Write an int8 copy of the fp32 model: dynamic quantization of the MatMul weights, per channel.

    Per-tensor int8 (the default) gave cosine 0.957 on average to the fp32 vectors, per channel 0.992.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    def write(scratch: str) -> None:
        quantize_dynamic(
            str(source), scratch, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"]
        )

    _write_atomically(target, write)


def _ort_session(ort: Any, path: Path, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # idle pool threads must sleep: spin-waiting on a busy 2-core machine is what made torch's
    # multi-threaded queries 70x slower (see _torch_threads)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _cached_session(ort: Any, path: Path, build: Callable[[Path], None]) -> Any:
    """A one-thread session on ``path``, built first if the file is missing or unreadable."""
    if path.exists():
        try:
            return _ort_session(ort, path, 1)
        except Exception:  # truncated or corrupt (onnxruntime raises its own Fail/InvalidProtobuf): rebuild
            pass
    build(path)
    return _ort_session(ort, path, 1)


class _OnnxModel:
    """One loaded model: the tokenizer and an onnxruntime session per thread count."""

    def __init__(self, ort: Any, path: Path, tokenizer: Any, session: Any) -> None:
        self._ort = ort
        self.path = path
        self.tokenizer = tokenizer
        self._sessions = {1: session}
        self._lock = threading.Lock()

    def session(self, threads: int) -> Any:
        with self._lock:
            session = self._sessions.get(threads)
            if session is None:
                session = self._sessions[threads] = _ort_session(self._ort, self.path, threads)
            return session


def _load_onnx_model(ort: Any, model_dir: Path, folder: Path, *, quantized: bool) -> _OnnxModel:
    """Tokenizer + session from the cache, exporting (again) when the file is missing or unreadable."""
    from tokenizers import Tokenizer

    try:
        config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        max_length = int(config.get("max_seq_length", 256))
    except (OSError, ValueError):
        max_length = 256
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # as sentence-transformers: truncate at max_seq_length; pad per batch, here by hand (the
    # shipped tokenizer.json pads everything to a fixed 128)
    tokenizer.enable_truncation(max_length)
    tokenizer.no_padding()
    fp32 = _onnx_file(model_dir, folder)

    def export(path: Path) -> None:
        _export_onnx(model_dir, path)

    def quantize(path: Path) -> None:
        _cached_session(ort, fp32, export)  # the fp32 file, checked (and rebuilt) first
        _quantize_onnx(fp32, path)

    path = _onnx_file(model_dir, folder, quantized=True) if quantized else fp32
    return _OnnxModel(ort, path, tokenizer, _cached_session(ort, path, quantize if quantized else export))


class OnnxEmbedder(Embedder):
    """Embeds with the bundled all-MiniLM-L6-v2 on onnxruntime; same vectors as on torch, ~3x faster.

    Usage::

        embedder = OnnxEmbedder()
        embedder.embed_batch(["hello", "world"]).shape    # (2, 384)

    On first use the model is exported from the installed weights with torch (a few seconds) to
    ``$AGENTBASE_CACHE`` (default ``~/.cache/agentbase``); later processes load that file, and
    need neither torch nor sentence-transformers. Nothing is downloaded.
    """

    def __init__(self, *, cache_dir: str | Path | None = None, quantized: bool = False) -> None:
        """Load (or reuse) the model, exporting it first if it is not cached yet.

        Args:
            cache_dir: Where the exported model is kept; default ``$AGENTBASE_CACHE``, else
                ``$XDG_CACHE_HOME/agentbase``, else ``~/.cache/agentbase``.
            quantized: Run int8 weights (about half the CPU of fp32). Its vectors differ a little from
                the fp32 ones, so it is named ``all-MiniLM-L6-v2-int8`` and a store built with one
                refuses the other.

        Raises:
            MissingDependency: onnxruntime, tokenizers or the bundled weights are not installed, or
                the model is not cached yet and torch/transformers/onnx (needed to export it) are not.
            OSError: The cache folder cannot be written.
        """
        try:
            import onnxruntime
        except ImportError:
            raise MissingDependency("onnxruntime is not installed - pip install 'agentbase-memory[embed]'") from None
        try:
            import tokenizers  # noqa: F401
        except ImportError:
            raise MissingDependency("tokenizers is not installed - pip install 'agentbase-memory[embed]'") from None
        model_dir = bundled_minilm_path()
        folder = Path(cache_dir).expanduser() if cache_dir is not None else _default_cache_dir()
        self.name = MINILM_INT8_NAME if quantized else MINILM_NAME
        self.dim = 384
        # dynamic int8 scales each run's activations by the run's own range, padding included, so a
        # text would embed differently with other neighbours: int8 runs one text at a time
        self._chunk = 1 if quantized else _ONNX_CHUNK
        key = ("onnx-int8" if quantized else "onnx", str(folder.resolve()))
        with MODELS_LOCK:
            loaded = MODELS.get(key)
            if loaded is None:
                loaded = MODELS[key] = _load_onnx_model(onnxruntime, model_dir, folder, quantized=quantized)
        self._model: _OnnxModel = loaded

    @property
    def path(self) -> Path:
        """The cached ONNX file in use."""
        return self._model.path

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._model.session(1 if len(texts) <= 4 else BATCH_THREADS)
        encodings = self._model.tokenizer.encode_batch(list(texts))
        lengths = [len(encoding.ids) for encoding in encodings]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self._chunk):
            rows = order[start : start + self._chunk]
            input_ids = np.zeros((len(rows), lengths[rows[-1]]), dtype=np.int64)
            attention_mask = np.zeros_like(input_ids)
            for row, index in enumerate(rows):
                input_ids[row, : lengths[index]] = encodings[index].ids
                attention_mask[row, : lengths[index]] = 1
            out[rows] = self._run(session, input_ids, attention_mask)
        return normalize(out)

    def _run(self, session: Any, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """One padded run: the exported model pools (mean over real tokens) inside the graph."""
        return np.asarray(session.run(None, {"input_ids": input_ids, "attention_mask": attention_mask})[0])
