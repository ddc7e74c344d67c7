"""Fixtures for the Hermes provider: a throwaway ``$HERMES_HOME``, and the provider inside Hermes' own
``MemoryManager`` (the object ``AIAgent`` drives), on a real file with the hash embedder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest


@pytest.fixture
def hermes_home(tmp_path, monkeypatch):
    """An empty Hermes home for this test (``get_hermes_home()`` reads ``$HERMES_HOME`` on every call)."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture
def hermes(db, hermes_home) -> Iterator[Callable[..., Any]]:
    """``hermes(agent_context="primary", **settings) -> (manager, provider)``: our provider on the test's
    database, registered with and initialized by Hermes' ``MemoryManager`` as ``AIAgent`` does it."""
    from agent.memory_manager import MemoryManager

    from agentbase_adapters.hermes import AgentBaseMemoryProvider

    made = []

    def make(agent_context: str = "primary", session_id: str = "s1", user_id: str = "alice", **settings: Any):
        provider = AgentBaseMemoryProvider(db, user_id=user_id, **settings)
        manager = MemoryManager()
        manager.add_provider(provider)
        manager.initialize_all(session_id=session_id, platform="cli", hermes_home=str(hermes_home),
                               agent_context=agent_context)
        assert provider.wait_ready(60)
        made.append(manager)
        return manager, provider

    yield make
    for manager in made:
        manager.shutdown_all()
