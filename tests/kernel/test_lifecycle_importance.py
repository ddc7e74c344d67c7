"""Importance per entry: the caller's value or the rule, on get/list, through
update, export/import and migration m007; and the composite rank term's hook in retrieval."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from agentbase_kernel import Kernel
from agentbase_kernel.config import Config
from agentbase_kernel.errors import InvalidArgument
from agentbase_kernel.rules.importance import rule_importance
from agentbase_kernel.store.sqlite.migrations import MIGRATIONS


def test_caller_importance_is_stored_and_visible(kernel):
    entry = kernel.add_memory("Remember my passport number ends in 42", user_id="u", importance=0.95).entry
    assert entry.importance == 0.95
    assert kernel.get(entry.id).importance == 0.95
    assert kernel.list(user_id="u")[0].importance == 0.95
    assert kernel.update(entry.id, importance=0.2).importance == 0.2
    assert kernel.get(entry.id).importance == 0.2
    added = kernel.add_memories([{"text": "bulk one", "user_id": "u", "importance": 0.7}])
    assert added[0].entry.importance == 0.7


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "high", True])
def test_bad_importance_is_refused(kernel, bad):
    with pytest.raises(InvalidArgument):
        kernel.add_memory("text", user_id="u", importance=bad)
    assert kernel.count(user_id="u") == 0
    with pytest.raises(InvalidArgument):
        kernel.update(kernel.add_memory("other", user_id="u").id, importance=bad)


def test_rule_importance_orders_by_category_role_facts_and_entities(kernel):
    pref = kernel.add_memory("I prefer window seats", user_id="u", category="preference").entry
    plain = kernel.add_memory("ok sounds fine", user_id="u").entry
    said_by_bot = kernel.add_memory("ok sounds fine to me too", user_id="u", role="assistant").entry
    named = kernel.add_memory("met Alice Smith and Bob Jones in Lisbon", user_id="u").entry
    assert pref.importance > named.importance > plain.importance > said_by_bot.importance
    fact = kernel.add_memory("I live in Paris", user_id="u", infer=True).facts[0].entry
    assert fact.importance > plain.importance  # a derived profile fact
    assert rule_importance(category="turn", role="assistant", derived=False, entities=0) < \
        rule_importance(category="turn", role="user", derived=False, entities=0)
    assert all(0 <= e.importance <= 1 for e in kernel.list(user_id="u"))


def test_session_turns_get_rule_importance(kernel):
    kernel.add_messages("s1", [{"role": "user", "content": "My sister Ana lives in Porto"},
                               {"role": "assistant", "content": "Nice, Porto is lovely"}], user_id="u")
    turns = {e.role: e for e in kernel.list(user_id="u", category="turn")}
    assert turns["user"].importance > turns["assistant"].importance


def test_export_import_keeps_importance_and_archival(kernel, tmp_path, hash_embedder):
    keep = kernel.add_memory("keep this", user_id="u", importance=0.9).entry
    gone = kernel.add_memory("archive this", user_id="u", importance=0.1).entry
    kernel.archive(gone.id)
    out = tmp_path / "export.jsonl"
    kernel.export(out, user_id="u")
    with Kernel(tmp_path / "other.db", embedder=hash_embedder, ner="regex") as other:
        other.import_(out)
        assert other.get(keep.id).importance == 0.9
        assert other.get(gone.id).archived_at is not None
        assert [e.id for e in other.list(user_id="u")] == [keep.id]
        assert [h.event for h in other.history(gone.id)] == ["ADD", "ARCHIVE"]


def test_migration_backfills_rule_importance(tmp_path, hash_embedder):
    """A schema-6 file (written before m007) opens with every entry's rule-based importance."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for migrate in MIGRATIONS[:6]:
        conn.execute("BEGIN")
        migrate(conn)
        conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(migrate) + 1}")
        conn.commit()
    conn.execute(
        "INSERT INTO entries (id, category, l0_abstract, l1_overview, l2_full, scope_level, user_id, scope_key, "
        "role, content_hash, dedup_key, search_text, created_at, updated_at) VALUES "
        "('e1', 'preference', 'x', 'x', 'I prefer tea', 'global', 'u', '[\"u\",null,null,null]', 'user', 'h', 'h', "
        "'i prefer tea', '2024-01-01T00:00:00.000000+00:00', '2024-01-01T00:00:00.000000+00:00')")
    conn.execute("INSERT INTO entry_history (id, entry_id, event, new_value, created_at) VALUES "
                 "('h1', 'e1', 'ADD', 'I prefer tea', '2024-01-01T00:00:00.000000+00:00')")
    conn.commit()
    conn.close()
    with Kernel(path, embedder=None, ner="regex") as k:
        assert k.info()["schema_version"] == len(MIGRATIONS)
        entry = k.get("e1")
        assert entry.importance == rule_importance(category="preference", role="user", derived=False, entities=0)
        assert [h.event for h in k.history("e1")] == ["ADD"]  # history survived the table rebuild
        k.archive("e1", actor="me")
        assert [h.event for h in k.history("e1")] == ["ADD", "ARCHIVE"]
        assert [e.kind for e in k.audit(user_id="u")] == ["archive", "write"]  # no "update": the backfill is not audited


def _ranked(kernel, query, **kw):
    return [h.entry.l2_full for h in kernel.find(query, top_k=5, reinforce=False, **kw)]


def test_composite_rank_term_is_off_by_default_and_reorders_when_on(tmp_path, hash_embedder):
    now = datetime.now(UTC)
    texts = {"old": ("we talked about the garden project", now - timedelta(days=400), 0.5),
             "new": ("we talked about the garden project again", now - timedelta(days=1), 0.5),
             "key": ("we talked about the garden project budget", now - timedelta(days=200), 1.0)}

    def fill(k):
        for text, when, importance in texts.values():
            k.add_memory(text, user_id="u", created_at=when, importance=importance)

    with Kernel(tmp_path / "off.db", embedder=hash_embedder, ner="regex") as off:
        fill(off)
        baseline = _ranked(off, "garden project", user_id="u")
        assert off.retriever.rank_term is None
    recent = Config().with_(lifecycle={"rank_composite": True, "rank_w_sim": 0.1, "rank_w_rec": 1.0,
                                       "rank_w_imp": 0.0, "rank_w_acc": 0.0})
    with Kernel(tmp_path / "rec.db", embedder=hash_embedder, ner="regex", config=recent) as k:
        fill(k)
        assert _ranked(k, "garden project", user_id="u")[0] == texts["new"][0]
    important = Config().with_(lifecycle={"rank_composite": True, "rank_w_sim": 0.1, "rank_w_rec": 0.0,
                                          "rank_w_imp": 1.0, "rank_w_acc": 0.0})
    with Kernel(tmp_path / "imp.db", embedder=hash_embedder, ner="regex", config=important) as k:
        fill(k)
        assert _ranked(k, "garden project", user_id="u")[0] == texts["key"][0]
    assert sorted(baseline) == sorted(t for t, _, _ in texts.values())


def test_composite_access_term_prefers_what_was_used(tmp_path, hash_embedder):
    cfg = Config().with_(lifecycle={"rank_composite": True, "rank_w_sim": 0.1, "rank_w_rec": 0.0,
                                    "rank_w_imp": 0.0, "rank_w_acc": 1.0})
    with Kernel(tmp_path / "acc.db", embedder=hash_embedder, ner="regex", config=cfg) as k:
        k.add_memory("lunch at the harbour cafe", user_id="u")
        used = k.add_memory("lunch at the harbour cafe with Mia", user_id="u").entry
        for _ in range(5):
            k.find("Mia", user_id="u", top_k=1)
        k.flush_lifecycle()
        assert k.get(used.id).access_count == 5
        assert _ranked(k, "lunch harbour cafe", user_id="u")[0] == used.l2_full


def test_bad_rank_config_is_refused():
    with pytest.raises(InvalidArgument):
        Config().with_(lifecycle={"rank_w_sim": -1.0})
    with pytest.raises(InvalidArgument):
        Config().with_(lifecycle={"rank_w_sim": 0.0, "rank_w_rec": 0.0, "rank_w_imp": 0.0, "rank_w_acc": 0.0})
    with pytest.raises(InvalidArgument):
        Config().with_(lifecycle={"half_life_days": 0.0})
