"""Mem0's config dict (``Memory.from_config``) -> an ``AgentBase`` on one SQLite file.

Only where the file lives and which embedder to run are taken from it; the LLM, reranker and
graph sections are accepted and never called, and a vector store that names a server is not
contacted (a warning says so).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from os import fspath
from pathlib import Path
from typing import Any

from agentbase_kernel import AgentBase, InvalidArgument, OpenAICompatibleEmbedder

__all__ = ["config_dict", "embedder_spec", "open_db"]

_DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_REMOTE_KEYS = ("host", "url", "uri", "api_key", "connection_string", "cluster_url", "endpoint", "client")
_EMBEDDER_URL_KEYS = ("openai_base_url", "ollama_base_url", "lmstudio_base_url", "huggingface_base_url", "base_url")


def config_dict(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    dump = getattr(config, "model_dump", None)  # a mem0 MemoryConfig
    if callable(dump):
        return dict(dump(exclude_unset=True, warnings=False))
    raise TypeError(f"config must be a dict (Mem0's config shape), not {type(config).__name__}")


def _section(config: Mapping[str, Any], name: str) -> tuple[str | None, dict[str, Any]]:
    section = config.get(name)
    if section is None:
        return None, {}
    if not isinstance(section, Mapping):
        raise InvalidArgument(f"config[{name!r}] must be a dict with 'provider' and 'config', got {section!r}")
    provider = section.get("provider")
    inner = section.get("config") or {}
    if not isinstance(inner, Mapping):
        raise InvalidArgument(f"config[{name!r}]['config'] must be a dict, got {inner!r}")
    return (str(provider) if provider is not None else None), dict(inner)


def _db_path(config: Mapping[str, Any]) -> str | None:
    for key in ("db_path", "path"):
        if config.get(key):
            return str(fspath(config[key]))
    _, store = _section(config, "vector_store")
    for key in ("db_path", "path"):
        if store.get(key):
            path = str(fspath(store[key]))
            if path == ":memory:" or path.endswith(_DB_SUFFIXES):
                return path
            # Mem0's local stores take a directory (Qdrant's default is /tmp/qdrant) and create it.
            Path(path).mkdir(parents=True, exist_ok=True)
            return str(Path(path) / "agentbase.db")
    return None


def embedder_spec(config: Mapping[str, Any]) -> Any:
    """The kernel embedder spec (``get_embedder`` string) for Mem0's ``embedder`` section."""
    provider, conf = _section(config, "embedder")
    if provider is None:
        return "auto"
    model = conf.get("model")
    url = next((conf[key] for key in _EMBEDDER_URL_KEYS if conf.get(key)), None)
    if provider == "agentbase":  # our own escape hatch: a spec string or an Embedder object
        return conf["embedder"] if "embedder" in conf else conf.get("spec", "auto")
    if provider == "huggingface":
        if url:  # a text-embeddings-inference server speaks the OpenAI embeddings API
            return f"openai:{model or 'tei'}@{url}"
        return f"sentence-transformers:{model}" if model else "minilm"
    if provider == "fastembed":
        return f"fastembed:{model}" if model else "fastembed:BAAI/bge-small-en-v1.5"
    if provider == "openai":
        return f"openai:{model or 'text-embedding-3-small'}@{url or 'https://api.openai.com/v1'}"
    if provider == "ollama":
        base = str(url or "http://localhost:11434").rstrip("/")
        return f"openai:{model or 'nomic-embed-text'}@{base if base.endswith('/v1') else base + '/v1'}"
    if provider == "lmstudio":
        return f"openai:{model}@{url or 'http://localhost:1234/v1'}"
    raise InvalidArgument(
        f"embedder provider {provider!r} is not supported by agentbase - use huggingface, fastembed, openai, "
        "ollama or lmstudio, or {'provider': 'agentbase', 'config': {'spec': 'minilm'}}"
    )


def _embedder(config: Mapping[str, Any]) -> Any:
    """The spec, or an OpenAI-compatible embedder when the section carries a key or a size.

    A spec string has no slot for an API key; Mem0's OpenAI embedder also falls back to
    ``$OPENAI_API_KEY``, so the object is built here from the kernel's own embedder class.
    """
    spec = embedder_spec(config)
    provider, conf = _section(config, "embedder")
    if not isinstance(spec, str) or not spec.startswith("openai:"):
        return spec
    key = conf.get("api_key") or (os.environ.get("OPENAI_API_KEY") if provider == "openai" else None)
    dims = conf.get("embedding_dims")
    if key is None and dims is None:
        return spec
    model, _, base_url = spec[len("openai:"):].partition("@")
    return OpenAICompatibleEmbedder(model, base_url=base_url, api_key=key, dim=int(dims) if dims else None)


def open_db(config: Mapping[str, Any]) -> AgentBase:
    provider, store = _section(config, "vector_store")
    if provider is not None and not any(store.get(k) for k in ("path", "db_path")) and any(store.get(k) for k in _REMOTE_KEYS):
        warnings.warn(
            f"vector_store {provider!r} points at a server or a client object; agentbase keeps vectors in its own "
            "SQLite file instead and never contacts it",
            UserWarning,
            stacklevel=3,
        )
    if config.get("reranker"):
        warnings.warn("config['reranker'] is ignored: agentbase ranks with its own zero-LLM reranker", UserWarning, stacklevel=3)
    if config.get("graph_store"):
        warnings.warn("config['graph_store'] is ignored, as open-source Mem0 2.x ignores it", UserWarning, stacklevel=3)
    _section(config, "llm")  # shape check only: the LLM is never called unless self.llm is set
    return AgentBase(_db_path(config), embedder=_embedder(config))

