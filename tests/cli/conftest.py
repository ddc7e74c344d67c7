"""Drive ``agentbase`` in-process with click's CliRunner, on real files in tmp_path.

Most command tests open files with ``$AGENTBASE_EMBEDDER=none`` and ``$AGENTBASE_NER=regex``:
they test the command line, not retrieval quality (the seed-sequence test runs the installed
command with the real MiniLM and spaCy models).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agentbase_cli.app import cli


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def cli_db(request: pytest.FixtureRequest, test_backend: str, tmp_path: Path) -> Path | str:
    """The database a command without ``--db`` opens: ``./agentbase.db`` in the test's folder, or under
    AGENTBASE_TEST_BACKEND=postgres a fresh database's URL (given to the commands as ``$AGENTBASE_PATH``)."""
    return str(request.getfixturevalue("postgres_url")) if test_backend == "postgres" else tmp_path / "agentbase.db"


@pytest.fixture
def agentbase(runner, tmp_path, monkeypatch, cli_db) -> Callable[..., Result]:
    """``agentbase(*args, input=None)`` in a fresh folder, with no models (see module docstring)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTBASE_PATH", raising=False)
    if isinstance(cli_db, str):  # a server database: the commands find it as a user's shell would
        monkeypatch.setenv("AGENTBASE_PATH", cli_db)
    monkeypatch.setenv("AGENTBASE_EMBEDDER", "none")
    monkeypatch.setenv("AGENTBASE_NER", "regex")

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(cli, list(args), input=input, prog_name="agentbase")

    return invoke


@pytest.fixture
def ok(agentbase) -> Callable[..., str]:
    """Run a command that must succeed; returns its stdout."""

    def run(*args: str, input: str | None = None) -> str:
        result = agentbase(*args, input=input)
        assert result.exit_code == 0, (args, result.output, result.stderr, result.exception)
        return result.stdout

    return run


@pytest.fixture
def ok_json(ok) -> Callable[..., Any]:
    def run(*args: str) -> Any:
        return json.loads(ok(*args, "--json"))

    return run


@pytest.fixture
def initialised(ok) -> None:
    ok("init")
