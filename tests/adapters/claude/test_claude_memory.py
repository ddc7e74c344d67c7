"""agentbase in the Claude Agent SDK (claude-agent-sdk 0.2.189): the real ``ClaudeSDKClient`` and its ``Query``
dispatch the hooks and the in-process MCP tools; a scripted transport plays the CLI offline (_fake_cli.py)."""

from __future__ import annotations

import json
import logging

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, HookMatcher, ResultMessage

from agentbase_adapters.claude import AgentBaseMemory, tool_entities
from tests.adapters.claude._fake_cli import FakeClaudeCLI, ToolCall, Turn


@pytest.fixture
def memory(db):
    mem = AgentBaseMemory(db, user_id="alice")
    assert mem.wait_ready(60)
    yield mem
    mem.close()


async def _run(memory: AgentBaseMemory, prompts: list[str], turns: list[Turn], *, session_id: str = "sess-1",
               options: ClaudeAgentOptions | None = None) -> tuple[FakeClaudeCLI, list[str]]:
    """The user's code: one client, one prompt after another, reading each response to its result."""
    cli = FakeClaudeCLI(turns, session_id=session_id)
    answers = []
    async with ClaudeSDKClient(options=memory.attach(options or ClaudeAgentOptions(cwd="/repo")), transport=cli) as c:
        for prompt in prompts:
            await c.query(prompt)
            async for message in c.receive_response():
                if isinstance(message, ResultMessage):
                    answers.append(message.result)
    assert cli.hook_errors == []  # no hook ever failed in the SDK
    return cli, answers


def _tool_json(result: dict) -> tuple[dict, bool]:
    return json.loads(result["result"]["content"][0]["text"]), result["result"]["isError"]


# -- hooks -----------------------------------------------------------------------------------------------
async def test_the_prompt_gets_relevant_memories_within_the_budget(db, kernel):
    kernel.add_memory("Alice prefers tabs over spaces in Go code", user_id="alice", category="preference")
    for i in range(40):
        kernel.add_memory(f"Standup note {i}: reviewed ticket {i}", user_id="alice")
    kernel.add_memory("Bob prefers spaces", user_id="bob")
    memory = AgentBaseMemory(db, user_id="alice", token_budget=80)
    memory.wait_ready(60)
    try:
        cli, answers = await _run(memory, ["Format this Go file the way I like"], [Turn("Done.")])
    finally:
        memory.close()
    [context] = cli.context("UserPromptSubmit")
    assert "Alice prefers tabs over spaces" in context and "Bob" not in context
    from agentbase_kernel.text.tokenize import count_tokens

    assert count_tokens(context.split("\n", 1)[1]) <= 80
    assert answers == ["Done."]


async def test_the_exchange_and_touched_files_are_written_at_stop(memory, kernel):
    turn = Turn("Raised the pool size to 20.", [
        ToolCall("Read", {"file_path": "/repo/src/db.py"}),
        ToolCall("Edit", {"file_path": "/repo/src/db.py", "old_string": "10", "new_string": "20"}),
        ToolCall("Grep", {"pattern": "POOL", "path": "/repo/config"}),
        ToolCall("Write", {"file_path": "/repo/notes.md", "content": "x"}, agent_id="sub-1")])  # a subagent's
    await _run(memory, ["The pool runs out under load, fix src/db.py"], [turn])
    assert memory.flush(30)
    entries = kernel.list(user_id="alice", limit=None)
    assert [(e.role, e.l2_full, e.scope.session_id, e.source) for e in entries] == [
        ("user", "The pool runs out under load, fix src/db.py", "sess-1", "claude"),
        ("assistant", "Raised the pool size to 20.", "sess-1", "claude")]
    assert entries[0].metadata == {"claude_entities": ["src/db.py", "config"], "claude_tools": ["Read", "Edit", "Grep"],
                                   "touched_entities": ["src/db.py", "config"]}
    # the finished turn is linked to the files it touched: the next retrieval for them finds it
    found = kernel.retrieve_by_entities(["config"], user_id="alice")
    assert [h.entry.l2_full for h in found] == ["Raised the pool size to 20.", "The pool runs out under load, fix src/db.py"]


async def test_a_tool_on_a_file_brings_the_memories_about_that_file(memory, kernel):
    await _run(memory, ["Why does src/db.py retry three times?"], [Turn(
        "Because the primary fails over in ~2 s; three retries cover it.",
        [ToolCall("Read", {"file_path": "/repo/src/db.py"})])])
    kernel.add_memory("Unrelated: the logo is blue", user_id="alice")
    memory.flush(30)
    cli, _ = await _run(memory, ["Make the retries configurable"], [Turn("Done.", [
        ToolCall("Edit", {"file_path": "/repo/src/db.py", "old_string": "3", "new_string": "RETRIES"}),
        ToolCall("Edit", {"file_path": "/repo/src/other.py", "old_string": "a", "new_string": "b"})])],
        session_id="sess-2")
    [about] = cli.context("PreToolUse")  # only the file memory knows something about
    assert about.startswith("Memories about src/db.py (agentbase):")
    assert "primary fails over" in about and "logo" not in about


async def test_a_subagent_never_writes(memory, kernel):
    cli = FakeClaudeCLI([Turn("sub answer", [ToolCall("Edit", {"file_path": "/repo/a.py"}, agent_id="sub-7")])])
    stop = {"session_id": "sess-1", "transcript_path": "/t", "cwd": "/repo", "hook_event_name": "SubagentStop",
            "stop_hook_active": False, "agent_id": "sub-7", "agent_type": "general-purpose",
            "agent_transcript_path": "/t2", "last_assistant_message": "sub answer"}
    assert await memory.on_stop(stop, None, {"signal": None}) == {}
    assert await memory.on_post_tool_use({"session_id": "sess-1", "agent_id": "sub-7", "tool_name": "Edit",
                                          "tool_input": {"file_path": "/repo/a.py"}}, "t1", {"signal": None}) == {}
    memory.flush(30)
    assert kernel.count(user_id="alice") == 0 and cli.hook_outputs == []


async def test_a_subagent_may_search_but_not_write_memory(memory, kernel):
    kernel.add_memory("The API rate limit is 100 requests a minute", user_id="alice")
    sub = "sub-3"
    cli, answers = await _run(memory, ["Research the rate limit"], [Turn("Done.", [
        ToolCall("mcp__agentbase__memory_search", {"query": "rate limit"}, agent_id=sub),
        ToolCall("mcp__agentbase__memory_remember", {"content": "Subagent guess: limit is 50"}, agent_id=sub),
        ToolCall("mcp__agentbase__memory_forget", {"memory_id": "x"}, agent_id=sub)])])
    assert answers == ["Done."]
    assert cli.denied == ["mcp__agentbase__memory_remember", "mcp__agentbase__memory_forget"]
    [(found, error)] = map(_tool_json, cli.tool_results)
    assert not error and found["results"][0]["memory"] == "The API rate limit is 100 requests a minute"
    assert memory.flush(30)
    assert "Subagent guess: limit is 50" not in [e.l2_full for e in kernel.list(user_id="alice", limit=None)]


async def test_attach_keeps_the_callers_hooks_servers_and_tools(memory):
    seen = []

    async def mine(input_data, tool_use_id, context):
        seen.append(input_data["hook_event_name"])
        return {}

    options = ClaudeAgentOptions(cwd="/repo", allowed_tools=["Read"], hooks={"Stop": [HookMatcher(hooks=[mine])]})
    attached = memory.attach(options)
    assert attached.allowed_tools == ["Read", "mcp__agentbase__memory_search", "mcp__agentbase__memory_remember",
                                      "mcp__agentbase__memory_forget"]
    assert len(attached.hooks["Stop"]) == 2 and set(attached.mcp_servers) == {"agentbase"}
    cli = FakeClaudeCLI([Turn("ok")])
    async with ClaudeSDKClient(options=attached, transport=cli) as client:
        await client.query("hi")
        async for _ in client.receive_response():
            pass
    assert seen == ["Stop"]
    with pytest.raises(ValueError, match="attach\\(\\) needs mcp_servers as a dict"):
        memory.attach(ClaudeAgentOptions(mcp_servers="/etc/mcp.json"))


# -- tools -----------------------------------------------------------------------------------------------
async def test_remember_search_and_forget_tools(memory, kernel):
    kernel.add_memory("Bob's deploy key lives in vault", user_id="bob")
    cli, _ = await _run(memory, ["remember, search, forget"], [Turn("ok", [
        ToolCall("mcp__agentbase__memory_remember", {"content": "Releases go out on Thursdays", "category": "decision"}),
        ToolCall("mcp__agentbase__memory_remember", {"content": "Releases go out on Thursdays"}),
        ToolCall("mcp__agentbase__memory_search", {"query": "when are releases", "top_k": 3}),
        ToolCall("mcp__agentbase__memory_search", {"query": "deploy key"})])])
    (stored, err1), (again, err2), (found, err3), (other, err4) = map(_tool_json, cli.tool_results)
    assert not (err1 or err2 or err3 or err4)
    assert stored["result"] == "Stored." and again == {"result": "Already stored.", "id": stored["id"]}
    assert found["results"][0]["memory"] == "Releases go out on Thursdays"
    assert found["results"][0]["category"] == "decision"
    assert all("vault" not in r["memory"] for r in other["results"])  # bob's memory is not alice's
    cli, _ = await _run(memory, ["forget it"], [Turn("ok", [
        ToolCall("mcp__agentbase__memory_forget", {"memory_id": stored["id"]}),
        ToolCall("mcp__agentbase__memory_forget", {"memory_id": stored["id"]})])])
    (gone, e1), (missing, e2) = map(_tool_json, cli.tool_results)
    assert (gone, e1) == ({"result": "Forgotten.", "id": stored["id"]}, False)
    assert (missing, e2) == ({"error": f"No memory with id {stored['id']!r} for this user"}, True)
    assert kernel.list(user_id="alice", category="decision") == []


@pytest.mark.parametrize(("name", "args", "error"), [
    pytest.param("memory_search", {}, "Input validation error: 'query' is a required property", id="no-query"),
    pytest.param("memory_search", {"query": "x", "top_k": 0}, "Input validation error: 0 is less than the minimum of 1",
                 id="top-k-zero"),
    pytest.param("memory_remember", {"content": "x", "category": "poem"},
                 "Input validation error: 'poem' is not one of ['preference', 'fact', 'decision', 'note']",
                 id="bad-category"),
    pytest.param("memory_forget", {"memory_id": 7}, "Input validation error: 7 is not of type 'string'", id="id-type"),
])
async def test_bad_tool_input_gets_the_sdks_own_validation_errors(memory, kernel, name, args, error):
    cli, _ = await _run(memory, ["go"], [Turn("ok", [ToolCall(f"mcp__agentbase__{name}", args)])])
    [result] = cli.tool_results
    assert result["result"]["isError"] is True and result["result"]["content"][0]["text"] == error
    assert memory.flush(30) and kernel.count(user_id="alice") == 2  # only the turn itself was written


@pytest.mark.parametrize(("name", "args", "error"), [
    pytest.param("memory_search", {"query": "   "}, "query must be a non-empty string", id="blank-query"),
    pytest.param("memory_remember", {"content": "\ud800"}, "text contains lone surrogate code points and is not valid "
                 "Unicode - decode it with errors='replace' first", id="surrogate"),
    pytest.param("memory_forget", {"memory_id": ""}, "memory_id must be a non-empty string", id="blank-id"),
])
async def test_bad_values_get_tool_errors_from_the_kernel_or_the_tool(memory, name, args, error):
    handler = {"memory_search": memory.search_tool, "memory_remember": memory.remember_tool,
               "memory_forget": memory.forget_tool}[name]
    result = await handler(args)
    assert result["is_error"] is True and json.loads(result["content"][0]["text"]) == {"error": error}


def test_entities_are_the_files_a_tool_names():
    assert tool_entities({"file_path": "/repo/src/a.py", "content": "x"}, "/repo") == ["src/a.py"]
    assert tool_entities({"notebook_path": "/elsewhere/n.ipynb"}, "/repo") == ["/elsewhere/n.ipynb"]
    assert tool_entities({"pattern": "TODO", "path": "/repo"}, "/repo") == []
    assert tool_entities({"paths": ["a.py", "b.py", "a.py"], "source_path": "c.py"}) == ["a.py", "b.py", "c.py"]
    assert tool_entities("not a dict") == [] and tool_entities({"path": 3}) == []


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({"user_id": ""}, "user_id must be a non-empty string, not ''", id="user"),
    pytest.param({"token_budget": -5}, "token_budget must be a positive integer, not -5", id="budget"),
    pytest.param({"prefetch_wait": "x"}, "prefetch_wait must be a number of seconds >= 0, not 'x'", id="wait"),
])
def test_bad_settings_are_refused_at_construction(db, kwargs, message):
    with pytest.raises(ValueError) as excinfo:
        AgentBaseMemory(db, **kwargs)
    assert str(excinfo.value) == message


# -- sessions and fail-open --------------------------------------------------------------------------------
async def test_close_commits_each_session_written_to(db, kernel):
    memory = AgentBaseMemory(db, user_id="alice")
    await _run(memory, ["We are migrating the CI to GitHub Actions"], [Turn("Sounds good.")])
    memory.close()
    [summary] = kernel.list(session_id="sess-1", category="session_summary")
    assert "GitHub" in summary.l2_full


async def test_a_store_that_goes_away_never_breaks_a_turn(db, kernel, caplog):
    memory = AgentBaseMemory(db, user_id="alice", breaker_threshold=3, breaker_cooldown=3600)
    memory.wait_ready(60)
    kernel.add_memory("src/db.py keeps ten connections", user_id="alice", metadata={"claude_entities": ["src/db.py"]})
    db.sync.close()  # the store is gone before the session starts
    caplog.set_level(logging.WARNING, logger="agentbase_adapters.claude")
    turns = [Turn(f"answer {i}", [ToolCall("Edit", {"file_path": "/repo/src/db.py"}),
                                  ToolCall("mcp__agentbase__memory_search", {"query": "db"})]) for i in range(10)]
    cli, answers = await _run(memory, [f"question {i} about src/db.py" for i in range(10)], turns)
    assert answers == [f"answer {i}" for i in range(10)]
    assert cli.context("UserPromptSubmit") == [] and cli.context("PreToolUse") == []
    assert all(_tool_json(r)[0]["error"].startswith("agentbase memory is temporarily unavailable")
               for r in cli.tool_results)
    stats = memory.guard.stats
    assert stats.trips == 1 and stats.refused >= 20 and stats.sent_while_open == 0
    memory.close(timeout=0.2)
    assert any("ClosedError" in r.getMessage() for r in caplog.records)
