"""Every command through click's CliRunner, on a real file: what it prints, what it stores."""

from __future__ import annotations

import json
import os

import pytest

from agentbase_kernel import Kernel

pytestmark = pytest.mark.usefixtures("initialised")


def kernel() -> Kernel:
    """A kernel on the database the commands use (``$AGENTBASE_PATH`` when the tests run on a server)."""
    return Kernel(os.environ.get("AGENTBASE_PATH", "agentbase.db"), embedder=None, ner=None)


def test_add_prints_the_id_and_stores_the_text_with_its_options(ok):
    entry_id = ok("add", "User prefers dark mode", "--type", "resource", "--tags", "preference,dark-mode",
                  "--tags", "ui", "--category", "preference", "--user-id", "alice", "--metadata", "source=cli",
                  "--metadata", '{"n": 3}', "--confidence", "0.5").strip()
    with kernel() as k:
        entry = k.get(entry_id)
    assert entry.l2_full == "User prefers dark mode"
    assert entry.context_type.value == "resource"
    assert {"preference", "dark-mode", "ui"} <= set(entry.tags)
    assert entry.category == "preference" and entry.user_id == "alice" and entry.confidence == 0.5
    assert entry.metadata == {"source": "cli", "n": 3}


def test_add_reads_stdin_and_says_when_nothing_was_added(agentbase, ok):
    first = ok("add", "-", input="A memory from a pipe\n").strip()
    again = agentbase("add", "A memory from a pipe\n")
    assert again.exit_code == 0
    assert again.stdout.strip() == first
    assert "nothing added" in again.stderr


def test_add_json_is_the_add_result(ok_json):
    result = ok_json("add", "Bob likes tea", "--user-id", "bob")
    assert result["event"] == "ADD"
    assert result["entry"]["l2_full"] == "Bob likes tea"
    assert result["entry"]["scope"]["user_id"] == "bob"


def test_find_lists_score_id_and_text_best_first_within_the_scope(ok, ok_json):
    tea = ok("add", "Bob drinks green tea every morning", "--user-id", "bob").strip()
    ok("add", "Bob drinks green tea too", "--user-id", "carol")
    ok("add", "Bob owns a red bicycle", "--user-id", "bob")
    rows = [line.split("\t") for line in ok("find", "green tea", "--user-id", "bob").splitlines()]
    assert rows[0][1] == tea and rows[0][2] == "Bob drinks green tea every morning"
    assert float(rows[0][0]) > 0
    assert all(len(row) == 3 for row in rows)
    found = ok_json("find", "green tea", "--user-id", "bob", "--top-k", "1")
    assert [hit["entry"]["id"] for hit in found["hits"]] == [tea]


def test_find_filters_by_type_and_tag(ok, ok_json):
    ok("add", "Kyoto trip in April", "--tags", "travel")
    skill = ok("add", "How to book a Kyoto trip", "--type", "skill").strip()
    assert [h["entry"]["id"] for h in ok_json("find", "Kyoto trip", "--type", "skill")["hits"]] == [skill]
    assert [h["entry"]["l2_full"] for h in ok_json("find", "Kyoto trip", "--tag", "travel")["hits"]] == [
        "Kyoto trip in April"]


def test_get_shows_the_fields_and_json_round_trips_the_entry(ok, ok_json):
    entry_id = ok("add", "Alice is vegetarian", "--user-id", "alice", "--tags", "diet").strip()
    text = ok("get", entry_id)
    assert "id:" in text and entry_id in text
    assert "text:" in text and "Alice is vegetarian" in text
    assert "user_id=alice" in text
    data = ok_json("get", entry_id)
    assert data["id"] == entry_id and data["scope"] == {"user_id": "alice", "agent_id": None,
                                                        "project_id": None, "session_id": None}
    assert data["created_at"].endswith("+00:00")


def test_list_filters_orders_and_pages(ok, ok_json):
    ids = [ok("add", f"note number {i}", "--user-id", "u" if i % 2 else "v").strip() for i in range(5)]
    rows = [line.split("\t") for line in ok("list").splitlines()]
    assert [r[0] for r in rows] == ids
    assert [e["id"] for e in ok_json("list", "--user-id", "u")] == [ids[1], ids[3]]
    assert [e["id"] for e in ok_json("list", "--newest-first", "--limit", "2")] == [ids[4], ids[3]]
    assert [e["id"] for e in ok_json("list", "--offset", "3", "--limit", "0")] == ids[3:]


def test_list_by_metadata(ok, ok_json):
    keep = ok("add", "tagged by metadata", "--metadata", "source=import").strip()
    ok("add", "another memory", "--metadata", "source=manual")
    assert [e["id"] for e in ok_json("list", "--metadata", "source=import")] == [keep]


def test_update_changes_the_entry_and_history_keeps_the_old_text(ok, ok_json):
    entry_id = ok("add", "Alice lives in Lisbon", "--user-id", "alice").strip()
    assert ok("update", entry_id, "--text", "Alice lives in Porto", "--tags", "home").strip() == entry_id
    entry = ok_json("get", entry_id)
    assert entry["l2_full"] == "Alice lives in Porto" and "home" in entry["tags"]
    events = ok_json("history", entry_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert events[1]["old_value"] == "Alice lives in Lisbon" and events[1]["new_value"] == "Alice lives in Porto"
    table = ok("history", entry_id).splitlines()
    assert table[1].split("\t")[1] == "UPDATE"


def test_update_without_a_change_is_a_usage_error(agentbase, ok):
    entry_id = ok("add", "something").strip()
    result = agentbase("update", entry_id)
    assert result.exit_code == 2
    assert "--text" in result.stderr


def test_delete_removes_the_entry_and_keeps_its_history(agentbase, ok, ok_json):
    entry_id = ok("add", "temporary note").strip()
    assert ok("delete", entry_id).strip() == entry_id
    assert agentbase("get", entry_id).exit_code == 1
    assert [e["event"] for e in ok_json("history", entry_id)] == ["ADD", "DELETE"]


def test_delete_all_needs_a_scope_and_a_yes(agentbase, ok, ok_json):
    for i in range(3):
        ok("add", f"alice note {i}", "--user-id", "alice")
    ok("add", "bob note", "--user-id", "bob")
    assert agentbase("delete", "--all").exit_code == 2
    refused = agentbase("delete", "--all", "--user-id", "alice", input="n\n")
    assert refused.exit_code != 0
    assert ok_json("stats")["entries"] == 4
    assert json.loads(ok("delete", "--all", "--user-id", "alice", "--yes", "--json")) == {"deleted": 3}
    assert [e["l2_full"] for e in ok_json("list")] == ["bob note"]


def test_session_create_add_message_show_commit_list(ok, ok_json):
    sid = ok("session", "create", "--agent-id", "my-agent", "--user-id", "alice", "--metadata", "topic=trip").strip()
    assert sid.startswith("sess_")
    first = ok("session", "add-message", sid, "--role", "user", "--content", "I'm flying to Tokyo in May",
               "--name", "Alice").strip()
    ok("session", "add-message", sid, "--role", "assistant", "--content", "Tokyo in May is pleasant.")
    ok("session", "add-message", sid, "--role", "user", "--content", "note to self", "--no-ingest")
    shown = ok_json("session", "show", sid)
    assert shown["session"]["scope"]["agent_id"] == "my-agent"
    assert shown["session"]["metadata"] == {"topic": "trip"}
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant", "user"]
    assert shown["messages"][0]["id"] == first and shown["messages"][0]["name"] == "Alice"
    assert shown["messages"][2]["entry_id"] is None
    text = ok("session", "show", sid)
    assert "I'm flying to Tokyo in May" in text and "messages:" in text
    summary = ok_json("session", "commit", sid)
    assert summary["category"] == "session_summary" and "Tokyo" in summary["l2_full"]
    assert ok_json("session", "show", sid)["session"]["summary_entry_id"] == summary["id"]
    assert [s["id"] for s in ok_json("session", "list", "--agent-id", "my-agent")] == [sid]
    assert ok_json("session", "list", "--agent-id", "other") == []
    assert ok("session", "list").split("\t")[0] == sid


def test_session_commit_of_an_empty_session_is_a_usage_error(agentbase, ok):
    sid = ok("session", "create").strip()
    result = agentbase("session", "commit", sid)
    assert result.exit_code == 2
    assert "no messages" in result.stderr


def test_stats_counts_by_type_role_and_sessions(ok, ok_json):
    ok("add", "a memory")
    ok("add", "a skill", "--type", "skill", "--role", "assistant")
    sid = ok("session", "create").strip()
    ok("session", "add-message", sid, "--role", "user", "--content", "hello there")
    stats = ok_json("stats")
    assert stats["entries"] == 3 and stats["current"] == 3
    assert stats["by_type"] == {"memory": 2, "resource": 0, "skill": 1}
    assert stats["by_role"] == {"user": 2, "assistant": 1}
    assert stats["sessions"] == 1 and stats["messages"] == 1
    assert "by_type:" in ok("stats")


def test_info_reports_the_file_without_loading_models(ok, ok_json, cli_db):
    ok("add", "one")
    info = ok_json("info")
    assert info["schema_version"] >= 1 and info["entries"] == 1 and info["sessions"] == 0
    assert info["path"] == str(cli_db) if isinstance(cli_db, str) else info["path"].endswith("agentbase.db")
    assert "not loaded" in info["embedder"]
    assert "ner_stage" not in info
    assert ok_json("info", "--models")["ner_stage"] == "regex"


def test_verify_reports_ok_and_exit_4_on_a_damaged_index(agentbase, ok, ok_json):
    ok("add", "one entry")
    ok("add", "two entries")
    report = ok_json("verify")
    assert report["ok"] is True and report["vectors_checked"] is False
    _drop_fts_rows(os.environ.get("AGENTBASE_PATH", "agentbase.db"))
    bad = agentbase("verify", "--json")
    assert bad.exit_code == 4
    assert json.loads(bad.stdout)["fts_ok"] is False
    assert "agentbase rebuild" in bad.stderr
    assert json.loads(ok("rebuild", "--json"))["ok"] is True
    assert ok_json("verify")["ok"] is True


def _drop_fts_rows(path: str) -> None:
    """Damage the FTS index behind the kernel's back (the same SQLite library the kernel uses)."""
    from tests.reliability._inputs import raw_connect

    if "://" in path:  # AGENTBASE_TEST_BACKEND=postgres: empty the first entry's tsvector
        import psycopg

        with psycopg.connect(path) as pg:
            pg.execute("UPDATE entries SET fts = ''::tsvector WHERE rid = (SELECT min(rid) FROM entries)")
        return

    conn = raw_connect(path)
    try:
        conn.execute("DELETE FROM entries_fts WHERE rowid = (SELECT min(rid) FROM entries)")
        conn.commit()
    finally:
        conn.close()


def test_every_command_and_option_has_help(runner):
    import click

    from agentbase_cli.app import cli

    def walk(command: click.Command, path: list[str]):
        yield command, path
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])

    for command, path in walk(cli, []):
        assert command.help, path
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, (path, param.name)
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, path


def test_every_read_command_has_json(runner):
    from agentbase_cli.app import cli

    reads = [["find"], ["get"], ["list"], ["history"], ["info"], ["stats"], ["verify"], ["session", "show"],
             ["session", "list"]]
    for path in reads:
        assert "--json" in runner.invoke(cli, [*path, "--help"]).stdout, path
