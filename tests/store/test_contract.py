"""The backend contract (``agentbase_kernel.testing.StoreContractTests``) on every store here.

Each class gives the suite one backend: a fresh SQLite file in ``tmp_path``, a fresh database on
the session's throwaway PostgreSQL server (tests/postgres/plugin.py; skipped with the reason only
when the postgres extra is not installed), and the in-memory reference store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentbase_kernel.store import Store, open_store
from agentbase_kernel.store.memory import MemoryStore
from agentbase_kernel.testing import StoreContractTests


class TestSqliteStore(StoreContractTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        opened = open_store(tmp_path / "contract.db")
        yield opened
        opened.close()

    def open_again(self, store: Store) -> Store:
        return open_store(store.path)  # type: ignore[attr-defined]


class TestPostgresStore(StoreContractTests):
    @pytest.fixture
    def store(self, postgres_url: str) -> Iterator[Store]:
        opened = open_store(postgres_url)
        self.url = postgres_url
        yield opened
        opened.close()

    def open_again(self, store: Store) -> Store:
        return open_store(self.url)


class TestMemoryStore(StoreContractTests):
    """No second handle: the data lives in one object (``open_again`` stays ``None``)."""

    @pytest.fixture
    def store(self) -> Iterator[Store]:
        opened = MemoryStore()
        opened.open()
        yield opened
        opened.close()
