"""The agentbase provider through Hermes' own ``MemoryManager`` and plugin loader (hermes-agent 0.19.0).

Every call below is one ``AIAgent`` makes (agent/turn_context.py, run_agent.py): ``on_turn_start`` then
``prefetch_all`` before the model, ``sync_all`` after the turn, ``handle_tool_call`` for the model's tool
calls, ``notify_memory_tool_write`` after the built-in memory tool, ``on_session_end`` / ``shutdown_all``.
"""

from __future__ import annotations

import inspect
import json

import pytest

from tests.adapters.hermes._need import need_hermes

need_hermes()

from agent.memory_provider import MemoryProvider  # noqa: E402

from agentbase_adapters.hermes import AgentBaseMemoryProvider, install_plugin  # noqa: E402
from agentbase_kernel.text.tokenize import count_tokens  # noqa: E402


def _texts(kernel, **scope):
    return [e.l2_full for e in kernel.list(limit=None, **scope)]


# -- discovery ---------------------------------------------------------------------------------------
def test_install_plugin_makes_hermes_discover_load_and_activate_it(hermes_home):
    import yaml
    from plugins.memory import _get_active_memory_provider, discover_memory_providers, load_memory_provider

    (hermes_home / "config.yaml").write_text("model: test-model\nmemory:\n  memory_enabled: true\n")
    path = install_plugin(hermes_home, activate=True)
    assert path == hermes_home / "plugins" / "agentbase"
    found = {name: available for name, _, available in discover_memory_providers()}
    assert found["agentbase"] is True
    provider = load_memory_provider("agentbase")
    assert isinstance(provider, AgentBaseMemoryProvider) and provider.name == "agentbase"
    config = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert config == {"model": "test-model", "memory": {"memory_enabled": True, "provider": "agentbase"}}
    assert _get_active_memory_provider() == "agentbase"


def test_the_general_plugin_loader_leaves_it_to_memory_discovery(hermes_home):
    from hermes_cli.plugins import PluginManager

    install_plugin(hermes_home)
    manager = PluginManager()
    manager.discover_and_load()
    [ours] = [p for p in manager.list_plugins() if p["name"] == "agentbase"]
    assert (ours["kind"], ours["source"], ours["enabled"]) == ("exclusive", "user", False)
    assert ours["error"].startswith("exclusive plugin")


def test_every_hook_of_the_memory_provider_abc_is_implemented():
    hooks = [name for name, value in vars(MemoryProvider).items()
             if not name.startswith("_") and (callable(value) or isinstance(value, property))]
    assert len(hooks) >= 19
    inherited = [name for name in hooks if getattr(AgentBaseMemoryProvider, name) is getattr(MemoryProvider, name)]
    assert inherited == []
    for name in hooks:  # every argument Hermes may pass is accepted
        ours = inspect.signature(getattr(AgentBaseMemoryProvider, name)) if name != "name" else None
        theirs = inspect.signature(getattr(MemoryProvider, name)) if name != "name" else None
        if ours is not None:
            assert set(theirs.parameters) <= set(ours.parameters) | {"kwargs"}, name


# -- writes --------------------------------------------------------------------------------------------
def test_sync_turn_writes_the_completed_turn(hermes, kernel):
    manager, provider = hermes()
    manager.sync_all("I keep bees in my garden", "Bees are wonderful.", session_id="s1")
    assert manager.flush_pending(timeout=10) and provider.flush(30)
    entries = kernel.list(user_id="alice", limit=None)
    assert [(e.l2_full, e.role, e.scope.session_id, e.scope.agent_id, e.source) for e in entries] == [
        ("I keep bees in my garden", "user", "s1", "hermes", "hermes"),
        ("Bees are wonderful.", "assistant", "s1", "hermes", "hermes")]
    assert [m.role for m in kernel.list_messages("s1")] == ["user", "assistant"]


def test_session_end_commits_the_session_once_per_new_turns(hermes, kernel):
    manager, provider = hermes()
    manager.sync_all("We are planning a trip to Kyoto in April", "Cherry blossom season!", session_id="s1")
    manager.flush_pending(timeout=10)
    manager.on_session_end([])
    manager.on_session_end([])  # nothing new: no second summary
    assert provider.flush(30)
    summaries = kernel.list(session_id="s1", category="session_summary")
    assert len(summaries) == 1 and "Kyoto" in summaries[0].l2_full
    manager.sync_all("Also book a ryokan", "Noted.", session_id="s1")
    manager.flush_pending(timeout=10)
    manager.shutdown_all()  # a turn after the end was signalled: summarised again at shutdown
    assert len(kernel.list(session_id="s1", category="session_summary")) == 2


@pytest.mark.parametrize("context", ["subagent", "cron", "flush"])
def test_non_primary_agents_read_but_never_write(hermes, kernel, context):
    kernel.add_memory("Alice is allergic to peanuts", user_id="alice", category="fact")
    manager, provider = hermes(agent_context=context)
    manager.on_turn_start(1, "what is alice allergic to?")
    assert "peanuts" in manager.prefetch_all("what is alice allergic to?")
    assert "agentbase_remember" not in {s["name"] for s in manager.get_all_tool_schemas()}
    manager.sync_all("cron prompt", "cron output", session_id="s1")
    manager.notify_memory_tool_write({"success": True}, {"action": "add", "target": "user", "content": "x y z"})
    manager.on_delegation("a task", "a result", child_session_id="c1")
    assert "not available in a" in json.loads(provider.handle_tool_call("agentbase_remember", {"content": "x"}))["error"]
    manager.on_session_end([{"role": "user", "content": "cron prompt"}])
    manager.flush_pending(timeout=10)
    assert provider.flush(30)
    assert _texts(kernel, user_id="alice") == ["Alice is allergic to peanuts"]
    assert kernel.list_sessions() == []


def test_builtin_memory_tool_writes_are_mirrored(hermes, kernel):
    manager, provider = hermes()
    ok = json.dumps({"success": True})
    manager.notify_memory_tool_write(ok, {"action": "add", "target": "user", "content": "User prefers dark mode"})
    manager.notify_memory_tool_write(ok, {"action": "add", "target": "memory", "content": "Repo uses uv, not pip"})
    manager.notify_memory_tool_write(ok, {"action": "replace", "target": "user", "old_text": "dark mode",
                                          "content": "User prefers light mode"})
    manager.notify_memory_tool_write(ok, {"action": "remove", "target": "memory", "old_text": "uses uv"})
    manager.notify_memory_tool_write(json.dumps({"success": False}), {"action": "add", "target": "user",
                                                                       "content": "never stored"})
    assert provider.flush(30)
    entries = kernel.list(user_id="alice", limit=None)
    assert [(e.l2_full, e.category) for e in entries] == [("User prefers light mode", "fact")]
    assert "light mode" in json.loads(manager.handle_tool_call("agentbase_profile", {}))["profile"][0]["memory"]


def test_a_subagents_work_is_remembered_by_the_parent(hermes, kernel):
    manager, provider = hermes()
    manager.on_delegation("Find the cheapest flight to Oslo", "SAS on May 3rd, 120 EUR", child_session_id="c9")
    assert provider.flush(30)
    [entry] = kernel.list(user_id="alice")
    assert "Oslo" in entry.l2_full and "120 EUR" in entry.l2_full and entry.metadata["hermes_delegation"] == "c9"


# -- recall --------------------------------------------------------------------------------------------
def test_prefetch_brings_profile_relevant_and_recent_within_the_budget(hermes, kernel):
    manager, provider = hermes(token_budget=120)
    kernel.add_memory("Alice prefers window seats on long flights", user_id="alice", category="preference")
    for i in range(30):
        kernel.add_memory(f"Note {i}: the office plants need water on day {i}", user_id="alice")
    kernel.add_memory("Alice's sister Mara lives in Lyon", user_id="alice")
    kernel.add_memory("Bob's sister lives in Rome", user_id="bob")
    manager.on_turn_start(1, "Where does my sister live?")
    text = manager.prefetch_all("Where does my sister live?")
    assert "## What you know about the user\n- Alice prefers window seats" in text
    assert "## Memories relevant to this message" in text and "Mara lives in Lyon" in text
    assert "Rome" not in text
    assert count_tokens(text) <= 120
    assert provider.guard.stats.sent == 2  # the warm-up, then one recall: started at turn start, taken once


def test_prefetch_is_computed_once_per_turn_in_the_background(hermes, kernel):
    manager, provider = hermes()
    kernel.add_memory("The wifi password is on the fridge", user_id="alice")
    manager.on_turn_start(1, "wifi password?")
    first = manager.prefetch_all("wifi password?")
    assert "fridge" in first
    assert provider.guard.stats.sent == 2
    assert manager.prefetch_all("") == ""  # nothing to recall for an empty message, nothing sent
    assert provider.guard.stats.sent == 2


# -- tools ---------------------------------------------------------------------------------------------
def test_search_profile_and_remember_tools(hermes, kernel):
    manager, provider = hermes()
    names = [s["name"] for s in manager.get_all_tool_schemas()]
    assert names == ["agentbase_search", "agentbase_profile", "agentbase_remember"]
    stored = json.loads(manager.handle_tool_call("agentbase_remember", {"content": "Alice is vegetarian",
                                                                         "category": "preference"}))
    assert stored["result"] == "Stored."
    again = json.loads(manager.handle_tool_call("agentbase_remember", {"content": "Alice is vegetarian",
                                                                        "category": "preference"}))
    assert again == {"result": "Already stored.", "id": stored["id"]}
    kernel.add_memory("Bob is vegetarian too", user_id="bob")
    found = json.loads(manager.handle_tool_call("agentbase_search", {"query": "vegetarian", "top_k": 5}))
    assert [r["memory"] for r in found["results"]] == ["Alice is vegetarian"] and found["count"] == 1
    assert set(found["results"][0]) == {"id", "memory", "category", "created_at", "score"}
    profile = json.loads(manager.handle_tool_call("agentbase_profile", {}))
    assert [r["memory"] for r in profile["profile"]] == ["Alice is vegetarian"]


@pytest.mark.parametrize(("tool", "args", "error"), [
    pytest.param("agentbase_search", {}, "Missing required parameter: query", id="search-no-query"),
    pytest.param("agentbase_search", {"query": "  "}, "Missing required parameter: query", id="search-blank"),
    pytest.param("agentbase_search", {"query": "x", "top_k": 0}, "top_k must be a positive integer, not 0",
                 id="search-top-k-zero"),
    pytest.param("agentbase_search", {"query": "x", "top_k": "many"}, "top_k must be a positive integer, not 'many'",
                 id="search-top-k-word"),
    pytest.param("agentbase_remember", {}, "Missing required parameter: content", id="remember-no-content"),
    pytest.param("agentbase_remember", {"content": "x", "category": "poem"},
                 "category must be one of preference, fact, note - not 'poem'", id="remember-bad-category"),
    pytest.param("agentbase_remember", {"content": "bad \ud800 text"},
                 "text contains lone surrogate code points and is not valid Unicode - decode it with errors='replace' "
                 "first", id="remember-surrogate"),
    pytest.param("agentbase_search", {"query": 42}, "Missing required parameter: query", id="search-number"),
])
def test_bad_tool_input_gets_hermes_tool_errors(hermes, kernel, tool, args, error):
    manager, _ = hermes()
    out = json.loads(manager.handle_tool_call(tool, args))
    assert out == {"error": error}
    assert kernel.count(user_id="alice") == 0


def test_unknown_tools_are_refused_the_way_hermes_refuses_them(hermes):
    manager, provider = hermes()
    assert json.loads(manager.handle_tool_call("agentbase_delete_everything", {})) == {
        "error": "No memory provider handles tool 'agentbase_delete_everything'"}
    assert json.loads(provider.handle_tool_call("nope", {})) == {"error": "Unknown tool: nope"}
    assert json.loads(provider.handle_tool_call("agentbase_search", ["not", "a", "dict"])) == {
        "error": "agentbase_search arguments must be a JSON object, not list"}


# -- settings ------------------------------------------------------------------------------------------
def test_settings_come_from_agentbase_json(hermes_home, tmp_path):
    provider = AgentBaseMemoryProvider()
    provider.save_config({"db": "$HERMES_HOME/mem.db", "user_id": "sam", "token_budget": "300"}, str(hermes_home))
    assert json.loads((hermes_home / "agentbase.json").read_text()) == {
        "db": "$HERMES_HOME/mem.db", "token_budget": "300", "user_id": "sam"}
    assert provider.is_available()
    provider.initialize("s1", hermes_home=str(hermes_home), platform="cli", user_id="gateway-user")
    try:
        assert provider.user_id == "sam" and provider.config["token_budget"] == 300
        assert provider.config["db"] == str(hermes_home / "mem.db")
        assert provider.wait_ready(60) and (hermes_home / "mem.db").exists()
        assert provider.backup_paths() == []  # inside HERMES_HOME: hermes backup covers it
    finally:
        provider.shutdown()
    assert [f["key"] for f in provider.get_config_schema()][:2] == ["db", "user_id"]


@pytest.mark.parametrize(("settings", "message"), [
    pytest.param({"token_budget": 0}, "token_budget must be a positive integer, not 0", id="budget"),
    pytest.param({"prefetch_wait": "soon"}, "prefetch_wait must be a number of seconds >= 0, not 'soon'", id="wait"),
    pytest.param({"colour": "blue"}, "unknown agentbase setting(s) ['colour']", id="unknown"),
])
def test_bad_settings_make_the_provider_unavailable_not_broken(hermes_home, settings, message):
    from agent.memory_manager import MemoryManager

    (hermes_home / "agentbase.json").write_text(json.dumps(settings))
    provider = AgentBaseMemoryProvider()
    assert provider.is_available() is False
    with pytest.raises(ValueError) as excinfo:
        provider.initialize("s1", hermes_home=str(hermes_home))
    assert str(excinfo.value).startswith(message)
    with pytest.raises(ValueError):
        provider.save_config(settings, str(hermes_home))
    manager = MemoryManager()
    manager.add_provider(provider)
    manager.initialize_all(session_id="s1", hermes_home=str(hermes_home), platform="cli")  # logged, not raised
    assert manager.prefetch_all("anything") == ""
    assert json.loads(manager.handle_tool_call("agentbase_search", {"query": "x"})) == {
        "error": "agentbase memory is not initialized"}


def test_a_database_outside_hermes_home_is_declared_for_backup(hermes_home, tmp_path):
    outside = tmp_path / "elsewhere" / "memory.db"
    provider = AgentBaseMemoryProvider(str(outside))
    assert provider.backup_paths() == [str(outside.resolve())]
    assert AgentBaseMemoryProvider("postgresql://u@db.example/mem").backup_paths() == []


# -- fail-open -------------------------------------------------------------------------------------------
def test_a_store_that_goes_away_never_breaks_a_turn(hermes, db):
    manager, provider = hermes(breaker_threshold=3, breaker_cooldown=3600)
    db.sync.add_memory("The dog is called Pixel", user_id="alice")
    manager.on_turn_start(1, "what is the dog called?")
    assert "Pixel" in manager.prefetch_all("what is the dog called?")
    db.sync.close()  # the store is gone mid-run
    for turn in range(2, 22):
        message = f"turn {turn}: what is the dog called?"
        manager.on_turn_start(turn, message)
        assert manager.prefetch_all(message) == ""
        manager.sync_all(message, "I can't recall right now.", session_id="s1")
        out = json.loads(manager.handle_tool_call("agentbase_search", {"query": "dog"}))
        assert out["error"].startswith("agentbase memory is temporarily unavailable")
    manager.flush_pending(timeout=10)
    stats = provider.guard.stats
    assert provider.guard.breaker.state == "open" and stats.trips == 1
    assert stats.failed >= 3 and stats.refused >= 40 and stats.sent_while_open == 0  # calls in flight as it opened may fail too
    assert provider.guard.pending_writes() == 20  # kept for when the store is back (bounded)


def test_session_switch_moves_later_turns_and_the_quiet_hooks_send_nothing(hermes, kernel):
    manager, provider = hermes()
    sent = provider.guard.stats.sent
    manager.queue_prefetch_all("the next question")  # the next message is unknown: nothing to fetch yet
    manager.flush_pending(timeout=10)
    assert manager.on_pre_compress([{"role": "user", "content": "old"}]) == ""  # every turn is already stored
    assert provider.guard.stats.sent == sent
    manager.on_session_switch("s2", parent_session_id="s1", reset=True)
    manager.sync_all("after the switch", "noted", session_id="")
    manager.flush_pending(timeout=10)
    assert provider.flush(30)
    assert [e.scope.session_id for e in kernel.list(user_id="alice")] == ["s2", "s2"]


def test_the_install_command_writes_and_activates_the_plugin(hermes_home, capsys):
    import subprocess
    import sys

    from plugins.memory import _get_active_memory_provider

    run = subprocess.run([sys.executable, "-m", "agentbase_adapters.hermes", "install", "--hermes-home",
                          str(hermes_home), "--activate"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"installed the agentbase memory provider in {hermes_home / 'plugins' / 'agentbase'}"
    assert sorted(p.name for p in (hermes_home / "plugins" / "agentbase").iterdir()) == ["__init__.py", "plugin.yaml"]
    assert _get_active_memory_provider() == "agentbase"
