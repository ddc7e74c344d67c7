"""Provenance and trust: who wrote each entry, through which path, how trusted."""

from __future__ import annotations

import io
import sqlite3

import pytest

from agentbase_kernel import InvalidArgument, Kernel


def test_default_trust_follows_the_role_and_the_caller_may_set_it(kernel):
    by_role = {role: kernel.add_memory(f"a note from the {role}", user_id="u", role=role).entry
               for role in ("user", "assistant", "tool", "system")}
    assert {r: e.trust for r, e in by_role.items()} == {"user": 1.0, "assistant": 0.7, "tool": 0.5, "system": 0.9}
    assert all(e.source == "kernel" and e.written_by is None for e in by_role.values())
    low = kernel.add_memory("a rumour", user_id="u", trust=0.2).entry
    assert kernel.get(low.id).trust == 0.2
    with pytest.raises(InvalidArgument, match="trust"):
        kernel.add_memory("bad", user_id="u", trust=1.5)
    with pytest.raises(InvalidArgument, match="trust"):
        kernel.add_memory("bad", user_id="u", trust=True)


def test_facts_and_session_turns_carry_provenance(kernel):
    bot = kernel.view(agent="planner", source="langchain")
    result = bot.add_memory("I live in Lisbon", user_id="u", infer=True)
    assert result.facts and all((f.entry.source, f.entry.written_by, f.entry.trust) == ("langchain", "planner", 1.0)
                                for f in result.facts)
    bot.add_messages("s", [{"role": "user", "content": "I love surfing"},
                           {"role": "tool", "content": "weather: sunny in Lisbon"}], user_id="u")
    turns = {e.role: e for e in kernel.list(session_id="s") if e.category == "turn"}
    assert (turns["user"].trust, turns["tool"].trust) == (1.0, 0.5)
    assert {e.source for e in kernel.list(session_id="s")} == {"langchain"}
    assert kernel.commit_session("s").source == "kernel"  # the owner kernel committed it


def test_min_trust_filters_in_sql_for_find_list_and_count(kernel):
    kernel.add_memory("the deploy window is Tuesday", user_id="u")
    kernel.add_memory("the deploy window is Thursday", user_id="u", role="tool")
    assert kernel.count(user_id="u", min_trust=0.9) == 1
    assert [e.text for e in kernel.list(user_id="u", min_trust=0.9)] == ["the deploy window is Tuesday"]
    assert {h.entry.text for h in kernel.find("deploy window", user_id="u", min_trust=0.9)} == \
        {"the deploy window is Tuesday"}
    assert len(kernel.find("deploy window", user_id="u")) == 2
    with pytest.raises(InvalidArgument):
        kernel.find("deploy", user_id="u", min_trust=-1)


def test_trust_weight_reranks_only_when_asked(kernel):
    kernel.add_memory("the deploy window is Thursday", user_id="u", role="tool")
    kernel.add_memory("the deploy window is Tuesday", user_id="u", trust=1.0)
    plain = kernel.find("deploy window", user_id="u")
    weighted = kernel.find("deploy window", user_id="u", trust_weight=1.0)
    assert weighted[0].entry.trust == 1.0
    by_id = {h.id: h.score for h in plain}
    assert all(h.score == pytest.approx(by_id[h.id] * h.entry.trust) for h in weighted)
    with pytest.raises(InvalidArgument):
        kernel.find("deploy", user_id="u", trust_weight=2)


def test_import_keeps_exported_trust_and_marks_older_exports(kernel, tmp_path, hash_embedder):
    kernel.view(source="mem0", agent="bot").add_memory("a tool result", user_id="u", role="tool", trust=0.3)
    out = io.StringIO()
    kernel.export(out, user_id="u")
    text = out.getvalue()
    with Kernel(tmp_path / "copy.db", embedder=hash_embedder, ner="regex") as copy:
        copy.import_(io.StringIO(text))
        (entry,) = copy.list(user_id="u")
        assert (entry.trust, entry.source, entry.written_by) == (0.3, "mem0", "bot")
    # what an export written before provenance looked like: no trust or source, and (format 1) no trailer
    lines = text.splitlines()[:-1]
    lines[0] = lines[0].replace('"format_version":2', '"format_version":1')
    legacy = "\n".join(lines).replace('"trust":0.3,', "").replace('"source":"mem0",', "") + "\n"
    assert legacy != text
    with Kernel(tmp_path / "legacy.db", embedder=hash_embedder, ner="regex") as copy:
        copy.import_(io.StringIO(legacy))
        (entry,) = copy.list(user_id="u")
        assert (entry.trust, entry.source) == (0.5, "import")  # its role's trust, written by import
        memories = lines[0] + '\n{"type": "memory", "text": "imported memory", "user_id": "v"}\n'
        copy.import_(io.StringIO(memories))
        assert copy.list(user_id="v")[0].source == "import"


def test_migration_stamps_existing_entries_by_role_without_audit_rows(tmp_path, hash_embedder):
    from agentbase_kernel.store.sqlite import migrations

    path = tmp_path / "old.db"
    with Kernel(path, embedder=hash_embedder, ner="regex") as k:
        k.add_memory("the user said this", user_id="u")
        k.add_memory("the assistant said that", user_id="u", role="assistant")
        n_audit = len(k.audit(limit=None))
    con = sqlite3.connect(path)  # back to the schema before m008
    con.execute("DROP TRIGGER audit_log_state")  # m009's, which reads those columns
    for column in ("trust", "source", "written_by"):
        con.execute(f"ALTER TABLE entries DROP COLUMN {column}")
    for table in ("scope_policies", "conflicts"):
        con.execute(f"DROP TABLE {table}")
    version = migrations.MIGRATIONS.index(migrations.m008_governance)
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()
    with Kernel(path, embedder=hash_embedder, ner="regex") as k:
        assert k.info()["schema_version"] == migrations.SCHEMA_VERSION
        assert sorted(e.trust for e in k.list(user_id="u")) == [0.7, 1.0]
        assert len(k.audit(limit=None)) == n_audit
        assert k.config.lifecycle.audit and k._ready().meta().get("audit_enabled") == "1"


def test_m008_runs_again_harmlessly(tmp_path, hash_embedder):
    from agentbase_kernel.store.sqlite import migrations

    path = tmp_path / "twice.db"
    with Kernel(path, embedder=hash_embedder, ner="regex") as k:
        entry = k.add_memory("set by hand", user_id="u", trust=0.25).entry
        k.grant("a", user_id="u", read=True)
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {migrations.MIGRATIONS.index(migrations.m008_governance)}")
    con.commit()
    con.close()
    with Kernel(path, embedder=hash_embedder, ner="regex") as k:
        assert k.get(entry.id).trust == 0.25 and [p.agent for p in k.policies()] == ["a"]
