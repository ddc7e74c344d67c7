"""OpenAI threads and conversations -> agentbase: written and listed with the real ``openai``
client (against our wire server on a first file), saved as the API lists them, imported into a
second file, and listed again with the same client calls."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from agentbase_adapters.importers import import_from
from agentbase_adapters.openai import create_app
from agentbase_kernel import AgentBase, InvalidArgument
from tests.adapters.openai.openai_testkit import sync_client
from tests.conftest import HashEmbedder

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def listed(client, thread_id: str, conv_id: str) -> tuple[list, list]:
    msgs = client.beta.threads.messages.list(thread_id, order="asc").data
    items = client.conversations.items.list(conv_id, order="asc").data
    return ([(m.id, m.role, m.content[0].text.value, m.created_at) for m in msgs],
            [(i.id, i.role, i.content[0].text) for i in items])


def test_openai_threads_and_conversations(tmp_path: Path, db_location: Path | str, make_db_location: Any) -> None:
    source = AgentBase(make_db_location("source.db"), embedder=HashEmbedder())
    client, http = sync_client(create_app(source))
    with http, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = client.beta.threads.create(metadata={"topic": "garden"})
        for role, text in (("user", "My tomatoes have yellow leaves"), ("assistant", "Water them less often"),
                           ("user", "Thanks, and the basil?")):
            client.beta.threads.messages.create(thread.id, role=role, content=text)
        conv = client.conversations.create(metadata={"topic": "cooking"})
        client.conversations.items.create(conv.id, items=[
            {"type": "message", "role": "user", "content": "What goes with risotto?"},
            {"type": "message", "role": "assistant", "content": "A crisp white wine"}])
        before = listed(client, thread.id, conv.id)
        export = [
            {**thread.model_dump(mode="json"),
             "messages": client.beta.threads.messages.list(thread.id).model_dump(mode="json")},
            {**client.conversations.retrieve(conv.id).model_dump(mode="json"),
             "items": client.conversations.items.list(conv.id).model_dump(mode="json")},
        ]
    source.sync.close()
    path = tmp_path / "openai.json"
    path.write_text(json.dumps(export), encoding="utf-8")

    target = AgentBase(db_location, embedder=HashEmbedder())
    try:
        summary = import_from(target.sync, "openai-json", path, user_id="gardener")
        assert summary["by_type"]["session"]["inserted"] == 2
        assert summary["by_type"]["chat_message"]["inserted"] == 5
        client, http = sync_client(create_app(target))
        with http, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert listed(client, thread.id, conv.id) == before
            assert client.beta.threads.retrieve(thread.id).metadata == {"topic": "garden"}
        hit = target.sync.find("tomato leaves turning yellow", user_id="gardener")[0]
        assert "tomatoes" in hit.entry.l2_full
        again = import_from(target.sync, "openai-json", path, user_id="gardener")
        assert again["by_type"]["chat_message"]["inserted"] == 0
    finally:
        target.sync.close()


def test_openai_json_errors(tmp_path: Path, db_location) -> None:
    db = AgentBase(db_location, embedder=None)
    try:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({"object": "assistant", "id": "asst_1"}), encoding="utf-8")
        with pytest.raises(InvalidArgument, match="Unrecognised OpenAI object 'assistant'"):
            import_from(db.sync, "openai-json", bad)
        bad.write_text(json.dumps({"object": "thread", "id": "thread_1"}), encoding="utf-8")
        with pytest.raises(InvalidArgument, match="has no messages"):
            import_from(db.sync, "openai-json", bad)
        assert db.sync.stats()["sessions"] == 0
    finally:
        db.sync.close()
