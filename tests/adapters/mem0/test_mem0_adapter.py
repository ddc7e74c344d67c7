"""agentbase's Mem0 adapter on its own: what it adds to, or does differently from, real mem0.

Fast: the hash-embedder ``db`` fixture. The shared behaviour is in test_contract.py.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sys
import threading
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbase_adapters.mem0 import (
    AsyncMemory,
    Mem0Adapter,
    Memory,
    MemoryNotFound,
    ValidationError,
    _embedder_spec,
)
from agentbase_kernel import AgentBase, ClosedError, EntryNotFound, InvalidArgument, Kernel
from agentbase_kernel.errors import AgentBaseError

# ---------------------------------------------------------------------------- the 1.x calling style


def test_search_and_get_all_accept_1x_top_level_ids_and_limit(m0):
    for text in ["I like pizza", "I like pasta", "I like sushi"]:
        m0.add(text, user_id="alice", infer=False)
    m0.add("I like pizza too", user_id="bob", infer=False)
    rows = m0.search("pizza", user_id="alice", limit=2, threshold=0.0)["results"]
    assert len(rows) == 2 and {r["user_id"] for r in rows} == {"alice"}
    assert rows[0]["memory"] == "I like pizza"
    assert len(m0.get_all(user_id="alice", limit=2)["results"]) == 2
    assert len(m0.get_all(user_id="alice")["results"]) == 3


def test_1x_update_with_positional_data(m0):
    [item] = m0.add("I like pizza", user_id="alice", infer=False)["results"]
    assert m0.update(item["id"], "I like pasta") == {"message": "Memory updated successfully!"}
    assert m0.get(item["id"])["memory"] == "I like pasta"


def test_update_data_keyword_logs_deprecation(m0, caplog):
    [item] = m0.add("I like pizza", user_id="alice", infer=False)["results"]
    with caplog.at_level(logging.WARNING, logger="agentbase_adapters.mem0"):
        m0.update(item["id"], data="I like pasta")
    assert "`data` is deprecated" in caplog.text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"top_k": 3, "limit": 5}, "search() got top_k=3 and limit=5 - use top_k only", id="top_k-and-limit"),
        pytest.param(
            {"filters": {"user_id": "alice"}, "user_id": "bob"},
            "search() got user_id='bob' and filters['user_id']='alice' - pass it once",
            id="conflicting-user",
        ),
    ],
)
def test_conflicting_styles_are_refused(m0, kwargs, message):
    with pytest.raises(ValueError) as info:
        m0.search("pizza", **kwargs)
    assert str(info.value) == message


def test_unknown_keyword_arguments_are_logged(m0, caplog):
    m0.add("I like pizza", user_id="alice", infer=False)
    with caplog.at_level(logging.WARNING, logger="agentbase_adapters.mem0"):
        m0.search("pizza", filters={"user_id": "alice"}, version="v2")
    assert "ignored unsupported arguments ['version']" in caplog.text


# ---------------------------------------------------------------------------- errors


def test_scope_error_is_ours_and_a_value_error():
    with pytest.raises(ValidationError) as info:
        Mem0Adapter(AgentBase(None, embedder=None)).add("hi", infer=False)
    assert isinstance(info.value, AgentBaseError) and isinstance(info.value, ValueError)
    assert info.value.error_code == "VALIDATION_001"
    assert str(info.value) == "One of user_id, agent_id or run_id is required to scope a memory"


def test_scope_error_is_mem0s_validation_error_once_mem0_is_loaded(m0, mem0_offline):
    with pytest.raises(mem0_offline.exceptions.ValidationError):
        m0.add("hi", infer=False)
    with pytest.raises(mem0_offline.exceptions.MemoryError):
        m0.add(3.5, user_id="alice")


def test_scope_error_without_mem0_loaded_is_plain(m0, monkeypatch):
    monkeypatch.delitem(sys.modules, "mem0.exceptions", raising=False)
    with pytest.raises(ValidationError) as info:
        m0.add("hi", infer=False)
    assert type(info.value) is ValidationError


def test_missing_memory_error_is_value_error_and_entry_not_found(m0):
    missing = str(uuid.uuid4())
    with pytest.raises(MemoryNotFound) as info:
        m0.delete(missing)
    assert isinstance(info.value, ValueError) and isinstance(info.value, EntryNotFound) and isinstance(info.value, KeyError)
    assert str(info.value) == f"Memory with id {missing} not found"
    with pytest.raises(MemoryNotFound, match="Please provide a valid 'memory_id'"):
        m0.update(missing, "x")


def test_empty_message_text_is_a_clear_error(m0):
    with pytest.raises(InvalidArgument, match="text is empty"):
        m0.add("   ", user_id="alice", infer=False)


def test_updating_to_another_memorys_text_is_refused(m0):
    m0.add("I like pizza", user_id="alice", infer=False)
    [item] = m0.add("I like pasta", user_id="alice", infer=False)["results"]
    with pytest.raises(ValueError, match="already has this text"):
        m0.update(item["id"], "I like pizza")


def test_get_and_history_of_non_string_ids(m0):
    assert m0.get(None) is None
    assert m0.history("") == []


# ---------------------------------------------------------------------------- add


def test_duplicate_infer_false_returns_existing_id_as_none_event(m0, kernel):
    [first] = m0.add("I like pizza", user_id="alice", infer=False)["results"]
    [again] = m0.add("I like pizza", user_id="alice", infer=False)["results"]
    assert again == {**first, "event": "NONE"}
    assert kernel.count(user_id="alice") == 1


def test_infer_true_stores_message_and_extracted_facts_without_llm(m0, kernel):
    rows = m0.add("My name is Alice. I love sushi.", user_id="alice")["results"]
    assert all(r["event"] == "ADD" for r in rows)
    texts = [r["memory"] for r in rows]
    assert texts[0] == "My name is Alice. I love sushi." and len(texts) >= 2, texts
    facts = [m0.get(r["id"]) for r in rows[1:]]
    assert all(f["attributed_to"] == "user" and "role" not in f and f["metadata"] is None for f in facts)
    assert {e.id for e in kernel.list(user_id="alice")} == {r["id"] for r in rows}


def test_a_newer_fact_supersedes_the_older_one(m0):
    old_fact = m0.add("I live in Paris.", user_id="alice")["results"][-1]
    new_fact = m0.add("I live in Berlin.", user_id="alice")["results"][-1]
    assert (old_fact["memory"], new_fact["memory"]) == ("User lives in Paris", "User lives in Berlin")
    listed = [r["memory"] for r in m0.get_all(filters={"user_id": "alice"})["results"]]
    assert listed == ["I live in Paris.", "I live in Berlin.", "User lives in Berlin"]
    assert m0.get(old_fact["id"])["memory"] == "User lives in Paris"


def test_infer_true_facts_inherit_the_expiration_date(m0):
    rows = m0.add("I love sushi.", user_id="alice", expiration_date="2001-01-01")["results"]
    assert len(rows) >= 2
    assert m0.get_all(filters={"user_id": "alice"})["results"] == []
    assert {r["id"] for r in m0.get_all(filters={"user_id": "alice"}, show_expired=True)["results"]} == {r["id"] for r in rows}


def test_run_id_is_the_kernel_session_id(m0, kernel):
    [item] = m0.add("We are planning the trip", run_id="trip-42", user_id="alice", infer=False)["results"]
    entry = kernel.get(item["id"])
    assert entry.session_id == "trip-42" and entry.user_id == "alice"
    assert [r["id"] for r in m0.get_all(filters={"run_id": "trip-42"})["results"]] == [item["id"]]


@pytest.mark.parametrize(
    "when",
    [
        pytest.param(datetime(2030, 5, 1, 9, 30), id="naive"),
        # mem0 tests (test_expiration_tz.py): an aware datetime keeps the caller's calendar day
        pytest.param(datetime(2030, 5, 1, 23, 30, tzinfo=timezone(timedelta(hours=8))), id="aware-plus-8"),
        pytest.param("2030-05-01", id="string"),
    ],
)
def test_expiration_date_is_the_end_of_that_day(m0, kernel, when):
    [item] = m0.add("I like pizza", user_id="alice", expiration_date=when, infer=False)["results"]
    assert kernel.get(item["id"]).expires_at == datetime(2030, 5, 2, tzinfo=timezone.utc)
    assert m0.get(item["id"])["expiration_date"] == "2030-05-01"


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        pytest.param(1714564800, "2024-05-01T12:00:00+00:00", id="unix"),
        pytest.param("2024-05-01T14:00:00+02:00", "2024-05-01T12:00:00+00:00", id="iso-offset"),
        pytest.param(datetime(2024, 5, 1, 12), "2024-05-01T12:00:00+00:00", id="naive-is-utc"),
    ],
)
def test_timestamp_sets_created_at(m0, timestamp, expected):
    [item] = m0.add("I like pizza", user_id="alice", timestamp=timestamp, infer=False)["results"]
    assert m0.get(item["id"])["created_at"] == expected


def test_bad_timestamp_is_a_value_error(m0):
    with pytest.raises(ValueError, match="ISO 8601"):
        m0.add("I like pizza", user_id="alice", timestamp="yesterday-ish", infer=False)


def test_procedural_memory_is_a_skill_transcript_without_llm(m0, kernel):
    [item] = m0.add(
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "Deploy the app"},
         {"role": "assistant", "content": "Ran make deploy"}],
        agent_id="ops", memory_type="procedural_memory",
    )["results"]
    entry = kernel.get(item["id"])
    assert entry.context_type.value == "skill" and entry.agent_id == "ops"
    assert entry.text == "system: be brief\nuser: Deploy the app\nassistant: Ran make deploy"


def test_procedural_memory_uses_the_llm_hook_when_enabled(m0, fake_llm):
    m0.llm = fake_llm([])
    [item] = m0.add("Deploy the app", agent_id="ops", memory_type="procedural_memory", prompt="Steps only")["results"]
    assert item["memory"] == "1. Open the editor\n2. Run the tests" and m0.llm.calls == 1
    assert m0.llm.messages[0] == {"role": "system", "content": "Steps only"}
    assert m0.llm.messages[1] == {"role": "user", "content": "Deploy the app"}


def test_infer_true_never_calls_the_llm_hook(m0, fake_llm):
    m0.llm = fake_llm(["never used"])
    m0.add("I love sushi.", user_id="alice")
    assert m0.llm.calls == 0


async def test_async_procedural_memory_with_a_langchain_model(am0):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["1. Check out\n2. Deploy"])
    [item] = (await am0.add("Deploy the app", agent_id="ops", memory_type="procedural_memory", llm=model))["results"]
    assert item["memory"] == "1. Check out\n2. Deploy"


def test_procedural_memory_without_agent_id_is_a_normal_memory(m0, kernel):
    [item] = m0.add("Deploy the app", user_id="alice", memory_type="procedural_memory", infer=False)["results"]
    assert kernel.get(item["id"]).context_type.value == "memory"


def test_content_parts_are_joined(m0):
    [item] = m0.add({"role": "user", "content": [{"type": "text", "text": "I like"}, {"type": "image_url"},
                                                  {"type": "text", "text": "pizza"}]}, user_id="alice", infer=False)["results"]
    assert item["memory"] == "I like\npizza"


def test_invalid_messages_are_skipped_with_a_warning(m0, caplog):
    with caplog.at_level(logging.WARNING, logger="agentbase_adapters.mem0"):
        rows = m0.add([{"content": "no role"}, {"role": "user", "content": "I like pizza"}], user_id="a", infer=False)
    assert [r["memory"] for r in rows["results"]] == ["I like pizza"]
    assert "skipped a message" in caplog.text


def test_identity_metadata_warns(m0, caplog):
    with caplog.at_level(logging.WARNING, logger="agentbase_adapters.mem0"):
        m0.add("I like pizza", user_id="alice", metadata={"agent_id": "x"}, infer=False)
    assert "ignored metadata['agent_id']" in caplog.text


# ---------------------------------------------------------------------------- filters (ours)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        pytest.param({"note": {"icontains": "CHEESE"}}, {"pizza"}, id="icontains-ignores-case"),
        pytest.param({"note": {"contains": "CHEESE"}}, set(), id="contains-keeps-case"),
        pytest.param({"note": {"contains": "chee"}}, {"pizza"}, id="contains-is-substring"),
        pytest.param({"flag": True}, {"sushi"}, id="bool-is-not-int"),
        pytest.param({"stars": 1}, {"dog"}, id="int-exact"),
        pytest.param({"topic": ["pets", "work"]}, {"dog"}, id="list-shorthand"),
        pytest.param({"stars": [1, "five"]}, {"dog"}, id="mixed-list"),
        pytest.param({"when": {"gte": "2024-03-01"}}, {"sushi"}, id="date-range"),
        pytest.param({"role": "user"}, {"pizza", "sushi", "dog"}, id="promoted-key"),
        pytest.param({"NOT": [{"topic": "food"}], "stars": {"lt": 3}}, {"dog"}, id="not-and-field"),
    ],
)
def test_filter_semantics(m0, extra, expected):
    m0.add("I like pizza", user_id="alice", metadata={"topic": "food", "stars": 5, "note": "extra cheese"}, infer=False)
    m0.add("I like sushi", user_id="alice", metadata={"topic": "food", "flag": True, "when": "2024-04-01"}, infer=False)
    m0.add("My dog is Rex", user_id="alice", metadata={"topic": "pets", "stars": 1, "flag": 1, "when": "2024-01-01"}, infer=False)
    names = {"I like pizza": "pizza", "I like sushi": "sushi", "My dog is Rex": "dog"}
    got = {names[r["memory"]] for r in m0.get_all(filters={"user_id": "alice", **extra})["results"]}
    assert got == expected
    found = {names[r["memory"]] for r in m0.search("like", filters={"user_id": "alice", **extra}, threshold=0)["results"]}
    assert found == expected


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param({"AND": {"topic": "x"}}, "AND needs a non-empty list of filter dicts, got {'topic': 'x'}", id="and-not-list"),
        pytest.param({"OR": []}, "OR needs a non-empty list of filter dicts, got []", id="or-empty"),
        pytest.param({"NOT": ["x"]}, "NOT items must be filter dicts, got 'x'", id="not-item"),
        pytest.param({"t": {"in": "a"}}, "'t': 'in' needs a list, got 'a'", id="in-not-list"),
        pytest.param({"t": {}}, "Unsupported metadata filter operator(s) [] for 't' - use one of "
                     "['contains', 'eq', 'gt', 'gte', 'icontains', 'in', 'lt', 'lte', 'ne', 'nin']", id="empty-ops"),
        pytest.param({"t": {"gt": 1, "eq": 2}}, "Cannot mix range operators ['gt'] with ['eq'] for 't' - combine them with AND",
                     id="mixed-range"),
    ],
)
def test_bad_filters_are_clear_value_errors(m0, extra, message):
    with pytest.raises(ValueError) as info:
        m0.get_all(filters={"user_id": "alice", **extra})
    assert str(info.value) == message


def test_search_widens_the_pool_until_the_filter_is_satisfied(m0):
    for i in range(60):
        m0.add(f"pizza note number {i}", user_id="alice", metadata={"n": i}, infer=False)
    m0.add("a single unrelated line about gardening", user_id="alice", metadata={"n": 1000}, infer=False)
    rows = m0.search("pizza note", filters={"user_id": "alice", "n": {"gte": 1000}}, top_k=1, threshold=0)["results"]
    assert [r["memory"] for r in rows] == ["a single unrelated line about gardening"]


def test_get_all_pages_through_the_kernel_for_operator_filters(m0, kernel):
    kernel.add_memories([{"text": f"fact {i}", "user_id": "alice", "metadata": {"n": i}} for i in range(1200)])
    rows = m0.get_all(filters={"user_id": "alice", "n": {"gte": 1150}}, top_k=100)["results"]
    assert sorted(r["metadata"]["n"] for r in rows) == list(range(1150, 1200))


def test_threshold_drops_low_scores(m0):
    m0.add("I like pizza", user_id="alice", infer=False)
    m0.add("My dog is called Rex", user_id="alice", infer=False)
    every = m0.search("pizza", filters={"user_id": "alice"}, threshold=0)["results"]
    best = every[0]["score"]
    kept = m0.search("pizza", filters={"user_id": "alice"}, threshold=best)["results"]
    assert [r["memory"] for r in kept] == [r["memory"] for r in every if r["score"] >= best]
    assert len(kept) < len(every)


# ---------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("embedder", "spec"),
    [
        pytest.param(None, "auto", id="default"),
        pytest.param({"provider": "huggingface", "config": {"model": "/models/minilm"}}, "sentence-transformers:/models/minilm", id="hf-path"),
        pytest.param({"provider": "huggingface", "config": {"model": "bge", "huggingface_base_url": "http://tei:8080/v1"}},
                     "openai:bge@http://tei:8080/v1", id="hf-tei"),
        pytest.param({"provider": "huggingface", "config": {}}, "minilm", id="hf-default"),
        pytest.param({"provider": "fastembed", "config": {"model": "BAAI/bge-small-en-v1.5"}}, "fastembed:BAAI/bge-small-en-v1.5", id="fastembed"),
        pytest.param({"provider": "openai", "config": {"model": "text-embedding-3-small"}},
                     "openai:text-embedding-3-small@https://api.openai.com/v1", id="openai"),
        pytest.param({"provider": "openai", "config": {"model": "m", "openai_base_url": "http://proxy/v1"}}, "openai:m@http://proxy/v1", id="openai-url"),
        pytest.param({"provider": "ollama", "config": {"model": "nomic-embed-text", "ollama_base_url": "http://gpu:11434"}},
                     "openai:nomic-embed-text@http://gpu:11434/v1", id="ollama"),
        pytest.param({"provider": "agentbase", "config": {"spec": "none"}}, "none", id="agentbase-spec"),
    ],
)
def test_embedder_sections_map_to_kernel_specs(embedder, spec):
    assert _embedder_spec({"embedder": embedder} if embedder else {}) == spec


def test_unsupported_embedder_provider_is_a_clear_error():
    with pytest.raises(ValueError, match="embedder provider 'gemini' is not supported by agentbase"):
        Memory.from_config({"embedder": {"provider": "gemini", "config": {}}})


@pytest.mark.parametrize(
    ("store_config", "relative"),
    [
        pytest.param({"path": "qdrant"}, "qdrant/agentbase.db", id="directory"),
        pytest.param({"path": "mine.db"}, "mine.db", id="file"),
        pytest.param({"db_path": "other.sqlite"}, "other.sqlite", id="db_path"),
    ],
)
def test_from_config_path_maps_to_the_database_file(tmp_path, store_config, relative):
    config = {key: str(tmp_path / value) for key, value in store_config.items()}
    m = Memory.from_config({
        "vector_store": {"provider": "qdrant", "config": {**config, "collection_name": "c", "embedding_model_dims": 384}},
        "llm": {"provider": "openai", "config": {"api_key": "sk-x", "model": "gpt-4o-mini"}},
        "embedder": {"provider": "agentbase", "config": {"spec": "none"}},
        "history_db_path": str(tmp_path / "history.db"),
        "custom_instructions": "Only food",
        "version": "v1.1",
    })
    with m:
        m.add("I like pizza", user_id="alice", infer=False)
        assert m.db.path == tmp_path / relative and (tmp_path / relative).exists()
        assert m.llm_config == {"provider": "openai", "config": {"api_key": "sk-x", "model": "gpt-4o-mini"}}
        assert m.llm is None and m.custom_instructions == "Only food"
    assert not (tmp_path / "history.db").exists()
    with pytest.raises(ClosedError):
        m.get_all(filters={"user_id": "alice"})


def test_top_level_db_path(tmp_path):
    with Memory.from_config({"db_path": str(tmp_path / "x.db"), "embedder": {"provider": "agentbase", "config": {"embedder": None}}}) as m:
        m.add("I like pizza", user_id="alice", infer=False)
    assert (tmp_path / "x.db").exists()


def test_memory_with_no_arguments_works_offline_on_agentbase_path(tmp_path, monkeypatch, minilm):
    monkeypatch.setenv("AGENTBASE_PATH", str(tmp_path / "default.db"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with Memory() as m:  # the default embedder: the bundled MiniLM (minilm keeps it loaded)
        m.add("I like pizza", user_id="alice", infer=False)
        assert m.search("pizza", filters={"user_id": "alice"})["results"][0]["memory"] == "I like pizza"
        assert m.db.path == tmp_path / "default.db" and m.db.sync.embedder.name == "all-MiniLM-L6-v2"


@pytest.mark.parametrize(
    ("config", "warning"),
    [
        pytest.param({"vector_store": {"provider": "pgvector", "config": {"host": "db", "port": 5432}}},
                     "vector_store 'pgvector' points at a server", id="remote-store"),
        pytest.param({"vector_store": {"provider": "qdrant", "config": {"client": object()}}},
                     "vector_store 'qdrant' points at a server or a client object", id="client-object"),
        pytest.param({"reranker": {"provider": "cohere", "config": {}}}, "config['reranker'] is ignored", id="reranker"),
        pytest.param({"graph_store": {"provider": "neo4j"}}, "config['graph_store'] is ignored", id="graph"),
    ],
)
def test_config_we_cannot_honour_warns(tmp_path, config, warning):
    with pytest.warns(UserWarning, match=re.escape(warning)):
        Memory.from_config({**config, "db_path": str(tmp_path / "w.db"), "embedder": {"provider": "agentbase", "config": {"spec": "none"}}}).close()


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"embedder": "openai"}, id="section-not-dict"),
        pytest.param({"llm": {"provider": "openai", "config": "x"}}, id="inner-not-dict"),
    ],
)
def test_malformed_config_sections(config):
    with pytest.raises(ValueError, match="must be a dict"):
        Memory.from_config(config)


def test_from_config_needs_a_dict():
    with pytest.raises(ValueError, match="from_config\\(\\) takes a dict, not str"):
        Memory.from_config("config.yaml")


def test_mem0_memoryconfig_object_is_accepted(tmp_path, mem0_offline):
    from mem0.configs.base import MemoryConfig

    config = MemoryConfig(vector_store={"provider": "qdrant", "config": {"path": str(tmp_path / "q")}},
                          embedder={"provider": "huggingface", "config": {"model": "/models/x"}})
    with Memory(config) as m:
        assert m.db.path == tmp_path / "q" / "agentbase.db"
        assert _embedder_spec(m.config) == "sentence-transformers:/models/x"


async def test_async_memory_context_manager(tmp_path):
    async with AsyncMemory.from_config({"db_path": str(tmp_path / "a.db"), "embedder": {"provider": "agentbase", "config": {"spec": "none"}}}) as m:
        await m.add("I like pizza", user_id="alice", infer=False)
        assert len((await m.get_all(filters={"user_id": "alice"}))["results"]) == 1
    with pytest.raises(ClosedError):
        await m.get_all(filters={"user_id": "alice"})


def test_adapter_needs_an_agentbase():
    with pytest.raises(TypeError, match="expected an agentbase_kernel.AgentBase, got str"):
        Mem0Adapter("memory.db")


async def test_async_adapter_runs_the_kernel_off_the_event_loop(am0, monkeypatch):
    loop_thread = threading.current_thread()
    threads = []
    original = Kernel.add_memories

    def spy(self, *args, **kwargs):
        threads.append(threading.current_thread())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Kernel, "add_memories", spy)
    await am0.add("I like pizza", user_id="alice", infer=False)
    assert len(threads) == 1 and threads[0] is not loop_thread


# ---------------------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=200).filter(lambda t: t.strip() and "\x00" not in t))
def test_add_then_get_round_trips_text_and_md5(m0, text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    [item] = m0.add(text, user_id="prop", infer=False)["results"]
    got = m0.get(item["id"])
    assert got["memory"] == text
    assert got["hash"] == hashlib.md5(text.encode()).hexdigest()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.sampled_from(["I like pizza", "I like tea", "My dog is Rex"]), min_size=1, max_size=6))
def test_adding_twice_never_changes_the_count(m0, texts):
    m0.delete_all(user_id="prop")
    for text in texts:
        m0.add(text, user_id="prop", infer=False)
    first = len(m0.get_all(filters={"user_id": "prop"})["results"])
    for text in texts:
        m0.add(text, user_id="prop", infer=False)
    assert len(m0.get_all(filters={"user_id": "prop"})["results"]) == first == len(set(texts))


def test_deleted_ids_never_come_back_from_search(m0):
    ids = [m0.add(t, user_id="a", infer=False)["results"][0]["id"] for t in ["pizza one", "pizza two", "pizza three"]]
    m0.delete(ids[1])
    assert ids[1] not in {r["id"] for r in m0.search("pizza", filters={"user_id": "a"}, threshold=0)["results"]}
    assert [h["event"] for h in m0.history(ids[1])] == ["ADD", "DELETE"]


def test_openai_embedder_section_carries_key_model_and_size(tmp_path, monkeypatch):
    import httpx

    from agentbase_kernel.text.embedders import OpenAICompatibleEmbedder

    sent = []

    def fake_send(self, request, **kwargs):
        sent.append(request)
        body = {"data": [{"index": 0, "embedding": [0.5] * 8}]}
        return httpx.Response(200, json=body, request=request)

    monkeypatch.setattr(httpx.Client, "send", fake_send)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    config = {"db_path": str(tmp_path / "o.db"),
              "embedder": {"provider": "openai", "config": {"model": "text-embedding-3-small", "embedding_dims": 8}}}
    with Memory.from_config(config) as m:
        m.add("I like pizza", user_id="alice", infer=False)
        embedder = m.db.sync.embedder
        assert isinstance(embedder, OpenAICompatibleEmbedder)
        assert (embedder.model, embedder.base_url, embedder.dim) == ("text-embedding-3-small", "https://api.openai.com/v1", 8)
    assert str(sent[0].url) == "https://api.openai.com/v1/embeddings"
    assert sent[0].headers["authorization"] == "Bearer sk-from-env"


def test_delete_all_leaves_protected_memories_as_proposals(m0, db):
    kernel = db.sync
    [kept] = m0.add("Travel needs approval", user_id="alice", infer=False)["results"]
    m0.add("I like tea", user_id="bob", infer=False)
    kernel.protect(user_id="alice")
    assert m0.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert [r["id"] for r in m0.get_all(filters={"user_id": "alice"})["results"]] == [kept["id"]]
    [proposal] = kernel.list_proposals(user_id="alice")
    assert (proposal.op, proposal.entry_id, proposal.proposer) == ("delete", kept["id"], "mem0")
    assert m0.delete_all(user_id="bob") == {"message": "Memories deleted successfully!"}
    assert m0.get_all(filters={"user_id": "bob"})["results"] == []
    kernel.approve(proposal.id, reviewer="dana")
    assert m0.get_all(filters={"user_id": "alice"})["results"] == []


async def test_reset_is_refused_while_a_zone_exists(m0, am0, db):
    m0.add("Travel needs approval", user_id="alice", infer=False)
    zone = db.sync.protect(user_id="alice")
    with pytest.raises(PermissionError, match="unprotect") as denied:
        m0.reset()
    assert isinstance(denied.value, AgentBaseError) and zone.id in str(denied.value)
    with pytest.raises(PermissionError, match=zone.id):
        await am0.reset()
    assert len(m0.get_all(filters={"user_id": "alice"})["results"]) == 1
    db.sync.unprotect(zone.id)
    assert await am0.reset() is None
    assert m0.get_all(filters={"user_id": "alice"})["results"] == []
