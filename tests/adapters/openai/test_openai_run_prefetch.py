"""A run's responder gets Kernel.prefetch as its context, driven through the real openai client."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from agentbase_adapters.openai import OpenAIAssistantAdapter, create_app
from agentbase_kernel import AgentBase, InvalidArgument

from .openai_testkit import WireChecker, sync_client


class Recorder:
    def __init__(self) -> None:
        self.contexts: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
        self.contexts.append(context)
        return "ok"


def _run(client: openai.OpenAI, user_id: str | None, text: str) -> None:
    thread = client.beta.threads.create(metadata={"user_id": user_id} if user_id else None)
    client.beta.threads.messages.create(thread.id, role="user", content=text)
    run = client.beta.threads.runs.create_and_poll(thread_id=thread.id, assistant_id="asst_1", poll_interval_ms=1)
    assert run.status == "completed"


def test_the_responder_gets_profile_relevant_and_recent_memories(db: AgentBase) -> None:
    db.sync.add_memory("Alice is allergic to nuts", user_id="alice", category="fact")
    db.sync.add_memory("Bob is allergic to gluten", user_id="bob", category="fact")
    recorder = Recorder()
    wire = WireChecker(create_app(db, responder=recorder))
    client, http = sync_client(wire)
    with http:
        _run(client, "alice", "What cake should I bake this weekend?")
    [context] = recorder.contexts
    by_section = {item["section"]: item for item in context}
    assert by_section["profile"]["content"] == "Alice is allergic to nuts"
    assert by_section["profile"]["score"] is None
    assert not any("Bob" in item["content"] for item in context)
    turn = next(item for item in context if "cake" in item["content"])
    assert turn["section"] in ("relevant", "recent") and len(turn["message_ids"]) == 1
    for item in context:
        assert set(item) == {"id", "content", "score", "role", "message_ids", "created_at", "section"}
    assert wire.problems == []


def test_a_thread_without_an_owner_reads_no_one_elses_profile(db: AgentBase) -> None:
    db.sync.add_memory("Alice is allergic to nuts", user_id="alice", category="fact")
    recorder = Recorder()
    client, http = sync_client(create_app(db, responder=recorder))
    with http:
        _run(client, None, "Anything I should know about allergies?")
    assert not any("Alice" in item["content"] for item in recorder.contexts[0])


def test_context_token_budget_bounds_the_context(db: AgentBase) -> None:
    for i in range(40):
        db.sync.add_memory(f"Alice collects stamp series number {i} from the old post", user_id="alice",
                           category="preference")
    sizes = []
    for budget in (2000, 80):
        recorder = Recorder()
        client, http = sync_client(create_app(db, responder=recorder, context_token_budget=budget))
        with http:
            _run(client, "alice", "tell me about my stamps")
        sizes.append(len(recorder.contexts[0]))
    assert 0 < sizes[1] < sizes[0]


def test_a_bad_budget_is_refused(db: AgentBase) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        OpenAIAssistantAdapter(db, context_token_budget=0)
    assert str(excinfo.value) == "context_token_budget must be a positive int, got 0"
