"""The ``store`` fixture: one fresh backend per test, for every backend this machine can run.

A backend joins the contract suite by adding its name to ``BACKENDS`` and a branch to ``_open``
(the PostgreSQL backend will start a throwaway server here).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentbase_kernel.store import Store, open_store

BACKENDS = ["sqlite"]


def _open(backend: str, tmp_path: Path) -> Store:
    if backend == "sqlite":
        return open_store(tmp_path / "contract.db")
    raise AssertionError(f"unknown backend {backend}")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = _open(request.param, tmp_path)
    yield opened
    opened.close()
