"""The package's public surface, its lazy imports, and that it never shadows the ``openai`` SDK."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import agentbase_adapters.openai as package
from agentbase_adapters.openai import (
    AsyncOpenAIAssistantAdapter,
    OpenAIAssistantAdapter,
    create_app,
)
from agentbase_kernel import AgentBase

ROOT = Path(__file__).resolve().parents[3]


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert package.__all__ == sorted(package.__all__)
    for name in package.__all__:
        assert getattr(package, name) is not None
    assert set(package.__all__) <= set(dir(package))


def test_import_loads_no_framework_and_sdk_is_not_shadowed() -> None:
    result = run(
        """
        import sys
        import agentbase_adapters.openai as pkg
        heavy = [m for m in ("openai", "starlette", "uvicorn", "agents") if m in sys.modules]
        assert heavy == [], heavy
        pkg.create_app  # loads app.py: starlette, and through the adapter the real SDK
        from agentbase_adapters.openai import to_sdk
        to_sdk({"id": "thread_1", "object": "thread", "created_at": 1, "metadata": {}})
        import openai
        assert "site-packages" in openai.__file__, openai.__file__
        assert hasattr(openai, "OpenAI")
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_missing_starlette_names_the_extra() -> None:
    result = run(
        """
        import sys
        sys.modules["starlette"] = None
        try:
            from agentbase_adapters.openai import create_app
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    )
    assert result.stdout.strip() == (
        "MissingDependency 'starlette' is not installed - install it with: pip install 'agentbase-memory[openai]'"
    )


def test_adapter_imports_without_the_sdk_and_to_sdk_names_the_extra() -> None:
    result = run(
        """
        import sys
        sys.modules["openai"] = None
        from agentbase_adapters.openai import AgentBaseSession, OpenAIAssistantAdapter, to_sdk
        try:
            to_sdk({"object": "thread"})
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    )
    assert result.stdout.strip() == (
        "MissingDependency 'openai' is not installed - install it with: pip install 'agentbase-memory[openai]'"
    ), result.stderr


DOC = ROOT / "docs" / "compat" / "openai.md"


def test_compat_doc_names_only_tests_that_exist() -> None:
    import ast

    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", DOC.read_text())
    assert len(named) > 30
    for path, test in named:
        tree = ast.parse((ROOT / path).read_text())
        functions = {
            node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        assert test in functions, f"{path}::{test} is named in {DOC.name} but does not exist"


def test_compat_doc_has_a_row_for_every_route_and_adapter_method(db: AgentBase) -> None:
    text = DOC.read_text()
    names = {
        "thread_id": "id",
        "conversation_id": "id",
        "message_id": "mid",
        "run_id": "rid",
        "item_id": "iid",
    }
    routes = create_app(db).app.routes  # type: ignore[attr-defined]
    for route in routes:
        path = re.sub(r"\{(\w+)\}", lambda m: "{" + names[m.group(1)] + "}", route.path)
        for method in sorted(route.methods - {"HEAD"}):
            assert f"`{method} {path}`" in text, f"no row for {method} {path}"
    public = [name for name in vars(OpenAIAssistantAdapter) if not name.startswith("_")]
    for name in public:
        assert f"`{name}`" in text or f"`{name}(" in text, f"no row for OpenAIAssistantAdapter.{name}"
    async_public = [name for name in vars(AsyncOpenAIAssistantAdapter) if not name.startswith("_")]
    assert async_public == public


def test_connections_beyond_loopback_fail_these_tests() -> None:
    import socket

    import pytest

    with socket.socket() as sock, pytest.raises(AssertionError, match="tried to connect to"):
        sock.settimeout(0.5)
        sock.connect(("203.0.113.7", 443))
