"""``agentbase import`` into a database that does not exist yet creates it, with the embedder of what it imports
(recorded in the new file), and says so; read commands keep refusing a missing file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentbase_kernel import Kernel


@pytest.fixture
def own_embedder(monkeypatch):
    """These tests are about which embedder a new file gets: no $AGENTBASE_EMBEDDER deciding it for them."""
    monkeypatch.delenv("AGENTBASE_EMBEDDER", raising=False)


def _export(tmp_path: Path, embedder: str | None) -> Path:
    with Kernel(tmp_path / "source.db", embedder=embedder, ner="regex") as k:
        k.add_memory("Alice moved to Denver last month", user_id="alice")
        k.add_memory("Bob drinks espresso", user_id="bob")
        with open(tmp_path / "dump.jsonl", "w", encoding="utf-8") as out:
            k.export(out)
    return tmp_path / "dump.jsonl"


def _recorded(path: Path) -> str | None:
    with Kernel(path, embedder=None, ner=None, create=False) as k:
        return k.stats() and k._ready().meta().get("embedding_model")


def test_an_export_without_an_embedder_makes_a_file_without_one(agentbase, own_embedder, tmp_path):
    _export(tmp_path, None)
    result = agentbase("--db", "new.db", "import", "dump.jsonl")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Created new.db - embedder none (text search only), as the export was written")
    assert "Imported" in result.stdout
    with Kernel(tmp_path / "new.db", ner=None, create=False) as k:  # "auto" opens it as it was written
        assert k.info()["embedder"] is None and k.count(user_id="alice") == 1


def test_an_export_with_minilm_makes_a_minilm_file_and_keeps_its_vectors(agentbase, own_embedder, tmp_path):
    _export(tmp_path, "minilm")
    result = agentbase("--db", "new.db", "import", "dump.jsonl", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["created"]["embedder"] == "all-MiniLM-L6-v2" and summary["created"]["dim"] == 384
    assert not summary.get("reembedded") and not summary.get("vectors_dropped")
    assert _recorded(tmp_path / "new.db") == "all-MiniLM-L6-v2"
    with Kernel(tmp_path / "new.db", ner="regex", create=False) as k:
        hits = k.find("which city is her home now?", user_id="alice")
        assert hits and "vector" in hits[0].matched_by


def test_stdin_into_a_new_file(agentbase, own_embedder, tmp_path):
    text = _export(tmp_path, None).read_text(encoding="utf-8")
    result = agentbase("--db", "piped.db", "import", "-", input=text)
    assert result.exit_code == 0, result.output
    assert "Created piped.db" in result.stdout
    with Kernel(tmp_path / "piped.db", embedder=None, ner=None, create=False) as k:
        assert k.count(user_id="bob") == 1


def test_an_explicit_embedder_wins(agentbase, tmp_path):
    _export(tmp_path, None)
    result = agentbase("--db", "new.db", "--embedder", "none", "import", "dump.jsonl")
    assert result.exit_code == 0 and "as --embedder says" in result.stdout


def test_a_dry_run_creates_nothing(agentbase, own_embedder, tmp_path):
    _export(tmp_path, None)
    result = agentbase("--db", "new.db", "import", "dump.jsonl", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Would create new.db" in result.stdout and "Dry run" in result.stdout
    assert not (tmp_path / "new.db").exists()


def test_a_missing_folder_is_named(agentbase, own_embedder, tmp_path):
    _export(tmp_path, None)
    result = agentbase("--db", "nowhere/new.db", "import", "dump.jsonl")
    assert result.exit_code == 1 and "mkdir -p nowhere" in result.stderr


@pytest.mark.parametrize("command", [["list"], ["find", "x"], ["stats"], ["export"], ["session", "list"]])
def test_read_commands_still_refuse_a_missing_file(agentbase, tmp_path, command):
    result = agentbase("--db", "absent.db", *command)
    assert result.exit_code == 1 and "No database at absent.db" in result.stderr
    assert not (tmp_path / "absent.db").exists()


def test_from_mem0_into_a_new_file_takes_the_configs_embedder(agentbase, own_embedder, tmp_path):
    pytest.importorskip("mem0")
    from tests.adapters.importers.test_mem0_importer import vector_store, write_with_mem0

    config = {"vector_store": vector_store("qdrant", tmp_path),
              "llm": {"provider": "openai", "config": {"api_key": "sk-test"}},
              "embedder": {"provider": "openai", "config": {"api_key": "sk-test", "embedding_dims": 64}},
              "history_db_path": str(tmp_path / "history.db")}
    write_with_mem0(config)
    # the application's config names the bundled MiniLM: Memory.from_config(config) would open the file with it
    config["embedder"] = {"provider": "huggingface", "config": {"model": "sentence-transformers/all-MiniLM-L6-v2"}}
    (tmp_path / "mem0.json").write_text(json.dumps(config))
    result = agentbase("import", "--from", "mem0", "mem0.json", "--db", "migrated.db")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Created migrated.db - embedder all-MiniLM-L6-v2 (384 dim), the embedder "
                                    "the mem0 config names.")
    assert "memory\t3\t0\t0" in result.stdout
    assert _recorded(tmp_path / "migrated.db") == "all-MiniLM-L6-v2"
