"""``_require.require``: a missing framework names the extra that installs it."""

from __future__ import annotations

import sys

import pytest

from agentbase_adapters._require import require
from agentbase_kernel import MissingDependency


def test_returns_the_module():
    assert require("json", extra="x") is sys.modules["json"]


def test_missing_module_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mem0", None)
    with pytest.raises(MissingDependency) as info:
        require("mem0", extra="mem0")
    assert str(info.value) == "'mem0' is not installed - install it with: pip install 'agentbase-memory[mem0]'"
    assert isinstance(info.value, ImportError) and info.value.__cause__ is None


def test_missing_submodule_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.setitem(sys.modules, "langchain_core.chat_history", None)
    with pytest.raises(MissingDependency, match=r"pip install 'agentbase-memory\[langchain\]'"):
        require("langchain_core.chat_history", extra="langchain")


def test_a_broken_dependency_of_an_installed_framework_keeps_its_own_error(monkeypatch, tmp_path):
    (tmp_path / "fakeframework.py").write_text("import not_installed_inner_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="not_installed_inner_dependency"):
        require("fakeframework", extra="fake")
