"""Mem0's ``pgvector`` vector store config opens agentbase's PostgreSQL backend on the same server.

The config is the one a Mem0 user already has; it is given unchanged to the real ``mem0.Memory`` (which
makes its own ``mem0`` table with pgvector) and to ours, each on its own database of the throwaway server,
and the same calls give the same answers. The connection forms Mem0 accepts (fields, a URL, libpq keywords,
a psycopg pool, ``sslmode``) all reach the server; a config Mem0 refuses is refused with Mem0's message.
"""

from __future__ import annotations

import warnings
from typing import Any
from urllib.parse import urlsplit

import pytest

from agentbase_adapters.mem0 import AsyncMemory, Memory
from agentbase_kernel import Kernel
from tests.adapters.mem0.conftest import MiniLMForMem0, mem0_offline, mem0_without_spacy

__all__ = ["mem0_offline", "mem0_without_spacy"]  # the Mem0 suite's fixtures: real mem0, offline, without spaCy

pytestmark = pytest.mark.postgres


def _fields(url: str) -> dict[str, Any]:
    """The URL as Mem0's pgvector fields (trust authentication: any password is accepted)."""
    parts = urlsplit(url)
    return {"dbname": parts.path.lstrip("/"), "user": parts.username, "password": "secret", "host": parts.hostname,
            "port": parts.port}


def _config(store: dict[str, Any], embedder: dict[str, Any]) -> dict[str, Any]:
    return {"vector_store": {"provider": "pgvector", "config": {"collection_name": "mem0", "embedding_model_dims": 384,
                                                                **store}},
            "embedder": embedder}


def _entries(url: str, **scope: str) -> list[str]:
    with Kernel(url, embedder=None, ner=None) as kernel:
        return sorted(e.l2_full for e in kernel.list(**scope))


def test_the_same_pgvector_config_drives_real_mem0_and_ours(postgres_server, minilm, mem0_without_spacy):
    ours_url, theirs_url = postgres_server.create_database(), postgres_server.create_database()
    facts = ["I love sci-fi movies", "My sister lives in Lisbon", "I am allergic to peanuts"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = mem0_without_spacy.Memory.from_config({
            **_config(_fields(theirs_url), {"provider": "openai", "config": {"api_key": "sk-test", "embedding_dims": 384}}),
            "llm": {"provider": "openai", "config": {"api_key": "sk-test"}}, "history_db_path": ":memory:"})
    theirs.embedding_model = MiniLMForMem0(minilm)
    ours = Memory.from_config(_config(_fields(ours_url), {"provider": "huggingface", "config": {"model": "all-MiniLM-L6-v2"}}))
    try:
        for memory in (theirs, ours):
            for fact in facts:
                memory.add(fact, user_id="alice", infer=False)
            memory.add("I love horror movies", user_id="bob", infer=False)
        answers = {}
        for name, memory in (("mem0", theirs), ("agentbase", ours)):
            found = memory.search("what movies does she like?", filters={"user_id": "alice"}, top_k=3)["results"]
            answers[name] = found
            assert found[0]["memory"] == "I love sci-fi movies"
            assert {r["user_id"] for r in found} == {"alice"}
            listed = memory.get_all(filters={"user_id": "alice"})["results"]
            assert sorted(r["memory"] for r in listed) == sorted(facts)
        assert set(answers["agentbase"][0]) >= {"id", "memory", "score", "user_id", "created_at"}
    finally:
        theirs.close() if hasattr(theirs, "close") else None
        ours.close()
    # ours wrote to the server named in the config, not a file: the rows are there for any agentbase client
    assert _entries(ours_url, user_id="alice") == sorted(facts)
    # and Mem0 kept its own table in its own database
    assert postgres_server.execute("SELECT count(*) FROM mem0", database=urlsplit(theirs_url).path.lstrip("/"))[0][0] == 4


def _pool(url: str) -> Any:
    from psycopg_pool import ConnectionPool

    return ConnectionPool(url, min_size=1, max_size=1, open=True)


@pytest.mark.parametrize(
    "form",
    ["fields", "url", "keywords", "fields+sslmode", "pool"],
)
def test_every_connection_form_mem0_accepts_reaches_the_server(form, postgres_url):
    parts = urlsplit(postgres_url)
    dbname = parts.path.lstrip("/")
    pool = None
    store: dict[str, Any]
    if form == "fields":
        store = _fields(postgres_url)
    elif form == "url":
        store = {"connection_string": postgres_url}
    elif form == "keywords":
        store = {"connection_string": f"host={parts.hostname} port={parts.port} dbname={dbname} user={parts.username}"}
    elif form == "fields+sslmode":
        store = {**_fields(postgres_url), "sslmode": "disable"}  # the throwaway server has no TLS: disable must reach it
    else:
        pool = _pool(postgres_url)
        store = {"connection_pool": pool}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with Memory.from_config(_config(store, {"provider": "agentbase", "config": {"spec": "none"}})) as m:
                m.add("I prefer aisle seats", user_id="carol", infer=False)
                assert m.db.path is not None
        if form == "pool":
            assert any("connection pool" in str(w.message) for w in caught)
    finally:
        if pool is not None:
            pool.close()
    assert _entries(postgres_url, user_id="carol") == ["I prefer aisle seats"]


def test_sslmode_require_is_passed_on(postgres_url):
    """The throwaway server has no TLS, so ``sslmode=require`` must fail to connect - proof it was not dropped."""
    from agentbase_kernel import AgentBaseError

    with pytest.raises((AgentBaseError, OSError)):
        Memory.from_config(_config({**_fields(postgres_url), "sslmode": "require"},
                                   {"provider": "agentbase", "config": {"spec": "none"}})).add("x", user_id="u", infer=False)


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ({"host": "127.0.0.1", "port": 5432}, "Both 'user' and 'password' must be provided"),
        ({"user": "postgres", "password": "x"}, "Both 'host' and 'port' must be provided"),
        ({"connection_string": "mysql://u@h/db"}, "expected a postgresql:// connection string"),
    ],
)
def test_a_config_mem0_refuses_is_refused_with_its_message(store, message):
    with pytest.raises(ValueError, match=message):
        Memory.from_config(_config(store, {"provider": "agentbase", "config": {"spec": "none"}}))


def test_a_named_collection_warns_that_scopes_keep_memories_apart(postgres_url):
    config = _config({"connection_string": postgres_url, "collection_name": "support_bot"},
                     {"provider": "agentbase", "config": {"spec": "none"}})
    with pytest.warns(UserWarning, match="collection_name 'support_bot' is not a separate table"):
        Memory.from_config(config).close()


async def test_async_memory_from_the_same_config(postgres_url):
    config = _config(_fields(postgres_url), {"provider": "agentbase", "config": {"spec": "none"}})
    async with AsyncMemory.from_config(config) as m:
        await m.add("I take the 8:15 train", user_id="dave", infer=False)
        got = await m.get_all(filters={"user_id": "dave"})
        assert [r["memory"] for r in got["results"]] == ["I take the 8:15 train"]
    assert _entries(postgres_url, user_id="dave") == ["I take the 8:15 train"]
