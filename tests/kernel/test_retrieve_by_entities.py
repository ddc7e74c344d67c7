"""Entity-targeted recall: memories and skills linked to a file, table, URL or id, before an action."""

from __future__ import annotations

import asyncio

import pytest

from agentbase_kernel import AgentBase, InvalidArgument


@pytest.fixture(params=["sqlite", "postgres"])
def kb(request, tmp_path, hash_embedder):
    """A kernel on each backend (regex NER: the identifier patterns are the same in spaCy's chain)."""
    location = tmp_path / "m.db" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    base = AgentBase(location, embedder=hash_embedder, ner="regex")
    base.sync.initialize()
    yield base.sync
    base.sync.close()


def test_memories_naming_a_file_are_found_by_its_path(kb):
    guide = kb.add_memory("Before editing src/app/db.py run the migration check", user_id="u").entry
    by_name = kb.add_memory("db.py opens one pool per process", user_id="u").entry
    kb.add_memory("The weather was nice", user_id="u")
    kb.add_memory("Before editing src/app/db.py ask Ann", user_id="other")
    result = kb.retrieve_by_entities(["./src/app/db.py"], user_id="u")
    assert [h.id for h in result] == [guide.id, by_name.id]
    assert result[0].score == 1.0 and result[1].score == 0.5
    assert result[0].matched_by == ["entity:./src/app/db.py"]


def test_tables_ids_and_dotted_names_are_entities(kb):
    table = kb.add_memory("The analytics.events_v1 table is partitioned by day", user_id="u").entry
    ticket = kb.add_memory("PROJ-42 tracks the slow export", user_id="u").entry
    code = kb.add_memory("Never call `drop_all` in production", user_id="u").entry
    assert [h.id for h in kb.retrieve_by_entities(["events_v1"], user_id="u")] == [table.id]
    assert [h.id for h in kb.retrieve_by_entities(["PROJ-42"], user_id="u")] == [ticket.id]
    assert [h.id for h in kb.retrieve_by_entities(["drop_all", "nothing_here"], user_id="u")] == [code.id]


def test_more_names_matched_ranks_first_and_skills_break_ties(kb):
    one = kb.add_memory("users_table holds the accounts", user_id="u").entry
    both = kb.add_memory("users_table is read by api/handlers.py", user_id="u").entry
    skill = kb.add_memory("How to migrate users_table safely", user_id="u", context_type="skill").entry
    ranked = [h.id for h in kb.retrieve_by_entities(["users_table", "api/handlers.py"], user_id="u")]
    assert ranked == [both.id, skill.id, one.id]
    only_skills = kb.retrieve_by_entities(["users_table"], user_id="u", context_type="skill")
    assert [h.id for h in only_skills] == [skill.id]


def test_budget_and_top_k_bound_the_result(kb):
    for i in range(5):
        kb.add_memory(f"note {i} about config/settings.yaml " + "word " * 40, user_id="u")
    assert len(kb.retrieve_by_entities(["config/settings.yaml"], user_id="u", top_k=3)) == 3
    small = kb.retrieve_by_entities(["config/settings.yaml"], user_id="u", budget_tokens=60)
    assert len(small) == 1  # at least one hit, even over budget
    assert small.trace.steps[0].name == "entities" and small.trace.steps[0].candidates == 5


def test_a_finished_turn_records_touched_entities(kb):
    kb.add_messages("s1", [{"role": "user", "content": "please rename the helper"},
                           {"role": "assistant", "content": "Done, renamed it and updated the callers"}],
                    user_id="u", touched_entities=["src/util/helpers.py", "billing_runs"])
    found = kb.retrieve_by_entities(["src/util/helpers.py"], user_id="u")
    assert [h.entry.l2_full for h in found] == ["Done, renamed it and updated the callers",
                                                "please rename the helper"]
    assert {h.entry.session_id for h in found} == {"s1"}
    assert kb.retrieve_by_entities(["billing_runs"], user_id="u", session_id="s1")
    messages = kb.list_messages("s1")
    assert all(m.metadata["touched_entities"] == ["src/util/helpers.py", "billing_runs"] for m in messages)


@pytest.mark.parametrize("bad", [pytest.param("src/a.py", id="a-str"), pytest.param([], id="empty"),
                                 pytest.param([""], id="blank"), pytest.param([3], id="not-str"),
                                 pytest.param(None, id="none")])
def test_bad_entities_are_invalid_arguments(kb, bad):
    with pytest.raises(InvalidArgument, match="entit"):
        kb.retrieve_by_entities(bad, user_id="u")


def test_bad_touched_entities_and_budget_are_invalid_arguments(kb):
    with pytest.raises(InvalidArgument, match="touched_entities"):
        kb.add_messages("s1", [{"role": "user", "content": "x"}], user_id="u", touched_entities="a.py")
    assert kb.list_messages("s1") == []  # nothing written
    with pytest.raises(InvalidArgument, match="budget_tokens"):
        kb.retrieve_by_entities(["a.py"], budget_tokens=-1)
    with pytest.raises(InvalidArgument, match="top_k"):
        kb.retrieve_by_entities(["a.py"], top_k=0)


def test_async_and_scope_handle(kb):
    kb.add_memory("deploy/run.sh needs bash 5", agent_id="bot")
    db = AgentBase.__new__(AgentBase)
    db._sync = kb
    found = asyncio.run(db.retrieve_by_entities(["deploy/run.sh"], agent_id="bot"))
    assert [h.entry.l2_full for h in found] == ["deploy/run.sh needs bash 5"]
    scoped = asyncio.run(db.scope(agent_id="bot").retrieve_by_entities(["run.sh"]))
    assert len(scoped) == 1 and kb.scope(agent_id="other").retrieve_by_entities(["run.sh"]).hits == []


def test_code_targets_are_linked_not_tagged(kb):
    """Paths and identifiers link entries for retrieve_by_entities; tags and find's ranking stay as they were."""
    entry = kb.add_memory("Rename `old_name` in lib/core/io.py before PROJ-7 ships", user_id="u").entry
    assert "ner_old_name" not in entry.tags and "ner_lib/core/io.py" not in entry.tags
    graph = {n["norm"]: n["label"] for n in kb.entity_graph(user_id="u")["nodes"]}
    assert graph["old_name"] == "IDENT" and graph["lib/core/io.py"] == "PATH" and "proj-7" in graph
    updated = kb.update(entry.id, text="Rename `new_name` now", user_id="u")
    assert [h.id for h in kb.retrieve_by_entities(["new_name"], user_id="u")] == [updated.id]
    assert kb.retrieve_by_entities(["old_name"], user_id="u").hits == []
