"""``AgentBaseSessionStore`` against the Claude Agent SDK's own SessionStore conformance suite - the suite the
SDK's default ``InMemorySessionStore`` passes - and the SDK's store-reading helpers on a mirrored transcript."""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import (
    InMemorySessionStore,
    delete_session_via_store,
    get_session_messages_from_store,
    list_sessions_from_store,
)
from claude_agent_sdk.testing import run_session_store_conformance

from agentbase_adapters.claude import AgentBaseSessionStore
from agentbase_kernel import AgentBase
from tests.conftest import HashEmbedder

SESSION = "0c8f5a52-6a4e-4c1b-9a53-3c8b8a9d1e01"


def _entries() -> list[dict]:
    """Two transcript lines in the CLI's on-disk shape."""
    return [
        {"type": "user", "uuid": "u-1", "parentUuid": None, "sessionId": SESSION, "timestamp": "2026-01-05T10:00:00.000Z",
         "cwd": "/repo", "message": {"role": "user", "content": "Why do the nightly backups fail on Sundays?"}},
        {"type": "assistant", "uuid": "a-1", "parentUuid": "u-1", "sessionId": SESSION,
         "timestamp": "2026-01-05T10:00:05.000Z", "cwd": "/repo",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "The Sunday vacuum job holds the "
                                                       "lock the backup needs."}]}},
    ]


@pytest.fixture
def stores(tmp_path):
    made, counter = [], itertools.count()

    def make() -> AgentBaseSessionStore:
        store = AgentBaseSessionStore(tmp_path / f"store{next(counter)}.db", user_id="alice",
                                      embedder=HashEmbedder(), ner="regex")
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


async def test_the_sdks_default_store_passes_the_suite():
    await run_session_store_conformance(InMemorySessionStore)


async def test_agentbase_passes_the_sdks_session_store_conformance_suite(stores):
    await run_session_store_conformance(stores)  # every optional method implemented: all 14 contracts run


async def test_a_retried_batch_is_stored_once(stores):
    store = stores()
    key = {"project_key": "proj", "session_id": SESSION}
    await store.append(key, _entries())
    await store.append(key, _entries())  # the SDK retries a batch that may have landed
    assert await store.load(key) == _entries()


async def test_a_mirrored_transcript_is_read_by_the_sdk_and_searchable_as_memory(stores):
    store = stores()
    key = {"project_key": "-repo", "session_id": SESSION}
    await store.append(key, _entries())
    [info] = await list_sessions_from_store(store, directory="/repo")
    assert info.session_id == SESSION
    messages = await get_session_messages_from_store(store, SESSION, directory="/repo")
    assert [m.type for m in messages] == ["user", "assistant"]
    found = store.db.sync.find("vacuum job lock", top_k=2, user_id="alice").hits
    assert found[0].entry.l2_full == "The Sunday vacuum job holds the lock the backup needs."
    assert {h.entry.source for h in found} == {"claude"} and {h.entry.role for h in found} == {"user", "assistant"}
    await delete_session_via_store(store, SESSION, directory="/repo")
    assert await store.load(key) is None
    assert store.db.sync.find("Sunday vacuum", user_id="alice").hits == []


def test_an_open_agentbase_is_shared_and_left_open(db):
    store = AgentBaseSessionStore(db, user_id="alice")
    store.close()
    assert not db.sync.closed
    with pytest.raises(ValueError, match="user_id must be a non-empty string"):
        AgentBaseSessionStore(db, user_id=" ")
    with pytest.raises(TypeError):
        AgentBaseSessionStore(AgentBase(db.path), user_id="a", ner="regex")
