"""Hermes' real ``AIAgent`` end to end, offline: a scripted chat-completions endpoint on 127.0.0.1 is the model.

The same conversation runs on Hermes' bundled local provider (``holographic``) and on ``agentbase``, chosen
only by ``memory.provider`` in config.yaml: the user states a preference, the model saves it with Hermes'
built-in ``memory`` tool (which Hermes mirrors to the provider), and in a new session the provider's recall
must reach the model inside ``<memory-context>``.
"""

from __future__ import annotations

import json
import logging

import pytest

from tests.adapters.hermes._need import need_hermes

need_hermes()

from agentbase_adapters.hermes import install_plugin  # noqa: E402
from agentbase_kernel import AgentBase  # noqa: E402
from tests.adapters.hermes._fake_llm import FakeLLM  # noqa: E402


@pytest.fixture
def llm():
    fake = FakeLLM()
    yield fake
    fake.close()


def _configure(home, provider: str, db_path) -> None:
    (home / "config.yaml").write_text(
        "memory:\n  memory_enabled: true\n  user_profile_enabled: true\n"
        f"  provider: {provider}\n")
    if provider == "agentbase":
        install_plugin(home)
        (home / "agentbase.json").write_text(json.dumps({"db": str(db_path), "user_id": "alice", "ner": "regex"}))


def _agent(llm: FakeLLM, session_id: str):
    from run_agent import AIAgent

    agent = AIAgent(base_url=llm.url, api_key="sk-test-offline", model="test-model", quiet_mode=True,
                    skip_context_files=True, enabled_toolsets=["memory"], session_id=session_id)
    for provider in agent._memory_manager.providers if agent._memory_manager else []:
        if provider.name == "agentbase":  # the first turn may otherwise go without recall while MiniLM loads
            assert provider.wait_ready(120)
    return agent


def _two_sessions(llm: FakeLLM) -> tuple[dict, dict]:
    """The user's code: one session states a preference (the model saves it), the next one asks about it."""
    llm.script[:] = [{"tool_calls": [("memory", {"action": "add", "target": "user",
                                                 "content": "User prefers green tea over coffee"})]},
                     {"content": "Noted - green tea it is."},
                     {"content": "You prefer green tea."}]
    first = _agent(llm, "s1")
    one = first.run_conversation("Please remember that I prefer green tea over coffee")
    first.shutdown_memory_provider(one["messages"])
    second = _agent(llm, "s2")
    two = second.run_conversation("Which tea do I prefer?")
    second.shutdown_memory_provider(two["messages"])
    return one, two


@pytest.mark.parametrize("provider", ["holographic", "agentbase"])
def test_the_same_conversation_recalls_the_users_preference(hermes_home, tmp_path, llm, provider):
    _configure(hermes_home, provider, tmp_path / "memory.db")
    one, two = _two_sessions(llm)
    assert one["completed"] and two["completed"] and two["final_response"] == "You prefer green tea."
    [context] = [m for m in llm.user_messages() if "<memory-context>" in m]
    assert context.startswith("Which tea do I prefer?\n\n<memory-context>")
    assert "green tea" in context.split("<memory-context>", 1)[1]


def test_agentbase_keeps_every_turn_and_commits_each_session(hermes_home, tmp_path, llm):
    _configure(hermes_home, "agentbase", tmp_path / "memory.db")
    _two_sessions(llm)
    with AgentBase(tmp_path / "memory.db", ner="regex") as db:
        turns = [(e.scope.session_id, e.role, e.l2_full) for e in db.sync.list(user_id="alice", category="turn")]
        assert turns == [("s1", "user", "Please remember that I prefer green tea over coffee"),
                         ("s1", "assistant", "Noted - green tea it is."),
                         ("s2", "user", "Which tea do I prefer?"),
                         ("s2", "assistant", "You prefer green tea.")]
        assert [e.scope.session_id for e in db.sync.list(user_id="alice", category="session_summary")] == ["s1", "s2"]
        assert [e.l2_full for e in db.sync.list(user_id="alice", category="fact", metadata={"hermes_memory": "user"})] \
            == ["User prefers green tea over coffee"]
        assert {e.source for e in db.sync.list(user_id="alice", limit=None)} == {"hermes"}


def test_the_model_searches_agentbase_with_its_tool(hermes_home, tmp_path, llm):
    with AgentBase(tmp_path / "memory.db", ner="regex") as db:
        db.sync.add_memory("Alice's passport expires on 3 March 2027", user_id="alice")
    _configure(hermes_home, "agentbase", tmp_path / "memory.db")
    llm.script[:] = [{"tool_calls": [("agentbase_search", {"query": "passport expiry", "top_k": 3})]},
                     {"content": "It expires on 3 March 2027."}]
    agent = _agent(llm, "s1")
    assert "agentbase_search" in {t["function"]["name"] for t in llm_tools(agent)}
    result = agent.run_conversation("When does my passport expire?")
    agent.shutdown_memory_provider(result["messages"])
    [tool_message] = [m for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    found = json.loads(tool_message["content"])
    assert found["results"][0]["memory"] == "Alice's passport expires on 3 March 2027"


def llm_tools(agent) -> list[dict]:
    return [t for t in agent.tools if isinstance(t, dict)]


def test_a_store_that_dies_mid_run_never_breaks_the_agent(hermes_home, tmp_path, llm, caplog):
    _configure(hermes_home, "agentbase", tmp_path / "memory.db")
    agent = _agent(llm, "s1")
    [provider] = [p for p in agent._memory_manager.providers if p.name == "agentbase"]
    guard = provider.guard
    completed = []
    caplog.set_level(logging.DEBUG, logger="agent.memory_manager")
    for turn in range(12):
        if turn == 3:
            provider.db.sync.close()  # the store goes away under the running agent
        llm.script.append({"content": f"answer {turn}"})
        result = agent.run_conversation(f"question number {turn} about my tea")
        completed.append(result["completed"] and result["final_response"] == f"answer {turn}")
    agent.shutdown_memory_provider([])
    assert completed == [True] * 12
    hermes_logs = [r.getMessage() for r in caplog.records if r.name.startswith(("agent.", "run_agent"))]
    assert not [m for m in hermes_logs if "agentbase" in m and "fail" in m]  # Hermes logs each exception it catches
    ours = [r.getMessage() for r in caplog.records if r.name == "agentbase_adapters.hermes"]
    assert any("ClosedError" in m for m in ours)  # ours were logged and swallowed instead
    stats = guard.stats
    assert stats.trips >= 1 and stats.refused > 0 and stats.sent_while_open == stats.trials
