"""`agentbase skills`, `agentbase entities`, `agentbase markdown` and `rebuild --from-markdown`."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from agentbase_kernel import Kernel
from agentbase_kernel.store.base import utcnow


def test_skills_commands(agentbase, ok, initialised):
    sid = ok("skills", "add", "deploy", "Deploy with make release", "--project-id", "shop", "--authored-by", "ann").strip()
    listed = ok("skills", "list", "--project-id", "shop")
    assert listed.split("\t")[:5] == ["deploy", "v1", "current", "1.00", sid]
    new = ok("skills", "update", "deploy", "Deploy with make ship", "--project-id", "shop").strip()
    assert new.split("\t")[1:] == ["v2", "candidate"]
    assert "0.80" in ok("skills", "list", "--project-id", "shop")  # a version waits for promotion
    assert ok("skills", "promote", "deploy", "--project-id", "shop").strip().split("\t")[1:] == ["v2", "current"]
    shown = json.loads(ok("skills", "show", "deploy", "--project-id", "shop", "--json"))
    assert shown["version"] == 2 and shown["entry"]["l2_full"] == "Deploy with make ship"
    assert "v1\tretired" in ok("skills", "list", "--project-id", "shop", "--all-versions")
    assert ok("skills", "verify", "deploy", "--project-id", "shop", "--actor", "ann").strip() == "deploy\tv2\thealth 1.00"
    missing = agentbase("skills", "show", "nope", "--project-id", "shop")
    assert missing.exit_code == 1 and "No skill 'nope'" in missing.output


def test_find_and_entities_show_the_warning_of_a_stale_skill(agentbase, ok, cli_db, initialised):
    with Kernel(cli_db, embedder=None, ner="regex") as k:
        k.add_skill("analytics-schema", "Revenue per day comes from the orders_daily view",
                    created_at=utcnow() - timedelta(days=45), user_id="u")
        k.add_memory("Before editing etl/orders.sql check the orders_daily view", user_id="u")
    result = agentbase("entities", "orders_daily", "--user-id", "u")
    assert result.exit_code == 0, result.output
    assert "Before editing etl/orders.sql" in result.stdout and "Revenue per day" in result.stdout
    assert "warning: Skill 'analytics-schema' is stale (health 0.35): not used or verified since it was " \
           "written 45 days ago" in result.stderr


def test_markdown_export_sync_and_rebuild(agentbase, ok, initialised, tmp_path):
    first = ok("add", "I like green tea", "--user-id", "alice").strip()
    ok("add", "My sister lives in Lisbon", "--user-id", "alice")
    out = tmp_path / "mirror"
    assert ok("markdown", "export", str(out)).strip() == f"2 memories and 0 sessions written to {out}"
    path = out / "user=alice" / f"{first}.md"
    path.write_text(path.read_text().replace("green tea", "jasmine tea"))
    (out / "user=alice" / "note.md").write_text("I prefer aisle seats\n")
    assert ok("markdown", "sync", str(out)).strip() == "added 1, updated 1, deleted 0, conflicts 0"
    assert "jasmine tea" in ok("get", first)
    refused = agentbase("markdown", "export", str(tmp_path / "mirror" / "user=alice" / f"{first}.md"))
    assert refused.exit_code != 0
    target = tmp_path / "rebuilt.db"
    rebuilt = agentbase("--db", str(target), "rebuild", "--from-markdown", str(out))
    assert rebuilt.exit_code == 0, rebuilt.output
    with Kernel(target, embedder=None, ner="regex") as k:
        assert sorted(e.l2_full for e in k.list(user_id="alice")) == [
            "I like jasmine tea", "I prefer aisle seats", "My sister lives in Lisbon"]
    assert Path(out / ".agentbase-mirror.json").is_file()
