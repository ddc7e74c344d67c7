"""Skills as governed records: versions, promotion, verification, health, entity drift, warnings."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from agentbase_kernel import AgentBase, Config, InvalidArgument, SkillNotFound
from agentbase_kernel.store.base import utcnow

SHOP = {"project_id": "shop"}


@pytest.fixture(params=["sqlite", "postgres"])
def kb(request, tmp_path, hash_embedder):
    location = tmp_path / "m.db" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    base = AgentBase(location, embedder=hash_embedder, ner="regex")
    base.sync.initialize()
    yield base.sync
    base.sync.close()


def test_a_new_skill_is_version_one_healthy_and_searchable(kb):
    skill = kb.add_skill("analytics-schema", "Daily revenue comes from analytics.events_v1 grouped by day",
                         authored_by="ann", **SHOP)
    assert (skill.name, skill.version, skill.status, skill.authored_by, skill.health) == \
        ("analytics-schema", 1, "current", "ann", 1.0)
    assert skill.entry.context_type == "skill" and skill.warning is None
    hits = kb.find("daily revenue", **SHOP)
    assert hits[0].id == skill.id and hits.skill_warnings == []
    with pytest.raises(InvalidArgument, match="already exists"):
        kb.add_skill("analytics-schema", "something else", **SHOP)


def test_update_keeps_the_old_version_and_promote_swaps_them(kb):
    v1 = kb.add_skill("deploy", "Deploy with make release", **SHOP)
    v2 = kb.update_skill("deploy", "Deploy with make ship", authored_by="bob", **SHOP)
    assert (v2.version, v2.status, v2.authored_by) == (2, "candidate", "bob")
    # the candidate waits out of search; the current version's health drops while it waits
    assert [h.id for h in kb.find("deploy make", **SHOP, context_type="skill")] == [v1.id]
    current = kb.get_skill("deploy", **SHOP)
    assert current.version == 1 and current.health == 0.8
    promoted = kb.promote_skill("deploy", **SHOP)
    assert (promoted.version, promoted.status, promoted.health) == (2, "current", 1.0)
    assert [h.id for h in kb.find("deploy make", **SHOP, context_type="skill")] == [v2.id]
    versions = kb.skill_versions("deploy", **SHOP)
    assert [(s.version, s.status) for s in versions] == [(1, "retired"), (2, "current")]
    assert versions[0].entry.superseded_by == v2.id and versions[0].text == "Deploy with make release"
    v3 = kb.update_skill("deploy", "Deploy with make ship --fast", promote=True, **SHOP)
    assert (v3.version, v3.status) == (3, "current")
    assert [s.version for s in kb.list_skills(**SHOP)] == [3]
    assert [s.version for s in kb.list_skills(**SHOP, all_versions=True)] == [1, 2, 3]


def test_health_decays_with_days_since_use_and_verify_resets_it(kb):
    old = utcnow() - timedelta(days=45)
    kb.add_skill("analytics-schema", "Revenue per day comes from the orders_daily view", created_at=old, **SHOP)
    skill = kb.get_skill("analytics-schema", **SHOP)
    assert skill.health == pytest.approx(0.5 ** 1.5, abs=0.01)
    result = kb.find("revenue per day", **SHOP, reinforce=False)
    [warning] = result.skill_warnings
    assert warning.entry_id == skill.id and warning.health == skill.health
    assert warning.message == ("Skill 'analytics-schema' is stale (health 0.35): "
                               "not used or verified since it was written 45 days ago")
    verified = kb.verify_skill("analytics-schema", actor="ann", **SHOP)
    assert verified.health == 1.0 and verified.verified_at is not None and verified.warning is None
    assert kb.find("revenue per day", **SHOP).skill_warnings == []
    [row] = kb.audit(project_id="shop", kinds="skill", limit=1)
    assert row.detail == {"op": "verify", "name": "analytics-schema", "version": 1} and row.actor == "ann"


def test_half_life_and_threshold_are_configurable(tmp_path, hash_embedder):
    config = Config().with_(lifecycle={"skill_half_life_days": 90, "skill_health_threshold": 0.9})
    with AgentBase(tmp_path / "c.db", embedder=hash_embedder, ner="regex", config=config).sync as k:
        k.add_skill("s", "Use the batch_loader for imports", created_at=utcnow() - timedelta(days=45), user_id="u")
        skill = k.get_skill("s", user_id="u")
        assert skill.health == pytest.approx(0.5 ** 0.5, abs=0.01) and skill.warning is not None
        assert "is stale (health 0.71): not used or verified since it was written 45 days ago" in skill.warning.message


def test_a_later_memory_deprecating_an_entity_puts_a_drift_warning_on_skills_naming_it(kb):
    skill = kb.add_skill("revenue", "Sum amount from analytics.events_v1 per day", **SHOP)
    other = kb.add_skill("signup", "Count rows of users_signups per week", **SHOP)
    kb.add_memory("The events_v1 table was renamed to events_v2 last night", **SHOP)
    kb.add_memory("events_v1 is fine in another project", project_id="elsewhere")
    drifted = kb.get_skill("revenue", **SHOP)
    assert drifted.health == 0.5 and drifted.warning is not None
    assert drifted.warning.message == ("Skill 'revenue' needs review (health 0.50): "
                                       "events_v1 was renamed to events_v2")
    assert drifted.warning.drift[0]["kind"] == "renamed"
    assert kb.get_skill("signup", **SHOP).warning is None
    found = kb.find("sum amount per day", **SHOP)
    assert [w.entry_id for w in found.skill_warnings] == [skill.id]
    assert [w.entry_id for w in kb.retrieve_by_entities(["events_v1"], **SHOP).skill_warnings] == [skill.id]
    # the prefetch shows it too
    prefetch = kb.prefetch("how do I sum amount per day", **SHOP)
    assert [w.entry_id for w in prefetch.skill_warnings] == [skill.id]
    assert "## Skill warnings\n- Skill 'revenue' needs review" in prefetch.text()
    # verifying says a person checked the skill after the drift
    assert kb.verify_skill("revenue", **SHOP).warning is None
    assert other.warning is None


def test_unresolved_conflicts_lower_a_skills_health(kb):
    kb.add_skill("greeting", "Greet users in English", **SHOP)
    skill = kb.get_skill("greeting", **SHOP)
    skill.entry.conflicts = ["c1", "c2"]
    judged = kb._skill_judge().skills([skill.entry], utcnow())[0]
    assert judged.health == pytest.approx(0.75 ** 2, abs=0.01)
    assert judged.warning is not None and "in 2 unresolved conflicts" in judged.warning.message


def test_a_skill_written_as_a_memory_is_judged_too(kb):
    entry = kb.add_memory("How to rotate the api_keys table", context_type="skill", user_id="u",
                          created_at=utcnow() - timedelta(days=90)).entry
    [warning] = kb.find("rotate api keys", user_id="u").skill_warnings
    assert warning.entry_id == entry.id and warning.health == 0.12


def test_bad_input_is_our_exceptions(kb):
    with pytest.raises(SkillNotFound, match="No skill 'nope'"):
        kb.get_skill("nope", **SHOP)
    with pytest.raises(SkillNotFound):
        kb.update_skill("nope", "text", **SHOP)
    kb.add_skill("a", "Use the api_client", **SHOP)
    with pytest.raises(InvalidArgument, match="already has a version with this text"):
        kb.update_skill("a", "Use the api_client", **SHOP)
    assert [s.version for s in kb.skill_versions("a", **SHOP)] == [1]  # nothing half written
    with pytest.raises(InvalidArgument, match="no version waiting"):
        kb.promote_skill("a", **SHOP)
    with pytest.raises(SkillNotFound):
        kb.promote_skill("a", version=7, **SHOP)
    for bad in ("", None, 3, "x" * 201):
        with pytest.raises(InvalidArgument, match="skill name"):
            kb.add_skill(bad, "text", **SHOP)
    with pytest.raises(InvalidArgument):
        kb.add_skill("b", "", **SHOP)
    with pytest.raises(InvalidArgument):
        kb.update_skill("a", "new", promote="yes", **SHOP)


def test_async_twins(kb):
    db = AgentBase.__new__(AgentBase)
    db._sync = kb

    async def run():
        await db.add_skill("x", "Run make lint before a commit", user_id="u")
        await db.skills.update("x", "Run make check before a commit", user_id="u")
        await db.promote_skill("x", user_id="u")
        return await db.list_skills(user_id="u")

    assert [(s.name, s.version) for s in asyncio.run(run())] == [("x", 2)]


def test_audit_replay_rebuilds_skill_versions_and_their_health(kb, tmp_path, hash_embedder):
    kb.add_skill("deploy", "Deploy with make release", created_at=utcnow() - timedelta(days=45),
                 authored_by="ann", **SHOP)
    kb.update_skill("deploy", "Deploy with make ship", **SHOP)
    kb.promote_skill("deploy", **SHOP)
    kb.update_skill("deploy", "Deploy with make ship --fast", **SHOP)
    kb.add_skill("old", "Rotate keys with rotate_keys.sh", created_at=utcnow() - timedelta(days=90), **SHOP)
    kb.verify_skill("old", **SHOP)
    kb.audit_replay(tmp_path / "replayed.db")
    with AgentBase(tmp_path / "replayed.db", embedder=hash_embedder, ner="regex").sync as copy:
        def state(k):
            return [(s.name, s.version, s.status, s.authored_by, s.created_at, s.verified_at is not None, s.health,
                     s.entry.l2_full) for s in k.list_skills(**SHOP, all_versions=True)]

        assert state(copy) == state(kb)
        assert [s.status for s in copy.skill_versions("deploy", **SHOP)] == ["retired", "current", "candidate"]
