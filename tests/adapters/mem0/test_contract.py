"""One contract, four runs: real mem0 2.2.1 (sync, async) and agentbase (sync, async), offline.

Each test is written once against ``Harness`` (see conftest.py) and asserts what user code can
observe: keys, types, id/hash/timestamp formats, ordering rules, scoping and exception types.
Scores and the order of ``get_all`` are not compared (mem0's follows Qdrant's id order).
Behaviour ported from mem0's own tests (contracts A.7) is marked "mem0 tests:".
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import date, datetime, timedelta, timezone

import pytest

ADD_KEYS = {"id", "memory", "event", "actor_id", "role"}
CORE_KEYS = {"id", "memory", "hash", "metadata", "score", "created_at", "updated_at"}
HISTORY_KEYS = {"id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted", "actor_id", "role"}


def _is_uuid4(value: str) -> bool:
    return uuid.UUID(value).version == 4 and str(uuid.UUID(value)) == value


def _is_utc_iso(value: str) -> bool:
    return value.endswith("+00:00") and datetime.fromisoformat(value).tzinfo is not None


async def _seed(memory, user="alice"):
    texts = ["I like pizza with extra cheese", "My dog is called Rex", "I work as a nurse at night"]
    ids = []
    for text in texts:
        ids.append((await memory.add(text, user_id=user, infer=False))["results"][0]["id"])
    return dict(zip(texts, ids))


# ---------------------------------------------------------------------------- add


async def test_add_string_returns_one_add_event(memory):
    result = await memory.add("I like pizza", user_id="alice", infer=False)
    assert list(result) == ["results"]
    [item] = result["results"]
    assert set(item) == ADD_KEYS
    assert item["event"] == "ADD" and item["memory"] == "I like pizza"
    assert item["role"] == "user" and item["actor_id"] is None
    assert _is_uuid4(item["id"])


async def test_add_messages_skips_system_and_keeps_name_as_actor(memory):
    result = await memory.add(
        [
            {"role": "system", "content": "You are helpful"},
            {"role": "user", "content": "I like green tea", "name": "bob"},
            {"role": "assistant", "content": "Noted, green tea it is"},
        ],
        user_id="alice",
        infer=False,
    )
    rows = result["results"]
    assert [r["memory"] for r in rows] == ["I like green tea", "Noted, green tea it is"]
    assert [r["role"] for r in rows] == ["user", "assistant"]
    assert [r["actor_id"] for r in rows] == ["bob", None]
    got = await memory.get(rows[0]["id"])
    assert got["actor_id"] == "bob" and got["role"] == "user"


async def test_add_single_message_dict(memory):
    rows = (await memory.add({"role": "user", "content": "I live in Lisbon"}, agent_id="bot", infer=False))["results"]
    assert [r["memory"] for r in rows] == ["I live in Lisbon"]


async def test_add_without_any_id_raises_mem0_validation_error(memory, mem0_offline):
    with pytest.raises(mem0_offline.exceptions.ValidationError) as info:
        await memory.add("I like pizza", infer=False)
    assert info.value.error_code == "VALIDATION_001"


async def test_add_bad_messages_type_raises_validation_error(memory, mem0_offline):
    with pytest.raises(mem0_offline.exceptions.ValidationError) as info:
        await memory.add(12345, user_id="alice", infer=False)
    assert info.value.error_code == "VALIDATION_003"


async def test_add_bad_memory_type(memory, mem0_offline):
    if memory.mode == "sync":
        with pytest.raises(mem0_offline.exceptions.ValidationError) as info:
            await memory.add("x", user_id="alice", memory_type="semantic_memory")
        assert info.value.error_code == "VALIDATION_002"
    else:  # mem0's AsyncMemory raises a plain ValueError here
        with pytest.raises(ValueError):
            await memory.add("x", user_id="alice", memory_type="semantic_memory")


@pytest.mark.parametrize("bad", [pytest.param("a b", id="inner-space"), pytest.param("   ", id="blank"), pytest.param("", id="empty")])
async def test_add_rejects_malformed_ids(memory, bad):
    # mem0 tests: entity ids with whitespace or blank are a ValueError
    with pytest.raises(ValueError):
        await memory.add("I like pizza", user_id=bad, infer=False)


async def test_ids_are_trimmed_and_ints_coerced(memory):
    # mem0 tests: integer ids become strings, surrounding whitespace is trimmed
    await memory.add("I like pizza", user_id=42, infer=False)
    await memory.add("I like tea", user_id="  bob  ", infer=False)
    [row] = (await memory.get_all(filters={"user_id": "42"}))["results"]
    assert row["user_id"] == "42"
    [row] = (await memory.get_all(filters={"user_id": "bob"}))["results"]
    assert row["user_id"] == "bob"


async def test_identity_keys_in_metadata_are_dropped(memory):
    # mem0 tests: scope cannot be set through metadata
    [item] = (await memory.add("I like pizza", user_id="alice", metadata={"user_id": "eve", "run_id": "r", "topic": "food"}, infer=False))["results"]
    got = await memory.get(item["id"])
    assert got["user_id"] == "alice" and "run_id" not in got
    assert got["metadata"] == {"topic": "food"}
    assert (await memory.get_all(filters={"user_id": "eve"}))["results"] == []


async def test_add_infer_true_reports_add_events_and_dedups(memory):
    text = "My name is Alice and I love sushi"
    memory.give_llm_facts(["Name is Alice", "Loves sushi"])
    first = (await memory.add(text, user_id="alice"))["results"]
    assert first and all(set(r) == {"id", "memory", "event"} and r["event"] == "ADD" for r in first)
    assert all(_is_uuid4(r["id"]) for r in first)
    stored = {r["memory"] for r in (await memory.get_all(filters={"user_id": "alice"}))["results"]}
    assert {r["memory"] for r in first} <= stored
    # the same content again: every fact is an md5 duplicate, nothing is added
    assert (await memory.add(text, user_id="alice"))["results"] == []
    assert len((await memory.get_all(filters={"user_id": "alice"}))["results"]) == len(stored)


async def test_procedural_memory_needs_agent_id_and_is_one_memory(memory):
    memory.give_llm_facts([])
    result = await memory.add(
        [{"role": "user", "content": "Open the editor"}, {"role": "assistant", "content": "Ran the tests"}],
        agent_id="coder",
        memory_type="procedural_memory",
    )
    [item] = result["results"]
    assert set(item) == {"id", "memory", "event"} and item["event"] == "ADD" and item["memory"]
    got = await memory.get(item["id"])
    assert got["agent_id"] == "coder"
    assert got["metadata"] == {"memory_type": "procedural_memory"}


# ---------------------------------------------------------------------------- get / get_all


async def test_get_shape_hash_and_timestamps(memory):
    [item] = (await memory.add("I like pizza", user_id="alice", metadata={"topic": "food", "stars": 5}, infer=False))["results"]
    got = await memory.get(item["id"])
    assert set(got) == CORE_KEYS | {"user_id", "role"}
    assert got["id"] == item["id"] and got["memory"] == "I like pizza"
    assert got["hash"] == hashlib.md5(b"I like pizza").hexdigest()
    assert got["score"] is None
    assert got["metadata"] == {"topic": "food", "stars": 5}
    assert _is_utc_iso(got["created_at"]) and got["created_at"] == got["updated_at"]


async def test_get_without_custom_metadata_has_metadata_none(memory):
    [item] = (await memory.add("I like pizza", run_id="run-1", infer=False))["results"]
    got = await memory.get(item["id"])
    assert got["metadata"] is None and got["run_id"] == "run-1" and "user_id" not in got


async def test_get_missing_returns_none(memory):
    assert await memory.get(str(uuid.uuid4())) is None


async def test_get_all_shape_has_no_score_and_is_scoped(memory):
    await _seed(memory, "alice")
    await memory.add("I like tea", user_id="bob", infer=False)
    rows = (await memory.get_all(filters={"user_id": "alice"}))["results"]
    assert len(rows) == 3
    assert all(set(r) == CORE_KEYS - {"score"} | {"user_id", "role"} for r in rows)
    assert {r["user_id"] for r in rows} == {"alice"}


async def test_get_all_top_k(memory):
    await _seed(memory)
    assert len((await memory.get_all(filters={"user_id": "alice"}, top_k=2))["results"]) == 2
    zero = (await memory.get_all(filters={"user_id": "alice"}, top_k=0))["results"]
    # mem0 2.2.1 checks its limit only after appending, so top_k=0 still yields one memory
    assert len(zero) == (1 if memory.impl == "mem0" else 0)


async def test_scope_filters_are_anded(memory):
    await memory.add("I like pizza", user_id="alice", agent_id="chef", infer=False)
    await memory.add("I like tea", user_id="alice", agent_id="barista", infer=False)
    rows = (await memory.get_all(filters={"user_id": "alice", "agent_id": "chef"}))["results"]
    assert [r["memory"] for r in rows] == ["I like pizza"]


async def test_get_all_needs_an_entity_filter(memory):
    with pytest.raises(ValueError):
        await memory.get_all(filters={"topic": "food"})
    with pytest.raises(ValueError):
        await memory.get_all()


async def test_get_all_rejects_negative_top_k(memory):
    with pytest.raises(ValueError):
        await memory.get_all(filters={"user_id": "alice"}, top_k=-1)


# ---------------------------------------------------------------------------- search


async def test_search_shape_order_and_relevance(memory):
    await _seed(memory)
    rows = (await memory.search("what food do I like?", filters={"user_id": "alice"}, threshold=0.0))["results"]
    assert rows, "a relevant memory must be found"
    assert all(set(r) == CORE_KEYS | {"user_id", "role"} and isinstance(r["score"], float) for r in rows)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert rows[0]["memory"] == "I like pizza with extra cheese"


async def test_search_top_k_and_scope(memory):
    await _seed(memory)
    await memory.add("I like pizza margherita", user_id="bob", infer=False)
    rows = (await memory.search("pizza", filters={"user_id": "alice"}, top_k=1, threshold=0.0))["results"]
    assert len(rows) == 1 and rows[0]["user_id"] == "alice"


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"query": ""}, id="empty-query"),
        pytest.param({"query": "   "}, id="blank-query"),
        pytest.param({"threshold": 2}, id="threshold-above-1"),
        pytest.param({"threshold": -0.1}, id="threshold-negative"),
        pytest.param({"top_k": -1}, id="negative-top-k"),
        pytest.param({"filters": {"topic": "food"}}, id="no-entity-filter"),
        pytest.param({"filters": {"user_id": "alice", "topic": {"regex": "f.*"}}}, id="unknown-operator"),
    ],
)
async def test_search_validation_errors(memory, kwargs):
    args = {"query": "pizza", "filters": {"user_id": "alice"}, **kwargs}
    with pytest.raises(ValueError):
        await memory.search(args.pop("query"), **args)


@pytest.mark.parametrize("threshold", [0, 1, 0.5])
async def test_search_threshold_bounds_are_accepted(memory, threshold):
    # mem0 tests: threshold 0 and 1 are valid
    await memory.add("I like pizza", user_id="alice", infer=False)
    assert isinstance((await memory.search("pizza", filters={"user_id": "alice"}, threshold=threshold))["results"], list)


async def test_search_query_is_trimmed(memory):
    await memory.add("I like pizza", user_id="alice", infer=False)
    rows = (await memory.search("   pizza   ", filters={"user_id": "alice"}, threshold=0.0))["results"]
    assert rows and rows[0]["memory"] == "I like pizza"


async def test_search_explain_adds_score_details(memory):
    await memory.add("I like pizza", user_id="alice", infer=False)
    [row] = (await memory.search("pizza", filters={"user_id": "alice"}, threshold=0.0, explain=True))["results"]
    assert "score_details" in row


# ---------------------------------------------------------------------------- metadata filters

FILTER_CASES = {
    "exact": ({"topic": "food"}, {"pizza", "sushi"}),
    "eq": ({"topic": {"eq": "pets"}}, {"dog"}),
    "ne-skips-missing": ({"topic": {"ne": "food"}}, {"dog"}),
    "gt": ({"stars": {"gt": 3}}, {"pizza"}),
    "gte": ({"stars": {"gte": 3}}, {"pizza", "sushi"}),
    "lt": ({"stars": {"lt": 5}}, {"sushi", "dog"}),
    "lte": ({"stars": {"lte": 1}}, {"dog"}),
    "range": ({"stars": {"gte": 2, "lte": 4}}, {"sushi"}),
    "in": ({"topic": {"in": ["pets", "work"]}}, {"dog"}),
    "nin": ({"topic": {"nin": ["pets"]}}, {"pizza", "sushi"}),
    "contains": ({"note": {"contains": "cheese"}}, {"pizza"}),
    "wildcard": ({"topic": "*"}, {"pizza", "sushi", "dog", "nurse"}),
    "or": ({"OR": [{"topic": "pets"}, {"stars": 5}]}, {"pizza", "dog"}),
    "and": ({"AND": [{"topic": "food"}, {"stars": {"lt": 5}}]}, {"sushi"}),
    "not": ({"NOT": [{"topic": "food"}]}, {"dog", "nurse"}),
}


async def _seed_metadata(memory):
    rows = [
        ("I like pizza", {"topic": "food", "stars": 5, "note": "extra cheese please"}),
        ("I like sushi", {"topic": "food", "stars": 3}),
        ("My dog is Rex", {"topic": "pets", "stars": 1}),
        ("I am a nurse", None),
    ]
    for text, meta in rows:
        await memory.add(text, user_id="alice", metadata=meta, infer=False)
    await memory.add("I like pizza too", user_id="bob", metadata={"topic": "food", "stars": 5}, infer=False)


def _keys(rows):
    names = {"I like pizza": "pizza", "I like sushi": "sushi", "My dog is Rex": "dog", "I am a nurse": "nurse"}
    return {names[r["memory"]] for r in rows}


async def test_metadata_filter_operators(memory):
    """Every operator of Mem0's filter language, on get_all and on search, against one seeded store."""
    await _seed_metadata(memory)
    got_all, got_search = {}, {}
    for name, (extra, _) in FILTER_CASES.items():
        got_all[name] = _keys((await memory.get_all(filters={"user_id": "alice", **extra}))["results"])
        rows = (await memory.search("what do I like", filters={"user_id": "alice", **extra}, threshold=0.0))["results"]
        got_search[name] = _keys(rows)
    expected = {name: want for name, (_, want) in FILTER_CASES.items()}
    assert got_all == expected
    assert got_search == expected


# ---------------------------------------------------------------------------- expiration


async def test_expired_memories_are_hidden_unless_asked(memory):
    # mem0 tests: expiration_date hides a memory from get_all and search, get still returns it
    past = (date.today() - timedelta(days=2)).isoformat()
    future = date.today() + timedelta(days=30)
    [old] = (await memory.add("I like pizza", user_id="alice", expiration_date=past, infer=False))["results"]
    [new] = (await memory.add("I like pasta", user_id="alice", expiration_date=future, infer=False))["results"]
    visible = (await memory.get_all(filters={"user_id": "alice"}))["results"]
    assert [r["id"] for r in visible] == [new["id"]]
    assert visible[0]["expiration_date"] == future.isoformat()
    every = (await memory.get_all(filters={"user_id": "alice"}, show_expired=True))["results"]
    assert {r["id"] for r in every} == {old["id"], new["id"]}
    found = (await memory.search("pizza", filters={"user_id": "alice"}, threshold=0.0))["results"]
    assert old["id"] not in {r["id"] for r in found}
    found = (await memory.search("pizza", filters={"user_id": "alice"}, threshold=0.0, show_expired=True))["results"]
    assert old["id"] in {r["id"] for r in found}
    got = await memory.get(old["id"])
    assert got is not None and got["expiration_date"] == past


async def test_bad_expiration_date_is_a_value_error(memory):
    with pytest.raises(ValueError):
        await memory.add("I like pizza", user_id="alice", expiration_date="next tuesday", infer=False)


# ---------------------------------------------------------------------------- update / delete / history


async def test_update_changes_text_keeps_created_at_merges_metadata(memory):
    # mem0 tests: created_at preserved, updated_at bumped, metadata preserved on update
    [item] = (await memory.add("I like pizza", user_id="alice", metadata={"topic": "food"}, infer=False))["results"]
    before = await memory.get(item["id"])
    assert await memory.update(item["id"], "I love pizza", metadata={"stars": 5}) == {"message": "Memory updated successfully!"}
    after = await memory.get(item["id"])
    assert after["memory"] == "I love pizza"
    assert after["hash"] == hashlib.md5(b"I love pizza").hexdigest()
    assert after["created_at"] == before["created_at"]
    assert after["updated_at"] > before["updated_at"] and _is_utc_iso(after["updated_at"])
    assert after["metadata"] == {"topic": "food", "stars": 5}
    assert after["user_id"] == "alice"


async def test_metadata_only_update_keeps_text_and_identity(memory):
    # mem0 tests (test_metadata_only_update.py): a payload-only update keeps text, hash, created_at and scope,
    # refuses identity keys and does not mutate the caller's dict
    [item] = (await memory.add("prefers concise answers", user_id="owner", metadata={"reviewed": False, "source": "chat"},
                               expiration_date="2099-01-01", infer=False))["results"]
    before = await memory.get(item["id"])
    changes = {"user_id": "other", "agent_id": "injected", "reviewed": True}
    assert await memory.update(item["id"], metadata=changes) == {"message": "Memory updated successfully!"}
    assert changes == {"user_id": "other", "agent_id": "injected", "reviewed": True}
    after = await memory.get(item["id"])
    for key in ("memory", "hash", "created_at", "user_id", "expiration_date"):
        assert after[key] == before[key]
    assert "agent_id" not in after and after["updated_at"] >= before["updated_at"]
    assert after["metadata"] == {"reviewed": True, "source": "chat"}
    updates = [row for row in await memory.history(item["id"]) if row["event"] == "UPDATE"]
    # mem0 records an UPDATE row with old == new text; the kernel records only text changes (compat doc)
    assert len(updates) == (1 if memory.impl == "mem0" else 0)


async def test_inputs_are_not_mutated_and_actor_id_filters(memory):
    # mem0 tests (test_filters_and_metadata.py): caller dicts stay as they were; actor_id is a filter key
    metadata = {"topic": "food", "user_id": "eve"}
    await memory.add([{"role": "user", "content": "I like pizza", "name": "bob"},
                      {"role": "user", "content": "I like tea", "name": "carol"}], user_id="alice", metadata=metadata, infer=False)
    assert metadata == {"topic": "food", "user_id": "eve"}
    filters = {"user_id": "alice", "actor_id": "bob"}
    rows = (await memory.get_all(filters=filters))["results"]
    assert [r["memory"] for r in rows] == ["I like pizza"]
    found = (await memory.search("I like", filters=filters, threshold=0.0))["results"]
    assert [r["memory"] for r in found] == ["I like pizza"]
    assert filters == {"user_id": "alice", "actor_id": "bob"}


async def test_update_data_alias_and_identity_keys(memory):
    [item] = (await memory.add("I like pizza", user_id="alice", infer=False))["results"]
    await memory.update(item["id"], data="I like pasta", metadata={"user_id": "eve"})
    got = await memory.get(item["id"])
    assert got["memory"] == "I like pasta" and got["user_id"] == "alice" and got["metadata"] is None


async def test_update_expiration_date_set_and_clear(memory):
    [item] = (await memory.add("I like pizza", user_id="alice", infer=False))["results"]
    await memory.update(item["id"], expiration_date="2000-01-01")
    assert (await memory.get(item["id"]))["expiration_date"] == "2000-01-01"
    assert (await memory.get_all(filters={"user_id": "alice"}))["results"] == []
    await memory.update(item["id"], expiration_date=None)
    assert (await memory.get(item["id"])).get("expiration_date") is None
    assert len((await memory.get_all(filters={"user_id": "alice"}))["results"]) == 1


async def test_update_errors(memory):
    # mem0 tests: missing id on update is a ValueError; so is an update with nothing in it
    with pytest.raises(ValueError):
        await memory.update(str(uuid.uuid4()), "text")
    [item] = (await memory.add("I like pizza", user_id="alice", infer=False))["results"]
    with pytest.raises(ValueError):
        await memory.update(item["id"])


async def test_delete_then_get_is_none_and_missing_delete_raises(memory):
    [item] = (await memory.add("I like pizza", user_id="alice", infer=False))["results"]
    assert await memory.delete(item["id"]) == {"message": "Memory deleted successfully!"}
    assert await memory.get(item["id"]) is None
    with pytest.raises(ValueError):
        await memory.delete(item["id"])


async def test_history_add_update_delete(memory):
    [item] = (await memory.add("I like pizza", user_id="alice", infer=False))["results"]
    await memory.update(item["id"], "I love pizza")
    await memory.delete(item["id"])
    rows = await memory.history(item["id"])
    assert [r["event"] for r in rows] == ["ADD", "UPDATE", "DELETE"]
    assert all(set(r) == HISTORY_KEYS and r["memory_id"] == item["id"] for r in rows)
    assert [(r["old_memory"], r["new_memory"]) for r in rows] == [
        (None, "I like pizza"), ("I like pizza", "I love pizza"), ("I love pizza", None)
    ]
    assert [r["is_deleted"] for r in rows] == [False, False, True]
    assert len({r["created_at"] for r in rows}) == 1  # always the memory's creation time
    assert len({r["id"] for r in rows}) == 3 and all(isinstance(r["id"], str) and r["id"] for r in rows)
    assert rows[0]["role"] == "user"


async def test_history_unknown_id_is_empty(memory):
    assert await memory.history(str(uuid.uuid4())) == []


async def test_delete_all_is_scoped_and_needs_an_id(memory):
    await _seed(memory, "alice")
    await memory.add("I like tea", user_id="bob", infer=False)
    with pytest.raises(ValueError):
        await memory.delete_all()
    assert await memory.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert (await memory.get_all(filters={"user_id": "alice"}))["results"] == []
    assert len((await memory.get_all(filters={"user_id": "bob"}))["results"]) == 1
    assert await memory.delete_all(user_id="nobody") == {"message": "Memories deleted successfully!"}


async def test_reset_wipes_everything_and_stays_usable(memory):
    await _seed(memory)
    assert await memory.reset() is None
    assert (await memory.get_all(filters={"user_id": "alice"}))["results"] == []
    await memory.add("I like tea", user_id="alice", infer=False)
    assert len((await memory.get_all(filters={"user_id": "alice"}))["results"]) == 1


# ---------------------------------------------------------------------------- misc surface


async def test_top_level_ids_in_search_follow_each_style(memory):
    """mem0 2.x refuses 1.x-style ``search(q, user_id=...)``; agentbase accepts it (compat doc)."""
    await memory.add("I like pizza", user_id="alice", infer=False)
    if memory.impl == "mem0":
        with pytest.raises(ValueError):
            await memory.search("pizza", user_id="alice")
        return
    rows = (await memory.search("pizza", user_id="alice", limit=5))["results"]
    assert [r["memory"] for r in rows] == ["I like pizza"]


async def test_timestamp_follows_each_implementation(memory):
    """mem0 OSS refuses ``timestamp``; agentbase stores it as the creation time (compat doc)."""
    when = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    if memory.impl == "mem0":
        with pytest.raises(ValueError):
            await memory.add("I like pizza", user_id="alice", timestamp=int(when.timestamp()), infer=False)
        return
    [item] = (await memory.add("I like pizza", user_id="alice", timestamp=int(when.timestamp()), infer=False))["results"]
    assert (await memory.get(item["id"]))["created_at"] == when.isoformat()


async def test_reference_date_follows_each_implementation(memory):
    """mem0 OSS refuses ``reference_date``; agentbase resolves relative dates against it (compat doc)."""
    await memory.add("I went hiking yesterday", user_id="alice", infer=False)
    if memory.impl == "mem0":
        with pytest.raises(ValueError):
            await memory.search("hiking", filters={"user_id": "alice"}, reference_date="2024-05-01")
        return
    rows = (await memory.search("hiking", filters={"user_id": "alice"}, reference_date="2024-05-01"))["results"]
    assert [r["memory"] for r in rows] == ["I went hiking yesterday"]


async def test_rerank_flag_is_accepted(memory):
    await _seed(memory)
    plain = (await memory.search("pizza", filters={"user_id": "alice"}, threshold=0.0))["results"]
    reranked = (await memory.search("pizza", filters={"user_id": "alice"}, threshold=0.0, rerank=True))["results"]
    assert [r["id"] for r in reranked] == [r["id"] for r in plain]


async def test_chat_is_not_implemented(memory):
    with pytest.raises(NotImplementedError):
        await memory.chat("hello")


async def test_project_update_is_a_value_error(memory):
    with pytest.raises(ValueError):
        result = memory.target.project.update(custom_instructions="x")
        if memory.mode == "async":
            await result


async def test_close_is_safe_twice(memory):
    memory.target.close()
    memory.target.close()
