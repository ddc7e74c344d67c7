"""The ``store`` fixture: one fresh backend per test, for every backend this machine can run.

SQLite opens a file in ``tmp_path``; PostgreSQL a fresh database on the session's throwaway server
(tests/postgres/plugin.py), skipped with the reason only when the postgres extra is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentbase_kernel.store import Store, open_store

BACKENDS = ["sqlite", "postgres"]


def _open(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if backend == "sqlite":
        return open_store(tmp_path / "contract.db")
    if backend == "postgres":
        return open_store(request.getfixturevalue("postgres_url"))
    raise AssertionError(f"unknown backend {backend}")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = _open(request.param, request, tmp_path)
    yield opened
    opened.close()
