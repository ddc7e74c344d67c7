"""Export from a SQLite file, import into PostgreSQL, export again, import back into a new file: equal content.

The content is what a user accumulates: memories of several users and agents, an update (history), a
supersession, a committed session with its messages, entity links, tags and metadata, expired rows, and the
vectors. Compared record by record (the header's ``exported_at`` aside), so nothing is lost or changed in
either direction; the CLI does the same with ``--db postgresql://...``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentbase_cli.app import cli
from agentbase_kernel import Kernel
from tests.conftest import HashEmbedder

pytestmark = pytest.mark.postgres


def _fill(kernel: Kernel) -> None:
    kernel.add_memory("Alice prefers window seats on long flights", user_id="alice", tags=["travel", "preference"],
                      metadata={"source": "chat", "priority": 2})
    moved = kernel.add_memory("Alice lives in Porto", user_id="alice", category="profile")
    kernel.update(moved.id, user_id="alice", text="Alice lives in Lisbon since May 2024")
    kernel.add_memory("Bob is allergic to peanuts", user_id="bob", agent_id="chef", metadata={"severity": "high"})
    kernel.add_memory("The deploy key rotates every 90 days", project_id="infra")
    kernel.add_memory("Temporary: the office is closed today", user_id="alice", expires_at="2020-01-01T00:00:00+00:00")
    session = kernel.create_session(user_id="alice", agent_id="travel-bot", metadata={"channel": "web"})
    kernel.add_message(session.id, "user", "I am flying to Tokyo with Carol next Friday")
    kernel.add_message(session.id, "assistant", "Noted: Tokyo next Friday, with Carol.")
    kernel.commit_session(session.id)
    kernel.add_memory("Alice's favourite colour is green", user_id="alice")
    kernel.add_memory("Alice's favourite colour is blue", user_id="alice")  # may supersede the green one
    deleted = kernel.add_memory("A memory that is deleted", user_id="alice")
    kernel.delete(deleted.id, user_id="alice")


def _records(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    header, records, trailer = lines[0], lines[1:-1], lines[-1]
    assert header["type"] == "header" and trailer["type"] == "trailer"  # its digest covers exported_at
    return sorted(records, key=lambda r: json.dumps(r, sort_keys=True))


def _counts(kernel: Kernel) -> dict[str, int]:
    """Row counts, less ``vectors``: the source still holds vectors of texts since replaced, which no export carries."""
    return {k: v for k, v in kernel.stats().items() if k != "vectors"}


def _open(location: Path | str) -> Kernel:
    return Kernel(location, embedder=HashEmbedder(), ner="regex")


def test_sqlite_to_postgres_and_back_keeps_everything(tmp_path, postgres_server):
    pg_url = postgres_server.create_database()
    with _open(tmp_path / "source.db") as source:
        _fill(source)
        counted = source.export(tmp_path / "from-sqlite.jsonl")
        source_stats = _counts(source)
    assert counted["entry"] >= 8 and counted.get("message", 0) == 2 and counted.get("vector", 0) > 0

    with _open(pg_url) as pg:
        result = pg.import_(tmp_path / "from-sqlite.jsonl")
        assert result["by_type"]["entry"]["inserted"] == counted["entry"]
        pg.export(tmp_path / "from-postgres.jsonl")
        assert _counts(pg) == source_stats
        # found by the Postgres retrieval, in its scope only
        hits = pg.find("where does alice live", user_id="alice", top_k=3)
        assert hits and "Lisbon" in hits[0].entry.l2_full
        again = pg.import_(tmp_path / "from-sqlite.jsonl")  # idempotent
        assert all(c["inserted"] == 0 and c["updated"] == 0 for c in again["by_type"].values())
    assert _records(tmp_path / "from-postgres.jsonl") == _records(tmp_path / "from-sqlite.jsonl")

    with _open(tmp_path / "back.db") as back:
        back.import_(tmp_path / "from-postgres.jsonl")
        back.export(tmp_path / "back.jsonl")
        assert _counts(back) == source_stats
    assert _records(tmp_path / "back.jsonl") == _records(tmp_path / "from-sqlite.jsonl")


def test_the_cli_moves_a_file_to_a_server(tmp_path, postgres_url, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTBASE_EMBEDDER", "none")
    monkeypatch.setenv("AGENTBASE_NER", "regex")
    runner = CliRunner()

    def ok(*args: str) -> str:
        result = runner.invoke(cli, list(args), prog_name="agentbase")
        assert result.exit_code == 0, (args, result.output, result.exception)
        return result.stdout

    ok("--db", "local.db", "init")
    ok("--db", "local.db", "add", "User prefers dark mode", "--user-id", "alice", "--tags", "preference,ui")
    ok("--db", "local.db", "add", "Bob drinks espresso", "--user-id", "bob")
    ok("--db", "local.db", "export", "--out", "backup.jsonl")
    ok("--db", postgres_url, "init")
    assert "Imported" in ok("--db", postgres_url, "import", "backup.jsonl")
    listed = json.loads(ok("--db", postgres_url, "list", "--user-id", "alice", "--json"))
    assert [e["l2_full"] for e in (listed["results"] if isinstance(listed, dict) else listed)] == ["User prefers dark mode"]
    ok("--db", postgres_url, "export", "--out", "again.jsonl")
    assert _records(tmp_path / "again.jsonl") == _records(tmp_path / "backup.jsonl")
