"""Every tool over stdio, driven by the SDK's client; each result checked against the kernel."""

from __future__ import annotations

import json

import pytest

from agentbase_adapters.mcp.server import GUIDE
from agentbase_kernel import EntryNotFound

EXPECTED_TOOLS = {"add_memory", "search_memories", "get_memory", "list_memories", "update_memory", "delete_memory",
                  "delete_all_memories", "memory_history", "add_message", "get_session", "list_sessions",
                  "list_entities", "entity_graph", "memory_stats", "export_memories", "recall_for_entities",
                  "list_skills", "propose_memory", "list_proposals", "record_outcome"}


def test_lists_every_tool_with_a_description_and_a_closed_schema(alice):
    tools = {t.name: t for t in alice.tools()}
    assert set(tools) == EXPECTED_TOOLS
    for tool in tools.values():
        assert tool.description and "\n" not in tool.description
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert "user_id" not in tool.input_schema["properties"] or tool.name == "delete_all_memories"
    assert tools["search_memories"].input_schema["required"] == ["query"]
    assert tools["search_memories"].annotations.read_only_hint is True
    assert tools["delete_all_memories"].annotations.destructive_hint is True


def test_add_memory_text_is_stored_verbatim_in_the_servers_scope(alice, kernel_on):
    out = alice.ok("add_memory", {"text": "Prefers oolong tea in the morning", "category": "preference",
                                  "tags": ["drink"], "metadata": {"source": "chat", "n": 3}})
    (result,) = out["results"]
    assert result["event"] == "ADD" and result["text"] == "Prefers oolong tea in the morning"
    entry = kernel_on.get(result["id"], user_id="alice")
    assert entry.l2_full == "Prefers oolong tea in the morning"
    assert entry.category == "preference" and "drink" in entry.tags and entry.metadata == {"source": "chat", "n": 3}
    assert entry.user_id == "alice" and entry.agent_id is None
    again = alice.ok("add_memory", {"text": "Prefers oolong tea in the morning"})
    assert again["results"][0]["event"] == "NOOP" and again["results"][0]["id"] == result["id"]


def test_add_memory_messages_stores_each_turn_and_extract_adds_facts(alice, kernel_on):
    out = alice.ok("add_memory", {"messages": [{"role": "user", "content": "I moved to Lisbon last spring"},
                                               {"role": "assistant", "content": "Lisbon is lovely in May."}],
                                  "extract": True})
    ids = [r["id"] for r in out["results"]]
    assert [kernel_on.get(i, user_id="alice").role for i in ids] == ["user", "assistant"]
    facts = [f for r in out["results"] for f in r.get("facts", [])]
    assert facts, out
    for fact in facts:
        assert kernel_on.get(fact["id"], user_id="alice").l2_full == fact["text"]


def test_add_memory_wants_text_or_messages(alice):
    assert alice.fails("add_memory", {}) == "Pass either text or messages, not both or neither"
    assert alice.fails("add_memory", {"text": "a", "messages": [{"role": "user", "content": "b"}]}) == \
        "Pass either text or messages, not both or neither"


def test_search_returns_content_score_matched_by_and_a_real_trace(alice, kernel_on):
    added = alice.ok("add_memory", {"text": "Her cat is called Miso", "metadata": {"kind": "pet"}})["results"][0]
    out = alice.ok("search_memories", {"query": "cat Miso", "top_k": 3})
    top = out["results"][0]
    assert top["id"] == added["id"] and top["content"] == "Her cat is called Miso"
    assert isinstance(top["score"], float) and top["matched_by"]
    kernel_ids = [h.id for h in kernel_on.find("cat Miso", top_k=3, user_id="alice")]
    assert [r["id"] for r in out["results"]] == kernel_ids
    assert any(t["id"] == out["trace_id"] for t in kernel_on.trace_session(user_id="alice", limit=50))


def test_search_min_score_drops_hits_below_it_and_keeps_those_above(alice, kernel_on):
    for text in ("Plays the cello every Sunday", "Her cello teacher is called Ana", "Owns a red bicycle",
                 "Practises scales before breakfast"):
        alice.ok("add_memory", {"text": text})
    query = {"query": "cello practice on Sunday", "top_k": 10}
    every = alice.ok("search_memories", query)["results"]
    scores = sorted({r["score"] for r in every})
    assert len(scores) >= 2, every
    cut = (scores[0] + scores[1]) / 2  # between the two lowest scores: the lowest hits fall below it
    kept = alice.ok("search_memories", {**query, "min_score": cut})["results"]
    assert [r["id"] for r in kept] == [r["id"] for r in every if r["score"] > cut]
    assert 0 < len(kept) < len(every)
    assert [r["id"] for r in kept] == [h.id for h in kernel_on.find(query["query"], top_k=10, user_id="alice",
                                                                      min_score=cut)]
    assert alice.ok("search_memories", {**query, "min_score": 0})["results"] == every
    assert alice.ok("search_memories", {**query, "min_score": 1})["results"] == [r for r in every if r["score"] >= 1]


@pytest.mark.parametrize(("value", "message"), [
    (1.5, "min_score must be at most 1"), (-0.1, "min_score must be at least 0"),
    ("high", "min_score must be of type number"), (True, "min_score must be of type number")])
def test_search_min_score_out_of_range_is_a_tool_error(alice, value, message):
    assert alice.fails("search_memories", {"query": "cello", "min_score": value}) == \
        f"Invalid arguments for search_memories: {message}"


def test_search_filters_by_metadata_category_and_dates(alice):
    alice.ok("add_memory", {"text": "Dentist appointment on Friday", "category": "task", "metadata": {"kind": "health"}})
    hits = alice.ok("search_memories", {"query": "dentist appointment", "filters": {"kind": "health"}})["results"]
    assert hits and all(h["metadata"]["kind"] == "health" for h in hits)
    pets = alice.ok("search_memories", {"query": "dentist appointment", "filters": {"kind": "pet"}})["results"]
    assert all(h["metadata"]["kind"] == "pet" for h in pets)
    prefs = alice.ok("search_memories", {"query": "dentist appointment", "category": "preference"})["results"]
    assert all(h["category"] == "preference" for h in prefs)
    assert alice.ok("search_memories", {"query": "dentist appointment", "since": "2100-01-01"})["results"] == []
    assert alice.ok("search_memories", {"query": "dentist appointment", "until": "2000-01-01"})["results"] == []
    assert alice.ok("search_memories", {"query": "dentist appointment", "as_of": "2000-01-01"})["results"] == []
    assert "since must be" in alice.fails("search_memories", {"query": "x", "since": "not a date"})


def test_search_filter_operators_reach_the_kernel(alice):
    for n in (1, 2, 3):
        alice.ok("add_memory", {"text": f"Reading list book number {n}", "metadata": {"book": n}})
    hits = alice.ok("search_memories", {"query": "reading list book", "filters": {"book": {"gte": 2}}})["results"]
    assert sorted(h["metadata"]["book"] for h in hits) == [2, 3]
    hits = alice.ok("search_memories", {"query": "reading list book",
                                        "filters": {"OR": [{"book": 1}, {"book": {"in": [3]}}]}})["results"]
    assert sorted(h["metadata"]["book"] for h in hits) == [1, 3]
    listed = alice.ok("list_memories", {"filters": {"NOT": {"book": {"lte": 2}}, "book": {"exists": True}}})
    assert [m["metadata"]["book"] for m in listed["memories"]] == [3]
    assert "'in' takes a list of values" in alice.fails("search_memories", {"query": "book",
                                                                            "filters": {"book": {"in": 3}}})
    assert "Operators are written without '$'" in alice.fails("list_memories", {"filters": {"book": {"$gte": 2}}})


def test_get_update_history_delete_one_memory(alice, kernel_on):
    memory_id = alice.ok("add_memory", {"text": "Works at Acme as a designer"})["results"][0]["id"]
    got = alice.ok("get_memory", {"memory_id": memory_id})
    assert got["text"] == "Works at Acme as a designer" and got["user_id"] == "alice"
    updated = alice.ok("update_memory", {"memory_id": memory_id, "text": "Works at Initech as a designer",
                                         "tags": ["job"]})
    assert updated["text"] == kernel_on.get(memory_id).l2_full == "Works at Initech as a designer"
    assert "job" in updated["tags"]
    assert alice.fails("update_memory", {"memory_id": memory_id}).startswith("Nothing to update")
    history = alice.ok("memory_history", {"memory_id": memory_id})["events"]
    assert [e["event"] for e in history] == [e.event for e in kernel_on.history(memory_id)] == ["ADD", "UPDATE"]
    assert history[1]["old_value"] == "Works at Acme as a designer"
    deleted = alice.ok("delete_memory", {"memory_id": memory_id})
    assert deleted == {"deleted": memory_id, "text": "Works at Initech as a designer"}
    with pytest.raises(EntryNotFound):
        kernel_on.get(memory_id)
    assert alice.fails("get_memory", {"memory_id": memory_id}) == f"No entry with id {memory_id!r} in this scope"


def test_list_memories_pages_through_the_scope(alice, kernel_on):
    for i in range(5):
        alice.ok("add_memory", {"text": f"Paging note {i}", "category": "paging"})
    first = alice.ok("list_memories", {"category": "paging", "limit": 2})
    assert first["total"] == kernel_on.count(user_id="alice", category="paging") == 5
    assert [m["text"] for m in first["memories"]] == ["Paging note 4", "Paging note 3"]
    seen = [m["text"] for m in first["memories"]]
    offset = first["next_offset"]
    while offset is not None:
        page = alice.ok("list_memories", {"category": "paging", "limit": 2, "offset": offset})
        seen += [m["text"] for m in page["memories"]]
        offset = page["next_offset"]
    assert seen == [f"Paging note {i}" for i in (4, 3, 2, 1, 0)]
    oldest = alice.ok("list_memories", {"category": "paging", "order": "oldest", "limit": 1})
    assert oldest["memories"][0]["text"] == "Paging note 0"


def test_messages_and_sessions(alice, kernel_on):
    for role, content in [("user", "Planning a trip to Kyoto with Ana"), ("assistant", "Kyoto is great in autumn.")]:
        out = alice.ok("add_message", {"session_id": "trip", "role": role, "content": content, "name": "Sam"})
        assert out["message"]["content"] == content
    session = alice.ok("get_session", {"session_id": "trip"})
    assert session["session"]["user_id"] == "alice" and session["total"] == 2
    assert [m["content"] for m in session["messages"]] == [m.content for m in kernel_on.list_messages("trip")]
    assert alice.ok("get_session", {"session_id": "trip", "last": 1})["messages"][0]["content"] == \
        "Kyoto is great in autumn."
    assert kernel_on.get_session("trip").scope.user_id == "alice"
    turn = session["messages"][0]["memory_id"]
    assert kernel_on.get(turn, user_id="alice").session_id == "trip"
    assert "trip" in [s["id"] for s in alice.ok("list_sessions")["sessions"]]
    hit = alice.ok("search_memories", {"query": "trip to Kyoto with Ana", "session_id": "trip"})["results"][0]
    assert hit["id"] == turn
    assert hit["provenance"] == [{"message_id": session["messages"][0]["id"], "session_id": "trip", "role": "user"}]
    quiet = alice.ok("add_message", {"session_id": "trip", "role": "user", "content": "ok", "remember": False})
    assert "memory_id" not in quiet["message"]
    assert alice.fails("get_session", {"session_id": "no-such-session"}) == \
        "No session with id 'no-such-session' in this scope"


def test_entities_and_graph(alice, kernel_on):
    alice.ok("add_memory", {"text": "Ana and Bruno run a bakery in Porto"})
    names = {e["name"]: e for e in alice.ok("list_entities", {"limit": 200})["entities"]}
    kernel_nodes = {n["text"]: n["entries"] for n in kernel_on.entity_graph(user_id="alice", limit=200)["nodes"]}
    assert {n: e["mentions"] for n, e in names.items()} == {n: c for n, c in kernel_nodes.items() if c}
    graph = alice.ok("entity_graph", {"entity": "Bruno"})
    assert graph["nodes"][0]["name"] == "Bruno"
    linked = {name for link in graph["links"] for name in (link["a"], link["b"])}
    assert {"Ana", "Porto"} <= linked
    assert alice.ok("entity_graph", {"entity": "Nobody Known"}) == {"entity": "Nobody Known", "nodes": [], "links": []}


def test_memory_stats_match_the_kernel(alice, kernel_on):
    stats = alice.ok("memory_stats")
    assert stats["scope"] == {"user_id": "alice"}
    assert stats["memories"] == kernel_on.count(user_id="alice")
    assert stats["by_kind"]["memory"] == kernel_on.count(user_id="alice", context_type="memory")
    assert stats["sessions"] == len(kernel_on.list_sessions(user_id="alice", limit=None))
    assert stats["embedder"] == "test-hash-64"


def test_delete_all_needs_the_servers_own_scope(alice, kernel_on):
    alice.ok("add_message", {"session_id": "scratch", "role": "user", "content": "Temporary scratch note"})
    assert "name exactly that scope" in alice.fails("delete_all_memories", {"scope": {"session_id": "scratch"}})
    assert alice.fails("delete_all_memories", {"scope": {}}) == \
        "Invalid arguments for delete_all_memories: scope must name at least 1 key(s)"
    assert "scope is required" in alice.fails("delete_all_memories", {})
    before = kernel_on.count(user_id="alice")
    out = alice.ok("delete_all_memories", {"scope": {"user_id": "alice", "session_id": "scratch"}})
    assert out["deleted"] == 1 and kernel_on.count(user_id="alice") == before - 1
    assert kernel_on.count(user_id="alice", session_id="scratch") == 0


def test_resource_and_prompt(alice, kernel_on):
    alice.ok("add_memory", {"text": "Most recent thing said"})
    resources = alice.run(alice.client.list_resources).resources
    assert [r.uri for r in resources] == ["agentbase://memories/recent"]
    content = alice.run(alice.client.read_resource, "agentbase://memories/recent").contents[0]
    recent = json.loads(content.text)["memories"]
    assert [m["id"] for m in recent] == [e.id for e in kernel_on.list(user_id="alice", limit=20, order="desc")]
    prompts = alice.run(alice.client.list_prompts).prompts
    assert [p.name for p in prompts] == ["use-memory"]
    prompt = alice.run(alice.client.get_prompt, "use-memory")
    assert prompt.messages[0].content.text == GUIDE
    assert alice.client.instructions == GUIDE


def test_null_arguments_count_as_left_out(alice):
    out = alice.ok("search_memories", {"query": "tea", "top_k": None, "filters": None, "since": None})
    assert "trace_id" in out
    assert alice.fails("get_memory", {"memory_id": None}) == "Invalid arguments for get_memory: memory_id is required"


def test_unknown_tool_is_a_tool_error_and_the_server_goes_on(alice):
    assert alice.fails("no_such_tool").startswith("Unknown tool 'no_such_tool'")
    assert alice.ok("memory_stats")["scope"] == {"user_id": "alice"}


def test_a_handshake_era_client_gets_the_same_server(server_db):
    """Claude Desktop and Cursor speak the initialize-handshake protocol (2025-06-18 and before)."""
    from .conftest import McpClient, launch

    legacy = McpClient(launch(server_db, "--user-id", "alice"), mode="legacy")
    try:
        assert legacy.client.protocol_version in ("2025-06-18", "2025-11-25", "2025-03-26")
        assert {t.name for t in legacy.tools()} == EXPECTED_TOOLS
        added = legacy.ok("add_memory", {"text": "Said over the old protocol"})["results"][0]
        assert legacy.ok("get_memory", {"memory_id": added["id"]})["text"] == "Said over the old protocol"
        assert legacy.fails("get_memory", {"memory_id": added["id"], "user_id": "bob"})
    finally:
        legacy.close()


def test_recall_for_entities_and_skills_with_their_warnings(alice, kernel_on):
    from datetime import timedelta

    from agentbase_kernel.store.base import utcnow

    kernel_on.add_memory("Before editing src/billing/invoice.py run the tax tests", user_id="alice")
    skill = kernel_on.add_skill("invoices", "Regenerate invoices from the invoice_lines table", user_id="alice",
                                created_at=utcnow() - timedelta(days=60))
    out = alice.ok("recall_for_entities", {"entities": ["src/billing/invoice.py"], "budget_tokens": 200})
    assert [r["content"] for r in out["results"]] == ["Before editing src/billing/invoice.py run the tax tests"]
    assert "skill_warnings" not in out
    [listed] = alice.ok("list_skills")["skills"]
    assert (listed["name"], listed["version"], listed["id"]) == ("invoices", 1, skill.id)
    assert listed["warning"] == ("Skill 'invoices' is stale (health 0.25): not used or verified since it was "
                                 "written 60 days ago")
    found = alice.ok("recall_for_entities", {"entities": ["invoice_lines"]})
    assert found["skill_warnings"] == [listed["warning"]]
    kernel_on.flush_lifecycle()
    # being retrieved is being used: the skill's clock restarts (docs/skills.md)
    assert "skill_warnings" not in alice.ok("search_memories", {"query": "regenerate invoices"})
    assert alice.fails("recall_for_entities", {"entities": []})
