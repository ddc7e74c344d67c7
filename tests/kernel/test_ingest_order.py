"""Ingest order: an exact duplicate is found by its content hash before any analysis (NER, dates,
facts, tiers), reinforced and returned as the insert would have returned it."""

from __future__ import annotations

import pytest

from agentbase_kernel import InvalidArgument


@pytest.fixture
def analysed(kernel, monkeypatch):
    """The texts ingest analyses from now on (the real analysis still runs)."""
    seen: list[str] = []
    real = kernel.ingestor.analyse_many

    def spy(texts, *args, **kwargs):
        seen.extend(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(kernel.ingestor, "analyse_many", spy)
    return seen


def test_an_exact_duplicate_is_never_analysed(kernel, analysed) -> None:
    first = kernel.add_memory("I like green tea", user_id="u")
    analysed.clear()
    again = kernel.add_memory("I like green tea", user_id="u")
    assert analysed == []
    assert again.event == "NOOP" and again.entry.id == first.entry.id
    stored = kernel.get(first.entry.id)
    assert again.entry.confidence == stored.confidence  # the reinforced value, as stored
    assert again.entry.l2_full == stored.l2_full and again.entry.tags == stored.tags
    results = kernel.add_memories([{"text": "I like green tea", "user_id": "u"}, {"text": "I like oolong", "user_id": "u"},
                                   {"text": "I like green tea", "user_id": "other"}])
    assert analysed == ["I like oolong", "I like green tea"]  # a new text, and the same text in another scope
    assert [r.event for r in results] == ["NOOP", "ADD", "ADD"]


def test_writes_that_do_more_than_store_are_still_analysed(kernel, analysed) -> None:
    kernel.add_memory("I live in Paris", user_id="u")
    kernel.add_memory("the plan", user_id="u", stream="chat")
    archived = kernel.add_memory("an old note", user_id="u")
    kernel.archive(archived.entry.id, user_id="u")
    analysed.clear()
    facts = kernel.add_memory("I live in Paris", user_id="u", infer=True)  # facts are still extracted
    assert facts.event == "NOOP" and "I live in Paris" in analysed
    assert kernel.add_memory("the plan", user_id="u", stream="chat").event == "NOOP"  # the stream still moves
    back = kernel.add_memory("an old note", user_id="u")  # the insert brings an archived duplicate back
    assert back.event == "NOOP" and back.entry.archived_at is None
    assert analysed.count("an old note") == 1 and analysed.count("the plan") == 1


def test_a_duplicate_gone_before_the_write_is_stored_as_new(kernel, analysed) -> None:
    first = kernel.add_memory("I like green tea", user_id="u")
    store = kernel.ingestor.store
    looked_up = store.live_duplicates

    def then_deleted(keys):  # another writer deletes it between the lookup and the write
        found = looked_up(keys)
        kernel.delete(first.entry.id, user_id="u")
        return found

    store.live_duplicates = then_deleted
    try:
        again = kernel.add_memory("I like green tea", user_id="u")
    finally:
        del store.live_duplicates
    assert again.event == "ADD" and again.entry.id != first.entry.id
    assert analysed[-1] == "I like green tea"  # analysed once it was known to be new


def test_the_text_is_checked_once_where_it_comes_in(kernel) -> None:
    with pytest.raises(InvalidArgument, match="text is empty"):
        kernel.add_memory("   ", user_id="u")
    with pytest.raises(InvalidArgument, match="each item must be a dict"):
        kernel.add_memories(["plain"])  # type: ignore[list-item]
    with pytest.raises(InvalidArgument, match="text must be a str"):
        kernel.add_memories([{"text": 5}])
