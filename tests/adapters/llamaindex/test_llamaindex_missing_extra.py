"""Without llama-index-core the adapter module says which extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

from agentbase_kernel.errors import MissingDependency


def test_missing_llama_index_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_index.core", None)
    monkeypatch.delitem(sys.modules, "agentbase_adapters.llamaindex", raising=False)

    with pytest.raises(MissingDependency) as excinfo:
        importlib.import_module("agentbase_adapters.llamaindex")

    assert isinstance(excinfo.value, ImportError)
    assert str(excinfo.value) == (
        "'llama_index.core' is not installed - install it with: pip install 'agentbase-memory[llamaindex]'"
    )


def test_package_import_needs_no_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_index", None)
    monkeypatch.setitem(sys.modules, "llama_index.core", None)
    monkeypatch.delitem(sys.modules, "agentbase_adapters", raising=False)
    importlib.import_module("agentbase_adapters")
