"""Per-scope permissions: every kernel path denies and audits, allowed agents work.

Setup for each case: project ``p1`` is protected - agent A may read and write it, agent B may only
read it, agent C has no grant. Reads are tried by C (denied) and B (allowed); writes by B (denied)
and A (allowed); policy management by A (denied) and the owner kernel (allowed).
"""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime

import pytest

from agentbase_kernel import AgentBase, Kernel, PermissionDenied, ScopeError

P1 = {"project_id": "p1"}
SAME_TIME = datetime(2024, 3, 1, tzinfo=UTC)


@pytest.fixture
def world(kernel):
    """The owner's data in p1: an entry, a session with two messages, an open conflict."""
    note = kernel.add_memory("the launch plan is due on Friday", **P1, user_id="u")
    kernel.add_messages("s1", [{"role": "user", "content": "what is the launch plan?"},
                               {"role": "assistant", "content": "It is due on Friday."}], **P1, user_id="u")
    messages = kernel.list_messages("s1")
    kernel.add_memory("I live in Paris", **P1, user_id="u", infer=True, created_at=SAME_TIME)
    clash = kernel.add_memory("I live in Berlin", **P1, user_id="u", infer=True, created_at=SAME_TIME)
    kernel.find("launch plan", **P1)  # a trace to read
    kernel.grant("A", **P1, read=True, write=True)
    kernel.grant("B", **P1, read=True)
    header_only = io.StringIO()
    kernel.export(header_only, user_id="nobody")
    return {"export": header_only.getvalue(), "entry": note.id, "message": messages[0].id, "messages": [m.id for m in messages],
            "conflict": clash.conflicts[0], "keep": clash.facts[0].id}


READS = {
    "find": lambda k, w: k.find("launch plan", **P1),
    "list": lambda k, w: k.list(**P1),
    "count": lambda k, w: k.count(**P1),
    "get": lambda k, w: k.get(w["entry"]),
    "history": lambda k, w: k.history(w["entry"]),
    "export": lambda k, w: k.export(io.StringIO(), **P1),
    "get_session": lambda k, w: k.get_session("s1"),
    "list_sessions": lambda k, w: k.list_sessions(**P1),
    "list_messages": lambda k, w: k.list_messages("s1"),
    "get_message": lambda k, w: k.get_message("s1", w["message"]),
    "count_messages": lambda k, w: k.count_messages("s1"),
    "prefetch": lambda k, w: k.prefetch("launch plan", **P1),
    "audit": lambda k, w: k.audit(**P1),
    "trace_session": lambda k, w: k.trace_session(**P1),
    "entity_graph": lambda k, w: k.entity_graph(**P1),
    "conflicts": lambda k, w: k.conflicts(**P1),
    "diff_entries": lambda k, w: k.diff_entries(w["entry"], w["keep"]),
    "capacity": lambda k, w: k.capacity(**P1, user_id="u"),
}
WRITES = {
    "add_memory": lambda k, w: k.add_memory("a new note", **P1),
    "add_memories": lambda k, w: k.add_memories([{"text": "a bulk note", **P1}]),
    "update": lambda k, w: k.update(w["entry"], text="the launch plan is due on Monday"),
    "delete": lambda k, w: k.delete(w["entry"]),
    "delete_all": lambda k, w: k.delete_all(**P1),
    "create_session": lambda k, w: k.create_session("s2", **P1),
    "update_session": lambda k, w: k.update_session("s1", metadata={"topic": "launch"}),
    "delete_session": lambda k, w: k.delete_session("s1"),
    "add_message": lambda k, w: k.add_message("s1", "user", "and the budget?"),
    "add_messages": lambda k, w: k.add_messages("s3", [{"role": "user", "content": "hi"}], **P1),
    "update_message": lambda k, w: k.update_message("s1", w["message"], status="archived"),
    "update_messages": lambda k, w: k.update_messages("s1", w["messages"], status="archived"),
    "delete_message": lambda k, w: k.delete_message("s1", w["message"]),
    "delete_messages": lambda k, w: k.delete_messages("s1", w["messages"]),
    "set_messages": lambda k, w: k.set_messages("s1", [{"role": "user", "content": "start over"}]),
    "clear_session": lambda k, w: k.clear_session("s1"),
    "commit_session": lambda k, w: k.commit_session("s1"),
    "resolve": lambda k, w: k.resolve(w["conflict"], keep=w["keep"]),
    "import": lambda k, w: k.import_(io.StringIO(w["export"])),
    "reset": lambda k, w: k.reset(),
    "archive": lambda k, w: k.archive(w["entry"]),
    "restore": lambda k, w: k.restore(w["entry"]),
    "set_capacity": lambda k, w: k.set_capacity(50, **P1, user_id="u"),
    "consolidate": lambda k, w: k.consolidate(**P1, user_id="u"),
}
# the kernel path that judges the call, where it is not the call's own name
OPERATION = {"add_message": "add_messages", "diff_entries": "get"}
CASES = ([(name, "read", "C", "B") for name in READS] + [(name, "write", "B", "A") for name in WRITES]
         + [("grant", "write", "A", None), ("revoke", "write", "A", None)])
CALLS = {**READS, **WRITES,
         "grant": lambda k, w: k.grant("C", **P1, read=True),
         "revoke": lambda k, w: k.revoke("B", **P1)}


@pytest.mark.parametrize(("path", "access", "denied", "allowed"), CASES, ids=[c[0] for c in CASES])
def test_every_kernel_path_denies_audits_and_allows(kernel, world, path, access, denied, allowed):
    call = CALLS[path]
    before = len(kernel.audit(kinds="denied", limit=None))
    with pytest.raises(PermissionDenied) as info:
        call(kernel.as_agent(denied), world)
    assert isinstance(info.value, PermissionError)
    assert info.value.agent == denied and info.value.access == access
    kernel.flush_lifecycle()  # a denial inside a transaction is written once it is over
    rows = kernel.audit(kinds="denied", limit=None)
    assert len(rows) == before + 1
    assert rows[0].actor == denied and rows[0].detail["access"] == access
    assert rows[0].detail["operation"] == OPERATION.get(path, path)
    # the denied call changed nothing an allowed reader can see
    assert kernel.count(**P1) >= 1
    call(kernel.as_agent(allowed) if allowed else kernel, world)  # the allowed agent (or the owner) works


def test_denied_names_operation(kernel, world):
    with pytest.raises(PermissionDenied, match=r"Agent 'C' may not read project_id='p1' \(find\)"):
        kernel.as_agent("C").find("plan", **P1)
    assert kernel.audit(kinds="denied")[0].detail == {"operation": "find", "access": "read",
                                                      "policy_scope": {"project_id": "p1"}}


def test_wider_reads_leave_protected_scopes_out(kernel, world):
    open_note = kernel.add_memory("the launch party is open to all", user_id="u")
    c = kernel.as_agent("C")
    seen = {e.id for e in c.list(user_id="u", limit=None)}
    assert open_note.id in seen and world["entry"] not in seen
    assert c.count(user_id="u") == len(seen)
    assert {h.id for h in c.find("launch", user_id="u")} == {open_note.id}
    assert all(e.scope.project_id != "p1" for e in c.audit(user_id="u", limit=None))
    assert c.list_sessions(user_id="u") == [] and c.conflicts(user_id="u") == []
    # deleting widely spares what C may not write
    assert c.delete_all(user_id="u") == 1 and kernel.get(world["entry"]).id == world["entry"]
    # B reads everything in u, A too
    assert world["entry"] in {e.id for e in kernel.as_agent("B").list(user_id="u")}


def test_no_policies_is_open_and_owner_is_never_restricted(kernel):
    bot = kernel.as_agent("anyone")
    added = bot.add_memory("open by default", project_id="p9")
    assert bot.get(added.id).written_by == "anyone" and bot.count(project_id="p9") == 1
    kernel.grant("other", project_id="p9", read=True, write=True)
    with pytest.raises(PermissionDenied):
        bot.get(added.id)
    assert kernel.get(added.id).id == added.id  # the owner kernel (no agent)
    assert kernel.revoke("other", project_id="p9") is True
    assert bot.get(added.id).id == added.id  # last policy gone: open again
    assert kernel.revoke("other", project_id="p9") is False


def test_policies_live_in_the_file(db_path, hash_embedder, kernel, world):
    assert {(p.agent, p.read, p.write) for p in kernel.policies()} == {("A", True, True), ("B", True, False)}
    with Kernel(db_path, embedder=hash_embedder, ner="regex", agent="B") as other_process:
        assert other_process.agent == "B"
        assert other_process.get(world["entry"]).id == world["entry"]
        with pytest.raises(PermissionDenied):
            other_process.add_memory("not mine to write", **P1)
    kernel.grant("B", **P1, read=True, write=True)  # replaces B's policy
    with Kernel(db_path, embedder=hash_embedder, ner="regex", agent="B") as other_process:
        assert other_process.add_memory("now I may", **P1).entry.project_id == "p1"
    assert [p.write for p in kernel.policies(agent="B")] == [True]
    assert len(kernel.policies(project_id="p1")) == 2 and kernel.policies(project_id="p2") == []


def test_grant_needs_a_scope_and_a_view_shares_the_file(kernel):
    with pytest.raises(ScopeError):
        kernel.grant("A")
    view = kernel.view(agent="A", source="mem0")
    entry = view.add_memory("through a view").entry
    assert (entry.source, entry.written_by) == ("mem0", "A")
    assert kernel.get(entry.id).source == "mem0"
    view.close()
    assert kernel.closed


def test_async_twins(db):
    async def main():
        await db.grant("A", project_id="p1", read=True, write=True)
        bot = db.as_agent("B")
        assert bot.agent == "B"
        with pytest.raises(PermissionDenied):
            await bot.add_memory("no", project_id="p1")
        assert [p.agent for p in await db.policies()] == ["A"]
        assert await db.revoke("A", project_id="p1") is True
        assert (await bot.add_memory("yes", project_id="p1")).entry.written_by == "B"
        assert await db.conflicts(project_id="p1") == []

    asyncio.run(main())
    assert isinstance(db.view(source="cli"), AgentBase)


def test_denial_inside_a_rolled_back_transaction_is_still_audited(kernel, world):
    b = kernel.as_agent("B")
    with pytest.raises(PermissionDenied), b.transaction():
        b.add_memory("my own note", user_id="u")  # open scope: allowed, then rolled back
        b.add_memory("into p1", **P1)
    assert kernel.count(user_id="u", metadata=None) == kernel.count(user_id="u")
    assert not [e for e in kernel.list(user_id="u", limit=None) if e.text in ("my own note", "into p1")]
    kernel.flush_lifecycle()
    row = kernel.audit(kinds="denied")[0]
    assert (row.actor, row.detail["operation"], row.scope.project_id) == ("B", "add_memory", "p1")


def test_a_policy_change_in_another_process_applies_to_the_next_call(db_path, hash_embedder, kernel, world):
    with Kernel(db_path, embedder=hash_embedder, ner="regex", agent="B") as other:
        assert other.count(**P1) >= 1  # verdict cached on the current policies
        kernel.revoke("B", **P1)
        with pytest.raises(PermissionDenied):
            other.count(**P1)
        kernel.grant("B", **P1, read=True)
        assert other.count(**P1) >= 1
        with pytest.raises(PermissionDenied):  # a rolled-back grant changes nothing
            with kernel.transaction():
                kernel.grant("B", **P1, read=True, write=True)
                assert kernel.as_agent("B").add_memory("inside", **P1).entry.project_id == "p1"
                raise PermissionDenied("roll back")
        with pytest.raises(PermissionDenied):
            other.add_memory("still read-only", **P1)
