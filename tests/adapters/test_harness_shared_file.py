"""One database, every door: what an agent harness writes (Hermes' provider, the Claude SDK hooks, CrewAI's Memory)
the Mem0 swap, the MCP server and the dashboard find - within its user's scope, and not in another user's.

Hermes and CrewAI run in their own virtualenvs (their pins; see the Makefile), so their part is a script run by
that interpreter on the same file: ``$AGENTBASE_HERMES_PYTHON`` / ``$AGENTBASE_CREWAI_PYTHON`` (set by
``make test``), else ``.venv-hermes`` / ``.venv-crewai``.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from agentbase_kernel import AgentBase
from tests.conftest import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]

HERMES_SCRIPT = textwrap.dedent("""
    import json, sys
    from agent.memory_manager import MemoryManager
    from agentbase_adapters.hermes import AgentBaseMemoryProvider
    from agentbase_kernel import AgentBase
    from tests.conftest import HashEmbedder

    path, home = sys.argv[1], sys.argv[2]
    with AgentBase(path, embedder=HashEmbedder(), ner="regex") as db:
        manager = MemoryManager()
        manager.add_provider(AgentBaseMemoryProvider(db, user_id="alice"))
        manager.initialize_all(session_id="hermes-1", platform="cli", hermes_home=home, agent_context="primary")
        manager.sync_all("My beehives are behind the greenhouse", "Good spot for the bees.", session_id="hermes-1")
        manager.flush_pending(timeout=30)
        stored = json.loads(manager.handle_tool_call("agentbase_remember", {"content": "Alice sells honey at the "
                                                                                       "Saturday market"}))
        manager.on_session_end([])
        manager.shutdown_all()
    print(json.dumps(stored))
""")


CREWAI_SCRIPT = textwrap.dedent("""
    import json, os, sys
    for flag in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CREWAI_DISABLE_VERSION_CHECK"):
        os.environ.setdefault(flag, "true")
    from crewai.memory.unified_memory import Memory
    from agentbase_adapters.crewai import AgentBaseStorage
    from agentbase_kernel import AgentBase
    from tests.adapters.crewai._fake_llm import ScriptedLLM
    from tests.conftest import HashEmbedder

    with AgentBase(sys.argv[1], embedder=HashEmbedder(), ner="regex") as db:
        storage = AgentBaseStorage(db, user_id="alice", defer_embedding=False)
        memory = Memory(storage=storage, embedder=storage.embedder, llm=ScriptedLLM())
        record = memory.remember("Alice keeps hives by the orchard", scope="/user/alice",
                                 categories=["bees"], importance=0.8)
        memory.drain_writes()
        found = [m.record.content for m in memory.recall("hives orchard", depth="shallow")]
        memory.close()
        storage.close()
    print(json.dumps({"id": record.id, "found": found}))
""")


def _venv_python(variable: str, directory: str) -> str:
    python = os.environ.get(variable) or str(ROOT / directory / "bin" / "python")
    if not Path(python).exists():
        pytest.skip(f"needs {directory} (make test builds it and sets {variable})")
    return python


def hermes_python() -> str:
    return _venv_python("AGENTBASE_HERMES_PYTHON", ".venv-hermes")


def _shared(tmp_path: Path) -> Path:
    path = tmp_path / "shared.db"
    with AgentBase(path, embedder=HashEmbedder(), ner="regex") as db:
        db.sync.add_memory("Bob keeps bees too, on his roof", user_id="bob")
    return path


def _found_everywhere(path: Path, query: str, text: str) -> None:
    """``text`` is found for alice by the Mem0 swap, the MCP server and the dashboard - and never for bob."""
    from starlette.testclient import TestClient

    from agentbase_adapters.mem0 import Memory
    from agentbase_adapters.web import create_app
    from agentbase_kernel import Kernel
    from tests.adapters.mcp.conftest import McpClient, launch

    config = {"vector_store": {"provider": "qdrant", "config": {"path": str(path)}},
              "embedder": {"provider": "agentbase", "config": {"embedder": HashEmbedder()}}}
    with Memory.from_config(config) as mem0:
        alice = [r["memory"] for r in mem0.search(query, filters={"user_id": "alice"}, top_k=20)["results"]]
        bob = [r["memory"] for r in mem0.search(query, filters={"user_id": "bob"}, top_k=20)["results"]]
    assert text in alice and text not in bob

    for user, expected in (("alice", True), ("bob", False)):
        client = McpClient(launch(path, "--user-id", user))
        try:
            found = [r["content"] for r in client.ok("search_memories", {"query": query, "top_k": 20})["results"]]
        finally:
            client.close()
        assert (text in found) is expected, (user, found)

    with Kernel(path, embedder=HashEmbedder(), ner="regex") as kernel:
        web = TestClient(create_app(kernel, cache_seconds=0), base_url="http://127.0.0.1:8080",
                         client=("127.0.0.1", 40000))
        assert text in web.get(f"/memories?q={query}&user_id=alice").text
        assert text not in web.get(f"/memories?q={query}&user_id=bob").text


def test_what_hermes_writes_the_mem0_swap_mcp_and_dashboard_find(tmp_path):
    python = hermes_python()
    path = _shared(tmp_path)
    home = tmp_path / "hermes-home"
    home.mkdir()
    run = subprocess.run([python, "-c", HERMES_SCRIPT, str(path), str(home)], capture_output=True, text=True,
                         timeout=600, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "HERMES_HOME": str(home)})
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.strip().splitlines()[-1])["result"] == "Stored."
    with AgentBase(path, embedder=HashEmbedder(), ner="regex") as db:
        sources = {e.l2_full: e.source for e in db.sync.list(user_id="alice", limit=None)}
    assert sources["My beehives are behind the greenhouse"] == "hermes"
    _found_everywhere(path, "beehives greenhouse", "My beehives are behind the greenhouse")
    _found_everywhere(path, "honey market", "Alice sells honey at the Saturday market")


async def test_what_the_claude_hooks_write_the_mem0_swap_mcp_and_dashboard_find(tmp_path):
    pytest.importorskip("claude_agent_sdk")
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

    from agentbase_adapters.claude import AgentBaseMemory
    from tests.adapters.claude._fake_cli import FakeClaudeCLI, ToolCall, Turn

    path = _shared(tmp_path)
    with AgentBase(path, embedder=HashEmbedder(), ner="regex") as db:
        memory = AgentBaseMemory(db, user_id="alice")
        cli = FakeClaudeCLI([Turn("Moved the hive sensors to sensors/hive.py.",
                                  [ToolCall("Write", {"file_path": "/repo/sensors/hive.py", "content": "x"})])])
        async with ClaudeSDKClient(options=memory.attach(ClaudeAgentOptions(cwd="/repo")), transport=cli) as client:
            await client.query("Split the beehive sensor code into its own module")
            async for _ in client.receive_response():
                pass
        memory.close()
        [entry] = db.sync.list(user_id="alice", role="user")
        assert entry.source == "claude" and entry.metadata["claude_entities"] == ["sensors/hive.py"]
    _found_everywhere(path, "beehive sensor module", "Split the beehive sensor code into its own module")


def test_what_crewai_memory_writes_the_mem0_swap_mcp_and_dashboard_find(tmp_path):
    python = _venv_python("AGENTBASE_CREWAI_PYTHON", ".venv-crewai")
    path = _shared(tmp_path)
    run = subprocess.run([python, "-c", CREWAI_SCRIPT, str(path)], capture_output=True, text=True, timeout=600,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "CREWAI_STORAGE_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr[-3000:]
    written = json.loads(run.stdout.strip().splitlines()[-1])
    assert written["found"] == ["Alice keeps hives by the orchard"]
    with AgentBase(path, embedder=HashEmbedder(), ner="regex") as db:
        entry = db.sync.get(written["id"], user_id="alice")
    assert entry.source == "crewai" and entry.metadata["crewai_scope"] == "/user/alice"
    _found_everywhere(path, "hives orchard", "Alice keeps hives by the orchard")
