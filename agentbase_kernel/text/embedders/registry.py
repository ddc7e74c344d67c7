"""Choosing an embedder: ``get_embedder(spec)`` from a config string, ``default_embedder()`` from what is installed."""

from __future__ import annotations

import warnings

from ...errors import InvalidArgument, MissingDependency
from .backends import FastEmbedEmbedder, SentenceTransformerEmbedder
from .base import MINILM_INT8_NAME, MINILM_NAME, Embedder
from .onnx import OnnxEmbedder
from .packaged import PackagedMiniLMEmbedder
from .remote import OllamaEmbedder, OpenAICompatibleEmbedder, TEIEmbedder

__all__ = ["default_embedder", "get_embedder"]

# --- choosing one ---------------------------------------------------------------------------


def _minilm() -> Embedder:
    """all-MiniLM-L6-v2: the packaged ONNX file (no torch), else an export of the bundled weights
    on onnxruntime, else sentence-transformers on torch."""
    try:
        return PackagedMiniLMEmbedder()
    except MissingDependency:
        pass
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
            (``default_embedder()``), ``"minilm"`` (all-MiniLM-L6-v2: the packaged ONNX file, else the
            bundled weights on onnxruntime or torch), ``"minilm-onnx"`` / ``"minilm-torch"`` (one runtime), ``"minilm-int8"`` (``OnnxEmbedder(quantized=True)``),
            ``"sentence-transformers:<path-or-name>"``,
            ``"fastembed:<name>"``, ``"openai:<model>@<base_url>"``, ``"ollama:<model>@<base_url>"`` or
            ``"tei:<base_url>"`` / ``"tei:<name>@<base_url>"`` (the remote ones fail open: ``remote.py``).

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
    if low == "minilm-onnx":
        return OnnxEmbedder()
    if low == "minilm-torch":
        return SentenceTransformerEmbedder()
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
        if kind == "ollama":
            model, at, base_url = rest.partition("@")
            if model:
                return OllamaEmbedder(model, base_url=base_url) if at and base_url else OllamaEmbedder(model)
        if kind == "tei":
            name, at, base_url = rest.partition("@")
            if at and name and base_url:
                return TEIEmbedder(base_url, name=name)
            if "://" in rest:
                return TEIEmbedder(rest)
    raise InvalidArgument(
        f"Unknown embedder {spec!r} - use 'auto', 'none', 'minilm', 'minilm-onnx', 'minilm-torch', 'minilm-int8', "
        "'sentence-transformers:<path>', 'fastembed:<name>', 'openai:<model>@<base_url>', "
        "'ollama:<model>[@<base_url>]' or 'tei:[<name>@]<base_url>'"
    )
