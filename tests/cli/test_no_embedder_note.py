"""The command says, once and as its own note, that an install without a model searches by keywords only."""

from __future__ import annotations

import sys

from agentbase_kernel.text.embedders import registry


def test_a_missing_model_is_a_note_on_stderr(agentbase, monkeypatch):
    for name in ("onnxruntime", "sentence_transformers"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(registry, "_warned", False)
    monkeypatch.setenv("AGENTBASE_EMBEDDER", "auto")
    result = agentbase("init")
    assert result.exit_code == 0, result.output
    assert "Note: no embedder could be loaded" in result.stderr
    assert "pip install 'agentbase-memory[embed]'" in result.stderr
    assert "NoEmbedderWarning" not in result.stderr  # a note of ours, not a Python warning line


def test_quiet_drops_the_note(agentbase, monkeypatch):
    for name in ("onnxruntime", "sentence_transformers"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(registry, "_warned", False)
    monkeypatch.setenv("AGENTBASE_EMBEDDER", "auto")
    result = agentbase("--quiet", "init")
    assert result.exit_code == 0 and "Note:" not in result.stderr
