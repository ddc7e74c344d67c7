"""Approval zones: agents' writes there become proposals a person approves or rejects; approved
writes go through ingest as origin human_approved with trust 1.0; an agent-inferred fact never
supersedes a human-approved one. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from agentbase_kernel import AgentBase, AgentBaseError, InvalidArgument, Kernel, PermissionDenied, Scope, ScopeError


@pytest.fixture(params=["sqlite", "postgres"])
def k(request, tmp_path, hash_embedder):
    location = tmp_path / "m.db" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    kernel = Kernel(location, embedder=hash_embedder, ner="regex")
    kernel.initialize()
    yield kernel
    kernel.close()


def test_an_agents_write_in_a_zone_becomes_a_proposal_and_approval_writes_it(k):
    zone = k.protect(project_id="handbook", actor="dana")
    assert k.zones() == [zone] and k.protect(project_id="handbook") == zone  # idempotent
    bot = k.view(agent="bot")
    result = bot.add_memory("Deploys run on Fridays", project_id="handbook", category="process")
    assert result.event == "PROPOSED" and result.proposal_id == result.entry.id
    assert k.list(project_id="handbook") == []
    [pending] = k.list_proposals(project_id="handbook")
    assert (pending.op, pending.text, pending.proposer, pending.zone_id, pending.fields["category"]) == (
        "add", "Deploys run on Fridays", "bot", zone.id, "process")
    assert "+Deploys run on Fridays" in pending.diff
    approved = k.approve(pending.id, reviewer="dana", reason="checked")
    assert (approved.status, approved.decided_by, approved.decision_reason) == ("approved", "dana", "checked")
    entry = k.get(approved.result_entry_id)
    assert (entry.l2_full, entry.source, entry.trust, entry.category) == (
        "Deploys run on Fridays", "human_approved", 1.0, "process")
    assert k.list_proposals(project_id="handbook") == []
    assert [p.status for p in k.list_proposals(status=None)] == ["approved"]
    with pytest.raises(InvalidArgument, match="already approved"):
        k.approve(pending.id)
    kinds = [(a.kind, a.detail.get("op")) for a in k.audit(project_id="handbook", kinds=["zone", "proposal"])]
    assert kinds == [("proposal", "approve"), ("proposal", "propose"), ("zone", "protect")]


def test_writes_outside_the_zone_and_a_persons_writes_land(k):
    k.protect(project_id="handbook", category="policy")
    bot = k.view(agent="bot")
    assert bot.add_memory("Lunch is at noon", project_id="handbook", category="social").event == "ADD"
    assert bot.add_memory("Travel needs approval", project_id="handbook", category="policy").event == "PROPOSED"
    person = k.view(source="human")
    assert person.add_memory("Travel needs approval", project_id="handbook", category="policy").event == "ADD"
    results = bot.add_memories([{"text": "A", "project_id": "handbook", "category": "policy"},
                                {"text": "B", "project_id": "other"}])
    assert [r.event for r in results] == ["PROPOSED", "ADD"]


def test_key_prefix_zones_match_the_metadata_key(k):
    k.protect(user_id="u", key_prefix="prefs/")
    bot = k.view(agent="bot")
    assert bot.add_memory("dark mode", user_id="u", metadata={"key": "prefs/theme"}).event == "PROPOSED"
    assert bot.add_memory("hello", user_id="u", metadata={"key": "notes/1"}).event == "ADD"


def test_rejecting_needs_a_reason_and_writes_nothing(k):
    k.protect(user_id="u")
    proposal = k.view(agent="bot").add_memory("I hate tea", user_id="u").proposal_id
    with pytest.raises(InvalidArgument, match="reason"):
        k.reject(proposal, reason=" ")
    rejected = k.reject(proposal, reason="not what the user said", reviewer="dana")
    assert (rejected.status, rejected.decision_reason) == ("rejected", "not what the user said")
    assert k.list(user_id="u") == []


def test_agents_update_and_delete_in_a_zone_are_proposals_with_a_diff(k):
    original = k.view(source="human").add_memory("Office opens at 9", user_id="u").entry
    k.protect(user_id="u")
    bot = k.view(agent="bot")
    assert bot.update(original.id, user_id="u", text="Office opens at 10").l2_full == "Office opens at 9"
    assert bot.delete(original.id, user_id="u").id == original.id
    assert k.get(original.id).l2_full == "Office opens at 9"
    update, delete = k.list_proposals(user_id="u")
    assert (update.op, update.current_text, update.text) == ("update", "Office opens at 9", "Office opens at 10")
    assert "-Office opens at 9" in update.diff and "+Office opens at 10" in update.diff
    k.approve(update.id, reviewer="dana")
    changed = k.get(original.id)
    assert (changed.l2_full, changed.source, changed.trust) == ("Office opens at 10", "human_approved", 1.0)
    k.approve(delete.id, reviewer="dana")
    assert k.list(user_id="u") == []


def test_an_agents_fact_never_supersedes_a_human_approved_one(k):
    k.protect(user_id="u")
    first = k.view(agent="bot").add_memory("I live in Oslo", user_id="u", infer=True).proposal_id
    k.approve(first, reviewer="dana")
    k.unprotect(k.zones()[0].id)
    [fact] = [e for e in k.list(user_id="u") if e.metadata.get("derived") == "fact"]
    assert (fact.l2_full, fact.source) == ("User lives in Oslo", "human_approved")
    result = k.view(agent="bot").add_memory("I live in Bergen", user_id="u", infer=True)
    assert result.event == "ADD" and result.facts[0].entry.l2_full == "User lives in Bergen"
    assert result.facts[0].superseded == [] and result.facts[0].conflicts  # kept side by side, flagged
    assert k.get(fact.id).invalid_at is None
    assert k.conflicts(user_id="u")[0].reason == "would overwrite a human-approved memory"
    # a person's own newer fact does supersede it
    person = k.view(source="human").add_memory("I live in Trondheim", user_id="u", infer=True)
    assert fact.id in person.facts[0].superseded


def test_only_a_person_approves(k):
    k.protect(user_id="u")
    proposal = k.view(agent="bot").add_memory("x y z", user_id="u").proposal_id
    for who in (k.view(agent="bot"), k.view(source="mcp")):
        with pytest.raises(PermissionDenied, match="propose, not approve"):
            who.approve(proposal)
        with pytest.raises(PermissionDenied):
            who.reject(proposal, reason="no")
    with pytest.raises(PermissionDenied):
        k.view(agent="bot").protect(user_id="u2")
    assert k.get_proposal(proposal).status == "pending"


def test_propose_directly_in_any_scope(k):
    p = k.propose("Prefers email", user_id="u", reason="said so twice", proposer="bot")
    assert (p.op, p.reason, p.zone_id, p.scope) == ("add", "said so twice", None, Scope(user_id="u"))
    e = k.add_memory("Prefers phone", user_id="u").entry
    upd = k.propose("Prefers email", op="update", entry_id=e.id)
    assert upd.current_text == "Prefers phone"


@pytest.mark.parametrize("call, error", [
    (lambda k: k.protect(), ScopeError),
    (lambda k: k.protect(user_id="u", category=3), InvalidArgument),
    (lambda k: k.propose("", user_id="u"), InvalidArgument),
    (lambda k: k.propose("x", op="merge"), InvalidArgument),
    (lambda k: k.propose("x", op="update"), InvalidArgument),
    (lambda k: k.propose(None, op="delete", entry_id="missing"), KeyError),
    (lambda k: k.approve("prop_missing"), InvalidArgument),
    (lambda k: k.list_proposals(status="maybe"), InvalidArgument),
    (lambda k: k.get_proposal(""), InvalidArgument),
], ids=["no-scope", "bad-category", "empty-text", "bad-op", "update-no-entry", "missing-entry", "unknown",
        "bad-status", "empty-id"])
def test_bad_input_is_our_exception(k, call, error):
    with pytest.raises(error):
        call(k)


def test_async_twins(tmp_path, hash_embedder):
    async def run():
        async with AgentBase(tmp_path / "a.db", embedder=hash_embedder, ner="regex") as db:
            await db.scope(user_id="u").protect()
            r = await db.view(agent="bot").scope(user_id="u").add_memory("I like jazz")
            assert r.event == "PROPOSED"
            assert [p.id for p in await db.scope(user_id="u").list_proposals()] == [r.proposal_id]
            done = await db.proposals.approve(r.proposal_id, reviewer="dana")
            return (await db.get(done.result_entry_id)).source

    assert asyncio.run(run()) == "human_approved"


# -- bulk paths: delete_all and reset ------------------------------------------------------------------


def test_an_agents_delete_all_leaves_zone_entries_as_delete_proposals(k):
    policy = k.add_memory("Travel needs approval", user_id="u", category="policy").entry
    k.add_memory("Lunch is at noon", user_id="u", category="social")
    k.add_memory("Lunch is at one", user_id="v", category="policy")
    zone = k.protect(user_id="u", category="policy")
    bot = k.view(agent="bot")
    assert bot.delete_all(user_id="u") == 1  # the social one; the policy one became a proposal
    assert [e.id for e in k.list(user_id="u")] == [policy.id]
    assert bot.delete_all(user_id="u") == 0  # asked again: the pending proposal stands, no second one
    assert len(k.list(user_id="v")) == 1
    [proposal] = k.list_proposals(user_id="u")
    assert (proposal.op, proposal.entry_id, proposal.zone_id, proposal.proposer, proposal.current_text) == (
        "delete", policy.id, zone.id, "bot", "Travel needs approval")
    assert k.approve(proposal.id, reviewer="dana").result_entry_id == policy.id
    assert k.list(user_id="u") == []
    assert [h.event for h in k.history(policy.id)][-1] == "DELETE"


def test_delete_all_through_an_adapter_path_spares_key_zones_and_human_approved_entries(k):
    kept = k.add_memory("dark mode", user_id="u", metadata={"key": "prefs/theme"}).entry
    human = k.view(source="human").add_memory("My name is Ada", user_id="u").entry
    k.add_memory("hello", user_id="u", metadata={"key": "notes/1"})
    k.protect(user_id="u", key_prefix="prefs/")
    assert k.view(source="mem0").delete_all(user_id="u") == 1
    assert sorted(e.id for e in k.list(user_id="u")) == sorted([kept.id, human.id])
    proposals = {p.entry_id: p for p in k.list_proposals(user_id="u")}
    assert set(proposals) == {kept.id, human.id}
    assert proposals[human.id].zone_id is None and proposals[kept.id].proposer == "mem0"


def test_delete_all_with_only_human_approved_entries_and_no_zone(k):
    human = k.view(source="human").add_memory("My name is Ada", user_id="u").entry
    k.add_memory("I like tea", user_id="u")
    assert k.delete_all(user_id="u") == 1
    assert [e.id for e in k.list(user_id="u")] == [human.id]
    assert [p.op for p in k.list_proposals(user_id="u")] == ["delete"]


def test_a_persons_delete_all_and_a_kernel_without_zones_delete_everything(k):
    for n in range(30):
        k.add_memory(f"note number {n}", user_id="u", project_id="p" if n % 2 else None)
    assert k.delete_all(user_id="u", project_id="p") == 15  # no zone, nothing human: all go
    k.protect(user_id="u")
    assert k.view(source="cli").delete_all(user_id="u") == 15  # a person's path: the zone lets it through
    assert k.list(user_id="u") == [] and k.list_proposals(status=None) == []


def test_delete_all_files_proposals_and_deletes_in_one_transaction(tmp_path, hash_embedder):
    import sqlite3

    path = tmp_path / "m.db"
    with Kernel(path, embedder=hash_embedder, ner="regex") as k:
        k.add_memory("Travel needs approval", user_id="u", category="policy")
        k.add_memory("Lunch is at noon", user_id="u")
        k.protect(user_id="u", category="policy")
        raw = sqlite3.connect(path)  # the file refuses every delete: the bulk delete fails midway
        raw.execute("CREATE TRIGGER no_delete BEFORE DELETE ON entries BEGIN SELECT RAISE(ABORT, 'refused'); END")
        raw.commit()
        with pytest.raises(AgentBaseError):
            k.view(agent="bot").delete_all(user_id="u")
        assert k.list_proposals(status=None) == [] and len(k.list(user_id="u")) == 2  # the proposal rolled back
        raw.execute("DROP TRIGGER no_delete")
        raw.commit()
        raw.close()
        assert k.view(agent="bot").delete_all(user_id="u") == 1


def test_reset_is_refused_while_a_zone_exists(k):
    k.add_memory("Travel needs approval", user_id="u", category="policy")
    zone = k.protect(user_id="u", category="policy")
    for who in (k, k.view(source="human"), k.view(source="mem0")):
        with pytest.raises(PermissionDenied, match=zone.id) as denied:
            who.reset()
        assert "unprotect" in str(denied.value) and "category='policy'" in str(denied.value)
        assert denied.value.operation == "reset"
    assert len(k.list(user_id="u")) == 1
    assert k.unprotect(zone.id)
    k.reset()
    assert k.list(user_id="u") == []
