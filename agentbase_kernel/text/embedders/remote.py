"""Embedders behind an HTTP endpoint, each guarded by a circuit breaker so they fail open.

Class hierarchy::

    Embedder
    └── RemoteEmbedder            one POST per batch, a timeout, a CircuitBreaker; every failure
        │                         becomes EmbedderUnavailable (the kernel then queues the vectors)
        ├── OpenAICompatibleEmbedder   POST {base_url}/embeddings  {"model", "input"} -> {"data": [{"index", "embedding"}]}
        ├── TEIEmbedder                POST {base_url}/embed       {"inputs"}         -> [[...], ...]   (text-embeddings-inference)
        └── OllamaEmbedder             POST {base_url}/api/embed   {"model", "input"} -> {"embeddings": [[...], ...]}

A timeout, a refused connection, an error status, a malformed body or vectors of the wrong size
all count as one failure of the breaker and raise ``EmbedderUnavailable``; while the breaker is
open no request is sent at all (docs/lifecycle.md, "Fail-open remote embedders").
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np

from ...config import EmbedderConfig
from ...errors import EmbedderUnavailable, InvalidArgument, MissingDependency
from .base import Embedder, normalize
from .breaker import CircuitBreaker

__all__ = ["OllamaEmbedder", "OpenAICompatibleEmbedder", "RemoteEmbedder", "TEIEmbedder", "breaker_state",
           "prepare_remote"]


class _BadResponse(Exception):
    """The endpoint answered, but not with what its API promises."""


class RemoteEmbedder(Embedder):
    """The shared part of the HTTP embedders: the client, the breaker and the error mapping.

    Usage::

        embedder = TEIEmbedder("http://127.0.0.1:8080", dim=384)
        embedder.breaker.state      # "closed"

    Subclasses give ``path``, ``body(texts)`` and ``parse(payload, n)``.
    """

    path: str = ""

    def __init__(self, name: str, *, base_url: str, api_key: str | None = None, dim: int | None = None,
                 http_client: Any = None, timeout: float | None = None,
                 breaker: CircuitBreaker | None = None) -> None:
        """Configure the endpoint; no request is sent until a dimension or an embedding is needed.

        Args:
            name: The embedder's name, recorded in the file (the model name).
            base_url: The API root; the API's path is appended.
            api_key: Sent as a bearer token when given.
            dim: The vector size, if known; otherwise the file's recorded size or one request finds it.
            http_client: An ``httpx.Client`` to use instead of one made here.
            timeout: Seconds per request (default 10; the kernel's ``embedder.timeout_seconds``
                applies when this is not given).
            breaker: The circuit breaker (default: one from the kernel's ``embedder`` config).

        Raises:
            InvalidArgument: no ``base_url``.
            MissingDependency: httpx is not installed and no ``http_client`` was given.
        """
        if not isinstance(base_url, str) or not base_url:
            raise InvalidArgument("base_url is required, e.g. 'http://127.0.0.1:8080'")
        self.name = name
        self.base_url = base_url.rstrip("/")
        self._dim = dim
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._own_timeout = timeout is not None
        self._own_breaker = breaker is not None
        self.timeout = 10.0 if timeout is None else float(timeout)
        self.breaker = breaker or CircuitBreaker()
        if http_client is None:
            try:
                import httpx
            except ImportError:
                raise MissingDependency("httpx is not installed - pip install 'agentbase-memory[openai-embed]'") from None
            http_client = httpx.Client(timeout=self.timeout)
        self._client = http_client

    @property
    def url(self) -> str:
        return f"{self.base_url}{self.path}"

    @property
    def dim(self) -> int:  # type: ignore[override]  # lazy: asking the server costs a request
        """The vector size (asks the server once when it is not known)."""
        if self._dim is None:
            try:
                self._dim = int(self.embed_batch(["dimension probe"]).shape[1])
            except EmbedderUnavailable as exc:
                raise EmbedderUnavailable(
                    f"{exc} - and the vector size of {self.name!r} is not known: pass dim= to the embedder, "
                    "or open a file it already wrote", reason=exc.reason, retry_in=exc.retry_in) from exc
        return self._dim

    @abstractmethod
    def body(self, texts: list[str]) -> Any:
        """The JSON request body for a batch."""

    @abstractmethod
    def parse(self, payload: Any, n: int) -> list[Any]:
        """The vectors in a decoded response, in input order."""

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Send one request for the batch.

        Raises:
            EmbedderUnavailable: the breaker is open (nothing is sent), or the request timed out,
                could not connect, got an error status or a malformed answer (one breaker failure).
        """
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        if not self.breaker.allow():
            retry = self.breaker.retry_in()
            raise EmbedderUnavailable(
                f"{self.name} at {self.url} is unavailable: circuit open after "
                f"{self.breaker.failure_threshold} failures in a row (next try in {retry:.1f} s; last error: "
                f"{self.breaker.snapshot().last_error})", reason="circuit open", retry_in=retry)
        try:
            vectors = self._request(texts)
        except Exception as exc:
            self.breaker.record_failure(exc)
            reason = str(exc) if isinstance(exc, _BadResponse) else f"{type(exc).__name__}: {exc}"[:300]
            raise EmbedderUnavailable(f"{self.name} at {self.url} failed: {reason}", reason=reason,
                                      retry_in=self.breaker.retry_in()) from exc
        except BaseException:  # Ctrl-C, SystemExit: no verdict on the endpoint, but free a half-open trial
            self.breaker.cancel()
            raise
        self.breaker.record_success()
        return vectors

    def _request(self, texts: list[str]) -> np.ndarray:
        response = self._client.post(self.url, json=self.body(list(texts)), headers=self._headers,
                                     timeout=self.timeout)
        if response.status_code >= 400:
            raise _BadResponse(f"HTTP {response.status_code} from {self.url}: {response.text[:200]!r}")
        try:
            rows = self.parse(response.json(), len(texts))
            vectors = np.array(rows, dtype=np.float32)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise _BadResponse(f"Unexpected response from {self.url}: {response.text[:200]!r}") from exc
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise _BadResponse(f"{self.url} returned {len(vectors)} vectors for {len(texts)} texts")
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise _BadResponse(f"{self.name} returned {vectors.shape[1]}-dim vectors, expected {self._dim}")
        if self._dim is None:
            self._dim = int(vectors.shape[1])  # the first answer tells the size: no probe needed later
        return normalize(vectors)

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def __repr__(self) -> str:  # never send a request just to print the object
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, dim={self._dim})"


class OpenAICompatibleEmbedder(RemoteEmbedder):
    """Embeds through any server that speaks OpenAI's ``POST /embeddings`` (OpenAI, vLLM, LM Studio, Ollama's /v1).

    Usage::

        embedder = OpenAICompatibleEmbedder("nomic-embed-text", base_url="http://localhost:11434/v1")
        embedder.embed("hello")
    """

    path = "/embeddings"

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None, dim: int | None = None,
                 http_client: Any = None, timeout: float | None = None,
                 breaker: CircuitBreaker | None = None) -> None:
        """``model`` is sent in each request; the rest as in ``RemoteEmbedder``."""
        if not base_url:
            raise InvalidArgument("base_url is required, e.g. 'https://api.openai.com/v1'")
        super().__init__(model, base_url=base_url, api_key=api_key, dim=dim, http_client=http_client,
                         timeout=timeout, breaker=breaker)
        self.model = model

    def body(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model, "input": texts}

    def parse(self, payload: Any, n: int) -> list[Any]:
        data = sorted(payload["data"], key=lambda item: item.get("index", 0))
        return [item["embedding"] for item in data]


class TEIEmbedder(RemoteEmbedder):
    """Embeds through Hugging Face text-embeddings-inference (``POST /embed``).

    Usage::

        embedder = TEIEmbedder("http://127.0.0.1:8080", name="bge-small-en-v1.5", dim=384)
        embedder.embed("hello")
    """

    path = "/embed"

    def __init__(self, base_url: str, *, name: str = "tei", api_key: str | None = None, dim: int | None = None,
                 http_client: Any = None, timeout: float | None = None,
                 breaker: CircuitBreaker | None = None) -> None:
        """``name`` is what the file records (TEI serves one model; name it after that model)."""
        super().__init__(name, base_url=base_url, api_key=api_key, dim=dim, http_client=http_client,
                         timeout=timeout, breaker=breaker)

    def body(self, texts: list[str]) -> dict[str, Any]:
        return {"inputs": texts, "truncate": True}

    def parse(self, payload: Any, n: int) -> list[Any]:
        if not isinstance(payload, list):
            raise TypeError("TEI answers a list of vectors")
        return payload


class OllamaEmbedder(RemoteEmbedder):
    """Embeds through Ollama's native API (``POST /api/embed``).

    Usage::

        embedder = OllamaEmbedder("nomic-embed-text", base_url="http://127.0.0.1:11434")
        embedder.embed("hello")
    """

    path = "/api/embed"

    def __init__(self, model: str, *, base_url: str = "http://127.0.0.1:11434", dim: int | None = None,
                 http_client: Any = None, timeout: float | None = None,
                 breaker: CircuitBreaker | None = None) -> None:
        super().__init__(model, base_url=base_url, dim=dim, http_client=http_client, timeout=timeout,
                         breaker=breaker)
        self.model = model

    def body(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model, "input": texts}

    def parse(self, payload: Any, n: int) -> list[Any]:
        return list(payload["embeddings"])


def prepare_remote(embedder: Any, config: EmbedderConfig, meta: dict[str, str]) -> None:
    """Ready a remote embedder for a kernel: apply the ``embedder`` config where its constructor
    left the defaults, and, when its size is unknown and the file was written by it, take the
    recorded size, so that opening the file needs no request (the endpoint may be down)."""
    if not isinstance(embedder, RemoteEmbedder):
        return
    if not embedder._own_timeout:
        embedder.timeout = float(config.timeout_seconds)
    if not embedder._own_breaker:
        embedder.breaker = CircuitBreaker(failure_threshold=config.breaker_failures,
                                          cooldown_seconds=config.breaker_cooldown_seconds)
    if embedder._dim is None and meta.get("embedding_model") == embedder.name \
            and meta.get("embedding_dim", "").isdigit():
        embedder._dim = int(meta["embedding_dim"])


def breaker_state(embedder: Any) -> dict[str, Any] | None:
    """The breaker's snapshot of a remote embedder (``None`` for a local one), for ``info`` / ``verify``."""
    return embedder.breaker.snapshot().as_dict() if isinstance(embedder, RemoteEmbedder) else None
