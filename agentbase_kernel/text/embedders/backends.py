"""The other local embedders: sentence-transformers (torch) and fastembed (the HTTP ones are in ``remote.py``)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import MissingDependency
from .base import (
    BATCH_THREADS,
    MINILM_NAME,
    MODELS,
    MODELS_LOCK,
    Embedder,
    bundled_minilm_path,
    is_bundled,
    normalize,
)

__all__ = ["FastEmbedEmbedder", "SentenceTransformerEmbedder"]

# --- sentence-transformers ------------------------------------------------------------------

_THREADS_LOCK = threading.Lock()


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
                "sentence-transformers is not installed - pip install 'agentbase-memory[embed-torch]'"
            ) from None
        if model is None:
            path = str(bundled_minilm_path())
            self.name = MINILM_NAME
        else:
            path = str(model)
            self.name = Path(path).name if Path(path).exists() else path
            if self.name != path and is_bundled(Path(path)):
                self.name = MINILM_NAME  # same weights, same name: the store checks it against its vectors
        self.device = device
        key = (path, device)
        with MODELS_LOCK:
            loaded = MODELS.get(key)
            if loaded is None:
                try:
                    # local_files_only: a missing model must fail now, not hang on a download
                    loaded = sentence_transformers.SentenceTransformer(path, device=device, local_files_only=True)
                except OSError as exc:
                    raise MissingDependency(
                        f"sentence-transformers model {path!r} is not available locally ({exc}) - pass a "
                        "local model folder, or use model=None for the bundled all-MiniLM-L6-v2"
                    ) from exc
                MODELS[key] = loaded
        self._model = loaded
        get_dim = getattr(loaded, "get_embedding_dimension", None) or loaded.get_sentence_embedding_dimension
        self.dim = int(get_dim())  # type: ignore[arg-type]

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with _torch_threads(1 if len(texts) <= 4 else BATCH_THREADS):
            vectors = self._model.encode(
                list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return normalize(vectors)


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
            raise MissingDependency("fastembed is not installed - pip install 'agentbase-memory[fastembed]'") from None
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
        return normalize(np.vstack(list(self._model.embed(list(texts)))))
