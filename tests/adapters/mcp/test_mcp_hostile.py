"""Hostile inputs through the MCP layer: every tool, every argument, over stdio.

Each call must come back as a result or a tool error with our message - never an internal
error, a protocol error, a crashed server or a partial write.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given

from tests.reliability._inputs import SETTINGS, TALLY, row_counts

from ._hostile import arguments_for
from .conftest import ROOT, McpClient, launch, server_env
from .test_mcp_tools import EXPECTED_TOOLS


@pytest.fixture(scope="module")
def target(make_db_location):
    path = make_db_location("memory.db")
    client = McpClient(launch(path, "--user-id", "alice"))
    client.ok("add_memory", {"text": "A memory to aim at", "metadata": {"n": 1}})
    client.ok("add_message", {"session_id": "s", "role": "user", "content": "A turn to aim at"})
    yield client, path, {t.name: t.input_schema for t in client.tools()}
    client.close()


@pytest.mark.filterwarnings("ignore:Generating overly large repr")  # the 30k-character string, on purpose
@pytest.mark.parametrize("tool", sorted(EXPECTED_TOOLS))
def test_hostile_arguments_give_results_or_our_errors(target, tool):
    client, path, schemas = target

    @SETTINGS
    @given(arguments=arguments_for(schemas[tool]))
    def run(arguments):
        TALLY["mcp_calls"] += 1
        before = row_counts(path)
        result = client.call(tool, arguments)
        text = result.content[0].text
        assert "internal error" not in text, text
        if result.is_error:
            assert row_counts(path) == before, f"{tool} failed but wrote: {text}"
        else:
            assert isinstance(result.structured_content, dict)

    run()
    assert client.ok("memory_stats")["scope"] == {"user_id": "alice"}


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    pytest.param("add_memory", {"text": "x" * 20_001}, "text is longer than 20000 characters", id="long-text"),
    pytest.param("add_memory", {"messages": [{"role": "user", "content": "hi"}] * 101}, "messages has more than 100",
                 id="many-messages"),
    pytest.param("add_memory", {"text": "   "}, "text is empty", id="blank-text"),
    pytest.param("add_memory", {"messages": [{"role": "user", "content": "kept only if all are"},
                                             {"role": "user", "content": " \n "}]}, "text is empty",
                 id="one-bad-message-writes-none"),
    pytest.param("add_memory", {"text": "a", "metadata": {"k": "v" * 20_000}}, "metadata is larger than", id="big-meta"),
    pytest.param("search_memories", {"query": "q" * 2_001}, "query is longer than 2000", id="long-query"),
    pytest.param("search_memories", {"query": "tea", "top_k": 10**6}, "top_k must be at most 100", id="top-k"),
    pytest.param("search_memories", {"query": "tea", "top_k": "5"}, "top_k must be of type integer", id="top-k-type"),
    pytest.param("search_memories", {"query": "tea", "filters": "kind=pet"}, "filters must be of type object",
                 id="filter-type"),
    pytest.param("search_memories", {"query": "tea", "as_of": "yesterday-ish"}, "as_of must be", id="bad-date"),
    pytest.param("get_memory", {"memory_id": "' OR '1'='1"}, "No entry with id", id="sql-id"),
    pytest.param("get_memory", {"memory_id": "x" * 513}, "memory_id is longer than 512", id="long-id"),
    pytest.param("list_memories", {"limit": -1}, "limit must be at least 1", id="negative-limit"),
    pytest.param("add_message", {"session_id": "s", "role": "wizard", "content": "x"}, "role must be one of",
                 id="bad-role"),
])
def test_bad_input_gets_our_message(target, tool, arguments, message):
    client, path, _ = target
    before = row_counts(path)
    assert message in client.fails(tool, arguments)
    assert row_counts(path) == before


def _exchange(db_location, frames: list[bytes], *, until: object) -> dict:
    """Write ``frames`` to a fresh stdio server; its replies by id, read until one with id ``until``."""
    params = launch(db_location, "--user-id", "alice")
    proc = subprocess.Popen([params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=str(ROOT), env=server_env())
    replies: dict = {}
    try:
        proc.stdin.write(b"".join(frames))
        proc.stdin.flush()
        while until not in replies:
            line = proc.stdout.readline()
            assert line, "the server stopped answering"
            message = json.loads(line)
            replies.setdefault(message.get("id"), []).append(message)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return replies


_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def test_a_request_whose_id_is_not_a_string_or_integer_gets_invalid_request(db_location):
    """JSON-RPC: an id that cannot be read is answered with -32600 and id null, never with silence.

    The SDK's parser reads such a line as a notification (which gets no reply), so a client that
    sent an object id would wait out its timeout.
    """
    bad_ids = [{"a": 1}, [1], 1.5, True, None]
    frames = [json.dumps(_INIT).encode() + b"\n",
              json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n",
              *(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list"}).encode() + b"\n" for i in bad_ids),
              json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).encode() + b"\n"]
    replies = _exchange(db_location, frames, until=7)
    assert [r["error"]["code"] for r in replies[None]] == [-32600] * len(bad_ids)
    assert all("id must be a string or an integer" in r["error"]["message"] for r in replies[None])
    assert replies[7][0]["result"]["tools"], "the server goes on answering"


def test_broken_frames_on_stdio_get_a_json_rpc_error_and_the_server_goes_on(db_location):
    """Garbage, invalid UTF-8, deep nesting and a lone-surrogate escape on the wire, then a normal call.

    The SDK's stdio transport drops a frame it cannot parse without a word (its client then waits
    forever); ours answers each with a JSON-RPC error carrying the request's id when it has one.
    """
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"text": "PLACEHOLDER"}}}
    deep: object = "leaf"
    for _ in range(300):
        deep = {"k": deep}
    frames = [b"not json at all\n", b"\xff\xfe\xfd\n", b'{"jsonrpc": "2.0", "id": 99, "method": "nope"}\n',
              b"[1, 2, 3]\n", b"{" * 5000 + b"\n", b'{"jsonrpc": "2.0", "method": "notifications/bad", "params": 5}\n',
              json.dumps(init).encode() + b"\n",
              json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n",
              json.dumps(call).replace("PLACEHOLDER", "\\ud800 lone").encode() + b"\n",
              json.dumps({**call, "id": "deep", "params": {"name": "search_memories",
                                                           "arguments": {"query": "x", "filters": deep}}}).encode() + b"\n",
              json.dumps({**call, "id": 3}).replace("PLACEHOLDER", "fine after all that").encode() + b"\n"]
    replies = _exchange(db_location, frames, until=3)
    assert replies[99][0]["error"]["code"] == -32601
    assert [r["error"]["code"] for r in replies[None]] == [-32700, -32700, -32600, -32700]
    assert replies[1][0]["result"]["serverInfo"]["name"] == "agentbase"
    assert replies[2][0]["error"]["code"] == -32700  # pydantic refuses the lone surrogate escape
    assert replies["deep"][0]["error"]["code"] == -32700 and "recursion" in replies["deep"][0]["error"]["message"]
    assert replies[3][0]["result"]["isError"] is False
    assert replies[3][0]["result"]["structuredContent"]["results"][0]["text"] == "fine after all that"
