"""The fail-open run every synchronous harness adapter shares: a remote agentbase (PostgreSQL through a
counting proxy) killed mid-run; the caller asserts what its harness does with the writes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentbase_kernel import AgentBase, Config
from tests.adapters._tcp_proxy import TcpProxy
from tests.conftest import HashEmbedder

TURNS = {"before": 2, "down": 6, "after": 4}


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from tests.postgres.server import ThrowawayServer

    with ThrowawayServer.start(durable=True) as pg:  # these tests kill their server: not the session's
        yield pg


def run_killed(server: Any, run: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """``run`` (one of benchmarks.harness_failopen's) over 12 turns with the store down for 6; the checks
    every harness shares: every turn done, no exception reaching the agent, the breaker held requests back."""
    proxy = TcpProxy(server.port)
    config = Config.load().with_(storage={"synchronous": "FULL"})
    try:
        with AgentBase(proxy.url(server.create_database()), embedder=HashEmbedder(), ner="regex", config=config) as db:
            result = run(server, proxy, db, **TURNS, cooldown=0.5, pace=0.05)
    finally:
        proxy.close()
    assert result["turns_completed"] == result["turns_planned"] == 12
    assert result["exceptions_reaching_agent"] == 0
    assert result["breaker_trips"] >= 1 and result["requests_refused_while_open"] > 0
    assert result["requests_sent_while_open"] <= result["adapter_requests_sent_while_down"]
    return result
