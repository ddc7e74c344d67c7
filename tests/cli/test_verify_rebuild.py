"""verify / rebuild on a file written with the real MiniLM (moved here from the old argparse CLI's tests)."""

from __future__ import annotations

import json

import pytest

from agentbase_kernel import AgentBase


@pytest.fixture
def minilm_file(tmp_path, minilm):
    """A file written with the default embedder, so the command's "auto" embedder opens it."""
    path = tmp_path / "cli.db"
    with AgentBase(path, embedder=minilm, ner="regex") as db:
        for i in range(4):
            db.sync.add_memory(f"Carol logs kayak trip number {i}", user_id="carol")
    return path


def _damage(path) -> None:
    """Drop an FTS row and every vector behind the kernel's back, as a crashed tool might."""
    from tests.reliability._inputs import raw_connect

    conn = raw_connect(path)
    try:
        conn.execute("DELETE FROM entries_fts WHERE rowid = (SELECT min(rid) FROM entries)")
        conn.execute("DELETE FROM embeddings")
        conn.commit()
    finally:
        conn.close()


def test_verify_finds_damage_and_rebuild_repairs_it_with_the_real_model(runner, minilm_file):
    from agentbase_cli.app import cli

    def run(*args: str):
        return runner.invoke(cli, ["--db", str(minilm_file), *args, "--json"])

    assert json.loads(run("verify", "--vectors").stdout)["ok"] is True
    _damage(minilm_file)
    fast = run("verify")
    assert fast.exit_code == 4 and json.loads(fast.stdout)["fts_ok"] is False
    slow = run("verify", "--vectors")
    # opening with the model starts re-embedding the missing texts in the background (Ingestor.resume)
    assert slow.exit_code == 4 and json.loads(slow.stdout)["texts_without_vector"] <= 4
    rebuilt = run("rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert json.loads(rebuilt.stdout)["texts_without_vector"] == 0
    assert run("verify", "--vectors").exit_code == 0
    hits = json.loads(run("find", "kayak trip number 2", "--user-id", "carol").stdout)["hits"]
    assert hits[0]["entry"]["l2_full"] == "Carol logs kayak trip number 2"
    assert "vector" in hits[0]["matched_by"] or any("vec" in m for m in hits[0]["matched_by"])
