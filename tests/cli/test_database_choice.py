"""Which file a command opens: --db (before or after the command), $AGENTBASE_PATH, .agentbase, ./agentbase.db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def cli_db(tmp_path: Path) -> Path:
    """On every backend: this module is about which file a command picks (default, pointer, variable, option)."""
    return tmp_path / "agentbase.db"


def entries(ok, *args: str) -> list[str]:
    return [e["l2_full"] for e in json.loads(ok(*args, "list", "--json"))]


def test_init_data_dir_writes_a_pointer_used_here_and_below(ok, tmp_path, monkeypatch):
    out = ok("init", "--data-dir", "./data")
    assert (tmp_path / "data" / "agentbase.db").is_file()
    assert "data/agentbase.db" in (tmp_path / ".agentbase").read_text()
    assert ".agentbase" in out
    ok("add", "kept in ./data")
    assert not (tmp_path / "agentbase.db").exists()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert entries(ok) == ["kept in ./data"]
    info = json.loads(ok("info", "--json"))
    assert Path(info["path"]).resolve() == (tmp_path / "data" / "agentbase.db").resolve()
    assert info["path_from"].endswith(".agentbase")


def test_init_records_a_chosen_embedder_in_the_pointer(ok, tmp_path):
    ok("--embedder", "none", "--ner", "regex", "init", "--data-dir", "d")
    text = (tmp_path / ".agentbase").read_text()
    assert 'embedder = "none"' in text and 'ner = "regex"' in text


def test_db_option_before_or_after_the_command(ok, tmp_path):
    ok("--db", "a.db", "init")
    ok("init", "--db", "b.db")
    ok("--db", "a.db", "add", "in a")
    ok("add", "in b", "--db", "b.db")
    assert entries(ok, "--db", "a.db") == ["in a"]
    assert [e["l2_full"] for e in json.loads(ok("list", "--db", "b.db", "--json"))] == ["in b"]
    # the command's own --db wins over the one before it
    assert [e["l2_full"] for e in json.loads(ok("--db", "a.db", "list", "--db", "b.db", "--json"))] == ["in b"]


def test_environment_beats_the_pointer_and_the_option_beats_both(ok, tmp_path, monkeypatch):
    ok("init", "--data-dir", "data")
    ok("add", "in the pointer's file")
    ok("--db", "env.db", "init")
    monkeypatch.setenv("AGENTBASE_PATH", str(tmp_path / "env.db"))
    ok("add", "in the env file")
    assert entries(ok) == ["in the env file"]
    assert json.loads(ok("info", "--json"))["path_from"] == "$AGENTBASE_PATH"
    assert entries(ok, "--db", "data/agentbase.db") == ["in the pointer's file"]


def test_default_is_agentbase_db_in_the_folder(ok, tmp_path):
    assert "Created" in ok("init")
    assert (tmp_path / "agentbase.db").is_file()
    assert "Found existing" in ok("init")


def test_a_broken_pointer_says_how_to_fix_it(agentbase, tmp_path):
    (tmp_path / ".agentbase").write_text("this is = not [toml\n")
    result = agentbase("list")
    assert result.exit_code == 3
    assert "agentbase init --data-dir DIR" in result.stderr


def test_init_data_dir_while_the_environment_names_another_file_says_which_wins(agentbase, ok, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTBASE_PATH", str(tmp_path / "env.db"))
    result = agentbase("init", "--data-dir", "data")
    assert result.exit_code == 0
    assert (tmp_path / "data" / "agentbase.db").is_file() and not (tmp_path / "env.db").exists()
    assert "unset it" in result.stderr
