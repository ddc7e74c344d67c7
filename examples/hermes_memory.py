"""agentbase as Hermes Agent's memory provider: install the plugin, activate it, and see what Hermes sees.

    .venv-hermes/bin/python examples/hermes_memory.py      # hermes-agent has its own venv (see the Makefile)

In a real setup the two lines are ``python -m agentbase_adapters.hermes install --activate`` and a Hermes
restart; AIAgent then drives the provider through its MemoryManager. Here the MemoryManager is driven the way
AIAgent drives it each turn (no model or network needed): on_turn_start + prefetch_all before the model,
sync_all after it, handle_tool_call for the model's tool calls, on_session_end at exit.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

home = Path(tempfile.mkdtemp()) / "hermes-home"
home.mkdir()
os.environ["HERMES_HOME"] = str(home)

from agent.memory_manager import MemoryManager
from plugins.memory import discover_memory_providers, load_memory_provider

from agentbase_adapters.hermes import install_plugin

# 1. the plugin directory Hermes discovers, activated in config.yaml, and where the memories go
install_plugin(home, activate=True)
db = os.environ.get("AGENTBASE_PATH") or str(home / "agentbase.db")
(home / "agentbase.json").write_text(json.dumps({"db": db, "user_id": "alice"}))
print("providers Hermes finds:", [name for name, _, available in discover_memory_providers() if available])


def session(session_id: str, turns: list[tuple[str, str]]) -> MemoryManager:
    manager = MemoryManager()
    manager.add_provider(load_memory_provider("agentbase"))  # what AIAgent does for memory.provider: agentbase
    manager.initialize_all(session_id=session_id, platform="cli", hermes_home=str(home), agent_context="primary")
    manager.providers[0].wait_ready(120)  # the first turn would otherwise go on without memory while MiniLM loads
    for number, (user, answer) in enumerate(turns, 1):
        manager.on_turn_start(number, user)
        recalled = manager.prefetch_all(user)
        print(f"\n[{session_id}] user: {user}")
        print("  injected memory:", recalled.replace("\n", "\n    ") if recalled else "(none)")
        manager.sync_all(user, answer, session_id=session_id)
        manager.flush_pending(timeout=30)
    return manager


first = session("monday", [("I'm training for the Berlin marathon in September", "Great goal!"),
                           ("My knee hurts after long runs", "Ease off the long runs for a week.")])
print("\ntool agentbase_remember:", first.handle_tool_call(
    "agentbase_remember", {"content": "Alice is vegetarian", "category": "preference"}))
first.on_session_end([])
first.shutdown_all()

second = session("friday", [("What should I eat before my long run?", "Oats and a banana - no meat needed.")])
print("\ntool agentbase_search:", json.loads(second.handle_tool_call(
    "agentbase_search", {"query": "knee pain", "top_k": 2}))["results"][0]["memory"])
print("tool agentbase_profile:", [r["memory"] for r in json.loads(
    second.handle_tool_call("agentbase_profile", {}))["profile"]])
second.on_session_end([])
second.shutdown_all()
print(f"\nmemories in {db}")
