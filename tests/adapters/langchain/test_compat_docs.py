"""Guard: the compat docs name a row for every public member of each real interface, and every test they cite exists."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from langchain_classic.memory.chat_memory import BaseChatMemory
from langchain_core.chat_history import BaseChatMessageHistory
from langgraph.store.base import BaseStore

HERE = Path(__file__).parent
DOCS = Path(__file__).parents[3] / "docs" / "compat"


def _public(cls: type, *, own_module_prefix: str) -> set[str]:
    names = set()
    for name, _member in inspect.getmembers(cls):
        if name.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is not None and owner.__module__.startswith(own_module_prefix):
            names.add(name)
    return names


def _rows(doc: str) -> str:
    return "\n".join(line for line in (DOCS / doc).read_text().splitlines() if line.startswith("| `"))


@pytest.mark.parametrize(
    ("doc", "cls", "prefix", "extra"),
    [
        pytest.param("langchain.md", BaseChatMessageHistory, "langchain_core.chat_history", {"messages"}, id="chat-history"),
        pytest.param("langchain.md", BaseChatMemory, "langchain_classic.", set(), id="chat-memory"),
        pytest.param("langgraph.md", BaseStore, "langgraph.store", {"supports_ttl", "ttl_config"}, id="store"),
    ],
)
def test_every_public_member_has_a_row(doc: str, cls: type, prefix: str, extra: set[str]) -> None:
    rows = _rows(doc)
    members = (_public(cls, own_module_prefix=prefix) | extra) - {"chat_memory", "input_key", "output_key", "return_messages", "model_config"}
    missing = sorted(m for m in members if not re.search(rf"`{re.escape(m)}\b", rows))
    assert missing == []


@pytest.mark.parametrize("doc", ["langchain.md", "langgraph.md"])
def test_every_cited_test_exists(doc: str) -> None:
    cited = re.findall(r"`(test_\w+\.py)::(test_\w+)`", (DOCS / doc).read_text())
    assert cited
    missing = [
        f"{file}::{name}"
        for file, name in cited
        if not re.search(rf"^(async )?def {name}\(", (HERE / file).read_text(), re.MULTILINE)
    ]
    assert missing == []
