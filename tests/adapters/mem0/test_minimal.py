"""MinimalAdapter: remember / recall / forget and the async twins, on a real file."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbase_adapters.minimal import MinimalAdapter
from agentbase_kernel import ClosedError, Hit, InvalidArgument


@pytest.fixture
def mem(db):
    return MinimalAdapter(db)


def test_remember_recall_forget(mem, kernel):
    entry_id = mem.remember("Alice prefers window seats", who="alice", tags=["travel"], source="chat", turn=3)
    entry = kernel.get(entry_id)
    assert entry.user_id == "alice" and "travel" in entry.tags
    assert entry.metadata == {"source": "chat", "turn": 3}
    hits = mem.recall("window seats", who="alice")
    assert isinstance(hits, list) and all(isinstance(h, Hit) for h in hits)
    assert hits[0].id == entry_id and hits[0].content == "Alice prefers window seats"
    assert mem.forget(entry_id) == 1
    assert mem.recall("window seats", who="alice") == []


def test_who_scopes_recall_and_forget(mem):
    mine = mem.remember("I like green tea", who="alice")
    mem.remember("I like green tea", who="bob")
    assert [h.entry.user_id for h in mem.recall("green tea", who="alice")] == ["alice"]
    assert mem.forget(mine, who="bob") == 0  # another user's id is not found in bob's scope
    assert mem.forget(who="bob") == 1
    assert [h.id for h in mem.recall("green tea")] == [mine]


def test_remembering_the_same_text_twice_returns_the_first_id(mem, kernel):
    first = mem.remember("I like green tea", who="alice")
    assert mem.remember("I like green tea", who="alice") == first
    assert kernel.count(user_id="alice") == 1


def test_forget_is_idempotent(mem):
    entry_id = mem.remember("I like green tea", who="alice")
    assert mem.forget(entry_id) == 1
    assert mem.forget(entry_id) == 0


def test_top_k_limits_recall(mem):
    for i in range(5):
        mem.remember(f"tea note {i}", who="alice")
    assert len(mem.recall("tea note", who="alice", top_k=2)) == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(lambda m: m.remember("   "), "text is empty - pass some text to store", id="empty-text"),
        pytest.param(lambda m: m.remember("x", tags="travel"), "tags must be a list of strings, not the string 'travel' - write tags=['travel']", id="tags-str"),
        pytest.param(lambda m: m.remember("x", tags=[1]), "tags must be strings, got [1]", id="tags-int"),
        pytest.param(lambda m: m.recall("tea", top_k=0), "top_k must be a positive integer, not 0", id="top-k-zero"),
        pytest.param(lambda m: m.recall("  "), "query is empty - pass the text to search for", id="empty-query"),
        pytest.param(lambda m: m.forget(), "forget() needs entry_id=... or who=... - use db.sync.reset() to wipe everything", id="forget-nothing"),
    ],
)
def test_bad_input_is_a_clear_value_error(mem, call, message):
    with pytest.raises(InvalidArgument) as info:
        call(mem)
    assert isinstance(info.value, ValueError) and str(info.value) == message


async def test_async_twins(mem, kernel):
    entry_id = await mem.aremember("I like green tea", who="alice", tags=["drink"], mood="calm")
    assert kernel.get(entry_id).metadata == {"mood": "calm"}
    assert [h.id for h in await mem.arecall("green tea", who="alice")] == [entry_id]
    assert await mem.aforget(entry_id) == 1
    assert await mem.aforget(entry_id) == 0
    await mem.aremember("I like black coffee", who="alice")
    assert await mem.aforget(who="alice") == 1
    with pytest.raises(InvalidArgument):
        await mem.aforget()


def test_opens_and_closes_its_own_file(db_location, hash_embedder):
    path = db_location
    with MinimalAdapter(path, embedder=hash_embedder, ner="regex") as mem:
        entry_id = mem.remember("Alice prefers window seats", who="alice")
    with MinimalAdapter(path, embedder=hash_embedder, ner="regex") as again:
        assert again.db.sync.get(entry_id).text == "Alice prefers window seats"
    with pytest.raises(ClosedError):
        again.remember("more")


def test_an_agentbase_it_did_not_open_stays_open(db):
    MinimalAdapter(db).close()
    assert not db.sync.closed


def test_options_need_a_path(db):
    with pytest.raises(TypeError, match=r"options \['ner'\] only apply when MinimalAdapter opens the file itself"):
        MinimalAdapter(db, ner="regex")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=120).filter(lambda t: t.strip() and "\x00" not in t))
def test_remember_then_get_round_trips(mem, kernel, text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert kernel.get(mem.remember(text, who="prop")).text == text


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_recall_never_returns_a_forgotten_id(mem, data):
    mem.forget(who="prop")
    texts = data.draw(st.lists(st.sampled_from(["tea time", "tea leaves", "green tea", "tea pot"]), min_size=1, unique=True))
    ids = [mem.remember(t, who="prop") for t in texts]
    gone = data.draw(st.sampled_from(ids))
    mem.forget(gone)
    assert gone not in {h.id for h in mem.recall("tea", who="prop", top_k=10)}
