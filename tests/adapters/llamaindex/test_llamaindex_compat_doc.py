"""Guards: every method of the real LlamaIndex interfaces is implemented here and documented, with a real test."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
from llama_index.core.storage.chat_store.base import BaseChatStore
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore

from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore, AgentBaseChatStore

HERE = Path(__file__).parent
DOC = HERE.parents[2] / "docs" / "compat" / "llamaindex.md"
PAIRS = [
    pytest.param(BaseChatStore, AgentBaseChatStore, "`BaseChatStore`", id="BaseChatStore"),
    pytest.param(AsyncDBChatStore, AgentBaseAsyncChatStore, "`AsyncDBChatStore`", id="AsyncDBChatStore"),
]


def interface_methods(base: type) -> list[str]:
    """Abstract methods plus the concrete async twins the base class defines itself."""
    names = set(base.__abstractmethods__)
    names |= {n for n, f in vars(base).items() if inspect.iscoroutinefunction(f)}
    return sorted(names | {"class_name"})


def doc_section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


@pytest.mark.parametrize(("base", "ours", "title"), PAIRS)
def test_every_interface_method_is_overridden(base: type, ours: type, title: str) -> None:
    assert not getattr(ours, "__abstractmethods__", set())
    for name in interface_methods(base):
        assert getattr(ours, name) is not getattr(base, name), f"{ours.__name__}.{name} is inherited"


@pytest.mark.parametrize(("base", "ours", "title"), PAIRS)
def test_every_interface_method_has_a_row(base: type, ours: type, title: str) -> None:
    section = doc_section(title)
    first_cells = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    for name in interface_methods(base):
        assert any(re.search(rf"`{name}\b", cell) for cell in first_cells), f"no row for {name} in {title}"


def test_every_named_test_exists() -> None:
    refs = re.findall(r"`(test_\w+\.py)::(\w+)`", DOC.read_text(encoding="utf-8"))
    assert len(refs) > 30
    defined: dict[str, set[str]] = {}
    for filename in {f for f, _ in refs}:
        tree = ast.parse((HERE / filename).read_text(encoding="utf-8"))
        defined[filename] = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for filename, test_name in refs:
        assert test_name in defined[filename], f"{filename}::{test_name} is named in {DOC.name} but does not exist"
