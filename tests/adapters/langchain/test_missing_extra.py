"""Without the framework installed, importing an adapter names the extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

from agentbase_kernel.errors import MissingDependency


@pytest.mark.parametrize(
    ("adapter", "framework", "extra"),
    [
        pytest.param("agentbase_adapters.langchain", "langchain_core", "langchain", id="langchain-core"),
        pytest.param("agentbase_adapters.langchain", "langchain_classic", "langchain", id="langchain-classic"),
        pytest.param("agentbase_adapters.langgraph", "langgraph", "langgraph", id="langgraph"),
    ],
)
def test_missing_framework_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, adapter: str, framework: str, extra: str
) -> None:
    for name in [m for m in sys.modules if m == framework or m.startswith(framework + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, framework, None)
    monkeypatch.delitem(sys.modules, adapter, raising=False)
    with pytest.raises(MissingDependency) as info:
        importlib.import_module(adapter)
    assert f"pip install 'agentbase-memory[{extra}]'" in str(info.value)
    assert isinstance(info.value, ImportError)
