"""Entry CRUD, history, scopes and filters on a real file."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from agentbase_kernel import ContextType, EntryNotFound, InvalidArgument, ScopeError


def test_add_get_round_trip(kernel):
    result = kernel.add_memory("User prefers Python 3.12", user_id="alice", category="preference",
                               tags=["python"], metadata={"source": "chat", "n": 3})
    assert result.event == "ADD"
    entry = kernel.get(result.id)
    assert entry.l2_full == "User prefers Python 3.12"
    assert entry.category == "preference"
    assert "python" in entry.tags
    assert entry.metadata == {"source": "chat", "n": 3}
    assert entry.user_id == "alice"
    assert entry.scope_level.value == "global"
    assert entry.context_type is ContextType.MEMORY
    assert len(entry.l0_abstract) <= 50 and len(entry.l1_overview) <= 300
    assert entry.created_at is not None and entry.created_at.tzinfo is not None


def test_exact_duplicate_is_one_entry(kernel):
    a = kernel.add_memory("I like green tea", user_id="u")
    b = kernel.add_memory("I like green tea", user_id="u")
    assert (a.event, b.event) == ("ADD", "NOOP")
    assert a.id == b.id
    assert kernel.count(user_id="u") == 1
    c = kernel.add_memory("I like green tea", user_id="other")
    assert c.event == "ADD" and c.id != a.id


def test_update_and_history(kernel):
    entry_id = kernel.add_memory("I live in Paris", user_id="u").id
    updated = kernel.update(entry_id, text="I live in Berlin", metadata={"k": "v"})
    assert updated.l2_full == "I live in Berlin"
    assert updated.metadata == {"k": "v"}
    assert updated.updated_at >= updated.created_at
    kernel.delete(entry_id)
    events = kernel.history(entry_id)
    assert [e.event for e in events] == ["ADD", "UPDATE", "DELETE"]
    assert (events[1].old_value, events[1].new_value) == ("I live in Paris", "I live in Berlin")
    assert events[2].new_value is None
    with pytest.raises(EntryNotFound):
        kernel.get(entry_id)
    assert kernel.history("no-such-id") == []


def test_missing_entry_is_a_key_error(kernel):
    with pytest.raises(KeyError) as info:
        kernel.get("nope")
    assert str(info.value) == "No entry with id 'nope' in this scope"
    with pytest.raises(EntryNotFound):
        kernel.delete("nope")
    with pytest.raises(EntryNotFound):
        kernel.update("nope", text="x")


def test_scope_isolation(kernel):
    a = kernel.add_memory("alice likes jazz music", user_id="alice").id
    b = kernel.add_memory("bob likes jazz music", user_id="bob").id
    with pytest.raises(EntryNotFound):
        kernel.get(a, user_id="bob")
    with pytest.raises(EntryNotFound):
        kernel.delete(a, user_id="bob")
    with pytest.raises(EntryNotFound):
        kernel.update(a, user_id="bob", text="hacked")
    assert [e.id for e in kernel.list(user_id="bob")] == [b]
    assert {h.id for h in kernel.find("jazz music", user_id="bob")} == {b}
    assert kernel.delete_all(user_id="bob") == 1
    assert kernel.get(a).l2_full == "alice likes jazz music"


def test_agent_and_session_scopes(kernel):
    kernel.add_memory("agent note", user_id="u", agent_id="a1")
    kernel.add_memory("session note", user_id="u", session_id="s1")
    kernel.add_memory("other agent note", user_id="u", agent_id="a2")
    assert [e.l2_full for e in kernel.list(user_id="u", agent_id="a1")] == ["agent note"]
    assert [e.l2_full for e in kernel.list(session_id="s1")] == ["session note"]
    levels = {e.l2_full: e.scope_level.value for e in kernel.list(user_id="u")}
    assert levels == {"agent note": "agent", "session note": "session", "other agent note": "agent"}


def test_delete_all_needs_a_scope(kernel):
    kernel.add_memory("x y z", user_id="u")
    with pytest.raises(ScopeError, match="use reset"):
        kernel.delete_all()
    assert kernel.count(user_id="u") == 1


def test_reset_wipes_everything(kernel):
    kernel.add_memory("one", user_id="u")
    kernel.add_message("s", "user", "hello there")
    kernel.reset()
    assert kernel.count() == 0
    assert kernel.list_messages("s") == []


def test_list_filters_and_pagination(kernel):
    for i in range(5):
        kernel.add_memory(f"note number {i}", user_id="u", category="a" if i % 2 else "b", tags=[f"t{i}"],
                          metadata={"i": i, "even": i % 2 == 0})
    assert [e.l2_full for e in kernel.list(user_id="u", limit=2, offset=1)] == ["note number 1", "note number 2"]
    assert len(kernel.list(user_id="u", category="a")) == 2
    assert [e.l2_full for e in kernel.list(user_id="u", tags=["t3"])] == ["note number 3"]
    assert [e.metadata["i"] for e in kernel.list(user_id="u", metadata={"even": True})] == [0, 2, 4]
    assert [e.l2_full for e in kernel.list(user_id="u", order="desc", limit=1)] == ["note number 4"]


def test_list_and_count_by_an_exact_substring_of_the_text(kernel):
    kernel.add_memory("TODO: renew the passport", user_id="u")
    kernel.add_memory("todo: water the plants", user_id="u")
    kernel.add_memory("TODO: call mum", user_id="v")
    assert [e.l2_full for e in kernel.list(user_id="u", text_contains="TODO")] == ["TODO: renew the passport"]
    assert kernel.count(text_contains="TODO") == 2
    assert kernel.count(user_id="u", text_contains="o: w") == 1
    for bad in ("", 3, "\ud800"):
        with pytest.raises(InvalidArgument, match="text_contains"):
            kernel.list(text_contains=bad)


def test_expiry_hides_but_get_returns(kernel):
    past = datetime.now(timezone.utc) - timedelta(days=1)
    entry_id = kernel.add_memory("old coupon code", user_id="u", expires_at=past).id
    assert kernel.list(user_id="u") == []
    assert len(kernel.list(user_id="u", include_expired=True)) == 1
    assert kernel.get(entry_id).expires_at is not None
    assert len(kernel.find("coupon", user_id="u")) == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"text": ""}, "text is empty - pass some text to store", id="empty"),
        pytest.param({"text": "   "}, "text is empty - pass some text to store", id="whitespace"),
        pytest.param({"text": 42}, "text must be a str, got int", id="not-str"),
        pytest.param({"text": "ok", "user_id": ""}, None, id="empty-user"),
        pytest.param({"text": "ok", "user_id": 7}, "user_id must be a str, got int", id="int-user"),
        pytest.param({"text": "ok", "confidence": 2}, "confidence must be a number in [0, 1], got 2", id="confidence"),
        pytest.param({"text": "bad \ud800 surrogate"}, None, id="lone-surrogate"),
        pytest.param({"text": "ok", "metadata": []}, "metadata must be a dict, got list", id="metadata-list"),
        pytest.param({"text": "ok", "context_type": "blob"}, None, id="context-type"),
    ],
)
def test_bad_input_is_rejected_without_a_write(kernel, kwargs, message):
    text = kwargs.pop("text")
    with pytest.raises(InvalidArgument) as info:
        kernel.add_memory(text, **kwargs)
    if message:
        assert str(info.value) == message
    assert kernel.count(include_expired=True, include_invalid=True) == 0


def test_hostile_strings_are_data(kernel):
    nasty = "'); DROP TABLE entries; -- \" NEAR( * ^ : AND OR NOT (("
    entry_id = kernel.add_memory(nasty, user_id=nasty, metadata={nasty: nasty}).id
    assert kernel.get(entry_id, user_id=nasty).l2_full == nasty
    assert kernel.list(user_id=nasty, metadata={nasty: nasty})[0].id == entry_id
    for query in [nasty, '"', "*", "NEAR(", "-", ":", "^", "(((", "AND", "OR NOT", "🙂", "مرحبا"]:
        kernel.find(query, user_id=nasty)


def test_nul_bytes_are_kept_verbatim(kernel):
    entry_id = kernel.add_memory("before\x00after tea", user_id="u").id
    assert kernel.get(entry_id).l2_full == "before\x00after tea"
    assert [h.id for h in kernel.find("after tea", user_id="u")] == [entry_id]


def test_as_of_time_travel(kernel):
    first = kernel.add_memory("I live in Paris", user_id="u", infer=True)
    fact_id = first.facts[0].id
    second = kernel.add_memory("I moved to Berlin", user_id="u", infer=True)
    assert second.superseded == [fact_id]
    old = kernel.get(fact_id)
    assert old.invalid_at is not None and old.superseded_by
    live = [e.id for e in kernel.list(user_id="u", category=old.category)]
    assert fact_id not in live
    then = [e.id for e in kernel.list(user_id="u", as_of=old.invalid_at - timedelta(microseconds=1))]
    assert fact_id in then


def test_dedup_false_keeps_equal_texts_apart(kernel):
    a = kernel.add_memory("same value", user_id="u", dedup=False)
    b = kernel.add_memory("same value", user_id="u", dedup=False)
    assert (a.event, b.event) == ("ADD", "ADD") and a.id != b.id
    assert kernel.add_memory("same value", user_id="u").event == "ADD"  # the deduplicated one is separate
    assert kernel.add_memory("same value", user_id="u").event == "NOOP"
    kernel.update(a.id, text="changed value")
    kernel.update(a.id, text="same value")
    assert kernel.count(user_id="u") == 3


def test_transaction_groups_writes(kernel):
    keep = kernel.add_memory("keep me", user_id="u").id
    with pytest.raises(InvalidArgument):
        with kernel.transaction():
            kernel.add_memory("inside the failed transaction", user_id="u")
            kernel.delete(keep)
            kernel.add_memory("", user_id="u")
    assert [e.id for e in kernel.list(user_id="u")] == [keep]
