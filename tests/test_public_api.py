"""The public surface: __all__ is sorted and complete, and importing adapters pulls in no framework."""

from __future__ import annotations

import subprocess
import sys

import agentbase_adapters
import agentbase_kernel


def test_kernel_all_is_sorted_and_resolves():
    assert agentbase_kernel.__all__ == sorted(agentbase_kernel.__all__)
    for name in agentbase_kernel.__all__:
        assert getattr(agentbase_kernel, name) is not None
    public = {n for n in vars(agentbase_kernel) if not n.startswith("_")}
    modules = {"arguments", "cli", "config", "errors", "kernel", "lifecycle", "portable", "records", "store", "text",
               "ingest", "retrieve", "rules", "telemetry", "testing", "threads",
               "governance", "markdown", "outcomes", "proposals", "scoped", "sessions", "skills"}
    assert public - modules - {"annotations"} == set(agentbase_kernel.__all__)


def test_adapters_all_is_sorted_and_resolves():
    assert agentbase_adapters.__all__ == sorted(agentbase_adapters.__all__)
    for name in agentbase_adapters.__all__:
        assert getattr(agentbase_adapters, name) is not None


def test_importing_adapters_imports_no_framework():
    code = ("import sys, agentbase_adapters, agentbase_kernel; "
            "print(sorted(m for m in ('langchain_core', 'llama_index', 'mem0', 'openai', 'langgraph', 'starlette') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_missing_framework_names_the_extra(monkeypatch):
    import importlib

    import pytest

    from agentbase_kernel import MissingDependency

    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.delitem(sys.modules, "agentbase_adapters.langchain", raising=False)
    with pytest.raises(MissingDependency, match=r"pip install 'agentbase-memory\[langchain\]'"):
        importlib.import_module("agentbase_adapters.langchain")
