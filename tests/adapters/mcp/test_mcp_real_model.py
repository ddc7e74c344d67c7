"""The real ``agentbase-mcp`` command with the real MiniLM and spaCy: a question finds its memory by meaning."""

from __future__ import annotations

from agentbase_kernel import Kernel

from .conftest import McpClient, command


def test_semantic_search_through_the_installed_command(db_location, minilm):
    db = db_location
    client = McpClient(command(db, "--user-id", "alice"))
    try:
        for text in ("I'm allergic to shellfish", "My daughter Maya plays the cello in the school orchestra",
                     "We're moving to Denver in March", "Prefers window seats on flights"):
            client.ok("add_memory", {"text": text})
        hits = client.ok("search_memories", {"query": "Which musical instrument does my child practise?", "top_k": 2})
        assert hits["results"][0]["content"] == "My daughter Maya plays the cello in the school orchestra"
        assert "vector" in hits["results"][0]["matched_by"]
        assert client.ok("memory_stats")["embedder"] == minilm.name
        entities = {e["name"] for e in client.ok("list_entities")["entities"]}
        assert {"Maya", "Denver"} <= entities
    finally:
        client.close()
    with Kernel(db, embedder=minilm) as k:
        assert k.count(user_id="alice") == 4
