"""Governance over MCP: an agent may propose and list proposals, and report outcomes; it can never
approve (no tool does, and the kernel refuses the MCP path). A protected scope turns add_memory
into a proposal."""

from __future__ import annotations

import pytest

from agentbase_kernel import PermissionDenied


def test_no_tool_approves_or_rejects(alice):
    names = {t.name for t in alice.tools()}
    assert {"propose_memory", "list_proposals"} <= names
    assert not any(word in name for name in names for word in ("approve", "reject", "protect"))


def test_unknown_approve_tool_is_an_error(alice):
    message = alice.fails("approve_proposal", {"proposal_id": "prop_x"})
    assert "approve_proposal" in message


def test_an_agent_proposes_and_a_person_approves_outside_mcp(alice, kernel_on):
    out = alice.ok("propose_memory", {"text": "Alice's manager is Dana", "reason": "she said so"})
    assert out["status"] == "pending" and out["op"] == "add" and out["proposer"] == "mcp"
    listed = alice.ok("list_proposals", {})["proposals"]
    assert out["id"] in [p["id"] for p in listed]
    with pytest.raises(PermissionDenied):
        kernel_on.view(source="mcp").approve(out["id"])
    kernel_on.approve(out["id"], reviewer="dana")
    done = [p for p in alice.ok("list_proposals", {"status": "all"})["proposals"] if p["id"] == out["id"]]
    assert done[0]["status"] == "approved" and done[0]["written_memory_id"]
    assert kernel_on.get(done[0]["written_memory_id"], user_id="alice").source == "human_approved"


def test_add_memory_in_a_protected_scope_becomes_a_proposal(alice, kernel_on):
    zone = kernel_on.protect(user_id="alice", category="contacts")
    try:
        out = alice.ok("add_memory", {"text": "Bob's phone is 555-0100", "category": "contacts"})
        (result,) = out["results"]
        assert result["event"] == "PROPOSED" and result["proposal_id"] == result["id"]
        assert kernel_on.list(user_id="alice", category="contacts") == []
        changed = alice.ok("propose_memory", {"op": "delete", "memory_id": alice.ok(
            "add_memory", {"text": "An unprotected note"})["results"][0]["id"]})
        assert changed["op"] == "delete" and changed["current_text"] == "An unprotected note"
    finally:
        kernel_on.unprotect(zone.id)


def test_record_outcome_moves_confidence_of_the_memories_used(alice, kernel_on):
    memory = alice.ok("add_memory", {"text": "Alice's build runs with make ci"})["results"][0]["id"]
    out = alice.ok("record_outcome", {"session_id": "chat-1", "outcome": "failure", "used_memory_ids": [memory]})
    assert out["memories"] == [{"id": memory, "confidence": pytest.approx(0.8)}]
    assert kernel_on.get(memory, user_id="alice").confidence == pytest.approx(0.8)
    assert "No entry" in alice.fails("record_outcome", {"session_id": "chat-1", "outcome": "success",
                                                        "used_memory_ids": ["nope"]})


def test_delete_all_memories_leaves_protected_ones_as_delete_proposals(alice, kernel_on):
    kept = alice.ok("add_memory", {"text": "Bob's phone is 555-0100", "category": "contacts"})["results"][0]["id"]
    alice.ok("add_memory", {"text": "A note to throw away"})
    zone = kernel_on.protect(user_id="alice", category="contacts")
    try:
        out = alice.ok("delete_all_memories", {"scope": {"user_id": "alice"}})
        # what stays is what a person must decide on: the zone's memory (and any human-approved one)
        left = {e.id for e in kernel_on.list(user_id="alice", limit=None)}
        assert out["deleted"] >= 1 and kept in left
        by_entry = {kernel_on.get_proposal(p).entry_id: p for p in out["proposed"]}
        assert left <= set(by_entry)  # each memory left waits on a pending delete proposal
        again = alice.ok("delete_all_memories", {"scope": {"user_id": "alice"}})
        assert again["deleted"] == 0 and again["proposed"] == out["proposed"]  # asked twice: nothing piles up
        with pytest.raises(PermissionDenied):
            kernel_on.view(source="mcp").approve(by_entry[kept])
        kernel_on.approve(by_entry[kept], reviewer="dana")
        assert kept not in {e.id for e in kernel_on.list(user_id="alice", limit=None)}
    finally:
        kernel_on.unprotect(zone.id)
