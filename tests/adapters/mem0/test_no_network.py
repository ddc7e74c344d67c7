"""``add(infer=True)`` extracts facts with no LLM, no HTTP client and no socket, even with an LLM configured."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import httpx2
import pytest
from openai import _base_client

from agentbase_adapters.mem0 import AsyncMemory, Memory

_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def no_network(monkeypatch):
    """Every way out of the process raises; ``touched`` records who tried."""
    touched: list[str] = []

    def guard(name):
        def refuse(*args, **kwargs):
            touched.append(name)
            raise ConnectionRefusedError(f"{name} called while the network is off")

        return refuse

    monkeypatch.setattr(socket.socket, "connect", guard("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", guard("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", guard("socket.create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", guard("socket.getaddrinfo"))
    monkeypatch.setattr(_base_client.SyncAPIClient, "request", guard("openai.request"))
    monkeypatch.setattr(_base_client.AsyncAPIClient, "request", guard("openai.arequest"))
    for module in (httpx, httpx2):
        monkeypatch.setattr(module.Client, "send", guard(f"{module.__name__}.send"))
        monkeypatch.setattr(module.AsyncClient, "send", guard(f"{module.__name__}.asend"))
    return touched


def _config(tmp_path, hash_embedder):
    return {
        "vector_store": {"provider": "qdrant", "config": {"path": str(tmp_path / "qdrant"), "embedding_model_dims": 64}},
        "llm": {"provider": "openai", "config": {"model": "gpt-4o-mini", "api_key": "sk-would-cost-money"}},
        "embedder": {"provider": "agentbase", "config": {"embedder": hash_embedder}},
        "custom_instructions": "Extract food preferences",
    }


def test_the_guard_catches_a_real_openai_call(no_network):
    import openai

    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    with pytest.raises(Exception):  # noqa: B017 - any failure will do: the guard records the attempt
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert "openai.request" in no_network


def test_add_infer_true_touches_no_llm_and_no_network(tmp_path, hash_embedder, no_network):
    with Memory.from_config(_config(tmp_path, hash_embedder)) as m:
        rows = m.add([{"role": "user", "content": "My name is Alice. I love sushi."},
                      {"role": "assistant", "content": "Nice to meet you, Alice!"}], user_id="alice")["results"]
        assert len(rows) >= 3 and all(r["event"] == "ADD" for r in rows)
        assert {r["memory"] for r in m.get_all(filters={"user_id": "alice"})["results"]} >= {r["memory"] for r in rows}
    assert no_network == []


async def test_async_add_infer_true_touches_no_llm_and_no_network(tmp_path, hash_embedder, no_network):
    async with AsyncMemory.from_config(_config(tmp_path, hash_embedder)) as m:
        rows = (await m.add("My name is Alice. I love sushi.", user_id="alice"))["results"]
        assert rows and all(r["event"] == "ADD" for r in rows)
    assert no_network == []


_SEARCH_IN_A_FRESH_PROCESS = """
import socket, sys, tempfile
sys.path.insert(0, "tests")
from conftest import HashEmbedder
from agentbase_kernel import AgentBase
from agentbase_adapters.mem0 import Mem0Adapter
touched = []
def refuse(*args, **kwargs):
    touched.append(args[:1])
    raise ConnectionRefusedError("network is off")
socket.getaddrinfo = refuse
socket.create_connection = refuse
m = Mem0Adapter(AgentBase(tempfile.mkdtemp() + "/x.db", embedder=HashEmbedder(), ner="regex"))
m.add("I love sushi", user_id="alice", infer=False)
m.search("sushi", filters={"user_id": "alice"})
print(len(touched))
"""


def test_first_search_of_a_process_touches_no_network(tmp_path):
    """The first find() of a process loads a token counter; it once downloaded tiktoken's encoding."""
    # an empty tiktoken cache, so a warm cache on this machine cannot hide the download
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken")}
    out = subprocess.run([sys.executable, "-c", _SEARCH_IN_A_FRESH_PROCESS], capture_output=True, text=True,
                         check=True, cwd=_ROOT, env=env)
    assert out.stdout.strip().splitlines()[-1] == "0"


def test_importing_the_adapters_imports_no_framework_or_client():
    code = (
        "import sys, agentbase_adapters.mem0, agentbase_adapters.minimal; "
        "print(sorted(m for m in ('mem0', 'openai', 'httpx', 'httpx2', 'qdrant_client', 'posthog') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=_ROOT)
    assert out.stdout.strip() == "[]"
