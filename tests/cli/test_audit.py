"""``agentbase audit`` on a real file: the log the kernel writes, filtered by scope, kind and time."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from agentbase_kernel import Kernel


def _seed(path) -> dict[str, str]:
    with Kernel(path, embedder=None, ner="regex") as k:
        a = k.add_memory("Alice likes green tea", user_id="alice").entry.id
        b = k.add_memory("Bob likes coffee", user_id="bob").entry.id
        k.update(a, user_id="alice", text="Alice likes black tea", actor="editor")
        k.delete(b, user_id="bob", actor="cleaner")
    return {"alice": a, "bob": b}


def test_audit_lists_the_whole_log_newest_first(ok, initialised, cli_db) -> None:
    ids = _seed(cli_db)
    lines = [line.split("\t") for line in ok("audit").splitlines()]
    assert [(row[2], row[5]) for row in lines] == [
        ("delete", ids["bob"]), ("update", ids["alice"]), ("write", ids["bob"]), ("write", ids["alice"])]
    assert [row[3] for row in lines[:2]] == ["cleaner", "editor"]
    assert lines[0][4] == "user_id=bob"
    assert [int(row[0]) for row in lines] == sorted((int(row[0]) for row in lines), reverse=True)


def test_audit_json_filters_by_scope_kind_and_limit(ok_json, ok, initialised, cli_db) -> None:
    ids = _seed(cli_db)
    events = ok_json("audit", "--user-id", "alice")
    assert [(e["kind"], e["entry_ids"], e["scope"]["user_id"]) for e in events] == [
        ("update", [ids["alice"]], "alice"), ("write", [ids["alice"]], "alice")]
    assert events[0]["actor"] == "editor"
    assert {"seq", "at", "kind", "actor", "scope", "entry_ids", "detail"} <= set(events[0])
    deletes = json.loads(ok("audit", "--kind", "delete", "--kind", "update", "--json"))
    assert [e["kind"] for e in deletes] == ["delete", "update"]
    assert len(ok_json("audit", "--limit", "1")) == 1
    assert ok_json("audit", "--user-id", "nobody") == []


def test_audit_since_and_until(ok_json, initialised, cli_db) -> None:
    _seed(cli_db)
    tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).strftime("%Y-%m-%d")
    yesterday = (datetime.now(timezone.utc) - timedelta(days=1)).strftime("%Y-%m-%d")
    assert ok_json("audit", "--since", tomorrow) == []
    assert len(ok_json("audit", "--since", yesterday, "--until", tomorrow)) == 4
    assert ok_json("audit", "--until", yesterday) == []


def test_audit_rejects_an_unknown_kind(agentbase, initialised, cli_db) -> None:
    _seed(cli_db)
    result = agentbase("audit", "--kind", "rename")
    assert result.exit_code == 2
    assert "Unknown audit kinds ['rename']" in result.stderr


def test_audit_needs_an_existing_file(agentbase) -> None:
    result = agentbase("audit")
    assert result.exit_code == 1
