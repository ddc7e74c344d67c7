"""The scope-bound handle (``kernel.scope(...)``) and the kernel's parts (``kernel.sessions``,
``kernel.governance``): the same calls as the scope-keyword methods, and those keep working."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from agentbase_kernel import (
    AsyncGovernance,
    AsyncScopedMemory,
    AsyncSessions,
    EntryNotFound,
    Governance,
    PermissionDenied,
    Scope,
    ScopedMemory,
    ScopeError,
    Sessions,
)

SAME_TIME = datetime(2024, 3, 1, tzinfo=UTC)


def test_a_handle_reads_and_writes_only_its_scope(kernel) -> None:
    alice, bob = kernel.scope(user_id="alice"), kernel.scope(user_id="bob")
    assert isinstance(alice, ScopedMemory) and alice.scope == Scope(user_id="alice")
    tea = alice.add_memory("I drink green tea every morning")
    bob.add_memory("I drink black coffee")
    assert tea.entry.user_id == "alice" and tea.event == "ADD"
    assert alice.add_memory("I drink green tea every morning").event == "NOOP"
    assert [e.l2_full for e in alice.list()] == ["I drink green tea every morning"]
    assert alice.count() == 1 and kernel.count() == 2
    assert [h.entry.id for h in alice.find("tea")] == [tea.entry.id]
    assert all(h.entry.user_id == "bob" for h in bob.find("tea"))
    assert alice.get(tea.entry.id).l2_full == "I drink green tea every morning"
    with pytest.raises(EntryNotFound):
        bob.get(tea.entry.id)
    assert alice.update(tea.entry.id, text="I drink oolong every morning").l2_full == "I drink oolong every morning"
    assert alice.delete(tea.entry.id).id == tea.entry.id
    assert alice.count() == 0 and bob.count() == 1


def test_a_handle_is_the_keyword_call(kernel) -> None:
    """``kernel.find(q, user_id=u)`` and ``kernel.scope(user_id=u).find(q)`` are one call."""
    for text in ("Ann plays the cello", "Ann lives in Porto", "Ben plays chess"):
        kernel.add_memory(text, user_id="ann" if text.startswith("Ann") else "ben")
    by_keyword = kernel.find("what does Ann play", user_id="ann", top_k=5)
    by_handle = kernel.scope(user_id="ann").find("what does Ann play", top_k=5)
    assert [(h.entry.id, h.score) for h in by_keyword] == [(h.entry.id, h.score) for h in by_handle]
    assert kernel.list(user_id="ann", order="desc") == kernel.scope(user_id="ann").list(order="desc")
    assert kernel.count(user_id="ann", category=None) == kernel.scope(user_id="ann").count(category=None) == 2


def test_the_handle_checks_its_ids_once_when_made(kernel) -> None:
    with pytest.raises(ScopeError):
        kernel.scope(user_id="")
    with pytest.raises(ScopeError):
        kernel.scope(user_id=5)  # type: ignore[arg-type]


def test_add_memories_fills_the_scope_and_refuses_another(kernel) -> None:
    team = kernel.scope(project_id="p1", agent_id="bot")
    results = team.add_memories([{"text": "the launch is on Friday"}, {"text": "the demo is on Monday",
                                                                         "project_id": "p1"}])
    assert [(r.entry.project_id, r.entry.agent_id) for r in results] == [("p1", "bot"), ("p1", "bot")]
    with pytest.raises(ScopeError):
        team.add_memories([{"text": "elsewhere", "project_id": "p2"}])
    assert team.count() == 2


def test_delete_all_and_capacity_need_an_id(kernel) -> None:
    everything = kernel.scope()
    with pytest.raises(ScopeError):
        everything.delete_all()
    with pytest.raises(ScopeError):
        everything.set_capacity(3)
    mine = kernel.scope(user_id="u")
    for i in range(4):
        mine.add_memory(f"note number {i}")
    archived = mine.set_capacity(3)
    assert len(archived) == 1 and mine.capacity() == {"max_items": 3, "live": 3}
    assert mine.restore(archived[0]).archived_at is None
    assert mine.delete_all() == 4


def test_session_calls_use_the_scope_session(kernel) -> None:
    with pytest.raises(ScopeError):
        kernel.scope(user_id="u").add_messages([{"role": "user", "content": "hi"}])
    chat = kernel.scope(user_id="u", session_id="s1")
    session = chat.create_session(metadata={"topic": "travel"})
    assert session.id == "s1" and session.scope.user_id == "u"
    chat.add_messages([{"role": "user", "content": "I am flying to Tokyo in May"},
                       {"role": "assistant", "content": "Tokyo in May is lovely"}])
    chat.add_message("user", "I will stay in Shinjuku")
    assert [m.content for m in chat.list_messages()] == [
        "I am flying to Tokyo in May", "Tokyo in May is lovely", "I will stay in Shinjuku"]
    assert [s.id for s in kernel.scope(user_id="u").list_sessions()] == ["s1"]
    summary = chat.commit_session()
    assert summary.session_id == "s1" and summary.category == "session_summary"
    assert kernel.get_session("s1").summary_entry_id == summary.id


def test_sessions_part_is_the_session_methods(kernel) -> None:
    sessions = kernel.sessions
    assert isinstance(sessions, Sessions)
    sessions.create("s", user_id="u")
    sessions.add_messages("s", [{"role": "user", "content": "first"}, {"role": "user", "content": "second"}])
    assert kernel.list_messages("s") == sessions.list_messages("s")
    assert kernel.count_messages("s") == sessions.count_messages("s") == 2
    assert [s.id for s in sessions.list(user_id="u")] == [s.id for s in kernel.list_sessions(user_id="u")] == ["s"]
    assert sessions.clear("s") == 2 and kernel.count_messages("s") == 0
    sessions.delete("s")
    assert kernel.list_sessions(user_id="u") == []
    # the old names are the same functions' delegates, with the same documentation
    assert kernel.create_session.__doc__ == Sessions.create.__doc__
    assert kernel.commit_session.__doc__ == Sessions.commit.__doc__


def test_governance_part_is_the_governance_methods(kernel) -> None:
    governance = kernel.governance
    assert isinstance(governance, Governance)
    policy = governance.grant("bot-a", project_id="p1", read=True, write=True)
    assert policy.agent == "bot-a" and governance.policies() == kernel.policies()
    kernel.add_memory("I live in Paris", user_id="u", infer=True, created_at=SAME_TIME)
    kernel.add_memory("I live in Berlin", user_id="u", infer=True, created_at=SAME_TIME)
    (conflict,) = governance.conflicts(user_id="u")
    assert kernel.scope(user_id="u").conflicts() == kernel.conflicts(user_id="u") == [conflict]
    resolved = governance.resolve(conflict.id, keep=conflict.entry_ids[1])
    assert resolved.status == "resolved" and governance.conflicts(user_id="u") == []
    assert [e.kind for e in governance.audit(kinds="policy")] == ["policy"]
    assert kernel.scope(user_id="u").audit(kinds="resolve")[0].kind == "resolve"
    assert governance.revoke("bot-a", project_id="p1") is True and kernel.policies() == []


def test_a_views_handle_acts_as_its_agent(kernel) -> None:
    kernel.grant("bot-a", project_id="p1", read=True, write=True)
    kernel.scope(project_id="p1").add_memory("the plan is secret")
    outsider = kernel.as_agent("bot-c").scope(project_id="p1")
    with pytest.raises(PermissionDenied):
        outsider.add_memory("let me in")
    with pytest.raises(PermissionDenied):
        outsider.list()
    with pytest.raises(PermissionDenied):
        kernel.as_agent("bot-c").governance.grant("bot-c", project_id="p1")
    assert kernel.as_agent("bot-a").scope(project_id="p1").count() == 1


def test_async_handle_and_parts(db) -> None:
    async def run() -> None:
        alice = db.scope(user_id="alice", session_id="chat")
        assert isinstance(alice, AsyncScopedMemory) and alice.scope == Scope(user_id="alice", session_id="chat")
        await alice.add_memory("Alice keeps bees in her garden")
        assert (await alice.find("bees"))[0].entry.user_id == "alice"
        assert isinstance(db.sessions, AsyncSessions)
        await alice.add_messages([{"role": "user", "content": "The bees made honey"}])
        assert [m.content for m in await db.sessions.list_messages("chat")] == ["The bees made honey"]
        assert isinstance(db.governance, AsyncGovernance)
        await db.governance.grant("bot", user_id="alice")
        assert [p.agent for p in await db.governance.policies()] == ["bot"]

    asyncio.run(run())
