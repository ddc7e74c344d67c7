"""``agentbase export`` / ``agentbase import``: the round trip, scope filters, stdin/stdout, dry
runs, bad files, and ``--from`` sources written with the real libraries."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest


def records(text: str) -> list[dict]:
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "trailer"  # the trailer's digest covers exported_at
    return lines[1:-1]


@pytest.fixture
def filled(ok, initialised) -> None:
    ok("add", "User prefers dark mode", "--user-id", "alice", "--tags", "preference,ui")
    ok("add", "Bob drinks espresso", "--user-id", "bob")
    sid = ok("session", "create", "--user-id", "alice", "--json")
    sid = json.loads(sid)["id"]
    ok("session", "add-message", sid, "--role", "user", "--content", "I am moving to Lisbon in May")
    ok("session", "commit", sid)


def test_round_trip_through_files(ok, agentbase, filled, tmp_path: Path) -> None:
    out = ok("export", "--out", "backup.jsonl")
    assert "Exported 4 entries" in out or "Exported" in out
    ok("--db", "copy.db", "init")
    summary = ok("--db", "copy.db", "import", "backup.jsonl")
    assert "Imported" in summary and "entry\t" in summary
    ok("--db", "copy.db", "export", "--out", "again.jsonl")
    first, second = (tmp_path / "backup.jsonl").read_text(), (tmp_path / "again.jsonl").read_text()
    assert records(first) == records(second)
    again = json.loads(ok("--db", "copy.db", "import", "backup.jsonl", "--json"))
    assert all(c["inserted"] == 0 and c["updated"] == 0 for c in again["by_type"].values())
    hits = json.loads(ok("--db", "copy.db", "find", "dark mode", "--user-id", "alice", "--json"))
    assert "dark mode" in json.dumps(hits)


def test_stdout_and_stdin_with_a_scope(ok, agentbase, filled) -> None:
    text = ok("export", "--user-id", "bob", "--no-vectors")
    recs = records(text)
    assert {r["user_id"] for r in recs if r["type"] == "entry"} == {"bob"}
    assert not [r for r in recs if r["type"] == "vector"]
    ok("--db", "bob.db", "init")
    result = agentbase("--db", "bob.db", "import", "-", "--json", input=text)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["by_type"]["entry"]["inserted"] == 1


def test_dry_run_and_errors(ok, agentbase, filled, tmp_path: Path) -> None:
    ok("export", "--out", "backup.jsonl")
    ok("--db", "copy.db", "init")
    dry = ok("--db", "copy.db", "import", "backup.jsonl", "--dry-run")
    assert "Dry run" in dry and "entry\t" in dry
    assert json.loads(ok("--db", "copy.db", "stats", "--json"))["entries"] == 0
    lines = (tmp_path / "backup.jsonl").read_text().splitlines()
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[0], "{oops", *lines[1:]]) + "\n")
    result = agentbase("--db", "copy.db", "import", "bad.jsonl")
    assert result.exit_code == 2 or result.exit_code == 3
    assert "line 2" in result.stderr
    assert json.loads(ok("--db", "copy.db", "stats", "--json"))["entries"] == 0
    result = agentbase("--db", "copy.db", "import", "backup.jsonl", "--table", "t")
    assert result.exit_code == 2 and "--table" in result.stderr
    result = agentbase("--db", "missing.db", "export")  # read commands still refuse a missing file
    assert result.exit_code == 1 and "agentbase" in result.stderr and "init" in result.stderr
    assert not (tmp_path / "missing.db").exists()


def test_an_import_cannot_take_over_another_users_rows(ok, agentbase, filled, tmp_path: Path) -> None:
    """Bob's export, edited to name mallory, imported into the same database: a conflict, reported."""
    ok("export", "--user-id", "bob", "--out", "bob.jsonl")
    lines = (tmp_path / "bob.jsonl").read_text().splitlines()
    forged = [lines[0], *(line.replace('"user_id":"bob"', '"user_id":"mallory"').replace(
        "Bob drinks espresso", "HACKED") for line in lines[1:-1])]
    (tmp_path / "forged.jsonl").write_text("\n".join(forged) + "\n")
    result = agentbase("import", "forged.jsonl", "--allow-truncated")
    assert result.exit_code == 2 and "exists in another scope" in result.stderr and "--on-conflict" in result.stderr
    skipped = ok("import", "forged.jsonl", "--allow-truncated", "--on-conflict", "skip")
    assert "1 records named rows of another scope (skip)" in skipped and "exists in another scope: skipped" in skipped
    assert "Warning: the file ends without its trailer" in agentbase("import", "forged.jsonl", "--allow-truncated",
                                                                    "--on-conflict", "skip").stderr
    bob = json.loads(ok("list", "--user-id", "bob", "--json"))
    assert [e["l2_full"] for e in (bob["results"] if isinstance(bob, dict) else bob)] == ["Bob drinks espresso"]
    # bob's backup for carol: forced, and re-keyed rather than merged into bob's rows
    moved = json.loads(ok("import", "bob.jsonl", "--user-id", "carol", "--on-conflict", "rekey", "--json"))
    assert moved["conflicts_total"] == 1 and moved["conflicts"][0]["action"] == "rekeyed"
    carol = json.loads(ok("list", "--user-id", "carol", "--json"))
    assert [e["l2_full"] for e in (carol["results"] if isinstance(carol, dict) else carol)] == ["Bob drinks espresso"]


def test_a_truncated_file_is_refused(ok, agentbase, filled, tmp_path: Path) -> None:
    ok("export", "--out", "backup.jsonl")
    lines = (tmp_path / "backup.jsonl").read_text().splitlines()
    (tmp_path / "cut.jsonl").write_text("\n".join(lines[:-3]) + "\n")
    result = agentbase("--db", "copy.db", "import", "cut.jsonl")
    assert result.exit_code == 2 and "ends without its trailer line" in result.stderr
    assert "--allow-truncated" in result.stderr


def test_from_langchain_file_with_user_mapping(ok, agentbase, initialised, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import FileChatMessageHistory
    from langchain_core.messages import AIMessage, HumanMessage

    history = FileChatMessageHistory(str(tmp_path / "support.json"))
    history.add_messages([HumanMessage("My printer jams on page two"), AIMessage("Try the rear tray")])
    dry = ok("import", "--from", "langchain-file", "support.json", "--user-id", "zoe", "--dry-run")
    assert "chat_message\t2" in dry
    out = ok("import", "--from", "langchain-file", "support.json", "--user-id", "zoe")
    assert "chat_message\t2\t0\t0" in out
    shown = json.loads(ok("session", "show", "support", "--json"))
    assert "printer jams" in json.dumps(shown)
    assert "printer" in json.dumps(json.loads(ok("find", "printer problem", "--user-id", "zoe", "--json")))
    again = ok("import", "--from", "langchain-file", "support.json", "--user-id", "zoe")
    assert "chat_message\t0\t0\t2" in again


def test_from_openai_json(ok, initialised, tmp_path: Path) -> None:
    page = {"object": "list", "data": [
        {"id": "msg_2", "object": "thread.message", "created_at": 1700000060, "thread_id": "thread_9",
         "role": "assistant", "content": [{"type": "text", "text": {"value": "Paris it is", "annotations": []}}]},
        {"id": "msg_1", "object": "thread.message", "created_at": 1700000000, "thread_id": "thread_9",
         "role": "user", "content": [{"type": "text", "text": {"value": "Book me a hotel in Paris", "annotations": []}}]},
    ], "first_id": "msg_2", "last_id": "msg_1", "has_more": False}
    (tmp_path / "threads.json").write_text(json.dumps(page))
    summary = json.loads(ok("import", "--from", "openai-json", "threads.json", "--user-id", "yan", "--json"))
    assert summary["by_type"]["chat_message"]["inserted"] == 2
    messages = json.loads(ok("session", "show", "thread_9", "--json"))
    assert [m["content"] for m in messages["messages"]] == ["Book me a hotel in Paris", "Paris it is"]


def test_from_mem0_config_file(ok, initialised, tmp_path: Path) -> None:
    from tests.adapters.importers.test_mem0_importer import vector_store, write_with_mem0

    config = {"vector_store": vector_store("qdrant", tmp_path),
              "llm": {"provider": "openai", "config": {"api_key": "sk-test"}},
              "embedder": {"provider": "openai", "config": {"api_key": "sk-test", "embedding_dims": 64}},
              "history_db_path": str(tmp_path / "history.db")}
    seen = write_with_mem0(config)
    (tmp_path / "mem0.json").write_text(json.dumps(config))
    assert "memory\t3" in ok("import", "--from", "mem0", "mem0.json", "--dry-run")
    out = ok("import", "--from", "mem0", "mem0.json")
    assert "memory\t3\t0\t0" in out and "history\t2\t0\t0" in out
    entry = json.loads(ok("get", seen["tea"], "--json"))
    assert entry["l2_full"] == "I like jasmine tea in the morning"
    events = json.loads(ok("history", seen["tea"], "--json"))
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
